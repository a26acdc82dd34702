//! Shared runner of `shrink.rs` and `stress.rs`: the official library writes a deterministic
//! op stream in a child process (`conformance writer --plan stress|shrink`, MULTI_PROCESS)
//! while reader threads in this process (`conformance::live::spawn_readers`, those of the live
//! run) read the same store with `mmkv_reader::Store` and check every value they see against
//! the writer's model (`conformance::writer::model`).

#![allow(dead_code)] // each test uses a different part

use std::path::PathBuf;
use std::time::{Duration, Instant};

use conformance::live::{read_while, ReadStats, Role};
use conformance::sides::reader::read_snapshot;
use conformance::vocab::value::ValueType;
use conformance::vocab::{key_name, STORE_ID};
use conformance::writer::child::ChildExe;
use conformance::writer::model::Model;
use conformance::writer::{finish, start, state_digest, Done, WriterSpec};
use mmkv_reader::{Options, Store};

/// What one run is: the writer's spec and the reader threads.
pub struct Spec {
    /// The writer (its plan, ops, keys).
    pub writer: WriterSpec,
    /// Reader threads (see [`ROLES`]).
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

/// Thread roles: 0 and 1 check zero-copy snapshots (check-on-read); 2 uses the copy getters
/// (one check-on-read per call, so no cross-key consistency, only per-key checks); 3 and
/// above call `refresh()` explicitly, check the snapshot, and poll the data file's size.
const ROLES: [Role; 4] = [Role::Snapshot, Role::Snapshot, Role::Getters, Role::Refresh];

/// Runs the writer and `spec.readers` reader threads; panics on any violation.
pub fn run(spec: &Spec) -> Outcome {
    let tag = writer_tag();
    let dir = tempfile::tempdir().expect("tempdir");
    let features = conformance::Features::from_tag(tag).expect("a release tag");
    let model = Model::new(spec.writer.ops(&features), spec.writer.keys);
    let writer = WriterSpec {
        wait_go: true,
        ..spec.writer.clone()
    };
    let exe = ChildExe::conformance(env!("CARGO_BIN_EXE_conformance"));
    let mut child = start(&exe, tag, dir.path(), &writer).expect("start the writer");

    let path: PathBuf = dir.path().join(STORE_ID);
    let store = Store::open(&path, Options::new()).expect("reader opens the store");
    let started = Instant::now();
    let roles: Vec<Role> = (0..spec.readers)
        .map(|t| ROLES[t.min(ROLES.len() - 1)])
        .collect();
    let (report, seen) = read_while(&store, &model, &path, &roles, false, None, || {
        let report = child.send_line("go").and_then(|()| finish(child));
        // Let the readers see the final state for a moment before stopping them.
        std::thread::sleep(Duration::from_millis(200));
        report
    });
    let mut s = ReadStats::default();
    for r in seen {
        add(
            &mut s,
            r.unwrap_or_else(|e| panic!("reader violation: {e}")),
        );
    }
    let mut out = Outcome {
        tag: tag.to_string(),
        reads: s.values_read,
        values_checked: s.values,
        distinct_values: s.distinct_values.len(),
        snapshots: s.snapshots,
        region_shrinks_seen: s.region_shrinks,
        file_shrinks_seen: s.file_shrinks,
        sequences_seen: s.sequences.len(),
        maps_checked: s.maps_checked,
        refresh_errors: s.refresh_errors,
        first_refresh_error: s.first_refresh_error,
        ..Outcome::default()
    };
    out.writer = report.unwrap_or_else(|e| panic!("{e}"));
    out.wall = started.elapsed();

    // Final state: exactly what the operations imply and what the writer read back.
    store.refresh().expect("final refresh");
    let snap = store.snapshot();
    for k in 0..model.keys {
        assert_eq!(
            read_snapshot(&snap, key_name(k).as_bytes(), ValueType::Bytes),
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

/// Adds a reader thread's figures to `a`.
fn add(a: &mut ReadStats, o: ReadStats) {
    a.values_read += o.values_read;
    a.values += o.values;
    a.snapshots += o.snapshots;
    a.distinct_values.extend(o.distinct_values);
    a.sequences.extend(o.sequences);
    a.region_shrinks += o.region_shrinks;
    a.file_shrinks += o.file_shrinks;
    a.maps_checked += o.maps_checked;
    a.refresh_errors += o.refresh_errors;
    a.first_refresh_error = a.first_refresh_error.take().or(o.first_refresh_error);
}

/// A number from the environment, or the default.
pub fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
