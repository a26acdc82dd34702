//! Shared runner of `shrink.rs` and `stress.rs`: the official library writes a deterministic
//! op stream in a child process (`conformance writer --plan stress|shrink`, MULTI_PROCESS)
//! while reader threads in this process read the same store with `mmkv_reader::Store` and
//! check every value they see against the writer's model (`conformance::writer::model`).

#![allow(dead_code)] // each test uses a different part

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use conformance::sides::reader::read_snapshot;
use conformance::vocab::value::Value;
use conformance::vocab::{key_index, key_name, STORE_ID};
use conformance::writer::child::ChildExe;
use conformance::writer::model::Model;
use conformance::writer::value::claimed_seq;
use conformance::writer::{finish, start, state_digest, Done, WriterSpec};
use mmkv_reader::{Options, Snapshot, Store};

/// What one run is: the writer's spec and the reader threads.
pub struct Spec {
    /// The writer (its plan, ops, keys).
    pub writer: WriterSpec,
    /// Reader threads.
    pub readers: usize,
}

/// Figures of a run.
#[derive(Debug, Default)]
pub struct Outcome {
    pub tag: String,
    pub writer: Done,
    /// Value reads (getter calls) by all reader threads.
    pub reads: u64,
    /// Reads that returned a value (each checked byte for byte).
    pub values_checked: u64,
    /// Distinct (key, op) values observed.
    pub distinct_values: usize,
    /// Snapshots checked for consistency.
    pub snapshots: u64,
    /// Times a reader thread saw the region shrink between two of its snapshots.
    pub region_shrinks_seen: u64,
    /// Times the file-size poller saw the data file shrink.
    pub file_shrinks_seen: u64,
    /// Distinct meta sequence numbers (full write-backs) seen in snapshots.
    pub sequences_seen: usize,
    /// Times `/proc/self/maps` was checked for a mapping of the data file (never found).
    pub maps_checked: u64,
    /// `Store::refresh` calls that returned an error.
    pub refresh_errors: u64,
    pub first_refresh_error: Option<String>,
    /// The store's reload counters at the end.
    pub stats: mmkv_reader::ReloadStats,
    pub wall: Duration,
}

#[derive(Default)]
struct Shared {
    distinct: HashSet<(usize, usize)>,
    sequences: HashSet<u32>,
}

/// The official version the writer uses: `MMKV_ROBUST_TAG` if set (must be built), else the
/// newest version built into mmkv-sys.
pub fn writer_tag() -> &'static str {
    let built = mmkv_sys::built_versions();
    if let Ok(t) = std::env::var("MMKV_ROBUST_TAG") {
        return built
            .iter()
            .find(|b| **b == t)
            .unwrap_or_else(|| panic!("MMKV_ROBUST_TAG={t} is not built (built: {built:?})"));
    }
    built.last().expect("mmkv-sys built no official version")
}

/// The value of key `k` in `snap`, as the writer's type for it (bytes in these plans).
fn observe(snap: &Snapshot, k: usize) -> Option<Value> {
    snap.get_bytes(key_name(k))
        .map(|v| Value::Bytes(v.to_vec()))
}

/// Checks one snapshot against the model: every value is one the writer wrote for that key
/// (byte for byte), all keys together are explained by one prefix of the ops not older than
/// `floor` (the thread's previous snapshot), and it holds no other key. Returns the new floor.
fn check_snapshot(
    snap: &Snapshot,
    model: &Model,
    floor: usize,
    seen: &mut Vec<(usize, usize)>,
    reads: &mut u64,
    values: &mut u64,
) -> Result<usize, String> {
    let observed: Vec<(usize, Option<Value>)> =
        (0..model.keys).map(|k| (k, observe(snap, k))).collect();
    *reads += observed.len() as u64;
    for (k, v) in &observed {
        if let Some(v) = v {
            *values += 1;
            seen.extend(claimed_seq(*k, v).map(|n| (*k, n)));
        }
    }
    let floor = model.check_snapshot(&observed, floor)?;
    let mut n_keys = 0;
    for key in snap.keys() {
        n_keys += 1;
        if key_index(key).is_none_or(|k| k >= model.keys) {
            return Err(format!("unknown key {:?}", String::from_utf8_lossy(key)));
        }
    }
    if n_keys != snap.len() {
        return Err(format!("keys() yields {n_keys}, len() says {}", snap.len()));
    }
    Ok(floor)
}

/// Runs the writer and `spec.readers` reader threads; panics on any violation.
pub fn run(spec: &Spec) -> Outcome {
    let tag = writer_tag();
    let dir = tempfile::tempdir().expect("tempdir");
    let features = conformance::Features::from_tag(tag).expect("a release tag");
    let model = Arc::new(Model::new(spec.writer.ops(&features), spec.writer.keys));
    let writer = WriterSpec {
        wait_go: true,
        ..spec.writer.clone()
    };
    let exe = ChildExe::conformance(env!("CARGO_BIN_EXE_conformance"));
    let mut child = start(&exe, tag, dir.path(), &writer).expect("start the writer");

    let path: PathBuf = dir.path().join(STORE_ID);
    let store = Arc::new(Store::open(&path, Options::new()).expect("reader opens the store"));
    let done = Arc::new(AtomicBool::new(false));
    let shared = Arc::new(Mutex::new(Shared::default()));
    let started = Instant::now();

    let mut threads = Vec::new();
    for t in 0..spec.readers {
        let (store, h, done, shared) = (store.clone(), model.clone(), done.clone(), shared.clone());
        let path = path.clone();
        threads.push(std::thread::spawn(
            move || -> Result<ThreadStats, String> {
                reader_thread(t, &store, &h, &done, &shared, &path)
            },
        ));
    }
    child.send_line("go").expect("start the writer");
    let report = finish(child);
    // Let the readers see the final state for a moment before stopping them.
    std::thread::sleep(Duration::from_millis(200));
    done.store(true, Ordering::Release);
    let mut out = Outcome {
        tag: tag.to_string(),
        ..Outcome::default()
    };
    for th in threads {
        let s = th
            .join()
            .expect("reader thread panicked")
            .unwrap_or_else(|e| panic!("reader violation: {e}"));
        out.reads += s.reads;
        out.values_checked += s.values;
        out.snapshots += s.snapshots;
        out.region_shrinks_seen += s.region_shrinks;
        out.file_shrinks_seen += s.file_shrinks;
        out.refresh_errors += s.refresh_errors;
        out.maps_checked += s.maps_checked;
        if out.first_refresh_error.is_none() {
            out.first_refresh_error = s.first_refresh_error;
        }
    }
    out.writer = report.unwrap_or_else(|e| panic!("{e}"));
    out.wall = started.elapsed();
    {
        let sh = shared.lock().expect("shared");
        out.distinct_values = sh.distinct.len();
        out.sequences_seen = sh.sequences.len();
    }

    // Final state: exactly what the operations imply and what the writer read back.
    store.refresh().expect("final refresh");
    let snap = store.snapshot();
    for k in 0..model.keys {
        assert_eq!(
            observe(&snap, k),
            model.final_value(k),
            "final state of {} differs from the op stream's",
            key_name(k)
        );
    }
    let want = (0..model.keys)
        .filter(|k| model.final_value(*k).is_some())
        .count();
    assert_eq!(snap.len(), want);
    assert_eq!(out.writer.count, want as u64, "writer count");
    let digest = state_digest(&model.ops, |k, ty| Ok(read_snapshot(&snap, k, ty))).unwrap();
    assert_eq!(
        digest, out.writer.digest,
        "reader state differs from the writer's"
    );
    assert_eq!(out.writer.ops, model.ops.len() as u64);
    out.stats = store.stats();
    out
}

#[derive(Default)]
struct ThreadStats {
    reads: u64,
    values: u64,
    snapshots: u64,
    region_shrinks: u64,
    file_shrinks: u64,
    refresh_errors: u64,
    first_refresh_error: Option<String>,
    maps_checked: u64,
}

/// The data file must never be memory-mapped by this process (a truncation would turn
/// accesses into SIGBUS): checked in `/proc/self/maps` (the meta file may be mapped).
fn data_file_not_mapped(path: &Path) -> Result<(), String> {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return Ok(()); // not Linux
    };
    let p = path.to_string_lossy();
    match maps.lines().find(|l| l.trim_end().ends_with(&*p)) {
        Some(l) => Err(format!("the data file is memory-mapped: {l}")),
        None => Ok(()),
    }
}

/// Thread roles: 0 and 1 check zero-copy snapshots (check-on-read); 2 uses the copy getters
/// (one check-on-read per call, so no cross-key consistency, only per-key checks); 3 and
/// above call `refresh()` explicitly, check the snapshot, and poll the data file's size.
fn reader_thread(
    t: usize,
    store: &Store,
    model: &Model,
    done: &AtomicBool,
    shared: &Mutex<Shared>,
    path: &Path,
) -> Result<ThreadStats, String> {
    let mut st = ThreadStats::default();
    let mut floor = 0;
    let mut seen = Vec::new();
    let mut last_region = 0usize;
    let mut last_file = 0u64;
    let mut sequences = HashSet::new();
    while !done.load(Ordering::Acquire) {
        if t == 2 {
            // Copy getters: one check-on-read per key; successive reads never go back.
            for k in 0..model.keys {
                st.reads += 1;
                let v = store.get_bytes(key_name(k)).map(Value::Bytes);
                if let Some(v) = &v {
                    st.values += 1;
                    seen.extend(claimed_seq(k, v).map(|n| (k, n)));
                }
                floor = model.check_snapshot(&[(k, v)], floor)?;
            }
        } else {
            if t >= 3 {
                if let Err(e) = store.refresh() {
                    st.refresh_errors += 1;
                    st.first_refresh_error.get_or_insert_with(|| e.to_string());
                }
                if st.snapshots % 64 == 0 {
                    data_file_not_mapped(path)?;
                    st.maps_checked += 1;
                }
                let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
                if len < last_file {
                    st.file_shrinks += 1;
                }
                last_file = len;
            }
            let snap = store.snapshot();
            floor = check_snapshot(
                &snap,
                model,
                floor,
                &mut seen,
                &mut st.reads,
                &mut st.values,
            )?;
            st.snapshots += 1;
            if snap.region_len() < last_region {
                st.region_shrinks += 1;
            }
            last_region = snap.region_len();
            sequences.insert(snap.meta().sequence);
        }
        if seen.len() > 4096 {
            let mut sh = shared.lock().map_err(|_| "poisoned")?;
            sh.distinct.extend(seen.drain(..));
        }
    }
    let mut sh = shared.lock().map_err(|_| "poisoned")?;
    sh.distinct.extend(seen.drain(..));
    sh.sequences.extend(sequences);
    Ok(st)
}

/// A number from the environment, or the default.
pub fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
