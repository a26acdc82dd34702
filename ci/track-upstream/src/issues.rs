//! Issue trackers: finding issues already opened for a tag, and opening new ones.

use std::cell::RefCell;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::tags::Tag;

/// The label the tracker puts on (and searches among) its issues.
pub const DEFAULT_LABEL: &str = "upstream-release";

/// An issue that exists already.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ExistingIssue {
    /// Its number, when known.
    #[serde(default)]
    pub number: Option<u64>,
    /// Its title.
    pub title: String,
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
    /// Issues (open or closed) whose title names `tag`.
    fn existing_for(&self, tag: Tag) -> Result<Vec<ExistingIssue>>;
    /// Opens an issue; returns its URL or another identifier.
    fn create(&self, issue: &NewIssue) -> Result<String>;
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

/// Parses a list of existing issues: the JSON that `gh issue list --json number,title`
/// prints, or plain text with one title per line.
pub fn parse_issue_list(text: &str) -> Result<Vec<ExistingIssue>, String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return serde_json::from_str(trimmed).map_err(|e| e.to_string());
    }
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| ExistingIssue {
            number: None,
            title: l.to_string(),
        })
        .collect())
}

/// [`IssueTracker`] backed by a fixed list (from `--existing-issues FILE`, or tests).
/// Created issues are kept in memory, so a second identical run would see them.
#[derive(Debug, Default)]
pub struct ListTracker {
    issues: RefCell<Vec<ExistingIssue>>,
}

impl ListTracker {
    /// A tracker that knows `issues`.
    pub fn new(issues: Vec<ExistingIssue>) -> Self {
        ListTracker {
            issues: RefCell::new(issues),
        }
    }

    /// Reads a list file (see [`parse_issue_list`]).
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let issues = parse_issue_list(&text).map_err(|message| Error::Versions {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(ListTracker::new(issues))
    }

    /// Every issue known, including the ones created through this tracker.
    pub fn issues(&self) -> Vec<ExistingIssue> {
        self.issues.borrow().clone()
    }
}

impl IssueTracker for ListTracker {
    fn existing_for(&self, tag: Tag) -> Result<Vec<ExistingIssue>> {
        Ok(issues_for_tag(&self.issues.borrow(), tag))
    }

    fn create(&self, issue: &NewIssue) -> Result<String> {
        let mut issues = self.issues.borrow_mut();
        let number = issues.len() as u64 + 1;
        issues.push(ExistingIssue {
            number: Some(number),
            title: issue.title.clone(),
        });
        Ok(format!("#{number}"))
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
    labelled: RefCell<Option<Vec<ExistingIssue>>>,
    label_ensured: RefCell<bool>,
}

impl GhCli {
    /// A `gh`-backed tracker using `label`.
    pub fn new(program: impl Into<String>, label: impl Into<String>) -> Self {
        GhCli {
            program: program.into(),
            label: label.into(),
            labelled: RefCell::new(None),
            label_ensured: RefCell::new(false),
        }
    }

    fn run(&self, args: &[&str]) -> Result<String> {
        crate::command::run(&self.program, args, None)
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
            "number,title",
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
    fn existing_for(&self, tag: Tag) -> Result<Vec<ExistingIssue>> {
        if self.labelled.borrow().is_none() {
            let all = self.list(&["--label", &self.label])?;
            *self.labelled.borrow_mut() = Some(all);
        }
        let mut found = issues_for_tag(self.labelled.borrow().as_deref().unwrap_or(&[]), tag);
        // Also catch issues someone opened by hand without the label.
        let query = format!("{tag} in:title");
        for issue in issues_for_tag(&self.list(&["--search", &query])?, tag) {
            if !found.contains(&issue) {
                found.push(issue);
            }
        }
        Ok(found)
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
                "An upstream MMKV release that versions.yaml lacks",
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
    }
}
