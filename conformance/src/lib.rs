//! Differential conformance harness for `mmkv-reader`. Data flows one way:
//! `vocab` → `sides` → (`judge`, writers) → (`differential`, `fault`, `live`, `corpus`) →
//! (`report`, `hunt`) → the `conformance` binary (`cli.rs`, `main.rs`). No two modules import each other
//! (`tests/module_cycles.rs`).
//!
//! - [`vocab`]: values, store kinds and version features, the one clock;
//! - [`sides`]: the official library (`mmkv-sys`) and the reader, behind traits;
//! - [`judge`]: comparing the two sides, the one exceptions table and its recognisers;
//! - [`differential`]: workloads run through the official library, judged all along;
//! - [`fault`]: the fault suite (killed writers, damaged files);
//! - [`live`]: a seeded multi-process writer and the model that checks concurrent reads;
//! - [`corpus`]: golden corpora; [`record`]: writes a corpus store set;
//! - [`powerloss`]: power-loss crash states (pages lost in any subset, torn pages) judged like
//!   the fault suite;
//! - [`diskerr`]: the states official writers leave while chosen file calls fail (disk
//!   errors), judged like the fault suite;
//! - [`report`]: the version × store-kind matrix; [`html`]: the report as a web page;
//! - [`hunt`]: exploration on a time budget with fresh seeds, failures grouped by signature;
//! - [`suite`]: the portable conformance suite for any MMKV reader (build, verify, grade);
//! - [`writer`]: the child processes that run the official library (one way to spawn and
//!   watch them);
//! - [`coverage`]: how much of the official library the report reaches (gcovr over a coverage
//!   build).
#![warn(missing_docs)]

pub mod corpus;
pub mod coverage;
pub mod differential;
pub mod diskerr;
pub mod error;
pub mod fault;
pub mod html;
pub mod hunt;
pub mod judge;
pub mod live;
pub mod powerloss;
pub mod record;
pub mod report;
pub mod sides;
pub mod suite;
pub mod vocab;
pub mod writer;

pub use error::{Error, Result};
pub use sides::reader::RealReader;
pub use sides::view::{ReaderFactory, ReaderView};
pub use vocab::kind::{Features, ModeKind, StoreKind};
pub use vocab::value::{Value, ValueType};
