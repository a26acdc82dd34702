//! `--format csv|tsv`: Python's `csv` module reads the CSV back into exactly the rows `--json`
//! describes, on stores whose keys and values hold tabs, newlines, quotes, commas and bytes that
//! are not UTF-8; TSV unescapes to the same rows; `scan --format csv` has one row per store.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{delimited, hex, run, run_json, varint, Builder};
use mmkv_inspect::util::utc;
use serde_json::Value;

const PY_CSV: &str = "import csv, io, json, sys\n\
rows = list(csv.reader(io.TextIOWrapper(sys.stdin.buffer, encoding='utf-8', newline='')))\n\
print(json.dumps(rows))\n";

/// Parses CSV text with Python's `csv` module.
fn python_csv(text: &[u8]) -> Vec<Vec<String>> {
    let mut child = Command::new("python3")
        .args(["-c", PY_CSV])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 must be installed to run this test");
    child.stdin.take().unwrap().write_all(text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python csv failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Parses TSV as `mmkv` writes it (fields split on tabs, `\\ \t \n \r` unescaped).
fn parse_tsv(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|line| {
            line.split('\t')
                .map(|f| {
                    let mut out = String::new();
                    let mut it = f.chars();
                    while let Some(c) = it.next() {
                        if c == '\\' {
                            match it.next() {
                                Some('t') => out.push('\t'),
                                Some('n') => out.push('\n'),
                                Some('r') => out.push('\r'),
                                Some('\\') => out.push('\\'),
                                other => panic!("bad escape {other:?} in {f:?}"),
                            }
                        } else {
                            out.push(c);
                        }
                    }
                    out
                })
                .collect()
        })
        .collect()
}

fn text(s: &str) -> Vec<u8> {
    let mut p = Vec::new();
    delimited(&mut p, s.as_bytes());
    p
}

/// A key-expiring store with awkward keys and values, a superseded value and a removal.
fn awkward_store(dir: &Path) -> PathBuf {
    let mut neg = Vec::new();
    varint(&mut neg, u64::MAX); // -1
    let mut b = Builder::new(4);
    b.key_expire = true;
    b.0.set(b"tab\tkey", &text("a\tb"), 0)
        .set(b"new\nline", &text("line1\nline2\r\nline3"), 4_000_000_000)
        .set(b"quo\"te,comma", &text("say \"hi\", then go"), 0)
        .set(b"\xff\xfebin", &[0x03, 0xff, 0x00, 0xfe], 0)
        .set(b"bin value", &[0x04, 0x80, 0x81, 0xff, 0x0a], 0)
        .set(b"neg", &neg, 0)
        .set(b"f", &0.5f64.to_le_bytes(), 2_000_000_000)
        .set(b"tab\tkey", &text("second\tvalue"), 0)
        .remove(b"gone");
    b.write(dir, "awkward", 4, b"")
}

fn s(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// Checks one CSV/TSV row against one JSON entry or record.
fn check_row(row: &[String], j: &Value) {
    let col = |name: &str| -> &str {
        let i = mmkv_inspect::tabular::RECORD_HEADER
            .iter()
            .position(|h| *h == name)
            .unwrap();
        &row[i]
    };
    assert_eq!(col("key"), j["key"].as_str().unwrap());
    assert_eq!(col("key_hex"), j["key_hex"].as_str().unwrap());
    assert_eq!(col("value_hex"), j["value_hex"].as_str().unwrap());
    let expire = j["expire_at"]
        .as_u64()
        .map(|t| utc(t as u32))
        .unwrap_or_default();
    assert_eq!(col("expire_at"), expire);
    match j["guesses"].as_array().unwrap().first() {
        None => {
            assert_eq!(col("type"), "");
            assert_eq!(col("value"), "");
        }
        Some(g) => {
            assert_eq!(col("type"), g["type"].as_str().unwrap());
            match &g["value"] {
                Value::String(t) => assert_eq!(col("value"), t),
                other => {
                    let parsed: Value = serde_json::from_str(col("value")).unwrap();
                    assert_eq!(&parsed, other);
                }
            }
        }
    }
    if let Some(st) = j.get("status") {
        assert_eq!(col("status"), st.as_str().unwrap());
        assert_eq!(col("offset"), s(&j["offset"]));
        assert_eq!(col("index"), s(&j["index"]));
    } else {
        assert_eq!(col("status"), "live");
    }
}

fn check_table(rows: &[Vec<String>], items: &[Value]) {
    assert_eq!(rows[0], mmkv_inspect::tabular::RECORD_HEADER);
    assert_eq!(rows.len(), items.len() + 1, "one row per JSON item");
    for (row, j) in rows[1..].iter().zip(items) {
        assert_eq!(row.len(), 9, "{row:?}");
        check_row(row, j);
    }
}

#[test]
fn csv_and_tsv_hold_the_json_rows() {
    let dir = tempfile::tempdir().unwrap();
    let p = awkward_store(dir.path());
    let p = p.to_str().unwrap();
    let now = ["--now", "1900000000"];
    for history in [false, true] {
        let mut args = vec!["dump", p];
        args.extend(now);
        if history {
            args.push("--history");
        }
        let j = run_json(&[args.clone(), vec!["--json"]].concat());
        let items = j[if history { "records" } else { "entries" }]
            .as_array()
            .unwrap()
            .clone();
        assert!(items.len() >= if history { 9 } else { 7 }, "{items:?}");
        let csv = run(&[args.clone(), vec!["--format", "csv"]].concat());
        assert!(csv.status.success());
        let rows = python_csv(&csv.stdout);
        check_table(&rows, &items);
        let tsv = run(&[args.clone(), vec!["--format", "tsv"]].concat());
        assert!(tsv.status.success());
        let text = String::from_utf8(tsv.stdout).unwrap();
        assert_eq!(
            text.lines().count(),
            items.len() + 1,
            "a value broke a TSV row"
        );
        assert_eq!(parse_tsv(&text), rows, "TSV and CSV rows differ");
        let json_fmt = run_json(&[args.clone(), vec!["--format", "json"]].concat());
        assert_eq!(json_fmt, j);
    }
    // The awkward cells are really there.
    let csv = run(&["dump", p, "--now", "1900000000", "--format", "csv"]);
    let rows = python_csv(&csv.stdout);
    let cell = |key_hex: &str| rows.iter().find(|r| r[4] == key_hex).unwrap().clone();
    assert_eq!(cell(&hex(b"tab\tkey"))[6], "second\tvalue");
    assert_eq!(cell(&hex(b"new\nline"))[6], "line1\nline2\r\nline3");
    assert_eq!(cell(&hex(b"new\nline"))[8], "2096-10-02 07:06:40Z");
    assert_eq!(cell(&hex(b"quo\"te,comma"))[3], "quo\"te,comma");
    assert_eq!(cell(&hex(b"\xff\xfebin"))[3], "\u{fffd}\u{fffd}bin");
    assert_eq!(cell(&hex(b"neg"))[6], "-1");
    assert!(rows.iter().all(|r| r[3] != "gone"));
}

#[test]
fn json_flag_and_format_conflict() {
    let out = run(&["dump", "x", "--json", "--format", "csv"]);
    assert!(!out.status.success());
}

/// Whether a version guess (`v1.1.x`, `v1.2.x`, `v1.1.0-v1.2.x`, `v1.3.0-v2.3.x`, `v2.4.0+`, `v1.3.0+`,
/// `v1.2.x or older`) covers a tag.
fn covers(guess: &str, tag: &str) -> bool {
    let v = |t: &str| -> (u32, u32, u32) {
        let mut it = t.trim_start_matches('v').split('.');
        let mut n = || it.next().and_then(|x| x.parse().ok()).unwrap_or(u32::MAX);
        (n(), n(), n())
    };
    let t = v(tag);
    match guess {
        "v1.1.x" => t.0 == 1 && t.1 == 1,
        "v1.2.x" => t.0 == 1 && t.1 == 2,
        "v1.1.0-v1.2.x" => t.0 == 1 && (1..=2).contains(&t.1),
        "v1.3.0-v2.3.x" => ((1, 3, 0)..(2, 4, 0)).contains(&t),
        "v2.4.0+" => t >= (2, 4, 0),
        "v1.3.0+" => t >= (1, 3, 0),
        "v1.2.x or older" => t < (1, 3, 0),
        _ => false,
    }
}

/// How many stores the corpus manifests under `root` list: every tag's folder (472 stores
/// for v1.1.0-v2.4.2) and the page corpora's (`p16k/<tag>`, `p64k/<tag>`).
fn manifest_stores(root: &Path) -> usize {
    let mut n = 0;
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|f| f == "manifest.json") {
                let m: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
                n += m["stores"].as_array().unwrap().len();
            }
        }
    }
    assert!(
        n >= 472,
        "{n} stores in the manifests under {}",
        root.display()
    );
    n
}

#[test]
fn scan_csv_one_row_per_store() {
    let root = common::corpus();
    let root_s = root.to_str().unwrap();
    let j = run_json(&["scan", root_s, "--json"]);
    let out = run(&["scan", root_s, "--format", "csv"]);
    assert!(out.status.success());
    let rows = python_csv(&out.stdout);
    assert_eq!(rows[0], mmkv_inspect::tabular::SCAN_HEADER);
    let stores = j["stores"].as_array().unwrap();
    assert_eq!(stores.len(), manifest_stores(&root));
    assert_eq!(rows.len(), stores.len() + 1);
    let mut guessed = 0;
    for (row, st) in rows[1..].iter().zip(stores) {
        assert_eq!(row[0], st["path"].as_str().unwrap());
        let num = |v: &Value| v.as_u64().map(|n| n.to_string()).unwrap_or_default();
        assert_eq!(row[1], num(&st["entries"]));
        assert_eq!(row[5], st["encrypted"].as_str().unwrap());
        assert_eq!(
            row[6],
            if st["crc_ok"] == Value::Bool(true) {
                "yes"
            } else {
                "no"
            }
        );
        assert_eq!(row[8], num(&st["meta_version"]));
        assert_eq!(row[9], num(&st["data_size"]));
        assert!(row[7].parse::<u32>().is_ok(), "sequence {row:?}");
        let tag = Path::new(&row[0])
            .parent()
            .and_then(Path::file_name)
            .unwrap()
            .to_str()
            .unwrap();
        if row[11] != "unknown" {
            guessed += 1;
            assert!(
                covers(&row[11], tag),
                "{} guessed {} for {tag}",
                row[0],
                row[11]
            );
        }
    }
    assert!(guessed > 400, "{guessed}");
    let tsv = run(&["scan", root_s, "--format", "tsv"]);
    assert_eq!(parse_tsv(&String::from_utf8(tsv.stdout).unwrap()), rows);
}
