//! Version migration: a store written by official version A is opened and continued by
//! version B, with the long-lived reader kept open across the switch and a fresh reader at
//! every check; both must agree with B at every step (mixed formats live here: old and random
//! item-size holders in one file, the data header's size set then zeroed, meta upgrades).
//!
//! Pairs: every adjacent pair of built versions in both directions (a downgrade stops, without
//! failing, where the older version cannot read the newer file), plus the longest jump
//! (oldest → newest) and back. Kinds: every kind both versions support.
//! Cases per (pair, kind): `MIGRATION_CASES` (default 3).

use conformance::differential::property::{check_migration, PropConfig, PropOutcome};
use conformance::sides::official::OfficialLib;
use conformance::sides::sys::{built_versions, SysLib};
use conformance::{RealReader, StoreKind};

fn cases() -> u32 {
    std::env::var("MIGRATION_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(3)
}

fn migration(kind: StoreKind) {
    // Short expiries move the shared test clock instead of sleeping (see `conformance::vocab::test_clock`).
    conformance::vocab::test_clock::start();
    let tags = built_versions();
    assert!(
        tags.len() >= 2,
        "version migration needs at least two built versions (built: {tags:?})"
    );
    let libs: Vec<SysLib> = tags
        .iter()
        .map(|t| SysLib::load(t).unwrap_or_else(|e| panic!("loading {t}: {e}")))
        .collect();
    let reader = RealReader::new();
    conformance::vocab::seed::announce();
    let mut ran = Vec::new();
    let mut failures = Vec::new();
    let mut switches = 0u64;
    let mut workloads = 0u64;
    for (a, b) in conformance::differential::property::migration_pairs(libs.len()) {
        let (la, lb) = (&libs[a], &libs[b]);
        if !kind.supported_by(&la.features()) || !kind.supported_by(&lb.features()) {
            continue;
        }
        let label = format!("{}→{}", la.tag(), lb.tag());
        // each (pair, kind) its own stream of the base seed
        let cfg = PropConfig {
            cases: cases(),
            seed: Some(conformance::vocab::seed::derive(&format!(
                "migration {label} {kind}"
            ))),
            ..PropConfig::default()
        };
        ran.push(label);
        match check_migration(&[la, lb], kind, &reader, &cfg) {
            PropOutcome::Fail {
                message,
                repro_line,
                ..
            } => failures.push(format!(
                "{} → {} {kind}: {message}\n{repro_line}",
                la.tag(),
                lb.tag()
            )),
            PropOutcome::Pass { cases, stats, .. } => {
                workloads += u64::from(cases);
                switches += stats.version_switches;
            }
        }
    }
    eprintln!(
        "{kind}: {} pair(s) {ran:?}; {workloads} workload(s), {switches} version switch(es) checked",
        ran.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    if ran.is_empty() {
        // Only kinds no two built versions share (AES-256 with one v2.3.0+ build).
        let with: Vec<_> = libs
            .iter()
            .filter(|l| kind.supported_by(&l.features()))
            .map(|l| l.tag())
            .collect();
        assert!(
            with.len() < 2,
            "{kind}: two built versions support it but no pair ran"
        );
        panic!(
            "{kind}: fewer than two built versions support this kind ({with:?}): no migration ran"
        );
    }
    assert!(switches > 0, "{kind}: no version switch was checked");
}

#[test]
fn plain() {
    migration(StoreKind::Plain);
}

#[test]
fn multi() {
    migration(StoreKind::Multi);
}

#[test]
fn aes128() {
    migration(StoreKind::Aes128);
}

#[test]
fn aes128_short_key() {
    migration(StoreKind::Aes128ShortKey);
}

#[test]
fn aes256() {
    migration(StoreKind::Aes256);
}

#[test]
fn expire() {
    migration(StoreKind::Expire);
}

#[test]
fn expire_aes128() {
    migration(StoreKind::ExpireAes128);
}

#[test]
fn expire_aes256() {
    migration(StoreKind::ExpireAes256);
}
