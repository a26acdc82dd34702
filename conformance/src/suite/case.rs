//! One case of the portable suite (`suite/cases/<name>/`): its `case.json`, its class and era,
//! and the expected answer, as read and written by `conformance suite build|verify|grade`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mmkv_sys::versions::Tag;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::vocab::kind::{ModeKind, StoreKind};
use crate::vocab::value::hex_bytes;

/// The suite's folder in the workspace.
pub fn suite_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../suite")
}

/// The folder holding one folder per case.
pub const CASES_DIR: &str = "cases";
/// The data file of a case (its meta file is `store.crc`).
pub const DATA_FILE: &str = "store";
/// The meta file of a case (absent in the missing-meta cases).
pub const META_FILE: &str = "store.crc";
/// The case description in each case folder.
pub const CASE_FILE: &str = "case.json";

/// What a reader must do with a case (the prefix of its name, as in JSONTestSuite).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// `y_`: the official library reads it; a reader returns exactly [`Case::expect`].
    MustRead,
    /// `n_`: the official default strategy discards it (opens empty); an error or an empty
    /// store passes. [`Case::recover`] holds what `OnErrorRecover` reads.
    MustNotRead,
    /// `i_`: official versions read it differently; [`Case::expect`] is the files' content
    /// (the newest version's answer) and [`Case::answers`] lists every version's answer.
    VersionDependent,
}

impl Class {
    /// All classes, in table order.
    pub const ALL: [Class; 3] = [Class::MustRead, Class::MustNotRead, Class::VersionDependent];

    /// Its name in `case.json` and in the grade JSON (the serde name).
    pub fn name(self) -> &'static str {
        static NAMES: OnceLock<[String; 3]> = OnceLock::new();
        variant_name(&NAMES, &Class::ALL, self)
    }

    /// The case-name prefix.
    pub fn prefix(self) -> &'static str {
        match self {
            Class::MustRead => "y",
            Class::MustNotRead => "n",
            Class::VersionDependent => "i",
        }
    }
}

/// Groups of writing versions in the grade table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Era {
    /// v1.1.0 to v1.3.x.
    #[serde(rename = "v1.x")]
    V1,
    /// v2.0.0 to v2.3.x.
    #[serde(rename = "v2.0-v2.3")]
    V2,
    /// v2.4.0 and later (data header 0: the size lives only in the meta file).
    #[serde(rename = "v2.4")]
    V24,
}

impl Era {
    /// All eras, oldest first.
    pub const ALL: [Era; 3] = [Era::V1, Era::V2, Era::V24];

    /// The era of a writing version.
    pub fn of(tag: &str) -> Era {
        match Tag::parse(tag) {
            Some(t) if t.major < 2 => Era::V1,
            Some(t) if t.major == 2 && t.minor < 4 => Era::V2,
            _ => Era::V24,
        }
    }

    /// Its column name (the serde name).
    pub fn name(self) -> &'static str {
        static NAMES: OnceLock<[String; 3]> = OnceLock::new();
        variant_name(&NAMES, &Era::ALL, self)
    }
}

/// The serde name of `value`, one of `all` (a unit-variant enum's values), from `names` (filled
/// once): the enum's serde attributes are the one place of its names.
pub(crate) fn variant_name<T: Serialize + PartialEq, const N: usize>(
    names: &'static OnceLock<[String; N]>,
    all: &[T; N],
    value: T,
) -> &'static str {
    let names = names.get_or_init(|| {
        all.each_ref().map(|v| match serde_json::to_value(v) {
            Ok(serde_json::Value::String(s)) => s,
            _ => String::new(),
        })
    });
    let at = all.iter().position(|v| *v == value).unwrap_or(0);
    &names[at]
}

/// How to open a case's store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Open {
    /// `single` or `multi` (how the writer opened it; readers may ignore it).
    pub mode: ModeKind,
    /// The crypt key bytes as given to the official library (hex), or null.
    pub crypt_key_hex: Option<String>,
    /// The store uses AES-256 (MMKV v2.3.0+); otherwise an encrypted store is AES-128 and the
    /// library zero-pads or truncates the key to 16 bytes.
    pub aes256: bool,
}

impl Open {
    /// The opening of a store kind.
    pub fn of(kind: StoreKind) -> Open {
        Open {
            mode: kind.mode(),
            crypt_key_hex: kind.crypt_key().map(hex_bytes::encode),
            aes256: kind.aes256(),
        }
    }
}

/// One live entry of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Key bytes, hex.
    pub key_hex: String,
    /// The stored value payload (without the 4-byte expire suffix of key-expiring stores), hex;
    /// null only in a version's recorded answer where its typed getter returned nothing.
    pub payload_hex: Option<String>,
    /// The writer's type (manifest names: `i32`, `string`, `vec_f64` ...), when known.
    #[serde(rename = "type")]
    pub ty: Option<String>,
    /// The value decoded as `type`, in the corpus manifest encoding (corpus/README.md).
    pub value: Option<serde_json::Value>,
    /// Expire time (epoch seconds) of an expiring record; null for a record without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_at: Option<u32>,
}

/// What the official library reads: its live entries, sorted by key bytes.
///
/// In `case.json` two short forms stand for the entries (resolved by [`Case::load`]):
/// `{"manifest": "corpus/<tag>/manifest.json", "store": "<id>"}` (a golden corpus store whose
/// manifest lists exactly the official answer: each payload is its value encoded as the writer
/// encodes it) and, for `recover`, `{"same_as_expect": true}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Answer {
    /// The live entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<Entry>,
    /// The corpus manifest (relative to the workspace) holding the entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
    /// The manifest's store id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// The entries are those of `expect` (a `recover` answer).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub same_as_expect: bool,
}

/// One official answer shared by a list of versions (version-dependent cases).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionAnswer {
    /// The versions that read [`VersionAnswer::entries`].
    pub versions: Vec<String>,
    /// What they read with the default strategy.
    pub entries: Vec<Entry>,
}

/// A case (`case.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// The case name (its folder's name): `<y|n|i>_<writer>_<scenario>`.
    pub name: String,
    /// What a reader must do with it.
    pub class: Class,
    /// The official version that wrote the store.
    pub writer: String,
    /// The store kind the writer used (see conformance `StoreKind`).
    pub kind: StoreKind,
    /// What it tests (one line).
    pub what: String,
    /// How to open it.
    pub open: Open,
    /// Where the data file comes from when it is a golden corpus store (`corpus/<tag>/<id>`;
    /// `store` and `store.crc` are relative symlinks to it), else null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus: Option<String>,
    /// The expected answer: what the writer's official library reads with its default
    /// strategy (`OnErrorDiscard`); empty for `n_` cases. For `i_`, the files' content.
    pub expect: Answer,
    /// Damaged stores: what the writer's official library reads with `OnErrorRecover`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recover: Option<Answer>,
    /// Version-dependent cases: every built version's default-strategy answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<VersionAnswer>,
    /// The writer's page size in bytes (its `getpagesize()`): the official answers are read
    /// on pages of this size too. Absent in `case.json`: 4096.
    #[serde(
        default = "default_page_size",
        skip_serializing_if = "is_default_page_size"
    )]
    pub page_size: u64,
}

/// The page size of a case whose `case.json` gives none.
pub const DEFAULT_PAGE_SIZE: u64 = 4096;

fn default_page_size() -> u64 {
    DEFAULT_PAGE_SIZE
}

fn is_default_page_size(n: &u64) -> bool {
    *n == DEFAULT_PAGE_SIZE
}

impl Answer {
    /// True when every entry has its payload, type and value.
    pub fn complete(&self) -> bool {
        self.entries
            .iter()
            .all(|e| e.payload_hex.is_some() && e.ty.is_some() && e.value.is_some())
    }
}

impl Case {
    /// The era of its writer.
    pub fn era(&self) -> Era {
        Era::of(&self.writer)
    }

    /// Reads `dir/case.json` and resolves its short forms (see [`Answer`]); a corpus
    /// manifest path is relative to the workspace (the folder above the suite's).
    pub fn load(dir: &Path) -> Result<Case> {
        let p = dir.join(CASE_FILE);
        let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
        let mut case: Case = serde_json::from_str(&text)
            .map_err(|e| Error::Other(format!("{}: {e}", p.display())))?;
        if let (Some(m), Some(id)) = (&case.expect.manifest, &case.expect.store) {
            let workspace = dir.join("../../..");
            case.expect.entries = manifest_entries(&workspace.join(m), id)?;
        }
        if let Some(r) = case.recover.as_mut().filter(|r| r.same_as_expect) {
            r.entries = case.expect.entries.clone();
        }
        Ok(case)
    }

    /// Writes `dir/case.json` (compact, one trailing newline), in the short forms where they
    /// apply.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let p = dir.join(CASE_FILE);
        let mut short = self.clone();
        if short.expect.manifest.is_some() {
            short.expect.entries.clear();
        }
        if let Some(r) = short.recover.as_mut() {
            if r.same_as_expect || r.entries == self.expect.entries {
                *r = Answer {
                    same_as_expect: true,
                    ..Answer::default()
                };
            }
        }
        let mut text = serde_json::to_string(&short)
            .map_err(|e| Error::Other(format!("serializing {}: {e}", self.name)))?;
        text.push('\n');
        std::fs::write(&p, text).map_err(|e| Error::io(&p, e))
    }

    /// The crypt key bytes.
    pub fn crypt_key(&self) -> Option<Vec<u8>> {
        self.open
            .crypt_key_hex
            .as_deref()
            .and_then(hex_bytes::decode)
    }
}

/// The entries of store `id` in a corpus manifest, with payloads encoded from their values.
pub fn manifest_entries(manifest: &Path, id: &str) -> Result<Vec<Entry>> {
    use crate::corpus::golden::TypedEntry;
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let m = crate::corpus::golden::Manifest::load(dir)?;
    let store = m
        .stores
        .iter()
        .find(|s| s.id == id)
        .ok_or_else(|| Error::Other(format!("{}: no store {id}", manifest.display())))?;
    let mut out = Vec::new();
    for e in &store.entries {
        let v = e.typed_value().map_err(Error::Other)?;
        let payload = v
            .payload()
            .ok_or_else(|| Error::Other(format!("{}: untyped value", e.key)))?;
        out.push(Entry {
            key_hex: hex_bytes::encode(e.key.as_bytes()),
            payload_hex: Some(hex_bytes::encode(&payload)),
            ty: Some(e.ty.clone()),
            value: Some(e.value.clone()),
            expire_at: e.expire_at,
        });
    }
    out.sort_by(|a, b| a.key_hex.cmp(&b.key_hex));
    Ok(out)
}

/// Every case folder under `root/cases`, sorted by name.
pub fn case_dirs(root: &Path) -> Result<Vec<PathBuf>> {
    let dir = root.join(CASES_DIR);
    let rd = std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
    let mut out: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join(CASE_FILE).is_file())
        .collect();
    out.sort();
    Ok(out)
}

/// Every case under `root`, with its folder.
pub fn load_all(root: &Path) -> Result<Vec<(PathBuf, Case)>> {
    case_dirs(root)?
        .into_iter()
        .map(|d| Case::load(&d).map(|c| (d, c)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serde_names() {
        assert_eq!(Era::V2.name(), "v2.0-v2.3");
        assert_eq!(Class::MustNotRead.name(), "must_not_read");
        for e in Era::ALL {
            assert_eq!(serde_json::to_value(e).unwrap(), e.name());
        }
    }

    #[test]
    fn eras_and_prefixes() {
        assert_eq!(Era::of("v1.3.14"), Era::V1);
        assert_eq!(Era::of("v2.0.0"), Era::V2);
        assert_eq!(Era::of("v2.3.0"), Era::V2);
        assert_eq!(Era::of("v2.4.0"), Era::V24);
        assert_eq!(Class::VersionDependent.prefix(), "i");
    }
}
