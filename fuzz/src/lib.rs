//! Shared code of the mmkv-reader fuzz targets (see `harness`).
#![deny(missing_docs)]

#[cfg(feature = "official")]
pub mod differential;
pub mod harness;

use std::path::{Path, PathBuf};

/// Appends `p` to `out`, or, for a folder, every file below it in name order (the inputs a
/// replay tool is given on its command line).
pub fn input_files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(p)
            .expect("read dir")
            .flatten()
            .map(|e| e.path())
            .collect();
        v.sort();
        for f in v {
            input_files(&f, out);
        }
    } else {
        out.push(p.to_path_buf());
    }
}
