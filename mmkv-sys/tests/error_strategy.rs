//! The error strategy reaches the library: a store whose meta CRC (and last-confirmed CRC, which
//! the library would otherwise fall back to) was damaged loads empty with `Discard` and keeps its
//! data with `Recover` (own test binary: the strategy is process-wide).

use mmkv_sys::{ErrorStrategy, Mode, Official};

fn damage_crc(dir: &std::path::Path, id: &str) {
    let crc = dir.join(format!("{id}.crc"));
    let mut meta = std::fs::read(&crc).unwrap();
    // u32 CRC at offset 0, last confirmed CRC at offset 36.
    for i in (0..4).chain(36..40) {
        meta[i] ^= 0xa5;
    }
    std::fs::write(&crc, meta).unwrap();
}

#[test]
fn discard_and_recover_on_crc_failure() {
    for tag in mmkv_sys::built_versions() {
        let lib = Official::load(tag).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        for id in ["discard", "recover"] {
            let store = lib.open(tmp.path(), id, Mode::Single, None, false).unwrap();
            for i in 0..20 {
                store.set_i32(format!("k{i}").as_bytes(), i, None).unwrap();
            }
            store.sync().unwrap();
            store.close().unwrap();
            damage_crc(tmp.path(), id);
        }
        lib.set_error_strategy(ErrorStrategy::Discard).unwrap();
        let store = lib
            .open(tmp.path(), "discard", Mode::Single, None, false)
            .unwrap();
        assert_eq!(
            store.count().unwrap(),
            0,
            "{tag}: Discard must drop a store with a bad CRC"
        );
        assert_eq!(store.get_i32(b"k3").unwrap(), None);
        store.close().unwrap();

        if !lib.capabilities().error_strategy {
            assert!(lib.set_error_strategy(ErrorStrategy::Recover).is_err());
            continue;
        }
        lib.set_error_strategy(ErrorStrategy::Recover).unwrap();
        let store = lib
            .open(tmp.path(), "recover", Mode::Single, None, false)
            .unwrap();
        assert_eq!(
            store.count().unwrap(),
            20,
            "{tag}: Recover must keep the data"
        );
        assert_eq!(store.get_i32(b"k3").unwrap(), Some(3));
        store.close().unwrap();
        lib.set_error_strategy(ErrorStrategy::Discard).unwrap();
    }
}
