//! Differential runs: a workload performed through the official library of one version (or
//! several in turn: migration), with the reader compared getter by getter all along.
//!
//! - [`workload`]: the one op enum, saved repros (YAML) and the proptest strategies;
//! - [`runner`]: executes a workload and drives the checks;
//! - [`model`]: what the store must hold, from the operations given (expire windows, last
//!   written values);
//! - [`outcome`]: what a run produced; where a difference becomes a divergence or a failure;
//! - [`stats`]: counters of what ran;
//! - [`failures`]: failure folders (save, load, replay command);
//! - [`property`]: proptest runs over workloads, with shrinking.

pub mod failures;
pub mod model;
pub mod outcome;
pub mod property;
pub mod runner;
pub mod stats;
pub mod workload;
