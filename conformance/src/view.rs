//! The reader side of every comparison, behind a trait so that tests can inject deliberately
//! broken readers and check that the harness catches them.

use std::path::Path;

use crate::value::{Value, ValueType};

/// What the harness asks of a reader: typed reads with the official getter semantics.
pub trait ReaderView {
    /// The value the getter of type `ty` returns for `key`, `None` when it reports no value.
    fn read(&self, key: &[u8], ty: ValueType) -> Option<Value>;
    /// Whether the key is present (not removed, not expired).
    fn contains(&self, key: &[u8]) -> bool;
    /// Every present key.
    fn keys(&self) -> Vec<Vec<u8>>;
    /// Number of present keys.
    fn count(&self) -> usize;
    /// The expire time of a present key (`Some(0)` or `None` when it never expires).
    fn expire_at(&self, key: &[u8]) -> Option<u32>;
    /// Every way the reader offers to read the value (named), for readers with several
    /// getter paths; they must all agree. Default: [`ReaderView::read`] alone.
    fn read_paths(&self, key: &[u8], ty: ValueType) -> Vec<(&'static str, Option<Value>)> {
        vec![("read", self.read(key, ty))]
    }
    /// Reload counters of a reader kept open (`None` for readers without them).
    fn stats(&self) -> Option<mmkv_reader::ReloadStats> {
        None
    }
}

/// Opens readers on store files; `Sync` so one factory serves every test thread.
pub trait ReaderFactory: Sync {
    /// A short name for messages.
    fn name(&self) -> String;
    /// Opens the store whose data file is `path` (meta `path.crc`).
    fn open(
        &self,
        path: &Path,
        crypt_key: Option<&[u8]>,
        aes256: bool,
    ) -> Result<Box<dyn ReaderView>, String>;
}
