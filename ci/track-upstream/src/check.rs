//! The tracker run: gather tags, compare, report or open issues.

use std::collections::BTreeSet;
use std::io::Write;

use crate::error::{Error, Result};
use crate::issues::{IssueTracker, NewIssue};
use crate::npm::CoreProbe;
use crate::tags::Tag;
use crate::tracker::{compare, issue_body, issue_title, scan_npm, Reason};
use crate::versions::Known;

/// Options of a tracker run.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Print instead of opening issues.
    pub dry_run: bool,
    /// Report missing tags from this one on (default: the oldest tag versions.yaml lists).
    pub since: Option<Tag>,
    /// npm packages to probe.
    pub packages: Vec<String>,
    /// How many of the newest unpinned versions of each package to probe.
    pub npm_max: usize,
    /// Label for opened issues.
    pub label: String,
    /// Fail (after reporting) when a source could not be read.
    pub strict: bool,
}

/// What a run found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Tags missing from versions.yaml with no issue yet (the `new:` lines).
    pub new_tags: Vec<Tag>,
    /// Tags missing from versions.yaml that already have an issue.
    pub already_reported: Vec<Tag>,
    /// Issues opened (tag, URL).
    pub opened: Vec<(Tag, String)>,
    /// Problems with the sources that did not stop the run.
    pub warnings: Vec<String>,
}

/// Runs the tracker.
///
/// `upstream` is the upstream tag list, or `Err(reason)` when it could not be read (the run
/// carries on with npm). `npm` is `None` when npm probing is disabled. `issues` is consulted
/// for existing issues when given, and must be given unless `dry_run`. Output lines go to
/// `out`: `new: vX.Y.Z` per new tag (followed by indented detail lines), `exists: ...`,
/// `opened: ...`, `hint: ...`, `warning: ...`.
pub fn run_check(
    known: &Known,
    upstream: std::result::Result<BTreeSet<Tag>, String>,
    npm: Option<&dyn CoreProbe>,
    issues: Option<&dyn IssueTracker>,
    opts: &CheckOptions,
    out: &mut dyn Write,
) -> Result<CheckReport> {
    let w = |e: std::io::Error| Error::io("<stdout>", e);
    let mut report = CheckReport::default();
    let upstream = match upstream {
        Ok(tags) => Some(tags),
        Err(reason) => {
            report.warnings.push(format!(
                "upstream tags unavailable, carrying on with npm only: {reason}"
            ));
            None
        }
    };
    let scan = npm.map(|probe| scan_npm(probe, known, &opts.packages, opts.npm_max));
    if let Some(scan) = &scan {
        report.warnings.extend(scan.warnings.iter().cloned());
        for line in &scan.log {
            eprintln!("{line}");
        }
    }
    for warning in &report.warnings {
        writeln!(out, "warning: {warning}").map_err(w)?;
    }
    if upstream.is_none() && scan.as_ref().is_none_or(|s| s.listed == 0) {
        return Err(Error::NoSources);
    }
    let findings = scan.as_ref().map_or(&[][..], |s| &s.findings[..]);
    let upstream = upstream.unwrap_or_default();
    let comparison = compare(known, &upstream, findings, opts.since);
    let checked: Vec<String> = if npm.is_some() {
        opts.packages.clone()
    } else {
        Vec::new()
    };

    for new in &comparison.new_tags {
        if let Some(tracker) = issues {
            let existing = tracker.existing_for(new.tag)?;
            if let Some(first) = existing.first() {
                let number = first.number.map(|n| format!("#{n} ")).unwrap_or_default();
                writeln!(out, "exists: {} ({number}{:?})", new.tag, first.title).map_err(w)?;
                report.already_reported.push(new.tag);
                continue;
            }
        }
        writeln!(out, "new: {}", new.tag).map_err(w)?;
        let reason = match new.reason {
            Reason::Newer => "newer than the newest tag in versions.yaml",
            Reason::Missing => "missing from versions.yaml",
        };
        writeln!(out, "  reason: {reason}").map_err(w)?;
        match new.npm_sources.first() {
            Some(s) => writeln!(out, "  source: npm {}", s.spec()).map_err(w)?,
            None => writeln!(out, "  source: none").map_err(w)?,
        }
        report.new_tags.push(new.tag);
        if opts.dry_run {
            continue;
        }
        let tracker = issues.ok_or_else(|| Error::Command {
            command: "open issue".into(),
            message: "no issue tracker configured".into(),
        })?;
        let url = tracker.create(&NewIssue {
            title: issue_title(new.tag),
            body: issue_body(new, known, &checked),
            label: opts.label.clone(),
        })?;
        writeln!(out, "opened: {} {url}", new.tag).map_err(w)?;
        report.opened.push((new.tag, url));
    }
    for hint in &comparison.hints {
        writeln!(
            out,
            "hint: {} has `source: none` but npm {} embeds it: cargo run -p track-upstream -- add-version {} --npm {}",
            hint.tag,
            hint.finding.spec(),
            hint.tag,
            hint.finding.spec()
        )
        .map_err(w)?;
    }
    if opts.strict && !report.warnings.is_empty() {
        return Err(Error::Command {
            command: "track-upstream --strict".into(),
            message: format!(
                "{} source problem(s): {}",
                report.warnings.len(),
                report.warnings.join("; ")
            ),
        });
    }
    Ok(report)
}
