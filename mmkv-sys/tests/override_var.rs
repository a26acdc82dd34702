//! The override variable is honoured: a nested `cargo build -p mmkv-sys` with
//! `MMKV_VERSIONS=<tag>` and `MMKV_CORE_<TAG>` pointing at a modified copy of a fetched Core
//! builds from the copy (its MMKV_VERSION string says so) without touching any vendor cache.
//!
//! The nested build uses its own target directory (`target/mmkv-sys-override-test`, or
//! `MMKV_SYS_OVERRIDE_TEST_DIR` when set), so the first run compiles mmkv-sys's dependencies
//! once (about a minute on 2 cores). The modified copy lives there too, at a path fixed per
//! tag, and is rewritten only where its content changes: the override's cache entry (keyed by
//! that path) and cmake's own dependency tracking then rebuild nothing when the test runs
//! again (`ci/maintainer-flow.sh` runs it in its clone; `.ci/run` keeps the directory between
//! runs, where a fresh clone's `target/` would compile the modified Core every time).

use mmkv_sys::{versions::override_var, Mode, Official};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `contents` to `path` unless it already holds them (so its mtime stays).
fn write_if_changed(path: &Path, contents: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(contents) {
        std::fs::write(path, contents).unwrap();
    }
}

/// Makes `to` a copy of `from` (files whose content is unchanged are left alone; files `to`
/// has beyond `from`'s are removed), except the file `edited`, which the caller writes.
fn sync_dir(from: &Path, to: &Path, edited: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let mut names = std::collections::HashSet::new();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        names.insert(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            sync_dir(&entry.path(), &target, edited);
        } else if target != edited {
            write_if_changed(&target, &std::fs::read(entry.path()).unwrap());
        }
    }
    for entry in std::fs::read_dir(to).unwrap() {
        let entry = entry.unwrap();
        if !names.contains(&entry.file_name()) {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                std::fs::remove_dir_all(&path).unwrap();
            } else {
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
}

/// `"out_dir":"..."` of mmkv-sys's build-script-executed message.
fn out_dir(json_lines: &str) -> Option<PathBuf> {
    json_lines
        .lines()
        .filter(|l| l.contains("\"reason\":\"build-script-executed\"") && l.contains("/mmkv-sys#"))
        .find_map(|l| {
            let start = l.find("\"out_dir\":\"")? + "\"out_dir\":\"".len();
            let end = start + l[start..].find('"')?;
            Some(PathBuf::from(&l[start..end]))
        })
}

#[test]
fn override_variable_builds_from_the_given_directory() {
    let built = mmkv_sys::built()
        .last()
        .expect("at least one version built");
    let tag = built.tag;
    let tmp = tempfile::tempdir().unwrap();
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir.parent().unwrap();
    let target = std::env::var_os("MMKV_SYS_OVERRIDE_TEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target").join("mmkv-sys-override-test"));
    let core = target.join("override-core").join(tag).join("Core");
    let predef = core.join("MMKVPredef.h");
    sync_dir(Path::new(built.core), &core, &predef);
    let source_predef = Path::new(built.core).join("MMKVPredef.h");
    let text = std::fs::read_to_string(&source_predef).unwrap();
    let original = format!(
        "MMKV_VERSION = \"{}\"",
        Official::load(tag).unwrap().version()
    );
    assert!(
        text.contains(&original),
        "{} has no `{original}`",
        source_predef.display()
    );
    let marker = format!("{tag}-override-test");
    write_if_changed(
        &predef,
        text.replace(&original, &format!("MMKV_VERSION = \"{marker}\""))
            .as_bytes(),
    );
    let empty_vendor = tmp.path().join("vendor");

    let output = Command::new(env!("CARGO"))
        .current_dir(workspace)
        .args([
            "build",
            "-p",
            "mmkv-sys",
            "--lib",
            "--offline",
            "--message-format=json",
        ])
        .env("CARGO_TARGET_DIR", &target)
        // All of the nested build in its own directory (ci/maintainer-flow.sh shares its
        // build directory with the checkout's; this build must not replace those outputs).
        .env_remove("CARGO_BUILD_BUILD_DIR")
        .env("MMKV_VERSIONS", tag)
        .env(override_var(tag), &core)
        .env("MMKV_VENDOR_DIR", &empty_vendor)
        .env_remove("MMKV_EXTRA_TAGS")
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "nested build failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let out = out_dir(&stdout).expect("mmkv-sys build-script-executed message");

    let generated = std::fs::read_to_string(out.join("built_versions.rs")).unwrap();
    assert!(
        generated.contains(&format!("override {}", override_var(tag))),
        "origin not the override:\n{generated}"
    );
    assert_eq!(
        generated.matches("crate::BuiltVersion {").count(),
        1,
        "MMKV_VERSIONS not honoured:\n{generated}"
    );
    assert!(
        !empty_vendor.join(tag).exists(),
        "an override must not fetch into the vendor cache"
    );

    // The library lives in the build's cache (outside OUT_DIR), as the generated list says.
    let library = generated
        .split("library: \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("library path in built_versions.rs");
    assert!(
        library.ends_with(&format!("libmmkv_shim_{tag}.so")),
        "{library}"
    );
    let lib = Official::load_from_path(tag, Path::new(library)).unwrap();
    assert_eq!(
        lib.version(),
        marker,
        "the library was not built from the override directory"
    );
    // Both builds of the same tag live side by side, each with its own version string.
    assert_eq!(
        Official::load(tag).unwrap().version(),
        original
            .trim_start_matches("MMKV_VERSION = \"")
            .trim_end_matches('"')
    );
    let store = lib
        .open(
            &tmp.path().join("store"),
            "override",
            Mode::Single,
            None,
            false,
        )
        .unwrap();
    assert!(store.set_string(b"k", "v", None).unwrap());
    assert_eq!(store.get_string(b"k").unwrap(), Some(b"v".to_vec()));
}
