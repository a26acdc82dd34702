//! `faults`: the fault suite (differential under faults) and its child processes.
//!
//! ```text
//! faults run [--states 1000] [--seed 1] [--tags v2.4.2,v1.3.14] [--ops 120]   # the suite
//! faults write --tag T --dir D --kind K --seed S --ops N --kill never|before:K|during:K:US
//! faults read --tag T --kind K [--discard DIR] [--recover DIR]               # official reads
//! ```
//!
//! `run` prints the number of states judged and every count; exit status 1 when a state
//! disagrees without an entry in the exceptions table. `FAULT_STATES` overrides `--states`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mmkv_sys::ErrorStrategy;

use conformance::fault::official::child_read_main;
use conformance::fault::suite::{run_suite, SuiteConfig};
use conformance::fault::writer::{run_writer, Kill};
use conformance::sys::SysLib;
use conformance::StoreKind;

#[derive(Parser)]
#[command(
    name = "faults",
    about = "mmkv-reader against the official MMKV library on damaged stores"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the fault suite.
    Run {
        /// Number of damaged states (env FAULT_STATES overrides).
        #[arg(long, default_value_t = 1000)]
        states: usize,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Only these built tags (comma-separated; default: every built tag).
        #[arg(long, value_delimiter = ',')]
        tags: Vec<String>,
        /// Ops per writer run.
        #[arg(long, default_value_t = 120)]
        ops: usize,
        /// Print every state.
        #[arg(long)]
        verbose: bool,
    },
    /// Child: run the seeded workload with the official library, dying as --kill says.
    Write {
        #[arg(long)]
        tag: String,
        #[arg(long)]
        dir: PathBuf,
        #[arg(long)]
        kind: StoreKind,
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        ops: usize,
        #[arg(long, default_value = "never")]
        kill: String,
    },
    /// Child: reopen copies of a state with the official library and print what it reads.
    Read {
        #[arg(long)]
        tag: String,
        #[arg(long)]
        kind: StoreKind,
        /// Copy to open with OnErrorDiscard.
        #[arg(long)]
        discard: Option<PathBuf>,
        /// Copy to open with OnErrorRecover.
        #[arg(long)]
        recover: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Cmd::Run {
            states,
            seed,
            tags,
            ops,
            verbose,
        } => {
            let exe = match std::env::current_exe() {
                Ok(e) => e,
                Err(e) => {
                    eprintln!("faults: current_exe: {e}");
                    return ExitCode::from(2);
                }
            };
            let states = std::env::var("FAULT_STATES")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(states);
            let mut cfg = SuiteConfig::new(exe, states);
            cfg.seed = seed;
            cfg.ops = ops;
            if !tags.is_empty() {
                cfg.tags = tags;
            }
            let started = std::time::Instant::now();
            let summary = run_suite(&cfg, |r| {
                if verbose || r.disagrees() {
                    eprintln!("{}", r.line());
                } else if (r.index + 1) % 100 == 0 {
                    eprintln!("faults: {} states", r.index + 1);
                }
            });
            match summary {
                Ok(s) => {
                    print!("{}", s.render());
                    println!("  time: {:.1} s", started.elapsed().as_secs_f64());
                    if s.disagreements().is_empty() {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(1)
                    }
                }
                Err(e) => {
                    eprintln!("faults: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Cmd::Write {
            tag,
            dir,
            kind,
            seed,
            ops,
            kill,
        } => {
            let Some(kill) = Kill::parse(&kill) else {
                eprintln!("faults write: bad --kill {kill}");
                return ExitCode::from(2);
            };
            let r =
                SysLib::load(&tag).and_then(|lib| run_writer(&lib, &dir, kind, seed, ops, kill));
            match r {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("faults write: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Cmd::Read {
            tag,
            kind,
            discard,
            recover,
        } => {
            let lib = match SysLib::load(&tag) {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("faults read: {e}");
                    return ExitCode::from(1);
                }
            };
            let mut runs = Vec::new();
            if let Some(d) = &discard {
                runs.push((ErrorStrategy::Discard, d.as_path()));
            }
            if let Some(d) = &recover {
                runs.push((ErrorStrategy::Recover, d.as_path()));
            }
            child_read_main(&lib, kind, &runs);
            ExitCode::SUCCESS
        }
    }
}
