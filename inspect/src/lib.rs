//! `mmkv-inspect`: the `mmkv` command-line tool for people who pull MMKV stores off devices.
//!
//! Commands: `dump` (live entries, `--history` with record statuses, `--carve` for stale records),
//! `get`, `meta`, `watch` and `scan`. The command line ([`cli`]) is validated once into
//! [`settings`] before anything runs. Everything is read-only and built on `mmkv_reader`
//! (`raw::read_raw`, `records`, `decode`, `Store`). See [`cli::Cli`] for the command line and
//! [`analysis`] for the definitions of record statuses, detection and carving.
#![warn(missing_docs)]

pub mod analysis;
pub mod cli;
pub mod commands;
pub mod error;
pub mod infer;
pub mod output;
pub mod scan;
pub mod settings;
pub mod tabular;
pub mod util;
pub mod watch;

pub use error::{Error, Result};
