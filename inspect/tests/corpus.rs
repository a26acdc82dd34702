//! `mmkv dump --json` and `mmkv dump --history --json` on every store of every corpus tag:
//! the live entries are exactly the manifest's entries (values compared by decoding `value_hex`
//! with the reader's getter semantics for the manifest's type).

mod common;

use std::collections::BTreeMap;

use common::*;
use mmkv_corpus::encoding::{boolean, f32_text, f64_text, items, text};
use mmkv_reader::decode::{self, ValueType};
use serde_json::Value;

/// The manifest's string items (`strings`, and the integer and float vectors' decimal and
/// bit-pattern texts).
fn strs(v: &Value) -> Vec<String> {
    items(v, |x| text(x, "vector item").map(str::to_string)).unwrap()
}

/// Checks that `payload` holds the manifest's typed value.
fn check_value(ctx: &str, ty: &str, value: &Value, payload: &[u8]) {
    let parsed: ValueType = ty
        .parse()
        .unwrap_or_else(|e| panic!("{ctx}: manifest type: {e}"));
    // No wildcard arm: a type added to the reader's value table fails to compile here until
    // this check handles it.
    let ok = match parsed {
        ValueType::Bool => decode::as_bool(payload) == value.as_bool(),
        ValueType::I32 => {
            decode::as_i32(payload).map(|v| v.to_string()).as_deref() == value.as_str()
        }
        ValueType::U32 => {
            decode::as_u32(payload).map(|v| v.to_string()).as_deref() == value.as_str()
        }
        ValueType::I64 => {
            decode::as_i64(payload).map(|v| v.to_string()).as_deref() == value.as_str()
        }
        ValueType::U64 => {
            decode::as_u64(payload).map(|v| v.to_string()).as_deref() == value.as_str()
        }
        ValueType::F32 => decode::as_f32(payload).map(f32_text).as_deref() == value.as_str(),
        ValueType::F64 => decode::as_f64(payload).map(f64_text).as_deref() == value.as_str(),
        ValueType::String => decode::as_str(payload) == value.as_str(),
        ValueType::Bytes => decode::as_bytes(payload).map(hex).as_deref() == value.as_str(),
        ValueType::Strings => decode::as_string_vec(payload) == Some(strs(value)),
        ValueType::VecI32 => {
            decode::as_vec_i32(payload).map(|v| v.iter().map(|x| x.to_string()).collect())
                == Some(strs(value))
        }
        ValueType::VecU32 => {
            decode::as_vec_u32(payload).map(|v| v.iter().map(|x| x.to_string()).collect())
                == Some(strs(value))
        }
        ValueType::VecI64 => {
            decode::as_vec_i64(payload).map(|v| v.iter().map(|x| x.to_string()).collect())
                == Some(strs(value))
        }
        ValueType::VecU64 => {
            decode::as_vec_u64(payload).map(|v| v.iter().map(|x| x.to_string()).collect())
                == Some(strs(value))
        }
        ValueType::VecF32 => {
            decode::as_vec_f32(payload).map(|v| v.into_iter().map(f32_text).collect())
                == Some(strs(value))
        }
        ValueType::VecF64 => {
            decode::as_vec_f64(payload).map(|v| v.into_iter().map(f64_text).collect())
                == Some(strs(value))
        }
        ValueType::VecBool => {
            decode::as_vec_bool(payload) == Some(items(value, |x| boolean(x, "vec_bool")).unwrap())
        }
    };
    assert!(ok, "{ctx}: payload {} is not {ty} {value}", hex(payload));
}

/// key -> (value_hex, expire_at) from a list of JSON entries/records.
fn by_key<'a>(items: impl Iterator<Item = &'a Value>) -> BTreeMap<String, (String, Option<u64>)> {
    let mut m = BTreeMap::new();
    for e in items {
        let key = e["key"].as_str().unwrap().to_string();
        assert_eq!(e["key_hex"].as_str().unwrap(), hex(key.as_bytes()));
        let prev = m.insert(
            key.clone(),
            (
                e["value_hex"].as_str().unwrap().to_string(),
                e["expire_at"].as_u64(),
            ),
        );
        assert!(prev.is_none(), "key {key} listed twice");
    }
    m
}

#[test]
fn dump_and_history_match_every_manifest() {
    let tags = tags();
    assert!(
        tags.len() >= 50,
        "expected the 50 corpus tags, found {}",
        tags.len()
    );
    let mut stores = 0;
    let mut entries_checked = 0;
    let mut statuses_seen = BTreeMap::new();
    for tag in &tags {
        let m = manifest(tag);
        for store in &m.stores {
            let id = &store.id;
            let path = tag.join(id);
            let path_s = path.to_str().unwrap();
            let ctx = format!("{}/{id}", tag.file_name().unwrap().to_string_lossy());
            let crypt = crypt_args(store);
            let mut args: Vec<&str> = vec!["dump", "--json"];
            args.extend(crypt.iter().map(String::as_str));
            args.push(path_s);
            let dump = run_json(&args);
            assert_eq!(dump["meta"]["crc_ok"], Value::Bool(true), "{ctx}");
            assert_eq!(
                dump["meta"]["key_expire"].as_bool(),
                Some(store.key_expire),
                "{ctx}"
            );
            let live = by_key(dump["entries"].as_array().unwrap().iter());
            assert_eq!(live.len(), store.entries.len(), "{ctx}: entry count");
            assert_eq!(live.len(), store.count, "{ctx}: count");
            for e in &store.entries {
                let key = e.key.as_str();
                let (vh, exp) = live
                    .get(key)
                    .unwrap_or_else(|| panic!("{ctx}: key {key:?} missing from dump"));
                check_value(&format!("{ctx} {key}"), &e.ty, &e.value, &unhex(vh));
                assert_eq!(*exp, e.expire_at.map(u64::from), "{ctx} {key}: expire_at");
                entries_checked += 1;
            }
            for k in &store.absent {
                assert!(!live.contains_key(k), "{ctx}: {k} present");
            }

            // History: the live records are exactly the dump's entries.
            let mut hargs: Vec<&str> = vec!["dump", "--history", "--json"];
            hargs.extend(crypt.iter().map(String::as_str));
            hargs.push(path_s);
            let hist = run_json(&hargs);
            let records = hist["records"].as_array().unwrap();
            for (i, r) in records.iter().enumerate() {
                assert_eq!(r["index"].as_u64(), Some(i as u64), "{ctx}: index");
                *statuses_seen
                    .entry(r["status"].as_str().unwrap().to_string())
                    .or_insert(0usize) += 1;
            }
            let offsets: Vec<u64> = records
                .iter()
                .map(|r| r["offset"].as_u64().unwrap())
                .collect();
            assert!(
                offsets.windows(2).all(|w| w[0] < w[1]),
                "{ctx}: offsets increase"
            );
            let hist_live = by_key(records.iter().filter(|r| r["status"] == "live"));
            assert_eq!(hist_live, live, "{ctx}: history live == dump entries");
            // Every absent key that appears in the file ends as removed or expired.
            for k in &store.absent {
                if let Some(last) = records.iter().rev().find(|r| r["key"] == k.as_str()) {
                    let st = last["status"].as_str().unwrap();
                    assert!(
                        st == "removed" || st == "expired",
                        "{ctx}: {k} last is {st}"
                    );
                }
            }
            stores += 1;
        }
    }
    assert!(
        stores >= 472,
        "expected every corpus store, checked {stores}"
    );
    assert!(
        entries_checked > 20_000,
        "checked {entries_checked} entries"
    );
    // The official getters write a deletion marker for a key they find expired, so the corpus has
    // no `expired` record; the hand-built tests cover that status.
    for st in ["live", "superseded", "removed"] {
        assert!(
            statuses_seen.get(st).copied().unwrap_or(0) > 0,
            "status {st} never seen: {statuses_seen:?}"
        );
    }
}
