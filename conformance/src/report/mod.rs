//! The conformance report: one row per version tag, one column per store kind.
//!
//! Rows are the tags of `versions.yaml` and of the corpus. A tag built into `mmkv-sys` is
//! `live`: each supported kind runs the differential property with fixed seeds, and the
//! corpus stores of that tag are checked too. Any other tag is `golden`: its corpus stores are
//! checked. The corpus stores `empty`, `cleared` and `trimmed` (plain configuration) count
//! towards the `plain` column.

//!
//! - [`plan`]: which rows run and how (`ReportConfig`, `plan`, `run_row`, unbuilt rows);
//! - [`cell`]: one live cell (version × kind), in a child process with a watchdog;
//! - [`merge`]: CI shards' JSON reports into one (`conformance merge`);
//! - [`digest`]: the plan digest (what the seed drew: workloads, fault and power-loss plans);
//! - [`render`]: text, Markdown, JSON and the one summary line;
//! - [`scratch`]: where temporary stores go (tmpfs when there is one);
//! - [`pages`]: the page-size axis (every cell runs under one official page size; a row is
//!   one version at one page size).

pub mod cell;
pub mod digest;
pub mod merge;
pub mod pages;
pub mod plan;
pub mod render;
pub mod scratch;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diskerr::section::DiskerrSection;
use crate::fault::section::FaultSection;
use crate::powerloss::section::PowerlossSection;
use crate::report::cell::CellResult;
use crate::vocab::kind::StoreKind;
use crate::vocab::merge::{merge_fields, Merge};

/// One cell of the report, ordered by weight when shards are merged (the worst wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Cell {
    /// The version has no such configuration.
    #[serde(rename = "n/a")]
    NotApplicable,
    /// Checked from the golden corpus only, and passed.
    #[serde(rename = "golden")]
    Golden,
    /// Live property runs (and the tag's corpus store, if any) passed.
    #[serde(rename = "pass")]
    Pass,
    /// Should have run live, but mmkv-sys left the version unbuilt (sources unreachable, see
    /// [`plan::mark_unbuilt`]).
    #[serde(rename = "unbuilt")]
    Unbuilt,
    /// Something failed.
    #[serde(rename = "FAIL")]
    Fail,
}

impl Cell {
    /// The cell text.
    pub fn text(self) -> &'static str {
        match self {
            Cell::Pass => "pass",
            Cell::Fail => "FAIL",
            Cell::NotApplicable => "n/a",
            Cell::Golden => "golden",
            Cell::Unbuilt => "unbuilt",
        }
    }
}

/// Where a row's verdicts come from, ordered by rank when shards are merged (a shard that
/// ran the version outranks one that only checked its corpus).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Golden corpus only.
    Golden,
    /// The official library should have run but mmkv-sys could not fetch its sources.
    Unbuilt,
    /// The official library of that version was run (plus its corpus).
    Live,
}

/// One row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// The tag.
    pub tag: String,
    /// The page size (bytes) the official library ran this row's cells with (absent in a
    /// report from before the page-size axis: 4096).
    #[serde(default = "pages::default_page_size")]
    pub page_size: u64,
    /// Live or golden.
    pub source: Source,
    /// Verdict per store kind id (serialized in report column order).
    #[serde(serialize_with = "kinds_in_column_order")]
    pub kinds: BTreeMap<String, Cell>,
    /// What ran in this row's live cells (workloads, operations, keys compared ...).
    pub ran: RowCounts,
    /// Failure details (kept in the JSON so that a merged report and its page show them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// Upstream findings that do not fail the row: official in-memory divergences
    /// (see [`crate::differential::runner`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What each live cell ran and found, per store kind id (the page's cell details).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cells: BTreeMap<String, CellResult>,
    /// The live-writer line of this row, when live writers ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_writer: Option<String>,
    /// Why the row is unbuilt (mmkv-sys' reason), when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unbuilt: Option<String>,
}

/// What a row ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RowCounts {
    /// Workloads that ran (live cells).
    pub workloads: u64,
    /// Official operations they performed.
    pub ops: u64,
    /// Keys compared (summed over every capture of either reader).
    pub keys_compared: u64,
    /// (key, getter) reads compared.
    pub reads_compared: u64,
    /// Long-lived reader: partial reloads.
    pub partial_reloads: u64,
    /// Long-lived reader: full reloads.
    pub full_reloads: u64,
    /// Corpus stores checked.
    pub corpus_stores: u64,
}

impl Row {
    /// The row's name in tables: the tag, followed by the page size unless it is 4 KiB.
    pub fn label(&self) -> String {
        if self.page_size == pages::DEFAULT_PAGE_SIZE {
            self.tag.clone()
        } else {
            format!("{} ({})", self.tag, pages::label(self.page_size))
        }
    }

    /// The row's identity in a report (and when shards merge): tag and page size.
    pub fn key(&self) -> (Option<mmkv_sys::versions::Tag>, String, u64) {
        (
            mmkv_sys::versions::Tag::parse(&self.tag),
            self.tag.clone(),
            self.page_size,
        )
    }
}

impl RowCounts {
    pub(crate) fn add_run(&mut self, workloads: u64, s: &crate::differential::stats::RunStats) {
        self.workloads += workloads;
        self.ops += s.ops;
        self.keys_compared += s.keys_compared;
        self.reads_compared += s.reads_compared;
        self.partial_reloads += s.long_lived.partial;
        self.full_reloads += s.long_lived.full;
    }
}

merge_fields!(RowCounts: workloads, ops, keys_compared, reads_compared, partial_reloads,
    full_reloads, corpus_stores);

fn kinds_in_column_order<S: serde::Serializer>(
    kinds: &BTreeMap<String, Cell>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = serializer.serialize_map(Some(kinds.len()))?;
    for k in StoreKind::ALL {
        if let Some(c) = kinds.get(k.id()) {
            map.serialize_entry(k.id(), c)?;
        }
    }
    for (k, c) in kinds {
        if k.parse::<StoreKind>().is_err() {
            map.serialize_entry(k, c)?;
        }
    }
    map.end()
}

/// The whole report.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Report {
    /// Rows, oldest version first.
    pub versions: Vec<Row>,
    /// The fault suite (differential under faults, see [`crate::fault`]) over the live
    /// versions; `None` when it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<FaultSection>,
    /// The power-loss suite (crash states, see [`crate::powerloss`]); `None` when it did not
    /// run (a run that did must pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub powerloss: Option<PowerlossSection>,
    /// The disk-error suite (states official writers leave while chosen file calls fail, see
    /// [`crate::diskerr`]); `None` when it did not run (a run that did must pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diskerr: Option<DiskerrSection>,
    /// Uses of each accepted difference in this run, by [`Difference::code`] of its row of
    /// [`crate::judge::exceptions::TABLE`] (see [`crate::judge::exceptions::take_uses`]).
    ///
    /// [`Difference::code`]: crate::judge::exceptions::Difference::code
    #[serde(default)]
    pub exceptions_used: BTreeMap<String, u64>,
    /// The base seed the run drew its workloads and states from ([`crate::vocab::seed`]);
    /// `None` in reports merged from shards of different seeds, or from before seeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl Report {
    /// Sets [`Report::exceptions_used`]: `parent`'s uses (this process: live writers, the
    /// fault suite, in-process cells) plus those each cell's child process sent.
    pub fn count_exception_uses(&mut self, parent: BTreeMap<String, u64>) {
        self.exceptions_used = parent;
        for cell in self.versions.iter().flat_map(|r| r.cells.values()) {
            self.exceptions_used.absorb(cell.exceptions_used.clone());
        }
    }

    /// The one verdict: something ran, no cell failed and no row has a failure, the fault
    /// suite passed (required, non-empty and without disagreement, as soon as one row is
    /// live), and with `strict` (`MMKV_REQUIRE_ALL=1`) no version is unbuilt.
    pub fn passed(&self, strict: bool) -> bool {
        self.ran_anything()
            && self.faults_passed()
            && self.powerloss.as_ref().is_none_or(PowerlossSection::passed)
            && self.diskerr.as_ref().is_none_or(DiskerrSection::passed)
            && self
                .versions
                .iter()
                .all(|r| r.kinds.values().all(|c| *c != Cell::Fail) && r.failures.is_empty())
            && !(strict && self.tally().rows("unbuilt") > 0)
    }

    /// The fault suite's verdict: required (and then non-empty and without disagreement)
    /// as soon as one row is live.
    pub fn faults_passed(&self) -> bool {
        match &self.faults {
            Some(f) => f.passed(),
            None => !self.versions.iter().any(|r| r.source == Source::Live),
        }
    }

    /// Every row's counts, summed.
    pub fn totals(&self) -> RowCounts {
        let mut t = RowCounts::default();
        for r in &self.versions {
            t.absorb(r.ran);
        }
        t
    }

    /// Rows per source and cells per verdict.
    pub fn tally(&self) -> Tally {
        let mut t = Tally::default();
        for row in &self.versions {
            let source = match row.source {
                Source::Live => "live",
                Source::Golden => "golden",
                Source::Unbuilt => "unbuilt",
            };
            *t.rows.entry(source).or_default() += 1;
            for kind in StoreKind::ALL {
                let cell = row
                    .kinds
                    .get(kind.id())
                    .copied()
                    .unwrap_or(Cell::NotApplicable);
                *t.cells.entry(cell.text()).or_default() += 1;
            }
        }
        t
    }

    /// True when something was checked at all (a live workload or a corpus store).
    pub fn ran_anything(&self) -> bool {
        let t = self.totals();
        t.workloads > 0 || t.corpus_stores > 0
    }
}

/// Rows per source and cells per verdict of a report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Rows by source (`live`, `golden`, `unbuilt`).
    pub rows: BTreeMap<&'static str, usize>,
    /// Cells by verdict (`pass`, `FAIL`, `golden`, `unbuilt`, `n/a`).
    pub cells: BTreeMap<&'static str, usize>,
}

impl Tally {
    /// Rows of `source`.
    pub fn rows(&self, source: &str) -> usize {
        self.rows.get(source).copied().unwrap_or(0)
    }

    /// Cells with the text `verdict`.
    pub fn cells(&self, verdict: &str) -> usize {
        self.cells.get(verdict).copied().unwrap_or(0)
    }
}

/// The variable that makes an unbuilt version a failure (as it makes it a build error in
/// mmkv-sys).
pub const REQUIRE_ALL_VAR: &str = "MMKV_REQUIRE_ALL";

/// Whether `MMKV_REQUIRE_ALL` is set (to anything but `0`).
pub fn require_all() -> bool {
    std::env::var(REQUIRE_ALL_VAR).is_ok_and(|v| !v.trim().is_empty() && v.trim() != "0")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A row with the given cells that ran a few workloads (shared by the shards tests).
    pub(crate) fn row(tag: &str, source: Source, cells: &[(StoreKind, Cell)]) -> Row {
        Row {
            tag: tag.to_string(),
            page_size: pages::DEFAULT_PAGE_SIZE,
            source,
            kinds: cells
                .iter()
                .map(|(k, c)| (k.id().to_string(), *c))
                .collect(),
            ran: RowCounts {
                workloads: 3,
                ops: 40,
                keys_compared: 100,
                ..RowCounts::default()
            },
            failures: Vec::new(),
            notes: Vec::new(),
            cells: BTreeMap::new(),
            live_writer: None,
            unbuilt: None,
        }
    }

    #[test]
    fn renders_json_text_and_markdown() {
        let report = Report {
            versions: vec![
                row(
                    "v2.0.0",
                    Source::Live,
                    &[
                        (StoreKind::Plain, Cell::Pass),
                        (StoreKind::Aes256, Cell::NotApplicable),
                    ],
                ),
                row(
                    "v2.4.2",
                    Source::Golden,
                    &[(StoreKind::Aes256, Cell::Golden)],
                ),
            ],
            faults: Some(faults(12)),
            ..Report::default()
        };
        assert!(report.passed(false));
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["versions"][0]["tag"], "v2.0.0");
        assert_eq!(json["versions"][0]["source"], "live");
        assert_eq!(json["versions"][0]["kinds"]["plain"], "pass");
        assert_eq!(json["versions"][0]["kinds"]["aes256"], "n/a");
        assert_eq!(json["versions"][1]["source"], "golden");
        assert_eq!(json["versions"][1]["kinds"]["aes256"], "golden");
        let md = report.to_markdown();
        assert!(md.starts_with("| tag | source | plain | multi |"));
        assert!(md.contains("| v2.4.2 | golden | n/a |"));
        assert!(md.contains("| 3 | 40 | 100 |"));
        assert!(report
            .summary_line()
            .starts_with("conformance report: PASS"));
        assert_eq!(json["versions"][0]["ran"]["workloads"], 3);
        // the table (header + 2 rows), a blank line, then the fault suite
        assert_eq!(
            report
                .to_text()
                .lines()
                .take_while(|l| !l.is_empty())
                .count(),
            3
        );

        let mut failing = report.clone();
        failing.versions[0].kinds.insert("multi".into(), Cell::Fail);
        assert!(!failing.passed(false));
        assert!(failing.to_text().contains("FAIL"));
        assert!(failing.summary_line().contains("1 FAIL"));

        let mut vacuous = report.clone();
        for r in &mut vacuous.versions {
            r.ran = RowCounts::default();
        }
        assert!(
            !vacuous.passed(false),
            "a report that ran nothing has not passed"
        );

        // the fault suite: part of the text, the JSON and the summary line; required when a
        // row is live; zero states or a disagreement fails the report
        assert!(report
            .to_text()
            .contains("fault suite: PASS — 12 states judged"));
        assert_eq!(json["faults"]["states"], 12);
        assert!(report.summary_line().contains("12 fault state(s) judged"));
        let mut none = report.clone();
        none.faults = None;
        assert!(!none.passed(false), "live rows without the fault suite");
        let mut zero = report.clone();
        zero.faults = Some(faults(0));
        assert!(!zero.passed(false), "a fault suite that judged nothing");
        let mut bad = report.clone();
        bad.faults
            .as_mut()
            .unwrap()
            .disagreements
            .push("#1 v2.4.2 plain".into());
        assert!(!bad.passed(false));
        assert!(bad.summary_line().starts_with("conformance report: FAIL"));
        let golden_only = Report {
            versions: vec![report.versions[1].clone()],
            faults: None,
            ..Report::default()
        };
        assert!(
            golden_only.passed(false),
            "no live version: nothing to damage"
        );

        // the power-loss suite: its own section, JSON and phrase; when it ran it must pass
        let mut pl = report.clone();
        pl.powerloss = Some(PowerlossSection {
            states: 9,
            recordings: 1,
            ..PowerlossSection::default()
        });
        assert!(pl.passed(false));
        assert!(pl
            .to_text()
            .contains("power-loss suite: PASS — 9 crash states judged"));
        assert!(pl.summary_line().contains("9 power-loss state(s) judged"));
        let json: serde_json::Value = serde_json::from_str(&pl.to_json()).unwrap();
        assert_eq!(json["powerloss"]["states"], 9);
        pl.powerloss.as_mut().unwrap().disagreeing = 1;
        assert!(!pl.passed(false));
        assert!(report.summary_line().contains("power-loss suite not run"));

        // the disk-error suite likewise; a run in which no scheduled call failed fails
        let mut de = report.clone();
        de.diskerr = Some(DiskerrSection {
            states: 7,
            failed_calls: [("msync".to_string(), 3)].into_iter().collect(),
            ..DiskerrSection::default()
        });
        assert!(de.passed(false));
        assert!(de
            .to_text()
            .contains("disk-error suite: PASS — 7 states judged"));
        assert!(de.summary_line().contains("; 7 disk-error state(s) judged"));
        let json: serde_json::Value = serde_json::from_str(&de.to_json()).unwrap();
        assert_eq!(json["diskerr"]["states"], 7);
        de.diskerr.as_mut().unwrap().failed_calls.clear();
        assert!(!de.passed(false));
        let line = report.summary_line();
        assert!(!line.contains("disk-error state(s)"), "{line}");
        assert!(line.ends_with(", disk-error not run)"), "{line}");
    }

    /// A fault section that judged `states` states, all agreeing.
    pub(crate) fn faults(states: u64) -> FaultSection {
        FaultSection {
            states,
            writer_runs: 2,
            per_version: [("v2.0.0".to_string(), states)].into_iter().collect(),
            verdicts: [("discard/store agree".to_string(), states)]
                .into_iter()
                .collect(),
            ..FaultSection::default()
        }
    }
}
