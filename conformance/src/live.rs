//! The live multi-process scenario: the live plan of the one writer (`conformance writer
//! --plan live`, [`crate::writer`]) run by the official library in MULTI_PROCESS mode in a
//! child process, and the reading side ([`run_live`]): reader threads
//! sharing one long-lived `Store` follow the writer, paced or unpaced, in plaintext, AES-128,
//! AES-256 and expiring stores ([`live_matrix`]). The reader threads ([`read_while`]) are
//! also those of the stress and shrink tests (`tests/robust/`).
//!
//! Every set writes a self-identifying value ([`crate::writer::value`]), and the model
//! ([`crate::writer::model::Model`]) knows, for every key, which prefixes of the op stream
//! leave it in which state, which lets readers check that a snapshot corresponds to a single
//! prefix and that successive snapshots never go back in time.

use std::collections::HashSet;
use std::hash::{Hash as _, Hasher as _};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mmkv_reader::{ReloadStats, SnapshotData, Store};

use crate::differential::workload::Op;
use crate::judge::exceptions::{accepted, count_uses, Difference, Scope};
use crate::sides::reader::{read_snapshot, read_store, RealReader};
use crate::vocab::kind::{Features, StoreKind};
use crate::vocab::value::{show, Value, ValueType};
use crate::vocab::{key_index, key_name, STORE_ID};
use crate::writer::child::ChildExe;
use crate::writer::model::Model;
use crate::writer::value::{claimed_seq, key_type};
use crate::writer::{finish, start, Plan, WriterSpec};

/// The writer of one live run: the live plan (seed `0x5eed_1234`, 24 keys) with `ops` ops in
/// `kind`'s encryption and expiration (always opened MULTI_PROCESS), `pace_us` µs after each op.
pub fn live_spec(kind: StoreKind, pace_us: u64, ops: usize) -> WriterSpec {
    WriterSpec {
        seed: 0x5eed_1234,
        kind,
        pace_us,
        ..WriterSpec::new(Plan::Live, ops, 24)
    }
}

/// The pace of a paced run (microseconds after every op).
pub const PACED_US: u64 = 200;

/// Writer ops per live run unless `CONFORMANCE_LIVE_OPS` (or the report's `--live-ops`) says
/// otherwise.
pub const DEFAULT_OPS: usize = 1500;

/// The kinds the live writer runs in (each opened MULTI_PROCESS): plaintext, AES-128,
/// AES-256 and key expiration.
pub const LIVE_KINDS: [StoreKind; 4] = [
    StoreKind::Multi,
    StoreKind::Aes128,
    StoreKind::Aes256,
    StoreKind::Expire,
];

/// The (kind, pace) pairs a version with `features` runs: every kind of [`LIVE_KINDS`] it
/// supports, each unpaced and paced ([`PACED_US`]).
pub fn live_matrix(features: &Features) -> Vec<(StoreKind, u64)> {
    LIVE_KINDS
        .iter()
        .filter(|k| k.supported_by(features))
        .flat_map(|&k| [(k, 0), (k, PACED_US)])
        .collect()
}

/// What one live run observed.
#[derive(Debug, Clone, Default)]
pub struct LiveOutcome {
    /// The writer's version.
    pub tag: String,
    /// The spec it ran.
    pub kind: Option<StoreKind>,
    /// Microseconds between ops (0: unpaced).
    pub pace_us: u64,
    /// Ops the writer performed.
    pub ops: usize,
    /// Reads by all reader threads (a whole-store snapshot or one copy getter each).
    pub reads: usize,
    /// Distinct whole-store states the snapshot threads observed while the writer ran.
    pub distinct_states: usize,
    /// The highest writer prefix a snapshot was explained by (how far readers followed).
    pub last_prefix: usize,
    /// The long-lived store's reload counters at the end (no failed one unless accepted: no
    /// transient failure while the writer runs; busy ones are not failures).
    pub reloads: ReloadStats,
    /// How long the writer ran.
    pub writer_time: Duration,
    /// Everything that went wrong (empty: the run passed).
    pub errors: Vec<String>,
    /// What went wrong while the writer ran and the exceptions table accepts for this version
    /// (its writer loses its process lock): the first few, with the row's reference.
    pub accepted: Vec<String>,
}

impl LiveOutcome {
    /// True when nothing went wrong, the readers read, reloaded and saw more than one state.
    pub fn passed(&self) -> bool {
        self.errors.is_empty()
    }

    /// One line for logs and the report.
    pub fn line(&self) -> String {
        format!(
            "{} {} {}: {} ops in {:.2?}, {} reads, {} distinct states, last prefix {}, reloads {} full / {} partial / {} failed / {} busy{}",
            self.tag,
            self.kind.map(StoreKind::id).unwrap_or("?"),
            if self.pace_us > 0 {
                format!("paced {} us", self.pace_us)
            } else {
                "unpaced".to_string()
            },
            self.ops,
            self.writer_time,
            self.reads,
            self.distinct_states,
            self.last_prefix,
            self.reloads.full,
            self.reloads.partial,
            self.reloads.failed,
            self.reloads.busy,
            if self.errors.is_empty() {
                String::new()
            } else {
                format!(" — FAIL: {}", self.errors.join("; "))
            },
        ) + &if self.accepted.is_empty() {
            String::new()
        } else {
            format!(" (accepted upstream: {})", self.accepted.join("; "))
        }
    }
}

/// The least number of distinct states a run must observe: a twentieth of the ops for a paced
/// run (readers are much faster than a writer sleeping between ops; measured on a loaded 2-core
/// machine: 217–726 of 1,500), none beyond the final state for an unpaced one: on a quiet
/// machine the writer can finish its 1,500 ops in about 20 ms, between two reads (seen in CI: 3
/// reads, 1 state), so intermediate states are the paced runs' to show; unpaced runs count them.
pub fn min_distinct_states(spec: &WriterSpec) -> usize {
    if spec.pace_us > 0 {
        (spec.ops / 20).max(2)
    } else {
        1
    }
}

/// What a reader thread does each round (see [`read_while`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A zero-copy snapshot (one check-on-read) of every key, checked as one prefix.
    Snapshot,
    /// One key through the copy getters (one check-on-read each), the keys in turn.
    Getters,
    /// `refresh()` first, then a snapshot; also polls the data file's size and checks that
    /// the data file is never memory-mapped (a truncation would turn accesses into SIGBUS).
    Refresh,
}

/// What one reader thread saw.
#[derive(Debug, Default, Clone)]
pub struct ReadStats {
    /// Rounds: a whole-store snapshot or one copy getter each.
    pub reads: u64,
    /// Getter calls (a snapshot reads every key).
    pub values_read: u64,
    /// Getter calls that returned a value (each checked byte for byte).
    pub values: u64,
    /// Snapshots checked.
    pub snapshots: u64,
    /// Distinct whole-store states (hashes) of the snapshots.
    pub states: HashSet<u64>,
    /// Distinct (key, op) values observed.
    pub distinct_values: HashSet<(usize, usize)>,
    /// Distinct meta sequence numbers (full write-backs) of the snapshots.
    pub sequences: HashSet<u32>,
    /// The highest writer prefix a read was explained by (how far the reader followed).
    pub max_floor: usize,
    /// Times the region shrank between two snapshots.
    pub region_shrinks: u64,
    /// Times a [`Role::Refresh`] thread saw the data file shrink.
    pub file_shrinks: u64,
    /// Checks of `/proc/self/maps` for a mapping of the data file.
    pub maps_checked: u64,
    /// `Store::refresh` calls that returned an error.
    pub refresh_errors: u64,
    /// The first of them.
    pub first_refresh_error: Option<String>,
    /// Reads no writer prefix explains, counted (not failed) where the exceptions table
    /// accepts them.
    pub torn: u64,
    /// The first of them.
    pub first_torn: Option<String>,
}

/// Runs `during` (which must not panic) on this thread while one reader thread per role
/// reads `store` (the data file at `path`), checking every read against `model`: every value
/// is one the writer committed for that key (each key read as the type the op stream sets it
/// to), every snapshot holds only the model's keys and is explained by one prefix, never
/// older than the thread's previous read. A violation stops its thread, unless
/// `tolerate_torn` (an accepted upstream difference): then it is counted. Every thread reads
/// at least once, and once more after `during` returned. Returns what `during` returned and
/// what each thread saw, or its violation. With `idle_wait`, a round that saw nothing new (the
/// same store state; for [`Role::Getters`], a whole pass over the keys without a new value)
/// waits that long before the next: beside a paced writer, which sleeps between its ops, the
/// threads would otherwise spin on an unchanged store.
pub fn read_while<R>(
    store: &Store,
    model: &Model,
    path: &Path,
    roles: &[Role],
    tolerate_torn: bool,
    idle_wait: Option<Duration>,
    during: impl FnOnce() -> R,
) -> (R, Vec<std::result::Result<ReadStats, String>>) {
    let types = (0..model.keys)
        .map(|k| match model.history[k].iter().find_map(|h| h.1) {
            Some(i) => match &model.ops[i] {
                Op::Set { value, .. } => value.value_type(),
                _ => ValueType::Bytes,
            },
            None => ValueType::Bytes,
        })
        .collect();
    let r = Reading {
        store,
        model,
        types,
        path,
        tolerate_torn,
        idle_wait,
        done: AtomicBool::new(false),
    };
    std::thread::scope(|scope| {
        let threads: Vec<_> = (roles.iter().enumerate())
            .map(|(t, &role)| {
                let r = &r;
                scope.spawn(move || r.run(t, role))
            })
            .collect();
        let out = during();
        r.done.store(true, Ordering::Release);
        let seen = (threads.into_iter().enumerate())
            .map(|(t, h)| {
                h.join()
                    .unwrap_or_else(|_| Err(format!("reader thread {t} panicked")))
            })
            .collect();
        (out, seen)
    })
}

struct Reading<'a> {
    store: &'a Store,
    model: &'a Model,
    types: Vec<ValueType>,
    path: &'a Path,
    tolerate_torn: bool,
    idle_wait: Option<Duration>,
    done: AtomicBool,
}

impl Reading<'_> {
    fn run(&self, t: usize, role: Role) -> std::result::Result<ReadStats, String> {
        let model = self.model;
        let mut s = ReadStats::default();
        let (mut floor, mut last_region, mut last_file) = (0, 0, 0);
        // Whether the current round (a getter thread: its pass over the keys) saw a new state.
        let mut saw_new = false;
        // Read until a read that began after `done`: its last read sees the final state (an
        // unpaced writer can finish before a thread's first read).
        loop {
            let last = self.done.load(Ordering::Acquire);
            let (observed, keys_ok) = if role == Role::Getters {
                let k = (s.reads % model.keys as u64) as usize;
                let v = read_store(self.store, key_name(k).as_bytes(), self.types[k]);
                (vec![(k, v)], Ok(()))
            } else {
                if role == Role::Refresh {
                    self.refresh(&mut s, &mut last_file)?;
                }
                let snap = self.store.snapshot();
                s.snapshots += 1;
                s.region_shrinks += u64::from(snap.region_len() < last_region);
                last_region = snap.region_len();
                s.sequences.insert(snap.meta().sequence);
                let observed: Vec<(usize, Option<Value>)> = (0..model.keys)
                    .map(|k| {
                        (
                            k,
                            read_snapshot(&snap, key_name(k).as_bytes(), self.types[k]),
                        )
                    })
                    .collect();
                saw_new |= s.states.insert(state_hash(&observed));
                (observed, only_model_keys(&snap, model.keys))
            };
            s.values_read += observed.len() as u64;
            let values_before = s.distinct_values.len();
            for (k, v) in &observed {
                if let Some(v) = v {
                    s.values += 1;
                    s.distinct_values
                        .extend(claimed_seq(*k, v).map(|n| (*k, n)));
                }
            }
            match keys_ok.and_then(|()| model.check_snapshot(&observed, floor)) {
                Ok(f) => floor = f,
                Err(e) if self.tolerate_torn => {
                    s.torn += 1;
                    s.first_torn
                        .get_or_insert(format!("thread {t}, read {}: {e}", s.reads));
                }
                Err(e) => return Err(format!("thread {t}, read {}: {e}", s.reads)),
            }
            saw_new |= s.distinct_values.len() > values_before;
            s.reads += 1;
            s.max_floor = floor;
            if last {
                return Ok(s);
            }
            let round_done = role != Role::Getters || s.reads.is_multiple_of(model.keys as u64);
            if round_done {
                if let (false, Some(wait)) = (saw_new, self.idle_wait) {
                    std::thread::sleep(wait);
                }
                saw_new = false;
            }
        }
    }

    /// [`Role::Refresh`]'s part before its snapshot.
    fn refresh(&self, s: &mut ReadStats, last_file: &mut u64) -> std::result::Result<(), String> {
        if let Err(e) = self.store.refresh() {
            s.refresh_errors += 1;
            s.first_refresh_error.get_or_insert_with(|| e.to_string());
        }
        if s.snapshots.is_multiple_of(64) {
            data_file_not_mapped(self.path)?;
            s.maps_checked += 1;
        }
        let len = std::fs::metadata(self.path).map(|m| m.len()).unwrap_or(0);
        s.file_shrinks += u64::from(len < *last_file);
        *last_file = len;
        Ok(())
    }
}

/// A snapshot lists only keys `0..keys`, as many as its `len()`.
fn only_model_keys(snap: &SnapshotData, keys: usize) -> std::result::Result<(), String> {
    let mut n = 0;
    for key in snap.keys() {
        n += 1;
        if key_index(key).is_none_or(|k| k >= keys) {
            return Err(format!("unknown key {:?}", String::from_utf8_lossy(key)));
        }
    }
    if n != snap.len() {
        return Err(format!("keys() yields {n}, len() says {}", snap.len()));
    }
    Ok(())
}

/// The data file must never be memory-mapped by this process: checked in `/proc/self/maps`
/// (the meta file may be mapped).
fn data_file_not_mapped(path: &Path) -> std::result::Result<(), String> {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return Ok(()); // not Linux
    };
    let p = path.to_string_lossy();
    match maps.lines().find(|l| l.trim_end().ends_with(&*p)) {
        Some(l) => Err(format!("the data file is memory-mapped: {l}")),
        None => Ok(()),
    }
}

fn state_hash(observed: &[(usize, Option<Value>)]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{observed:?}").hash(&mut h);
    h.finish()
}

/// Runs one live scenario: `writer_exe writer --tag TAG ...` (the `conformance` binary) writes
/// `spec` into a fresh folder while three reader threads share one `Store` opened after the
/// writer created the file (two take whole-store snapshots, one uses the copy getters, each
/// with check-on-read). Checked: every observed value is one the writer committed for that
/// key (exact re-derivation, no torn value); every snapshot is explained by one prefix of the
/// writer's sequence, never older than the thread's previous one; the writer succeeds; no
/// reload fails; the readers saw at least [`min_distinct_states`] distinct states; after the
/// writer, the open store and a fresh one hold exactly the final state.
pub fn run_live(writer_exe: &Path, tag: &str, spec: &WriterSpec) -> LiveOutcome {
    let mut out = LiveOutcome {
        tag: tag.to_string(),
        kind: Some(spec.kind),
        pace_us: spec.pace_us,
        ops: spec.ops,
        ..LiveOutcome::default()
    };
    if let Err(e) = live_inner(writer_exe, tag, spec, &mut out) {
        out.errors.push(e);
    }
    out
}

fn live_inner(
    writer_exe: &Path,
    tag: &str,
    spec: &WriterSpec,
    out: &mut LiveOutcome,
) -> std::result::Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let model = Model::new(spec.ops(&Features::default()), spec.keys);
    let mut child = start(&ChildExe::conformance(writer_exe), tag, dir.path(), spec)
        .map_err(|e| e.to_string())?;

    let path = dir.path().join(STORE_ID);
    // A writer of the versions whose process lock is lost (exceptions table): what readers see
    // while it writes is counted, not failed (the open included: it may meet a torn state and is
    // retried while the writer runs); the final state below stays exact.
    let lock_lost = Scope::new(tag, spec.kind.crypt_key().is_some(), true)
        .and_then(|s| accepted(Difference::WriterLosesProcessLock, &s));
    let mut torn_opens: Option<(usize, String)> = None;
    let store = loop {
        // Whether the writer had ended before this attempt: then its files are final and the
        // open must succeed, whatever the row.
        let writer_ended = child.exited();
        match RealReader::beside_writers().open_store(
            &path,
            spec.kind.crypt_key(),
            spec.kind.aes256(),
        ) {
            Ok(s) => break s,
            Err(e) => match lock_lost {
                Some(row) if !writer_ended => {
                    let (count, _) = torn_opens
                        .get_or_insert_with(|| (0, format!("first: {e} ({})", row.reference)));
                    *count += 1;
                    std::thread::sleep(Duration::from_micros(200));
                }
                _ => {
                    child.kill();
                    let _ = child.wait();
                    return Err(format!("reader opens the live store: {e}"));
                }
            },
        }
    };
    if let (Some((count, first)), Some(row)) = (torn_opens, lock_lost) {
        count_uses(row, count as u64);
        out.accepted.push(format!(
            "{count} open(s) of the live store met a state no writer prefix explains and were retried, {first}"
        ));
    }
    let started = Instant::now();
    // Two threads take whole-store snapshots, one uses the copy getters.
    let roles = [Role::Snapshot, Role::Snapshot, Role::Getters];
    // Beside a paced writer, a round that saw nothing new waits a tenth of the pace.
    let idle_wait = (spec.pace_us > 0).then(|| Duration::from_micros(spec.pace_us / 10));
    let (finished, seen) = read_while(
        &store,
        &model,
        &path,
        &roles,
        lock_lost.is_some(),
        idle_wait,
        || {
            let finished = finish(child).map_err(|e| e.to_string());
            out.writer_time = started.elapsed();
            finished
        },
    );
    let mut states = HashSet::new();
    for r in seen {
        match r {
            Ok(s) => {
                out.reads += s.reads as usize;
                if let (Some(first), Some(row)) = (&s.first_torn, lock_lost) {
                    count_uses(row, s.torn);
                    out.accepted.push(format!(
                        "{} read(s) no writer prefix explains, first: {first} ({})",
                        s.torn, row.reference
                    ));
                }
                out.last_prefix = out.last_prefix.max(s.max_floor);
                states.extend(s.states);
            }
            Err(e) => out.errors.push(e),
        }
    }
    out.distinct_states = states.len();
    let stats = store.stats();
    out.reloads = stats;
    let done = finished?;
    if done.ops != spec.ops as u64 {
        return Err(format!("writer did {} of {} ops", done.ops, spec.ops));
    }
    if let (true, Some(row)) = (stats.failed > 0, lock_lost) {
        count_uses(row, stats.failed);
        out.accepted.push(format!(
            "{} reload(s) failed while the writer ran ({})",
            stats.failed, row.reference
        ));
    } else if let Some(e) = store.last_failed_reload() {
        // The most recent failure's error, even when a later reload succeeded (which clears
        // `last_reload_error`).
        out.errors.push(format!(
            "{} reload(s) failed while the writer ran (last: {e})",
            stats.failed
        ));
    }
    // A paced writer is still writing long after the store was opened; an unpaced one can
    // finish all its ops before the open (seen in CI: 1,500 ops in 86 µs), leaving nothing
    // to reload.
    if spec.pace_us > 0 && stats.full + stats.partial == 0 {
        out.errors
            .push("the reader never reloaded while the writer ran".to_string());
    }
    let least = min_distinct_states(spec);
    if out.distinct_states < least {
        out.errors.push(format!(
            "readers observed {} distinct states (at least {least} expected)",
            out.distinct_states
        ));
    }

    // After the writer: exactly the final state, through the open store and a fresh one.
    store
        .refresh()
        .map_err(|e| format!("refresh after the writer: {e}"))?;
    let fresh = RealReader::beside_writers()
        .open_store(&path, spec.kind.crypt_key(), spec.kind.aes256())
        .map_err(|e| format!("fresh reader: {e}"))?;
    let snap = store.snapshot();
    let fresh_snap = fresh.snapshot();
    let mut want_keys = Vec::new();
    for k in 0..model.keys {
        let key = key_name(k);
        let want = model.final_value(k);
        for (who, s) in [("open", &snap), ("fresh", &fresh_snap)] {
            let got = read_snapshot(s, key.as_bytes(), key_type(k));
            if got != want {
                out.errors.push(format!(
                    "final value of {key} ({who} store): {} instead of {}",
                    show(&got),
                    show(&want)
                ));
            }
        }
        let expire = snap.expire_at(key.as_bytes()).unwrap_or(0);
        let last_set = model.history[k].last().and_then(|h| h.1);
        let expiring = matches!(
            last_set.map(|i| &model.ops[i]),
            Some(Op::Set {
                expire: Some(_),
                ..
            })
        );
        if expiring != (expire > 0) {
            out.errors.push(format!(
                "{key}: expire time {expire} (expiring: {expiring})"
            ));
        }
        if want.is_some() {
            want_keys.push(key.into_bytes());
        }
    }
    let mut keys: Vec<Vec<u8>> = snap.keys().map(<[u8]>::to_vec).collect();
    keys.sort();
    want_keys.sort();
    if keys != want_keys || fresh_snap.len() != want_keys.len() {
        out.errors.push(format!(
            "final key set: {} keys (fresh {}), expected {}",
            keys.len(),
            fresh_snap.len(),
            want_keys.len()
        ));
    }
    if snap.meta().sequence == 0 {
        out.errors
            .push("the writer never did a full write-back (meta sequence is 0)".to_string());
    }
    Ok(())
}

/// Runs [`live_matrix`] for one version (the report's live-writer step; `writer_exe` is the
/// `conformance` binary) with `ops` ops per run.
pub fn run_version(
    writer_exe: &Path,
    tag: &str,
    features: &Features,
    ops: usize,
) -> Vec<LiveOutcome> {
    live_matrix(features)
        .into_iter()
        .map(|(kind, pace_us)| run_live(writer_exe, tag, &live_spec(kind, pace_us, ops)))
        .collect()
}

/// The per-version line of the report: runs, distinct states observed, reloads, failures.
pub fn summary_line(tag: &str, outcomes: &[LiveOutcome]) -> String {
    let sum = |f: fn(&LiveOutcome) -> u64| outcomes.iter().map(f).sum::<u64>();
    // Each kind's runs are consecutive ([`live_matrix`]).
    let mut kinds: Vec<&str> = outcomes
        .iter()
        .filter_map(|o| o.kind.map(StoreKind::id))
        .collect();
    kinds.dedup();
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    format!(
        "live writer {tag}: {} run(s) ({} × unpaced/paced), {} reads, {} distinct states observed \
         (fewest in one run: {}), reloads {} full / {} partial / {} failed / {} busy; {}",
        outcomes.len(),
        kinds.join(", "),
        sum(|o| o.reads as u64),
        sum(|o| o.distinct_states as u64),
        outcomes
            .iter()
            .map(|o| o.distinct_states)
            .min()
            .unwrap_or(0),
        sum(|o| o.reloads.full),
        sum(|o| o.reloads.partial),
        sum(|o| o.reloads.failed),
        sum(|o| o.reloads.busy),
        if outcomes.is_empty() {
            "FAIL (nothing ran)".to_string()
        } else if failed == 0 {
            "pass".to_string()
        } else {
            format!("{failed} FAIL")
        }
    ) + &match outcomes.iter().filter(|o| !o.accepted.is_empty()).count() {
        0 => String::new(),
        n => format!(
            " ({n} run(s) with accepted upstream differences while the writer ran: {})",
            Difference::WriterLosesProcessLock.describe()
        ),
    }
}
