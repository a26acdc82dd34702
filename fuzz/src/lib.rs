//! Shared code of the mmkv-reader fuzz targets (see `harness`).
#![deny(missing_docs)]

#[cfg(feature = "official")]
pub mod differential;
pub mod harness;
