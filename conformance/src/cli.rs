//! The command line: clap types, each validated once into what the commands run with
//! (ripgrep's flags model): a report that would run nothing is refused here, before any
//! workload runs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use conformance::corpus::golden::corpus_root;
use conformance::differential::workload::GenConfig;
use conformance::hunt::signature::Suite;
use conformance::hunt::HuntConfig;
use conformance::report::plan::ReportConfig;
use conformance::sides::broken::Broken;
use conformance::StoreKind;

/// `conformance`.
#[derive(Parser)]
#[command(
    name = "conformance",
    about = "mmkv-reader against the official MMKV library of every version"
)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the whole matrix (versions x store kinds) and print the table.
    Report(ReportArgs),
    /// The official library's coverage under the report (needs an `MMKV_SYS_COVERAGE=1`
    /// build and gcovr).
    Coverage(conformance::coverage::CoverageArgs),
    /// Run nothing: merge `report --json` outputs (e.g. CI shards) into one table.
    Merge {
        /// The `report --json` outputs.
        #[arg(required = true, num_args = 1.., value_name = "JSON")]
        files: Vec<PathBuf>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// The fault suite (differential under faults), the power-loss suite, and their child
    /// processes.
    Faults {
        /// `run`, `powerloss`, `diskerr`, or a child command.
        #[command(subcommand)]
        command: FaultsCommand,
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
        /// Record a page corpus: the official library on pages of this many bytes, the page
        /// corpus's stores kept (`conformance::record::pages`; out: `corpus/p16k/<tag>`).
        #[arg(long)]
        page_size: Option<u64>,
    },
    /// Re-run a saved failure (a folder with workload.yaml, or the YAML file).
    Replay {
        /// The failure folder or YAML file.
        path: PathBuf,
        /// Replay against this deliberately broken reader (what `hunt --break NAME` found).
        #[arg(long = "break", value_name = "NAME", value_parser = parse_break)]
        broken: Option<Broken>,
    },
    /// Explore on a time budget: property runs with fresh seeds over every built version and
    /// kind, migration pairs, fault, power-loss and disk-error batches; failures shrunk, saved and grouped
    /// by signature.
    Hunt(HuntArgs),
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
        /// The cell (JSON of `conformance::report::cell::CellSpec`).
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

/// `conformance faults ...`: the fault suite's commands and the power-loss suite (which
/// lives beside the fault suite, not in it: `powerloss` uses `fault`, never the reverse).
#[derive(Subcommand)]
pub enum FaultsCommand {
    /// The fault suite's commands.
    #[command(flatten)]
    Fault(conformance::fault::cli::FaultsCmd),
    /// Power-loss crash states (pages lost in any subset, torn pages) judged like `run`.
    Powerloss(conformance::powerloss::cli::PowerlossArgs),
    /// The states official writers leave while chosen file calls fail, judged like `run`.
    Diskerr(conformance::diskerr::cli::DiskerrArgs),
}

/// Where the report goes.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Print the report as one JSON document instead of the table (every other line goes to
    /// stderr), or write it to FILE.
    #[arg(long, num_args = 0..=1, value_name = "FILE")]
    pub json: Option<Option<PathBuf>>,
    /// Where to write the Markdown table.
    #[arg(long, default_value = "target/conformance-report.md")]
    pub markdown: PathBuf,
    /// Also write the report as a static web page (index.html) into DIR.
    #[arg(long, value_name = "DIR")]
    pub html: Option<PathBuf>,
    /// The page's readers section: a `suite grade --json` file.
    #[arg(long, value_name = "FILE", requires = "html")]
    pub grades: Option<PathBuf>,
    /// The page's speed section: a criterion directory with the benches' JSON files
    /// (default: the speedup table checked in to benches/README.md).
    #[arg(long, value_name = "DIR", requires = "html")]
    pub speed: Option<PathBuf>,
    /// The page's coverage section: the `coverage-summary.json` of a `conformance coverage`
    /// run (without it the section says the coverage was not measured).
    #[arg(long, value_name = "FILE", requires = "html")]
    pub coverage: Option<PathBuf>,
}

/// Where the JSON document goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonTo {
    /// No JSON: the table on stdout.
    None,
    /// The one JSON document on stdout; every other line on stderr.
    Stdout,
    /// The JSON document to this file; the table on stdout.
    File(PathBuf),
}

/// Where the report goes, validated: the page's inputs are read before anything runs, so a
/// bad `--grades`, `--speed` or `--coverage` fails at once and not after the whole matrix.
#[derive(Debug, Clone)]
pub struct Output {
    /// The JSON document.
    pub json: JsonTo,
    /// The Markdown table.
    pub markdown: PathBuf,
    /// The web page: its directory and what it shows besides the report.
    pub html: Option<(PathBuf, conformance::html::Inputs)>,
}

impl OutputArgs {
    /// Reads the page's inputs (when `--html` is given).
    pub fn validate(self) -> conformance::Result<Output> {
        let html = match self.html {
            Some(dir) => Some((
                dir,
                conformance::html::Inputs::load(
                    self.grades.as_deref(),
                    self.speed.as_deref(),
                    self.coverage.as_deref(),
                )?,
            )),
            None => None,
        };
        Ok(Output {
            json: match self.json {
                None => JsonTo::None,
                Some(None) => JsonTo::Stdout,
                Some(Some(file)) => JsonTo::File(file),
            },
            markdown: self.markdown,
            html,
        })
    }
}

impl Output {
    /// A line of text for the terminal: stdout, or stderr when stdout holds the JSON document.
    pub fn say(&self, line: &str) {
        if self.json == JsonTo::Stdout {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
}

/// `conformance report`.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    #[command(flatten)]
    pub output: OutputArgs,
    /// Property cases per (version, kind, seed); at least 1.
    #[arg(long, env = "CONFORMANCE_CASES", default_value_t = 32)]
    pub cases: u32,
    /// Keys of the "many keys" workload each live version runs (0 = skip it).
    #[arg(long, env = "CONFORMANCE_MANY_KEYS", default_value_t = 10_000)]
    pub many_keys: usize,
    /// Ops per live-writer run (every live version, see `conformance::live`; 0 = skip).
    #[arg(long, env = "CONFORMANCE_LIVE_OPS", default_value_t = conformance::live::DEFAULT_OPS)]
    pub live_ops: usize,
    /// Run the cells in this process (no watchdog).
    #[arg(long)]
    pub in_process: bool,
    /// Fixed seeds of the property cells (comma-separated; default: the base seed and the
    /// next, see `conformance::vocab::seed`).
    #[arg(long, value_delimiter = ',')]
    pub seeds: Vec<u64>,
    /// Only these tags (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Corpus root (default: the workspace's corpus/).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Run nothing: merge these `report --json` outputs (the same as `conformance merge`;
    /// kept for the CI workflow).
    #[arg(long, num_args = 1.., value_name = "JSON")]
    pub merge: Vec<PathBuf>,
    /// Damaged states the fault suite judges over the live versions (at least 1).
    #[arg(long, env = "CONFORMANCE_FAULT_STATES", default_value_t = 1000)]
    pub fault_states: usize,
    /// Seed of the fault suite (and of the power-loss suite; default: the base seed).
    #[arg(long)]
    pub fault_seed: Option<u64>,
    /// The base seed every suite draws from (`conformance::vocab::seed`).
    #[arg(long = "seed", env = "CONFORMANCE_SEED",
          default_value_t = conformance::vocab::seed::DEFAULT_SEED)]
    pub base_seed: u64,
    /// Versions run at once, each cell a child process; also the fault, power-loss and
    /// disk-error suites' writer runs at once (default: one per core).
    #[arg(long, env = "CONFORMANCE_JOBS", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Run every cell on the real clock, sleeping through short expiries (default: the test
    /// clock, except the expiring cells of the newest version of each era).
    #[arg(long, env = "CONFORMANCE_REAL_CLOCK")]
    pub real_clock: bool,
    /// Power-loss crash states judged over the live versions (0: the suite does not run).
    #[arg(long, env = "CONFORMANCE_POWERLOSS_STATES", default_value_t = 1000)]
    pub powerloss_states: usize,
    /// Disk-error states judged over the live versions: official writers run while chosen
    /// file calls fail (0: the suite does not run).
    #[arg(long, env = "CONFORMANCE_DISKERR_STATES", default_value_t = 200)]
    pub diskerr_states: usize,
    /// The official page sizes every live cell runs under, `SIZE[:CASES]` each (CASES: the
    /// property cases at that size, default --cases); the fault and power-loss suites run at
    /// each size too. Default: 4 KiB, and 16 KiB at CI's 2 cases.
    #[arg(long, env = conformance::report::pages::PAGE_SIZES_VAR,
          default_value = conformance::report::pages::DEFAULT_PAGE_SIZES)]
    pub page_sizes: conformance::report::pages::PageSizes,
}

/// What `report` runs, validated.
#[derive(Debug, Clone)]
pub enum ReportRequest {
    /// Merge these JSON reports (`report --merge`, the same as `conformance merge`).
    Merge(Vec<PathBuf>),
    /// Run the matrix.
    Run(ReportRun),
}

/// A validated report run.
#[derive(Debug, Clone)]
pub struct ReportRun {
    /// The rows' configuration.
    pub config: ReportConfig,
    /// Ops per live-writer run (0: none).
    pub live_ops: usize,
    /// Run the cells in this process.
    pub in_process: bool,
    /// Damaged states of the fault suite (at least 1).
    pub fault_states: usize,
    /// The base seed (`CONFORMANCE_SEED` or `--seed`): the default of the other seeds.
    pub seed: u64,
    /// Seed of the fault suite (and of the power-loss suite).
    pub fault_seed: u64,
    /// Rows run at once (1 with `in_process`).
    pub jobs: usize,
    /// Every cell on the real clock.
    pub real_clock: bool,
    /// Power-loss crash states (0: none).
    pub powerloss_states: usize,
    /// Disk-error states (0: none).
    pub diskerr_states: usize,
}

impl ReportArgs {
    /// Checks the arguments once: a report that would run nothing has not passed, so it is a
    /// usage error.
    pub fn validate(self) -> conformance::Result<ReportRequest> {
        let usage = |m: &str| Err(conformance::Error::Other(m.to_string()));
        if !self.merge.is_empty() {
            return Ok(ReportRequest::Merge(self.merge));
        }
        if self.fault_states == 0 {
            return usage("--fault-states 0 (or CONFORMANCE_FAULT_STATES=0) would judge no damaged state: a report that ran nothing has not passed");
        }
        if self.cases == 0 {
            return usage("--cases 0 (or CONFORMANCE_CASES=0) would run no workload: a report that ran nothing has not passed");
        }
        let base = self.base_seed;
        let seeds = if self.seeds.is_empty() {
            vec![base, base.wrapping_add(1)]
        } else {
            self.seeds
        };
        if self.in_process && self.page_sizes.0.len() > 1 {
            return usage("--in-process runs one page size (an official library fixes its page size at its first open): give --page-sizes with one size");
        }
        Ok(ReportRequest::Run(ReportRun {
            config: ReportConfig {
                corpus: self.corpus.unwrap_or_else(corpus_root),
                cases: self.cases,
                seeds,
                gen: GenConfig::default(),
                only: self.only,
                many_keys: self.many_keys,
                page_sizes: self.page_sizes,
                real_clock_tags: Vec::new(),
            },
            live_ops: self.live_ops,
            in_process: self.in_process,
            fault_states: self.fault_states,
            seed: base,
            fault_seed: self.fault_seed.unwrap_or(base),
            // In-process cells share this process's official libraries and clock: one at a time.
            jobs: match self.jobs {
                _ if self.in_process => 1,
                Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
                None => conformance::vocab::pool::default_jobs(),
            },
            real_clock: self.real_clock,
            powerloss_states: self.powerloss_states,
            diskerr_states: self.diskerr_states,
        }))
    }
}

/// A `--break` name: one of `conformance::sides::broken::Bug::NAMES`.
fn parse_break(name: &str) -> Result<Broken, String> {
    Broken::parse(name)
}

/// `conformance hunt`.
#[derive(Args, Debug, Clone)]
pub struct HuntArgs {
    /// The time budget in minutes (fractions allowed): no run starts after it.
    #[arg(long)]
    pub minutes: f64,
    /// Where failure folders go (default: `hunt-SEED` under the failures folder,
    /// `target/conformance-failures`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Where the JSON document goes (default: `DIR/hunt.json`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The base seed (default: a random one, printed): the same seed runs the same rounds.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Hunt with this deliberately broken reader instead of the real one
    /// (`conformance::sides::broken`).
    #[arg(long = "break", value_name = "NAME", value_parser = parse_break)]
    pub broken: Option<Broken>,
    /// Only these built tags (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Only these store kinds (comma-separated ids; default: all).
    #[arg(long, value_delimiter = ',')]
    pub kinds: Vec<StoreKind>,
    /// Differential cases per run (at least 1).
    #[arg(long, default_value_t = conformance::hunt::DEFAULT_CASES)]
    pub cases: u32,
    /// Migration cases per run (0: no migration runs).
    #[arg(long, default_value_t = conformance::hunt::DEFAULT_MIGRATION_CASES)]
    pub migration_cases: u32,
    /// Only these suites (comma-separated: differential, migration, fault, powerloss,
    /// diskerr; default: all).
    #[arg(long, value_delimiter = ',')]
    pub suites: Vec<Suite>,
    /// Fault-suite states per round and version (0: no fault batches).
    #[arg(long, default_value_t = conformance::hunt::DEFAULT_FAULT_STATES)]
    pub fault_states: usize,
    /// Power-loss crash states per round and version (0: no power-loss batches).
    #[arg(long, default_value_t = conformance::hunt::DEFAULT_POWERLOSS_STATES)]
    pub powerloss_states: usize,
    /// Disk-error states per round and version (0: no disk-error batches).
    #[arg(long, default_value_t = conformance::hunt::DEFAULT_DISKERR_STATES)]
    pub diskerr_states: usize,
    /// Most operations per generated workload.
    #[arg(long, default_value_t = GenConfig::default().max_ops)]
    pub max_ops: usize,
    /// Shrink steps per failure (fewer: less minimal findings, more time to hunt).
    #[arg(long, default_value_t = conformance::differential::property::PropConfig::default().max_shrink_iters)]
    pub max_shrink_iters: u32,
}

/// A validated hunt: its configuration, the reader it hunts with and where the JSON goes.
#[derive(Debug, Clone)]
pub struct HuntRun {
    /// What runs.
    pub config: HuntConfig,
    /// The broken reader (`None`: the real one).
    pub broken: Option<Broken>,
    /// The JSON document's file.
    pub json: PathBuf,
}

impl HuntArgs {
    /// Checks the arguments once: a hunt that would run nothing is a usage error.
    pub fn validate(self) -> conformance::Result<HuntRun> {
        let usage = |m: String| Err(conformance::Error::Other(m));
        if !(self.minutes.is_finite() && self.minutes > 0.0) {
            return usage(format!(
                "--minutes {}: a hunt needs a budget above 0",
                self.minutes
            ));
        }
        if self.cases == 0 {
            return usage("--cases 0 would run no workload".to_string());
        }
        if self.max_ops == 0 {
            return usage("--max-ops 0 would generate no operation".to_string());
        }
        let built = conformance::sides::sys::built_tags();
        let versions: Vec<String> = if self.only.is_empty() {
            built.clone()
        } else {
            if let Some(t) = self.only.iter().find(|t| !built.contains(t)) {
                return usage(format!(
                    "--only {t}: not built (built: {}; MMKV_VERSIONS chooses at build time)",
                    built.join(", ")
                ));
            }
            built
                .into_iter()
                .filter(|t| self.only.contains(t))
                .collect()
        };
        if versions.is_empty() {
            return usage("no official version is built (MMKV_VERSIONS=none?)".to_string());
        }
        let base_seed = self.seed.unwrap_or_else(random_seed);
        let out = self.out.unwrap_or_else(|| {
            conformance::differential::failures::failures_root().join(format!("hunt-{base_seed}"))
        });
        let json = self.json.unwrap_or_else(|| out.join("hunt.json"));
        let suites: Vec<Suite> = Suite::ALL
            .into_iter()
            .filter(|s| self.suites.is_empty() || self.suites.contains(s))
            .collect();
        let state_reader = match &self.broken {
            Some(b) => b.reader_fn().map_err(conformance::Error::Other)?,
            None => conformance::sides::reads::read_reader,
        };
        Ok(HuntRun {
            config: HuntConfig {
                budget: std::time::Duration::from_secs_f64(self.minutes * 60.0),
                base_seed,
                out,
                suites,
                versions,
                kinds: if self.kinds.is_empty() {
                    StoreKind::ALL.to_vec()
                } else {
                    self.kinds
                },
                cases: self.cases,
                migration_cases: self.migration_cases,
                fault_states: self.fault_states,
                powerloss_states: self.powerloss_states,
                diskerr_states: self.diskerr_states,
                state_reader,
                gen: GenConfig {
                    max_ops: self.max_ops,
                    ..GenConfig::default()
                },
                max_shrink_iters: self.max_shrink_iters,
                replay_suffix: self
                    .broken
                    .map(|b| format!(" --break {}", b.bug.name()))
                    .unwrap_or_default(),
            },
            broken: self.broken,
            json,
        })
    }
}

/// A base seed no two hunts share: the clock's nanoseconds and the process id, mixed.
fn random_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    conformance::vocab::SplitMix::stream(nanos, u64::from(std::process::id())).next_u64()
}
