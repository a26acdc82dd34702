//! `--history` statuses on hand-built stores with a known write sequence, carving, item-size holder
//! widths 1–4 and meta versions 1–4.

mod common;

use common::*;
use serde_json::Value;

fn i32_payload(v: i64) -> Vec<u8> {
    let mut p = Vec::new();
    varint(&mut p, v as u64);
    p
}

fn str_payload(s: &str) -> Vec<u8> {
    let mut p = Vec::new();
    delimited(&mut p, s.as_bytes());
    p
}

/// The known write sequence and the statuses it implies (now = 200).
fn sequence(b: &mut Builder) -> Vec<(&'static str, &'static str)> {
    b.set("a", &i32_payload(1), 0)
        .set("b", &str_payload("x"), 0)
        .set("a", &i32_payload(2), 0)
        .remove("b")
        .set("c", &i32_payload(3), 100)
        .set("d", &i32_payload(4), 1000)
        .set("e", &i32_payload(5), 0)
        .remove("e")
        .set("e", &i32_payload(6), 0)
        .set("f", &i32_payload(7), 0)
        .set("f", &i32_payload(8), 0)
        .remove("f")
        .set("g", &i32_payload(9), 150)
        .set("g", &i32_payload(10), 300);
    vec![
        ("a", "superseded"),
        ("b", "removed"),
        ("a", "live"),
        ("b", "removed"),
        ("c", "expired"),
        ("d", "live"),
        ("e", "removed"),
        ("e", "removed"),
        ("e", "live"),
        ("f", "superseded"),
        ("f", "removed"),
        ("f", "removed"),
        ("g", "superseded"),
        ("g", "live"),
    ]
}

fn statuses(v: &Value) -> Vec<(String, String)> {
    v["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn owned(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn every_status_follows_the_write_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new(4);
    b.key_expire = true;
    let expected = sequence(&mut b);
    let path = b.write(dir.path(), "seq", 4, &[]);
    let p = path.to_str().unwrap();
    let h = run_json(&["dump", "--history", "--json", "--now", "200", p]);
    assert_eq!(statuses(&h), owned(&expected));
    let recs = h["records"].as_array().unwrap();
    // Offsets are data-file offsets: the first record follows the 4-byte header and the holder.
    assert_eq!(recs[0]["offset"], 8);
    assert_eq!(recs[0]["index"], 0);
    assert_eq!(recs[4]["expire_at"], 100);
    assert_eq!(recs[0]["expire_at"], Value::Null);
    // A deletion marker has an empty payload and no guesses.
    assert_eq!(recs[3]["value_hex"], "");
    assert_eq!(recs[3]["guesses"], Value::Array(vec![]));
    // value_hex is the payload without the expire suffix.
    assert_eq!(recs[5]["value_hex"], "04");
    assert_eq!(recs[5]["expire_at"], 1000);

    // The live view agrees: a, d, e, g.
    let d = run_json(&["dump", "--json", "--now", "200", p]);
    let keys: Vec<&str> = d["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["a", "d", "e", "g"]);
    assert_eq!(d["meta"]["key_expire"], true);
    assert_eq!(d["meta"]["crc_ok"], true);
    assert_eq!(d["meta"]["version"], 4);

    // Later, d expires too; earlier, c was still live.
    let later = run_json(&["dump", "--history", "--json", "--now", "5000", p]);
    assert_eq!(statuses(&later)[5].1, "expired");
    assert_eq!(statuses(&later)[13].1, "expired");
    let earlier = run_json(&["dump", "--history", "--json", "--now", "50", p]);
    assert_eq!(statuses(&earlier)[4].1, "live");

    // The readable table shows the statuses too.
    let out = run(&["dump", "--history", "--now", "200", p]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("superseded") && text.contains("expired") && text.contains("removed"));
    assert!(
        text.contains("14 records: 4 live, 3 superseded, 6 removed, 1 expired"),
        "{text}"
    );
}

#[test]
fn statuses_without_key_expiration_meta_version_3() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new(4);
    let expected = sequence(&mut b);
    let path = b.write(dir.path(), "seq3", 3, &[]);
    let h = run_json(&["dump", "--history", "--json", path.to_str().unwrap()]);
    // Without key expiration nothing expires: c and the last g are live, no suffix is split off.
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, s)| {
            let s = if *s == "expired" { "live" } else { s };
            (k.to_string(), s.to_string())
        })
        .collect();
    assert_eq!(statuses(&h), expected);
    assert_eq!(h["records"][4]["expire_at"], Value::Null);
    assert_eq!(h["records"][4]["value_hex"], "03");
}

#[test]
fn carving_reports_stale_records_after_the_region() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new(4);
    b.set("now1", &str_payload("current"), 0);
    // The tail: the end of an old value, then old records, then zeros.
    let mut old = Builder::new(1);
    old.set("old1", &str_payload("first value"), 0)
        .remove("old2")
        .set("old3", &i32_payload(42), 0);
    let mut tail = b"ld text from an older value".to_vec();
    let old_records_at = tail.len();
    tail.extend_from_slice(&old.records);
    let path = b.write(dir.path(), "carve", 4, &tail);
    let p = path.to_str().unwrap();
    let region_len = b.region().len();

    let plain = run_json(&["dump", "--history", "--json", p]);
    assert_eq!(plain["records"].as_array().unwrap().len(), 1);

    let h = carve_json(p, &[]);
    let recs = h["records"].as_array().unwrap();
    let stale: Vec<&Value> = recs.iter().filter(|r| r["status"] == "stale").collect();
    let keys: Vec<&str> = stale.iter().map(|r| r["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["old1", "old2", "old3"], "{recs:?}");
    assert_eq!(
        stale[0]["offset"].as_u64().unwrap() as usize,
        4 + region_len + old_records_at
    );
    assert_eq!(stale[0]["index"], 1);
    assert_eq!(stale[2]["index"], 3);
    assert_eq!(stale[2]["value_hex"], "2a");
    assert_eq!(stale[2]["guesses"][0]["type"], "i32");
    assert_eq!(stale[2]["guesses"][0]["value"], 42);
    assert_eq!(stale[1]["value_hex"], "");
    // Stale records never enter the live view.
    let d = run_json(&["dump", "--json", p]);
    assert_eq!(d["entries"].as_array().unwrap().len(), 1);
    // --carve needs --history.
    let err = run(&["dump", "--carve", p]);
    assert!(!err.status.success());
}

#[test]
fn carving_corpus_stores() {
    let corpus = corpus();
    // A cleared plaintext store: empty region, old records after it.
    let p = corpus.join("v1.2.16/cleared");
    let h = carve_json(&p, &[]);
    let recs = h["records"].as_array().unwrap();
    assert!(recs.len() > 5, "cleared store should carve old records");
    assert!(recs.iter().all(|r| r["status"] == "stale"));
    let d = run_json(&["dump", "--json", p.to_str().unwrap()]);
    assert_eq!(d["entries"].as_array().unwrap().len(), 0);

    // An encrypted store: stale ciphertext decrypts with the same key (CFB self-synchronises).
    let p = corpus.join("v2.4.2/aes128");
    let h = carve_json(&p, &["--crypt-key", "mmkv-conformance"]);
    let recs = h["records"].as_array().unwrap();
    let stale: Vec<&Value> = recs.iter().filter(|r| r["status"] == "stale").collect();
    assert!(
        stale.len() > 5,
        "expected stale records, got {}",
        stale.len()
    );
    // The workload's keys are k<N>, 键<N>, 🔑 key <N> or runs of k: most carved keys look like them.
    let workload_like = stale
        .iter()
        .filter(|r| {
            let k = r["key"].as_str().unwrap();
            k.starts_with('k') || k.starts_with('键') || k.starts_with('🔑')
        })
        .count();
    assert!(
        workload_like * 10 >= stale.len() * 9,
        "{workload_like} of {} carved keys look like workload keys",
        stale.len()
    );
}

/// A store with `width`-byte holder and meta `version`; data header set to the region size.
fn versioned_store(dir: &std::path::Path, width: usize, version: u32) -> std::path::PathBuf {
    let mut b = Builder::new(width);
    b.set("int", &i32_payload(-7), 0)
        .set("text", &str_payload("héllo"), 0)
        .set("gone", &i32_payload(1), 0)
        .remove("gone");
    b.write(dir, &format!("h{width}v{version}"), version, &[])
}

#[test]
fn holder_widths_1_to_4_and_meta_versions_1_to_4() {
    let dir = tempfile::tempdir().unwrap();
    for width in 1..=4 {
        for version in 1..=4 {
            let path = versioned_store(dir.path(), width, version);
            let p = path.to_str().unwrap();
            let d = run_json(&["dump", "--json", p]);
            let ctx = format!("holder {width}, meta v{version}");
            assert_eq!(d["meta"]["version"], version, "{ctx}");
            let entries = d["entries"].as_array().unwrap();
            let keys: Vec<&str> = entries.iter().map(|e| e["key"].as_str().unwrap()).collect();
            assert_eq!(keys, ["int", "text"], "{ctx}");
            assert_eq!(entries[0]["guesses"][0]["value"], -7, "{ctx}");
            assert_eq!(entries[1]["guesses"][0]["value"], "héllo", "{ctx}");
            let h = run_json(&["dump", "--history", "--json", p]);
            assert_eq!(
                h["records"][0]["offset"].as_u64().unwrap() as usize,
                4 + width,
                "{ctx}"
            );
        }
    }
    // Meta version 4 with the v2.4.0+ data header of 0: the size comes from the meta.
    let path = versioned_store(dir.path(), 4, 4);
    let mut data = std::fs::read(&path).unwrap();
    data[0..4].copy_from_slice(&[0, 0, 0, 0]);
    std::fs::write(&path, &data).unwrap();
    let d = run_json(&["dump", "--json", path.to_str().unwrap()]);
    assert_eq!(d["entries"].as_array().unwrap().len(), 2);
    // Meta version 2 with a zero data header: the size comes from the header, so the region
    // is empty and its crc (0) is not the meta's; pre-v3 metas have no fallback: the official
    // default discards (an error here), OnErrorRecover reads the empty region.
    let path = versioned_store(dir.path(), 4, 2);
    let mut data = std::fs::read(&path).unwrap();
    data[0..4].copy_from_slice(&[0, 0, 0, 0]);
    std::fs::write(&path, &data).unwrap();
    let err = run_fail(&["dump", "--json", path.to_str().unwrap()]);
    assert!(err.contains("discards"), "{err}");
    let d = run_json(&["dump", "--json", "--recover", path.to_str().unwrap()]);
    assert_eq!(d["entries"].as_array().unwrap().len(), 0);
    assert_eq!(d["meta"]["actual_size"], 0);
    assert_eq!(d["meta"]["region"]["source"], "recovered");
}

#[test]
fn type_pins_replace_guesses() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new(4);
    b.set("n", &i32_payload(65), 0)
        .set("s", &str_payload("hi"), 0)
        .set("f", &2.5f64.to_le_bytes(), 0);
    let path = b.write(dir.path(), "pins", 4, &[]);
    let p = path.to_str().unwrap();
    let d = run_json(&["dump", "--json", p]);
    let e = d["entries"].as_array().unwrap();
    // Inference: f64, i32 (with bool not applicable), string first.
    assert_eq!(e[0]["key"], "f");
    assert_eq!(
        e[0]["guesses"][0],
        serde_json::json!({"type": "f64", "value": 2.5})
    );
    assert_eq!(
        e[1]["guesses"][0],
        serde_json::json!({"type": "i32", "value": 65})
    );
    assert_eq!(
        e[2]["guesses"][0],
        serde_json::json!({"type": "string", "value": "hi"})
    );
    // Pins: n as bool, s as bytes.
    let d = run_json(&["dump", "--json", "--type", "n=bool", "--type", "s=bytes", p]);
    let e = d["entries"].as_array().unwrap();
    assert_eq!(
        e[1]["guesses"],
        serde_json::json!([{"type": "bool", "value": true}])
    );
    assert_eq!(
        e[2]["guesses"],
        serde_json::json!([{"type": "bytes", "value": "6869"}])
    );
    assert_eq!(e[0]["guesses"][0]["type"], "f64");
    // A bad pin is an error naming it.
    let err = run_fail(&["dump", "--type", "n=complex", p]);
    assert!(err.contains("complex"), "{err}");
}
