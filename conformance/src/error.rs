//! The crate's error type.

use std::path::PathBuf;

/// Errors of the harness itself (not mismatches: those are reported as data).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// File-system failure.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A corpus manifest or folder that cannot be read or parsed.
    #[error(transparent)]
    Manifest(#[from] mmkv_corpus::ManifestError),
    /// A YAML repro that cannot be parsed.
    #[error("workload {path}: {message}")]
    Workload {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The official library failed (load, open, or a call that should work).
    #[error("official library {tag}: {message}")]
    Official {
        /// The version.
        tag: String,
        /// What failed.
        message: String,
    },
    /// The reader could not open a store at all.
    #[error("reader: {0}")]
    Reader(String),
    /// Anything else (bad arguments ...).
    #[error("{0}")]
    Other(String),
}

impl Error {
    /// Wraps an I/O error with its path.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;
