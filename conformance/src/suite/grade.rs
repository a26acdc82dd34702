//! `conformance suite grade`: runs every case against readers (drivers speaking the protocol of
//! `suite/README.md`), in parallel with a per-case timeout, and classifies each result.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::report::render::{aligned_table, Align, TableStyle};
use crate::suite::case::{load_all, variant_name, Case, Class, Entry, Era};
use crate::suite::driver::{Driver, DriverStats, Got, Output, ReaderSpec, Speaks};
use crate::vocab::pool::run_ordered;

/// Cases one batch driver process is given (a work item of the pool; 2,040 cases make 21).
const BATCH_CASES: usize = 100;

/// How a reader did on one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Grade {
    /// The expected answer (`n_`: an error or an empty store).
    Pass,
    /// An expected key is not listed.
    MissingKey,
    /// A key the official library does not read (removed, expired, cleared) is listed.
    ExtraKey,
    /// A listed key has another payload (or typed value).
    WrongValue,
    /// An error where the official library reads the store.
    Error,
    /// Entries read from a store the official default strategy discards (`n_` cases).
    ReadsDiscarded,
    /// Killed by a signal, a panic, a Python traceback, or output that is not the protocol's.
    Crash,
    /// No answer within the timeout.
    Timeout,
}

impl Grade {
    /// Table order.
    pub const ALL: [Grade; 8] = [
        Grade::Pass,
        Grade::MissingKey,
        Grade::ExtraKey,
        Grade::WrongValue,
        Grade::Error,
        Grade::ReadsDiscarded,
        Grade::Crash,
        Grade::Timeout,
    ];

    /// Column name (the serde name).
    pub fn name(self) -> &'static str {
        static NAMES: OnceLock<[String; 8]> = OnceLock::new();
        variant_name(&NAMES, &Grade::ALL, self)
    }
}

/// One graded case.
#[derive(Debug, Clone, Serialize)]
pub struct Result1 {
    /// The grade.
    pub grade: Grade,
    /// A short explanation (empty on pass).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl Result1 {
    fn new(grade: Grade, detail: impl Into<String>) -> Result1 {
        Result1 {
            grade,
            detail: detail.into(),
        }
    }
}

/// A case's row in the JSON.
#[derive(Debug, Clone, Serialize)]
pub struct CaseRow {
    /// Case name.
    pub name: String,
    /// Its class.
    pub class: Class,
    /// Writing version.
    pub writer: String,
    /// Its era.
    pub era: Era,
    /// What it tests.
    pub what: String,
    /// Reader name -> result.
    pub results: BTreeMap<String, Result1>,
}

/// A reader's totals.
#[derive(Debug, Clone, Serialize)]
pub struct ReaderRow {
    /// Name.
    pub name: String,
    /// Command.
    pub command: String,
    /// Grade name -> cases.
    pub counts: BTreeMap<&'static str, usize>,
    /// Class -> (passed, cases).
    pub by_class: BTreeMap<&'static str, [usize; 2]>,
    /// Era -> (passed, cases).
    pub by_era: BTreeMap<&'static str, [usize; 2]>,
}

/// The grade report (`--json`; schema in suite/README.md).
#[derive(Debug, Clone, Serialize)]
pub struct GradeReport {
    /// Schema version.
    pub schema: u32,
    /// Grade names in table order.
    pub grades: Vec<&'static str>,
    /// Era names in table order.
    pub eras: Vec<&'static str>,
    /// One row per reader.
    pub readers: Vec<ReaderRow>,
    /// One row per case.
    pub cases: Vec<CaseRow>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Compares entries with an expected answer.
fn compare(want: &[Entry], got: &Got) -> Result1 {
    let want: BTreeMap<&str, &Entry> = want.iter().map(|e| (e.key_hex.as_str(), e)).collect();
    let missing: Vec<&str> = want
        .keys()
        .filter(|k| !got.contains_key(**k))
        .copied()
        .collect();
    let extra: Vec<&str> = got
        .keys()
        .map(String::as_str)
        .filter(|k| !want.contains_key(k))
        .collect();
    let wrong: Vec<&str> = want
        .iter()
        .filter(|(k, w)| {
            got.get(**k).is_some_and(|(payload, ty, typed)| {
                w.payload_hex.as_ref().is_some_and(|p| p != payload)
                    || (ty.is_some() && ty == &w.ty && typed.is_some() && typed != &w.value)
            })
        })
        .map(|(k, _)| *k)
        .collect();
    let show = |v: &[&str]| {
        let mut s = v.iter().take(3).copied().collect::<Vec<_>>().join(", ");
        if v.len() > 3 {
            s.push_str(&format!(" (+{})", v.len() - 3));
        }
        s
    };
    if !missing.is_empty() {
        Result1::new(
            Grade::MissingKey,
            format!("missing keys {}", show(&missing)),
        )
    } else if !extra.is_empty() {
        Result1::new(Grade::ExtraKey, format!("extra keys {}", show(&extra)))
    } else if !wrong.is_empty() {
        Result1::new(
            Grade::WrongValue,
            format!("wrong values of {}", show(&wrong)),
        )
    } else {
        Result1::new(Grade::Pass, "")
    }
}

/// Grades one driver output against a case. A driver that reads with `OnErrorRecover` is
/// judged by the official `OnErrorRecover` answer where the case has one (damaged stores).
fn grade(case: &Case, out: &Output) -> Result1 {
    let recovered = match out {
        Output::Entries(_, true) => case.recover.as_ref(),
        _ => None,
    };
    match (out, case.class) {
        (Output::Timeout, _) => Result1::new(Grade::Timeout, ""),
        (Output::Crash(m), _) => Result1::new(Grade::Crash, m.as_str()),
        (Output::Error(_), Class::MustNotRead) => Result1::new(Grade::Pass, ""),
        (Output::Error(m), _) => Result1::new(Grade::Error, m.as_str()),
        (Output::Entries(e, _), Class::MustNotRead) if e.is_empty() => {
            Result1::new(Grade::Pass, "")
        }
        (Output::Entries(e, _), _) if recovered.is_some() => {
            let want = recovered.map(|a| a.entries.as_slice()).unwrap_or(&[]);
            let g = compare(want, e);
            if case.class == Class::MustNotRead && g.grade != Grade::Pass {
                return Result1::new(
                    Grade::ReadsDiscarded,
                    format!(
                        "{} entries, not the official OnErrorRecover answer: {}",
                        e.len(),
                        g.detail
                    ),
                );
            }
            g
        }
        (Output::Entries(e, _), Class::MustNotRead) => {
            Result1::new(Grade::ReadsDiscarded, format!("{} entries", e.len()))
        }
        (Output::Entries(e, _), Class::MustRead) => compare(&case.expect.entries, e),
        (Output::Entries(e, _), Class::VersionDependent) => {
            let first = compare(&case.expect.entries, e);
            if first.grade == Grade::Pass {
                return first;
            }
            match case
                .answers
                .iter()
                .find(|a| compare(&a.entries, e).grade == Grade::Pass)
            {
                Some(a) => {
                    Result1::new(Grade::Pass, format!("as {} read it", a.versions.join(",")))
                }
                None => first,
            }
        }
    }
}

/// Grades every case under `root` (whose name contains `only`) with every reader; `stats`
/// counts the driver processes.
pub fn grade_all(
    root: &Path,
    readers: &[ReaderSpec],
    only: Option<&str>,
    timeout: Duration,
    threads: usize,
    progress: bool,
    stats: &DriverStats,
) -> Result<GradeReport> {
    let started = Instant::now();
    let cases: Vec<(PathBuf, Case)> = load_all(root)?
        .into_iter()
        .filter(|(_, c)| only.is_none_or(|o| c.name.contains(o)))
        .collect();
    if cases.is_empty() {
        return Err(Error::Other(format!("no case under {}", root.display())));
    }
    // Work items: (reader, a run of cases), each run through one batch driver process at a time
    // (suite::driver), readers interleaved.
    let runs: Vec<std::ops::Range<usize>> = (0..cases.len())
        .step_by(BATCH_CASES)
        .map(|a| a..cases.len().min(a + BATCH_CASES))
        .collect();
    let work: Vec<(usize, std::ops::Range<usize>)> = runs
        .iter()
        .flat_map(|run| (0..readers.len()).map(move |r| (r, run.clone())))
        .collect();
    let total = cases.len() * readers.len();
    let done = AtomicUsize::new(0);
    let speaks: Vec<Speaks> = readers.iter().map(|_| Speaks::default()).collect();
    let graded = run_ordered(work, threads, |(r, run)| {
        let driver = Driver {
            command: &readers[r].command,
            timeout,
            speaks: &speaks[r],
            stats,
        };
        let dirs: Vec<&Path> = cases[run.clone()]
            .iter()
            .map(|(d, _)| d.as_path())
            .collect();
        let outputs = driver.outputs(&dirs);
        let before = done.fetch_add(outputs.len(), Ordering::Relaxed);
        if progress && before / 500 != (before + outputs.len()) / 500 {
            eprintln!("suite grade: {}/{total}", before + outputs.len());
        }
        (r, run.start, outputs)
    });
    // results[case][reader]
    let mut results: Vec<Vec<Option<Result1>>> = vec![vec![None; readers.len()]; cases.len()];
    for (r, start, outputs) in graded {
        for (c, o) in (start..).zip(outputs) {
            results[c][r] = Some(grade(&cases[c].1, &o));
        }
    }
    let mut results = results.into_iter().flatten();
    let mut rows: Vec<ReaderRow> = readers
        .iter()
        .map(|r| ReaderRow {
            name: r.name.clone(),
            command: r.command.clone(),
            counts: Grade::ALL.iter().map(|g| (g.name(), 0)).collect(),
            by_class: Class::ALL.iter().map(|c| (c.name(), [0, 0])).collect(),
            by_era: Era::ALL.iter().map(|e| (e.name(), [0, 0])).collect(),
        })
        .collect();
    let mut case_rows = Vec::new();
    for (_, case) in &cases {
        let mut row = CaseRow {
            name: case.name.clone(),
            class: case.class,
            writer: case.writer.clone(),
            era: case.era(),
            what: case.what.clone(),
            results: BTreeMap::new(),
        };
        for (r, reader) in readers.iter().enumerate() {
            let g = results
                .next()
                .flatten()
                .unwrap_or_else(|| Result1::new(Grade::Crash, "not run"));
            let rr = &mut rows[r];
            *rr.counts.entry(g.grade.name()).or_default() += 1;
            let pass = usize::from(g.grade == Grade::Pass);
            let bc = rr.by_class.entry(case.class.name()).or_default();
            bc[0] += pass;
            bc[1] += 1;
            let be = rr.by_era.entry(case.era().name()).or_default();
            be[0] += pass;
            be[1] += 1;
            row.results.insert(reader.name.clone(), g);
        }
        case_rows.push(row);
    }
    Ok(GradeReport {
        schema: 1,
        grades: Grade::ALL.iter().map(|g| g.name()).collect(),
        eras: Era::ALL.iter().map(|e| e.name()).collect(),
        readers: rows,
        cases: case_rows,
        seconds: started.elapsed().as_secs_f64(),
    })
}

impl GradeReport {
    /// The table: one row per reader, its count per grade, then passes by class and by era.
    pub fn table(&self) -> String {
        let total = self.cases.len();
        let mut head = vec!["reader".to_string()];
        head.extend(self.grades.iter().map(|g| g.to_string()));
        head.extend(["y_ pass", "n_ pass", "i_ pass"].map(String::from));
        head.extend(self.eras.iter().map(|e| format!("{e} pass")));
        let mut lines = vec![head];
        for r in &self.readers {
            let mut l = vec![r.name.clone()];
            l.extend(
                self.grades
                    .iter()
                    .map(|g| r.counts.get(g).copied().unwrap_or(0).to_string()),
            );
            for c in Class::ALL {
                let [p, n] = r.by_class.get(c.name()).copied().unwrap_or([0, 0]);
                l.push(format!("{p}/{n}"));
            }
            for e in &self.eras {
                let [p, n] = r.by_era.get(e).copied().unwrap_or([0, 0]);
                l.push(format!("{p}/{n}"));
            }
            lines.push(l);
        }
        let align = |i| if i == 0 { Align::Left } else { Align::Right };
        format!(
            "{total} cases\n{}",
            aligned_table(&lines, align, TableStyle::Markdown)
        )
    }

    /// Readers in `names` that fail a must-read or must-not-read case, with the first failures.
    pub fn gate_failures(&self, names: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.cases {
            if c.class == Class::VersionDependent {
                continue;
            }
            for n in names {
                if let Some(r) = c.results.get(n) {
                    if r.grade != Grade::Pass {
                        out.push(format!("{n}: {} {} {}", c.name, r.grade.name(), r.detail));
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grade_names_are_the_serde_names() {
        assert_eq!(Grade::ReadsDiscarded.name(), "reads_discarded");
        for g in Grade::ALL {
            assert_eq!(serde_json::to_value(g).unwrap(), g.name());
        }
    }
}
