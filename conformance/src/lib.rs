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
#![warn(missing_docs)]

pub mod differential;
pub mod error;
pub mod fault;
pub mod golden;
pub mod judge;
pub mod kind;
pub mod live;
pub mod official;
pub mod real;
pub mod record;
pub mod report;
pub mod sys;
pub mod value;
pub mod view;
pub mod vocab;

pub use error::{Error, Result};
pub use kind::{Features, ModeKind, StoreKind};
pub use real::RealReader;
pub use value::{Value, ValueType};
pub use view::{ReaderFactory, ReaderView};
