//! The live multi-process scenario: the live plan of the one writer (`conformance writer
//! --plan live`, [`crate::writer`]) run by the official library in MULTI_PROCESS mode in a
//! child process, and the reading side ([`run_live`]): reader threads
//! sharing one long-lived `Store` follow the writer, paced or unpaced, in plaintext, AES-128,
//! AES-256 and expiring stores ([`live_matrix`]).
//!
//! Every set writes a self-identifying value ([`crate::writer::value`]), and the model
//! ([`crate::writer::model::Model`]) knows, for every key, which prefixes of the op stream
//! leave it in which state, which lets readers check that a snapshot corresponds to a single
//! prefix and that successive snapshots never go back in time.

use std::collections::HashSet;
use std::hash::{Hash as _, Hasher as _};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::differential::workload::Op;
use crate::sides::reader::{read_snapshot, read_store, RealReader};
use crate::vocab::kind::{Features, StoreKind};
use crate::vocab::value::Value;
use crate::vocab::{key_name, STORE_ID};
use crate::writer::child::ChildExe;
use crate::writer::model::Model;
use crate::writer::value::key_type;
use crate::writer::{Plan, WriterSpec};

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
pub fn min_distinct_states(spec: &WriterSpec) -> usize {
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
    let model = Arc::new(Model::new(spec.ops(&Features::default()), spec.keys));
    let mut child = crate::writer::start(&ChildExe::conformance(writer_exe), tag, dir.path(), spec)
        .map_err(|e| e.to_string())?;

    let path = dir.path().join(STORE_ID);
    // A writer of the versions whose process lock is lost (exceptions table): what readers see
    // while it writes is counted, not failed (the open included: it may meet a torn state and is
    // retried while the writer runs); the final state below stays exact.
    let lock_lost =
        crate::judge::exceptions::Scope::new(tag, spec.kind.crypt_key().is_some(), true).and_then(
            |s| {
                crate::judge::exceptions::accepted(
                    crate::judge::exceptions::Difference::WriterLosesProcessLock,
                    &s,
                )
            },
        );
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
    if let (Some((count, first)), Some(row)) = (torn_opens, lock_lost) {
        crate::judge::exceptions::count_uses(row, count as u64);
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
                            .map(|k| (k, read_snapshot(&snap, key_name(k).as_bytes(), key_type(k))))
                            .collect()
                    } else {
                        // Copy getters, one check-on-read each: one key per read.
                        let k = stats.reads % model.keys;
                        vec![(k, read_store(&store, key_name(k).as_bytes(), key_type(k)))]
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

    let finished = crate::writer::finish(child).map_err(|e| e.to_string());
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
                    crate::judge::exceptions::count_uses(row, s.torn as u64);
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
    let done = finished?;
    if done.ops != spec.ops as u64 {
        return Err(format!("writer did {} of {} ops", done.ops, spec.ops));
    }
    if let (true, Some(row)) = (stats.failed > 0, lock_lost) {
        crate::judge::exceptions::count_uses(row, stats.failed);
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
                    crate::vocab::value::show(&got),
                    crate::vocab::value::show(&want)
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
            crate::judge::exceptions::Difference::WriterLosesProcessLock.describe()
        ),
    }
}
