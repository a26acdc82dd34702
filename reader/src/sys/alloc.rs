//! The `GlobalAlloc` of [`CountingAlloc`] (feature `test-support`).

use std::alloc::{GlobalAlloc, Layout, System};

use crate::test_support::CountingAlloc;

// SAFETY: every call forwards to `System` with the caller's arguments unchanged; the counters
// are only bookkeeping and never allocate (const-initialised thread-locals of `Cell<usize>`).
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            self.allocated(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            self.allocated(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) };
        self.freed(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            self.freed(layout.size());
            self.allocated(new_size);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{reset_thread_largest, thread_allocations, thread_largest};

    #[test]
    fn counts_heap_peak_and_this_thread() {
        let a = CountingAlloc::new();
        let l = Layout::from_size_align(1000, 8).expect("layout");
        let before = thread_allocations();
        reset_thread_largest();
        // SAFETY: matching alloc/realloc/dealloc of one block with its layouts.
        unsafe {
            let p = a.alloc(l);
            assert!(!p.is_null());
            assert_eq!(a.current(), 1000);
            let p = a.realloc(p, l, 3000);
            assert!(!p.is_null());
            assert_eq!(a.current(), 3000);
            assert_eq!(a.peak(), 3000);
            a.dealloc(p, Layout::from_size_align(3000, 8).expect("layout"));
        }
        assert_eq!(a.current(), 0);
        assert_eq!(a.peak(), 3000);
        assert_eq!(thread_allocations() - before, 2);
        assert_eq!(thread_largest(), 3000);
        a.reset_peak();
        assert_eq!(a.peak(), 0);
    }
}
