//! The writer side: child processes that run the official library.
//!
//! - [`child`]: spawning a child, waiting for its lines with a timeout, the watchdog.

pub mod child;
