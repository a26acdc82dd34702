//! `conformance`: the conformance report (with the fault suite), the hunt, corpus recording,
//! repro replay, the fault suite's own commands, and the live writer.

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command, FaultsCommand, JsonTo, Output, ReportRequest, ReportRun};
use conformance::corpus::golden::check_corpus_dir;
use conformance::differential::failures::load_repro;
use conformance::differential::runner::run_repro;
use conformance::diskerr::suite::DiskerrConfig;
use conformance::fault::cli::exit_status;
use conformance::fault::suite::{SuiteCommon, SuiteConfig};
use conformance::powerloss::suite::PowerlossConfig;
use conformance::record::pages::record_page_corpus;
use conformance::record::{record_corpus, RecordSpec};
use conformance::report::cell::{
    run_cell, run_cell_child_at, workload_timeout, CellResult, CellSpec, HEARTBEAT, RESULT_PREFIX,
};
use conformance::report::merge::merge_files;
use conformance::report::plan::{mark_unbuilt, plan, run_row};
use conformance::report::{require_all, Report, REQUIRE_ALL_VAR};
use conformance::sides::official::OfficialLib;
use conformance::sides::sys::SysLib;
use conformance::vocab::pool::{run_ordered, Progress};
use conformance::writer::child::ChildExe;
use conformance::writer::run_writer;
use conformance::RealReader;

/// Runs the report's rows, live writers and fault suite, then [`emit`]s it.
fn report(mut run: ReportRun, output: &Output) -> conformance::Result<ExitCode> {
    let rows = plan(&run.config);
    // The expiring cells that keep the real clock (every cell with --real-clock).
    run.config.real_clock_tags = if run.real_clock {
        rows.iter().map(|r| r.tag.clone()).collect()
    } else {
        conformance::vocab::test_clock::real_clock_tags(
            rows.iter().filter(|r| r.live).map(|r| r.tag.as_str()),
        )
    };
    let cfg = &run.config;
    let unknown: Vec<&String> = cfg
        .only
        .iter()
        .filter(|t| !rows.iter().any(|r| &r.tag == *t))
        .collect();
    eprintln!(
        "conformance seed: {} (--seed or CONFORMANCE_SEED; property seeds {:?}, fault seed {})",
        run.seed, cfg.seeds, run.fault_seed
    );
    eprintln!("page sizes: {}", cfg.page_sizes);
    if !unknown.is_empty() || rows.is_empty() {
        return Err(conformance::Error::Other(format!(
            "--only {unknown:?} matches no tag of versions.yaml, the corpus or the built versions"
        )));
    }
    let exe = std::env::current_exe()
        .map_err(|e| conformance::Error::Other(format!("current_exe: {e}")))?;
    let timeout = workload_timeout();
    let total: u64 = rows.iter().map(|r| r.work()).sum();
    // Temporary stores on tmpfs when there is one (see `conformance::report::scratch`).
    let scratch = conformance::report::scratch::use_for_process();
    eprintln!("temporary stores in {}", scratch.display());
    let progress = Progress::new(total);
    let reader = RealReader::new();
    let rows_out = run_ordered(rows.iter().collect(), run.jobs, |row| {
        // The unit run_row announced last (its cell, if any, runs next).
        let announced = std::cell::RefCell::new(None::<String>);
        let mut cell = |spec: &CellSpec, page_size: u64| -> CellResult {
            let name = announced
                .borrow_mut()
                .take()
                .unwrap_or_else(|| format!("{} {}", spec.tag, spec.kind.id()));
            progress.start(&name);
            let result = if run.in_process {
                // One page size in-process (the CLI refuses more): the first cell fixes it.
                let loaded = mmkv_sys::set_page_size(page_size)
                    .map_err(|e| conformance::Error::Other(e.to_string()))
                    .and_then(|()| SysLib::load(&spec.tag));
                match loaded {
                    Ok(lib) => run_cell(&lib, spec, cfg.gen, &reader, None, &|| {}),
                    Err(e) => CellResult {
                        failures: vec![format!("{}: {e}", spec.tag)],
                        ..CellResult::default()
                    },
                }
            } else {
                run_cell_child_at(&exe, spec, Some(page_size), timeout)
            };
            progress.finish(&name);
            result
        };
        let page = conformance::report::pages::label(row.page_size);
        let mut r = run_row(cfg, row, &reader, &mut cell, &mut |msg| {
            // A unit announced without a cell run after it was done at once.
            let msg = if row.primary {
                msg.to_string()
            } else {
                format!("{msg} ({page})")
            };
            if announced.borrow_mut().replace(msg).is_some() {
                progress.skip();
            }
        });
        if announced.borrow_mut().take().is_some() {
            progress.skip();
        }
        let mut live_line = None;
        // The live writer runs at the primary page size (see conformance/README.md).
        if row.live && row.primary && run.live_ops > 0 {
            let _running = progress.note(&format!("{} live writer", row.tag));
            let runs = conformance::live::run_version(&exe, &row.tag, &row.features, run.live_ops);
            r.failures
                .extend(runs.iter().filter(|o| !o.passed()).map(|o| o.line()));
            let line = conformance::live::summary_line(&row.tag, &runs);
            r.live_writer = Some(line.clone());
            live_line = Some(line);
        }
        (r, live_line)
    });
    progress.finish_and_clear();
    let (out, live_lines): (Vec<_>, Vec<_>) = rows_out.into_iter().unzip();
    let live_lines: Vec<String> = live_lines.into_iter().flatten().collect();
    let live: Vec<String> = rows
        .iter()
        .filter(|r| r.live && r.primary)
        .map(|r| r.tag.clone())
        .collect();
    // The fault and power-loss suites run at every page size of the axis, each with the
    // given number of states; their sections are summed (with the states per page size).
    let mut faults = None;
    let mut powerloss = None;
    let mut diskerr = None;
    for size in cfg.page_sizes.sizes() {
        if live.is_empty() {
            break;
        }
        let exe = ChildExe::this()?.with_page_size(size);
        // A suite's shared fields as the report sets them, and the line that says its run.
        let common = |c: &mut SuiteCommon, what: &str| {
            c.tags = live.clone();
            c.seed = run.fault_seed;
            c.jobs = run.jobs;
            eprintln!(
                "{what} at {} pages over {}",
                conformance::report::pages::label(size),
                c.tags.join(", ")
            );
        };
        let mut fc = SuiteConfig::new(exe.clone(), run.fault_states);
        common(
            &mut fc.common,
            &format!("fault suite: {} damaged states", run.fault_states),
        );
        let section = conformance::fault::cli::run_printing(&fc, false)?;
        faults = conformance::vocab::merge::Merge::merged(faults.into_iter().chain([section]));
        if run.powerloss_states > 0 {
            let mut pc = PowerlossConfig::new(exe.clone(), run.powerloss_states);
            common(
                &mut pc.common,
                &format!("power-loss suite: {} crash states", run.powerloss_states),
            );
            let section = conformance::powerloss::cli::run_printing(&pc, false)?;
            powerloss =
                conformance::vocab::merge::Merge::merged(powerloss.into_iter().chain([section]));
        }
        if run.diskerr_states > 0 {
            let mut dc = DiskerrConfig::new(exe.clone(), run.diskerr_states);
            common(
                &mut dc.common,
                &format!("disk-error suite: {} states", run.diskerr_states),
            );
            let section = conformance::diskerr::cli::run_printing(&dc, false)?;
            diskerr =
                conformance::vocab::merge::Merge::merged(diskerr.into_iter().chain([section]));
        }
    }
    let mut report = Report {
        versions: out,
        faults,
        powerloss,
        diskerr,
        seed: Some(run.seed),
        ..Report::default()
    };
    let unbuilt: Vec<(&str, &str)> = mmkv_sys::unbuilt()
        .iter()
        .map(|u| (u.tag, u.reason))
        .collect();
    mark_unbuilt(&mut report, &unbuilt);
    report.count_exception_uses(conformance::judge::exceptions::take_uses());
    emit(&report, output, &live_lines)
}

/// Prints a report (JSON or text, the Markdown file, the web page, notes and failures, the
/// live-writer lines, the one summary line) and returns its exit status: 0 when it passed
/// (strict under `MMKV_REQUIRE_ALL=1`), 1 otherwise. With the JSON document on stdout, every
/// other line goes to stderr.
fn emit(report: &Report, output: &Output, live_lines: &[String]) -> conformance::Result<ExitCode> {
    match &output.json {
        JsonTo::Stdout => println!("{}", report.to_json()),
        JsonTo::File(file) => {
            std::fs::write(file, report.to_json() + "\n")
                .map_err(|e| conformance::Error::io(file, e))?;
            print!("{}", report.to_text());
            eprintln!("JSON report written to {}", file.display());
        }
        JsonTo::None => print!("{}", report.to_text()),
    }
    if let Some((dir, inputs)) = &output.html {
        let index = conformance::html::write_site(dir, report, inputs)?;
        eprintln!("web page written to {}", index.display());
    }
    let markdown = &output.markdown;
    if let Some(parent) = markdown.parent() {
        if !parent.as_os_str().is_empty() {
            std::fs::create_dir_all(parent).map_err(|e| conformance::Error::io(parent, e))?;
        }
    }
    std::fs::write(markdown, report.to_markdown())
        .map_err(|e| conformance::Error::io(markdown, e))?;
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
    for l in live_lines {
        output.say(l);
    }
    output.say(&report.summary_line());
    let strict = require_all();
    let unbuilt = report.tally().rows("unbuilt");
    if strict && unbuilt > 0 {
        eprintln!("{REQUIRE_ALL_VAR}=1: {unbuilt} unbuilt version(s) count as failures");
    }
    Ok(exit_status(report.passed(strict)))
}

/// `conformance hunt`: runs it, prints the summary table and writes the JSON document; exits 1
/// when it found a signature.
fn hunt(run: cli::HuntRun) -> conformance::Result<ExitCode> {
    // Temporary stores on tmpfs, as the report's (`report::scratch` says why verdicts keep).
    conformance::report::scratch::use_for_process();
    let real = RealReader::new();
    let reader: &dyn conformance::ReaderFactory = match &run.broken {
        Some(b) => b,
        None => &real,
    };
    let report = conformance::hunt::run::hunt(&run.config, reader)?;
    print!("{}", conformance::hunt::table(&report));
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| conformance::Error::Other(e.to_string()))?;
    if let Some(dir) = run.json.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| conformance::Error::io(dir, e))?;
    }
    std::fs::write(&run.json, json + "\n").map_err(|e| conformance::Error::io(&run.json, e))?;
    println!("wrote {}", run.json.display());
    Ok(exit_status(report.signatures.is_empty()))
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
        Command::Report(args) => {
            let output = args.output.clone();
            let request = args.validate()?;
            let output = output.validate()?;
            match request {
                ReportRequest::Merge(files) => emit(&merge_files(&files)?, &output, &[]),
                ReportRequest::Run(run) => report(run, &output),
            }
        }
        Command::Coverage(args) => conformance::coverage::main(args),
        Command::Merge { files, output } => emit(&merge_files(&files)?, &output.validate()?, &[]),
        Command::Record {
            tag,
            out,
            seed,
            keys,
            page_size,
        } => {
            if let Some(size) = page_size {
                mmkv_sys::set_page_size(size)
                    .map_err(|e| conformance::Error::Other(e.to_string()))?;
            }
            let lib = SysLib::load(&tag)?;
            let version = {
                let v = lib.official().version();
                if v.is_empty() {
                    tag.clone()
                } else {
                    v
                }
            };
            let spec = RecordSpec { seed, keys };
            let manifest = match page_size {
                Some(_) => record_page_corpus(&lib, &version, &out, &spec)?,
                None => record_corpus(&lib, &version, &out, &spec)?,
            };
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
        Command::Hunt(args) => hunt(args.validate()?),
        Command::Replay { path, broken } => {
            let repro = load_repro(&path)?;
            let mut libs = vec![SysLib::load(&repro.tag)?];
            for c in &repro.then {
                libs.push(SysLib::load(&c.tag)?);
            }
            let libs: Vec<&dyn OfficialLib> = libs.iter().map(|l| l as &dyn OfficialLib).collect();
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
            if let Some(t) = repro.clock {
                println!("on the test clock from second {t}, when the saved run began (the official AES IV is seeded from time())");
            }
            let real = RealReader::new();
            let reader: &dyn conformance::ReaderFactory = match &broken {
                Some(b) => b,
                None => &real,
            };
            if broken.is_some() {
                println!("with the {}", reader.name());
            }
            let outcome = run_repro(&libs, &repro, reader)?;
            if outcome.passed() {
                println!("pass: no reader failure (upstream divergences, if any, follow)");
            }
            if !outcome.passed() || !outcome.divergences.is_empty() {
                print!("{}", outcome.diff_text());
            }
            Ok(exit_status(outcome.passed()))
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
            Ok(exit_status(ok))
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
            let mut result = run_cell(
                &lib,
                &spec,
                spec.gen.unwrap_or_default(),
                &RealReader::new(),
                Some(&running),
                &heartbeat,
            );
            result.exceptions_used = conformance::judge::exceptions::take_uses();
            println!(
                "{RESULT_PREFIX}{}",
                serde_json::to_string(&result).unwrap_or_default()
            );
            Ok(exit_status(result.passed))
        }
        Command::Faults {
            command: FaultsCommand::Fault(command),
        } => Ok(conformance::fault::cli::main(command)),
        Command::Faults {
            command: FaultsCommand::Powerloss(args),
        } => Ok(conformance::powerloss::cli::main(args)),
        Command::Faults {
            command: FaultsCommand::Diskerr(args),
        } => Ok(conformance::diskerr::cli::main(args)),
        Command::Suite { command } => Ok(conformance::suite::cli::main(command)),
        Command::Exceptions => {
            print!("{}", conformance::judge::exceptions::markdown_table());
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
