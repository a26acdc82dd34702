//! The fixture of the read benches (`gets`, and the `read_counts` instruction-count driver).

use std::collections::HashMap;

use benches::memory::FixtureInfo;
use mmkv_reader::{KeyHasher, Options, Store};
use mmkv_sys::{Instance, Mode};

/// Keys of each kind.
pub const N_I32: usize = 400;
pub const N_STRING: usize = 300;
pub const N_BYTES: usize = 300;
/// Value sizes.
pub const STRING_LEN: usize = 38;
pub const BYTES_LEN: usize = 4096;

/// The read benches' store (1,000 keys written by the official library), both official
/// instances on it, the reader's `Store`, the keys of each kind and the floor maps.
pub struct Fixture {
    /// Holds the store files.
    pub _dir: tempfile::TempDir,
    pub single: Instance,
    pub multi: Instance,
    pub store: Store,
    pub i32_keys: Vec<Vec<u8>>,
    pub string_keys: Vec<Vec<u8>>,
    pub bytes_keys: Vec<Vec<u8>>,
    pub floor_i32: HashMap<Vec<u8>, i32, KeyHasher>,
    pub floor_string: HashMap<Vec<u8>, String, KeyHasher>,
    pub floor_bytes: HashMap<Vec<u8>, Vec<u8>, KeyHasher>,
}

/// The i32 written under the i-th key.
pub fn i32_value(i: usize) -> i32 {
    // Mixed varint lengths (1..=10 bytes: negatives take 10).
    match i % 4 {
        0 => i as i32,
        1 => (i as i32) * 1_000,
        2 => (i as i32) * 1_000_000,
        _ => -(i as i32) - 1,
    }
}

/// The string written under the i-th key.
pub fn string_value(i: usize) -> String {
    let s = format!("{i:04}-{}", "abcdefghijklmnopqrstuvwxyz0123456789");
    s[..STRING_LEN].to_string()
}

/// Keys are at most 15 bytes so the official shim's per-call `std::string` key stays in the
/// small-string buffer (no heap allocation that MMKV's own `string_view` API would not make).
pub fn build() -> Fixture {
    let official = super::newest_official();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let i32_keys: Vec<Vec<u8>> = (0..N_I32)
        .map(|i| format!("int.{i:04}").into_bytes())
        .collect();
    let string_keys: Vec<Vec<u8>> = (0..N_STRING)
        .map(|i| format!("str.{i:04}").into_bytes())
        .collect();
    let bytes_keys: Vec<Vec<u8>> = (0..N_BYTES)
        .map(|i| format!("blob.{i:04}").into_bytes())
        .collect();
    {
        let w = super::open_official(&official, d, "gets", Mode::Single);
        for (i, k) in i32_keys.iter().enumerate() {
            assert!(w.set_i32(k, i32_value(i), None).expect("set_i32"));
        }
        for (i, k) in string_keys.iter().enumerate() {
            assert!(w.set_string(k, string_value(i), None).expect("set_string"));
        }
        for (i, k) in bytes_keys.iter().enumerate() {
            assert!(w
                .set_bytes(k, &super::pattern(BYTES_LEN, i), None)
                .expect("set_bytes"));
        }
        assert_eq!(w.count().expect("count"), 1000);
        w.sync().expect("sync");
        w.close().expect("close");
    }
    // The same bytes under a second id, so the MULTI_PROCESS instance is a separate one.
    super::copy_store(d, "gets", "gets_multi");
    let single = super::open_official(&official, d, "gets", Mode::Single);
    let multi = super::open_official(&official, d, "gets_multi", Mode::Multi);
    let store = Store::open(super::data_path(d, "gets"), Options::new()).expect("reader open");

    let mut floor_i32 = HashMap::with_hasher(KeyHasher::default());
    let mut floor_string = HashMap::with_hasher(KeyHasher::default());
    let mut floor_bytes = HashMap::with_hasher(KeyHasher::default());
    // Every implementation must see the values that were written.
    for (i, k) in i32_keys.iter().enumerate() {
        let v = i32_value(i);
        assert_eq!(single.get_i32(k).expect("get"), Some(v));
        assert_eq!(multi.get_i32(k).expect("get"), Some(v));
        assert_eq!(store.get_i32(k), Some(v));
        floor_i32.insert(k.clone(), v);
    }
    for (i, k) in string_keys.iter().enumerate() {
        let v = string_value(i);
        assert_eq!(v.len(), STRING_LEN);
        assert_eq!(
            single.get_string(k).expect("get"),
            Some(v.clone().into_bytes())
        );
        assert_eq!(
            multi.get_string(k).expect("get"),
            Some(v.clone().into_bytes())
        );
        assert_eq!(store.get_string(k), Some(v.clone()));
        floor_string.insert(k.clone(), v);
    }
    for (i, k) in bytes_keys.iter().enumerate() {
        let v = super::pattern(BYTES_LEN, i);
        assert_eq!(single.get_bytes(k).expect("get").as_ref(), Some(&v));
        assert_eq!(multi.get_bytes(k).expect("get").as_ref(), Some(&v));
        assert_eq!(store.get_bytes(k).as_ref(), Some(&v));
        assert_eq!(store.snapshot().get_bytes(k), Some(&v[..]));
        assert_eq!(store.view().get_bytes(k), Some(&v[..]));
        floor_bytes.insert(k.clone(), v);
    }
    super::record_fixture(
        "gets",
        &FixtureInfo {
            mmkv_version: official.version(),
            keys: 1000,
            data_bytes: store.snapshot().region_len() as u64,
            notes: Vec::new(),
        },
    );
    Fixture {
        _dir: dir,
        single,
        multi,
        store,
        i32_keys,
        string_keys,
        bytes_keys,
        floor_i32,
        floor_string,
        floor_bytes,
    }
}
