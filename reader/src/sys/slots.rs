//! Per-thread cached snapshots: the check-on-read fast path without atomic read-modify-write.
//!
//! Each thread that reads a [`Store`](crate::Store) keeps an `Arc` of the snapshot it last
//! read in a [`Slot`] of its own, owned by the store ([`Slots`], a `thread_local::ThreadLocal`
//! with a one-entry per-thread cache of the last store read). A read
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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use thread_local::ThreadLocal;

/// Ids of [`Slots`], never reused in a process (0 is "none").
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The (id, slot) of the [`Slots`] this thread used last: a hit skips the
    /// `ThreadLocal` lookup (thread id, bucket, presence flag). The pointer is dangling only
    /// with id 0, which no `Slots` has (a `NonNull`, so a hit needs no null test).
    /// The slot's type is erased (a `thread_local` is not generic); the id says which
    /// `Slots<T>` it belongs to, and so its `T`.
    static LAST: Cell<(u64, NonNull<()>)> = const { Cell::new((0, NonNull::dangling())) };
}

/// One store's per-thread slots, with a one-entry cache of the calling thread's slot. Generic
/// in what a slot holds (the store's snapshot type) so that this module knows nothing of it.
pub(crate) struct Slots<T: Send + Sync> {
    id: u64,
    slots: ThreadLocal<Slot<T>>,
}

impl<T: Send + Sync> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            slots: ThreadLocal::new(),
        }
    }
}

impl<T: Send + Sync> Slots<T> {
    /// This thread's slot, if it has one.
    #[inline]
    pub(crate) fn get(&self) -> Option<&Slot<T>> {
        let (id, slot) = LAST.with(Cell::get);
        if id == self.id {
            // SAFETY: `LAST` holds `self.id` only when it was set below from `self.slots` on
            // this thread; ids are never reused, so `self` is the `Slots` that owns the slot,
            // and `ThreadLocal` never moves or frees an entry while it is alive (that needs
            // `&mut self`). The slot is this thread's own (see `Slot::pin_if`), and a
            // `Slot<T>`: the pointer was erased from one below, by the `Slots<T>` of this id.
            return Some(unsafe { slot.cast::<Slot<T>>().as_ref() });
        }
        self.get_uncached()
    }

    #[cold]
    #[inline(never)]
    fn get_uncached(&self) -> Option<&Slot<T>> {
        let slot = self.slots.get()?;
        LAST.with(|c| c.set((self.id, NonNull::from(slot).cast())));
        Some(slot)
    }

    /// Caches `cur` in this thread's slot (created holding it when the thread has none) and
    /// pins it (see [`Slot::install`]).
    pub(crate) fn install(&self, cur: Arc<T>) -> Pinned<'_, T> {
        let slot = self.slots.get_or(|| Slot {
            snap: UnsafeCell::new(Arc::clone(&cur)),
            borrows: Cell::new(0),
        });
        LAST.with(|c| c.set((self.id, NonNull::from(slot).cast())));
        slot.install(cur)
    }
}

/// One thread's cached snapshot of one store. Aligned to 128 bytes so that no two threads'
/// slots share a cache line (or an adjacent-line prefetch pair).
#[repr(align(128))]
pub(crate) struct Slot<T> {
    /// Only the owning thread reads or replaces it (see [`Slot::install`]). A slot is created
    /// holding a snapshot, so a read needs no presence test.
    snap: UnsafeCell<Arc<T>>,
    /// Live [`Pinned`] borrows of `snap` on this thread.
    borrows: Cell<usize>,
}

impl<T> Slot<T> {
    /// Pins the slot's snapshot when `valid` accepts it.
    #[inline]
    pub(crate) fn pin_if(&self, valid: impl FnOnce(&T) -> bool) -> Option<Pinned<'_, T>> {
        // SAFETY: the slot is reached only through `ThreadLocal::get`/`get_or`, i.e. by its own
        // thread (`Slot` is not `Sync`, so `&Slot` never crosses threads), and `snap` is only
        // written by `install` while no `Pinned` borrows it; this shared borrow ends before
        // any such write.
        let arc = unsafe { &*self.snap.get() };
        if !valid(arc) {
            return None;
        }
        Some(self.pin(arc))
    }

    #[inline]
    fn pin(&self, arc: &Arc<T>) -> Pinned<'_, T> {
        self.borrows.set(self.borrows.get() + 1);
        Pinned {
            snap: NonNull::from(&**arc),
            slot: Some(self),
        }
    }

    /// Caches `cur` in the slot and pins it; while a borrow of the slot is live, `cur` is
    /// returned owned instead and the slot is left alone.
    pub(crate) fn install(&self, cur: Arc<T>) -> Pinned<'_, T> {
        if self.borrows.get() != 0 {
            return Pinned::owned(cur);
        }
        // SAFETY: own thread (see `pin_if`) and no live borrow of `snap`: nothing points into
        // the value being replaced.
        let old = unsafe { std::mem::replace(&mut *self.snap.get(), cur) };
        // SAFETY: as in `pin_if`.
        let pinned = self.pin(unsafe { &*self.snap.get() });
        // Dropped after pinning: a drop that reads the store (through a clock) cannot replace
        // the slot under the pin.
        drop(old);
        pinned
    }
}

/// The snapshot one read (or one [`SnapshotRef`](crate::SnapshotRef)) uses: borrowed from the
/// thread's slot, or owned. Two words: the snapshot and the slot (no slot: owned).
pub(crate) struct Pinned<'a, T> {
    /// The pinned snapshot: the slot's (counted in its `borrows`), or, without a slot, a
    /// pointer from [`Arc::into_raw`] that this pin owns one reference of.
    snap: NonNull<T>,
    slot: Option<&'a Slot<T>>,
}

impl<T> Pinned<'_, T> {
    /// Holds its own reference to `arc`.
    pub(crate) fn owned(arc: Arc<T>) -> Self {
        Pinned {
            // SAFETY: `Arc::into_raw` never returns null.
            snap: unsafe { NonNull::new_unchecked(Arc::into_raw(arc).cast_mut()) },
            slot: None,
        }
    }

    /// Another reference to the pinned snapshot.
    pub(crate) fn to_arc(&self) -> Arc<T> {
        match self.slot {
            // SAFETY: own thread (see `Slot::pin_if`); the slot's snapshot is not replaced
            // while this pin is counted.
            Some(slot) => Arc::clone(unsafe { &*slot.snap.get() }),
            None => {
                let p = self.snap.as_ptr().cast_const();
                // SAFETY: `p` came from `Arc::into_raw` and this pin still owns that
                // reference, so the count is >= 1 while it is incremented; the increment is
                // the reference the returned `Arc` owns.
                unsafe {
                    Arc::increment_strong_count(p);
                    Arc::from_raw(p)
                }
            }
        }
    }
}

impl<T> std::ops::Deref for Pinned<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: `snap` points to a snapshot kept alive by the `Arc` reference this pin owns
        // or by the slot's, which is not replaced while this pin is counted.
        unsafe { self.snap.as_ref() }
    }
}

impl<T> Drop for Pinned<'_, T> {
    #[inline]
    fn drop(&mut self) {
        match self.slot {
            Some(slot) => slot.borrows.set(slot.borrows.get() - 1),
            // SAFETY: the pointer came from `Arc::into_raw` (see `owned`) and the reference
            // it stands for is released once, here.
            None => drop(unsafe { Arc::from_raw(self.snap.as_ptr().cast_const()) }),
        }
    }
}
