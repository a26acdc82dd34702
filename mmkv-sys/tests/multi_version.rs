//! Several official versions loaded at once in one process: each reports its own
//! MMKV_VERSION and writes its own files.

mod common;

use common::{all_built, expected_version, Sample};
use mmkv_sys::versions::Feature;
use mmkv_sys::Mode;

/// The 4-byte item-size holder right after the data file's 4-byte header.
fn holder(path: &std::path::Path) -> [u8; 4] {
    let data = std::fs::read(path).unwrap();
    [data[4], data[5], data[6], data[7]]
}

#[test]
fn versions_side_by_side() {
    let libs = all_built();
    if libs.len() < 2 {
        eprintln!(
            "only {} version built; side-by-side test needs two",
            libs.len()
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // Open one store per version, all at once, interleaving writes.
    let stores: Vec<_> = libs
        .iter()
        .map(|lib| {
            let dir = tmp.path().join(lib.tag());
            (
                lib,
                lib.open(&dir, "side", Mode::Single, None, false).unwrap(),
            )
        })
        .collect();
    for (lib, store) in &stores {
        store.set_string(b"writer", lib.version(), None).unwrap();
        Sample::write(store, "s.", None);
    }
    for (lib, store) in &stores {
        assert_eq!(lib.version(), expected_version(lib.tag()));
        assert_eq!(
            store.get_string(b"writer").unwrap(),
            Some(lib.version().into_bytes())
        );
        Sample::check(store, "s.");
        store.sync().unwrap();
    }
    // Each version wrote its own files, in its own format.
    for (lib, store) in stores {
        let data = tmp.path().join(lib.tag()).join("side");
        assert!(data.is_file(), "{} wrote no data file", lib.tag());
        let h = holder(&data);
        let features = lib.features();
        if features.has(Feature::ItemSizeHolder) {
            // A 4-byte holder: the fixed varint 0x00ffffff, or random from v1.3.9.
            assert_eq!(
                h == [0xff, 0xff, 0xff, 0x07],
                !features.has(Feature::RandomItemSizeHolder),
                "{} item-size holder {h:02x?}",
                lib.tag()
            );
        } else {
            // No holder (v1.1.x): the region starts with the varint of the dictionary's
            // encoded size, shorter than a holder.
            let varint_len = h.iter().position(|b| b & 0x80 == 0).map(|i| i + 1);
            assert!(
                matches!(varint_len, Some(1..=3)),
                "{} starts its data region with {h:02x?}, not a short size varint",
                lib.tag()
            );
        }
        store.close().unwrap();
    }
}
