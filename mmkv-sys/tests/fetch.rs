//! Build-time source resolution (build_support/fetch.rs, compiled here as in build.rs): git
//! fetching pinned by the `Core/` tree hash, the verified cache, overrides, unreachable sources,
//! npm integrity, safe extraction.

#[allow(dead_code)]
#[path = "../src/versions.rs"]
mod versions;

#[allow(dead_code)]
#[path = "../build_support/fetch.rs"]
mod fetch;

use fetch::{extract_subdir, integrity_of, FetchError, Fetcher, Origin};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use versions::{tree_hash, GitSource, NpmSource, Source, Tag, VersionEntry};

fn tgz(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (name, data) in entries {
        let mut header = tar::Header::new_old();
        // Raw name bytes: tar::Header::set_path refuses `..`, and the test needs such entries.
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_size(data.len() as u64);
        header.set_mode(if name.ends_with(b".sh") { 0o755 } else { 0o644 });
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        builder.append(&header, *data).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

fn core_files(dir: &Path, flavour: &str) {
    std::fs::create_dir_all(dir.join("aes")).unwrap();
    for f in ["CMakeLists.txt", "MMKV.h", "MMKVPredef.h", "aes/AESCrypt.h"] {
        std::fs::File::create(dir.join(f))
            .unwrap()
            .write_all(format!("// {flavour}\n").as_bytes())
            .unwrap();
    }
}

fn tag(s: &str) -> Tag {
    Tag::parse(s).unwrap()
}

fn entry(t: &str, source: Source) -> VersionEntry {
    VersionEntry {
        tag: tag(t),
        features: Default::default(),
        source,
        build: None,
        note: None,
    }
}

fn git_source(t: &str, url: &str, core_tree: &str) -> Source {
    Source {
        git: Some(GitSource {
            url: url.into(),
            tag: tag(t),
            core_tree: core_tree.into(),
        }),
        npm: None,
    }
}

fn npm(integrity: &str) -> NpmSource {
    NpmSource {
        package: "react-native-mmkv".into(),
        version: "2.0.1".into(),
        integrity: integrity.into(),
        path: "package/MMKV/Core".into(),
        core_tree: None,
    }
}

fn fetcher(vendor: &Path, git_url: Option<&str>) -> Fetcher {
    Fetcher {
        vendor: vendor.to_path_buf(),
        git_url: git_url.map(str::to_string),
        timeout: Duration::from_secs(60),
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A repository with tag `t` whose Core/ holds files of `flavour`; returns (repo, Core tree).
fn mirror(root: &Path, t: &str, flavour: &str) -> (PathBuf, String) {
    let repo = root.join(format!("mirror-{flavour}"));
    core_files(&repo.join("Core"), flavour);
    std::fs::write(repo.join("Core/build.sh"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(
        repo.join("Core/build.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "Core"]);
    git(&repo, &["commit", "-q", "-m", "core"]);
    git(&repo, &["tag", "-a", "-m", t, t]);
    let tree = git(&repo, &["rev-parse", &format!("{t}:Core")]);
    (repo, tree)
}

#[test]
fn integrity_is_npm_style_sha512() {
    // SHA-512 of the empty input, base64.
    assert_eq!(
        integrity_of(b""),
        "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="
    );
}

#[test]
fn extraction_keeps_only_core_and_refuses_escapes() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tgz(&[
        (b"package/MMKV/Core/MMKV.h", b"h"),
        (b"package/MMKV/Core/aes/AESCrypt.h", b"aes"),
        (b"package/MMKV/Core/gen.sh", b"#!/bin/sh"),
        (b"package/README.md", b"readme"),
        (b"package/MMKV/CoreX/other.h", b"x"),
    ]);
    let n = extract_subdir(&data, "package/MMKV/Core", &tmp.path().join("Core")).unwrap();
    assert_eq!(n, 3);
    assert_eq!(
        std::fs::read(tmp.path().join("Core/aes/AESCrypt.h")).unwrap(),
        b"aes"
    );
    let mode = |p: &str| {
        std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(tmp.path().join(p)).unwrap().permissions(),
        ) & 0o777
    };
    assert_eq!(
        mode("Core/gen.sh"),
        0o755,
        "the executable bit is part of the tree hash"
    );
    assert_eq!(mode("Core/MMKV.h"), 0o644);
    assert!(!tmp.path().join("Core/README.md").exists() && !tmp.path().join("other.h").exists());

    let evil = tgz(&[(b"package/MMKV/Core/../../evil.h", b"boom")]);
    let err = extract_subdir(&evil, "package/MMKV/Core", &tmp.path().join("Core2")).unwrap_err();
    assert!(err.contains("refusing"), "{err}");
    assert!(!tmp.path().join("evil.h").exists());
}

#[test]
fn override_wins_and_is_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let vendor = tmp.path().join("vendor");
    let good = tmp.path().join("checkout/Core");
    core_files(&good, "override");
    let f = fetcher(&vendor, Some("/nonexistent/mirror.bundle"));
    // Works for `source: none` tags and wins over every source.
    let pinned = git_source("v2.1.0", "/nonexistent", &"0".repeat(40));
    for source in [Source::default(), pinned] {
        let r = f
            .resolve(&entry("v2.1.0", source), Some(good.to_str().unwrap()))
            .unwrap();
        assert_eq!(r.path, good.canonicalize().unwrap());
        assert!(matches!(r.origin, Origin::Override(ref v) if v == "MMKV_CORE_V2_1_0"));
    }
    assert!(
        !vendor.exists(),
        "an override must not touch the vendor cache"
    );
    let bad = tmp.path().join("empty");
    std::fs::create_dir_all(&bad).unwrap();
    let err = f
        .resolve(
            &entry("v2.1.0", Source::default()),
            Some(bad.to_str().unwrap()),
        )
        .err()
        .unwrap();
    assert!(
        matches!(err, FetchError::Mismatch(_)),
        "a bad override stops the build"
    );
    let err = err.message();
    assert!(
        err.contains("MMKV_CORE_V2_1_0") && err.contains("CMakeLists.txt"),
        "{err}"
    );
}

#[test]
fn no_source_leaves_the_tag_unbuilt_with_the_way_out() {
    let tmp = tempfile::tempdir().unwrap();
    let err = fetcher(tmp.path(), None)
        .resolve(&entry("v2.2.0", Source::default()), None)
        .err()
        .unwrap();
    let FetchError::Unavailable(msg) = err else {
        panic!("`source: none` must not stop the build")
    };
    assert!(
        msg.contains("v2.2.0") && msg.contains("source: none") && msg.contains("MMKV_CORE_V2_2_0"),
        "{msg}"
    );
}

#[test]
fn git_tag_is_fetched_verified_archived_then_cached() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, tree) = mirror(tmp.path(), "v1.0.0", "upstream");
    let vendor = tmp.path().join("vendor");
    // The entry's URL is unreachable; MMKV_GIT_URL (the mirror) replaces it.
    let e = entry(
        "v1.0.0",
        git_source("v1.0.0", "/nonexistent/MMKV.git", &tree),
    );
    let f = fetcher(&vendor, Some(repo.to_str().unwrap()));
    let r = f.resolve(&e, None).unwrap();
    assert!(
        matches!(r.origin, Origin::Fetched(ref d) if d.contains(&tree[..12])),
        "{}",
        r.origin.describe()
    );
    assert_eq!(r.path, vendor.join("v1.0.0/Core"));
    assert_eq!(
        tree_hash(&r.path).unwrap(),
        tree,
        "vendor/<tag>/Core holds exactly the pinned tree"
    );
    assert_eq!(
        std::fs::read_to_string(r.path.join("MMKV.h")).unwrap(),
        "// upstream\n"
    );

    // Next build: no network and no git call (mirror and cache repository are gone, so any
    // fetch or archive would fail).
    std::fs::remove_dir_all(&repo).unwrap();
    let cache = vendor.join(".git-cache");
    let kept = tmp.path().join("cache-kept");
    std::fs::rename(&cache, &kept).unwrap();
    assert!(matches!(
        f.resolve(&e, None).unwrap().origin,
        Origin::Cached(_)
    ));
    std::fs::rename(&kept, &cache).unwrap();

    // A vendor copy without its stamp (interrupted extraction) is re-extracted from the cache
    // repository, still without the mirror.
    std::fs::write(vendor.join("v1.0.0/Core/MMKV.h"), "// edited\n").unwrap();
    std::fs::remove_file(vendor.join("v1.0.0/stamp")).unwrap();
    let r = f.resolve(&e, None).unwrap();
    assert!(matches!(r.origin, Origin::Fetched(ref d) if d.contains("cache repository")));
    assert_eq!(
        std::fs::read_to_string(r.path.join("MMKV.h")).unwrap(),
        "// upstream\n"
    );
}

#[test]
fn a_wrong_pin_or_a_tampered_mirror_stops_the_build_naming_tag_expected_and_actual() {
    let tmp = tempfile::tempdir().unwrap();
    let (good, tree) = mirror(tmp.path(), "v1.0.0", "upstream");
    let (tampered, tampered_tree) = mirror(tmp.path(), "v1.0.0", "tampered");
    assert_ne!(tree, tampered_tree);
    let wrong_pin = "0123456789abcdef0123456789abcdef01234567";
    for (url, pin, actual) in [
        (&good, wrong_pin, tree.as_str()),
        (&tampered, tree.as_str(), tampered_tree.as_str()),
    ] {
        let vendor = tmp.path().join(format!("vendor-{pin}"));
        let e = entry("v1.0.0", git_source("v1.0.0", "/nonexistent", pin));
        let err = fetcher(&vendor, Some(url.to_str().unwrap()))
            .resolve(&e, None)
            .err()
            .unwrap();
        let FetchError::Mismatch(msg) = err else {
            panic!("a mismatch must stop the build, got {err:?}")
        };
        assert!(
            msg.contains("v1.0.0") && msg.contains(pin) && msg.contains(actual),
            "{msg}"
        );
        assert!(
            !vendor.join("v1.0.0").exists(),
            "nothing is extracted from an unverified tree"
        );
    }
}

#[test]
fn an_unreachable_repository_leaves_the_tag_unbuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let e = entry(
        "v1.0.0",
        git_source("v1.0.0", "/nonexistent/MMKV.git", &"a".repeat(40)),
    );
    let err = fetcher(&tmp.path().join("vendor"), None)
        .resolve(&e, None)
        .err()
        .unwrap();
    let FetchError::Unavailable(msg) = err else {
        panic!("an unreachable source must not stop the build, got {err:?}")
    };
    assert!(
        msg.contains("v1.0.0") && msg.contains("/nonexistent/MMKV.git"),
        "{msg}"
    );
    assert!(
        msg.contains("MMKV_GIT_URL") && msg.contains("MMKV_CORE_V1_0_0"),
        "{msg}"
    );
}

#[test]
fn a_tampered_npm_pin_is_refused_before_extraction() {
    // Real `npm pack` (served from npm's local cache when it already fetched the package).
    let tmp = tempfile::tempdir().unwrap();
    let src = Source {
        git: None,
        npm: Some(npm("sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==")),
    };
    match fetcher(tmp.path(), None).resolve(&entry("v1.2.12", src), None) {
        Err(FetchError::Mismatch(msg)) => {
            assert!(
                msg.contains("v1.2.12") && msg.contains("react-native-mmkv@2.0.1"),
                "{msg}"
            );
            assert!(msg.contains("integrity mismatch"), "{msg}");
        }
        Err(FetchError::Unavailable(msg)) => {
            eprintln!("npm registry unreachable, integrity check not exercised: {msg}")
        }
        Ok(_) => panic!("a tarball that does not match its pin was accepted"),
    }
    assert!(
        !tmp.path().join("v1.2.12").exists(),
        "nothing may be extracted from an unverified tarball"
    );
}
