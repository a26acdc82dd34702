//! `conformance suite build|verify|grade` (official reads run in `conformance faults read`
//! children).
//!
//! ```text
//! conformance suite build  [--suite DIR] [--jobs N] [--only TEXT]...
//! conformance suite verify [--suite DIR] [--jobs N]
//! conformance suite grade  --reader NAME=COMMAND... [--suite DIR] [--timeout SECS] [--jobs N]
//!                          [--json FILE] [--expect TABLE] [--require-pass NAME]... [--only TEXT]
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::suite::case::{suite_root, Class, Era};
use crate::suite::driver::{DriverStats, ReaderSpec};
use crate::suite::grade::grade_all;
use crate::writer::child::ChildExe;
use clap::Subcommand;

/// `conformance suite ...`.
#[derive(Debug, Subcommand)]
pub enum SuiteCmd {
    /// Write every case from the official libraries of every built version (replaces
    /// SUITE/cases, or with --only the cases it selects).
    Build {
        /// The suite folder (default: the workspace's suite/).
        #[arg(long)]
        suite: Option<PathBuf>,
        /// Official child processes at a time (default: the CPUs).
        #[arg(long)]
        jobs: Option<usize>,
        /// Only (re)build the cases whose name after the class prefix contains this text,
        /// keeping every other case (repeatable: any of them), e.g. `--only _p16k_`.
        #[arg(long, value_name = "TEXT")]
        only: Vec<String>,
    },
    /// (Internal, run by `build`) write the page-size scenarios of one version on pages of
    /// PAGE_SIZE bytes into OUT.
    #[command(hide = true)]
    WritePages {
        /// The official version.
        #[arg(long)]
        tag: String,
        /// The page size the official library runs with.
        #[arg(long, value_parser = crate::fault::cli::parse_page_size)]
        page_size: u64,
        /// The folder to write into.
        #[arg(long)]
        out: PathBuf,
    },
    /// Check each case's expected answer against what the official library of its version
    /// reads from its files now (cases whose version is not built are skipped).
    Verify {
        /// The suite folder (default: the workspace's suite/).
        #[arg(long)]
        suite: Option<PathBuf>,
        /// Official child processes at a time (default: the CPUs).
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Run every case against readers and print the table (reader x grade, passes by class and era).
    Grade {
        /// A reader: NAME=COMMAND, run as `sh -c 'COMMAND "$1"' sh CASE_DIR` (repeatable).
        #[arg(long = "reader", required = true, value_name = "NAME=COMMAND")]
        readers: Vec<ReaderSpec>,
        /// The suite folder (default: the workspace's suite/).
        #[arg(long)]
        suite: Option<PathBuf>,
        /// Seconds one driver may take on one case.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        /// Drivers at a time (default: the CPUs).
        #[arg(long)]
        jobs: Option<usize>,
        /// Write the full results (schema in suite/README.md) here.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Fail (exit 1) unless the printed table equals this file (the pinned results).
        #[arg(long, value_name = "TABLE")]
        expect: Option<PathBuf>,
        /// Fail (exit 1) when this reader fails a must-read or must-not-read case (repeatable).
        #[arg(long, value_name = "NAME")]
        require_pass: Vec<String>,
        /// Only cases whose name contains this text.
        #[arg(long)]
        only: Option<String>,
    },
}

fn threads(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    })
}

fn root(suite: Option<PathBuf>) -> PathBuf {
    suite.unwrap_or_else(suite_root)
}

/// Runs one `conformance suite ...` command: 0 passed, 1 failed, 2 could not run.
pub fn main(cmd: SuiteCmd) -> ExitCode {
    let exe = match ChildExe::this() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("suite: {e}");
            return ExitCode::from(2);
        }
    };
    match cmd {
        SuiteCmd::WritePages {
            tag,
            page_size,
            out,
        } => match super::build::write_pages(&tag, page_size, &out) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("suite write-pages: {e}");
                ExitCode::from(2)
            }
        },
        SuiteCmd::Build { suite, jobs, only } => {
            let started = std::time::Instant::now();
            let only = (!only.is_empty()).then_some(only.as_slice());
            match super::build::build(&root(suite), &exe, threads(jobs), only, true) {
                Ok(s) => {
                    for e in &s.excluded {
                        eprintln!("left out: {e}");
                    }
                    println!(
                        "{} cases ({} stores left out) in {:.0} s",
                        s.total(),
                        s.excluded.len(),
                        started.elapsed().as_secs_f64()
                    );
                    for c in Class::ALL {
                        let per: Vec<String> = Era::ALL
                            .iter()
                            .map(|e| {
                                format!(
                                    "{} {}",
                                    e.name(),
                                    s.counts.get(&(c, *e)).copied().unwrap_or(0)
                                )
                            })
                            .collect();
                        println!("  {}_: {}", c.prefix(), per.join(", "));
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("suite build: {e}");
                    ExitCode::from(2)
                }
            }
        }
        SuiteCmd::Verify { suite, jobs } => {
            let started = std::time::Instant::now();
            match super::verify::verify(&root(suite), &exe, threads(jobs)) {
                Ok(s) => {
                    for f in s.failures.iter().take(50) {
                        eprintln!("DIFFERS: {f}");
                    }
                    println!(
                        "verify: {} cases checked with {} official reads, {} skipped (version not built), {} differences, {:.0} s",
                        s.checked, s.reads, s.skipped, s.failures.len(), started.elapsed().as_secs_f64()
                    );
                    if s.passed() {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(1)
                    }
                }
                Err(e) => {
                    eprintln!("suite verify: {e}");
                    ExitCode::from(2)
                }
            }
        }
        SuiteCmd::Grade {
            readers,
            suite,
            timeout,
            jobs,
            json,
            expect,
            require_pass,
            only,
        } => {
            let stats = DriverStats::default();
            let report = match grade_all(
                &root(suite),
                &readers,
                only.as_deref(),
                Duration::from_secs_f64(timeout),
                threads(jobs),
                true,
                &stats,
            ) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("suite grade: {e}");
                    return ExitCode::from(2);
                }
            };
            let table = report.table();
            print!("{table}");
            eprintln!(
                "graded in {:.0} s: {} driver processes, {} of {} results from one process per case",
                report.seconds,
                stats.processes.load(std::sync::atomic::Ordering::Relaxed),
                stats.alone.load(std::sync::atomic::Ordering::Relaxed),
                report.cases.len() * readers.len()
            );
            let mut ok = true;
            if let Some(p) = json {
                if let Err(e) = write_json(&p, &report) {
                    eprintln!("suite grade: {e}");
                    return ExitCode::from(2);
                }
            }
            let gate = report.gate_failures(&require_pass);
            for g in gate.iter().take(30) {
                eprintln!("MUST PASS: {g}");
            }
            ok &= gate.is_empty();
            if let Some(p) = expect {
                let pinned = std::fs::read_to_string(&p).unwrap_or_default();
                if pinned != table {
                    eprintln!(
                        "the table differs from the pinned {}: update it if the change is intended",
                        p.display()
                    );
                    ok = false;
                }
            }
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
    }
}

fn write_json(p: &Path, report: &super::grade::GradeReport) -> crate::Result<()> {
    let text =
        serde_json::to_string_pretty(report).map_err(|e| crate::Error::Other(e.to_string()))?;
    std::fs::write(p, text).map_err(|e| crate::Error::io(p, e))
}
