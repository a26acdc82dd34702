//! Differential property tests: for every version built into mmkv-sys and every store kind it
//! supports, random workloads run through the official library and the reader must agree with
//! every official getter (value and presence) for every touched key, plus key sets and counts.
//!
//! Cases per (version, kind): `PROPTEST_CASES` (default `conformance::prop::DEFAULT_CASES`).
//! A failure is shrunk to a minimal workload, saved under `target/conformance-failures/`, and
//! reported with a one-line `cargo run -p conformance -- replay ...` command. Failing seeds are
//! persisted in `tests/differential.proptest-regressions` (replayed first on later runs).
//!
//! One test per store kind, so the kinds run in parallel test threads.

use conformance::prop::{check_property, PropConfig, PropOutcome};
use conformance::sys::{built_versions, SysLib};
use conformance::{RealReader, StoreKind};

fn differential(kind: StoreKind) {
    let versions = built_versions();
    assert!(
        !versions.is_empty(),
        "mmkv-sys built no official version (MMKV_VERSIONS=none?)"
    );
    let reader = RealReader::new();
    let cfg = PropConfig {
        source_file: Some(file!()),
        ..PropConfig::default()
    };
    let mut ran = 0;
    let mut failures = Vec::new();
    let mut divergences = Vec::new();
    for tag in versions {
        let lib = SysLib::load(tag).unwrap_or_else(|e| panic!("loading {tag}: {e}"));
        if !kind.supported_by(&conformance::official::OfficialLib::features(&lib)) {
            continue;
        }
        ran += 1;
        match check_property(&lib, kind, &reader, &cfg) {
            PropOutcome::Fail {
                minimal,
                message,
                repro_line,
                ..
            } => failures.push(format!(
                "{tag} {kind}: minimal workload has {} op(s): {message}\n{repro_line}",
                minimal.ops.len()
            )),
            PropOutcome::Pass {
                divergent_cases,
                divergence_example,
                ..
            } => {
                if divergent_cases > 0 {
                    divergences.push(format!(
                        "{tag} {kind}: {divergent_cases} case(s); first: {}",
                        divergence_example.unwrap_or_default()
                    ));
                }
            }
        }
    }
    eprintln!(
        "{kind}: {ran} version(s) x {} case(s){}",
        cfg.cases,
        if ran == 0 {
            " (no built version has this kind)"
        } else {
            ""
        }
    );
    for d in &divergences {
        eprintln!("note: official in-memory state disagreed with its own files (reader agreed with the files): {d}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
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
