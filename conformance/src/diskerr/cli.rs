//! `conformance faults diskerr ...`: the disk-error suite on its own. Its child processes are
//! the one writer (`conformance writer --plan diskerr --io-faults SCHEDULE`) and the fault
//! suite's official reads (`conformance faults read`).
//!
//! ```text
//! conformance faults diskerr [--states 200] [--seed 1] [--tags v2.4.2,...] [--kinds plain,...]
//!                            [--ops 120] [--jobs N] [--verbose] [--json FILE]
//!                            [--replay FOLDER] [--page-size 16384] [--break NAME]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::diskerr::section::DiskerrSection;
use crate::diskerr::suite::{replay, run_diskerr, DiskerrConfig};
use crate::error::Result;
use crate::fault::cli::{exit_status, or_exit, states_from_env};
use crate::fault::summary::verdicts_line;
use crate::judge::state::disagrees;
use crate::sides::broken::Broken;
use crate::vocab::kind::StoreKind;
use crate::writer::child::ChildExe;

/// Environment variable that overrides `faults diskerr --states`.
pub const STATES_VAR: &str = "DISKERR_STATES";

/// `conformance faults diskerr`.
#[derive(Debug, Args)]
pub struct DiskerrArgs {
    /// States to judge, one writer run each (env DISKERR_STATES overrides).
    #[arg(long, default_value_t = 200)]
    pub states: usize,
    /// Seed (default: the base seed, see `conformance::vocab::seed`).
    #[arg(long, env = "CONFORMANCE_SEED", default_value_t = crate::vocab::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Only these built tags (comma-separated; default: every built tag).
    #[arg(long, value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Only these store kinds (default: every kind a version has).
    #[arg(long, value_delimiter = ',')]
    pub kinds: Vec<StoreKind>,
    /// Workload ops per writer run.
    #[arg(long, default_value_t = 120)]
    pub ops: usize,
    /// Writer runs at once (default: CONFORMANCE_JOBS, else one per core).
    #[arg(long, env = "CONFORMANCE_JOBS", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Print every state.
    #[arg(long)]
    pub verbose: bool,
    /// Also write the result as JSON (the report's `diskerr` section) to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Judge a saved folder again (its `state/` and `verdict.txt`) instead of running.
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// The official library's page size (bytes) in the writers and every read (default: this
    /// process's, see `mmkv_sys::page_size`).
    #[arg(long, value_parser = crate::fault::cli::parse_page_size)]
    pub page_size: Option<u64>,
    /// Read with this deliberately broken reader (`conformance::sides::broken`).
    #[arg(long = "break", value_name = "NAME", value_parser = Broken::parse)]
    pub broken: Option<Broken>,
}

/// Runs the suite printing progress (every state when `verbose`, disagreements always, a
/// count every 100 states).
pub fn run_printing(cfg: &DiskerrConfig, verbose: bool) -> Result<DiskerrSection> {
    run_diskerr(cfg, |r| {
        if verbose || r.disagrees() {
            eprintln!("{}", r.line());
        } else if (r.index + 1) % 100 == 0 {
            eprintln!("diskerr: {} states", r.index + 1);
        }
    })
}

/// `conformance faults diskerr`: exit 1 when it did not pass, 2 when it could not run.
pub fn main(args: DiskerrArgs) -> ExitCode {
    run(args).unwrap_or_else(|code| code)
}

fn run(args: DiskerrArgs) -> std::result::Result<ExitCode, ExitCode> {
    let mut exe = or_exit("diskerr", 2, ChildExe::this())?;
    if let Some(size) = args.page_size {
        exe = exe.with_page_size(size);
    }
    let mut cfg = DiskerrConfig::new(exe, states_from_env(STATES_VAR, args.states));
    cfg.seed = args.seed;
    cfg.ops = args.ops.max(1);
    if let Some(n) = args.jobs {
        cfg.jobs = n as usize;
    }
    if !args.tags.is_empty() {
        cfg.tags = args.tags;
    }
    if !args.kinds.is_empty() {
        cfg.kinds = args.kinds;
    }
    if let Some(b) = args.broken {
        cfg.reader = or_exit(
            "diskerr",
            2,
            b.reader_fn().map_err(crate::error::Error::Other),
        )?;
    }
    if let Some(folder) = args.replay {
        let verdicts = or_exit("diskerr replay", 2, replay(&cfg, &folder))?;
        println!("{}", verdicts_line(&verdicts));
        return Ok(exit_status(!disagrees(&verdicts)));
    }
    let s = or_exit("diskerr", 2, run_printing(&cfg, args.verbose))?;
    print!("{}", s.to_text());
    if let Some(p) = &args.json {
        let json = serde_json::to_string_pretty(&s).unwrap_or_default();
        if let Err(e) = std::fs::write(p, json) {
            eprintln!("diskerr: {}: {e}", p.display());
            return Err(ExitCode::from(2));
        }
    }
    Ok(exit_status(s.passed()))
}
