//! Per-thread cached snapshots: the check-on-read fast path without atomic read-modify-write.
//!
//! Each thread that reads a [`Store`](crate::Store) keeps an `Arc` of the snapshot it last
//! read in a [`Slot`] of its own, owned by the store (`thread_local::ThreadLocal`). A read
//! compares that snapshot's meta triple with the mapped meta file and, when they are equal
//! (the common case), reads the snapshot in place: plain loads only, no atomic
//! read-modify-write, and the only memory written is the slot's borrow counter, on a cache
//! line no other thread touches. When they differ, the store's slow path takes its current
//! snapshot (reloading first when needed) and installs it in the slot.
//!
//! A slot's snapshot is replaced only while no borrow of it is live on its thread (reads in
//! progress, [`SnapshotRef`](crate::SnapshotRef) handles): a read nested in another one (a
//! [`Clock`](crate::Clock) that reads the store) or taken while a handle is held gets an owned
//! `Arc` instead, so a borrowed snapshot is never freed under its reader.

use std::cell::{Cell, UnsafeCell};
use std::ptr::NonNull;
use std::sync::Arc;

use crate::snapshot::SnapshotData;

/// One thread's cached snapshot of one store. Aligned to 128 bytes so that no two threads'
/// slots share a cache line (or an adjacent-line prefetch pair).
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Slot {
    /// Only the owning thread reads or replaces it (see [`Slot::install`]).
    snap: UnsafeCell<Option<Arc<SnapshotData>>>,
    /// Live [`Pinned`] borrows of `snap` on this thread.
    borrows: Cell<usize>,
}

impl Slot {
    /// Pins the slot's snapshot when `valid` accepts it.
    #[inline]
    pub(crate) fn pin_if(&self, valid: impl FnOnce(&SnapshotData) -> bool) -> Option<Pinned<'_>> {
        // SAFETY: the slot is reached only through `ThreadLocal::get`/`get_or`, i.e. by its own
        // thread (`Slot` is not `Sync`, so `&Slot` never crosses threads), and `snap` is only
        // written by `install` while no `Pinned` borrows it; this shared borrow ends before
        // any such write.
        let arc = unsafe { (*self.snap.get()).as_ref()? };
        if !valid(arc) {
            return None;
        }
        Some(self.pin(arc))
    }

    #[inline]
    fn pin<'a>(&'a self, arc: &'a Arc<SnapshotData>) -> Pinned<'a> {
        self.borrows.set(self.borrows.get() + 1);
        Pinned {
            snap: NonNull::from(&**arc),
            hold: Hold::Slot(self, arc),
        }
    }

    /// Caches `cur` in the slot and pins it; while a borrow of the slot is live, `cur` is
    /// returned owned instead and the slot is left alone.
    pub(crate) fn install(&self, cur: Arc<SnapshotData>) -> Pinned<'_> {
        if self.borrows.get() != 0 {
            return Pinned::owned(cur);
        }
        // SAFETY: own thread (see `pin_if`) and no live borrow of `snap`: nothing points into
        // the value being replaced.
        let old = unsafe { (*self.snap.get()).replace(cur) };
        // SAFETY: as in `pin_if`; it was set just above.
        let pinned = match unsafe { (*self.snap.get()).as_ref() } {
            Some(arc) => self.pin(arc),
            None => unreachable!("the slot was just filled"),
        };
        // Dropped after pinning: a drop that reads the store (through a clock) cannot replace
        // the slot under the pin.
        drop(old);
        pinned
    }
}

enum Hold<'a> {
    /// Borrowed from this thread's slot (counted in its `borrows`).
    Slot(&'a Slot, &'a Arc<SnapshotData>),
    /// An own reference (the slot was busy).
    Owned(Arc<SnapshotData>),
}

/// The snapshot one read (or one [`SnapshotRef`](crate::SnapshotRef)) uses: borrowed from the
/// thread's slot, or owned.
pub(crate) struct Pinned<'a> {
    /// Points into the `Arc` that `hold` keeps alive.
    snap: NonNull<SnapshotData>,
    hold: Hold<'a>,
}

impl Pinned<'_> {
    /// Holds its own reference to `arc`.
    pub(crate) fn owned(arc: Arc<SnapshotData>) -> Pinned<'static> {
        Pinned {
            snap: NonNull::from(&*arc),
            hold: Hold::Owned(arc),
        }
    }

    /// Another reference to the pinned snapshot.
    pub(crate) fn to_arc(&self) -> Arc<SnapshotData> {
        match &self.hold {
            Hold::Slot(_, arc) => Arc::clone(arc),
            Hold::Owned(arc) => Arc::clone(arc),
        }
    }
}

impl std::ops::Deref for Pinned<'_> {
    type Target = SnapshotData;
    #[inline]
    fn deref(&self) -> &SnapshotData {
        // SAFETY: `snap` points into the allocation of the `Arc` that `hold` keeps alive: the
        // owned one, or the slot's, which is not replaced while this pin is counted.
        unsafe { self.snap.as_ref() }
    }
}

impl Drop for Pinned<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Hold::Slot(slot, _) = self.hold {
            slot.borrows.set(slot.borrows.get() - 1);
        }
    }
}
