//! Replays the fuzzing regression inputs in `tests/fuzz-regressions/<target>/` through the same
//! code as the fuzz targets in `fuzz/` (the harness file is shared with `#[path]`):
//! `crash-*` / `oom-*` / `timeout-*` files are inputs that once made a target fail (see the
//! project's fuzz findings), `edge-*` files are hand-made edge cases written by
//! `fuzz/src/bin/seed_corpus.rs --edges`.

#[path = "../../fuzz/src/harness.rs"]
#[allow(dead_code, unused_imports)]
mod harness;

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no regression inputs in {}",
        dir.display()
    );
    files
        .into_iter()
        .map(|f| {
            let b = std::fs::read(&f).expect("read input");
            (f, b)
        })
        .collect()
}

fn replay(target: &str, run: impl Fn(&[u8])) {
    for (path, data) in inputs(target) {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&data)));
        assert!(r.is_ok(), "{target}: {} fails", path.display());
    }
}

#[test]
fn meta() {
    replay("meta", harness::check_meta);
}

#[test]
fn data_plain() {
    replay("data_plain", |d| {
        harness::check_region(d);
    });
}

#[test]
fn decrypt_aes128() {
    replay("decrypt_aes128", |d| harness::check_decrypt(d, false));
}

#[test]
fn decrypt_aes256() {
    replay("decrypt_aes256", |d| harness::check_decrypt(d, true));
}

/// The load target takes the reload target's input format: its saved inputs (and the load
/// target's own, if any) replay through the full load path from bytes.
#[test]
fn load() {
    replay("reload", harness::check_load);
}

#[test]
fn reload() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = harness::ReloadHarness::new(&dir.path().join("h"));
    replay("reload", |d| h.run(d));
}

/// The synthetic edge pairs reach the paths they were made for: the base store opens, an
/// append reloads partially, a torn append falls back to the last-confirmed size.
#[test]
fn edge_pairs_reach_their_paths() {
    use mmkv_reader::{RegionSource, ReloadKind, Store};
    let dir = tempfile::tempdir().expect("tempdir");
    let mut kinds = std::collections::BTreeSet::new();
    let mut sources = std::collections::BTreeSet::new();
    for (path, input) in inputs("reload") {
        if !path.to_string_lossy().contains("synthetic") {
            continue;
        }
        let (mode, meta, data) = harness::decode_reload_input(&input);
        let (bm, bd) = harness::base_pair(mode);
        let p = dir.path().join("s");
        std::fs::write(&p, &bd).unwrap();
        std::fs::write(dir.path().join("s.crc"), &bm).unwrap();
        let store = Store::open(&p, mode.options()).expect("base opens");
        std::fs::write(&p, data).unwrap();
        let mut m = meta.to_vec();
        m.resize(harness::META_FILE_LEN, 0);
        std::fs::write(dir.path().join("s.crc"), &m).unwrap();
        if store.refresh().expect("synthetic pairs are valid") {
            kinds.insert(format!("{:?}", store.last_reload_kind()));
            sources.insert(format!("{:?}", store.snapshot().region_source()));
        }
    }
    assert!(
        kinds.contains(&format!("{:?}", Some(ReloadKind::Partial))),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&format!("{:?}", Some(ReloadKind::Full))),
        "{kinds:?}"
    );
    assert!(
        sources.contains(&format!("{:?}", RegionSource::LastConfirmed)),
        "{sources:?}"
    );
}
