//! Build-time source resolution for one MMKV tag: override variable, vendored cache, or a
//! verified `npm pack` download. Used by build.rs only.

use crate::versions::{override_var, NpmSource, Source, VersionEntry};
use base64::Engine as _;
use sha2::{Digest, Sha512};
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// Where a tag's Core directory came from.
pub enum Origin {
    /// `MMKV_CORE_<TAG>` pointed at it.
    Override(String),
    /// `vendor/<tag>/Core` with a matching stamp (no download).
    Cached(String),
    /// Downloaded now with `npm pack`, integrity verified.
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

fn manual_help(tag: &str) -> String {
    format!(
        "To supply the sources by hand, point {var} at a directory holding that version's MMKV Core \
         (the folder with CMakeLists.txt and MMKV.h, e.g. an upstream checkout's Core/ at tag {tag}), \
         or restrict the build with MMKV_VERSIONS=<tags> (see vendor/README.md).",
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

/// The stamp written next to a vendored Core: what was extracted, from what.
fn stamp_text(npm: &NpmSource) -> String {
    format!(
        "{}@{}\n{}\n{}\n",
        npm.package, npm.version, npm.integrity, npm.path
    )
}

/// Resolves the Core directory of `entry` (override first, then the cache, then a download).
pub fn resolve(
    entry: &VersionEntry,
    override_dir: Option<&str>,
    vendor: &Path,
) -> Result<CoreDir, String> {
    let tag = &entry.tag;
    if let Some(dir) = override_dir {
        let path = PathBuf::from(dir);
        check_core(&path).map_err(|e| format!("{tag}: {} = {dir}: {e}", override_var(tag)))?;
        let path = path
            .canonicalize()
            .map_err(|e| format!("{tag}: {dir}: {e}"))?;
        return Ok(CoreDir {
            path,
            origin: Origin::Override(override_var(tag)),
        });
    }
    let npm = match &entry.source {
        Source::Npm(npm) => npm,
        Source::None => {
            return Err(format!(
                "{tag}: versions.yaml says `source: none` (no reachable registry ships it). {}",
                manual_help(tag)
            ))
        }
    };
    let tag_dir = vendor.join(tag);
    let core = tag_dir.join("Core");
    let stamp = tag_dir.join("stamp");
    if fs::read_to_string(&stamp).ok().as_deref() == Some(stamp_text(npm).as_str())
        && check_core(&core).is_ok()
    {
        return Ok(CoreDir {
            path: core,
            origin: Origin::Cached(format!("{}@{}", npm.package, npm.version)),
        });
    }
    fetch(tag, npm, vendor).map_err(|e| {
        format!(
            "{tag}: cannot obtain {}@{} from the npm registry: {e}. {}",
            npm.package,
            npm.version,
            manual_help(tag)
        )
    })?;
    Ok(CoreDir {
        path: core,
        origin: Origin::Fetched(format!("{}@{}", npm.package, npm.version)),
    })
}

/// `sha512-<base64>` of `data`, the format of npm's `dist.integrity`.
pub fn integrity_of(data: &[u8]) -> String {
    format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha512::digest(data))
    )
}

fn fetch(tag: &str, npm: &NpmSource, vendor: &Path) -> Result<(), String> {
    fs::create_dir_all(vendor).map_err(|e| format!("create {}: {e}", vendor.display()))?;
    let work = vendor.join(format!(".partial-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).map_err(|e| format!("create {}: {e}", work.display()))?;
    let result = fetch_into(tag, npm, vendor, &work);
    let _ = fs::remove_dir_all(&work);
    result
}

fn fetch_into(tag: &str, npm: &NpmSource, vendor: &Path, work: &Path) -> Result<(), String> {
    let spec = format!("{}@{}", npm.package, npm.version);
    let packs = work.join("pack");
    fs::create_dir_all(&packs).map_err(|e| e.to_string())?;
    let out = Command::new("npm")
        .args([
            "pack",
            &spec,
            "--ignore-scripts",
            "--silent",
            "--pack-destination",
        ])
        .arg(&packs)
        .output()
        .map_err(|e| format!("cannot run `npm pack {spec}` ({e}); is npm installed?"))?;
    if !out.status.success() {
        return Err(format!(
            "`npm pack {spec}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let tgz = fs::read_dir(&packs)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "tgz"))
        .ok_or_else(|| format!("`npm pack {spec}` produced no .tgz"))?;
    let data = fs::read(&tgz).map_err(|e| format!("read {}: {e}", tgz.display()))?;
    let got = integrity_of(&data);
    if got != npm.integrity {
        return Err(format!(
            "integrity mismatch for {spec}: versions.yaml pins {}, the tarball is {got}",
            npm.integrity
        ));
    }
    let staged = work.join(tag);
    let core = staged.join("Core");
    let files = extract_subdir(&data, &npm.path, &core)?;
    if files == 0 {
        return Err(format!("{spec} has no files under {}", npm.path));
    }
    check_core(&core)?;
    fs::write(staged.join("stamp"), stamp_text(npm)).map_err(|e| e.to_string())?;
    let dest = vendor.join(tag);
    let _ = fs::remove_dir_all(&dest);
    if let Err(e) = fs::rename(&staged, &dest) {
        // Another build may have finished the same fetch first: accept its result.
        if fs::read_to_string(dest.join("stamp")).ok().as_deref() != Some(stamp_text(npm).as_str())
        {
            return Err(format!("move into {}: {e}", dest.display()));
        }
    }
    Ok(())
}

/// Extracts the regular files under `prefix/` of a .tgz into `dest` (prefix stripped).
/// Refuses absolute paths and `..` components. Returns the number of files written.
pub fn extract_subdir(tgz: &[u8], prefix: &str, dest: &Path) -> Result<usize, String> {
    let prefix = Path::new(prefix.trim_end_matches('/'));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    let mut count = 0;
    for entry in archive.entries().map_err(|e| format!("bad tarball: {e}"))? {
        let mut entry = entry.map_err(|e| format!("bad tarball entry: {e}"))?;
        let path = entry
            .path()
            .map_err(|e| format!("bad path in tarball: {e}"))?
            .into_owned();
        let Ok(rel) = path.strip_prefix(prefix) else {
            continue;
        };
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(format!("refusing tarball path {}", path.display()));
        }
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let target = dest.join(rel);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("create {}: {e}", parent.display()))?;
        }
        let mut buf = Vec::new();
        entry
            .read_to_end(&mut buf)
            .map_err(|e| format!("read {}: {e}", path.display()))?;
        fs::write(&target, buf).map_err(|e| format!("write {}: {e}", target.display()))?;
        count += 1;
    }
    Ok(count)
}
