//! The summary a conformance hunt writes (`conformance hunt --json FILE`, schema
//! [`HUNT_SCHEMA`]), and the merge of several (one per CI shard) into one finding per
//! failure signature.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};

/// The only summary schema this crate reads.
pub const HUNT_SCHEMA: &str = "conformance-hunt/2";

/// One hunt's summary, as `conformance hunt --json` writes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HuntSummary {
    /// Always [`HUNT_SCHEMA`] (checked by [`HuntSummary::parse`]).
    pub schema: String,
    /// The seed every run's seed was derived from.
    pub base_seed: u64,
    /// The time box asked for, in minutes.
    pub minutes: f64,
    /// How long the hunt ran, in seconds.
    pub elapsed_s: f64,
    /// The versions the hunt ran (tags).
    pub versions: Vec<String>,
    /// The suites that ran.
    pub suites: Vec<Suite>,
    /// How many workloads ran (states were judged), per suite.
    pub runs: Runs,
    /// One entry per failure signature.
    pub signatures: Vec<Signature>,
}

/// Workloads run, per suite.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct Runs {
    /// Differential runs (reader vs official library on one store).
    pub differential: u64,
    /// Migration runs (a store written by one version, continued by another).
    pub migration: u64,
    /// Fault-suite states judged.
    pub fault: u64,
    /// Power-loss crash states judged.
    pub powerloss: u64,
}

impl Runs {
    /// The count of `suite`.
    pub fn of(&self, suite: Suite) -> u64 {
        match suite {
            Suite::Differential => self.differential,
            Suite::Migration => self.migration,
            Suite::Fault => self.fault,
            Suite::Powerloss => self.powerloss,
        }
    }
}

/// The suite a failure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    /// The differential suite.
    Differential,
    /// The migration suite.
    Migration,
    /// The fault suite (damaged states).
    Fault,
    /// The power-loss suite (crash states).
    Powerloss,
}

impl Suite {
    /// Whether its failures are saved states (fault, power loss) rather than workloads.
    pub fn states(self) -> bool {
        matches!(self, Suite::Fault | Suite::Powerloss)
    }
}

impl std::fmt::Display for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Suite::Differential => "differential",
            Suite::Migration => "migration",
            Suite::Fault => "fault",
            Suite::Powerloss => "powerloss",
        })
    }
}

/// A group of failures that differ the same way.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Signature {
    /// 16 hex digits naming the signature (stable across hunts).
    pub id: String,
    /// The suite.
    pub suite: Suite,
    /// The versions it fails on, as a range (`v1.3.3–v1.3.7`).
    pub versions: String,
    /// The versions it fails on, one tag each.
    pub version_list: Vec<String>,
    /// The store kind (`plain`, `aes128`, ...).
    pub kind: String,
    /// What was compared when the sides first differed.
    pub compared: String,
    /// The first operation after which they differed.
    pub first_op: String,
    /// How many runs failed with this signature.
    pub count: u64,
    /// The smallest failing run kept.
    pub example: Example,
}

/// A kept failing run.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Example {
    /// Its failure folder (relative to where the hunt ran).
    pub dir: String,
    /// The command that re-runs it.
    pub replay: String,
    /// The run's seed.
    pub seed: u64,
    /// The (shrunk) workload, the folder's `workload.yaml`; for a fault or power-loss state,
    /// the folder's state description.
    pub workload: String,
}

/// Only the schema field, read before the rest so that another schema gets its own error.
#[derive(Deserialize)]
struct Head {
    schema: Option<String>,
}

impl HuntSummary {
    /// Reads and checks a summary file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&text, path)
    }

    /// Parses and checks a summary (`path` names it in errors): an unknown `schema` is
    /// [`Error::HuntSchema`]; malformed JSON, a missing field or a bad signature id is
    /// [`Error::HuntSummary`].
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
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
            r#"{{"schema":"conformance-hunt/2","base_seed":{seed},"minutes":1.0,"elapsed_s":60.5,
            "versions":["v1.3.3","v1.3.4"],"suites":["differential","migration"],
            "runs":{{"differential":5,"migration":7,"fault":0,"powerloss":0}},
            "signatures":[{}]}}"#,
            sigs.join(",")
        )
    }

    #[test]
    fn merge_sums_counts_and_keeps_the_smallest_example() {
        let p = Path::new("a.json");
        let a = HuntSummary::parse(&summary(1, &[("00000000000000aa", 2, "long workload")]), p)
            .unwrap();
        let b = HuntSummary::parse(
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
        let err = HuntSummary::parse(&summary(1, &[("xyz", 1, "w")]), Path::new("h.json"));
        assert!(
            matches!(&err, Err(Error::HuntSummary { message, .. }) if message.contains("\"xyz\"")),
            "{err:?}"
        );
    }
}
