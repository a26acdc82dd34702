//! The official side of every comparison: what the harness needs from one loaded version of
//! the official library. [`crate::sides::sys`] implements it with `mmkv-sys`.

use std::path::Path;

use crate::error::Result;
use crate::vocab::kind::{Features, ModeKind, StoreKind};
use crate::vocab::value::{Value, ValueType};

/// One loaded official version.
pub trait OfficialLib: Sync {
    /// The upstream tag.
    fn tag(&self) -> &str;
    /// Its features (from `versions.yaml`).
    fn features(&self) -> Features;
    /// Opens (creating if needed) store `id` in `dir` with the configuration of `kind`.
    /// Does not enable key expiration: callers do that with [`OfficialStore::enable_key_expire`].
    fn open(&self, dir: &Path, id: &str, kind: StoreKind) -> Result<Box<dyn OfficialStore>> {
        self.open_with(dir, id, kind.mode(), kind.crypt_key(), kind.aes256())
    }
    /// Opens store `id` in `dir` with an explicit mode and crypt key (after a `reKey`).
    fn open_with(
        &self,
        dir: &Path,
        id: &str,
        mode: ModeKind,
        crypt_key: Option<&[u8]>,
        aes256: bool,
    ) -> Result<Box<dyn OfficialStore>>;
    /// Opens store `id` of `dir` the other way `via` names (a folder `dir` and an instance
    /// as [`OpenVia`] says); `Ok(None)` where the version lacks that way.
    fn open_via(
        &self,
        via: OpenVia,
        dir: &Path,
        id: &str,
        mode: ModeKind,
        crypt_key: Option<&[u8]>,
        aes256: bool,
    ) -> Result<Option<Box<dyn OfficialStore>>>;
    /// `backupOneToDirectory(id, to, &from)`: the library's bool; `Ok(None)` when the version
    /// lacks it (before v1.2.11).
    fn backup_one(&self, id: &str, from: &Path, to: &Path) -> Result<Option<bool>>;
    /// `restoreOneFromDirectory(id, from, &to)`: as [`OfficialLib::backup_one`].
    fn restore_one(&self, id: &str, from: &Path, to: &Path) -> Result<Option<bool>>;
    /// The static `isFileValid(id, &dir)`.
    fn is_file_valid(&self, id: &str, dir: &Path) -> Result<bool>;
    /// The static `removeStorage(id, &dir)` (close every instance of the store first);
    /// `Ok(None)` when the version lacks it (before v1.3.3).
    fn remove_storage(&self, id: &str, dir: &Path) -> Result<Option<bool>>;
}

/// The other ways [`OfficialLib::open_via`] opens a store, each where its version has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenVia {
    /// `MMKV_READ_ONLY` added to the mode (v2.0.0+): an instance that maps the files read-only
    /// and refuses every write. The library hands out one instance per store and process, so
    /// every other instance of the store must be closed first.
    ReadOnly,
    /// `MMKV::nameSpace(dir).mmkvWithID` (v2.1.0+), creating the store if needed: the files
    /// are in the folder `dir` names once normalised (absolute, canonical, no trailing slash).
    NameSpace,
}

/// `lock()`, `unlock()` or `try_lock()` of an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockCall {
    /// `lock()`.
    Lock,
    /// `unlock()`.
    Unlock,
    /// `try_lock()`.
    TryLock,
}

/// One open official instance.
pub trait OfficialStore {
    /// `enableAutoKeyExpire(default_secs)`.
    fn enable_key_expire(&mut self, default_secs: u32) -> Result<bool>;
    /// `set(value, key[, expire])`; `Ok(false)` when the library refused it.
    fn set(&mut self, key: &[u8], value: &Value, expire: Option<u32>) -> Result<bool>;
    /// `removeValueForKey`.
    fn remove(&mut self, key: &[u8]) -> Result<()>;
    /// `clearAll()`.
    fn clear_all(&mut self) -> Result<()>;
    /// `removeValuesForKeys(keys)`.
    fn remove_keys(&mut self, keys: &[&[u8]]) -> Result<()>;
    /// `clearAll(true)`; `Ok(false)` when the version lacks it (before v1.3.2).
    fn clear_all_keep_space(&mut self) -> Result<bool>;
    /// `disableAutoKeyExpire()` (the library's bool).
    fn disable_key_expire(&mut self) -> Result<bool>;
    /// `reKey(key[, aes256])` (`None`: decrypt); `Ok(None)` when the version cannot do it.
    fn rekey(&mut self, key: Option<&[u8]>, aes256: bool) -> Result<Option<bool>>;
    /// `trim()`.
    fn trim(&mut self) -> Result<()>;
    /// `sync(MMKV_SYNC)`.
    fn sync(&mut self) -> Result<()>;
    /// `sync(MMKV_ASYNC)`.
    fn sync_async(&mut self) -> Result<()>;
    /// `clearMemoryCache()`: the next access loads the files again.
    fn clear_memory_cache(&mut self) -> Result<()>;
    /// `lock()` / `unlock()` / `try_lock()`: `try_lock`'s bool, true for the others.
    fn lock(&mut self, call: LockCall) -> Result<bool>;
    /// `enableCompareBeforeSet()` (`enable`) or `disableCompareBeforeSet()`: the library's
    /// bool; `Ok(None)` when the version lacks them (before v1.3.2).
    fn compare_before_set(&mut self, enable: bool) -> Result<Option<bool>>;
    /// `importFrom(src)`, `src` being store `id` of `dir` opened plaintext single-process by
    /// the same version and given `entries` first: the number it imported; `Ok(None)` when the
    /// version lacks it (before v2.2.1).
    fn import_from(
        &mut self,
        dir: &Path,
        id: &str,
        entries: &[(&[u8], &Value)],
    ) -> Result<Option<u64>>;
    /// The official getter of type `ty` (`None` = no value / has-value flag false).
    fn get(&mut self, key: &[u8], ty: ValueType) -> Result<Option<Value>>;
    /// `getVector` of `std::string`s as raw byte strings (`None` = no value).
    fn get_bytes_vec(&mut self, key: &[u8]) -> Result<Option<Vec<Vec<u8>>>>;
    /// `containsKey`.
    fn contains(&mut self, key: &[u8]) -> Result<bool>;
    /// `allKeys(filterExpire)` (the flag is ignored by versions without it).
    fn all_keys(&mut self, filter_expire: bool) -> Result<Vec<Vec<u8>>>;
    /// `count(filterExpire)` (the flag is ignored by versions without it).
    fn count(&mut self, filter_expire: bool) -> Result<usize>;
    /// `close()`; the instance is unusable afterwards.
    fn close(&mut self) -> Result<()>;
}
