//! Every store of every tag in the golden corpora (`../corpus`, written by the official
//! library) must read back exactly as its manifest says; so must every store of the page
//! corpora (`../corpus/p16k/<tag>`, `../corpus/p64k/<tag>`: writers on 16 and 64 KiB pages),
//! read at its writer's page and again with the page inferred from its `.crc`.
//!
//! Clock choice: expiring keys were written with durations of 1 s (already expired when the
//! manifest was written), ~19 years, ~63 years or none. The test freezes the clock at one second
//! before the earliest `expire_at` in the tag's manifest: every long expiry is still in the
//! future and every 1-second expiry (which happened at corpus-creation time, decades earlier)
//! is in the past. Tags without expiring keys use the system clock (no store there has key
//! expiration on).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use mmkv_corpus::encoding::{boolean, bytes, dec, hex32, hex64, items, text};
use mmkv_corpus::{corpus_root, corpus_tags, page_corpora, page_folder, Manifest, StoreManifest};
use mmkv_reader::decode::ValueType;
use mmkv_reader::{
    Clock, FixedClock, Options, PageSize, PageSizeChoice, PageSizeSource, Snapshot, Store,
    SystemClock,
};
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

/// The clock a manifest's stores are read with (see the module docs).
fn manifest_clock(manifest: &Manifest) -> Arc<dyn Clock> {
    match manifest.entries().filter_map(|e| e.expire_at).min() {
        Some(t) => Arc::new(FixedClock(t - 1)),
        None => Arc::new(SystemClock),
    }
}

/// The options of store `s` (its key and cipher) with `clock`.
fn store_options(s: &StoreManifest, clock: &Arc<dyn Clock>) -> Options {
    let mut opts = Options::new().aes256(s.aes256).clock(clock.clone());
    if let Some(k) = s.crypt_key().expect("crypt key") {
        opts = opts.crypt_key(k);
    }
    opts
}

/// What the checks went through.
#[derive(Default)]
struct Tally {
    stores: usize,
    entries: usize,
    absent: usize,
}

/// Opens store `s` of the folder `dir` with `opts`, then checks it against its manifest:
/// count, key-expiration flag, every entry (value by its type's getters, expire time), the key
/// set, every absent key. Mismatches go to `failures` as `name/id: ...`; returns the store.
fn check_store(
    dir: &Path,
    name: &str,
    s: &StoreManifest,
    opts: Options,
    failures: &mut Vec<String>,
    tally: &mut Tally,
) -> Option<Store> {
    let id = &s.id;
    let store = match Store::open(dir.join(id), opts) {
        Ok(st) => st,
        Err(e) => {
            failures.push(format!("{name}/{id}: open failed: {e}"));
            return None;
        }
    };
    tally.stores += 1;
    let snap = store.snapshot();
    let count = s.count;
    if snap.len() != count || store.len() != count {
        failures.push(format!("{name}/{id}: len {} != count {count}", snap.len()));
    }
    if snap.key_expire() != s.key_expire {
        failures.push(format!("{name}/{id}: key_expire flag mismatch"));
    }
    let mut want_keys = BTreeSet::new();
    for e in &s.entries {
        let key = e.key.as_str();
        want_keys.insert(key.as_bytes().to_vec());
        tally.entries += 1;
        if let Some(msg) = check_entry(&snap, &store, key, &e.ty, &e.value) {
            failures.push(format!("{name}/{id}: key {key:?}: {msg}"));
        }
        let want_exp = e.expire_at.unwrap_or(0);
        if snap.expire_at(key) != Some(want_exp) {
            failures.push(format!(
                "{name}/{id}: key {key:?}: expire_at {:?} != {want_exp}",
                snap.expire_at(key)
            ));
        }
    }
    let got_keys: BTreeSet<Vec<u8>> = snap.keys().map(<[u8]>::to_vec).collect();
    if got_keys != want_keys {
        failures.push(format!(
            "{name}/{id}: key set differs ({} vs {})",
            got_keys.len(),
            want_keys.len()
        ));
    }
    for key in &s.absent {
        tally.absent += 1;
        if let Some(msg) = check_absent(&snap, &store, key) {
            failures.push(format!("{name}/{id}: key {key:?}: {msg}"));
        }
    }
    Some(store)
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
    let mut tally = Tally::default();
    for tag in &tags {
        let tdir = dir.join(tag);
        let manifest = Manifest::load(&tdir).expect("manifest");
        let clock = manifest_clock(&manifest);
        for s in &manifest.stores {
            let opts = store_options(s, &clock);
            check_store(&tdir, tag, s, opts, &mut failures, &mut tally);
        }
    }
    finish(
        &format!("corpus: {} tags", tags.len()),
        &tally,
        "",
        &failures,
    );
    assert!(tally.stores >= 472, "only {} stores checked", tally.stores);
}

/// The page corpora: each store read whole at its writer's page (the page the official
/// library on that device reads it with), then opened with the page inferred from its `.crc`
/// (one page of the writer), which must find that page and the manifest's count and keys.
/// Which tags and pages there are is conformance's check (`corpus::pages`).
#[test]
fn every_page_corpus_store_at_its_page_and_inferred() {
    let pages = page_corpora(&corpus_root()).expect("page corpora");
    assert!(!pages.is_empty(), "no page corpus");
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    let mut inferred = 0;
    for p in &pages {
        let name = format!("{}/{}", page_folder(p.page_size), p.tag);
        let clock = manifest_clock(&p.manifest);
        for s in &p.manifest.stores {
            let id = &s.id;
            let given = store_options(s, &clock).page_size(p.page_size);
            let Some(store) = check_store(&p.dir, &name, s, given, &mut failures, &mut tally)
            else {
                continue;
            };
            let want = PageSize {
                size: p.page_size,
                source: PageSizeSource::Given,
            };
            if store.page_size_used() != want {
                failures.push(format!("{name}/{id}: read {}", store.page_size_used()));
            }
            let opts = store_options(s, &clock).page_size_choice(PageSizeChoice::Inferred);
            let store = match Store::open(p.dir.join(id), opts) {
                Ok(st) => st,
                Err(e) => {
                    failures.push(format!("{name}/{id}: inferred: open failed: {e}"));
                    continue;
                }
            };
            inferred += 1;
            let want = PageSize {
                size: p.page_size,
                source: PageSizeSource::Inferred {
                    meta_len: p.page_size,
                },
            };
            if store.page_size_used() != want {
                failures.push(format!("{name}/{id}: inferred {}", store.page_size_used()));
            }
            let snap = store.snapshot();
            let keys: BTreeSet<&[u8]> = snap.keys().collect();
            let want_keys: BTreeSet<&[u8]> = s.entries.iter().map(|e| e.key.as_bytes()).collect();
            if snap.len() != s.count || keys != want_keys {
                failures.push(format!(
                    "{name}/{id}: inferred: {} keys, manifest {}",
                    snap.len(),
                    s.count
                ));
            }
        }
    }
    let also = format!(" ({inferred} also inferred)");
    finish(
        &format!("page corpora: {} folders", pages.len()),
        &tally,
        &also,
        &failures,
    );
    assert_eq!(inferred, tally.stores);
}

/// Prints what a pass over corpora read (`what`, then the tally, `also` after the store
/// count) and fails with every failure it collected.
fn finish(what: &str, tally: &Tally, also: &str, failures: &[String]) {
    eprintln!(
        "{what}, {} stores{also}, {} entries, {} absent keys",
        tally.stores, tally.entries, tally.absent
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
