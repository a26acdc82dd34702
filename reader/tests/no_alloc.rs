//! The unchanged check-on-read path allocates nothing: zero-copy snapshot reads and scalar
//! copy getters on an unchanged store make no heap allocation (counted per thread).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

use mmkv_reader::{Options, Store};

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> usize {
    ALLOCS.with(|c| c.get())
}

#[test]
fn unchanged_reads_do_not_allocate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/v2.4.2");
    for (id, key) in [("plain", None), ("aes128", Some("mmkv-conformance"))] {
        let mut o = Options::new();
        if let Some(k) = key {
            o = o.crypt_key(k);
        }
        let store = Store::open(dir.join(id), o).unwrap();
        let keys: Vec<Vec<u8>> = store.keys();
        assert!(!keys.is_empty());
        // warm up (per-thread state of the lock-free pointer)
        for k in &keys {
            let _ = store.get_i64(k);
        }
        let before = allocs();
        let mut hits = 0usize;
        for _ in 0..10 {
            for k in &keys {
                hits += store.get_i64(k).is_some() as usize;
                hits += store.get_f64(k).is_some() as usize;
                hits += store.contains(k) as usize;
                let snap = store.snapshot();
                hits += snap.get_bytes(k).is_some() as usize;
                hits += snap.raw_value(k).map(<[u8]>::len).unwrap_or(0);
                hits += snap.get_str(k).is_some() as usize;
                let view = store.view();
                hits += view.get_bytes(k).map(<[u8]>::len).unwrap_or(0);
                hits += view.get_i32(k).is_some() as usize;
            }
            hits += store.get_i32("absent key").is_some() as usize;
        }
        let after = allocs();
        assert!(hits > 0);
        assert_eq!(
            after - before,
            0,
            "{id}: reads allocated {} times",
            after - before
        );
    }
}
