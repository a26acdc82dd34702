//! The other ways to open a store (ABI 5) on every built version: `MMKV_READ_ONLY` (the
//! instance reads the store and refuses every write, the files unchanged) and
//! `MMKV::nameSpace(root)` (the files land in the normalised root). Each runs exactly where
//! versions.yaml lists its feature, and is refused as unsupported elsewhere.

mod common;

use common::{listed_built, unsupported};
use mmkv_sys::versions::Feature;
use mmkv_sys::{Mode, OpenAs};

const READ_ONLY: OpenAs = OpenAs {
    read_only: true,
    name_space: false,
};
const NAME_SPACE: OpenAs = OpenAs {
    read_only: false,
    name_space: true,
};

/// Both files of store `id` in `dir`.
fn files(dir: &std::path::Path, id: &str) -> (Vec<u8>, Vec<u8>) {
    let read = |name: String| std::fs::read(dir.join(name)).unwrap();
    (read(id.to_string()), read(format!("{id}.crc")))
}

#[test]
fn read_only_reads_and_refuses_writes_where_listed() {
    let mut checked = 0;
    for (lib, entry) in listed_built() {
        let tag = lib.tag().to_string();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for (id, mode) in [("ro-single", Mode::Single), ("ro-multi", Mode::Multi)] {
            let key = Some(&b"read-only-key"[..]);
            let store = lib.open(dir, id, mode, key, false).unwrap();
            assert!(store.set_i32(b"a", 7, None).unwrap());
            assert!(store.set_string(b"s", b"hello", None).unwrap());
            store.close().unwrap();
            let before = files(dir, id);
            let opened = lib.open_as(dir, id, mode, key, false, READ_ONLY);
            if !entry.has(Feature::ReadOnly) {
                assert!(unsupported(&opened), "{tag}: {:?}", opened.err());
                continue;
            }
            let ro = opened.unwrap_or_else(|e| panic!("{tag}: {e}"));
            assert_eq!(ro.get_i32(b"a").unwrap(), Some(7), "{tag} {id}");
            assert_eq!(ro.get_string(b"s").unwrap().as_deref(), Some(&b"hello"[..]));
            assert!(
                !ro.set_i32(b"a", 8, None).unwrap(),
                "{tag}: a read-only set"
            );
            assert_eq!(
                ro.get_i32(b"a").unwrap(),
                Some(7),
                "{tag}: after the refused set"
            );
            ro.close().unwrap();
            assert!(files(dir, id) == before, "{tag} {id}: the files changed");
            checked += 1;
        }
    }
    eprintln!("read-only checked on {checked} (version, mode) pair(s)");
}

#[test]
fn name_space_normalises_its_root_where_listed() {
    let mut checked = 0;
    for (lib, entry) in listed_built() {
        let tag = lib.tag().to_string();
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ns");
        std::fs::create_dir(&root).unwrap();
        // `<root>/detour/../`: absolute, but neither canonical nor without a trailing slash.
        let spelt = std::path::PathBuf::from(format!("{}/detour/../", root.display()));
        let opened = lib.open_as(&spelt, "in-ns", Mode::Single, None, false, NAME_SPACE);
        if !entry.has(Feature::NameSpace) {
            assert!(unsupported(&opened), "{tag}: {:?}", opened.err());
            continue;
        }
        let store = opened.unwrap_or_else(|e| panic!("{tag}: {e}"));
        assert!(store.set_i32(b"a", 7, None).unwrap());
        store.close().unwrap();
        assert!(
            root.join("in-ns").is_file(),
            "{tag}: no data file in the root"
        );
        assert!(
            root.join("in-ns.crc").is_file(),
            "{tag}: no meta file in the root"
        );
        assert!(
            !root.join("detour").exists(),
            "{tag}: the detour was created"
        );
        // The same store by the plain path.
        let plain = lib.open(&root, "in-ns", Mode::Single, None, false).unwrap();
        assert_eq!(plain.get_i32(b"a").unwrap(), Some(7), "{tag}");
        plain.close().unwrap();
        checked += 1;
    }
    eprintln!("name spaces checked on {checked} version(s)");
}
