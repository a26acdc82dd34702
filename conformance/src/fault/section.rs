//! The result of a fault-suite run as the report carries it (text, JSON, summary line) and as
//! `conformance faults run` prints it: counts per version and per verdict, every disagreement
//! and every upstream finding. A run that judged no state has not passed.

use std::collections::BTreeMap;
use std::fmt::{Display, Write as _};

use serde::{Deserialize, Serialize};

use crate::fault::summary::Summary;
use crate::vocab::digest::combine;
use crate::vocab::merge::merge_fields;

/// What a fault-suite run judged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultSection {
    /// Seed of the run (writer workloads, kill points, damage).
    pub seed: u64,
    /// Damaged states judged.
    pub states: u64,
    /// Official writer runs.
    pub writer_runs: u64,
    /// Writer runs that ended by SIGKILL.
    pub killed_runs: u64,
    /// States per official version.
    pub per_version: BTreeMap<String, u64>,
    /// States per official page size (bytes, as text: JSON keys); empty when the run did not
    /// choose one (the process's own).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub per_page_size: BTreeMap<String, u64>,
    /// `strategy/reader-path verdict` -> count (`discard/store agree`, ...).
    pub verdicts: BTreeMap<String, u64>,
    /// [`FaultSection::verdicts`] per official version.
    pub verdicts_per_version: BTreeMap<String, BTreeMap<String, u64>>,
    /// One line per state with an unexplained difference (fails the run).
    pub disagreements: Vec<String>,
    /// One line per state where the official library crashed, hung or failed.
    pub upstream: Vec<String>,
    /// Wall-clock seconds the run took (summed over merged sections).
    pub seconds: f64,
    /// The plan digest of each run merged into this section (one per page size and shard;
    /// [`crate::fault::suite::plan_digest`]), in the order merged; see
    /// [`FaultSection::plan_digest`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plan_digests: Vec<String>,
}

// The seed stays the first section's.
merge_fields!(FaultSection: states, writer_runs, killed_runs, per_version, per_page_size, verdicts,
    verdicts_per_version, disagreements, upstream, seconds, plan_digests);

impl FaultSection {
    /// The section of a suite run with `seed`.
    pub fn of(summary: &Summary, seed: u64) -> FaultSection {
        let mut per_version = BTreeMap::new();
        for r in &summary.records {
            *per_version.entry(r.tag.clone()).or_insert(0) += 1;
        }
        let line = |r: &crate::fault::summary::StateRecord| saved_line(r.line(), &r.saved);
        FaultSection {
            seed,
            states: summary.states() as u64,
            writer_runs: summary.writer_runs as u64,
            killed_runs: summary.killed_runs as u64,
            per_version,
            per_page_size: BTreeMap::new(),
            verdicts: summary.counts(),
            verdicts_per_version: summary.counts_by_version(),
            disagreements: summary.disagreements().into_iter().map(line).collect(),
            upstream: summary.upstream().into_iter().map(line).collect(),
            seconds: 0.0,
            plan_digests: summary.plan_digest.iter().cloned().collect(),
        }
    }

    /// The digest of what the seed drew for its runs, whatever order they were merged in
    /// ([`combine`]); `None` for a section from before digests.
    pub fn plan_digest(&self) -> Option<String> {
        combine(&self.plan_digests)
    }

    /// Passed: some state was judged, none disagrees, and the official library read enough
    /// of them ([`enough_official_reads`]).
    pub fn passed(&self) -> bool {
        self.states > 0
            && self.disagreements.is_empty()
            && enough_official_reads(self.states, self.upstream.len() as u64)
    }

    /// For the report's summary line: `1000 fault state(s), 0 disagreeing, 0 upstream finding(s)`.
    pub fn phrase(&self) -> String {
        phrase(
            "fault",
            self.states,
            self.disagreements.len(),
            self.upstream.len(),
        )
    }

    /// Human-readable: counts, then every upstream finding and every disagreement.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "fault suite: {} — {} states judged ({} writer runs, {} killed by SIGKILL; seed {}; {:.1} s)",
            if self.passed() { "PASS" } else { "FAIL" },
            self.states,
            self.writer_runs,
            self.killed_runs,
            self.seed,
            self.seconds
        );
        let _ = writeln!(s, "  per version: {}", counts_line(&self.per_version));
        if !self.per_page_size.is_empty() {
            let _ = writeln!(s, "  per page size: {}", counts_line(&self.per_page_size));
        }
        for (k, n) in &self.verdicts {
            let _ = writeln!(s, "  {k}: {n}");
        }
        let unread = self.upstream.len() as u64;
        findings_text(
            &mut s,
            &self.upstream,
            &self.disagreements,
            self.states,
            unread,
            self.plan_digest(),
        );
        s
    }
}

impl StateSection for FaultSection {
    fn ending(&mut self) -> (&mut f64, &mut BTreeMap<String, u64>, u64) {
        (&mut self.seconds, &mut self.per_page_size, self.states)
    }
}

// What this section and the power-loss suite's (`powerloss::section`) have in common.

/// The last line of a section's text: `  plan digest: HEX` (nothing without one).
fn plan_digest_line(s: &mut String, digest: Option<String>) {
    if let Some(d) = digest {
        let _ = writeln!(s, "  plan digest: {d}");
    }
}

/// Counts on one line: `v2.4.2: 10, v2.4.1: 3`.
pub fn counts_line(m: &BTreeMap<String, u64>) -> String {
    let v: Vec<String> = m.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    v.join(", ")
}

/// A state's line, with the folder it was saved in.
pub fn saved_line(line: String, saved: &Option<std::path::PathBuf>) -> String {
    match saved {
        Some(p) => format!("{line} (saved in {})", p.display()),
        None => line,
    }
}

/// A state suite's section, as [`finish_section`] finishes it.
pub trait StateSection {
    /// Its wall-clock seconds, its states per official page size, and its states judged.
    fn ending(&mut self) -> (&mut f64, &mut BTreeMap<String, u64>, u64);
}

/// Finishes a suite run's section: its wall-clock seconds since `started`, and its states
/// counted under the official page size `size` (set with `--page-size` or by the report;
/// `None`: this process's, not counted).
pub fn finish_section(
    section: &mut impl StateSection,
    started: std::time::Instant,
    size: Option<u64>,
) {
    let (seconds, per_page_size, states) = section.ending();
    *seconds = started.elapsed().as_secs_f64();
    if let Some(size) = size {
        per_page_size.insert(size.to_string(), states);
    }
}

/// A suite's part of the report's summary line: `N <what> state(s) judged, D disagreeing, U
/// upstream finding(s)`.
pub fn phrase(
    what: &str,
    states: u64,
    disagreeing: impl Display,
    upstream: impl Display,
) -> String {
    format!("{states} {what} state(s) judged, {disagreeing} disagreeing, {upstream} upstream finding(s)")
}

/// The share of states (in percent) that may get no official read (the official library
/// crashed, hung or failed on them: upstream findings) before a suite run fails: above it the
/// run compared too little to pass, whatever it found.
pub const MAX_UNREAD_PERCENT: u64 = 5;

/// True when at most [`MAX_UNREAD_PERCENT`] of `states` are upstream findings (`unread`). The
/// one rule of the fault and power-loss suites.
pub fn enough_official_reads(states: u64, unread: u64) -> bool {
    unread * 100 <= states * MAX_UNREAD_PERCENT
}

/// The closing lines of a suite's text (this one, the power-loss and the disk-error suite's):
/// each upstream finding, each disagreement, a note when no state was judged or `unread` of
/// them got no official read (too many: [`enough_official_reads`]), and the plan digest.
pub fn findings_text(
    out: &mut String,
    upstream: &[String],
    disagreements: &[String],
    states: u64,
    unread: u64,
    digest: Option<String>,
) {
    for u in upstream {
        let _ = writeln!(out, "  upstream finding: {u}");
    }
    for d in disagreements {
        let _ = writeln!(out, "  DISAGREEMENT: {d}");
    }
    if states == 0 {
        let _ = writeln!(out, "  no state was judged: the suite has not passed");
    } else if !enough_official_reads(states, unread) {
        let _ = writeln!(
            out,
            "  {unread} of {states} states got no official read (more than \
             {MAX_UNREAD_PERCENT}%): the suite has not passed"
        );
    }
    plan_digest_line(out, digest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::merge::Merge;

    fn section(states: u64, disagreements: &[&str]) -> FaultSection {
        FaultSection {
            states,
            writer_runs: states / 6 + 1,
            per_version: [("v2.4.2".to_string(), states)].into_iter().collect(),
            verdicts: [("discard/store agree".to_string(), states)]
                .into_iter()
                .collect(),
            disagreements: disagreements.iter().map(|d| d.to_string()).collect(),
            ..FaultSection::default()
        }
    }

    #[test]
    fn nothing_judged_or_a_disagreement_fails() {
        assert!(section(10, &[]).passed());
        assert!(!section(0, &[]).passed(), "zero states is no pass");
        assert!(!section(10, &["#3 ..."]).passed());
        assert!(section(0, &[]).to_text().contains("FAIL"));
    }

    #[test]
    fn too_many_states_without_an_official_read_fail() {
        assert!(enough_official_reads(100, 5));
        assert!(!enough_official_reads(100, 6));
        assert!(enough_official_reads(0, 0));
        let mut s = section(20, &[]);
        s.upstream = vec!["#1 official crashed".to_string()];
        assert!(s.passed(), "1 of 20 is 5%");
        s.upstream.push("#2 official hung".to_string());
        assert!(!s.passed());
        assert!(
            s.to_text().contains("got no official read"),
            "{}",
            s.to_text()
        );
    }

    #[test]
    fn a_finished_section_counts_its_states_under_its_page_size() {
        let mut s = section(12, &[]);
        finish_section(&mut s, std::time::Instant::now(), None);
        assert!(
            s.per_page_size.is_empty(),
            "this process's size is not counted"
        );
        finish_section(&mut s, std::time::Instant::now(), Some(16384));
        assert_eq!(s.per_page_size["16384"], 12);
        assert!(s.seconds >= 0.0 && s.seconds < 60.0, "{}", s.seconds);
    }

    #[test]
    fn merge_sums_and_keeps_every_line() {
        let m = FaultSection::merged([section(10, &[]), section(5, &["#1 x"])]).unwrap();
        assert_eq!(m.states, 15);
        assert_eq!(m.per_version["v2.4.2"], 15);
        assert_eq!(m.verdicts["discard/store agree"], 15);
        assert_eq!(m.disagreements, vec!["#1 x".to_string()]);
        assert!(!m.passed());
        assert!(FaultSection::merged(Vec::new()).is_none());
        let json = serde_json::to_string(&m).unwrap();
        let back: FaultSection = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m);
    }
}
