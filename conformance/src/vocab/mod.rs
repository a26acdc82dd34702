//! The vocabulary every other module speaks.
//!
//! - [`clock`]: the one clock (precise and `time(nullptr)` seconds, waiting for a second);
//! - [`test_clock`]: one controllable clock for the official library and the reader;
//! - [`kind`]: store kinds (report columns) and version features;
//! - [`value`]: values and value types;
//! - [`merge`]: counters that add up (runs, cells, report shards);
//! - [`rng`]: the one seeded generator;
//! - [`seed`]: the base seed every suite draws from (`CONFORMANCE_SEED`);
//! - [`digest`]: plan digests (SHA-256 over what a seed drew);
//! - [`names`]: the writers' key names and store id;
//! - [`pool`]: work items on a bounded pool of threads, results in order, the progress bar
//!   (the report's rows, the fault suites' writer runs, the suite's grading).

pub mod clock;
pub mod digest;
pub mod kind;
pub mod merge;
pub mod names;
pub mod pool;
pub mod rng;
pub mod seed;
pub mod test_clock;
pub mod value;

pub use names::{key_index, key_name, STORE_ID};

/// The little-endian `u32` at byte `at` of `b` (0 past its end): a header or meta field.
pub fn le32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |h| u32::from_le_bytes([h[0], h[1], h[2], h[3]]))
}

/// The actual size the loader starts from: the meta's from meta version 3, else the data
/// file's header.
pub fn actual_size(data: &[u8], meta: &[u8]) -> u32 {
    use mmkv_reader::meta::{OFF_ACTUAL_SIZE, OFF_VERSION, VERSION_ACTUAL_SIZE};
    if le32(meta, OFF_VERSION) >= VERSION_ACTUAL_SIZE {
        le32(meta, OFF_ACTUAL_SIZE)
    } else {
        le32(data, 0)
    }
}
pub use rng::SplitMix;
