//! Edges written to kill mutants that `cargo mutants` found surviving the other tests (see
//! docs/mutation-testing.md): the meta length each version needs (exactly enough parses, one
//! byte less does not), a stored value of exactly the 4-byte expire suffix, the offset a CFB
//! resume error names, the meta length a `Store` needs, `Store::contains` / `meta`, what `Debug` /
//! `Display` show, `SnapshotData::entries` of an expiring store, the snapshot's own counters
//! (levels, chunks, retained bytes) after a full and a partial load, what `ReadSync::describe`
//! says, and the error for a data file of exactly its header.

mod common;

use mmkv_reader::meta::{needed_len, MetaInfo, META_SIZE, OFF_FLAGS, OFF_IV, OFF_SEQUENCE};
use mmkv_reader::records::split_expire;

/// A meta file of `len` bytes with version `version` and sequence 7.
fn meta(version: u32, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    b[4..8].copy_from_slice(&version.to_le_bytes());
    if len >= OFF_SEQUENCE + 4 {
        b[OFF_SEQUENCE..OFF_SEQUENCE + 4].copy_from_slice(&7u32.to_le_bytes());
    }
    b
}

#[test]
fn each_meta_version_needs_exactly_its_fields() {
    // version → bytes up to its last field: sequence (v0/v1), IV (v2), the actual-size block
    // (v3, and v7+ which the v2.4.0+ loader treats as v3), flags (v4, v5, v6).
    let table = [
        (0, OFF_SEQUENCE + 4),
        (1, OFF_SEQUENCE + 4),
        (2, OFF_IV + 16),
        (3, OFF_FLAGS),
        (4, META_SIZE),
        (5, META_SIZE),
        (6, META_SIZE),
        (7, OFF_FLAGS),
        (9, OFF_FLAGS),
    ];
    for (version, len) in table {
        assert_eq!(needed_len(version), len, "version {version}");
        let exact = MetaInfo::parse(&meta(version, len))
            .unwrap_or_else(|e| panic!("version {version}, {len} bytes: {e}"));
        assert_eq!(exact.version, version);
        assert_eq!(exact.sequence, 7);
        assert!(
            MetaInfo::parse(&meta(version, len - 1)).is_err(),
            "version {version}: {} bytes accepted",
            len - 1
        );
    }
}

#[test]
fn a_meta_with_only_crc_and_version_needs_its_version_fields() {
    // 8 bytes: the version is readable, so the error names what that version needs.
    match MetaInfo::parse(&meta(1, 8)) {
        Err(mmkv_reader::Error::MetaTooShort { len, needed }) => {
            assert_eq!((len, needed), (8, OFF_SEQUENCE + 4));
        }
        other => panic!("{other:?}"),
    }
    match MetaInfo::parse(&[1u8; 7]) {
        Err(mmkv_reader::Error::MetaTooShort { len, needed }) => {
            assert_eq!((len, needed), (7, META_SIZE));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_value_of_exactly_the_expire_suffix_splits() {
    assert_eq!(
        split_expire(&[0x10, 0x20, 0x30, 0x40]),
        Some((&[][..], 0x4030_2010))
    );
    assert_eq!(split_expire(&[1, 2, 3]), None);
    assert_eq!(split_expire(&[9, 1, 0, 0, 0]), Some((&[9u8][..], 1)));
}

#[test]
fn resuming_cfb_without_enough_ciphertext_names_the_missing_offset() {
    use mmkv_reader::crypto::CfbDecryptor;
    let iv = [3u8; 16];
    let key = &mmkv_reader::CryptKey::aes128(b"key").unwrap();
    // Offset 40 (8 into its block) needs the 8 bytes of the block and the 16 before: 24.
    match CfbDecryptor::resume(key, &iv, 40, &[0u8; 10]) {
        Err(mmkv_reader::Error::UnexpectedEnd { offset }) => assert_eq!(offset, 30),
        other => panic!("{other:?}"),
    }
    let d = CfbDecryptor::resume(key, &iv, 40, &[0u8; 24]).expect("enough");
    assert_eq!(format!("{d:?}"), "CfbDecryptor");
}

#[test]
fn an_unknown_type_name_lists_the_known_ones() {
    use mmkv_reader::decode::ValueType;
    let err = "no-such-type".parse::<ValueType>().unwrap_err().to_string();
    let names: Vec<&str> = ValueType::ALL.iter().map(|t| t.name()).collect();
    assert_eq!(
        err,
        format!(
            "unknown type \"no-such-type\" (expected one of: {})",
            names.join(", ")
        )
    );
}

#[test]
fn options_show_what_was_set() {
    use mmkv_reader::Options;
    let shown = format!(
        "{:?}",
        Options::new()
            .crypt_key("k")
            .aes256(true)
            .recover(true)
            .lock_timeout(std::time::Duration::from_millis(5))
    );
    for part in [
        "Options",
        "encrypted: true",
        "aes256: true",
        "Recover",
        "lock_timeout: 5ms",
    ] {
        assert!(shown.contains(part), "{part} not in {shown}");
    }
    let default = format!("{:?}", Options::default());
    assert!(default.contains("encrypted: false") && default.contains("lock_timeout: 100ms"));
}

/// A v2 meta file of `len` bytes (actual size in the data header) and an empty data file.
fn v2_store(dir: &std::path::Path, len: usize) -> std::path::PathBuf {
    let path = dir.join(format!("v2-{len}"));
    std::fs::write(&path, vec![0u8; 4096]).unwrap();
    let mut crc = path.clone().into_os_string();
    crc.push(".crc");
    std::fs::write(&crc, meta(2, len)).unwrap();
    path
}

#[test]
fn a_store_needs_its_meta_through_the_actual_size() {
    use mmkv_reader::{Options, Store};
    let dir = tempfile::tempdir().unwrap();
    // 32 bytes (through the actual-size field the check-on-read maps) opens.
    let store = Store::open(v2_store(dir.path(), 32), Options::new()).expect("32-byte meta");
    assert_eq!(store.len(), 0);
    let shown = format!("{store:?}");
    assert!(
        shown.starts_with("Store") && shown.contains("v2-32") && shown.contains("stats"),
        "{shown}"
    );
    // 30 bytes: enough for a v2 meta, not for the check-on-read.
    match Store::open(v2_store(dir.path(), 30), Options::new()) {
        Err(mmkv_reader::Error::MetaTooShort { len, needed }) => {
            assert_eq!((len, needed), (30, META_SIZE))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn store_contains_and_meta_match_its_snapshot() {
    use mmkv_reader::{Options, Store};
    let path = mmkv_corpus::corpus_root().join("v2.4.2/plain");
    let store = Store::open(&path, Options::new()).expect("corpus store");
    let snap = store.snapshot();
    let key = snap.keys().next().expect("a key").to_vec();
    assert!(store.contains(&key));
    assert!(!store.contains(b"no such key"));
    assert_eq!(store.meta(), *snap.meta());
    assert_ne!(store.meta().version, 0);
}

/// Now for the expiring stores below.
const NOW: u32 = 2_000_000_000;

/// A stored value with the 4-byte expire suffix (`t` = 0: never expires).
fn expiring(payload: &[u8], t: u32) -> Vec<u8> {
    let mut v = common::lp(payload);
    v.extend_from_slice(&t.to_le_bytes());
    v
}

#[test]
fn entries_of_an_expiring_store_are_its_live_keys_with_their_expire_times() {
    use mmkv_reader::meta::FLAG_KEY_EXPIRE;
    use mmkv_reader::{FixedClock, Options, Store};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("expiring");
    let recs: [(&[u8], Vec<u8>); 5] = [
        (b"never", expiring(b"n", 0)),
        (b"later", expiring(b"l", NOW + 100)),
        (b"next-second", expiring(b"s", NOW + 1)),
        (b"now", expiring(b"x", NOW)),
        (b"earlier", expiring(b"e", NOW - 100)),
    ];
    let refs: Vec<(&[u8], &[u8])> = recs.iter().map(|(k, v)| (*k, &v[..])).collect();
    common::write_plain_store(
        &p,
        &refs,
        common::MetaSpec {
            flags: FLAG_KEY_EXPIRE,
            ..common::MetaSpec::default()
        },
    );
    let st = Store::open(
        &p,
        Options::new().clock(std::sync::Arc::new(FixedClock(NOW))),
    )
    .unwrap();
    let snap = st.snapshot();
    assert!(snap.key_expire());
    let mut got: Vec<(Vec<u8>, Vec<u8>, u32)> = snap
        .entries()
        .map(|(k, v, t)| (k.to_vec(), v.to_vec(), t))
        .collect();
    got.sort();
    // a key expires at its expire time: "now" and "earlier" are gone, "never" (0) stays
    let want: Vec<(Vec<u8>, Vec<u8>, u32)> = vec![
        (b"later".to_vec(), common::lp(b"l"), NOW + 100),
        (b"never".to_vec(), common::lp(b"n"), 0),
        (b"next-second".to_vec(), common::lp(b"s"), NOW + 1),
    ];
    assert_eq!(got, want);
    // the same live set and times as the other getters
    for (k, v, t) in &want {
        assert_eq!(snap.expire_at(k), Some(*t));
        assert_eq!(snap.raw_value(k), Some(&v[..]));
    }
    assert_eq!(snap.len(), want.len());
    assert_eq!(snap.expire_at("now"), None);
    assert_eq!(snap.expire_at("earlier"), None);
}

#[test]
fn snapshot_handles_show_meta_and_key_count() {
    use mmkv_reader::{Options, Store};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("shown");
    common::write_plain_store(
        &p,
        &[(b"a", &common::lp(b"1")), (b"b", &common::lp(b"2"))],
        common::MetaSpec {
            sequence: 31,
            ..common::MetaSpec::default()
        },
    );
    let st = Store::open(&p, Options::new()).unwrap();
    let owned = format!("{:?}", st.snapshot());
    let view = format!("{:?}", st.view());
    for (shown, name) in [(&owned, "Snapshot {"), (&view, "SnapshotRef {")] {
        assert!(shown.starts_with(name), "{shown}");
        for part in ["meta: MetaInfo", "sequence: 31", "len: 2", "levels: 1"] {
            assert!(shown.contains(part), "{part} not in {shown}");
        }
    }
}

/// `levels`, `chunks` and `retained_bytes` as documented: one level and one buffer (the region)
/// after a full load, more after a partial reload, and the buffers hold the region's bytes.
#[test]
fn snapshot_counters_after_full_and_partial_loads() {
    use mmkv_reader::{Options, ReloadKind, Store};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("counted");
    let base: Vec<(Vec<u8>, Vec<u8>)> = (0..64u32)
        .map(|i| {
            (
                format!("key-{i:02}").into_bytes(),
                common::lp(b"base value"),
            )
        })
        .collect();
    let refs: Vec<(&[u8], &[u8])> = base.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    let region = common::write_plain_store(&p, &refs, common::MetaSpec::default());
    let st = Store::open(&p, Options::new()).unwrap();
    let full = st.snapshot();
    assert_eq!(full.region_len(), region.len());
    assert_eq!((full.levels(), full.chunks()), (1, 1));
    assert_eq!(full.retained_bytes(), region.len());

    // a writer appends one new key: a partial reload adds a level and a buffer for it
    let mut rec = Vec::new();
    common::record(&mut rec, b"appended", &common::lp(b"new"));
    common::append_stored(&p, &rec);
    assert_eq!(st.refresh(), Ok(true));
    assert_eq!(st.last_reload_kind(), Some(ReloadKind::Partial));
    let partial = st.snapshot();
    assert_eq!(partial.get_str("appended"), Some("new"));
    assert_eq!(partial.region_len(), region.len() + rec.len());
    assert!(partial.levels() > 1, "{partial:?}");
    assert!(partial.chunks() > 1, "{} chunk(s)", partial.chunks());
    // nothing was overwritten: every byte of the region is still live and retained
    assert_eq!(partial.retained_bytes(), partial.region_len());
    // the snapshot taken before keeps its own state
    assert_eq!((full.levels(), full.chunks()), (1, 1));
    assert_eq!(full.retained_bytes(), region.len());
}

#[test]
fn each_read_sync_says_how_the_load_was_read() {
    use mmkv_reader::ReadSync;
    let all = [ReadSync::Locked, ReadSync::Unlocked, ReadSync::NoMetaFile];
    let said: Vec<&str> = all.iter().map(|s| s.describe()).collect();
    assert!(said[0].contains("shared lock"), "{}", said[0]);
    assert!(said[1].contains("without lock"), "{}", said[1]);
    assert!(said[2].contains("no meta file"), "{}", said[2]);
}

/// A data file of exactly its 4-byte header whose sizes ask for more is not "too short" (that
/// is a file without a whole header): no region passes the CRC check.
#[test]
fn a_header_only_data_file_is_a_crc_mismatch_not_too_short() {
    use mmkv_reader::{load_bytes, Error, Options};
    let region = [0x80u8, 0x80, 0x80, 0x01, 1, b'k', 1, 7];
    let meta = common::meta_bytes(&region, common::MetaSpec::default());
    let data = (region.len() as u32).to_le_bytes();
    match load_bytes(&meta, &data, &Options::new()) {
        Err(Error::CrcMismatch {
            last_confirmed_tried,
            ..
        }) => assert!(last_confirmed_tried),
        other => panic!("{other:?}"),
    }
    match load_bytes(&meta, &data[..3], &Options::new()) {
        Err(Error::DataTooShort { len }) => assert_eq!(len, 3),
        other => panic!("{other:?}"),
    }
}
