//! Power-loss states (CI size): the official writer recorded call by call, crash states
//! (pages lost in any subset, torn pages, a pending size change) judged against the official
//! library in child processes. `POWERLOSS_STATES` sets the run's size (default 120;
//! `conformance report` and `conformance faults powerloss` judge 1,000).

use std::path::Path;

use conformance::fault::cli::states_from_env;
use conformance::judge::state::disagrees;
use conformance::powerloss::record::record;
use conformance::powerloss::suite::{
    judge_files, recording_states, replay, run_powerloss, PowerlossConfig,
};
use conformance::sides::reads::{open_store, read_reader, ReaderFn, ReaderOutcome, Reads};
use conformance::vocab::STORE_ID;
use conformance::writer::child::ChildExe;
use conformance::{Features, StoreKind};
use mmkv_sys::ErrorStrategy;

mod common;

use common::newest;

fn config(states: usize) -> PowerlossConfig {
    conformance::vocab::seed::announce();
    PowerlossConfig::new(
        ChildExe::conformance(env!("CARGO_BIN_EXE_conformance")),
        states,
    )
}

fn states() -> usize {
    states_from_env(conformance::powerloss::cli::STATES_VAR, 120)
}

#[test]
fn reader_agrees_with_official_on_power_loss_states() {
    if newest().is_none() {
        return;
    }
    let mut cfg = config(states());
    cfg.per_recording = 60;
    let s = run_powerloss(&cfg, |_| {}).unwrap();
    println!("{}", s.to_text());
    assert_eq!(s.states as usize, cfg.common.states);
    assert!(
        s.crc_ahead > 0 && s.data_ahead > 0 && s.torn > 0,
        "{}",
        s.to_text()
    );
    let agree_with_keys: u64 = s
        .verdicts
        .iter()
        .filter(|(k, _)| k.ends_with(" agree"))
        .map(|(_, n)| n)
        .sum();
    assert!(agree_with_keys > 0);
    // The official library reads these states: a crash, hang or failure is rare (0 in the
    // long runs), so many of them mean the harness failed to run it.
    assert!(
        s.upstream_states * 20 <= s.states,
        "{} of {} states without an official read:\n{}",
        s.upstream_states,
        s.states,
        s.to_text()
    );
    assert!(s.passed(), "{}", s.to_text());
}

/// Recordings and batches of states run in parallel, each recording with its own generator:
/// the result does not depend on the number of jobs (states, verdicts, region sources, and
/// the section's counts).
#[test]
fn the_result_does_not_depend_on_jobs() {
    if newest().is_none() {
        return;
    }
    let mut cfg = config(90);
    cfg.per_recording = 12;
    cfg.batch = 5;
    cfg.common.save = None;
    let mut runs = Vec::new();
    for jobs in [1, 2] {
        cfg.common.jobs = jobs;
        let mut judged = Vec::new();
        let s = run_powerloss(&cfg, |j| judged.push(j.clone())).unwrap();
        let order: Vec<usize> = judged.iter().map(|j| j.index).collect();
        assert_eq!(
            order,
            (0..cfg.common.states).collect::<Vec<_>>(),
            "jobs {jobs}"
        );
        runs.push((s, judged));
    }
    let ((one, a), (two, b)) = (&runs[0], &runs[1]);
    for (a, b) in a.iter().zip(b) {
        let what = format!("jobs 1: {}\njobs 2: {}", a.line(), b.line());
        assert_eq!(
            (&a.tag, a.kind, a.seed, &a.state),
            (&b.tag, b.kind, b.seed, &b.state),
            "{what}"
        );
        assert_eq!(
            (&a.verdicts, a.panicked, &a.sources),
            (&b.verdicts, b.panicked, &b.sources),
            "{what}"
        );
    }
    let (mut one, mut two) = (one.clone(), two.clone());
    (one.seconds, two.seconds) = (0.0, 0.0);
    assert_eq!(one, two);
    assert!(one.recordings > 1, "{}", one.to_text());
}

/// The generator reaches states no SIGKILL leaves: a `.crc` newer than the data pages it
/// describes (and data pages newer than the `.crc`), never a step's own files, and they are
/// judged like any other state.
#[test]
fn crash_states_reach_beyond_sigkill_and_are_judged() {
    let Some(tag) = newest() else { return };
    let cfg = config(1);
    let work = tempfile::tempdir().unwrap();
    let features = Features::from_tag(&tag).unwrap();
    let rec = record(
        &cfg.common.exe,
        &tag,
        &features,
        StoreKind::Plain,
        7,
        60,
        work.path(),
    )
    .unwrap();
    let mut rng = conformance::vocab::SplitMix::new(7);
    let states = recording_states(&rec, 24, usize::MAX, &mut rng);
    let steps: Vec<[Vec<u8>; 2]> = rec
        .steps
        .iter()
        .map(|s| [s.data.clone(), s.meta.clone()])
        .collect();
    let crc_ahead = states
        .iter()
        .find(|s| s.crc_ahead() && !steps.contains(&s.build(&rec)))
        .expect("a state whose .crc is newer than its data pages");
    let data_ahead = states
        .iter()
        .find(|s| s.data_ahead() && !steps.contains(&s.build(&rec)))
        .expect("a state whose data pages are newer than its .crc");
    for s in [crc_ahead, data_ahead] {
        let v = judge_files(&cfg, &tag, StoreKind::Plain, &s.build(&rec)).unwrap();
        assert_eq!(v.len(), 4, "discard and recover, store and dump: {v:?}");
        assert!(!disagrees(&v), "{s}: {v:?}");
    }
}

/// A reader that skips the official loader's last-confirmed fallback (discards instead).
fn skips_last_confirmed(
    dir: &Path,
    kind: StoreKind,
    f: &Features,
    s: ErrorStrategy,
    page: u64,
) -> ReaderOutcome {
    let store = open_store(dir, kind, s, page).map_err(|e| e.to_string())?;
    if store.snapshot().region_source() == mmkv_reader::RegionSource::LastConfirmed {
        return Ok(Reads::default());
    }
    read_reader(dir, kind, f, s, page)
}

/// A reader that trusts the data file's header over the meta's actual size (it reads the
/// header's size, checksummed as if the meta had said so).
fn trusts_header(
    dir: &Path,
    kind: StoreKind,
    f: &Features,
    s: ErrorStrategy,
    page: u64,
) -> ReaderOutcome {
    use mmkv_reader::meta::{OFF_ACTUAL_SIZE, OFF_CRC, OFF_VERSION, VERSION_ACTUAL_SIZE};
    let copy = tempfile::tempdir().map_err(|e| e.to_string())?;
    let data = std::fs::read(dir.join(STORE_ID)).map_err(|e| e.to_string())?;
    let mut meta =
        std::fs::read(mmkv_reader::meta_path(&dir.join(STORE_ID))).map_err(|e| e.to_string())?;
    let le = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .map(|h| u32::from_le_bytes(h.try_into().unwrap()))
    };
    if let (Some(header), Some(v)) = (le(&data, 0), le(&meta, OFF_VERSION)) {
        let end = 4 + header as usize;
        if v >= VERSION_ACTUAL_SIZE && end <= data.len() && meta.len() >= OFF_ACTUAL_SIZE + 4 {
            meta[OFF_ACTUAL_SIZE..OFF_ACTUAL_SIZE + 4].copy_from_slice(&header.to_le_bytes());
            let crc = crc32fast::hash(&data[4..end]);
            meta[OFF_CRC..OFF_CRC + 4].copy_from_slice(&crc.to_le_bytes());
        }
    }
    std::fs::write(copy.path().join(STORE_ID), &data).map_err(|e| e.to_string())?;
    std::fs::write(mmkv_reader::meta_path(&copy.path().join(STORE_ID)), &meta)
        .map_err(|e| e.to_string())?;
    read_reader(copy.path(), kind, f, s, page)
}

/// Runs `reader` on plaintext states of the newest version until a state disagrees; returns
/// the saved folder of the first.
fn caught(reader: ReaderFn, what: &str) -> Option<std::path::PathBuf> {
    let tag = newest()?;
    let save = tempfile::tempdir().unwrap().keep();
    let mut cfg = config(2000);
    cfg.stop_at_disagreement = true;
    cfg.common.tags = vec![tag];
    cfg.common.kinds = vec![StoreKind::Plain];
    cfg.common.reader = reader;
    cfg.common.save = Some(save.clone());
    cfg.shrink = 1;
    let s = run_powerloss(&cfg, |_| {}).unwrap();
    assert!(s.disagreeing > 0, "{what} went unnoticed:\n{}", s.to_text());
    let first = s.disagreements[0].clone();
    let folder = first
        .rsplit_once("(saved in ")
        .map(|(_, p)| std::path::PathBuf::from(p.trim_end_matches(')')))
        .unwrap_or_else(|| panic!("not saved: {first}"));
    // The saved state replays: the broken reader still disagrees, the real one does not.
    let again = replay(&cfg, &folder).unwrap();
    assert!(disagrees(&again));
    cfg.common.reader = read_reader;
    let fixed = replay(&cfg, &folder).unwrap();
    assert!(!disagrees(&fixed), "{fixed:?}");
    Some(folder)
}

/// Pages that reached the disk in the saved minimal state: `a@b` items of its description.
fn written_pages(folder: &Path) -> usize {
    let text = std::fs::read_to_string(folder.join("state.txt")).unwrap();
    println!("{}:\n{text}", folder.display());
    let line = text
        .lines()
        .find(|l| l.starts_with("minimal: "))
        .unwrap_or_else(|| panic!("no minimal state:\n{text}"));
    line.split_whitespace()
        .filter(|w| w.contains('@') && !w.starts_with("synced@"))
        .count()
}

/// `reader` is caught, and the saved state has at most 2 written pages.
fn caught_minimally(reader: ReaderFn, what: &str) {
    let Some(folder) = caught(reader, what) else {
        return;
    };
    let n = written_pages(&folder);
    assert!(
        n <= 2,
        "{n} pages in the minimal state ({})",
        folder.display()
    );
    std::fs::remove_dir_all(folder.parent().unwrap()).unwrap();
}

#[test]
fn a_reader_without_the_last_confirmed_fallback_is_caught_minimally() {
    caught_minimally(skips_last_confirmed, "skipping the last-confirmed fallback");
}

#[test]
fn a_reader_trusting_the_data_header_is_caught_minimally() {
    caught_minimally(trusts_header, "trusting the data header");
}
