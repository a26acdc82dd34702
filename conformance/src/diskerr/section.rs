//! The result of a disk-error run as the report carries it (text, JSON, summary phrase) and as
//! `conformance faults diskerr` prints it: states per version, kind and verdict, the calls
//! that failed and what the API returned, how the writers ended, every disagreement and every
//! upstream finding. A run that judged no state, or in which no scheduled call failed, has not
//! passed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::diskerr::record::{replay_line, DiskerrRecord};
use crate::fault::section::StateSection;
use crate::fault::section::{counts_line, enough_official_reads, findings_text, phrase};
use crate::fault::summary::verdict_key;
use crate::judge::state::upstream;
use crate::vocab::digest::combine;
use crate::vocab::merge::merge_fields;

/// Upstream-finding and disagreement lines kept at most (the counts are exact).
const MAX_LINES: usize = 50;

/// What a disk-error run judged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskerrSection {
    /// Seed of the run.
    pub seed: u64,
    /// States judged (one writer run each).
    pub states: u64,
    /// Writer runs during which some scheduled call failed.
    pub runs_with_failures: u64,
    /// Scheduled failures per wrapped call (`ftruncate`, ...), over all runs.
    pub failed_calls: BTreeMap<String, u64>,
    /// What the official API returned from the calls that saw a failure (`true`, `false`,
    /// `ok`, `error`), by the call (`op`, `sync`, `open`, `end`).
    pub returned: BTreeMap<String, u64>,
    /// How the writers ended (`finished`, `killed`, `crashed`, `failed`, `hung`).
    pub writer_ends: BTreeMap<String, u64>,
    /// States per official version.
    pub per_version: BTreeMap<String, u64>,
    /// States per official page size (bytes, as text: JSON keys).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub per_page_size: BTreeMap<String, u64>,
    /// States per `version kind`.
    pub per_kind: BTreeMap<String, u64>,
    /// `strategy/reader-path verdict` -> count.
    pub verdicts: BTreeMap<String, u64>,
    /// `version strategy/reader-path verdict` -> count.
    pub per_version_verdicts: BTreeMap<String, u64>,
    /// States with an unexplained difference (fails the run).
    pub disagreeing: u64,
    /// States the official library could not read (crashed, hung, failed): an upstream
    /// finding that counts against [`enough_official_reads`].
    pub unread_states: u64,
    /// Writers the official library crashed, hung or failed (their states judged all the same).
    pub writer_findings: u64,
    /// The first disagreeing states (line, saved folder, replay command).
    pub disagreements: Vec<String>,
    /// The first upstream findings (the same).
    pub upstream: Vec<String>,
    /// Wall-clock seconds (summed over merged sections).
    pub seconds: f64,
    /// The plan digest of each run merged into this section
    /// ([`crate::diskerr::suite::plan_digest`]), in the order merged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plan_digests: Vec<String>,
}

// The seed stays the first section's.
merge_fields!(DiskerrSection: states, runs_with_failures, failed_calls, returned, writer_ends,
    per_version, per_page_size, per_kind, verdicts, per_version_verdicts, disagreeing,
    unread_states, writer_findings, disagreements, upstream, seconds, plan_digests);

/// `value` -> `what value` counted into `map`.
fn bump(map: &mut BTreeMap<String, u64>, key: String, n: u64) {
    *map.entry(key).or_insert(0) += n;
}

impl DiskerrSection {
    /// Counts a judged state.
    pub fn add(&mut self, r: &DiskerrRecord) {
        self.states += 1;
        bump(&mut self.per_version, r.tag.clone(), 1);
        bump(&mut self.per_kind, format!("{} {}", r.tag, r.kind), 1);
        bump(&mut self.writer_ends, r.end.label().to_string(), 1);
        self.runs_with_failures += u64::from(r.failed_any());
        for f in &r.failures {
            for (call, n) in &f.failed {
                bump(&mut self.failed_calls, call.clone(), *n);
            }
            let at = f.at.split(' ').next().unwrap_or("");
            let ret = f.returned.split(':').next().unwrap_or("");
            bump(&mut self.returned, format!("{at} {ret}"), 1);
        }
        for (s, p, v) in &r.verdicts {
            let k = verdict_key(*s, *p, v);
            bump(&mut self.per_version_verdicts, format!("{} {k}", r.tag), 1);
            bump(&mut self.verdicts, k, 1);
        }
        let line = || match &r.saved {
            Some(p) => format!(
                "{} (saved in {}; replay: {})",
                r.line(),
                p.display(),
                replay_line(p)
            ),
            None => r.line(),
        };
        if r.disagrees() {
            self.disagreeing += 1;
            if self.disagreements.len() < MAX_LINES {
                self.disagreements.push(line());
            }
        }
        self.unread_states += u64::from(upstream(&r.verdicts));
        self.writer_findings += u64::from(r.end.upstream());
        if r.upstream() && self.upstream.len() < MAX_LINES {
            self.upstream.push(line());
        }
    }

    /// Scheduled failures, all calls.
    pub fn failures(&self) -> u64 {
        self.failed_calls.values().sum()
    }

    /// Passed: some state was judged and some scheduled call failed, none disagrees, and the
    /// official library read enough of them ([`enough_official_reads`]).
    pub fn passed(&self) -> bool {
        self.states > 0
            && self.failures() > 0
            && self.disagreeing == 0
            && enough_official_reads(self.states, self.unread_states)
    }

    /// The digest of what the seed drew for its runs, whatever order they were merged in.
    pub fn plan_digest(&self) -> Option<String> {
        combine(&self.plan_digests)
    }

    /// For the report's summary line.
    pub fn phrase(&self) -> String {
        phrase(
            "disk-error",
            self.states,
            self.disagreeing,
            self.unread_states + self.writer_findings,
        )
    }

    /// Human-readable: counts, then upstream findings and disagreements.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "disk-error suite: {} — {} states judged ({} runs saw {} failed calls; seed {}; {:.1} s)",
            if self.passed() { "PASS" } else { "FAIL" },
            self.states,
            self.runs_with_failures,
            self.failures(),
            self.seed,
            self.seconds
        );
        let _ = writeln!(s, "  failed calls: {}", counts_line(&self.failed_calls));
        let _ = writeln!(s, "  the API returned: {}", counts_line(&self.returned));
        let _ = writeln!(s, "  writers: {}", counts_line(&self.writer_ends));
        let _ = writeln!(s, "  per version: {}", counts_line(&self.per_version));
        if !self.per_page_size.is_empty() {
            let _ = writeln!(s, "  per page size: {}", counts_line(&self.per_page_size));
        }
        let _ = writeln!(s, "  per version and kind: {}", counts_line(&self.per_kind));
        for (k, n) in &self.verdicts {
            let _ = writeln!(s, "  {k}: {n}");
        }
        let _ = writeln!(
            s,
            "  writers crashed/hung/failed by the library: {}; states unread: {}; disagreeing: {}",
            self.writer_findings, self.unread_states, self.disagreeing
        );
        if self.states > 0 && self.failures() == 0 {
            let _ = writeln!(s, "  no scheduled call failed: the suite has not passed");
        }
        findings_text(
            &mut s,
            &self.upstream,
            &self.disagreements,
            self.states,
            self.unread_states,
            self.plan_digest(),
        );
        s
    }
}

impl StateSection for DiskerrSection {
    fn ending(&mut self) -> (&mut f64, &mut BTreeMap<String, u64>, u64) {
        (&mut self.seconds, &mut self.per_page_size, self.states)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::merge::Merge;

    fn section(states: u64, failed: u64, disagreeing: u64) -> DiskerrSection {
        DiskerrSection {
            states,
            failed_calls: [("msync".to_string(), failed)].into_iter().collect(),
            per_version: [("v2.4.2".to_string(), states)].into_iter().collect(),
            disagreeing,
            ..DiskerrSection::default()
        }
    }

    #[test]
    fn merge_sums_and_an_empty_failure_free_or_disagreeing_run_fails() {
        assert!(section(5, 3, 0).passed());
        assert!(!section(0, 0, 0).passed());
        assert!(!section(5, 0, 0).passed());
        assert!(!section(5, 3, 1).passed());
        let m = DiskerrSection::merged([section(5, 3, 0), section(7, 2, 1)]).unwrap();
        assert_eq!((m.states, m.failures(), m.disagreeing), (12, 5, 1));
        assert!(!m.passed());
        assert!(m.to_text().contains("FAIL"));
        let back: DiskerrSection =
            serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
    }
}
