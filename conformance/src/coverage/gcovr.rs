//! One version's coverage with `gcovr` (Debian package `gcovr`): Core's sources without
//! `cbridge/` (the C bridge for other languages, which nothing here calls; the shim is not
//! instrumented), written as gcovr's JSON, JSON summary and HTML, read back into [`Coverage`].

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::floor::Figures;
use crate::{Error, Result};

/// The gcovr program (`GCOVR` replaces it); `GCOV` names the gcov matching the compiler
/// (a cross build's `aarch64-linux-gnu-gcov`).
fn program() -> String {
    std::env::var("GCOVR").unwrap_or_else(|_| "gcovr".into())
}

/// Fails unless gcovr runs.
pub fn require() -> Result<()> {
    match Command::new(program()).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err(Error::Other(format!(
            "`{} --version` does not run: install gcovr (Debian package gcovr)",
            program()
        ))),
    }
}

/// Covered of total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Reached.
    pub covered: u64,
    /// All.
    pub total: u64,
}

impl Counts {
    /// The percentage reached (100 when there is nothing to reach).
    pub fn percent(self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            self.covered as f64 * 100.0 / self.total as f64
        }
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.1}% ({}/{})",
            self.percent(),
            self.covered,
            self.total
        )
    }
}

/// Lines, branches and functions of one file or of all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Lines.
    pub lines: Counts,
    /// Branches.
    pub branches: Counts,
    /// Functions.
    pub functions: Counts,
}

/// A function gcov saw no call of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Function {
    /// Its file, relative to Core.
    pub file: String,
    /// Its first line.
    pub line: u64,
    /// Its demangled name, `std::string` spelled so ([`short_name`]).
    pub name: String,
}

/// One file's tally.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileTally {
    /// The file, relative to Core.
    pub file: String,
    /// Its lines, branches and functions.
    #[serde(flatten)]
    pub tally: Tally,
}

/// One version's coverage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// The tag.
    pub tag: String,
    /// All of Core (without `cbridge/`).
    pub all: Tally,
    /// Per file, in gcovr's order.
    pub files: Vec<FileTally>,
    /// The functions never executed, by file and line.
    pub unreached: Vec<Function>,
}

impl Coverage {
    /// The figures the floor check compares.
    pub fn figures(&self) -> Figures {
        Figures {
            version: self.tag.clone(),
            lines: self.all.lines.percent(),
            branches: self.all.branches.percent(),
            functions: self.all.functions.percent(),
        }
    }

    /// The terminal lines: the totals, each file, the unreached functions.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let t = &self.all;
        let _ = writeln!(
            s,
            "{} Core (without cbridge/): lines {}, branches {}, functions {}",
            self.tag, t.lines, t.branches, t.functions
        );
        for FileTally { file, tally: t } in &self.files {
            let _ = writeln!(
                s,
                "  {file:<36} lines {:>5.1}%  branches {:>5.1}%  functions {:>5.1}%",
                t.lines.percent(),
                t.branches.percent(),
                t.functions.percent()
            );
        }
        let _ = writeln!(s, "  never executed: {} function(s)", self.unreached.len());
        for f in &self.unreached {
            let _ = writeln!(s, "    {}:{} {}", f.file, f.line, f.name);
        }
        s
    }
}

/// Runs gcovr over version `tag`'s counters in `build` (its Core sources in `core`) into `dir`
/// (`coverage.json`, `summary.json`, `index.html` and its pages) and reads the result.
pub fn measure(tag: &str, core: &Path, build: &Path, dir: &Path) -> Result<Coverage> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let json = dir.join("coverage.json");
    let summary = dir.join("summary.json");
    let mut cmd = Command::new(program());
    cmd.arg("--root")
        .arg(core)
        .arg("--exclude")
        .arg(format!(
            "{}/cbridge/",
            regex_escape(&core.display().to_string())
        ))
        .arg("--json")
        .arg(&json)
        .arg("--json-summary-pretty")
        .arg("--json-summary")
        .arg(&summary)
        .arg("--html-details")
        .arg(dir.join("index.html"));
    if let Ok(gcov) = std::env::var("GCOV") {
        cmd.arg("--gcov-executable").arg(gcov);
    }
    cmd.arg(build);
    let out = cmd
        .output()
        .map_err(|e| Error::Other(format!("cannot run {}: {e}", program())))?;
    if !out.status.success() {
        return Err(Error::Other(format!(
            "gcovr failed for {tag}: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| Error::io(p, e));
    let mut c = parse_summary(tag, &read(&summary)?)?;
    c.unreached = parse_unreached(&read(&json)?)?;
    Ok(c)
}

/// A demangled name as written in the source: `std::string` and `std::string_view` for
/// their spelled-out types.
pub fn short_name(name: &str) -> String {
    name.replace(
        "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
        "std::string",
    )
    .replace(
        "std::basic_string_view<char, std::char_traits<char> >",
        "std::string_view",
    )
}

/// `s` with the characters regular expressions give a meaning escaped.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        if "\\.^$|?*+()[]{}".contains(ch) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// gcovr's JSON summary (format 0.5): totals, and the same per file.
#[derive(Deserialize)]
struct SummaryJson {
    #[serde(flatten)]
    all: TallyJson,
    files: Vec<FileSummaryJson>,
}

#[derive(Deserialize)]
struct FileSummaryJson {
    filename: String,
    #[serde(flatten)]
    tally: TallyJson,
}

#[derive(Deserialize)]
struct TallyJson {
    line_covered: u64,
    line_total: u64,
    branch_covered: u64,
    branch_total: u64,
    function_covered: u64,
    function_total: u64,
}

impl From<TallyJson> for Tally {
    fn from(t: TallyJson) -> Tally {
        Tally {
            lines: Counts {
                covered: t.line_covered,
                total: t.line_total,
            },
            branches: Counts {
                covered: t.branch_covered,
                total: t.branch_total,
            },
            functions: Counts {
                covered: t.function_covered,
                total: t.function_total,
            },
        }
    }
}

fn parse_summary(tag: &str, text: &str) -> Result<Coverage> {
    let s: SummaryJson = serde_json::from_str(text)
        .map_err(|e| Error::Other(format!("gcovr summary of {tag}: {e}")))?;
    // No line at all means gcovr found no source of Core under its root or no counters: a
    // figure of 0 of 0 would read as a measurement.
    if s.all.line_total == 0 {
        return Err(Error::Other(format!(
            "gcovr measured no line of {tag}'s Core: no counters, or a root without its sources"
        )));
    }
    Ok(Coverage {
        tag: tag.to_string(),
        all: s.all.into(),
        files: s
            .files
            .into_iter()
            .map(|f| FileTally {
                file: f.filename,
                tally: f.tally.into(),
            })
            .collect(),
        unreached: Vec::new(),
    })
}

/// gcovr's JSON (format 0.3): per file, its functions.
#[derive(Deserialize)]
struct CoverageJson {
    files: Vec<FileJson>,
}

#[derive(Deserialize)]
struct FileJson {
    file: String,
    #[serde(default)]
    functions: Vec<FunctionJson>,
}

#[derive(Deserialize)]
struct FunctionJson {
    name: String,
    lineno: u64,
    execution_count: u64,
}

fn parse_unreached(text: &str) -> Result<Vec<Function>> {
    let c: CoverageJson =
        serde_json::from_str(text).map_err(|e| Error::Other(format!("gcovr JSON: {e}")))?;
    let mut out: Vec<Function> = c
        .files
        .into_iter()
        .flat_map(|f| {
            let file = f.file;
            f.functions
                .into_iter()
                .filter(|g| g.execution_count == 0)
                .map(move |g| Function {
                    file: file.clone(),
                    line: g.lineno,
                    name: short_name(&g.name),
                })
        })
        .collect();
    out.sort_by(|a, b| (&a.file, a.line, &a.name).cmp(&(&b.file, b.line, &b.name)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_and_unreached_functions_are_read() {
        let summary = r#"{"branch_covered": 1, "branch_total": 4, "function_covered": 1,
            "function_total": 3, "line_covered": 3, "line_total": 4, "line_percent": 75.0,
            "files": [{"filename": "MMKV.cpp", "branch_covered": 1, "branch_total": 4,
            "function_covered": 1, "function_total": 3, "line_covered": 3, "line_total": 4}],
            "gcovr/summary_format_version": "0.5", "root": "."}"#;
        let c = parse_summary("v2.4.2", summary).unwrap();
        assert_eq!(
            c.all.lines,
            Counts {
                covered: 3,
                total: 4
            }
        );
        assert_eq!(c.all.branches.percent(), 25.0);
        assert_eq!(c.files[0].file, "MMKV.cpp");
        let json = r#"{"files": [{"file": "MMKV.cpp", "lines": [], "functions": [
            {"name": "mmkv::MMKV::lock()", "lineno": 20, "execution_count": 0},
            {"name": "main", "lineno": 3, "execution_count": 5},
            {"name": "mmkv::MMKV::importFrom(mmkv::MMKV*)", "lineno": 9, "execution_count": 0}]}],
            "gcovr/format_version": "0.3"}"#;
        let u = parse_unreached(json).unwrap();
        let names: Vec<&str> = u.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["mmkv::MMKV::importFrom(mmkv::MMKV*)", "mmkv::MMKV::lock()"]
        );
    }

    #[test]
    fn a_summary_of_no_line_is_an_error() {
        let summary = r#"{"branch_covered": 0, "branch_total": 0, "function_covered": 0,
            "function_total": 0, "line_covered": 0, "line_total": 0, "files": []}"#;
        let e = parse_summary("v2.4.2", summary).unwrap_err().to_string();
        assert!(e.contains("no line of v2.4.2"), "{e}");
    }

    #[test]
    fn names_are_shown_with_std_string() {
        assert_eq!(
            short_name("mmkv::copyFile(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)"),
            "mmkv::copyFile(std::string const&)"
        );
        assert_eq!(
            short_name("MMKV::getBytes(std::basic_string_view<char, std::char_traits<char> >)"),
            "MMKV::getBytes(std::string_view)"
        );
    }

    #[test]
    fn exclusion_is_the_literal_path() {
        assert_eq!(regex_escape("/a/v2.4.2+x/Core"), "/a/v2\\.4\\.2\\+x/Core");
    }
}
