//! Build-time source resolution for MMKV tags: the override variable, the verified vendored
//! copy, a `git fetch` of the tag pinned by its `Core/` tree hash, or an npm alternate that ships
//! the identical tree. Used by build.rs (and by tests/fetch.rs, which compiles it the same way).
//!
//! - `vendor/<tag>/Core` is used when `vendor/<tag>/stamp` records the pinned `core_tree` (written
//!   only after the extracted files were hashed, in Rust, and matched the pin): a second build
//!   touches neither the network nor git. (The tree is not re-hashed on every build: some
//!   versions' CMakeLists copy headers into `Core/include/` while building.)
//! - Otherwise the tag is fetched into the cache repository `vendor/.git-cache` (skipped when the
//!   cache already holds the pinned tree), `<fetched>:Core` is checked against the pin, and the
//!   tree is `git archive`d into `vendor/<tag>/Core`.
//! - A source that cannot be reached is [`FetchError::Unavailable`] (the tag stays unbuilt); a
//!   source that is reachable but not what the pin says is [`FetchError::Mismatch`] (the build
//!   stops).

use crate::versions::command::run;
use crate::versions::{override_var, tree_hash, GitSource, NpmSource, VersionEntry};
use base64::Engine as _;
use sha2::{Digest, Sha512};
use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Where a tag's Core directory came from.
pub enum Origin {
    /// `MMKV_CORE_<TAG>` pointed at it.
    Override(String),
    /// `vendor/<tag>/Core`, already verified (no git, no network).
    Cached(String),
    /// Fetched and verified now.
    Fetched(String),
}

impl Origin {
    pub fn describe(&self) -> String {
        match self {
            Origin::Override(v) => format!("override {v}"),
            Origin::Cached(p) => format!("vendored {p} (cached)"),
            Origin::Fetched(p) => format!("vendored {p} (fetched now)"),
        }
    }
}

/// A resolved Core directory.
pub struct CoreDir {
    pub path: PathBuf,
    pub origin: Origin,
}

/// Why a tag has no Core directory.
#[derive(Debug)]
pub enum FetchError {
    /// No source could be reached (offline, no mirror, no package): the tag stays unbuilt.
    Unavailable(String),
    /// A source answered with something other than what versions.yaml pins, or an override is
    /// not a Core directory: the build must stop.
    Mismatch(String),
}

impl FetchError {
    pub fn message(&self) -> &str {
        match self {
            FetchError::Unavailable(m) | FetchError::Mismatch(m) => m,
        }
    }
}

/// How sources are fetched.
pub struct Fetcher {
    /// The cache (`vendor/`).
    pub vendor: PathBuf,
    /// `MMKV_GIT_URL`: replaces every tag's git URL.
    pub git_url: Option<String>,
    /// Longest a `git fetch` may take before it counts as unreachable.
    pub timeout: Duration,
}

fn manual_help(tag: &str) -> String {
    format!(
        "Point MMKV_GIT_URL at a mirror of Tencent/MMKV (a clone or a git bundle file), or {var} \
         at a directory holding that version's Core (see vendor/README.md).",
        var = override_var(tag)
    )
}

fn check_core(dir: &Path) -> Result<(), String> {
    for f in ["CMakeLists.txt", "MMKV.h", "MMKVPredef.h"] {
        if !dir.join(f).is_file() {
            return Err(format!(
                "{} has no {f}: not an MMKV Core directory",
                dir.display()
            ));
        }
    }
    Ok(())
}

/// The stamp of a verified git tree.
fn tree_stamp(tree: &str) -> String {
    format!("git tree {tree}\n")
}

/// Whether `vendor/<name>` holds the verified tree `expected`.
fn holds_tree(tag_dir: &Path, expected: &str) -> bool {
    fs::read_to_string(tag_dir.join("stamp")).ok().as_deref() == Some(tree_stamp(expected).as_str())
        && check_core(&tag_dir.join("Core")).is_ok()
}

/// The stamp written next to an npm-only vendored Core (tags without a git source).
fn npm_stamp(npm: &NpmSource) -> String {
    format!(
        "{}@{}\n{}\n{}\n",
        npm.package, npm.version, npm.integrity, npm.path
    )
}

impl Fetcher {
    fn cache_repo(&self) -> PathBuf {
        self.vendor.join(".git-cache")
    }

    /// The URL a git source is fetched from.
    pub fn url_of<'a>(&'a self, git: &'a GitSource) -> &'a str {
        self.git_url.as_deref().unwrap_or(&git.url)
    }

    /// Resolves the Core directory of `entry`: override, verified cache, git, identical npm
    /// alternate, in that order.
    #[allow(dead_code)] // build.rs names its builds (extra tags) and calls resolve_named
    pub fn resolve(
        &self,
        entry: &VersionEntry,
        override_dir: Option<&str>,
    ) -> Result<CoreDir, FetchError> {
        let tag = entry.tag.to_string();
        self.resolve_named(&tag, entry, override_dir)
    }

    /// As [`Fetcher::resolve`], for a build named `name` (an extra tag may be `v2.4.3-dev`).
    pub fn resolve_named(
        &self,
        name: &str,
        entry: &VersionEntry,
        override_dir: Option<&str>,
    ) -> Result<CoreDir, FetchError> {
        if let Some(dir) = override_dir {
            let path = PathBuf::from(dir);
            let var = override_var(name);
            check_core(&path)
                .map_err(|e| FetchError::Mismatch(format!("{name}: {var} = {dir}: {e}")))?;
            let path = path
                .canonicalize()
                .map_err(|e| FetchError::Mismatch(format!("{name}: {dir}: {e}")))?;
            return Ok(CoreDir {
                path,
                origin: Origin::Override(var),
            });
        }
        let core = self.vendor.join(name).join("Core");
        match (&entry.source.git, &entry.source.npm) {
            (None, None) => Err(FetchError::Unavailable(format!(
                "{name}: versions.yaml names no source (`source: none`). {}",
                manual_help(name)
            ))),
            (Some(git), npm) => {
                if holds_tree(&self.vendor.join(name), &git.core_tree) {
                    return Ok(CoreDir {
                        path: core,
                        origin: Origin::Cached(format!("git tree {}", short(&git.core_tree))),
                    });
                }
                let git_err = match self.fetch_git(name, git) {
                    Ok(desc) => {
                        return Ok(CoreDir {
                            path: core,
                            origin: Origin::Fetched(desc),
                        })
                    }
                    Err(FetchError::Unavailable(e)) => e,
                    Err(e) => return Err(e),
                };
                match npm {
                    Some(npm) if npm.core_tree.as_deref() == Some(git.core_tree.as_str()) => {
                        self.fetch_npm(name, npm, Some(&git.core_tree)).map_err(|e| match e {
                            FetchError::Unavailable(npm_err) => FetchError::Unavailable(format!(
                                "{git_err}; the npm alternate failed too: {npm_err}"
                            )),
                            other => other,
                        })?;
                        Ok(CoreDir {
                            path: core,
                            origin: Origin::Fetched(format!(
                                "{}@{} (npm, identical to git tree {})",
                                npm.package,
                                npm.version,
                                short(&git.core_tree)
                            )),
                        })
                    }
                    Some(npm) => Err(FetchError::Unavailable(format!(
                        "{git_err} (the npm alternate {}@{} ships a different Core/ tree, see versions.yaml's note, so it is not used)",
                        npm.package, npm.version
                    ))),
                    None => Err(FetchError::Unavailable(git_err)),
                }
            }
            (None, Some(npm)) => {
                let stamp = self.vendor.join(name).join("stamp");
                if fs::read_to_string(&stamp).ok().as_deref() == Some(npm_stamp(npm).as_str())
                    && check_core(&core).is_ok()
                {
                    return Ok(CoreDir {
                        path: core,
                        origin: Origin::Cached(format!("{}@{}", npm.package, npm.version)),
                    });
                }
                self.fetch_npm(name, npm, npm.core_tree.as_deref())?;
                Ok(CoreDir {
                    path: core,
                    origin: Origin::Fetched(format!("{}@{}", npm.package, npm.version)),
                })
            }
        }
    }

    fn git(&self) -> Command {
        let mut c = Command::new("git");
        c.arg("--git-dir").arg(self.cache_repo());
        c.env("GIT_TERMINAL_PROMPT", "0");
        c.env("GIT_ASKPASS", "true");
        c.env_remove("GIT_DIR");
        c.env_remove("GIT_WORK_TREE");
        c.env_remove("GIT_INDEX_FILE");
        c
    }

    fn ensure_cache_repo(&self) -> Result<(), String> {
        let repo = self.cache_repo();
        if repo.join("HEAD").is_file() {
            return Ok(());
        }
        fs::create_dir_all(&self.vendor)
            .map_err(|e| format!("create {}: {e}", self.vendor.display()))?;
        run(
            Command::new("git")
                .arg("init")
                .arg("-q")
                .arg("--bare")
                .arg(&repo),
            None,
        )
        .map(|_| ())
        .map_err(|e| format!("cannot create the cache repository {}: {e}", repo.display()))
    }

    /// Whether the cache repository holds tree `id`.
    fn has_tree(&self, id: &str) -> bool {
        self.cache_repo().join("HEAD").is_file()
            && run(
                self.git()
                    .args(["cat-file", "-e", &format!("{id}^{{tree}}")]),
                None,
            )
            .is_ok()
    }

    /// Fetches `tags` from `url` into the cache repository in one `git fetch` (tags whose
    /// pinned tree the cache already holds are skipped). Errors are ignored here: the per-tag
    /// fetch in [`Fetcher::resolve`] retries and reports them.
    pub fn prefetch(&self, url: &str, sources: &[&GitSource]) {
        let missing: Vec<&&GitSource> = sources
            .iter()
            .filter(|g| !self.has_tree(&g.core_tree))
            .collect();
        if missing.is_empty() || self.ensure_cache_repo().is_err() {
            return;
        }
        let mut cmd = self.git();
        cmd.args(["fetch", "-q", "--no-tags", "--no-write-fetch-head", url]);
        for g in &missing {
            cmd.arg(format!("+refs/tags/{0}:refs/tags/{0}", g.tag));
        }
        let _ = run(&mut cmd, Some(self.timeout));
    }

    fn fetch_git(&self, name: &str, git: &GitSource) -> Result<String, FetchError> {
        let url = self.url_of(git);
        let unavailable = |e: String| {
            FetchError::Unavailable(format!(
                "{name}: cannot fetch refs/tags/{} from {url}: {e}. {}",
                git.tag,
                manual_help(name)
            ))
        };
        self.ensure_cache_repo().map_err(unavailable)?;
        let fetched_now = !self.has_tree(&git.core_tree);
        if fetched_now {
            run(
                self.git().args([
                    "fetch",
                    "-q",
                    "--no-tags",
                    "--no-write-fetch-head",
                    url,
                    &format!("+refs/tags/{0}:refs/tags/{0}", git.tag),
                ]),
                Some(self.timeout),
            )
            .map_err(unavailable)?;
            let actual = run(
                self.git()
                    .args(["rev-parse", "--verify", "-q", &format!("refs/tags/{}:Core", git.tag)]),
                None,
            )
            .map_err(|_| {
                FetchError::Mismatch(format!(
                    "{name}: the tag fetched from {url} has no Core/ directory (versions.yaml pins core_tree {})",
                    git.core_tree
                ))
            })?;
            let actual = String::from_utf8_lossy(&actual).trim().to_string();
            if actual != git.core_tree {
                return Err(FetchError::Mismatch(mismatch(
                    name,
                    url,
                    &git.core_tree,
                    &actual,
                )));
            }
        }
        let tar = run(
            self.git().args(["archive", "--format=tar", &git.core_tree]),
            None,
        )
        .map_err(|e| unavailable(format!("git archive {}: {e}", git.core_tree)))?;
        let staged = self.stage(name)?;
        let result = extract_tar(&tar, &staged.join("Core"))
            .map_err(|e| FetchError::Mismatch(format!("{name}: {e}")))
            .and_then(|_| self.install(name, &staged, &git.core_tree));
        let _ = fs::remove_dir_all(&staged);
        result?;
        Ok(format!(
            "git {url} {} (tree {}{})",
            git.tag,
            short(&git.core_tree),
            if fetched_now {
                ""
            } else {
                ", from the cache repository"
            }
        ))
    }

    fn stage(&self, name: &str) -> Result<PathBuf, FetchError> {
        let staged = self
            .vendor
            .join(format!(".partial-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&staged);
        fs::create_dir_all(&staged).map_err(|e| {
            FetchError::Unavailable(format!("{name}: create {}: {e}", staged.display()))
        })?;
        Ok(staged)
    }

    /// Verifies the staged `Core` against `tree` and moves it to `vendor/<name>/Core`.
    fn install(&self, name: &str, staged: &Path, tree: &str) -> Result<(), FetchError> {
        let core = staged.join("Core");
        let actual = tree_hash(&core).map_err(|e| FetchError::Unavailable(e.to_string()))?;
        if actual != tree {
            return Err(FetchError::Mismatch(format!(
                "{name}: the extracted Core/ has git tree {actual}, versions.yaml pins core_tree {tree}"
            )));
        }
        check_core(&core).map_err(FetchError::Mismatch)?;
        let dest = self.vendor.join(name);
        let _ = fs::remove_file(dest.join("stamp"));
        let _ = fs::remove_dir_all(dest.join("Core"));
        fs::create_dir_all(&dest)
            .and_then(|_| fs::rename(&core, dest.join("Core")))
            .and_then(|_| fs::write(dest.join("stamp"), tree_stamp(tree)))
            .map_err(|e| {
                FetchError::Unavailable(format!("{name}: move into {}: {e}", dest.display()))
            })
    }

    fn fetch_npm(&self, name: &str, npm: &NpmSource, tree: Option<&str>) -> Result<(), FetchError> {
        fs::create_dir_all(&self.vendor).map_err(|e| {
            FetchError::Unavailable(format!("create {}: {e}", self.vendor.display()))
        })?;
        let staged = self.stage(name)?;
        let result = self.npm_into(name, npm, tree, &staged);
        let _ = fs::remove_dir_all(&staged);
        result
    }

    fn npm_into(
        &self,
        name: &str,
        npm: &NpmSource,
        tree: Option<&str>,
        work: &Path,
    ) -> Result<(), FetchError> {
        let spec = format!("{}@{}", npm.package, npm.version);
        let unavailable = |e: String| {
            FetchError::Unavailable(format!(
                "{name}: cannot obtain {spec} from the npm registry: {e}. {}",
                manual_help(name)
            ))
        };
        let packs = work.join("pack");
        fs::create_dir_all(&packs).map_err(|e| unavailable(e.to_string()))?;
        run(
            Command::new("npm")
                .args([
                    "pack",
                    &spec,
                    "--ignore-scripts",
                    "--silent",
                    "--pack-destination",
                ])
                .arg(&packs),
            Some(self.timeout),
        )
        .map_err(|e| unavailable(format!("`npm pack {spec}`: {e}")))?;
        let tgz = fs::read_dir(&packs)
            .map_err(|e| unavailable(e.to_string()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|x| x == "tgz"))
            .ok_or_else(|| unavailable(format!("`npm pack {spec}` produced no .tgz")))?;
        let data =
            fs::read(&tgz).map_err(|e| unavailable(format!("read {}: {e}", tgz.display())))?;
        let got = integrity_of(&data);
        if got != npm.integrity {
            return Err(FetchError::Mismatch(format!(
                "{name}: integrity mismatch for {spec}: versions.yaml pins {}, the tarball is {got}",
                npm.integrity
            )));
        }
        let core = work.join("Core");
        let files = extract_subdir(&data, &npm.path, &core)
            .map_err(|e| FetchError::Mismatch(format!("{name}: {spec}: {e}")))?;
        if files == 0 {
            return Err(FetchError::Mismatch(format!(
                "{name}: {spec} has no files under {}",
                npm.path
            )));
        }
        match tree {
            Some(tree) => self.install(name, work, tree),
            None => {
                check_core(&core).map_err(FetchError::Mismatch)?;
                let dest = self.vendor.join(name);
                let _ = fs::remove_dir_all(&dest);
                fs::create_dir_all(&dest)
                    .and_then(|_| fs::rename(&core, dest.join("Core")))
                    .and_then(|_| fs::write(dest.join("stamp"), npm_stamp(npm)))
                    .map_err(|e| unavailable(format!("move into {}: {e}", dest.display())))
            }
        }
    }
}

fn short(tree: &str) -> &str {
    &tree[..tree.len().min(12)]
}

/// The hard error of a pinned tree that the fetched tag does not hold.
pub fn mismatch(tag: &str, url: &str, expected: &str, actual: &str) -> String {
    format!(
        "{tag}: Core/ tree mismatch: versions.yaml pins core_tree {expected}, but refs/tags/{tag} from {url} has {actual}. \
         The source is not the upstream tag (a tampered mirror?) or the pin is wrong; nothing was built from it."
    )
}

/// `sha512-<base64>` of `data`, the format of npm's `dist.integrity`.
pub fn integrity_of(data: &[u8]) -> String {
    format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha512::digest(data))
    )
}

/// Writes one extracted regular file, keeping the executable bit (part of the git tree hash).
fn write_file(target: &Path, data: &[u8], mode: u32) -> Result<(), String> {
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("create {}: {e}", parent.display()))?;
    }
    fs::write(target, data).map_err(|e| format!("write {}: {e}", target.display()))?;
    let perm = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
    fs::set_permissions(target, fs::Permissions::from_mode(perm))
        .map_err(|e| format!("chmod {}: {e}", target.display()))
}

/// Extracts the regular files and symbolic links of `entries` whose path starts with `prefix`
/// into `dest` (prefix stripped). Refuses absolute paths and `..` components.
fn extract_entries<R: Read>(
    archive: &mut tar::Archive<R>,
    prefix: &Path,
    dest: &Path,
) -> Result<usize, String> {
    let mut count = 0;
    for entry in archive.entries().map_err(|e| format!("bad archive: {e}"))? {
        let mut entry = entry.map_err(|e| format!("bad archive entry: {e}"))?;
        let path = entry
            .path()
            .map_err(|e| format!("bad path in archive: {e}"))?
            .into_owned();
        let Ok(rel) = path.strip_prefix(prefix) else {
            continue;
        };
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(format!("refusing archive path {}", path.display()));
        }
        let kind = entry.header().entry_type();
        let target = dest.join(rel);
        if kind.is_symlink() {
            let link = entry
                .link_name()
                .map_err(|e| format!("bad link in archive: {e}"))?
                .ok_or_else(|| format!("link {} without target", path.display()))?;
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent)
                    .map_err(|e| format!("create {}: {e}", parent.display()))?;
            }
            std::os::unix::fs::symlink(&link, &target)
                .map_err(|e| format!("symlink {}: {e}", target.display()))?;
            count += 1;
            continue;
        }
        if !kind.is_file() {
            continue;
        }
        let mode = entry.header().mode().unwrap_or(0o644);
        let mut buf = Vec::new();
        entry
            .read_to_end(&mut buf)
            .map_err(|e| format!("read {}: {e}", path.display()))?;
        write_file(&target, &buf, mode)?;
        count += 1;
    }
    Ok(count)
}

/// Extracts the regular files under `prefix/` of a .tgz into `dest` (prefix stripped).
/// Refuses absolute paths and `..` components. Returns the number of files written.
pub fn extract_subdir(tgz: &[u8], prefix: &str, dest: &Path) -> Result<usize, String> {
    let prefix = Path::new(prefix.trim_end_matches('/'));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    extract_entries(&mut archive, prefix, dest)
}

/// Extracts a `git archive --format=tar` of a tree into `dest`.
fn extract_tar(tar: &[u8], dest: &Path) -> Result<usize, String> {
    fs::create_dir_all(dest).map_err(|e| format!("create {}: {e}", dest.display()))?;
    let mut archive = tar::Archive::new(tar);
    extract_entries(&mut archive, Path::new(""), dest)
}
