//! The reader side of every comparison, behind a trait so that tests can inject deliberately
//! broken readers and check that the harness catches them.

use std::path::Path;

use crate::vocab::value::{Value, ValueType};

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
    /// Every form of the key set the reader offers (named); they must all equal the first,
    /// which is compared with the official key set. Default: [`ReaderView::keys`] alone.
    fn key_sets(&self) -> Vec<(&'static str, Vec<Vec<u8>>)> {
        vec![("keys", self.keys())]
    }
    /// Every form of the count (named); they must all agree. Default: [`ReaderView::count`].
    fn counts(&self) -> Vec<(&'static str, usize)> {
        vec![("count", self.count())]
    }
    /// Every form of `contains` (named); they must all agree. Default:
    /// [`ReaderView::contains`].
    fn contains_paths(&self, key: &[u8]) -> Vec<(&'static str, bool)> {
        vec![("contains", self.contains(key))]
    }
    /// Every form of the expire time (named); they must all agree. Default:
    /// [`ReaderView::expire_at`].
    fn expire_paths(&self, key: &[u8]) -> Vec<(&'static str, Option<u32>)> {
        vec![("expire_at", self.expire_at(key))]
    }
    /// Every form of the raw payload of `key` (named, e.g. the snapshot's and the store's
    /// `raw_value`); each is decoded with every getter type and must give what the getters
    /// return. Default: none.
    fn raw_values(&self, _key: &[u8]) -> Vec<(&'static str, Option<Vec<u8>>)> {
        Vec::new()
    }
    /// Whole-store listings (named, e.g. `iter`, `entries`), taken from one snapshot: every
    /// present key with its raw payload and, where the listing has it, its expire time
    /// (`Some(0)`: never). Their key sets must equal the reader's key set, each payload must
    /// decode (with every getter type) to what the getters return, and each expire time must
    /// equal the reader's `expire_at`. Default: none.
    fn listings(&self) -> Vec<(&'static str, Vec<Listed>)> {
        Vec::new()
    }
    /// The string-vector getter as raw byte strings (no UTF-8 requirement), compared with the
    /// official `getVector` of `std::string`s; `None` for readers without such a getter.
    fn bytes_vec(&self, _key: &[u8]) -> Option<Option<Vec<Vec<u8>>>> {
        None
    }
    /// Reload counters of a reader kept open (`None` for readers without them).
    fn stats(&self) -> Option<mmkv_reader::ReloadStats> {
        None
    }
}

/// One entry of a [`ReaderView::listings`] listing: key, raw payload, expire time (when
/// the listing reports it).
pub type Listed = (Vec<u8>, Vec<u8>, Option<u32>);

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
