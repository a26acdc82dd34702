//! The one error type of the `mmkv` tool. Every variant names the file or argument at fault; `main`
//! prints it on stderr and exits with status 1.

use std::path::PathBuf;

/// Everything that makes an `mmkv` command fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The reader could not read the store (missing or short `.crc`, actual size beyond the file, I/O, ...).
    #[error("{path}: {source}")]
    Reader {
        /// The data file given on the command line.
        path: PathBuf,
        /// What the reader reported.
        #[source]
        source: mmkv_reader::Error,
    },
    /// The meta file is missing (without `--recover`).
    #[error("{path}: meta file {meta} not found; --recover reads the data file by its header size, unverified (what OnErrorRecover reads)")]
    MetaMissing {
        /// The data file.
        path: PathBuf,
        /// The missing meta file.
        meta: PathBuf,
    },
    /// No region passes the official loader's CRC check and the strategy is the official
    /// default: the official library would open the store empty.
    #[error("{path}: {detail}")]
    Discarded {
        /// The data file.
        path: PathBuf,
        /// Why, and what the official library does.
        detail: String,
    },
    /// No key was given, the data region does not parse, and the meta rules encryption out
    /// (version >= 2 with an all-zero IV): the store is damaged, not encrypted.
    #[error(
        "{path}: the {region_len}-byte data region does not parse as records ({detail}); \
         not encrypted (meta version {version} with an all-zero IV): the store is damaged"
    )]
    Unparsable {
        /// The data file.
        path: PathBuf,
        /// Length of the data region.
        region_len: usize,
        /// Meta version.
        version: u32,
        /// Where and why parsing stopped.
        detail: String,
    },
    /// No key was given and the data region does not parse as records to its last byte.
    #[error(
        "{path}: looks encrypted; pass --crypt-key (or --crypt-key-hex) \
         (the {region_len}-byte data region does not parse as plaintext records: {detail})"
    )]
    LooksEncrypted {
        /// The data file.
        path: PathBuf,
        /// Length of the data region.
        region_len: usize,
        /// Where and why plaintext parsing stopped.
        detail: String,
    },
    /// A key was given but the decrypted region does not parse as records to its last byte.
    #[error("{path}: the key does not decrypt this store (the decrypted data region does not parse as records: {detail}){hint}")]
    WrongKey {
        /// The data file.
        path: PathBuf,
        /// Where and why parsing stopped.
        detail: String,
        /// A hint such as "; the store is AES-256: pass --aes256" (may be empty).
        hint: String,
    },
    /// The region parses, but holds no record with a key although its size says it holds data.
    #[error(
        "{path}: the data region is {region_len} bytes but holds no record \
         (only {holder_len} bytes of item-size holder would be expected); refusing to report an empty store"
    )]
    ZeroRecords {
        /// The data file.
        path: PathBuf,
        /// Length of the data region.
        region_len: usize,
        /// Length of the item-size holder.
        holder_len: usize,
    },
    /// The requested key is not a live key of the store.
    #[error("{path}: key {key:?} is not present (never written, removed or expired)")]
    KeyNotFound {
        /// The data file.
        path: PathBuf,
        /// The key (lossy UTF-8).
        key: String,
    },
    /// The value exists but the official getter for the requested type reports no value.
    #[error(
        "{path}: key {key:?} has no value readable as {ty} (the official getter reports none)"
    )]
    NoValueAs {
        /// The data file.
        path: PathBuf,
        /// The key (lossy UTF-8).
        key: String,
        /// The requested type.
        ty: String,
    },
    /// The output could not be serialized (JSON).
    #[error("cannot write the output as JSON: {0}")]
    Serialize(#[source] serde_json::Error),
    /// A command-line argument is malformed (bad hex, bad `--type` pin, ...).
    #[error("{0}")]
    BadArgument(String),
    /// An I/O error outside the reader (walking a directory, reading a meta file, writing output).
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// Result alias for the tool.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Wraps a reader error with the store's path.
    pub fn reader(path: impl Into<PathBuf>, source: mmkv_reader::Error) -> Self {
        Error::Reader {
            path: path.into(),
            source,
        }
    }
}
