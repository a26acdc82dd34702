//! The summary a conformance hunt writes (`conformance hunt --json FILE`, schema
//! [`HUNT_SCHEMA`]), and the merge of several (one per CI shard) into one finding per
//! failure signature.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};

/// The document's types: one definition, shared with `conformance`, which writes it.
pub use hunt_schema::{Example, Runs, Signature, Suite, SCHEMA as HUNT_SCHEMA};

/// One hunt's summary, as `conformance hunt --json` writes it.
pub type HuntSummary = hunt_schema::HuntReport;

/// Only the schema field, read before the rest so that another schema gets its own error.
#[derive(Deserialize)]
struct Head {
    schema: Option<String>,
}

/// Reads and checks a summary file ([`parse`]).
pub fn load(path: &Path) -> Result<HuntSummary> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse(&text, path)
}

/// Parses and checks a summary (`path` names it in errors): an unknown `schema` is
/// [`Error::HuntSchema`]; malformed JSON, a missing field or a bad signature id is
/// [`Error::HuntSummary`].
pub fn parse(text: &str, path: &Path) -> Result<HuntSummary> {
    let bad = |message: String| Error::HuntSummary {
        path: path.to_path_buf(),
        message,
    };
    let head: Head = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    match head.schema.as_deref() {
        Some(HUNT_SCHEMA) => {}
        found => {
            return Err(Error::HuntSchema {
                path: path.to_path_buf(),
                found: found.unwrap_or("(none)").to_string(),
            })
        }
    }
    let summary: HuntSummary = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    for s in &summary.signatures {
        if s.id.len() != 16 || !s.id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad(format!("signature id {:?} is not 16 hex digits", s.id)));
        }
    }
    Ok(summary)
}

/// One signature over every summary that saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The signature: its `count` summed over the summaries, its `example` the smallest
    /// (shortest workload; the first of equal ones).
    pub signature: Signature,
    /// The base seed of the hunt that found the example.
    pub base_seed: u64,
    /// Workloads of the signature's suite run by the summaries that saw it.
    pub runs: u64,
    /// The summary file the example comes from.
    pub source: PathBuf,
}

/// Merges summaries (e.g. one per CI shard) into one finding per signature id, in the order
/// the ids first appear.
pub fn merge(summaries: &[(PathBuf, HuntSummary)]) -> Vec<Finding> {
    let mut findings: Vec<Finding> = Vec::new();
    for (path, summary) in summaries {
        for s in &summary.signatures {
            let runs = summary.runs.of(s.suite);
            match findings.iter_mut().find(|f| f.signature.id == s.id) {
                Some(f) => {
                    f.signature.count += s.count;
                    f.runs += runs;
                    if s.example.workload.len() < f.signature.example.workload.len() {
                        f.signature.example = s.example.clone();
                        f.base_seed = summary.base_seed;
                        f.source = path.clone();
                    }
                }
                None => findings.push(Finding {
                    signature: s.clone(),
                    base_seed: summary.base_seed,
                    runs,
                    source: path.clone(),
                }),
            }
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(seed: u64, sigs: &[(&str, u64, &str)]) -> String {
        let sigs: Vec<String> = sigs
            .iter()
            .map(|(id, count, workload)| {
                format!(
                    r#"{{"id":"{id}","suite":"migration","versions":"v1.3.3–v1.3.4",
                    "version_list":["v1.3.3","v1.3.4"],"kind":"plain","compared":"keys",
                    "first_op":"set","count":{count},"example":{{"dir":"d{seed}",
                    "replay":"r","seed":{seed},"workload":"{workload}"}}}}"#
                )
            })
            .collect();
        format!(
            r#"{{"schema":"conformance-hunt/3","base_seed":{seed},"minutes":1.0,"elapsed_s":60.5,
            "versions":["v1.3.3","v1.3.4"],"suites":["differential","migration"],
            "runs":{{"differential":5,"migration":7,"fault":0,"powerloss":0,"diskerr":0}},
            "signatures":[{}]}}"#,
            sigs.join(",")
        )
    }

    #[test]
    fn merge_sums_counts_and_keeps_the_smallest_example() {
        let p = Path::new("a.json");
        let a = parse(&summary(1, &[("00000000000000aa", 2, "long workload")]), p).unwrap();
        let b = parse(
            &summary(
                2,
                &[
                    ("00000000000000bb", 1, "x"),
                    ("00000000000000aa", 3, "short"),
                ],
            ),
            p,
        )
        .unwrap();
        let merged = merge(&[("a".into(), a), ("b".into(), b)]);
        let ids: Vec<&str> = merged.iter().map(|f| f.signature.id.as_str()).collect();
        assert_eq!(ids, vec!["00000000000000aa", "00000000000000bb"]);
        let aa = &merged[0];
        assert_eq!(aa.signature.count, 5);
        assert_eq!(aa.runs, 14);
        assert_eq!(aa.signature.example.workload, "short");
        assert_eq!((aa.base_seed, aa.source.as_path()), (2, Path::new("b")));
    }

    #[test]
    fn ids_must_be_16_hex_digits() {
        let err = parse(&summary(1, &[("xyz", 1, "w")]), Path::new("h.json"));
        assert!(
            matches!(&err, Err(Error::HuntSummary { message, .. }) if message.contains("\"xyz\"")),
            "{err:?}"
        );
    }
}
