//! The typed view of `versions.yaml`: which upstream tags the project knows and where
//! their Core sources come from. The schema is the shared `mmkv-versions` crate; this module
//! adds the tracker's strict tag checks and its summary ([`Known`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::tags::{NpmVersion, Tag};

pub use mmkv_versions::{
    BuildExtras, Feature, FeatureSet, GitSource, NpmSource, Source, VersionEntry, VersionsFile,
};

/// The tracker's reading of a [`VersionsFile`]: the shared schema, parsed tolerantly
/// ([`mmkv_versions::parse_versions_lenient`]), plus the tracker's strict tags (`vX.Y.Z`, no
/// suffix, listed once), with errors naming the file.
pub trait VersionsFileExt: Sized {
    /// Parses and validates the text of a versions file (`origin` names it in errors).
    fn parse(text: &str, origin: &Path) -> Result<Self>;

    /// Reads and parses a versions file.
    fn load(path: &Path) -> Result<Self>;

    /// The entry of a tag, if listed.
    fn entry(&self, tag: Tag) -> Option<&VersionEntry>;

    /// Summarises what the tracker needs to know.
    fn known(&self) -> Known;
}

impl VersionsFileExt for VersionsFile {
    fn parse(text: &str, origin: &Path) -> Result<VersionsFile> {
        let bad = |message: String| Error::Versions {
            path: origin.to_path_buf(),
            message,
        };
        let file = mmkv_versions::parse_versions_lenient(text).map_err(|e| bad(e.to_string()))?;
        let mut seen = BTreeSet::new();
        for entry in &file.versions {
            let tag = entry.tag;
            if !seen.insert(tag) {
                return Err(bad(format!("tag {tag} is listed twice")));
            }
        }
        Ok(file)
    }

    fn load(path: &Path) -> Result<VersionsFile> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        VersionsFile::parse(&text, path)
    }

    fn entry(&self, tag: Tag) -> Option<&VersionEntry> {
        self.versions.iter().find(|e| e.tag == tag)
    }

    fn known(&self) -> Known {
        let mut known = Known::default();
        for entry in &self.versions {
            let tag = entry.tag;
            known.tags.insert(tag);
            if entry.source.is_none() {
                known.without_source.insert(tag);
            }
            if let Some(npm) = &entry.source.npm {
                if let Some(v) = NpmVersion::parse(&npm.version) {
                    let slot = known.pinned.entry(npm.package.clone()).or_insert(v.clone());
                    if v > *slot {
                        *slot = v;
                    }
                }
            }
        }
        known
    }
}

/// What versions.yaml knows, in the shape the tracker compares with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Known {
    /// Every listed tag.
    pub tags: BTreeSet<Tag>,
    /// Listed tags with neither a git nor an npm source (`source: none`).
    pub without_source: BTreeSet<Tag>,
    /// For each npm package used as a source, the newest version pinned.
    pub pinned: BTreeMap<String, NpmVersion>,
}

impl Known {
    /// The oldest listed tag.
    pub fn oldest(&self) -> Option<Tag> {
        self.tags.first().copied()
    }

    /// The newest listed tag.
    pub fn newest(&self) -> Option<Tag> {
        self.tags.last().copied()
    }
}

/// Finds `versions.yaml` in `start` or the nearest ancestor that has one.
pub fn find_versions_file(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join("versions.yaml"))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
# comment
versions:
  - tag: v2.0.0
    features: [key_expire, typed_vectors]
    source:
      git: {url: "https://github.com/Tencent/MMKV.git", tag: v2.0.0, core_tree: 0123456789abcdef0123456789abcdef01234567}
      npm: {package: react-native-mmkv, version: 3.1.0, integrity: "sha512-AAAA", path: package/MMKV/Core}
    build: {cxxflags: ["-include", "cstring"]}
    note: "first v2"
  - tag: v2.1.0
    features: []
    source: none
  - tag: "v1.3.14"
    source:
      npm: {package: react-native-mmkv-storage, version: 12.0.1, integrity: "sha512-BBBB", path: package/MMKV/Core}
  - tag: v1.3.9
    source:
      npm: {package: react-native-mmkv, version: 2.12.2, integrity: "sha512-CCCC", path: package/MMKV/Core}
"#;

    #[test]
    fn parses_schema() {
        let f = VersionsFile::parse(SAMPLE, Path::new("x")).unwrap();
        assert_eq!(f.versions.len(), 4);
        assert_eq!(
            f.versions[0].features,
            FeatureSet::of(&[Feature::KeyExpire, Feature::TypedVectors])
        );
        assert!(f.versions[0].build.is_some());
        assert!(f.versions[1].source.is_none());
        let npm = f.versions[0].source.npm.as_ref().expect("npm source");
        assert_eq!(npm.path, "package/MMKV/Core");
        assert_eq!(
            f.versions[0].source.git.as_ref().map(|g| g.tag),
            Tag::parse("v2.0.0")
        );
        let known = f.known();
        assert_eq!(known.oldest(), Tag::parse("v1.3.9"));
        assert_eq!(known.newest(), Tag::parse("v2.1.0"));
        assert_eq!(
            known.pinned.get("react-native-mmkv"),
            NpmVersion::parse("3.1.0").as_ref()
        );
        assert_eq!(
            known.pinned.get("react-native-mmkv-storage"),
            NpmVersion::parse("12.0.1").as_ref()
        );
        assert!(known
            .without_source
            .contains(&Tag::parse("v2.1.0").unwrap()));
        assert!(f.entry(Tag::parse("v1.3.14").unwrap()).is_some());
        assert!(f.entry(Tag::parse("v1.3.15").unwrap()).is_none());
    }

    #[test]
    fn rejects_bad_files() {
        let dup =
            "versions:\n  - tag: v1.0.0\n    source: none\n  - tag: v1.0.0\n    source: none\n";
        let err = VersionsFile::parse(dup, Path::new("x")).unwrap_err();
        assert!(err.to_string().contains("twice"), "{err}");
        let bad_tag = "versions:\n  - tag: latest\n    source: none\n";
        assert!(VersionsFile::parse(bad_tag, Path::new("x")).is_err());
        let bad_source = "versions:\n  - tag: v1.0.0\n    source: git\n";
        assert!(VersionsFile::parse(bad_source, Path::new("x")).is_err());
        let missing = "versions:\n  - tag: v1.0.0\n";
        assert!(VersionsFile::parse(missing, Path::new("x")).is_err());
    }
}
