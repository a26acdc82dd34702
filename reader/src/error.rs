//! The crate's single error type.

use std::path::{Path, PathBuf};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while reading an MMKV store.
///
/// The enum is `Clone` so the latest reload failure can be kept and handed out
/// by [`crate::Store::last_reload_error`]. I/O errors are therefore stored as
/// their [`std::io::ErrorKind`] plus message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system level I/O failure.
    #[error("I/O error on {path}: {message}")]
    Io {
        /// The file the operation was about.
        path: PathBuf,
        /// The error kind reported by the OS.
        kind: std::io::ErrorKind,
        /// The OS message.
        message: String,
    },
    /// The meta file (`PATH.crc`) does not exist.
    #[error("meta file {path} not found")]
    MetaMissing {
        /// Path of the missing meta file.
        path: PathBuf,
    },
    /// The data file does not exist.
    #[error("data file {path} not found")]
    DataMissing {
        /// Path of the missing data file.
        path: PathBuf,
    },
    /// A path that should be a regular file is a directory or a special file.
    #[error("{path} is not a regular file")]
    NotAFile {
        /// The offending path.
        path: PathBuf,
    },
    /// The meta file is shorter than its version requires.
    #[error("meta file too short: {len} bytes, need {needed}")]
    MetaTooShort {
        /// Bytes available.
        len: usize,
        /// Bytes needed.
        needed: usize,
    },
    /// The data file is shorter than its 4-byte header.
    #[error("data file too short: {len} bytes")]
    DataTooShort {
        /// Bytes available.
        len: u64,
    },
    /// The actual size (from the meta or the data-file header) does not fit in the data file,
    /// and no last-confirmed size/crc could be used instead.
    #[error("actual size {actual_size} does not fit in a data file of {file_size} bytes")]
    ActualSizeBeyondFile {
        /// The claimed size of the data region.
        actual_size: u64,
        /// The data file's length.
        file_size: u64,
    },
    /// The data file became shorter while it was being read.
    #[error("data file truncated while reading: expected {expected} bytes, got {got}")]
    Truncated {
        /// Bytes that should have been readable.
        expected: u64,
        /// Bytes actually read.
        got: u64,
    },
    /// The CRC-32 of the stored data region does not match the meta file, and the
    /// last-confirmed size/crc (when the meta has them) did not match either.
    #[error("CRC mismatch: meta says {expected:#010x}, data region has {actual:#010x} (last-confirmed fallback tried: {last_confirmed_tried})")]
    CrcMismatch {
        /// The digest recorded in the meta file.
        expected: u32,
        /// The digest computed over the stored region.
        actual: u32,
        /// Whether a last-confirmed size/crc fallback was attempted (meta version >= 3).
        last_confirmed_tried: bool,
    },
    /// A varint that is longer than 10 bytes (or 64-bit overflowing), as the official decoder rejects.
    #[error("malformed varint at region offset {offset}")]
    MalformedVarint {
        /// Offset of the varint's first byte.
        offset: usize,
    },
    /// The input ended in the middle of an item.
    #[error("unexpected end of data at region offset {offset}")]
    UnexpectedEnd {
        /// Offset where a byte was missing.
        offset: usize,
    },
    /// A length prefix is negative as a 32-bit signed number.
    #[error("negative length {len} at region offset {offset}")]
    NegativeLength {
        /// Offset of the length varint.
        offset: usize,
        /// The decoded length.
        len: i32,
    },
    /// A length prefix points past the end of the region.
    #[error("length {len} at region offset {offset} exceeds the {remaining} remaining bytes")]
    LengthPastEnd {
        /// Offset of the length varint.
        offset: usize,
        /// The decoded length.
        len: u64,
        /// Bytes left after the length prefix.
        remaining: usize,
    },
    /// The store was opened with a crypt key and its decrypted content does not parse:
    /// wrong key, wrong AES-256 flag, or corrupted ciphertext.
    #[error("encrypted content does not decode (wrong key, wrong aes256 flag or corrupt data): {source}")]
    Undecryptable {
        /// The parse error seen on the decrypted content.
        #[source]
        source: Box<Error>,
    },
    /// A page size the reader cannot follow: not a power of two from 4 KiB to 64 KiB
    /// ([`crate::page::validate_page_size`]).
    #[error("invalid page size {size}: a power of two from 4096 to 65536 is needed")]
    InvalidPageSize {
        /// The size given.
        size: u64,
    },
    /// The meta file's length is not one 4, 16 or 64 KiB page, so the writer's page size
    /// cannot be inferred from it ([`crate::page::infer_page_size`]).
    #[error("page size not inferred: a .crc of {meta_len} bytes is not one 4, 16 or 64 KiB page")]
    PageSizeNotInferred {
        /// The meta file's length.
        meta_len: u64,
    },
    /// A writer kept changing the store while it was read without the lock (the lock stayed
    /// taken past the timeout): no consistent view was had. Not a fault of the file; a
    /// [`Store`](crate::Store) keeps serving its previous snapshot, counts the attempt in
    /// [`ReloadStats::busy`](crate::ReloadStats::busy) and tries again on the next read.
    #[error(
        "a writer kept changing the store during {attempts} reads without the lock; try again"
    )]
    Busy {
        /// Optimistic reads tried.
        attempts: u32,
    },
}

impl Error {
    /// Builds an [`Error::Io`] (or a more specific variant for common cases) from an I/O error.
    pub fn io(path: &Path, err: &std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            kind: err.kind(),
            message: err.to_string(),
        }
    }

    /// True for the errors that come from parsing the record stream
    /// (as opposed to I/O, meta or CRC problems).
    pub fn is_parse_error(&self) -> bool {
        matches!(
            self,
            Error::MalformedVarint { .. }
                | Error::UnexpectedEnd { .. }
                | Error::NegativeLength { .. }
                | Error::LengthPastEnd { .. }
                | Error::Undecryptable { .. }
        )
    }
}
