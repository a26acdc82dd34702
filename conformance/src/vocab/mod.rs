//! The vocabulary every other module speaks.
//!
//! - [`clock`]: the one clock (precise and `time(nullptr)` seconds, waiting for a second);
//! - [`kind`]: store kinds (report columns) and version features;
//! - [`value`]: values and value types.

pub mod clock;
pub mod kind;
pub mod value;
