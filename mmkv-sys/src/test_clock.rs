//! One test clock for every loaded official version.
//!
//! Each version's library is linked with `-Wl,--wrap=time` (see `build.rs`): every `time()`
//! call in that version's Core and shim goes to the shim's `__wrap_time`, which returns the
//! test time when one is set and otherwise calls libc's `time()` (on Linux the coarse real-time
//! clock, as without the wrap). The official sources are untouched.
//!
//! What that covers: Core's only clock is `time(nullptr)`, read by
//! `MMKV::getCurrentTimeInSecond()` (the expire time a `set` writes and the "now" every getter,
//! `count`/`allKeys` filter and `trim`/full write-back judges expired keys with) and by
//! `srand(time(nullptr))` before the random IVs of encrypted stores (a test time makes those
//! seeds repeat; IVs stay valid IVs, whatever their value). Nothing else is interposed:
//! `clock_gettime`, `gettimeofday`, file times, locks and the process's own `time()` stay real.
//!
//! Why a verdict keeps its meaning: the library computes and compares exactly as with the real
//! clock, only with "now" chosen by the test; a workload that advances the test time past an
//! expire time sees what it would see after sleeping that long (the files hold the same bytes up
//! to the time values and IVs). What the test clock does not show is the real clock's coarse
//! tick (`time()` a few ms behind the precise clock); runs that need it keep the real clock
//! (leave the test clock unset).
//!
//! The setting is process-wide: it applies to every version loaded now and to every version
//! loaded later, until [`set`]`(None)`. Tests that use it belong in their own test binary (or
//! must not run beside tests that rely on the real clock).

use crate::registry;
use std::sync::atomic::{AtomicU64, Ordering};

/// The test time of every official library; [`UNSET`]: the real clock. Written only under the
/// registry lock (so loads and updates are ordered); read without it.
static TEST_TIME: AtomicU64 = AtomicU64::new(UNSET);
const UNSET: u64 = u64::MAX;

/// Applies `f` to the current setting and installs its result in every loaded version (and in
/// every version loaded later), atomically with respect to other updates and loads.
fn update(f: impl FnOnce(Option<u32>) -> Option<u32>) -> Option<u32> {
    let libs = registry().lock().unwrap_or_else(|p| p.into_inner());
    let secs = f(get());
    TEST_TIME.store(secs.map_or(UNSET, u64::from), Ordering::SeqCst);
    for lib in libs.values() {
        lib.apply_test_time(secs);
    }
    secs
}

/// Sets the official libraries' clock: `Some(secs)` makes `time()` of every loaded version (and
/// of every version loaded later) return `secs` (epoch seconds); `None` restores the real clock.
pub fn set(secs: Option<u32>) {
    update(|_| secs);
}

/// The test time now set, `None` when the official libraries read the real clock.
pub fn get() -> Option<u32> {
    match TEST_TIME.load(Ordering::SeqCst) {
        UNSET => None,
        t => u32::try_from(t).ok(),
    }
}

/// Moves the test time forward by `secs` (saturating) and returns the new time; when no test
/// time is set, starts it from [`real_now`] first.
pub fn advance(secs: u32) -> u32 {
    update(|t| Some(t.unwrap_or_else(real_now).saturating_add(secs))).unwrap_or(u32::MAX)
}

/// Moves the test time to `secs` unless it is already there or later (it never goes back, so
/// threads advancing one shared clock cannot undo each other); when no test time is set, starts
/// it from [`real_now`] first. Returns the new time.
pub fn advance_to(secs: u32) -> u32 {
    update(|t| Some(t.unwrap_or_else(real_now).max(secs))).unwrap_or(u32::MAX)
}

/// The real clock's current second (the precise clock; the official `time()` may still be a
/// tick behind it).
pub fn real_now() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u32::try_from(d.as_secs()).unwrap_or(u32::MAX))
}
