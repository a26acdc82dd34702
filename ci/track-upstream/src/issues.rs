//! Issue trackers: finding issues already opened (for a tag, or by a token in their title),
//! reading an issue's thread, opening issues and commenting on them.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::tags::Tag;

/// The label the tracker puts on (and searches among) its issues.
pub const DEFAULT_LABEL: &str = "upstream-release";

/// The description [`GhCli`] gives [`DEFAULT_LABEL`] when it creates it.
pub const DEFAULT_LABEL_DESCRIPTION: &str = "An upstream MMKV release that versions.yaml lacks";

/// An issue that exists already.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ExistingIssue {
    /// Its number, when known.
    #[serde(default)]
    pub number: Option<u64>,
    /// Its title.
    pub title: String,
    /// `OPEN` or `CLOSED` (as `gh` prints it), when known.
    #[serde(default)]
    pub state: Option<String>,
}

impl ExistingIssue {
    /// True when the issue is known to be closed.
    pub fn is_closed(&self) -> bool {
        self.state
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case("closed"))
    }
}

/// One comment of an issue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Comment {
    /// Markdown body.
    #[serde(default)]
    pub body: String,
}

/// An issue's text: its body and comments (the fields of `gh issue view --json
/// body,comments,closedAt`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct IssueThread {
    /// Markdown body.
    #[serde(default)]
    pub body: String,
    /// Comments, oldest first.
    #[serde(default)]
    pub comments: Vec<Comment>,
    /// When it was last closed (ISO 8601), if it is closed.
    #[serde(default, rename = "closedAt")]
    pub closed_at: Option<String>,
}

impl IssueThread {
    /// The body followed by every comment's body.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.body.as_str()).chain(self.comments.iter().map(|c| c.body.as_str()))
    }
}

/// An issue to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewIssue {
    /// Title.
    pub title: String,
    /// Markdown body.
    pub body: String,
    /// Label to attach.
    pub label: String,
}

/// Where issues live.
pub trait IssueTracker {
    /// Issues (open or closed) whose title satisfies `matches`: the tracker's labelled issues
    /// and those a title search for the word `search` finds.
    fn find_titled(
        &self,
        search: &str,
        matches: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<ExistingIssue>>;
    /// Issues (open or closed) whose title names `tag`.
    fn existing_for(&self, tag: Tag) -> Result<Vec<ExistingIssue>> {
        self.find_titled(&tag.to_string(), &|title| title_mentions_tag(title, tag))
    }
    /// The body and comments of issue `number`.
    fn thread(&self, number: u64) -> Result<IssueThread>;
    /// Opens an issue; returns its URL or another identifier.
    fn create(&self, issue: &NewIssue) -> Result<String>;
    /// Adds a comment to issue `number`; returns its URL or another identifier.
    fn comment(&self, number: u64, body: &str) -> Result<String>;
}

/// True when `title` names `tag` as a whole token (`v2.4.1` does not match `v2.4.10`).
pub fn title_mentions_tag(title: &str, tag: Tag) -> bool {
    let needle = tag.to_string();
    let continues = |c: char| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-';
    let mut from = 0;
    while let Some(rel) = title[from..].find(&needle) {
        let pos = from + rel;
        let end = pos + needle.len();
        let before_ok = title[..pos]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        // A trailing sentence dot is fine; `.1` is a longer version.
        let rest = &title[end..];
        let after_ok = match rest.chars().next() {
            None => true,
            Some('.') => !rest[1..].starts_with(|c: char| c.is_ascii_digit()),
            Some(c) => !continues(c),
        };
        if before_ok && after_ok {
            return true;
        }
        from = end;
    }
    false
}

/// Keeps the issues whose title names `tag`.
pub fn issues_for_tag(issues: &[ExistingIssue], tag: Tag) -> Vec<ExistingIssue> {
    issues
        .iter()
        .filter(|i| title_mentions_tag(&i.title, tag))
        .cloned()
        .collect()
}

/// Parses a list of existing issues: the JSON that `gh issue list --json number,title,state`
/// prints, or plain text with one title per line.
pub fn parse_issue_list(text: &str) -> Result<Vec<ExistingIssue>, String> {
    Ok(parse_issue_records(text)?
        .into_iter()
        .map(|(issue, _)| issue)
        .collect())
}

/// One entry of an issue list file: an issue and, optionally, its thread.
#[derive(Deserialize)]
struct IssueRecord {
    #[serde(flatten)]
    issue: ExistingIssue,
    #[serde(flatten)]
    thread: IssueThread,
}

/// Like [`parse_issue_list`], keeping each JSON entry's `body`, `comments` and `closedAt`
/// (absent fields are empty).
fn parse_issue_records(text: &str) -> Result<Vec<(ExistingIssue, IssueThread)>, String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        let records: Vec<IssueRecord> = serde_json::from_str(trimmed).map_err(|e| e.to_string())?;
        return Ok(records.into_iter().map(|r| (r.issue, r.thread)).collect());
    }
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let issue = ExistingIssue {
                number: None,
                title: l.to_string(),
                state: None,
            };
            (issue, IssueThread::default())
        })
        .collect())
}

/// [`IssueTracker`] backed by a fixed list (from `--existing-issues FILE`, or tests).
/// Created issues and comments are kept in memory, so a second identical run would see them.
#[derive(Debug, Default)]
pub struct ListTracker {
    issues: RefCell<Vec<ExistingIssue>>,
    threads: RefCell<BTreeMap<u64, IssueThread>>,
}

impl ListTracker {
    /// A tracker that knows `issues` (with empty threads).
    pub fn new(issues: Vec<ExistingIssue>) -> Self {
        ListTracker {
            issues: RefCell::new(issues),
            threads: RefCell::default(),
        }
    }

    /// Reads a list file (see [`parse_issue_list`]); a JSON entry may also carry its
    /// thread's `body`, `comments` (`[{"body": ...}]`) and `closedAt`.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let records = parse_issue_records(&text).map_err(|message| Error::Versions {
            path: path.to_path_buf(),
            message,
        })?;
        let tracker = ListTracker::default();
        for (issue, thread) in records {
            if let Some(number) = issue.number {
                tracker.threads.borrow_mut().insert(number, thread);
            }
            tracker.issues.borrow_mut().push(issue);
        }
        Ok(tracker)
    }

    /// Every issue known, including the ones created through this tracker.
    pub fn issues(&self) -> Vec<ExistingIssue> {
        self.issues.borrow().clone()
    }
}

impl IssueTracker for ListTracker {
    fn find_titled(
        &self,
        _search: &str,
        matches: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<ExistingIssue>> {
        Ok(self
            .issues
            .borrow()
            .iter()
            .filter(|i| matches(&i.title))
            .cloned()
            .collect())
    }

    fn thread(&self, number: u64) -> Result<IssueThread> {
        Ok(self
            .threads
            .borrow()
            .get(&number)
            .cloned()
            .unwrap_or_default())
    }

    fn create(&self, issue: &NewIssue) -> Result<String> {
        let mut issues = self.issues.borrow_mut();
        let number = issues.len() as u64 + 1;
        issues.push(ExistingIssue {
            number: Some(number),
            title: issue.title.clone(),
            state: Some("OPEN".into()),
        });
        self.threads.borrow_mut().insert(
            number,
            IssueThread {
                body: issue.body.clone(),
                ..IssueThread::default()
            },
        );
        Ok(format!("#{number}"))
    }

    fn comment(&self, number: u64, body: &str) -> Result<String> {
        let mut threads = self.threads.borrow_mut();
        let comments = &mut threads.entry(number).or_default().comments;
        comments.push(Comment {
            body: body.to_string(),
        });
        Ok(format!("#{number} comment {}", comments.len()))
    }
}

/// [`IssueTracker`] that runs the GitHub CLI (`gh`), which takes the repository from
/// `GH_REPO` or the checkout and the token from `GH_TOKEN`.
#[derive(Debug)]
pub struct GhCli {
    /// The program to run (normally `gh`).
    pub program: String,
    /// Label of the tracker's issues.
    pub label: String,
    /// The label's description, set when the label is (re)created before opening an issue.
    pub label_description: String,
    labelled: RefCell<Option<Vec<ExistingIssue>>>,
    label_ensured: RefCell<bool>,
}

impl GhCli {
    /// A `gh`-backed tracker using `label` (described as [`DEFAULT_LABEL_DESCRIPTION`]).
    pub fn new(program: impl Into<String>, label: impl Into<String>) -> Self {
        GhCli {
            program: program.into(),
            label: label.into(),
            label_description: DEFAULT_LABEL_DESCRIPTION.to_string(),
            labelled: RefCell::new(None),
            label_ensured: RefCell::new(false),
        }
    }

    /// The same tracker with another description for its label.
    pub fn with_label_description(mut self, description: impl Into<String>) -> Self {
        self.label_description = description.into();
        self
    }

    fn run(&self, args: &[&str]) -> Result<String> {
        crate::command::run(&self.program, args, None)
    }

    fn parse<T: serde::de::DeserializeOwned>(&self, args: &[&str], out: &str) -> Result<T> {
        serde_json::from_str(out).map_err(|e| Error::Output {
            command: format!("{} {}", self.program, args.join(" ")),
            message: e.to_string(),
        })
    }

    fn list(&self, extra: &[&str]) -> Result<Vec<ExistingIssue>> {
        let mut args = vec![
            "issue",
            "list",
            "--state",
            "all",
            "--limit",
            "1000",
            "--json",
            "number,title,state",
        ];
        args.extend_from_slice(extra);
        let out = self.run(&args)?;
        parse_issue_list(&out).map_err(|message| Error::Output {
            command: format!("{} {}", self.program, args.join(" ")),
            message,
        })
    }
}

impl IssueTracker for GhCli {
    fn find_titled(
        &self,
        search: &str,
        matches: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<ExistingIssue>> {
        if self.labelled.borrow().is_none() {
            let all = self.list(&["--label", &self.label])?;
            *self.labelled.borrow_mut() = Some(all);
        }
        let mut found: Vec<ExistingIssue> = (self.labelled.borrow().as_deref())
            .unwrap_or(&[])
            .iter()
            .filter(|i| matches(&i.title))
            .cloned()
            .collect();
        // Also catch issues someone opened by hand without the label.
        let query = format!("{search} in:title");
        for issue in self.list(&["--search", &query])? {
            if matches(&issue.title) && !found.contains(&issue) {
                found.push(issue);
            }
        }
        Ok(found)
    }

    fn thread(&self, number: u64) -> Result<IssueThread> {
        let number = number.to_string();
        let args = ["issue", "view", &number, "--json", "body,comments,closedAt"];
        let out = self.run(&args)?;
        self.parse(&args, &out)
    }

    fn create(&self, issue: &NewIssue) -> Result<String> {
        if !*self.label_ensured.borrow() {
            self.run(&[
                "label",
                "create",
                &issue.label,
                "--force",
                "--color",
                "B60205",
                "--description",
                &self.label_description,
            ])?;
            *self.label_ensured.borrow_mut() = true;
        }
        let out = self.run(&[
            "issue",
            "create",
            "--title",
            &issue.title,
            "--body",
            &issue.body,
            "--label",
            &issue.label,
        ])?;
        Ok(out.trim().to_string())
    }

    fn comment(&self, number: u64, body: &str) -> Result<String> {
        let number = number.to_string();
        let out = self.run(&["issue", "comment", &number, "--body", body])?;
        Ok(out.trim().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Tag {
        Tag::parse(s).unwrap()
    }

    #[test]
    fn tag_tokens_in_titles() {
        assert!(title_mentions_tag(
            "Upstream MMKV v2.4.1 is not in versions.yaml",
            t("v2.4.1")
        ));
        assert!(title_mentions_tag("support v2.4.1.", t("v2.4.1")));
        assert!(title_mentions_tag("(v2.4.1)", t("v2.4.1")));
        assert!(!title_mentions_tag(
            "Upstream MMKV v2.4.10 is not in versions.yaml",
            t("v2.4.1")
        ));
        assert!(!title_mentions_tag("bump to v2.4.1.3", t("v2.4.1")));
        assert!(!title_mentions_tag("xv2.4.1", t("v2.4.1")));
        assert!(!title_mentions_tag("v2.4.1-beta", t("v2.4.1")));
        assert!(title_mentions_tag("v2.4.10 and v2.4.1", t("v2.4.1")));
    }

    #[test]
    fn issue_lists() {
        let json = r#"[{"number":7,"title":"Upstream MMKV v2.4.1 is not in versions.yaml"}]"#;
        let parsed = parse_issue_list(json).unwrap();
        assert_eq!(parsed[0].number, Some(7));
        let plain = parse_issue_list("# titles\nA v2.4.1 title\n\n").unwrap();
        assert_eq!(plain.len(), 1);
        assert_eq!(plain[0].number, None);
        assert!(parse_issue_list("[{]").is_err());
    }

    #[test]
    fn list_tracker_remembers_created() {
        let tracker = ListTracker::new(vec![]);
        assert!(tracker.existing_for(t("v2.4.2")).unwrap().is_empty());
        let id = tracker
            .create(&NewIssue {
                title: "Upstream MMKV v2.4.2 is not in versions.yaml".into(),
                body: String::new(),
                label: DEFAULT_LABEL.into(),
            })
            .unwrap();
        assert_eq!(id, "#1");
        assert_eq!(tracker.existing_for(t("v2.4.2")).unwrap().len(), 1);
        assert!(tracker.existing_for(t("v2.4.1")).unwrap().is_empty());
        assert_eq!(tracker.thread(1).unwrap().comments.len(), 0);
        tracker.comment(1, "seen again").unwrap();
        let thread = tracker.thread(1).unwrap();
        assert_eq!(thread.texts().collect::<Vec<_>>(), vec!["", "seen again"]);
    }

    #[test]
    fn list_files_carry_state_and_threads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("issues.json");
        std::fs::write(
            &path,
            r#"[{"number":3,"title":"[hunt 00ff] x","state":"CLOSED","body":"b",
                 "closedAt":"2026-12-01T00:00:00Z","comments":[{"body":"c"}]},
                {"number":4,"title":"other"}]"#,
        )
        .unwrap();
        let tracker = ListTracker::load(&path).unwrap();
        let found = tracker
            .find_titled("00ff", &|title| title.contains("[hunt 00ff]"))
            .unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].is_closed());
        let thread = tracker.thread(3).unwrap();
        assert_eq!(thread.closed_at.as_deref(), Some("2026-12-01T00:00:00Z"));
        assert_eq!(thread.texts().collect::<Vec<_>>(), vec!["b", "c"]);
        assert!(!tracker.issues()[1].is_closed());
        assert_eq!(tracker.thread(4).unwrap(), IssueThread::default());
    }
}
