//! The fault suite's command line, `conformance faults ...`: the suite itself (`run`) and the
//! child process it spawns (`read`: the official reads of a state; its writers are
//! `conformance writer --plan faults`). The report (`conformance report`) runs the same suite with the same children.
//!
//! ```text
//! conformance faults run [--states 1000] [--seed 1] [--tags v2.4.2,v1.3.14] [--ops 120] [--jobs N]
//!                        [--page-size 16384] [--replay FOLDER] [--break NAME]
//! conformance faults read --tag T --kind K [--discard DIR]... [--recover DIR]...
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use mmkv_sys::ErrorStrategy;

use crate::error::Result;
use crate::fault::official::child_read_main;
use crate::fault::section::{finish_section, FaultSection};
use crate::fault::suite::{replay as replay_state, run_suite, SuiteCommon, SuiteConfig};
use crate::fault::summary::verdicts_line;
use crate::judge::state::{disagrees, Verdicts};
use crate::sides::broken::Broken;
use crate::sides::sys::SysLib;
use crate::vocab::kind::StoreKind;
use crate::writer::child::ChildExe;

/// Environment variable that overrides `faults run --states`.
pub const STATES_VAR: &str = "FAULT_STATES";

/// `conformance faults ...`.
#[derive(Debug, Subcommand)]
pub enum FaultsCmd {
    /// Run the fault suite.
    Run {
        /// Number of damaged states (env FAULT_STATES overrides).
        #[arg(long, default_value_t = 1000)]
        states: usize,
        /// Seed (default: the base seed, see `conformance::vocab::seed`).
        #[arg(long, env = "CONFORMANCE_SEED", default_value_t = crate::vocab::seed::DEFAULT_SEED)]
        seed: u64,
        /// Only these built tags (comma-separated; default: every built tag).
        #[arg(long, value_delimiter = ',')]
        tags: Vec<String>,
        /// Ops per writer run.
        #[arg(long, default_value_t = 120)]
        ops: usize,
        /// Writer runs at once (default: CONFORMANCE_JOBS, else one per core).
        #[arg(long, env = "CONFORMANCE_JOBS", value_parser = clap::value_parser!(u64).range(1..))]
        jobs: Option<u64>,
        /// Print every state.
        #[arg(long)]
        verbose: bool,
        /// The official library's page size (bytes) in every writer and read, and the page
        /// boundaries truncations aim at (default: this process's, see `mmkv_sys::page_size`).
        #[arg(long, value_parser = parse_page_size)]
        page_size: Option<u64>,
        /// Judge a saved state folder again (its `state/` and `verdict.txt`) instead of
        /// running (what `conformance hunt` prints as a fault finding's replay line).
        #[arg(long)]
        replay: Option<PathBuf>,
        /// Read with this deliberately broken reader (`conformance::sides::broken`).
        #[arg(long = "break", value_name = "NAME", value_parser = Broken::parse)]
        broken: Option<Broken>,
    },
    /// Child: reopen copies of a state with the official library and print what it reads.
    Read {
        /// A built tag.
        #[arg(long)]
        tag: String,
        /// Store kind.
        #[arg(long)]
        kind: StoreKind,
        /// Copies to open with OnErrorDiscard (read first, in order).
        #[arg(long)]
        discard: Vec<PathBuf>,
        /// Copies to open with OnErrorRecover (read after the discard copies).
        #[arg(long)]
        recover: Vec<PathBuf>,
    },
}

/// The options the power-loss and disk-error suites' commands share (`#[command(flatten)]`).
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Seed (default: the base seed, see `conformance::vocab::seed`).
    #[arg(long, env = "CONFORMANCE_SEED", default_value_t = crate::vocab::seed::DEFAULT_SEED)]
    pub seed: u64,
    /// Only these built tags (comma-separated; default: every built tag).
    #[arg(long, value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Only these store kinds (default: every kind of the suite a version has).
    #[arg(long, value_delimiter = ',')]
    pub kinds: Vec<StoreKind>,
    /// Writer runs and batches of states at once (default: CONFORMANCE_JOBS, else one per core).
    #[arg(long, env = "CONFORMANCE_JOBS", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Print every state.
    #[arg(long)]
    pub verbose: bool,
    /// Also write the result as JSON (the report's section of the suite) to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Judge a saved failure folder again (its `state/` and the line it was saved with)
    /// instead of running.
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// The official library's page size (bytes) in the writers and every read, and the page
    /// the states are cut in (default: this process's, see `mmkv_sys::page_size`).
    #[arg(long, value_parser = parse_page_size)]
    pub page_size: Option<u64>,
    /// Read with this deliberately broken reader (`conformance::sides::broken`).
    #[arg(long = "break", value_name = "NAME", value_parser = Broken::parse)]
    pub broken: Option<Broken>,
}

impl SuiteArgs {
    /// The child processes' program, at `--page-size` when given (exit 2 when it cannot be
    /// found; `what` names the suite in the message).
    pub fn exe(&self, what: &str) -> std::result::Result<ChildExe, ExitCode> {
        let exe = or_exit(what, 2, ChildExe::this())?;
        Ok(match self.page_size {
            Some(size) => exe.with_page_size(size),
            None => exe,
        })
    }

    /// Sets a suite configuration's shared fields from `--seed`, and from `--jobs`, `--tags`,
    /// `--kinds` and `--break` when given (exit 2 when the broken reader is refused).
    pub fn apply(&self, what: &str, common: &mut SuiteCommon) -> std::result::Result<(), ExitCode> {
        common.seed = self.seed;
        if let Some(n) = self.jobs {
            common.jobs = n as usize;
        }
        if !self.tags.is_empty() {
            common.tags.clone_from(&self.tags);
        }
        if !self.kinds.is_empty() {
            common.kinds.clone_from(&self.kinds);
        }
        if let Some(b) = self.broken {
            common.reader = or_exit(what, 2, b.reader_fn().map_err(crate::error::Error::Other))?;
        }
        Ok(())
    }

    /// The end of a suite command: with `--replay`, the saved folder judged again by
    /// `replay` and its verdicts printed by `show` (exit 1 on a disagreement); else the suite
    /// run by `run`, its section printed and written to `--json` (exit 1 when it did not
    /// pass). Exit 2 when either could not run.
    pub fn replay_or_run<S: serde::Serialize>(
        &self,
        what: &str,
        replay: impl FnOnce(&Path) -> Result<Verdicts>,
        show: impl FnOnce(&Verdicts) -> String,
        run: impl FnOnce(bool) -> Result<S>,
        text: impl FnOnce(&S) -> (String, bool),
    ) -> std::result::Result<ExitCode, ExitCode> {
        if let Some(folder) = &self.replay {
            let verdicts = or_exit(&format!("{what} replay"), 2, replay(folder))?;
            println!("{}", show(&verdicts));
            return Ok(exit_status(!disagrees(&verdicts)));
        }
        let s = or_exit(what, 2, run(self.verbose))?;
        let (text, passed) = text(&s);
        print!("{text}");
        self.write_json(what, &s)?;
        Ok(exit_status(passed))
    }

    /// Writes `section` as JSON to `--json`, when given (exit 2 when it cannot).
    pub fn write_json(
        &self,
        what: &str,
        section: &impl serde::Serialize,
    ) -> std::result::Result<(), ExitCode> {
        let Some(p) = &self.json else {
            return Ok(());
        };
        let json = serde_json::to_string_pretty(section).unwrap_or_default();
        std::fs::write(p, json).map_err(|e| {
            eprintln!("{what}: {}: {e}", p.display());
            ExitCode::from(2)
        })
    }
}

/// A `--page-size` value: a page size the official library runs with.
pub fn parse_page_size(s: &str) -> std::result::Result<u64, String> {
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: not a number of bytes"))?;
    mmkv_sys::page_size::check_page_size(n).map_err(|e| e.to_string())
}

/// Runs the suite as the report and `faults run` do: every state's line when `verbose`
/// (disagreements always), a progress line every 100 states otherwise.
pub fn run_printing(cfg: &SuiteConfig, verbose: bool) -> Result<FaultSection> {
    let started = std::time::Instant::now();
    let summary = run_suite(cfg, |r| {
        if verbose || r.disagrees() {
            eprintln!("{}", r.line());
        } else if (r.index + 1) % 100 == 0 {
            eprintln!("faults: {} states", r.index + 1);
        }
    })?;
    let mut section = FaultSection::of(&summary, cfg.common.seed);
    finish_section(&mut section, started, cfg.common.exe.page_size);
    Ok(section)
}

/// 0 when it passed, 1 otherwise (2 is for a run that could not happen).
pub fn exit_status(passed: bool) -> ExitCode {
    ExitCode::from(u8::from(!passed))
}

/// `states`, unless the environment variable `var` holds a number.
pub fn states_from_env(var: &str, states: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(states)
}

/// The value, or exit status `code` after printing the error after `what: `.
pub fn or_exit<T>(what: &str, code: u8, r: Result<T>) -> std::result::Result<T, ExitCode> {
    r.map_err(|e| {
        eprintln!("{what}: {e}");
        ExitCode::from(code)
    })
}

/// Runs one `conformance faults ...` command. `run` exits 1 when a state disagrees without
/// an exceptions-table entry, 2 when the suite could not run (nothing judged is no pass).
pub fn main(cmd: FaultsCmd) -> ExitCode {
    run(cmd).unwrap_or_else(|code| code)
}

fn run(cmd: FaultsCmd) -> std::result::Result<ExitCode, ExitCode> {
    match cmd {
        FaultsCmd::Run {
            states,
            seed,
            tags,
            ops,
            jobs,
            verbose,
            page_size,
            replay,
            broken,
        } => {
            let mut exe = or_exit("faults", 2, ChildExe::this())?;
            if let Some(size) = page_size {
                exe = exe.with_page_size(size);
            }
            let mut cfg = SuiteConfig::new(exe, states_from_env(STATES_VAR, states));
            cfg.common.seed = seed;
            cfg.common.ops = ops;
            if let Some(n) = jobs {
                cfg.common.jobs = n as usize;
            }
            if !tags.is_empty() {
                cfg.common.tags = tags;
            }
            if let Some(b) = broken {
                cfg.common.reader = or_exit(
                    "faults",
                    2,
                    b.reader_fn().map_err(crate::error::Error::Other),
                )?;
            }
            if let Some(folder) = replay {
                let verdicts = or_exit("faults replay", 2, replay_state(&cfg, &folder))?;
                println!("{}", verdicts_line(&verdicts));
                return Ok(exit_status(!disagrees(&verdicts)));
            }
            let s = or_exit("faults", 2, run_printing(&cfg, verbose))?;
            print!("{}", s.to_text());
            Ok(exit_status(s.passed()))
        }
        FaultsCmd::Read {
            tag,
            kind,
            discard,
            recover,
        } => {
            let lib = or_exit("faults read", 1, SysLib::load(&tag))?;
            let discard = discard
                .iter()
                .map(|d| (ErrorStrategy::Discard, d.as_path()));
            let recover = recover
                .iter()
                .map(|d| (ErrorStrategy::Recover, d.as_path()));
            let runs: Vec<(ErrorStrategy, &Path)> = discard.chain(recover).collect();
            child_read_main(&lib, kind, &runs);
            Ok(ExitCode::SUCCESS)
        }
    }
}
