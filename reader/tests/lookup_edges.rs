//! Lookups of keys and values of every length the snapshot's key table handles apart (written
//! for surviving mutants of `snapshot/level.rs`, docs/mutation-testing.md): keys compare equal only
//! when every byte is equal, whatever their length (short keys byte by byte, 4 to 16 bytes by
//! two overlapping loads, longer keys word by word), and a value is the whole length-prefixed
//! run after its key, for one-, two- and three-byte lengths. Through the public load path only
//! (`load_bytes` on a store built by `test_support`).

mod common;

use common::*;
use mmkv_reader::test_support::{data_bytes, StoreBuilder};
use mmkv_reader::{load_bytes, Options, Snapshot};

/// Loads the plaintext region built by `b`.
fn load(b: &StoreBuilder) -> Snapshot {
    let region = b.region();
    let (snap, _) = load_bytes(
        &MetaSpec::default().bytes(&region),
        &data_bytes(&region, &[]),
        &Options::new(),
    )
    .expect("the built store loads");
    snap
}

/// A key of `len` bytes, all `b'k'` but for `id` as 8 hex digits in the middle: keys of one
/// length differ only away from both ends (not in their first or last 8 bytes when `len` is
/// 24 or more), where a comparison that skips words would not look.
fn key(len: usize, id: u32) -> Vec<u8> {
    let mut k = vec![b'k'; len];
    let tag = format!("{id:08x}");
    let n = tag.len().min(len);
    let at = (len - n) / 2;
    k[at..at + n].copy_from_slice(&tag.as_bytes()[..n]);
    k
}

#[test]
fn long_keys_differing_only_in_the_middle_are_different_keys() {
    // Lengths past 16 bytes (the word-by-word comparison): with a last word that does and does
    // not overlap the previous one, and past 64 bytes.
    let lengths = [24usize, 25, 31, 32, 33, 40, 72, 100];
    let ids = 0..900u32;
    let present = |id: u32| id.is_multiple_of(3);
    let mut b = StoreBuilder::new(4);
    for &len in &lengths {
        for id in ids.clone().filter(|&id| present(id)) {
            b.raw(&key(len, id), &lp(format!("{len}/{id}").as_bytes()));
        }
    }
    let snap = load(&b);
    assert_eq!(snap.len(), lengths.len() * 300);
    let mut wrong = Vec::new();
    for &len in &lengths {
        for id in ids.clone() {
            let got = snap.get_str(key(len, id));
            let want = present(id).then(|| format!("{len}/{id}"));
            if got.map(str::to_owned) != want {
                wrong.push((len, id, got.map(str::to_owned)));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong lookups, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(5)]
    );
}

#[test]
fn keys_of_every_length_find_exactly_themselves() {
    // 1 to 100 bytes: each length class of the comparison, and each key next to a key that
    // differs in one byte (the first, the middle or the last) and is absent.
    let mut b = StoreBuilder::new(4);
    for len in 1..=100usize {
        b.raw(&vec![b'a'; len], &lp(&len.to_le_bytes()));
    }
    let snap = load(&b);
    assert_eq!(snap.len(), 100);
    for len in 1..=100usize {
        let k = vec![b'a'; len];
        assert_eq!(
            snap.get_bytes(&k),
            Some(&len.to_le_bytes()[..]),
            "len {len}"
        );
        for at in [0, len / 2, len - 1] {
            let mut other = k.clone();
            other[at] = b'b';
            assert_eq!(snap.get_bytes(&other), None, "len {len}, byte {at} differs");
        }
        let mut longer = k.clone();
        longer.push(b'a');
        if len < 100 {
            assert!(snap.contains(&longer));
        }
        longer.push(b'b');
        assert!(!snap.contains(&longer), "len {}", len + 2);
    }
}

#[test]
fn values_of_one_two_and_three_byte_lengths_are_read_whole() {
    // Lengths whose varint has 1, 2 and 3 bytes, each class at its edges (127/128,
    // 16 383/16 384) and a length whose second byte is 0x80 (16 384 = 0x80 0x80 0x01).
    let lengths = [
        1usize, 2, 127, 128, 129, 255, 256, 300, 16_383, 16_384, 16_385, 70_000,
    ];
    let value = |len: usize| -> Vec<u8> { (0..len).map(|i| (i * 31 + len) as u8).collect() };
    let mut b = StoreBuilder::new(4);
    for len in lengths {
        b.raw(format!("v{len}").as_bytes(), &value(len));
    }
    // A non-minimal two-byte length (5 written as 0x85 0x00) is still a length of 5.
    let mut padded = vec![0x85, 0x00];
    padded.extend_from_slice(b"fives");
    b.records.extend_from_slice(&vi(6));
    b.records.extend_from_slice(b"padded");
    b.records.extend_from_slice(&padded);
    let snap = load(&b);
    for len in lengths {
        let got = snap.raw_value(format!("v{len}"));
        assert_eq!(got.map(<[u8]>::len), Some(len), "len {len}");
        assert_eq!(got, Some(&value(len)[..]), "len {len}");
    }
    assert_eq!(snap.raw_value("padded"), Some(&b"fives"[..]));
    let all: Vec<_> = snap.iter().map(|(k, v)| (k.to_vec(), v.len())).collect();
    assert_eq!(all.len(), lengths.len() + 1);
}
