//! Differential under faults (CI size): seeded writers killed with SIGKILL, truncated and
//! bit-flipped stores, every state reopened by the official library of every built version
//! with each error strategy (in child processes) and compared with the reader.
//! `FAULT_STATES` sets the number of states (default 160; `conformance report` and
//! `conformance faults run` judge 1,000).

use std::path::Path;

use conformance::fault::cli::{states_from_env, STATES_VAR};
use conformance::fault::section::FaultSection;
use conformance::fault::suite::{judge_state, run_suite, SuiteConfig, Target};
use conformance::judge::exceptions::{Difference, TABLE};
use conformance::judge::state::{Verdict, Verdicts};
use conformance::sides::reads::{open_store, read_dump, read_reader, ReaderOutcome, ReaderPath};
use conformance::vocab::STORE_ID;
use conformance::writer::child::ChildExe;
use conformance::writer::Kill;
use conformance::{Features, StoreKind};
use mmkv_sys::versions::Tag;
use mmkv_sys::ErrorStrategy;

fn config(states: usize) -> Option<SuiteConfig> {
    conformance::vocab::seed::announce();
    if mmkv_sys::built_versions().is_empty() {
        eprintln!("no official version built (MMKV_VERSIONS=none): nothing to compare against");
        return None;
    }
    Some(SuiteConfig::new(
        ChildExe::conformance(env!("CARGO_BIN_EXE_conformance")),
        states,
    ))
}

fn states() -> usize {
    states_from_env(STATES_VAR, 160)
}

#[test]
fn reader_agrees_with_official_on_damaged_states() {
    let Some(cfg) = config(states()) else { return };
    let summary = run_suite(&cfg, |_| {}).unwrap();
    let section = FaultSection::of(&summary, cfg.common.seed);
    println!("{}", section.to_text());
    assert_eq!(
        summary.states(),
        cfg.common.states,
        "the suite judged every state"
    );
    assert!(summary.killed_runs > 0, "some writers were killed");
    // The comparison saw real data: most states are read with keys by both sides.
    let agree_with_keys = summary
        .records
        .iter()
        .filter(|r| matches!(r.reader, Ok(n) if n > 0))
        .filter(|r| r.verdicts[0].2 == Verdict::Agree)
        .count();
    assert!(
        agree_with_keys * 4 >= summary.states(),
        "{agree_with_keys} states with keys agreed"
    );
    let bad = summary.disagreements();
    assert!(
        bad.is_empty(),
        "{} disagreeing states:\n{}",
        bad.len(),
        section.to_text()
    );
}

/// The writer runs and their states run in parallel, each writer run with its own generator:
/// the result does not depend on the number of jobs. Every state's version, kind, writer
/// seed and kill point are compared; its damage, reader outcome and verdicts too, except
/// where the files themselves differ from run to run: a writer killed a few microseconds
/// into an op (`Kill::During`) leaves what the timing leaves (and the damage is sized from
/// the files), and an encrypted store's IV is the official library's random choice (a
/// flipped IV bit garbles different plaintext).
#[test]
fn the_result_does_not_depend_on_jobs() {
    let Some(mut cfg) = config(72) else { return };
    cfg.common.save = None;
    let mut runs = Vec::new();
    for jobs in [1, 2] {
        cfg.common.jobs = jobs;
        let mut order = Vec::new();
        let s = run_suite(&cfg, |r| order.push(r.index)).unwrap();
        assert_eq!(
            order,
            (0..cfg.common.states).collect::<Vec<_>>(),
            "jobs {jobs}"
        );
        runs.push(s);
    }
    let (one, two) = (&runs[0], &runs[1]);
    assert_eq!(one.states(), two.states());
    assert_eq!(one.writer_runs, two.writer_runs);
    assert_eq!(one.killed_runs, two.killed_runs);
    let (mut timed, mut compared) = (0, 0);
    for (a, b) in one.records.iter().zip(&two.records) {
        let what = format!("jobs 1: {}\njobs 2: {}", a.line(), b.line());
        assert_eq!(
            (a.index, &a.tag, a.kind, a.writer_seed, a.kill),
            (b.index, &b.tag, b.kind, b.writer_seed, b.kill),
            "{what}"
        );
        if matches!(a.kill, Kill::During(..)) {
            timed += 1;
            continue;
        }
        assert_eq!(a.damage, b.damage, "{what}");
        if a.kind.crypt_key().is_some() {
            continue;
        }
        compared += 1;
        // Errors name checksums of bytes that differ between runs (the stores' expire times
        // and IVs come from the clock and the official library's randomness) and paths in each
        // run's own work directory: their class, paths left out.
        let class = |r: &Result<usize, String>| {
            r.as_ref()
                .map_err(|e| {
                    let head = e.split(':').next().unwrap_or("");
                    head.split_whitespace()
                        .map(|w| if w.contains('/') { "<path>" } else { w })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .copied()
        };
        assert_eq!(class(&a.reader), class(&b.reader), "{what}");
        assert_eq!(a.verdicts, b.verdicts, "{what}");
    }
    assert!(
        timed < one.states() && compared > 0,
        "{timed} states from timed kills, {compared} compared in full"
    );
}

/// A reader that ignores the official loader's last-confirmed fallback (refuses every store
/// whose current CRC fails) must be caught on killed-writer states.
fn no_fallback(
    dir: &Path,
    kind: StoreKind,
    f: &Features,
    s: ErrorStrategy,
    page: u64,
) -> ReaderOutcome {
    let store = open_store(dir, kind, s, page).map_err(|e| e.to_string())?;
    if store.snapshot().region_source() != mmkv_reader::RegionSource::Actual {
        return Err("refused: no fallback".into());
    }
    read_reader(dir, kind, f, s, page)
}

/// A reader that drops one key of every non-empty store.
fn drops_a_key(
    dir: &Path,
    kind: StoreKind,
    f: &Features,
    s: ErrorStrategy,
    page: u64,
) -> ReaderOutcome {
    let mut r = read_reader(dir, kind, f, s, page)?;
    if let Some(k) = r.keys.keys().next().cloned() {
        r.keys.remove(&k);
    }
    Ok(r)
}

#[test]
fn broken_readers_are_caught() {
    let Some(mut cfg) = config(48) else { return };
    cfg.common.save = None;
    cfg.common.reader = drops_a_key;
    let s = run_suite(&cfg, |_| {}).unwrap();
    assert!(
        !s.disagreements().is_empty(),
        "a dropped key went unnoticed"
    );

    // Last-confirmed fallbacks happen when a writer dies between its data write and its meta
    // update, or when the meta CRC is flipped: search a few seeds for one.
    let Some(mut cfg) = config(200) else { return };
    cfg.common.save = None;
    cfg.common.reader = no_fallback;
    let s = run_suite(&cfg, |_| {}).unwrap();
    let fallbacks = s.records.iter().filter(|r| r.disagrees()).count();
    assert!(
        fallbacks > 0,
        "a reader without the last-confirmed fallback went unnoticed:\n{}",
        FaultSection::of(&s, 1).to_text()
    );
}

/// The differential fuzz target's findings (`fuzz/regressions/differential/`, inputs
/// `[mode][meta len u16 LE][meta][data]` on which official v2.4.2 and the reader differed):
/// each file is named after the exceptions-table entry that explains it, and must still be
/// judged exactly so (never a disagreement), official reads in a child process.
#[test]
fn differential_fuzz_findings_stay_explained() {
    let tag = "v2.4.2";
    if !mmkv_sys::built_versions().contains(&tag) {
        eprintln!("official {tag} not built: the fuzz findings cannot be replayed");
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/differential");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no input in {}", dir.display());
    let exe = ChildExe::conformance(env!("CARGO_BIN_EXE_conformance"));
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let expected = TABLE
            .iter()
            .map(|e| e.difference)
            .find(|d| name.starts_with(d.code()))
            .unwrap_or_else(|| panic!("{name}: not named after an exception code"));
        let input = std::fs::read(f).unwrap();
        let kind = [StoreKind::Plain, StoreKind::Aes128, StoreKind::Aes256][input[0] as usize % 3];
        let meta_len = usize::from(u16::from_le_bytes([input[1], input[2]]));
        let (meta, data) = input[3..].split_at(meta_len.min(input.len() - 3));
        let work = tempfile::tempdir().unwrap();
        let state = work.path().join("state");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(state.join(STORE_ID), data).unwrap();
        std::fs::write(state.join(format!("{STORE_ID}.crc")), meta).unwrap();
        let verdicts = judged_agreeing(&exe, tag, kind, &state, work.path(), &name);
        assert!(
            verdicts
                .iter()
                .any(|(_, _, v)| *v == Verdict::Exception(expected)),
            "{name}: expected exception {} among {verdicts:?}",
            expected.code()
        );
    }
}

/// A fault-suite state (v1.3.9, expire-aes128: a bit of the IV flipped, the data file
/// truncated) whose first block decrypts to two records with 2-byte values, shorter than the
/// expire suffix. Every built version with the kind reads it: v1.3.0–v2.0.1 take the expire
/// time of such a value from the bytes before it and drop the keys, which the exceptions table
/// accepts (`short-expire-value`); v2.0.2+ keep them, as the reader does, and agree.
#[test]
fn short_expire_values_stay_explained() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/faults/short-expire-value");
    let exe = ChildExe::conformance(env!("CARGO_BIN_EXE_conformance"));
    let fixed = Tag::parse("v2.0.2").unwrap();
    // Built versions with key expiration before the fix, and their verdicts that show the row.
    let (mut judged, mut older, mut explained) = (0, 0, 0);
    for tag in mmkv_sys::built_versions() {
        let target = Target::load(tag, StoreKind::ExpireAes128).unwrap();
        if !target.kind.supported_by(&target.features) {
            continue;
        }
        let work = tempfile::tempdir().unwrap();
        let state = work.path().join("state");
        std::fs::create_dir_all(&state).unwrap();
        for f in [STORE_ID.to_string(), format!("{STORE_ID}.crc")] {
            std::fs::copy(fixture.join(&f), state.join(&f)).unwrap();
        }
        let verdicts = judge_state(&exe, &target, read_reader, &state, work.path()).unwrap();
        let before_fix = Tag::parse(tag).unwrap() < fixed;
        judged += 1;
        older += usize::from(before_fix);
        for (s, p, v) in &verdicts {
            if before_fix {
                assert!(
                    !matches!(v, Verdict::Disagree(_)),
                    "{tag} {s:?}/{}: {v}",
                    p.name()
                );
                explained += usize::from(*v == Verdict::Exception(Difference::ShortExpireValue));
            } else {
                assert_eq!(*v, Verdict::Agree, "{tag} {s:?}/{}", p.name());
            }
        }
    }
    if judged == 0 {
        eprintln!("no built version has key expiration: the state cannot be judged");
    }
    assert!(
        older == 0 || explained > 0,
        "{older} built versions before v2.0.2 with key expiration, none judged short-expire-value"
    );
}

/// The verdicts on the state in `state` as official `tag` reads it as `kind` (scratch files
/// under `scratch`); fails on any disagreement, naming `name`.
fn judged_agreeing(
    exe: &ChildExe,
    tag: &str,
    kind: StoreKind,
    state: &Path,
    scratch: &Path,
    name: &str,
) -> Verdicts {
    judged_with(exe, &Target::load(tag, kind).unwrap(), state, scratch, name)
}

/// [`judged_agreeing`] for a loaded target.
fn judged_with(
    exe: &ChildExe,
    target: &Target,
    state: &Path,
    scratch: &Path,
    name: &str,
) -> Verdicts {
    let verdicts = judge_state(exe, target, read_reader, state, scratch).unwrap();
    for (s, p, v) in &verdicts {
        assert!(
            !matches!(v, Verdict::Disagree(_)),
            "{name}: {s:?}/{}: {v}",
            p.name()
        );
    }
    verdicts
}

/// Fault-suite states in which differences of two rows meet (`tests/fixtures/faults/<name>/`,
/// written by the named version): a flipped meta flag turned key expiration on in AES-128 stores
/// written without it, so 1-3-byte values read as shorter than the expire suffix
/// (`short-expire-value`) and a 4-byte value as only the suffix (`empty-payload-key`); and a
/// removed meta file that the official library reads zero-filled (`zero-fill`), where the
/// zero IV shows an overlong key (`crypt-overlong-length`). Each is judged with its version:
/// never a disagreement, and the verdict names the rows.
#[test]
fn states_of_several_rows_stay_explained() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/faults");
    let exe = ChildExe::conformance(env!("CARGO_BIN_EXE_conformance"));
    let cases = [
        (
            "expire-flag-short-and-empty-v1.3.9",
            "v1.3.9",
            StoreKind::Aes128,
            "exception:empty-payload-key+short-expire-value",
        ),
        (
            "expire-flag-short-and-empty-v1.3.11",
            "v1.3.11",
            StoreKind::Aes128,
            "exception:empty-payload-key+short-expire-value",
        ),
        (
            "expire-flag-short-v2.0.1",
            "v2.0.1",
            StoreKind::Aes128,
            "exception:short-expire-value",
        ),
        (
            "missing-meta-overlong-v1.2.13",
            "v1.2.13",
            StoreKind::Aes128LongKey,
            "exception:zero-fill+crypt-overlong-length",
        ),
    ];
    let mut judged = 0;
    for (name, tag, kind, expected) in cases {
        if !mmkv_sys::built_versions().contains(&tag) {
            eprintln!("{name}: official {tag} not built");
            continue;
        }
        let work = tempfile::tempdir().unwrap();
        let state = work.path().join("state");
        std::fs::create_dir_all(&state).unwrap();
        for entry in std::fs::read_dir(fixtures.join(name)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), state.join(entry.file_name())).unwrap();
        }
        let verdicts = judged_agreeing(&exe, tag, kind, &state, work.path(), name);
        assert!(
            verdicts.iter().any(|(_, _, v)| v.label() == expected),
            "{name}: expected {expected} among {verdicts:?}"
        );
        judged += 1;
    }
    eprintln!("{judged} of {} states judged", cases.len());
}

/// A state the fault suite found at 16 KiB pages (`tests/fixtures/faults/page-16k-cut-at-4k-v1.2.4`:
/// v1.2.4 plaintext, the writer killed, the data file cut to 4 KiB, the meta removed). The
/// official loader on 16 KiB pages reads the file as one zero-filled 16 KiB page, so the size
/// in its header (past 4 KiB) holds. `mmkv dump` at 4 KiB pages reads other values; at the
/// writer's page it reads what the official library reads.
#[test]
fn a_reader_fixed_at_4k_pages_is_caught_on_a_16k_state() {
    let (name, tag) = ("page-16k-cut-at-4k-v1.2.4", "v1.2.4");
    if !mmkv_sys::built_versions().contains(&tag) {
        eprintln!("{name}: official {tag} not built");
        return;
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/faults")
        .join(name);
    let exe = ChildExe::conformance(env!("CARGO_BIN_EXE_conformance")).with_page_size(16384);
    let target = Target::load(tag, StoreKind::Plain).unwrap();
    let work = tempfile::tempdir().unwrap();
    let state = work.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::copy(fixture.join(STORE_ID), state.join(STORE_ID)).unwrap();
    // The judge reads at the writer's page: every path agrees or is explained.
    let verdicts = judged_with(&exe, &target, &state, work.path(), name);
    let dump = |page| {
        read_dump(
            &state,
            target.kind,
            &target.features,
            ErrorStrategy::Recover,
            page,
        )
    };
    assert!(
        verdicts.contains(&(ErrorStrategy::Recover, ReaderPath::Dump, Verdict::Agree)),
        "{verdicts:?}"
    );
    // Fixed at 4 KiB pages, the same path reads something else: it disagrees.
    let (at_4k, at_16k) = (dump(4096).unwrap(), dump(16384).unwrap());
    assert!(!at_16k.keys.is_empty());
    assert_ne!(at_4k, at_16k, "the page size changed nothing in {name}");
}

/// The fault suite with the official library on 16 KiB pages (cuts aimed at its 4 KiB
/// boundaries inside them) judges the reader at the same page: no disagreement.
#[test]
fn reader_agrees_with_official_at_16k_pages() {
    let Some(mut cfg) = config(states()) else {
        return;
    };
    cfg.common.exe = cfg.common.exe.with_page_size(16384);
    let s = run_suite(&cfg, |_| {}).unwrap();
    let section = FaultSection::of(&s, cfg.common.seed);
    println!("{}", section.to_text());
    assert_eq!(
        s.states(),
        cfg.common.states,
        "the suite judged every state"
    );
    assert!(s.disagreements().is_empty(), "{:?}", s.disagreements());
}
