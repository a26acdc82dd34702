//! Which rows the report runs (tags of `versions.yaml`, of the corpus and of the built
//! versions), how one row runs (its corpus stores and live cells), and the rows of versions
//! mmkv-sys left unbuilt.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mmkv_sys::versions::Tag;

use crate::corpus::golden::{check_corpus_dir, corpus_tags, CorpusCheck};
use crate::differential::workload::GenConfig;
use crate::report::cell::{CellResult, CellSpec};
use crate::report::digest::cell_digest;
use crate::report::pages::PageSizes;
use crate::report::{Cell, Report, Row, RowCounts, Source};
use crate::sides::official::OfficialLib;
use crate::sides::sys::SysLib;
use crate::sides::view::ReaderFactory;
use crate::vocab::kind::{Features, StoreKind};

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
    /// The page sizes every live cell runs under (the first also checks the corpus).
    pub page_sizes: PageSizes,
    /// Versions whose expiring cells run on the real clock (the others: on the test clock), see
    /// [`crate::vocab::test_clock::real_clock_tags`].
    pub real_clock_tags: Vec<String>,
}

/// A row to run.
#[derive(Debug, Clone)]
pub struct PlannedRow {
    /// The tag.
    pub tag: String,
    /// The official page size of its cells (bytes).
    pub page_size: u64,
    /// Property cases per (kind, seed) of its cells.
    pub cases: u32,
    /// The primary page size's row (the corpus, the live writer).
    pub primary: bool,
    /// Built into mmkv-sys.
    pub live: bool,
    /// Has a corpus folder (checked in the primary row).
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

/// The rows: tags of `versions.yaml` and of the corpus, oldest first, each at the primary page
/// size; then, per further page size, the built tags again (a version without a library has
/// no cell to run at another size).
pub fn plan(cfg: &ReportConfig) -> Vec<PlannedRow> {
    let embedded = mmkv_sys::versions::embedded();
    let corpus: Vec<String> = corpus_tags(&cfg.corpus).unwrap_or_default();
    let built = mmkv_sys::built_versions();
    let mut tags: Vec<String> = embedded
        .versions
        .iter()
        .map(|v| v.tag.to_string())
        .collect();
    for t in corpus
        .iter()
        .cloned()
        .chain(built.iter().map(|s| s.to_string()))
    {
        if !tags.contains(&t) {
            tags.push(t);
        }
    }
    if !cfg.only.is_empty() {
        tags.retain(|t| cfg.only.contains(t));
    }
    tags.sort_by_key(|t| (Tag::parse(t), t.clone()));
    let mut rows = Vec::new();
    for (n, run) in cfg.page_sizes.0.iter().enumerate() {
        let primary = n == 0;
        for tag in &tags {
            let live = built.contains(&tag.as_str());
            if !primary && !live {
                continue;
            }
            let features = match embedded.get(tag) {
                Some(e) if !e.features.is_empty() => Features::from_set(e.features),
                _ => Features::from_tag(tag).unwrap_or_default(),
            };
            rows.push(PlannedRow {
                page_size: run.size,
                cases: run.cases.unwrap_or(cfg.cases),
                primary,
                live,
                corpus: primary && corpus.contains(tag),
                features,
                tag: tag.clone(),
            });
        }
    }
    rows
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
            let first = &s.mismatches[..s.mismatches.len().min(3)];
            let (tag, id) = (&check.tag, &s.id);
            e.1.push(format!("{tag}: corpus store {id}: {}", first.join("; ")));
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
/// [`crate::report::cell`]) at the row's page size; `tick` is called once per finished cell
/// with a message.
pub fn run_row(
    cfg: &ReportConfig,
    row: &PlannedRow,
    reader: &dyn ReaderFactory,
    cell: &mut dyn FnMut(&CellSpec, u64) -> CellResult,
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
    let mut details = BTreeMap::new();
    for kind in StoreKind::ALL {
        let golden = corpus.get(kind.id());
        let supported = lib_ok
            .as_ref()
            .map_or(kind.supported_by(&row.features), |f| kind.supported_by(f));
        // Every cell the version has is a unit of progress, whatever it runs.
        if supported {
            tick(&format!("{} {}", row.tag, kind.id()));
        }
        let cell = match (&lib_ok, golden) {
            (Some(features), _) if supported => {
                let mut ok = golden_ok(golden, &mut failures);
                let spec = CellSpec {
                    tag: row.tag.clone(),
                    kind,
                    cases: row.cases,
                    seeds: cfg.seeds.clone(),
                    many_keys: if many_kind == Some(kind) {
                        cfg.many_keys
                    } else {
                        0
                    },
                    real_clock: kind.key_expire() && cfg.real_clock_tags.contains(&row.tag),
                    gen: Some(cfg.gen),
                };
                let mut result = cell(&spec, row.page_size);
                result.plan_digest = Some(cell_digest(&spec, *features, row.page_size));
                if let Some(ran) = result.page_size.filter(|&p| p != row.page_size) {
                    result.passed = false;
                    result.failures.push(format!(
                        "{} {kind}: the official library ran with {ran}-byte pages, not {}",
                        row.tag, row.page_size
                    ));
                }
                if row.page_size != crate::report::pages::DEFAULT_PAGE_SIZE {
                    // A saved failure replays at the page size it was found at.
                    let with_page = format!(
                        "reproduce: {}={} ",
                        mmkv_sys::page_size::PAGE_SIZE_VAR,
                        row.page_size
                    );
                    for f in &mut result.failures {
                        *f = f.replace("reproduce: ", &with_page);
                    }
                }
                ran.add_run(result.workloads, &result.stats);
                details.insert(kind.id().to_string(), result.clone());
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
                if g.0 {
                    Cell::Golden
                } else {
                    failures.extend(g.1.iter().cloned());
                    Cell::Fail
                }
            }
            (None, None) if supported && row.live => Cell::Fail,
            _ => Cell::NotApplicable,
        };
        kinds.insert(kind.id().to_string(), cell);
    }
    Row {
        tag: row.tag.clone(),
        page_size: row.page_size,
        source: if row.live {
            Source::Live
        } else {
            Source::Golden
        },
        kinds,
        ran,
        failures,
        notes,
        cells: details,
        live_writer: None,
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

/// Marks the rows of `unbuilt` tags (tag, reason): source `unbuilt`, every cell the version
/// supports `unbuilt` (a failing corpus cell stays `FAIL`), the reason kept in the row.
pub fn mark_unbuilt(report: &mut Report, unbuilt: &[(&str, &str)]) {
    for row in &mut report.versions {
        let Some((_, reason)) = unbuilt.iter().find(|(t, _)| *t == row.tag) else {
            continue;
        };
        let features = Features::from_tag(&row.tag).unwrap_or_default();
        row.source = Source::Unbuilt;
        row.unbuilt = Some(reason.to_string());
        for kind in StoreKind::ALL {
            if kind.supported_by(&features) {
                let cell = row
                    .kinds
                    .entry(kind.id().to_string())
                    .or_insert(Cell::Unbuilt);
                if *cell != Cell::Fail {
                    *cell = Cell::Unbuilt;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::{faults, row};

    #[test]
    fn unbuilt_rows_are_marked_counted_and_fail_only_when_strict() {
        let mut report = Report {
            versions: vec![
                row(
                    "v1.2.0",
                    Source::Golden,
                    &[(StoreKind::Plain, Cell::Golden)],
                ),
                row("v2.0.0", Source::Live, &[(StoreKind::Plain, Cell::Pass)]),
            ],
            faults: Some(faults(4)),
            ..Report::default()
        };
        mark_unbuilt(&mut report, &[("v1.2.0", "offline")]);
        let r = &report.versions[0];
        assert_eq!(r.source, Source::Unbuilt);
        assert_eq!(r.unbuilt.as_deref(), Some("offline"));
        assert_eq!(r.kinds["plain"], Cell::Unbuilt);
        assert_eq!(r.kinds["multi"], Cell::Unbuilt);
        assert!(
            !r.kinds.contains_key("expire"),
            "v1.2.0 has no expiration: stays n/a"
        );
        assert_eq!(report.tally().rows("unbuilt"), 1);
        assert!(
            report
                .summary_line()
                .contains(" — 2 versions: 1 live, 0 golden, 1 unbuilt; cells: 1 pass"),
            "{}",
            report.summary_line()
        );
        assert!(report.passed(false) && !report.passed(true));
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["versions"][0]["source"], "unbuilt");
        assert_eq!(json["versions"][0]["kinds"]["plain"], "unbuilt");
        assert!(report
            .to_markdown()
            .contains("| v1.2.0 | unbuilt | unbuilt |"));
    }
}
