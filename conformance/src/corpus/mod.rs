//! Golden corpora: store sets written by official versions, with manifests.
//!
//! - [`golden`]: manifests and their check with the reader;
//! - [`pages`]: the page corpora (stores of 16 and 64 KiB writers) and their recording.

pub mod golden;
pub mod pages;
