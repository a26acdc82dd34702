//! `hunt-issues` on the fixture summary (two signatures, one with an issue already), with an
//! in-memory tracker and, through the binary, a shell stand-in for `gh` (offline).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use track_upstream::hunt::{load, merge, parse, Finding};
use track_upstream::hunt_issues::{
    decide, run_hunt_issues, HuntIssueOptions, HuntIssueReport, Update, HUNT_LABEL,
};
use track_upstream::issues::{ExistingIssue, IssueThread, IssueTracker, ListTracker};
use track_upstream::Error;

const NEW_ID: &str = "3f9a1c0e7b2d4856";
const EXISTING_ID: &str = "a17b09d2c4e6f8e1";
const RUN_URL: &str = "https://github.com/o/r/actions/runs/1";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn findings() -> Vec<Finding> {
    let path = fixture("hunt.json");
    merge(&[(path.clone(), load(&path).unwrap())])
}

fn run(tracker: &dyn IssueTracker, dry_run: bool) -> (HuntIssueReport, String) {
    let opts = HuntIssueOptions {
        dry_run,
        label: HUNT_LABEL.into(),
        run_url: Some(RUN_URL.into()),
    };
    let mut out = Vec::new();
    let report = run_hunt_issues(&findings(), Some(tracker), &opts, &mut out).unwrap();
    (report, String::from_utf8(out).unwrap())
}

/// A tracker holding issue #12 of the existing signature, with `body` and `closed_at`.
fn tracker_with(body: &str, closed_at: Option<&str>) -> ListTracker {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("issues.json");
    let issue = serde_json::json!([{
        "number": 12,
        "title": format!("[hunt {EXISTING_ID}] migration plain on v1.2.0–v1.2.16: all_keys()"),
        "state": if closed_at.is_some() { "CLOSED" } else { "OPEN" },
        "body": body,
        "closedAt": closed_at,
    }]);
    std::fs::write(&path, issue.to_string()).unwrap();
    ListTracker::load(&path).unwrap()
}

#[test]
fn fixture_opens_exactly_one_issue_and_leaves_the_existing_one() {
    let tracker = ListTracker::load(&fixture("hunt-existing-issues.json")).unwrap();
    let (report, out) = run(&tracker, false);
    assert_eq!(report.new, vec![NEW_ID]);
    assert_eq!(report.opened, vec![(NEW_ID.to_string(), "#3".to_string())]);
    assert_eq!(
        report.unchanged,
        vec![(EXISTING_ID.to_string(), Some(12))],
        "#12 records a 150-byte example, smaller than this hunt's 199: {out}"
    );
    assert!(report.commented.is_empty(), "{out}");
    assert!(
        out.contains(&format!("exists: {EXISTING_ID} (#12 ")),
        "{out}"
    );

    let issues = tracker.issues();
    assert_eq!(issues.len(), 3);
    let opened = &issues[2];
    // The golden file: the title, a blank line, then the body.
    let got = format!("{}\n\n{}", opened.title, tracker.thread(3).unwrap().body);
    let golden = fixture("hunt-new-issue.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &got).unwrap();
    }
    assert_eq!(got, std::fs::read_to_string(&golden).unwrap());
    assert_eq!(
        opened.title,
        "[hunt 3f9a1c0e7b2d4856] differential aes128 on v1.3.3–v1.3.7: get_i64(\"k3\")"
    );
    assert_eq!(tracker.thread(12).unwrap().comments.len(), 1, "untouched");

    // A second run finds both issues and writes nothing.
    let (again, out) = run(&tracker, false);
    assert!(again.new.is_empty() && again.commented.is_empty(), "{out}");
    assert_eq!(again.unchanged.len(), 2);
    assert_eq!(tracker.issues().len(), 3);
}

#[test]
fn an_open_issue_gets_a_comment_only_for_a_smaller_example() {
    let tracker = tracker_with("old text\n<!-- hunt-example bytes=500 -->\n", None);
    let (report, out) = run(&tracker, false);
    assert_eq!(
        report.updates,
        vec![(
            EXISTING_ID.to_string(),
            12,
            Update::Smaller {
                previous: Some(500)
            }
        )]
    );
    assert!(out.contains(&format!(
        "update: {EXISTING_ID} #12 smaller example (199 < 500 bytes)"
    )));
    let comments = tracker.thread(12).unwrap().comments;
    assert_eq!(comments.len(), 1);
    let c = &comments[0].body;
    assert!(c.starts_with("A smaller example: 199 bytes of workload.yaml, down from 500.\n"));
    assert!(c.contains("2 of 312 migration runs failed"), "{c}");
    assert!(c.contains("example seed 77"));
    assert!(c.contains("```yaml\ntag: v1.2.0\n"));
    assert!(c.contains("MMKV_VERSIONS=v1.2.0,v1.2.16 cargo run --release -p conformance -- replay target/hunt/migration/v1.2.0-plain-1\n"));
    assert!(c.ends_with("<!-- hunt-example bytes=199 -->\n"));

    let (again, _) = run(&tracker, false);
    assert!(again.commented.is_empty());
    assert_eq!(tracker.thread(12).unwrap().comments.len(), 1);
}

#[test]
fn a_closed_issue_is_told_once_per_closing_that_the_difference_is_back() {
    let closed = "2026-12-01T09:00:00Z";
    let tracker = tracker_with("<!-- hunt-example bytes=100 -->", Some(closed));
    let (dry, out) = run(&tracker, true);
    assert_eq!(dry.updates.len(), 1, "{out}");
    assert!(dry.commented.is_empty());
    assert!(tracker.thread(12).unwrap().comments.is_empty(), "dry run");

    let (report, _) = run(&tracker, false);
    assert_eq!(
        report.updates[0].2,
        Update::Reappeared {
            closed_at: closed.into()
        }
    );
    let comments = tracker.thread(12).unwrap().comments;
    assert!(comments[0]
        .body
        .starts_with("This issue is closed (2026-12-01T09:00:00Z), but the difference is back."));
    assert!(comments[0]
        .body
        .ends_with("<!-- hunt-example bytes=199 closed-at=2026-12-01T09:00:00Z -->\n"));
    let (again, _) = run(&tracker, false);
    assert!(again.commented.is_empty(), "told once");

    // Reopened: the state says open, whatever closedAt still says.
    let reopened = ExistingIssue {
        number: Some(12),
        title: String::new(),
        state: Some("OPEN".into()),
    };
    let thread = IssueThread {
        body: "<!-- hunt-example bytes=100 -->".into(),
        closed_at: Some("2026-12-02T00:00:00Z".into()),
        ..IssueThread::default()
    };
    assert_eq!(decide(&reopened, &thread, &findings()[1]), None);
}

#[test]
fn a_hand_opened_issue_without_a_record_gets_the_example_once() {
    let tracker = ListTracker::new(vec![ExistingIssue {
        number: Some(5),
        title: format!("Reader differs [hunt {EXISTING_ID}]"),
        state: None,
    }]);
    let (report, _) = run(&tracker, false);
    assert_eq!(report.updates[0].2, Update::Smaller { previous: None });
    assert_eq!(report.opened.len(), 1, "the other signature");
    let (again, _) = run(&tracker, false);
    assert!(again.commented.is_empty() && again.opened.is_empty());
    assert_eq!(tracker.thread(5).unwrap().comments.len(), 1);
    assert_ne!(tracker.thread(5).unwrap(), IssueThread::default());
}

#[test]
fn malformed_summaries_and_other_schemas_are_typed_errors() {
    let p = Path::new("hunt.json");
    let text = std::fs::read_to_string(fixture("hunt.json")).unwrap();
    let err = parse("{\"schema\": ", p).unwrap_err();
    assert!(matches!(err, Error::HuntSummary { .. }), "{err}");
    let other = text.replace("conformance-hunt/3", "conformance-hunt/1");
    match parse(&other, p) {
        Err(Error::HuntSchema { found, .. }) => assert_eq!(found, "conformance-hunt/1"),
        r => panic!("{r:?}"),
    }
    match parse("{\"signatures\": []}", p) {
        Err(e @ Error::HuntSchema { .. }) => {
            assert!(e.to_string().contains("\"(none)\""), "{e}")
        }
        r => panic!("{r:?}"),
    }
    let no_count = text.replace("\"count\": 4,", "");
    match parse(&no_count, p) {
        Err(Error::HuntSummary { message, .. }) => assert!(message.contains("count"), "{message}"),
        r => panic!("{r:?}"),
    }
    let bad_suite = text.replace("\"suite\": \"migration\"", "\"suite\": \"sideways\"");
    assert!(matches!(
        parse(&bad_suite, p),
        Err(Error::HuntSummary { .. })
    ));
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

#[test]
fn cli_dry_run_and_schema_refusal() {
    let out = bin()
        .args(["hunt-issues", "--dry-run", "--summary"])
        .arg(fixture("hunt.json"))
        .arg("--existing-issues")
        .arg(fixture("hunt-existing-issues.json"))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        vec![
            "new: 3f9a1c0e7b2d4856 differential aes128 v1.3.3–v1.3.7 (4 failing)",
            "exists: a17b09d2c4e6f8e1 (#12 \"[hunt a17b09d2c4e6f8e1] migration plain on v1.2.0–v1.2.16: all_keys()\")",
            "unchanged: a17b09d2c4e6f8e1 #12",
        ]
    );

    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("hunt.json");
    std::fs::write(&other, r#"{"schema":"conformance-hunt/9"}"#).unwrap();
    let out = bin()
        .args(["hunt-issues", "--dry-run", "--summary"])
        .arg(&other)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out)
            .1
            .contains("unknown hunt summary schema \"conformance-hunt/9\""),
        "{}",
        text(&out).1
    );
}

#[cfg(unix)]
#[test]
fn cli_opens_and_comments_through_gh() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("gh.log");
    let gh = dir.path().join("gh");
    // #12 exists (labelled) and records a larger example; the other signature is new.
    std::fs::write(
        &gh,
        format!(
            r#"#!/bin/sh
echo "$*" >> "$FAKE_GH_LOG"
case "$1 $2" in
  "issue list") case "$*" in
      *"--label upstream-difference"*) echo '[{{"number":12,"title":"[hunt {EXISTING_ID}] m","state":"OPEN"}}]' ;;
      *) echo '[]' ;;
    esac ;;
  "issue view") echo '{{"body":"<!-- hunt-example bytes=900 -->","comments":[],"closedAt":null}}' ;;
  "label create") ;;
  "issue create") echo "https://example.invalid/issues/13" ;;
  "issue comment") echo "https://example.invalid/issues/$3#c1" ;;
  *) echo "unexpected: $*" >&2; exit 2 ;;
esac
"#
        ),
    )
    .unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = bin()
        .args(["hunt-issues", "--summary"])
        .arg(fixture("hunt.json"))
        .args(["--run-url", RUN_URL, "--gh"])
        .arg(&gh)
        .env("FAKE_GH_LOG", &log)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains(&format!(
        "opened: {NEW_ID} https://example.invalid/issues/13"
    )));
    assert!(stdout.contains(&format!(
        "commented: {EXISTING_ID} https://example.invalid/issues/12#c1"
    )));
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.contains(&format!("issue list --state all --limit 1000 --json number,title,state --search {NEW_ID} in:title")), "{calls}");
    assert!(
        calls.contains("issue view 12 --json body,comments,closedAt"),
        "{calls}"
    );
    assert!(
        calls.contains("label create upstream-difference --force"),
        "{calls}"
    );
    assert!(
        calls.contains(&format!(
            "issue create --title [hunt {NEW_ID}] differential"
        )),
        "{calls}"
    );
    assert!(calls.contains("--label upstream-difference\n"), "{calls}");
    assert_eq!(
        calls
            .matches("issue list --state all --limit 1000 --json number,title,state --label")
            .count(),
        1,
        "labelled list read once: {calls}"
    );
}
