//! Judging the reader against the official library: what differs, and whether an upstream
//! bug explains it.
//!
//! - [`compare`]: the reader's reads against an official instance, as [`compare::Mismatch`]es
//!   of a [`compare::Compared`] kind;
//! - [`exceptions`]: the one table of accepted differences (differential runs, live writers,
//!   fault suite);
//! - [`recognise`]: the precise check behind each row;
//! - [`state`]: the verdict on one damaged state of the fault suite;
//! - [`process_hold`]: runs of the versions that lose their process lock hold the process
//!   alone;
//! - [`crashing_calls`]: calls the runner skips because the official version crashes in them.

pub mod compare;
pub mod crashing_calls;
pub mod exceptions;
pub mod process_hold;
pub mod recognise;
pub mod state;
