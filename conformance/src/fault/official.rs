//! The official side of a damaged state: the library reopens a copy of the store with one
//! error strategy and reads every visible key with every getter. This runs in a child process
//! (`conformance faults read ...`), so that a crash or a hang of the official library on damaged files is
//! recorded as an upstream finding instead of taking the harness down.

use std::path::Path;

use mmkv_sys::ErrorStrategy;

use crate::error::{Error, Result};
use crate::sides::official::OfficialLib;
use crate::sides::reads::{OfficialOutcome, Reads};
use crate::sides::sys::SysLib;
use crate::vocab::kind::StoreKind;
use crate::vocab::STORE_ID;
use crate::writer::child::{child_timeout, run_watched, ChildExe};

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
/// after it). The child reads its discard copies first: list them first.
pub fn spawn_reads(
    exe: &ChildExe,
    tag: &str,
    kind: StoreKind,
    runs: &[(ErrorStrategy, &Path)],
) -> Result<Vec<OfficialOutcome>> {
    let mut cmd = exe.command(&["faults", "read"]);
    cmd.arg("--tag").arg(tag).arg("--kind").arg(kind.id());
    for (s, d) in runs {
        cmd.arg(format!("--{}", strategy_name(*s))).arg(d);
    }
    let child = run_watched(cmd, child_timeout(), None, true)?;
    let mut lines = child.lines.iter();
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
            None => match &child.status {
                None => OfficialOutcome::Hung,
                Some(st) => {
                    OfficialOutcome::Crashed(format!("{st}; stderr: {}", child.stderr_tail()))
                }
            },
        };
        out.push(outcome);
    }
    Ok(out)
}
