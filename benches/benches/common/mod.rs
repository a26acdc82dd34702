//! Helpers shared by the bench binaries: the official library, store files, fixtures.
//!
//! Setup failures panic with a message: these are benchmarks, not library code.
#![allow(dead_code)] // each bench binary uses a subset

pub mod reads;

use std::path::{Path, PathBuf};
use std::time::Duration;

use mmkv_sys::{Instance, Mode, Official};

/// The newest official version built into mmkv-sys.
pub fn newest_official() -> Official {
    let tag = mmkv_sys::built_versions()
        .iter()
        .copied()
        .max_by_key(|t| mmkv_sys::versions::tag_number(t).unwrap_or(0))
        .expect("mmkv-sys built no official MMKV version (MMKV_VERSIONS=none?)");
    Official::load(tag).unwrap_or_else(|e| panic!("loading official MMKV {tag}: {e}"))
}

/// The data file of store `id` in `dir` (its meta file is the same path plus `.crc`).
pub fn data_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(id)
}

/// Copies store `from` (data + meta file) to store `to` in the same directory.
pub fn copy_store(dir: &Path, from: &str, to: &str) {
    for ext in ["", ".crc"] {
        let src = dir.join(format!("{from}{ext}"));
        let dst = dir.join(format!("{to}{ext}"));
        std::fs::copy(&src, &dst)
            .unwrap_or_else(|e| panic!("copy {} -> {}: {e}", src.display(), dst.display()));
    }
}

/// Opens store `id` with the official library.
pub fn open_official(official: &Official, dir: &Path, id: &str, mode: Mode) -> Instance {
    official
        .open(dir, id, mode, None, false)
        .unwrap_or_else(|e| panic!("official open {id}: {e}"))
}

/// A deterministic value of `len` bytes, different for each `seed`.
pub fn pattern(len: usize, seed: usize) -> Vec<u8> {
    (0..len)
        .map(|j| (j.wrapping_mul(31) ^ seed.wrapping_mul(7)) as u8)
        .collect()
}

/// Writes `keys` byte values of `value_len` bytes (`key-000000`...) with the official
/// library (single-process), closes the instance, and returns the keys.
pub fn write_bytes_store(
    official: &Official,
    dir: &Path,
    id: &str,
    keys: usize,
    value_len: usize,
) -> Vec<Vec<u8>> {
    let w = open_official(official, dir, id, Mode::Single);
    let names: Vec<Vec<u8>> = (0..keys)
        .map(|i| format!("key-{i:06}").into_bytes())
        .collect();
    for (i, k) in names.iter().enumerate() {
        let ok = w
            .set_bytes(k, &pattern(value_len, i), None)
            .unwrap_or_else(|e| panic!("official set: {e}"));
        assert!(ok, "official set_bytes refused key {i}");
    }
    assert_eq!(w.count().expect("count"), keys as u64);
    w.sync().expect("sync");
    w.close().expect("close");
    names
}

/// Total time of `iters` `Store::open` + first access (`len`) of the store at `path`, which
/// must hold `keys` keys (the close is not timed): the body of the reader's open benches.
pub fn time_reader_open(path: &Path, keys: u64, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let t = std::time::Instant::now();
        let s = mmkv_reader::Store::open(path, mmkv_reader::Options::new()).expect("reader open");
        let n = s.len();
        total += t.elapsed();
        assert_eq!(std::hint::black_box(n) as u64, keys);
        drop(s);
    }
    total
}

/// The reader's view of a store's actual data size, in bytes.
pub fn data_size(path: &Path) -> u64 {
    let s = mmkv_reader::Store::open(path, mmkv_reader::Options::new())
        .unwrap_or_else(|e| panic!("reader open {}: {e}", path.display()));
    s.snapshot().region_len() as u64
}

/// Cycles through `keys` (same order for every implementation).
pub struct Cycle<'a> {
    keys: &'a [Vec<u8>],
    at: usize,
}

impl<'a> Cycle<'a> {
    /// Starts at the first key.
    pub fn new(keys: &'a [Vec<u8>]) -> Cycle<'a> {
        assert!(!keys.is_empty());
        Cycle { keys, at: 0 }
    }

    /// The next key.
    #[inline(always)]
    pub fn next_key(&mut self) -> &'a [u8] {
        let k = &self.keys[self.at];
        self.at += 1;
        if self.at == self.keys.len() {
            self.at = 0;
        }
        k
    }
}

/// Short settings for nanosecond-scale benchmarks.
pub fn fast_group(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    g.warm_up_time(Duration::from_millis(800))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50);
}

/// Writes a fixture description next to criterion's results (best effort: a failure is reported).
pub fn record_fixture(bench: &str, info: &benches::memory::FixtureInfo) {
    if let Err(e) = benches::paths::write_json(&benches::ids::fixture_file(bench), info) {
        eprintln!("warning: cannot write the {bench} fixture description: {e}");
    }
}
