//! Failure folders: where a failing run is saved (workload, store files, diff), and how it is
//! loaded back and replayed.

use std::path::{Path, PathBuf};

use crate::differential::outcome::RunOutcome;
use crate::differential::workload::Repro;
use crate::error::{Error, Result};

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

/// Saves a failing run under `root/<tag>-<kind>-<n>/`: `workload.yaml` (with the second the
/// run began, [`Repro::clock`]), the store files and `diff.txt`. Returns the folder.
pub fn save_failure(root: &Path, repro: &Repro, outcome: &RunOutcome) -> Result<PathBuf> {
    let repro = &Repro {
        clock: Some(outcome.started),
        ..repro.clone()
    };
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
        std::fs::read_dir(&outcome.store_dir).map_err(|e| Error::io(&outcome.store_dir, e))?
    {
        let entry = entry.map_err(|e| Error::io(&outcome.store_dir, e))?;
        if entry.path().is_file() {
            let to = dir.join(entry.file_name());
            std::fs::copy(entry.path(), &to).map_err(|e| Error::io(&to, e))?;
        }
    }
    Ok(dir)
}

/// The one line that reproduces a saved failure.
pub fn replay_command(dir: &Path) -> String {
    format!("cargo run {REPLAY} {}", dir.display())
}

/// [`replay_command`] in a release build, as the long runs (`conformance hunt`) print it.
pub fn release_replay_command(dir: &Path) -> String {
    format!("cargo run --release {REPLAY} {}", dir.display())
}

/// The replay command after `cargo run`'s profile.
const REPLAY: &str = "-p conformance -- replay";

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
