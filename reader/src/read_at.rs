//! Positional reads from a data file's content, in memory or on disk (after gimli-rs/object's
//! `ReadRef`): the one way the locator and the loaders read a data file. A byte slice is a
//! source ([`ReadAt`] for `[u8]`), and so is an open file ([`DataFile`]: `pread` into owned
//! memory, the CRC computed while reading).

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};
use crate::parse::u32_zero_filled;

/// Positional reads from the data file's content.
pub trait ReadAt {
    /// The content's length in bytes.
    fn len(&self) -> Result<u64>;

    /// Exactly `len` bytes at `offset`; `offset + len` never exceeds [`ReadAt::len`] when the
    /// locator calls it. A source that became shorter reports an error.
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>>;

    /// [`ReadAt::read_at`] and the CRC-32 of the bytes (a file source computes it while it
    /// reads).
    fn read_at_crc(&self, offset: u64, len: usize) -> Result<(Vec<u8>, u32)> {
        let bytes = self.read_at(offset, len)?;
        let crc = crc32fast::hash(&bytes);
        Ok((bytes, crc))
    }

    /// The content is empty.
    fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

impl ReadAt for [u8] {
    fn len(&self) -> Result<u64> {
        Ok(<[u8]>::len(self) as u64)
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match start.checked_add(len).and_then(|end| self.get(start..end)) {
            Some(s) => Ok(s.to_vec()),
            None => Err(Error::Truncated {
                expected: offset.saturating_add(len as u64),
                got: <[u8]>::len(self) as u64,
            }),
        }
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn len(&self) -> Result<u64> {
        (**self).len()
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        (**self).read_at(offset, len)
    }

    fn read_at_crc(&self, offset: u64, len: usize) -> Result<(Vec<u8>, u32)> {
        (**self).read_at_crc(offset, len)
    }
}

/// The data file as a [`ReadAt`] source (positional reads, current length).
pub(crate) struct DataFile<'a> {
    pub file: &'a File,
    pub path: &'a Path,
}

impl ReadAt for DataFile<'_> {
    fn len(&self) -> Result<u64> {
        crate::fsio::file_len(self.file, self.path)
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        crate::fsio::read_at(self.file, self.path, offset, len)
    }

    fn read_at_crc(&self, offset: u64, len: usize) -> Result<(Vec<u8>, u32)> {
        crate::fsio::read_at_crc(self.file, self.path, offset, len)
    }
}

/// Bytes before the data region in the data file (the old-style actual size).
pub const HEADER_LEN: usize = 4;

/// The data file's 4-byte header (the old-style actual size) and the file's length; a file
/// shorter than the header is [`Error::DataTooShort`].
pub(crate) fn read_header<D: ReadAt + ?Sized>(data: &D) -> Result<(u32, u64)> {
    let len = data.len()?;
    let header = HEADER_LEN;
    if len < header as u64 {
        return Err(Error::DataTooShort { len });
    }
    Ok((u32_zero_filled(&data.read_at(0, header)?, 0), len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_reads_are_exact_or_truncated() {
        let b: &[u8] = &[1, 2, 3, 4, 5];
        assert_eq!(ReadAt::len(b), Ok(5));
        assert_eq!(b.read_at(1, 3), Ok(vec![2, 3, 4]));
        assert_eq!(
            b.read_at(3, 3),
            Err(Error::Truncated {
                expected: 6,
                got: 5
            })
        );
        assert_eq!(b.read_at_crc(0, 5), Ok((b.to_vec(), crc32fast::hash(b))));
        assert_eq!(read_header(b), Ok((0x0403_0201, 5)));
        assert_eq!(read_header(&b[..3]), Err(Error::DataTooShort { len: 3 }));
    }
}
