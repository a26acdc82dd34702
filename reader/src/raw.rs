//! Forensic access: meta + data file without CRC enforcement.

use std::path::Path;

use crate::crypto::{decrypt_cfb, default_iv, normalize_key};
use crate::error::{Error, Result};
use crate::fsio::{file_len, meta_path, open_regular, read_at, read_prefix, SharedLock, Which};
use crate::load::{actual_size, fits, HEADER};
use crate::meta::{MetaInfo, META_SIZE};

/// A store read without verifying its CRC.
#[derive(Debug, Clone)]
pub struct RawStore {
    /// The parsed meta file.
    pub meta: MetaInfo,
    /// The whole data file.
    pub file: Vec<u8>,
    /// The data region (`file[4 .. 4 + actual_size]`), decrypted when a key was given.
    pub region: Vec<u8>,
    /// Offset of the region in `file` (always 4).
    pub region_offset: usize,
    /// The region size: the meta's when its version is >= 3, else the data-file header.
    pub actual_size: usize,
    /// CRC-32 of the stored region bytes equals `meta.crc_digest`.
    pub crc_ok: bool,
}

/// The IV the official library uses for a store with this meta and key.
pub fn store_iv(meta: &MetaInfo, key: &[u8], aes256: bool) -> [u8; 16] {
    if meta.has_iv() {
        meta.iv
    } else {
        default_iv(&normalize_key(key, aes256))
    }
}

/// Reads the store at `path` (meta at `PATH.crc`) under a shared lock on the meta file.
/// An empty `crypt_key` means "not encrypted", as with the official library.
///
/// Errors: missing / short meta, missing data file, a directory or special file, data
/// file shorter than its header, actual size beyond the file, I/O.
pub fn read_raw(path: &Path, crypt_key: Option<&[u8]>, aes256: bool) -> Result<RawStore> {
    let mpath = meta_path(path);
    let mfile = open_regular(&mpath, Which::Meta)?;
    let _lock = SharedLock::acquire(&mfile, &mpath)?;
    let mbytes = read_prefix(&mfile, &mpath, META_SIZE)?;
    let meta = MetaInfo::parse(&mbytes)?;
    let dfile = open_regular(path, Which::Data)?;
    let len = file_len(&dfile, path)?;
    if len < HEADER as u64 {
        return Err(Error::DataTooShort { len });
    }
    let len = usize::try_from(len).map_err(|_| Error::DataTooShort { len })?;
    let file = read_at(&dfile, path, 0, len)?;
    let header = u32::from_le_bytes([file[0], file[1], file[2], file[3]]);
    let actual = actual_size(&meta, header);
    if !fits(actual as u64, file.len() as u64) {
        return Err(Error::ActualSizeBeyondFile {
            actual_size: actual as u64,
            file_size: file.len() as u64,
        });
    }
    let actual = actual as usize;
    let mut region = file[HEADER..HEADER + actual].to_vec();
    let crc_ok = crc32fast::hash(&region) == meta.crc_digest;
    if let Some(key) = crypt_key.filter(|k| !k.is_empty()) {
        let iv = store_iv(&meta, key, aes256);
        decrypt_cfb(key, aes256, &iv, &mut region);
    }
    Ok(RawStore {
        meta,
        file,
        region,
        region_offset: HEADER,
        actual_size: actual,
        crc_ok,
    })
}
