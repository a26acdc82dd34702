//! The version model of the project: upstream release [`Tag`]s, the [`Feature`]s a tag brings
//! ([`FeatureSet`]), and the schema of the repository's `versions.yaml` (every official MMKV
//! tag the project knows, what it brings, and where its Core sources come from, pinned by the
//! git tree hash of `Core/`, see [`tree_hash`]).
//!
//! Shared by `mmkv-sys` (library and build script), `conformance` and the upstream tracker.

#![deny(missing_docs)]

pub mod command;
mod feature;
mod tag;
mod tree;

pub use feature::{Feature, FeatureSet};
pub use tag::{BadTag, Tag};
pub use tree::{is_tree_hash, tree_hash};

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The upstream repository every tag's `git` source names.
pub const UPSTREAM_GIT_URL: &str = "https://github.com/Tencent/MMKV.git";

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
    /// A semantic problem (duplicate tag, tags out of order, bad source).
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
    /// Upstream tag, e.g. `v2.0.0`.
    pub tag: Tag,
    /// What the tag brings or has.
    #[serde(default)]
    pub features: FeatureSet,
    /// Where the official Core sources come from.
    pub source: Source,
    /// Per-version build extras.
    #[serde(default)]
    pub build: Option<BuildExtras>,
    /// Free-text note (e.g. an npm alternate that is not identical to the tag).
    #[serde(default)]
    pub note: Option<String>,
}

/// Where a tag's Core sources come from: the upstream git tag (pinned by its `Core/` tree) and,
/// where a registry package embeds the same version, an npm alternate. `source: none` in the
/// file is a source with neither.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Source {
    /// The upstream git tag.
    pub git: Option<GitSource>,
    /// An npm package embedding `MMKV/Core`.
    pub npm: Option<NpmSource>,
}

/// An upstream git tag, pinned by the hash of its `Core/` tree.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct GitSource {
    /// Repository URL (`MMKV_GIT_URL` replaces it at build time, e.g. with a mirror or bundle).
    pub url: String,
    /// The tag to fetch (`refs/tags/<tag>`).
    pub tag: Tag,
    /// `git rev-parse <tag>:Core` (40 hex digits): what the fetched tag must hold.
    pub core_tree: String,
}

/// A pinned npm package embedding MMKV's Core.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
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
    /// The git tree hash ([`tree_hash`]) of the Core the package ships: equal to the git
    /// source's `core_tree` when the package is identical to the tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_tree: Option<String>,
}

/// Per-version build extras.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct BuildExtras {
    /// Extra C++ compiler flags for the Core build and the shim.
    #[serde(default)]
    pub cxxflags: Vec<String>,
    /// Core sources compiled as their own translation unit instead of inside the unity build
    /// (a file whose file-scope names collide with another source's).
    #[serde(default)]
    pub unity_exclude: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SourceRepr {
    Word(String),
    Map(SourceMap),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceMap {
    #[serde(default)]
    git: Option<GitSource>,
    #[serde(default)]
    npm: Option<NpmSource>,
}

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Source, D::Error> {
        match SourceRepr::deserialize(d)? {
            SourceRepr::Word(w) if w == "none" => Ok(Source::default()),
            SourceRepr::Word(w) => Err(serde::de::Error::custom(format!(
                "unknown source `{w}` (expected `none` or `{{git: {{...}}, npm: {{...}}}}`)"
            ))),
            SourceRepr::Map(SourceMap {
                git: None,
                npm: None,
            }) => Err(serde::de::Error::custom(
                "a source map needs `git` or `npm` (or write `source: none`)",
            )),
            SourceRepr::Map(SourceMap { git, npm }) => Ok(Source { git, npm }),
        }
    }
}

impl Source {
    /// Neither git nor npm.
    pub fn is_none(&self) -> bool {
        self.git.is_none() && self.npm.is_none()
    }

    /// True when the npm alternate is pinned to the same `Core/` tree as the git tag.
    pub fn npm_is_identical(&self) -> bool {
        match (&self.git, &self.npm) {
            (Some(g), Some(n)) => n.core_tree.as_deref() == Some(g.core_tree.as_str()),
            _ => false,
        }
    }
}

impl VersionsFile {
    /// The entry for `tag`, if any (a name that is not a tag has none).
    pub fn get(&self, tag: &str) -> Option<&VersionEntry> {
        let tag = Tag::parse(tag)?;
        self.entry(tag)
    }

    /// The entry for `tag`, if any.
    pub fn entry(&self, tag: Tag) -> Option<&VersionEntry> {
        self.versions.iter().find(|v| v.tag == tag)
    }

    /// The features of `tag`: its entry's, else (a tag the file does not list, e.g. an
    /// unreleased build) those of the newest listed tag before it; empty before the first.
    pub fn features_of(&self, tag: Tag) -> FeatureSet {
        self.versions
            .iter()
            .filter(|v| v.tag <= tag)
            .max_by_key(|v| v.tag)
            .map(|v| v.features)
            .unwrap_or_default()
    }

    /// Checks what the schema alone cannot: unique tags in increasing order, git sources
    /// naming their own tag with a well-formed tree hash, complete npm sources with a
    /// `sha512-` integrity.
    pub fn validate(&self) -> Result<(), VersionsError> {
        let bad = |m: String| Err(VersionsError::Invalid(m));
        for pair in self.versions.windows(2) {
            if pair[0].tag >= pair[1].tag {
                return bad(format!(
                    "`{}` after `{}`: tags must be listed once, oldest first",
                    pair[1].tag, pair[0].tag
                ));
            }
        }
        for entry in &self.versions {
            let tag = entry.tag;
            if let Some(git) = &entry.source.git {
                if git.tag != tag {
                    return bad(format!("{tag}: git source names tag {}", git.tag));
                }
                if !is_tree_hash(&git.core_tree) {
                    return bad(format!(
                        "{tag}: core_tree `{}` is not 40 lowercase hex digits",
                        git.core_tree
                    ));
                }
                if git.url.trim().is_empty() {
                    return bad(format!("{tag}: empty git url"));
                }
            }
            if let Some(npm) = &entry.source.npm {
                if !npm.integrity.starts_with("sha512-") {
                    return bad(format!("{tag}: integrity must be `sha512-<base64>`"));
                }
                if npm.package.is_empty() || npm.version.is_empty() || npm.path.is_empty() {
                    return bad(format!("{tag}: empty npm package, version or path"));
                }
                if npm.core_tree.as_deref().is_some_and(|t| !is_tree_hash(t)) {
                    return bad(format!(
                        "{tag}: npm core_tree is not 40 lowercase hex digits"
                    ));
                }
            }
        }
        Ok(())
    }
}

impl VersionEntry {
    /// Whether the entry lists `feature`.
    pub fn has(&self, feature: Feature) -> bool {
        self.features.has(feature)
    }

    /// Whether the entry names any source (git or npm).
    pub fn is_reachable(&self) -> bool {
        !self.source.is_none()
    }

    /// Extra C++ flags (empty when none).
    pub fn cxxflags(&self) -> &[String] {
        self.build
            .as_ref()
            .map(|b| b.cxxflags.as_slice())
            .unwrap_or(&[])
    }

    /// Core sources kept out of the unity build (empty when none).
    pub fn unity_exclude(&self) -> &[String] {
        self.build
            .as_ref()
            .map(|b| b.unity_exclude.as_slice())
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
/// schema does not know (at the top level, in an entry, in `build`, in a source) and feature
/// names it does not know are ignored, a `build` that is not a mapping is dropped, and
/// [`VersionsFile::validate`] is not run. Tags and sources must still parse.
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
            let Value::Mapping(map) = entry else { continue };
            match map.get_mut("build") {
                Some(build @ Value::Mapping(_)) => {
                    keep_known(build, &["cxxflags", "unity_exclude"])
                }
                Some(_) => {
                    map.remove("build");
                }
                None => {}
            }
            if let Some(Value::Sequence(features)) = map.get_mut("features") {
                features.retain(|f| f.as_str().is_some_and(|f| Feature::from_name(f).is_some()));
            }
            if let Some(source @ Value::Mapping(_)) = map.get_mut("source") {
                keep_known(source, &["git", "npm"]);
                if let Some(git) = source.get_mut("git") {
                    keep_known(git, &["url", "tag", "core_tree"]);
                }
                if let Some(npm) = source.get_mut("npm") {
                    keep_known(
                        npm,
                        &["package", "version", "integrity", "path", "core_tree"],
                    );
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
/// the number the shim is compiled with (`MMKV_SHIM_VERSION`); see [`Tag::number`].
pub fn tag_number(tag: &str) -> Option<u32> {
    Tag::release_of(tag).map(Tag::number)
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

    const TREE: &str = "51eb80b4d8e1f08e4b081065a8f3456c69060158";

    fn git(tag: &str) -> String {
        format!("git: {{url: \"{UPSTREAM_GIT_URL}\", tag: {tag}, core_tree: {TREE}}}")
    }

    #[test]
    fn schema_errors_are_reported() {
        let ok = "versions:\n  - tag: v1.0.0\n    source: none\n";
        assert!(parse_versions(ok).unwrap().versions[0].source.is_none());
        let both = format!("versions:\n  - tag: v2.0.0\n    features: [aes256]\n    source:\n      {}\n      npm: {{package: p, version: 1.0.0, integrity: \"sha512-AA==\", path: package/MMKV/Core, core_tree: {TREE}}}\n    build: {{cxxflags: [\"-include\", \"cstring\"]}}\n", git("v2.0.0"));
        let f = parse_versions(&both).unwrap();
        let e = &f.versions[0];
        assert!(e.is_reachable() && e.has(Feature::Aes256) && !e.has(Feature::KeyExpire));
        assert_eq!(e.cxxflags(), ["-include", "cstring"]);
        assert_eq!(e.source.git.as_ref().unwrap().core_tree, TREE);
        assert!(e.source.npm_is_identical());
        for bad in [
            "versions:\n  - tag: v1.0.0\n    source: somewhere\n".to_string(),
            "versions:\n  - tag: 1.0\n    source: none\n".into(),
            "versions:\n  - tag: v1.0.0\n    source: none\n  - tag: v1.0.0\n    source: none\n".into(),
            "versions:\n  - tag: v1.0.1\n    source: none\n  - tag: v1.0.0\n    source: none\n".into(),
            "versions:\n  - tag: v1.0.0\n    source: none\n    colour: red\n".into(),
            "versions:\n  - tag: v1.0.0\n    features: [colour]\n    source: none\n".into(),
            "versions:\n  - tag: v1.0.0\n    source: {}\n".into(),
            "versions:\n  - tag: v2.0.0\n    source:\n      npm: {package: p, version: 1.0.0, integrity: \"md5-AA==\", path: x}\n".into(),
            format!("versions:\n  - tag: v2.0.1\n    source:\n      {}\n", git("v2.0.0")),
            format!("versions:\n  - tag: v2.0.0\n    source:\n      {}\n", git("v2.0.0").replace(TREE, "abc")),
        ] {
            assert!(parse_versions(&bad).is_err(), "accepted:\n{bad}");
        }
    }

    #[test]
    fn lenient_parsing_ignores_what_it_does_not_know() {
        let text = format!("versions:\n  - tag: v2.0.0\n    colour: red\n    features: [aes256, later_feature]\n    source:\n      {}\n      svn: x\n    build: {{cxxflags: [a], later: 1}}\n  - tag: v1.0.0\n    source: none\n    build: 3\nother: 1\n", git("v2.0.0"));
        assert!(parse_versions(&text).is_err());
        let f = parse_versions_lenient(&text).unwrap();
        assert_eq!(f.versions.len(), 2);
        assert_eq!(f.versions[0].cxxflags(), ["a"]);
        assert_eq!(f.versions[0].features, FeatureSet::of(&[Feature::Aes256]));
        assert!(f.versions[0].is_reachable());
        assert_eq!(f.versions[1].build, None);
        assert!(parse_versions_lenient("versions:\n  - tag: v1.0.0\n    source: git\n").is_err());
        assert!(parse_versions_lenient("versions:\n  - tag: v1.0.0\n").is_err());
    }

    #[test]
    fn features_of_unlisted_tags_come_from_the_previous_entry() {
        let f = parse_versions(
            "versions:\n  - tag: v1.3.0\n    features: [key_expire]\n    source: none\n  - tag: v2.3.0\n    features: [key_expire, aes256]\n    source: none\n",
        )
        .unwrap();
        let t = |s: &str| Tag::parse(s).unwrap();
        assert_eq!(f.features_of(t("v1.2.0")), FeatureSet::EMPTY);
        assert_eq!(
            f.features_of(t("v1.3.5")),
            FeatureSet::of(&[Feature::KeyExpire])
        );
        assert!(f.features_of(t("v2.4.3")).has(Feature::Aes256));
        assert!(f.get("v2.3.0").is_some() && f.get("v2.3.1").is_none() && f.get("x").is_none());
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
