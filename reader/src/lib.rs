//! mmkv-reader: a pure-Rust, read-only reader for Tencent MMKV files.
#![deny(missing_docs)]

pub mod crypto;
pub mod decode;
mod error;
mod fsio;
mod load;
pub mod meta;
pub mod raw;
pub mod records;
pub mod varint;

pub use error::{Error, Result};
pub use load::RegionSource;
pub mod clock;
mod snapshot;
mod store;

pub use clock::{Clock, FixedClock, ManualClock, SystemClock};
pub use snapshot::{KeyHasher, Snapshot};
pub use store::{Options, ReloadKind, ReloadStats, Store};
