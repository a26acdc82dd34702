//! `add-version`: pin a new upstream tag in versions.yaml, then build and test it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::edit::{upsert_entry, EditAction};
use crate::error::{Error, Result};
use crate::npm::{fetch_tarball, NpmClient};
use crate::tags::Tag;
use crate::tarball::{find_embedded_core, parse_mmkv_version, sha512_integrity};
use crate::versions::{GitSource, NpmSource, Source};

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
    let core_tree = npm_core_tree(&bytes, &core.core_path).map_err(|message| Error::Tarball {
        package: package.to_string(),
        version: version.to_string(),
        message,
    })?;
    Ok(NpmSource {
        package: package.to_string(),
        version: version.to_string(),
        integrity: computed,
        path: core.core_path,
        core_tree: Some(core_tree),
    })
}

/// The git tree hash of the Core directory `core_path` of a package tarball: what
/// `git rev-parse <tag>:Core` prints when the package ships exactly the tag's `Core/`.
pub fn npm_core_tree(tgz: &[u8], core_path: &str) -> std::result::Result<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let prefix = Path::new(core_path.trim_end_matches('/'));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path().map_err(|e| e.to_string())?.into_owned();
        let Ok(rel) = path.strip_prefix(prefix) else {
            continue;
        };
        if !entry.header().entry_type().is_file()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            continue;
        }
        let target = dir.path().join("Core").join(rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut data).map_err(|e| e.to_string())?;
        std::fs::write(&target, data).map_err(|e| e.to_string())?;
        let exec = entry.header().mode().unwrap_or(0o644) & 0o111 != 0;
        std::fs::set_permissions(
            &target,
            std::fs::Permissions::from_mode(if exec { 0o755 } else { 0o644 }),
        )
        .map_err(|e| e.to_string())?;
    }
    mmkv_versions::tree_hash(&dir.path().join("Core")).map_err(|e| e.to_string())
}

/// Fetches `refs/tags/<tag>` from `fetch_url` (upstream, or a mirror / bundle given with
/// `MMKV_GIT_URL`) into a scratch repository, checks that its `Core/MMKVPredef.h` is `tag`
/// (see [`predef_matches`]; a header without `MMKV_VERSION` needs `--accept-predef none`), and
/// returns the git source to record: the upstream URL, the tag and `git rev-parse <tag>:Core`.
pub fn resolve_git_source(
    tag: Tag,
    fetch_url: &str,
    accept_predef: Option<&str>,
) -> Result<GitSource> {
    let scratch = tempfile::tempdir().map_err(|e| Error::io("<tempdir>", e))?;
    let git = |args: &[&str]| -> Result<String> {
        let out = crate::command::output(
            Command::new("git")
                .arg("--git-dir")
                .arg(scratch.path())
                .args(args)
                .env("GIT_TERMINAL_PROMPT", "0")
                .env_remove("GIT_DIR"),
            &format!("git {}", args.join(" ")),
        )?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    };
    git(&["init", "-q", "--bare"])?;
    let refspec = format!("+refs/tags/{tag}:refs/tags/{tag}");
    git(&["fetch", "-q", "--no-tags", fetch_url, &refspec])?;
    let core_tree = git(&["rev-parse", "--verify", &format!("refs/tags/{tag}:Core")])?
        .trim()
        .to_string();
    let header = git(&["show", &format!("refs/tags/{tag}:Core/MMKVPredef.h")])?;
    let declared = parse_mmkv_version(&header).unwrap_or_else(|| "none".to_string());
    if !predef_matches(tag, &declared, accept_predef) {
        return Err(Error::TagMismatch {
            requested: tag.to_string(),
            found: declared,
            origin: format!("refs/tags/{tag} of {fetch_url}"),
        });
    }
    Ok(GitSource {
        url: mmkv_versions::UPSTREAM_GIT_URL.to_string(),
        tag,
        core_tree,
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

/// The source already recorded for `tag` in the versions file at `path` (empty when none).
pub fn current_source(path: &Path, tag: Tag) -> Result<Source> {
    use crate::versions::{VersionsFile, VersionsFileExt};
    let file = VersionsFile::load(path)?;
    Ok(file
        .entry(tag)
        .map(|e| e.source.clone())
        .unwrap_or_default())
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
/// `corpus/<tag>` does not exist yet and run the mmkv-sys tests, both restricted to the tag with
/// `MMKV_VERSIONS`, then the conformance suite with the tag and the `anchors` (the old versions
/// its tests compare with, see [`crate::plan`]), as a CI job builds a slice. `core_dir` is
/// passed through the `MMKV_CORE_<TAG>` override when given.
pub fn test_steps(
    tag: Tag,
    repo_root: &Path,
    core_dir: Option<&Path>,
    anchors: &[Tag],
) -> Vec<Step> {
    let mut env = vec![("MMKV_VERSIONS".to_string(), tag.to_string())];
    if let Some(dir) = core_dir {
        env.push((tag.core_override_var(), dir.display().to_string()));
    }
    let mut anchored = env.clone();
    anchored[0].1 = crate::plan::with_anchors(&[tag], anchors);
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
        env: anchored,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_steps_record_then_test_the_tag_and_its_anchors() {
        let t = |s: &str| Tag::parse(s).unwrap();
        let root = tempfile::tempdir().unwrap();
        let anchors = [t("v1.3.9"), t("v2.5.0")];
        let steps = test_steps(t("v2.5.0"), root.path(), None, &anchors);
        let shown: Vec<String> = steps.iter().map(Step::to_string).collect();
        assert_eq!(
            shown,
            [
                "MMKV_VERSIONS=v2.5.0 cargo run --release -p conformance -- record --tag v2.5.0 --out corpus/v2.5.0",
                "MMKV_VERSIONS=v2.5.0 cargo test -p mmkv-sys",
                "MMKV_VERSIONS=v2.5.0,v1.3.9 cargo test -p conformance",
            ]
        );
        std::fs::create_dir_all(root.path().join("corpus/v2.5.0")).unwrap();
        let steps = test_steps(t("v2.5.0"), root.path(), None, &anchors);
        assert_eq!(steps.len(), 2, "an existing corpus is not recorded again");
    }
}
