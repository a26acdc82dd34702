//! The per-thread cached snapshot behind check-on-read: every thread's next read after a
//! change sees it (whichever thread reloaded), and a read nested inside another one (a clock
//! that reads the store) never frees the snapshot the outer read is using.

mod common;

use std::sync::{Arc, Barrier, Mutex, OnceLock};

use common::*;
use mmkv_reader::{Clock, Options, Store};

/// Thread B caches the store's snapshot, thread A (here) changes the store and reloads: B's
/// next read sees the change through the store's current snapshot (no reload of its own),
/// and a third thread that never read before sees it too.
#[test]
fn other_threads_see_a_reload_done_on_one() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let st = Store::open(&p, Options::new()).unwrap();
    let n = st.len();
    let cached = Barrier::new(2);
    let changed = Barrier::new(2);
    std::thread::scope(|s| {
        let b = s.spawn(|| {
            assert_eq!(st.get_string("t-key"), None);
            assert_eq!(st.view().get_str("t-key"), None);
            cached.wait();
            changed.wait();
            (st.get_string("t-key"), st.len(), st.view().generation())
        });
        cached.wait();
        let mut rec = Vec::new();
        record(&mut rec, b"t-key", &lp(b"after"));
        append_stored(&p, &rec);
        assert_eq!(st.get_string("t-key").as_deref(), Some("after"));
        changed.wait();
        let (v, len, generation) = b.join().unwrap();
        assert_eq!(v.as_deref(), Some("after"));
        assert_eq!(len, n + 1);
        assert_eq!(generation, 1);
    });
    let fresh = std::thread::scope(|s| s.spawn(|| st.get_string("t-key")).join().unwrap());
    assert_eq!(fresh.as_deref(), Some("after"));
    let stats = st.stats();
    assert_eq!((stats.partial, stats.full, stats.failed), (1, 0, 0));
    // and back on this thread, a second change
    let mut rec = Vec::new();
    record(&mut rec, b"t-key", &lp(b"again"));
    append_stored(&p, &rec);
    assert_eq!(st.get_string("t-key").as_deref(), Some("again"));
}

/// A clock that, on its first call, appends a record to the store and reads it back through
/// the same store: the nested read (on the thread whose cached snapshot the outer read is
/// using) must reload and see the append, while the outer read keeps answering from the
/// snapshot it started on; later reads use the new state.
struct ReadingClock {
    store: OnceLock<Arc<Store>>,
    path: std::path::PathBuf,
    nested: Mutex<Vec<Option<String>>>,
}

impl Clock for ReadingClock {
    fn now_secs(&self) -> u32 {
        if let Some(st) = self.store.get() {
            let mut nested = self.nested.lock().unwrap();
            if nested.is_empty() {
                let mut value = lp(b"nested");
                value.extend_from_slice(&0u32.to_le_bytes()); // expire suffix: never
                let mut rec = Vec::new();
                record(&mut rec, b"n-key", &value);
                append_stored(&self.path, &rec);
                nested.push(st.get_string("n-key"));
                nested.push(st.view().get_str("n-key").map(str::to_owned));
                // an owned pin (the slot is borrowed by the outer read) handing out an `Arc`
                let owned = st.view().to_snapshot();
                nested.push(owned.get_str("n-key").map(str::to_owned));
                drop(owned);
            }
        }
        1_000_000_000
    }
}

#[test]
fn a_read_nested_in_a_read_keeps_the_outer_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "expire", "s");
    let clock = Arc::new(ReadingClock {
        store: OnceLock::new(),
        path: p.clone(),
        nested: Mutex::new(Vec::new()),
    });
    let st = Arc::new(Store::open(&p, Options::new().clock(clock.clone())).unwrap());
    assert!(st.snapshot().key_expire());
    let keys = st.keys();
    // a key with an expire time: reading it asks the clock
    let (key, want) = keys
        .iter()
        .filter(|k| st.expire_at(k).is_some_and(|t| t != 0))
        .find_map(|k| st.raw_value(k).map(|v| (k.clone(), v)))
        .expect("a live key with an expire time in the expire corpus store");
    // the snapshot cached for this thread and the first clock call happen in one read
    let _ = clock.store.set(st.clone());
    let outer = st.view();
    assert_eq!(outer.raw_value(&key), Some(&want[..]));
    assert_eq!(
        outer.get_str("n-key"),
        None,
        "the outer read's state is the old one"
    );
    // the handle still holds the old snapshot (a slot replaced under it would hand out the new)
    assert_eq!(outer.to_snapshot().generation(), 0);
    assert_eq!(outer.generation(), 0);
    drop(outer);
    assert_eq!(
        *clock.nested.lock().unwrap(),
        vec![Some("nested".to_string()); 3]
    );
    assert_eq!(st.get_string("n-key").as_deref(), Some("nested"));
    assert_eq!(st.raw_value(&key), Some(want));
    assert_eq!(st.stats().partial, 1);
    assert_eq!(st.view().generation(), 1);
    // break the Arc cycle (clock -> store -> clock)
    drop(st);
}
