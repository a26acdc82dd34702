//! The portable conformance suite for every MMKV reader (`suite/` in the workspace): cases as
//! folders (store files and `case.json` with the official answer), built from the official
//! libraries, verified against them, and graded against any reader through a small
//! driver protocol (suite/README.md).
//!
//! - [`case`]: `case.json`, classes (`y_`, `n_`, `i_`) and eras;
//! - [`scenarios`]: the stores written for the suite and their damages;
//! - [`official`]: official reads of store copies in child processes, as answers;
//! - [`driver`]: the reader protocol (one process per case, or many cases per process);
//! - [`build`], [`verify`], [`grade`]: the three commands; [`cli`]: their command line.

pub mod build;
pub mod case;
pub mod cli;
pub mod driver;
pub mod grade;
pub mod official;
pub mod scenarios;
pub mod verify;
