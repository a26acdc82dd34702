//! The page size every loaded official version sees.
//!
//! Core's `DEFAULT_MMAP_SIZE` is its page size: a data file grows and is trimmed in whole pages,
//! the `.crc` file is one page long, and the loader maps (and, with `OnErrorRecover`, judges) a
//! data file rounded up to pages. Each version's library is linked with
//! `-Wl,--wrap=getpagesize` (see `build.rs`): Core's one page-size source (`mmkv::getPageSize()`
//! in `MemoryFile.cpp` calls `getpagesize()` in all 50 tags; none reads `sysconf(_SC_PAGESIZE)`)
//! goes to the shim's `__wrap_getpagesize`, which returns the size chosen here or, unchosen, the
//! real one (then nothing differs from an unwrapped build). So a 4 KiB x86-64 machine writes and
//! reads the files of a 16 KiB or 64 KiB device.
//!
//! When Core reads it: at call time, not at load. Every tag assigns
//! `DEFAULT_MMAP_SIZE = getPageSize()` in the `initialize()` that the first `initializeMMKV`
//! runs under a once-token (the shim calls `initializeMMKV` on a library's first
//! [`Official::open`](crate::Official::open)); from then on that library keeps the value for
//! the life of the process (only `copyFile`'s buffer, never part of a file, asks again). Hence:
//! a size may change freely until a library has opened its first store; another size after that
//! is refused with [`Error::PageSizeFixed`] (the same size again is fine). Runs that need
//! several page sizes use one process per size (the conformance report passes
//! `MMKV_SYS_PAGE_SIZE` to its cells).
//!
//! The default comes from `MMKV_SYS_PAGE_SIZE` (bytes) when set, else it is the real page size.
//! Under qemu 7.2 the guest's page (`qemu-aarch64-static -p 16384`) is the real one, no variable
//! needed; qemu 10 ignores `-p` on a 4 KiB host, so ci/arm64.sh sets the variable instead. The
//! setting is process-wide: it applies to every version loaded now and later.

use crate::{registry, Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable that gives the default page size (bytes).
pub const PAGE_SIZE_VAR: &str = "MMKV_SYS_PAGE_SIZE";

/// The smallest page size accepted (bytes).
pub const MIN_PAGE_SIZE: u64 = 4096;
/// The largest page size accepted (bytes).
pub const MAX_PAGE_SIZE: u64 = 1 << 20;

/// The size chosen with [`set_page_size`]; [`UNCHOSEN`]: the default. Written only under the
/// registry lock (so loads and updates are ordered).
static CHOSEN: AtomicU64 = AtomicU64::new(UNCHOSEN);
const UNCHOSEN: u64 = 0;

/// Checks that `size` is a page size the official library can run with: a power of two from
/// [`MIN_PAGE_SIZE`] to [`MAX_PAGE_SIZE`].
pub fn check_page_size(size: u64) -> Result<u64> {
    if size.is_power_of_two() && (MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&size) {
        Ok(size)
    } else {
        Err(Error::InvalidPageSize(size))
    }
}

/// The machine's page size (what `getpagesize()` returns unwrapped).
pub fn real_page_size() -> u64 {
    rustix::param::page_size() as u64
}

/// `MMKV_SYS_PAGE_SIZE`, read once: `None` when unset or empty.
fn from_env() -> Result<Option<u64>> {
    static ENV: OnceLock<std::result::Result<Option<u64>, String>> = OnceLock::new();
    ENV.get_or_init(|| match std::env::var(PAGE_SIZE_VAR) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse::<u64>()
            .ok()
            .and_then(|n| check_page_size(n).ok())
            .map(Some)
            .ok_or(v),
        _ => Ok(None),
    })
    .clone()
    .map_err(|v| Error::InvalidArgument(format!("{PAGE_SIZE_VAR}={v:?} is no page size (a power of two from {MIN_PAGE_SIZE} to {MAX_PAGE_SIZE})")))
}

/// What the shims are told: the chosen size, else the environment's, else 0 (the real one).
pub(crate) fn requested() -> Result<u64> {
    match CHOSEN.load(Ordering::SeqCst) {
        UNCHOSEN => Ok(from_env()?.unwrap_or(0)),
        n => Ok(n),
    }
}

/// The page size the official libraries use: the one given to [`set_page_size`], else
/// `MMKV_SYS_PAGE_SIZE`, else the real one (also when the variable is invalid; loading a
/// version then reports it).
pub fn page_size() -> u64 {
    match requested() {
        Ok(0) | Err(_) => real_page_size(),
        Ok(n) => n,
    }
}

/// Chooses the page size of every loaded official version and of every version loaded later.
///
/// Errors: [`Error::InvalidPageSize`] for a size [`check_page_size`] refuses;
/// [`Error::PageSizeFixed`] when a loaded version has already initialised with another size
/// (Core reads it once per process; see the module docs). Nothing changes on an error.
pub fn set_page_size(size: u64) -> Result<()> {
    check_page_size(size)?;
    let libs = registry().lock().unwrap_or_else(|p| p.into_inner());
    for lib in libs.values() {
        if let Some(fixed) = lib.initialized_page_size().filter(|&f| f != size) {
            return Err(Error::PageSizeFixed {
                tag: lib.tag.clone(),
                fixed,
                requested: size,
            });
        }
    }
    CHOSEN.store(size, Ordering::SeqCst);
    for lib in libs.values() {
        lib.apply_page_size(size)?;
    }
    Ok(())
}
