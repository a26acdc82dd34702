//! Page corpora: the tag corpus's workload recorded by a version on 16 or 64 KiB pages
//! (`corpus/p16k/<tag>/`, `corpus/p64k/<tag>/`: [`mmkv_corpus::page_corpora`]), a subset of
//! its stores, so the reader is checked on files of those devices' writers.

use std::path::Path;

use crate::corpus::golden::Manifest;
use crate::error::{Error, Result};
use crate::record::{record_corpus, RecordSpec};
use crate::sides::official::OfficialLib;

/// The stores a page corpus of 16 KiB keeps (those of them its version has): the plain,
/// multi-process, encrypted and expiring configurations and both ends of a store's life
/// (`trimmed`, `cleared`). The rest of the tag set adds no page behaviour and would add whole
/// pages.
pub const PAGE_STORES: [&str; 7] = [
    "plain", "multi", "aes128", "aes256", "expire", "trimmed", "cleared",
];

/// The ids a page corpus keeps of a tag set `ids` (in its order): at 16 KiB the
/// [`PAGE_STORES`]; at larger pages, where every store is at least two such pages, a file that
/// grew (`plain`), one that shrank (`trimmed`) and one encrypted store (`aes256` when the
/// version has it, else `aes128`).
pub fn kept_stores<'a>(page_size: u64, ids: &[&'a str]) -> Vec<&'a str> {
    let cipher = if ids.contains(&"aes256") {
        "aes256"
    } else {
        "aes128"
    };
    ids.iter()
        .copied()
        .filter(|id| match page_size {
            0..=16384 => PAGE_STORES.contains(id),
            _ => ["plain", "trimmed", cipher].contains(id),
        })
        .collect()
}

/// The page size of the tag corpora's writers (`corpus/<tag>/`: x86-64).
pub const TAG_CORPUS_PAGE: u64 = 4096;

/// Records the page corpus of `lib` into `out` (created): the whole tag set is recorded by
/// [`record_corpus`] into a scratch folder (so every store runs with its index in the tag set,
/// the same workload at every page size), read back through the official getters, then the
/// [`kept_stores`] are kept with a manifest that says `page_size`.
///
/// The page is the one the official libraries of this process use ([`mmkv_sys::page_size`]:
/// `MMKV_SYS_PAGE_SIZE` or [`mmkv_sys::set_page_size`] before the first open). Errors: a 4 KiB
/// page (record the tag corpus instead), or a kept meta file that is not one such page long.
pub fn record_page_corpus(
    lib: &dyn OfficialLib,
    mmkv_version: &str,
    out: &Path,
    spec: &RecordSpec,
) -> Result<Manifest> {
    let page = mmkv_sys::page_size();
    if page == TAG_CORPUS_PAGE {
        return Err(Error::Other(format!(
            "a page corpus needs pages other than the tag corpora's {TAG_CORPUS_PAGE} bytes"
        )));
    }
    let scratch = tempfile::tempdir().map_err(|e| Error::io(Path::new("tempdir"), e))?;
    let mut manifest = record_corpus(lib, mmkv_version, scratch.path(), spec)?;
    let ids: Vec<&str> = manifest.stores.iter().map(|s| s.id.as_str()).collect();
    let kept: Vec<String> = kept_stores(page, &ids)
        .iter()
        .map(|s| s.to_string())
        .collect();
    manifest.stores.retain(|s| kept.contains(&s.id));
    manifest.page_size = Some(page);
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    for s in &manifest.stores {
        let meta = mmkv_corpus::meta_file_name(&s.id);
        let meta_path = scratch.path().join(&meta);
        let len = std::fs::metadata(&meta_path)
            .map_err(|e| Error::io(meta_path, e))?
            .len();
        if len != page {
            return Err(Error::Other(format!(
                "{}: the meta file is {len} bytes, not one {page}-byte page",
                s.id
            )));
        }
        // Read and written, not copied: the library's files are 0600, the corpus's 0644.
        for name in [s.id.clone(), meta] {
            let (from, to) = (scratch.path().join(&name), out.join(&name));
            std::fs::read(&from)
                .and_then(|bytes| std::fs::write(&to, bytes))
                .map_err(|e| Error::io(&to, e))?;
        }
    }
    let path = out.join(mmkv_corpus::MANIFEST_FILE);
    std::fs::write(&path, manifest.to_json_text()).map_err(|e| Error::io(&path, e))?;
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::golden::corpus_root;
    use crate::suite::scenarios::{OTHER_PAGES, PAGE_ANCHORS};

    #[test]
    fn page_corpora_keep_fewer_stores_on_larger_pages() {
        let v1 = [
            "plain",
            "multi",
            "aes128",
            "aes128-long-key",
            "empty",
            "cleared",
            "trimmed",
        ];
        assert_eq!(
            kept_stores(16384, &v1),
            ["plain", "multi", "aes128", "cleared", "trimmed"]
        );
        assert_eq!(kept_stores(65536, &v1), ["plain", "aes128", "trimmed"]);
        let v2 = ["plain", "aes128", "aes256", "expire", "trimmed"];
        assert_eq!(kept_stores(65536, &v2), ["plain", "aes256", "trimmed"]);
        assert_eq!(kept_stores(16384, &v2), v2);
    }

    #[test]
    fn the_project_has_a_page_corpus_per_page_anchor_and_page() {
        let root = corpus_root();
        let found: Vec<(u64, String)> = mmkv_corpus::page_corpora(&root)
            .unwrap()
            .into_iter()
            .map(|p| (p.page_size, p.tag))
            .collect();
        let want: Vec<(u64, String)> = OTHER_PAGES
            .iter()
            .flat_map(|&p| PAGE_ANCHORS.iter().map(move |t| (p, t.to_string())))
            .collect();
        assert_eq!(found, want);
        for p in mmkv_corpus::page_corpora(&root).unwrap() {
            let tag = Manifest::load(&root.join(&p.tag)).unwrap();
            let ids: Vec<&str> = tag.stores.iter().map(|s| s.id.as_str()).collect();
            let kept = kept_stores(p.page_size, &ids);
            let ids: Vec<&str> = p.manifest.stores.iter().map(|s| s.id.as_str()).collect();
            assert_eq!(ids, kept, "{}", p.dir.display());
            for id in ids {
                let meta = p.dir.join(mmkv_corpus::meta_file_name(id));
                let len = std::fs::metadata(&meta).unwrap().len();
                assert_eq!(len, p.page_size, "{}", meta.display());
            }
        }
    }
}
