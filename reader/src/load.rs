//! Choosing and verifying the data region as the official loader does
//! (`MMKV::checkDataValid` / `checkLastConfirmedInfo`), without ever writing.

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};
use crate::fsio::{file_len, read_at};
use crate::meta::MetaInfo;

/// Bytes before the data region (the old-style actual size).
pub(crate) const HEADER: usize = 4;

/// Which size the verified region has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionSource {
    /// The actual size (meta or header) with the meta crc.
    Actual,
    /// The data-file header's size with the meta crc (meta version >= 3, "downgrade & upgrade").
    OldStyleHeader,
    /// The meta's last-confirmed size and crc.
    LastConfirmed,
}

/// A verified (or, for forensics, unverified) stored region.
pub(crate) struct Region {
    /// Stored (ciphertext when encrypted) bytes of the region.
    pub bytes: Vec<u8>,
    /// CRC-32 of `bytes`.
    pub crc: u32,
    /// Where its size came from.
    pub source: RegionSource,
}

/// Whether `size` bytes of region fit in a file of `file_size` bytes, by the official rule
/// (`size < fileSize && size + 4 <= fileSize`).
pub(crate) fn fits(size: u64, file_size: u64) -> bool {
    size + HEADER as u64 <= file_size
}

/// Reads the data file's header; a file shorter than 4 bytes is [`Error::DataTooShort`].
pub(crate) fn read_header(file: &File, path: &Path) -> Result<(u32, u64)> {
    let file_size = file_len(file, path)?;
    if file_size < HEADER as u64 {
        return Err(Error::DataTooShort { len: file_size });
    }
    let h = read_at(file, path, 0, HEADER)?;
    Ok((u32::from_le_bytes([h[0], h[1], h[2], h[3]]), file_size))
}

/// The actual size the official loader uses: the meta's when its version is >= 3, else the
/// data-file header.
pub(crate) fn actual_size(meta: &MetaInfo, header: u32) -> u32 {
    if meta.has_actual_size() {
        meta.actual_size
    } else {
        header
    }
}

fn read_region(file: &File, path: &Path, size: u32) -> Result<(Vec<u8>, u32)> {
    let bytes = read_at(file, path, HEADER as u64, size as usize)?;
    let crc = crc32fast::hash(&bytes);
    Ok((bytes, crc))
}

/// Reads the region and verifies its CRC, falling back like the official loader:
/// first the header's size with the meta crc (when it differs from the meta's actual size),
/// then the last-confirmed size/crc; both only for meta version >= 3.
pub(crate) fn read_verified(file: &File, path: &Path, meta: &MetaInfo) -> Result<Region> {
    let (header, file_size) = read_header(file, path)?;
    let actual = actual_size(meta, header);
    let mut first_err = None;
    if fits(actual as u64, file_size) {
        let (bytes, crc) = read_region(file, path, actual)?;
        if crc == meta.crc_digest {
            return Ok(Region {
                bytes,
                crc,
                source: RegionSource::Actual,
            });
        }
        first_err = Some(Error::CrcMismatch {
            expected: meta.crc_digest,
            actual: crc,
            last_confirmed_tried: meta.has_actual_size(),
        });
    }
    if meta.has_actual_size() {
        if header != actual && fits(header as u64, file_size) {
            let (bytes, crc) = read_region(file, path, header)?;
            if crc == meta.crc_digest {
                return Ok(Region {
                    bytes,
                    crc,
                    source: RegionSource::OldStyleHeader,
                });
            }
        }
        let last = meta.last_confirmed_size;
        if fits(last as u64, file_size) {
            let (bytes, crc) = read_region(file, path, last)?;
            if crc == meta.last_confirmed_crc {
                return Ok(Region {
                    bytes,
                    crc,
                    source: RegionSource::LastConfirmed,
                });
            }
        }
    }
    Err(first_err.unwrap_or(Error::ActualSizeBeyondFile {
        actual_size: actual as u64,
        file_size,
    }))
}
