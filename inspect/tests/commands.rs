//! `mmkv get`, `mmkv meta` and `mmkv scan`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use serde_json::Value;

/// `get --json` of every manifest entry of a few stores returns the manifest's value.
#[test]
fn get_returns_manifest_values() {
    let mut checked = 0;
    for tag in ["v1.2.16", "v2.4.2"] {
        let dir = corpus().join(tag);
        let m = manifest(&dir);
        for store in &m.stores {
            let id = store.id.as_str();
            if !["plain", "aes128", "expire"].contains(&id) {
                continue;
            }
            let path = dir.join(id);
            let crypt = crypt_args(store);
            for e in store.entries.iter().take(40) {
                let key = e.key.as_str();
                let ty = e.ty.as_str();
                let mut args = vec!["get", path.to_str().unwrap(), key, "--type", ty, "--json"];
                args.extend(crypt.iter().map(String::as_str));
                let g = run_json(&args);
                let ctx = format!("{tag}/{id} {key} {ty}");
                assert_eq!(g["type"], ty, "{ctx}");
                assert_eq!(g["key"], key, "{ctx}");
                assert_eq!(g["expire_at"], serde_json::json!(e.expire_at));
                let want = &e.value;
                let got = &g["value"];
                let same = match ty {
                    "i32" | "u32" | "i64" | "u64" => {
                        *got == want.as_str().unwrap().parse::<Value>().unwrap()
                    }
                    "f64" => float_bits64(got) == want.as_str().unwrap(),
                    "f32" => float_bits32(got) == want.as_str().unwrap(),
                    "vec_i32" | "vec_u32" | "vec_i64" | "vec_u64" => {
                        same_items(got, want, |v| v.to_string())
                    }
                    "vec_f64" => same_items(got, want, float_bits64),
                    "vec_f32" => same_items(got, want, float_bits32),
                    _ => got == want,
                };
                assert!(same, "{ctx}: got {got}, manifest {want}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 200, "checked {checked}");
}

/// A vector read back (`got`, JSON items rendered by `render`) equals the manifest's vector of
/// strings (`want`), item by item.
fn same_items(got: &Value, want: &Value, render: impl Fn(&Value) -> String) -> bool {
    let want: Vec<String> = want
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    got.as_array()
        .unwrap()
        .iter()
        .map(render)
        .collect::<Vec<_>>()
        == want
}

fn float_bits64(v: &Value) -> String {
    let x = match v {
        Value::String(s) if s == "inf" => f64::INFINITY,
        Value::String(s) if s == "-inf" => f64::NEG_INFINITY,
        other => other.as_f64().unwrap(),
    };
    mmkv_corpus::encoding::f64_text(x)
}

fn float_bits32(v: &Value) -> String {
    let x = match v {
        Value::String(s) if s == "inf" => f32::INFINITY,
        Value::String(s) if s == "-inf" => f32::NEG_INFINITY,
        // The JSON number is the shortest decimal that round-trips through f32.
        other => other.to_string().parse::<f32>().unwrap(),
    };
    mmkv_corpus::encoding::f32_text(x)
}

#[test]
fn get_plain_text_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new(4);
    let mut s = Vec::new();
    delimited(&mut s, "héllo wörld".as_bytes());
    let mut n = Vec::new();
    varint(&mut n, (-42i64) as u64);
    b.set("s", &s, 0)
        .set("n", &n, 0)
        .set("gone", &n, 0)
        .remove("gone");
    let p = b.write(dir.path(), "get", 4, &[]);
    let ps = p.to_str().unwrap();
    let out = run(&["get", ps, "s", "--type", "string"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "héllo wörld\n");
    let out = run(&["get", ps, "n", "--type", "i32"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "-42\n");
    let out = run(&["get", ps, "n", "--type", "u64"]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}\n", (-42i64) as u64)
    );
    let out = run(&["get", ps, "73", "--key-hex", "--type", "bytes"]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}\n", hex("héllo wörld".as_bytes()))
    );
    let err = run_fail(&["get", ps, "gone", "--type", "i32"]);
    assert!(err.contains("not present") && err.contains("gone"), "{err}");
    let err = run_fail(&["get", ps, "never", "--type", "i32"]);
    assert!(err.contains("not present"), "{err}");
    let out = run(&["get", ps, "s", "--type", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nosuch"));

    // Expired keys say so.
    let mut b = Builder::new(4);
    b.key_expire = true;
    b.set("e", &[7], 100);
    let p = b.write(dir.path(), "exp", 4, &[]);
    let ps = p.to_str().unwrap();
    let err = run_fail(&["get", ps, "e", "--type", "i32", "--now", "200"]);
    assert!(err.contains("expired at 100"), "{err}");
    let out = run(&["get", ps, "e", "--type", "i32", "--now", "50"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "7\n");
}

#[test]
fn meta_prints_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::new(4);
    b.key_expire = true;
    b.set("k", &[1], 0);
    let region = b.region();
    let p = write_store(dir.path(), "m", &region, 4, true, &[], Some([0xab; 16]));
    for arg in [
        p.to_str().unwrap().to_string(),
        format!("{}.crc", p.display()),
    ] {
        let m = run_json(&["meta", "--json", &arg]);
        assert_eq!(m["version"], 4);
        assert_eq!(m["sequence"], 1);
        assert_eq!(m["crc"], crc32fast::hash(&region));
        assert_eq!(m["iv_hex"], "ab".repeat(16));
        assert_eq!(m["actual_size"], region.len());
        assert_eq!(m["last_confirmed_size"], region.len());
        assert_eq!(m["last_confirmed_crc"], crc32fast::hash(&region));
        assert_eq!(m["flags"], 1);
        assert_eq!(m["key_expire"], true);
    }
    let out = run(&["meta", p.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("key_expire           true"), "{text}");
    // A missing meta file is an error naming it.
    let err = run_fail(&["meta", dir.path().join("none").to_str().unwrap()]);
    assert!(err.contains("none.crc"), "{err}");
    // Every corpus meta parses and agrees with `dump`.
    for tag in tags() {
        let d = tag.join("plain");
        let m = run_json(&["meta", "--json", d.to_str().unwrap()]);
        let dump = run_json(&["dump", "--json", d.to_str().unwrap()]);
        assert_eq!(m["version"], dump["meta"]["version"]);
        assert_eq!(m["sequence"], dump["meta"]["sequence"]);
        assert_eq!(m["crc"], dump["meta"]["crc"]);
    }
}

/// Every file under `dir` with its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.display().to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn scan_whole_corpus() {
    let root = corpus();
    let before = tree(&root);
    let data_files = before
        .keys()
        .filter(|p| !p.ends_with(".crc") && !p.ends_with(".json") && !p.ends_with(".md"))
        .count();
    let s = run_json(&["scan", "--json", root.to_str().unwrap()]);
    assert_eq!(before, tree(&root), "scan must not write");
    let rows = s["stores"].as_array().unwrap();
    assert_eq!(rows.len(), data_files);
    assert!(rows.len() >= 472);
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for tag in tags() {
        let m = manifest(&tag);
        for store in &m.stores {
            let path = tag.join(&store.id).display().to_string();
            let row = rows
                .iter()
                .find(|r| r["path"] == path.as_str())
                .unwrap_or_else(|| panic!("{path} not in scan"));
            assert_eq!(row["error"], Value::Null, "{path}");
            assert_eq!(row["crc_ok"], true, "{path}");
            assert!(row["meta_version"].is_u64(), "{path}");
            assert!(row["data_size"].is_u64(), "{path}");
            let enc = row["encrypted"].as_str().unwrap();
            *counts.entry(enc.to_string()).or_default() += 1;
            if store.crypt_key_hex.is_none() {
                if store.count > 0 {
                    assert_eq!(enc, "no", "{path}");
                } else {
                    assert!(enc == "no" || enc == "unknown", "{path}: {enc}");
                }
                assert_eq!(row["entries"], store.count, "{path}");
                assert!(row["superseded"].is_u64() && row["removed"].is_u64());
            } else {
                assert!(enc == "yes" || enc == "unknown", "{path}: {enc}");
            }
        }
    }
    assert!(counts["yes"] > 100 && counts["no"] > 100, "{counts:?}");

    // The table form lists every store too.
    let out = run(&["scan", root.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!("{data_files} stores, 0 unreadable")),
        "{}",
        text.lines().last().unwrap_or("")
    );
}

#[test]
fn scan_tries_a_given_key_on_encrypted_stores() {
    let tag = corpus().join("v2.4.2");
    let m = manifest(&tag);
    let s = run_json(&[
        "scan",
        "--json",
        "--crypt-key",
        "mmkv-conformance",
        tag.to_str().unwrap(),
    ]);
    let rows = s["stores"].as_array().unwrap();
    for store in &m.stores {
        let id = &store.id;
        let path = tag.join(id).display().to_string();
        let row = rows.iter().find(|r| r["path"] == path.as_str()).unwrap();
        match store.crypt_key_hex.as_deref() {
            // Plaintext stores are read without the key.
            None => assert_eq!(row["entries"], store.count, "{id}"),
            Some(k) if k == hex(b"mmkv-conformance") && !store.aes256 => {
                assert_eq!(row["encrypted"], "yes", "{id}");
                assert_eq!(row["entries"], store.count, "{id}");
                assert_eq!(row["error"], Value::Null, "{id}");
            }
            Some(_) => {
                assert_eq!(row["encrypted"], "yes", "{id}");
                assert_eq!(row["entries"], Value::Null, "{id}");
                let err = row["error"].as_str().unwrap();
                assert!(err.contains("does not decrypt"), "{id}: {err}");
            }
        }
    }
}

#[test]
fn scan_lists_unreadable_stores_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("data/data/app/files/mmkv");
    std::fs::create_dir_all(&sub).unwrap();
    let mut b = Builder::new(4);
    b.set("a", &[1], 0)
        .set("a", &[2], 0)
        .set("b", &[3], 0)
        .remove("b");
    b.write(&sub, "mmkv.default", 4, &[]);
    b.write(&sub, "good", 3, &[]);
    std::fs::write(sub.join("broken"), [0u8; 4096]).unwrap();
    std::fs::write(sub.join("broken.crc"), [1u8; 5]).unwrap();
    std::fs::write(sub.join("orphan.crc"), [0u8; 4096]).unwrap();
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("mmkv.default"), [0u8; 4096]).unwrap(); // no meta
    std::fs::write(other.join("notes.txt"), b"not a store").unwrap();
    // An encrypted store: a region that does not parse as plaintext.
    let mut region = padded_varint(0, 4);
    region.extend_from_slice(&[0xff; 64]);
    write_store(&other, "enc", &region, 4, false, &[], Some([7; 16]));

    let before = tree(dir.path());
    let s = run_json(&["scan", "--json", dir.path().to_str().unwrap()]);
    assert_eq!(before, tree(dir.path()));
    let rows = s["stores"].as_array().unwrap();
    let by_name: BTreeMap<String, &Value> = rows
        .iter()
        .map(|r| {
            let p = Path::new(r["path"].as_str().unwrap());
            let parent = p.parent().unwrap().file_name().unwrap().to_string_lossy();
            (
                format!("{parent}/{}", p.file_name().unwrap().to_string_lossy()),
                r,
            )
        })
        .collect();
    let names: Vec<&str> = by_name.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "mmkv/broken",
            "mmkv/good",
            "mmkv/mmkv.default",
            "mmkv/orphan",
            "other/enc",
            "other/mmkv.default"
        ]
    );
    let good = by_name["mmkv/good"];
    assert_eq!(good["entries"], 1);
    assert_eq!(good["superseded"], 1);
    assert_eq!(good["removed"], 2);
    assert_eq!(good["encrypted"], "no");
    assert_eq!(good["meta_version"], 3);
    assert_eq!(good["crc_ok"], true);
    assert_eq!(by_name["mmkv/mmkv.default"]["entries"], 1);
    assert!(by_name["mmkv/broken"]["error"]
        .as_str()
        .unwrap()
        .contains("short"));
    assert!(by_name["mmkv/orphan"]["error"]
        .as_str()
        .unwrap()
        .contains("not found"));
    assert!(by_name["other/mmkv.default"]["error"]
        .as_str()
        .unwrap()
        .contains(".crc"));
    assert_eq!(by_name["other/enc"]["encrypted"], "yes");
    assert_eq!(by_name["other/enc"]["entries"], Value::Null);
    // Scanning a file or a missing directory is an error.
    run_fail(&["scan", dir.path().join("nope").to_str().unwrap()]);
    run_fail(&["scan", sub.join("good").to_str().unwrap()]);
}
