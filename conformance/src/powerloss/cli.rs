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

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::error::Result;
use crate::fault::cli::{exit_status, or_exit, states_from_env};
use crate::fault::official::strategy_name;
use crate::judge::state::disagrees;
use crate::powerloss::section::PowerlossSection;
use crate::powerloss::suite::{replay, run_powerloss, PowerlossConfig};
use crate::sides::broken::Broken;
use crate::vocab::kind::StoreKind;
use crate::writer::child::ChildExe;

/// Environment variable that overrides `faults powerloss --states`.
pub const STATES_VAR: &str = "POWERLOSS_STATES";

/// `conformance faults powerloss`.
#[derive(Debug, Args)]
pub struct PowerlossArgs {
    /// Crash states to judge (env POWERLOSS_STATES overrides).
    #[arg(long, default_value_t = 1000)]
    pub states: usize,
    /// Seed (default: the base seed, see `conformance::vocab::seed`).
    #[arg(long, env = "CONFORMANCE_SEED", default_value_t = crate::vocab::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Only these built tags (comma-separated; default: every built tag).
    #[arg(long, value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Only these store kinds (default: plain, aes128, aes256, expire, expire-aes128, expire-aes256).
    #[arg(long, value_delimiter = ',')]
    pub kinds: Vec<StoreKind>,
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
    /// Recordings and batches of states at once (default: CONFORMANCE_JOBS, else one per core).
    #[arg(long, env = "CONFORMANCE_JOBS", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Print every state.
    #[arg(long)]
    pub verbose: bool,
    /// Also write the result as JSON (the report's `powerloss` section) to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Judge a saved failure folder again (its `state/` and `state.txt`) instead of running.
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// The official library's page size (bytes) in the writer and every read, and the page
    /// the crash states are cut in (default: this process's, see `mmkv_sys::page_size`).
    #[arg(long, value_parser = crate::fault::cli::parse_page_size)]
    pub page_size: Option<u64>,
    /// Read with this deliberately broken reader (`conformance::sides::broken`).
    #[arg(long = "break", value_name = "NAME", value_parser = Broken::parse)]
    pub broken: Option<Broken>,
}

/// Runs the suite printing progress (every state when `verbose`, disagreements always).
pub fn run_printing(cfg: &PowerlossConfig, verbose: bool) -> Result<PowerlossSection> {
    let started = std::time::Instant::now();
    let (mut bad, mut upstream) = (0u64, 0u64);
    let mut section = run_powerloss(cfg, |j| {
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
    })?;
    if let Some(size) = cfg.exe.page_size {
        section
            .per_page_size
            .insert(size.to_string(), section.states);
    }
    Ok(section)
}

/// `conformance faults powerloss`: exit 1 on a disagreement, 2 when it could not run.
pub fn main(args: PowerlossArgs) -> ExitCode {
    run(args).unwrap_or_else(|code| code)
}

fn run(args: PowerlossArgs) -> std::result::Result<ExitCode, ExitCode> {
    let mut exe = or_exit("powerloss", 2, ChildExe::this())?;
    if let Some(size) = args.page_size {
        exe = exe.with_page_size(size);
    }
    let mut cfg = PowerlossConfig::new(exe, states_from_env(STATES_VAR, args.states));
    cfg.seed = args.seed;
    cfg.ops = args.ops;
    cfg.per_point = args.per_point.max(1);
    cfg.per_recording = args.per_recording.max(1);
    cfg.batch = args.batch.max(1);
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
            "powerloss",
            2,
            b.reader_fn().map_err(crate::error::Error::Other),
        )?;
    }
    if let Some(folder) = args.replay {
        let verdicts = or_exit("powerloss replay", 2, replay(&cfg, &folder))?;
        for (s, p, v) in &verdicts {
            println!("{}/{}: {v}", strategy_name(*s), p.name());
        }
        return Ok(exit_status(!disagrees(&verdicts)));
    }
    let s = or_exit("powerloss", 2, run_printing(&cfg, args.verbose))?;
    print!("{}", s.to_text());
    if let Some(p) = &args.json {
        let json = serde_json::to_string_pretty(&s).unwrap_or_default();
        if let Err(e) = std::fs::write(p, json) {
            eprintln!("powerloss: {}: {e}", p.display());
            return Err(ExitCode::from(2));
        }
    }
    Ok(exit_status(s.passed()))
}
