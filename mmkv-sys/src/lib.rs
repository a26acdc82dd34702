//! # mmkv-sys: the official Tencent MMKV library, every reachable version, side by side
//!
//! `build.rs` builds, for each selected MMKV tag (see `versions.yaml` at the repository root),
//! that version's official Core from pinned sources plus a small C++ shim into its own shared
//! library `libmmkv_shim_<tag>.so`, exporting only the shim's C ABI. At run time
//! [`Official::load`] `dlopen`s a version's library (`RTLD_NOW | RTLD_LOCAL`), so several MMKV
//! versions live in one process, each with its own globals.
//!
//! ```no_run
//! use mmkv_sys::{Mode, Official};
//! # fn main() -> mmkv_sys::Result<()> {
//! let dir = std::path::Path::new("/tmp/store");
//! let lib = Official::load("v2.0.0")?;
//! assert_eq!(lib.version(), "v2.0.0");
//! let store = lib.open(dir, "demo", Mode::Single, None, false)?;
//! store.set_i32(b"answer", 42, None)?;
//! assert_eq!(store.get_i32(b"answer")?, Some(42));
//! # Ok(()) }
//! ```
//!
//! ## Keys and values
//! Keys are bytes (`std::string` / `std::string_view` on POSIX). Strings are bytes too (a C++
//! `std::string` may hold any bytes), so string getters return `Vec<u8>`.
//!
//! ## Presence (`Option`)
//! Every getter returns `Ok(None)` when the library reports no value. From v1.2.13 this is the
//! official `hasValue` out-param of `getBool`/`getInt32`/…; before v1.2.13 the getters have no
//! such flag and presence is emulated with `containsKey()` (see [`Capabilities::has_value_flag`]).
//! `getString`, `getBytes` and `getVector` return a bool in every version: that is the flag.
//!
//! ## Expiration
//! Per-key durations (`expire: Some(secs)`) need v1.3.0+ and [`Instance::enable_key_expire`]
//! first: with auto key expiration off, the library ignores the duration (its debug assert is
//! compiled out in the Release build used here), exactly as an application would see it.
//!
//! ## Time
//! Every version's `time()` is wrapped at link time: [`test_clock::set`] gives all loaded
//! versions one controllable clock (expiry without sleeping); unset, they read the real clock.
//!
//! ## Page size
//! Every version's `getpagesize()` is wrapped at link time as well: [`set_page_size`] (or
//! `MMKV_SYS_PAGE_SIZE`) makes the official libraries write and read the files of a 16 KiB or
//! 64 KiB device on any machine; unset, they see the real page size. Core fixes its page size
//! at its first `initializeMMKV` (the first open of a loaded version), so choose it before that
//! (see [`page_size`](mod@page_size) for when each version reads it).
//!
//! ## Disk errors
//! Core's file calls (`ftruncate`, `mmap`, `msync`, `write`, `rename`) are wrapped at link time
//! too: [`io_faults::set`] makes chosen calls of every loaded version fail (`ENOSPC`, `EIO`,
//! `ENOMEM`), e.g. the 3rd `ftruncate` or every `msync` from the 5th on; the default schedule
//! fails nothing and every call goes to libc unchanged.
//!
//! ## Unsupported calls
//! A call the loaded version does not offer (an expire duration before v1.3.0, typed vectors
//! before v1.3.6, AES-256 before v2.3.0, …) returns [`Error::Unsupported`], never crashes.
//!
//! ## Instances
//! MMKV keeps one instance per (root directory, id) in each library: opening the same store
//! twice from one [`Official`] returns handles to the same C++ instance. Handles are reference
//! counted; the instance is closed (`MMKV::close()`) when the last [`Instance`] is closed or
//! dropped.
#![warn(missing_docs)]

mod bridge;
mod caps;
pub mod io_faults;
pub mod page_size;
pub mod test_clock;
pub mod versions;

use bridge::{ffi, ByteSink};
pub use page_size::{page_size, set_page_size};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// One built version, as recorded by build.rs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltVersion {
    /// The tag, e.g. `v2.0.0`.
    pub tag: &'static str,
    /// Absolute path of its `libmmkv_shim_<tag>.so`.
    pub library: &'static str,
    /// Where its Core sources came from (override variable, vendored package, …).
    pub origin: &'static str,
    /// The Core source directory it was built from.
    pub core: &'static str,
    /// Its features in versions.yaml (an extra tag: those of the newest listed tag before it).
    pub features: versions::FeatureSet,
    /// A coverage build's (`MMKV_SYS_COVERAGE=1`) Core build directory, where its `.gcno` files
    /// are and the library writes its `.gcda` counters at process exit; `None` in a normal build.
    pub coverage: Option<&'static str>,
}

/// A selected version that was not built because its sources could not be fetched (offline,
/// no mirror); `MMKV_REQUIRE_ALL=1` makes this a build error instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unbuilt {
    /// The tag.
    pub tag: &'static str,
    /// Why (the fetch errors, and how to supply the sources).
    pub reason: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/built_versions.rs"));

/// Tags built into this crate, oldest first (what `Official::load` accepts).
pub fn built_versions() -> &'static [&'static str] {
    BUILT_TAGS
}

/// Details of every built version (library path and source origin), oldest first.
pub fn built() -> &'static [BuiltVersion] {
    BUILT
}

/// Selected versions left unbuilt (sources unreachable), oldest first, with the reason.
pub fn unbuilt() -> &'static [Unbuilt] {
    UNBUILT
}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The loaded MMKV version has no such call.
    #[error("MMKV {tag} does not support {what}")]
    Unsupported {
        /// The version's tag.
        tag: String,
        /// The call, e.g. `set with expireDuration`.
        what: String,
    },
    /// The tag was not built (see [`built_versions`], `MMKV_VERSIONS`).
    #[error("MMKV {0} was not built into mmkv-sys (built: {list})", list = built_versions().join(", "))]
    NotBuilt(String),
    /// The shared library could not be loaded.
    #[error("cannot load MMKV {tag}: {message}")]
    Load {
        /// The version's tag.
        tag: String,
        /// dlopen's or the shim's message.
        message: String,
    },
    /// `mmkvWithID` returned no instance, or the library threw a C++ exception.
    #[error("MMKV {tag}: {message}")]
    Library {
        /// The version's tag.
        tag: String,
        /// The shim's message (the C++ exception's `what()` where there was one).
        message: String,
    },
    /// A page size the official library cannot run with (see [`page_size::check_page_size`]).
    #[error("invalid page size {0} (a power of two from 4096 to 1 MiB)")]
    InvalidPageSize(u64),
    /// A loaded version has already initialised with another page size (Core reads it once,
    /// at its first `initializeMMKV`; see [`page_size`](mod@page_size)).
    #[error("MMKV {tag} already runs with page size {fixed}, cannot switch to {requested}")]
    PageSizeFixed {
        /// The version's tag.
        tag: String,
        /// The page size that version initialised with.
        fixed: u64,
        /// The page size asked for.
        requested: u64,
    },
    /// A caller argument the shim cannot pass (e.g. a non-UTF-8 directory is fine, an empty id is not).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// How [`Official::open_as`] opens a store, besides its mode and key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct OpenAs {
    /// Adds `MMKV_READ_ONLY` to the mode (v2.0.0+).
    pub read_only: bool,
    /// Through `MMKV::nameSpace(dir).mmkvWithID` instead of `mmkvWithID(.., &dir)` (v2.1.0+).
    pub name_space: bool,
}

/// MMKV process mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `MMKV_SINGLE_PROCESS`.
    Single,
    /// `MMKV_MULTI_PROCESS` (file locks on the meta file).
    Multi,
}

/// What the library does when a file fails its CRC or length check on load
/// (MMKV's `registerErrorHandler`; one setting per loaded version, default `Discard`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorStrategy {
    /// `OnErrorDiscard`: start empty.
    Discard,
    /// `OnErrorRecover`: keep what can be read.
    Recover,
}

/// Which parts of the C++ API the loaded version offers (detected when its shim was compiled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Capabilities {
    /// The API features the shim detected in the version's headers ([`versions::Feature::is_api`]):
    /// for a tag listed in versions.yaml, exactly its features' API part.
    pub api: versions::FeatureSet,
    /// Getters report the official `hasValue` flag (v1.2.13+); otherwise presence is emulated
    /// with `containsKey()`.
    pub has_value_flag: bool,
    /// Per-key expire durations and `enableAutoKeyExpire` (v1.3.0+).
    pub key_expire: bool,
    /// Typed vectors `std::vector<T>` (v1.3.6+).
    pub typed_vectors: bool,
    /// AES-256 keys (v2.3.0+).
    pub aes256: bool,
    /// `MMKVConfig` exists (v2.4.0+): multi-process and encrypted stores are opened through it.
    pub mmkv_config: bool,
    /// `count(filterExpire)` / `allKeys(filterExpire)` (v1.3.1+).
    pub count_filter_expire: bool,
    /// `clearAll(keepSpace)` (v1.3.2+).
    pub clear_all_keep_space: bool,
    /// `removeValueForKey` returns bool (v2.0.0+).
    pub remove_returns_bool: bool,
    /// `bool getBytes(key, MMBuffer&)` exists; otherwise presence of bytes is emulated.
    pub get_bytes_flag: bool,
    /// `reKey()` exists.
    pub rekey: bool,
    /// [`Official::set_error_strategy`] can request `Recover` (`registerErrorHandler`, or
    /// `MMKVConfig::recover` in versions without it).
    pub error_strategy: bool,
    /// `enableCompareBeforeSet` / `disableCompareBeforeSet` (v1.3.2+).
    pub compare_before_set: bool,
    /// `backupOneToDirectory` / `restoreOneFromDirectory` (v1.2.11+).
    pub backup_restore: bool,
    /// `removeStorage` (v1.3.3+).
    pub remove_storage: bool,
    /// `importFrom` (v2.2.1+).
    pub import_from: bool,
    /// The `MMKV_READ_ONLY` mode (v2.0.0+).
    pub read_only: bool,
    /// `MMKV::nameSpace` / `NameSpace::mmkvWithID` (v2.1.0+).
    pub name_space: bool,
}

impl Capabilities {
    fn from_bits(c: u64) -> Self {
        use caps::ShimCap;
        use versions::{Feature, FeatureSet};
        let api = FeatureSet::from_bits(c).api();
        Capabilities {
            api,
            has_value_flag: api.has(Feature::HasValueFlag),
            key_expire: api.has(Feature::KeyExpire),
            typed_vectors: api.has(Feature::TypedVectors),
            aes256: api.has(Feature::Aes256),
            mmkv_config: api.has(Feature::MmkvConfig),
            count_filter_expire: api.has(Feature::CountFilterExpire),
            clear_all_keep_space: api.has(Feature::ClearAllKeepSpace),
            remove_returns_bool: api.has(Feature::RemoveReturnsBool),
            get_bytes_flag: ShimCap::GetBytesFlag.is_in(c),
            rekey: ShimCap::Rekey.is_in(c),
            error_strategy: ShimCap::ErrorStrategy.is_in(c),
            compare_before_set: api.has(Feature::CompareBeforeSet),
            backup_restore: api.has(Feature::BackupRestore),
            remove_storage: api.has(Feature::RemoveStorage),
            import_from: api.has(Feature::ImportFrom),
            read_only: api.has(Feature::ReadOnly),
            name_space: api.has(Feature::NameSpace),
        }
    }
}

struct Lib {
    tag: String,
    path: PathBuf,
    ffi: cxx::UniquePtr<ffi::ShimLibrary>,
    caps: Capabilities,
    /// Open C++ instances (pointer) -> number of live `Instance` handles.
    open: Mutex<HashMap<usize, usize>>,
}

impl Lib {
    fn shim(&self) -> &ffi::ShimLibrary {
        // `ffi` is never null: load_shim returns a value or an error.
        self.ffi.as_ref().expect("loaded shim library")
    }

    /// Sets this library's test clock (see [`test_clock`]).
    fn apply_test_time(&self, secs: Option<u32>) {
        // The shim refuses only i64::MIN, which no u32 is.
        let _ = self
            .shim()
            .set_test_time(secs.is_some(), secs.map_or(0, i64::from));
    }

    /// Tells this library's `getpagesize()` to return `size` (0: the real one).
    fn apply_page_size(&self, size: u64) -> Result<()> {
        let fixed = self.shim().initialized_page_size() as u64;
        let n = usize::try_from(size).map_err(|_| Error::InvalidPageSize(size))?;
        self.shim()
            .set_page_size(n)
            .map_err(|_| Error::PageSizeFixed {
                tag: self.tag.clone(),
                fixed,
                requested: size,
            })
    }

    /// Installs `schedule` in this library (see [`io_faults`]), its counts restarted. A library
    /// without the schedule's entry point (one built from older shim sources, loaded with
    /// [`Official::load_from_path`]) takes the empty schedule: it fails nothing anyway.
    fn apply_io_faults(&self, schedule: &io_faults::Schedule) -> Result<()> {
        let shim = self.shim();
        match shim.set_io_fault(io_faults::RESET, 0, 0, 0) {
            Err(_) if schedule.is_empty() => return Ok(()),
            r => r.map_err(|e| self.err(e))?,
        }
        for r in schedule.rules() {
            let (call, from, count, errno) = io_faults::shim_rule(r);
            shim.set_io_fault(call, from, count, errno)
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// This library's (made, failed) count of `call` since its schedule was set; `None` for a
    /// library without the schedule's entry point.
    fn io_fault_counts(&self, call: io_faults::IoCall) -> Option<(u64, u64)> {
        let shim = self.shim();
        let n = call as u32;
        let made = shim.io_fault_count(n, false).ok()?;
        let failed = shim.io_fault_count(n, true).ok()?;
        Some((made, failed))
    }

    /// The page size this library's Core initialised with, `None` before its first open.
    fn initialized_page_size(&self) -> Option<u64> {
        match self.shim().initialized_page_size() {
            0 => None,
            n => Some(n as u64),
        }
    }

    fn err(&self, e: cxx::Exception) -> Error {
        let msg = e.what();
        if let Some(what) = msg.strip_prefix("unsupported: ") {
            Error::Unsupported {
                tag: self.tag.clone(),
                what: what.to_string(),
            }
        } else {
            Error::Library {
                tag: self.tag.clone(),
                message: msg.to_string(),
            }
        }
    }

    fn unsupported(&self, what: &str) -> Error {
        Error::Unsupported {
            tag: self.tag.clone(),
            what: what.to_string(),
        }
    }
}

fn registry() -> &'static Mutex<HashMap<PathBuf, Arc<Lib>>> {
    static LIBS: OnceLock<Mutex<HashMap<PathBuf, Arc<Lib>>>> = OnceLock::new();
    LIBS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A loaded official MMKV version (its shared library). Cheap to clone; loading the same
/// library twice returns the same underlying library (libraries are never unloaded).
#[derive(Clone)]
pub struct Official {
    lib: Arc<Lib>,
}

impl std::fmt::Debug for Official {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Official")
            .field("tag", &self.lib.tag)
            .field("library", &self.lib.path)
            .finish()
    }
}

impl Official {
    /// Loads a built version by tag (one of [`built_versions`]).
    pub fn load(tag: &str) -> Result<Official> {
        let b = BUILT
            .iter()
            .find(|b| b.tag == tag)
            .ok_or_else(|| Error::NotBuilt(tag.to_string()))?;
        Self::load_from_path(tag, Path::new(b.library))
    }

    /// Loads a shim library built elsewhere (e.g. by another build of this crate) under `tag`.
    /// The tag is only used for messages and [`Official::features`].
    pub fn load_from_path(tag: &str, library: &Path) -> Result<Official> {
        let mut libs = registry().lock().unwrap_or_else(|p| p.into_inner());
        let key = library
            .canonicalize()
            .unwrap_or_else(|_| library.to_path_buf());
        if let Some(lib) = libs.get(&key) {
            return Ok(Official { lib: lib.clone() });
        }
        let path_str = key.to_str().ok_or_else(|| {
            Error::InvalidArgument(format!("library path {} is not UTF-8", key.display()))
        })?;
        let ffi = ffi::load_shim(path_str).map_err(|e| Error::Load {
            tag: tag.to_string(),
            message: e.what().to_string(),
        })?;
        let caps = Capabilities::from_bits(ffi.caps());
        let lib = Arc::new(Lib {
            tag: tag.to_string(),
            path: key.clone(),
            ffi,
            caps,
            open: Mutex::new(HashMap::new()),
        });
        // Loaded under the registry lock, so a concurrent `test_clock::set` or `set_page_size`
        // cannot be missed (nor an `io_faults::set`).
        lib.apply_test_time(test_clock::get());
        lib.apply_page_size(page_size::requested()?)?;
        lib.apply_io_faults(&io_faults::get())?;
        libs.insert(key, lib.clone());
        Ok(Official { lib })
    }

    /// The tag this handle was loaded as.
    pub fn tag(&self) -> &str {
        &self.lib.tag
    }

    /// The library's own `MMKV_VERSION` string (e.g. `v2.0.0`; empty if the version has none).
    pub fn version(&self) -> String {
        self.lib.shim().mmkv_version()
    }

    /// The page size this version's Core runs with (its `DEFAULT_MMAP_SIZE`), `None` until its
    /// first [`Official::open`] (see [`page_size`](mod@page_size)).
    pub fn initialized_page_size(&self) -> Option<u64> {
        self.lib.initialized_page_size()
    }

    /// The version number the shim was compiled with (`major*10000 + minor*100 + patch`).
    pub fn shim_version(&self) -> u32 {
        self.lib.shim().shim_version()
    }

    /// Path of the loaded shared library.
    pub fn library_path(&self) -> &Path {
        &self.lib.path
    }

    /// Which API parts this version offers.
    pub fn capabilities(&self) -> Capabilities {
        self.lib.caps
    }

    /// The tag's features from `versions.yaml` (a tag not listed there: those of the newest
    /// listed tag before it; none for a name that is no tag).
    pub fn features(&self) -> versions::FeatureSet {
        match versions::Tag::release_of(&self.lib.tag) {
            Some(tag) => versions::embedded().features_of(tag),
            None => versions::FeatureSet::EMPTY,
        }
    }

    /// Sets this version's error strategy for later loads (process-wide for this version).
    pub fn set_error_strategy(&self, strategy: ErrorStrategy) -> Result<()> {
        self.lib
            .shim()
            .set_error_strategy(strategy == ErrorStrategy::Recover)
            .map_err(|e| self.lib.err(e))
    }

    /// Opens (or creates) store `id` in directory `dir` (`mmkvWithID(id, mode, cryptKey, &dir)`).
    ///
    /// `crypt_key`: `None` for plaintext; the bytes as given to the library otherwise (it pads
    /// or truncates them to 16 bytes, 32 with `aes256`). `aes256` needs v2.3.0+.
    /// The first open of a loaded version also calls `initializeMMKV(dir)` (log level none).
    pub fn open(
        &self,
        dir: &Path,
        id: &str,
        mode: Mode,
        crypt_key: Option<&[u8]>,
        aes256: bool,
    ) -> Result<Instance> {
        self.open_as(dir, id, mode, crypt_key, aes256, OpenAs::default())
    }

    /// [`Official::open`] with the choices of `how`: `MMKV_READ_ONLY` (v2.0.0+; the library
    /// hands out one instance per store and process, so close every other instance of the
    /// store first, or the open returns that one), or through `MMKV::nameSpace(dir)` (v2.1.0+;
    /// the name space normalises `dir`: absolute, canonical, no trailing slash).
    /// [`Error::Unsupported`] where the version lacks one of them.
    pub fn open_as(
        &self,
        dir: &Path,
        id: &str,
        mode: Mode,
        crypt_key: Option<&[u8]>,
        aes256: bool,
        how: OpenAs,
    ) -> Result<Instance> {
        use std::os::unix::ffi::OsStrExt;
        if id.is_empty() {
            return Err(Error::InvalidArgument("empty store id".into()));
        }
        if aes256 && !self.lib.caps.aes256 {
            return Err(self.lib.unsupported("aes256"));
        }
        if how.read_only && !self.lib.caps.read_only {
            return Err(self.lib.unsupported("MMKV_READ_ONLY"));
        }
        if how.name_space && !self.lib.caps.name_space {
            return Err(self.lib.unsupported("nameSpace"));
        }
        let dir_bytes = dir.as_os_str().as_bytes();
        if dir_bytes.is_empty() {
            return Err(Error::InvalidArgument("empty directory".into()));
        }
        let key = crypt_key.unwrap_or(&[]);
        let handle = self
            .lib
            .shim()
            .open_as(
                dir_bytes,
                id.as_bytes(),
                mode == Mode::Multi,
                how.read_only,
                how.name_space,
                key,
                crypt_key.is_some(),
                aes256,
            )
            .map_err(|e| self.lib.err(e))?;
        let mut open = self.lib.open.lock().unwrap_or_else(|p| p.into_inner());
        *open.entry(handle).or_insert(0) += 1;
        Ok(Instance {
            lib: self.lib.clone(),
            handle,
            id: id.to_string(),
            dir: dir.to_path_buf(),
            closed: false,
        })
    }

    /// `backupOneToDirectory(id, to, &from)`: copies store `id` of folder `from` (both files)
    /// into folder `to` (created if needed; the library's temporary copy is renamed there, so
    /// `to` must be on the file system of its temporary folder). An instance of the store open
    /// in this library is synced first. The library's bool (false: nothing to back up, or the
    /// copy failed). v1.2.11+.
    pub fn backup_one(&self, id: &str, from: &Path, to: &Path) -> Result<bool> {
        if !self.lib.caps.backup_restore {
            return Err(self.lib.unsupported("backupOneToDirectory"));
        }
        let (id, from, to) = static_args(id, from, to)?;
        self.lib
            .shim()
            .backup_one(id, to, from)
            .map_err(|e| self.lib.err(e))
    }

    /// `restoreOneFromDirectory(id, from, &to)`: writes the backup of store `id` in folder
    /// `from` over store `id` of folder `to` (an instance open in this library reloads it).
    /// The library's bool. v1.2.11+.
    pub fn restore_one(&self, id: &str, from: &Path, to: &Path) -> Result<bool> {
        if !self.lib.caps.backup_restore {
            return Err(self.lib.unsupported("restoreOneFromDirectory"));
        }
        let (id, from, to) = static_args(id, from, to)?;
        self.lib
            .shim()
            .restore_one(id, from, to)
            .map_err(|e| self.lib.err(e))
    }

    /// The static `isFileValid(id, &dir)`: the library's verdict on the files of store `id`
    /// (true when there is no data file).
    pub fn is_file_valid(&self, id: &str, dir: &Path) -> Result<bool> {
        let (id, dir, _) = static_args(id, dir, dir)?;
        self.lib
            .shim()
            .is_file_valid(id, dir)
            .map_err(|e| self.lib.err(e))
    }

    /// The static `removeStorage(id, &dir)`: deletes both files of store `id` (false when
    /// neither exists). The library closes an instance of the store it has open, so close
    /// every [`Instance`] of it first. v1.3.3+.
    pub fn remove_storage(&self, id: &str, dir: &Path) -> Result<bool> {
        if !self.lib.caps.remove_storage {
            return Err(self.lib.unsupported("removeStorage"));
        }
        let (id, dir, _) = static_args(id, dir, dir)?;
        self.lib
            .shim()
            .remove_storage(id, dir)
            .map_err(|e| self.lib.err(e))
    }
}

/// The byte forms of a static call's id and folders; empty ones are refused.
fn static_args<'a>(
    id: &'a str,
    a: &'a Path,
    b: &'a Path,
) -> Result<(&'a [u8], &'a [u8], &'a [u8])> {
    use std::os::unix::ffi::OsStrExt;
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    if id.is_empty() || a.is_empty() || b.is_empty() {
        return Err(Error::InvalidArgument("empty store id or directory".into()));
    }
    Ok((id.as_bytes(), a, b))
}

/// One open store of one loaded version. Closed on drop (see the crate docs on sharing).
pub struct Instance {
    lib: Arc<Lib>,
    handle: usize,
    id: String,
    dir: PathBuf,
    closed: bool,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("tag", &self.lib.tag)
            .field("id", &self.id)
            .field("dir", &self.dir)
            .finish()
    }
}

/// Element types of typed vectors (v1.3.6+), mapped to the shim's kinds.
trait VecItem: Copy + Default {
    const KIND: i32;
    const SIZE: usize;
    fn write(self, out: &mut Vec<u8>);
    fn read(b: &[u8]) -> Self;
}

macro_rules! vec_item {
    ($t:ty, $kind:expr) => {
        impl VecItem for $t {
            const KIND: i32 = $kind;
            const SIZE: usize = std::mem::size_of::<$t>();
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_ne_bytes());
            }
            fn read(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_ne_bytes(a)
            }
        }
    };
}
vec_item!(i32, 1);
vec_item!(u32, 2);
vec_item!(i64, 3);
vec_item!(u64, 4);
vec_item!(f32, 5);
vec_item!(f64, 6);

impl VecItem for bool {
    const KIND: i32 = 0;
    const SIZE: usize = 1;
    fn write(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
    fn read(b: &[u8]) -> Self {
        b[0] != 0
    }
}

fn split_items(data: &[u8], lens: &[usize]) -> Vec<Vec<u8>> {
    let mut items = Vec::with_capacity(lens.len());
    let mut at = 0usize;
    for &len in lens {
        let end = at.saturating_add(len).min(data.len());
        items.push(data[at..end].to_vec());
        at = end;
    }
    items
}

macro_rules! scalar_accessors {
    ($($set:ident, $get:ident, $t:ty, $cpp:literal;)*) => {$(
        #[doc = concat!("`set(", $cpp, " value, key)`, or `set(value, key, expireDuration)` when `expire` is given (v1.3.0+). Returns the library's bool.")]
        pub fn $set(&self, key: &[u8], value: $t, expire: Option<u32>) -> Result<bool> {
            self.check_expire(expire)?;
            self.shim().$set(self.handle, key, value, expire.is_some(), expire.unwrap_or(0)).map_err(|e| self.lib.err(e))
        }

        #[doc = concat!("The official getter for `", $cpp, "`: `Some(value)` when the library reports a value (see the crate docs on presence).")]
        pub fn $get(&self, key: &[u8]) -> Result<Option<$t>> {
            let mut out = <$t>::default();
            let has = self.shim().$get(self.handle, key, &mut out).map_err(|e| self.lib.err(e))?;
            Ok(has.then_some(out))
        }
    )*};
}

macro_rules! vec_accessors {
    ($($set:ident, $get:ident, $t:ty;)*) => {$(
        #[doc = concat!("`set(std::vector<", stringify!($t), ">, key[, expireDuration])` (typed vectors, v1.3.6+).")]
        pub fn $set(&self, key: &[u8], value: &[$t], expire: Option<u32>) -> Result<bool> {
            self.set_typed_vec(key, value, expire)
        }

        #[doc = concat!("`getVector(key, std::vector<", stringify!($t), ">&)` (typed vectors, v1.3.6+).")]
        pub fn $get(&self, key: &[u8]) -> Result<Option<Vec<$t>>> {
            self.get_typed_vec(key)
        }
    )*};
}

impl Instance {
    fn shim(&self) -> &ffi::ShimLibrary {
        self.lib.shim()
    }

    fn check_expire(&self, expire: Option<u32>) -> Result<()> {
        if expire.is_some() && !self.lib.caps.key_expire {
            return Err(self.lib.unsupported("set with expireDuration"));
        }
        Ok(())
    }

    /// The version tag of the library this store was opened with.
    pub fn tag(&self) -> &str {
        &self.lib.tag
    }

    /// The store id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The directory given to `open`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `enableAutoKeyExpire(default_secs)` (v1.3.0+; 0 = keys without a duration never expire).
    pub fn enable_key_expire(&self, default_secs: u32) -> Result<bool> {
        if !self.lib.caps.key_expire {
            return Err(self.lib.unsupported("enableAutoKeyExpire"));
        }
        self.shim()
            .enable_key_expire(self.handle, default_secs)
            .map_err(|e| self.lib.err(e))
    }

    /// `disableAutoKeyExpire()` (v1.3.0+).
    pub fn disable_key_expire(&self) -> Result<bool> {
        if !self.lib.caps.key_expire {
            return Err(self.lib.unsupported("disableAutoKeyExpire"));
        }
        self.shim()
            .disable_key_expire(self.handle)
            .map_err(|e| self.lib.err(e))
    }

    scalar_accessors! {
        set_bool, get_bool, bool, "bool";
        set_i32, get_i32, i32, "int32_t";
        set_u32, get_u32, u32, "uint32_t";
        set_i64, get_i64, i64, "int64_t";
        set_u64, get_u64, u64, "uint64_t";
        set_f32, get_f32, f32, "float";
        set_f64, get_f64, f64, "double";
    }

    /// `set(const std::string &value, key[, expireDuration])`; the value may be any bytes.
    pub fn set_string(
        &self,
        key: &[u8],
        value: impl AsRef<[u8]>,
        expire: Option<u32>,
    ) -> Result<bool> {
        self.check_expire(expire)?;
        self.shim()
            .set_string(
                self.handle,
                key,
                value.as_ref(),
                expire.is_some(),
                expire.unwrap_or(0),
            )
            .map_err(|e| self.lib.err(e))
    }

    /// `set(const mmkv::MMBuffer &value, key[, expireDuration])`.
    pub fn set_bytes(&self, key: &[u8], value: &[u8], expire: Option<u32>) -> Result<bool> {
        self.check_expire(expire)?;
        self.shim()
            .set_bytes(
                self.handle,
                key,
                value,
                expire.is_some(),
                expire.unwrap_or(0),
            )
            .map_err(|e| self.lib.err(e))
    }

    /// `set(const std::vector<std::string> &value, key[, expireDuration])`.
    pub fn set_string_vec<S: AsRef<[u8]>>(
        &self,
        key: &[u8],
        value: &[S],
        expire: Option<u32>,
    ) -> Result<bool> {
        self.check_expire(expire)?;
        let mut data = Vec::new();
        let mut offsets = Vec::with_capacity(value.len() + 1);
        offsets.push(0usize);
        for item in value {
            data.extend_from_slice(item.as_ref());
            offsets.push(data.len());
        }
        self.shim()
            .set_string_vec(
                self.handle,
                key,
                &data,
                &offsets,
                expire.is_some(),
                expire.unwrap_or(0),
            )
            .map_err(|e| self.lib.err(e))
    }

    fn set_typed_vec<T: VecItem>(
        &self,
        key: &[u8],
        value: &[T],
        expire: Option<u32>,
    ) -> Result<bool> {
        if !self.lib.caps.typed_vectors {
            return Err(self.lib.unsupported("typed vectors"));
        }
        self.check_expire(expire)?;
        let mut raw = Vec::with_capacity(value.len() * T::SIZE);
        for &v in value {
            v.write(&mut raw);
        }
        self.shim()
            .set_vec(
                self.handle,
                key,
                T::KIND,
                &raw,
                value.len(),
                expire.is_some(),
                expire.unwrap_or(0),
            )
            .map_err(|e| self.lib.err(e))
    }

    fn get_typed_vec<T: VecItem>(&self, key: &[u8]) -> Result<Option<Vec<T>>> {
        if !self.lib.caps.typed_vectors {
            return Err(self.lib.unsupported("typed vectors"));
        }
        let mut raw = ByteSink::default();
        let has = self
            .shim()
            .get_vec(self.handle, key, T::KIND, &mut raw)
            .map_err(|e| self.lib.err(e))?;
        Ok(has.then(|| raw.0.chunks_exact(T::SIZE).map(T::read).collect()))
    }

    vec_accessors! {
        set_vec_bool, get_vec_bool, bool;
        set_vec_i32, get_vec_i32, i32;
        set_vec_u32, get_vec_u32, u32;
        set_vec_i64, get_vec_i64, i64;
        set_vec_u64, get_vec_u64, u64;
        set_vec_f32, get_vec_f32, f32;
        set_vec_f64, get_vec_f64, f64;
    }

    /// `getString(key, std::string&)`: the bytes of the string, `None` when it returns false.
    pub fn get_string(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut out = ByteSink::default();
        let has = self
            .shim()
            .get_string(self.handle, key, &mut out)
            .map_err(|e| self.lib.err(e))?;
        Ok(has.then_some(out.0))
    }

    /// `getBytes(key, MMBuffer&)`: `None` when it returns false (before that overload existed:
    /// `getBytes(key)`, present when non-empty or `containsKey`).
    pub fn get_bytes(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut out = ByteSink::default();
        let has = self
            .shim()
            .get_bytes(self.handle, key, &mut out)
            .map_err(|e| self.lib.err(e))?;
        Ok(has.then_some(out.0))
    }

    /// `getVector(key, std::vector<std::string>&)`.
    pub fn get_string_vec(&self, key: &[u8]) -> Result<Option<Vec<Vec<u8>>>> {
        let mut data = ByteSink::default();
        let mut lens = Vec::new();
        let has = self
            .shim()
            .get_string_vec(self.handle, key, &mut data, &mut lens)
            .map_err(|e| self.lib.err(e))?;
        Ok(has.then(|| split_items(&data.0, &lens)))
    }

    /// `removeValueForKey(key)`: `Some(result)` from v2.0.0 (returns bool), `None` before
    /// (returns void).
    pub fn remove(&self, key: &[u8]) -> Result<Option<bool>> {
        let r = self
            .shim()
            .remove(self.handle, key)
            .map_err(|e| self.lib.err(e))?;
        Ok((r >= 0).then_some(r == 1))
    }

    /// `removeValuesForKeys(keys)`.
    pub fn remove_keys<S: AsRef<[u8]>>(&self, keys: &[S]) -> Result<()> {
        let mut data = Vec::new();
        let mut offsets = Vec::with_capacity(keys.len() + 1);
        offsets.push(0usize);
        for k in keys {
            data.extend_from_slice(k.as_ref());
            offsets.push(data.len());
        }
        self.shim()
            .remove_keys(self.handle, &data, &offsets)
            .map_err(|e| self.lib.err(e))
    }

    /// `clearAll()`.
    pub fn clear_all(&self) -> Result<()> {
        self.shim()
            .clear_all(self.handle, false)
            .map_err(|e| self.lib.err(e))
    }

    /// `clearAll(true)` (keep the file's size; v1.3.2+).
    pub fn clear_all_keep_space(&self) -> Result<()> {
        if !self.lib.caps.clear_all_keep_space {
            return Err(self.lib.unsupported("clearAll(keepSpace)"));
        }
        self.shim()
            .clear_all(self.handle, true)
            .map_err(|e| self.lib.err(e))
    }

    /// `trim()`.
    pub fn trim(&self) -> Result<()> {
        self.shim().trim(self.handle).map_err(|e| self.lib.err(e))
    }

    /// `sync(MMKV_SYNC)`.
    pub fn sync(&self) -> Result<()> {
        self.shim()
            .sync(self.handle, true)
            .map_err(|e| self.lib.err(e))
    }

    /// `sync(MMKV_ASYNC)`.
    pub fn sync_async(&self) -> Result<()> {
        self.shim()
            .sync(self.handle, false)
            .map_err(|e| self.lib.err(e))
    }

    /// `clearMemoryCache()`: the next access reloads from the files.
    pub fn clear_memory_cache(&self) -> Result<()> {
        self.shim()
            .clear_memory_cache(self.handle)
            .map_err(|e| self.lib.err(e))
    }

    /// `allKeys()` (expired keys included, as the library reports them).
    pub fn all_keys(&self) -> Result<Vec<Vec<u8>>> {
        self.keys(false)
    }

    /// `allKeys(true)`: non-expired keys only (v1.3.1+).
    pub fn all_keys_filtered(&self) -> Result<Vec<Vec<u8>>> {
        if !self.lib.caps.count_filter_expire {
            return Err(self.lib.unsupported("allKeys(filterExpire)"));
        }
        self.keys(true)
    }

    fn keys(&self, filter: bool) -> Result<Vec<Vec<u8>>> {
        let mut data = ByteSink::default();
        let mut lens = Vec::new();
        self.shim()
            .all_keys(self.handle, filter, &mut data, &mut lens)
            .map_err(|e| self.lib.err(e))?;
        Ok(split_items(&data.0, &lens))
    }

    /// `count()`.
    pub fn count(&self) -> Result<u64> {
        self.shim()
            .count(self.handle, false)
            .map_err(|e| self.lib.err(e))
    }

    /// `count(true)`: non-expired keys only (v1.3.1+).
    pub fn count_filtered(&self) -> Result<u64> {
        if !self.lib.caps.count_filter_expire {
            return Err(self.lib.unsupported("count(filterExpire)"));
        }
        self.shim()
            .count(self.handle, true)
            .map_err(|e| self.lib.err(e))
    }

    /// `containsKey(key)`.
    pub fn contains(&self, key: &[u8]) -> Result<bool> {
        self.shim()
            .contains(self.handle, key)
            .map_err(|e| self.lib.err(e))
    }

    /// `totalSize()`: the data file's size.
    pub fn total_size(&self) -> Result<u64> {
        self.shim()
            .total_size(self.handle)
            .map_err(|e| self.lib.err(e))
    }

    /// `actualSize()`: bytes used in the data file.
    pub fn actual_size(&self) -> Result<u64> {
        self.shim()
            .actual_size(self.handle)
            .map_err(|e| self.lib.err(e))
    }

    /// `getValueSize(key, actual)`.
    pub fn value_size(&self, key: &[u8], actual: bool) -> Result<u64> {
        self.shim()
            .value_size(self.handle, key, actual)
            .map_err(|e| self.lib.err(e))
    }

    /// `reKey(key[, aes256])`: an empty `key` decrypts the store; `aes256` needs v2.3.0+.
    pub fn rekey(&self, key: &[u8], aes256: bool) -> Result<bool> {
        if !self.lib.caps.rekey || (aes256 && !self.lib.caps.aes256) {
            return Err(self
                .lib
                .unsupported(if aes256 { "reKey(aes256)" } else { "reKey" }));
        }
        self.shim()
            .rekey(self.handle, key, aes256)
            .map_err(|e| self.lib.err(e))
    }

    /// `enableCompareBeforeSet()` (`enable`) or `disableCompareBeforeSet()`: the library's
    /// bool (false while key expiration or encryption is on). v1.3.2+.
    pub fn compare_before_set(&self, enable: bool) -> Result<bool> {
        if !self.lib.caps.compare_before_set {
            return Err(self.lib.unsupported("enableCompareBeforeSet"));
        }
        self.shim()
            .compare_before_set(self.handle, enable)
            .map_err(|e| self.lib.err(e))
    }

    /// `lock()`: the store's inter-process exclusive lock (recursive; a no-op lock in
    /// single-process mode).
    pub fn lock(&self) -> Result<()> {
        self.shim()
            .lock(self.handle, 0)
            .map(drop)
            .map_err(|e| self.lib.err(e))
    }

    /// `unlock()`, after [`Instance::lock`] or a successful [`Instance::try_lock`].
    pub fn unlock(&self) -> Result<()> {
        self.shim()
            .lock(self.handle, 1)
            .map(drop)
            .map_err(|e| self.lib.err(e))
    }

    /// `try_lock()`: the library's bool.
    pub fn try_lock(&self) -> Result<bool> {
        self.shim()
            .lock(self.handle, 2)
            .map_err(|e| self.lib.err(e))
    }

    /// `importFrom(src)`: copies every key of `src` (an instance of the same loaded version)
    /// into this store; the number imported. v2.2.1+.
    pub fn import_from(&self, src: &Instance) -> Result<u64> {
        if !self.lib.caps.import_from {
            return Err(self.lib.unsupported("importFrom"));
        }
        if !Arc::ptr_eq(&self.lib, &src.lib) {
            return Err(Error::InvalidArgument(
                "importFrom needs an instance of the same loaded version".into(),
            ));
        }
        self.shim()
            .import_from(self.handle, src.handle)
            .map_err(|e| self.lib.err(e))
    }

    fn release(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        let last = {
            let mut open = self.lib.open.lock().unwrap_or_else(|p| p.into_inner());
            match open.get_mut(&self.handle) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    false
                }
                _ => {
                    open.remove(&self.handle);
                    true
                }
            }
        };
        if last {
            self.shim()
                .close(self.handle)
                .map_err(|e| self.lib.err(e))?;
        }
        Ok(())
    }

    /// `close()` (only when this is the last handle to the C++ instance; see the crate docs).
    pub fn close(mut self) -> Result<()> {
        self.release()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.release();
    }
}
