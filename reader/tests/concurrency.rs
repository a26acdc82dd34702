//! Several threads read while another thread plays a multi-process writer: under an
//! exclusive `flock` on the meta file it swaps the whole store between two versions
//! (shrinking and regrowing the data file) and appends records. Every snapshot a reader sees
//! must be exactly one of the states written, reads never fail, and no reload fails.
//!
//! Unix only: the writer here takes `flock` through rustix and writes the meta file through
//! another handle; on Windows byte-range locks are mandatory, so such a write fails under the
//! lock (the official Windows writer writes its meta through a mapping). `fsio`'s unit tests check the lock's
//! backoff on every platform.
#![cfg(unix)]

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use common::*;
use mmkv_reader::{FixedClock, Options, Store};
use rustix::fs::{flock, FlockOperation};

type State = HashMap<Vec<u8>, Vec<u8>>;

fn opts() -> Options {
    Options::new().clock(Arc::new(FixedClock(2_000_000_000)))
}

fn state_of(p: &Path) -> State {
    let s = Store::open(p, opts()).unwrap().snapshot();
    s.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
}

fn with_exclusive_lock(p: &Path, f: impl FnOnce()) {
    let meta = std::fs::File::open(crc_path(p)).unwrap();
    flock(&meta, FlockOperation::LockExclusive).unwrap();
    f();
    flock(&meta, FlockOperation::Unlock).unwrap();
}

#[test]
fn readers_see_only_written_states() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let a_files = (
        std::fs::read(corpus().join("v2.4.2/plain")).unwrap(),
        std::fs::read(corpus().join("v2.4.2/plain.crc")).unwrap(),
    );
    let b_path = corpus().join("v2.4.1/plain");
    let b_files = (
        std::fs::read(&b_path).unwrap(),
        std::fs::read(crc_path(&b_path)).unwrap(),
    );
    // crc digest -> state, for every state the writer will produce
    let mut states: HashMap<u32, State> = HashMap::new();
    let crc_of = |m: &[u8]| u32::from_le_bytes(m[0..4].try_into().unwrap());
    let a = state_of(&p);
    states.insert(crc_of(&a_files.1), a.clone());
    states.insert(crc_of(&b_files.1), state_of(&b_path));
    // states after appends to A: computed by applying them to a scratch copy
    let scratch = copy_store(dir.path(), "v2.4.2", "plain", "scratch");
    let mut appended = Vec::new();
    for i in 0..3u32 {
        let mut rec = Vec::new();
        record(&mut rec, format!("live-{i}").as_bytes(), &vi(i as u64 + 1));
        append_stored(&scratch, &rec);
        let crc = read_u32(&crc_path(&scratch), 0);
        states.insert(crc, state_of(&scratch));
        appended.push(rec);
    }

    let store = Arc::new(Store::open(&p, opts()).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let states = Arc::new(states);
    let reads = Arc::new(AtomicUsize::new(0));
    let mut readers = Vec::new();
    for t in 0..4usize {
        let (store, stop, states, reads) =
            (store.clone(), stop.clone(), states.clone(), reads.clone());
        readers.push(std::thread::spawn(move || {
            let mut i = t;
            while !stop.load(Ordering::Relaxed) {
                let snap = store.snapshot();
                let want = states
                    .get(&snap.meta().crc_digest)
                    .unwrap_or_else(|| panic!("unknown state crc {:#x}", snap.meta().crc_digest));
                assert_eq!(snap.len(), want.len());
                // spot-check a few keys of this state against the snapshot
                for (k, v) in want.iter().skip(i % want.len().max(1)).take(5) {
                    assert_eq!(snap.raw_value(k), Some(&v[..]));
                }
                // copy getters: the value must come from some written state
                if let Some((k, _)) = want.iter().nth(i % want.len().max(1)) {
                    let got = store.raw_value(k);
                    assert!(
                        states.values().any(|s| s.get(k) == got.as_ref()),
                        "torn value for {k:?}"
                    );
                }
                i += 1;
                reads.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }

    let writer = {
        let p = p.clone();
        let store = store.clone();
        std::thread::spawn(move || {
            for round in 0..40 {
                let (data, meta) = if round % 2 == 0 { &b_files } else { &a_files };
                with_exclusive_lock(&p, || {
                    std::fs::write(&p, data).unwrap();
                    write_in_place(&crc_path(&p), 0, meta);
                });
                if round % 2 == 1 {
                    // back at A: append the records one by one
                    for rec in &appended {
                        with_exclusive_lock(&p, || {
                            append_stored(&p, rec);
                        });
                        std::thread::yield_now();
                    }
                }
                if round % 8 == 0 {
                    store.refresh().unwrap();
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        })
    };
    writer.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    // final state: A with all appends
    store.refresh().unwrap();
    let fin = store.snapshot();
    let want = &states[&fin.meta().crc_digest];
    assert_eq!(fin.len(), want.len());
    assert_eq!(store.get_i32("live-2"), Some(3));
    let st = store.stats();
    assert_eq!(st.failed, 0, "{st:?}");
    assert!(st.full >= 1 && st.partial >= 1, "{st:?}");
    assert!(reads.load(Ordering::Relaxed) > 100);
}

/// A writer that truncates and regrows the data file in a loop (without taking the lock, the
/// worst case) while readers reload: no crash (the data file is never mapped), every failed
/// reload is a typed error, and every successful read returns a state that was written: the
/// current one, or the meta's last-confirmed one (which the official loader also falls back
/// to when the file is too short for the actual size but long enough for the last-confirmed
/// size).
#[test]
fn shrinking_data_file_never_crashes_readers() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let full = std::fs::read(&p).unwrap();
    let want = state_of(&p);
    let lc = copy_store(dir.path(), "v2.4.2", "plain", "lc");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&lc)
        .unwrap()
        .set_len(20_000)
        .unwrap();
    let confirmed = state_of(&lc);
    assert_ne!(confirmed.len(), want.len());
    let states = Arc::new(vec![want.clone(), confirmed]);
    let store = Arc::new(Store::open(&p, opts()).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..3 {
        let (store, stop, states) = (store.clone(), stop.clone(), states.clone());
        readers.push(std::thread::spawn(move || {
            let mut errors = 0usize;
            while !stop.load(Ordering::Relaxed) {
                if let Err(e) = store.refresh() {
                    assert!(
                        matches!(
                            e,
                            mmkv_reader::Error::ActualSizeBeyondFile { .. }
                                | mmkv_reader::Error::Truncated { .. }
                                | mmkv_reader::Error::CrcMismatch { .. }
                                | mmkv_reader::Error::DataTooShort { .. }
                        ),
                        "{e:?}"
                    );
                    errors += 1;
                }
                let snap = store.snapshot();
                let state = states
                    .iter()
                    .find(|s| s.len() == snap.len())
                    .expect("a written state");
                for (k, v) in state {
                    assert_eq!(snap.raw_value(k), Some(&v[..]));
                }
            }
            errors
        }));
    }
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    let c = crc_path(&p);
    for i in 0..300u32 {
        f.set_len([0u64, 3, 100, 20_000][i as usize % 4]).unwrap();
        set_u32(&c, 8, 1000 + 2 * i);
        std::thread::yield_now();
        write_in_place(&p, 0, &full);
        set_u32(&c, 8, 1001 + 2 * i);
    }
    stop.store(true, Ordering::Relaxed);
    let errors: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
    store.refresh().unwrap();
    assert_eq!(store.snapshot().len(), want.len());
    eprintln!("typed reload errors while shrinking: {errors}");
}
