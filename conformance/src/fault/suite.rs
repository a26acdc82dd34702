//! The fault suite: seeded writer runs killed at random points, damaged copies of what they
//! left, and for every resulting state the official library (each error strategy, in a child
//! process) against the reader ([`crate::judge::state`] judges each state).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use mmkv_sys::ErrorStrategy;

use crate::error::{Error, Result};
use crate::fault::damage::Damage;
use crate::fault::official::{spawn_reads, strategy_name};
use crate::fault::summary::{StateRecord, Summary};
use crate::judge::exceptions::Scope;
use crate::judge::recognise::copy_store;
use crate::judge::state::{disagrees, judge_outcomes, upstream, Verdicts};
use crate::sides::official::OfficialLib;
use crate::sides::reads::{read_reader, OfficialOutcome, ReaderFn};
use crate::sides::sys::{built_tags, SysLib};
use crate::vocab::digest::PlanHasher;
use crate::vocab::kind::{Features, StoreKind};
use crate::vocab::pool::{default_jobs, run_in_order};
use crate::vocab::{actual_size, SplitMix, STORE_ID};
use crate::writer::child::ChildExe;
use crate::writer::{run_killed, Kill, Plan, WriterSpec};

/// What the state suites' runs have in common (the fault, power-loss and disk-error suites'
/// configurations each hold one, [`SuiteArgs::apply`](crate::fault::cli::SuiteArgs::apply)
/// sets it from their shared options).
#[derive(Debug, Clone)]
pub struct SuiteCommon {
    /// The child processes' program (`conformance writer`, `conformance faults read`).
    pub exe: ChildExe,
    /// Official versions to run (built tags).
    pub tags: Vec<String>,
    /// Store kinds (each version runs those it has, in turn).
    pub kinds: Vec<StoreKind>,
    /// Number of states to judge (spread over tags and store kinds).
    pub states: usize,
    /// Seed of everything (workloads, kill points, damage, schedules, samples).
    pub seed: u64,
    /// Ops per writer run.
    pub ops: usize,
    /// Where states that disagree (or are upstream findings) are saved.
    pub save: Option<PathBuf>,
    /// Writer runs (each with its states) at once; the result does not depend on it.
    pub jobs: usize,
    /// The `Store` path under test ([`read_reader`]; tests inject broken ones). The dump path
    /// is always read.
    pub reader: ReaderFn,
}

impl SuiteCommon {
    /// Defaults: every built tag, `kinds`, `states` states, the base seed
    /// ([`crate::vocab::seed`]), 120 ops, failures saved under `<failures root>/FOLDER` (see
    /// [`crate::differential::failures::failures_root`]), one job per core ([`default_jobs`];
    /// the CLIs take `--jobs` / `CONFORMANCE_JOBS`), the real reader.
    pub fn new(exe: ChildExe, states: usize, kinds: &[StoreKind], folder: &str) -> SuiteCommon {
        SuiteCommon {
            exe,
            tags: built_tags(),
            kinds: kinds.to_vec(),
            states,
            seed: crate::vocab::seed::base(),
            ops: 120,
            save: Some(crate::differential::failures::failures_root().join(folder)),
            jobs: default_jobs(),
            reader: read_reader,
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct SuiteConfig {
    /// Versions, kinds (default: every kind), states, seed, ops, saving, jobs, reader.
    pub common: SuiteCommon,
    /// States derived from each writer run (the run's own state included).
    pub per_base: usize,
}

impl SuiteConfig {
    /// Defaults: those of [`SuiteCommon::new`] with every store kind and failures under
    /// `faults`, 6 states per writer run.
    pub fn new(exe: ChildExe, states: usize) -> SuiteConfig {
        SuiteConfig {
            common: SuiteCommon::new(exe, states, &StoreKind::ALL, "faults"),
            per_base: 6,
        }
    }
}

fn region_len(dir: &Path) -> (u64, u64) {
    let data = std::fs::read(dir.join(STORE_ID)).unwrap_or_default();
    let meta = std::fs::read(mmkv_reader::meta_path(&dir.join(STORE_ID))).unwrap_or_default();
    (data.len() as u64, u64::from(actual_size(&data, &meta)))
}

/// A version and store kind under test (of the fault and power-loss suites).
#[derive(Debug, Clone)]
pub struct Target {
    /// The official version.
    pub tag: String,
    /// It has the `OnErrorRecover` handler.
    pub can_recover: bool,
    /// Its features.
    pub features: Features,
    /// The store kind.
    pub kind: StoreKind,
}

impl Target {
    /// Official `tag` (loaded for its features) with stores of `kind`.
    pub fn load(tag: &str, kind: StoreKind) -> Result<Target> {
        let lib = SysLib::load(tag)?;
        Ok(Target {
            tag: tag.to_string(),
            can_recover: lib.official().capabilities().error_strategy,
            features: lib.features(),
            kind,
        })
    }

    /// The error strategies it has: discard, and recover when it can.
    pub fn strategies(&self) -> Vec<ErrorStrategy> {
        let mut s = vec![ErrorStrategy::Discard];
        if self.can_recover {
            s.push(ErrorStrategy::Recover);
        }
        s
    }

    /// The exceptions table's scope of its stores.
    pub fn scope(&self) -> Result<Scope> {
        Scope::of_kind(&self.tag, self.kind)
            .ok_or_else(|| Error::Other(format!("{}: not a vMAJOR.MINOR.PATCH tag", self.tag)))
    }
}

/// The targets of `tags` × the `kinds` each version has, interleaved so that consecutive
/// writer runs go to different versions. With `cycle`, a version with fewer kinds starts
/// its kinds over in later rounds (the fault suite); without, it sits them out.
pub fn targets(tags: &[String], kinds: &[StoreKind], cycle: bool) -> Result<Vec<Target>> {
    let mut per_tag = Vec::new();
    for tag in tags {
        let t = Target::load(tag, StoreKind::Plain)?;
        let kinds: Vec<StoreKind> = kinds
            .iter()
            .copied()
            .filter(|k| k.supported_by(&t.features))
            .collect();
        per_tag.push((t, kinds));
    }
    let rounds = per_tag.iter().map(|t| t.1.len()).max().unwrap_or(0);
    let mut out = Vec::new();
    for round in 0..rounds {
        for (t, kinds) in &per_tag {
            let kind = if cycle {
                kinds.get(round % kinds.len())
            } else {
                kinds.get(round)
            };
            if let Some(&kind) = kind {
                out.push(Target { kind, ..t.clone() });
            }
        }
    }
    if out.is_empty() {
        return Err(Error::Other("no official version built".into()));
    }
    Ok(out)
}

/// Verdicts per strategy and reader path on the store in `dir`, as `target` reads it: the
/// official reads run in one child process on copies made under `scratch`; the reader paths
/// are `reader` (`Store`) and [`read_dump`], both at the page size of `exe`'s official
/// libraries ([`ChildExe::official_page_size`]).
pub fn judge_state(
    exe: &ChildExe,
    target: &Target,
    reader: ReaderFn,
    dir: &Path,
    scratch: &Path,
) -> Result<Verdicts> {
    let scope = target.scope()?;
    let strategies = target.strategies();
    let mut dirs = Vec::new();
    for s in &strategies {
        let d = scratch.join(format!("official-{}", strategy_name(*s)));
        let _ = std::fs::remove_dir_all(&d);
        copy_store(dir, &d)?;
        dirs.push(d);
    }
    let runs: Vec<(ErrorStrategy, &Path)> = strategies
        .iter()
        .copied()
        .zip(dirs.iter().map(|d| d.as_path()))
        .collect();
    let outcomes = spawn_reads(exe, &target.tag, target.kind, &runs)?;
    for d in &dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    let judged: Vec<(ErrorStrategy, OfficialOutcome)> =
        strategies.into_iter().zip(outcomes).collect();
    let (features, kind) = (&target.features, target.kind);
    let page = exe.official_page_size();
    judge_outcomes(features, &scope, kind, page, reader, dir, &judged, scratch)
}

/// Judges a state [`run_suite`] saved again: its `state/`, as the official version and store
/// kind of its `verdict.txt` (`#INDEX TAG KIND ...`, [`StateRecord::line`]) read it, and the
/// suite's reader. Its verdicts now.
pub fn replay(cfg: &SuiteConfig, folder: &Path) -> Result<Verdicts> {
    replay_folder(&cfg.common.exe, cfg.common.reader, folder)
}

/// Judges a saved state folder again (what [`replay`] does; also the disk-error suite's
/// folders, saved alike): its `state/` read by `exe`'s children and `reader`.
pub fn replay_folder(exe: &ChildExe, reader: ReaderFn, folder: &Path) -> Result<Verdicts> {
    let t = folder.join("verdict.txt");
    let text = std::fs::read_to_string(&t).map_err(|e| Error::io(&t, e))?;
    let mut head = text.split_whitespace().skip(1);
    let (Some(tag), Some(kind)) = (head.next(), head.next()) else {
        return Err(Error::Other(format!(
            "{}: no `#N tag kind` line",
            t.display()
        )));
    };
    let kind: StoreKind = kind
        .parse()
        .map_err(|e| Error::Other(format!("{}: kind {kind}: {e}", t.display())))?;
    let target = Target::load(tag, kind)?;
    let scratch = tempfile::Builder::new()
        .prefix("mmkv-faults-replay")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    judge_state(exe, &target, reader, &folder.join("state"), scratch.path())
}

/// Writer run `number` (from 1) as the seed draws it before it runs: the writer (its seed
/// and kill point) and the generator its states' damage comes from. Every draw comes from
/// [`SplitMix::stream`] of the suite's seed and `number` alone, so runs can be drawn in any
/// order or at once.
#[derive(Debug, Clone)]
pub struct BasePlan {
    /// The run's number (from 1).
    pub number: usize,
    /// The writer: the fault plan of `ops` ops with its own seed and kill point.
    pub writer: WriterSpec,
    rng: SplitMix,
}

impl BasePlan {
    /// Draws run `number` of a suite with `seed`, its writer making a store of `kind` in
    /// `ops` ops.
    pub fn draw(seed: u64, number: usize, kind: StoreKind, ops: usize) -> BasePlan {
        let mut rng = SplitMix::stream(seed, number as u64);
        let writer_seed = rng.next_u64();
        let kill = match rng.below(10) {
            0..=2 => Kill::Never,
            3..=5 => Kill::BeforeOp(rng.below(ops as u64) as usize),
            _ => Kill::During(rng.below(ops as u64) as usize, rng.below(3000)),
        };
        BasePlan {
            number,
            writer: WriterSpec {
                seed: writer_seed,
                kind,
                kill,
                ..WriterSpec::new(Plan::Faults, ops, 0)
            },
            rng,
        }
    }

    /// The damage of state `j` (called for `j` = 0, 1, ... in turn) of the store the writer
    /// left: a data file of `data_len` bytes with a region of `region_len`, written with pages
    /// of `page` bytes. The first state of a killed run is the run's own (no damage).
    pub fn damage(
        &mut self,
        j: usize,
        killed: bool,
        data_len: u64,
        region_len: u64,
        page: u64,
    ) -> Damage {
        if j == 0 && killed {
            Damage::default()
        } else {
            Damage::choose(&mut self.rng, data_len, region_len, page)
        }
    }

    /// The digest of what the seed drew for this run on `target` with its `states` (index,
    /// damage): version, kind, the writer's seed, kill point and ops, and each state's damage.
    /// Under a timed kill (`Kill::During`) a state counts by its index alone: its damage aims
    /// at what the writer left when the kill landed, and where it lands is outside the seed.
    pub fn digest(&self, target: &Target, states: &[(usize, &Damage)]) -> String {
        let w = &self.writer;
        let mut h = PlanHasher::new("fault run");
        h.add(&(self.number, &target.tag, target.kind, w.seed, w.kill.arg()))
            .add(&w.ops(&target.features));
        let timed = matches!(w.kill, Kill::During(..));
        for (index, damage) in states {
            h.add(&(index, (!timed).then(|| damage.to_string())));
        }
        h.hex()
    }
}

/// The suite's writer runs: (number from 1, index of its first state, states), `per_base`
/// states each.
fn bases(cfg: &SuiteConfig) -> Vec<(usize, usize, usize)> {
    let per_base = cfg.per_base.max(1);
    (0..cfg.common.states.div_ceil(per_base))
        .map(|b| {
            let first = b * per_base;
            (b + 1, first, per_base.min(cfg.common.states - first))
        })
        .collect()
}

/// The suite's plan digest: its size (states, ops, states per run, page size) and the digest
/// of each writer run ([`BasePlan::digest`]), in run order. Not the seed itself: the digest
/// says what the seed drew.
pub fn plan_digest(cfg: &SuiteConfig, runs: &[String]) -> String {
    let mut h = PlanHasher::new("faults");
    h.add(&(
        cfg.common.states,
        cfg.common.ops,
        cfg.per_base.max(1),
        cfg.common.exe.official_page_size(),
    ));
    for r in runs {
        h.add(r);
    }
    h.hex()
}

/// The suite's plan digest as [`run_suite`] would find it, drawn without running anything:
/// `layout` says what each run's writer would leave (killed, data file length, region
/// length). For tests that a seed draws one plan.
pub fn draw_plan(
    cfg: &SuiteConfig,
    targets: &[Target],
    layout: impl Fn(&BasePlan) -> (bool, u64, u64),
) -> String {
    let page = cfg.common.exe.official_page_size();
    let runs: Vec<String> = bases(cfg)
        .into_iter()
        .map(|(number, first, n)| {
            let target = &targets[(number - 1) % targets.len()];
            let mut plan = BasePlan::draw(cfg.common.seed, number, target.kind, cfg.common.ops);
            let (killed, data_len, region) = layout(&plan);
            let damages: Vec<Damage> = (0..n)
                .map(|j| plan.damage(j, killed, data_len, region, page))
                .collect();
            let states: Vec<(usize, &Damage)> = (first..).zip(&damages).collect();
            plan.digest(target, &states)
        })
        .collect();
    plan_digest(cfg, &runs)
}

/// What one writer run (a base) gave: its states, judged, and the digest of its plan.
struct Base {
    killed: bool,
    records: Vec<StateRecord>,
    digest: String,
}

/// Writer run `number` and the states derived from it (indices `first..first + n`), all in
/// `dir` (its random choices: [`BasePlan`]).
fn run_base(
    cfg: &SuiteConfig,
    target: &Target,
    number: usize,
    first: usize,
    n: usize,
    dir: &Path,
) -> Result<Base> {
    let (tag, kind) = (&target.tag, target.kind);
    let mut plan = BasePlan::draw(cfg.common.seed, number, kind, cfg.common.ops);
    let (writer_seed, kill) = (plan.writer.seed, plan.writer.kill);
    let base = dir.join("written");
    std::fs::create_dir_all(&base).map_err(|e| Error::io(&base, e))?;
    let killed = run_killed(&cfg.common.exe, tag, &base, &plan.writer)?;
    let (data_len, region) = region_len(&base);
    let page = cfg.common.exe.official_page_size();
    let mut records = Vec::with_capacity(n);
    for j in 0..n {
        let damage = plan.damage(j, killed, data_len, region, page);
        let index = first + j;
        let sdir = dir.join(format!("state-{index}"));
        copy_store(&base, &sdir)?;
        damage.apply(&sdir, STORE_ID)?;
        let reader =
            (cfg.common.reader)(&sdir, kind, &target.features, ErrorStrategy::Discard, page);
        let verdicts = judge_state(&cfg.common.exe, target, cfg.common.reader, &sdir, dir)?;
        let mut rec = StateRecord {
            index,
            tag: tag.clone(),
            kind,
            writer_seed,
            kill,
            damage,
            reader: reader.as_ref().map(|r| r.len()).map_err(|e| e.clone()),
            verdicts,
            saved: None,
        };
        let interesting = disagrees(&rec.verdicts) || upstream(&rec.verdicts);
        if let (true, Some(root)) = (interesting, &cfg.common.save) {
            let to = root.join(format!("{}-{}-{index}", tag, kind));
            let _ = std::fs::remove_dir_all(&to);
            copy_store(&base, &to.join("before-damage"))?;
            copy_store(&sdir, &to.join("state"))?;
            let text = format!("{}\n", rec.line());
            std::fs::write(to.join("verdict.txt"), text).map_err(|e| Error::io(&to, e))?;
            rec.saved = Some(to);
        }
        let _ = std::fs::remove_dir_all(&sdir);
        records.push(rec);
    }
    let _ = std::fs::remove_dir_all(dir);
    let states: Vec<(usize, &Damage)> = records.iter().map(|r| (r.index, &r.damage)).collect();
    let digest = plan.digest(target, &states);
    Ok(Base {
        killed,
        records,
        digest,
    })
}

/// Runs the suite; `progress` is called after every judged state, in index order.
///
/// Writer runs ("bases", [`SuiteConfig::per_base`] states each) run on
/// [`SuiteConfig::jobs`] threads, each in its own directory with its own generator
/// ([`BasePlan`]), and their states are collected in base order: the result does not depend
/// on `jobs`. The summary carries the run's [`plan_digest`].
pub fn run_suite(cfg: &SuiteConfig, mut progress: impl FnMut(&StateRecord)) -> Result<Summary> {
    let libs = targets(&cfg.common.tags, &cfg.common.kinds, true)?;
    let work = tempfile::Builder::new()
        .prefix("mmkv-faults")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let mut summary = Summary::default();
    let mut runs = Vec::new();
    run_in_order(
        bases(cfg),
        cfg.common.jobs,
        |(number, first, n)| {
            let dir = work.path().join(format!("base-{number}"));
            let target = &libs[(number - 1) % libs.len()];
            run_base(cfg, target, number, first, n, &dir)
        },
        |base| -> Result<ControlFlow<()>> {
            let base = base?;
            summary.writer_runs += 1;
            summary.killed_runs += usize::from(base.killed);
            runs.push(base.digest);
            for rec in base.records {
                progress(&rec);
                summary.records.push(rec);
            }
            Ok(ControlFlow::Continue(()))
        },
    )?;
    summary.plan_digest = Some(plan_digest(cfg, &runs));
    Ok(summary)
}
