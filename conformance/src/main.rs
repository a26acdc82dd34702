//! `conformance`: the conformance report (with the fault suite), corpus recording, repro
//! replay, the fault suite's own commands, and the live writer.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use conformance::cell::{
    run_cell, run_cell_child, workload_timeout, CellResult, CellSpec, HEARTBEAT, RESULT_PREFIX,
};
use conformance::fault::suite::SuiteConfig;
use conformance::golden::{check_corpus_dir, corpus_root};
use conformance::record::{record_corpus, RecordSpec};
use conformance::report::{plan, run_row, Report, ReportConfig};
use conformance::run::{load_repro, run_steps, Step};
use conformance::sys::SysLib;
use conformance::workload::GenConfig;
use conformance::writer::child::ChildExe;
use conformance::writer::run_writer;
use conformance::RealReader;

#[derive(Parser)]
#[command(
    name = "conformance",
    about = "mmkv-reader against the official MMKV library of every version"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the whole matrix (versions x store kinds) and print the table.
    Report {
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
        /// Where to write the Markdown table.
        #[arg(long, default_value = "target/conformance-report.md")]
        markdown: PathBuf,
        /// Property cases per (version, kind, seed); at least 1.
        #[arg(long, env = "CONFORMANCE_CASES", default_value_t = 32)]
        cases: u32,
        /// Keys of the "many keys" workload each live version runs (0 = skip it).
        #[arg(long, env = "CONFORMANCE_MANY_KEYS", default_value_t = 10_000)]
        many_keys: usize,
        /// Ops per live-writer run (every live version, see `conformance::live`; 0 = skip).
        #[arg(long, env = "CONFORMANCE_LIVE_OPS", default_value_t = conformance::live::DEFAULT_OPS)]
        live_ops: usize,
        /// Run the cells in this process (no watchdog).
        #[arg(long)]
        in_process: bool,
        /// Fixed seeds (comma-separated).
        #[arg(long, value_delimiter = ',', default_value = "1,2")]
        seeds: Vec<u64>,
        /// Only these tags (comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Corpus root (default: the workspace's corpus/).
        #[arg(long)]
        corpus: Option<PathBuf>,
        /// Run nothing: merge these `report --json` outputs (e.g. CI shards) into one table.
        #[arg(long, num_args = 1.., value_name = "JSON")]
        merge: Vec<PathBuf>,
        /// Damaged states the fault suite judges over the live versions (at least 1).
        #[arg(long, env = "CONFORMANCE_FAULT_STATES", default_value_t = 1000)]
        fault_states: usize,
        /// Seed of the fault suite.
        #[arg(long, default_value_t = 1)]
        fault_seed: u64,
    },
    /// The fault suite (differential under faults) and its child processes.
    Faults {
        /// `run`, or a child command.
        #[command(subcommand)]
        command: conformance::fault::cli::FaultsCmd,
    },
    /// The portable suite for any MMKV reader: build, verify, grade (suite/README.md).
    Suite {
        /// `build`, `verify` or `grade`.
        #[command(subcommand)]
        command: conformance::suite::cli::SuiteCmd,
    },
    /// Record the corpus store set with the official library of one built version.
    Record {
        /// A built tag (see `mmkv_sys::built_versions`).
        #[arg(long)]
        tag: String,
        /// Output folder (created).
        #[arg(long)]
        out: PathBuf,
        /// Workload seed.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Keys per store.
        #[arg(long, default_value_t = 120)]
        keys: usize,
    },
    /// Re-run a saved failure (a folder with workload.yaml, or the YAML file).
    Replay {
        /// The failure folder or YAML file.
        path: PathBuf,
    },
    /// Check one corpus folder (manifest.json + stores) with the reader.
    CheckCorpus {
        /// The folder.
        dir: PathBuf,
    },
    /// List the versions built into mmkv-sys.
    Versions,
    /// Print the accepted-differences table (Markdown, as in the README).
    Exceptions,
    /// (internal) One report cell, run by `report` in a child process.
    #[command(hide = true)]
    Cell {
        /// The cell (JSON of `conformance::cell::CellSpec`).
        #[arg(long)]
        spec: String,
        /// Where to write each workload before it runs.
        #[arg(long)]
        running: PathBuf,
    },
    /// (internal) A writer child: the official library performs one plan's op stream
    /// (`conformance::writer`: live, stress, shrink and fault-suite writers).
    #[command(hide = true)]
    Writer {
        /// A built tag.
        #[arg(long)]
        tag: String,
        /// Store folder.
        #[arg(long)]
        dir: PathBuf,
        /// The plan and its options.
        #[command(flatten)]
        spec: conformance::writer::WriterSpec,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> conformance::Result<ExitCode> {
    match cli.command {
        Command::Report {
            json,
            markdown,
            cases,
            seeds,
            only,
            corpus,
            many_keys,
            live_ops,
            in_process,
            merge,
            fault_states,
            fault_seed,
        } => {
            if fault_states == 0 && merge.is_empty() {
                return Err(conformance::Error::Other(
                    "--fault-states 0 (or CONFORMANCE_FAULT_STATES=0) would judge no damaged state: a report that ran nothing has not passed"
                        .to_string(),
                ));
            }
            if cases == 0 {
                return Err(conformance::Error::Other(
                    "--cases 0 (or CONFORMANCE_CASES=0) would run no workload: a report that ran nothing has not passed"
                        .to_string(),
                ));
            }
            if seeds.is_empty() {
                return Err(conformance::Error::Other("no seeds given".to_string()));
            }
            let cfg = ReportConfig {
                corpus: corpus.unwrap_or_else(corpus_root),
                cases,
                seeds,
                gen: GenConfig::default(),
                only,
                many_keys,
            };
            let merged = if merge.is_empty() {
                None
            } else {
                Some(conformance::shards::merge_files(&merge)?)
            };
            let rows = if merged.is_some() {
                Vec::new()
            } else {
                plan(&cfg)
            };
            let unknown: Vec<&String> = cfg
                .only
                .iter()
                .filter(|t| !rows.iter().any(|r| &r.tag == *t))
                .collect();
            if merged.is_none() && (!unknown.is_empty() || rows.is_empty()) {
                return Err(conformance::Error::Other(format!(
                    "--only {unknown:?} matches no tag of versions.yaml, the corpus or the built versions"
                )));
            }
            let exe = std::env::current_exe()
                .map_err(|e| conformance::Error::Other(format!("current_exe: {e}")))?;
            let timeout = workload_timeout();
            let total: u64 = rows.iter().map(|r| r.work()).sum();
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            let reader = RealReader::new();
            let mut out = Vec::new();
            let mut live_lines = Vec::new();
            for row in &rows {
                let mut cell = |spec: &CellSpec| -> CellResult {
                    if in_process {
                        match SysLib::load(&spec.tag) {
                            Ok(lib) => run_cell(&lib, spec, cfg.gen, &reader, None, &|| {}),
                            Err(e) => CellResult {
                                failures: vec![format!("{}: {e}", spec.tag)],
                                ..CellResult::default()
                            },
                        }
                    } else {
                        run_cell_child(&exe, spec, timeout)
                    }
                };
                let mut r = run_row(&cfg, row, &reader, &mut cell, &mut |msg| {
                    bar.set_message(msg.to_string());
                    bar.inc(1);
                });
                if row.live && live_ops > 0 {
                    bar.set_message(format!("{} live writer", row.tag));
                    let runs =
                        conformance::live::run_version(&exe, &row.tag, &row.features, live_ops);
                    r.failures
                        .extend(runs.iter().filter(|o| !o.passed()).map(|o| o.line()));
                    live_lines.push(conformance::live::summary_line(&row.tag, &runs));
                }
                out.push(r);
            }
            bar.finish_and_clear();
            let report = match merged {
                Some(report) => report,
                None => {
                    let live: Vec<String> = rows
                        .iter()
                        .filter(|r| r.live)
                        .map(|r| r.tag.clone())
                        .collect();
                    let faults = if live.is_empty() {
                        None
                    } else {
                        let mut fc = SuiteConfig::new(ChildExe::this()?, fault_states);
                        fc.tags = live;
                        fc.seed = fault_seed;
                        eprintln!(
                            "fault suite: {fault_states} damaged states over {}",
                            fc.tags.join(", ")
                        );
                        Some(conformance::fault::cli::run_printing(&fc, false)?)
                    };
                    let mut report = Report {
                        versions: out,
                        faults,
                    };
                    let unbuilt: Vec<(&str, &str)> = mmkv_sys::unbuilt()
                        .iter()
                        .map(|u| (u.tag, u.reason))
                        .collect();
                    conformance::shards::mark_unbuilt(&mut report, &unbuilt);
                    report
                }
            };
            if json {
                println!("{}", report.to_json());
            } else {
                print!("{}", report.to_text());
            }
            if let Some(parent) = markdown.parent() {
                if !parent.as_os_str().is_empty() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| conformance::Error::io(parent, e))?;
                }
            }
            std::fs::write(&markdown, report.to_markdown())
                .map_err(|e| conformance::Error::io(&markdown, e))?;
            eprintln!("markdown table written to {}", markdown.display());
            for row in &report.versions {
                for n in &row.notes {
                    eprintln!("NOTE {n}");
                }
                for f in &row.failures {
                    eprintln!("FAIL {f}");
                }
                if let Some(why) = &row.unbuilt {
                    eprintln!("UNBUILT {}: {why}", row.tag);
                }
            }
            for l in &live_lines {
                println!("{l}");
            }
            println!("{}", report.summary_line());
            let summary = conformance::shards::Summary::of(&report);
            let strict = conformance::shards::require_all();
            println!("{}", summary.line());
            if strict && summary.unbuilt() > 0 {
                eprintln!(
                    "{}=1: {} unbuilt version(s) count as failures",
                    conformance::shards::REQUIRE_ALL_VAR,
                    summary.unbuilt()
                );
            }
            Ok(if conformance::shards::passed(&report, strict) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Record {
            tag,
            out,
            seed,
            keys,
        } => {
            let lib = SysLib::load(&tag)?;
            let version = {
                let v = lib.official().version();
                if v.is_empty() {
                    tag.clone()
                } else {
                    v
                }
            };
            let manifest = record_corpus(&lib, &version, &out, &RecordSpec { seed, keys })?;
            let check = check_corpus_dir(&out, &RealReader::new())?;
            for s in &manifest.stores {
                let verdict = match check.store(&s.id) {
                    Some(c) if c.passed() => "reader agrees".to_string(),
                    Some(c) => format!("READER DIFFERS: {}", c.mismatches.join("; ")),
                    None => "not checked".to_string(),
                };
                println!(
                    "{:<18} {:>4} entries {:>4} absent {:>3} rejected  {verdict}",
                    s.id,
                    s.entries.len(),
                    s.absent.len(),
                    s.rejected_sets
                );
            }
            println!("wrote {}", out.join("manifest.json").display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Replay { path } => {
            let repro = load_repro(&path)?;
            let mut libs = vec![SysLib::load(&repro.tag)?];
            for c in &repro.then {
                libs.push(SysLib::load(&c.tag)?);
            }
            let mut steps = vec![Step {
                lib: &libs[0],
                ops: &repro.workload.ops,
            }];
            for (c, lib) in repro.then.iter().zip(&libs[1..]) {
                steps.push(Step { lib, ops: &c.ops });
            }
            println!(
                "replaying {} ops on {}{} {}",
                repro.workload.ops.len() + repro.then.iter().map(|c| c.ops.len()).sum::<usize>(),
                repro.tag,
                repro
                    .then
                    .iter()
                    .map(|c| format!(" then {}", c.tag))
                    .collect::<String>(),
                repro.kind
            );
            let outcome = run_steps(&steps, repro.kind, &repro.workload, &RealReader::new())?;
            if outcome.passed() {
                println!("pass: no reader failure (upstream divergences, if any, follow)");
                if !outcome.divergences.is_empty() {
                    print!("{}", outcome.diff_text());
                }
                Ok(ExitCode::SUCCESS)
            } else {
                print!("{}", outcome.diff_text());
                Ok(ExitCode::from(1))
            }
        }
        Command::CheckCorpus { dir } => {
            let check = check_corpus_dir(&dir, &RealReader::new())?;
            let mut ok = true;
            for s in &check.stores {
                if s.passed() {
                    println!("{:<18} pass", s.id);
                } else {
                    ok = false;
                    println!("{:<18} FAIL", s.id);
                    for m in &s.mismatches {
                        println!("    {m}");
                    }
                }
            }
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Cell { spec, running } => {
            let spec: CellSpec = serde_json::from_str(&spec)
                .map_err(|e| conformance::Error::Other(format!("--spec: {e}")))?;
            let lib = SysLib::load(&spec.tag)?;
            let heartbeat = || {
                use std::io::Write as _;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{HEARTBEAT}");
                let _ = out.flush();
            };
            let result = run_cell(
                &lib,
                &spec,
                GenConfig::default(),
                &RealReader::new(),
                Some(&running),
                &heartbeat,
            );
            println!(
                "{RESULT_PREFIX}{}",
                serde_json::to_string(&result).unwrap_or_default()
            );
            Ok(if result.passed {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Faults { command } => Ok(conformance::fault::cli::main(command)),
        Command::Suite { command } => Ok(conformance::suite::cli::main(command)),
        Command::Exceptions => {
            print!("{}", conformance::exceptions::markdown_table());
            Ok(ExitCode::SUCCESS)
        }
        Command::Versions => {
            for b in mmkv_sys::built() {
                println!("{} {} ({})", b.tag, b.library, b.origin);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Writer { tag, dir, spec } => {
            let lib = SysLib::load(&tag)?;
            run_writer(&lib, &dir, &spec)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
