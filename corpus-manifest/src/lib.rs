//! The golden corpora's manifest, in one place for every reader of it.
//!
//! `corpus/<tag>/` holds stores the official library wrote at `<tag>` and a `manifest.json` of
//! what its getters returned (format: `corpus/README.md`). This crate owns:
//! - [`Manifest`], [`StoreManifest`], [`Entry`]: the manifest's serde types, its loader
//!   ([`Manifest::load`]) and writer ([`Manifest::to_json_text`]);
//! - [`encoding`]: how values are written in it (decimal strings, float bit patterns, hex);
//! - [`hex`]: the lowercase hex of bytes and keys;
//! - [`corpus_root`], [`corpus_tags`] and [`copy_store`]: where the corpus is, which tags it
//!   holds, and a copy of one of its stores to damage or rewrite in a test.
//!
//! Value types stay the manifest's names (`Entry::ty`); consumers parse them with their own
//! type (`mmkv_reader::decode::ValueType` implements `FromStr` for exactly these names), so this
//! crate depends on no reader and the reader can use it in its tests.

#![deny(missing_docs)]

pub mod encoding;
pub mod hex;
mod manifest;

use std::path::{Path, PathBuf};

use mmkv_versions::Tag;

pub use encoding::BadValue;
pub use manifest::{Entry, Manifest, ManifestError, Mode, StoreManifest, MANIFEST_FILE};

/// The project's corpus folder (`<workspace>/corpus`), overridable with `CONFORMANCE_CORPUS`.
pub fn corpus_root() -> PathBuf {
    if let Some(p) = std::env::var_os("CONFORMANCE_CORPUS") {
        return PathBuf::from(p);
    }
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.parent().unwrap_or(crate_dir).join("corpus")
}

/// Tag folders of a corpus root that hold a manifest, sorted by version (names that are not
/// `vX.Y.Z` tags first, by name).
pub fn corpus_tags(root: &Path) -> Result<Vec<String>, ManifestError> {
    let io = |e| ManifestError::Io {
        path: root.to_path_buf(),
        source: e,
    };
    let mut tags = Vec::new();
    for entry in std::fs::read_dir(root).map_err(io)? {
        let entry = entry.map_err(io)?;
        if entry.path().join(MANIFEST_FILE).is_file() {
            tags.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    tags.sort_by_key(|t| (Tag::parse(t), t.clone()));
    Ok(tags)
}

/// The meta file of a corpus store: `<tag>/<id>.crc` beside the data file `<tag>/<id>`.
pub fn meta_file_name(id: &str) -> String {
    format!("{id}.crc")
}

/// Copies the corpus store `root/tag/id` (data and meta file) into `dir` as `name` and
/// `name.crc`; returns the copy's data path.
pub fn copy_store(
    root: &Path,
    tag: &str,
    id: &str,
    dir: &Path,
    name: &str,
) -> std::io::Result<PathBuf> {
    let src = root.join(tag);
    let dst = dir.join(name);
    std::fs::copy(src.join(id), &dst)?;
    std::fs::copy(src.join(meta_file_name(id)), dir.join(meta_file_name(name)))?;
    Ok(dst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_corpus_has_every_tag_in_version_order() {
        let tags = corpus_tags(&corpus_root()).unwrap();
        // Exactly versions.yaml's tags, in its (version) order: no count is pinned, so a tag
        // added with `track-upstream add-version` passes.
        let versions = concat!(env!("CARGO_MANIFEST_DIR"), "/../versions.yaml");
        let listed: Vec<String> = mmkv_versions::load_versions(Path::new(versions))
            .unwrap()
            .versions
            .iter()
            .map(|e| e.tag.to_string())
            .collect();
        assert_eq!(tags, listed);
        assert_eq!(tags.first().map(String::as_str), Some("v1.1.0"));
        let i9 = tags.iter().position(|t| t == "v1.2.9").unwrap();
        let i10 = tags.iter().position(|t| t == "v1.2.10").unwrap();
        assert!(i9 < i10);
    }

    #[test]
    fn folders_without_a_manifest_are_not_tags() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["v1.2.10", "v1.2.9", "scratch", "v2.0.0"] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        for name in ["v1.2.10", "v1.2.9", "scratch"] {
            std::fs::write(dir.path().join(name).join(MANIFEST_FILE), "{}").unwrap();
        }
        assert_eq!(
            corpus_tags(dir.path()).unwrap(),
            ["scratch", "v1.2.9", "v1.2.10"]
        );
        assert!(corpus_tags(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn copies_a_store_with_its_meta() {
        let dir = tempfile::tempdir().unwrap();
        let root = corpus_root();
        let p = copy_store(&root, "v2.4.2", "aes128", dir.path(), "x").unwrap();
        assert_eq!(p, dir.path().join("x"));
        let same = |a: PathBuf, b: PathBuf| std::fs::read(a).unwrap() == std::fs::read(b).unwrap();
        assert!(same(p.clone(), root.join("v2.4.2/aes128")));
        assert!(same(
            dir.path().join("x.crc"),
            root.join("v2.4.2/aes128.crc")
        ));
        assert!(copy_store(&root, "v2.4.2", "missing", dir.path(), "y").is_err());
    }
}
