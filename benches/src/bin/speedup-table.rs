//! `speedup-table`: prints the Markdown speedup table from criterion's saved estimates and
//! replaces the table in benches/README.md between the marker comments.
//!
//! Run after `cargo bench`: `cargo run --release -p benches --bin speedup-table [-- --no-write]`.
//! To merge runs of several architectures into one table (an `arch` column; architectures
//! without a run say "not measured"): `speedup-table --run amd64=DIR --run arm64=DIR`, each DIR
//! a criterion directory of that architecture's `cargo bench`.

use std::path::PathBuf;
use std::process::ExitCode;

use benches::table::{self, ArchRun, Machine, Stat};
use clap::Parser;

/// Prints the speedup table and (unless --no-write) updates benches/README.md between
/// `<!-- speedup-table:begin -->` and `<!-- speedup-table:end -->`.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Criterion's output directory (default: $CRITERION_HOME, $CARGO_TARGET_DIR/criterion or <workspace>/target/criterion).
    #[arg(long)]
    criterion_dir: Option<PathBuf>,
    /// The document whose marked section is replaced (default: <workspace>/benches/README.md).
    #[arg(long)]
    readme: Option<PathBuf>,
    /// Only print the table; do not touch the document.
    #[arg(long)]
    no_write: bool,
    /// ARCH=DIR: a criterion directory measured on ARCH (repeatable; merges the runs into one
    /// table). Without it: this machine's criterion directory, as this architecture.
    #[arg(long = "run", value_name = "ARCH=DIR")]
    runs: Vec<String>,
    /// Criterion point estimate to use: median or mean.
    #[arg(long, default_value = "median")]
    stat: Stat,
    /// A note appended to the header line (e.g. "shared machine, other jobs running").
    #[arg(long)]
    note: Option<String>,
}

fn run(args: Args) -> Result<(), String> {
    let mut dirs: Vec<(String, PathBuf)> = Vec::new();
    for r in &args.runs {
        let (arch, dir) = r
            .split_once('=')
            .ok_or_else(|| format!("--run {r:?}: expected ARCH=DIR"))?;
        dirs.push((arch.to_string(), PathBuf::from(dir)));
    }
    if dirs.is_empty() {
        let dir = args
            .criterion_dir
            .clone()
            .unwrap_or_else(benches::paths::criterion_dir);
        dirs.push((Machine::current().arch, dir));
    }
    let mut measured = Vec::new();
    for (arch, dir) in dirs {
        let report = table::collect(&dir, args.stat).map_err(|e| e.to_string())?;
        if report.estimates_found() == 0 {
            return Err(format!(
                "no estimates of these benches in {} (run `cargo bench` first)",
                dir.display()
            ));
        }
        let machine = report.machine.clone().or_else(|| {
            // An older run without machine.json: this machine, when it is the run's arch.
            let here = Machine::current();
            (here.arch == arch).then_some(Machine { load: None, ..here })
        });
        measured.push(ArchRun {
            arch,
            machine,
            report: Some(report),
        });
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let text = table::render_runs(
        &table::with_missing_arches(measured),
        &table::utc_datetime(now),
        args.note.as_deref(),
    );
    print!("{text}");
    if args.no_write {
        return Ok(());
    }
    let readme = args
        .readme
        .unwrap_or_else(|| benches::paths::workspace_root().join("benches/README.md"));
    let doc = std::fs::read_to_string(&readme)
        .map_err(|e| format!("cannot read {}: {e}", readme.display()))?;
    let new = table::replace_between(&doc, &text)
        .map_err(|e| format!("{}: {e} (use --no-write to only print)", readme.display()))?;
    if new != doc {
        std::fs::write(&readme, new)
            .map_err(|e| format!("cannot write {}: {e}", readme.display()))?;
    }
    eprintln!("updated {}", readme.display());
    Ok(())
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("speedup-table: {e}");
            ExitCode::FAILURE
        }
    }
}
