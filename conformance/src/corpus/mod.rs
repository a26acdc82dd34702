//! Golden corpora: store sets written by official versions, with manifests.
//!
//! - [`golden`]: manifests and their check with the reader;

pub mod golden;
