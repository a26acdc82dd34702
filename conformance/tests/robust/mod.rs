//! Shared runner of `shrink.rs` and `stress.rs`: the official library writes a deterministic
//! workload in a child process (`robust-writer`, MULTI_PROCESS) while reader threads in this
//! process read the same store with `mmkv_reader::Store` and check every value they see.

#![allow(dead_code)] // each test uses a different part

#[path = "../../src/bin/robust-writer/workload.rs"]
pub mod workload;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mmkv_reader::{Options, Snapshot, Store};
use workload::{check_value, key_name, state_digest, History, Op, STORE_ID};

/// What one run of a workload is.
pub struct Spec {
    /// `stress` or `shrink` (the writer's first argument).
    pub workload: &'static str,
    /// Extra writer arguments (`--ops N --seed S` ...), matching `ops`.
    pub args: Vec<String>,
    /// The operations the writer will perform (derived the same way the writer does).
    pub ops: Vec<Op>,
    /// Number of keys.
    pub keys: usize,
    /// Reader threads.
    pub readers: usize,
}

/// The writer's closing line.
#[derive(Debug, Clone, Default)]
pub struct WriterReport {
    pub count: u64,
    pub digest: u64,
    pub ops: u64,
    pub max_file_size: u64,
    pub file_shrinks: u64,
    pub seq_start: u32,
    pub seq_end: u32,
    pub writer_ms: u64,
}

/// Figures of a run.
#[derive(Debug, Default)]
pub struct Outcome {
    pub tag: String,
    pub writer: WriterReport,
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
    distinct: HashSet<(usize, u64)>,
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

fn parse_report(line: &str) -> WriterReport {
    let f: Vec<&str> = line.split_whitespace().collect();
    assert!(
        f.len() == 9 && f[0] == "final",
        "bad writer report {line:?}"
    );
    let n = |i: usize| f[i].parse::<u64>().expect("number in writer report");
    WriterReport {
        count: n(1),
        digest: u64::from_str_radix(f[2], 16).expect("digest"),
        ops: n(3),
        max_file_size: n(4),
        file_shrinks: n(5),
        seq_start: n(6) as u32,
        seq_end: n(7) as u32,
        writer_ms: n(8),
    }
}

/// Checks one snapshot against the history: every value is one the writer wrote for that key
/// (byte for byte), and all keys together are explained by one prefix of the operations that
/// is not older than `floor` (the thread's previous snapshot). Returns the new floor.
fn check_snapshot(
    snap: &Snapshot,
    h: &History,
    floor: u64,
    last_n: &mut [u64],
    seen: &mut Vec<(usize, u64)>,
    reads: &mut u64,
    values: &mut u64,
) -> Result<u64, String> {
    let (mut lo, mut hi) = (floor, h.ops as u64 + 1);
    let mut absent = Vec::new();
    for (k, last) in last_n.iter_mut().enumerate() {
        *reads += 1;
        match snap.get_bytes(key_name(k)) {
            Some(v) => {
                *values += 1;
                let (n, len) = check_value(k, v)?;
                if h.written(k, n) != Some(len) {
                    return Err(format!("key {k}: op {n} never wrote this value"));
                }
                if n < *last {
                    return Err(format!("key {k}: went back from op {} to op {n}", *last));
                }
                *last = n;
                seen.push((k, n));
                let (a, b) = h.holds(k, n);
                lo = lo.max(a);
                hi = hi.min(b);
            }
            None => absent.push(k),
        }
    }
    if lo >= hi {
        return Err(format!(
            "snapshot mixes states: no prefix in [{lo}, {hi}) explains its values (floor {floor})"
        ));
    }
    for k in absent {
        if !h.absent_within(k, lo, hi) {
            return Err(format!(
                "key {k} absent, but present throughout prefixes [{lo}, {hi})"
            ));
        }
    }
    let mut n_keys = 0;
    for key in snap.keys() {
        n_keys += 1;
        let name = std::str::from_utf8(key).map_err(|_| "non-UTF-8 key".to_string())?;
        let ok = name
            .strip_prefix("key-")
            .and_then(|d| d.parse::<usize>().ok())
            .is_some_and(|k| k < h.keys);
        if !ok {
            return Err(format!("unknown key {name:?}"));
        }
    }
    if n_keys != snap.len() {
        return Err(format!("keys() yields {n_keys}, len() says {}", snap.len()));
    }
    Ok(lo)
}

/// Runs the writer and `spec.readers` reader threads; panics on any violation.
pub fn run(spec: &Spec) -> Outcome {
    let tag = writer_tag();
    let dir = tempfile::tempdir().expect("tempdir");
    let history = Arc::new(History::new(&spec.ops, spec.keys));
    let mut child = Command::new(env!("CARGO_BIN_EXE_robust-writer"))
        .arg(spec.workload)
        .args(["--tag", tag, "--dir"])
        .arg(dir.path())
        .args(["--keys", &spec.keys.to_string()])
        .args(&spec.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn robust-writer");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = lines.next().and_then(|l| l.ok()).unwrap_or_default();
    assert_eq!(first, "ready", "writer did not start");

    let path: PathBuf = dir.path().join(STORE_ID);
    let store = Arc::new(Store::open(&path, Options::new()).expect("reader opens the store"));
    let done = Arc::new(AtomicBool::new(false));
    let shared = Arc::new(Mutex::new(Shared::default()));
    let started = Instant::now();

    let mut threads = Vec::new();
    for t in 0..spec.readers {
        let (store, h, done, shared) =
            (store.clone(), history.clone(), done.clone(), shared.clone());
        let path = path.clone();
        threads.push(std::thread::spawn(
            move || -> Result<ThreadStats, String> {
                reader_thread(t, &store, &h, &done, &shared, &path)
            },
        ));
    }
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"go\n")
        .expect("start the writer");
    let report_line = lines.next().and_then(|l| l.ok()).unwrap_or_default();
    let status = child.wait().expect("wait for the writer");
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
    assert!(status.success(), "writer failed: {status}");
    out.writer = parse_report(&report_line);
    out.wall = started.elapsed();
    {
        let sh = shared.lock().expect("shared");
        out.distinct_values = sh.distinct.len();
        out.sequences_seen = sh.sequences.len();
    }

    // Final state: exactly what the operations imply and what the writer read back.
    store.refresh().expect("final refresh");
    let snap = store.snapshot();
    let want = history.final_state();
    let mut got = Vec::new();
    for k in 0..spec.keys {
        if let Some(v) = snap.get_bytes(key_name(k)) {
            let (n, len) = check_value(k, v).unwrap_or_else(|e| panic!("final state: {e}"));
            got.push((k, n, len));
        }
    }
    assert_eq!(got, want, "final state differs from the workload's");
    assert_eq!(snap.len(), want.len());
    assert_eq!(out.writer.count, want.len() as u64, "writer count");
    let digest =
        state_digest((0..spec.keys).filter_map(|k| snap.get_bytes(key_name(k)).map(|v| (k, v))));
    assert_eq!(
        digest, out.writer.digest,
        "reader state differs from the writer's"
    );
    assert_eq!(out.writer.ops, spec.ops.len() as u64);
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
    h: &History,
    done: &AtomicBool,
    shared: &Mutex<Shared>,
    path: &Path,
) -> Result<ThreadStats, String> {
    let mut st = ThreadStats::default();
    let mut last_n = vec![0u64; h.keys];
    let mut floor = 0u64;
    let mut seen = Vec::new();
    let mut last_region = 0usize;
    let mut last_file = 0u64;
    let mut sequences = HashSet::new();
    while !done.load(Ordering::Acquire) {
        if t == 2 {
            for (k, last) in last_n.iter_mut().enumerate() {
                st.reads += 1;
                if let Some(v) = store.get_bytes(key_name(k)) {
                    st.values += 1;
                    let (n, len) = check_value(k, &v)?;
                    if h.written(k, n) != Some(len) {
                        return Err(format!("key {k}: op {n} never wrote this value"));
                    }
                    if n < *last {
                        return Err(format!("key {k}: went back from op {} to op {n}", *last));
                    }
                    *last = n;
                    seen.push((k, n));
                }
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
                h,
                floor,
                &mut last_n,
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
