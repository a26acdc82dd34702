//! `mmkv` on damaged stores, each built from a corpus store the official library wrote: it
//! reads what the official loader reads (the same locator as `mmkv_reader::Store`, whose
//! agreement with the live official library `conformance/tests/damaged.rs` checks), says
//! which region it read and why, never calls a damaged plaintext store encrypted, and carves
//! no records out of ordinary text.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

fn copy(dir: &Path, tag: &str, id: &str) -> PathBuf {
    mmkv_corpus::copy_store(&corpus(), tag, id, dir, id).unwrap()
}

fn crc(p: &Path) -> PathBuf {
    p.with_file_name(format!("{}.crc", p.file_name().unwrap().to_str().unwrap()))
}

fn patch_u32(path: &Path, off: usize, f: impl Fn(u32) -> u32) {
    let mut b = std::fs::read(path).unwrap();
    let v = f(u32::from_le_bytes(b[off..off + 4].try_into().unwrap()));
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
    std::fs::write(path, b).unwrap();
}

fn keys_values(d: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = d["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["key_hex"].as_str().unwrap().to_string(),
                e["value_hex"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn dump(p: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["dump", "--json", "--now", "2000000000"];
    args.extend_from_slice(extra);
    args.push(p.to_str().unwrap());
    run_json(&args)
}

/// What `mmkv_reader::Store` reads (with `recover`), as (key hex, payload hex).
fn store_view(p: &Path, recover: bool) -> Vec<(String, String)> {
    let st = mmkv_reader::Store::open(
        p,
        mmkv_reader::Options::new()
            .recover(recover)
            .clock(std::sync::Arc::new(mmkv_reader::FixedClock(2_000_000_000))),
    )
    .unwrap();
    let mut v: Vec<(String, String)> = st
        .snapshot()
        .iter()
        .map(|(k, v)| (hex(k), hex(v)))
        .collect();
    v.sort();
    v
}

#[test]
fn stale_meta_size_reads_the_header_region_like_the_official_loader() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), "v2.3.0", "plain");
    let pristine = keys_values(&dump(&p, &[]));
    patch_u32(&crc(&p), 28, |_| {
        let m = std::fs::read(crc(&p)).unwrap();
        u32::from_le_bytes(m[32..36].try_into().unwrap()) // the last-confirmed (older) size
    });
    let d = dump(&p, &[]);
    assert_eq!(d["meta"]["region"]["source"], "header");
    assert!(d["meta"]["region"]["problem"]
        .as_str()
        .unwrap()
        .contains("CRC mismatch"));
    assert_eq!(keys_values(&d), pristine);
    assert_eq!(keys_values(&d), store_view(&p, false));
    let table = String::from_utf8(run(&["dump", p.to_str().unwrap()]).stdout).unwrap();
    assert!(table.contains("region: header size"), "{table}");
}

#[test]
fn size_past_end_of_file_reads_the_last_confirmed_state() {
    for id in ["plain", "aes128"] {
        let dir = tempfile::tempdir().unwrap();
        let p = copy(dir.path(), "v2.4.2", id);
        patch_u32(&crc(&p), 28, |_| 40_000);
        let key: &[&str] = if id == "aes128" {
            &["--crypt-key", "mmkv-conformance"]
        } else {
            &[]
        };
        let d = dump(&p, key);
        assert_eq!(d["meta"]["region"]["source"], "last_confirmed", "{id}");
        assert!(!d["entries"].as_array().unwrap().is_empty());
        if id == "plain" {
            assert_eq!(keys_values(&d), store_view(&p, false));
        }
        let m = run_json(&["meta", "--json", p.to_str().unwrap()]);
        assert_eq!(m["region"], "last_confirmed");
    }
}

#[test]
fn damaged_plaintext_is_discarded_or_recovered_never_encrypted() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), "v2.4.2", "plain");
    let c = crc(&p);
    let actual = u32::from_le_bytes(std::fs::read(&c).unwrap()[28..32].try_into().unwrap());
    let mut data = std::fs::read(&p).unwrap();
    data[4 + actual as usize - 200] ^= 0xff;
    std::fs::write(&p, &data).unwrap();
    patch_u32(&c, 36, |v| v ^ 1); // no valid last-confirmed crc either
    let err = run_fail(&["dump", p.to_str().unwrap()]);
    assert!(
        err.contains("discards") && err.contains("--recover"),
        "{err}"
    );
    assert!(!err.contains("encrypted"), "{err}");
    let d = dump(&p, &["--recover"]);
    assert_eq!(d["meta"]["region"]["source"], "recovered");
    assert_eq!(d["meta"]["crc_ok"], false);
    assert_eq!(keys_values(&d), store_view(&p, true));
    assert!(d["entries"].as_array().unwrap().len() > 50);
    let s = run_json(&["scan", "--json", dir.path().to_str().unwrap()]);
    let row = &s["stores"][0];
    assert_ne!(row["encrypted"], "yes", "{row}");
    assert!(row["error"].as_str().unwrap().contains("discards"));
    let s = run_json(&["scan", "--json", "--recover", dir.path().to_str().unwrap()]);
    let row = &s["stores"][0];
    assert_ne!(row["encrypted"], "yes", "{row}");
    assert!(row["entries"].as_u64().unwrap() > 50, "{row}");
}

#[test]
fn unparsable_region_with_zero_iv_is_not_called_encrypted() {
    // A CRC-valid region that does not parse: meta version 4 with an all-zero IV rules
    // encryption out (an encrypted store's meta holds the random IV the library generated).
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), "v2.4.2", "plain");
    let c = crc(&p);
    let actual = u32::from_le_bytes(std::fs::read(&c).unwrap()[28..32].try_into().unwrap());
    let mut data = std::fs::read(&p).unwrap();
    // a record cut short appended to the region, with the meta's size and crc updated
    let end = 4 + actual as usize + 2;
    data[end - 2..end].copy_from_slice(&[0x05, b'x']);
    std::fs::write(&p, &data).unwrap();
    patch_u32(&c, 28, |_| actual + 2);
    patch_u32(&c, 0, |_| crc32fast::hash(&data[4..end]));
    let err = run_fail(&["dump", p.to_str().unwrap()]);
    assert!(
        err.contains("not encrypted") && !err.contains("looks encrypted"),
        "{err}"
    );
    let s = run_json(&["scan", "--json", dir.path().to_str().unwrap()]);
    assert_eq!(s["stores"][0]["encrypted"], "no", "{}", s["stores"][0]);
    // An encrypted store (random IV) without its key still looks encrypted.
    let q = corpus().join("v2.4.2/aes128");
    let err = run_fail(&["dump", q.to_str().unwrap()]);
    assert!(err.contains("looks encrypted"), "{err}");
}

#[test]
fn missing_or_short_meta() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), "v2.3.0", "plain");
    let pristine = keys_values(&dump(&p, &[]));
    let good = std::fs::read(crc(&p)).unwrap();

    // short: zero-filled like the official mapping; the header's size with the meta crc
    std::fs::write(crc(&p), &good[..20]).unwrap();
    let d = dump(&p, &[]);
    assert_eq!(d["meta"]["region"]["source"], "header");
    assert_eq!(d["meta"]["region"]["meta_zero_filled"], true);
    assert_eq!(keys_values(&d), pristine);
    let m = run_json(&["meta", "--json", p.to_str().unwrap()]);
    assert_eq!(m["meta_file_len"], 20);

    // missing: the official library creates a zero meta: discarded by default, the header's
    // region with --recover (unverified)
    std::fs::remove_file(crc(&p)).unwrap();
    let err = run_fail(&["dump", p.to_str().unwrap()]);
    assert!(
        err.contains("not found") && err.contains("--recover"),
        "{err}"
    );
    let d = dump(&p, &["--recover"]);
    assert_eq!(d["meta"]["region"]["source"], "recovered");
    assert_eq!(d["meta"]["lock"], "none");
    assert_eq!(keys_values(&d), pristine);
    let table = String::from_utf8(run(&["dump", "--recover", p.to_str().unwrap()]).stdout).unwrap();
    assert!(
        table.contains("RECOVERED") && table.contains("no meta file"),
        "{table}"
    );
}

#[test]
fn carving_rejects_records_made_of_ordinary_text() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), "v2.4.2", "plain");
    let before = carve_json(&p, &[]);
    let stale_before = before["carve"]["stale"].as_u64().unwrap();
    // Ordinary text over the zero bytes at the end of the data file (after the region).
    let mut data = std::fs::read(&p).unwrap();
    let text = "The quick brown fox jumps over the lazy dog, then rests a while; \
                meanwhile 42 sheep wander off (see notes: page 7, line 3). "
        .repeat(40);
    let at = data.len() - text.len() - 16;
    assert!(data[at..].iter().all(|&b| b == 0), "tail is not free");
    data[at..at + text.len()].copy_from_slice(text.as_bytes());
    std::fs::write(&p, &data).unwrap();
    let after = carve_json(&p, &[]);
    let stale: Vec<&Value> = after["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "stale" && r["offset"].as_u64().unwrap() as usize >= at)
        .collect();
    assert!(stale.is_empty(), "records carved out of text: {stale:?}");
    assert_eq!(after["carve"]["stale"].as_u64().unwrap(), stale_before);
    assert!(
        after["carve"]["rejected"].as_u64().unwrap()
            > before["carve"]["rejected"].as_u64().unwrap()
    );
}
