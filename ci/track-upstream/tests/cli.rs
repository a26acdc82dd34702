//! End-to-end tests of the `track-upstream` binary on fixtures, with shell stand-ins for
//! `gh` and `npm` (offline).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use track_upstream::add_version::npm_core_tree;
use track_upstream::tarball::{build_tgz, fake_predef_header, sha512_integrity};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_track-upstream"))
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn new_lines(stdout: &str) -> Vec<&str> {
    stdout.lines().filter(|l| l.starts_with("new: ")).collect()
}

#[cfg(unix)]
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn dry_run_on_fixture_reports_exactly_the_two_new_tags() {
    let out = bin()
        .args(["--dry-run", "--no-npm", "--tags-from"])
        .arg(fixture("upstream-tags.txt"))
        .arg("--versions")
        .arg(fixture("versions-to-v2.4.0.yaml"))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert_eq!(new_lines(&stdout), vec!["new: v2.4.1", "new: v2.4.2"]);
}

#[test]
fn existing_issue_list_suppresses_reported_tags() {
    let out = bin()
        .args(["--dry-run", "--no-npm", "--tags-from"])
        .arg(fixture("upstream-tags.txt"))
        .arg("--versions")
        .arg(fixture("versions-to-v2.4.0.yaml"))
        .arg("--existing-issues")
        .arg(fixture("existing-issues.json"))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert_eq!(new_lines(&stdout), vec!["new: v2.4.2"]);
    assert!(stdout.contains("exists: v2.4.1 (#41 "), "{stdout}");
}

#[test]
fn unreachable_upstream_falls_back_to_npm_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let args = |strict: bool| {
        let mut cmd = bin();
        cmd.args(["--dry-run", "--upstream-url"])
            .arg(dir.path().join("not-a-repository"))
            .arg("--npm-from")
            .arg(fixture("npm-probe.yaml"))
            .arg("--versions")
            .arg(fixture("versions-to-v2.4.0.yaml"));
        if strict {
            cmd.arg("--strict");
        }
        cmd.output().unwrap()
    };
    let out = args(false);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "warning: upstream tags unavailable, carrying on with npm only: `git ls-remote --tags"
        ),
        "{stdout}"
    );
    assert_eq!(new_lines(&stdout), vec!["new: v2.4.2", "new: v2.4.3"]);
    assert!(stdout.contains("  source: npm react-native-mmkv-storage@13.1.0"));

    let strict = args(true);
    assert!(!strict.status.success());
    assert_eq!(
        new_lines(&text(&strict).0).len(),
        2,
        "still reports before failing"
    );
}

#[cfg(unix)]
#[test]
fn opens_issues_through_gh_once() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("issues.jsonl");
    let log = dir.path().join("gh.log");
    std::fs::write(&state, "").unwrap();
    let gh = script(
        dir.path(),
        "gh",
        r#"echo "$*" >> "$FAKE_GH_LOG"
case "$1 $2" in
  "issue list") printf '[%s]\n' "$(paste -sd, "$FAKE_GH_STATE")" ;;
  "label create") ;;
  "issue create")
    while [ $# -gt 0 ]; do
      case "$1" in --title) title="$2"; shift ;; --body) body="$2"; shift ;; esac
      shift
    done
    case "$body" in *"Steps to add it"*) ;; *) echo "body lacks steps" >&2; exit 3 ;; esac
    n=$(( $(wc -l < "$FAKE_GH_STATE") + 1 ))
    printf '{"number":%d,"title":"%s"}\n' "$n" "$title" >> "$FAKE_GH_STATE"
    echo "https://example.invalid/issues/$n" ;;
  *) echo "unexpected: $*" >&2; exit 2 ;;
esac
"#,
    );
    let run = || {
        bin()
            .args(["--no-npm", "--tags-from"])
            .arg(fixture("upstream-tags.txt"))
            .arg("--versions")
            .arg(fixture("versions-to-v2.4.0.yaml"))
            .arg("--gh")
            .arg(&gh)
            .env("FAKE_GH_STATE", &state)
            .env("FAKE_GH_LOG", &log)
            .output()
            .unwrap()
    };
    let first = run();
    let (stdout, stderr) = text(&first);
    assert!(first.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("opened: v2.4.1 https://example.invalid/issues/1"),
        "{stdout}"
    );
    assert!(
        stdout.contains("opened: v2.4.2 https://example.invalid/issues/2"),
        "{stdout}"
    );
    let issues = std::fs::read_to_string(&state).unwrap();
    assert_eq!(issues.lines().count(), 2);
    assert!(issues.contains("Upstream MMKV v2.4.2 is not in versions.yaml"));

    let second = run();
    let (stdout, stderr) = text(&second);
    assert!(second.status.success(), "{stdout}{stderr}");
    assert!(!stdout.contains("opened:"), "{stdout}");
    assert!(stdout.contains("exists: v2.4.1 (#1 "), "{stdout}");
    assert_eq!(std::fs::read_to_string(&state).unwrap().lines().count(), 2);
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.contains("--label upstream-release"), "{calls}");
}

/// A fake `npm` serving tarballs from a directory: `<name>-<version>.tgz` and
/// `<name>-<version>.integrity`.
#[cfg(unix)]
fn fake_npm(dir: &Path) -> PathBuf {
    script(
        dir,
        "npm",
        r#"name=$(echo "$2" | sed 's/@\([^@]*\)$/-\1/')
case "$1" in
  pack)
    dest=.
    while [ $# -gt 0 ]; do case "$1" in --pack-destination) dest="$2"; shift ;; esac; shift; done
    cp "$FAKE_NPM_DIR/$name.tgz" "$dest/" || exit 1
    printf 'noise\n[{"filename":"%s.tgz"}]\n' "$name" ;;
  view) cat "$FAKE_NPM_DIR/$name.integrity" ;;
  *) exit 2 ;;
esac
"#,
    )
}

#[cfg(unix)]
#[test]
fn add_version_pins_checks_and_refuses_mismatches() {
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("registry");
    std::fs::create_dir(&registry).unwrap();
    let npm = fake_npm(dir.path());
    let trees = std::cell::RefCell::new(Vec::new());
    let publish = |name: &str, mmkv: &str, integrity: Option<&str>| {
        let tgz = build_tgz(&[
            ("package/package.json", b"{}".as_slice()),
            (
                "package/MMKV/Core/MMKVPredef.h",
                fake_predef_header(mmkv).as_bytes(),
            ),
        ])
        .unwrap();
        let real = sha512_integrity(&tgz);
        trees
            .borrow_mut()
            .push(npm_core_tree(&tgz, "package/MMKV/Core").unwrap());
        std::fs::write(registry.join(format!("{name}.tgz")), &tgz).unwrap();
        std::fs::write(
            registry.join(format!("{name}.integrity")),
            format!("{}\n", integrity.unwrap_or(&real)),
        )
        .unwrap();
        real
    };
    let good = publish("react-native-mmkv-storage-13.0.0", "v2.4.1", None);
    let good_tree = trees.borrow()[0].clone();
    publish("react-native-mmkv-storage-13.0.1", "v2.4.2", None);
    publish(
        "react-native-mmkv-storage-13.0.2",
        "v2.4.2",
        Some("sha512-tampered"),
    );

    let versions = dir.path().join("versions.yaml");
    let original = std::fs::read_to_string(fixture("versions-to-v2.4.0.yaml")).unwrap();
    std::fs::write(&versions, &original).unwrap();
    let add = |tag: &str, spec: &str| {
        bin()
            .args(["add-version", tag, "--npm", spec, "--no-test", "--versions"])
            .arg(&versions)
            .arg("--npm-program")
            .arg(&npm)
            .env("FAKE_NPM_DIR", &registry)
            .output()
            .unwrap()
    };

    let mismatch = add("v2.4.1", "react-native-mmkv-storage@13.0.1");
    let (_, stderr) = text(&mismatch);
    assert!(!mismatch.status.success());
    assert!(
        stderr.contains("v2.4.2") && stderr.contains("v2.4.1"),
        "{stderr}"
    );
    assert!(
        stderr.contains("react-native-mmkv-storage@13.0.1"),
        "{stderr}"
    );

    let tampered = add("v2.4.2", "react-native-mmkv-storage@13.0.2");
    assert!(!tampered.status.success());
    assert!(text(&tampered).1.contains("integrity mismatch"));
    assert_eq!(std::fs::read_to_string(&versions).unwrap(), original);

    let ok = add("v2.4.1", "react-native-mmkv-storage@13.0.0");
    let (stdout, stderr) = text(&ok);
    assert!(ok.status.success(), "{stdout}{stderr}");
    let edited = std::fs::read_to_string(&versions).unwrap();
    let expected = format!(
        "{original}  - tag: v2.4.1\n    # features copied from v2.4.0 by add-version: review them against the v2.4.1 sources\n    features: [meta_actual_size]\n    source:\n      npm: {{package: react-native-mmkv-storage, version: 13.0.0, integrity: \"{good}\", path: package/MMKV/Core, core_tree: {good_tree}}}\n"
    );
    assert_eq!(edited, expected);

    // The tracker now sees v2.4.1 as known.
    let check = bin()
        .args(["--dry-run", "--no-npm", "--tags-from"])
        .arg(fixture("upstream-tags.txt"))
        .arg("--versions")
        .arg(&versions)
        .output()
        .unwrap();
    assert_eq!(new_lines(&text(&check).0), vec!["new: v2.4.2"]);

    // Running it again changes nothing.
    let again = add("v2.4.1", "react-native-mmkv-storage@13.0.0");
    assert!(again.status.success());
    assert!(text(&again).0.contains("already has this source"));
    assert_eq!(std::fs::read_to_string(&versions).unwrap(), expected);
}

#[test]
fn add_version_from_a_core_dir_adds_source_none() {
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("Core");
    std::fs::create_dir(&core).unwrap();
    std::fs::write(core.join("MMKVPredef.h"), fake_predef_header("v2.1.0")).unwrap();
    let versions = dir.path().join("versions.yaml");
    std::fs::copy(fixture("versions-to-v2.4.0.yaml"), &versions).unwrap();
    let add = |tag: &str, extra: &[&str]| {
        bin()
            .args(["add-version", tag, "--no-test", "--core-dir"])
            .arg(&core)
            .arg("--versions")
            .arg(&versions)
            .args(extra)
            .output()
            .unwrap()
    };
    let refused = add("v2.1.1", &[]);
    assert!(!refused.status.success());
    assert!(text(&refused).1.contains("not the requested v2.1.1"));
    // A header that lags behind its tag can be accepted explicitly.
    let accepted = add("v2.4.1", &["--accept-predef", "v2.1.0"]);
    let (stdout, stderr) = text(&accepted);
    assert!(accepted.status.success(), "{stdout}{stderr}");
    assert!(std::fs::read_to_string(&versions)
        .unwrap()
        .ends_with("  - tag: v2.4.1\n    # features copied from v2.4.0 by add-version: review them against the v2.4.1 sources\n    features: [meta_actual_size]\n    source: none\n"));
}

#[test]
fn bad_arguments_are_rejected() {
    let out = bin().args(["add-version", "v2.4"]).output().unwrap();
    assert!(!out.status.success());
    let out = bin()
        .args([
            "add-version",
            "v2.4.1",
            "--npm",
            "react-native-mmkv",
            "--no-test",
        ])
        .arg("--versions")
        .arg(fixture("versions-to-v2.4.0.yaml"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).1.contains("PACKAGE@VERSION"));
}

#[cfg(unix)]
#[test]
fn add_version_records_then_tests_that_tag() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let core = dir.path().join("mmkv/Core");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&core).unwrap();
    std::fs::write(core.join("MMKVPredef.h"), fake_predef_header("v2.4.1")).unwrap();
    let versions = repo.join("versions.yaml");
    std::fs::copy(fixture("versions-to-v2.4.0.yaml"), &versions).unwrap();
    let log = dir.path().join("cargo.log");
    let cargo = script(
        dir.path(),
        "cargo",
        r#"echo "$(pwd)|$MMKV_VERSIONS|$MMKV_CORE_V2_4_1|$*" >> "$FAKE_CARGO_LOG"
case "$*" in *"-p conformance"*) exit "${FAKE_CONFORMANCE_RC:-0}" ;; esac
"#,
    );
    let run = |rc: &str| {
        bin()
            .args(["add-version", "v2.4.1", "--core-dir"])
            .arg(&core)
            .arg("--versions")
            .arg(&versions)
            .env("CARGO", &cargo)
            .env("FAKE_CARGO_LOG", &log)
            .env("FAKE_CONFORMANCE_RC", rc)
            .output()
            .unwrap()
    };
    let first = run("0");
    let (stdout, stderr) = text(&first);
    assert!(first.status.success(), "{stdout}{stderr}");
    let core_abs = std::fs::canonicalize(&core).unwrap();
    let repo_abs = std::fs::canonicalize(&repo).unwrap();
    // The corpus and mmkv-sys see the tag alone; the conformance suite also the anchors it
    // compares with (track-upstream's plan module: old anchors, then the newest entry).
    let calls = std::fs::read_to_string(&log).unwrap();
    let expected: Vec<String> = [
        (
            "v2.4.1",
            "run --release -p conformance -- record --tag v2.4.1 --out corpus/v2.4.1",
        ),
        ("v2.4.1", "test -p mmkv-sys"),
        ("v2.4.1,v1.2.15,v1.3.9,v2.3.0", "test -p conformance"),
    ]
    .iter()
    .map(|(versions, c)| {
        format!(
            "{}|{versions}|{}|{c}",
            repo_abs.display(),
            core_abs.display()
        )
    })
    .collect();
    assert_eq!(calls.lines().collect::<Vec<_>>(), expected);
    assert!(
        stdout.contains("+ MMKV_VERSIONS=v2.4.1 MMKV_CORE_V2_4_1="),
        "{stdout}"
    );

    // With the corpus present, no recording; a failing suite fails the command.
    std::fs::create_dir_all(repo.join("corpus/v2.4.1")).unwrap();
    std::fs::remove_file(&log).unwrap();
    let second = run("1");
    assert!(!second.status.success());
    let (_, stderr) = text(&second);
    assert!(stderr.contains("cargo test -p conformance"), "{stderr}");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(calls.lines().collect::<Vec<_>>(), expected[1..]);
}

#[test]
fn add_version_without_flags_pins_the_git_tag_by_its_core_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("mirror");
    std::fs::create_dir_all(mirror.join("Core")).unwrap();
    std::fs::write(
        mirror.join("Core/MMKVPredef.h"),
        fake_predef_header("v2.4.1"),
    )
    .unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&mirror)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    git(&["init", "-q"]);
    git(&["add", "Core"]);
    git(&["commit", "-q", "-m", "core"]);
    git(&["tag", "v2.4.1"]);
    git(&["tag", "v2.4.2"]); // its header says v2.4.1: refused
    let tree = git(&["rev-parse", "v2.4.1:Core"]);
    let versions = dir.path().join("versions.yaml");
    let original = std::fs::read_to_string(fixture("versions-to-v2.4.0.yaml")).unwrap();
    std::fs::write(&versions, &original).unwrap();
    let add = |tag: &str| {
        bin()
            .args(["add-version", tag, "--no-test", "--versions"])
            .arg(&versions)
            .env("MMKV_GIT_URL", &mirror)
            .output()
            .unwrap()
    };
    let refused = add("v2.4.2");
    assert!(!refused.status.success());
    assert!(
        text(&refused).1.contains("not the requested v2.4.2"),
        "{}",
        text(&refused).1
    );
    assert_eq!(std::fs::read_to_string(&versions).unwrap(), original);
    let ok = add("v2.4.1");
    let (stdout, stderr) = text(&ok);
    assert!(ok.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains(&tree), "{stdout}");
    let edited = std::fs::read_to_string(&versions).unwrap();
    assert_eq!(
        edited,
        format!("{original}  - tag: v2.4.1\n    # features copied from v2.4.0 by add-version: review them against the v2.4.1 sources\n    features: [meta_actual_size]\n    source:\n      git: {{url: \"https://github.com/Tencent/MMKV.git\", tag: v2.4.1, core_tree: {tree}}}\n")
    );
    let again = add("v2.4.1");
    assert!(again.status.success() && text(&again).0.contains("already has this source"));
}
