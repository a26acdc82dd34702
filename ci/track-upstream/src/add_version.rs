//! `add-version`: pin a new upstream tag in versions.yaml, then build and test it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::edit::{upsert_entry, EditAction};
use crate::error::{Error, Result};
use crate::npm::{fetch_tarball, NpmClient};
use crate::tags::Tag;
use crate::tarball::{find_embedded_core, parse_mmkv_version, sha512_integrity};
use crate::versions::{NpmSource, Source};

/// Whether the `MMKV_VERSION` that `MMKVPredef.h` declares is acceptable for `tag`: it must
/// be `tag`, or exactly `accept` when the maintainer knows the tag's header lags behind
/// (upstream v2.1.1's header still says v2.1.0).
pub fn predef_matches(tag: Tag, declared: &str, accept: Option<&str>) -> bool {
    Tag::parse(declared) == Some(tag) || accept.is_some_and(|a| a == declared)
}

/// Packs `package@version`, checks that its embedded Core is `tag` (see [`predef_matches`]),
/// and checks the tarball's sha512 against the registry's `dist.integrity`. Returns the
/// source entry to record.
pub fn resolve_npm_source(
    client: &dyn NpmClient,
    tag: Tag,
    package: &str,
    version: &str,
    accept_predef: Option<&str>,
) -> Result<NpmSource> {
    let bytes = fetch_tarball(client, package, version)?;
    let computed = sha512_integrity(&bytes);
    let core = find_embedded_core(&bytes)
        .map_err(|message| Error::Tarball {
            package: package.to_string(),
            version: version.to_string(),
            message,
        })?
        .ok_or_else(|| Error::NoEmbeddedCore {
            package: package.to_string(),
            version: version.to_string(),
        })?;
    if !predef_matches(tag, &core.mmkv_version, accept_predef) {
        return Err(Error::TagMismatch {
            requested: tag.to_string(),
            found: core.mmkv_version,
            origin: format!("{package}@{version}"),
        });
    }
    let registry = client.dist_integrity(package, version)?;
    if registry != computed {
        return Err(Error::IntegrityMismatch {
            package: package.to_string(),
            version: version.to_string(),
            computed,
            registry,
        });
    }
    Ok(NpmSource {
        package: package.to_string(),
        version: version.to_string(),
        integrity: computed,
        path: core.core_path,
    })
}

/// Checks that the Core directory `dir` (holding `MMKVPredef.h`) is `tag`
/// (see [`predef_matches`]).
pub fn check_core_dir(tag: Tag, dir: &Path, accept_predef: Option<&str>) -> Result<()> {
    let header = dir.join("MMKVPredef.h");
    let text = std::fs::read_to_string(&header).map_err(|e| Error::io(&header, e))?;
    let found = parse_mmkv_version(&text)
        .ok_or_else(|| Error::Edit(format!("{} declares no MMKV_VERSION", header.display())))?;
    if !predef_matches(tag, &found, accept_predef) {
        return Err(Error::TagMismatch {
            requested: tag.to_string(),
            found,
            origin: dir.display().to_string(),
        });
    }
    Ok(())
}

/// Applies the edit to the versions file at `path` (written only when it changes).
pub fn update_versions_file(path: &Path, tag: Tag, source: &Source) -> Result<EditAction> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let edited = upsert_entry(&text, tag, source)?;
    if edited.action != EditAction::Unchanged {
        std::fs::write(path, &edited.text).map_err(|e| Error::io(path, e))?;
    }
    Ok(edited.action)
}

/// One step of the build-and-test sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Environment variables to set.
    pub env: Vec<(String, String)>,
    /// Arguments to `cargo`.
    pub cargo_args: Vec<String>,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (k, v) in &self.env {
            write!(f, "{k}={v} ")?;
        }
        write!(f, "cargo {}", self.cargo_args.join(" "))
    }
}

/// The commands that build and test a freshly added tag: record its golden corpus when
/// `corpus/<tag>` does not exist yet, then the mmkv-sys tests and the conformance suite,
/// all restricted to the tag with `MMKV_VERSIONS` (and pointed at `core_dir` through the
/// `MMKV_CORE_<TAG>` override when given).
pub fn test_steps(tag: Tag, repo_root: &Path, core_dir: Option<&Path>) -> Vec<Step> {
    let mut env = vec![("MMKV_VERSIONS".to_string(), tag.to_string())];
    if let Some(dir) = core_dir {
        env.push((tag.core_override_var(), dir.display().to_string()));
    }
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut steps = Vec::new();
    let corpus = format!("corpus/{tag}");
    if !repo_root.join(&corpus).is_dir() {
        let tag_s = tag.to_string();
        steps.push(Step {
            env: env.clone(),
            cargo_args: args(&[
                "run",
                "--release",
                "-p",
                "conformance",
                "--",
                "record",
                "--tag",
                &tag_s,
                "--out",
                &corpus,
            ]),
        });
    }
    steps.push(Step {
        env: env.clone(),
        cargo_args: args(&["test", "-p", "mmkv-sys"]),
    });
    steps.push(Step {
        env,
        cargo_args: args(&["test", "-p", "conformance"]),
    });
    steps
}

/// Runs the steps in `repo_root` with the `cargo` that runs us (`$CARGO`) or `cargo`,
/// stopping at the first failure.
pub fn run_steps(steps: &[Step], repo_root: &Path, log: &mut dyn Write) -> Result<()> {
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    for step in steps {
        writeln!(log, "+ {step}").map_err(|e| Error::io("<stdout>", e))?;
        let status = Command::new(&cargo)
            .args(&step.cargo_args)
            .envs(step.env.iter().map(|(k, v)| (k, v)))
            .current_dir(repo_root)
            .status()
            .map_err(|e| Error::Command {
                command: step.to_string(),
                message: e.to_string(),
            })?;
        if !status.success() {
            return Err(Error::Command {
                command: step.to_string(),
                message: status.to_string(),
            });
        }
    }
    Ok(())
}
