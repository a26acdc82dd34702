//! Library-level tests of a tracker run, with fake npm and issue trackers (offline).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use track_upstream::check::{run_check, CheckOptions, CheckReport};
use track_upstream::issues::{IssueTracker, ListTracker, DEFAULT_LABEL};
use track_upstream::npm::{CoreProbe, FixtureProbe};
use track_upstream::tags::{parse_tag_list, Tag};
use track_upstream::tarball::EmbeddedCore;
use track_upstream::versions::{Known, VersionsFile, VersionsFileExt};
use track_upstream::{Error, Result};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn known() -> Known {
    VersionsFile::load(&fixture("versions-to-v2.4.0.yaml"))
        .unwrap()
        .known()
}

fn upstream() -> BTreeSet<Tag> {
    parse_tag_list(&std::fs::read_to_string(fixture("upstream-tags.txt")).unwrap())
}

fn opts(dry_run: bool) -> CheckOptions {
    CheckOptions {
        dry_run,
        since: None,
        packages: vec![
            "react-native-mmkv".into(),
            "react-native-mmkv-storage".into(),
        ],
        npm_max: 3,
        label: DEFAULT_LABEL.into(),
        strict: false,
    }
}

fn tags(list: &[&str]) -> Vec<Tag> {
    list.iter().map(|s| Tag::parse(s).unwrap()).collect()
}

fn run(
    upstream: std::result::Result<BTreeSet<Tag>, String>,
    npm: Option<&dyn CoreProbe>,
    issues: Option<&dyn IssueTracker>,
    opts: &CheckOptions,
) -> (Result<CheckReport>, String) {
    let mut out = Vec::new();
    let result = run_check(&known(), upstream, npm, issues, opts, &mut out);
    (result, String::from_utf8(out).unwrap())
}

#[test]
fn fixture_tags_report_exactly_v2_4_1_and_v2_4_2() {
    let (report, out) = run(Ok(upstream()), None, None, &opts(true));
    let report = report.unwrap();
    assert_eq!(report.new_tags, tags(&["v2.4.1", "v2.4.2"]));
    let new_lines: Vec<&str> = out.lines().filter(|l| l.starts_with("new: ")).collect();
    assert_eq!(new_lines, vec!["new: v2.4.1", "new: v2.4.2"]);
    assert!(report.opened.is_empty());
}

#[test]
fn opening_issues_is_idempotent() {
    let tracker = ListTracker::new(Vec::new());
    let (first, out) = run(Ok(upstream()), None, Some(&tracker), &opts(false));
    let first = first.unwrap();
    assert_eq!(first.opened.len(), 2, "{out}");
    assert!(out.contains("opened: v2.4.1 #1"));
    let titles: Vec<String> = tracker.issues().into_iter().map(|i| i.title).collect();
    assert_eq!(
        titles,
        vec![
            "Upstream MMKV v2.4.1 is not in versions.yaml",
            "Upstream MMKV v2.4.2 is not in versions.yaml"
        ]
    );

    let (second, out) = run(Ok(upstream()), None, Some(&tracker), &opts(false));
    let second = second.unwrap();
    assert!(second.opened.is_empty(), "{out}");
    assert!(second.new_tags.is_empty());
    assert_eq!(second.already_reported, tags(&["v2.4.1", "v2.4.2"]));
    assert_eq!(tracker.issues().len(), 2);
    assert!(out.contains("exists: v2.4.1 (#1 "));
}

/// Records which package versions were probed.
struct CountingProbe {
    inner: FixtureProbe,
    probed: RefCell<Vec<String>>,
}

impl CoreProbe for CountingProbe {
    fn versions(&self, package: &str) -> Result<Vec<String>> {
        if package == "broken" {
            return Err(Error::Command {
                command: "npm view broken".into(),
                message: "E404".into(),
            });
        }
        self.inner.versions(package)
    }

    fn embedded_core(&self, package: &str, version: &str) -> Result<Option<EmbeddedCore>> {
        self.probed
            .borrow_mut()
            .push(format!("{package}@{version}"));
        self.inner.embedded_core(package, version)
    }
}

#[test]
fn npm_probe_only_looks_past_pinned_versions_and_finds_sources() {
    let probe = CountingProbe {
        inner: FixtureProbe::load(&fixture("npm-probe.yaml")).unwrap(),
        probed: RefCell::new(Vec::new()),
    };
    let mut o = opts(true);
    o.packages.push("broken".into());
    // Upstream unreachable: carries on with npm alone.
    let (report, out) = run(Err("no network".into()), Some(&probe), None, &o);
    let report = report.unwrap();
    assert_eq!(
        *probe.probed.borrow(),
        vec![
            "react-native-mmkv@4.3.2",
            "react-native-mmkv-storage@13.1.0",
            "react-native-mmkv-storage@13.0.0"
        ]
    );
    assert_eq!(report.new_tags, tags(&["v2.4.2", "v2.4.3"]));
    assert!(out.contains("new: v2.4.2\n  reason: newer than the newest tag in versions.yaml\n  source: npm react-native-mmkv-storage@13.0.0\n"), "{out}");
    assert!(out.contains("new: v2.4.3\n"));
    assert_eq!(report.warnings.len(), 2, "{:?}", report.warnings);
    assert!(out.contains("warning: upstream tags unavailable"));
    assert!(out.contains("warning: npm: cannot list versions of broken"));

    // --npm-max 1 probes only the newest unpinned version of each package.
    probe.probed.borrow_mut().clear();
    o.npm_max = 1;
    o.strict = true;
    let (strict, _) = run(Err("no network".into()), Some(&probe), None, &o);
    assert!(strict.is_err(), "strict mode fails on source problems");
    assert_eq!(
        *probe.probed.borrow(),
        vec![
            "react-native-mmkv@4.3.2",
            "react-native-mmkv-storage@13.1.0"
        ]
    );
}

#[test]
fn no_source_at_all_is_an_error() {
    let (result, out) = run(Err("offline".into()), None, None, &opts(true));
    assert!(matches!(result, Err(Error::NoSources)), "{out}");
}
