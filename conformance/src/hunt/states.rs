//! The hunt's fault, power-loss and disk-error batches: one suite run on one version with the
//! hunt's seed, its disagreeing states (the judge's word, [`crate::judge::state`]) as
//! findings. Each state is saved by its suite (`verdict.txt` and `state/` of
//! [`crate::fault::suite::run_suite`] and [`crate::diskerr::suite::run_diskerr`]; the shrunk
//! `state/` and `state.txt` of [`crate::powerloss::suite::run_powerloss`]), and its replay line
//! judges that folder again (`faults run --replay`, `faults powerloss --replay`, `faults
//! diskerr --replay`). A finding's compared kind is its verdict class ([`verdict_class`]), its
//! first op the class of its damage ([`damage_class`]), crash state ([`crash_class`]) or
//! failed calls ([`failure_class`]), unless the store it came from already disagrees: the
//! written store before its damage, the files at the crash point before any page is lost.
//! Then the first op is [`UNDAMAGED`] or [`NO_LOST_PAGE`] and the compared kind that store's
//! verdict class (judged once per writer run or crash point), so that one reader bug does not
//! split into a signature per damage or per refusal it causes. A disk-error state is the
//! store its writer left: it has no store before it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::diskerr::record::DiskerrRecord;
use crate::diskerr::suite::{run_diskerr, DiskerrConfig};
use crate::error::Result;
use crate::fault::damage::{Mutation, Which};
use crate::fault::official::strategy_name;
use crate::fault::suite::{judge_state, run_suite, SuiteCommon, SuiteConfig, Target};
use crate::fault::summary::StateRecord;
use crate::hunt::signature::{Example, Finding, Suite, Unit};
use crate::hunt::HuntConfig;
use crate::judge::state::{disagrees, Verdict, Verdicts};
use crate::powerloss::judged::Judged;
use crate::powerloss::states::CrashState;
use crate::powerloss::suite::{judge_files, run_powerloss, PowerlossConfig, KINDS};
use crate::sides::reads::ReaderFn;
use crate::vocab::kind::{Features, StoreKind};
use crate::vocab::STORE_ID;
use crate::writer::child::ChildExe;
use crate::writer::Kill;

/// The replay command of a saved fault state.
pub const FAULT_REPLAY: &str = "cargo run --release -p conformance -- faults run --replay";

/// The replay command of a saved power-loss state.
pub const POWERLOSS_REPLAY: &str =
    "cargo run --release -p conformance -- faults powerloss --replay";

/// The replay command of a saved disk-error state.
pub const DISKERR_REPLAY: &str = "cargo run --release -p conformance -- faults diskerr --replay";

/// The first op of a fault finding whose writer's store, undamaged, disagrees already.
pub const UNDAMAGED: &str = "no damage needed (the written store)";

/// The first op of a power-loss finding whose crash point, with no page lost, disagrees already.
pub const NO_LOST_PAGE: &str = "no lost page needed (the crash point)";

/// The kinds a batch of `suite` runs on a version with `features`: the hunt's kinds that it
/// has (and, for power loss, that the power-loss suite models, [`KINDS`]).
pub fn batch_kinds(suite: Suite, kinds: &[StoreKind], features: &Features) -> Vec<StoreKind> {
    kinds
        .iter()
        .copied()
        .filter(|k| k.supported_by(features))
        .filter(|k| suite != Suite::Powerloss || KINDS.contains(k))
        .collect()
}

/// One batch's plan: which suite, version, kinds, seed, states, and where it saves.
pub struct Batch<'a> {
    /// [`Suite::Fault`], [`Suite::Powerloss`] or [`Suite::Diskerr`].
    pub suite: Suite,
    /// The version.
    pub tag: &'a str,
    /// Its kinds ([`batch_kinds`], not empty).
    pub kinds: Vec<StoreKind>,
    /// The batch's seed.
    pub seed: u64,
    /// States to judge.
    pub states: usize,
    /// The round (its folder under the suite's).
    pub round: u64,
}

impl Batch<'_> {
    /// Sets a suite configuration's shared fields to this batch's: its version, kinds and
    /// seed, saving under `save`, reading with `reader`.
    fn apply(&self, common: &mut SuiteCommon, save: PathBuf, reader: ReaderFn) {
        common.tags = vec![self.tag.to_string()];
        common.kinds.clone_from(&self.kinds);
        common.seed = self.seed;
        common.save = Some(save);
        common.reader = reader;
    }
}

/// A batch's findings so far, with the verdict class of the store each came from when that
/// store already disagrees (judged once per `K`: writer run or crash point).
struct Findings<K> {
    found: Vec<Finding>,
    whole: HashMap<K, Option<String>>,
}

impl<K: std::hash::Hash + Eq> Findings<K> {
    fn new() -> Findings<K> {
        Findings {
            found: Vec::new(),
            whole: HashMap::new(),
        }
    }

    /// Adds `f`; when the store of `key` disagrees already (`judge`, called once per key), its
    /// compared kind becomes that store's class and its first op `first_op`.
    fn push(
        &mut self,
        mut f: Finding,
        key: K,
        judge: impl FnOnce() -> Option<String>,
        first_op: &str,
    ) {
        if let Some(class) = self.whole.entry(key).or_insert_with(judge) {
            f.compared = class.clone();
            f.first_op = first_op.to_string();
        }
        self.found.push(f);
    }
}

/// Runs `batch`: `judged` is called after every judged state, with the findings so far.
/// Returns its findings, in state order.
pub fn run_batch(
    cfg: &HuntConfig,
    exe: &ChildExe,
    batch: &Batch<'_>,
    mut judged: impl FnMut(&[Finding]),
) -> Result<Vec<Finding>> {
    // The suites' reader paths read the clock the official children read: the real one.
    let _real_clock = crate::vocab::test_clock::Scoped::new(false);
    let save = cfg
        .out
        .join(batch.suite.name())
        .join(format!("round-{}", batch.round));
    let suffix = &cfg.replay_suffix;
    match batch.suite {
        Suite::Fault => {
            let mut sc = SuiteConfig::new(exe.clone(), batch.states);
            batch.apply(&mut sc.common, save, cfg.state_reader);
            // Per writer run: the verdict class of its store, undamaged, when it disagrees.
            let mut f = Findings::new();
            run_suite(&sc, |r| {
                if r.disagrees() {
                    let before = r.saved.as_ref().map(|d| d.join("before-damage"));
                    f.push(
                        fault_finding(r, batch.seed, suffix),
                        (r.tag.clone(), r.kind, r.writer_seed, r.kill.arg()),
                        || before.and_then(|d| store_disagrees(&sc, &r.tag, r.kind, &d)),
                        UNDAMAGED,
                    );
                }
                judged(&f.found);
            })?;
            Ok(f.found)
        }
        Suite::Powerloss => {
            let mut pc = PowerlossConfig::new(exe.clone(), batch.states);
            batch.apply(&mut pc.common, save, cfg.state_reader);
            // Per crash point: the verdict class of its files, with no page lost, when they
            // disagree.
            let mut f = Findings::new();
            run_powerloss(&pc, |j| {
                if j.disagrees() {
                    let at = j.saved.as_ref().map(|d| d.join("crash-point"));
                    f.push(
                        powerloss_finding(j, batch.seed, suffix),
                        (j.tag.clone(), j.kind, j.seed, j.state.point),
                        || at.and_then(|d| files_disagree(&pc, &j.tag, j.kind, &d)),
                        NO_LOST_PAGE,
                    );
                }
                judged(&f.found);
            })?;
            Ok(f.found)
        }
        Suite::Diskerr => {
            let mut dc = DiskerrConfig::new(exe.clone(), batch.states);
            batch.apply(&mut dc.common, save, cfg.state_reader);
            // Each state is the store its writer left: there is no store before it to judge.
            let mut found = Vec::new();
            run_diskerr(&dc, |r| {
                if r.disagrees() {
                    found.push(diskerr_finding(r, batch.seed, suffix));
                }
                judged(&found);
            })?;
            Ok(found)
        }
        other => Err(crate::error::Error::Other(format!(
            "{other}: not a state suite"
        ))),
    }
}

/// The [`verdict_class`] of the fault suite's verdicts on the store in `dir` (official `tag`,
/// `kind`) when they disagree; `None` when they do not or it cannot be judged.
fn store_disagrees(sc: &SuiteConfig, tag: &str, kind: StoreKind, dir: &Path) -> Option<String> {
    let judged = (|| {
        let scratch = tempfile::Builder::new()
            .prefix("mmkv-hunt-undamaged")
            .tempdir()
            .map_err(|e| crate::error::Error::io(std::env::temp_dir(), e))?;
        judge_state(
            &sc.common.exe,
            &Target::load(tag, kind)?,
            sc.common.reader,
            dir,
            scratch.path(),
        )
    })();
    judged
        .ok()
        .filter(|v| disagrees(v))
        .map(|v| verdict_class(&v))
}

/// The [`verdict_class`] of the power-loss suite's verdicts on the files in `dir` (official
/// `tag`, `kind`) when they disagree; `None` when they do not or cannot be judged.
fn files_disagree(pc: &PowerlossConfig, tag: &str, kind: StoreKind, dir: &Path) -> Option<String> {
    let data = dir.join(STORE_ID);
    let files = [
        std::fs::read(&data).unwrap_or_default(),
        std::fs::read(mmkv_reader::meta_path(&data)).unwrap_or_default(),
    ];
    judge_files(pc, tag, kind, &files)
        .ok()
        .filter(|v| disagrees(v))
        .map(|v| verdict_class(&v))
}

/// The example of a saved state: its folder, replay line (`command FOLDER` and `suffix`) and
/// description (the folder's `text` file).
fn example(saved: Option<&Path>, text: &str, command: &str, seed: u64, suffix: &str) -> Example {
    let dir = saved.map(|d| d.display().to_string()).unwrap_or_default();
    Example {
        replay: format!("{command} {dir}{suffix}"),
        workload: saved
            .and_then(|d| std::fs::read_to_string(d.join(text)).ok())
            .unwrap_or_default(),
        dir,
        seed,
    }
}

fn fault_finding(r: &StateRecord, seed: u64, suffix: &str) -> Finding {
    Finding {
        suite: Suite::Fault,
        unit: Unit::version(&r.tag),
        kind: r.kind,
        compared: verdict_class(&r.verdicts),
        first_op: damage_class(r.kill, &r.damage.0),
        example: example(
            r.saved.as_deref(),
            "verdict.txt",
            FAULT_REPLAY,
            seed,
            suffix,
        ),
    }
}

fn powerloss_finding(j: &Judged, seed: u64, suffix: &str) -> Finding {
    Finding {
        suite: Suite::Powerloss,
        unit: Unit::version(&j.tag),
        kind: j.kind,
        compared: verdict_class(&j.verdicts),
        first_op: crash_class(&j.state),
        example: example(
            j.saved.as_deref(),
            "state.txt",
            POWERLOSS_REPLAY,
            seed,
            suffix,
        ),
    }
}

fn diskerr_finding(r: &DiskerrRecord, seed: u64, suffix: &str) -> Finding {
    Finding {
        suite: Suite::Diskerr,
        unit: Unit::version(&r.tag),
        kind: r.kind,
        compared: verdict_class(&r.verdicts),
        first_op: failure_class(r),
        example: example(
            r.saved.as_deref(),
            "verdict.txt",
            DISKERR_REPLAY,
            seed,
            suffix,
        ),
    }
}

/// The class of a state's first disagreeing verdict: `strategy/path: what`, where what is
/// `reader refused`, `reader panicked`, `key only in official`, `key only in reader` or
/// `get TYPE` (the first difference the judge lists; keys and values left out, so that one
/// bug gives one class).
pub fn verdict_class(verdicts: &Verdicts) -> String {
    let Some((s, p, detail)) = verdicts.iter().find_map(|(s, p, v)| match v {
        Verdict::Disagree(d) => Some((s, p, d)),
        _ => None,
    }) else {
        return "none".to_string();
    };
    format!(
        "{}/{}: {}",
        strategy_name(*s),
        p.name(),
        detail_class(detail)
    )
}

/// The class of one `Disagree` detail (the judge's text, [`crate::judge::state::judge`]).
fn detail_class(detail: &str) -> String {
    if detail.starts_with("reader refused") {
        return "reader refused".to_string();
    }
    if detail.starts_with("reader panicked") {
        return "reader panicked".to_string();
    }
    // `official N keys, reader M keys: FIRST; ...`
    let first = detail
        .split_once(": ")
        .map_or(detail, |(_, rest)| rest)
        .split("; ")
        .next()
        .unwrap_or("");
    if first.ends_with(": official has it, reader not") {
        return "key only in official".to_string();
    }
    if first.ends_with(": reader has it, official not") {
        return "key only in reader".to_string();
    }
    match first.rsplit_once(" get ") {
        Some((_, ty)) => format!("get {}", ty.split(':').next().unwrap_or(ty)),
        None => "other".to_string(),
    }
}

/// The class of a fault state: how its writer ended, then the kinds of mutation its damage
/// has, each once in a fixed order (`killed during an op: truncate data + flip meta`; offsets,
/// lengths, order and repeats left out).
pub fn damage_class(kill: Kill, damage: &[Mutation]) -> String {
    let kill = match kill {
        Kill::Never => "not killed",
        Kill::BeforeOp(_) => "killed before an op",
        Kill::During(..) => "killed during an op",
    };
    let class = |m: &Mutation| match m {
        Mutation::Truncate(Which::Data, _) => (0, "truncate data"),
        Mutation::Truncate(Which::Meta, _) => (1, "truncate meta"),
        Mutation::Flip(Which::Data, ..) => (2, "flip data"),
        Mutation::Flip(Which::Meta, ..) => (3, "flip meta"),
        Mutation::Remove(Which::Data) => (4, "remove data"),
        Mutation::Remove(Which::Meta) => (5, "remove meta"),
    };
    let mut parts: Vec<(u8, &str)> = damage.iter().map(class).collect();
    parts.sort();
    parts.dedup();
    if parts.is_empty() {
        return format!("{kill}: no damage");
    }
    let names: Vec<&str> = parts.into_iter().map(|(_, n)| n).collect();
    format!("{kill}: {}", names.join(" + "))
}

/// The class of a disk-error state: how its writer ended, then the wrapped calls that failed,
/// each once in name order (`finished: msync + write failed`; errors, counts and the official
/// calls they failed in left out), or `no call failed`.
pub fn failure_class(r: &DiskerrRecord) -> String {
    let calls: std::collections::BTreeSet<&str> = r
        .failures
        .iter()
        .flat_map(|f| f.failed.keys().map(String::as_str))
        .collect();
    let end = r.end.label();
    if calls.is_empty() {
        return format!("{end}: no call failed");
    }
    let calls: Vec<&str> = calls.into_iter().collect();
    format!("{end}: {} failed", calls.join(" + "))
}

/// The class of a crash state: what it has that no SIGKILL leaves (`crc ahead`, `data ahead`,
/// `torn`, joined by `+`), else `in order` (pages written since the last sync reached the
/// disk in order) or `as synced` (none did).
pub fn crash_class(state: &CrashState) -> String {
    let mut parts = Vec::new();
    if state.crc_ahead() {
        parts.push("crc ahead");
    }
    if state.data_ahead() {
        parts.push("data ahead");
    }
    if state.torn() {
        parts.push("torn");
    }
    if !parts.is_empty() {
        return parts.join("+");
    }
    if state.files.iter().all(|f| f.pages.is_empty()) {
        "as synced".to_string()
    } else {
        "in order".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sides::reads::ReaderPath;
    use mmkv_sys::ErrorStrategy;

    #[test]
    fn verdicts_are_classed_without_keys_or_values() {
        let d = |s: &str| {
            vec![
                (ErrorStrategy::Discard, ReaderPath::Store, Verdict::Agree),
                (
                    ErrorStrategy::Recover,
                    ReaderPath::Store,
                    Verdict::Disagree(s.to_string()),
                ),
            ]
        };
        let cases = [
            (
                "official 3 keys, reader 3 keys: key \"k: 1\" get i32: official -1 | reader -; key \"b\" get u32: x",
                "recover/store: get i32",
            ),
            (
                "official 3 keys, reader 2 keys: key \"k2\": official has it, reader not",
                "recover/store: key only in official",
            ),
            (
                "official 1 keys, reader 2 keys: key \"z\": reader has it, official not",
                "recover/store: key only in reader",
            ),
            (
                "reader refused (crc mismatch), official read 4 keys",
                "recover/store: reader refused",
            ),
            ("reader panicked: boom", "recover/store: reader panicked"),
        ];
        for (detail, class) in cases {
            assert_eq!(verdict_class(&d(detail)), class, "{detail}");
        }
        assert_eq!(verdict_class(&d("")[..1].to_vec()), "none");
    }

    #[test]
    fn damage_classes_leave_out_offsets() {
        let m = [
            Mutation::Flip(Which::Meta, 7, 3),
            Mutation::Truncate(Which::Data, 4096),
            Mutation::Flip(Which::Meta, 9, 0),
        ];
        assert_eq!(
            damage_class(Kill::During(3, 120), &m),
            "killed during an op: truncate data + flip meta"
        );
        assert_eq!(
            damage_class(Kill::BeforeOp(9), &[Mutation::Remove(Which::Meta)]),
            "killed before an op: remove meta"
        );
        assert_eq!(damage_class(Kill::Never, &[]), "not killed: no damage");
    }
}
