//! Every store of every tag in the golden corpora (`../corpus`, written by the official
//! library) must read back exactly as its manifest says.
//!
//! Clock choice: expiring keys were written with durations of 1 s (already expired when the
//! manifest was written), ~19 years, ~63 years or none. The test freezes the clock at one second
//! before the earliest `expire_at` in the tag's manifest: every long expiry is still in the
//! future and every 1-second expiry (which happened at corpus-creation time, decades earlier)
//! is in the past. Tags without expiring keys use the system clock (no store there has key
//! expiration on).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mmkv_reader::{Clock, FixedClock, Options, Snapshot, Store, SystemClock};
use serde_json::Value;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_str().expect("string item"))
        .collect()
}

/// Checks one entry; returns a description of the mismatch.
fn check_entry(
    snap: &Snapshot,
    store: &Store,
    key: &str,
    ty: &str,
    value: &Value,
) -> Option<String> {
    macro_rules! cmp {
        ($got:expr, $want:expr) => {{
            let got = $got;
            let want = $want;
            if got != want {
                return Some(format!("type {ty}: got {got:?}, want {want:?}"));
            }
        }};
    }
    let s = || value.as_str().expect("string value");
    match ty {
        "bool" => cmp!(snap.get_bool(key), Some(value.as_bool().expect("bool"))),
        "i32" => cmp!(snap.get_i32(key), Some(s().parse::<i32>().unwrap())),
        "u32" => cmp!(snap.get_u32(key), Some(s().parse::<u32>().unwrap())),
        "i64" => cmp!(snap.get_i64(key), Some(s().parse::<i64>().unwrap())),
        "u64" => cmp!(snap.get_u64(key), Some(s().parse::<u64>().unwrap())),
        "f32" => cmp!(
            snap.get_f32(key).map(f32::to_bits),
            Some(u32::from_str_radix(s(), 16).unwrap())
        ),
        "f64" => cmp!(
            snap.get_f64(key).map(f64::to_bits),
            Some(u64::from_str_radix(s(), 16).unwrap())
        ),
        "string" => {
            cmp!(snap.get_str(key), Some(s()));
            cmp!(store.get_string(key), Some(s().to_string()));
        }
        "bytes" => {
            cmp!(snap.get_bytes(key), Some(&unhex(s())[..]));
            cmp!(store.get_bytes(key), Some(unhex(s())));
        }
        "strings" => cmp!(
            snap.get_string_vec(key),
            Some(
                strs(value)
                    .into_iter()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            )
        ),
        "vec_i32" => cmp!(
            snap.get_vec_i32(key),
            Some(
                strs(value)
                    .iter()
                    .map(|x| x.parse().unwrap())
                    .collect::<Vec<i32>>()
            )
        ),
        "vec_u32" => cmp!(
            snap.get_vec_u32(key),
            Some(
                strs(value)
                    .iter()
                    .map(|x| x.parse().unwrap())
                    .collect::<Vec<u32>>()
            )
        ),
        "vec_i64" => cmp!(
            snap.get_vec_i64(key),
            Some(
                strs(value)
                    .iter()
                    .map(|x| x.parse().unwrap())
                    .collect::<Vec<i64>>()
            )
        ),
        "vec_u64" => cmp!(
            snap.get_vec_u64(key),
            Some(
                strs(value)
                    .iter()
                    .map(|x| x.parse().unwrap())
                    .collect::<Vec<u64>>()
            )
        ),
        "vec_f32" => cmp!(
            snap.get_vec_f32(key)
                .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
            Some(
                strs(value)
                    .iter()
                    .map(|x| u32::from_str_radix(x, 16).unwrap())
                    .collect::<Vec<_>>()
            )
        ),
        "vec_f64" => cmp!(
            snap.get_vec_f64(key)
                .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
            Some(
                strs(value)
                    .iter()
                    .map(|x| u64::from_str_radix(x, 16).unwrap())
                    .collect::<Vec<_>>()
            )
        ),
        other => return Some(format!("unknown manifest type {other}")),
    }
    None
}

fn check_absent(snap: &Snapshot, store: &Store, key: &str) -> Option<String> {
    let any = snap.contains(key)
        || store.contains(key)
        || snap.raw_value(key).is_some()
        || snap.get_bool(key).is_some()
        || snap.get_i32(key).is_some()
        || snap.get_u32(key).is_some()
        || snap.get_i64(key).is_some()
        || snap.get_u64(key).is_some()
        || snap.get_f32(key).is_some()
        || snap.get_f64(key).is_some()
        || snap.get_bytes(key).is_some()
        || snap.get_str(key).is_some()
        || snap.get_string_vec(key).is_some()
        || snap.get_vec_i32(key).is_some()
        || snap.get_vec_u32(key).is_some()
        || snap.get_vec_i64(key).is_some()
        || snap.get_vec_u64(key).is_some()
        || snap.get_vec_f32(key).is_some()
        || snap.get_vec_f64(key).is_some()
        || snap.expire_at(key).is_some()
        || store.get_i64(key).is_some()
        || store.get_bytes(key).is_some();
    any.then(|| "absent key reads as present".to_string())
}

#[test]
fn every_store_of_every_tag() {
    let dir = corpus_dir();
    let mut tags: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("manifest.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    tags.sort();
    assert_eq!(
        tags.len(),
        50,
        "expected 50 corpus tags, found {}",
        tags.len()
    );

    let mut failures = Vec::new();
    let mut stores_checked = 0usize;
    let mut entries_checked = 0usize;
    let mut absent_checked = 0usize;
    for tag in &tags {
        let tdir = dir.join(tag);
        let manifest: Value =
            serde_json::from_slice(&std::fs::read(tdir.join("manifest.json")).unwrap()).unwrap();
        let stores = manifest["stores"].as_array().expect("stores");
        let min_expire = stores
            .iter()
            .flat_map(|s| s["entries"].as_array().unwrap().iter())
            .filter_map(|e| e.get("expire_at").and_then(Value::as_u64))
            .min();
        let clock: Arc<dyn Clock> = match min_expire {
            Some(t) => Arc::new(FixedClock(t as u32 - 1)),
            None => Arc::new(SystemClock),
        };
        for s in stores {
            let id = s["id"].as_str().unwrap();
            let mut opts = Options::new()
                .aes256(s["aes256"].as_bool().unwrap())
                .clock(clock.clone());
            if let Some(k) = s["crypt_key_hex"].as_str() {
                opts = opts.crypt_key(unhex(k));
            }
            let store = match Store::open(tdir.join(id), opts) {
                Ok(st) => st,
                Err(e) => {
                    failures.push(format!("{tag}/{id}: open failed: {e}"));
                    continue;
                }
            };
            stores_checked += 1;
            let snap = store.snapshot();
            let count = s["count"].as_u64().unwrap() as usize;
            if snap.len() != count || store.len() != count {
                failures.push(format!("{tag}/{id}: len {} != count {count}", snap.len()));
            }
            if snap.key_expire() != s["key_expire"].as_bool().unwrap() {
                failures.push(format!("{tag}/{id}: key_expire flag mismatch"));
            }
            let mut want_keys = BTreeSet::new();
            for e in s["entries"].as_array().unwrap() {
                let key = e["key"].as_str().unwrap();
                want_keys.insert(key.as_bytes().to_vec());
                entries_checked += 1;
                if let Some(msg) =
                    check_entry(&snap, &store, key, e["type"].as_str().unwrap(), &e["value"])
                {
                    failures.push(format!("{tag}/{id}: key {key:?}: {msg}"));
                }
                let want_exp = e.get("expire_at").and_then(Value::as_u64).unwrap_or(0) as u32;
                if snap.expire_at(key) != Some(want_exp) {
                    failures.push(format!(
                        "{tag}/{id}: key {key:?}: expire_at {:?} != {want_exp}",
                        snap.expire_at(key)
                    ));
                }
            }
            let got_keys: BTreeSet<Vec<u8>> = snap.keys().map(<[u8]>::to_vec).collect();
            if got_keys != want_keys {
                failures.push(format!(
                    "{tag}/{id}: key set differs ({} vs {})",
                    got_keys.len(),
                    want_keys.len()
                ));
            }
            for k in s["absent"].as_array().unwrap() {
                let key = k.as_str().unwrap();
                absent_checked += 1;
                if let Some(msg) = check_absent(&snap, &store, key) {
                    failures.push(format!("{tag}/{id}: key {key:?}: {msg}"));
                }
            }
        }
    }
    eprintln!(
        "corpus: {} tags, {stores_checked} stores, {entries_checked} entries, {absent_checked} absent keys",
        tags.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        stores_checked >= 472,
        "only {stores_checked} stores checked"
    );
}
