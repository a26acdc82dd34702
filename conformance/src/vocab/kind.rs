//! Store configurations (columns of the report) and the version features that gate them.

use std::fmt;
use std::str::FromStr;

use mmkv_sys::versions::{Feature, FeatureSet, Tag};
use serde::{Deserialize, Serialize};

/// Features of one official version, as listed in `versions.yaml` (or derived from a tag).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Features {
    /// `enableAutoKeyExpire` and per-key expire durations (v1.3.0+).
    pub key_expire: bool,
    /// `set("", key, expire)` is accepted (v1.3.6+); earlier expiring versions refuse it.
    pub empty_string_expire: bool,
    /// Typed vector setters/getters (v1.3.6+, C++20 builds).
    pub typed_vectors: bool,
    /// AES-256 (v2.3.0+).
    pub aes256: bool,
    /// Getters report a has-value flag (v1.2.13+); before, presence is `containsKey`.
    pub has_value_flag: bool,
    /// `count(filterExpire)` / `allKeys(filterExpire)` (v1.3.1+).
    pub count_filter_expire: bool,
    /// `bool getBytes(key, MMBuffer&)` reports presence; without it an empty result is
    /// ambiguous (detected from the compiled API; assumed with `has_value_flag` otherwise).
    pub bytes_flag: bool,
    /// `now + expireDuration` saturates at `u32::MAX` (v2.4.1+, v1.3.17); the other expiring
    /// versions add in `u32`, so a duration near `u32::MAX` wraps to an expire time in the past.
    #[serde(default)]
    pub saturating_expire: bool,
    /// `enableCompareBeforeSet` / `disableCompareBeforeSet` (v1.3.2+).
    #[serde(default)]
    pub compare_before_set: bool,
    /// `backupOneToDirectory` / `restoreOneFromDirectory` (v1.2.11+).
    #[serde(default)]
    pub backup_restore: bool,
    /// `removeStorage` (v1.3.3+).
    #[serde(default)]
    pub remove_storage: bool,
    /// `importFrom` (v2.2.1+).
    #[serde(default)]
    pub import_from: bool,
    /// The `MMKV_READ_ONLY` mode (v2.0.0+): a read-only instance is one more official side.
    #[serde(default)]
    pub read_only: bool,
    /// `MMKV::nameSpace(rootDir)` (v2.1.0+): stores opened through a name space.
    #[serde(default)]
    pub name_space: bool,
}

impl Features {
    /// The conformance view of a version's [`FeatureSet`] (mmkv-versions, from versions.yaml).
    pub fn from_set(set: FeatureSet) -> Features {
        let has_value_flag = set.has(Feature::HasValueFlag);
        Features {
            key_expire: set.has(Feature::KeyExpire),
            empty_string_expire: set.has(Feature::EmptyStringExpire),
            typed_vectors: set.has(Feature::TypedVectors),
            aes256: set.has(Feature::Aes256),
            has_value_flag,
            count_filter_expire: set.has(Feature::CountFilterExpire),
            bytes_flag: has_value_flag,
            saturating_expire: set.has(Feature::SaturatingExpire),
            compare_before_set: set.has(Feature::CompareBeforeSet),
            backup_restore: set.has(Feature::BackupRestore),
            remove_storage: set.has(Feature::RemoveStorage),
            import_from: set.has(Feature::ImportFrom),
            read_only: set.has(Feature::ReadOnly),
            name_space: set.has(Feature::NameSpace),
        }
    }

    /// Builds the feature set from `versions.yaml` feature names; unknown names are ignored.
    pub fn from_names<I, S>(names: I) -> Features
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Features::from_set(
            names
                .into_iter()
                .filter_map(|n| Feature::from_name(n.as_ref()))
                .collect(),
        )
    }

    /// The features of an upstream tag (`v1.3.6`, or an unreleased `v2.4.3-dev`) as
    /// versions.yaml lists them (a tag it does not list: the newest listed tag before it).
    /// `None` for a name that is not a tag.
    pub fn from_tag(tag: &str) -> Option<Features> {
        let tag = Tag::release_of(tag)?;
        Some(Features::from_set(
            mmkv_sys::versions::embedded().features_of(tag),
        ))
    }

    /// The getter types this version has.
    pub fn getters(&self) -> Vec<crate::vocab::value::ValueType> {
        crate::vocab::value::ValueType::ALL
            .iter()
            .copied()
            .filter(|t| self.typed_vectors || !t.is_typed_vector())
            .collect()
    }
}

/// Process mode of an official instance (the manifest's `mode`).
pub use mmkv_corpus::Mode as ModeKind;

/// A store configuration. Ids match the corpus store ids (`corpus/README.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StoreKind {
    /// single-process, no encryption
    Plain,
    /// MULTI_PROCESS mode
    Multi,
    /// AES-CFB-128 with a 16-byte key
    Aes128,
    /// AES-128 with a 5-byte key (zero-padded by the library)
    Aes128ShortKey,
    /// AES-128 with a 31-byte key (truncated by the library)
    Aes128LongKey,
    /// AES-256 with a 32-byte key (v2.3.0+)
    Aes256,
    /// AES-256 with a 20-byte key (v2.3.0+)
    Aes256ShortKey,
    /// key expiration enabled (v1.3.0+)
    Expire,
    /// key expiration + AES-128 (v1.3.0+)
    ExpireAes128,
    /// key expiration + AES-256 (v2.3.0+)
    ExpireAes256,
}

/// The AES keys the corpus uses (so recorded stores and live runs share configurations).
pub mod keys {
    /// 16-byte AES-128 key.
    pub const AES128: &[u8] = b"mmkv-conformance";
    /// 5-byte key, zero-padded by the library.
    pub const AES128_SHORT: &[u8] = b"short";
    /// 31-byte key, truncated to 16 by the library.
    pub const AES128_LONG: &[u8] = b"a-key-longer-than-sixteen-bytes";
    /// 32-byte AES-256 key.
    pub const AES256: &[u8] = b"0123456789abcdef0123456789ABCDEF";
    /// 20-byte AES-256 key, zero-padded to 32.
    pub const AES256_SHORT: &[u8] = b"twenty-byte-aes-key!";
}

impl StoreKind {
    /// Every kind, in report column order.
    pub const ALL: [StoreKind; 10] = [
        StoreKind::Plain,
        StoreKind::Multi,
        StoreKind::Aes128,
        StoreKind::Aes128ShortKey,
        StoreKind::Aes128LongKey,
        StoreKind::Aes256,
        StoreKind::Aes256ShortKey,
        StoreKind::Expire,
        StoreKind::ExpireAes128,
        StoreKind::ExpireAes256,
    ];

    /// The id (corpus store id, report column, file name).
    pub fn id(self) -> &'static str {
        match self {
            StoreKind::Plain => "plain",
            StoreKind::Multi => "multi",
            StoreKind::Aes128 => "aes128",
            StoreKind::Aes128ShortKey => "aes128-short-key",
            StoreKind::Aes128LongKey => "aes128-long-key",
            StoreKind::Aes256 => "aes256",
            StoreKind::Aes256ShortKey => "aes256-short-key",
            StoreKind::Expire => "expire",
            StoreKind::ExpireAes128 => "expire-aes128",
            StoreKind::ExpireAes256 => "expire-aes256",
        }
    }

    /// Process mode.
    pub fn mode(self) -> ModeKind {
        match self {
            StoreKind::Multi => ModeKind::Multi,
            _ => ModeKind::Single,
        }
    }

    /// The crypt key given to the library, if encrypted.
    pub fn crypt_key(self) -> Option<&'static [u8]> {
        match self {
            StoreKind::Plain | StoreKind::Multi | StoreKind::Expire => None,
            StoreKind::Aes128 | StoreKind::ExpireAes128 => Some(keys::AES128),
            StoreKind::Aes128ShortKey => Some(keys::AES128_SHORT),
            StoreKind::Aes128LongKey => Some(keys::AES128_LONG),
            StoreKind::Aes256 | StoreKind::ExpireAes256 => Some(keys::AES256),
            StoreKind::Aes256ShortKey => Some(keys::AES256_SHORT),
        }
    }

    /// True when the key is used as an AES-256 key.
    pub fn aes256(self) -> bool {
        matches!(
            self,
            StoreKind::Aes256 | StoreKind::Aes256ShortKey | StoreKind::ExpireAes256
        )
    }

    /// True when `enableAutoKeyExpire` is called on the store.
    pub fn key_expire(self) -> bool {
        matches!(
            self,
            StoreKind::Expire | StoreKind::ExpireAes128 | StoreKind::ExpireAes256
        )
    }

    /// Whether a version with `features` can produce this kind.
    pub fn supported_by(self, features: &Features) -> bool {
        (!self.aes256() || features.aes256) && (!self.key_expire() || features.key_expire)
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for StoreKind {
    type Err = String;

    fn from_str(s: &str) -> Result<StoreKind, String> {
        StoreKind::ALL
            .iter()
            .copied()
            .find(|k| k.id() == s)
            .ok_or_else(|| format!("unknown store kind {s:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_gate() {
        for k in StoreKind::ALL {
            assert_eq!(k.id().parse::<StoreKind>(), Ok(k));
            assert_eq!(serde_json::to_value(k).unwrap(), k.id(), "serde name = id");
        }
        let old = Features::from_tag("v1.2.16").unwrap();
        assert!(StoreKind::Plain.supported_by(&old));
        assert!(!StoreKind::Expire.supported_by(&old));
        let v13 = Features::from_tag("v1.3.0").unwrap();
        assert!(StoreKind::ExpireAes128.supported_by(&v13));
        assert!(!StoreKind::ExpireAes256.supported_by(&v13));
        assert!(!v13.empty_string_expire);
        assert!(!v13.saturating_expire);
        assert!(Features::from_tag("v2.4.2").unwrap().saturating_expire);
        assert!(Features::from_tag("v2.3.0").unwrap().aes256);
        assert_eq!(Features::from_tag("v1.2"), None);
        assert_eq!(
            Features::from_names(["aes256", "x"]),
            Features {
                aes256: true,
                ..Features::default()
            }
        );
    }
}
