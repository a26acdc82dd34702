//! The manifest's types, loader and writer.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The manifest's file name inside a tag folder.
pub const MANIFEST_FILE: &str = "manifest.json";

/// A manifest or corpus folder that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file or folder cannot be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a manifest.
    #[error("manifest {}: {message}", path.display())]
    Parse {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A crypt key that is not hex.
    #[error("bad crypt_key_hex {0:?}")]
    CryptKey(String),
}

/// A corpus manifest (`<tag>/manifest.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// What the library reports as its version.
    pub mmkv_version: String,
    /// The workload seed.
    pub seed: u64,
    /// The page size (bytes) the writer ran with, in a page corpus (`corpus/p16k/<tag>/`:
    /// [`crate::page_corpora`]); absent in the tag corpora, written on 4 KiB pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u64>,
    /// One entry per store file.
    pub stores: Vec<StoreManifest>,
}

/// The process mode a store was opened with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `MMKV_SINGLE_PROCESS`
    Single,
    /// `MMKV_MULTI_PROCESS`
    Multi,
}

/// One store of a manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoreManifest {
    /// The store id (= data file name).
    pub id: String,
    /// Process mode it was opened with.
    pub mode: Mode,
    /// The crypt key bytes as given to the library (hex), or null.
    pub crypt_key_hex: Option<String>,
    /// Whether the key was an AES-256 key.
    pub aes256: bool,
    /// Whether `enableAutoKeyExpire` was called.
    pub key_expire: bool,
    /// Live entries.
    pub count: usize,
    /// `set()` calls the library refused.
    pub rejected_sets: usize,
    /// Every live key with its type and value.
    pub entries: Vec<Entry>,
    /// Keys that were touched but are removed, cleared or expired.
    pub absent: Vec<String>,
}

/// One live key of a manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The key.
    pub key: String,
    /// The getter type's manifest name (`i32`, `strings`, `vec_f64` ...).
    #[serde(rename = "type")]
    pub ty: String,
    /// The value in the manifest encoding ([`crate::encoding`]).
    pub value: serde_json::Value,
    /// Expire time (epoch seconds) for expiring keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_at: Option<u32>,
}

impl StoreManifest {
    /// The crypt key bytes (`None` for a plaintext store).
    pub fn crypt_key(&self) -> Result<Option<Vec<u8>>, ManifestError> {
        match &self.crypt_key_hex {
            None => Ok(None),
            Some(h) => crate::hex::decode(h)
                .map(Some)
                .ok_or_else(|| ManifestError::CryptKey(h.clone())),
        }
    }
}

impl Manifest {
    /// Loads `dir/manifest.json`.
    pub fn load(dir: &Path) -> Result<Manifest, ManifestError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| ManifestError::Io {
            path: path.clone(),
            source: e,
        })?;
        serde_json::from_str(&text).map_err(|e| ManifestError::Parse {
            path,
            message: e.to_string(),
        })
    }

    /// The store `id`, if the manifest has it.
    pub fn store(&self, id: &str) -> Option<&StoreManifest> {
        self.stores.iter().find(|s| s.id == id)
    }

    /// Every entry of every store.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.stores.iter().flat_map(|s| &s.entries)
    }

    /// The manifest as JSON laid out like the project's corpus (one entry per line).
    pub fn to_json_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{{\"mmkv_version\":{},\"seed\":{},{}",
            j(&self.mmkv_version),
            self.seed,
            self.page_size
                .map(|p| format!("\"page_size\":{p},"))
                .unwrap_or_default()
        );
        out.push_str("  \"stores\":[\n");
        for (si, s) in self.stores.iter().enumerate() {
            let _ = writeln!(
                out,
                "    {{\"id\":{},\"mode\":{},\"crypt_key_hex\":{},\"aes256\":{},\"key_expire\":{},\"count\":{},\"rejected_sets\":{},",
                j(&s.id),
                j(&s.mode),
                j(&s.crypt_key_hex),
                s.aes256,
                s.key_expire,
                s.count,
                s.rejected_sets
            );
            out.push_str("     \"entries\":[");
            for (i, e) in s.entries.iter().enumerate() {
                out.push_str(if i == 0 { "\n      " } else { ",\n      " });
                out.push_str(&j(e));
            }
            out.push_str("],\n");
            let _ = write!(out, "     \"absent\":{}}}", j(&s.absent));
            out.push_str(if si + 1 < self.stores.len() {
                ",\n"
            } else {
                "\n"
            });
        }
        out.push_str("  ]}\n");
        out
    }
}

/// Compact JSON of a serializable value.
fn j<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{corpus_root, corpus_tags};

    #[test]
    fn every_project_manifest_loads_and_reads_back_from_its_written_text() {
        let root = corpus_root();
        let tags = corpus_tags(&root).unwrap();
        // At least the tags v1.1.0-v2.4.2 (lib.rs checks them against versions.yaml).
        assert!(tags.len() >= 50, "{tags:?}");
        let mut stores = 0;
        for tag in &tags {
            let m = Manifest::load(&root.join(tag)).unwrap();
            let back: Manifest = serde_json::from_str(&m.to_json_text()).unwrap();
            assert!(back == m, "{tag}: the written text reads back differently");
            for s in &m.stores {
                assert_eq!(s.count, s.entries.len(), "{tag}/{}", s.id);
                assert_eq!(s.crypt_key().unwrap().is_some(), s.crypt_key_hex.is_some());
                assert!(std::ptr::eq(m.store(&s.id).unwrap(), s));
                stores += 1;
            }
        }
        assert!(stores >= 472, "{stores}");
        // The page corpora too, whose manifests also say page_size.
        for p in crate::page_corpora(&root).unwrap() {
            let back: Manifest = serde_json::from_str(&p.manifest.to_json_text()).unwrap();
            assert!(back == p.manifest, "{}", p.dir.display());
            assert_eq!(back.page_size, Some(p.page_size));
        }
    }

    #[test]
    fn load_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = Manifest::load(dir.path()).unwrap_err();
        assert!(matches!(err, ManifestError::Io { .. }), "{err}");
        std::fs::write(dir.path().join(MANIFEST_FILE), "{\"seed\":1}").unwrap();
        let err = Manifest::load(dir.path()).unwrap_err();
        assert!(matches!(err, ManifestError::Parse { .. }), "{err}");
        assert!(err.to_string().contains("manifest.json"), "{err}");
        let store = StoreManifest {
            id: "x".into(),
            mode: Mode::Single,
            crypt_key_hex: Some("zz".into()),
            aes256: false,
            key_expire: false,
            count: 0,
            rejected_sets: 0,
            entries: vec![],
            absent: vec![],
        };
        assert!(matches!(store.crypt_key(), Err(ManifestError::CryptKey(_))));
    }
}
