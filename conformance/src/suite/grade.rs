//! `conformance suite grade`: runs every case against readers (drivers speaking the protocol of
//! `suite/README.md`), in parallel with a per-case timeout, and classifies each result.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::suite::case::{load_all, Case, Class, Entry, Era};
use crate::vocab::pool::run_ordered;
use crate::writer::child::{in_own_group, last_line, run_watched};

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

    /// Column name.
    pub fn name(self) -> &'static str {
        match self {
            Grade::Pass => "pass",
            Grade::MissingKey => "missing_key",
            Grade::ExtraKey => "extra_key",
            Grade::WrongValue => "wrong_value",
            Grade::Error => "error",
            Grade::ReadsDiscarded => "reads_discarded",
            Grade::Crash => "crash",
            Grade::Timeout => "timeout",
        }
    }
}

/// A reader under test: `NAME=COMMAND` (run as `sh -c 'COMMAND "$1"' sh CASE_DIR`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderSpec {
    /// Its name in the table.
    pub name: String,
    /// The shell command; the case folder is appended as one argument.
    pub command: String,
}

impl std::str::FromStr for ReaderSpec {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<ReaderSpec, String> {
        let (name, command) = s
            .split_once('=')
            .ok_or_else(|| format!("expected NAME=COMMAND, got {s:?}"))?;
        if name.is_empty() || command.trim().is_empty() {
            return Err(format!("expected NAME=COMMAND, got {s:?}"));
        }
        Ok(ReaderSpec {
            name: name.to_string(),
            command: command.to_string(),
        })
    }
}

/// What a driver printed, parsed.
#[derive(Debug, Clone, PartialEq)]
enum Output {
    /// key hex -> (payload hex, type, value); true when the driver reads with
    /// `OnErrorRecover` (`"strategy": "recover"`).
    Entries(Got, bool),
    Error(String),
    Crash(String),
    Timeout,
}

/// What a driver listed: key hex -> (payload hex, type, typed value).
type Got = BTreeMap<String, (String, Option<String>, Option<serde_json::Value>)>;

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

fn class_name(c: Class) -> &'static str {
    match c {
        Class::MustRead => "must_read",
        Class::MustNotRead => "must_not_read",
        Class::VersionDependent => "version_dependent",
    }
}

/// Runs `command` on `dir` with a timeout; the driver runs in its own process group, killed
/// whole on timeout.
fn run_driver(command: &str, dir: &Path, timeout: Duration) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("{command} \"$1\""))
        .arg("sh")
        .arg(dir);
    in_own_group(&mut cmd);
    let run = match run_watched(cmd, timeout, None, true) {
        Ok(run) => run,
        Err(e) => return Output::Crash(format!("cannot start: {e}")),
    };
    let Some(status) = run.status else {
        return Output::Timeout;
    };
    let stdout = run.lines.join("\n");
    let stderr = run.stderr;
    let last = |s: &str| last_line(s, 200);
    if let Some(sig) = status.signal() {
        return Output::Crash(format!("signal {sig}"));
    }
    let code = status.code().unwrap_or(-1);
    if (129..=159).contains(&code) {
        return Output::Crash(format!("exit {code} (signal {} in the shell)", code - 128));
    }
    if let Some(at) = stderr.find("panicked at") {
        // the panic line and its message (the next line)
        let panic: Vec<&str> = stderr[at..].lines().take(2).collect();
        return Output::Crash(panic.join(": ").chars().take(200).collect());
    }
    if stderr.contains("Traceback (most recent call last)") {
        return Output::Crash(last(&stderr));
    }
    match parse_output(stdout.as_bytes()) {
        Some(o) => o,
        None if code != 0 => Output::Crash(format!("exit {code}: {}", last(&stderr))),
        None => Output::Error(format!(
            "output is not the protocol's JSON: {}",
            last(&stdout)
        )),
    }
}

fn parse_output(stdout: &[u8]) -> Option<Output> {
    let v: serde_json::Value = serde_json::from_slice(stdout).ok()?;
    if let Some(e) = v.get("error") {
        if !e.is_null() {
            return Some(Output::Error(
                e.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| e.to_string()),
            ));
        }
    }
    let mut out = BTreeMap::new();
    for e in v.get("entries")?.as_array()? {
        let key = e.get("key")?.as_str()?.to_ascii_lowercase();
        let value = e.get("value")?.as_str()?.to_ascii_lowercase();
        let ty = e.get("type").and_then(|t| t.as_str()).map(str::to_string);
        let typed = e.get("typed").cloned();
        out.insert(key, (value, ty, typed));
    }
    let recover = v.get("strategy").and_then(|s| s.as_str()) == Some("recover");
    Some(Output::Entries(out, recover))
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

/// Grades every case under `root` (whose name contains `only`) with every reader.
pub fn grade_all(
    root: &Path,
    readers: &[ReaderSpec],
    only: Option<&str>,
    timeout: Duration,
    threads: usize,
    progress: bool,
) -> Result<GradeReport> {
    let started = Instant::now();
    let cases: Vec<(PathBuf, Case)> = load_all(root)?
        .into_iter()
        .filter(|(_, c)| only.is_none_or(|o| c.name.contains(o)))
        .collect();
    if cases.is_empty() {
        return Err(Error::Other(format!("no case under {}", root.display())));
    }
    let work: Vec<(usize, usize)> = (0..cases.len())
        .flat_map(|c| (0..readers.len()).map(move |r| (c, r)))
        .collect();
    let total = work.len();
    let done = AtomicUsize::new(0);
    let mut results = run_ordered(work, threads, |(c, r)| {
        let (dir, case) = &cases[c];
        let g = grade(case, &run_driver(&readers[r].command, dir, timeout));
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        if progress && n.is_multiple_of(500) {
            eprintln!("suite grade: {n}/{total}");
        }
        g
    })
    .into_iter();
    let mut rows: Vec<ReaderRow> = readers
        .iter()
        .map(|r| ReaderRow {
            name: r.name.clone(),
            command: r.command.clone(),
            counts: Grade::ALL.iter().map(|g| (g.name(), 0)).collect(),
            by_class: Class::ALL
                .iter()
                .map(|c| (class_name(*c), [0, 0]))
                .collect(),
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
                .unwrap_or_else(|| Result1::new(Grade::Crash, "not run"));
            let rr = &mut rows[r];
            *rr.counts.entry(g.grade.name()).or_default() += 1;
            let pass = usize::from(g.grade == Grade::Pass);
            let bc = rr.by_class.entry(class_name(case.class)).or_default();
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
                let [p, n] = r.by_class.get(class_name(c)).copied().unwrap_or([0, 0]);
                l.push(format!("{p}/{n}"));
            }
            for e in &self.eras {
                let [p, n] = r.by_era.get(e).copied().unwrap_or([0, 0]);
                l.push(format!("{p}/{n}"));
            }
            lines.push(l);
        }
        let widths: Vec<usize> = (0..lines[0].len())
            .map(|i| lines.iter().map(|l| l[i].len()).max().unwrap_or(0))
            .collect();
        let seps = (widths.iter().enumerate())
            .map(|(i, w)| match i {
                0 => "-".repeat(*w),
                _ => format!("{}:", "-".repeat(w - 1)),
            })
            .collect();
        lines.insert(1, seps);
        let mut out = format!("{total} cases\n");
        for l in &lines {
            let cells: Vec<String> = (l.iter().zip(&widths).enumerate())
                .map(|(i, (c, w))| match i {
                    0 => format!("{c:<w$}"),
                    _ => format!("{c:>w$}"),
                })
                .collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
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
    fn driver_outputs_are_classified() {
        let dir = Path::new("/");
        let t = Duration::from_secs(5);
        assert_eq!(
            run_driver("kill -9 $$; echo", dir, t),
            Output::Crash("signal 9".into())
        );
        assert!(
            matches!(run_driver("echo '{\"error\": \"no\"}'; true", dir, t), Output::Error(m) if m == "no")
        );
        assert_eq!(
            run_driver("sleep 20; true", dir, Duration::from_millis(200)),
            Output::Timeout
        );
        assert!(matches!(
            run_driver(
                "echo 'thread main panicked at x' >&2; exit 101; true",
                dir,
                t
            ),
            Output::Crash(_)
        ));
        match run_driver(
            "echo '{\"entries\": [{\"key\": \"6B\", \"value\": \"01\"}]}'; true",
            dir,
            t,
        ) {
            Output::Entries(e, false) => assert_eq!(e["6b"].0, "01"),
            o => panic!("{o:?}"),
        }
    }
}
