//! The page's view model: what each section shows, computed from the report, and the askama
//! template that prints it (escaping every value).

use std::collections::BTreeMap;
use std::path::Path;

use askama::Template;
use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use mmkv_sys::versions::Tag;

use crate::differential::failures::replay_command;
use crate::html::coverage::CoverageView;
use crate::html::grades::Grades;
use crate::html::speed::{Chart, Speed};
use crate::html::Inputs;
use crate::judge::exceptions::{versions_text, TABLE};
use crate::report::cell::CellResult;
use crate::report::{require_all, Cell, Report, Row, Source};
use crate::vocab::kind::StoreKind;

/// The stylesheet, inlined.
const CSS: &str = include_str!("../../templates/dashboard.css");
/// The script (filtering only), inlined.
const JS: &str = include_str!("../../templates/dashboard.js");

/// The page.
#[derive(Template)]
#[template(path = "dashboard.html")]
pub struct Page<'a> {
    /// `PASS` or `FAIL`.
    pub verdict: &'static str,
    /// The report's one summary line.
    pub summary: String,
    /// When the page was written (UTC).
    pub generated: String,
    /// The kind columns.
    pub kinds: Vec<&'static str>,
    /// Matrix rows.
    pub rows: Vec<MatrixRow>,
    /// Every failing cell or row, for the failures list.
    pub failing: Vec<FailingEntry>,
    /// The versions section.
    pub versions: Vec<VersionView>,
    /// The accepted-differences section (differential runs, live writers and fault suite).
    pub exceptions: Vec<ExceptionView>,
    /// The faults section.
    pub faults: Option<FaultsView>,
    /// The power-loss section (the same table: crash states per version and verdict).
    pub powerloss: Option<FaultsView>,
    /// The disk-error section (the same table: states per version and verdict).
    pub diskerr: Option<FaultsView>,
    /// The readers section.
    pub grades: Option<&'a Grades>,
    /// Its class columns.
    pub classes: [&'static str; 3],
    /// The speed section.
    pub speed: Option<&'a Speed>,
    /// Its chart.
    pub chart: Option<Chart>,
    /// Why there is no speed section.
    pub speed_missing: String,
    /// The coverage section.
    pub coverage: Option<&'a CoverageView>,
    /// Stylesheet.
    pub css: &'static str,
    /// Script.
    pub js: &'static str,
    /// The Content-Security-Policy: nothing from the network, only this page's own style and
    /// script (by hash), so even an unescaped handler could not run.
    pub csp: String,
}

/// One matrix row.
pub struct MatrixRow {
    /// The tag.
    pub tag: String,
    /// Anchor of its detail.
    pub id: String,
    /// `live`, `golden`, `unbuilt`.
    pub source: &'static str,
    /// True when a cell failed or the row has failures.
    pub failing: bool,
    /// One per kind column.
    pub cells: Vec<CellView>,
    /// Row detail.
    pub detail: RowDetail,
}

/// One matrix cell.
pub struct CellView {
    /// The kind id.
    pub kind: &'static str,
    /// `pass`, `FAIL`, ...
    pub text: &'static str,
    /// CSS class of the verdict.
    pub class: &'static str,
    /// Anchor of its detail (empty for n/a).
    pub id: String,
    /// Its detail (none for n/a).
    pub detail: Option<CellDetail>,
}

/// What a cell ran and found.
pub struct CellDetail {
    /// Counters as (name, value).
    pub counts: Vec<(&'static str, u64)>,
    /// Failures with their replay commands.
    pub failures: Vec<FailureView>,
    /// Accepted upstream differences seen.
    pub notes: Vec<String>,
    /// Where the verdict comes from.
    pub how: String,
}

/// What a row ran.
pub struct RowDetail {
    /// Counters as (name, value).
    pub counts: Vec<(&'static str, u64)>,
    /// The live-writer line.
    pub live_writer: Option<String>,
    /// Why the version is unbuilt.
    pub unbuilt: Option<String>,
    /// Every failure of the row.
    pub failures: Vec<FailureView>,
    /// Notes.
    pub notes: Vec<String>,
}

/// One failure message, with its saved folder and replay command when it has one.
pub struct FailureView {
    /// The message.
    pub text: String,
    /// The failure folder.
    pub folder: Option<String>,
    /// The one-line replay command.
    pub replay: Option<String>,
}

/// A failing cell (or row) in the failures list.
pub struct FailingEntry {
    /// `v2.4.2 plain`.
    pub what: String,
    /// Anchor of its detail.
    pub id: String,
    /// The first replay command, if any.
    pub replay: Option<String>,
}

/// One version.
pub struct VersionView {
    /// The tag.
    pub tag: String,
    /// Its features (versions.yaml).
    pub features: Vec<String>,
    /// git tree hash of its Core/.
    pub git_tree: Option<String>,
    /// npm package@version.
    pub npm: Option<String>,
    /// Built into mmkv-sys on the machine that wrote the page: its origin.
    pub built: Option<String>,
    /// Its row's source in this report (`not in this run` when absent).
    pub in_run: &'static str,
    /// Note of versions.yaml.
    pub note: Option<String>,
}

/// One row of the exceptions table.
pub struct ExceptionView {
    /// The difference's code (`zero-fill`).
    pub code: &'static str,
    /// The difference.
    pub what: &'static str,
    /// Upstream reference.
    pub reference: &'static str,
    /// `v1.3.3–v1.3.7`.
    pub versions: String,
    /// Tags of this report it covers.
    pub covered_tags: Vec<String>,
    /// Configurations.
    pub configs: &'static str,
    /// Why the reader is right.
    pub why: &'static str,
    /// Uses in this run.
    pub uses: u64,
}

/// A suite's verdict counts (the fault, power-loss and disk-error suites).
pub struct FaultsView {
    /// Passed.
    pub passed: bool,
    /// Summary text.
    pub line: String,
    /// Verdict columns.
    pub verdicts: Vec<String>,
    /// Per version: tag, states, count per verdict column.
    pub per_version: Vec<(String, u64, Vec<u64>)>,
    /// Totals per verdict column.
    pub totals: Vec<u64>,
    /// Disagreements.
    pub disagreements: Vec<String>,
    /// Upstream findings.
    pub upstream: Vec<String>,
}

/// The [`FaultsView`] of a section whose verdicts per version are keyed `TAG VERDICT` (the
/// power-loss and disk-error sections, which name those fields alike).
macro_rules! keyed_view {
    ($s:expr) => {{
        let s = $s;
        FaultsView::new(
            s.passed(),
            s.phrase(),
            &s.per_version,
            &s.verdicts,
            |tag, v| s.per_version_verdicts.get(&format!("{tag} {v}")).copied(),
        )
        .with_lines(&s.disagreements, &s.upstream)
    }};
}

impl FaultsView {
    /// The table of a suite's verdict counts: states per version, and per version the count
    /// of each verdict (`per`: (tag, verdict) -> count).
    fn new(
        passed: bool,
        line: String,
        per_version: &BTreeMap<String, u64>,
        verdicts: &BTreeMap<String, u64>,
        per: impl Fn(&str, &str) -> Option<u64>,
    ) -> FaultsView {
        let columns: Vec<String> = verdicts.keys().cloned().collect();
        FaultsView {
            passed,
            line,
            per_version: per_version
                .iter()
                .map(|(tag, states)| {
                    let counts = columns.iter().map(|v| per(tag, v).unwrap_or(0)).collect();
                    (tag.clone(), *states, counts)
                })
                .collect(),
            totals: verdicts.values().copied().collect(),
            verdicts: columns,
            disagreements: Vec::new(),
            upstream: Vec::new(),
        }
    }

    fn with_lines(mut self, disagreements: &[String], upstream: &[String]) -> FaultsView {
        self.disagreements = disagreements.to_vec();
        self.upstream = upstream.to_vec();
        self
    }
}

/// An HTML id from arbitrary text: letters, digits, `-`, `_` and `.` kept, the rest `_`.
fn anchor(parts: &[&str]) -> String {
    parts
        .join("-")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Splits the replay command (and so the failure folder) out of a failure message.
fn failure_view(text: &str) -> FailureView {
    let prefix = replay_command(Path::new(""));
    let replay = text
        .lines()
        .find_map(|l| l.find(&prefix).map(|i| l[i..].trim().to_string()));
    let folder = replay
        .as_deref()
        .and_then(|r| r.strip_prefix(&prefix))
        .map(|f| f.trim().to_string())
        .filter(|f| !f.is_empty());
    FailureView {
        text: text.to_string(),
        folder,
        replay,
    }
}

fn verdict_class(c: Cell) -> &'static str {
    match c {
        Cell::Pass => "pass",
        Cell::Fail => "fail",
        Cell::NotApplicable => "na",
        Cell::Golden => "golden",
        Cell::Unbuilt => "unbuilt",
    }
}

fn source_text(s: Source) -> &'static str {
    match s {
        Source::Live => "live",
        Source::Golden => "golden",
        Source::Unbuilt => "unbuilt",
    }
}

/// The corpus store ids counted in a report column.
fn corpus_ids(kind: &str) -> Vec<&str> {
    if kind == "plain" {
        vec!["plain", "empty", "cleared", "trimmed"]
    } else {
        vec![kind]
    }
}

fn cell_counts(r: &CellResult) -> Vec<(&'static str, u64)> {
    vec![
        ("workloads", r.workloads),
        ("operations", r.stats.ops),
        ("keys compared", r.stats.keys_compared),
        ("reads compared", r.stats.reads_compared),
        (
            "long-lived reader reloads, partial",
            r.stats.long_lived.partial,
        ),
        ("long-lived reader reloads, full", r.stats.long_lived.full),
    ]
}

fn cell_detail(row: &Row, kind: &str, cell: Cell) -> CellDetail {
    let result = row.cells.get(kind);
    let mut failures: Vec<FailureView> = result
        .map(|r| r.failures.iter().map(|f| failure_view(f)).collect())
        .unwrap_or_default();
    let corpus: Vec<String> = corpus_ids(kind)
        .iter()
        .map(|id| format!("corpus store {id}:"))
        .collect();
    failures.extend(
        row.failures
            .iter()
            .filter(|f| corpus.iter().any(|c| f.contains(c.as_str())))
            .map(|f| failure_view(f)),
    );
    if cell == Cell::Fail && failures.is_empty() {
        failures = row.failures.iter().map(|f| failure_view(f)).collect();
    }
    let how = match (cell, result) {
        (Cell::Golden, _) => "checked from the golden corpus only".to_string(),
        (Cell::Unbuilt, _) => format!("not run: the official library of {} is unbuilt", row.tag),
        (_, Some(_)) => {
            "live: the official library wrote the workloads, the reader read them".to_string()
        }
        (_, None) => "live (no cell detail in this report)".to_string(),
    };
    CellDetail {
        counts: result.map(cell_counts).unwrap_or_default(),
        failures,
        notes: result.map(|r| r.notes.clone()).unwrap_or_default(),
        how,
    }
}

impl<'a> Page<'a> {
    /// The page of `report`.
    pub fn new(report: &Report, inputs: &'a Inputs) -> Page<'a> {
        let kinds: Vec<&'static str> = StoreKind::ALL.iter().map(|k| k.id()).collect();
        let mut failing = Vec::new();
        let rows: Vec<MatrixRow> = report
            .versions
            .iter()
            .map(|row| {
                let cells: Vec<CellView> = kinds
                    .iter()
                    .map(|&kind| {
                        let c = row.kinds.get(kind).copied().unwrap_or(Cell::NotApplicable);
                        let id = anchor(&["c", &row.label(), kind]);
                        let detail = (c != Cell::NotApplicable).then(|| cell_detail(row, kind, c));
                        if c == Cell::Fail {
                            failing.push(FailingEntry {
                                what: format!("{} {kind}", row.label()),
                                id: id.clone(),
                                replay: detail
                                    .as_ref()
                                    .and_then(|d| d.failures.iter().find_map(|f| f.replay.clone())),
                            });
                        }
                        CellView {
                            kind,
                            text: c.text(),
                            class: verdict_class(c),
                            id,
                            detail,
                        }
                    })
                    .collect();
                let id = anchor(&["r", &row.label()]);
                let failures: Vec<FailureView> =
                    row.failures.iter().map(|f| failure_view(f)).collect();
                let cell_failed = cells.iter().any(|c| c.text == Cell::Fail.text());
                if !cell_failed && !failures.is_empty() {
                    failing.push(FailingEntry {
                        what: format!("{} (row)", row.label()),
                        id: id.clone(),
                        replay: failures.iter().find_map(|f| f.replay.clone()),
                    });
                }
                let t = &row.ran;
                MatrixRow {
                    tag: row.label(),
                    id,
                    source: source_text(row.source),
                    failing: cell_failed || !failures.is_empty(),
                    cells,
                    detail: RowDetail {
                        counts: vec![
                            ("workloads", t.workloads),
                            ("operations", t.ops),
                            ("keys compared", t.keys_compared),
                            ("reads compared", t.reads_compared),
                            ("long-lived reader reloads, partial", t.partial_reloads),
                            ("long-lived reader reloads, full", t.full_reloads),
                            ("corpus stores checked", t.corpus_stores),
                        ],
                        live_writer: row.live_writer.clone(),
                        unbuilt: row.unbuilt.clone(),
                        failures,
                        notes: row.notes.clone(),
                    },
                }
            })
            .collect();
        let grades = inputs.grades.as_ref();
        let css_hash = hash(CSS);
        let js_hash = hash(JS);
        Page {
            verdict: if report.passed(require_all()) {
                "PASS"
            } else {
                "FAIL"
            },
            summary: report.summary_line(),
            generated: benches::table::utc_datetime(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            ),
            kinds,
            rows,
            failing,
            versions: versions(report),
            exceptions: exceptions(report),
            faults: report.faults.as_ref().map(|f| {
                FaultsView::new(
                    f.passed(),
                    f.phrase(),
                    &f.per_version,
                    &f.verdicts,
                    |tag, v| {
                        f.verdicts_per_version
                            .get(tag)
                            .and_then(|p| p.get(v))
                            .copied()
                    },
                )
                .with_lines(&f.disagreements, &f.upstream)
            }),
            powerloss: report.powerloss.as_ref().map(|p| keyed_view!(p)),
            diskerr: report.diskerr.as_ref().map(|d| keyed_view!(d)),
            grades,
            classes: crate::html::grades::CLASSES,
            speed: inputs.speed.as_ref(),
            chart: inputs.speed.as_ref().map(Speed::chart),
            speed_missing: inputs.speed_missing.clone().unwrap_or_default(),
            coverage: inputs.coverage.as_ref(),
            css: CSS,
            js: JS,
            csp: format!(
                "default-src 'none'; style-src '{css_hash}'; script-src '{js_hash}'; \
                 img-src data:; base-uri 'none'; form-action 'none'"
            ),
        }
    }
}

/// `sha256-<base64>` of an inline element's text, for the CSP.
fn hash(text: &str) -> String {
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
    )
}

fn versions(report: &Report) -> Vec<VersionView> {
    let file = mmkv_sys::versions::embedded();
    let built = mmkv_sys::built();
    let in_run = |tag: &str| {
        report
            .versions
            .iter()
            .find(|r| r.tag == tag)
            .map_or("not in this run", |r| source_text(r.source))
    };
    let mut out: Vec<VersionView> = file
        .versions
        .iter()
        .map(|v| {
            let tag = v.tag.to_string();
            VersionView {
                features: v.features.iter().map(|f| f.to_string()).collect(),
                git_tree: v.source.git.as_ref().map(|g| g.core_tree.clone()),
                npm: v
                    .source
                    .npm
                    .as_ref()
                    .map(|n| format!("{}@{}", n.package, n.version)),
                built: built
                    .iter()
                    .find(|b| b.tag == tag)
                    .map(|b| b.origin.to_string()),
                in_run: in_run(&tag),
                note: v.note.clone(),
                tag,
            }
        })
        .collect();
    for r in &report.versions {
        if !out.iter().any(|v| v.tag == r.tag) {
            out.push(VersionView {
                tag: r.tag.clone(),
                features: Vec::new(),
                git_tree: None,
                npm: None,
                built: None,
                in_run: source_text(r.source),
                note: Some("not in versions.yaml".to_string()),
            });
        }
    }
    out
}

fn exceptions(report: &Report) -> Vec<ExceptionView> {
    TABLE
        .iter()
        .map(|e| ExceptionView {
            code: e.difference.code(),
            what: e.difference.describe(),
            reference: e.reference,
            versions: versions_text(e),
            covered_tags: report
                .versions
                .iter()
                .filter(|r| Tag::parse(&r.tag).is_some_and(|v| e.covers_version(v)))
                .fold(Vec::new(), |mut tags, r| {
                    // one entry per tag, whatever its page sizes
                    if !tags.contains(&r.tag) {
                        tags.push(r.tag.clone());
                    }
                    tags
                }),
            configs: e.configs.text(),
            why: e.why,
            uses: report
                .exceptions_used
                .get(e.difference.code())
                .copied()
                .unwrap_or(0),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_command_and_folder_are_found() {
        let f = failure_view(
            "v2.4.2 plain (seed 1): minimal workload has 3 op(s): key differs\n  reproduce: cargo run -p conformance -- replay /t/conformance-failures/v2.4.2-plain-0",
        );
        assert_eq!(
            f.replay.as_deref(),
            Some("cargo run -p conformance -- replay /t/conformance-failures/v2.4.2-plain-0")
        );
        assert_eq!(
            f.folder.as_deref(),
            Some("/t/conformance-failures/v2.4.2-plain-0")
        );
        let none = failure_view("v2.4.2: corpus: no manifest");
        assert!(none.replay.is_none() && none.folder.is_none());
    }

    #[test]
    fn anchors_are_plain() {
        assert_eq!(
            anchor(&["c", "v2.4.2", "aes128-short-key"]),
            "c-v2.4.2-aes128-short-key"
        );
        assert_eq!(
            anchor(&["c", "<img src=x>", "plain"]),
            "c-_img_src_x_-plain"
        );
    }
}
