//! The result of a fault-suite run: every judged state and the counts the report shows.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mmkv_sys::ErrorStrategy;

use crate::fault::damage::Damage;
use crate::fault::official::strategy_name;
use crate::judge::state::{disagrees, upstream, Verdict, Verdicts};
use crate::sides::reads::ReaderPath;
use crate::vocab::kind::StoreKind;
use crate::writer::Kill;

/// One judged state.
#[derive(Debug, Clone)]
pub struct StateRecord {
    /// Index in the run.
    pub index: usize,
    /// Official version that wrote it and reads it back.
    pub tag: String,
    /// Store configuration.
    pub kind: StoreKind,
    /// Seed of the writer run.
    pub writer_seed: u64,
    /// How the writer died.
    pub kill: Kill,
    /// Damage applied afterwards.
    pub damage: Damage,
    /// What the reader (`Store`, default strategy) did (`Ok(n keys)` or its error).
    pub reader: std::result::Result<usize, String>,
    /// Verdict per official strategy and reader path.
    pub verdicts: Verdicts,
    /// Where the state was saved (disagreements and upstream findings).
    pub saved: Option<PathBuf>,
}

/// A verdict's count key: `discard/store agree`.
pub fn verdict_key(s: ErrorStrategy, p: ReaderPath, v: &Verdict) -> String {
    format!("{}/{} {}", strategy_name(s), p.name(), v.label())
}

/// Verdicts on one line: `discard/store=agree discard/dump=agree ...`.
pub fn verdicts_line(verdicts: &[(ErrorStrategy, ReaderPath, Verdict)]) -> String {
    let v: Vec<String> = verdicts
        .iter()
        .map(|(s, p, v)| format!("{}/{}={v}", strategy_name(*s), p.name()))
        .collect();
    v.join(" ")
}

impl StateRecord {
    /// One line: index, tag, kind, kill, damage, verdicts.
    pub fn line(&self) -> String {
        format!(
            "#{} {} {} seed {} kill {} damage [{}] reader {} | {}",
            self.index,
            self.tag,
            self.kind,
            self.writer_seed,
            self.kill.arg(),
            self.damage,
            match &self.reader {
                Ok(n) => format!("{n} keys"),
                Err(e) => format!("error ({e})"),
            },
            verdicts_line(&self.verdicts)
        )
    }

    /// True when some verdict is an unexplained difference.
    pub fn disagrees(&self) -> bool {
        disagrees(&self.verdicts)
    }
}

/// The result of a suite run.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Every judged state.
    pub records: Vec<StateRecord>,
    /// Writer runs performed.
    pub writer_runs: usize,
    /// Writer runs that ended by SIGKILL.
    pub killed_runs: usize,
    /// The digest of what the seed drew ([`crate::fault::suite::plan_digest`]).
    pub plan_digest: Option<String>,
}

impl Summary {
    /// Number of judged states.
    pub fn states(&self) -> usize {
        self.records.len()
    }

    /// States with an unexplained difference.
    pub fn disagreements(&self) -> Vec<&StateRecord> {
        self.records.iter().filter(|r| r.disagrees()).collect()
    }

    /// States where the official library crashed, hung or failed.
    pub fn upstream(&self) -> Vec<&StateRecord> {
        self.records
            .iter()
            .filter(|r| upstream(&r.verdicts))
            .collect()
    }

    /// Verdict label -> count, per strategy and reader path (`discard/store agree` ...).
    pub fn counts(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for (k, n) in self.counts_by_version().into_values().flatten() {
            *m.entry(k).or_insert(0) += n;
        }
        m
    }

    /// [`Summary::counts`] per official version (tag).
    pub fn counts_by_version(&self) -> BTreeMap<String, BTreeMap<String, u64>> {
        let mut m: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for r in &self.records {
            for (s, p, v) in &r.verdicts {
                let k = verdict_key(*s, *p, v);
                *m.entry(r.tag.clone()).or_default().entry(k).or_insert(0) += 1;
            }
        }
        m
    }
}
