//! `mmkv watch`: a test thread rewrites a store the way the official writer does (data first, then
//! the meta, both in place — the reader maps the meta file, so it is never truncated) and the
//! watcher reports each change; Ctrl-C / SIGTERM end it with status 0.

mod common;

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// Overwrites `path` from offset 0 without truncating it.
fn overwrite(path: &Path, bytes: &[u8]) {
    let mut f = OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
}

/// Rewrites the store in place with `region` and meta `sequence`.
fn rewrite(dir: &Path, name: &str, region: &[u8], sequence: u32) {
    let tmp = tempfile::tempdir().unwrap();
    write_store(tmp.path(), name, region, 4, false, &[], None);
    let data = std::fs::read(tmp.path().join(name)).unwrap();
    let mut meta = std::fs::read(tmp.path().join(format!("{name}.crc"))).unwrap();
    meta[8..12].copy_from_slice(&sequence.to_le_bytes());
    overwrite(&dir.join(name), &data);
    overwrite(&dir.join(format!("{name}.crc")), &meta);
}

/// Reads stdout lines of a child on a thread.
fn lines(child: &mut Child) -> mpsc::Receiver<String> {
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn next_json(rx: &mpsc::Receiver<String>) -> Value {
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("a line from mmkv watch");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad JSON line {line:?}: {e}"))
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        assert!(start.elapsed() < within, "mmkv watch did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn watch_reports_each_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new(4);
    b.set("a", &[1], 0).set("b", &[2], 0);
    b.write(dir.path(), "w", 4, &[]);
    let path = dir.path().join("w");

    let mut child = mmkv()
        .args(["watch", "--interval-ms", "20", "--duration-ms", "15000"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines(&mut child);
    let first = next_json(&rx);
    let keys: Vec<&str> = first["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["a", "b"]);
    assert_eq!(first["meta"]["sequence"], 1);
    assert_eq!(first["entries"][0]["value_hex"], "01");

    // Change 1: append (same sequence, the tail grows): a = 3, c = 4.
    b.set("a", &[3], 0).set("c", &[4], 0);
    rewrite(dir.path(), "w", &b.region(), 1);
    let c1 = next_json(&rx);
    assert_eq!(c1["sequence"], 1);
    assert_eq!(
        c1["set"],
        serde_json::json!([
            {"key_hex": "61", "value_hex": "03", "expire_at": null},
            {"key_hex": "63", "value_hex": "04", "expire_at": null}
        ])
    );
    assert_eq!(c1["removed"], serde_json::json!([]));

    // Change 2: a full write-back (new sequence) without b.
    let mut full = Builder::new(4);
    full.set("a", &[3], 0).set("c", &[4], 0);
    rewrite(dir.path(), "w", &full.region(), 2);
    let c2 = next_json(&rx);
    assert_eq!(c2["sequence"], 2);
    assert_eq!(c2["set"], serde_json::json!([]));
    assert_eq!(c2["removed"], serde_json::json!(["62"]));

    // Change 3: a removal marker appended.
    full.remove("c");
    rewrite(dir.path(), "w", &full.region(), 2);
    let c3 = next_json(&rx);
    assert_eq!(c3["removed"], serde_json::json!(["63"]));

    // SIGTERM ends it with status 0.
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let st = wait_exit(&mut child, Duration::from_secs(10));
    assert_eq!(st.code(), Some(0), "SIGTERM should end watch with 0");
}

#[test]
fn watch_ends_after_duration_and_on_sigint() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new(4);
    b.set("a", &[1], 0);
    let path = b.write(dir.path(), "d", 4, &[]);

    let start = Instant::now();
    let out = mmkv()
        .args(["watch", "--interval-ms", "50", "--duration-ms", "300"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(start.elapsed() < Duration::from_secs(10));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "no change, one line: {text}");

    let mut child = mmkv()
        .args(["watch", "--interval-ms", "50"])
        .arg(&path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines(&mut child);
    next_json(&rx);
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let st = wait_exit(&mut child, Duration::from_secs(10));
    assert_eq!(st.code(), Some(0), "Ctrl-C should end watch with 0");
}

#[test]
fn watch_refuses_what_dump_refuses() {
    let p = corpus().join("v2.4.2/aes128");
    let err = run_fail(&["watch", "--duration-ms", "100", p.to_str().unwrap()]);
    assert!(err.contains("looks encrypted"), "{err}");
    // With the key, it works on an encrypted store.
    let out = run(&[
        "watch",
        "--duration-ms",
        "100",
        "--crypt-key",
        "mmkv-conformance",
        p.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let first: Value =
        serde_json::from_slice(out.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
    let dump = run_json(&[
        "dump",
        "--json",
        "--crypt-key",
        "mmkv-conformance",
        p.to_str().unwrap(),
    ]);
    assert_eq!(first["entries"], dump["entries"]);
    assert_eq!(first["meta"], dump["meta"]);
}
