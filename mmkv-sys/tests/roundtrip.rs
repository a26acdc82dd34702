//! Per built version: write every value type (with and without expire where supported), read
//! it back through the official getters, reopen, read again.

mod common;

use common::{all_built, expected_version, Sample};
use mmkv_sys::{Error, Mode};

#[test]
fn every_version_reports_its_own_version() {
    for lib in all_built() {
        assert_eq!(
            lib.version(),
            expected_version(lib.tag()),
            "MMKV_VERSION of {}",
            lib.tag()
        );
        assert_eq!(
            Some(lib.shim_version()),
            mmkv_sys::versions::tag_number(lib.tag())
        );
    }
}

#[test]
fn write_read_reopen_every_type() {
    for lib in all_built() {
        let tmp = tempfile::tempdir().unwrap();
        let tag = lib.tag().to_string();
        for (id, mode, key) in [
            ("plain", Mode::Single, None),
            ("multi", Mode::Multi, None),
            ("aes", Mode::Single, Some(&b"mmkv-conformance"[..])),
        ] {
            let store = lib.open(tmp.path(), id, mode, key, false).unwrap();
            Sample::write(&store, "a.", None);
            Sample::check(&store, "a.");
            assert_eq!(
                store.count().unwrap(),
                Sample::key_count(&store),
                "{tag} {id} count"
            );
            let mut keys = store.all_keys().unwrap();
            keys.sort();
            assert_eq!(keys.len() as u64, Sample::key_count(&store));
            assert!(keys.contains(&b"a.bool".to_vec()));
            assert!(store.contains(b"a.i32").unwrap());
            assert!(!store.contains(b"missing").unwrap());
            assert_eq!(
                store.get_i32(b"missing").unwrap(),
                None,
                "{tag} {id} absent i32"
            );
            assert_eq!(
                store.get_string(b"missing").unwrap(),
                None,
                "{tag} {id} absent string"
            );
            assert_eq!(
                store.get_bytes(b"missing").unwrap(),
                None,
                "{tag} {id} absent bytes"
            );
            // remove: bool from v2.0.0, void before.
            let removed = store.remove(b"a.u32").unwrap();
            assert_eq!(
                removed.is_some(),
                lib.capabilities().remove_returns_bool,
                "{tag} remove result"
            );
            assert_eq!(store.get_u32(b"a.u32").unwrap(), None, "{tag} removed u32");
            store.set_u32(b"a.u32", u32::MAX, None).unwrap();
            store.sync().unwrap();
            store.close().unwrap();
            assert!(
                tmp.path().join(id).is_file() && tmp.path().join(format!("{id}.crc")).is_file()
            );

            let store = lib.open(tmp.path(), id, mode, key, false).unwrap();
            Sample::check(&store, "a.");
            store.trim().unwrap();
            store.clear_memory_cache().unwrap();
            Sample::check(&store, "a.");
            assert!(
                store.actual_size().unwrap() > 0
                    && store.total_size().unwrap() >= store.actual_size().unwrap()
            );
            store.clear_all().unwrap();
            assert_eq!(store.count().unwrap(), 0, "{tag} {id} after clear_all");
            assert_eq!(store.get_bool(b"a.bool").unwrap(), None);
        }
    }
}

#[test]
fn expire_where_supported_unsupported_elsewhere() {
    let libs = all_built();
    let tmp = tempfile::tempdir().unwrap();
    let mut short_lived = Vec::new();
    for lib in &libs {
        let dir = tmp.path().join(lib.tag());
        let store = lib.open(&dir, "expire", Mode::Single, None, false).unwrap();
        if !lib.capabilities().key_expire {
            assert!(matches!(
                store.enable_key_expire(0),
                Err(Error::Unsupported { .. })
            ));
            assert!(matches!(
                store.set_i32(b"k", 1, Some(60)),
                Err(Error::Unsupported { .. })
            ));
            assert!(matches!(
                store.count_filtered(),
                Err(Error::Unsupported { .. }) | Ok(_)
            ));
            continue;
        }
        assert!(
            store.enable_key_expire(0).unwrap(),
            "{} enableAutoKeyExpire",
            lib.tag()
        );
        Sample::write(&store, "never.", None);
        Sample::write(&store, "hour.", Some(3600));
        store.set_i32(b"short", 7, Some(1)).unwrap();
        Sample::check(&store, "never.");
        Sample::check(&store, "hour.");
        assert_eq!(store.get_i32(b"short").unwrap(), Some(7));
        short_lived.push(store);
    }
    if short_lived.is_empty() {
        return;
    }
    std::thread::sleep(std::time::Duration::from_millis(2100));
    for store in short_lived {
        assert_eq!(
            store.get_i32(b"short").unwrap(),
            None,
            "{} expired key still readable",
            store.tag()
        );
        assert!(
            !store.contains(b"short").unwrap(),
            "{} containsKey of an expired key",
            store.tag()
        );
        let lib = mmkv_sys::Official::load(store.tag()).unwrap();
        if lib.capabilities().count_filter_expire {
            assert_eq!(
                store.count_filtered().unwrap(),
                2 * Sample::key_count(&store),
                "{} count(filterExpire)",
                store.tag()
            );
        }
        let (dir, tag) = (store.dir().to_path_buf(), store.tag().to_string());
        store.close().unwrap();
        let store = lib.open(&dir, "expire", Mode::Single, None, false).unwrap();
        Sample::check(&store, "hour.");
        Sample::check(&store, "never.");
        assert_eq!(
            store.get_i32(b"short").unwrap(),
            None,
            "{tag} expired after reopen"
        );
    }
}

#[test]
fn typed_vectors_and_aes256_are_unsupported_where_missing() {
    for lib in all_built() {
        let tmp = tempfile::tempdir().unwrap();
        let caps = lib.capabilities();
        let store = lib
            .open(tmp.path(), "caps", Mode::Single, None, false)
            .unwrap();
        if !caps.typed_vectors {
            assert!(matches!(
                store.set_vec_i32(b"v", &[1], None),
                Err(Error::Unsupported { .. })
            ));
            assert!(matches!(
                store.get_vec_f64(b"v"),
                Err(Error::Unsupported { .. })
            ));
        }
        if !caps.aes256 {
            let r = lib.open(tmp.path(), "aes256", Mode::Single, Some(&[7u8; 32]), true);
            assert!(
                matches!(r, Err(Error::Unsupported { .. })),
                "{}: aes256 open must be unsupported",
                lib.tag()
            );
        }
        if !caps.clear_all_keep_space {
            assert!(matches!(
                store.clear_all_keep_space(),
                Err(Error::Unsupported { .. })
            ));
        }
    }
}

#[test]
fn same_store_opened_twice_shares_one_instance() {
    let lib = all_built().pop().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let a = lib
        .open(tmp.path(), "shared", Mode::Single, None, false)
        .unwrap();
    let b = lib
        .open(tmp.path(), "shared", Mode::Single, None, false)
        .unwrap();
    a.set_i64(b"x", 5, None).unwrap();
    drop(a); // not the last handle: must not close the C++ instance
    assert_eq!(b.get_i64(b"x").unwrap(), Some(5));
    b.close().unwrap();
}
