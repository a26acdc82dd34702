//! Coverage of the official library: how much of each chosen version's Core the report's
//! workloads, live writers, fault, power-loss and disk-error suites, the regression pins of
//! the measured versions and the portable suite's build reach
//! (conformance/README.md "Coverage").
//!
//! Needs a coverage build of mmkv-sys (`MMKV_SYS_COVERAGE=1`: Core compiled with `--coverage`,
//! `mmkv_sys::BuiltVersion::coverage` naming its build directory). `conformance coverage`
//! gives its counters a folder of its own ([`counters`]), runs `conformance report` for them, `conformance
//! replay` of their pins and then `conformance suite build` as child processes ([`paths`]; their cells and writers are child
//! processes too: libgcov merges every process's counters into the same files at its exit; a
//! writer killed on purpose adds nothing), then measures each version with `gcovr`
//! ([`gcovr`]), checks the pinned figures ([`floor`]) and the explained list of unreached
//! functions ([`unreached`]).

pub mod checked;
pub mod counters;
pub mod floor;
pub mod gcovr;
pub mod paths;
pub mod summary;
pub mod unreached;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
    /// Fail when a measured version's line, branch or function coverage is below its figure
    /// in FILE (e.g. conformance/coverage-floor.yaml).
    #[arg(long, value_name = "FILE")]
    pub check_floor: Option<PathBuf>,
    /// Fail when a function FILE lists is reached, or an unreached one is not listed (e.g.
    /// conformance/coverage-unreached.yaml, see [`unreached`]).
    #[arg(long, value_name = "FILE")]
    pub check_unreached: Option<PathBuf>,
    /// Rewrite FILE (the explained list) from this measurement: reasons kept, reached
    /// functions dropped, new ones `unclassified`.
    #[arg(long, value_name = "FILE")]
    pub write_unreached: Option<PathBuf>,
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
            Some(build) => {
                let build = PathBuf::from(build);
                Ok(Target {
                    tag: b.tag.to_string(),
                    core: compiled_core(&build, Path::new(b.core))?,
                    build,
                })
            }
            None => Err(Error::Other(format!(
                "{} is not a coverage build: build conformance with {VAR}=1, in a target \
                 directory of its own (e.g. {VAR}=1 MMKV_VERSIONS={} \
                 CARGO_TARGET_DIR=target-cov cargo build --release -p conformance)",
                b.tag, b.tag
            ))),
        })
        .collect()
}

/// The Core sources a coverage build was compiled from, which its `.gcno` files name: the
/// cache entry is shared by every checkout using `MMKV_SYS_CACHE`, so they are those of the
/// checkout that built it (the same pinned tree as `ours`), read from its `CMakeCache.txt`.
fn compiled_core(build: &Path, ours: &Path) -> Result<PathBuf> {
    let cache = build.join("CMakeCache.txt");
    let text = std::fs::read_to_string(&cache).map_err(|e| Error::io(&cache, e))?;
    let Some(dir) = cmake_home(&text) else {
        return Err(Error::Other(format!(
            "{}: no CMAKE_HOME_DIRECTORY",
            cache.display()
        )));
    };
    if dir.join("MMKV.h").is_file() {
        Ok(dir)
    } else {
        Err(Error::Other(format!(
            "the coverage build {} was compiled from {}, which is gone (gcov reads the sources \
             its notes name; ours are in {}): remove that cache entry to rebuild it here",
            build.display(),
            dir.display(),
            ours.display()
        )))
    }
}

/// `CMAKE_HOME_DIRECTORY` of a `CMakeCache.txt`.
fn cmake_home(text: &str) -> Option<PathBuf> {
    text.lines()
        .find_map(|l| l.strip_prefix("CMAKE_HOME_DIRECTORY:INTERNAL="))
        .map(|d| PathBuf::from(d.trim()))
}

/// `conformance coverage`: counters, report, suite build, gcovr, print, check the floor and
/// the list. Exit status 0 when both paths passed and ran something and no check failed, 1
/// otherwise, 2 on an error.
pub fn main(args: CoverageArgs) -> Result<ExitCode> {
    let targets = targets(&args.only)?;
    // Read before anything runs: a bad floor file fails at once.
    let floors = match &args.check_floor {
        Some(file) => Some(floor::load(file)?),
        None => None,
    };
    let lists = match &args.check_unreached {
        Some(file) => Some(unreached::load(file)?),
        None => None,
    };
    // The list to rewrite (absent: written from nothing).
    let old_lists = match &args.write_unreached {
        Some(file) if file.exists() => unreached::load(file)?,
        _ => Vec::new(),
    };
    gcovr::require()?;
    std::fs::create_dir_all(&args.out).map_err(|e| Error::io(&args.out, e))?;
    let prefix = counters::prefix(&args.out);
    let builds: Vec<&Path> = targets.iter().map(|t| t.build.as_path()).collect();
    let notes = counters::prepare(&prefix, &builds)?;
    eprintln!(
        "coverage: counters in {} ({notes} note file(s) copied from the builds)",
        prefix.display()
    );
    let exe = std::env::current_exe().map_err(|e| Error::Other(format!("current_exe: {e}")))?;
    let tags: Vec<&str> = targets.iter().map(|t| t.tag.as_str()).collect();
    eprintln!(
        "coverage: running the report (workloads, live writers, fault, power-loss and \
         disk-error suites), the regression pins, then the suite build, for {}",
        tags.join(", ")
    );
    let started = std::time::Instant::now();
    let (report_passed, ran) = paths::run_report(
        &exe,
        &prefix,
        &tags,
        args.cases,
        &args.report_args,
        &args.out,
    )?;
    eprintln!(
        "coverage: the report took {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let pins = paths::pins_dir();
    let (pins_passed, pins_ran) = paths::run_pins(&exe, &prefix, &pins, &tags)?;
    let started = std::time::Instant::now();
    let suite = paths::suite_dir(&args.out);
    let (suite_passed, suite_line) = paths::run_suite_build(&exe, &prefix, &suite)?;
    eprintln!(
        "coverage: the suite build took {:.0} s",
        started.elapsed().as_secs_f64()
    );
    // What each path ran: a path that ran nothing fails the run.
    let mut path_lines = match &ran {
        Some(ran) => ran.lines().0,
        None => vec!["report: DID NOT RUN (it wrote no JSON)".to_string()],
    };
    path_lines.push(match pins_ran {
        // Not every version has a pin: none is not a lost path.
        0 => format!(
            "regression pins: none of {} in {}",
            tags.join(", "),
            pins.display()
        ),
        n => format!("regression pins: {n} replayed"),
    });
    path_lines.push(match &suite_line {
        Some(l) => format!("suite build: {l}"),
        None => "suite build: DID NOT RUN (no case written)".to_string(),
    });
    let paths_ran = !path_lines.iter().any(|l| l.contains("DID NOT RUN"));
    for l in &path_lines {
        println!("coverage: path {l}");
    }
    let mut measured = Vec::new();
    for t in &targets {
        let dir = args.out.join(&t.tag);
        let counted = counters::mirrored(&prefix, &t.build);
        let c = gcovr::measure(&t.tag, &t.core, &counted, &dir)?;
        print!("{}", c.to_text());
        println!("  gcovr output: {}", dir.join("index.html").display());
        measured.push(c);
    }
    let summary = summary::Summary::new(path_lines, measured);
    let summary_file = args.out.join(summary::FILE_NAME);
    summary.write(&summary_file)?;
    println!(
        "coverage: summary for the page (report --html DIR --coverage FILE): {}",
        summary_file.display()
    );
    let measured = &summary.versions;
    let mut passed = report_passed && pins_passed && suite_passed && paths_ran;
    if !report_passed {
        println!("coverage: the report did not pass (its failures are above)");
    }
    if !pins_passed {
        println!("coverage: a regression pin did not pass (its output is above)");
    }
    if !suite_passed {
        println!("coverage: the suite build did not pass (its errors are above)");
    }
    if let (Some(floors), Some(file)) = (floors, &args.check_floor) {
        let figures: Vec<floor::Figures> = measured.iter().map(|c| c.figures()).collect();
        let check = floor::check(&floors, &figures);
        for line in &check.lines {
            println!("floor ({}): {line}", file.display());
        }
        passed &= check.passed;
    }
    if let (Some(lists), Some(file)) = (lists, &args.check_unreached) {
        let check = unreached::check(&lists, measured);
        for line in &check.lines {
            println!("unreached ({}): {line}", file.display());
        }
        passed &= check.passed;
    }
    if let Some(file) = &args.write_unreached {
        let lists = unreached::regenerate(&old_lists, measured);
        unreached::write(file, &lists)?;
        let new = lists
            .iter()
            .flat_map(|l| &l.functions)
            .filter(|f| f.class == unreached::Class::Unclassified)
            .count();
        println!(
            "unreached: {} written ({new} function(s) unclassified: give each a class and a why)",
            file.display()
        );
    }
    Ok(ExitCode::from(u8::from(!passed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_sources_are_read_from_the_cmake_cache() {
        let text =
            "core_SOURCE_DIR:STATIC=/a/Core\nCMAKE_HOME_DIRECTORY:INTERNAL=/w/vendor/v2.4.2/Core\n";
        assert_eq!(
            cmake_home(text),
            Some(PathBuf::from("/w/vendor/v2.4.2/Core"))
        );
        assert_eq!(cmake_home("X:STATIC=1\n"), None);
        let dir = tempfile::tempdir().unwrap();
        let gone = format!(
            "CMAKE_HOME_DIRECTORY:INTERNAL={}\n",
            dir.path().join("gone").display()
        );
        std::fs::write(dir.path().join("CMakeCache.txt"), gone).unwrap();
        let e = compiled_core(dir.path(), Path::new("/ours")).unwrap_err();
        assert!(e.to_string().contains("which is gone"), "{e}");
    }
}
