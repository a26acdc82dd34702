//! The page size (`mmkv_sys::set_page_size`): every version's `getpagesize()` is wrapped at link
//! time, so on this machine a version writes the files of a 16 KiB device: a `.crc` of one
//! 16 KiB page and a data file that grows in 16 KiB steps; once a library has initialised, it
//! keeps its size.
//!
//! Its own test binary: the page size is process-wide and fixed at a library's first open.

mod common;

use common::all_built;
use mmkv_sys::{page_size, set_page_size, Error, Mode, Official};
use std::path::Path;

const PAGE: u64 = 16 * 1024;

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .len()
}

/// Writes values until the data file has grown past its first page; checks the sizes on the
/// way and that a reopened instance reads every value back.
fn write_two_pages(lib: &Official, dir: &Path, key: Option<&[u8]>) {
    let tag = lib.tag();
    let id = if key.is_some() { "aes" } else { "plain" };
    let store = lib.open(dir, id, Mode::Single, key, false).unwrap();
    assert_eq!(store.total_size().unwrap(), PAGE, "{tag} {id}: a new store");
    let value = vec![b'v'; 1000];
    let mut n = 0u32;
    while store.total_size().unwrap() == PAGE {
        assert!(store.set_bytes(&n.to_le_bytes(), &value, None).unwrap());
        n += 1;
        assert!(
            n < 64,
            "{tag} {id}: 64 KB of values did not outgrow one page"
        );
    }
    store.sync().unwrap();
    let size = store.total_size().unwrap();
    assert_eq!(
        size % PAGE,
        0,
        "{tag} {id}: grew to {size}, not whole pages"
    );
    assert_eq!(file_len(&dir.join(id)), size, "{tag} {id}: the data file");
    assert_eq!(
        file_len(&dir.join(format!("{id}.crc"))),
        PAGE,
        "{tag} {id}: the .crc file is one page"
    );
    store.close().unwrap();
    let store = lib.open(dir, id, Mode::Single, key, false).unwrap();
    assert_eq!(store.count().unwrap(), u64::from(n), "{tag} {id}: reopened");
    for i in 0..n {
        assert_eq!(
            store.get_bytes(&i.to_le_bytes()).unwrap().as_deref(),
            Some(&value[..]),
            "{tag} {id}: key {i}"
        );
    }
}

/// Every built version, plaintext and encrypted, writes 16 KiB pages; afterwards the size is
/// fixed (another one is refused, the same one accepted) and is what each library reports.
#[test]
fn a_16k_writer_makes_one_page_crc_files_and_grows_in_16k_steps() {
    assert_ne!(
        mmkv_sys::page_size::real_page_size(),
        PAGE,
        "this test needs a machine whose page is not 16 KiB"
    );
    set_page_size(PAGE).unwrap();
    assert_eq!(page_size(), PAGE);
    let libs = all_built();
    let tmp = tempfile::tempdir().unwrap();
    for lib in &libs {
        assert_eq!(lib.initialized_page_size(), None, "{}", lib.tag());
        let dir = tmp.path().join(lib.tag());
        write_two_pages(lib, &dir, None);
        write_two_pages(lib, &dir, Some(b"mmkv-page-size"));
        assert_eq!(lib.initialized_page_size(), Some(PAGE), "{}", lib.tag());
    }
    match set_page_size(4096) {
        Err(Error::PageSizeFixed {
            fixed, requested, ..
        }) => assert_eq!((fixed, requested), (PAGE, 4096)),
        other => panic!("another page size after the first open: {other:?}"),
    }
    assert_eq!(page_size(), PAGE, "a refused size changes nothing");
    set_page_size(PAGE).unwrap();
}

/// Sizes the official library cannot run with are refused before anything changes.
#[test]
fn sizes_that_are_no_page_sizes_are_refused() {
    for bad in [0, 1000, 2048, 12288, 1 << 21] {
        assert!(
            matches!(set_page_size(bad), Err(Error::InvalidPageSize(n)) if n == bad),
            "{bad}"
        );
    }
}
