//! Synthesized stores for format variants the corpora cover only partly: item-size holder
//! widths 1..=5, meta versions 1..4 (IV from the key before version 2, actual size from the
//! data-file header before version 3, flags only from version 4), "specious" versions >= 7 (v2.4.0+),
//! and the zero data-file header of v2.4.0+.

mod common;

use std::sync::Arc;

use common::*;
use mmkv_reader::crypto::encrypt_cfb;
use mmkv_reader::{FixedClock, Options, Store};

fn opts() -> Options {
    Options::new().clock(Arc::new(FixedClock(2_000_000_000)))
}

fn region_with_holder(holder: &[u8]) -> Vec<u8> {
    let mut r = holder.to_vec();
    record(&mut r, b"int", &vi(300));
    record(&mut r, b"str", &lp("héllo".as_bytes()));
    record(&mut r, b"gone", &vi(1));
    record(&mut r, b"gone", b"");
    r
}

fn check(st: &Store) {
    assert_eq!(st.get_i32("int"), Some(300));
    assert_eq!(st.get_string("str").as_deref(), Some("héllo"));
    assert!(!st.contains("gone"));
    assert_eq!(st.len(), 2);
}

#[test]
fn holder_widths_one_to_five() {
    let dir = tempfile::tempdir().unwrap();
    for holder in [
        &[0x05u8][..],
        &[0x80, 0x01],
        &[0x80, 0x80, 0x01],
        &[0x80, 0x80, 0x80, 0x01],
        &[0x80, 0x80, 0x80, 0x80, 0x01],
    ] {
        let p = dir.path().join(format!("h{}", holder.len()));
        let r = region_with_holder(holder);
        std::fs::write(&p, data_bytes(&r)).unwrap();
        std::fs::write(crc_path(&p), meta_bytes(&r, MetaSpec::default())).unwrap();
        let st = Store::open(&p, opts()).unwrap();
        check(&st);
        assert_eq!(mmkv_reader::records::holder_len(&r).unwrap(), holder.len());
    }
}

#[test]
fn encrypted_meta_versions_and_iv_choice() {
    let dir = tempfile::tempdir().unwrap();
    for (key, aes256) in [
        (&b"short"[..], false),
        (&b"a-32-byte-key-for-aes-256-tests!"[..], true),
    ] {
        for version in [1u32, 2, 3, 4] {
            let p = dir.path().join(format!("v{version}-{aes256}"));
            let mut r = region_with_holder(&[0x80, 0x80, 0x80, 0x01]);
            let meta_iv = [0x42u8; 16];
            let crypt = mmkv_reader::CryptKey::new(key, aes256).unwrap();
            // before meta version 2 the IV is the (padded) key itself
            let iv: [u8; 16] = if version >= 2 {
                meta_iv
            } else {
                crypt.iv_for(&mmkv_reader::meta::MetaInfo::default())
            };
            encrypt_cfb(&crypt, &iv, &mut r);
            let mut data = data_bytes(&r);
            if version >= 3 {
                // the meta's size wins: a stale header must not matter
                data[0..4].copy_from_slice(&0u32.to_le_bytes());
            }
            std::fs::write(&p, data).unwrap();
            let spec = MetaSpec {
                version,
                iv: meta_iv,
                ..MetaSpec::default()
            };
            let mut m = meta_bytes(&r, spec);
            if version < 3 {
                // fields of newer versions are ignored
                m[28..32].copy_from_slice(&0xffff_ffffu32.to_le_bytes());
            }
            std::fs::write(crc_path(&p), m).unwrap();
            let st = Store::open(&p, opts().crypt_key(key).aes256(aes256))
                .unwrap_or_else(|e| panic!("v{version} aes256={aes256}: {e}"));
            check(&st);
        }
    }
}

#[test]
fn flags_only_from_version_four_and_specious_versions() {
    let dir = tempfile::tempdir().unwrap();
    // values carrying an expire suffix
    let mut r = vec![0x80, 0x80, 0x80, 0x01];
    let mut v = vi(5);
    v.extend_from_slice(&1u32.to_le_bytes()); // expired long ago
    record(&mut r, b"k", &v);
    for (version, expire_on) in [
        (4u32, true),
        (3, false),
        (5, true),
        (6, true),
        (7, false),
        (99, false),
    ] {
        let p = dir.path().join(format!("f{version}"));
        std::fs::write(&p, data_bytes(&r)).unwrap();
        let spec = MetaSpec {
            version,
            flags: 1,
            ..MetaSpec::default()
        };
        std::fs::write(crc_path(&p), meta_bytes(&r, spec)).unwrap();
        let st = Store::open(&p, opts()).unwrap();
        assert_eq!(st.snapshot().key_expire(), expire_on, "version {version}");
        if expire_on {
            assert_eq!(st.get_i32("k"), None, "version {version}");
        } else {
            // without expiration the suffix is part of the value; the varint still decodes
            assert_eq!(st.get_i32("k"), Some(5), "version {version}");
            assert_eq!(st.raw_value("k").map(|v| v.len()), Some(5));
        }
    }
}

#[test]
fn expire_mode_short_values_are_kept_whole() {
    // The official getter strips the suffix only from values of at least 4 bytes.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s");
    let spec = MetaSpec {
        flags: 1,
        ..MetaSpec::default()
    };
    let long = {
        let mut v = vi(9);
        v.extend_from_slice(&0u32.to_le_bytes());
        v
    };
    write_plain_store(&p, &[(b"short", &[7u8, 0, 0][..]), (b"long", &long)], spec);
    let st = Store::open(&p, opts()).unwrap();
    assert_eq!(st.get_i32("short"), Some(7));
    assert_eq!(st.raw_value("short"), Some(vec![7, 0, 0]));
    assert_eq!(st.expire_at("short"), Some(0));
    assert_eq!(st.get_i32("long"), Some(9));
    assert_eq!(st.raw_value("long"), Some(vec![9]));
}

#[test]
fn empty_region_is_an_empty_store() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s");
    std::fs::write(&p, data_bytes(&[])).unwrap();
    std::fs::write(crc_path(&p), meta_bytes(&[], MetaSpec::default())).unwrap();
    let st = Store::open(&p, opts()).unwrap();
    assert!(st.is_empty());
    assert_eq!(st.keys().len(), 0);
}
