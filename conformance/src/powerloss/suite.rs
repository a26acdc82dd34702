//! The power-loss run: recordings of the official writer, their crash states, and for every
//! state the official library of that version (each error strategy, in batches of states per
//! child process) against the reader (`Store` and the `mmkv dump` path), judged by the fault
//! suite's judge and exceptions table.

use std::collections::HashSet;
use std::hash::{Hash as _, Hasher as _};
use std::ops::ControlFlow;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};

use mmkv_sys::ErrorStrategy;

use crate::error::{Error, Result};
use crate::fault::official::{spawn_reads, strategy_name};
use crate::fault::section::finish_section;
use crate::fault::suite::{targets, SuiteCommon, Target};
use crate::fault::summary::verdicts_line;
use crate::judge::state::{disagrees, judge_outcomes, Verdict};
use crate::powerloss::judged::{Judged, Verdicts};
use crate::powerloss::record::{record, spec, writer_page, Recording};
use crate::powerloss::section::PowerlossSection;
use crate::powerloss::states::{base_image, states_at, CrashState};
use crate::sides::reads::{open_store, OfficialOutcome, ReaderFn, ReaderPath};
use crate::vocab::digest::PlanHasher;
use crate::vocab::kind::StoreKind;
use crate::vocab::pool::{run_in_order, run_ordered};
use crate::vocab::{SplitMix, STORE_ID};
use crate::writer::child::ChildExe;

/// The store kinds of the suite (those a version has): plaintext, AES-128, AES-256,
/// expiring, and expiring with each cipher.
pub const KINDS: [StoreKind; 6] = [
    StoreKind::Plain,
    StoreKind::Aes128,
    StoreKind::Aes256,
    StoreKind::Expire,
    StoreKind::ExpireAes128,
    StoreKind::ExpireAes256,
];

/// What to run.
#[derive(Debug, Clone)]
pub struct PowerlossConfig {
    /// Versions, kinds (default: [`KINDS`]), crash states, seed (plans, samples), workload ops
    /// per recording, saving (disagreeing states shrunk), jobs (recordings and batches of
    /// states at once), reader.
    pub common: SuiteCommon,
    /// Crash states per crash point at most (exhaustive below, sampled above).
    pub per_point: usize,
    /// Crash states judged per recording at most (a random subset of its distinct states;
    /// fewer when the run is small for its versions and kinds: at least one recording per
    /// version and kind while there are states for 10 each).
    pub per_recording: usize,
    /// States per official child process.
    pub batch: usize,
    /// Disagreeing states shrunk to a minimal state at most (each costs child processes).
    pub shrink: usize,
    /// Stop at the first disagreeing state (tests of broken readers).
    pub stop_at_disagreement: bool,
}

impl PowerlossConfig {
    /// Defaults: those of [`SuiteCommon::new`] with the kinds of [`KINDS`] and failures under
    /// `powerloss`, 24 states per crash point, 400 per recording, batches of 64, 5 shrunk.
    pub fn new(exe: ChildExe, states: usize) -> PowerlossConfig {
        PowerlossConfig {
            common: SuiteCommon::new(exe, states, &KINDS, "powerloss"),
            per_point: 24,
            per_recording: 400,
            batch: 64,
            shrink: 5,
            stop_at_disagreement: false,
        }
    }
}

/// Where `Store` opened with `strategy` takes the store's region from: `actual`,
/// `old-style-header`, `last-confirmed`, `recovered`, or `refused` (a typed error).
fn region_source(dir: &Path, kind: StoreKind, strategy: ErrorStrategy, page: u64) -> String {
    use mmkv_reader::RegionSource;
    let source = match open_store(dir, kind, strategy, page) {
        Ok(s) => match s.snapshot().region_source() {
            RegionSource::Actual => "actual",
            RegionSource::OldStyleHeader => "old-style-header",
            RegionSource::LastConfirmed => "last-confirmed",
            RegionSource::Recovered => "recovered",
        },
        Err(_) => "refused",
    };
    format!("{} {source}", strategy_name(strategy))
}

fn write_store(dir: &Path, files: &[Vec<u8>; 2]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let data = dir.join(STORE_ID);
    let meta = mmkv_reader::meta_path(&data);
    std::fs::write(&data, &files[0]).map_err(|e| Error::io(&data, e))?;
    std::fs::write(&meta, &files[1]).map_err(|e| Error::io(&meta, e))
}

fn fingerprint(files: &[Vec<u8>; 2]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    files.hash(&mut h);
    h.finish()
}

/// Official reads of many stores (`conformance faults read`, one child for them all, which
/// reads the discard copies first): a crash or hang is the outcome of the store being read,
/// and the rest go to a new child. Outcomes come back in the order of `runs`.
pub fn read_batch(
    exe: &ChildExe,
    tag: &str,
    kind: StoreKind,
    runs: &[(ErrorStrategy, PathBuf)],
) -> Result<Vec<OfficialOutcome>> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&i| runs[i].0 != ErrorStrategy::Discard);
    let ordered: Vec<(ErrorStrategy, &Path)> = order
        .iter()
        .map(|&i| (runs[i].0, runs[i].1.as_path()))
        .collect();
    let mut got: Vec<OfficialOutcome> = Vec::with_capacity(runs.len());
    while got.len() < ordered.len() {
        for o in spawn_reads(exe, tag, kind, &ordered[got.len()..])? {
            let stopped = matches!(o, OfficialOutcome::Hung | OfficialOutcome::Crashed(_));
            got.push(o);
            if stopped {
                break;
            }
        }
    }
    let mut out = vec![OfficialOutcome::Hung; runs.len()];
    for (i, o) in order.into_iter().zip(got) {
        out[i] = o;
    }
    Ok(out)
}

/// Judges the store in `dir` given the official outcomes (on pages of `page` bytes); a reader
/// panic is a disagreement.
fn judge_dir(
    target: &Target,
    page: u64,
    reader: ReaderFn,
    dir: &Path,
    official: &[(ErrorStrategy, OfficialOutcome)],
    scratch: &Path,
) -> Result<(Verdicts, bool)> {
    let scope = target.scope()?;
    let judged = std::panic::catch_unwind(AssertUnwindSafe(|| {
        judge_outcomes(
            &target.features,
            &scope,
            target.kind,
            page,
            reader,
            dir,
            official,
            scratch,
        )
    }));
    match judged {
        Ok(v) => Ok((v?, false)),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Ok((
                vec![(
                    ErrorStrategy::Discard,
                    ReaderPath::Store,
                    Verdict::Disagree(format!("reader panicked: {msg}")),
                )],
                true,
            ))
        }
    }
}

/// Judges one state on its own (official reads in one child): the replay and the shrinker.
fn judge_one(
    cfg: &PowerlossConfig,
    target: &Target,
    files: &[Vec<u8>; 2],
    work: &Path,
) -> Result<(Verdicts, bool)> {
    let dir = work.join("one");
    let _ = std::fs::remove_dir_all(&dir);
    write_store(&dir.join("state"), files)?;
    let strategies = target.strategies();
    let mut runs = Vec::new();
    for s in &strategies {
        let d = dir.join(strategy_name(*s));
        write_store(&d, files)?;
        runs.push((*s, d));
    }
    let refs: Vec<(ErrorStrategy, &Path)> = runs.iter().map(|(s, d)| (*s, d.as_path())).collect();
    let outcomes = spawn_reads(&cfg.common.exe, &target.tag, target.kind, &refs)?;
    let official: Vec<_> = strategies.into_iter().zip(outcomes).collect();
    let r = judge_dir(
        target,
        cfg.common.exe.official_page_size(),
        cfg.common.reader,
        &dir.join("state"),
        &official,
        &dir,
    );
    let _ = std::fs::remove_dir_all(&dir);
    r
}

/// Shrinks a disagreeing state: reverts written pages to their synced content, torn pages
/// to whole ones and sizes to the synced size while the state still disagrees.
fn shrink(
    cfg: &PowerlossConfig,
    target: &Target,
    rec: &Recording,
    state: &CrashState,
    work: &Path,
) -> Result<CrashState> {
    use crate::powerloss::states::PageSrc;
    let mut cur = state.clone();
    let mut tries = 0;
    loop {
        let mut candidates = Vec::new();
        for f in 0..2 {
            for i in 0..cur.files[f].pages.len() {
                let mut c = cur.clone();
                c.files[f].pages.remove(i);
                c.files[f].dropped += 1;
                candidates.push(c);
                if let PageSrc::Torn(s, _) = cur.files[f].pages[i].1 {
                    let mut c = cur.clone();
                    c.files[f].pages[i].1 = PageSrc::Step(s);
                    candidates.push(c);
                }
            }
            if cur.files[f].new_size
                && base_image(rec, f, cur.files[f].base).len() != rec.steps[cur.point].file(f).len()
            {
                let mut c = cur.clone();
                c.files[f].new_size = false;
                candidates.push(c);
            }
        }
        let mut progressed = false;
        for c in candidates {
            if tries >= 60 {
                return Ok(cur);
            }
            tries += 1;
            if c.build(rec) == cur.build(rec) {
                continue;
            }
            if disagrees(&judge_one(cfg, target, &c.build(rec), work)?.0) {
                cur = c;
                progressed = true;
                break;
            }
        }
        if !progressed {
            return Ok(cur);
        }
    }
}

/// Saves a state: `state/` (shrunk when it disagreed), `original/`, `synced/` (the files as
/// last durable), `crash-point/` (the files at the crash point, what a SIGKILL leaves) and
/// `state.txt` (`tag kind` on its first line, for `conformance faults powerloss --replay`).
fn save(
    root: &Path,
    rec: &Recording,
    j: &Judged,
    original: Option<&CrashState>,
    note: &str,
) -> Result<PathBuf> {
    let to = root.join(format!("{}-{}-{}", j.tag, j.kind, j.index));
    let _ = std::fs::remove_dir_all(&to);
    write_store(&to.join("state"), &j.state.build(rec))?;
    if let Some(o) = original {
        write_store(&to.join("original"), &o.build(rec))?;
    }
    let synced = [
        base_image(rec, 0, j.state.files[0].base),
        base_image(rec, 1, j.state.files[1].base),
    ];
    write_store(&to.join("synced"), &synced)?;
    let p = &rec.steps[j.state.point];
    write_store(&to.join("crash-point"), &[p.data.clone(), p.meta.clone()])?;
    let text = format!(
        "{} {}\nseed {} crash after step {} ({}){}\n{}\n{note}",
        j.tag,
        j.kind,
        rec.seed,
        j.state.point,
        p.label,
        original
            .map(|o| format!("\noriginal: {o}"))
            .unwrap_or_default(),
        j.line()
    );
    let t = to.join("state.txt");
    std::fs::write(&t, text).map_err(|e| Error::io(&t, e))?;
    Ok(to)
}

/// Replays a saved state (`state.txt`'s `tag kind`, `state/`): its verdicts now.
pub fn replay(cfg: &PowerlossConfig, folder: &Path) -> Result<Verdicts> {
    let t = folder.join("state.txt");
    let text = std::fs::read_to_string(&t).map_err(|e| Error::io(&t, e))?;
    let mut head = text.lines().next().unwrap_or("").split(' ');
    let (Some(tag), Some(kind)) = (head.next(), head.next()) else {
        return Err(Error::Other(format!("{}: no `tag kind` line", t.display())));
    };
    let kind: StoreKind = kind
        .parse()
        .map_err(|e| Error::Other(format!("{}: kind {kind}: {e}", t.display())))?;
    let target = Target::load(tag, kind)?;
    let state = folder.join("state");
    let data = state.join(STORE_ID);
    let files = [
        std::fs::read(&data).unwrap_or_default(),
        std::fs::read(mmkv_reader::meta_path(&data)).unwrap_or_default(),
    ];
    let work = scratch()?;
    Ok(judge_one(cfg, &target, &files, work.path())?.0)
}

/// Judges one state's files (data, meta) as official `tag` and the reader read them as `kind`.
pub fn judge_files(
    cfg: &PowerlossConfig,
    tag: &str,
    kind: StoreKind,
    files: &[Vec<u8>; 2],
) -> Result<Verdicts> {
    let work = scratch()?;
    Ok(judge_one(cfg, &Target::load(tag, kind)?, files, work.path())?.0)
}

fn scratch() -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("mmkv-powerloss")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))
}

/// The distinct crash states of a recording (at most `max`, chosen at random), in crash-point
/// order.
pub fn recording_states(
    rec: &Recording,
    per_point: usize,
    max: usize,
    rng: &mut SplitMix,
) -> Vec<CrashState> {
    let mut seen = HashSet::new();
    let mut all = Vec::new();
    for point in 1..rec.steps.len() {
        for s in states_at(rec, point, per_point, rng) {
            if seen.insert(fingerprint(&s.build(rec))) {
                all.push(s);
            }
        }
    }
    subset(all, max, rng)
}

/// A random subset of `max` of `all`, in crash-point order.
fn subset(mut all: Vec<CrashState>, max: usize, rng: &mut SplitMix) -> Vec<CrashState> {
    let n = all.len();
    for i in 0..max.min(n) {
        let j = i + rng.below((n - i) as u64) as usize;
        all.swap(i, j);
    }
    all.truncate(max);
    all.sort_by_key(|s| s.point);
    all
}

/// One recording (a base) with its candidate states.
struct Base {
    /// Its number (from 1).
    number: usize,
    target: Target,
    seed: u64,
    rec: Recording,
    /// Up to the run's states per recording, in crash-point order.
    states: Vec<CrashState>,
    /// The base's generator after choosing them (it chooses the fewer the run may still need).
    rng: SplitMix,
}

/// Recording `number`'s generator and its writer's seed under the suite's `seed`: its draws
/// depend on (`seed`, `number`) alone.
pub fn draw_recording(seed: u64, number: usize) -> (SplitMix, u64) {
    let mut rng = SplitMix::stream(seed ^ 0x90e7_1055, number as u64);
    let writer_seed = rng.next_u64();
    (rng, writer_seed)
}

/// Recording number `base_no` and its candidate states, made in `dir` (its random choices:
/// [`draw_recording`]).
fn record_base(
    cfg: &PowerlossConfig,
    target: &Target,
    base_no: usize,
    per_recording: usize,
    dir: &Path,
) -> Result<Base> {
    let (mut rng, seed) = draw_recording(cfg.common.seed, base_no);
    let rec = record(
        &cfg.common.exe,
        &target.tag,
        &target.features,
        target.kind,
        seed,
        cfg.common.ops,
        dir,
    )?;
    let _ = std::fs::remove_dir_all(dir);
    let states = recording_states(&rec, cfg.per_point, per_recording, &mut rng);
    Ok(Base {
        number: base_no,
        target: target.clone(),
        seed,
        rec,
        states,
        rng,
    })
}

/// The states a recording gives when the run still needs `left`: its candidates, or a
/// random subset of `left` of them (drawn with the recording's generator).
fn take_states(base: &mut Base, left: usize) {
    if left < base.states.len() {
        let all = std::mem::take(&mut base.states);
        base.states = subset(all, left, &mut base.rng);
    }
}

/// States per recording at most: small runs over many versions spread over as many
/// recordings as there are targets.
fn per_recording(cfg: &PowerlossConfig, targets: usize) -> usize {
    cfg.per_recording
        .min(cfg.common.states.div_ceil(targets.max(1)).max(10))
}

/// The digest of what the seed drew for recording `number` on `target` (its writer's `seed`,
/// the power-loss plan of `ops` ops) and of the crash states judged of it (index, state: the
/// crash point and, per file, the sync it starts from, its size and the pages written since,
/// by step), in index order.
pub fn recording_digest(
    target: &Target,
    number: usize,
    seed: u64,
    ops: usize,
    states: &[(usize, &CrashState)],
) -> String {
    let mut h = PlanHasher::new("power-loss recording");
    h.add(&(number, &target.tag, target.kind, seed))
        .add(&spec(target.kind, seed, ops).ops(&target.features));
    for (index, state) in states {
        h.add(&(index, state.to_string()));
    }
    h.hex()
}

/// The suite's plan digest: its size (states, ops, states per crash point and per recording,
/// the writer's page size) and the digest of every recording that gave states
/// ([`recording_digest`]), in recording order. Not the seed itself, nor recordings that gave
/// no state (how many a wave makes depends on `jobs`).
pub fn plan_digest(cfg: &PowerlossConfig, per_recording: usize, recordings: &[String]) -> String {
    let mut h = PlanHasher::new("power-loss");
    h.add(&(
        cfg.common.states,
        cfg.common.ops,
        cfg.per_point,
        per_recording,
        writer_page(&cfg.common.exe),
    ));
    for r in recordings {
        h.add(r);
    }
    h.hex()
}

/// The suite's plan digest as [`run_powerloss`] would find it, drawn without running anything:
/// `recording` stands for the official writer (target, writer seed -> what it recorded). For
/// tests that a seed draws one plan. Stops early when a round of recordings over every target
/// gives no state.
pub fn draw_plan(
    cfg: &PowerlossConfig,
    targets: &[Target],
    recording: impl Fn(&Target, u64) -> Recording,
) -> String {
    let per_recording = per_recording(cfg, targets.len());
    let (mut index, mut idle, mut number) = (0, 0, 0);
    let mut digests = Vec::new();
    while index < cfg.common.states && idle < targets.len() {
        number += 1;
        let target = &targets[(number - 1) % targets.len()];
        let (mut rng, seed) = draw_recording(cfg.common.seed, number);
        let rec = recording(target, seed);
        let states = recording_states(&rec, cfg.per_point, per_recording, &mut rng);
        let mut base = Base {
            number,
            target: target.clone(),
            seed,
            rec,
            states,
            rng,
        };
        take_states(&mut base, cfg.common.states - index);
        idle = if base.states.is_empty() { idle + 1 } else { 0 };
        if let Some(d) = base.digest(cfg, index) {
            digests.push(d);
        }
        index += base.states.len();
    }
    plan_digest(cfg, per_recording, &digests)
}

impl Base {
    /// Its [`recording_digest`], its states numbered from `first`; `None` without states.
    fn digest(&self, cfg: &PowerlossConfig, first: usize) -> Option<String> {
        if self.states.is_empty() {
            return None;
        }
        let states: Vec<(usize, &CrashState)> = (first..).zip(&self.states).collect();
        Some(recording_digest(
            &self.target,
            self.number,
            self.seed,
            cfg.common.ops,
            &states,
        ))
    }
}

/// What the official library and the reader made of one state (judged in a worker).
struct StateOutcome {
    verdicts: Verdicts,
    panicked: bool,
    sources: Vec<String>,
}

/// Judges a batch of states of one recording (official reads in one child process), in `dir`.
fn judge_batch(
    cfg: &PowerlossConfig,
    target: &Target,
    rec: &Recording,
    chunk: &[CrashState],
    dir: &Path,
) -> Result<Vec<StateOutcome>> {
    let page = cfg.common.exe.official_page_size();
    let strategies = target.strategies();
    let mut runs = Vec::new();
    let mut built = Vec::new();
    for (i, s) in chunk.iter().enumerate() {
        let files = s.build(rec);
        let sdir = dir.join(format!("s{i}"));
        write_store(&sdir.join("state"), &files)?;
        for st in &strategies {
            let d = sdir.join(strategy_name(*st));
            write_store(&d, &files)?;
            runs.push((*st, d));
        }
        built.push(sdir);
    }
    let outcomes = read_batch(&cfg.common.exe, &target.tag, target.kind, &runs)?;
    let mut outcomes = outcomes.into_iter();
    let mut out = Vec::with_capacity(chunk.len());
    for sdir in &built {
        let official: Vec<(ErrorStrategy, OfficialOutcome)> = strategies
            .iter()
            .map(|st| (*st, outcomes.next().unwrap_or(OfficialOutcome::Hung)))
            .collect();
        let (verdicts, panicked) = judge_dir(
            target,
            page,
            cfg.common.reader,
            &sdir.join("state"),
            &official,
            dir,
        )?;
        let sources = if panicked {
            Vec::new()
        } else {
            strategies
                .iter()
                .map(|st| region_source(&sdir.join("state"), target.kind, *st, page))
                .collect()
        };
        out.push(StateOutcome {
            verdicts,
            panicked,
            sources,
        });
    }
    let _ = std::fs::remove_dir_all(dir);
    Ok(out)
}

/// Runs the suite; `progress` is called after every judged state, in index order.
///
/// The run goes in waves: the recordings the states still needed call for (each with its own
/// generator, [`SplitMix::stream`] of the seed and the recording's number) are made on
/// [`PowerlossConfig::jobs`] threads; then, in recording order, each takes its share of the
/// states left, and their batches are judged on the threads, each in its own directory, while
/// this thread takes the results in order (saving, shrinking, counting). The result does not
/// depend on `jobs`. The section carries the run's [`plan_digest`].
pub fn run_powerloss(
    cfg: &PowerlossConfig,
    mut progress: impl FnMut(&Judged),
) -> Result<PowerlossSection> {
    let started = std::time::Instant::now();
    let targets = targets(&cfg.common.tags, &cfg.common.kinds, false)?;
    let per_recording = per_recording(cfg, targets.len());
    let mut digests = Vec::new();
    let jobs = cfg.common.jobs.max(1);
    let work = scratch()?;
    let mut section = PowerlossSection {
        seed: cfg.common.seed,
        ..PowerlossSection::default()
    };
    let mut index = 0usize;
    let mut shrunk = 0usize;
    let mut next_base = 0usize;
    let mut unit_no = 0usize;
    while index < cfg.common.states {
        // The recordings the states left need (each gives at most `per_recording`), a few
        // at a time so that few recordings are held at once.
        let wave = (cfg.common.states - index)
            .div_ceil(per_recording)
            .clamp(1, (4 * jobs).max(8));
        let numbers: Vec<usize> = (next_base..next_base + wave).collect();
        next_base += wave;
        let recorded = run_ordered(numbers, jobs, |b| {
            let dir = work.path().join(format!("record-{}", b + 1));
            record_base(cfg, &targets[b % targets.len()], b + 1, per_recording, &dir)
        });
        let mut bases = Vec::with_capacity(recorded.len());
        // Batches to judge: (base, index of its first state, first of its base, states).
        let mut units = Vec::new();
        for r in recorded {
            let mut base = r?;
            take_states(&mut base, cfg.common.states - index);
            digests.extend(base.digest(cfg, index));
            if base.states.is_empty() {
                section.add_recording(&base.rec);
            }
            let b = bases.len();
            for (c, chunk) in base.states.chunks(cfg.batch.max(1)).enumerate() {
                units.push((b, index + c * cfg.batch.max(1), c == 0, chunk.to_vec()));
            }
            index += base.states.len();
            bases.push(base);
        }
        let mut stopped = false;
        let units: Vec<_> = units
            .into_iter()
            .map(|u| {
                unit_no += 1;
                (unit_no, u)
            })
            .collect();
        run_in_order(
            units,
            jobs,
            |(n, (b, first, opens_base, chunk))| {
                let base: &Base = &bases[b];
                let dir = work.path().join(format!("batch-{n}"));
                let judged = judge_batch(cfg, &base.target, &base.rec, &chunk, &dir);
                (b, first, opens_base, chunk, judged)
            },
            |(b, first, opens_base, chunk, judged)| -> Result<ControlFlow<()>> {
                let base = &bases[b];
                if opens_base {
                    section.add_recording(&base.rec);
                }
                for (i, (s, o)) in chunk.iter().zip(judged?).enumerate() {
                    let mut j = Judged {
                        index: first + i,
                        tag: base.target.tag.clone(),
                        kind: base.target.kind,
                        seed: base.seed,
                        state: s.clone(),
                        verdicts: o.verdicts,
                        panicked: o.panicked,
                        sources: o.sources,
                        saved: None,
                    };
                    if let (true, Some(root)) = (j.disagrees() || j.upstream(), &cfg.common.save) {
                        let (target, rec) = (&base.target, &base.rec);
                        let mut note = String::new();
                        if j.disagrees() && !j.panicked && shrunk < cfg.shrink {
                            shrunk += 1;
                            let small = shrink(cfg, target, rec, s, work.path())?;
                            note = format!("minimal: {small}\n");
                            if &small != s {
                                let (v, _) =
                                    judge_one(cfg, target, &small.build(rec), work.path())?;
                                note.push_str(&format!("its verdicts: {}\n", verdicts_line(&v)));
                                j.state = small;
                            }
                        }
                        let orig = (&j.state != s).then_some(s);
                        j.saved = Some(save(root, rec, &j, orig, &note)?);
                        j.state = s.clone();
                    }
                    section.add(&j, &base.rec);
                    progress(&j);
                    if cfg.stop_at_disagreement && j.disagrees() {
                        stopped = true;
                        return Ok(ControlFlow::Break(()));
                    }
                }
                Ok(ControlFlow::Continue(()))
            },
        )?;
        if stopped {
            break;
        }
    }
    section.plan_digests = vec![plan_digest(cfg, per_recording, &digests)];
    finish_section(&mut section, started, cfg.common.exe.page_size);
    Ok(section)
}
