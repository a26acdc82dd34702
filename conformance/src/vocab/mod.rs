//! The vocabulary every other module speaks.
//!
//! - [`clock`]: the one clock (precise and `time(nullptr)` seconds, waiting for a second);
//! - [`test_clock`]: one controllable clock for the official library and the reader;
//! - [`kind`]: store kinds (report columns) and version features;
//! - [`value`]: values and value types;
//! - [`merge`]: counters that add up (runs, cells, report shards);
//! - [`rng`]: the one seeded generator;
//! - [`names`]: the writers' key names and store id;
//! - [`pool`]: work items on a bounded pool of threads, results in order, the progress bar
//!   (the report's rows, the fault suites' writer runs, the suite's grading).

pub mod clock;
pub mod kind;
pub mod merge;
pub mod names;
pub mod pool;
pub mod rng;
pub mod test_clock;
pub mod value;

pub use names::{key_index, key_name, STORE_ID};
pub use rng::SplitMix;
