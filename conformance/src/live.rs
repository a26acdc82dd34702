//! The live multi-process scenario: a seeded writer sequence run by the official library in
//! MULTI_PROCESS mode in a child process (`conformance writer ...`), the model the reading
//! process uses to judge what it observes, and the reading side ([`run_live`]): reader threads
//! sharing one long-lived `Store` follow the writer, paced or unpaced, in plaintext, AES-128,
//! AES-256 and expiring stores ([`live_matrix`]).
//!
//! Every set writes a value derived from `(key index, op index)` only, so an observed value
//! identifies the op that wrote it, and any torn or foreign value fails the exact
//! re-derivation. The model also knows, for every key, which prefixes of the op sequence
//! leave it in which state, which lets readers check that a snapshot corresponds to a single
//! prefix and that successive snapshots never go back in time.

use std::collections::HashSet;
use std::hash::{Hash as _, Hasher as _};
use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::kind::{Features, ModeKind, StoreKind};
use crate::official::OfficialLib;
use crate::real::{read_snapshot, read_store, RealReader};
use crate::value::{Value, ValueType};
use crate::vocab::SplitMix;
use crate::writer::child::{ChildExe, Line, Running};

/// Parameters of a live run (shared by the writer process and the reading side).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveSpec {
    /// Seed of the op sequence.
    pub seed: u64,
    /// Number of ops.
    pub ops: usize,
    /// Number of keys.
    pub keys: usize,
    /// The store's encryption and expiration (its crypt key, AES-256, key expiration); the
    /// store is always opened in MULTI_PROCESS mode, whatever the kind's own mode.
    pub kind: StoreKind,
    /// Microseconds the writer sleeps after every op (0: unpaced, as fast as it can).
    pub pace_us: u64,
}

/// The expire duration (30 days) the writer gives every third key of an expiring store; the
/// other keys get the default (never).
pub const LIVE_EXPIRE: u32 = 30 * 24 * 3600;

/// The pace of a paced run (microseconds after every op).
pub const PACED_US: u64 = 200;

/// Writer ops per live run unless `CONFORMANCE_LIVE_OPS` (or the report's `--live-ops`) says
/// otherwise.
pub const DEFAULT_OPS: usize = 1500;

/// One writer operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveOp {
    /// Set key `key` to `live_value(key, op index, size)`.
    Set {
        /// Key index.
        key: usize,
        /// Size class of the value (big values force growth and full write-backs).
        size: usize,
    },
    /// Remove key `key`.
    Remove {
        /// Key index.
        key: usize,
    },
    /// `clearAll()`.
    ClearAll,
    /// `trim()`.
    Trim,
}

/// How long the writer child may take to open its store and say `ready`.
const WRITER_START: Duration = Duration::from_secs(60);

/// The store id of the live store.
pub const LIVE_ID: &str = "live";

/// The op sequence of `spec`.
pub fn live_ops(spec: &LiveSpec) -> Vec<LiveOp> {
    let mut rng = SplitMix::new(spec.seed);
    let keys = spec.keys.max(1) as u64;
    (0..spec.ops)
        .map(|_| {
            let r = rng.below(1000);
            let key = rng.below(keys) as usize;
            if r < 3 {
                LiveOp::ClearAll
            } else if r < 13 {
                LiveOp::Trim
            } else if r < 160 {
                LiveOp::Remove { key }
            } else {
                let size = if rng.below(10) == 0 {
                    1024 + rng.below(12 * 1024) as usize
                } else {
                    rng.below(64) as usize
                };
                LiveOp::Set { key, size }
            }
        })
        .collect()
}

/// The name of key `i`.
pub fn live_key(i: usize) -> String {
    format!("live-{i:03}")
}

/// The (fixed) type of key `i`.
pub fn live_type(i: usize) -> ValueType {
    match i % 5 {
        0 => ValueType::String,
        1 => ValueType::I64,
        2 => ValueType::Bytes,
        3 => ValueType::U32,
        _ => ValueType::Strings,
    }
}

fn filler(key: usize, seq: usize, n: usize) -> impl Iterator<Item = u8> {
    let mut rng = SplitMix::new(((key as u64) << 32) ^ seq as u64);
    (0..n).map(move |_| b'a' + (rng.below(26) as u8))
}

/// The value op `seq` writes to key `key` with size class `size`.
pub fn live_value(key: usize, seq: usize, size: usize) -> Value {
    match live_type(key) {
        ValueType::String => {
            let mut s = format!("{key}#{seq}#{size}#");
            s.extend(filler(key, seq, size).map(char::from));
            Value::String(s)
        }
        ValueType::I64 => Value::I64(((key as i64) << 40) | seq as i64),
        ValueType::Bytes => {
            let mut b = format!("{key}#{seq}#{size}#").into_bytes();
            b.extend(filler(key, seq, size));
            Value::Bytes(b)
        }
        ValueType::U32 => Value::U32(seq as u32),
        _ => Value::Strings(vec![
            format!("{key}#{seq}#{size}#"),
            filler(key, seq, size).map(char::from).collect(),
        ]),
    }
}

/// The op index (and size class) encoded in an observed value of key `key`, if it parses.
fn decode_seq(key: usize, v: &Value) -> Option<(usize, Option<usize>)> {
    fn head(text: &[u8]) -> Option<(usize, usize, usize)> {
        let text = std::str::from_utf8(text.get(..text.len().min(40))?).ok()?;
        let mut parts = text.split('#');
        let k = parts.next()?.parse().ok()?;
        let s = parts.next()?.parse().ok()?;
        let z = parts.next()?.parse().ok()?;
        Some((k, s, z))
    }
    let (k, seq, size) = match v {
        Value::String(s) => {
            let (k, s, z) = head(s.as_bytes())?;
            (k, s, Some(z))
        }
        Value::Bytes(b) => {
            let (k, s, z) = head(b)?;
            (k, s, Some(z))
        }
        Value::Strings(v) => {
            let (k, s, z) = head(v.first()?.as_bytes())?;
            (k, s, Some(z))
        }
        Value::I64(x) => ((x >> 40) as usize, (x & ((1 << 40) - 1)) as usize, None),
        Value::U32(x) => (key, *x as usize, None),
        _ => return None,
    };
    (k == key).then_some((seq, size))
}

/// What the writer's sequence says about every key and prefix.
#[derive(Debug, Clone)]
pub struct LiveModel {
    /// The ops.
    pub ops: Vec<LiveOp>,
    /// Number of keys.
    pub keys: usize,
    /// Per key: state changes `(first prefix with this state, Some(op index of the set))`,
    /// starting with `(0, None)`. Prefix `p` = the first `p` ops applied.
    pub history: Vec<Vec<(usize, Option<usize>)>>,
}

/// A half-open window `[lo, hi)` of op-sequence prefixes.
pub type Window = (usize, usize);

impl LiveModel {
    /// Builds the model of `spec`.
    pub fn new(spec: &LiveSpec) -> LiveModel {
        let ops = live_ops(spec);
        let keys = spec.keys.max(1);
        let mut history: Vec<Vec<(usize, Option<usize>)>> = vec![vec![(0, None)]; keys];
        let mut state: Vec<Option<usize>> = vec![None; keys];
        for (i, op) in ops.iter().enumerate() {
            let mut change = |k: usize, s: Option<usize>, history: &mut Vec<Vec<_>>| {
                if state[k] != s || s.is_some() {
                    state[k] = s;
                    history[k].push((i + 1, s));
                }
            };
            match *op {
                LiveOp::Set { key, .. } => change(key, Some(i), &mut history),
                LiveOp::Remove { key } => change(key, None, &mut history),
                LiveOp::ClearAll => {
                    for k in 0..keys {
                        change(k, None, &mut history);
                    }
                }
                LiveOp::Trim => {}
            }
        }
        LiveModel { ops, keys, history }
    }

    /// Number of prefixes (`ops.len() + 1`).
    pub fn prefixes(&self) -> usize {
        self.ops.len() + 1
    }

    /// The value key `k` holds after every op (the final state).
    pub fn final_value(&self, k: usize) -> Option<Value> {
        let last = self.history[k].last()?.1?;
        match self.ops[last] {
            LiveOp::Set { size, .. } => Some(live_value(k, last, size)),
            _ => None,
        }
    }

    /// The windows of prefixes in which key `k` is in the observed state; an error when the
    /// observation is no value the writer ever committed for that key.
    pub fn windows(
        &self,
        k: usize,
        observed: &Option<Value>,
    ) -> std::result::Result<Vec<Window>, String> {
        let h = &self.history[k];
        let end_of = |i: usize| h.get(i + 1).map(|x| x.0).unwrap_or(self.prefixes());
        match observed {
            None => Ok(h
                .iter()
                .enumerate()
                .filter(|(_, (_, s))| s.is_none())
                .map(|(i, (start, _))| (*start, end_of(i)))
                .collect()),
            Some(v) => {
                let (seq, _) = decode_seq(k, v)
                    .ok_or_else(|| format!("key {}: foreign or torn value {v}", live_key(k)))?;
                let size = match self.ops.get(seq) {
                    Some(LiveOp::Set { key, size }) if *key == k => *size,
                    _ => {
                        return Err(format!(
                            "key {}: value claims op {seq}, which did not set this key: {v}",
                            live_key(k)
                        ))
                    }
                };
                if live_value(k, seq, size) != *v {
                    return Err(format!("key {}: torn value for op {seq}: {v}", live_key(k)));
                }
                let i = h
                    .iter()
                    .position(|(_, s)| *s == Some(seq))
                    .ok_or_else(|| format!("key {}: op {seq} missing from history", live_key(k)))?;
                Ok(vec![(h[i].0, end_of(i))])
            }
        }
    }

    /// Checks one consistent observation of several keys (a snapshot): every value was
    /// committed, and some prefix `>= floor` explains all of them. Returns the lowest prefix
    /// that does (the new floor).
    pub fn check_snapshot(
        &self,
        observed: &[(usize, Option<Value>)],
        floor: usize,
    ) -> std::result::Result<usize, String> {
        // Candidate prefixes: intersect the union-of-windows of every key, clipped to >= floor.
        let mut candidates: Vec<Window> = vec![(floor, self.prefixes())];
        for (k, v) in observed {
            let windows = self.windows(*k, v)?;
            let mut next = Vec::new();
            for &(a, b) in &candidates {
                for &(c, d) in &windows {
                    let lo = a.max(c);
                    let hi = b.min(d);
                    if lo < hi {
                        next.push((lo, hi));
                    }
                }
            }
            if next.is_empty() {
                return Err(format!(
                    "no single writer prefix >= {floor} explains the snapshot; first conflict at key {} = {}",
                    live_key(*k),
                    crate::value::show(v)
                ));
            }
            candidates = next;
        }
        Ok(candidates.iter().map(|w| w.0).min().unwrap_or(floor))
    }
}

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

/// Runs the writer side: opens the live store with `lib` in `dir` (MULTI_PROCESS, with the
/// kind's crypt key; key expiration enabled for an expiring kind), prints `ready` on stdout,
/// performs every op of `spec` (sleeping `pace_us` after each), syncs, prints `done N` and
/// returns.
pub fn run_writer(lib: &dyn OfficialLib, dir: &Path, spec: &LiveSpec) -> Result<()> {
    let ops = live_ops(spec);
    let kind = spec.kind;
    let mut store = lib.open_with(
        dir,
        LIVE_ID,
        ModeKind::Multi,
        kind.crypt_key(),
        kind.aes256(),
    )?;
    if kind.key_expire() {
        store.enable_key_expire(0)?;
    }
    store.sync()?;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "ready");
    let _ = out.flush();
    for (i, op) in ops.iter().enumerate() {
        match *op {
            LiveOp::Set { key, size } => {
                let expire = (kind.key_expire() && key % 3 == 0).then_some(LIVE_EXPIRE);
                store.set(live_key(key).as_bytes(), &live_value(key, i, size), expire)?;
            }
            LiveOp::Remove { key } => store.remove(live_key(key).as_bytes())?,
            LiveOp::ClearAll => store.clear_all()?,
            LiveOp::Trim => store.trim()?,
        }
        if spec.pace_us > 0 {
            std::thread::sleep(Duration::from_micros(spec.pace_us));
        }
    }
    store.sync()?;
    store.close()?;
    let _ = writeln!(out, "done {}", ops.len());
    let _ = out.flush();
    Ok(())
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
    /// The long-lived store's reload counters at the end.
    pub full_reloads: u64,
    /// Partial reloads.
    pub partial_reloads: u64,
    /// Failed reloads (must be 0: no transient failure while the writer runs).
    pub failed_reloads: u64,
    /// Reloads put off because the writer kept changing the store (`ReloadStats::busy`; not
    /// failures).
    pub busy_reloads: u64,
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
            self.full_reloads,
            self.partial_reloads,
            self.failed_reloads,
            self.busy_reloads,
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
pub fn min_distinct_states(spec: &LiveSpec) -> usize {
    if spec.pace_us > 0 {
        (spec.ops / 20).max(2)
    } else {
        1
    }
}

#[derive(Debug, Default)]
struct ThreadStats {
    reads: usize,
    states: HashSet<u64>,
    max_floor: usize,
    /// Reads no writer prefix explains (counted only where the exceptions table accepts them).
    torn: usize,
    first_torn: Option<String>,
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
pub fn run_live(writer_exe: &Path, tag: &str, spec: &LiveSpec) -> LiveOutcome {
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
    spec: &LiveSpec,
    out: &mut LiveOutcome,
) -> std::result::Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let model = Arc::new(LiveModel::new(spec));
    let mut cmd = ChildExe::conformance(writer_exe).command(&["writer", "--tag", tag, "--dir"]);
    cmd.arg(dir.path())
        .args(["--seed", &spec.seed.to_string()])
        .args(["--ops", &spec.ops.to_string()])
        .args(["--keys", &spec.keys.to_string()])
        .args(["--kind", spec.kind.id()])
        .args(["--pace-us", &spec.pace_us.to_string()]);
    let mut child = Running::spawn(cmd, false).map_err(|e| e.to_string())?;
    match child.next_line(WRITER_START) {
        Line::Line(l) if l == "ready" => {}
        other => {
            child.kill();
            let _ = child.wait();
            return Err(format!("writer did not start (said {other:?})"));
        }
    }

    let path = dir.path().join(LIVE_ID);
    // A writer of the versions whose process lock is lost (exceptions table): what readers see
    // while it writes is counted, not failed (the open included: it may meet a torn state and is
    // retried while the writer runs); the final state below stays exact.
    let lock_lost = crate::exceptions::Scope::new(tag, spec.kind.crypt_key().is_some(), true)
        .and_then(|s| {
            crate::exceptions::accepted(crate::exceptions::Difference::WriterLosesProcessLock, &s)
        });
    let mut torn_opens: Option<(usize, String)> = None;
    let store = loop {
        // Whether the writer had ended before this attempt: then its files are final and the
        // open must succeed, whatever the row.
        let writer_ended = child.exited();
        match RealReader::new().open_store(&path, spec.kind.crypt_key(), spec.kind.aes256()) {
            Ok(s) => break Arc::new(s),
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
    if let Some((count, first)) = torn_opens {
        out.accepted.push(format!(
            "{count} open(s) of the live store met a state no writer prefix explains and were retried, {first}"
        ));
    }
    let done = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut threads = Vec::new();
    for t in 0..3 {
        let (store, model, done) = (store.clone(), model.clone(), done.clone());
        threads.push(std::thread::spawn(
            move || -> std::result::Result<ThreadStats, String> {
                let mut stats = ThreadStats::default();
                let mut floor = 0usize;
                // Read until a read that began after the writer ended: every thread reads at
                // least once, and its last read sees the final state (an unpaced writer can
                // finish before a thread's first read).
                loop {
                    let last = done.load(Ordering::Acquire);
                    let observed: Vec<(usize, Option<Value>)> = if t < 2 {
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
                        // Copy getters, one check-on-read each: one key per read.
                        let k = stats.reads % model.keys;
                        vec![(k, read_store(&store, live_key(k).as_bytes(), live_type(k)))]
                    };
                    match model.check_snapshot(&observed, floor) {
                        Ok(f) => floor = f,
                        Err(e) if lock_lost.is_some() => {
                            stats.torn += 1;
                            stats
                                .first_torn
                                .get_or_insert(format!("thread {t}, read {}: {e}", stats.reads));
                        }
                        Err(e) => return Err(format!("thread {t}, read {}: {e}", stats.reads)),
                    }
                    if t < 2 {
                        stats.states.insert(state_hash(&observed));
                    }
                    stats.reads += 1;
                    stats.max_floor = floor;
                    if last {
                        break;
                    }
                }
                Ok(stats)
            },
        ));
    }

    let waited = child
        .wait()
        .map_err(|e| format!("wait for the writer: {e}"));
    let (status, rest) = match waited {
        Ok((status, rest, _)) => (Ok(status), rest),
        Err(e) => (Err(e), Vec::new()),
    };
    out.writer_time = started.elapsed();
    done.store(true, Ordering::Release);
    let mut states = HashSet::new();
    for (t, h) in threads.into_iter().enumerate() {
        match h.join() {
            Ok(Ok(s)) => {
                if s.reads == 0 {
                    out.errors.push(format!("reader thread {t} never read"));
                }
                out.reads += s.reads;
                if let (Some(first), Some(row)) = (&s.first_torn, lock_lost) {
                    out.accepted.push(format!(
                        "{} read(s) no writer prefix explains, first: {first} ({})",
                        s.torn, row.reference
                    ));
                }
                out.last_prefix = out.last_prefix.max(s.max_floor);
                states.extend(s.states);
            }
            Ok(Err(e)) => out.errors.push(e),
            Err(_) => out.errors.push(format!("reader thread {t} panicked")),
        }
    }
    out.distinct_states = states.len();
    let stats = store.stats();
    out.full_reloads = stats.full;
    out.partial_reloads = stats.partial;
    out.failed_reloads = stats.failed;
    out.busy_reloads = stats.busy;
    let status = status?;
    if !status.success() {
        return Err(format!("writer failed: {status:?} {rest:?}"));
    }
    if rest.last().map(String::as_str) != Some(format!("done {}", spec.ops).as_str()) {
        return Err(format!("writer did not finish: {rest:?}"));
    }
    if let (true, Some(row)) = (stats.failed > 0, lock_lost) {
        out.accepted.push(format!(
            "{} reload(s) failed while the writer ran ({})",
            stats.failed, row.reference
        ));
    } else if stats.failed > 0 || store.last_reload_error().is_some() {
        out.errors.push(format!(
            "{} reload(s) failed while the writer ran (last: {:?})",
            stats.failed,
            store.last_reload_error()
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
    let fresh = RealReader::new()
        .open_store(&path, spec.kind.crypt_key(), spec.kind.aes256())
        .map_err(|e| format!("fresh reader: {e}"))?;
    let snap = store.snapshot();
    let fresh_snap = fresh.snapshot();
    let mut want_keys = Vec::new();
    for k in 0..model.keys {
        let key = live_key(k);
        let want = model.final_value(k);
        for (who, s) in [("open", &snap), ("fresh", &fresh_snap)] {
            let got = read_snapshot(s, key.as_bytes(), live_type(k));
            if got != want {
                out.errors.push(format!(
                    "final value of {key} ({who} store): {} instead of {}",
                    crate::value::show(&got),
                    crate::value::show(&want)
                ));
            }
        }
        let expire = snap.expire_at(key.as_bytes()).unwrap_or(0);
        let expiring = want.is_some() && spec.kind.key_expire() && k % 3 == 0;
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
        .map(|(kind, pace_us)| {
            let spec = LiveSpec {
                seed: 0x5eed_1234,
                ops,
                keys: 24,
                kind,
                pace_us,
            };
            run_live(writer_exe, tag, &spec)
        })
        .collect()
}

/// The per-version line of the report: runs, distinct states observed, reloads, failures.
pub fn summary_line(tag: &str, outcomes: &[LiveOutcome]) -> String {
    let sum = |f: fn(&LiveOutcome) -> u64| outcomes.iter().map(f).sum::<u64>();
    let kinds: Vec<&str> = outcomes
        .iter()
        .filter_map(|o| o.kind.map(StoreKind::id))
        .fold(Vec::new(), |mut v, k| {
            if !v.contains(&k) {
                v.push(k);
            }
            v
        });
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
        sum(|o| o.full_reloads),
        sum(|o| o.partial_reloads),
        sum(|o| o.failed_reloads),
        sum(|o| o.busy_reloads),
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
            crate::exceptions::Difference::WriterLosesProcessLock.describe()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LiveSpec {
        LiveSpec {
            seed: 7,
            ops: 400,
            keys: 12,
            kind: StoreKind::Multi,
            pace_us: 0,
        }
    }

    #[test]
    fn sequence_is_deterministic_and_mixed() {
        let a = live_ops(&spec());
        assert_eq!(a, live_ops(&spec()));
        assert!(a.iter().any(|op| matches!(op, LiveOp::Remove { .. })));
        assert!(a
            .iter()
            .any(|op| matches!(op, LiveOp::Set { size, .. } if *size > 1024)));
    }

    #[test]
    fn model_accepts_true_prefixes_and_rejects_mixtures() {
        let model = LiveModel::new(&spec());
        // Replay the sequence: the state after every prefix must be accepted with floor = prefix.
        let mut state: Vec<Option<Value>> = vec![None; model.keys];
        let mut floor = 0;
        for (i, op) in model.ops.iter().enumerate() {
            match *op {
                LiveOp::Set { key, size } => state[key] = Some(live_value(key, i, size)),
                LiveOp::Remove { key } => state[key] = None,
                LiveOp::ClearAll => state.iter_mut().for_each(|s| *s = None),
                LiveOp::Trim => {}
            }
            let obs: Vec<_> = state.iter().cloned().enumerate().collect();
            let lo = model.check_snapshot(&obs, floor).unwrap();
            assert!(lo <= i + 1);
            floor = lo;
        }
        for (k, want) in state.iter().enumerate() {
            assert_eq!(model.final_value(k), *want);
        }
        // Going back in time is rejected: the first set value of some key, observed at the end.
        let (seq, key, size) = model
            .ops
            .iter()
            .enumerate()
            .find_map(|(i, op)| match *op {
                LiveOp::Set { key, size } => Some((i, key, size)),
                _ => None,
            })
            .unwrap();
        let old = vec![(key, Some(live_value(key, seq, size)))];
        if model.final_value(key) != old[0].1 {
            assert!(model.check_snapshot(&old, model.prefixes() - 1).is_err());
        }
        // A torn value is rejected.
        let torn = match live_value(key, seq, size) {
            Value::String(mut s) => {
                s.push('!');
                Value::String(s)
            }
            Value::I64(x) => Value::I64(x ^ (1 << 45)),
            Value::Bytes(mut b) => {
                b.pop();
                Value::Bytes(b)
            }
            Value::U32(x) => Value::U32(x + 100_000),
            Value::Strings(mut v) => {
                v.pop();
                Value::Strings(v)
            }
            other => other,
        };
        assert!(model.windows(key, &Some(torn)).is_err());
    }
}
