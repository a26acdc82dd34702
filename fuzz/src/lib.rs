//! Shared code of the mmkv-reader fuzz targets (see `harness`).
#![deny(missing_docs)]

pub mod harness;
