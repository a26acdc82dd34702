//! Deterministic verdicts: the same report cells, run twice, give the same verdicts although the
//! official library draws different random IVs (AES) and item-size holders (v2.0.0+) each time.
//!
//! Each cell runs as the report runs it (`conformance cell` in a child process, see
//! [`conformance::report::cell::run_cell_child`]), twice, the second run starting in a later wall-clock
//! second than the first (versions before v2.x seed their IVs from `time()`). Compared: the
//! verdict, the workloads and operations run, and the failures. The cells: encrypted and
//! expiring + encrypted on the newest built version, and AES-128 on a version of MMKV#1351's
//! range (v1.3.3–v1.3.7) when one is built, where the official library's own behaviour depends
//! on its IVs (its differences are accepted by the exceptions table, so the verdict must not).
//!
//! A full double run: run `report --json` twice and compare the verdicts (README, "Conformance").

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use conformance::report::cell::{run_cell_child, workload_timeout, CellResult, CellSpec};
use conformance::sides::official::OfficialLib;
use conformance::sides::sys::{built_versions, SysLib};
use conformance::{StoreKind, Value};
use mmkv_sys::versions::Tag;

fn wait_for_next_second() {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    std::thread::sleep(Duration::from_nanos(
        1_000_000_000 - u64::from(now.subsec_nanos()) + 10_000_000,
    ));
}

fn cells() -> Vec<CellSpec> {
    let newest = *built_versions().last().expect("no built official version");
    let lib = SysLib::load(newest).expect("load");
    let mut kinds = vec![StoreKind::Aes128];
    if StoreKind::ExpireAes128.supported_by(&lib.features()) {
        kinds.push(StoreKind::ExpireAes128);
    }
    let mut out: Vec<CellSpec> = kinds
        .into_iter()
        .map(|kind| CellSpec {
            tag: newest.to_string(),
            kind,
            cases: 2,
            seeds: vec![1, 2],
            many_keys: 0,
            real_clock: false,
            gen: None,
        })
        .collect();
    if let Some(t) = built_versions()
        .iter()
        .find(|t| (Tag::parse("v1.3.3")..=Tag::parse("v1.3.7")).contains(&Tag::parse(t)))
    {
        out.push(CellSpec {
            tag: t.to_string(),
            kind: StoreKind::Aes128,
            cases: 2,
            seeds: vec![1, 2],
            many_keys: 0,
            real_clock: false,
            gen: None,
        });
    }
    out
}

/// What must not change between runs.
fn verdict(r: &CellResult) -> (bool, u64, u64, u64, Vec<String>) {
    (
        r.passed,
        r.workloads,
        r.stats.ops,
        r.stats.rejected_sets,
        r.failures.clone(),
    )
}

#[test]
fn a_cell_run_twice_gives_the_same_verdict() {
    let exe = Path::new(env!("CARGO_BIN_EXE_conformance"));
    let cells = cells();
    assert!(!cells.is_empty());
    let mut differ = Vec::new();
    for spec in &cells {
        let first = run_cell_child(exe, spec, workload_timeout());
        wait_for_next_second();
        let second = run_cell_child(exe, spec, workload_timeout());
        eprintln!(
            "{} {}: run 1 {} ({} workloads, {} ops, {} notes), run 2 {} ({} workloads, {} ops, {} notes)",
            spec.tag,
            spec.kind,
            if first.passed { "pass" } else { "FAIL" },
            first.workloads,
            first.stats.ops,
            first.notes.len(),
            if second.passed { "pass" } else { "FAIL" },
            second.workloads,
            second.stats.ops,
            second.notes.len(),
        );
        assert!(
            first.workloads > 0,
            "{} {}: ran nothing",
            spec.tag,
            spec.kind
        );
        if verdict(&first) != verdict(&second) {
            differ.push(format!(
                "{} {}: {:?} then {:?}",
                spec.tag,
                spec.kind,
                verdict(&first),
                verdict(&second)
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "verdicts changed:\n{}",
        differ.join("\n")
    );
}

/// The premise: two official runs of the same writes produce different files (random IVs).
#[test]
fn the_official_library_writes_differently_each_time() {
    let newest = *built_versions().last().expect("no built official version");
    let lib = SysLib::load(newest).expect("load");
    let mut metas = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let mut s = lib.open(dir.path(), "iv", StoreKind::Aes128).unwrap();
        s.set(b"k", &Value::I32(1), None).unwrap();
        s.sync().unwrap();
        s.close().unwrap();
        metas.push(std::fs::read(dir.path().join("iv.crc")).unwrap());
        wait_for_next_second();
    }
    assert_ne!(metas[0], metas[1], "{newest}: the same IV twice");
}
