//! What the report says about versions mmkv-sys left unbuilt, its one-line summary, the strict
//! switch (`MMKV_REQUIRE_ALL=1`), and merging the JSON reports of CI shards into one table
//! (`report --merge shard-*.json`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::kind::{parse_tag, Features, StoreKind};
use crate::report::{Cell, Report, Row, Source};

/// The variable that makes an unbuilt version a failure (as it makes it a build error in
/// mmkv-sys).
pub const REQUIRE_ALL_VAR: &str = "MMKV_REQUIRE_ALL";

/// Whether `MMKV_REQUIRE_ALL` is set (to anything but `0`).
pub fn require_all() -> bool {
    std::env::var(REQUIRE_ALL_VAR).is_ok_and(|v| !v.trim().is_empty() && v.trim() != "0")
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

/// Counts of rows per source and of cells per verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Rows by source (`live`, `golden`, `unbuilt`).
    pub rows: BTreeMap<&'static str, usize>,
    /// Cells by verdict (`pass`, `FAIL`, `golden`, `unbuilt`, `n/a`).
    pub cells: BTreeMap<&'static str, usize>,
}

impl Summary {
    /// Counts `report`.
    pub fn of(report: &Report) -> Summary {
        let mut s = Summary::default();
        for row in &report.versions {
            let source = match row.source {
                Source::Live => "live",
                Source::Golden => "golden",
                Source::Unbuilt => "unbuilt",
            };
            *s.rows.entry(source).or_default() += 1;
            for kind in StoreKind::ALL {
                let cell = row
                    .kinds
                    .get(kind.id())
                    .copied()
                    .unwrap_or(Cell::NotApplicable);
                *s.cells.entry(cell.text()).or_default() += 1;
            }
        }
        s
    }

    /// Unbuilt rows.
    pub fn unbuilt(&self) -> usize {
        self.rows.get("unbuilt").copied().unwrap_or(0)
    }

    /// `50 versions: 48 live, 2 unbuilt; cells: 300 pass, 0 FAIL, 20 golden, 12 unbuilt, 170 n/a`.
    pub fn line(&self) -> String {
        let count = |m: &BTreeMap<&str, usize>, k: &str| m.get(k).copied().unwrap_or(0);
        let total: usize = self.rows.values().sum();
        format!(
            "{total} versions: {} live, {} golden, {} unbuilt; cells: {} pass, {} FAIL, {} golden, {} unbuilt, {} n/a",
            count(&self.rows, "live"),
            count(&self.rows, "golden"),
            count(&self.rows, "unbuilt"),
            count(&self.cells, "pass"),
            count(&self.cells, "FAIL"),
            count(&self.cells, "golden"),
            count(&self.cells, "unbuilt"),
            count(&self.cells, "n/a"),
        )
    }
}

/// Whether the report passes: no failing cell, and with `strict` no unbuilt version.
pub fn passed(report: &Report, strict: bool) -> bool {
    report.passed() && !(strict && Summary::of(report).unbuilt() > 0)
}

fn source_rank(s: Source) -> u8 {
    match s {
        Source::Golden => 0,
        Source::Unbuilt => 1,
        Source::Live => 2,
    }
}

fn cell_rank(c: Cell) -> u8 {
    match c {
        Cell::NotApplicable => 0,
        Cell::Golden => 1,
        Cell::Pass => 2,
        Cell::Unbuilt => 3,
        Cell::Fail => 4,
    }
}

/// Merges shard reports into one: per tag, the rows of the best source (live over unbuilt over
/// golden: a shard that ran the version outranks the shards that only checked its corpus), and
/// per cell the worst verdict among those rows (a `FAIL` on one architecture fails the cell).
pub fn merge(reports: Vec<Report>) -> Report {
    let mut by_tag: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    let faults =
        crate::fault::section::FaultSection::merge(reports.iter().filter_map(|r| r.faults.clone()));
    for report in reports {
        for row in report.versions {
            by_tag.entry(row.tag.clone()).or_default().push(row);
        }
    }
    let mut versions: Vec<Row> = by_tag
        .into_values()
        .filter_map(|rows| {
            let best = rows.iter().map(|r| source_rank(r.source)).max()?;
            let mut chosen = rows.into_iter().filter(|r| source_rank(r.source) == best);
            let mut merged = chosen.next()?;
            for row in chosen {
                for (kind, cell) in row.kinds {
                    let slot = merged.kinds.entry(kind).or_insert(cell);
                    if cell_rank(cell) > cell_rank(*slot) {
                        *slot = cell;
                    }
                }
                merged.failures.extend(row.failures);
                merged.notes.extend(row.notes);
                if merged.unbuilt.is_none() {
                    merged.unbuilt = row.unbuilt;
                }
            }
            Some(merged)
        })
        .collect();
    versions.sort_by_key(|r| (parse_tag(&r.tag), r.tag.clone()));
    Report { versions, faults }
}

/// Reads the `report --json` output files and merges them (see [`merge`]).
pub fn merge_files(paths: &[impl AsRef<Path>]) -> crate::Result<Report> {
    let mut reports = Vec::new();
    for p in paths {
        let p = p.as_ref();
        let text = std::fs::read_to_string(p).map_err(|e| crate::Error::io(p, e))?;
        let report: Report = serde_json::from_str(&text).map_err(|e| {
            crate::Error::io(
                p,
                std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            )
        })?;
        reports.push(report);
    }
    Ok(merge(reports))
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
        let summary = Summary::of(&report);
        assert_eq!(summary.unbuilt(), 1);
        assert!(
            summary
                .line()
                .starts_with("2 versions: 1 live, 0 golden, 1 unbuilt; cells: 1 pass"),
            "{}",
            summary.line()
        );
        assert!(passed(&report, false) && !passed(&report, true));
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["versions"][0]["source"], "unbuilt");
        assert_eq!(json["versions"][0]["kinds"]["plain"], "unbuilt");
        assert!(report
            .to_markdown()
            .contains("| v1.2.0 | unbuilt | unbuilt |"));
    }

    #[test]
    fn merge_prefers_the_shard_that_ran_the_version_and_keeps_failures() {
        let shard_a = Report {
            versions: vec![
                row(
                    "v2.4.2",
                    Source::Live,
                    &[
                        (StoreKind::Plain, Cell::Pass),
                        (StoreKind::Multi, Cell::Pass),
                    ],
                ),
                row(
                    "v1.2.0",
                    Source::Golden,
                    &[(StoreKind::Plain, Cell::Golden)],
                ),
            ],
            faults: Some(faults(4)),
        };
        let shard_b = Report {
            versions: vec![
                row(
                    "v2.4.2",
                    Source::Golden,
                    &[(StoreKind::Plain, Cell::Golden)],
                ),
                row("v1.2.0", Source::Live, &[(StoreKind::Plain, Cell::Pass)]),
            ],
            faults: Some(faults(3)),
        };
        let arm = Report {
            versions: vec![row(
                "v2.4.2",
                Source::Live,
                &[
                    (StoreKind::Plain, Cell::Pass),
                    (StoreKind::Multi, Cell::Fail),
                ],
            )],
            faults: None,
        };
        let json = |r: &Report| serde_json::from_str::<Report>(&r.to_json()).unwrap();
        let merged = merge(vec![json(&shard_a), json(&shard_b), json(&arm)]);
        let tags: Vec<&str> = merged.versions.iter().map(|r| r.tag.as_str()).collect();
        assert_eq!(tags, ["v1.2.0", "v2.4.2"]);
        assert_eq!(merged.versions[0].source, Source::Live);
        assert_eq!(merged.versions[0].kinds["plain"], Cell::Pass);
        assert_eq!(merged.versions[1].kinds["plain"], Cell::Pass);
        assert_eq!(
            merged.versions[1].kinds["multi"],
            Cell::Fail,
            "a failure on one architecture fails the cell"
        );
        assert!(!merged.passed());
        assert_eq!(
            merged.faults.as_ref().map(|f| f.states),
            Some(7),
            "the shards' fault states are summed"
        );
    }
}
