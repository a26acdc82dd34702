//! The result of a power-loss run as the report carries it (text, JSON, summary phrase) and
//! as `conformance faults powerloss` prints it: counts per version, store kind and verdict,
//! the kinds of states judged (beyond SIGKILL: `.crc` ahead of the data or behind it, torn
//! pages, a pending size change), every disagreement and every upstream finding. A run that
//! judged no state has not passed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::fault::section::{
    counts_line, enough_official_reads, findings_text, phrase, saved_line, StateSection,
};
use crate::fault::summary::verdict_key;
use crate::powerloss::judged::Judged;
use crate::powerloss::record::Recording;
use crate::vocab::digest::combine;
use crate::vocab::merge::merge_fields;

/// Upstream-finding and disagreement lines kept at most (the counts are exact).
const MAX_LINES: usize = 50;

/// What a power-loss run judged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PowerlossSection {
    /// Seed of the run.
    pub seed: u64,
    /// Crash states judged.
    pub states: u64,
    /// Official writer runs recorded.
    pub recordings: u64,
    /// Official calls recorded.
    pub calls: u64,
    /// Sync points seen (per file: data, meta).
    pub sync_points: [u64; 2],
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
    /// States whose `.crc` has pages newer than some of its data pages (no SIGKILL leaves them).
    pub crc_ahead: u64,
    /// States whose data has pages newer than a page of its `.crc`.
    pub data_ahead: u64,
    /// States with a torn page.
    pub torn: u64,
    /// States with a file at its size as last synced while a size change was pending.
    pub old_size: u64,
    /// Where `Store` took the region from (`discard last-confirmed`, `recover recovered`, ...).
    pub reader_sources: BTreeMap<String, u64>,
    /// States with an unexplained difference (fails the run).
    pub disagreeing: u64,
    /// States where the official library crashed, hung or failed.
    pub upstream_states: u64,
    /// States on which the reader panicked (counted in `disagreeing`).
    pub reader_panics: u64,
    /// The first disagreeing states (line, saved folder).
    pub disagreements: Vec<String>,
    /// The first upstream findings.
    pub upstream: Vec<String>,
    /// Wall-clock seconds (summed over merged sections).
    pub seconds: f64,
    /// The plan digest of each run merged into this section (one per page size and shard;
    /// [`crate::powerloss::suite::plan_digest`]), in the order merged; see
    /// [`PowerlossSection::plan_digest`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plan_digests: Vec<String>,
}

// The seed stays the first section's.
merge_fields!(PowerlossSection: states, recordings, calls, sync_points, per_version, per_page_size, per_kind,
    verdicts, per_version_verdicts, reader_sources, crc_ahead, data_ahead, torn, old_size,
    disagreeing, upstream_states, reader_panics, disagreements, upstream, seconds, plan_digests);

impl PowerlossSection {
    /// Counts a recording.
    pub fn add_recording(&mut self, rec: &Recording) {
        self.recordings += 1;
        self.calls += rec.steps.len().saturating_sub(1) as u64;
        for s in rec.steps.iter().skip(1) {
            self.sync_points[0] += u64::from(s.data_sync.is_some());
            self.sync_points[1] += u64::from(s.meta_sync.is_some());
        }
    }

    /// Counts a judged state of `rec`.
    pub fn add(&mut self, j: &Judged, rec: &Recording) {
        self.states += 1;
        *self.per_version.entry(j.tag.clone()).or_insert(0) += 1;
        *self
            .per_kind
            .entry(format!("{} {}", j.tag, j.kind))
            .or_insert(0) += 1;
        for (s, p, v) in &j.verdicts {
            let k = verdict_key(*s, *p, v);
            *self
                .per_version_verdicts
                .entry(format!("{} {k}", j.tag))
                .or_insert(0) += 1;
            *self.verdicts.entry(k).or_insert(0) += 1;
        }
        self.crc_ahead += u64::from(j.state.crc_ahead());
        self.data_ahead += u64::from(j.state.data_ahead());
        self.torn += u64::from(j.state.torn());
        self.old_size += u64::from(j.state.old_size(rec));
        self.reader_panics += u64::from(j.panicked);
        for s in &j.sources {
            *self.reader_sources.entry(s.clone()).or_insert(0) += 1;
        }
        let line = || saved_line(j.line(), &j.saved);
        if j.disagrees() {
            self.disagreeing += 1;
            if self.disagreements.len() < MAX_LINES {
                self.disagreements.push(line());
            }
        }
        if j.upstream() {
            self.upstream_states += 1;
            if self.upstream.len() < MAX_LINES {
                self.upstream.push(line());
            }
        }
    }

    /// Passed: some state was judged, none disagrees, the reader never panicked, and the
    /// official library read enough of them ([`enough_official_reads`]).
    pub fn passed(&self) -> bool {
        self.states > 0
            && self.disagreeing == 0
            && self.reader_panics == 0
            && enough_official_reads(self.states, self.upstream_states)
    }

    /// The digest of what the seed drew for its runs, whatever order they were merged in
    /// ([`combine`]); `None` for a section from before digests.
    pub fn plan_digest(&self) -> Option<String> {
        combine(&self.plan_digests)
    }

    /// For the report's summary line.
    pub fn phrase(&self) -> String {
        phrase(
            "power-loss",
            self.states,
            self.disagreeing,
            self.upstream_states,
        )
    }

    /// Human-readable: counts, then upstream findings and disagreements.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "power-loss suite: {} — {} crash states judged ({} recordings, {} official calls, \
             sync points data {} / meta {}; seed {}; {:.1} s)",
            if self.passed() { "PASS" } else { "FAIL" },
            self.states,
            self.recordings,
            self.calls,
            self.sync_points[0],
            self.sync_points[1],
            self.seed,
            self.seconds
        );
        let _ = writeln!(
            s,
            "  beyond SIGKILL: .crc ahead of data {}, data ahead of .crc {}, torn page {}, size as last synced {}",
            self.crc_ahead, self.data_ahead, self.torn, self.old_size
        );
        let _ = writeln!(s, "  per version: {}", counts_line(&self.per_version));
        if !self.per_page_size.is_empty() {
            let _ = writeln!(s, "  per page size: {}", counts_line(&self.per_page_size));
        }
        let _ = writeln!(s, "  per version and kind: {}", counts_line(&self.per_kind));
        let _ = writeln!(s, "  Store's region: {}", counts_line(&self.reader_sources));
        for (k, n) in &self.verdicts {
            let _ = writeln!(s, "  {k}: {n}");
        }
        for tag in self.per_version.keys() {
            let prefix = format!("{tag} ");
            let v: Vec<String> = self
                .per_version_verdicts
                .iter()
                .filter_map(|(k, n)| Some(format!("{} {n}", k.strip_prefix(&prefix)?)))
                .collect();
            let _ = writeln!(s, "  {tag}: {}", v.join(", "));
        }
        let _ = writeln!(
            s,
            "  reader panics: {}; upstream findings: {}; disagreeing: {}",
            self.reader_panics, self.upstream_states, self.disagreeing
        );
        findings_text(
            &mut s,
            &self.upstream,
            &self.disagreements,
            self.states,
            self.upstream_states,
            self.plan_digest(),
        );
        s
    }
}

impl StateSection for PowerlossSection {
    fn ending(&mut self) -> (&mut f64, &mut BTreeMap<String, u64>, u64) {
        (&mut self.seconds, &mut self.per_page_size, self.states)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::merge::Merge;

    fn section(states: u64, disagreeing: u64) -> PowerlossSection {
        PowerlossSection {
            states,
            recordings: 1,
            per_version: [("v2.4.2".to_string(), states)].into_iter().collect(),
            verdicts: [("discard/store agree".to_string(), states)]
                .into_iter()
                .collect(),
            disagreeing,
            crc_ahead: 2,
            ..PowerlossSection::default()
        }
    }

    #[test]
    fn merge_sums_and_an_empty_or_disagreeing_run_fails() {
        assert!(section(5, 0).passed());
        assert!(!section(0, 0).passed());
        assert!(!section(5, 1).passed());
        let panicked = PowerlossSection {
            reader_panics: 1,
            ..section(5, 0)
        };
        assert!(!panicked.passed());
        let m = PowerlossSection::merged([section(5, 0), section(7, 1)]).unwrap();
        assert_eq!(
            (m.states, m.disagreeing, m.crc_ahead, m.recordings),
            (12, 1, 4, 2)
        );
        assert_eq!(m.per_version["v2.4.2"], 12);
        assert!(!m.passed());
        assert!(m.to_text().contains("FAIL"));
        let back: PowerlossSection =
            serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert!(PowerlossSection::merged(Vec::new()).is_none());
    }
}
