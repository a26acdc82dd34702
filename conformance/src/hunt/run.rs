//! The hunt's rounds: every (version, kind) differential run, then every (pair, kind)
//! migration run, each with its own seed, again and again until the budget is spent; failures
//! become findings, grouped into signatures at the end.

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
use crate::hunt::{HuntConfig, HuntReport, Runs, SCHEMA};
use crate::sides::official::OfficialLib;
use crate::sides::sys::SysLib;
use crate::sides::view::ReaderFactory;
use crate::vocab::kind::StoreKind;
use crate::vocab::seed::derive_from;

/// How often a status line is printed.
const STATUS_EVERY: Duration = Duration::from_secs(60);

/// One property run of a round.
struct Planned {
    suite: Suite,
    unit: Unit,
    kind: StoreKind,
    /// Indices into the loaded libraries: one version, or a pair in order.
    libs: Vec<usize>,
}

/// Every run of one round: differential first, then migration.
fn plan(libs: &[SysLib], cfg: &HuntConfig) -> Vec<Planned> {
    let has = |i: usize, k: StoreKind| k.supported_by(&libs[i].features());
    let mut out = Vec::new();
    for (i, lib) in libs.iter().enumerate() {
        for &kind in cfg.kinds.iter().filter(|&&k| has(i, k)) {
            out.push(Planned {
                suite: Suite::Differential,
                unit: Unit::version(lib.tag()),
                kind,
                libs: vec![i],
            });
        }
    }
    if cfg.migration_cases > 0 {
        for (a, b) in migration_pairs(libs.len()) {
            for &kind in cfg.kinds.iter().filter(|&&k| has(a, k) && has(b, k)) {
                out.push(Planned {
                    suite: Suite::Migration,
                    unit: Unit::pair(libs[a].tag(), libs[b].tag()),
                    kind,
                    libs: vec![a, b],
                });
            }
        }
    }
    out
}

/// Time per passing case, by suite (shrinking not counted): how many cases fit in what is left.
#[derive(Default)]
struct Pace {
    spent: [Duration; 2],
    cases: [u64; 2],
}

impl Pace {
    fn slot(suite: Suite) -> usize {
        match suite {
            Suite::Differential => 0,
            Suite::Migration => 1,
        }
    }

    fn record(&mut self, suite: Suite, cases: u32, took: Duration) {
        self.spent[Self::slot(suite)] += took;
        self.cases[Self::slot(suite)] += u64::from(cases);
    }

    /// At most `full` cases, fewer when they would not fit in `left` (at least 1).
    fn cases(&self, suite: Suite, full: u32, left: Duration) -> u32 {
        let s = Self::slot(suite);
        if self.cases[s] == 0 {
            return full;
        }
        let per_case = self.spent[s].as_secs_f64() / self.cases[s] as f64;
        let fit = (left.as_secs_f64() / per_case.max(1e-6)).floor();
        (fit.min(f64::from(full)) as u32).max(1)
    }
}

/// Runs the hunt with `reader` (the real one, or a broken one for `--break`).
pub fn hunt(cfg: &HuntConfig, reader: &dyn ReaderFactory) -> Result<HuntReport> {
    let libs: Vec<SysLib> = cfg
        .versions
        .iter()
        .map(|t| SysLib::load(t))
        .collect::<std::result::Result<_, _>>()?;
    let plan = plan(&libs, cfg);
    if plan.is_empty() {
        return Err(Error::Other(format!(
            "nothing to hunt: no version of [{}] has any of the kinds [{}]",
            cfg.versions.join(", "),
            cfg.kinds
                .iter()
                .map(|k| k.id())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut axis = Axis::new();
    for p in &plan {
        axis.entry((p.suite, p.kind))
            .or_default()
            .push(p.unit.clone());
    }
    // Short expiries move the test clock instead of sleeping, as in the tests.
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
        "conformance hunt: seed {}, {} min, {} run(s) per round over [{}], reader {}",
        cfg.base_seed,
        cfg.budget.as_secs_f64() / 60.0,
        plan.len(),
        cfg.versions.join(", "),
        reader.name()
    ));

    let mut runs = Runs::default();
    let mut findings: Vec<Finding> = Vec::new();
    let mut pace = Pace::default();
    let mut divergent_cases = 0u64;
    let mut next_status = started + STATUS_EVERY;
    'hunt: for round in 0u64.. {
        for p in &plan {
            let now = Instant::now();
            if now >= deadline {
                break 'hunt;
            }
            if now >= next_status {
                // For logs, where the bar is hidden.
                say(&format!(
                    "hunt: {:.0} s, round {round}: {} differential and {} migration run(s), {} failure(s)",
                    started.elapsed().as_secs_f64(),
                    runs.differential,
                    runs.migration,
                    findings.len()
                ));
                next_status = now + STATUS_EVERY;
            }
            let full = match p.suite {
                Suite::Differential => cfg.cases,
                Suite::Migration => cfg.migration_cases,
            };
            let cases = pace.cases(p.suite, full, deadline - now);
            let seed = derive_from(
                cfg.base_seed,
                &format!(
                    "hunt {round} {} {} {}",
                    p.suite.name(),
                    p.unit.label,
                    p.kind
                ),
            );
            let pc = PropConfig {
                cases,
                seed: Some(seed),
                gen: cfg.gen,
                max_shrink_iters: cfg.max_shrink_iters,
                source_file: None,
                save_failures: true,
                failures_dir: cfg.out.join(p.suite.name()),
                running: None,
            };
            bar.set_message(format!(
                "round {round}: {} {} {} | {} run(s), {} failure(s)",
                p.suite.name(),
                p.unit.label,
                p.kind,
                runs.differential + runs.migration,
                findings.len()
            ));
            tick();
            let run_libs: Vec<&dyn OfficialLib> = p
                .libs
                .iter()
                .map(|&i| &libs[i] as &dyn OfficialLib)
                .collect();
            let t0 = Instant::now();
            let outcome = match p.suite {
                Suite::Differential => check_property_with(run_libs[0], p.kind, reader, &pc, &tick),
                Suite::Migration => check_migration(&run_libs, p.kind, reader, &pc),
            };
            match p.suite {
                Suite::Differential => runs.differential += 1,
                Suite::Migration => runs.migration += 1,
            }
            match outcome {
                PropOutcome::Pass {
                    cases,
                    divergent_cases: d,
                    ..
                } => {
                    pace.record(p.suite, cases, t0.elapsed());
                    divergent_cases += u64::from(d);
                }
                PropOutcome::Fail {
                    minimal,
                    message,
                    saved,
                    repro_line,
                } => {
                    let f = finding(p, seed, saved.as_deref(), &message, &repro_line, cfg, |r| {
                        first_difference(&run_libs, r, reader)
                    });
                    // One line per new (unit, kind, compared, first op); repeats are counted.
                    let new = !findings.iter().any(|g| {
                        (g.suite, &g.unit, g.kind, &g.compared, &g.first_op)
                            == (f.suite, &f.unit, f.kind, &f.compared, &f.first_op)
                    });
                    if new {
                        say(&format!(
                            "found: {} {} {}: {} after {} (minimal: {} op(s)); {}",
                            p.suite.name(),
                            p.unit.label,
                            p.kind,
                            f.compared,
                            f.first_op,
                            minimal.ops.len(),
                            f.example.replay
                        ));
                    }
                    findings.push(f);
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
        runs,
        signatures: group(&findings, &axis),
    })
}

/// The finding of a failed run: its saved folder with its first difference, or (when nothing
/// could be saved) the failure message in place of the compared kind.
fn finding(
    p: &Planned,
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
        kind: p.kind,
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
        kind: p.kind,
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
    }
}
