//! The report's cells run concurrently: N sleep-bound cells (real clock, every workload waiting
//! for 1-second expiries) through the report's pool and child-process runner take well under N
//! times one cell's wall time, with results in input order and identical verdicts.

use std::path::Path;
use std::time::{Duration, Instant};

use conformance::differential::workload::GenConfig;
use conformance::report::cell::{run_cell_child, CellSpec};
use conformance::sides::official::OfficialLib;
use conformance::sides::sys::{built_versions, SysLib};
use conformance::vocab::pool::run_ordered;
use conformance::StoreKind;

const N: usize = 4;

fn sleepy_cell(tag: &str, seed: u64) -> CellSpec {
    CellSpec {
        tag: tag.to_string(),
        kind: StoreKind::Expire,
        cases: 2,
        seeds: vec![seed],
        many_keys: 0,
        // The real clock: each 1-second expiry is a real wait.
        real_clock: true,
        gen: Some(GenConfig {
            max_ops: 4,
            // Nearly every explicit expire duration is 1 s.
            short_expire_weight: 1000,
            past_expire_weight: 0,
            big_value_weight: 0,
            file_api: false,
            name_space: false,
        }),
    }
}

#[test]
fn sleep_bound_cells_run_concurrently() {
    let tag = built_versions()
        .iter()
        .rev()
        .find(|t| SysLib::load(t).is_ok_and(|l| l.features().key_expire))
        .expect("a built version with key expiration (v1.3.0+)");
    let exe = Path::new(env!("CARGO_BIN_EXE_conformance"));
    let timeout = Duration::from_secs(120);

    let t = Instant::now();
    let one = run_cell_child(exe, &sleepy_cell(tag, 1), timeout);
    let single = t.elapsed();
    assert!(one.passed, "{:?}", one.failures);
    assert!(
        single >= Duration::from_secs(1),
        "one cell took {single:?}: not sleep-bound, the test shows nothing"
    );

    let specs: Vec<CellSpec> = (0..N).map(|_| sleepy_cell(tag, 1)).collect();
    let t = Instant::now();
    let results = run_ordered(specs, N, |s| run_cell_child(exe, &s, timeout));
    let together = t.elapsed();
    eprintln!("one cell {single:?}; {N} cells at once {together:?}");
    for r in &results {
        assert_eq!(r, &one, "same spec, same result");
    }
    assert!(
        together < single * (N as u32) / 2,
        "{N} sleep-bound cells took {together:?}, one took {single:?}: they did not overlap"
    );
}
