//! `--page-size N|auto|host` on every command that opens a store: `auto` (the default) infers
//! the writer's page from the `.crc` length, a note on stderr says which size was used and why,
//! and a truncated 16 KiB store reads as the official 16 KiB loader reads it.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use mmkv_reader::test_support::{self, MetaSpec, StoreBuilder};

/// A 16 KiB writer's store of "a" = 1, "b" = 2 and "z" = 4984 zero bytes whose data file was cut
/// right after the last non-zero byte: it loads only where the file is mapped in pages larger
/// than 4 KiB (zero-filled).
fn truncated_16k(dir: &Path) -> PathBuf {
    let p = dir.join("cut");
    let mut b = StoreBuilder::with_holder(vec![0x80, 0x80, 0x80, 0x00]);
    b.raw(b"a", &[1]).raw(b"b", &[2]);
    let mut region = b.region();
    region.extend_from_slice(&[1, b'z', 0xf8, 0x26]); // "z": 4984 bytes
    let cut = 4 + region.len() as u64;
    region.resize(5000, 0);
    test_support::write_store_paged(&p, &region, &[], &MetaSpec::default(), 16384).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(cut).unwrap();
    p
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn keys(dump: &serde_json::Value) -> Vec<String> {
    dump["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn auto_infers_the_writers_page_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let p = truncated_16k(dir.path());
    let ps = p.to_str().unwrap();
    for args in [
        vec!["dump", "--json", ps],
        vec!["dump", "--json", "--page-size", "auto", ps],
    ] {
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let note = stderr(&out);
        assert_eq!(
            note.trim_end(),
            format!(
                "mmkv: {ps}: page size 16384 (inferred: the .crc is 16384 bytes, one page of the writer's machine)"
            )
        );
        let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(keys(&d), ["a", "b", "z"]);
        assert_eq!(d["meta"]["region"]["source"], "meta");
        assert_eq!(d["meta"]["region"]["page_size"], 16384);
        assert_eq!(d["meta"]["region"]["page_size_source"], "inferred");
        assert_eq!(d["entries"][2]["value_hex"], "00".repeat(4984));
    }
    let out = run(&["get", ps, "a", "--type", "i32"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("page size 16384 (inferred"));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
}

#[test]
fn a_4k_loader_discards_the_truncated_16k_store_and_the_note_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let p = truncated_16k(dir.path());
    let ps = p.to_str().unwrap();
    let err = run_fail(&["dump", "--page-size", "4096", ps]);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines[0], format!("mmkv: {ps}: page size 4096 (given)"));
    assert!(
        lines[1].contains("discards") && lines[1].contains("does not fit"),
        "{err}"
    );
    // OnErrorRecover at 4 KiB: the mapped page after the header, decoded greedily
    let d = run_json(&["dump", "--json", "--recover", "--page-size", "4096", ps]);
    assert_eq!(keys(&d), ["a", "b"]);
    assert_eq!(d["meta"]["region"]["source"], "recovered");
    // 64 KiB pages read it as 16 KiB ones do
    let d = run_json(&["dump", "--json", "--page-size", "65536", ps]);
    assert_eq!(keys(&d), ["a", "b", "z"]);
    assert_eq!(d["meta"]["region"]["page_size_source"], "given");
}

#[test]
fn meta_shows_the_region_at_the_page_size_used() {
    let dir = tempfile::tempdir().unwrap();
    let p = truncated_16k(dir.path());
    let ps = p.to_str().unwrap();
    let m = run_json(&["meta", "--json", ps]);
    assert_eq!(
        (&m["region"], &m["page_size"], &m["page_size_source"]),
        (&"meta".into(), &16384.into(), &"inferred".into())
    );
    let m = run_json(&["meta", "--json", "--page-size", "4096", ps]);
    assert_eq!(m["region"], "discarded");
    assert_eq!(m["page_size"], 4096);
    let out = run(&["meta", ps]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("page_size            16384 (inferred)"));
    assert!(stderr(&out).contains("page size 16384 (inferred"));
}

#[test]
fn host_and_a_crc_of_no_writer_page_use_this_machines_page() {
    let dir = tempfile::tempdir().unwrap();
    let p = truncated_16k(dir.path());
    let ps = p.to_str().unwrap();
    let host = mmkv_reader::host_page_size();
    let out = run(&["meta", "--page-size", "host", ps]);
    assert!(
        stderr(&out).contains(&format!("page size {host} (this machine's page)")),
        "{}",
        stderr(&out)
    );
    // a .crc of 8 KiB (zero-padded by a copying tool) is no writer's page
    let crc = mmkv_reader::meta_path(&p);
    let mut meta = std::fs::read(&crc).unwrap();
    meta.truncate(8192);
    std::fs::write(&crc, &meta).unwrap();
    let out = run(&["meta", "--json", ps]);
    assert!(
        stderr(&out).contains(&format!(
            "page size {host} (this machine's page: the .crc is 8192 bytes, not one 4, 16 or 64 KiB page"
        )),
        "{}",
        stderr(&out)
    );
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(m["page_size_source"], "host_not_inferred");
}

#[test]
fn a_page_size_the_reader_cannot_follow_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = truncated_16k(dir.path());
    let ps = p.to_str().unwrap();
    for size in ["12288", "2048", "131072", "0"] {
        let err = run_fail(&["dump", "--page-size", size, ps]);
        assert!(err.contains("invalid page size"), "{err}");
        assert!(
            !err.contains("page size 4096 ("),
            "no note before a bad argument: {err}"
        );
    }
    let err = run_fail(&["dump", "--page-size", "16k", ps]);
    assert!(err.contains("auto"), "{err}");
}

#[test]
fn scan_and_watch_follow_each_stores_page() {
    let dir = tempfile::tempdir().unwrap();
    truncated_16k(dir.path());
    mmkv_corpus::copy_store(&corpus(), "v2.4.2", "plain", dir.path(), "small").unwrap();
    let d = dir.path().to_str().unwrap();
    let out = run(&["scan", "--json", d]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<(String, u64, String)> = s["stores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string(),
                r["page_size"].as_u64().unwrap(),
                r["page_size_source"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("cut".into(), 16384, "inferred".into()),
            ("small".into(), 4096, "inferred".into())
        ]
    );
    assert!(s["stores"][0]["error"].is_null(), "{}", s["stores"][0]);
    assert_eq!(s["stores"][0]["entries"], 3);
    assert_eq!(
        stderr(&out).trim_end(),
        format!("mmkv: {d}: page sizes: 1 at 4096 (inferred from the .crc length), 1 at 16384 (inferred from the .crc length)")
    );
    let s = run_json(&["scan", "--json", "--page-size", "4096", d]);
    assert_eq!(s["stores"][0]["page_size_source"], "given");
    assert!(s["stores"][0]["error"]
        .as_str()
        .unwrap()
        .contains("discards"));

    let cut = dir.path().join("cut");
    let out = run(&["watch", "--duration-ms", "50", cut.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("page size 16384 (inferred"));
    let first: serde_json::Value =
        serde_json::from_slice(out.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(keys(&first), ["a", "b", "z"]);
}
