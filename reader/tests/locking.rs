//! A writer holding an exclusive `flock` on the meta file (what official v2.2.0 and v2.2.1 do
//! for as long as a store is open single-process) never makes the reader wait forever: open,
//! reads and reloads complete, read optimistically and counted in `ReloadStats::unlocked`.
//!
//! Unix only: the writer here holds the lock with util-linux `flock` and writes the meta file
//! through another handle; on Windows byte-range locks are mandatory, so such a write fails under
//! the lock (the official Windows writer writes its meta through a mapping). `fsio`'s unit tests check the lock's
//! backoff on every platform.
#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use mmkv_reader::{Options, Store};

/// `flock -x FILE cat`: holds an exclusive lock on `file` from another process until killed.
struct Holder(Child);

impl Holder {
    fn lock(file: &Path) -> Holder {
        let holder = Holder(
            Command::new("flock")
                .arg("-x")
                .arg(file)
                .arg("cat")
                .stdin(Stdio::piped())
                .spawn()
                .expect("util-linux `flock` must be installed for this test"),
        );
        // Wait until the lock is really held: a non-blocking shared attempt fails.
        let start = Instant::now();
        loop {
            let free = Command::new("flock")
                .args(["-s", "-n"])
                .arg(file)
                .arg("true")
                .status()
                .unwrap()
                .success();
            if !free {
                return holder;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "lock never held");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn entries(s: &Store) -> Vec<(Vec<u8>, Vec<u8>)> {
    let snap = s.snapshot();
    let mut v: Vec<_> = snap.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
    v.sort();
    v
}

#[test]
fn open_read_and_reload_complete_under_a_writers_exclusive_lock() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let reference = Store::open(&p, Options::new()).unwrap();
    let want = entries(&reference);
    assert!(!want.is_empty());
    assert_eq!(reference.stats().unlocked, 0);
    drop(reference);

    let holder = Holder::lock(&crc_path(&p));
    let timeout = Duration::from_millis(30);
    let t = Instant::now();
    let st = Store::open(&p, Options::new().lock_timeout(timeout)).unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(entries(&st), want);
    assert_eq!(st.stats().unlocked, 1);

    // The "writer" replaces the content (another store of the same tag, in place as the
    // official writer does: the meta rewritten without truncation).
    let other = copy_store(dir.path(), "v2.4.2", "trimmed", "other");
    let other_ref = Store::open(&other, Options::new()).unwrap();
    let want2 = entries(&other_ref);
    assert_ne!(want2, want);
    std::fs::write(&p, std::fs::read(&other).unwrap()).unwrap();
    write_in_place(&crc_path(&p), 0, &std::fs::read(crc_path(&other)).unwrap());
    let t = Instant::now();
    assert_eq!(st.refresh(), Ok(true));
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(entries(&st), want2);
    assert_eq!(st.len(), other_ref.len());
    assert_eq!(st.stats().unlocked, 2);
    assert_eq!(st.stats().full + st.stats().partial, 1);

    // A check-on-read after another change reloads too (no refresh call).
    std::fs::write(&p, std::fs::read(corpus().join("v2.4.2/plain")).unwrap()).unwrap();
    write_in_place(
        &crc_path(&p),
        0,
        &std::fs::read(corpus().join("v2.4.2/plain.crc")).unwrap(),
    );
    assert_eq!(entries(&st), want);
    assert_eq!(st.stats().unlocked, 3);

    // Once the writer lets go, loads take the shared lock again.
    drop(holder);
    std::fs::write(&p, std::fs::read(&other).unwrap()).unwrap();
    write_in_place(&crc_path(&p), 0, &std::fs::read(crc_path(&other)).unwrap());
    assert_eq!(st.refresh(), Ok(true));
    assert_eq!(st.stats().unlocked, 3);
}

#[test]
fn forensic_reads_complete_under_a_writers_exclusive_lock() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let _holder = Holder::lock(&crc_path(&p));
    let opts = mmkv_reader::raw::RawOptions {
        lock_timeout: Duration::from_millis(20),
        ..Default::default()
    };
    let raw = mmkv_reader::raw::read_store(&p, &opts).unwrap();
    assert_eq!(raw.sync, mmkv_reader::ReadSync::Unlocked);
    assert!(raw.crc_ok);
}

/// A writer that keeps changing the store under its exclusive lock (here: a meta whose crc
/// never matches, rewritten with a new sequence all the time) puts a reload off as
/// `Error::Busy` — counted in `busy`, never in `failed`, the previous snapshot serving — while
/// the same bad meta left still is a real failure.
#[test]
fn a_store_in_flux_is_busy_not_failed() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let _holder = Holder::lock(&crc_path(&p));
    let st = Store::open(&p, Options::new().lock_timeout(Duration::from_millis(5))).unwrap();
    let want = entries(&st);
    let mut meta = std::fs::read(crc_path(&p)).unwrap();
    // A crc no region has, and a last-confirmed pair that does not match either.
    meta[0..4].copy_from_slice(&0xdead_beef_u32.to_le_bytes());
    meta[32..40].copy_from_slice(&[0xff; 8]);
    let stop = AtomicBool::new(false);
    let busy = std::thread::scope(|s| {
        s.spawn(|| {
            let mut seq = 1000u32;
            while !stop.load(Ordering::Relaxed) {
                seq += 1;
                meta[8..12].copy_from_slice(&seq.to_le_bytes());
                write_in_place(&crc_path(&p), 0, &meta);
                std::thread::sleep(Duration::from_micros(200));
            }
        });
        let mut busy = None;
        for _ in 0..50 {
            if let Err(e) = st.refresh() {
                busy = Some(e);
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        busy
    });
    assert!(
        matches!(busy, Some(mmkv_reader::Error::Busy { .. })),
        "{busy:?}"
    );
    let stats = st.stats();
    assert!(stats.busy >= 1, "{stats:?}");
    assert_eq!(stats.failed, 0, "{stats:?}");
    assert_eq!(st.last_reload_error(), None);

    // The writer stopped on the bad meta: now it is the file's fault.
    let e = st.refresh().unwrap_err();
    assert!(!matches!(e, mmkv_reader::Error::Busy { .. }), "{e:?}");
    assert_eq!(st.stats().failed, 1);
    assert_eq!(st.last_reload_error(), Some(e));
    assert_eq!(entries(&st), want, "the previous snapshot keeps serving");
}

/// A writer preempted under its lock between its meta write and its data write leaves a still
/// meta over data that does not match it: the optimistic load fails the same way each time.
/// When the writer lets go within another lock timeout, the reload is judged under the lock —
/// the writer's finished append, not a failure (what a live multi-process writer showed once in
/// an all-50 report).
#[test]
fn a_torn_append_under_the_lock_is_judged_again_when_the_writer_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    let (p, region) = numbered_store(dir.path(), 10);
    let timeout = Duration::from_millis(800);
    let st = Store::open(&p, Options::new().lock_timeout(timeout)).unwrap();
    let rec = late_record();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let (p, region, rec) = (&p, &region, &rec);
        s.spawn(move || {
            let lock = writer_lock(&crc_path(p));
            // The meta of the append first (its last-confirmed pair matching nothing, so the
            // torn state is no fallback either), the data later, then the lock goes.
            publish_meta_only(p, region, rec);
            write_in_place(&crc_path(p), 32, &[0xff; 8]);
            ready_tx.send(()).unwrap();
            std::thread::sleep(timeout + timeout / 2);
            std::fs::write(p, data_bytes(&[&region[..], &rec[..]].concat())).unwrap();
            drop(lock);
        });
        ready_rx.recv().unwrap();
        let started = Instant::now();
        assert_eq!(st.refresh(), Ok(true), "{:?}", st.stats());
        assert!(
            started.elapsed() >= timeout,
            "the writer's lock was waited for"
        );
    });
    assert_eq!(st.get_string("late").as_deref(), Some("value"));
    assert_eq!(st.len(), 11);
    let stats = st.stats();
    assert_eq!((stats.failed, stats.busy), (0, 0), "{stats:?}");
    assert_eq!(st.last_reload_error(), None);
}

/// An official `clearAll` truncates the data file under its lock before it writes the meta:
/// a writer preempted there leaves a still meta whose actual size no longer fits the file
/// (seen in a loaded live AES-256 run: "actual size 45572 does not fit in a data file of 4096
/// bytes"). When that writer resumes and writes its meta while the reload waits for the lock
/// a second time, but keeps the lock (its next op), the reload is put off as `Error::Busy`,
/// not failed; once the writer lets go, the cleared store loads.
#[test]
fn a_truncation_the_writer_finishes_while_the_lock_is_waited_for_is_busy() {
    let dir = tempfile::tempdir().unwrap();
    let (p, region) = numbered_store(dir.path(), 1000);
    assert!(
        region.len() > 8192,
        "the region must outgrow the truncated file"
    );
    let timeout = Duration::from_millis(300);
    let st = Store::open(&p, Options::new().lock_timeout(timeout)).unwrap();
    assert_eq!(st.len(), 1000);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let result = std::thread::scope(|s| {
        let p = &p;
        s.spawn(move || {
            // An append the reader has not loaded yet (the reload's cause), then the clear.
            append_stored(p, &late_record());
            let lock = writer_lock(&crc_path(p));
            // Truncated, the meta still the append's; preempted here...
            std::fs::OpenOptions::new()
                .write(true)
                .open(p)
                .unwrap()
                .set_len(4096)
                .unwrap();
            ready_tx.send(()).unwrap();
            // ...past the reload's first lock wait and its optimistic attempts, into its
            // second wait; then the meta of the cleared store (a new sequence), and the lock
            // held on past that second wait.
            std::thread::sleep(timeout + timeout / 2);
            let cleared = MetaSpec {
                sequence: 2,
                ..MetaSpec::default()
            };
            write_meta(&crc_path(p), &meta_bytes(&[], cleared));
            std::thread::sleep(2 * timeout);
            drop(lock);
        });
        ready_rx.recv().unwrap();
        st.refresh()
    });
    assert!(
        matches!(result, Err(mmkv_reader::Error::Busy { .. })),
        "{result:?} {:?}",
        st.stats()
    );
    assert_eq!(st.stats().failed, 0, "{:?}", st.stats());
    assert_eq!(st.last_failed_reload(), None);
    assert_eq!(st.len(), 0, "the writer let go: the cleared store loads");
    assert_eq!(st.stats().failed, 0, "{:?}", st.stats());
}
