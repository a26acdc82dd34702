//! Findings and their signatures: a failure is one finding; findings with the same suite, store
//! kind, [`Compared`](crate::judge::compare::Compared) kind (a state's verdict class) and first
//! differing op (a state's damage or crash class) are one signature per range of adjacent
//! versions they failed in.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::vocab::kind::StoreKind;

pub use hunt_schema::{Example, Signature, Suite};

/// Whether findings of adjacent units merge into one range: versions do; migration pairs are
/// each their own.
fn merges_adjacent(suite: Suite) -> bool {
    suite != Suite::Migration
}

/// What a property run covers on the version axis: one version, or a migration pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// `v2.4.2`, or `v1.3.17→v2.4.2`.
    pub label: String,
    /// Its tags: the version, or the pair in order.
    pub tags: Vec<String>,
}

impl Unit {
    /// One version.
    pub fn version(tag: &str) -> Unit {
        Unit {
            label: tag.to_string(),
            tags: vec![tag.to_string()],
        }
    }

    /// A migration pair: `from` continued by `to`.
    pub fn pair(from: &str, to: &str) -> Unit {
        Unit {
            label: format!("{from}→{to}"),
            tags: vec![from.to_string(), to.to_string()],
        }
    }
}

/// One failure of a property run or a state batch, saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Its suite.
    pub suite: Suite,
    /// The version or pair it failed on.
    pub unit: Unit,
    /// The store kind.
    pub kind: StoreKind,
    /// What differed first (`Compared`'s text, e.g. `get i32`; a state's verdict class, e.g.
    /// `discard/store: get i32`).
    pub compared: String,
    /// The op after which the minimal workload first differs (`set`, `reKey`, `switch`...); a
    /// state's damage or crash class (`killed before an op: truncate data`, `crc ahead`).
    pub first_op: String,
    /// Its saved folder.
    pub example: Example,
}

/// The stable id of a signature: the first 8 bytes of the SHA-256 of its fields, in hex.
pub fn signature_id(
    suite: Suite,
    versions: &str,
    kind: &str,
    compared: &str,
    first_op: &str,
) -> String {
    let mut h = Sha256::new();
    for field in [suite.name(), versions, kind, compared, first_op] {
        h.update(field.as_bytes());
        h.update([0]);
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The units each (suite, kind) ran on, in version order: what "adjacent" means.
pub type Axis = BTreeMap<(Suite, StoreKind), Vec<Unit>>;

/// Groups `findings` (in the order found) into signatures: per suite, kind, compared and first
/// op, the units they failed on split into ranges of units adjacent on `axis` (a version the
/// kind did not run on is no gap; one it ran on without this failure is). Sorted by suite,
/// kind, first unit, compared and first op; each signature's example is its first finding.
pub fn group(findings: &[Finding], axis: &Axis) -> Vec<Signature> {
    type Key<'a> = (Suite, StoreKind, &'a str, &'a str);
    // Per key: (position on the axis, unit label) -> (index found, finding). A unit missing
    // from the axis (none is, in a hunt) sorts after it and stays alone.
    type Found<'a> = Vec<(usize, &'a Finding)>;
    type At<'a> = BTreeMap<(usize, &'a str), Found<'a>>;
    let mut by_key: BTreeMap<Key<'_>, At<'_>> = BTreeMap::new();
    for (n, f) in findings.iter().enumerate() {
        let pos = axis
            .get(&(f.suite, f.kind))
            .and_then(|u| u.iter().position(|u| *u == f.unit))
            .unwrap_or(usize::MAX);
        by_key
            .entry((f.suite, f.kind, &f.compared, &f.first_op))
            .or_default()
            .entry((pos, &f.unit.label))
            .or_default()
            .push((n, f));
    }
    let mut out: Vec<(usize, Signature)> = Vec::new();
    for ((suite, kind, compared, first_op), at) in by_key {
        // Each range: (position, findings there) of adjacent positions.
        let mut ranges: Vec<Vec<(usize, Found<'_>)>> = Vec::new();
        for ((pos, _), fs) in at {
            let adjacent = |r: &Vec<(usize, Found<'_>)>| {
                r.last()
                    .is_some_and(|(p, _)| pos != usize::MAX && p.checked_add(1) == Some(pos))
            };
            match ranges.last_mut() {
                Some(r) if merges_adjacent(suite) && adjacent(r) => r.push((pos, fs)),
                _ => ranges.push(vec![(pos, fs)]),
            }
        }
        for range in ranges {
            let units: Vec<&Unit> = range.iter().map(|(_, fs)| &fs[0].1.unit).collect();
            let versions = match units.as_slice() {
                [one] => one.label.clone(),
                [first, .., last] => format!("{}–{}", first.label, last.label),
                [] => String::new(),
            };
            let mut version_list: Vec<String> = Vec::new();
            for t in units.iter().flat_map(|u| u.tags.iter()) {
                if !version_list.contains(t) {
                    version_list.push(t.clone());
                }
            }
            let all = range.iter().flat_map(|(_, fs)| fs.iter());
            let count = all.clone().count() as u64;
            // The example: the first found.
            let Some((_, first)) = all.min_by_key(|(n, _)| *n) else {
                continue;
            };
            out.push((
                range[0].0,
                Signature {
                    id: signature_id(suite, &versions, kind.id(), compared, first_op),
                    suite,
                    versions,
                    version_list,
                    kind: kind.id().to_string(),
                    compared: compared.to_string(),
                    first_op: first_op.to_string(),
                    count,
                    example: first.example.clone(),
                },
            ));
        }
    }
    let column = |s: &Signature| StoreKind::ALL.iter().position(|k| k.id() == s.kind);
    out.sort_by(|(pa, a), (pb, b)| {
        (a.suite, column(a), pa, &a.compared, &a.first_op).cmp(&(
            b.suite,
            column(b),
            pb,
            &b.compared,
            &b.first_op,
        ))
    });
    out.into_iter().map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(suite: Suite, unit: Unit, kind: StoreKind, first_op: &str, seed: u64) -> Finding {
        Finding {
            suite,
            unit,
            kind,
            compared: "get i32".to_string(),
            first_op: first_op.to_string(),
            example: Example {
                dir: format!("/h/{seed}"),
                replay: format!("replay /h/{seed}"),
                seed,
                workload: "ops: []\n".to_string(),
            },
        }
    }

    fn axis(tags: &[&str]) -> Axis {
        let mut a = Axis::new();
        a.insert(
            (Suite::Differential, StoreKind::Plain),
            tags.iter().map(|t| Unit::version(t)).collect(),
        );
        a.insert(
            (Suite::Migration, StoreKind::Plain),
            vec![
                Unit::pair("v1.3.3", "v1.3.4"),
                Unit::pair("v1.3.4", "v1.3.3"),
            ],
        );
        a
    }

    const TAGS: [&str; 6] = ["v1.3.2", "v1.3.3", "v1.3.4", "v1.3.5", "v1.3.7", "v2.4.2"];

    #[test]
    fn adjacent_versions_merge_into_one_range() {
        let d = Suite::Differential;
        let p = StoreKind::Plain;
        // Found out of version order, twice in v1.3.4.
        let found = vec![
            finding(d, Unit::version("v1.3.5"), p, "set", 1),
            finding(d, Unit::version("v1.3.3"), p, "set", 2),
            finding(d, Unit::version("v1.3.4"), p, "set", 3),
            finding(d, Unit::version("v1.3.4"), p, "set", 4),
            finding(d, Unit::version("v1.3.7"), p, "set", 5),
        ];
        let sigs = group(&found, &axis(&TAGS));
        assert_eq!(sigs.len(), 1, "{sigs:#?}");
        let s = &sigs[0];
        assert_eq!(s.versions, "v1.3.3–v1.3.7");
        assert_eq!(s.version_list, ["v1.3.3", "v1.3.4", "v1.3.5", "v1.3.7"]);
        assert_eq!(s.count, 5);
        assert_eq!(s.example.seed, 1, "the example is the first found");
        assert_eq!((s.kind.as_str(), s.first_op.as_str()), ("plain", "set"));
    }

    #[test]
    fn a_gap_a_kind_or_a_first_op_makes_another_signature() {
        let d = Suite::Differential;
        let found = vec![
            finding(d, Unit::version("v1.3.2"), StoreKind::Plain, "set", 1),
            // v1.3.3 ran plain and did not fail: a gap
            finding(d, Unit::version("v1.3.4"), StoreKind::Plain, "set", 2),
            finding(d, Unit::version("v1.3.5"), StoreKind::Plain, "remove", 3),
            finding(d, Unit::version("v1.3.5"), StoreKind::Multi, "set", 4),
        ];
        let sigs = group(&found, &axis(&TAGS));
        let got: Vec<(&str, &str, &str)> = sigs
            .iter()
            .map(|s| (s.versions.as_str(), s.kind.as_str(), s.first_op.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("v1.3.2", "plain", "set"),
                ("v1.3.4", "plain", "set"),
                ("v1.3.5", "plain", "remove"),
                // multi ran on no version of the axis: alone
                ("v1.3.5", "multi", "set"),
            ]
        );
        let mut ids: Vec<&str> = sigs.iter().map(|s| s.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 4, "distinct signatures have distinct ids");
    }

    #[test]
    fn a_version_the_kind_did_not_run_on_is_no_gap() {
        let d = Suite::Differential;
        let p = StoreKind::Plain;
        let found = vec![
            finding(d, Unit::version("v1.3.2"), p, "set", 1),
            finding(d, Unit::version("v1.3.4"), p, "set", 2),
        ];
        // plain ran on v1.3.2 and v1.3.4 only
        let sigs = group(&found, &axis(&["v1.3.2", "v1.3.4"]));
        assert_eq!(sigs.len(), 1);
        assert_eq!(sigs[0].versions, "v1.3.2–v1.3.4");
    }

    #[test]
    fn migration_pairs_do_not_merge() {
        let m = Suite::Migration;
        let p = StoreKind::Plain;
        let found = vec![
            finding(m, Unit::pair("v1.3.3", "v1.3.4"), p, "switch", 1),
            finding(m, Unit::pair("v1.3.4", "v1.3.3"), p, "switch", 2),
            finding(m, Unit::pair("v1.3.3", "v1.3.4"), p, "switch", 3),
        ];
        let sigs = group(&found, &axis(&TAGS));
        assert_eq!(sigs.len(), 2, "{sigs:#?}");
        assert_eq!(sigs[0].versions, "v1.3.3→v1.3.4");
        assert_eq!(sigs[0].version_list, ["v1.3.3", "v1.3.4"]);
        assert_eq!(sigs[0].count, 2);
        assert_eq!(sigs[1].versions, "v1.3.4→v1.3.3");
        assert_eq!(sigs[1].version_list, ["v1.3.4", "v1.3.3"]);
    }

    #[test]
    fn ids_are_stable() {
        // Pinned: the id is what the issue side matches findings on across hunts.
        let id = signature_id(
            Suite::Differential,
            "v1.3.3–v1.3.7",
            "aes128",
            "get i32",
            "set",
        );
        assert_eq!(id.len(), 16);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(id, PINNED_ID);
        let sigs = group(
            &[finding(
                Suite::Differential,
                Unit::version("v1.3.3"),
                StoreKind::Plain,
                "set",
                9,
            )],
            &axis(&TAGS),
        );
        assert_eq!(
            sigs[0].id,
            signature_id(Suite::Differential, "v1.3.3", "plain", "get i32", "set")
        );
        assert_ne!(
            sigs[0].id,
            signature_id(Suite::Migration, "v1.3.3", "plain", "get i32", "set")
        );
    }

    /// `printf 'differential\0v1.3.3–v1.3.7\0aes128\0get i32\0set\0' | sha256sum`, first 16.
    const PINNED_ID: &str = "179934735836c259";
}
