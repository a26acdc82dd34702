//! Where a coverage run's counters go: a folder of its own under its output folder, not the
//! shared build cache. libgcov writes each `.gcda` file at `GCOV_PREFIX` + the object's
//! absolute path ([`PREFIX_VAR`], given to every child process), so two runs over one
//! cached build (two checkouts on one machine, each with `MMKV_SYS_CACHE` shared) neither
//! mix nor remove each other's counters. gcov reads a `.gcda` beside its `.gcno`: each
//! version's `.gcno` files are copied into the mirrored build folder first.

use std::path::{Component, Path, PathBuf};

use crate::{Error, Result};

/// libgcov's variable: the folder that prefixes every counter file's path.
pub const PREFIX_VAR: &str = "GCOV_PREFIX";

/// The counters' folder of a run writing into `out`.
pub fn prefix(out: &Path) -> PathBuf {
    out.join("counters")
}

/// Where libgcov writes the counters of the objects in `build` under `prefix`.
pub fn mirrored(prefix: &Path, build: &Path) -> PathBuf {
    let relative: PathBuf = build
        .components()
        .filter(|c| !matches!(c, Component::RootDir | Component::Prefix(_)))
        .collect();
    prefix.join(relative)
}

/// Empties `prefix` and copies every `.gcno` file under each of `builds` to its mirrored
/// place; returns how many.
pub fn prepare(prefix: &Path, builds: &[&Path]) -> Result<usize> {
    if prefix.exists() {
        std::fs::remove_dir_all(prefix).map_err(|e| Error::io(prefix, e))?;
    }
    let mut copied = 0;
    for build in builds {
        copied += copy_notes(build, &mirrored(prefix, build))?;
    }
    Ok(copied)
}

/// Copies the `.gcno` files under `from` to the same places under `to`.
fn copy_notes(from: &Path, to: &Path) -> Result<usize> {
    let mut copied = 0;
    let entries = std::fs::read_dir(from).map_err(|e| Error::io(from, e))?;
    for entry in entries {
        let path = entry.map_err(|e| Error::io(from, e))?.path();
        let name = path.file_name().unwrap_or_default();
        if path.is_dir() {
            // cmake's compiler probe is no part of Core.
            if name.to_string_lossy().starts_with("CompilerId") {
                continue;
            }
            copied += copy_notes(&path, &to.join(name))?;
        } else if path.extension().is_some_and(|e| e == "gcno") {
            std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
            let dest = to.join(name);
            std::fs::copy(&path, &dest).map_err(|e| Error::io(&dest, e))?;
            copied += 1;
        }
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_mirrored_and_an_old_run_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let build = dir.path().join("cache/v2.4.2-coverage-1/build");
        let objects = build.join("CMakeFiles/core.dir");
        std::fs::create_dir_all(&objects).unwrap();
        std::fs::write(objects.join("MMKV.cpp.gcno"), b"notes").unwrap();
        std::fs::write(objects.join("MMKV.cpp.gcda"), b"someone else's").unwrap();
        std::fs::write(objects.join("MMKV.cpp.o"), b"object").unwrap();
        let probe = build.join("CMakeFiles/3.25.1/CompilerIdCXX");
        std::fs::create_dir_all(&probe).unwrap();
        std::fs::write(probe.join("a-CMakeCXXCompilerId.gcno"), b"probe").unwrap();
        let prefix = prefix(&dir.path().join("out"));
        let stale = prefix.join("stale.gcda");
        std::fs::create_dir_all(&prefix).unwrap();
        std::fs::write(&stale, b"last run").unwrap();
        assert_eq!(prepare(&prefix, &[build.as_path()]).unwrap(), 1);
        let mirror = mirrored(&prefix, &objects);
        assert!(
            mirror.starts_with(&prefix)
                && mirror.ends_with("cache/v2.4.2-coverage-1/build/CMakeFiles/core.dir")
        );
        assert_eq!(
            std::fs::read(mirror.join("MMKV.cpp.gcno")).unwrap(),
            b"notes"
        );
        assert!(!mirror.join("MMKV.cpp.gcda").exists());
        assert!(!mirror.join("MMKV.cpp.o").exists());
        assert!(!stale.exists());
    }
}
