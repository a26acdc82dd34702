//! Golden corpora: manifest entries as typed values (the manifest's types, loader and writer
//! are `mmkv_corpus`'s, re-exported here), and the check of a recorded store set through a
//! reader.

use std::collections::BTreeSet;
use std::path::Path;

use mmkv_corpus::encoding::{boolean, bytes, dec, hex32, hex64, items, text};
pub use mmkv_corpus::{corpus_root, corpus_tags, Entry, Manifest, StoreManifest};

use crate::error::Result;
use crate::sides::view::ReaderFactory;
use crate::vocab::kind::Features;
use crate::vocab::value::{hex_bytes, show, Value, ValueType};

/// A manifest entry read and written as this crate's typed [`Value`].
pub trait TypedEntry {
    /// The entry's getter type.
    fn value_type(&self) -> std::result::Result<ValueType, String>;
    /// Decodes the manifest encoding into a typed value.
    fn typed_value(&self) -> std::result::Result<Value, String>;
    /// Encodes a typed value as a manifest entry.
    fn from_value(key: &str, value: &Value, expire_at: Option<u32>) -> Self;
}

impl TypedEntry for Entry {
    fn value_type(&self) -> std::result::Result<ValueType, String> {
        self.ty.parse::<ValueType>().map_err(|e| e.to_string())
    }

    fn typed_value(&self) -> std::result::Result<Value, String> {
        let v = &self.value;
        Ok(match self.value_type()? {
            ValueType::Bool => Value::Bool(boolean(v, "bool")?),
            ValueType::I32 => Value::I32(dec(v, "i32")?),
            ValueType::U32 => Value::U32(dec(v, "u32")?),
            ValueType::I64 => Value::I64(dec(v, "i64")?),
            ValueType::U64 => Value::U64(dec(v, "u64")?),
            ValueType::F32 => Value::F32(hex32(v)?),
            ValueType::F64 => Value::F64(hex64(v)?),
            ValueType::String => Value::String(text(v, "string")?.to_string()),
            ValueType::Bytes => Value::Bytes(bytes(v)?),
            ValueType::Strings => {
                Value::Strings(items(v, |x| text(x, "strings").map(str::to_string))?)
            }
            ValueType::VecI32 => Value::VecI32(items(v, |x| dec(x, "vec_i32"))?),
            ValueType::VecU32 => Value::VecU32(items(v, |x| dec(x, "vec_u32"))?),
            ValueType::VecI64 => Value::VecI64(items(v, |x| dec(x, "vec_i64"))?),
            ValueType::VecU64 => Value::VecU64(items(v, |x| dec(x, "vec_u64"))?),
            ValueType::VecF32 => Value::VecF32(items(v, hex32)?),
            ValueType::VecF64 => Value::VecF64(items(v, hex64)?),
            ValueType::VecBool => Value::VecBool(items(v, |x| boolean(x, "vec_bool"))?),
        })
    }

    fn from_value(key: &str, value: &Value, expire_at: Option<u32>) -> Entry {
        use serde_json::Value as J;
        let s = |x: String| J::String(x);
        let json = match value {
            Value::Bool(b) => J::Bool(*b),
            Value::I32(x) => s(x.to_string()),
            Value::U32(x) => s(x.to_string()),
            Value::I64(x) => s(x.to_string()),
            Value::U64(x) => s(x.to_string()),
            Value::F32(x) => s(format!("{:08x}", x.to_bits())),
            Value::F64(x) => s(format!("{:016x}", x.to_bits())),
            Value::String(x) => s(x.clone()),
            Value::Bytes(x) => s(hex_bytes::encode(x)),
            Value::Strings(v) => J::Array(v.iter().map(|x| s(x.clone())).collect()),
            // Never read back by a getter (the string-vector getter is UTF-8-only); written
            // values of this kind are listed as hex items.
            Value::ByteStrings(v) => J::Array(v.iter().map(|x| s(hex_bytes::encode(x))).collect()),
            Value::VecI32(v) => J::Array(v.iter().map(|x| s(x.to_string())).collect()),
            Value::VecU32(v) => J::Array(v.iter().map(|x| s(x.to_string())).collect()),
            Value::VecI64(v) => J::Array(v.iter().map(|x| s(x.to_string())).collect()),
            Value::VecU64(v) => J::Array(v.iter().map(|x| s(x.to_string())).collect()),
            Value::VecBool(v) => J::Array(v.iter().map(|x| J::Bool(*x)).collect()),
            Value::VecF32(v) => J::Array(
                v.iter()
                    .map(|x| s(format!("{:08x}", x.to_bits())))
                    .collect(),
            ),
            Value::VecF64(v) => J::Array(
                v.iter()
                    .map(|x| s(format!("{:016x}", x.to_bits())))
                    .collect(),
            ),
        };
        Entry {
            key: key.to_string(),
            ty: value.value_type().name().to_string(),
            value: json,
            expire_at,
        }
    }
}

/// The outcome of checking one store of a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreCheck {
    /// Store id.
    pub id: String,
    /// Every difference found (empty = pass).
    pub mismatches: Vec<String>,
}

impl StoreCheck {
    /// True when the store passed.
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty()
    }
}

/// Checks one store of a manifest in `dir` through `reader`:
/// every entry equal by its type's getter (and its expire time), every absent key absent for
/// every getter in `getters`, the key set and the count.
pub fn check_store(
    dir: &Path,
    store: &StoreManifest,
    reader: &dyn ReaderFactory,
    getters: &[ValueType],
) -> StoreCheck {
    let mut mismatches = Vec::new();
    let id = store.id.clone();
    let key = match store.crypt_key() {
        Ok(k) => k,
        Err(e) => {
            return StoreCheck {
                id,
                mismatches: vec![e.to_string()],
            }
        }
    };
    let view = match reader.open(&dir.join(&store.id), key.as_deref(), store.aes256) {
        Ok(v) => v,
        Err(e) => {
            return StoreCheck {
                id,
                mismatches: vec![format!("reader cannot open the store: {e}")],
            }
        }
    };
    let mut expected_keys = BTreeSet::new();
    for entry in &store.entries {
        expected_keys.insert(entry.key.as_bytes().to_vec());
        let (ty, want) = match entry
            .value_type()
            .and_then(|t| Ok((t, entry.typed_value()?)))
        {
            Ok(x) => x,
            Err(e) => {
                mismatches.push(format!("manifest entry {:?}: {e}", entry.key));
                continue;
            }
        };
        let got = view.read(entry.key.as_bytes(), ty);
        if got.as_ref() != Some(&want) {
            mismatches.push(format!(
                "key {:?} get {ty}: manifest {want}, reader {}",
                entry.key,
                show(&got)
            ));
        }
        if !view.contains(entry.key.as_bytes()) {
            mismatches.push(format!("key {:?}: contains() is false", entry.key));
        }
        if store.key_expire {
            let got = view.expire_at(entry.key.as_bytes()).unwrap_or(0);
            let want = entry.expire_at.unwrap_or(0);
            if got != want {
                mismatches.push(format!(
                    "key {:?}: expire_at manifest {want}, reader {got}",
                    entry.key
                ));
            }
        }
    }
    for k in &store.absent {
        if view.contains(k.as_bytes()) {
            mismatches.push(format!("absent key {k:?}: contains() is true"));
        }
        for &ty in getters {
            if let Some(v) = view.read(k.as_bytes(), ty) {
                mismatches.push(format!("absent key {k:?} get {ty}: reader {v}"));
            }
        }
    }
    let got_keys: BTreeSet<Vec<u8>> = view.keys().into_iter().collect();
    if got_keys != expected_keys {
        let extra: Vec<_> = got_keys
            .difference(&expected_keys)
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        let missing: Vec<_> = expected_keys
            .difference(&got_keys)
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        mismatches.push(format!(
            "key set differs: reader has extra {extra:?}, misses {missing:?}"
        ));
    }
    let count = view.count();
    if count != store.count || store.count != store.entries.len() {
        mismatches.push(format!(
            "count: manifest {} ({} entries), reader {count}",
            store.count,
            store.entries.len()
        ));
    }
    StoreCheck { id, mismatches }
}

/// The result of checking one corpus folder.
#[derive(Debug, Clone)]
pub struct CorpusCheck {
    /// The folder's tag (its name).
    pub tag: String,
    /// One result per store of the manifest.
    pub stores: Vec<StoreCheck>,
}

impl CorpusCheck {
    /// True when every store passed.
    pub fn passed(&self) -> bool {
        self.stores.iter().all(StoreCheck::passed)
    }

    /// The check of one store id, if the manifest has it.
    pub fn store(&self, id: &str) -> Option<&StoreCheck> {
        self.stores.iter().find(|s| s.id == id)
    }
}

/// Checks every store of the corpus folder `dir` (named after its tag).
pub fn check_corpus_dir(dir: &Path, reader: &dyn ReaderFactory) -> Result<CorpusCheck> {
    let tag = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let manifest = Manifest::load(dir)?;
    let features = Features::from_tag(&tag).unwrap_or(Features {
        typed_vectors: true,
        ..Features::default()
    });
    let getters = features.getters();
    let stores = manifest
        .stores
        .iter()
        .map(|s| check_store(dir, s, reader, &getters))
        .collect();
    Ok(CorpusCheck { tag, stores })
}
