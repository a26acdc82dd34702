//! The harness catches a broken reader: deliberately wrong reader adapters are injected into
//! the same property runs and golden checks, which must fail, shrink to a minimal workload and
//! save a repro folder.
//!
//! Breakages (the reader crate itself is not modified; the broken readers are
//! `conformance::sides::broken`, which `conformance hunt --break NAME` uses too):
//! - `Bug::I32ViaU32`: `getInt32` decoded as an unsigned 32-bit varint and range-checked into i32
//!   (negative values are lost);
//! - `IgnoreExpiry`: a clock stuck at 1 s after the epoch, so expired keys stay visible
//!   (checked with already-expired keys from wrapped durations, which needs a built version
//!   without `saturating_expire`, and with a 1-second duration that the official library
//!   sees pass);
//! - `ClockFarAhead`: a clock at `u32::MAX`, so every key with an expire time is gone;
//! - `Bug::VecBoolDropsLast`: `get_vec_bool` loses the last element (caught only because the
//!   workloads write `std::vector<bool>` and the comparison reads it);
//! - `Bug::KeysAsCStrings`: keys handled as C strings of UTF-8 (cut at the first NUL, invalid bytes
//!   replaced), so byte keys are lost (caught by the NUL and non-UTF-8 keys of the key pool);
//! - `Bug::Stale(Stale::EncryptedAppend)`: a reader whose CFB continuation is broken, emulated by what it
//!   amounts to: in an encrypted store a partial (append-only) reload fails and the previous
//!   snapshot keeps serving until the next full reload (caught only by the long-lived reader);
//! - `Bug::Stale(Stale::ExpireFlag)`: a long-lived reader that cannot follow `enableAutoKeyExpire` /
//!   `disableAutoKeyExpire` on a populated store (its reload fails once the meta's key-expire
//!   flag differs from the one it opened with);
//! - `Bug::Stale(Stale::MetaUpgrade)`: a long-lived reader that cannot follow a version migration (its
//!   reload fails once the meta version differs from the one it opened with, as when a v1.2
//!   file is continued by v1.3+); not caught by single-version workloads, caught by migration.
//! - `FormBug`: one form of a reader result wrong while every other form is right: `Store::len`
//!   off by one, `Store::keys` / `iter` losing their last key, `Store::contains` never true,
//!   `Store::expire_at` / `entries` reporting "never", the snapshot's `raw_value` one byte
//!   long, `get_bytes_vec` losing its last item or reading items as lossy UTF-8 (caught only
//!   because the workloads write string vectors with non-UTF-8 items).
//!
//! Every test runs on the test clock (`conformance::vocab::test_clock`): the official library
//! and the real reader read one clock, and a workload that waits for an expiry or the next
//! second moves it instead of sleeping. The injected clocks (`FixedClock`) stay fixed, so the
//! expiry breakages are exactly as wrong as on the real clock. The real clock is covered by
//! the report's real-clock cells and mmkv-sys's own tests.

use std::path::Path;
use std::sync::Arc;

use conformance::corpus::golden::{check_corpus_dir, corpus_root};
use conformance::differential::failures::load_repro;
use conformance::differential::property::{
    check_migration, check_property, PropConfig, PropOutcome,
};
use conformance::differential::runner::run_workload;
use conformance::differential::workload::{
    GenConfig, Op, Repro, Workload, PAST_EXPIRE, SHORT_EXPIRE,
};
use conformance::sides::broken::{c_string, Broken, Bug, FormBug, Stale};
use conformance::sides::official::OfficialLib;
use conformance::sides::sys::{built_versions, SysLib};
use conformance::{Features, ReaderFactory, RealReader, StoreKind, Value};
use mmkv_reader::FixedClock;

/// The oldest built version whose `u32` expire sums wrap (key expiration without
/// `saturating_expire`), so that [`PAST_EXPIRE`] is already expired when it is set. When none
/// is built, fails naming the versions that would do and what `MMKV_VERSIONS` was.
fn oldest_wrapping_expire() -> SysLib {
    let wraps = |f: &Features| StoreKind::Expire.supported_by(f) && !f.saturating_expire;
    if let Some(lib) = built_versions()
        .iter()
        .filter_map(|t| SysLib::load(t).ok())
        .find(|l| wraps(&l.features()))
    {
        return lib;
    }
    // The versions.yaml entries that would do, as runs of consecutive entries.
    let mut runs: Vec<(String, String)> = Vec::new();
    let mut previous_wraps = false;
    for e in &mmkv_sys::versions::embedded().versions {
        let w = wraps(&Features::from_set(e.features));
        match runs.last_mut() {
            Some(run) if w && previous_wraps => run.1 = e.tag.to_string(),
            _ if w => runs.push((e.tag.to_string(), e.tag.to_string())),
            _ => {}
        }
        previous_wraps = w;
    }
    let needed: Vec<String> = runs
        .iter()
        .map(|(a, b)| {
            if a == b {
                a.clone()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    panic!(
        "already-expired keys need a built version with key_expire whose expire sums wrap \
         (no saturating_expire): one of {}; built: [{}] (MMKV_VERSIONS={}). Add one to \
         MMKV_VERSIONS, e.g. {}",
        needed.join(", "),
        built_versions().join(", "),
        std::env::var("MMKV_VERSIONS").unwrap_or_else(|_| "unset, i.e. all".to_string()),
        runs.last().map_or("none listed", |r| r.1.as_str()),
    );
}

/// The oldest built version with `kind`.
fn oldest_with(kind: StoreKind) -> SysLib {
    let tag = built_versions()
        .iter()
        .find(|t| {
            SysLib::load(t)
                .map(|l| kind.supported_by(&l.features()))
                .unwrap_or(false)
        })
        .unwrap_or_else(|| panic!("no built version supports {kind}"));
    SysLib::load(tag).expect("load")
}

fn newest_with(kind: StoreKind) -> SysLib {
    let tag = built_versions()
        .iter()
        .rev()
        .find(|t| {
            SysLib::load(t)
                .map(|l| kind.supported_by(&l.features()))
                .unwrap_or(false)
        })
        .unwrap_or_else(|| panic!("no built version supports {kind}"));
    SysLib::load(tag).expect("load")
}

/// Runs the property with a broken reader; returns the minimal workload after checking that
/// the failure was saved with everything a repro needs.
fn expect_failure(
    lib: &SysLib,
    kind: StoreKind,
    reader: &dyn ReaderFactory,
    gen: GenConfig,
    cases: u32,
    max_shrink_iters: u32,
) -> Workload {
    expect_failure_in(&[lib], kind, reader, gen, cases, max_shrink_iters).workload
}

fn prop_config(cases: u32, gen: GenConfig, max_shrink_iters: u32, dir: &Path) -> PropConfig {
    PropConfig {
        cases,
        seed: Some(7),
        gen,
        max_shrink_iters,
        source_file: None,
        save_failures: true,
        failures_dir: dir.to_path_buf(),
        running: None,
    }
}

/// [`expect_failure`] for a run through several versions in turn (version migration when
/// more than one); returns the minimal repro, continuations included.
fn expect_failure_in(
    libs: &[&SysLib],
    kind: StoreKind,
    reader: &dyn ReaderFactory,
    gen: GenConfig,
    cases: u32,
    max_shrink_iters: u32,
) -> Repro {
    conformance::vocab::test_clock::start();
    let out = tempfile::tempdir().expect("tempdir");
    let cfg = prop_config(cases, gen, max_shrink_iters, out.path());
    let dyn_libs: Vec<&dyn OfficialLib> = libs.iter().map(|l| *l as &dyn OfficialLib).collect();
    let tags: Vec<&str> = libs.iter().map(|l| l.tag()).collect();
    match check_migration(&dyn_libs, kind, reader, &cfg) {
        PropOutcome::Pass { .. } => panic!("{} was not caught on {tags:?}", reader.name()),
        PropOutcome::Fail {
            minimal,
            message,
            saved,
            repro_line,
        } => {
            eprintln!(
                "{}: caught; minimal workload ({} ops): {:?}\n  {message}\n  {repro_line}",
                reader.name(),
                minimal.ops.len(),
                minimal.ops
            );
            let saved = saved.expect("failure folder saved");
            assert!(repro_line.contains("replay"), "{repro_line}");
            assert!(repro_line.contains(&saved.display().to_string()));
            for f in [
                "workload.yaml",
                "diff.txt",
                kind.id(),
                &format!("{}.crc", kind.id()),
            ] {
                assert!(
                    saved.join(f).is_file(),
                    "{f} missing in {}",
                    saved.display()
                );
            }
            let repro = load_repro(&saved).expect("saved workload parses");
            assert_eq!(repro.workload, minimal);
            assert_eq!(repro.kind, kind);
            let diff = std::fs::read_to_string(saved.join("diff.txt")).unwrap();
            assert!(!diff.trim().is_empty(), "diff.txt is empty");
            eprintln!("  continuations: {:?}", repro.then);
            repro
        }
    }
}

fn sets(ops: &[Op]) -> Vec<&Op> {
    ops.iter()
        .filter(|op| matches!(op, Op::Set { .. }))
        .collect()
}

#[test]
fn i32_decoded_as_u32_is_caught_and_shrunk() {
    let lib = newest_with(StoreKind::Plain);
    let ops = expect_failure(
        &lib,
        StoreKind::Plain,
        &I32_VIA_U32,
        GenConfig {
            max_ops: 12,
            ..GenConfig::default()
        },
        64,
        256,
    )
    .ops;
    // Minimal: one set whose payload reads as a negative i32 (any type may produce it).
    assert_eq!(ops.len(), 1, "not minimal: {ops:?}");
    assert_eq!(sets(&ops).len(), 1);
}

#[test]
fn clock_far_ahead_is_caught_and_shrunk() {
    let lib = newest_with(StoreKind::Expire);
    let reader = RealReader::with_clock(Arc::new(FixedClock(u32::MAX)));
    // Expiry alone: the file-changing calls only lengthen the shrink.
    let gen = GenConfig {
        max_ops: 12,
        short_expire_weight: 0,
        file_api: false,
        ..GenConfig::default()
    };
    let w = expect_failure(&lib, StoreKind::Expire, &reader, gen, 64, 256);
    assert_eq!(w.ops.len(), 1, "not minimal: {w:?}");
    assert!(
        matches!(w.ops[0], Op::Set { expire, .. } if expire.unwrap_or(w.default_expire) > 0),
        "expected one expiring set: {w:?}"
    );
}

#[test]
fn ignoring_expiry_is_caught_and_shrunk() {
    // Already-expired keys without sleeping: durations that wrap around to the past.
    let lib = oldest_wrapping_expire();
    let reader = RealReader::with_clock(Arc::new(FixedClock(1)));
    let gen = GenConfig {
        max_ops: 12,
        short_expire_weight: 0,
        past_expire_weight: 30,
        big_value_weight: 0,
        file_api: false,
        name_space: false,
    };
    let ops = expect_failure(&lib, StoreKind::Expire, &reader, gen, 64, 256).ops;
    // Shrunk to one already-expired set, or (v1.3.0-v1.3.2 with seed 7, seen with all 50
    // built) to a local minimum of four ops around one: an already-expired set, another op,
    // enabling expiry again, another set.
    assert!(ops.len() <= 4, "not shrunk: {ops:?}");
    assert!(
        ops.iter().any(|op| matches!(
            op,
            Op::Set {
                expire: Some(PAST_EXPIRE),
                ..
            }
        )),
        "expected an already-expired set: {ops:?}"
    );
}

#[test]
fn ignoring_expiry_is_caught_with_a_one_second_expiry() {
    // The same breakage through a 1-second duration: each such case waits until it has
    // passed (on the test clock, which the fixed reader clock does not follow), so workloads
    // are tiny and shrinking is bounded.
    let lib = newest_with(StoreKind::Expire);
    let reader = RealReader::with_clock(Arc::new(FixedClock(1)));
    let gen = GenConfig {
        max_ops: 2,
        short_expire_weight: 100,
        past_expire_weight: 0,
        big_value_weight: 0,
        file_api: false,
        name_space: false,
    };
    let ops = expect_failure(&lib, StoreKind::Expire, &reader, gen, 8, 12).ops;
    assert!(ops.len() <= 2, "not minimal: {ops:?}");
    assert!(
        ops.iter().any(|op| matches!(
            op,
            Op::Set {
                expire: Some(SHORT_EXPIRE),
                ..
            }
        )),
        "expected a 1-second set: {ops:?}"
    );
}

#[test]
fn golden_check_catches_i32_via_u32() {
    // v2.0.0's corpus has negative i32 values in several stores.
    let check =
        check_corpus_dir(&corpus_root().join("v2.0.0"), &I32_VIA_U32).expect("corpus loads");
    assert!(!check.passed(), "broken reader passed the golden corpus");
    let good = check_corpus_dir(&corpus_root().join("v2.0.0"), &RealReader::new()).unwrap();
    assert!(good.passed());
}

const I32_VIA_U32: Broken = Broken {
    name: "i32 via u32",
    bug: Bug::I32ViaU32,
};

fn small(max_ops: usize) -> GenConfig {
    // Name spaces draw one more value per case, which moves later cases (and their shrinks).
    GenConfig {
        max_ops,
        short_expire_weight: 0,
        name_space: false,
        ..GenConfig::default()
    }
}

#[test]
fn vec_bool_dropping_its_last_element_is_caught() {
    let lib = newest_with(StoreKind::Plain);
    assert!(
        lib.features().typed_vectors,
        "{} has no std::vector<bool> (v1.3.6+ needed)",
        lib.tag()
    );
    let reader = Broken {
        name: "get_vec_bool drops the last element",
        bug: Bug::VecBoolDropsLast,
    };
    // Every getter reads every key, so the minimal case is one set of any value whose
    // payload get_vec_bool decodes to a non-empty vector.
    let ops = expect_failure(&lib, StoreKind::Plain, &reader, small(12), 64, 256).ops;
    assert_eq!(ops.len(), 1, "not minimal: {ops:?}");
}

#[test]
fn keys_as_c_strings_are_caught() {
    let lib = newest_with(StoreKind::Plain);
    let reader = Broken {
        name: "keys as C strings",
        bug: Bug::KeysAsCStrings,
    };
    let ops = expect_failure(&lib, StoreKind::Plain, &reader, small(12), 64, 256).ops;
    assert!(
        ops.iter()
            .flat_map(Op::keys)
            .any(|k| c_string(k.bytes()) != k.bytes()),
        "expected a key with a NUL or invalid UTF-8: {ops:?}"
    );
}

#[test]
fn broken_cfb_continuation_is_caught() {
    let lib = newest_with(StoreKind::Aes128);
    let reader = Broken {
        name: "CFB continuation of encrypted appends",
        bug: Bug::Stale(Stale::EncryptedAppend),
    };
    let ops = expect_failure(&lib, StoreKind::Aes128, &reader, small(12), 64, 256).ops;
    assert!(!sets(&ops).is_empty(), "expected an appended set: {ops:?}");
}

#[test]
fn expire_flag_fixed_at_open_is_caught_by_toggling() {
    // A plaintext store: key expiration comes only from enable/disableAutoKeyExpire ops on
    // the populated store.
    let lib = newest_with(StoreKind::Expire);
    let reader = Broken {
        name: "key-expire flag fixed at open",
        bug: Bug::Stale(Stale::ExpireFlag),
    };
    let ops = expect_failure(&lib, StoreKind::Plain, &reader, small(12), 64, 256).ops;
    assert!(
        ops.iter()
            .any(|op| matches!(op, Op::EnableExpire { .. } | Op::DisableExpire)),
        "expected an expiry toggle: {ops:?}"
    );
}

#[test]
fn restore_not_followed_is_caught() {
    // restoreOneFromDirectory writes an older backup over the store without a full
    // write-back: a long-lived reader that keeps its newer snapshot must be caught, on the
    // reader of the store and not on the backup copy (which it reads right).
    let lib = newest_with(StoreKind::Plain);
    assert!(lib.features().backup_restore, "{}", lib.tag());
    let set = |k: &str, v: i32| Op::Set {
        key: k.into(),
        value: Value::I32(v),
        expire: None,
    };
    let ops = vec![
        set("k0", 1),
        set("k1", 2),
        Op::Backup,
        set("k0", 3),
        set("k2", 4),
        Op::Restore,
    ];
    let workload = Workload {
        check_every: Some(1),
        ..Workload::new(ops)
    };
    let real = run_workload(&lib, StoreKind::Plain, &workload, &RealReader::new()).expect("run");
    assert!(real.passed(), "{}", real.diff_text());
    assert_eq!(real.stats.backups_judged, 1, "{:?}", real.stats);
    let reader = Broken {
        name: "restore not followed",
        bug: Bug::Stale(Stale::Restore),
    };
    let broken = run_workload(&lib, StoreKind::Plain, &workload, &reader).expect("run");
    assert!(!broken.passed(), "{} was not caught", reader.name);
    let diff = broken.diff_text();
    assert!(diff.contains("after restore"), "{diff}");
    assert!(!diff.contains("backup copy"), "{diff}");
}

#[test]
fn meta_upgrade_not_followed_is_caught_by_migration() {
    // The oldest built version (meta version 3 before v1.3.0) continued by the newest.
    let old = oldest_with(StoreKind::Plain);
    let new = newest_with(StoreKind::Plain);
    assert!(
        !old.features().key_expire && new.features().key_expire,
        "needs a built version before v1.3.0 and one from v1.3.0 on ({} .. {})",
        old.tag(),
        new.tag()
    );
    let reader = Broken {
        name: "cannot follow a meta upgrade to version 4",
        bug: Bug::Stale(Stale::MetaUpgrade),
    };
    // Single-version workloads never change the meta version: not caught there.
    conformance::vocab::test_clock::start();
    let out = tempfile::tempdir().unwrap();
    let cfg = prop_config(16, small(12), 0, out.path());
    assert!(
        check_property(&old, StoreKind::Plain, &reader, &cfg).passed(),
        "single-version workloads should not see a meta version change on {}",
        old.tag()
    );
    let repro = expect_failure_in(&[&old, &new], StoreKind::Plain, &reader, small(12), 64, 256);
    assert_eq!(
        repro.then.len(),
        1,
        "expected the failure after the version switch: {repro:?}"
    );
}

/// What the minimal workload that catches a form bug must be.
#[derive(Clone, Copy, Debug)]
enum Minimal {
    /// One set of any value.
    OneSet,
    /// Some set with an expire duration.
    ExpiringSet,
    /// One set of a string vector with a non-UTF-8 item.
    NonUtf8StringVector,
}

/// Runs each bug through the workloads of its kind on the newest version with it and checks
/// the minimal workload that caught it.
fn form_bugs_caught(bugs: &[(&'static str, FormBug, StoreKind, Minimal)]) {
    for &(name, bug, kind, minimal) in bugs {
        let lib = newest_with(kind);
        let reader = Broken {
            name,
            bug: Bug::Form(bug),
        };
        let ops = expect_failure(&lib, kind, &reader, small(12), 64, 256).ops;
        let ok = match minimal {
            Minimal::OneSet => ops.len() == 1 && sets(&ops).len() == 1,
            Minimal::ExpiringSet => ops
                .iter()
                .any(|op| matches!(op, Op::Set { expire: Some(d), .. } if *d != 0)),
            Minimal::NonUtf8StringVector => {
                ops.len() == 1
                    && matches!(
                        &ops[0],
                        Op::Set {
                            value: Value::ByteStrings(_),
                            ..
                        }
                    )
            }
        };
        assert!(ok, "{name}: expected {minimal:?}: {ops:?}");
    }
}

#[test]
fn store_level_getter_bugs_are_caught() {
    use FormBug::*;
    use Minimal::*;
    form_bugs_caught(&[
        (
            "Store::len off by one",
            StoreLenOffByOne,
            StoreKind::Plain,
            OneSet,
        ),
        (
            "Store::keys drops its last key",
            StoreKeysDropLast,
            StoreKind::Plain,
            OneSet,
        ),
        (
            "Store::contains never",
            StoreContainsNever,
            StoreKind::Plain,
            OneSet,
        ),
        (
            "Store::expire_at never",
            StoreExpireNever,
            StoreKind::Expire,
            ExpiringSet,
        ),
    ]);
}

#[test]
fn listing_and_raw_value_bugs_are_caught() {
    use FormBug::*;
    use Minimal::*;
    form_bugs_caught(&[
        (
            "iter drops its last pair",
            IterDropsLast,
            StoreKind::Plain,
            OneSet,
        ),
        (
            "raw_value one byte long",
            RawValueOneByteLong,
            StoreKind::Plain,
            OneSet,
        ),
        (
            "entries expire time never",
            EntriesExpireNever,
            StoreKind::Expire,
            ExpiringSet,
        ),
    ]);
}

#[test]
fn bytes_vec_bugs_are_caught() {
    use FormBug::*;
    use Minimal::*;
    form_bugs_caught(&[
        (
            "get_bytes_vec drops the last element",
            BytesVecDropsLast,
            StoreKind::Plain,
            OneSet,
        ),
        (
            "get_bytes_vec items as lossy UTF-8",
            BytesVecLossy,
            StoreKind::Plain,
            NonUtf8StringVector,
        ),
    ]);
}

#[test]
fn read_only_and_name_space_sides_catch_a_broken_reader() {
    // The read-only official instance (v2.0.0+) is a reading side of its own: a reader that
    // loses negative i32s must be caught there too, as on the reopened read-write instance,
    // and in a store opened through a name space (v2.1.0+) as in a plain one.
    let lib = newest_with(StoreKind::Plain);
    let features = lib.features();
    assert!(features.read_only && features.name_space, "{}", lib.tag());
    let ops = vec![
        Op::Set {
            key: "k0".into(),
            value: Value::I32(-5),
            expire: None,
        },
        Op::Reopen,
    ];
    for name_space in [false, true] {
        let workload = Workload {
            name_space,
            ..Workload::new(ops.clone())
        };
        let real =
            run_workload(&lib, StoreKind::Plain, &workload, &RealReader::new()).expect("run");
        assert!(real.passed(), "{}", real.diff_text());
        // The reopen and the end.
        assert_eq!(real.stats.read_only_checks, 2, "{:?}", real.stats);
        assert_eq!(
            real.stats.name_space_opens > 0,
            name_space,
            "{:?}",
            real.stats
        );
        let broken = run_workload(&lib, StoreKind::Plain, &workload, &I32_VIA_U32).expect("run");
        assert!(!broken.passed(), "{} was not caught", I32_VIA_U32.name);
        let diff = broken.diff_text();
        assert!(diff.contains("read-only official"), "{diff}");
        assert!(diff.contains("reopened official"), "{diff}");
    }
    // An expiring store: from v2.3.0 the read-only instance runs without expiration (an
    // accepted difference, recognised by re-reading the files without the flag), which must
    // not hide the broken reader on that side.
    let lib = newest_with(StoreKind::Expire);
    let workload = Workload::new(ops);
    let real = run_workload(&lib, StoreKind::Expire, &workload, &RealReader::new()).expect("run");
    assert!(real.passed(), "{}", real.diff_text());
    let codes: Vec<_> = (real.divergences.iter())
        .map(|d| d.exception.difference.code())
        .collect();
    assert!(
        codes.contains(&"read-only-without-expiry"),
        "{}: {codes:?}",
        lib.tag()
    );
    let broken = run_workload(&lib, StoreKind::Expire, &workload, &I32_VIA_U32).expect("run");
    let unexplained =
        (broken.mismatches.iter()).any(|(stage, _)| stage.contains("read-only official"));
    assert!(unexplained, "{}", broken.diff_text());
}
