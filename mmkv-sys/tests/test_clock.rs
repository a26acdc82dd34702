//! The test clock (`mmkv_sys::test_clock`): every version's `time()` is wrapped at link time,
//! so a key set with a 1 s expiry is expired for the official getters once the test time moves
//! 2 s on, with no sleep; unset, the libraries read the real clock again.
//!
//! Its own test binary: the clock is process-wide, and the tests here take turns (`LOCK`).

mod common;

use common::all_built;
use mmkv_sys::{test_clock, Mode};
use std::sync::Mutex;

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// A short expiry passes when the test time advances, for every version with expiration, for
/// the live instance, its `count(filterExpire)` and a reopened instance (plaintext and
/// encrypted: the encrypted path seeds its IVs from `time()` too).
#[test]
fn a_one_second_expiry_passes_when_the_test_clock_advances_two_seconds() {
    let _g = lock();
    let libs = all_built();
    let tmp = tempfile::tempdir().unwrap();
    let start = test_clock::real_now();
    test_clock::set(Some(start));
    let mut checked = 0;
    for lib in libs.iter().filter(|l| l.capabilities().key_expire) {
        for (id, key) in [("plain", None), ("aes", Some(&b"mmkv-test-clock"[..]))] {
            let dir = tmp.path().join(lib.tag());
            test_clock::set(Some(start));
            let store = lib.open(&dir, id, Mode::Single, key, false).unwrap();
            assert!(store.enable_key_expire(0).unwrap());
            store.set_i32(b"short", 7, Some(1)).unwrap();
            store.set_i32(b"hour", 8, Some(3600)).unwrap();
            store.set_i32(b"never", 9, None).unwrap();
            let tag = lib.tag();
            assert_eq!(store.get_i32(b"short").unwrap(), Some(7), "{tag} {id}");
            test_clock::advance(2);
            assert_eq!(test_clock::get(), Some(start + 2));
            assert_eq!(store.get_i32(b"short").unwrap(), None, "{tag} {id} expired");
            assert!(!store.contains(b"short").unwrap(), "{tag} {id} contains");
            assert_eq!(store.get_i32(b"hour").unwrap(), Some(8), "{tag} {id} hour");
            if lib.capabilities().count_filter_expire {
                assert_eq!(store.count_filtered().unwrap(), 2, "{tag} {id} count");
            }
            store.close().unwrap();
            let store = lib.open(&dir, id, Mode::Single, key, false).unwrap();
            assert_eq!(
                store.get_i32(b"short").unwrap(),
                None,
                "{tag} {id} reopened"
            );
            assert_eq!(
                store.get_i32(b"never").unwrap(),
                Some(9),
                "{tag} {id} never"
            );
            // An hour later (no sleep) the hour key is gone too.
            test_clock::advance(3600);
            assert_eq!(
                store.get_i32(b"hour").unwrap(),
                None,
                "{tag} {id} hour later"
            );
            assert_eq!(
                store.get_i32(b"never").unwrap(),
                Some(9),
                "{tag} {id} never"
            );
            store.close().unwrap();
            checked += 1;
        }
    }
    test_clock::set(None);
    assert!(
        checked > 0 || libs.iter().all(|l| !l.capabilities().key_expire),
        "no version with key expiration was checked"
    );
}

/// The test time is the clock the library writes expire times with: a key given 100 s at a test
/// time 1000 s in the past is live under the test clock and expired under the real clock.
#[test]
fn expire_times_are_written_with_the_test_time_and_judged_with_the_real_clock_when_unset() {
    let _g = lock();
    let tmp = tempfile::tempdir().unwrap();
    for lib in all_built().iter().filter(|l| l.capabilities().key_expire) {
        let tag = lib.tag();
        test_clock::set(Some(test_clock::real_now() - 1000));
        let store = lib
            .open(&tmp.path().join(tag), "past", Mode::Single, None, false)
            .unwrap();
        assert!(store.enable_key_expire(0).unwrap());
        store.set_i32(b"k", 1, Some(100)).unwrap();
        assert_eq!(
            store.get_i32(b"k").unwrap(),
            Some(1),
            "{tag} under test clock"
        );
        test_clock::set(None);
        assert_eq!(test_clock::get(), None);
        assert_eq!(
            store.get_i32(b"k").unwrap(),
            None,
            "{tag} under the real clock"
        );
        store.close().unwrap();
    }
}

/// A library loaded after the test clock was set starts with it (the setting is applied at
/// load): a copy of each version's library under another path is a new `dlopen`.
#[test]
fn a_version_loaded_after_set_starts_with_the_test_time() {
    let _g = lock();
    let tmp = tempfile::tempdir().unwrap();
    for b in mmkv_sys::built()
        .iter()
        .filter(|b| b.features.has(mmkv_sys::versions::Feature::KeyExpire))
    {
        let copy = tmp.path().join(format!("copy-{}.so", b.tag));
        std::fs::copy(b.library, &copy).unwrap();
        test_clock::set(Some(1_000_000_000));
        let lib = mmkv_sys::Official::load_from_path(b.tag, &copy).unwrap();
        let store = lib
            .open(&tmp.path().join(b.tag), "late", Mode::Single, None, false)
            .unwrap();
        assert!(store.enable_key_expire(0).unwrap());
        store.set_i32(b"k", 1, Some(10)).unwrap();
        // Expired under the real clock (set in 2001), live under the test clock.
        assert_eq!(
            store.get_i32(b"k").unwrap(),
            Some(1),
            "{} loaded late",
            b.tag
        );
        test_clock::set(None);
        assert_eq!(store.get_i32(b"k").unwrap(), None, "{} real clock", b.tag);
        store.close().unwrap();
    }
}

/// Every loaded version follows `set`: a key's life is judged at the exact boundary.
#[test]
fn the_test_time_applies_to_every_loaded_version() {
    let _g = lock();
    let tmp = tempfile::tempdir().unwrap();
    test_clock::set(Some(1_000_000_000));
    for lib in all_built().iter().filter(|l| l.capabilities().key_expire) {
        let tag = lib.tag();
        let store = lib
            .open(&tmp.path().join(tag), "fixed", Mode::Single, None, false)
            .unwrap();
        assert!(store.enable_key_expire(0).unwrap());
        // Set at 1e9 with 10 s: live at 1e9 + 9, expired at 1e9 + 10 (the official rule).
        store.set_i32(b"k", 1, Some(10)).unwrap();
        test_clock::set(Some(1_000_000_009));
        assert_eq!(store.get_i32(b"k").unwrap(), Some(1), "{tag} at +9");
        test_clock::set(Some(1_000_000_010));
        assert_eq!(store.get_i32(b"k").unwrap(), None, "{tag} at +10");
        // Never backwards: advance_to an earlier second keeps the later one.
        assert_eq!(test_clock::advance_to(1_000_000_005), 1_000_000_010);
        assert_eq!(
            store.get_i32(b"k").unwrap(),
            None,
            "{tag} advance_to earlier"
        );
        test_clock::set(Some(1_000_000_000));
        store.close().unwrap();
    }
    test_clock::set(None);
}
