//! The schema of the repository's `versions.yaml`: every official MMKV tag the project knows,
//! what it brings, and where its Core sources come from.
//!
//! Shared by `mmkv-sys` (library and build script) and the upstream tracker, so it depends only
//! on `serde`, `serde_norway` and `thiserror`.

#![deny(missing_docs)]

use serde::Deserialize;
use std::path::Path;

/// Every feature name used in `versions.yaml`, with a one-line meaning (the file's header
/// documents them in more detail).
pub const KNOWN_FEATURES: &[(&str, &str)] = &[
    (
        "meta_actual_size",
        "meta file version 3+: actual size and CRC of the last confirmed write",
    ),
    (
        "has_value_flag",
        "C++ getters take a hasValue out-param (v1.2.13+)",
    ),
    (
        "key_expire",
        "per-key expiration and enableAutoKeyExpire (v1.3.0+)",
    ),
    (
        "meta_flags",
        "meta file version 4 with a flags field (v1.3.0+)",
    ),
    (
        "count_filter_expire",
        "count(filterExpire) / allKeys(filterExpire) (v1.3.1+)",
    ),
    ("clear_all_keep_space", "clearAll(keepSpace) (v1.3.2+)"),
    (
        "empty_string_expire",
        "set(\"\", key, expireDuration) is accepted (v1.3.6+)",
    ),
    (
        "typed_vectors",
        "set/getVector of std::vector<T> for primitive T (v1.3.6+)",
    ),
    (
        "string_view_keys",
        "keys are std::string_view in the C++ API (v1.3.6+)",
    ),
    (
        "random_item_size_holder",
        "the item-size holder is a random value (v1.3.9+)",
    ),
    (
        "remove_returns_bool",
        "removeValueForKey returns bool (v2.0.0+)",
    ),
    (
        "const_crypt_key",
        "mmkvWithID takes a const crypt key pointer (v1.3.14, v2.1.0+)",
    ),
    ("aes256", "AES-256 keys next to AES-128 (v2.3.0+)"),
    (
        "mmkv_config",
        "MMKVConfig all-in-one open parameters (v2.4.0+)",
    ),
    (
        "zero_header_size",
        "the data file's old-style actual size is always 0 (v2.4.0+)",
    ),
];

/// Errors reading `versions.yaml`.
#[derive(Debug, thiserror::Error)]
pub enum VersionsError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The YAML does not match the schema.
    #[error("invalid versions.yaml: {0}")]
    Yaml(#[from] serde_norway::Error),
    /// A semantic problem (bad tag name, duplicate tag, bad source).
    #[error("invalid versions.yaml: {0}")]
    Invalid(String),
}

/// The whole file.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct VersionsFile {
    /// The entries, oldest tag first.
    pub versions: Vec<VersionEntry>,
}

/// One upstream tag.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct VersionEntry {
    /// Upstream tag name, e.g. `v2.0.0`.
    pub tag: String,
    /// What the tag brings or has (see [`KNOWN_FEATURES`]).
    #[serde(default)]
    pub features: Vec<String>,
    /// Where the official Core sources come from.
    pub source: Source,
    /// Per-version build extras.
    #[serde(default)]
    pub build: Option<BuildExtras>,
    /// Free-text note (e.g. sources not byte-identical to the tag).
    #[serde(default)]
    pub note: Option<String>,
}

/// Where a tag's Core sources come from.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(try_from = "SourceRepr")]
pub enum Source {
    /// No reachable registry ships it: covered by golden corpora only (or by an override).
    None,
    /// An npm package that embeds `MMKV/Core`.
    Npm(NpmSource),
}

/// A pinned npm package embedding MMKV's Core.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct NpmSource {
    /// Package name.
    pub package: String,
    /// Exact package version.
    pub version: String,
    /// The registry's `dist.integrity` (`sha512-<base64>`) of the package tarball.
    pub integrity: String,
    /// Folder inside the tarball holding Core (e.g. `package/MMKV/Core`).
    pub path: String,
}

/// Per-version build extras.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct BuildExtras {
    /// Extra C++ compiler flags for the Core build and the shim.
    #[serde(default)]
    pub cxxflags: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SourceRepr {
    Word(String),
    Map { npm: NpmSource },
}

impl TryFrom<SourceRepr> for Source {
    type Error = String;

    fn try_from(repr: SourceRepr) -> Result<Self, String> {
        match repr {
            SourceRepr::Word(w) if w == "none" => Ok(Source::None),
            SourceRepr::Word(w) => Err(format!(
                "unknown source `{w}` (expected `none` or `npm: {{...}}`)"
            )),
            SourceRepr::Map { npm } => Ok(Source::Npm(npm)),
        }
    }
}

impl VersionsFile {
    /// The entry for `tag`, if any.
    pub fn get(&self, tag: &str) -> Option<&VersionEntry> {
        self.versions.iter().find(|v| v.tag == tag)
    }

    /// Tags whose sources are reachable (`source: npm`), in file order.
    pub fn reachable(&self) -> impl Iterator<Item = &VersionEntry> {
        self.versions.iter().filter(|v| v.is_reachable())
    }

    /// Checks what the schema alone cannot: tag names (`vMAJOR.MINOR.PATCH`, see
    /// [`tag_number`]), unique tags, and complete npm sources with a `sha512-` integrity.
    pub fn validate(&self) -> Result<(), VersionsError> {
        let mut seen = std::collections::HashSet::new();
        for entry in &self.versions {
            if tag_number(&entry.tag).is_none() {
                return Err(VersionsError::Invalid(format!(
                    "bad tag name `{}` (expected vMAJOR.MINOR.PATCH)",
                    entry.tag
                )));
            }
            if !seen.insert(entry.tag.as_str()) {
                return Err(VersionsError::Invalid(format!(
                    "duplicate tag `{}`",
                    entry.tag
                )));
            }
            if let Source::Npm(npm) = &entry.source {
                if !npm.integrity.starts_with("sha512-") {
                    return Err(VersionsError::Invalid(format!(
                        "{}: integrity must be `sha512-<base64>`",
                        entry.tag
                    )));
                }
                if npm.package.is_empty() || npm.version.is_empty() || npm.path.is_empty() {
                    return Err(VersionsError::Invalid(format!(
                        "{}: empty npm package, version or path",
                        entry.tag
                    )));
                }
            }
        }
        Ok(())
    }
}

impl VersionEntry {
    /// Whether the entry lists `feature`.
    pub fn has_feature(&self, feature: &str) -> bool {
        self.features.iter().any(|f| f == feature)
    }

    /// Whether a registry ships this tag's sources.
    pub fn is_reachable(&self) -> bool {
        matches!(self.source, Source::Npm(_))
    }

    /// Extra C++ flags (empty when none).
    pub fn cxxflags(&self) -> &[String] {
        self.build
            .as_ref()
            .map(|b| b.cxxflags.as_slice())
            .unwrap_or(&[])
    }
}

/// Parses the text of a `versions.yaml` and checks it (see [`VersionsFile::validate`]).
pub fn parse_versions(text: &str) -> Result<VersionsFile, VersionsError> {
    let file: VersionsFile = serde_norway::from_str(text)?;
    file.validate()?;
    Ok(file)
}

/// Parses the text of a `versions.yaml` as tolerantly as the upstream tracker needs: keys the
/// schema does not know (at the top level, in an entry, in `build`) are ignored, a `build` that is
/// not a mapping is dropped, and [`VersionsFile::validate`] is not run. Sources must still parse.
pub fn parse_versions_lenient(text: &str) -> Result<VersionsFile, VersionsError> {
    use serde_norway::Value;
    fn keep_known(value: &mut Value, known: &[&str]) {
        if let Value::Mapping(map) = value {
            map.retain(|k, _| k.as_str().is_some_and(|k| known.contains(&k)));
        }
    }
    let mut value: Value = serde_norway::from_str(text)?;
    keep_known(&mut value, &["versions"]);
    if let Some(Value::Sequence(entries)) = value.get_mut("versions") {
        for entry in entries {
            keep_known(entry, &["tag", "features", "source", "build", "note"]);
            if let Value::Mapping(map) = entry {
                match map.get_mut("build") {
                    Some(build @ Value::Mapping(_)) => keep_known(build, &["cxxflags"]),
                    Some(_) => {
                        map.remove("build");
                    }
                    None => {}
                }
            }
        }
    }
    Ok(serde_norway::from_value(value)?)
}

/// Reads and parses a `versions.yaml` file.
pub fn load_versions(path: &Path) -> Result<VersionsFile, VersionsError> {
    let text = std::fs::read_to_string(path).map_err(|source| VersionsError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse_versions(&text)
}

/// `vMAJOR.MINOR.PATCH` (an optional `-suffix` is ignored) as `MAJOR*10000 + MINOR*100 + PATCH`,
/// the number the shim is compiled with (`MMKV_SHIM_VERSION`).
pub fn tag_number(tag: &str) -> Option<u32> {
    let rest = tag.strip_prefix('v')?;
    let core = rest.split(['-', '+']).next()?;
    let mut parts = core.split('.');
    let mut n = 0u32;
    for scale in [10000u32, 100, 1] {
        let part: u32 = parts.next()?.parse().ok()?;
        if part >= 100 {
            return None;
        }
        n += part * scale;
    }
    if parts.next().is_some() {
        return None;
    }
    Some(n)
}

/// The name of the override variable for `tag`: `MMKV_CORE_` + the tag uppercased with every
/// character that is not a letter or digit replaced by `_` (`v2.0.0` -> `MMKV_CORE_V2_0_0`).
pub fn override_var(tag: &str) -> String {
    let mut s = String::from("MMKV_CORE_");
    s.extend(tag.chars().map(|c| {
        if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        }
    }));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_errors_are_reported() {
        let ok = "versions:\n  - tag: v1.0.0\n    source: none\n";
        assert_eq!(parse_versions(ok).unwrap().versions[0].source, Source::None);
        let npm = "versions:\n  - tag: v2.0.0\n    features: [aes256]\n    source:\n      npm: {package: p, version: 1.0.0, integrity: \"sha512-AA==\", path: package/MMKV/Core}\n    build: {cxxflags: [\"-include\", \"cstring\"]}\n";
        let f = parse_versions(npm).unwrap();
        assert!(f.versions[0].is_reachable() && f.versions[0].has_feature("aes256"));
        assert_eq!(f.versions[0].cxxflags(), ["-include", "cstring"]);
        for bad in [
            "versions:\n  - tag: v1.0.0\n    source: somewhere\n",
            "versions:\n  - tag: 1.0\n    source: none\n",
            "versions:\n  - tag: v1.0.0\n    source: none\n  - tag: v1.0.0\n    source: none\n",
            "versions:\n  - tag: v1.0.0\n    source: none\n    colour: red\n",
            "versions:\n  - tag: v2.0.0\n    source:\n      npm: {package: p, version: 1.0.0, integrity: \"md5-AA==\", path: x}\n",
        ] {
            assert!(parse_versions(bad).is_err(), "accepted:\n{bad}");
        }
    }

    #[test]
    fn lenient_parsing_ignores_what_it_does_not_know() {
        let text = "versions:\n  - tag: v2.0.0\n    colour: red\n    source:\n      npm: {package: p, version: 1.0.0, integrity: x, path: y}\n    build: {cxxflags: [a], later: 1}\n  - tag: v1.0.0\n    source: none\n    build: 3\nother: 1\n";
        assert!(parse_versions(text).is_err());
        let f = parse_versions_lenient(text).unwrap();
        assert_eq!(f.versions.len(), 2);
        assert_eq!(f.versions[0].cxxflags(), ["a"]);
        assert!(f.versions[0].is_reachable());
        assert_eq!(f.versions[1].build, None);
        assert!(parse_versions_lenient("versions:\n  - tag: v1.0.0\n    source: git\n").is_err());
        assert!(parse_versions_lenient("versions:\n  - tag: v1.0.0\n").is_err());
    }

    #[test]
    fn names_and_numbers() {
        assert_eq!(override_var("v2.0.0"), "MMKV_CORE_V2_0_0");
        assert_eq!(override_var("v2.4.3-dev"), "MMKV_CORE_V2_4_3_DEV");
        assert_eq!(tag_number("v1.3.14"), Some(10314));
        assert_eq!(tag_number("v2.4.3-dev"), Some(20403));
        assert_eq!(tag_number("v2.4"), None);
        assert_eq!(tag_number("2.4.0"), None);
        assert_eq!(tag_number("v1.2.300"), None);
    }
}
