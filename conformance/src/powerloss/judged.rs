//! One judged crash state: what the suite reports for it, and what the section counts.

use std::path::PathBuf;

use crate::fault::summary::verdicts_line;
pub use crate::judge::state::Verdicts;
use crate::judge::state::{disagrees, upstream};
use crate::powerloss::states::CrashState;
use crate::vocab::kind::StoreKind;

/// One judged state.
#[derive(Debug, Clone)]
pub struct Judged {
    /// Index in the run.
    pub index: usize,
    /// Official version.
    pub tag: String,
    /// Store kind.
    pub kind: StoreKind,
    /// Seed of the recording.
    pub seed: u64,
    /// The state.
    pub state: CrashState,
    /// Verdicts per strategy and reader path.
    pub verdicts: Verdicts,
    /// The reader panicked (counted as a disagreement).
    pub panicked: bool,
    /// Where `Store` took the region from, per strategy (`discard last-confirmed`, ...).
    pub sources: Vec<String>,
    /// Where it was saved.
    pub saved: Option<PathBuf>,
}

impl Judged {
    /// One line: index, version, kind, seed, state, verdicts.
    pub fn line(&self) -> String {
        format!(
            "#{} {} {} seed {} {} | {}",
            self.index,
            self.tag,
            self.kind,
            self.seed,
            self.state,
            verdicts_line(&self.verdicts)
        )
    }

    /// Some verdict is an unexplained difference.
    pub fn disagrees(&self) -> bool {
        disagrees(&self.verdicts)
    }

    /// Some verdict is an upstream finding (the official library crashed, hung or failed).
    pub fn upstream(&self) -> bool {
        upstream(&self.verdicts)
    }
}
