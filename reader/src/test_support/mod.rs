//! Test support (feature `test-support`): one way to build MMKV stores byte by byte, and one
//! counting allocator, for the tests, fuzz targets and benches of the workspace.
//!
//! The builder writes what the official writer writes — records after an item-size holder,
//! a data file whose first 4 bytes are the actual size, padded to whole pages, and a one-page
//! meta file laid out as [`crate::meta`] reads it — and lets a test bend every field a damaged
//! or hand-made store may have. Nothing here is used by the reader itself.

mod alloc;
mod values;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

pub use alloc::{reset_thread_largest, thread_allocations, thread_largest, CountingAlloc};
pub use values::{encode_value, sample_values};

use crate::meta::{
    FLAG_KEY_EXPIRE, OFF_ACTUAL_SIZE, OFF_CRC, OFF_FLAGS, OFF_IV, OFF_LAST_CRC, OFF_LAST_SIZE,
    OFF_SEQUENCE, OFF_VERSION, VERSION_ACTUAL_SIZE, VERSION_FLAG,
};
use crate::varint::write_varint;

/// Page size of the data and meta files the official writer makes on a 4 KiB machine (the
/// `_paged` variants build a writer's files at other page sizes).
pub const PAGE: usize = 4096;

/// Appends one record: varint key length, key, varint value length, value.
pub fn push_record(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    write_varint(out, key.len() as u64);
    out.extend_from_slice(key);
    write_varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

/// `b` with a varint length prefix (how strings, bytes and containers are stored).
pub fn length_prefixed(b: &[u8]) -> Vec<u8> {
    let mut o = Vec::with_capacity(b.len() + 5);
    write_varint(&mut o, b.len() as u64);
    o.extend_from_slice(b);
    o
}

/// `v` as a varint (how integers and bools are stored).
pub fn varint_bytes(v: u64) -> Vec<u8> {
    let mut o = Vec::new();
    write_varint(&mut o, v);
    o
}

/// `v` as a varint padded to `width` bytes (continuation bits on zero groups), as MMKV's
/// fixed-width item-size holder is written. Bits of `v` beyond `7 * width` are dropped.
pub fn padded_varint(v: u32, width: usize) -> Vec<u8> {
    let mut v = u64::from(v);
    (0..width)
        .map(|i| {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if i + 1 < width {
                b | 0x80
            } else {
                b
            }
        })
        .collect()
}

/// The meta file's fields. [`MetaSpec::bytes`] computes the crc digest and actual size from
/// the stored region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaSpec {
    /// Meta version.
    pub version: u32,
    /// Full write-back count.
    pub sequence: u32,
    /// AES IV.
    pub iv: [u8; 16],
    /// Flags (bit 0: key expiration).
    pub flags: u64,
    /// Last-confirmed (size, crc); `None`: equal to the current ones.
    pub last_confirmed: Option<(u32, u32)>,
    /// Only the fields `version` has are written (as the official writer of that version
    /// does); `false` writes every field whatever the version.
    pub version_fields_only: bool,
}

impl Default for MetaSpec {
    /// Version 4, sequence 1, zero IV, no flags, last-confirmed equal to current.
    fn default() -> Self {
        MetaSpec {
            version: 4,
            sequence: 1,
            iv: [0; 16],
            flags: 0,
            last_confirmed: None,
            version_fields_only: false,
        }
    }
}

impl MetaSpec {
    /// The spec with key expiration on.
    pub fn key_expire(mut self) -> MetaSpec {
        self.flags |= FLAG_KEY_EXPIRE;
        self
    }

    /// The one-page meta file for a stored region (ciphertext when encrypted).
    pub fn bytes(&self, stored_region: &[u8]) -> Vec<u8> {
        self.bytes_paged(stored_region, PAGE)
    }

    /// [`MetaSpec::bytes`] as a writer with pages of `page` bytes makes it: one page long.
    pub fn bytes_paged(&self, stored_region: &[u8], page: usize) -> Vec<u8> {
        let crc = crc32fast::hash(stored_region);
        let size = u32::try_from(stored_region.len()).unwrap_or(u32::MAX);
        let (last_size, last_crc) = self.last_confirmed.unwrap_or((size, crc));
        let mut b = vec![0u8; page.max(crate::meta::META_SIZE)];
        let mut put = |off: usize, bytes: &[u8]| b[off..off + bytes.len()].copy_from_slice(bytes);
        put(OFF_CRC, &crc.to_le_bytes());
        put(OFF_VERSION, &self.version.to_le_bytes());
        put(OFF_SEQUENCE, &self.sequence.to_le_bytes());
        put(OFF_IV, &self.iv);
        let all = !self.version_fields_only;
        if all || self.version >= VERSION_ACTUAL_SIZE {
            put(OFF_ACTUAL_SIZE, &size.to_le_bytes());
            put(OFF_LAST_SIZE, &last_size.to_le_bytes());
            put(OFF_LAST_CRC, &last_crc.to_le_bytes());
        }
        if all || self.version >= VERSION_FLAG {
            put(OFF_FLAGS, &self.flags.to_le_bytes());
        }
        b
    }
}

/// The data file for a stored region: the 4-byte actual size, the region, `tail` (bytes left
/// after the region, e.g. from before a write-back), zero-padded to whole pages (at least one).
pub fn data_bytes(stored_region: &[u8], tail: &[u8]) -> Vec<u8> {
    data_bytes_paged(stored_region, tail, PAGE)
}

/// [`data_bytes`] as a writer with pages of `page` bytes makes it (padded to its pages).
pub fn data_bytes_paged(stored_region: &[u8], tail: &[u8], page: usize) -> Vec<u8> {
    let page = page.max(1);
    let size = u32::try_from(stored_region.len()).unwrap_or(u32::MAX);
    let mut d = size.to_le_bytes().to_vec();
    d.extend_from_slice(stored_region);
    d.extend_from_slice(tail);
    d.resize(d.len().div_ceil(page).max(1) * page, 0);
    d
}

/// Writes a meta file as the official writer does: in place, created when missing, never
/// truncated (a reader keeps it mapped; Windows refuses to truncate a mapped file).
pub fn write_meta(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?
        .write_all(bytes)
}

/// Writes the store `path` (data file) and `path.crc` from a stored region.
pub fn write_store(
    path: &Path,
    stored_region: &[u8],
    tail: &[u8],
    meta: &MetaSpec,
) -> std::io::Result<()> {
    write_store_paged(path, stored_region, tail, meta, PAGE)
}

/// [`write_store`] as a writer with pages of `page` bytes does: both files in its pages.
pub fn write_store_paged(
    path: &Path,
    stored_region: &[u8],
    tail: &[u8],
    meta: &MetaSpec,
    page: usize,
) -> std::io::Result<()> {
    std::fs::write(path, data_bytes_paged(stored_region, tail, page))?;
    write_meta(
        &crate::meta_path(path),
        &meta.bytes_paged(stored_region, page),
    )
}

/// A plaintext region built record by record after an item-size holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreBuilder {
    /// The item-size holder's bytes.
    pub holder: Vec<u8>,
    /// The records' bytes, in order.
    pub records: Vec<u8>,
    /// Key expiration is on: every value written by [`set`](Self::set) gets a 4-byte expire
    /// time.
    pub key_expire: bool,
}

impl StoreBuilder {
    /// A region whose holder is a zero padded to `width` bytes.
    pub fn new(width: usize) -> StoreBuilder {
        StoreBuilder::with_holder(padded_varint(0, width))
    }

    /// A region with these holder bytes.
    pub fn with_holder(holder: Vec<u8>) -> StoreBuilder {
        StoreBuilder {
            holder,
            records: Vec::new(),
            key_expire: false,
        }
    }

    /// Appends `key = payload` (with expire time `expire` when key expiration is on).
    pub fn set(&mut self, key: &[u8], payload: &[u8], expire: u32) -> &mut StoreBuilder {
        let mut value = payload.to_vec();
        if self.key_expire {
            value.extend_from_slice(&expire.to_le_bytes());
        }
        push_record(&mut self.records, key, &value);
        self
    }

    /// Appends a record whose stored value is exactly `value` (no expire suffix added).
    pub fn raw(&mut self, key: &[u8], value: &[u8]) -> &mut StoreBuilder {
        push_record(&mut self.records, key, value);
        self
    }

    /// Appends a deletion marker (an empty value) for `key`.
    pub fn remove(&mut self, key: &[u8]) -> &mut StoreBuilder {
        push_record(&mut self.records, key, &[]);
        self
    }

    /// The plaintext region: holder then records.
    pub fn region(&self) -> Vec<u8> {
        let mut r = self.holder.clone();
        r.extend_from_slice(&self.records);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::MetaInfo;

    #[test]
    fn meta_round_trips_through_the_parser() {
        let region = StoreBuilder::new(4).set(b"k", &[1], 0).region();
        let spec = MetaSpec {
            version: 4,
            sequence: 9,
            iv: [7; 16],
            last_confirmed: Some((3, 4)),
            ..MetaSpec::default()
        }
        .key_expire();
        let m = MetaInfo::parse(&spec.bytes(&region)).unwrap();
        assert_eq!(m.crc_digest, crc32fast::hash(&region));
        assert_eq!((m.version, m.sequence, m.iv), (4, 9, [7; 16]));
        assert_eq!(m.actual_size as usize, region.len());
        assert_eq!((m.last_confirmed_size, m.last_confirmed_crc), (3, 4));
        assert!(m.key_expire());
        let old = MetaSpec {
            version: 2,
            flags: 1,
            version_fields_only: true,
            ..MetaSpec::default()
        };
        let b = old.bytes(&region);
        assert!(b[OFF_ACTUAL_SIZE..].iter().all(|&x| x == 0));
    }

    #[test]
    fn data_and_holder() {
        let d = data_bytes(&[1, 2, 3], &[9]);
        assert_eq!(d.len(), PAGE);
        assert_eq!(&d[..8], &[3, 0, 0, 0, 1, 2, 3, 9]);
        assert_eq!(data_bytes(&vec![0; PAGE], &[]).len(), 2 * PAGE);
        assert_eq!(padded_varint(0, 4), [0x80, 0x80, 0x80, 0]);
        assert_eq!(padded_varint(300, 2), [0xac, 0x02]);
        let mut b = StoreBuilder::new(1);
        b.key_expire = true;
        b.set(b"a", &[5], 7).remove(b"a");
        assert_eq!(b.region(), [0, 1, b'a', 5, 5, 7, 0, 0, 0, 1, b'a', 0]);
        assert_eq!(length_prefixed(b"xy"), [2, b'x', b'y']);
        assert_eq!(varint_bytes(300), [0xac, 0x02]);
    }
}
