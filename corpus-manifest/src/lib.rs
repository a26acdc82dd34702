//! The golden corpora's manifest, in one place for every reader of it.
//!
//! `corpus/<tag>/` holds stores the official library wrote at `<tag>` and a `manifest.json` of
//! what its getters returned (format: `corpus/README.md`). This crate owns:
//! - [`Manifest`], [`StoreManifest`], [`Entry`]: the manifest's serde types, its loader
//!   ([`Manifest::load`]) and writer ([`Manifest::to_json_text`]);
//! - [`encoding`]: how values are written in it (decimal strings, float bit patterns, hex);
//! - [`hex`]: the lowercase hex of bytes and keys;
//! - [`corpus_root`], [`corpus_tags`] and [`copy_store`]: where the corpus is, which tags it
//!   holds, and a copy of one of its stores to damage or rewrite in a test;
//! - [`page_corpora`] and [`page_folder`]: the page corpora, `corpus/p16k/<tag>/` and
//!   `corpus/p64k/<tag>/`, stores of writers on 16 and 64 KiB pages (their manifests say
//!   `page_size`).
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

/// The folder of a corpus root that holds the page corpora of `page_size` bytes: `p16k` for
/// 16384 (`corpus/p16k/<tag>/`, laid out like a tag folder).
pub fn page_folder(page_size: u64) -> String {
    format!("p{}k", page_size / 1024)
}

/// The page size a folder name of [`page_folder`] stands for (`p16k` -> 16384).
fn folder_page(name: &str) -> Option<u64> {
    let kib: u64 = name.strip_prefix('p')?.strip_suffix('k')?.parse().ok()?;
    let size = kib.checked_mul(1024)?;
    (size.is_power_of_two() && page_folder(size) == name).then_some(size)
}

/// One page corpus: the stores an official version wrote on pages other than the tag
/// corpora's 4 KiB, with its manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct PageCorpus {
    /// The writer's page size (bytes): the folder's and the manifest's `page_size`.
    pub page_size: u64,
    /// The writer's tag (the folder name).
    pub tag: String,
    /// The folder (`<root>/p16k/<tag>`).
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
}

/// Every page corpus of a corpus root (`<root>/p<N>k/<tag>/` with a manifest), by page size
/// then by version. A manifest whose `page_size` is not its folder's is an error.
pub fn page_corpora(root: &Path) -> Result<Vec<PageCorpus>, ManifestError> {
    let io = |e| ManifestError::Io {
        path: root.to_path_buf(),
        source: e,
    };
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(root).map_err(io)? {
        let entry = entry.map_err(io)?;
        if let Some(size) = folder_page(&entry.file_name().to_string_lossy()) {
            pages.push((size, entry.path()));
        }
    }
    pages.sort();
    let mut out = Vec::new();
    for (page_size, folder) in pages {
        for tag in corpus_tags(&folder)? {
            let dir = folder.join(&tag);
            let manifest = Manifest::load(&dir)?;
            if manifest.page_size != Some(page_size) {
                return Err(ManifestError::Parse {
                    path: dir.join(MANIFEST_FILE),
                    message: format!(
                        "page_size {:?} in the folder of {page_size}-byte pages",
                        manifest.page_size
                    ),
                });
            }
            out.push(PageCorpus {
                page_size,
                tag,
                dir,
                manifest,
            });
        }
    }
    Ok(out)
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
    fn the_project_page_corpora_are_listed_tags_with_tag_corpus_stores() {
        let root = corpus_root();
        let tags = corpus_tags(&root).unwrap();
        let pages = page_corpora(&root).unwrap();
        // Which tags and pages there are is conformance's to check (its page anchors); here:
        // each is a versions.yaml tag (= a tag corpus, the test above) and holds stores of
        // that tag's set, with the tag corpus's version.
        assert!(!pages.is_empty());
        for p in &pages {
            let name = format!("{}/{}", page_folder(p.page_size), p.tag);
            assert!(tags.contains(&p.tag), "{name}: not a versions.yaml tag");
            assert_eq!(p.dir, root.join(&name));
            let tag = Manifest::load(&root.join(&p.tag)).unwrap();
            assert_eq!(p.manifest.mmkv_version, tag.mmkv_version, "{name}");
            assert!(!p.manifest.stores.is_empty(), "{name}");
            for s in &p.manifest.stores {
                assert!(
                    tag.store(&s.id).is_some(),
                    "{name}/{}: no such tag store",
                    s.id
                );
            }
        }
    }

    #[test]
    fn page_folders_name_their_page() {
        assert_eq!(page_folder(16384), "p16k");
        assert_eq!(page_folder(65536), "p64k");
        assert_eq!(folder_page("p16k"), Some(16384));
        assert_eq!(folder_page("p64k"), Some(65536));
        for other in ["p3k", "p016k", "p16", "16k", "v2.4.2", "pk", "p0k"] {
            assert_eq!(folder_page(other), None, "{other}");
        }
    }

    #[test]
    fn page_corpora_are_found_by_folder_and_checked_against_it() {
        let dir = tempfile::tempdir().unwrap();
        let write = |folder: &str, tag: &str, page: Option<u64>| {
            let d = dir.path().join(folder).join(tag);
            std::fs::create_dir_all(&d).unwrap();
            let m = Manifest {
                mmkv_version: tag.into(),
                seed: 1,
                page_size: page,
                stores: vec![],
            };
            std::fs::write(d.join(MANIFEST_FILE), m.to_json_text()).unwrap();
        };
        write("p64k", "v1.2.16", Some(65536));
        write("p16k", "v2.4.2", Some(16384));
        write("p16k", "v1.2.16", Some(16384));
        write("scratch", "v1.2.16", Some(16384));
        write("v2.4.2", "x", None);
        let found: Vec<(u64, String)> = page_corpora(dir.path())
            .unwrap()
            .into_iter()
            .map(|p| (p.page_size, p.tag))
            .collect();
        let want = [(16384, "v1.2.16"), (16384, "v2.4.2"), (65536, "v1.2.16")];
        assert_eq!(found, want.map(|(p, t)| (p, t.to_string())));
        // A manifest without the folder's page_size is refused.
        write("p16k", "v1.3.17", None);
        let err = page_corpora(dir.path()).unwrap_err();
        assert!(err.to_string().contains("v1.3.17"), "{err}");
        write("p16k", "v1.3.17", Some(65536));
        assert!(page_corpora(dir.path()).is_err());
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
