//! A pure-Rust, read-only reader for [Tencent MMKV](https://github.com/Tencent/MMKV) stores,
//! returning exactly what the official C++ getters return.
//!
//! Every on-disk format written by MMKV v1.1.0 to v2.4.2 is supported: meta versions 1–4
//! (the actual size from the data-file header before version 3, from the meta file after;
//! from v2.4.0 the header is 0), item-size holders of 1–5 bytes (random from v2.0.0),
//! AES-128 / AES-256 CFB encryption of the whole data region, and key expiration.
//!
//! # High level: [`Store`], [`Snapshot`] and [`SnapshotRef`]
//!
//! [`Store::open`] loads a store (data file `PATH`, meta file `PATH.crc`) into an immutable
//! snapshot. Each read first compares the meta file's crc digest, actual size and sequence
//! (kept memory-mapped) with the snapshot's: unchanged, the read is a lock-free hash lookup;
//! changed, the store reloads under a shared `flock` on the meta file (the lock the official
//! multi-process writer takes exclusively), verifies the CRC and swaps the snapshot. When the
//! writer only appended, just the appended bytes are read and parsed. A failed reload keeps
//! the previous snapshot serving ([`Store::last_reload_error`], [`Store::refresh`]).
//!
//! The data file is never memory-mapped (it is read with `pread` into owned memory), so a
//! writer truncating it (`trim`, `clearAll`) cannot crash the reader, and the reader never
//! writes to any file.
//!
//! ```
//! use mmkv_reader::{Options, Store};
//!
//! # fn main() -> mmkv_reader::Result<()> {
//! let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/v2.4.2");
//! let store = Store::open(dir.join("aes128"), Options::new().crypt_key("mmkv-conformance"))?;
//!
//! // copy getters (check-on-read each time)
//! let n = store.len();
//! assert!(n > 0);
//! assert_eq!(store.get_i32("no such key"), None);
//!
//! // zero-copy views borrow from a snapshot handle, which never changes under them
//! let snap = store.snapshot();
//! for key in snap.keys() {
//!     let _payload: &[u8] = snap.raw_value(key).unwrap();
//! }
//! assert_eq!(snap.len(), n);
//!
//! // the cheapest zero-copy read: a short-lived borrowed view (check-on-read, no refcount)
//! let key = snap.keys().next().unwrap();
//! assert_eq!(store.view().raw_value(key), snap.raw_value(key));
//! # Ok(())
//! # }
//! ```
//!
//! Two handles give zero-copy access, with the same getters (both dereference to
//! [`SnapshotData`], where the getters are documented):
//! * [`Store::snapshot`] → [`Snapshot`]: owned (`Arc`), `Clone + Send + Sync`, may be kept for
//!   as long as wanted; taking and dropping one costs an atomic increment and decrement.
//! * [`Store::view`] → [`SnapshotRef<'_>`](SnapshotRef): borrowed from the store and meant to be
//!   short-lived (a read or a few); it borrows the snapshot the calling thread caches for the
//!   store instead of taking an `Arc`, so a zero-copy `store.view().get_bytes(key)` costs about
//!   what a scalar copy getter does.
//!
//! Each thread that reads a store caches the snapshot it last read (in a slot the store owns):
//! an unchanged read compares that snapshot's meta triple with the mapped meta file and reads
//! it in place, with no atomic read-modify-write and no write to memory another thread uses,
//! so reader threads scale. A thread's cached snapshot is released by its next read after a
//! change, or when the store is dropped.
//!
//! # Getter semantics
//!
//! MMKV records no value types: a getter decodes the stored bytes as its type, exactly as
//! the official getter does (see [`decode`]); `None` is "the official getter returns its
//! default with `hasValue == false`". For example `get_i32` on a value written as `i64`
//! keeps the low 32 bits, `get_string` on a small integer is `None` (length past the end),
//! `get_string_vec` on an integer is an empty vector.
//!
//! # Where the reader differs from the official loader
//!
//! Which region is loaded is decided by [`locate`], exactly as the official loader decides
//! (meta or header size by meta version, CRC, header and last-confirmed fallbacks, files
//! mapped rounded up to whole pages of the machine's page size ([`page`],
//! [`Options::page_size`]), `OnErrorDiscard` or, with [`Options::recover`],
//! `OnErrorRecover`). The official library repairs what it cannot read, and writes while doing
//! so; a read-only reader reports a typed [`Error`] instead (and keeps serving its previous
//! snapshot):
//! * No region passes the CRC check and the strategy is the default: the official library
//!   opens the store empty (and resets it); the reader returns [`Error::CrcMismatch`] /
//!   [`Error::ActualSizeBeyondFile`] / [`Error::DataTooShort`].
//! * A CRC-valid region whose records do not parse: the official full load silently yields
//!   an empty store; the reader returns the parse error (or [`Error::Undecryptable`] when a
//!   crypt key was given).
//! * A meta file shorter than its version needs: the official library reads it zero-filled
//!   (as [`load_bytes`] and `mmkv` do); [`Store::open`] refuses it ([`Error::MetaTooShort`]),
//!   since it keeps the meta mapped.
//! * Expired keys are absent here as in the official getters, but the official getter also
//!   deletes them from the file; [`SnapshotData::len`] counts unexpired keys (the official
//!   `count(filterExpire = true)`).
//!
//! # Writers holding the lock
//!
//! Loads take the shared `flock` on the meta file without blocking: retried with backoff for
//! [`Options::lock_timeout`] (100 ms by default), then the store is read optimistically (meta,
//! data, CRC check, meta again; retried when the meta changed) and
//! [`ReloadStats::unlocked`] counts it. Official v2.2.0 and v2.2.1 hold an exclusive lock for
//! as long as a store is open single-process; the reader never waits on them forever.
//!
//! # Low level
//!
//! [`locate`], [`meta`], [`varint`], [`crypto`], [`records`], [`decode`] and [`raw`] expose the format
//! pieces for tools (an inspector, fuzzers, differential tests).
#![deny(missing_docs)]
// Every `unsafe` is in `sys`, behind safe interfaces.
#![deny(unsafe_code)]

pub mod clock;
mod cryptkey;
pub mod crypto;
pub mod decode;
mod error;
mod fsio;
mod load;
pub mod locate;
pub mod meta;
mod options;
pub mod page;
pub mod parse;
pub mod raw;
mod read_at;
pub mod records;
mod snapshot;
mod store;
#[allow(unsafe_code)]
mod sys;
#[cfg(feature = "test-support")]
pub mod test_support;
pub mod varint;

pub use clock::{Clock, FixedClock, ManualClock, SystemClock};
pub use cryptkey::CryptKey;
pub use error::{Error, Result};
pub use fsio::meta_path;
pub use load::{load_bytes, ReadSync};
pub use locate::RegionSource;
pub use options::Options;
pub use page::{host_page_size, infer_page_size, PageSize, PageSizeChoice, PageSizeSource};
pub use snapshot::{KeyHasher, Snapshot, SnapshotData, SnapshotRef};
pub use store::{ReloadKind, ReloadStats, Store};

#[cfg(test)]
mod send_sync {
    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn store_and_snapshot_are_send_sync() {
        assert_send_sync::<crate::SnapshotData>();
        assert_send_sync::<crate::Store>();
        assert_send_sync::<crate::Snapshot>();
        assert_send_sync::<crate::Error>();
    }
}
