//! `conformance suite verify`: each case's expected answer equals what the official library of
//! its version reads from its files now (the default strategy; `OnErrorRecover` for damaged
//! stores; every recorded version for version-dependent cases, where built), on pages of the
//! case's `page_size`.

use std::path::{Path, PathBuf};

use mmkv_sys::ErrorStrategy;

use crate::error::Result;
use crate::sides::reads::OfficialOutcome;
use crate::sides::sys::built_versions;
use crate::suite::case::{load_all, Case, Class, Entry, DATA_FILE, META_FILE};
use crate::suite::official::{describe, differences, run_jobs, Files, Job};
use crate::suite::scenarios::page_part;
use crate::writer::child::ChildExe;

/// What `verify` found.
#[derive(Debug, Default)]
pub struct VerifySummary {
    /// Cases whose writer is built, checked.
    pub checked: usize,
    /// Official reads compared.
    pub reads: usize,
    /// Cases skipped: their writer is not built.
    pub skipped: usize,
    /// One line per difference.
    pub failures: Vec<String>,
}

impl VerifySummary {
    /// True when something was checked and nothing differed.
    pub fn passed(&self) -> bool {
        self.checked > 0 && self.failures.is_empty()
    }
}

/// Checks the internal consistency of a case (its name, class, answers, and the page part of
/// its name against its `page_size`).
fn consistency(case: &Case, dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    if folder.as_deref() != Some(case.name.as_str()) {
        out.push(format!("{}: folder name differs", case.name));
    }
    if !case
        .name
        .starts_with(&format!("{}_{}_", case.class.prefix(), case.writer))
    {
        out.push(format!(
            "{}: name does not start with its class and writer",
            case.name
        ));
    }
    let scenario = case
        .name
        .strip_prefix(&format!("{}_{}_", case.class.prefix(), case.writer))
        .unwrap_or("");
    let named_page = scenario.split('_').next().filter(|p| {
        p.len() > 2
            && p.starts_with('p')
            && p.ends_with('k')
            && p[1..p.len() - 1].parse::<u64>().is_ok()
    });
    if named_page.map(str::to_string) != page_part(case.page_size) {
        out.push(format!(
            "{}: the name's page part and page_size {} disagree",
            case.name, case.page_size
        ));
    }
    match case.class {
        Class::MustNotRead if !case.expect.entries.is_empty() || case.recover.is_none() => out
            .push(format!(
                "{}: n_ needs an empty answer and a recover answer",
                case.name
            )),
        Class::VersionDependent if case.answers.len() < 2 => out.push(format!(
            "{}: i_ needs two or more version answers",
            case.name
        )),
        _ => {}
    }
    out
}

/// Verifies every case under `root`.
pub fn verify(root: &Path, exe: &ChildExe, threads: usize) -> Result<VerifySummary> {
    let built = built_versions();
    let cases = load_all(root)?;
    let mut summary = VerifySummary::default();
    let mut files: Vec<Files> = Vec::new();
    let mut todo: Vec<(usize, PathBuf, String, ErrorStrategy, Vec<Entry>)> = Vec::new();
    for (dir, case) in &cases {
        summary.failures.extend(consistency(case, dir));
        if !built.contains(&case.writer.as_str()) {
            summary.skipped += 1;
            continue;
        }
        summary.checked += 1;
        let f = files.len();
        files.push(Files::read(dir, DATA_FILE, META_FILE)?);
        let name = case.name.clone();
        match case.class {
            Class::VersionDependent => {
                for a in &case.answers {
                    for v in a.versions.iter().filter(|v| built.contains(&v.as_str())) {
                        todo.push((
                            f,
                            dir.clone(),
                            v.clone(),
                            ErrorStrategy::Discard,
                            a.entries.clone(),
                        ));
                    }
                }
                if !case
                    .answers
                    .iter()
                    .any(|a| a.entries == case.expect.entries)
                {
                    summary
                        .failures
                        .push(format!("{name}: expect is none of the version answers"));
                }
            }
            _ => {
                todo.push((
                    f,
                    dir.clone(),
                    case.writer.clone(),
                    ErrorStrategy::Discard,
                    case.expect.entries.clone(),
                ));
                if let Some(r) = &case.recover {
                    todo.push((
                        f,
                        dir.clone(),
                        case.writer.clone(),
                        ErrorStrategy::Recover,
                        r.entries.clone(),
                    ));
                }
            }
        }
    }
    let kinds: Vec<_> = cases.iter().map(|(_, c)| c.kind).collect();
    let case_of: std::collections::BTreeMap<PathBuf, usize> = cases
        .iter()
        .enumerate()
        .map(|(i, (d, _))| (d.clone(), i))
        .collect();
    let jobs: Vec<Job<'_>> = todo
        .iter()
        .map(|(f, dir, tag, s, _)| Job {
            tag: tag.clone(),
            kind: kinds[case_of[dir]],
            strategy: *s,
            files: &files[*f],
            page_size: cases[case_of[dir]].1.page_size,
        })
        .collect();
    let outcomes = run_jobs(exe, &jobs, threads)?;
    for ((_, dir, tag, s, want), o) in todo.iter().zip(outcomes) {
        summary.reads += 1;
        let name = &cases[case_of[dir]].1.name;
        let strategy = crate::fault::official::strategy_name(*s);
        match o {
            OfficialOutcome::Read(r) => {
                for d in differences(want, &r) {
                    summary
                        .failures
                        .push(format!("{name} ({tag}, {strategy}): {d}"));
                }
            }
            other => summary.failures.push(format!(
                "{name} ({tag}, {strategy}): official {}",
                describe(&other)
            )),
        }
    }
    Ok(summary)
}
