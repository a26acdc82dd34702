//! Helpers shared by the integration tests: copying corpus stores, synthesizing stores and
//! records, and rewriting files the way a writer would (the meta file in place, never
//! truncated, as the official writer does, because the reader keeps it mapped).
#![allow(dead_code)]

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use mmkv_reader::varint::write_varint;

pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

pub fn crc_path(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".crc");
    s.into()
}

/// Copies corpus store `tag/id` into `dir` as `name`; returns the data path.
pub fn copy_store(dir: &Path, tag: &str, id: &str, name: &str) -> PathBuf {
    let src = corpus().join(tag).join(id);
    let dst = dir.join(name);
    std::fs::copy(&src, &dst).unwrap();
    std::fs::copy(crc_path(&src), crc_path(&dst)).unwrap();
    dst
}

/// Appends one record (`key`, `value`) to `out`.
pub fn record(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    write_varint(out, key.len() as u64);
    out.extend_from_slice(key);
    write_varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

/// A varint-length-prefixed payload (how strings and bytes are stored).
pub fn lp(b: &[u8]) -> Vec<u8> {
    let mut o = Vec::new();
    write_varint(&mut o, b.len() as u64);
    o.extend_from_slice(b);
    o
}

/// A varint payload (how integers are stored).
pub fn vi(v: u64) -> Vec<u8> {
    let mut o = Vec::new();
    write_varint(&mut o, v);
    o
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

/// Meta fields for [`write_store`].
#[derive(Clone, Copy)]
pub struct MetaSpec {
    pub version: u32,
    pub sequence: u32,
    pub iv: [u8; 16],
    pub flags: u64,
    /// `None`: the last-confirmed size/crc equal the current ones.
    pub last_confirmed: Option<(u32, u32)>,
}

impl Default for MetaSpec {
    fn default() -> Self {
        MetaSpec {
            version: 4,
            sequence: 1,
            iv: [0; 16],
            flags: 0,
            last_confirmed: None,
        }
    }
}

/// Builds the 4096-byte meta file content for a stored region.
pub fn meta_bytes(stored_region: &[u8], m: MetaSpec) -> Vec<u8> {
    let crc = crc32fast::hash(stored_region);
    let size = stored_region.len() as u32;
    let (ls, lc) = m.last_confirmed.unwrap_or((size, crc));
    let mut b = vec![0u8; 4096];
    b[0..4].copy_from_slice(&crc.to_le_bytes());
    b[4..8].copy_from_slice(&m.version.to_le_bytes());
    b[8..12].copy_from_slice(&m.sequence.to_le_bytes());
    b[12..28].copy_from_slice(&m.iv);
    b[28..32].copy_from_slice(&size.to_le_bytes());
    b[32..36].copy_from_slice(&ls.to_le_bytes());
    b[36..40].copy_from_slice(&lc.to_le_bytes());
    b[104..112].copy_from_slice(&m.flags.to_le_bytes());
    b
}

/// Builds a data file: 4-byte header (the actual size) + region, zero-padded to a page multiple.
pub fn data_bytes(stored_region: &[u8]) -> Vec<u8> {
    let mut d = (stored_region.len() as u32).to_le_bytes().to_vec();
    d.extend_from_slice(stored_region);
    let page = 4096;
    let len = d.len().div_ceil(page) * page;
    d.resize(len.max(page), 0);
    d
}

/// Writes a plaintext store at `path` from (key, value) records.
pub fn write_plain_store(path: &Path, recs: &[(&[u8], &[u8])], m: MetaSpec) -> Vec<u8> {
    let mut region = vec![0x80, 0x80, 0x80, 0x01];
    for (k, v) in recs {
        record(&mut region, k, v);
    }
    std::fs::write(path, data_bytes(&region)).unwrap();
    write_meta(&crc_path(path), &meta_bytes(&region, m));
    region
}

/// Writes a meta file as the official writer does: in place, created when missing, never
/// truncated (a `Store` keeps it mapped; Windows refuses to truncate a mapped file).
pub fn write_meta(path: &Path, bytes: &[u8]) {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
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
    let raw = mmkv_reader::raw::read_raw(path, Some(key), aes256).unwrap();
    let iv = mmkv_reader::raw::store_iv(&raw.meta, key, aes256);
    let mut whole = raw.region.clone();
    whole.extend_from_slice(plain);
    mmkv_reader::crypto::encrypt_cfb(key, aes256, &iv, &mut whole);
    let stored_prefix = &raw.file[4..4 + raw.actual_size];
    assert_eq!(
        &whole[..raw.actual_size],
        stored_prefix,
        "CFB prefix must not change"
    );
    append_stored(path, &whole[raw.actual_size..])
}
