//! The hunt's rounds: every (version, kind) differential run, every (pair, kind) migration
//! run, then a fault, a power-loss and a disk-error batch per version, each with its own seed, again and
//! again until the budget is spent; failures become findings, grouped into signatures at the
//! end.

use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::differential::failures::{load_repro, release_replay_command};
use crate::differential::property::migration_pairs;
use crate::differential::property::{
    check_migration, check_property_with, PropConfig, PropOutcome,
};
use crate::error::{Error, Result};
use crate::hunt::locate::first_difference;
use crate::hunt::signature::{group, Axis, Example, Finding, Suite, Unit};
use crate::hunt::states::{batch_kinds, run_batch, Batch};
use crate::hunt::{runs_phrase, HuntConfig, HuntReport, Runs, SCHEMA};
use crate::sides::official::OfficialLib;
use crate::sides::sys::SysLib;
use crate::sides::view::ReaderFactory;
use crate::vocab::kind::StoreKind;
use crate::vocab::seed::derive_from;
use crate::writer::child::ChildExe;

/// How often a status line is printed.
const STATUS_EVERY: Duration = Duration::from_secs(60);

/// One run of a round: a property run of one kind, or a state batch of one version over
/// its kinds.
struct Planned {
    suite: Suite,
    unit: Unit,
    /// The property run's kind; a batch's kinds.
    kinds: Vec<StoreKind>,
    /// Indices into the loaded libraries: one version, or a pair in order.
    libs: Vec<usize>,
}

impl Planned {
    /// `plain`, or a batch's `plain,aes128,...`.
    fn kinds_label(&self) -> String {
        let ids: Vec<&str> = self.kinds.iter().map(|k| k.id()).collect();
        ids.join(",")
    }
}

/// Every run of one round: differential, migration, fault, power loss, disk error (those of
/// `cfg.suites` with a case or state to run).
fn plan(libs: &[SysLib], cfg: &HuntConfig) -> Vec<Planned> {
    let has = |i: usize, k: StoreKind| k.supported_by(&libs[i].features());
    let on = |s: Suite| cfg.suites.contains(&s);
    let mut out = Vec::new();
    if on(Suite::Differential) {
        for (i, lib) in libs.iter().enumerate() {
            for &kind in cfg.kinds.iter().filter(|&&k| has(i, k)) {
                out.push(Planned {
                    suite: Suite::Differential,
                    unit: Unit::version(lib.tag()),
                    kinds: vec![kind],
                    libs: vec![i],
                });
            }
        }
    }
    if on(Suite::Migration) && cfg.migration_cases > 0 {
        for (a, b) in migration_pairs(libs.len()) {
            for &kind in cfg.kinds.iter().filter(|&&k| has(a, k) && has(b, k)) {
                out.push(Planned {
                    suite: Suite::Migration,
                    unit: Unit::pair(libs[a].tag(), libs[b].tag()),
                    kinds: vec![kind],
                    libs: vec![a, b],
                });
            }
        }
    }
    for (suite, states) in [
        (Suite::Fault, cfg.fault_states),
        (Suite::Powerloss, cfg.powerloss_states),
        (Suite::Diskerr, cfg.diskerr_states),
    ] {
        if !on(suite) || states == 0 {
            continue;
        }
        for (i, lib) in libs.iter().enumerate() {
            let kinds = batch_kinds(suite, &cfg.kinds, &lib.features());
            if !kinds.is_empty() {
                out.push(Planned {
                    suite,
                    unit: Unit::version(lib.tag()),
                    kinds,
                    libs: vec![i],
                });
            }
        }
    }
    out
}

/// Time per passing case or judged state, by suite (shrinking not counted): how many fit in
/// what is left.
#[derive(Default)]
struct Pace {
    spent: [Duration; Suite::ALL.len()],
    cases: [u64; Suite::ALL.len()],
}

impl Pace {
    fn slot(suite: Suite) -> usize {
        Suite::ALL.iter().position(|s| *s == suite).unwrap_or(0)
    }

    fn record(&mut self, suite: Suite, cases: u64, took: Duration) {
        self.spent[Self::slot(suite)] += took;
        self.cases[Self::slot(suite)] += cases;
    }

    /// At most `full` cases, fewer when they would not fit in `left` (at least 1).
    fn cases(&self, suite: Suite, full: u64, left: Duration) -> u64 {
        let s = Self::slot(suite);
        if self.cases[s] == 0 {
            return full;
        }
        let per_case = self.spent[s].as_secs_f64() / self.cases[s] as f64;
        let fit = (left.as_secs_f64() / per_case.max(1e-6)).floor();
        (fit.min(full as f64) as u64).max(1)
    }
}

/// Runs the hunt with `reader` (the real one, or a broken one for `--break`; the fault,
/// power-loss and disk-error batches read with [`HuntConfig::state_reader`]).
pub fn hunt(cfg: &HuntConfig, reader: &dyn ReaderFactory) -> Result<HuntReport> {
    let libs: Vec<SysLib> = cfg
        .versions
        .iter()
        .map(|t| SysLib::load(t))
        .collect::<std::result::Result<_, _>>()?;
    let plan = plan(&libs, cfg);
    if plan.is_empty() {
        return Err(Error::Other(format!(
            "nothing to hunt: no version of [{}] has any of the kinds [{}] in the suites [{}]",
            cfg.versions.join(", "),
            cfg.kinds
                .iter()
                .map(|k| k.id())
                .collect::<Vec<_>>()
                .join(", "),
            cfg.suites
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let exe = ChildExe::this()?;
    let mut axis = Axis::new();
    for p in &plan {
        for &kind in &p.kinds {
            axis.entry((p.suite, kind))
                .or_default()
                .push(p.unit.clone());
        }
    }
    // Short expiries move the test clock instead of sleeping, as in the tests (the state
    // batches turn it off while they run).
    crate::vocab::test_clock::start();

    let started = Instant::now();
    let deadline = started + cfg.budget;
    let bar = ProgressBar::new(cfg.budget.as_secs().max(1));
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} s  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(500));
    let tick = || bar.set_position(started.elapsed().as_secs().min(bar.length().unwrap_or(0)));
    let say = |line: &str| bar.suspend(|| eprintln!("{line}"));
    say(&format!(
        "conformance hunt: seed {}, {} min, {} run(s) per round over [{}] ({}), reader {}",
        cfg.base_seed,
        cfg.budget.as_secs_f64() / 60.0,
        plan.len(),
        cfg.versions.join(", "),
        cfg.suites
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", "),
        reader.name()
    ));

    let mut runs = Runs::default();
    let mut findings: Vec<Finding> = Vec::new();
    let mut pace = Pace::default();
    let mut divergent_cases = 0u64;
    let mut next_status = started + STATUS_EVERY;
    // One `found:` line per new (suite, unit, kind, compared, first op); repeats are counted.
    let announce = |findings: &[Finding], from: usize| {
        for (n, f) in findings.iter().enumerate().skip(from) {
            let seen = findings[..n].iter().any(|g| {
                (g.suite, &g.unit, g.kind, &g.compared, &g.first_op)
                    == (f.suite, &f.unit, f.kind, &f.compared, &f.first_op)
            });
            if !seen {
                say(&format!(
                    "found: {} {} {}: {} after {}; {}",
                    f.suite.name(),
                    f.unit.label,
                    f.kind,
                    f.compared,
                    f.first_op,
                    f.example.replay
                ));
            }
        }
    };
    'hunt: for round in 0u64.. {
        for p in &plan {
            let now = Instant::now();
            if now >= deadline {
                break 'hunt;
            }
            if now >= next_status {
                // For logs, where the bar is hidden.
                say(&format!(
                    "hunt: {:.0} s, round {round}: {}; {} failure(s)",
                    started.elapsed().as_secs_f64(),
                    runs_phrase(&runs),
                    findings.len()
                ));
                next_status = now + STATUS_EVERY;
            }
            let full = match p.suite {
                Suite::Differential => u64::from(cfg.cases),
                Suite::Migration => u64::from(cfg.migration_cases),
                Suite::Fault => cfg.fault_states as u64,
                Suite::Powerloss => cfg.powerloss_states as u64,
                Suite::Diskerr => cfg.diskerr_states as u64,
            };
            let cases = pace.cases(p.suite, full, deadline - now);
            let seed = derive_from(
                cfg.base_seed,
                &format!(
                    "hunt {round} {} {} {}",
                    p.suite.name(),
                    p.unit.label,
                    p.kinds_label()
                ),
            );
            let status = |runs: &Runs, failures: usize| {
                format!(
                    "round {round}: {} {} {} | {}; {failures} failure(s)",
                    p.suite.name(),
                    p.unit.label,
                    p.kinds_label(),
                    runs_phrase(runs),
                )
            };
            bar.set_message(status(&runs, findings.len()));
            tick();
            let t0 = Instant::now();
            if p.suite.states() {
                let batch = Batch {
                    suite: p.suite,
                    tag: &p.unit.label,
                    kinds: p.kinds.clone(),
                    seed,
                    states: cases as usize,
                    round,
                };
                let (before, mut judged) = (runs, 0u64);
                let found = run_batch(cfg, &exe, &batch, |found| {
                    judged += 1;
                    let mut now = before;
                    *now.of_mut(p.suite) += judged;
                    bar.set_message(status(&now, findings.len() + found.len()));
                    tick();
                })?;
                *runs.of_mut(p.suite) += judged;
                pace.record(p.suite, judged, t0.elapsed());
                let from = findings.len();
                findings.extend(found);
                announce(&findings, from);
                continue;
            }
            let pc = PropConfig {
                cases: u32::try_from(cases).unwrap_or(u32::MAX),
                seed: Some(seed),
                gen: cfg.gen,
                max_shrink_iters: cfg.max_shrink_iters,
                source_file: None,
                save_failures: true,
                failures_dir: cfg.out.join(p.suite.name()),
                running: None,
            };
            let kind = p.kinds[0];
            let run_libs: Vec<&dyn OfficialLib> = p
                .libs
                .iter()
                .map(|&i| &libs[i] as &dyn OfficialLib)
                .collect();
            let outcome = match p.suite {
                Suite::Migration => check_migration(&run_libs, kind, reader, &pc),
                _ => check_property_with(run_libs[0], kind, reader, &pc, &tick),
            };
            *runs.of_mut(p.suite) += 1;
            match outcome {
                PropOutcome::Pass {
                    cases,
                    divergent_cases: d,
                    ..
                } => {
                    pace.record(p.suite, u64::from(cases), t0.elapsed());
                    divergent_cases += u64::from(d);
                }
                PropOutcome::Fail {
                    message,
                    saved,
                    repro_line,
                    ..
                } => {
                    let f = finding(
                        p,
                        kind,
                        seed,
                        saved.as_deref(),
                        &message,
                        &repro_line,
                        cfg,
                        |r| first_difference(&run_libs, r, reader),
                    );
                    findings.push(f);
                    announce(&findings, findings.len() - 1);
                }
            }
        }
    }
    bar.finish_and_clear();
    if divergent_cases > 0 {
        eprintln!(
            "hunt: {divergent_cases} passing case(s) showed an accepted upstream difference \
             (rows of the exceptions table; `conformance exceptions`)"
        );
    }
    Ok(HuntReport {
        schema: SCHEMA.to_string(),
        base_seed: cfg.base_seed,
        minutes: cfg.budget.as_secs_f64() / 60.0,
        elapsed_s: started.elapsed().as_secs_f64(),
        versions: cfg.versions.clone(),
        suites: cfg.suites.clone(),
        runs,
        signatures: group(&findings, &axis),
    })
}

/// The finding of a failed property run: its saved folder with its first difference, or
/// (when nothing could be saved) the failure message in place of the compared kind.
#[allow(clippy::too_many_arguments)]
fn finding(
    p: &Planned,
    kind: StoreKind,
    seed: u64,
    saved: Option<&Path>,
    message: &str,
    repro_line: &str,
    cfg: &HuntConfig,
    locate: impl Fn(&crate::differential::workload::Repro) -> crate::hunt::locate::FirstDifference,
) -> Finding {
    let unsaved = |why: &str| Finding {
        suite: p.suite,
        unit: p.unit.clone(),
        kind,
        compared: format!("unsaved: {}", why.lines().next().unwrap_or("")),
        first_op: "unknown".to_string(),
        example: Example {
            dir: String::new(),
            replay: repro_line.to_string(),
            seed,
            workload: String::new(),
        },
    };
    let Some(dir) = saved else {
        return unsaved(message);
    };
    let repro = match load_repro(dir) {
        Ok(r) => r,
        Err(e) => return unsaved(&e.to_string()),
    };
    let first = locate(&repro);
    Finding {
        suite: p.suite,
        unit: p.unit.clone(),
        kind,
        compared: first.compared,
        first_op: first.first_op,
        example: Example {
            dir: dir.display().to_string(),
            replay: format!("{}{}", release_replay_command(dir), cfg.replay_suffix),
            seed,
            workload: std::fs::read_to_string(dir.join("workload.yaml")).unwrap_or_default(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_fits_the_cases_into_what_is_left() {
        let mut pace = Pace::default();
        let d = Suite::Differential;
        assert_eq!(pace.cases(d, 64, Duration::from_secs(1)), 64, "no pace yet");
        pace.record(d, 10, Duration::from_secs(5));
        assert_eq!(pace.cases(d, 64, Duration::from_secs(100)), 64);
        assert_eq!(pace.cases(d, 64, Duration::from_secs(3)), 6);
        assert_eq!(pace.cases(d, 64, Duration::ZERO), 1, "at least one");
        assert_eq!(pace.cases(Suite::Migration, 16, Duration::ZERO), 16);
        pace.record(Suite::Powerloss, 100, Duration::from_secs(10));
        assert_eq!(
            pace.cases(Suite::Powerloss, 600, Duration::from_secs(3)),
            30
        );
        assert_eq!(
            pace.cases(Suite::Fault, 600, Duration::ZERO),
            600,
            "its own pace"
        );
        pace.record(Suite::Diskerr, 10, Duration::from_secs(10));
        assert_eq!(pace.cases(Suite::Diskerr, 200, Duration::from_secs(4)), 4);
        assert_eq!(
            pace.cases(Suite::Powerloss, 600, Duration::from_secs(3)),
            30,
            "the disk-error pace is its own"
        );
    }
}
