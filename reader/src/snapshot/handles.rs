//! The handles through which a snapshot is read: [`Snapshot`] (owned) and [`SnapshotRef`]
//! (borrowed from the store's per-thread cache).

use std::fmt;
use std::sync::Arc;

use super::SnapshotData;

/// An owned handle on one immutable state of a store ([`Store::snapshot`](crate::Store::snapshot)).
/// Every getter is a method of [`SnapshotData`], which it dereferences to. Views borrowed from
/// it (`get_bytes`, `get_str`, `keys`...) cannot outlive it, so they can never observe a
/// reload. Cloning is cheap (an `Arc`); it may be kept as long as wanted and sent to other
/// threads. Taking one costs an atomic reference-count increment (and a decrement on drop);
/// for short zero-copy reads [`SnapshotRef`] avoids both.
#[derive(Clone)]
pub struct Snapshot {
    pub(crate) inner: Arc<SnapshotData>,
}

impl std::ops::Deref for Snapshot {
    type Target = SnapshotData;
    #[inline]
    fn deref(&self) -> &SnapshotData {
        &self.inner
    }
}

/// A short-lived borrowed handle on the current state of a store
/// ([`Store::view`](crate::Store::view)): the same getters as [`Snapshot`] (it dereferences to
/// [`SnapshotData`] too), but it borrows the snapshot the calling thread already caches for
/// the store, so taking and dropping it costs no atomic operation. It borrows the store, so it
/// cannot outlive it, and it stays on its thread (not `Send`). Hold it for a read or a few,
/// not for long: while one is alive on a thread, that thread's reads of a changed store fall
/// back to reference counting. Use [`SnapshotRef::to_snapshot`] to keep the state longer.
pub struct SnapshotRef<'a> {
    pub(crate) pin: crate::sys::slots::Pinned<'a, SnapshotData>,
}

impl std::ops::Deref for SnapshotRef<'_> {
    type Target = SnapshotData;
    #[inline]
    fn deref(&self) -> &SnapshotData {
        &self.pin
    }
}

impl SnapshotRef<'_> {
    /// An owned [`Snapshot`] of the same state (one reference-count increment).
    pub fn to_snapshot(&self) -> Snapshot {
        Snapshot {
            inner: self.pin.to_arc(),
        }
    }
}

/// The `Debug` of both handles: the handle's `name`, then the meta, the entry count and the
/// level count of the snapshot it reads.
fn debug_handle(name: &str, data: &SnapshotData, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.debug_struct(name)
        .field("meta", &data.meta)
        .field("len", &data.len)
        .field("levels", &data.levels.len())
        .finish()
}

impl fmt::Debug for SnapshotRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_handle("SnapshotRef", self, f)
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_handle("Snapshot", self, f)
    }
}
