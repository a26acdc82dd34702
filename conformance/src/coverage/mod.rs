//! Coverage of the official library: how much of each chosen version's Core the report's
//! workloads, live writers, fault and power-loss suites reach (conformance/README.md
//! "Coverage").
//!
//! Needs a coverage build of mmkv-sys (`MMKV_SYS_COVERAGE=1`: Core compiled with `--coverage`,
//! `mmkv_sys::BuiltVersion::coverage` naming its build directory). `conformance coverage`
//! removes the versions' `.gcda` counters, runs `conformance report` for them as a child
//! process (whose cells and writers are child processes too: libgcov merges every process's
//! counters into the same files at its exit; a writer killed on purpose adds nothing), then
//! measures each version with `gcovr` ([`gcovr`]) and checks the pinned figures ([`floor`]).
//! Two coverage runs of one build at once would mix their counters.

pub mod floor;
pub mod gcovr;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::{Error, Result};

/// The mmkv-sys variable that asks for coverage builds.
pub const VAR: &str = "MMKV_SYS_COVERAGE";

/// `conformance coverage`.
#[derive(clap::Args, Debug, Clone)]
pub struct CoverageArgs {
    /// The versions to measure (comma-separated; default: every built version).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Property cases of the report's run (default: the report's, or CONFORMANCE_CASES).
    #[arg(long)]
    pub cases: Option<u32>,
    /// Where gcovr's JSON and HTML and the report's outputs go (one folder per version).
    #[arg(long, default_value = "target/coverage")]
    pub out: PathBuf,
    /// Fail when a measured version's line or branch coverage is below its figure in FILE
    /// (e.g. conformance/coverage-floor.yaml).
    #[arg(long, value_name = "FILE")]
    pub check_floor: Option<PathBuf>,
    /// More arguments for the report (after `--`, e.g. `-- --fault-states 100`).
    #[arg(last = true, value_name = "REPORT_ARGS")]
    pub report_args: Vec<String>,
}

/// One version to measure: its Core sources and the build directory of its counters.
#[derive(Debug, Clone)]
pub struct Target {
    /// The tag.
    pub tag: String,
    /// Core's source directory (gcovr's root).
    pub core: PathBuf,
    /// Core's cmake build directory (the `.gcno` and `.gcda` files).
    pub build: PathBuf,
}

/// The built versions `only` names (all when empty), each a coverage build.
pub fn targets(only: &[String]) -> Result<Vec<Target>> {
    let built = mmkv_sys::built();
    let chosen: Vec<&mmkv_sys::BuiltVersion> = if only.is_empty() {
        built.iter().collect()
    } else {
        let mut v = Vec::new();
        for tag in only {
            let b = built.iter().find(|b| b.tag == tag).ok_or_else(|| {
                Error::Other(format!(
                    "--only {tag}: not built into mmkv-sys (built: {})",
                    mmkv_sys::built_versions().join(", ")
                ))
            })?;
            v.push(b);
        }
        v
    };
    if chosen.is_empty() {
        return Err(Error::Other("no official version is built".into()));
    }
    chosen
        .into_iter()
        .map(|b| match b.coverage {
            Some(build) => Ok(Target {
                tag: b.tag.to_string(),
                core: PathBuf::from(b.core),
                build: PathBuf::from(build),
            }),
            None => Err(Error::Other(format!(
                "{} is not a coverage build: build conformance with {VAR}=1, in a target \
                 directory of its own (e.g. {VAR}=1 MMKV_VERSIONS={} \
                 CARGO_TARGET_DIR=target-cov cargo build --release -p conformance)",
                b.tag, b.tag
            ))),
        })
        .collect()
}

/// Removes every `.gcda` file under `dir`; returns how many.
pub fn reset_counters(dir: &Path) -> Result<usize> {
    let mut removed = 0;
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        if path.is_dir() {
            removed += reset_counters(&path)?;
        } else if path.extension().is_some_and(|e| e == "gcda") {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Runs `conformance report` (this executable) for `targets` with its outputs in `out`;
/// returns whether it passed.
fn run_report(args: &CoverageArgs, targets: &[Target]) -> Result<bool> {
    let exe = std::env::current_exe().map_err(|e| Error::Other(format!("current_exe: {e}")))?;
    let tags: Vec<&str> = targets.iter().map(|t| t.tag.as_str()).collect();
    let mut cmd = Command::new(exe);
    cmd.arg("report")
        .arg("--only")
        .arg(tags.join(","))
        .arg("--markdown")
        .arg(args.out.join("report.md"))
        .arg("--json")
        .arg(args.out.join("report.json"));
    if let Some(n) = args.cases {
        cmd.arg("--cases").arg(n.to_string());
    }
    cmd.args(&args.report_args);
    let status = cmd
        .status()
        .map_err(|e| Error::Other(format!("cannot run the report: {e}")))?;
    Ok(status.success())
}

/// `conformance coverage`: reset, report, gcovr, print, check the floor. Exit status 0 when
/// the report passed and no figure is below its floor, 1 otherwise, 2 on an error.
pub fn main(args: CoverageArgs) -> Result<ExitCode> {
    let targets = targets(&args.only)?;
    // Read before anything runs: a bad floor file fails at once.
    let floors = match &args.check_floor {
        Some(file) => Some(floor::load(file)?),
        None => None,
    };
    gcovr::require()?;
    std::fs::create_dir_all(&args.out).map_err(|e| Error::io(&args.out, e))?;
    for t in &targets {
        let n = reset_counters(&t.build)?;
        eprintln!(
            "coverage: {}: {n} counter file(s) removed from {}",
            t.tag,
            t.build.display()
        );
    }
    let started = std::time::Instant::now();
    let report_passed = run_report(&args, &targets)?;
    eprintln!(
        "coverage: the report took {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let mut measured = Vec::new();
    for t in &targets {
        let dir = args.out.join(&t.tag);
        let c = gcovr::measure(&t.tag, &t.core, &t.build, &dir)?;
        print!("{}", c.to_text());
        println!("  gcovr output: {}", dir.join("index.html").display());
        measured.push(c);
    }
    let mut passed = report_passed;
    if !report_passed {
        println!("coverage: the report did not pass (its failures are above)");
    }
    if let (Some(floors), Some(file)) = (floors, &args.check_floor) {
        let figures: Vec<floor::Figures> = measured.iter().map(|c| c.figures()).collect();
        let check = floor::check(&floors, &figures);
        for line in &check.lines {
            println!("floor ({}): {line}", file.display());
        }
        passed &= check.passed;
    }
    Ok(ExitCode::from(u8::from(!passed)))
}
