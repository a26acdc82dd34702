//! Runs a workload through the official library of one version in a fresh temporary folder,
//! then compares the reader with the official getters.
//!
//! The comparison happens twice:
//! 1. `live`: after `sync()`, with the official instance still open (its getters read its
//!    in-process state; the reader reads the files it shares through `MAP_SHARED`);
//! 2. `reopened`: after `close()` and a fresh open of the official instance (its state now
//!    comes from the files only). The reads compared are the same reader reads as in `live`
//!    (taken once, before any official getter ran), and then those of a freshly opened reader
//!    (`reopened, fresh reader`).
//!
//! The reader is judged against what the official library makes of the FILES: a difference
//! seen in the `reopened` stage is a failure. A difference seen only in the `live` stage, where
//! the reopened official agrees with the reader, means the official instance's in-memory state
//! disagreed with its own files: an upstream bug, not a reader one (e.g. Tencent/MMKV#1351,
//! encrypted single-process stores in v1.3.3-v1.3.7 can return a wrong value for a key just
//! overwritten with a larger one, until reloaded). Those are kept as
//! [`RunOutcome::divergences`] and reported, but do not fail the run. Likewise, when the
//! official key set changes across close/reopen (the library cannot read back its own files,
//! e.g. the same bug leaving an encrypted file it then discards), there is no trustworthy
//! reference and the whole run is a divergence.
//!
//! The reader is read before any official getter: official getters delete expired keys as a
//! side effect (a deletion record is appended), and the reader must be judged on the files as
//! the workload left them.
//!
//! Time: the reader uses the system clock, like the official library (`time(nullptr)`).
//! Workloads only use expire durations far from "now" or [`SHORT_EXPIRE`]; after a short one
//! the runner sleeps until it has certainly passed before anything is compared.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::compare::{capture_reader, compare_with_official, Mismatch, ReaderReads};
use crate::error::{Error, Result};
use crate::kind::StoreKind;
use crate::official::{OfficialLib, OfficialStore};
use crate::value::ValueType;
use crate::view::ReaderFactory;
use crate::workload::{Op, Repro, Workload, SHORT_EXPIRE};

/// Seconds since the epoch, as `time(nullptr)` sees them.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Sleeps until `now_secs() >= secs`.
pub fn sleep_until_secs(secs: u64) {
    loop {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        if now.as_secs() >= secs {
            return;
        }
        let left = Duration::from_secs(secs) - now;
        std::thread::sleep(left + Duration::from_millis(5));
    }
}

/// What one run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// Reader failures, each with the stage (`live` / `reopened`) it was seen in: every
    /// `reopened` difference, and the `live` ones that the `reopened` stage confirms.
    pub mismatches: Vec<(String, Mismatch)>,
    /// `live`-only differences: the official in-memory state disagreed with what the
    /// official library reads back from the files, and the reader agreed with the latter.
    pub divergences: Vec<Mismatch>,
    /// `set()` calls the library refused.
    pub rejected_sets: usize,
    /// The folder holding the store files (deleted on drop).
    pub dir: tempfile::TempDir,
    /// Store id (file name) inside `dir`.
    pub store_id: String,
}

impl RunOutcome {
    /// True when the reader agreed everywhere.
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty()
    }

    /// The differing reads, one per line (official in-memory divergences last).
    pub fn diff_text(&self) -> String {
        let mut out = String::new();
        for (stage, m) in &self.mismatches {
            let _ = writeln!(out, "[{stage}] {m}");
        }
        for m in &self.divergences {
            let _ = writeln!(
                out,
                "[live only, official in-memory state vs its own files; not a reader failure] {m}"
            );
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

/// The keys a comparison covers: every key the workload touched.
fn compare_keys(workload: &Workload) -> Vec<Vec<u8>> {
    workload
        .touched_keys()
        .into_iter()
        .map(String::into_bytes)
        .collect()
}

fn open_official(
    lib: &dyn OfficialLib,
    dir: &Path,
    id: &str,
    kind: StoreKind,
    workload: &Workload,
) -> Result<Box<dyn OfficialStore>> {
    let mut store = lib.open(dir, id, kind)?;
    if kind.key_expire() {
        store.enable_key_expire(workload.default_expire)?;
    }
    Ok(store)
}

/// What a comparison stage needs besides the official instance.
struct StageCtx<'a> {
    lib: &'a dyn OfficialLib,
    reader: &'a dyn ReaderFactory,
    path: &'a Path,
    kind: StoreKind,
    keys: &'a [Vec<u8>],
    getters: &'a [ValueType],
}

impl StageCtx<'_> {
    /// Opens a fresh reader and captures every read (`Err` = the reader cannot open).
    fn capture(&self) -> std::result::Result<ReaderReads, Mismatch> {
        let view = self
            .reader
            .open(self.path, self.kind.crypt_key(), self.kind.aes256())
            .map_err(|e| Mismatch {
                key: None,
                what: "open".to_string(),
                official: "opened".to_string(),
                reader: format!("error: {e}"),
            })?;
        Ok(capture_reader(view.as_ref(), self.keys, self.getters))
    }

    /// Compares captured reads with `official`, appending tagged mismatches to `out`.
    fn compare(
        &self,
        name: &str,
        reads: &std::result::Result<ReaderReads, Mismatch>,
        official: &mut dyn OfficialStore,
        out: &mut Vec<(String, Mismatch)>,
    ) -> Result<()> {
        match reads {
            Err(m) => out.push((name.to_string(), m.clone())),
            Ok(reads) => {
                for m in compare_with_official(official, &self.lib.features(), reads, self.getters)?
                {
                    out.push((name.to_string(), m));
                }
            }
        }
        Ok(())
    }
}

/// Executes `workload` on a fresh store of `kind` with the official library `lib`, then
/// compares the reader made by `reader` with it (see the module docs).
pub fn run_workload(
    lib: &dyn OfficialLib,
    kind: StoreKind,
    workload: &Workload,
    reader: &dyn ReaderFactory,
) -> Result<RunOutcome> {
    let dir = tempfile::Builder::new()
        .prefix("conformance-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let id = kind.id().to_string();
    let path = dir.path().join(&id);
    let getters = lib.features().getters();
    let keys = compare_keys(workload);
    let mut rejected_sets = 0;
    let mut last_short: Option<u64> = None;

    let mut official = open_official(lib, dir.path(), &id, kind, workload)?;
    for op in &workload.ops {
        match op {
            Op::Set { key, value, expire } => {
                if !official.set(key.as_bytes(), value, *expire)? {
                    rejected_sets += 1;
                }
                if matches!(expire, Some(d) if *d != 0 && *d <= SHORT_EXPIRE) {
                    last_short = Some(now_secs());
                }
            }
            Op::Remove { key } => official.remove(key.as_bytes())?,
            Op::ClearAll => official.clear_all()?,
            Op::Trim => official.trim()?,
            Op::Reopen => {
                official.close()?;
                official = open_official(lib, dir.path(), &id, kind, workload)?;
            }
            Op::WaitExpiry => {
                if let Some(t) = last_short.take() {
                    sleep_until_secs(t + u64::from(SHORT_EXPIRE));
                }
            }
        }
    }
    if let Some(t) = last_short {
        sleep_until_secs(t + u64::from(SHORT_EXPIRE));
    }
    official.sync()?;

    let ctx = StageCtx {
        lib,
        reader,
        path: &path,
        kind,
        keys: &keys,
        getters: &getters,
    };
    // The reader reads the files exactly as the workload left them, before any official
    // getter runs (official getters delete expired keys as a side effect).
    let before = ctx.capture();
    let mut live = Vec::new();
    ctx.compare("live", &before, official.as_mut(), &mut live)?;
    let live_keys = visible_keys(official.as_mut())?;
    official.close()?;
    let mut official = open_official(lib, dir.path(), &id, kind, workload)?;
    let reopened_keys = visible_keys(official.as_mut())?;
    let mut reopened = Vec::new();
    ctx.compare("reopened", &before, official.as_mut(), &mut reopened)?;
    // A fresh reader on the files as they are now (deletion records of expired keys
    // included) must agree with the reopened official too.
    let after = ctx.capture();
    ctx.compare(
        "reopened, fresh reader",
        &after,
        official.as_mut(),
        &mut reopened,
    )?;
    official.close()?;
    if live_keys != reopened_keys {
        // The official library cannot read back what it wrote (e.g. v1.3.3-v1.3.7 after
        // MMKV#1351 corrupted an encrypted file: the reopened instance is empty): there is no
        // trustworthy reference, so everything is an upstream divergence.
        let render = |keys: &BTreeSet<Vec<u8>>| {
            format!(
                "{:?}",
                keys.iter()
                    .map(|k| String::from_utf8_lossy(k).into_owned())
                    .collect::<Vec<_>>()
            )
        };
        let mut divergences = vec![Mismatch {
            key: None,
            what: "official key set across close/reopen (it cannot read back its own files)"
                .to_string(),
            official: format!(
                "live {} / reopened {}",
                render(&live_keys),
                render(&reopened_keys)
            ),
            reader: "n/a".to_string(),
        }];
        divergences.extend(live.into_iter().chain(reopened).map(|(_, m)| m));
        return Ok(RunOutcome {
            mismatches: Vec::new(),
            divergences,
            rejected_sets,
            dir,
            store_id: id,
        });
    }
    let confirmed = |m: &Mismatch| {
        reopened
            .iter()
            .any(|(_, r)| r.key == m.key && r.what == m.what)
    };
    let (live_confirmed, divergences): (Vec<_>, Vec<_>) =
        live.into_iter().partition(|(_, m)| confirmed(m));
    let mut mismatches = live_confirmed;
    mismatches.extend(reopened);
    Ok(RunOutcome {
        mismatches,
        divergences: divergences.into_iter().map(|(_, m)| m).collect(),
        rejected_sets,
        dir,
        store_id: id,
    })
}

/// The keys the official instance reports as present (expired ones filtered by `containsKey`).
fn visible_keys(official: &mut dyn OfficialStore) -> Result<BTreeSet<Vec<u8>>> {
    let mut out = BTreeSet::new();
    for k in official.all_keys(true)? {
        if official.contains(&k)? {
            out.insert(k);
        }
    }
    Ok(out)
}

/// Where failure folders go: `$CONFORMANCE_FAILURES_DIR`, else
/// `$CARGO_TARGET_DIR/conformance-failures`, else `<workspace>/target/conformance-failures`.
pub fn failures_root() -> PathBuf {
    if let Some(p) = std::env::var_os("CONFORMANCE_FAILURES_DIR") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .unwrap_or(Path::new(env!("CARGO_MANIFEST_DIR")))
                .join("target")
        });
    target.join("conformance-failures")
}

/// Saves a failing run under `root/<tag>-<kind>-<n>/`: `workload.yaml`, the store files and
/// `diff.txt`. Returns the folder.
pub fn save_failure(root: &Path, repro: &Repro, outcome: &RunOutcome) -> Result<PathBuf> {
    std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
    let mut n = 0;
    let dir = loop {
        let candidate = root.join(format!("{}-{}-{n}", repro.tag, repro.kind.id()));
        match std::fs::create_dir(&candidate) {
            Ok(()) => break candidate,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(Error::io(&candidate, e)),
        }
    };
    let write = |name: &str, text: &str| -> Result<()> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| Error::io(&p, e))
    };
    write("workload.yaml", &repro.to_yaml())?;
    write("diff.txt", &outcome.diff_text())?;
    for entry in
        std::fs::read_dir(outcome.dir.path()).map_err(|e| Error::io(outcome.dir.path(), e))?
    {
        let entry = entry.map_err(|e| Error::io(outcome.dir.path(), e))?;
        if entry.path().is_file() {
            let to = dir.join(entry.file_name());
            std::fs::copy(entry.path(), &to).map_err(|e| Error::io(&to, e))?;
        }
    }
    Ok(dir)
}

/// The one line that reproduces a saved failure.
pub fn replay_command(dir: &Path) -> String {
    format!("cargo run -p conformance -- replay {}", dir.display())
}

/// Loads `workload.yaml` from a failure folder (or a YAML file path).
pub fn load_repro(path: &Path) -> Result<Repro> {
    let file = if path.is_dir() {
        path.join("workload.yaml")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
    Repro::from_yaml(&text).map_err(|e| Error::Workload {
        path: file,
        message: e.to_string(),
    })
}
