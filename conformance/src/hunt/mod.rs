//! `conformance hunt`: exploration on a time budget, which CI no longer does (CI draws every
//! case from one fixed base seed, [`crate::vocab::seed`]).
//!
//! Round after round until the budget is spent, the hunt runs the differential property over
//! every built version × store kind, the migration property over the pairs of
//! [`crate::differential::property::migration_pairs`] × the kinds both versions have, then a
//! fault-suite batch ([`crate::fault::suite`]), a power-loss batch
//! ([`crate::powerloss::suite`]) and a disk-error batch ([`crate::diskerr::suite`]) per version, each run with a fresh seed derived from the
//! hunt's base seed (random unless given, so `--seed` replays a hunt) and many times CI's case
//! or state count. Each failure is shrunk (property runs, power-loss states) and saved by its
//! suite as CI saves its failures; a property failure's first difference is located
//! ([`locate`]), a damaged or crash state's verdict and damage are classed ([`states`]), and
//! it becomes a [`signature::Finding`]. What fails and what is accepted is the judge's word
//! alone ([`crate::judge`]): the hunt records and groups.
//!
//! - [`signature`]: findings, their grouping into signatures (version ranges), stable ids;
//! - [`locate`]: the first differing op and `Compared` kind of a saved failure;
//! - [`states`]: the fault, power-loss and disk-error batches, their findings' verdict and
//!   damage classes;
//! - [`run`]: the rounds, the budget, the progress bar.

pub mod locate;
pub mod run;
pub mod signature;
pub mod states;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use crate::differential::workload::GenConfig;
use crate::hunt::signature::Suite;
use crate::sides::reads::ReaderFn;
use crate::vocab::kind::StoreKind;

/// The JSON document and its parts: one definition, shared with `track-upstream`.
pub use hunt_schema::{HuntReport, Runs, SCHEMA};

/// Differential cases per run by default: 32 times CI's `PROPTEST_CASES=2`.
pub const DEFAULT_CASES: u32 = 64;

/// Migration cases per run by default: 16 times CI's `MIGRATION_CASES=1`.
pub const DEFAULT_MIGRATION_CASES: u32 = 16;

/// Fault-suite states per round and version by default: 10 times the 60 of `.ci/run`'s report
/// (which are spread over every version).
pub const DEFAULT_FAULT_STATES: usize = 600;

/// Power-loss crash states per round and version by default: 10 times `.ci/run`'s 60.
pub const DEFAULT_POWERLOSS_STATES: usize = 600;

/// Disk-error states per round and version by default: 10 times `.ci/run`'s 24 (one writer
/// run each, so far fewer than the other suites' states).
pub const DEFAULT_DISKERR_STATES: usize = 240;

/// What a hunt runs.
#[derive(Debug, Clone)]
pub struct HuntConfig {
    /// The time budget: no run starts after it.
    pub budget: Duration,
    /// The base seed every run's seed is derived from.
    pub base_seed: u64,
    /// Where failure folders go (`differential/`, `migration/`, `fault/`, `powerloss/`,
    /// `diskerr/` inside).
    pub out: PathBuf,
    /// The suites that run (in [`Suite::ALL`] order).
    pub suites: Vec<Suite>,
    /// The versions (built tags, oldest first).
    pub versions: Vec<String>,
    /// The store kinds (every kind a version has, of these).
    pub kinds: Vec<StoreKind>,
    /// Differential cases per run (at least 1).
    pub cases: u32,
    /// Migration cases per run (0: no migration runs).
    pub migration_cases: u32,
    /// Fault-suite states per round and version (0: no fault batches).
    pub fault_states: usize,
    /// Power-loss crash states per round and version (0: no power-loss batches).
    pub powerloss_states: usize,
    /// Disk-error states per round and version (0: no disk-error batches).
    pub diskerr_states: usize,
    /// The `Store` path the fault, power-loss and disk-error suites judge
    /// ([`crate::sides::reads::read_reader`], or a broken reader's
    /// [`crate::sides::broken::Broken::reader_fn`]).
    pub state_reader: ReaderFn,
    /// Generator knobs.
    pub gen: GenConfig,
    /// Shrink steps per failure.
    pub max_shrink_iters: u32,
    /// Appended to each replay line (`--break NAME` when hunting a broken reader).
    pub replay_suffix: String,
}

/// `412 differential, 96 migration, 3600 fault state(s), 3600 power-loss state(s), 1440
/// disk-error state(s)`.
pub fn runs_phrase(runs: &Runs) -> String {
    format!(
        "{} differential, {} migration, {} fault state(s), {} power-loss state(s), {} disk-error state(s)",
        runs.differential, runs.migration, runs.fault, runs.powerloss, runs.diskerr
    )
}

/// The summary of `report`: one line, then a table of the signatures with each one's replay
/// line.
pub fn table(report: &HuntReport) -> String {
    let mut out = format!(
        "conformance hunt: {} signature(s) in {:.0} s (budget {} min), seed {}, {} version(s) [{}]; runs: {}\n",
        report.signatures.len(),
        report.elapsed_s,
        report.minutes,
        report.base_seed,
        report.versions.len(),
        report.versions.join(", "),
        runs_phrase(&report.runs),
    );
    if report.signatures.is_empty() {
        return out;
    }
    let rows: Vec<[String; 7]> = report
        .signatures
        .iter()
        .map(|s| {
            [
                s.id.clone(),
                s.suite.name().to_string(),
                s.versions.clone(),
                s.kind.clone(),
                s.compared.clone(),
                s.first_op.clone(),
                s.count.to_string(),
            ]
        })
        .collect();
    let head = [
        "id",
        "suite",
        "versions",
        "kind",
        "compared",
        "first op / damage",
        "count",
    ];
    let mut widths = head.map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut l = String::new();
        for (c, w) in cells.iter().zip(widths) {
            let _ = write!(l, "{c}{}  ", " ".repeat(w - c.chars().count()));
        }
        l.trim_end().to_string()
    };
    out.push('\n');
    out.push_str(&line(&head));
    out.push('\n');
    for r in &rows {
        out.push_str(&line(&r.each_ref().map(String::as_str)));
        out.push('\n');
    }
    out.push('\n');
    for s in &report.signatures {
        let _ = writeln!(out, "{}: {}", s.id, s.example.replay);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hunt::signature::{Example, Signature};

    #[test]
    fn the_json_has_the_agreed_names() {
        let report = HuntReport {
            schema: SCHEMA.to_string(),
            base_seed: 7,
            minutes: 0.5,
            elapsed_s: 31.0,
            versions: vec!["v2.4.2".to_string()],
            suites: Suite::ALL.to_vec(),
            runs: Runs {
                differential: 3,
                migration: 0,
                fault: 600,
                powerloss: 0,
                diskerr: 24,
            },
            signatures: vec![Signature {
                id: "0123456789abcdef".to_string(),
                suite: Suite::Differential,
                versions: "v2.4.2".to_string(),
                version_list: vec!["v2.4.2".to_string()],
                kind: "plain".to_string(),
                compared: "get i32".to_string(),
                first_op: "set".to_string(),
                count: 3,
                example: Example {
                    dir: "/h/x".to_string(),
                    replay: "cargo run --release -p conformance -- replay /h/x".to_string(),
                    seed: 9,
                    workload: "tag: v2.4.2\n".to_string(),
                },
            }],
        };
        let v = serde_json::to_value(&report).unwrap();
        let keys = |v: &serde_json::Value| {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(
            keys(&v),
            [
                "base_seed",
                "elapsed_s",
                "minutes",
                "runs",
                "schema",
                "signatures",
                "suites",
                "versions"
            ]
        );
        assert_eq!(
            keys(&v["runs"]),
            ["differential", "diskerr", "fault", "migration", "powerloss"]
        );
        assert_eq!(
            v["suites"],
            serde_json::json!(["differential", "migration", "fault", "powerloss", "diskerr"])
        );
        let s = &v["signatures"][0];
        assert_eq!(
            keys(s),
            [
                "compared",
                "count",
                "example",
                "first_op",
                "id",
                "kind",
                "suite",
                "version_list",
                "versions"
            ]
        );
        assert_eq!(s["suite"], "differential");
        assert_eq!(keys(&s["example"]), ["dir", "replay", "seed", "workload"]);
        let table = table(&report);
        assert!(table.contains("1 signature(s)"), "{table}");
        assert!(table.contains("600 fault state(s)"), "{table}");
        assert!(table.contains("24 disk-error state(s)"), "{table}");
        assert!(
            table.contains("0123456789abcdef  differential  v2.4.2"),
            "{table}"
        );
    }
}
