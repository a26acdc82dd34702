//! The vocabulary every other module speaks (re-exports only live here).

pub mod clock;
