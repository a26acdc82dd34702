//! One report cell (a version × store kind), run in a child process under a watchdog.
//!
//! Workloads call the official library in-process, and an official version can hang (v2.2.0
//! and v2.2.1 hold an exclusive `flock` while a store is open) or crash. So the report runs
//! each cell as `conformance cell ...` in a child process: before each workload the child
//! writes the workload (`workload.yaml` format) to a file and prints a heartbeat line; a
//! workload that runs longer than the timeout gets the child killed, and the cell fails with
//! that workload saved as a failure folder (and its replay line). A crash is a failing cell
//! the same way. The run goes on with the next cell.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::differential::failures::{failures_root, replay_command, save_failure};
use crate::differential::property::{check_property_with, PropConfig, PropOutcome};
use crate::differential::runner::run_workload;
use crate::differential::stats::RunStats;
use crate::differential::workload::{many_keys_workload, GenConfig, Repro};
use crate::error::{Error, Result};
use crate::sides::official::OfficialLib;
use crate::sides::view::ReaderFactory;
use crate::vocab::kind::StoreKind;
use crate::vocab::merge::Merge;
use crate::writer::child::{run_watched, secs_from_env, ChildExe};

/// The heartbeat line the child prints before each workload.
pub const HEARTBEAT: &str = "workload";
/// The prefix of the child's result line.
pub const RESULT_PREFIX: &str = "result ";

/// Default per-workload timeout in seconds (`CONFORMANCE_WORKLOAD_TIMEOUT` overrides).
pub const DEFAULT_WORKLOAD_TIMEOUT: u64 = 300;

/// The per-workload timeout: `CONFORMANCE_WORKLOAD_TIMEOUT` seconds, else the default.
pub fn workload_timeout() -> Duration {
    secs_from_env("CONFORMANCE_WORKLOAD_TIMEOUT", DEFAULT_WORKLOAD_TIMEOUT)
}

/// What one cell runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellSpec {
    /// The version.
    pub tag: String,
    /// The store kind.
    pub kind: StoreKind,
    /// Property cases per seed.
    pub cases: u32,
    /// Fixed seeds.
    pub seeds: Vec<u64>,
    /// Keys of the "many keys" workload run after the property (0 = none).
    pub many_keys: usize,
    /// Run on the real clock (sleeping through short expiries) instead of the test clock
    /// ([`crate::vocab::test_clock`]).
    #[serde(default)]
    pub real_clock: bool,
    /// Generator knobs (`None`: the defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gen: Option<GenConfig>,
}

/// What one cell produced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellResult {
    /// True when every workload passed (and at least one ran).
    pub passed: bool,
    /// Workloads that ran to completion and passed.
    pub workloads: u64,
    /// Their counters, summed.
    pub stats: RunStats,
    /// Failure details.
    pub failures: Vec<String>,
    /// Accepted upstream differences seen.
    pub notes: Vec<String>,
    /// The page size (bytes) the cell's official library ran with (its Core's
    /// `DEFAULT_MMAP_SIZE`), when it opened a store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u64>,
    /// Uses of the accepted-differences rows in the cell's process, by row code
    /// ([`crate::judge::exceptions::take_uses`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub exceptions_used: BTreeMap<String, u64>,
    /// The digest of the workloads the cell draws ([`crate::report::digest::cell_digest`]),
    /// set by the report from the cell's spec (whatever the child did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_digest: Option<String>,
}

impl CellResult {
    /// Adds one property run, named `what` (e.g. `v2.4.2 plain (seed 1)`): a failure's
    /// message, minimal workload size and reproduction line to `failures`; a pass's cases to
    /// `workloads`, its counters to `stats` and its accepted upstream difference, if any, to
    /// `notes`. Leaves `passed` to the caller.
    pub fn add_property(&mut self, what: &str, outcome: PropOutcome) {
        match outcome {
            PropOutcome::Fail {
                minimal,
                message,
                repro_line,
                ..
            } => self.failures.push(format!(
                "{what}: minimal workload has {} op(s): {message}\n  reproduce: {repro_line}",
                minimal.ops.len()
            )),
            PropOutcome::Pass {
                cases,
                stats,
                divergent_cases,
                divergence_example,
            } => {
                self.workloads += u64::from(cases);
                self.stats.absorb(stats);
                if divergent_cases > 0 {
                    self.notes.push(format!(
                        "{what}: in {divergent_cases} of {cases} cases an accepted upstream \
                         difference was seen; first: {}",
                        divergence_example.unwrap_or_default()
                    ));
                }
            }
        }
    }
}

/// Runs a cell in this process, on the test clock unless `spec.real_clock`. `running`: where to
/// write each workload before it runs.
pub fn run_cell(
    lib: &dyn OfficialLib,
    spec: &CellSpec,
    gen: GenConfig,
    reader: &dyn ReaderFactory,
    running: Option<&Path>,
    heartbeat: &(dyn Fn() + Sync),
) -> CellResult {
    let _clock = crate::vocab::test_clock::Scoped::new(!spec.real_clock);
    let mut out = CellResult::default();
    let kind = spec.kind;

    for &seed in &spec.seeds {
        let pc = PropConfig {
            cases: spec.cases,
            seed: Some(seed),
            gen,
            source_file: None,
            save_failures: true,
            running: running.map(Path::to_path_buf),
            ..PropConfig::default()
        };
        out.add_property(
            &format!("{} {kind} (seed {seed})", spec.tag),
            check_property_with(lib, kind, reader, &pc, heartbeat),
        );
    }
    if spec.many_keys > 0 {
        let workload = many_keys_workload(kind, lib.features(), spec.many_keys, 1);
        let repro = Repro {
            tag: spec.tag.clone(),
            kind,
            workload,
            then: Vec::new(),
            clock: None,
        };
        if let Some(p) = running {
            let _ = std::fs::write(p, repro.to_yaml());
        }
        heartbeat();
        match run_workload(lib, kind, &repro.workload, reader) {
            Ok(outcome) if outcome.passed() => {
                out.workloads += 1;
                out.stats.absorb(outcome.stats);
            }
            Ok(outcome) => {
                let saved = match save_failure(&failures_root(), &repro, &outcome) {
                    Ok(dir) => replay_command(&dir),
                    Err(e) => format!("(could not save: {e})"),
                };
                out.failures.push(format!(
                    "{} {kind} many-keys ({} keys): {}\n  reproduce: {saved}",
                    spec.tag,
                    spec.many_keys,
                    outcome.summary(6)
                ));
            }
            Err(e) => out
                .failures
                .push(format!("{} {kind} many-keys: harness error: {e}", spec.tag)),
        }
    }
    out.page_size = mmkv_sys::Official::load(&spec.tag)
        .ok()
        .and_then(|l| l.initialized_page_size());
    if out.workloads == 0 && out.failures.is_empty() {
        out.failures.push(format!(
            "{} {kind}: no workload ran (a cell that ran nothing has not passed)",
            spec.tag
        ));
    }
    out.passed = out.failures.is_empty();
    out
}

/// Runs a cell as `exe cell --spec JSON` in a child process with a per-workload `timeout`,
/// its official library at the page size this process would give it.
pub fn run_cell_child(exe: &Path, spec: &CellSpec, timeout: Duration) -> CellResult {
    run_cell_child_at(exe, spec, None, timeout)
}

/// [`run_cell_child`] with the child's official library on pages of `page_size` bytes
/// (`MMKV_SYS_PAGE_SIZE` in its environment; `None`: as inherited).
pub fn run_cell_child_at(
    exe: &Path,
    spec: &CellSpec,
    page_size: Option<u64>,
    timeout: Duration,
) -> CellResult {
    match run_child(exe, spec, page_size, timeout) {
        Ok(r) => r,
        Err(e) => CellResult {
            passed: false,
            failures: vec![format!("{} {}: {e}", spec.tag, spec.kind)],
            ..CellResult::default()
        },
    }
}

fn run_child(
    exe: &Path,
    spec: &CellSpec,
    page_size: Option<u64>,
    timeout: Duration,
) -> Result<CellResult> {
    let running_dir = tempfile::Builder::new()
        .prefix("conformance-cell-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let running = running_dir.path().join("workload.yaml");
    let spec_json = serde_json::to_string(spec).map_err(|e| Error::Other(e.to_string()))?;
    let mut child_exe = ChildExe::conformance(exe);
    if let Some(size) = page_size {
        child_exe = child_exe.with_page_size(size);
    }
    let mut cmd = child_exe.command(&["cell", "--spec", &spec_json, "--running"]);
    cmd.arg(&running)
        // The cell's own temporary directory (its stores; removed with it, even after a kill),
        // so cells running at once never share one.
        .env("TMPDIR", running_dir.path());
    let child = run_watched(cmd, timeout, Some(HEARTBEAT), false)?;
    let workloads_started = child.heartbeats;
    let result = child
        .lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix(RESULT_PREFIX))
        .and_then(|json| serde_json::from_str::<CellResult>(json).ok());
    let timed_out = child.status.is_none();
    let status = child.status.unwrap_or_default();
    if let (false, Some(r)) = (timed_out, result.clone()) {
        if status.success() || !r.passed {
            return Ok(r);
        }
    }
    let what = if timed_out {
        format!(
            "workload {workloads_started} exceeded the {} s watchdog (child killed)",
            timeout.as_secs()
        )
    } else {
        format!("the cell's child process died ({status}) in workload {workloads_started}")
    };
    let repro = save_running(&running, spec, page_size)
        .map(|d| replay_command(&d))
        .unwrap_or_else(|e| format!("(no saved workload: {e})"));
    Ok(CellResult {
        passed: false,
        workloads: workloads_started.saturating_sub(1),
        failures: vec![format!(
            "{} {}: {what}\n  reproduce: {repro}",
            spec.tag, spec.kind
        )],
        ..CellResult::default()
    })
}

/// Copies the workload a killed child was running into a failure folder.
fn save_running(running: &Path, spec: &CellSpec, page_size: Option<u64>) -> Result<PathBuf> {
    let text = std::fs::read_to_string(running).map_err(|e| Error::io(running, e))?;
    let root = failures_root();
    std::fs::create_dir_all(&root).map_err(|e| Error::io(&root, e))?;
    let mut n = 0;
    loop {
        let page = match page_size {
            Some(size) if size != crate::report::pages::DEFAULT_PAGE_SIZE => {
                format!("-page{}k", size / 1024)
            }
            _ => String::new(),
        };
        let dir = root.join(format!("{}-{}{page}-killed-{n}", spec.tag, spec.kind.id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                let p = dir.join("workload.yaml");
                std::fs::write(&p, text).map_err(|e| Error::io(&p, e))?;
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(Error::io(&dir, e)),
        }
    }
}
