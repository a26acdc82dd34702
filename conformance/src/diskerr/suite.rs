//! The disk-error run: seeded writer runs under seeded failure schedules, and the state each
//! leaves judged by the fault suite's judge ([`judge_state`]).

use std::ops::ControlFlow;
use std::path::Path;

use mmkv_sys::io_faults::{IoCall, IoErrno, Rule, Schedule};

use crate::diskerr::record::{DiskerrRecord, WriterEnd};
use crate::diskerr::section::DiskerrSection;
use crate::error::{Error, Result};
use crate::fault::section::finish_section;
use crate::fault::suite::{judge_state, replay_folder, targets, SuiteCommon, Target};
use crate::judge::recognise::copy_store;
use crate::judge::state::Verdicts;
use crate::vocab::digest::PlanHasher;
use crate::vocab::kind::StoreKind;
use crate::vocab::pool::run_in_order;
use crate::vocab::SplitMix;
use crate::writer::child::{child_timeout, run_watched, ChildExe};
use crate::writer::{IoFailure, Kill, Plan, WriterSpec};

/// What to run.
#[derive(Debug, Clone)]
pub struct DiskerrConfig {
    /// Versions, kinds (default: every kind), states (one writer run each), seed (writer
    /// seeds, schedules, kill points), workload ops per writer run, saving, jobs, reader.
    pub common: SuiteCommon,
}

impl DiskerrConfig {
    /// Defaults: those of [`SuiteCommon::new`] with every store kind and failures under
    /// `diskerr`.
    pub fn new(exe: ChildExe, states: usize) -> DiskerrConfig {
        DiskerrConfig {
            common: SuiteCommon::new(exe, states, &StoreKind::ALL, "diskerr"),
        }
    }
}

/// The calls a schedule draws from: those the shim's calls reach (`rename` is wrapped too,
/// but only backup, restore and migration call it).
pub const SCHEDULED: [IoCall; 4] = [
    IoCall::Ftruncate,
    IoCall::Mmap,
    IoCall::Msync,
    IoCall::Write,
];

/// The errors a call can report: `mmap` runs out of memory, `msync` fails on the device or on
/// memory, `ftruncate` and `write` on a full disk or the device.
fn errnos(call: IoCall) -> &'static [IoErrno] {
    match call {
        IoCall::Mmap => &[IoErrno::Enomem],
        IoCall::Msync => &[IoErrno::Eio, IoErrno::Eio, IoErrno::Enomem],
        _ => &[IoErrno::Enospc, IoErrno::Eio],
    }
}

/// Salt of the suite's streams: the fault suite's runs of the same seed draw other numbers.
const SALT: u64 = 0xd15c_e440_0000_0001;

/// Writer run `number` (from 1) as the seed draws it: a writer seed, one or two rules (a call,
/// its first failing call, once, a few times or from then on, an error) and a kill point
/// (mostly none: the writer syncs and closes).
pub fn draw(seed: u64, number: usize, kind: StoreKind, ops: usize) -> WriterSpec {
    let mut rng = SplitMix::stream(seed ^ SALT, number as u64);
    let writer_seed = rng.next_u64();
    let rules = 1 + usize::from(rng.below(10) < 3);
    let mut drawn = Vec::new();
    for _ in 0..rules {
        let call = SCHEDULED[rng.below(SCHEDULED.len() as u64) as usize];
        let last = if call == IoCall::Msync { 24 } else { 6 };
        let from = 1 + rng.below(last);
        let count = match rng.below(4) {
            0 | 1 => Some(1),
            2 => Some(2 + rng.below(3)),
            _ => None,
        };
        let e = errnos(call);
        let errno = e[rng.below(e.len() as u64) as usize];
        drawn.push(Rule {
            call,
            from,
            count,
            errno,
        });
    }
    let kill = match rng.below(10) {
        0..=5 => Kill::Never,
        _ => Kill::BeforeOp(rng.below(ops as u64) as usize),
    };
    WriterSpec {
        seed: writer_seed,
        kind,
        kill,
        io_faults: Schedule::new(drawn),
        ..WriterSpec::new(Plan::Diskerr, ops, 0)
    }
}

/// `what`, and `; TAIL` when the child's stderr had a last line.
fn tail(what: String, tail: &str) -> String {
    if tail.trim().is_empty() {
        what
    } else {
        format!("{what}; {}", tail.trim())
    }
}

/// Runs the writer of `spec` with `tag` into `dir`: how it ended and what failed.
fn run_writer(
    exe: &ChildExe,
    tag: &str,
    dir: &Path,
    spec: &WriterSpec,
) -> Result<(WriterEnd, Vec<IoFailure>)> {
    use std::os::unix::process::ExitStatusExt;
    let child = run_watched(spec.command(exe, tag, dir), child_timeout(), None, true)?;
    let failures = child
        .lines
        .iter()
        .filter_map(|l| IoFailure::parse(l))
        .collect();
    let end = match child.status {
        None => WriterEnd::Hung,
        Some(st) if st.success() => WriterEnd::Finished,
        Some(st) if st.signal() == Some(9) && spec.kill != Kill::Never => WriterEnd::Killed,
        Some(st) => match st.signal() {
            Some(sig) => WriterEnd::Crashed(tail(format!("signal {sig}"), &child.stderr_tail())),
            None => WriterEnd::Failed(tail(st.to_string(), &child.stderr_tail())),
        },
    };
    Ok((end, failures))
}

/// Writer run and state `index` (from 0) on `target`, in `dir`.
fn run_state(
    cfg: &DiskerrConfig,
    target: &Target,
    index: usize,
    dir: &Path,
) -> Result<DiskerrRecord> {
    let spec = draw(cfg.common.seed, index + 1, target.kind, cfg.common.ops);
    let written = dir.join("written");
    std::fs::create_dir_all(&written).map_err(|e| Error::io(&written, e))?;
    let (end, failures) = run_writer(&cfg.common.exe, &target.tag, &written, &spec)?;
    let verdicts = judge_state(&cfg.common.exe, target, cfg.common.reader, &written, dir)?;
    let mut rec = DiskerrRecord {
        index,
        tag: target.tag.clone(),
        kind: target.kind,
        writer: spec,
        end,
        failures,
        verdicts,
        saved: None,
    };
    if let (true, Some(root)) = (rec.disagrees() || rec.upstream(), &cfg.common.save) {
        let to = root.join(format!("{}-{}-{index}", rec.tag, rec.kind));
        let _ = std::fs::remove_dir_all(&to);
        copy_store(&written, &to.join("state"))?;
        let text = format!("{}\n", rec.line());
        std::fs::write(to.join("verdict.txt"), text).map_err(|e| Error::io(&to, e))?;
        rec.saved = Some(to);
    }
    let _ = std::fs::remove_dir_all(dir);
    Ok(rec)
}

/// The digest of what the seed drew for state `index` on `target` (version, kind, the
/// writer's seed, schedule, kill point and ops).
fn state_digest(target: &Target, index: usize, spec: &WriterSpec) -> String {
    let mut h = PlanHasher::new("diskerr run");
    h.add(&(
        index,
        &target.tag,
        target.kind,
        spec.seed,
        spec.io_faults.to_string(),
        spec.kill.arg(),
    ))
    .add(&spec.ops(&target.features));
    h.hex()
}

/// The run's plan digest: its size (states, ops, page size) and each state's draw, in order.
pub fn plan_digest(cfg: &DiskerrConfig, states: &[String]) -> String {
    let mut h = PlanHasher::new("diskerr");
    h.add(&(
        cfg.common.states,
        cfg.common.ops,
        cfg.common.exe.official_page_size(),
    ));
    for s in states {
        h.add(s);
    }
    h.hex()
}

/// The plan digest a run of `cfg` on `targets` ([`targets`]) carries, drawn without running
/// anything: each state's draw, in order.
pub fn draw_plan(cfg: &DiskerrConfig, targets: &[Target]) -> String {
    let c = &cfg.common;
    let states: Vec<String> = (0..c.states)
        .map(|index| {
            let target = &targets[index % targets.len()];
            let spec = draw(c.seed, index + 1, target.kind, c.ops);
            state_digest(target, index, &spec)
        })
        .collect();
    plan_digest(cfg, &states)
}

/// Runs the suite; `progress` is called after every judged state, in index order. State `i`
/// goes to target `i mod targets` (versions interleaved, each version's kinds in turn); runs go
/// on [`DiskerrConfig::jobs`] threads and the result does not depend on it.
pub fn run_diskerr(
    cfg: &DiskerrConfig,
    mut progress: impl FnMut(&DiskerrRecord),
) -> Result<DiskerrSection> {
    let started = std::time::Instant::now();
    let libs = targets(&cfg.common.tags, &cfg.common.kinds, true)?;
    let work = tempfile::Builder::new()
        .prefix("mmkv-diskerr")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let mut section = DiskerrSection {
        seed: cfg.common.seed,
        ..DiskerrSection::default()
    };
    let mut digests = Vec::new();
    run_in_order(
        (0..cfg.common.states).collect(),
        cfg.common.jobs,
        |index| {
            let target = &libs[index % libs.len()];
            let dir = work.path().join(format!("state-{index}"));
            run_state(cfg, target, index, &dir).map(|r| (state_digest(target, index, &r.writer), r))
        },
        |r| -> Result<ControlFlow<()>> {
            let (digest, rec) = r?;
            digests.push(digest);
            progress(&rec);
            section.add(&rec);
            Ok(ControlFlow::Continue(()))
        },
    )?;
    section.plan_digests.push(plan_digest(cfg, &digests));
    finish_section(&mut section, started, cfg.common.exe.page_size);
    Ok(section)
}

/// Judges a saved state folder again (its `state/` and `verdict.txt`, whose `#INDEX TAG KIND`
/// names the version and kind) with `cfg`'s children and reader.
pub fn replay(cfg: &DiskerrConfig, folder: &Path) -> Result<Verdicts> {
    replay_folder(&cfg.common.exe, cfg.common.reader, folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_deterministic_and_cover_every_scheduled_call() {
        let mut seen = std::collections::BTreeSet::new();
        let mut killed = 0;
        for n in 1..=200 {
            let a = draw(7, n, StoreKind::Plain, 120);
            assert_eq!(a, draw(7, n, StoreKind::Plain, 120));
            assert!(!a.io_faults.is_empty());
            assert_eq!(
                a.io_faults.to_string().parse::<Schedule>().unwrap(),
                a.io_faults
            );
            seen.extend(a.io_faults.rules().iter().map(|r| r.call));
            killed += usize::from(a.kill != Kill::Never);
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), SCHEDULED.to_vec());
        assert!((40..120).contains(&killed), "{killed} of 200 killed");
        assert_ne!(
            draw(7, 1, StoreKind::Plain, 120),
            draw(8, 1, StoreKind::Plain, 120)
        );
    }
}
