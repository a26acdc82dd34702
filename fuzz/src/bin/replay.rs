//! Runs fuzz inputs through a target's harness without libFuzzer (reproducing findings and
//! timing): `cargo run --release --no-default-features --features tools --bin replay -- TARGET FILE_OR_DIR...`.

use std::path::Path;
use std::time::Instant;

use mmkv_reader_fuzz::harness::{check_decrypt, check_meta, check_region, ReloadHarness};

fn main() {
    let mut args = std::env::args().skip(1);
    let target = args.next().expect("usage: replay TARGET FILE_OR_DIR...");
    let mut inputs = Vec::new();
    for a in args {
        mmkv_reader_fuzz::input_files(Path::new(&a), &mut inputs);
    }
    let harness = (target == "reload").then(|| ReloadHarness::new(&ReloadHarness::default_dir()));
    let run = |data: &[u8]| match target.as_str() {
        "meta" => check_meta(data),
        "data_plain" => {
            check_region(data);
        }
        "decrypt_aes128" => check_decrypt(data, false),
        "decrypt_aes256" => check_decrypt(data, true),
        "reload" => harness.as_ref().expect("harness").run(data),
        t => panic!("unknown target {t}"),
    };
    let start = Instant::now();
    for f in &inputs {
        let data = std::fs::read(f).expect("read input");
        run(&data);
    }
    let el = start.elapsed();
    eprintln!(
        "{target}: {} inputs in {:.3} s ({:.1} us each)",
        inputs.len(),
        el.as_secs_f64(),
        el.as_secs_f64() * 1e6 / inputs.len().max(1) as f64
    );
}
