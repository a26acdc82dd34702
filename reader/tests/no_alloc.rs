//! The unchanged check-on-read path allocates nothing: zero-copy snapshot reads and scalar
//! copy getters on an unchanged store make no heap allocation (counted per thread).

use mmkv_reader::test_support::{self, CountingAlloc};
use mmkv_reader::{Options, Store};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc::new();

fn allocs() -> usize {
    test_support::thread_allocations()
}

#[test]
fn unchanged_reads_do_not_allocate() {
    let dir = mmkv_corpus::corpus_root().join("v2.4.2");
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
