//! Live writer in another process: the official library (newest built version) writes a seeded
//! sequence in MULTI_PROCESS mode in a child process (`conformance writer`), with sets of small
//! and big values (growth, full write-backs), removes, trims and clears, while reader threads in
//! this process read with check-on-read.
//!
//! Checked: every observed value is one the writer committed for that key (exact re-derivation,
//! so no torn value); every snapshot is explained by a single prefix of the writer's sequence,
//! and successive snapshots of a thread never go back in time; no crash; after the writer
//! exits, the reader sees exactly the final state (values, absent keys, key set, count).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use conformance::live::{live_key, live_type, LiveModel, LiveSpec, LIVE_ID};
use conformance::real::read_snapshot;
use conformance::sys::built_versions;
use conformance::{ReaderFactory, RealReader};

const SPEC: LiveSpec = LiveSpec {
    seed: 0x5eed_1234,
    ops: 6000,
    keys: 24,
};

#[derive(Debug, Default)]
struct ThreadStats {
    snapshots: usize,
    non_empty: usize,
    max_floor: usize,
}

#[test]
fn reader_follows_a_writer_in_another_process() {
    let tag = *built_versions()
        .last()
        .expect("mmkv-sys built no official version");
    let dir = tempfile::tempdir().expect("tempdir");
    let model = Arc::new(LiveModel::new(&SPEC));

    let mut child = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["writer", "--tag", tag, "--dir"])
        .arg(dir.path())
        .args([
            "--seed",
            &SPEC.seed.to_string(),
            "--ops",
            &SPEC.ops.to_string(),
            "--keys",
            &SPEC.keys.to_string(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the writer");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = lines.next().and_then(|l| l.ok()).unwrap_or_default();
    assert_eq!(first, "ready", "writer did not start");

    let path = dir.path().join(LIVE_ID);
    let store = Arc::new(
        RealReader::new()
            .open_store(&path, None, false)
            .expect("reader opens the live store"),
    );
    let done = Arc::new(AtomicBool::new(false));
    let started = Instant::now();

    let mut threads = Vec::new();
    for t in 0..3 {
        let (store, model, done) = (store.clone(), model.clone(), done.clone());
        threads.push(std::thread::spawn(
            move || -> Result<ThreadStats, String> {
                let mut stats = ThreadStats::default();
                let mut floor = 0usize;
                while !done.load(Ordering::Acquire) {
                    let observed: Vec<(usize, Option<conformance::Value>)> = if t < 2 {
                        // Zero-copy snapshot: one consistent view of every key.
                        let snap = store.snapshot();
                        (0..model.keys)
                            .map(|k| {
                                (
                                    k,
                                    read_snapshot(&snap, live_key(k).as_bytes(), live_type(k)),
                                )
                            })
                            .collect()
                    } else {
                        // Copy getters on the store, one check-on-read each: one key per read.
                        let k = stats.snapshots % model.keys;
                        let key = live_key(k);
                        let v = match live_type(k) {
                            conformance::ValueType::String => {
                                store.get_string(&key).map(conformance::Value::String)
                            }
                            conformance::ValueType::I64 => {
                                store.get_i64(&key).map(conformance::Value::I64)
                            }
                            conformance::ValueType::Bytes => {
                                store.get_bytes(&key).map(conformance::Value::Bytes)
                            }
                            conformance::ValueType::U32 => {
                                store.get_u32(&key).map(conformance::Value::U32)
                            }
                            _ => store.get_string_vec(&key).map(conformance::Value::Strings),
                        };
                        vec![(k, v)]
                    };
                    if observed.iter().any(|(_, v)| v.is_some()) {
                        stats.non_empty += 1;
                    }
                    floor = model
                        .check_snapshot(&observed, floor)
                        .map_err(|e| format!("thread {t}, read {}: {e}", stats.snapshots))?;
                    stats.snapshots += 1;
                    stats.max_floor = floor;
                }
                Ok(stats)
            },
        ));
    }

    let status = child.wait().expect("wait for the writer");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let writer_time = started.elapsed();
    done.store(true, Ordering::Release);
    let mut errors = Vec::new();
    let mut all_stats = Vec::new();
    for (t, h) in threads.into_iter().enumerate() {
        match h.join() {
            Ok(Ok(s)) => all_stats.push(s),
            Ok(Err(e)) => errors.push(e),
            Err(_) => errors.push(format!("reader thread {t} panicked")),
        }
    }
    assert!(status.success(), "writer failed: {status:?} {rest:?}");
    assert_eq!(
        rest.last().map(String::as_str),
        Some(format!("done {}", SPEC.ops).as_str())
    );
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let stats = store.stats();
    eprintln!(
        "live: {tag}, {} ops in {writer_time:?}; (reads, non-empty, last prefix) per thread: {:?}; \
         reloads: {} full, {} partial, {} failed",
        SPEC.ops,
        all_stats
            .iter()
            .map(|s| (s.snapshots, s.non_empty, s.max_floor))
            .collect::<Vec<_>>(),
        stats.full,
        stats.partial,
        stats.failed
    );
    assert!(
        stats.full + stats.partial > 0,
        "the reader never reloaded while the writer ran"
    );
    assert!(
        all_stats.iter().all(|s| s.snapshots > 0),
        "a reader thread never read"
    );
    assert_eq!(
        store.last_reload_error(),
        None,
        "a reload failed while the writer ran"
    );

    // After the writer: exactly the final state, through the open store and a fresh one.
    store.refresh().expect("refresh after the writer");
    let fresh = RealReader::new()
        .open(&path, None, false)
        .expect("fresh reader");
    let snap = store.snapshot();
    let mut live_keys = Vec::new();
    for k in 0..model.keys {
        let key = live_key(k);
        let want = model.final_value(k);
        let got = read_snapshot(&snap, key.as_bytes(), live_type(k));
        assert_eq!(got, want, "final value of {key} (open store)");
        assert_eq!(
            fresh.read(key.as_bytes(), live_type(k)),
            want,
            "final value of {key} (fresh store)"
        );
        if want.is_some() {
            live_keys.push(key.into_bytes());
        }
    }
    let mut keys: Vec<Vec<u8>> = snap.keys().map(<[u8]>::to_vec).collect();
    keys.sort();
    live_keys.sort();
    assert_eq!(keys, live_keys, "final key set");
    assert_eq!(snap.len(), live_keys.len());
    assert!(
        snap.meta().sequence > 0,
        "the writer never did a full write-back (meta sequence is 0)"
    );
    assert_eq!(fresh.count(), live_keys.len());
    assert!(writer_time < Duration::from_secs(300));
}
