//! The test clock (`conformance::vocab::test_clock`): expiring workloads move one clock shared by the
//! official library and the reader instead of sleeping, and that changes no verdict or count;
//! a reader whose clock is one second behind is still caught.
//!
//! Its own test binary: the clock is process-wide, so the tests here take turns (`LOCK`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use conformance::differential::failures::{load_repro, save_failure};
use conformance::differential::property::{
    check_property, check_property_with, PropConfig, PropOutcome,
};
use conformance::differential::runner::{run_repro, run_workload};
use conformance::differential::workload::{GenConfig, Op, Workload, SHORT_EXPIRE};
use conformance::judge::compare::Compared;
use conformance::judge::exceptions::Difference;
use conformance::report::cell::{run_cell, CellResult, CellSpec};
use conformance::sides::official::OfficialLib;
use conformance::sides::sys::{built_versions, SysLib};
use conformance::vocab::test_clock::{self, SharedClock};
use conformance::{RealReader, StoreKind, Value};
use mmkv_reader::Clock;
use mmkv_sys::versions::Tag;

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Workloads with many 1-second expiries (each one a wait), kept small (without the
/// file-changing calls, which the clocks do not concern).
fn expiring_gen() -> GenConfig {
    GenConfig {
        max_ops: 12,
        short_expire_weight: 30,
        file_api: false,
        ..GenConfig::default()
    }
}

/// Built versions with key expiration: the oldest and the newest (two eras at most).
fn expiring_versions() -> Vec<SysLib> {
    let libs: Vec<SysLib> = built_versions()
        .iter()
        .map(|t| SysLib::load(t).unwrap_or_else(|e| panic!("load {t}: {e}")))
        .filter(|l| l.features().key_expire)
        .collect();
    assert!(
        !libs.is_empty(),
        "the test clock needs a built version with key expiration (v1.3.0+); built: {:?}",
        built_versions()
    );
    let mut out = vec![libs[0].clone()];
    if libs.len() > 1 {
        out.push(libs[libs.len() - 1].clone());
    }
    out
}

/// What must not change between the clocks: the verdict and every count.
fn verdict(
    r: &CellResult,
) -> (
    bool,
    u64,
    conformance::differential::stats::RunStats,
    Vec<String>,
) {
    (r.passed, r.workloads, r.stats, r.failures.clone())
}

/// For a fixed set of workloads (seeded cells of every expiring kind, oldest and newest
/// expiring version), the verdicts and counts with the test clock equal those with real sleeps;
/// the test clock skipped the waits (it advanced, and took a fraction of the time).
#[test]
fn verdicts_and_counts_equal_those_with_real_sleeps() {
    let _g = lock();
    let reader = RealReader::new();
    let (mut real_time, mut test_time) = (Duration::ZERO, Duration::ZERO);
    let mut cells = 0;
    for lib in expiring_versions() {
        for kind in [
            StoreKind::Expire,
            StoreKind::ExpireAes128,
            StoreKind::ExpireAes256,
        ] {
            if !kind.supported_by(&lib.features()) {
                continue;
            }
            let spec = |real_clock| CellSpec {
                tag: lib.tag().to_string(),
                kind,
                cases: 3,
                seeds: vec![11],
                many_keys: 0,
                real_clock,
                gen: None,
            };
            let t = Instant::now();
            let real = run_cell(&lib, &spec(true), expiring_gen(), &reader, None, &|| {});
            real_time += t.elapsed();
            let advances = test_clock::advances();
            let t = Instant::now();
            let test = run_cell(&lib, &spec(false), expiring_gen(), &reader, None, &|| {});
            test_time += t.elapsed();
            assert!(
                test_clock::advances() > advances,
                "{} {kind}: the test clock never advanced (no short expiry in the fixed set?)",
                lib.tag()
            );
            assert_eq!(verdict(&test), verdict(&real), "{} {kind}", lib.tag());
            assert!(real.passed, "{} {kind}: {:?}", lib.tag(), real.failures);
            assert!(
                test_clock::now().is_none(),
                "run_cell left the test clock on"
            );
            cells += 1;
        }
    }
    assert!(cells > 0);
    eprintln!("{cells} cell(s): real clock {real_time:?}, test clock {test_time:?}");
}

/// 16 generated cases of seed 7; failures saved under `out` when `save_failures`.
fn seeded_config(
    gen: GenConfig,
    max_shrink_iters: u32,
    out: &std::path::Path,
    save_failures: bool,
) -> PropConfig {
    PropConfig {
        cases: 16,
        seed: Some(7),
        gen,
        max_shrink_iters,
        source_file: None,
        save_failures,
        failures_dir: out.to_path_buf(),
        running: None,
    }
}

/// The reader's clock one second behind the official one (an expiry bug: a key is still
/// visible in the second it expires).
struct OneSecondBehind;

impl Clock for OneSecondBehind {
    fn now_secs(&self) -> u32 {
        SharedClock.now_secs().saturating_sub(1)
    }
}

/// The injected bug is caught under the test clock, by a fixed workload and by the generated
/// ones (the test clock moved instead of the runs sleeping).
#[test]
fn a_reader_clock_one_second_behind_is_caught_under_the_test_clock() {
    let _g = lock();
    let reader = RealReader::with_clock(Arc::new(OneSecondBehind));
    let advances = test_clock::advances();
    for lib in expiring_versions() {
        let tag = lib.tag().to_string();
        test_clock::with(true, || {
            let workload = Workload::new(vec![Op::Set {
                key: "short".into(),
                value: Value::I32(7),
                expire: Some(SHORT_EXPIRE),
            }]);
            let outcome = run_workload(&lib, StoreKind::Expire, &workload, &reader).unwrap();
            assert!(!outcome.passed(), "{tag}: a clock one second behind passed");
            // The same workload with the reader on the shared clock passes.
            let ok = run_workload(&lib, StoreKind::Expire, &workload, &RealReader::new()).unwrap();
            assert!(ok.passed(), "{tag}: {}", ok.summary(4));

            let out = tempfile::tempdir().unwrap();
            let gen = GenConfig {
                max_ops: 4,
                short_expire_weight: 100,
                ..GenConfig::default()
            };
            let cfg = seeded_config(gen, 16, out.path(), false);
            match check_property(&lib, StoreKind::Expire, &reader, &cfg) {
                PropOutcome::Pass { .. } => panic!("{tag}: generated workloads missed the bug"),
                PropOutcome::Fail { minimal, .. } => assert!(
                    minimal.ops.iter().any(|op| matches!(
                        op,
                        Op::Set {
                            expire: Some(SHORT_EXPIRE),
                            ..
                        }
                    )),
                    "{tag}: expected a 1-second set: {:?}",
                    minimal.ops
                ),
            }
        });
    }
    // Every 1-second expiry above moved the test clock instead of sleeping.
    assert!(
        test_clock::advances() > advances,
        "the test clock never moved"
    );
    assert!(test_clock::now().is_none(), "the test clock was left on");
}

#[test]
fn expire_times_of_a_lost_store_follow_its_exception() {
    let _g = lock();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/upstream-1351-expire-after-file-loss.yaml");
    let repro = load_repro(&file).unwrap();
    assert!(repro.clock.is_some(), "the fixture records its second");
    let reader = RealReader::new();
    let bug = Tag::parse("v1.3.3").unwrap()..=Tag::parse("v1.3.7").unwrap();
    let (mut buggy, mut others) = (0, 0);
    for tag in built_versions() {
        let lib = SysLib::load(tag).unwrap_or_else(|e| panic!("load {tag}: {e}"));
        if !repro.kind.supported_by(&lib.features()) {
            continue;
        }
        let outcome = run_repro(&[&lib], &repro, &reader).unwrap_or_else(|e| panic!("{tag}: {e}"));
        assert!(outcome.passed(), "{tag}: {}", outcome.summary(4));
        assert_eq!(
            test_clock::now(),
            None,
            "{tag}: the replay left the test clock on"
        );
        let saved = tempfile::tempdir().unwrap();
        let dir = save_failure(saved.path(), &repro, &outcome).unwrap();
        assert_eq!(
            load_repro(&dir).unwrap().clock,
            repro.clock,
            "{tag}: the saved second"
        );
        if bug.contains(&Tag::parse(tag).unwrap()) {
            assert!(
                outcome.official_lost_files(),
                "{tag}: the files stayed good"
            );
            assert!(
                outcome
                    .divergences
                    .iter()
                    .any(|d| d.mismatch.what == Compared::ExpireVsWriter),
                "{tag}: no expire time differed from the writer's: {}",
                outcome.summary(4)
            );
            buggy += 1;
        } else {
            assert!(!outcome.official_lost_files(), "{tag}: lost its files");
            // The only accepted difference left is the read-only side's (v2.3.0+ reads a
            // store with key expiration without it), which this fixture does not concern.
            assert!(
                outcome
                    .divergences
                    .iter()
                    .all(|d| d.exception.difference == Difference::ReadOnlyWithoutExpiry),
                "{tag}: {}",
                outcome.diff_text()
            );
            others += 1;
        }
    }
    eprintln!("{buggy} version(s) with Tencent/MMKV#1351, {others} without");
    assert!(
        buggy + others > 0,
        "no built version has encrypted key expiration"
    );
}

/// The second at which [`AheadAtOneSecond`] reads wrong.
const BAD_SECOND: u32 = 1_796_460_001;

/// The reader's clock twenty years ahead at [`BAD_SECOND`]: every key with an expire time reads
/// as expired then, and only then.
struct AheadAtOneSecond;

impl Clock for AheadAtOneSecond {
    fn now_secs(&self) -> u32 {
        match SharedClock.now_secs() {
            BAD_SECOND => BAD_SECOND + 20 * 365 * 24 * 3600,
            t => t,
        }
    }
}

/// A failure that happens only at one second is saved with that second, and its folder
/// replays as that failure. Every case begins a second after the one before (the heartbeat
/// moves the test clock): the first case fails, its shrinking never fails again, and the
/// clock has moved on when the minimal case is saved.
#[test]
fn a_failure_is_saved_from_the_second_it_failed_at() {
    let _g = lock();
    let lib = expiring_versions().remove(0);
    let reader = RealReader::with_clock(Arc::new(AheadAtOneSecond));
    let out = tempfile::tempdir().unwrap();
    let gen = GenConfig {
        max_ops: 8,
        short_expire_weight: 0,
        ..GenConfig::default()
    };
    let cfg = seeded_config(gen, 64, out.path(), true);
    // The heartbeat comes before each case: the first one runs at `BAD_SECOND`.
    let _clock = test_clock::Scoped::at(BAD_SECOND - 1);
    let next_second = || {
        test_clock::advance_to(test_clock::now().map_or(0, |t| u64::from(t) + 1));
    };
    let saved = match check_property_with(&lib, StoreKind::Expire, &reader, &cfg, &next_second) {
        PropOutcome::Pass { .. } => panic!("{}: the one-second bug was missed", lib.tag()),
        PropOutcome::Fail { saved, .. } => saved.expect("a saved failure folder"),
    };
    let repro = load_repro(&saved).unwrap();
    assert_eq!(repro.clock, Some(BAD_SECOND), "the saved second");
    let moved_on = test_clock::now().unwrap();
    assert!(moved_on > BAD_SECOND);
    let replay = run_repro(&[&lib], &repro, &reader).unwrap();
    assert!(!replay.passed(), "the saved folder replays as a pass");
    assert_eq!(
        test_clock::now(),
        Some(moved_on),
        "the replay moved the clock"
    );
}
