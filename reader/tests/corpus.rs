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
use std::sync::Arc;

use mmkv_corpus::encoding::{boolean, bytes, dec, hex32, hex64, items, text};
use mmkv_corpus::{corpus_root, corpus_tags, Manifest};
use mmkv_reader::decode::ValueType;
use mmkv_reader::{Clock, FixedClock, Options, Snapshot, Store, SystemClock};
use serde_json::Value;

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
    let s = || text(value, "string").unwrap();
    let ty: ValueType = match ty.parse() {
        Ok(t) => t,
        Err(e) => return Some(e.to_string()),
    };
    // No wildcard arm: a type added to the reader's value table fails to compile here until
    // the corpus check handles it.
    match ty {
        ValueType::Bool => cmp!(snap.get_bool(key), Some(boolean(value, "bool").unwrap())),
        ValueType::I32 => cmp!(snap.get_i32(key), Some(dec::<i32>(value, "i32").unwrap())),
        ValueType::U32 => cmp!(snap.get_u32(key), Some(dec::<u32>(value, "u32").unwrap())),
        ValueType::I64 => cmp!(snap.get_i64(key), Some(dec::<i64>(value, "i64").unwrap())),
        ValueType::U64 => cmp!(snap.get_u64(key), Some(dec::<u64>(value, "u64").unwrap())),
        ValueType::F32 => cmp!(
            snap.get_f32(key).map(f32::to_bits),
            Some(hex32(value).unwrap().to_bits())
        ),
        ValueType::F64 => cmp!(
            snap.get_f64(key).map(f64::to_bits),
            Some(hex64(value).unwrap().to_bits())
        ),
        ValueType::String => {
            cmp!(snap.get_str(key), Some(s()));
            cmp!(store.get_string(key), Some(s().to_string()));
        }
        ValueType::Bytes => {
            let want = bytes(value).unwrap();
            cmp!(snap.get_bytes(key), Some(&want[..]));
            cmp!(store.get_bytes(key), Some(want));
        }
        ValueType::Strings => cmp!(
            snap.get_string_vec(key),
            Some(items(value, |x| text(x, "strings").map(str::to_owned)).unwrap())
        ),
        ValueType::VecI32 => cmp!(
            snap.get_vec_i32(key),
            Some(items(value, |x| dec::<i32>(x, "vec_i32")).unwrap())
        ),
        ValueType::VecU32 => cmp!(
            snap.get_vec_u32(key),
            Some(items(value, |x| dec::<u32>(x, "vec_u32")).unwrap())
        ),
        ValueType::VecI64 => cmp!(
            snap.get_vec_i64(key),
            Some(items(value, |x| dec::<i64>(x, "vec_i64")).unwrap())
        ),
        ValueType::VecU64 => cmp!(
            snap.get_vec_u64(key),
            Some(items(value, |x| dec::<u64>(x, "vec_u64")).unwrap())
        ),
        ValueType::VecF32 => cmp!(
            snap.get_vec_f32(key)
                .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
            Some(
                items(value, hex32)
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>()
            )
        ),
        ValueType::VecF64 => cmp!(
            snap.get_vec_f64(key)
                .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
            Some(
                items(value, hex64)
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>()
            )
        ),
        ValueType::VecBool => cmp!(
            snap.get_vec_bool(key),
            Some(items(value, |x| boolean(x, "vec_bool")).unwrap())
        ),
    }
    None
}

fn check_absent(snap: &Snapshot, store: &Store, key: &str) -> Option<String> {
    let any = snap.contains(key)
        || store.contains(key)
        || snap.raw_value(key).is_some()
        || ValueType::ALL
            .iter()
            .any(|&ty| snap.get_value(key, ty).is_some())
        || snap.get_string(key).is_some()
        || snap.expire_at(key).is_some()
        || store.get_i64(key).is_some()
        || store.get_bytes(key).is_some();
    any.then(|| "absent key reads as present".to_string())
}

#[test]
fn every_store_of_every_tag() {
    let dir = corpus_root();
    let tags = corpus_tags(&dir).expect("corpus dir");
    // At least the 50 tags v1.1.0-v2.4.2; newer ones join with their corpus (mmkv-sys checks
    // that the corpus holds exactly versions.yaml's tags).
    assert!(
        tags.len() >= 50,
        "expected at least the 50 corpus tags v1.1.0-v2.4.2, found {}",
        tags.len()
    );

    let mut failures = Vec::new();
    let mut stores_checked = 0usize;
    let mut entries_checked = 0usize;
    let mut absent_checked = 0usize;
    for tag in &tags {
        let tdir = dir.join(tag);
        let manifest = Manifest::load(&tdir).expect("manifest");
        let min_expire = manifest.entries().filter_map(|e| e.expire_at).min();
        let clock: Arc<dyn Clock> = match min_expire {
            Some(t) => Arc::new(FixedClock(t - 1)),
            None => Arc::new(SystemClock),
        };
        for s in &manifest.stores {
            let id = &s.id;
            let mut opts = Options::new().aes256(s.aes256).clock(clock.clone());
            if let Some(k) = s.crypt_key().expect("crypt key") {
                opts = opts.crypt_key(k);
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
            let count = s.count;
            if snap.len() != count || store.len() != count {
                failures.push(format!("{tag}/{id}: len {} != count {count}", snap.len()));
            }
            if snap.key_expire() != s.key_expire {
                failures.push(format!("{tag}/{id}: key_expire flag mismatch"));
            }
            let mut want_keys = BTreeSet::new();
            for e in &s.entries {
                let key = e.key.as_str();
                want_keys.insert(key.as_bytes().to_vec());
                entries_checked += 1;
                if let Some(msg) = check_entry(&snap, &store, key, &e.ty, &e.value) {
                    failures.push(format!("{tag}/{id}: key {key:?}: {msg}"));
                }
                let want_exp = e.expire_at.unwrap_or(0);
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
            for key in &s.absent {
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
