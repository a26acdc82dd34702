//! Differential property tests: for every version built into mmkv-sys and every store kind it
//! supports, random workloads run through the official library and the reader must agree with
//! every official getter (value and presence) for every touched key, plus key sets and counts.
//!
//! Cases per (version, kind): `PROPTEST_CASES` (default `conformance::differential::property::DEFAULT_CASES`).
//! A failure is shrunk to a minimal workload, saved under `target/conformance-failures/`, and
//! reported with a one-line `cargo run -p conformance -- replay ...` command. Failing seeds are
//! persisted in `tests/differential.proptest-regressions` (replayed first on later runs).
//!
//! One test per store kind, so the kinds run in parallel test threads, on the test clock
//! (`conformance::vocab::test_clock`): waits for short expiries move the clock instead of sleeping.

use conformance::differential::property::{check_property, PropConfig};
use conformance::report::cell::CellResult;
use conformance::sides::sys::{built_versions, SysLib};
use conformance::{RealReader, StoreKind};

fn differential(kind: StoreKind) {
    // Short expiries move the shared test clock instead of sleeping (every test of this binary
    // runs on it; the report's real-clock cells and mmkv-sys's roundtrip cover the real clock).
    conformance::vocab::test_clock::start();
    let versions = built_versions();
    assert!(
        !versions.is_empty(),
        "mmkv-sys built no official version (MMKV_VERSIONS=none?)"
    );
    let reader = RealReader::new();
    conformance::vocab::seed::announce();
    let mut ran = Vec::new();
    // Versions run that have a read-only mode / name spaces: their checks must have used them.
    let (mut read_only, mut name_space) = (0, 0);
    let mut result = CellResult::default();
    for tag in versions {
        let lib = SysLib::load(tag).unwrap_or_else(|e| panic!("loading {tag}: {e}"));
        if !kind.supported_by(&conformance::sides::official::OfficialLib::features(&lib)) {
            continue;
        }
        ran.push(*tag);
        let features = conformance::sides::official::OfficialLib::features(&lib);
        read_only += u32::from(features.read_only);
        name_space += u32::from(features.name_space);
        // each (version, kind) its own stream of the base seed; saved failures run first
        let cfg = PropConfig {
            source_file: Some(file!()),
            seed: Some(conformance::vocab::seed::derive(&format!(
                "differential {tag} {kind}"
            ))),
            ..PropConfig::default()
        };
        result.add_property(
            &format!("{tag} {kind}"),
            check_property(&lib, kind, &reader, &cfg),
        );
    }
    let (workloads, total) = (result.workloads, &result.stats);
    assert!(
        !ran.is_empty(),
        "{kind}: no built version supports this store kind (built: {versions:?}); a differential \
         test that ran on no version has not passed. Build one (e.g. MMKV_VERSIONS with a v2.3.0+ \
         tag for the AES-256 kinds)."
    );
    eprintln!(
        "{kind}: {} version(s) {ran:?}; {workloads} workload(s), {} op(s), {} check(s), {} key(s) \
         compared ({} reads), {} expire time(s) checked; long-lived reader: {} partial / {} full \
         reload(s), {} failed, replaced {} time(s) by reKey; {} read-only official check(s), {} \
         name-space open(s)",
        ran.len(),
        total.ops,
        total.checks,
        total.keys_compared,
        total.reads_compared,
        total.expire_checked,
        total.long_lived.partial,
        total.long_lived.full,
        total.long_lived.failed,
        total.long_lived_replaced,
        total.read_only_checks,
        total.name_space_opens,
    );
    for d in &result.notes {
        eprintln!("note: {d}");
    }
    assert!(
        result.failures.is_empty(),
        "{}",
        result.failures.join("\n\n")
    );
    assert!(workloads > 0, "{kind}: no workload ran");
    // Every workload ends with a check that judges a read-only instance where the version
    // has the mode; name spaces are drawn for half the workloads of the versions with them.
    assert_eq!(
        total.read_only_checks > 0,
        read_only > 0,
        "{kind}: {} read-only official check(s) over {read_only} version(s) with the mode",
        total.read_only_checks
    );
    assert!(
        name_space == 0 || total.name_space_opens > 0,
        "{kind}: no name-space open over {name_space} version(s) with name spaces (raise PROPTEST_CASES)"
    );
    // The long-lived reader must have gone through both reload paths in this kind.
    assert!(
        total.long_lived.partial > 0 && total.long_lived.full > 0,
        "{kind}: the long-lived reader did not exercise both reload paths: {} partial, {} full \
         (raise PROPTEST_CASES)",
        total.long_lived.partial,
        total.long_lived.full
    );
}

#[test]
fn plain() {
    differential(StoreKind::Plain);
}

#[test]
fn multi() {
    differential(StoreKind::Multi);
}

#[test]
fn aes128() {
    differential(StoreKind::Aes128);
}

#[test]
fn aes128_short_key() {
    differential(StoreKind::Aes128ShortKey);
}

#[test]
fn aes128_long_key() {
    differential(StoreKind::Aes128LongKey);
}

#[test]
fn aes256() {
    differential(StoreKind::Aes256);
}

#[test]
fn aes256_short_key() {
    differential(StoreKind::Aes256ShortKey);
}

#[test]
fn expire() {
    differential(StoreKind::Expire);
}

#[test]
fn expire_aes128() {
    differential(StoreKind::ExpireAes128);
}

#[test]
fn expire_aes256() {
    differential(StoreKind::ExpireAes256);
}
