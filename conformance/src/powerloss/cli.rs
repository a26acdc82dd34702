//! `conformance faults powerloss ...`: the power-loss suite on its own. Its child processes
//! are the one writer (`conformance writer --plan powerloss --steps`) and the fault suite's
//! official reads (`conformance faults read`).
//!
//! ```text
//! conformance faults powerloss [--states 1000] [--seed 1] [--tags v2.4.2,...] [--kinds plain,...]
//!                              [--ops 120] [--per-point 24] [--per-recording 400] [--batch 64]
//!                              [--jobs N] [--verbose] [--replay FOLDER] [--page-size 16384]
//!                              [--break NAME]
//! ```

use std::process::ExitCode;

use clap::Args;

use crate::error::Result;
use crate::fault::cli::{states_from_env, SuiteArgs};
use crate::fault::official::strategy_name;
use crate::powerloss::section::PowerlossSection;
use crate::powerloss::suite::{replay, run_powerloss, PowerlossConfig};

/// Environment variable that overrides `faults powerloss --states`.
pub const STATES_VAR: &str = "POWERLOSS_STATES";

/// `conformance faults powerloss`.
#[derive(Debug, Args)]
pub struct PowerlossArgs {
    /// Crash states to judge (env POWERLOSS_STATES overrides).
    #[arg(long, default_value_t = 1000)]
    pub states: usize,
    /// Workload ops per recording.
    #[arg(long, default_value_t = 120)]
    pub ops: usize,
    /// Crash states per crash point at most (exhaustive below, sampled above).
    #[arg(long, default_value_t = 24)]
    pub per_point: usize,
    /// Crash states per recording at most.
    #[arg(long, default_value_t = 400)]
    pub per_recording: usize,
    /// States per official child process.
    #[arg(long, default_value_t = 64)]
    pub batch: usize,
    /// Seed, versions, kinds (default: plain, aes128, aes256, expire, expire-aes128,
    /// expire-aes256), jobs, output, replay, page size, broken reader.
    #[command(flatten)]
    pub common: SuiteArgs,
}

/// Runs the suite printing progress (every state when `verbose`, disagreements always).
pub fn run_printing(cfg: &PowerlossConfig, verbose: bool) -> Result<PowerlossSection> {
    let started = std::time::Instant::now();
    let (mut bad, mut upstream) = (0u64, 0u64);
    run_powerloss(cfg, |j| {
        bad += u64::from(j.disagrees());
        upstream += u64::from(j.upstream());
        if verbose || j.disagrees() {
            eprintln!("{}", j.line());
        }
        if (j.index + 1) % 1000 == 0 {
            eprintln!(
                "powerloss: {} states, {bad} disagreeing, {upstream} upstream finding(s), {:.0} s",
                j.index + 1,
                started.elapsed().as_secs_f64()
            );
        }
    })
}

/// `conformance faults powerloss`: exit 1 on a disagreement, 2 when it could not run.
pub fn main(args: PowerlossArgs) -> ExitCode {
    run(args).unwrap_or_else(|code| code)
}

fn run(args: PowerlossArgs) -> std::result::Result<ExitCode, ExitCode> {
    let c = &args.common;
    let mut cfg = PowerlossConfig::new(
        c.exe("powerloss")?,
        states_from_env(STATES_VAR, args.states),
    );
    cfg.common.ops = args.ops;
    cfg.per_point = args.per_point.max(1);
    cfg.per_recording = args.per_recording.max(1);
    cfg.batch = args.batch.max(1);
    c.apply("powerloss", &mut cfg.common)?;
    c.replay_or_run(
        "powerloss",
        |folder| replay(&cfg, folder),
        |verdicts| {
            let lines: Vec<String> = verdicts
                .iter()
                .map(|(s, p, v)| format!("{}/{}: {v}", strategy_name(*s), p.name()))
                .collect();
            lines.join("\n")
        },
        |verbose| run_printing(&cfg, verbose),
        |s| (s.to_text(), s.passed()),
    )
}
