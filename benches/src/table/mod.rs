//! The speedup table: criterion estimates in, Markdown out.
//!
//! [`collect`](collect::collect) reads every estimate named in [`crate::ids`] (plus the memory,
//! fixture and machine JSON files the benches write) from a criterion directory into a
//! [`Report`]; [`render`](render::render) evaluates the speed targets and turns the reports of
//! one or more architectures into Markdown, and [`replace_between`] swaps it into a document
//! between [`BEGIN_MARKER`] and [`END_MARKER`]. Everything is re-exported here.

use std::path::PathBuf;

pub mod collect;
pub mod render;

pub use collect::{
    arch_name, collect, estimate, parse_estimate, GetRow, Machine, OpenRow, Report, ScaleRow, Stat,
    ThreadsRow,
};
pub use render::{
    fmt_bytes, fmt_factor, fmt_num, fmt_ratio, render, render_runs, replace_between, utc_datetime,
    with_missing_arches, ArchRun, Target, ARCHES, BEGIN_MARKER, END_MARKER,
};

/// Errors of the table tool.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file is not the JSON expected.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The document lacks the markers, or they are out of order or repeated.
    #[error("markers: {0}")]
    Markers(String),
}
