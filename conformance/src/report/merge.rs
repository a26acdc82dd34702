//! Merging the JSON reports of CI shards into one table (`conformance merge shard-*.json`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::report::{Report, Row};
use crate::vocab::merge::Merge;

/// Merges shard reports into one: per tag and page size, the rows of the best [`Source`](crate::report::Source), and
/// per cell the worst [`Cell`](crate::report::Cell) among those rows (a `FAIL` on one architecture fails the cell).
pub fn merge(reports: Vec<Report>) -> Report {
    let mut by_tag: BTreeMap<(String, u64), Vec<Row>> = BTreeMap::new();
    let faults = Merge::merged(reports.iter().filter_map(|r| r.faults.clone()));
    let powerloss = Merge::merged(reports.iter().filter_map(|r| r.powerloss.clone()));
    let diskerr = Merge::merged(reports.iter().filter_map(|r| r.diskerr.clone()));
    let mut exceptions_used: BTreeMap<String, u64> = BTreeMap::new();
    // one seed when every shard drew from the same one
    let mut seeds: Vec<Option<u64>> = reports.iter().map(|r| r.seed).collect();
    seeds.dedup();
    let seed = match seeds.as_slice() {
        [one] => *one,
        _ => None,
    };
    for report in reports {
        exceptions_used.absorb(report.exceptions_used);
        for row in report.versions {
            by_tag
                .entry((row.tag.clone(), row.page_size))
                .or_default()
                .push(row);
        }
    }
    let mut versions: Vec<Row> = by_tag
        .into_values()
        .filter_map(|rows| {
            let best = rows.iter().map(|r| r.source).max()?;
            let mut chosen = rows.into_iter().filter(|r| r.source == best);
            let mut merged = chosen.next()?;
            for row in chosen {
                for (kind, cell) in row.kinds {
                    let slot = merged.kinds.entry(kind).or_insert(cell);
                    *slot = (*slot).max(cell);
                }
                merged.failures.extend(row.failures);
                merged.notes.extend(row.notes);
                for (kind, detail) in row.cells {
                    // a failing shard's detail wins: it is what the page must show
                    if !detail.passed || !merged.cells.contains_key(&kind) {
                        merged.cells.insert(kind, detail);
                    }
                }
                merged.live_writer = merged.live_writer.or(row.live_writer);
                if merged.unbuilt.is_none() {
                    merged.unbuilt = row.unbuilt;
                }
            }
            Some(merged)
        })
        .collect();
    versions.sort_by_key(Row::key);
    Report {
        versions,
        faults,
        powerloss,
        diskerr,
        exceptions_used,
        seed,
    }
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
    use crate::report::{Cell, Source};
    use crate::vocab::kind::StoreKind;

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
            ..Report::default()
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
            ..Report::default()
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
            ..Report::default()
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
        assert!(!merged.passed(false));
        assert_eq!(
            merged.faults.as_ref().map(|f| f.states),
            Some(7),
            "the shards' fault states are summed"
        );
    }
}
