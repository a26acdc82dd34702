//! The file-changing calls (shim ABI 4+) on every built version: lock/try_lock/unlock, sync,
//! clearMemoryCache, compare-before-set, backup and restore of one store, the static
//! isFileValid and removeStorage, importFrom. Each runs exactly where versions.yaml lists its
//! feature, and does what its name says (values read back through the official getters).

mod common;

use common::{listed_built, unsupported};
use mmkv_sys::versions::Feature;
use mmkv_sys::Mode;

/// The folder backups go to: the library copies into a temporary file in `P_tmpdir` (`/tmp`)
/// and renames it, which fails across file systems before v1.3.12.
fn backup_dir() -> tempfile::TempDir {
    tempfile::tempdir_in("/tmp").unwrap()
}

#[test]
fn file_changing_calls_run_where_listed() {
    let mut checked = 0;
    for (lib, entry) in listed_built() {
        let tag = lib.tag().to_string();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("store");
        let store = lib.open(&dir, "ops", Mode::Multi, None, false).unwrap();
        assert!(store.set_i32(b"a", 1, None).unwrap());
        store.lock().unwrap();
        assert!(store.try_lock().unwrap(), "{tag}: try_lock while held");
        assert!(store.set_i32(b"b", 2, None).unwrap());
        store.unlock().unwrap();
        store.unlock().unwrap();
        store.sync_async().unwrap();
        store.clear_memory_cache().unwrap();
        assert_eq!(store.get_i32(b"b").unwrap(), Some(2), "{tag}");

        // compare-before-set: refused while expiration is on.
        let cbs = store.compare_before_set(true);
        if entry.has(Feature::CompareBeforeSet) {
            assert!(cbs.unwrap(), "{tag}: enableCompareBeforeSet");
            assert!(store.set_i32(b"a", 1, None).unwrap());
            assert!(store.enable_key_expire(0).unwrap());
            assert!(
                !store.compare_before_set(true).unwrap(),
                "{tag}: with expiration"
            );
            assert!(store.disable_key_expire().unwrap());
        } else {
            assert!(unsupported(&cbs), "{tag}: {cbs:?}");
        }

        // backup, change, restore.
        let backups = backup_dir();
        let backup = lib.backup_one("ops", &dir, backups.path());
        if entry.has(Feature::BackupRestore) {
            assert!(backup.unwrap(), "{tag}: backupOneToDirectory");
            assert!(backups.path().join("ops").is_file(), "{tag}");
            assert!(backups.path().join("ops.crc").is_file(), "{tag}");
            assert!(store.set_i32(b"a", 10, None).unwrap());
            assert!(
                lib.restore_one("ops", backups.path(), &dir).unwrap(),
                "{tag}"
            );
            assert_eq!(store.get_i32(b"a").unwrap(), Some(1), "{tag}: restored");
            let copy = lib
                .open(backups.path(), "ops", Mode::Single, None, false)
                .unwrap();
            assert_eq!(copy.get_i32(b"b").unwrap(), Some(2), "{tag}: the copy");
            copy.close().unwrap();
        } else {
            assert!(unsupported(&backup), "{tag}: {backup:?}");
        }

        // isFileValid: true without a data file; with content false from v2.4.0 (it sums the
        // CRC over the zero old-style size).
        store.sync().unwrap();
        let valid = lib.is_file_valid("ops", &dir).unwrap();
        assert_eq!(
            valid,
            !entry.has(Feature::ZeroHeaderSize),
            "{tag}: isFileValid"
        );
        assert!(lib.is_file_valid("none", &dir).unwrap(), "{tag}: no store");

        // importFrom: a plaintext source's keys.
        let src = lib.open(&dir, "src", Mode::Single, None, false).unwrap();
        assert!(src.set_string(b"s", "imported", None).unwrap());
        let imported = store.import_from(&src);
        if entry.has(Feature::ImportFrom) {
            assert_eq!(imported.unwrap(), 1, "{tag}: importFrom");
            assert_eq!(store.get_string(b"s").unwrap(), Some(b"imported".to_vec()));
        } else {
            assert!(unsupported(&imported), "{tag}: {imported:?}");
        }
        src.close().unwrap();

        // removeStorage of a closed store.
        store.close().unwrap();
        let removed = lib.remove_storage("ops", &dir);
        if entry.has(Feature::RemoveStorage) {
            assert!(removed.unwrap(), "{tag}: removeStorage");
            assert!(
                !dir.join("ops").exists() && !dir.join("ops.crc").exists(),
                "{tag}"
            );
            assert!(
                !lib.remove_storage("ops", &dir).unwrap(),
                "{tag}: nothing left"
            );
        } else {
            assert!(unsupported(&removed), "{tag}: {removed:?}");
        }
        checked += 1;
    }
    assert!(checked > 0, "no built version is listed in versions.yaml");
}
