//! What a `Store` does around its reloads, as `stats()`, `refresh()`, `last_reload_error()` and
//! `last_failed_reload()` report it (see `Store::refresh`): a state whose reload failed is not
//! retried by reads, only by `refresh`; a newer state after a failed one is loaded by the next
//! read; a refresh that finds the loaded state again clears the error (the failure's error
//! stays in `last_failed_reload()`); and a load done without the lock (a writer holds it
//! exclusively) reads an unchanging store once, as a locked load does ("retried when the meta
//! changed", reader/README.md). Written for surviving mutants of `store.rs`
//! (docs/mutation-testing.md).

mod common;

use std::path::{Path, PathBuf};

use common::*;
use mmkv_reader::{Error, Options, ReloadKind, Store};

/// A plaintext store of `n` keys `key-NNNN` whose meta's last-confirmed crc is wrong, so a
/// region that fails the CRC check has no fallback: its reload fails. Returns the data path
/// and the stored region.
fn store_without_fallback(dir: &Path, n: u32) -> (PathBuf, Vec<u8>) {
    let (p, region) = numbered_store(dir, n);
    let c = crc_path(&p);
    set_u32(&c, 36, read_u32(&c, 36) ^ 0xdead_beef);
    (p, region)
}

#[test]
fn reads_do_not_retry_a_failed_state_refresh_does() {
    let dir = tempfile::tempdir().unwrap();
    let (p, region) = store_without_fallback(dir.path(), 64);
    let st = Store::open(&p, Options::new()).unwrap();
    let rec = late_record();
    publish_meta_only(&p, &region, &rec);
    assert_eq!(st.get_string("late"), None);
    assert_eq!(st.stats().failed, 1);
    assert!(
        matches!(st.last_reload_error(), Some(Error::CrcMismatch { .. })),
        "{:?}",
        st.last_reload_error()
    );
    // reads keep serving the last good snapshot without loading the failed state again
    for _ in 0..3 {
        assert_eq!(st.get_string("key-0007").as_deref(), Some("value 7"));
        assert_eq!(st.len(), 64);
    }
    assert_eq!(st.stats().failed, 1);
    // the data arrives under the same meta: reads still do not retry it...
    write_in_place(&p, (4 + region.len()) as u64, &rec);
    assert_eq!(st.get_string("late"), None);
    assert_eq!(st.stats().failed, 1);
    // ...refresh does, and succeeds
    assert_eq!(st.refresh(), Ok(true));
    assert_eq!(st.get_string("late").as_deref(), Some("value"));
    assert_eq!(st.last_reload_error(), None);
    // ...while the failure's error stays known (what `stats().failed` counted)
    assert!(
        matches!(st.last_failed_reload(), Some(Error::CrcMismatch { .. })),
        "{:?}",
        st.last_failed_reload()
    );
    let s = st.stats();
    assert_eq!((s.partial, s.full, s.failed), (1, 0, 1));
}

#[test]
fn a_new_state_after_a_failed_one_is_loaded_by_the_next_read() {
    let dir = tempfile::tempdir().unwrap();
    let (p, region) = store_without_fallback(dir.path(), 64);
    let st = Store::open(&p, Options::new()).unwrap();
    publish_meta_only(&p, &region, &late_record());
    assert_eq!(st.get_string("late"), None);
    assert_eq!(st.stats().failed, 1);
    // the writer then does a full write-back (new sequence, new content)
    write_plain_store(
        &p,
        &[(b"rewritten", &lp(b"yes"))],
        MetaSpec {
            sequence: 2,
            ..MetaSpec::default()
        },
    );
    assert_eq!(st.get_string("rewritten").as_deref(), Some("yes"));
    assert_eq!(st.len(), 1);
    assert_eq!(st.last_reload_error(), None);
    let s = st.stats();
    assert_eq!((s.full, s.failed), (1, 1));
}

#[test]
fn a_refresh_that_finds_the_loaded_state_again_clears_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let (p, region) = store_without_fallback(dir.path(), 64);
    let st = Store::open(&p, Options::new()).unwrap();
    let loaded_meta = std::fs::read(crc_path(&p)).unwrap();
    publish_meta_only(&p, &region, &late_record());
    assert!(st.refresh().is_err());
    assert!(st.last_reload_error().is_some());
    // the meta goes back to the state the store holds: nothing to load, and the most recent
    // reload attempt did not fail
    write_meta(&crc_path(&p), &loaded_meta);
    assert_eq!(st.refresh(), Ok(false));
    assert_eq!(st.last_reload_error(), None);
    let s = st.stats();
    assert_eq!((s.full, s.partial, s.failed), (0, 0, 1));
    assert_eq!(st.len(), 64);
}

/// A reload done optimistically (a writer holds the lock) reads what a locked reload of the
/// same change reads: the appended bytes for a partial reload, the file once for a full one.
#[cfg(unix)]
#[test]
fn an_unlocked_reload_reads_an_unchanging_store_once() {
    let dir = tempfile::tempdir().unwrap();
    let (p, _) = store_without_fallback(dir.path(), 64);
    let locked = Store::open(&p, Options::new()).unwrap();
    let quick = std::time::Duration::from_millis(2);
    let unlocked = Store::open(&p, Options::new().lock_timeout(quick)).unwrap();

    let rec = late_record();
    append_stored(&p, &rec);
    assert_eq!(locked.refresh(), Ok(true));
    {
        let _writer = writer_lock(&crc_path(&p));
        assert_eq!(unlocked.refresh(), Ok(true));
    }
    assert_eq!(unlocked.last_reload_kind(), Some(ReloadKind::Partial));
    assert_eq!(unlocked.get_string("late").as_deref(), Some("value"));
    let (l, u) = (locked.stats(), unlocked.stats());
    assert_eq!((l.unlocked, u.unlocked), (0, 1));
    assert_eq!(l.bytes_read, 4 + rec.len() as u64);
    assert_eq!(u.bytes_read, l.bytes_read);

    let c = crc_path(&p);
    set_u32(&c, 8, read_u32(&c, 8) + 1);
    assert_eq!(locked.refresh(), Ok(true));
    {
        let _writer = writer_lock(&c);
        assert_eq!(unlocked.refresh(), Ok(true));
    }
    assert_eq!(unlocked.last_reload_kind(), Some(ReloadKind::Full));
    let (l2, u2) = (locked.stats(), unlocked.stats());
    assert_eq!(u2.unlocked, 2);
    assert!(l2.bytes_read > l.bytes_read);
    assert_eq!(u2.bytes_read - u.bytes_read, l2.bytes_read - l.bytes_read);
}

/// Bytes this thread has read through `read`-like system calls (Linux `rchar`).
#[cfg(target_os = "linux")]
fn thread_rchar() -> u64 {
    let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("rchar in /proc/thread-self/io")
}

/// `Store::open` under a writer's exclusive lock reads an unchanging store once, like a locked
/// open (its reads are not in `stats()`, so the thread's read counter measures them).
#[cfg(target_os = "linux")]
#[test]
fn an_unlocked_open_reads_an_unchanging_store_once() {
    let dir = tempfile::tempdir().unwrap();
    let (p, region) = store_without_fallback(dir.path(), 2_000);
    let before = thread_rchar();
    let locked = Store::open(&p, Options::new()).unwrap();
    let locked_read = thread_rchar() - before;
    let unlocked_read = {
        let _writer = writer_lock(&crc_path(&p));
        let before = thread_rchar();
        let st = Store::open(
            &p,
            Options::new().lock_timeout(std::time::Duration::from_millis(2)),
        )
        .unwrap();
        let read = thread_rchar() - before;
        assert_eq!(st.stats().unlocked, 1);
        assert_eq!(st.len(), locked.len());
        read
    };
    assert_eq!(locked.stats().unlocked, 0);
    assert!(locked_read >= region.len() as u64, "{locked_read}");
    // (the counter read itself adds the same few hundred bytes to both)
    assert!(
        unlocked_read.abs_diff(locked_read) < 1024,
        "unlocked open read {unlocked_read} bytes, a locked one {locked_read}"
    );
}
