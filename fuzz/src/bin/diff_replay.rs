//! Replays inputs of the `differential` target without libFuzzer and prints each verdict:
//! `cargo run --release --no-default-features --features tools,official --bin diff-replay -- FILE_OR_DIR...`.
//! Exit status 1 when an input disagrees.

use std::path::Path;

use mmkv_reader_fuzz::differential::DiffHarness;

fn main() {
    let mut inputs = Vec::new();
    for a in std::env::args().skip(1) {
        mmkv_reader_fuzz::input_files(Path::new(&a), &mut inputs);
    }
    let mut h = DiffHarness::new();
    let mut bad = 0;
    let mut counts = std::collections::BTreeMap::new();
    for f in &inputs {
        let data = std::fs::read(f).expect("read input");
        let r = h.judge(&data);
        for (s, p, v) in &r.verdicts {
            let k = format!("{s:?}/{} {}", p.name(), v.label());
            *counts.entry(k).or_insert(0usize) += 1;
            if matches!(v, conformance::judge::state::Verdict::Disagree(_)) {
                bad += 1;
                println!("{}: {s:?}/{} {v}", f.display(), p.name());
            }
        }
    }
    eprintln!(
        "{} inputs against official {}: {counts:?}",
        inputs.len(),
        h.tag()
    );
    std::process::exit(i32::from(bad > 0));
}
