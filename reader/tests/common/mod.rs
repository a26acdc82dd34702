//! Helpers shared by the integration tests: copying corpus stores, synthesizing stores and
//! records, and rewriting files the way a writer would (the meta file in place, never
//! truncated, as the official writer does, because the reader keeps it mapped).
#![allow(dead_code)]

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub use mmkv_reader::test_support::{self, MetaSpec};

pub fn corpus() -> PathBuf {
    mmkv_corpus::corpus_root()
}

pub fn unhex(s: &str) -> Vec<u8> {
    mmkv_corpus::hex::decode(s).expect("hex")
}

pub fn crc_path(p: &Path) -> PathBuf {
    mmkv_reader::meta_path(p)
}

/// Copies corpus store `tag/id` into `dir` as `name`; returns the data path.
pub fn copy_store(dir: &Path, tag: &str, id: &str, name: &str) -> PathBuf {
    mmkv_corpus::copy_store(&corpus(), tag, id, dir, name).unwrap()
}

/// Appends one record (`key`, `value`) to `out`.
pub fn record(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    test_support::push_record(out, key, value);
}

/// A varint-length-prefixed payload (how strings and bytes are stored).
pub fn lp(b: &[u8]) -> Vec<u8> {
    test_support::length_prefixed(b)
}

/// A varint payload (how integers are stored).
pub fn vi(v: u64) -> Vec<u8> {
    test_support::varint_bytes(v)
}

/// Writes `bytes` at `offset` of an existing file without truncating it.
pub fn write_in_place(path: &Path, offset: u64, bytes: &[u8]) {
    let mut f = OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(bytes).unwrap();
}

pub fn read_u32(path: &Path, off: usize) -> u32 {
    let b = std::fs::read(path).unwrap();
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}

pub fn set_u32(path: &Path, off: u64, v: u32) {
    write_in_place(path, off, &v.to_le_bytes());
}

/// Builds the 4096-byte meta file content for a stored region.
pub fn meta_bytes(stored_region: &[u8], m: MetaSpec) -> Vec<u8> {
    m.bytes(stored_region)
}

/// Builds a data file: 4-byte header (the actual size) + region, zero-padded to a page multiple.
pub fn data_bytes(stored_region: &[u8]) -> Vec<u8> {
    test_support::data_bytes(stored_region, &[])
}

/// Writes a plaintext store at `path` from (key, value) records.
pub fn write_plain_store(path: &Path, recs: &[(&[u8], &[u8])], m: MetaSpec) -> Vec<u8> {
    let mut b = test_support::StoreBuilder::with_holder(vec![0x80, 0x80, 0x80, 0x01]);
    for (k, v) in recs {
        b.raw(k, v);
    }
    let region = b.region();
    test_support::write_store(path, &region, &[], &m).unwrap();
    region
}

/// Writes a meta file as the official writer does: in place, created when missing, never
/// truncated (a `Store` keeps it mapped; Windows refuses to truncate a mapped file).
pub fn write_meta(path: &Path, bytes: &[u8]) {
    test_support::write_meta(path, bytes).unwrap();
}

/// Appends already-stored bytes (ciphertext for encrypted stores) to the region of the store
/// at `path`, then updates the meta's crc and actual size in place (same sequence), like the
/// official writer's append. Returns the new actual size.
pub fn append_stored(path: &Path, stored: &[u8]) -> u32 {
    let cpath = crc_path(path);
    let meta = std::fs::read(&cpath).unwrap();
    let version = u32::from_le_bytes(meta[4..8].try_into().unwrap());
    let data = std::fs::read(path).unwrap();
    let actual = if version >= 3 {
        u32::from_le_bytes(meta[28..32].try_into().unwrap())
    } else {
        u32::from_le_bytes(data[0..4].try_into().unwrap())
    } as usize;
    let end = 4 + actual + stored.len();
    if end > data.len() {
        // grow the file like the writer does (zero-filled)
        let f = OpenOptions::new().write(true).open(path).unwrap();
        f.set_len((end.div_ceil(4096) * 4096) as u64).unwrap();
    }
    write_in_place(path, (4 + actual) as u64, stored);
    let mut region = data[4..4 + actual].to_vec();
    region.extend_from_slice(stored);
    let crc = crc32fast::hash(&region);
    let new_size = region.len() as u32;
    if version < 3 {
        set_u32(path, 0, new_size);
    }
    set_u32(&cpath, 28, new_size);
    set_u32(&cpath, 0, crc);
    new_size
}

/// Appends plaintext record bytes to an encrypted store: encrypts them as the continuation of
/// the region's CFB stream.
pub fn append_encrypted(path: &Path, key: &[u8], aes256: bool, plain: &[u8]) -> u32 {
    let crypt = mmkv_reader::CryptKey::new(key, aes256).unwrap();
    let raw = mmkv_reader::raw::read_raw(path, Some(crypt.clone())).unwrap();
    let iv = crypt.iv_for(&raw.meta);
    let mut whole = raw.region().to_vec();
    whole.extend_from_slice(plain);
    mmkv_reader::crypto::encrypt_cfb(&crypt, &iv, &mut whole);
    let stored_prefix = &raw.file[4..4 + raw.actual_size];
    assert_eq!(
        &whole[..raw.actual_size],
        stored_prefix,
        "CFB prefix must not change"
    );
    append_stored(path, &whole[raw.actual_size..])
}

/// One record `late` = "value" (an append the tests publish).
pub fn late_record() -> Vec<u8> {
    let mut rec = Vec::new();
    record(&mut rec, b"late", &lp(b"value"));
    rec
}

/// Holds an exclusive lock on `file` through a handle of its own (a writer's lock: a store's
/// shared attempts fail until it is dropped).
#[cfg(unix)]
pub fn writer_lock(file: &Path) -> std::fs::File {
    let f = std::fs::File::open(file).unwrap();
    f.lock().unwrap();
    f
}

/// A plaintext store `dir/s` of `n` keys `key-NNNN` = "value N", its meta's last-confirmed
/// size and crc equal to the current ones. Returns the data path and the stored region.
pub fn numbered_store(dir: &Path, n: u32) -> (PathBuf, Vec<u8>) {
    let p = dir.join("s");
    let recs: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
        .map(|i| {
            (
                format!("key-{i:04}").into_bytes(),
                lp(format!("value {i}").as_bytes()),
            )
        })
        .collect();
    let refs: Vec<(&[u8], &[u8])> = recs.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    let region = write_plain_store(&p, &refs, MetaSpec::default());
    (p, region)
}

/// The meta of an append of `rec` to `region` (crc and actual size), without the data: what a
/// reader sees if the data it describes is not (or not yet) in the file: its reload fails
/// unless the last-confirmed state serves.
pub fn publish_meta_only(p: &Path, region: &[u8], rec: &[u8]) {
    let mut grown = region.to_vec();
    grown.extend_from_slice(rec);
    let c = crc_path(p);
    set_u32(&c, 28, grown.len() as u32);
    set_u32(&c, 0, crc32fast::hash(&grown));
}
