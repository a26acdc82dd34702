//! Error type shared by every part of the tracker.

use std::path::PathBuf;

/// Everything that can go wrong while tracking upstream releases or adding a version.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// versions.yaml (or a fixture) is not valid.
    #[error("{path}: invalid versions file: {message}")]
    Versions {
        /// The file involved (may be a placeholder for in-memory text).
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A tag argument is not of the form `vX.Y.Z`.
    #[error("{0:?} is not a release tag of the form vX.Y.Z")]
    BadTag(String),
    /// A `PACKAGE@VERSION` argument could not be split.
    #[error("{0:?} is not of the form PACKAGE@VERSION")]
    BadPackageSpec(String),
    /// An external command could not be started or failed.
    #[error("`{command}` failed: {message}")]
    Command {
        /// The command line, for the message.
        command: String,
        /// Its exit status and stderr, or the spawn error.
        message: String,
    },
    /// An external command's output could not be understood.
    #[error("unexpected output from `{command}`: {message}")]
    Output {
        /// The command line, for the message.
        command: String,
        /// What was wrong with it.
        message: String,
    },
    /// A packed npm tarball could not be read.
    #[error("{package}@{version}: cannot read package tarball: {message}")]
    Tarball {
        /// npm package name.
        package: String,
        /// npm package version.
        version: String,
        /// What went wrong.
        message: String,
    },
    /// The package contains no `MMKV/Core/MMKVPredef.h`.
    #[error("{package}@{version} does not embed MMKV Core (no Core/MMKVPredef.h in the tarball)")]
    NoEmbeddedCore {
        /// npm package name.
        package: String,
        /// npm package version.
        version: String,
    },
    /// The embedded Core is another MMKV version than the one asked for.
    #[error("{origin} embeds MMKV {found} (MMKVPredef.h), not the requested {requested}")]
    TagMismatch {
        /// The tag asked for on the command line.
        requested: String,
        /// The tag that `MMKVPredef.h` declares.
        found: String,
        /// Where the Core came from (package@version or a directory).
        origin: String,
    },
    /// The tarball's sha512 differs from the registry's recorded integrity.
    #[error(
        "{package}@{version}: integrity mismatch: computed {computed}, registry says {registry}"
    )]
    IntegrityMismatch {
        /// npm package name.
        package: String,
        /// npm package version.
        version: String,
        /// Integrity of the downloaded tarball.
        computed: String,
        /// Integrity the registry reports.
        registry: String,
    },
    /// The textual edit of versions.yaml failed or would have changed other entries.
    #[error("cannot edit versions.yaml: {0}")]
    Edit(String),
    /// The versions to build could not be planned (`plan-slices`, the anchors of `add-version`).
    #[error("cannot plan the versions to build: {0}")]
    Plan(String),
    /// A hunt summary is not valid JSON or lacks a field of its schema.
    #[error("{path}: invalid hunt summary: {message}")]
    HuntSummary {
        /// The summary file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A hunt summary has another schema than `conformance-hunt/3`.
    #[error(
        "{path}: unknown hunt summary schema {found:?} (this tracker reads conformance-hunt/3)"
    )]
    HuntSchema {
        /// The summary file.
        path: PathBuf,
        /// The schema it declares (`(none)` when it declares none).
        found: String,
    },
    /// No tag source could be read at all.
    #[error("no source of upstream tags could be read")]
    NoSources,
}

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
