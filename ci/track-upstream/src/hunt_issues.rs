//! One issue per failure signature of the nightly conformance hunt (`hunt-issues`).
//!
//! A signature's issue is found by the token `[hunt <id>]` in its title. Then:
//!
//! - **no issue**: one is opened (label [`HUNT_LABEL`]) with the signature's fields, the
//!   count, the base seed, the minimal workload and the replay command;
//! - **an open issue**: a comment is added only when this hunt's example is smaller (a shorter
//!   `workload.yaml`, in bytes) than every example recorded on the issue, so the issue always
//!   leads to the smallest known workload; otherwise nothing is written;
//! - **a closed issue**: a comment says the difference is back, once per closing (a comment
//!   records the `closedAt` it answered; reopening and closing again re-arms it); afterwards
//!   the open-issue rule applies.
//!
//! The examples recorded are read from a hidden marker, `<!-- hunt-example bytes=N -->`
//! (`closed-at=...` added on a closed issue), that every body and comment written here ends
//! with. An issue with no marker (opened by hand) gets one comment with the example.
//!
//! Workloads longer than [`MAX_WORKLOAD_LINES`] or [`MAX_WORKLOAD_BYTES`] are cut (the failure
//! folder has the whole file). The replay command is the hunt's, prefixed with
//! `MMKV_VERSIONS=<the signature's versions>` unless it sets `MMKV_VERSIONS` itself.

use std::io::Write;

use crate::error::{Error, Result};
use crate::hunt::{Finding, Suite};
use crate::issues::{ExistingIssue, IssueThread, IssueTracker, NewIssue};

/// The label of the hunt's issues.
pub const HUNT_LABEL: &str = "upstream-difference";

/// The description given to [`HUNT_LABEL`] when it is created.
pub const HUNT_LABEL_DESCRIPTION: &str =
    "A difference between mmkv-reader and the official MMKV library found by the nightly hunt";

/// A workload longer than this many lines is cut in issue text.
pub const MAX_WORKLOAD_LINES: usize = 200;
/// A workload longer than this many bytes is cut in issue text (GitHub refuses bodies over
/// 65,536 characters).
pub const MAX_WORKLOAD_BYTES: usize = 20_000;
/// Titles are cut to this many characters.
const MAX_TITLE_CHARS: usize = 120;
const MARKER: &str = "<!-- hunt-example";

/// The token that names signature `id` in its issue's title.
pub fn title_token(id: &str) -> String {
    format!("[hunt {id}]")
}

/// The title of a finding's issue: the token, then suite, store kind, versions and what
/// differed, cut to 120 characters.
pub fn issue_title(f: &Finding) -> String {
    let s = &f.signature;
    let title = format!(
        "{} {} {} on {}: {}",
        title_token(&s.id),
        s.suite,
        s.kind,
        s.versions,
        s.compared
    );
    cut_chars(&title, MAX_TITLE_CHARS)
}

/// The body of a finding's new issue. `run_url` is the CI run whose artifacts hold the
/// failure folder.
pub fn issue_body(f: &Finding, run_url: Option<&str>) -> String {
    let s = &f.signature;
    let mut b = format!(
        "The nightly conformance hunt found a difference between mmkv-reader and the official \
         MMKV library that no issue tracks yet.\n\n\
         | field | value |\n\
         | --- | --- |\n\
         | signature | `{id}` |\n\
         | suite | {suite} |\n\
         | versions | {versions} ({list}) |\n\
         | store kind | {kind} |\n\
         | compared | {compared} |\n\
         | first op | {first_op} |\n\
         | count | {count} of {runs} {suite} {unit} |\n\
         | base seed | {base} |\n\
         | example seed | {seed} |\n\n",
        id = s.id,
        suite = s.suite,
        versions = cell(&s.versions),
        list = cell(&s.version_list.join(", ")),
        kind = cell(&code(&s.kind)),
        compared = cell(&code(&s.compared)),
        first_op = cell(&code(&s.first_op)),
        count = s.count,
        runs = f.runs,
        unit = unit(s.suite),
        base = f.base_seed,
        seed = s.example.seed,
    );
    b.push_str(&example_sections(f, run_url));
    b.push_str(
        "_Opened by the nightly conformance hunt (`.github/workflows/hunt.yml`, \
         `track-upstream hunt-issues`)._\n",
    );
    b.push_str(&marker(f, None));
    b
}

/// Why an existing issue gets a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// The issue is closed and no comment answered this closing yet.
    Reappeared {
        /// The issue's `closedAt` (`unknown` when the tracker does not say).
        closed_at: String,
    },
    /// This example is shorter than every one recorded (`None`: none recorded).
    Smaller {
        /// The smallest recorded workload, in bytes.
        previous: Option<usize>,
    },
}

/// What to do with an existing issue (see the module docs); `None`: nothing.
pub fn decide(issue: &ExistingIssue, thread: &IssueThread, f: &Finding) -> Option<Update> {
    let markers: Vec<Marker> = thread.texts().flat_map(parse_markers).collect();
    // The listed state decides; `closedAt` only when the state is unknown (a reopened issue
    // may keep its last closing time).
    let closed = match issue.state {
        Some(_) => issue.is_closed(),
        None => thread.closed_at.is_some(),
    };
    if closed {
        let closed_at = thread.closed_at.as_deref().unwrap_or("unknown");
        if !markers
            .iter()
            .any(|m| m.closed_at.as_deref() == Some(closed_at))
        {
            return Some(Update::Reappeared {
                closed_at: closed_at.to_string(),
            });
        }
    }
    let previous = markers.iter().filter_map(|m| m.bytes).min();
    match previous {
        Some(p) if f.signature.example.workload.len() >= p => None,
        _ => Some(Update::Smaller { previous }),
    }
}

/// The comment for an existing issue.
pub fn comment_body(f: &Finding, update: &Update, run_url: Option<&str>) -> String {
    let s = &f.signature;
    let bytes = s.example.workload.len();
    let (why, closed_at) = match update {
        Update::Reappeared { closed_at } => (
            format!("This issue is closed ({closed_at}), but the difference is back."),
            Some(closed_at.as_str()),
        ),
        Update::Smaller { previous: Some(p) } => (
            format!(
                "A smaller example: {bytes} bytes of {}, down from {p}.",
                example_name(s.suite)
            ),
            None,
        ),
        Update::Smaller { previous: None } => (
            format!("An example ({bytes} bytes of {}).", example_name(s.suite)),
            None,
        ),
    };
    let mut b = format!(
        "{why}\n\nIn this hunt, {count} of {runs} {suite} {unit} failed with this signature \
         (base seed {base}, example seed {seed}).\n\n",
        count = s.count,
        runs = f.runs,
        suite = s.suite,
        unit = unit(s.suite),
        base = f.base_seed,
        seed = s.example.seed,
    );
    b.push_str(&example_sections(f, run_url));
    b.push_str(&marker(f, closed_at));
    b
}

/// What a suite counts: property `runs`, or judged `states` (fault, power loss).
fn unit(suite: Suite) -> &'static str {
    if suite.states() {
        "states"
    } else {
        "runs"
    }
}

/// What an example's text is: the workload, or the saved state's description.
fn example_name(suite: Suite) -> &'static str {
    if suite.states() {
        "state description"
    } else {
        "workload.yaml"
    }
}

/// The minimal workload (or saved state) and replay sections, shared by bodies and comments.
fn example_sections(f: &Finding, run_url: Option<&str>) -> String {
    let s = &f.signature;
    let e = &s.example;
    let (workload, cut) = cut_workload(&e.workload);
    let fence = fence_for(&workload);
    let (heading, name, lang) = if s.suite.states() {
        (
            "Saved state",
            "state description (`verdict.txt` or `state.txt`)",
            "text",
        )
    } else {
        ("Minimal workload", "`workload.yaml`", "yaml")
    };
    let mut b = format!("## {heading}\n\n");
    b.push_str(&format!(
        "The example's {name} ({} bytes{}):\n\n{fence}{lang}\n{workload}",
        e.workload.len(),
        if cut {
            ", cut here: the whole file is in the failure folder"
        } else {
            ""
        },
    ));
    if !workload.ends_with('\n') {
        b.push('\n');
    }
    b.push_str(&format!("{fence}\n\n## Replay\n\n"));
    let replay = if e.replay.contains("MMKV_VERSIONS=") || s.version_list.is_empty() {
        e.replay.clone()
    } else {
        format!("MMKV_VERSIONS={} {}", s.version_list.join(","), e.replay)
    };
    b.push_str(&format!(
        "With the versions it fails on built (`MMKV_VERSIONS`), from the repository root:\n\n\
         ```sh\n{replay}\n```\n\n"
    ));
    let dir = code(&e.dir);
    match run_url {
        Some(url) => {
            let artifact = f.source.file_stem().map_or_else(
                || "?".to_string(),
                |stem| stem.to_string_lossy().into_owned(),
            );
            b.push_str(&format!(
                "The failure folder {dir} is in the artifact {} of {url}.",
                code(&artifact)
            ))
        }
        None => b.push_str(&format!("The failure folder is {dir}.")),
    }
    if !cut && !s.suite.states() {
        b.push_str(" `replay` also takes the workload above saved as a `.yaml` file.");
    }
    b.push_str("\n\n");
    b
}

fn marker(f: &Finding, closed_at: Option<&str>) -> String {
    let bytes = f.signature.example.workload.len();
    match closed_at {
        Some(at) => format!("{MARKER} bytes={bytes} closed-at={at} -->\n"),
        None => format!("{MARKER} bytes={bytes} -->\n"),
    }
}

/// A marker read back from an issue's text.
#[derive(Debug, Default, PartialEq, Eq)]
struct Marker {
    bytes: Option<usize>,
    closed_at: Option<String>,
}

fn parse_markers(text: &str) -> Vec<Marker> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(pos) = rest.find(MARKER) {
        rest = &rest[pos + MARKER.len()..];
        let end = rest.find("-->").unwrap_or(rest.len());
        let mut m = Marker::default();
        for field in rest[..end].split_whitespace() {
            match field.split_once('=') {
                Some(("bytes", v)) => m.bytes = v.parse().ok(),
                Some(("closed-at", v)) => m.closed_at = Some(v.to_string()),
                _ => {}
            }
        }
        out.push(m);
        rest = &rest[end..];
    }
    out
}

/// `workload` within [`MAX_WORKLOAD_LINES`] and [`MAX_WORKLOAD_BYTES`] (whole lines, then a
/// YAML comment saying how many were cut), and whether it was cut.
fn cut_workload(workload: &str) -> (String, bool) {
    let lines: Vec<&str> = workload.lines().collect();
    let mut kept = String::new();
    let mut n = 0;
    for line in &lines {
        if n == MAX_WORKLOAD_LINES || kept.len() + line.len() + 1 > MAX_WORKLOAD_BYTES {
            break;
        }
        kept.push_str(line);
        kept.push('\n');
        n += 1;
    }
    if n == lines.len() {
        return (workload.to_string(), false);
    }
    kept.push_str(&format!(
        "# ... {} more lines cut ({} of {} bytes shown)\n",
        lines.len() - n,
        kept.len(),
        workload.len()
    ));
    (kept, true)
}

/// The longest run of backticks in `text`.
fn longest_backticks(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// A code fence longer than any backtick run in `text` (at least three backticks).
fn fence_for(text: &str) -> String {
    "`".repeat((longest_backticks(text) + 1).max(3))
}

/// `text` as a Markdown code span (delimited by more backticks than any run it holds).
fn code(text: &str) -> String {
    let ticks = "`".repeat(longest_backticks(text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// `text` fit for one Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn cut_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

/// Options of a `hunt-issues` run.
#[derive(Debug, Clone, Default)]
pub struct HuntIssueOptions {
    /// Print what would be done; open and comment nothing.
    pub dry_run: bool,
    /// Label for opened issues.
    pub label: String,
    /// The CI run whose artifacts hold the failure folders.
    pub run_url: Option<String>,
}

/// What a `hunt-issues` run found and did (signature ids).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HuntIssueReport {
    /// Signatures with no issue yet (opened unless dry run).
    pub new: Vec<String>,
    /// Issues opened: (id, URL).
    pub opened: Vec<(String, String)>,
    /// Existing issues that get a comment: (id, issue number, the reason).
    pub updates: Vec<(String, u64, Update)>,
    /// Comments added: (id, URL).
    pub commented: Vec<(String, String)>,
    /// Signatures whose issue is left as it is: (id, issue number if known).
    pub unchanged: Vec<(String, Option<u64>)>,
}

/// Opens or updates one issue per finding (see the module docs). `tracker` must be given
/// unless `dry_run`; without one every finding counts as new. Lines go to `out`: `new: <id>
/// ...`, `opened: <id> <url>`, `exists: <id> (#N "title")`, `update: <id> #N <reason>`,
/// `commented: <id> <url>`, `unchanged: <id> #N`.
pub fn run_hunt_issues(
    findings: &[Finding],
    tracker: Option<&dyn IssueTracker>,
    opts: &HuntIssueOptions,
    out: &mut dyn Write,
) -> Result<HuntIssueReport> {
    let w = |e: std::io::Error| Error::io("<stdout>", e);
    let mut report = HuntIssueReport::default();
    let run_url = opts.run_url.as_deref();
    for f in findings {
        let s = &f.signature;
        let token = title_token(&s.id);
        let existing = match tracker {
            Some(t) => t.find_titled(&s.id, &|title| title.contains(&token))?,
            None => Vec::new(),
        };
        let Some(issue) = existing.first() else {
            writeln!(
                out,
                "new: {} {} {} {} ({} failing)",
                s.id, s.suite, s.kind, s.versions, s.count
            )
            .map_err(w)?;
            report.new.push(s.id.clone());
            if opts.dry_run {
                continue;
            }
            let tracker = tracker.ok_or_else(|| Error::Command {
                command: "open issue".into(),
                message: "no issue tracker configured".into(),
            })?;
            let url = tracker.create(&NewIssue {
                title: issue_title(f),
                body: issue_body(f, run_url),
                label: opts.label.clone(),
            })?;
            writeln!(out, "opened: {} {url}", s.id).map_err(w)?;
            report.opened.push((s.id.clone(), url));
            continue;
        };
        writeln!(
            out,
            "exists: {} ({}{:?})",
            s.id,
            issue.number.map(|n| format!("#{n} ")).unwrap_or_default(),
            issue.title
        )
        .map_err(w)?;
        let (Some(number), Some(tracker)) = (issue.number, tracker) else {
            report.unchanged.push((s.id.clone(), issue.number));
            continue;
        };
        let Some(update) = decide(issue, &tracker.thread(number)?, f) else {
            writeln!(out, "unchanged: {} #{number}", s.id).map_err(w)?;
            report.unchanged.push((s.id.clone(), Some(number)));
            continue;
        };
        let reason = match &update {
            Update::Reappeared { .. } => "closed, seen again".to_string(),
            Update::Smaller { previous: Some(p) } => {
                format!("smaller example ({} < {p} bytes)", s.example.workload.len())
            }
            Update::Smaller { previous: None } => "no example recorded".to_string(),
        };
        writeln!(out, "update: {} #{number} {reason}", s.id).map_err(w)?;
        report.updates.push((s.id.clone(), number, update.clone()));
        if opts.dry_run {
            continue;
        }
        let url = tracker.comment(number, &comment_body(f, &update, run_url))?;
        writeln!(out, "commented: {} {url}", s.id).map_err(w)?;
        report.commented.push((s.id.clone(), url));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip() {
        let text = "body\n<!-- hunt-example bytes=12 -->\nmore <!-- hunt-example bytes=7 closed-at=2026-12-01T00:00:00Z -->";
        assert_eq!(
            parse_markers(text),
            vec![
                Marker {
                    bytes: Some(12),
                    closed_at: None
                },
                Marker {
                    bytes: Some(7),
                    closed_at: Some("2026-12-01T00:00:00Z".into())
                }
            ]
        );
        assert!(parse_markers("<!-- other -->").is_empty());
    }

    #[test]
    fn long_workloads_are_cut_on_lines() {
        let long: String = (0..500).map(|i| format!("- op {i}\n")).collect();
        let (cut, was_cut) = cut_workload(&long);
        assert!(was_cut);
        assert_eq!(cut.lines().count(), MAX_WORKLOAD_LINES + 1);
        assert!(
            cut.ends_with("# ... 300 more lines cut (1690 of 4390 bytes shown)\n"),
            "{cut}"
        );
        let wide = format!("{}\n", "x".repeat(MAX_WORKLOAD_BYTES + 1));
        let (cut, was_cut) = cut_workload(&wide);
        assert!(was_cut && cut.starts_with("# ... 1 more lines cut"));
        assert_eq!(cut_workload("a: 1"), ("a: 1".to_string(), false));
    }

    #[test]
    fn fences_outrun_backticks_and_cells_escape_pipes() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("k: \"````\""), "`````");
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        assert_eq!(code("get(k)"), "`get(k)`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(cut_chars("abcdef", 4), "abc…");
        assert_eq!(cut_chars("abc", 4), "abc");
    }
}
