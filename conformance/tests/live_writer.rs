//! Live writer in another process: the official library writes a seeded sequence in
//! MULTI_PROCESS mode in a child process (`conformance writer`), with sets of small and big
//! values (growth, full write-backs), removes, trims and clears, while reader threads in this
//! process share one long-lived `Store` and read with check-on-read
//! ([`conformance::live::run_live`]).
//!
//! Run for the newest built version of each era (v1.2, v1.3, v2.x), in every store kind of
//! [`conformance::live::LIVE_KINDS`] the version has (plaintext, AES-128, AES-256 from v2.3.0,
//! key expiration from v1.3.0), each unpaced and paced. Checked per run: every observed value
//! is one the writer committed for that key (no torn value); every snapshot is explained by a
//! single prefix of the writer's sequence, never older than the thread's previous one; no
//! reload fails (`stats().failed == 0`); the readers observed many distinct intermediate
//! states when paced (a twentieth of the ops; unpaced runs only count them: a fast writer may
//! finish between two reads); after the writer exits, the open store and a fresh one hold
//! exactly the final state (values, expire times, key set).
//!
//! `CONFORMANCE_LIVE_OPS` (default 1500) sets the ops per run.

use conformance::judge::exceptions::{accepted, Difference, Scope};
use conformance::live::{live_matrix, live_spec, run_live, DEFAULT_OPS};
use conformance::sides::official::OfficialLib;
use conformance::sides::sys::{built_versions, SysLib};
use conformance::StoreKind;
use mmkv_sys::versions::Tag;

/// The eras: (name, major, minor or `None` for any).
const ERAS: [(&str, u32, Option<u32>); 3] = [
    ("v1.2", 1, Some(2)),
    ("v1.3", 1, Some(3)),
    ("v2.x", 2, None),
];

fn ops() -> usize {
    std::env::var("CONFORMANCE_LIVE_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_OPS)
}

/// The newest built version of each era whose multi-process writer keeps its process lock
/// (`None` where none is built). v1.2.16-v1.3.0 lose it (a row of the exceptions table, under
/// which `report` runs them); a test of the reader following a writer needs one that locks.
fn era_versions() -> Vec<(&'static str, Option<&'static str>)> {
    let locks = |t: &str| {
        Scope::new(t, false, true)
            .is_some_and(|s| accepted(Difference::WriterLosesProcessLock, &s).is_none())
    };
    ERAS.iter()
        .map(|&(name, major, minor)| {
            let tag = built_versions().iter().rev().copied().find(|t| {
                locks(t)
                    && Tag::parse(t)
                        .is_some_and(|v| v.major == major && minor.is_none_or(|m| m == v.minor))
            });
            (name, tag)
        })
        .collect()
}

#[test]
fn reader_follows_writers_of_every_era() {
    let eras = era_versions();
    let missing: Vec<&str> = eras
        .iter()
        .filter(|(_, t)| t.is_none())
        .map(|(n, _)| *n)
        .collect();
    assert!(
        missing.is_empty(),
        "no built version of era(s) {missing:?}: build one (MMKV_VERSIONS=v1.2.15,v1.3.9,v2.4.2)"
    );
    let mut lines = Vec::new();
    let mut failed = Vec::new();
    let mut kinds_run = Vec::new();
    for (_, tag) in &eras {
        let tag = tag.expect("checked above");
        let lib = SysLib::load(tag).expect("load the official library");
        for (kind, pace_us) in live_matrix(&lib.features()) {
            let spec = live_spec(kind, pace_us, ops());
            let o = run_live(
                std::path::Path::new(env!("CARGO_BIN_EXE_conformance")),
                tag,
                &spec,
            );
            eprintln!("live: {}", o.line());
            if !o.passed() {
                failed.push(o.line());
            }
            kinds_run.push(kind);
            lines.push(o);
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    for kind in [
        StoreKind::Multi,
        StoreKind::Aes128,
        StoreKind::Aes256,
        StoreKind::Expire,
    ] {
        assert!(
            kinds_run.contains(&kind),
            "no live run in {kind} (AES-256 needs v2.3.0+)"
        );
    }
    let states: usize = lines.iter().map(|o| o.distinct_states).sum();
    eprintln!(
        "live: {} runs, {states} distinct states observed in all",
        lines.len()
    );
}
