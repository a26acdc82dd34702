//! One judged state of the disk-error run: the writer run (seed, schedule, kill point), how it
//! ended, the official calls that saw failures, and the verdicts.

use std::path::{Path, PathBuf};

use crate::fault::summary::verdicts_line;
use crate::judge::state::{disagrees, upstream, Verdicts};
use crate::vocab::kind::StoreKind;
use crate::writer::{IoFailure, WriterSpec};

/// How a writer run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriterEnd {
    /// It ran every op, synced and closed.
    Finished,
    /// Killed (SIGKILL) where its kill point said.
    Killed,
    /// The official library crashed it (the signal, the last line of stderr).
    Crashed(String),
    /// It exited with an error (the last line of stderr).
    Failed(String),
    /// The watchdog killed it.
    Hung,
}

impl WriterEnd {
    /// Short label for counts: `finished`, `killed`, `crashed`, `failed`, `hung`.
    pub fn label(&self) -> &'static str {
        match self {
            WriterEnd::Finished => "finished",
            WriterEnd::Killed => "killed",
            WriterEnd::Crashed(_) => "crashed",
            WriterEnd::Failed(_) => "failed",
            WriterEnd::Hung => "hung",
        }
    }

    /// The library crashed or hung the writer, or it failed: an upstream finding of the
    /// writer (its state is judged all the same).
    pub fn upstream(&self) -> bool {
        !matches!(self, WriterEnd::Finished | WriterEnd::Killed)
    }
}

impl std::fmt::Display for WriterEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriterEnd::Crashed(s) | WriterEnd::Failed(s) => write!(f, "{} ({s})", self.label()),
            _ => f.write_str(self.label()),
        }
    }
}

/// One judged state.
#[derive(Debug, Clone)]
pub struct DiskerrRecord {
    /// Index in the run.
    pub index: usize,
    /// Official version that wrote it and reads it back.
    pub tag: String,
    /// Store configuration.
    pub kind: StoreKind,
    /// The writer run (seed, schedule, kill point).
    pub writer: WriterSpec,
    /// How the writer ended.
    pub end: WriterEnd,
    /// The official calls during which scheduled calls failed, in order.
    pub failures: Vec<IoFailure>,
    /// Verdict per official strategy and reader path.
    pub verdicts: Verdicts,
    /// Where the state was saved (disagreements and upstream findings).
    pub saved: Option<PathBuf>,
}

impl DiskerrRecord {
    /// One line: index, tag, kind, writer, its end and failures, verdicts (the first three
    /// words after the index are what [`crate::diskerr::suite::replay`] reads back).
    pub fn line(&self) -> String {
        let failed: Vec<String> = self
            .failures
            .iter()
            .map(|f| {
                let calls: Vec<String> = f.failed.iter().map(|(c, n)| format!("{c}x{n}")).collect();
                format!("{} {} -> {}", f.at, calls.join("+"), f.returned)
            })
            .collect();
        format!(
            "#{} {} {} seed {} io-faults {} kill {} writer {} failed [{}] | {}",
            self.index,
            self.tag,
            self.kind,
            self.writer.seed,
            self.writer.io_faults,
            self.writer.kill.arg(),
            self.end,
            failed.join("; "),
            verdicts_line(&self.verdicts)
        )
    }

    /// Some verdict is an unexplained difference.
    pub fn disagrees(&self) -> bool {
        disagrees(&self.verdicts)
    }

    /// The official library crashed, hung or failed: reading the state (a verdict), or
    /// writing it.
    pub fn upstream(&self) -> bool {
        upstream(&self.verdicts) || self.end.upstream()
    }

    /// Scheduled calls failed during the run.
    pub fn failed_any(&self) -> bool {
        !self.failures.is_empty()
    }
}

/// The command line that judges a saved folder again.
pub fn replay_line(folder: &Path) -> String {
    format!("conformance faults diskerr --replay {}", folder.display())
}
