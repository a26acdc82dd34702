//! What an official version brings to the on-disk format or the C++ API: the [`Feature`]
//! vocabulary of `versions.yaml` and the [`FeatureSet`] of one tag.

use std::fmt;

macro_rules! features {
    ($( $(#[$doc:meta])* $variant:ident = $bit:literal, $name:literal, api: $api:literal, $meaning:literal; )*) => {
        /// One feature name of `versions.yaml` (serialized as its snake_case name).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u8)]
        pub enum Feature {
            $( $(#[$doc])* $variant = $bit, )*
        }

        impl Feature {
            /// Every feature, in bit order (the order `versions.yaml` lists them in).
            pub const ALL: &'static [Feature] = &[$(Feature::$variant),*];

            /// The name used in `versions.yaml`.
            pub const fn name(self) -> &'static str {
                match self { $(Feature::$variant => $name,)* }
            }

            /// One-line meaning (the file's header documents them in more detail).
            pub const fn meaning(self) -> &'static str {
                match self { $(Feature::$variant => $meaning,)* }
            }

            /// True when the feature is a C++ API difference that a shim compiled against
            /// the version's headers detects (the others are format or behaviour facts).
            pub const fn is_api(self) -> bool {
                match self { $(Feature::$variant => $api,)* }
            }
        }
    };
}

features! {
    /// Meta file version 3+: actual size and CRC of the last confirmed write in `<id>.crc`.
    MetaActualSize = 0, "meta_actual_size", api: false, "meta file version 3+: actual size and CRC of the last confirmed write";
    /// C++ getters take a `hasValue` out-param (v1.2.13+).
    HasValueFlag = 1, "has_value_flag", api: true, "C++ getters take a hasValue out-param (v1.2.13+)";
    /// Per-key expiration, `enableAutoKeyExpire()`, u32 expire suffix on values (v1.3.0+).
    KeyExpire = 2, "key_expire", api: true, "per-key expiration and enableAutoKeyExpire (v1.3.0+)";
    /// Meta file version 4: u64 flags at offset 104, bit 0 = key expiration on (v1.3.0+).
    MetaFlags = 3, "meta_flags", api: false, "meta file version 4 with a flags field (v1.3.0+)";
    /// `count(filterExpire)` / `allKeys(filterExpire)` (v1.3.1+).
    CountFilterExpire = 4, "count_filter_expire", api: true, "count(filterExpire) / allKeys(filterExpire) (v1.3.1+)";
    /// `clearAll(keepSpace)` (v1.3.2+).
    ClearAllKeepSpace = 5, "clear_all_keep_space", api: true, "clearAll(keepSpace) (v1.3.2+)";
    /// `set("", key, expireDuration)` is accepted (v1.3.6+; v1.3.0–v1.3.5 refuse it).
    EmptyStringExpire = 6, "empty_string_expire", api: false, "set(\"\", key, expireDuration) is accepted (v1.3.6+)";
    /// `set/getVector` of `std::vector<bool|int32|…|double>` (C++20, v1.3.6+).
    TypedVectors = 7, "typed_vectors", api: true, "set/getVector of std::vector<T> for primitive T (v1.3.6+)";
    /// Keys are `std::string_view` in the C++ API (v1.3.6+).
    StringViewKeys = 8, "string_view_keys", api: true, "keys are std::string_view in the C++ API (v1.3.6+)";
    /// The 4-byte item-size holder at the start of the data region is random (v1.3.9+).
    RandomItemSizeHolder = 9, "random_item_size_holder", api: false, "the item-size holder is a random value (v1.3.9+)";
    /// `removeValueForKey()` returns bool (v2.0.0+).
    RemoveReturnsBool = 10, "remove_returns_bool", api: true, "removeValueForKey returns bool (v2.0.0+)";
    /// The POSIX `mmkvWithID()` takes `const std::string *cryptKey` (v2.1.0+).
    ConstCryptKey = 11, "const_crypt_key", api: true, "mmkvWithID takes a const crypt key pointer (v2.1.0+)";
    /// AES-256 keys (32 bytes) next to AES-128 (v2.3.0+).
    Aes256 = 12, "aes256", api: true, "AES-256 keys next to AES-128 (v2.3.0+)";
    /// `MMKVConfig` all-in-one open parameters (v2.4.0+).
    MmkvConfig = 13, "mmkv_config", api: true, "MMKVConfig all-in-one open parameters (v2.4.0+)";
    /// The data file's first 4 bytes (old-style actual size) are always 0 (v2.4.0+).
    ZeroHeaderSize = 14, "zero_header_size", api: false, "the data file's old-style actual size is always 0 (v2.4.0+)";
    /// The data region starts with a 4-byte item-size holder (varint `0x00ffffff`, random from
    /// v1.3.9) (v1.2.0+); v1.1.x start it with the varint of the dictionary's encoded size.
    ItemSizeHolder = 15, "item_size_holder", api: false, "the data region starts with a 4-byte item-size holder (v1.2.0+)";
    /// `now + expireDuration` is computed in 64 bits and saturates at `u32::MAX`
    /// (`safeExpirationPlusCurrentTime`, v2.4.1+, back-ported to v1.3.17); before, the u32 sum
    /// wraps, so a duration near `u32::MAX` gives an expire time in the past.
    SaturatingExpire = 16, "saturating_expire", api: false, "expire durations that overflow u32 saturate instead of wrapping to the past (v2.4.1+, v1.3.17)";
    /// `enableCompareBeforeSet()` / `disableCompareBeforeSet()` (v1.3.2+; refused while key
    /// expiration or encryption is on).
    CompareBeforeSet = 17, "compare_before_set", api: true, "enableCompareBeforeSet / disableCompareBeforeSet (v1.3.2+)";
    /// The static `backupOneToDirectory` / `restoreOneFromDirectory` (v1.2.11+).
    BackupRestore = 18, "backup_restore", api: true, "backupOneToDirectory / restoreOneFromDirectory (v1.2.11+)";
    /// The static `removeStorage(mmapID, rootDir)` (v1.3.3+).
    RemoveStorage = 19, "remove_storage", api: true, "removeStorage(mmapID, rootDir) (v1.3.3+)";
    /// `importFrom(MMKV *src)`: copies another store's keys in (v2.2.1+).
    ImportFrom = 20, "import_from", api: true, "importFrom(MMKV *src) (v2.2.1+)";
    /// The `MMKV_READ_ONLY` mode (v2.0.0+): the files are mapped read-only and every write is
    /// refused.
    ReadOnly = 21, "read_only", api: true, "the MMKV_READ_ONLY mode (v2.0.0+)";
    /// `MMKV::nameSpace(rootDir)` and `NameSpace::mmkvWithID` (v2.1.0+).
    NameSpace = 22, "name_space", api: true, "MMKV::nameSpace(rootDir) / NameSpace::mmkvWithID (v2.1.0+)";
}

impl Feature {
    /// The bit of this feature in [`FeatureSet::bits`] (and in the shim's capability word).
    pub const fn bit(self) -> u32 {
        self as u32
    }

    /// The feature named `name` in `versions.yaml`.
    pub fn from_name(name: &str) -> Option<Feature> {
        Feature::ALL.iter().copied().find(|f| f.name() == name)
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Feature {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Feature {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Feature, D::Error> {
        let s = String::deserialize(d)?;
        Feature::from_name(&s).ok_or_else(|| {
            let known: Vec<&str> = Feature::ALL.iter().map(|f| f.name()).collect();
            serde::de::Error::custom(format!(
                "unknown feature `{s}` (known: {})",
                known.join(", ")
            ))
        })
    }
}

/// The features of one tag: a small bit set, serialized as the list of names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FeatureSet(u32);

impl FeatureSet {
    /// No feature.
    pub const EMPTY: FeatureSet = FeatureSet(0);

    /// The set of these features.
    pub fn of(features: &[Feature]) -> FeatureSet {
        features.iter().copied().collect()
    }

    /// The set whose bits are `bits` (bits of no known feature are dropped).
    pub const fn from_bits(bits: u64) -> FeatureSet {
        let mut known = 0u64;
        let mut i = 0;
        while i < Feature::ALL.len() {
            known |= 1 << Feature::ALL[i].bit();
            i += 1;
        }
        FeatureSet((bits & known) as u32)
    }

    /// The bits ([`Feature::bit`]).
    pub const fn bits(self) -> u64 {
        self.0 as u64
    }

    /// Whether `feature` is in the set.
    pub const fn has(self, feature: Feature) -> bool {
        self.0 & (1 << feature as u32) != 0
    }

    /// Adds `feature`.
    pub fn insert(&mut self, feature: Feature) {
        self.0 |= 1 << feature.bit();
    }

    /// True when no feature is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The features a shim detects from the C++ API ([`Feature::is_api`]).
    pub fn api(self) -> FeatureSet {
        self.iter().filter(|f| f.is_api()).collect()
    }

    /// The features, in bit order.
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL.iter().copied().filter(move |f| self.has(*f))
    }
}

impl FromIterator<Feature> for FeatureSet {
    fn from_iter<I: IntoIterator<Item = Feature>>(iter: I) -> FeatureSet {
        let mut s = FeatureSet::EMPTY;
        for f in iter {
            s.insert(f);
        }
        s
    }
}

impl fmt::Display for FeatureSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Feature::name).collect();
        write!(f, "[{}]", names.join(", "))
    }
}

impl serde::Serialize for FeatureSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> serde::Deserialize<'de> for FeatureSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<FeatureSet, D::Error> {
        let list = Vec::<Feature>::deserialize(d)?;
        Ok(list.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_bits_and_serde() {
        for (i, f) in Feature::ALL.iter().enumerate() {
            assert_eq!(f.bit() as usize, i, "{f} bits are dense and in order");
            assert_eq!(Feature::from_name(f.name()), Some(*f));
        }
        let s: FeatureSet = serde_norway::from_str("[aes256, key_expire]").unwrap();
        assert!(s.has(Feature::Aes256) && s.has(Feature::KeyExpire) && !s.has(Feature::MmkvConfig));
        assert_eq!(
            serde_norway::to_string(&s).unwrap().trim(),
            "- key_expire\n- aes256"
        );
        assert_eq!(FeatureSet::from_bits(s.bits()), s);
        assert_eq!(FeatureSet::from_bits(1 << 40), FeatureSet::EMPTY);
        assert!(serde_norway::from_str::<FeatureSet>("[colour]").is_err());
        let api = FeatureSet::of(&[Feature::MetaFlags, Feature::Aes256]).api();
        assert_eq!(api, FeatureSet::of(&[Feature::Aes256]));
        assert_eq!(s.to_string(), "[key_expire, aes256]");
    }
}
