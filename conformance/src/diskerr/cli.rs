//! `conformance faults diskerr ...`: the disk-error suite on its own. Its child processes are
//! the one writer (`conformance writer --plan diskerr --io-faults SCHEDULE`) and the fault
//! suite's official reads (`conformance faults read`).
//!
//! ```text
//! conformance faults diskerr [--states 200] [--seed 1] [--tags v2.4.2,...] [--kinds plain,...]
//!                            [--ops 120] [--jobs N] [--verbose] [--json FILE]
//!                            [--replay FOLDER] [--page-size 16384] [--break NAME]
//! ```

use std::process::ExitCode;

use clap::Args;

use crate::diskerr::section::DiskerrSection;
use crate::diskerr::suite::{replay, run_diskerr, DiskerrConfig};
use crate::error::Result;
use crate::fault::cli::{states_from_env, SuiteArgs};
use crate::fault::summary::verdicts_line;

/// Environment variable that overrides `faults diskerr --states`.
pub const STATES_VAR: &str = "DISKERR_STATES";

/// `conformance faults diskerr`.
#[derive(Debug, Args)]
pub struct DiskerrArgs {
    /// States to judge, one writer run each (env DISKERR_STATES overrides).
    #[arg(long, default_value_t = 200)]
    pub states: usize,
    /// Workload ops per writer run.
    #[arg(long, default_value_t = 120)]
    pub ops: usize,
    /// Seed, versions, kinds (default: every kind), jobs, output, replay, page size, broken
    /// reader.
    #[command(flatten)]
    pub common: SuiteArgs,
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
    let c = &args.common;
    let mut cfg = DiskerrConfig::new(c.exe("diskerr")?, states_from_env(STATES_VAR, args.states));
    cfg.common.ops = args.ops.max(1);
    c.apply("diskerr", &mut cfg.common)?;
    c.replay_or_run(
        "diskerr",
        |folder| replay(&cfg, folder),
        |v| verdicts_line(v),
        |verbose| run_printing(&cfg, verbose),
        |s| (s.to_text(), s.passed()),
    )
}
