//! One counting global allocator for every test and bench of the workspace (its
//! `GlobalAlloc` impl, the unsafe part, is in `crate::sys`).

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// Allocations (alloc, alloc_zeroed, realloc) made by this thread.
    static THREAD_ALLOCS: Cell<usize> = const { Cell::new(0) };
    /// The largest single allocation (or reallocation target) of this thread since the last
    /// [`reset_thread_largest`].
    static THREAD_LARGEST: Cell<usize> = const { Cell::new(0) };
}

/// A global allocator that forwards to [`std::alloc::System`] and counts: live heap bytes and their peak
/// (process-wide), and per thread the number of allocations and the largest one.
///
/// Install it with `#[global_allocator] static A: CountingAlloc = CountingAlloc::new();`. It
/// sees only Rust allocations (C++ `new` in a linked library bypasses it).
#[derive(Debug)]
pub struct CountingAlloc {
    current: AtomicUsize,
    peak: AtomicUsize,
}

impl CountingAlloc {
    /// A counter at zero.
    pub const fn new() -> CountingAlloc {
        CountingAlloc {
            current: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// Live heap bytes allocated through this allocator.
    pub fn current(&self) -> usize {
        self.current.load(Ordering::Relaxed)
    }

    /// The highest [`current`](Self::current) value since the last [`reset_peak`](Self::reset_peak).
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Sets the peak to the current value.
    pub fn reset_peak(&self) {
        self.peak.store(self.current(), Ordering::Relaxed);
    }

    /// Counts an allocation of `n` bytes (called by the `GlobalAlloc` impl in `crate::sys`).
    pub(crate) fn allocated(&self, n: usize) {
        let now = self.current.fetch_add(n, Ordering::Relaxed) + n;
        self.peak.fetch_max(now, Ordering::Relaxed);
        // `try_with`: a thread being torn down still allocates; it is simply not counted.
        let _ = THREAD_ALLOCS.try_with(|c| c.set(c.get() + 1));
        let _ = THREAD_LARGEST.try_with(|m| m.set(m.get().max(n)));
    }

    /// Counts `n` bytes freed.
    pub(crate) fn freed(&self, n: usize) {
        self.current.fetch_sub(n, Ordering::Relaxed);
    }
}

impl Default for CountingAlloc {
    fn default() -> Self {
        CountingAlloc::new()
    }
}

/// Allocations made by the calling thread so far (through an installed [`CountingAlloc`]).
pub fn thread_allocations() -> usize {
    THREAD_ALLOCS.with(Cell::get)
}

/// The largest single allocation of the calling thread since [`reset_thread_largest`].
pub fn thread_largest() -> usize {
    THREAD_LARGEST.with(Cell::get)
}

/// Starts a new [`thread_largest`] measurement.
pub fn reset_thread_largest() {
    THREAD_LARGEST.with(|m| m.set(0));
}
