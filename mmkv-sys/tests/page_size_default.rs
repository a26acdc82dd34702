//! The default page size: the real one, unless `MMKV_SYS_PAGE_SIZE` names another (the way the
//! conformance report hands a page size to its child processes).
//!
//! Its own test binary: the page size is process-wide. The variable is tested in a child
//! process (this binary run again with one test selected), so the parent's default stays real.

mod common;

use common::all_built;
use mmkv_sys::page_size::{real_page_size, PAGE_SIZE_VAR};
use mmkv_sys::{page_size, Mode};
use std::path::Path;
use std::process::Command;

/// Set in the child process: the page size it was started with.
const CHILD_VAR: &str = "MMKV_SYS_PAGE_SIZE_TEST_CHILD";

/// Opens a store with every built version and checks that its files are one `page` long.
fn new_stores_are_one_page(dir: &Path, page: u64) {
    for lib in all_built() {
        let tag = lib.tag();
        let store = lib
            .open(&dir.join(tag), "one", Mode::Single, None, false)
            .unwrap();
        assert!(store.set_i32(b"k", 1, None).unwrap());
        store.sync().unwrap();
        assert_eq!(lib.initialized_page_size(), Some(page), "{tag}");
        for file in ["one", "one.crc"] {
            let path = dir.join(tag).join(file);
            let len = std::fs::metadata(&path).unwrap().len();
            assert_eq!(len, page, "{tag}: {}", path.display());
        }
    }
}

/// Without the variable, every version runs with the machine's page size (as unwrapped).
#[test]
fn unset_the_libraries_see_the_real_page_size() {
    // A caller that runs these tests with a size chosen gets that size.
    let expected = std::env::var(PAGE_SIZE_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(real_page_size);
    assert_eq!(page_size(), expected);
    let tmp = tempfile::tempdir().unwrap();
    new_stores_are_one_page(tmp.path(), expected);
}

/// `MMKV_SYS_PAGE_SIZE=65536` makes 64 KiB files in a child process; an invalid value makes
/// loading a version fail with a message that names the variable.
#[test]
fn the_variable_chooses_the_default() {
    if let Some(page) = std::env::var_os(CHILD_VAR) {
        let page: u64 = page.to_str().unwrap().parse().unwrap();
        if page == 0 {
            let err = mmkv_sys::Official::load(mmkv_sys::built_versions()[0]).unwrap_err();
            assert!(err.to_string().contains(PAGE_SIZE_VAR), "{err}");
        } else {
            assert_eq!(page_size(), page);
            let tmp = tempfile::tempdir().unwrap();
            new_stores_are_one_page(tmp.path(), page);
        }
        return;
    }
    for (value, child) in [("65536", "65536"), ("12345", "0")] {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "the_variable_chooses_the_default", "--nocapture"])
            .env(PAGE_SIZE_VAR, value)
            .env(CHILD_VAR, child)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "child with {PAGE_SIZE_VAR}={value}:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("1 passed"),
            "the child ran no test:\n{stdout}"
        );
    }
}
