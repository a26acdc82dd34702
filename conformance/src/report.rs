//! The conformance report: one row per version tag, one column per store kind.
//!
//! Rows are the tags of `versions.yaml` and of the corpus. A tag built into `mmkv-sys` is
//! `live`: each supported kind runs the differential property with fixed seeds, and the
//! corpus stores of that tag are checked too. Any other tag is `golden`: its corpus stores are
//! checked. The corpus stores `empty`, `cleared` and `trimmed` (plain configuration) count
//! towards the `plain` column.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::cell::{CellResult, CellSpec};
use crate::differential::workload::GenConfig;
use crate::fault::section::FaultSection;
use crate::golden::{check_corpus_dir, corpus_tags, CorpusCheck};
use crate::kind::{parse_tag, Features, StoreKind};
use crate::official::OfficialLib;
use crate::sys::SysLib;
use crate::view::ReaderFactory;

/// One cell of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cell {
    /// Live property runs (and the tag's corpus store, if any) passed.
    #[serde(rename = "pass")]
    Pass,
    /// Something failed.
    #[serde(rename = "FAIL")]
    Fail,
    /// The version has no such configuration.
    #[serde(rename = "n/a")]
    NotApplicable,
    /// Checked from the golden corpus only, and passed.
    #[serde(rename = "golden")]
    Golden,
    /// Should have run live, but mmkv-sys left the version unbuilt (sources unreachable, see
    /// [`crate::shards`]).
    #[serde(rename = "unbuilt")]
    Unbuilt,
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

/// Where a row's verdicts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The official library of that version was run (plus its corpus).
    Live,
    /// Golden corpus only.
    Golden,
    /// The official library should have run but mmkv-sys could not fetch its sources.
    Unbuilt,
}

/// One row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// The tag.
    pub tag: String,
    /// Live or golden.
    pub source: Source,
    /// Verdict per store kind id (serialized in report column order).
    #[serde(serialize_with = "kinds_in_column_order")]
    pub kinds: BTreeMap<String, Cell>,
    /// What ran in this row's live cells (workloads, operations, keys compared ...).
    pub ran: RowCounts,
    /// Failure details (not part of the JSON).
    #[serde(skip)]
    pub failures: Vec<String>,
    /// Upstream findings that do not fail the row: official in-memory divergences
    /// (see [`crate::run`]). Not part of the JSON.
    #[serde(skip)]
    pub notes: Vec<String>,
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

impl RowCounts {
    fn add_run(&mut self, workloads: u64, s: &crate::differential::stats::RunStats) {
        self.workloads += workloads;
        self.ops += s.ops;
        self.keys_compared += s.keys_compared;
        self.reads_compared += s.reads_compared;
        self.partial_reloads += s.long_lived.partial;
        self.full_reloads += s.long_lived.full;
    }

    fn add(&mut self, o: &RowCounts) {
        self.workloads += o.workloads;
        self.ops += o.ops;
        self.keys_compared += o.keys_compared;
        self.reads_compared += o.reads_compared;
        self.partial_reloads += o.partial_reloads;
        self.full_reloads += o.full_reloads;
        self.corpus_stores += o.corpus_stores;
    }
}

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
}

impl Report {
    /// True when no cell failed, something ran, and, when any version ran live, the fault
    /// suite judged at least one state and none disagreed.
    pub fn passed(&self) -> bool {
        self.ran_anything()
            && self.faults_passed()
            && self
                .versions
                .iter()
                .all(|r| r.kinds.values().all(|c| *c != Cell::Fail) && r.failures.is_empty())
    }

    /// The fault suite's verdict: required (and then non-empty and without disagreement)
    /// as soon as one row is live.
    pub fn faults_passed(&self) -> bool {
        match &self.faults {
            Some(f) => f.passed(),
            None => !self.versions.iter().any(|r| r.source == Source::Live),
        }
    }

    /// `{"versions": [{"tag", "source", "kinds": {...}}]}`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_string())
    }

    fn header() -> Vec<String> {
        let mut h = vec!["tag".to_string(), "source".to_string()];
        h.extend(StoreKind::ALL.iter().map(|k| k.id().to_string()));
        h.extend(["workloads", "ops", "keys compared"].map(String::from));
        h
    }

    fn cells(row: &Row) -> Vec<String> {
        let mut c = vec![
            row.tag.clone(),
            match row.source {
                Source::Live => "live".to_string(),
                Source::Golden => "golden".to_string(),
                Source::Unbuilt => "unbuilt".to_string(),
            },
        ];
        c.extend(StoreKind::ALL.iter().map(|k| {
            row.kinds
                .get(k.id())
                .copied()
                .unwrap_or(Cell::NotApplicable)
                .text()
                .to_string()
        }));
        c.extend([
            row.ran.workloads.to_string(),
            row.ran.ops.to_string(),
            row.ran.keys_compared.to_string(),
        ]);
        c
    }

    /// Every row's counts, summed.
    pub fn totals(&self) -> RowCounts {
        let mut t = RowCounts::default();
        for r in &self.versions {
            t.add(&r.ran);
        }
        t
    }

    /// Cells per verdict: (pass, FAIL, golden, n/a).
    pub fn cell_counts(&self) -> (usize, usize, usize, usize) {
        let mut c = (0, 0, 0, 0);
        for r in &self.versions {
            for cell in r.kinds.values() {
                match cell {
                    Cell::Pass => c.0 += 1,
                    Cell::Fail => c.1 += 1,
                    Cell::Golden => c.2 += 1,
                    Cell::NotApplicable => c.3 += 1,
                    // counted by the shards summary line (`unbuilt` cells)
                    Cell::Unbuilt => {}
                }
            }
        }
        c
    }

    /// True when something was checked at all (a live workload or a corpus store).
    pub fn ran_anything(&self) -> bool {
        let t = self.totals();
        t.workloads > 0 || t.corpus_stores > 0
    }

    /// The one summary line: verdict and what ran.
    pub fn summary_line(&self) -> String {
        let (pass, fail, golden, na) = self.cell_counts();
        let live = self
            .versions
            .iter()
            .filter(|r| r.source == Source::Live)
            .count();
        let t = self.totals();
        let failing_rows = self
            .versions
            .iter()
            .filter(|r| !r.failures.is_empty())
            .count();
        format!(
            "conformance report: {} — {} tag(s) ({live} live, {} golden only); cells: {pass} pass, {fail} FAIL, \
             {golden} golden, {na} n/a; {} workload(s), {} operation(s), {} key(s) compared ({} reads), \
             long-lived reader reloads {} partial / {} full; {} corpus store(s) checked; {}{}",
            if self.passed() { "PASS" } else { "FAIL" },
            self.versions.len(),
            self.versions.len() - live,
            t.workloads,
            t.ops,
            t.keys_compared,
            t.reads_compared,
            t.partial_reloads,
            t.full_reloads,
            t.corpus_stores,
            match &self.faults {
                Some(f) => f.phrase(),
                None => "fault suite not run".to_string(),
            },
            if failing_rows > 0 {
                format!("; {failing_rows} row(s) with failures")
            } else {
                String::new()
            }
        )
    }

    /// A plain-text table.
    pub fn to_text(&self) -> String {
        let mut rows = vec![Report::header()];
        rows.extend(self.versions.iter().map(Report::cells));
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for r in &rows {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            let _ = writeln!(out, "{}", line.join("  ").trim_end());
        }
        if let Some(f) = &self.faults {
            out.push('\n');
            out.push_str(&f.to_text());
        }
        out
    }

    /// A Markdown table (for the README).
    pub fn to_markdown(&self) -> String {
        let header = Report::header();
        let mut out = String::new();
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
        for row in &self.versions {
            let _ = writeln!(out, "| {} |", Report::cells(row).join(" | "));
        }
        out
    }
}

/// How to run the report.
#[derive(Debug, Clone)]
pub struct ReportConfig {
    /// Corpus root.
    pub corpus: PathBuf,
    /// Property cases per (version, kind, seed).
    pub cases: u32,
    /// Fixed seeds.
    pub seeds: Vec<u64>,
    /// Generator knobs.
    pub gen: GenConfig,
    /// Only these tags (empty = all).
    pub only: Vec<String>,
    /// Keys of the "many keys" workload each live row runs (0 = none).
    pub many_keys: usize,
}

/// A row to run.
#[derive(Debug, Clone)]
pub struct PlannedRow {
    /// The tag.
    pub tag: String,
    /// Built into mmkv-sys.
    pub live: bool,
    /// Has a corpus folder.
    pub corpus: bool,
    /// Features (versions.yaml, else from the tag).
    pub features: Features,
}

impl PlannedRow {
    /// Units of progress this row takes (one per applicable kind).
    pub fn work(&self) -> u64 {
        StoreKind::ALL
            .iter()
            .filter(|k| k.supported_by(&self.features))
            .count() as u64
    }
}

/// The rows: tags of `versions.yaml` and of the corpus, oldest first.
pub fn plan(cfg: &ReportConfig) -> Vec<PlannedRow> {
    let embedded = mmkv_sys::versions::embedded();
    let corpus: Vec<String> = corpus_tags(&cfg.corpus).unwrap_or_default();
    let built = mmkv_sys::built_versions();
    let mut tags: Vec<String> = embedded
        .versions
        .iter()
        .map(|v| v.tag.to_string())
        .collect();
    for t in corpus.iter().chain(
        built
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .iter(),
    ) {
        if !tags.contains(t) {
            tags.push(t.clone());
        }
    }
    if !cfg.only.is_empty() {
        tags.retain(|t| cfg.only.contains(t));
    }
    tags.sort_by_key(|t| (parse_tag(t), t.clone()));
    tags.into_iter()
        .map(|tag| {
            let features = match embedded.get(&tag) {
                Some(e) if !e.features.is_empty() => Features::from_set(e.features),
                _ => Features::from_tag(&tag).unwrap_or_default(),
            };
            PlannedRow {
                live: built.contains(&tag.as_str()),
                corpus: corpus.contains(&tag),
                features,
                tag,
            }
        })
        .collect()
}

/// Corpus verdicts of one tag, per report column.
fn corpus_cells(check: &CorpusCheck) -> BTreeMap<String, (bool, Vec<String>)> {
    let mut out: BTreeMap<String, (bool, Vec<String>)> = BTreeMap::new();
    for s in &check.stores {
        let column = match s.id.as_str() {
            "empty" | "cleared" | "trimmed" => "plain".to_string(),
            other => other.to_string(),
        };
        let e = out.entry(column).or_insert((true, Vec::new()));
        if !s.passed() {
            e.0 = false;
            e.1.push(format!(
                "{}: corpus store {}: {}",
                check.tag,
                s.id,
                s.mismatches
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    out
}

/// The kind a row's "many keys" workload runs in: the richest the version supports.
pub fn many_keys_kind(features: &Features) -> StoreKind {
    [
        StoreKind::ExpireAes256,
        StoreKind::ExpireAes128,
        StoreKind::Aes128,
    ]
    .into_iter()
    .find(|k| k.supported_by(features))
    .unwrap_or(StoreKind::Aes128)
}

/// Runs one planned row. `cell` runs one live cell (in a child process in the report, see
/// [`crate::cell`]); `tick` is called once per finished cell with a message.
pub fn run_row(
    cfg: &ReportConfig,
    row: &PlannedRow,
    reader: &dyn ReaderFactory,
    cell: &mut dyn FnMut(&CellSpec) -> CellResult,
    tick: &mut dyn FnMut(&str),
) -> Row {
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    let mut ran = RowCounts::default();
    let corpus = if row.corpus {
        match check_corpus_dir(&cfg.corpus.join(&row.tag), reader) {
            Ok(c) => {
                ran.corpus_stores += c.stores.len() as u64;
                corpus_cells(&c)
            }
            Err(e) => {
                failures.push(format!("{}: corpus: {e}", row.tag));
                BTreeMap::new()
            }
        }
    } else {
        BTreeMap::new()
    };
    let lib_ok = if row.live {
        match SysLib::load(&row.tag) {
            Ok(l) => Some(l.features()),
            Err(e) => {
                failures.push(format!("{}: {e}", row.tag));
                None
            }
        }
    } else {
        None
    };
    let many_kind = lib_ok.as_ref().map(many_keys_kind);
    let mut kinds = BTreeMap::new();
    for kind in StoreKind::ALL {
        let golden = corpus.get(kind.id());
        let supported = lib_ok
            .as_ref()
            .map_or(kind.supported_by(&row.features), |f| kind.supported_by(f));
        let cell = match (&lib_ok, golden) {
            (Some(_), _) if supported => {
                tick(&format!("{} {}", row.tag, kind.id()));
                let mut ok = golden_ok(golden, &mut failures);
                let spec = CellSpec {
                    tag: row.tag.clone(),
                    kind,
                    cases: cfg.cases,
                    seeds: cfg.seeds.clone(),
                    many_keys: if many_kind == Some(kind) {
                        cfg.many_keys
                    } else {
                        0
                    },
                };
                let result = cell(&spec);
                ran.add_run(result.workloads, &result.stats);
                notes.extend(result.notes);
                if !result.passed {
                    ok = false;
                    failures.extend(result.failures);
                }
                if ok {
                    Cell::Pass
                } else {
                    Cell::Fail
                }
            }
            (_, Some(g)) => {
                if supported {
                    tick(&format!("{} {}", row.tag, kind.id()));
                }
                if g.0 {
                    Cell::Golden
                } else {
                    failures.extend(g.1.iter().cloned());
                    Cell::Fail
                }
            }
            (None, None) if supported && row.live => {
                tick(&format!("{} {}", row.tag, kind.id()));
                Cell::Fail
            }
            _ => {
                if supported {
                    tick(&format!("{} {}", row.tag, kind.id()));
                }
                Cell::NotApplicable
            }
        };
        kinds.insert(kind.id().to_string(), cell);
    }
    Row {
        tag: row.tag.clone(),
        source: if row.live {
            Source::Live
        } else {
            Source::Golden
        },
        kinds,
        ran,
        failures,
        notes,
        unbuilt: None,
    }
}

/// True when a kind has no corpus store or its corpus store passed (failures are collected).
fn golden_ok(golden: Option<&(bool, Vec<String>)>, failures: &mut Vec<String>) -> bool {
    match golden {
        None | Some((true, _)) => true,
        Some((false, why)) => {
            failures.extend(why.iter().cloned());
            false
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A row with the given cells that ran a few workloads (shared by the shards tests).
    pub(crate) fn row(tag: &str, source: Source, cells: &[(StoreKind, Cell)]) -> Row {
        Row {
            tag: tag.to_string(),
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
        };
        assert!(report.passed());
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
        assert!(!failing.passed());
        assert!(failing.to_text().contains("FAIL"));
        assert!(failing.summary_line().contains("1 FAIL"));

        let mut vacuous = report.clone();
        for r in &mut vacuous.versions {
            r.ran = RowCounts::default();
        }
        assert!(
            !vacuous.passed(),
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
        assert!(!none.passed(), "live rows without the fault suite");
        let mut zero = report.clone();
        zero.faults = Some(faults(0));
        assert!(!zero.passed(), "a fault suite that judged nothing");
        let mut bad = report.clone();
        bad.faults
            .as_mut()
            .unwrap()
            .disagreements
            .push("#1 v2.4.2 plain".into());
        assert!(!bad.passed());
        assert!(bad.summary_line().starts_with("conformance report: FAIL"));
        let golden_only = Report {
            versions: vec![report.versions[1].clone()],
            faults: None,
        };
        assert!(golden_only.passed(), "no live version: nothing to damage");
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
