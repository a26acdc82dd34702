//! Differential conformance harness for `mmkv-reader`.
//!
//! - [`workload`]: operations, saved repros (YAML) and proptest strategies;
//! - [`run`]: executes a workload through the official library of one version (`mmkv-sys`),
//!   then compares every getter of every touched key with the reader;
//! - [`golden`]: corpus manifests and their check;
//! - [`live`]: a seeded multi-process writer and the model that checks concurrent reads;
//! - [`record`]: writes a corpus store set with an official version;
//! - [`report`]: the version × store-kind matrix;
//! - [`shards`]: unbuilt versions in the report, its summary, and merging shards' reports.
//! - [`vocab`]: the one seeded generator, the writers' key names and store id;
//! - [`writer`]: the child processes that run the official library (one way to spawn and watch them).
#![warn(missing_docs)]

pub mod cell;
pub mod compare;
pub mod error;
pub mod exceptions;
pub mod fault;
pub mod golden;
pub mod kind;
pub mod live;
pub mod official;
pub mod prop;
pub mod real;
pub mod record;
pub mod report;
pub mod run;
pub mod shards;
pub mod suite;
pub mod sys;
pub mod value;
pub mod view;
pub mod vocab;
pub mod workload;
pub mod writer;

pub use error::{Error, Result};
pub use kind::{Features, ModeKind, StoreKind};
pub use real::RealReader;
pub use value::{Value, ValueType};
pub use view::{ReaderFactory, ReaderView};
