//! What a differential run produced, and the one place where a difference becomes either an
//! accepted upstream divergence or a failure of the reader.

use std::fmt::Write as _;

use crate::differential::stats::RunStats;
use crate::judge::compare::Mismatch;
use crate::judge::exceptions::{count_uses, Exception};

/// An accepted upstream difference (see [`crate::judge::exceptions`]).
#[derive(Debug, Clone)]
pub struct Divergence {
    /// The check it was seen in.
    pub stage: String,
    /// What differed.
    pub mismatch: Mismatch,
    /// The table row that accepts it.
    pub exception: &'static Exception,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{}] {} (accepted: {}, {})",
            self.stage,
            self.mismatch,
            self.exception.reference,
            self.exception.difference.describe()
        )
    }
}

/// What one run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// Reader failures, each with the check it was seen in.
    pub mismatches: Vec<(String, Mismatch)>,
    /// Differences accepted by a row of the exceptions table.
    pub divergences: Vec<Divergence>,
    /// Why a migration run stopped before its end: an older version could not read the file
    /// a newer one left (not a failure: that version is no reference for such files).
    pub stopped: Option<String>,
    /// What ran.
    pub stats: RunStats,
    /// The run's folder (deleted on drop).
    pub dir: tempfile::TempDir,
    /// The folder of the store files: `dir`, or its name-space root in it
    /// ([`crate::differential::workload::Workload::name_space`]).
    pub store_dir: std::path::PathBuf,
    /// Store id (file name) inside `store_dir`.
    pub store_id: String,
    /// The official clock's second when the run began (see [`Repro::clock`]).
    ///
    /// [`Repro::clock`]: crate::differential::workload::Repro::clock
    pub started: u32,
}

impl RunOutcome {
    /// True when the reader agreed everywhere.
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty()
    }

    /// True when the official library lost its own files (an accepted upstream bug) and the
    /// run stopped comparing there.
    pub fn official_lost_files(&self) -> bool {
        self.divergences
            .iter()
            .any(|d| d.exception.difference.stops_run())
    }

    /// The differing reads, one per line (accepted upstream divergences last).
    pub fn diff_text(&self) -> String {
        let mut out = String::new();
        for (stage, m) in &self.mismatches {
            let _ = writeln!(out, "[{stage}] {m}");
        }
        for d in &self.divergences {
            let _ = writeln!(out, "{d}");
        }
        out
    }

    /// A short summary (first few mismatches) for test failure messages.
    pub fn summary(&self, max: usize) -> String {
        let mut out = format!("{} mismatch(es)", self.mismatches.len());
        for (stage, m) in self.mismatches.iter().take(max) {
            let _ = write!(out, "\n  [{stage}] {m}");
        }
        out
    }
}
/// The judgements of a run so far.
#[derive(Debug, Default)]
pub struct Judged {
    /// Reader failures, each with the check it was seen in.
    pub mismatches: Vec<(String, Mismatch)>,
    /// Differences accepted by a row of the exceptions table.
    pub divergences: Vec<Divergence>,
    /// The official library lost its own files (accepted), or an older version cannot read
    /// a newer file: nothing more can be judged.
    pub lost: bool,
    /// Why a migration run stopped early (an older version cannot read the newer file).
    pub stopped: Option<String>,
}

impl Judged {
    /// Records `mismatch`, seen at `stage`: an accepted divergence when `exception` (the row
    /// whose recogniser explained it) is given (one use of the row), else a failure
    /// (`unlisted`, when given, says why no row applies).
    pub fn record(
        &mut self,
        stage: String,
        mismatch: Mismatch,
        exception: Option<&'static Exception>,
        unlisted: Option<&str>,
    ) {
        match (exception, unlisted) {
            (Some(exception), _) => {
                count_uses(exception, 1);
                self.divergences.push(Divergence {
                    stage,
                    mismatch,
                    exception,
                })
            }
            (None, Some(why)) => self.mismatches.push((format!("{stage} ({why})"), mismatch)),
            (None, None) => self.mismatches.push((stage, mismatch)),
        }
    }

    /// Records a difference the table accepts and stops the run (the official instance no
    /// longer matches its files).
    pub fn accept_and_stop(
        &mut self,
        stage: String,
        mismatch: Mismatch,
        exception: &'static Exception,
    ) {
        self.record(stage, mismatch, Some(exception), None);
        self.lost = true;
    }
}
