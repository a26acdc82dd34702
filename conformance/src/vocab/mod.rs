//! The vocabulary every other module speaks: one seeded generator, the writers' key names and
//! store id.

pub mod names;
pub mod rng;

pub use names::{key_index, key_name, STORE_ID};
pub use rng::SplitMix;
