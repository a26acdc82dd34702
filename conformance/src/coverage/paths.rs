//! The paths a coverage run drives through the official library, each a child process of
//! this executable: the report (the property workloads, the live writers, the fault suite,
//! the power-loss suite, the disk-error suite), the regression pins of the measured versions
//! and the portable suite's build. What each ran is read back from its
//! output and printed, and a path that ran nothing fails the run: coverage that silently
//! lost a path would still pass a floor set without it only by luck.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::counters::PREFIX_VAR;
use crate::differential::failures::load_repro;
use crate::report::Report;
use crate::{Error, Result};

/// What the report's child process ran (from its JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportRan {
    /// Property workloads, every row and kind.
    pub workloads: u64,
    /// Rows whose live writer ran.
    pub live_writers: u64,
    /// Damaged states the fault suite judged.
    pub fault_states: u64,
    /// Crash states the power-loss suite judged.
    pub powerloss_states: u64,
    /// States the disk-error suite judged.
    pub diskerr_states: u64,
}

impl ReportRan {
    /// Counts what `report` ran.
    pub fn of(report: &Report) -> ReportRan {
        ReportRan {
            workloads: report.versions.iter().map(|r| r.ran.workloads).sum(),
            live_writers: report
                .versions
                .iter()
                .filter(|r| r.live_writer.is_some())
                .count() as u64,
            fault_states: report.faults.as_ref().map_or(0, |f| f.states),
            powerloss_states: report.powerloss.as_ref().map_or(0, |p| p.states),
            diskerr_states: report.diskerr.as_ref().map_or(0, |d| d.states),
        }
    }

    /// One line per path (`ran` or `DID NOT RUN`), and the names of those that did not run.
    pub fn lines(&self) -> (Vec<String>, Vec<&'static str>) {
        let mut lines = Vec::new();
        let mut missing = Vec::new();
        for (path, n, what) in [
            ("workloads", self.workloads, "property workloads"),
            (
                "live writers",
                self.live_writers,
                "version(s) with a live writer",
            ),
            ("fault suite", self.fault_states, "damaged states"),
            ("power-loss suite", self.powerloss_states, "crash states"),
            ("disk-error suite", self.diskerr_states, "disk-error states"),
        ] {
            if n == 0 {
                lines.push(format!("{path}: DID NOT RUN"));
                missing.push(path);
            } else {
                lines.push(format!("{path}: {n} {what}"));
            }
        }
        (lines, missing)
    }
}

/// Runs `conformance report` (this executable, its counters under `counters`) for `tags`
/// with its JSON and Markdown in `out`, `cases` property cases when given, `extra` arguments after; returns whether it
/// passed and what it ran (`None` when it wrote no JSON).
pub fn run_report(
    exe: &Path,
    counters: &Path,
    tags: &[&str],
    cases: Option<u32>,
    extra: &[String],
    out: &Path,
) -> Result<(bool, Option<ReportRan>)> {
    let json = out.join("report.json");
    // A JSON of an earlier run must not stand in for this one's.
    let _ = std::fs::remove_file(&json);
    let mut cmd = Command::new(exe);
    cmd.env(PREFIX_VAR, counters)
        .arg("report")
        .arg("--only")
        .arg(tags.join(","))
        .arg("--markdown")
        .arg(out.join("report.md"))
        .arg("--json")
        .arg(&json);
    if let Some(n) = cases {
        cmd.arg("--cases").arg(n.to_string());
    }
    cmd.args(extra);
    let status = cmd
        .status()
        .map_err(|e| Error::Other(format!("cannot run the report: {e}")))?;
    let ran = match std::fs::read_to_string(&json) {
        Ok(text) => {
            let report: Report = serde_json::from_str(&text)
                .map_err(|e| Error::Other(format!("{}: {e}", json.display())))?;
            Some(ReportRan::of(&report))
        }
        Err(_) => None,
    };
    Ok((status.success(), ran))
}

/// Runs `conformance suite build --suite DIR` (this executable, its counters under
/// `counters`; every built version writes
/// its cases, as the checked-in suite was built) into a fresh `dir`; returns whether it
/// passed and its summary line (`N cases (...) in S s`).
pub fn run_suite_build(exe: &Path, counters: &Path, dir: &Path) -> Result<(bool, Option<String>)> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let out = Command::new(exe)
        .env(PREFIX_VAR, counters)
        .arg("suite")
        .arg("build")
        .arg("--suite")
        .arg(dir)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| Error::Other(format!("cannot run the suite build: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains(" cases (") && !l.starts_with("0 cases"))
        .map(str::to_string);
    Ok((out.status.success(), line))
}

/// The checked-in regression pins (`conformance/tests/regressions/*.yaml`): each calls what
/// the property workloads reach only by chance at a small case count (a backup then its
/// restore, a set of an unchanged value under compare-before-set).
pub fn pins_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions")
}

/// Runs `conformance replay FILE` (this executable, its counters under `counters`) for every
/// pin in `dir` whose versions (its tag and every continuation's) are all among `tags`;
/// returns whether every replay passed and how many ran.
pub fn run_pins(exe: &Path, counters: &Path, dir: &Path, tags: &[&str]) -> Result<(bool, usize)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let (mut passed, mut ran) = (true, 0);
    for file in files {
        let repro = load_repro(&file)?;
        let measured = std::iter::once(&repro.tag)
            .chain(repro.then.iter().map(|c| &c.tag))
            .all(|t| tags.contains(&t.as_str()));
        if !measured {
            continue;
        }
        let out = Command::new(exe)
            .env(PREFIX_VAR, counters)
            .arg("replay")
            .arg(&file)
            .output()
            .map_err(|e| Error::Other(format!("cannot replay {}: {e}", file.display())))?;
        ran += 1;
        if !out.status.success() {
            passed = false;
            println!("coverage: the pin {} did not pass:", file.display());
            print!("{}", String::from_utf8_lossy(&out.stdout));
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
        }
    }
    Ok((passed, ran))
}

/// The folder of the suite a coverage run builds under its output folder.
pub fn suite_dir(out: &Path) -> PathBuf {
    out.join("suite")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_ran_nothing_is_named() {
        let all = ReportRan {
            workloads: 82,
            live_writers: 1,
            fault_states: 120,
            powerloss_states: 120,
            diskerr_states: 24,
        };
        let (lines, missing) = all.lines();
        assert!(missing.is_empty(), "{lines:?}");
        assert_eq!(lines[2], "fault suite: 120 damaged states");
        let (lines, missing) = ReportRan {
            powerloss_states: 0,
            ..all
        }
        .lines();
        assert_eq!(missing, ["power-loss suite"]);
        assert_eq!(lines[3], "power-loss suite: DID NOT RUN");
    }

    #[test]
    fn an_empty_report_ran_nothing() {
        let (_, missing) = ReportRan::of(&Report::default()).lines();
        assert_eq!(missing.len(), 5);
    }
}
