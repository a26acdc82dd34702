//! Property runs: proptest over workloads for one (version, store kind), with shrinking,
//! failure folders and the one-line reproduction.

use std::path::PathBuf;

use proptest::test_runner::{
    Config, FileFailurePersistence, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
};

use crate::differential::failures::{failures_root, replay_command, save_failure};
use crate::differential::runner::run_repro;
use crate::differential::stats::RunStats;
use crate::differential::workload::{
    op_strategy, workload_strategy, Continuation, GenConfig, Repro, Workload,
};
use crate::sides::official::OfficialLib;
use crate::sides::view::ReaderFactory;
use crate::vocab::kind::StoreKind;
use crate::vocab::merge::Merge;
use crate::vocab::SplitMix;

/// Default number of cases per (version, kind) when `PROPTEST_CASES` is not set.
pub const DEFAULT_CASES: u32 = 12;

/// Cases per (version, kind): `PROPTEST_CASES` or [`DEFAULT_CASES`].
pub fn cases_from_env() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_CASES)
}

/// How to run one property.
#[derive(Debug, Clone)]
pub struct PropConfig {
    /// Successful cases required.
    pub cases: u32,
    /// The RNG seed (default: derived from the base seed, [`crate::vocab::seed`]); `None`
    /// draws a fresh random one (exploration, never CI).
    pub seed: Option<u64>,
    /// Generator knobs.
    pub gen: GenConfig,
    /// Upper bound on shrink steps.
    pub max_shrink_iters: u32,
    /// The test source file whose `.proptest-regressions` sibling stores failing seeds
    /// (`None` = no persistence).
    pub source_file: Option<&'static str>,
    /// Save the minimal failing case (and make the replay line).
    pub save_failures: bool,
    /// Where failure folders go (default [`failures_root`]).
    pub failures_dir: PathBuf,
    /// Where to write each workload (YAML repro) before it runs, so that a watchdog that
    /// kills a hung run still has it (see [`crate::report::cell`]).
    pub running: Option<PathBuf>,
}

impl Default for PropConfig {
    fn default() -> PropConfig {
        PropConfig {
            cases: cases_from_env(),
            seed: Some(crate::vocab::seed::derive("property")),
            gen: GenConfig::default(),
            max_shrink_iters: 512,
            source_file: None,
            save_failures: true,
            failures_dir: failures_root(),
            running: None,
        }
    }
}

/// The result of a property run.
#[derive(Debug)]
pub enum PropOutcome {
    /// Every case passed.
    Pass {
        /// Cases run.
        cases: u32,
        /// What the passing cases ran, summed (shrinking runs not counted).
        stats: RunStats,
        /// Cases in which the official instance's in-memory state disagreed with its own
        /// files (see [`crate::differential::failures`]); the reader agreed with the files.
        divergent_cases: u32,
        /// The first such divergence (its workload is saved under `failures_dir/divergences/`
        /// when saving is on).
        divergence_example: Option<String>,
    },
    /// A case failed; `minimal` is the shrunk workload.
    Fail {
        /// The shrunk workload.
        minimal: Workload,
        /// The failure message of the minimal case.
        message: String,
        /// The saved failure folder, when saving was on and worked.
        saved: Option<PathBuf>,
        /// The one-line reproduction (or the save error).
        repro_line: String,
    },
}

impl PropOutcome {
    /// A failure with `message` and no workload to show.
    fn failed(message: impl Into<String>) -> PropOutcome {
        PropOutcome::Fail {
            minimal: Workload::new(Vec::new()),
            message: message.into(),
            saved: None,
            repro_line: String::new(),
        }
    }

    /// True for [`PropOutcome::Pass`].
    pub fn passed(&self) -> bool {
        matches!(self, PropOutcome::Pass { .. })
    }
}

/// The proptest RNG seed for a fixed `seed`: four outputs of the one [`SplitMix`].
fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut rng = SplitMix::new(seed ^ 0x6d6d_6b76_2d63_6f6e);
    let mut out = [0u8; 32];
    for chunk in out.chunks_mut(8) {
        chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    out
}

/// The first `n` workloads a property run with `seed` draws for `kind` and `features` (nothing
/// is run): proptest's own runner draws them, as [`check_property`] has it draw its cases
/// (each case from an RNG it reseeds from the last), each accepted at once. What a seed
/// decides: the same seed draws the same cases, and the report's plan digest is made of them
/// ([`crate::report::digest::cell_digest`]).
pub fn draw_workloads(
    kind: StoreKind,
    features: crate::vocab::kind::Features,
    gen: GenConfig,
    seed: u64,
    n: usize,
) -> Vec<Workload> {
    let config = Config {
        cases: u32::try_from(n).unwrap_or(u32::MAX),
        failure_persistence: None,
        source_file: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(seed)),
    );
    let drawn = std::cell::RefCell::new(Vec::with_capacity(n));
    // Every case passes, so the run cannot fail.
    let _ = runner.run(&workload_strategy(kind, features, gen), |w| {
        drawn.borrow_mut().push(w);
        Ok(())
    });
    drawn.into_inner()
}

/// Runs the differential property for `kind` on `lib` with `reader`.
pub fn check_property(
    lib: &dyn OfficialLib,
    kind: StoreKind,
    reader: &dyn ReaderFactory,
    cfg: &PropConfig,
) -> PropOutcome {
    check_property_with(lib, kind, reader, cfg, &|| {})
}

/// [`check_property`], calling `heartbeat` before each workload.
pub fn check_property_with(
    lib: &dyn OfficialLib,
    kind: StoreKind,
    reader: &dyn ReaderFactory,
    cfg: &PropConfig,
    heartbeat: &(dyn Fn() + Sync),
) -> PropOutcome {
    check_steps(&[lib], kind, reader, cfg, heartbeat)
}

/// The version-migration property: a store of `kind` written by `libs[0]` is continued by
/// `libs[1]`, then `libs[2]` ... (each with its own generated operations), the long-lived
/// reader staying open across every switch. A later version that is older than the one
/// before it and cannot read its file ends the run there (see [`crate::differential::runner::run_steps`]).
pub fn check_migration(
    libs: &[&dyn OfficialLib],
    kind: StoreKind,
    reader: &dyn ReaderFactory,
    cfg: &PropConfig,
) -> PropOutcome {
    check_steps(libs, kind, reader, cfg, &|| {})
}

fn repro_strategy(
    libs: &[&dyn OfficialLib],
    kind: StoreKind,
    gen: crate::differential::workload::GenConfig,
) -> proptest::strategy::BoxedStrategy<Repro> {
    use proptest::prelude::*;
    let tag = libs
        .first()
        .map(|l| l.tag().to_string())
        .unwrap_or_default();
    let first = workload_strategy(
        kind,
        libs.first().map(|l| l.features()).unwrap_or_default(),
        gen,
    );
    let rest: Vec<BoxedStrategy<Continuation>> = libs
        .iter()
        .skip(1)
        .map(|l| {
            let tag = l.tag().to_string();
            prop::collection::vec(op_strategy(kind, l.features(), gen), 1..=gen.max_ops.max(1))
                .prop_map(move |ops| Continuation {
                    tag: tag.clone(),
                    ops,
                })
                .boxed()
        })
        .collect();
    (first, rest)
        .prop_map(move |(workload, then)| Repro {
            tag: tag.clone(),
            kind,
            workload,
            then,
            clock: None,
        })
        .boxed()
}

fn check_steps(
    libs: &[&dyn OfficialLib],
    kind: StoreKind,
    reader: &dyn ReaderFactory,
    cfg: &PropConfig,
    heartbeat: &(dyn Fn() + Sync),
) -> PropOutcome {
    let Some(&lib) = libs.first() else {
        return PropOutcome::failed("no official version given");
    };
    let mut config = Config {
        cases: cfg.cases,
        max_shrink_iters: cfg.max_shrink_iters,
        failure_persistence: None,
        source_file: None,
        ..Config::default()
    };
    if let Some(src) = cfg.source_file {
        config.failure_persistence = Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        )));
        config.source_file = Some(src);
    }
    let mut runner = match cfg.seed {
        Some(seed) => TestRunner::new_with_rng(
            config,
            TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(seed)),
        ),
        None => TestRunner::new(config),
    };
    let strategy = repro_strategy(libs, kind, cfg.gen);
    let divergent = std::sync::Mutex::new((0u32, None::<String>));
    let totals = std::sync::Mutex::new((0u32, RunStats::default()));
    // The last failing case and the second its run began: proptest's minimal case is the last
    // one that failed, and it is saved from that second (see `Repro::clock`).
    let last_failure = std::sync::Mutex::new(None::<(Repro, u32)>);
    let result = runner.run(&strategy, |repro| {
        if let Some(p) = &cfg.running {
            let _ = std::fs::write(p, repro.to_yaml());
        }
        heartbeat();
        match run_repro(libs, &repro, reader) {
            Ok(outcome) if outcome.passed() => {
                {
                    let mut t = totals.lock().unwrap_or_else(|p| p.into_inner());
                    t.0 += 1;
                    t.1.absorb(outcome.stats);
                }
                if let Some(first) = outcome.divergences.first() {
                    let mut d = divergent.lock().unwrap_or_else(|p| p.into_inner());
                    d.0 += 1;
                    if d.1.is_none() {
                        let saved = if cfg.save_failures {
                            match save_failure(
                                &cfg.failures_dir.join("divergences"),
                                &repro,
                                &outcome,
                            ) {
                                Ok(dir) => format!("saved in {}", dir.display()),
                                Err(e) => format!("(could not save: {e})"),
                            }
                        } else {
                            String::new()
                        };
                        d.1 = Some(format!(
                            "{} {kind}: {first} ({} read(s) differ); {saved}",
                            lib.tag(),
                            outcome.divergences.len(),
                        ));
                    }
                }
                Ok(())
            }
            Ok(outcome) => {
                *last_failure.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some((repro.clone(), outcome.started));
                Err(TestCaseError::fail(outcome.summary(6)))
            }
            Err(e) => Err(TestCaseError::fail(format!("harness error: {e}"))),
        }
    });
    let last_failure = last_failure.into_inner().unwrap_or_else(|p| p.into_inner());
    let (divergent_cases, divergence_example) =
        divergent.into_inner().unwrap_or_else(|p| p.into_inner());
    let (passed_cases, stats) = totals.into_inner().unwrap_or_else(|p| p.into_inner());
    match result {
        Ok(()) if passed_cases == 0 => {
            PropOutcome::failed("no case ran (a property that ran nothing has not passed)")
        }
        Ok(()) => PropOutcome::Pass {
            cases: passed_cases,
            stats,
            divergent_cases,
            divergence_example,
        },
        Err(TestError::Abort(reason)) => PropOutcome::failed(format!("aborted: {reason}")),
        Err(TestError::Fail(reason, mut repro)) => {
            if let Some((failed, second)) = last_failure {
                if failed == repro {
                    repro.clock = Some(second);
                }
            }
            let (saved, repro_line) = if cfg.save_failures {
                save_minimal(libs, &repro, reader, &cfg.failures_dir)
            } else {
                (None, String::new())
            };
            PropOutcome::Fail {
                minimal: repro.workload,
                message: reason.to_string(),
                saved,
                repro_line,
            }
        }
    }
}

/// Re-runs the minimal workload (from the second it failed at, when known) and saves its
/// folder; returns it and the replay line.
fn save_minimal(
    libs: &[&dyn OfficialLib],
    repro: &Repro,
    reader: &dyn ReaderFactory,
    root: &std::path::Path,
) -> (Option<PathBuf>, String) {
    match run_repro(libs, repro, reader) {
        Ok(outcome) => match save_failure(root, repro, &outcome) {
            Ok(dir) => {
                let line = replay_command(&dir);
                (Some(dir), line)
            }
            Err(e) => (None, format!("(could not save the failure: {e})")),
        },
        Err(e) => (None, format!("(re-run of the minimal case failed: {e})")),
    }
}

/// The migration pairs over `n` versions (oldest first), as indices: every adjacent pair in
/// both directions, plus the longest jump (oldest → newest) and back; the pairs the migration
/// tests run.
pub fn migration_pairs(n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for i in 1..n {
        out.push((i - 1, i));
        out.push((i, i - 1));
    }
    if n > 2 {
        out.push((0, n - 1));
        out.push((n - 1, 0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_adjacent_both_ways_and_the_longest_jump() {
        assert_eq!(migration_pairs(1), []);
        assert_eq!(migration_pairs(2), [(0, 1), (1, 0)]);
        assert_eq!(
            migration_pairs(3),
            [(0, 1), (1, 0), (1, 2), (2, 1), (0, 2), (2, 0)]
        );
    }
}
