//! The real reader (`mmkv_reader::Store`) as a [`ReaderFactory`] / [`ReaderView`].

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mmkv_reader::{Clock, Options, ReloadStats, SnapshotData, Store};

use crate::sides::view::{Listed, ReaderFactory, ReaderView};
use crate::vocab::value::{Value, ValueType};

/// The real `mmkv_reader::Store` with a configurable clock (by default the official library's
/// notion of now: `time(nullptr)` through the reader's `SystemClock`, or the test time when the
/// test clock is on, see [`crate::vocab::test_clock::SharedClock`]).
///
/// [`RealReader::new`] reads stores whose writer is idle while it reads: the official instance
/// of this thread, or a child process that has exited. A held `flock` can then only be a stale
/// one (v2.2.0 and v2.2.1 keep a single-process store's meta file locked through its mapping),
/// so the reader does not wait for it ([`Options::lock_timeout`] zero): it reads optimistically
/// at once, as it would after the default 100 ms. Readers beside running writer processes use
/// [`RealReader::beside_writers`] (the default timeout).
#[derive(Clone)]
pub struct RealReader {
    clock: Option<Arc<dyn Clock>>,
    lock_timeout: Option<Duration>,
}

impl RealReader {
    /// The reader with the system clock, for stores whose writer is idle while it reads.
    pub fn new() -> RealReader {
        RealReader {
            clock: None,
            lock_timeout: Some(Duration::ZERO),
        }
    }

    /// The reader with the system clock and the reader's default lock timeout, for stores that
    /// writer processes change while it reads.
    pub fn beside_writers() -> RealReader {
        RealReader {
            clock: None,
            lock_timeout: None,
        }
    }

    /// The reader with an injected clock (for stores whose writer is idle while it reads).
    pub fn with_clock(clock: Arc<dyn Clock>) -> RealReader {
        RealReader {
            clock: Some(clock),
            ..RealReader::new()
        }
    }

    /// Opens a `Store` (not boxed) with this configuration.
    pub fn open_store(
        &self,
        path: &Path,
        crypt_key: Option<&[u8]>,
        aes256: bool,
    ) -> mmkv_reader::Result<Store> {
        // the page the official library in this process writes and reads with
        let mut opts = Options::new()
            .page_size(mmkv_sys::page_size())
            .aes256(aes256);
        if let Some(key) = crypt_key {
            opts = opts.crypt_key(key);
        }
        let clock = self
            .clock
            .clone()
            .unwrap_or_else(|| Arc::new(crate::vocab::test_clock::SharedClock) as Arc<dyn Clock>);
        opts = opts.clock(clock);
        if let Some(timeout) = self.lock_timeout {
            opts = opts.lock_timeout(timeout);
        }
        Store::open(path, opts)
    }
}

impl Default for RealReader {
    fn default() -> RealReader {
        RealReader::new()
    }
}

impl ReaderFactory for RealReader {
    fn name(&self) -> String {
        if self.clock.is_some() {
            "mmkv-reader (injected clock)".to_string()
        } else {
            "mmkv-reader".to_string()
        }
    }

    fn open(
        &self,
        path: &Path,
        crypt_key: Option<&[u8]>,
        aes256: bool,
    ) -> Result<Box<dyn ReaderView>, String> {
        let store = self
            .open_store(path, crypt_key, aes256)
            .map_err(|e| e.to_string())?;
        Ok(Box::new(StoreView { store }))
    }
}

/// [`ReaderView`] over a `Store`: every call goes through one snapshot taken with
/// check-on-read, using the zero-copy getters for strings and bytes.
pub struct StoreView {
    /// The opened store.
    pub store: Store,
}

/// Reads one typed value from a snapshot (`SnapshotData::get_value`: the table's zero-copy
/// decoders, which the reader's tests prove equal to its named getters).
pub fn read_snapshot(snap: &SnapshotData, key: &[u8], ty: ValueType) -> Option<Value> {
    snap.get_value(key, ty).map(Value::from)
}

/// Reads one typed value through the store's copy getters (each with its check-on-read).
pub fn read_store(store: &Store, key: &[u8], ty: ValueType) -> Option<Value> {
    Some(match ty {
        ValueType::Bool => Value::Bool(store.get_bool(key)?),
        ValueType::I32 => Value::I32(store.get_i32(key)?),
        ValueType::U32 => Value::U32(store.get_u32(key)?),
        ValueType::I64 => Value::I64(store.get_i64(key)?),
        ValueType::U64 => Value::U64(store.get_u64(key)?),
        ValueType::F32 => Value::F32(store.get_f32(key)?),
        ValueType::F64 => Value::F64(store.get_f64(key)?),
        ValueType::String => Value::String(store.get_string(key)?),
        ValueType::Bytes => Value::Bytes(store.get_bytes(key)?),
        ValueType::Strings => Value::Strings(store.get_string_vec(key)?),
        ValueType::VecI32 => Value::VecI32(store.get_vec_i32(key)?),
        ValueType::VecU32 => Value::VecU32(store.get_vec_u32(key)?),
        ValueType::VecI64 => Value::VecI64(store.get_vec_i64(key)?),
        ValueType::VecU64 => Value::VecU64(store.get_vec_u64(key)?),
        ValueType::VecF32 => Value::VecF32(store.get_vec_f32(key)?),
        ValueType::VecF64 => Value::VecF64(store.get_vec_f64(key)?),
        ValueType::VecBool => Value::VecBool(store.get_vec_bool(key)?),
    })
}

impl ReaderView for StoreView {
    fn read(&self, key: &[u8], ty: ValueType) -> Option<Value> {
        read_snapshot(&self.store.snapshot(), key, ty)
    }

    /// The snapshot getters, the store's copy getters and the borrowed view's getters.
    fn read_paths(&self, key: &[u8], ty: ValueType) -> Vec<(&'static str, Option<Value>)> {
        vec![
            ("snapshot", read_snapshot(&self.store.snapshot(), key, ty)),
            ("copy getter", read_store(&self.store, key, ty)),
            ("view", read_snapshot(&self.store.view(), key, ty)),
        ]
    }

    fn raw_values(&self, key: &[u8]) -> Vec<(&'static str, Option<Vec<u8>>)> {
        vec![
            (
                "snapshot raw_value",
                self.store.snapshot().raw_value(key).map(<[u8]>::to_vec),
            ),
            ("Store::raw_value", self.store.raw_value(key)),
        ]
    }

    fn key_sets(&self) -> Vec<(&'static str, Vec<Vec<u8>>)> {
        vec![("keys", self.keys()), ("Store::keys", self.store.keys())]
    }

    fn counts(&self) -> Vec<(&'static str, usize)> {
        vec![("len", self.count()), ("Store::len", self.store.len())]
    }

    fn contains_paths(&self, key: &[u8]) -> Vec<(&'static str, bool)> {
        vec![
            ("contains", self.contains(key)),
            ("Store::contains", self.store.contains(key)),
        ]
    }

    fn expire_paths(&self, key: &[u8]) -> Vec<(&'static str, Option<u32>)> {
        vec![
            ("expire_at", self.expire_at(key)),
            ("Store::expire_at", self.store.expire_at(key)),
        ]
    }

    fn listings(&self) -> Vec<(&'static str, Vec<Listed>)> {
        let snap = self.store.snapshot();
        vec![
            (
                "iter",
                snap.iter()
                    .map(|(k, p)| (k.to_vec(), p.to_vec(), None))
                    .collect(),
            ),
            (
                "entries",
                snap.entries()
                    .map(|(k, p, t)| (k.to_vec(), p.to_vec(), Some(t)))
                    .collect(),
            ),
        ]
    }

    fn bytes_vec(&self, key: &[u8]) -> Option<Option<Vec<Vec<u8>>>> {
        Some(
            self.store
                .snapshot()
                .get_bytes_vec(key)
                .map(|v| v.into_iter().map(<[u8]>::to_vec).collect()),
        )
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.store.snapshot().contains(key)
    }

    fn keys(&self) -> Vec<Vec<u8>> {
        self.store.snapshot().keys().map(|k| k.to_vec()).collect()
    }

    fn count(&self) -> usize {
        self.store.snapshot().len()
    }

    fn expire_at(&self, key: &[u8]) -> Option<u32> {
        self.store.snapshot().expire_at(key)
    }

    fn stats(&self) -> Option<ReloadStats> {
        Some(self.store.stats())
    }
}
