//! The two sides of every comparison.
//!
//! - [`official`]: the official library of one version, as a trait (`OfficialLib`,
//!   `OfficialStore`), and the process hold of the versions that must not share a process;
//! - [`sys`]: its implementation over `mmkv-sys`;
//! - [`view`]: the reader side, as a trait (tests inject broken readers through it);
//! - [`reader`]: its implementation over `mmkv_reader::Store`;
//! - [`broken`]: deliberately broken readers over it (`tests/breakage.rs`, `hunt --break`);
//! - [`reads`]: what one side read from a store's files (the reader paths `Store` and
//!   `mmkv dump`; the official outcome, read in a child process by [`crate::fault::official`]),
//!   and its one-line encoding.

pub mod broken;
pub mod official;
pub mod reader;
pub mod reads;
pub mod sys;
pub mod view;
