//! The official side of a damaged state: the library reopens a copy of the store with one
//! error strategy and reads every visible key with every getter. This runs in a child process
//! (`conformance faults read ...`), so that a crash or a hang of the official library on damaged files is
//! recorded as an upstream finding instead of taking the harness down.

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mmkv_sys::ErrorStrategy;

use crate::error::{Error, Result};
use crate::fault::cli::ChildExe;
use crate::fault::reads::Reads;
use crate::fault::writer::STORE_ID;
use crate::sides::official::OfficialLib;
use crate::sides::sys::SysLib;
use crate::vocab::kind::StoreKind;

/// How long one official child may take before it is called hung and killed.
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(30);

/// What the official library did with one damaged state and one strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OfficialOutcome {
    /// It opened the store and read these keys and values.
    Read(Reads),
    /// `mmkvWithID` failed or a call threw (message).
    Failed(String),
    /// The child died (by signal, or exited abnormally) before reporting (description).
    Crashed(String),
    /// The child did not finish within [`CHILD_TIMEOUT`].
    Hung,
}

/// Strategy name on the command line and in reports.
pub fn strategy_name(s: ErrorStrategy) -> &'static str {
    match s {
        ErrorStrategy::Discard => "discard",
        ErrorStrategy::Recover => "recover",
    }
}

/// Child side: sets `strategy`, opens [`STORE_ID`] in `dir` as `kind` (without enabling key
/// expiration: the library takes it from the meta flags, as the reader does), reads every key
/// it lists (and `containsKey` keeps: expired keys are invisible) with every getter.
pub fn read_official(
    lib: &SysLib,
    dir: &Path,
    kind: StoreKind,
    strategy: ErrorStrategy,
) -> Result<Reads> {
    let err = |e: mmkv_sys::Error| Error::Official {
        tag: lib.tag().to_string(),
        message: e.to_string(),
    };
    lib.official().set_error_strategy(strategy).map_err(err)?;
    let features = lib.features();
    let getters = features.getters();
    let mut store = lib.open(dir, STORE_ID, kind)?;
    let mut reads = Reads {
        getters: getters.clone(),
        ..Reads::default()
    };
    for key in store.all_keys(true)? {
        if !store.contains(&key)? {
            continue;
        }
        let mut row = Vec::with_capacity(getters.len());
        for &ty in &getters {
            row.push(store.get(&key, ty)?);
        }
        reads.keys.insert(key, row);
    }
    store.close()?;
    Ok(reads)
}

/// Child side of `faults read`: one line per (strategy, dir): `ok <reads>` or `err <message>`.
pub fn child_read_main(lib: &SysLib, kind: StoreKind, runs: &[(ErrorStrategy, &Path)]) {
    use std::io::Write as _;
    let mut out = std::io::stdout();
    for (strategy, dir) in runs {
        let line = match read_official(lib, dir, kind, *strategy) {
            Ok(r) => format!("ok {}", r.encode()),
            Err(e) => format!("err {}", e.to_string().replace('\n', " ")),
        };
        let _ = writeln!(out, "{} {line}", strategy_name(*strategy));
        let _ = out.flush();
    }
}

/// Parent side: runs `conformance faults read` for each `(strategy, dir)` in one child and
/// collects one outcome per run (a crash or hang applies to the run in progress and the runs
/// after it).
pub fn spawn_reads(
    exe: &ChildExe,
    tag: &str,
    kind: StoreKind,
    runs: &[(ErrorStrategy, &Path)],
) -> Result<Vec<OfficialOutcome>> {
    let mut cmd = exe.command("read");
    cmd.arg("--tag").arg(tag).arg("--kind").arg(kind.id());
    for (s, d) in runs {
        cmd.arg(format!("--{}", strategy_name(*s))).arg(d);
    }
    let (status, stdout, stderr) = run_with_timeout(cmd, CHILD_TIMEOUT)?;
    let mut lines = stdout.lines();
    let mut out = Vec::new();
    for (s, _) in runs {
        let prefix = format!("{} ", strategy_name(*s));
        let outcome = match lines.next().and_then(|l| l.strip_prefix(&prefix)) {
            Some(rest) => {
                if let Some(enc) = rest.strip_prefix("ok ") {
                    Reads::decode(enc)
                        .map(OfficialOutcome::Read)
                        .unwrap_or_else(|| {
                            OfficialOutcome::Failed(format!("unparsable child output {rest:?}"))
                        })
                } else {
                    OfficialOutcome::Failed(rest.strip_prefix("err ").unwrap_or(rest).to_string())
                }
            }
            None => match &status {
                None => OfficialOutcome::Hung,
                Some(st) => OfficialOutcome::Crashed(format!(
                    "{st}; stderr: {}",
                    stderr
                        .lines()
                        .last()
                        .unwrap_or("")
                        .chars()
                        .take(300)
                        .collect::<String>()
                )),
            },
        };
        out.push(outcome);
    }
    Ok(out)
}

/// Runs `cmd` with piped output; `None` status when it was killed after `timeout`.
pub fn run_with_timeout(
    mut cmd: Command,
    timeout: Duration,
) -> Result<(Option<std::process::ExitStatus>, String, String)> {
    let what = format!("{cmd:?}");
    let io = |e: std::io::Error| Error::Other(format!("spawning {what}: {e}"));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io)?;
    let mut so = child.stdout.take();
    let mut se = child.stderr.take();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = so.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = se.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(Error::Other(format!("waiting for child: {e}"))),
        }
    };
    let stdout = t_out.join().unwrap_or_default();
    let stderr = t_err.join().unwrap_or_default();
    Ok((status, stdout, stderr))
}
