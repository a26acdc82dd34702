//! Check-on-read: a store copied to a temp dir is changed behind the reader's back (the test
//! plays the writer: data appended, meta crc/size updated in place) and reads must see the
//! change; append-only changes must take the partial path.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use common::*;
use mmkv_reader::{FixedClock, ManualClock, Options, ReloadKind, Store};

fn opts() -> Options {
    Options::new().clock(Arc::new(FixedClock(2_000_000_000)))
}

#[test]
fn unchanged_store_does_not_reload() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let st = Store::open(&p, opts()).unwrap();
    let n = st.len();
    assert!(n > 0);
    assert_eq!(st.refresh(), Ok(false));
    assert_eq!(st.len(), n);
    assert_eq!(st.stats().full + st.stats().partial + st.stats().failed, 0);
    assert_eq!(st.last_reload_kind(), None);
}

#[test]
fn plain_append_is_partial() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let st = Store::open(&p, opts()).unwrap();
    let before = st.snapshot();
    let n = before.len();
    assert_eq!(st.get_string("new-key"), None);

    let mut rec = Vec::new();
    record(&mut rec, b"new-key", &lp(b"hello"));
    append_stored(&p, &rec);

    // plain read: check-on-read reloads
    assert_eq!(st.get_string("new-key").as_deref(), Some("hello"));
    assert_eq!(st.stats().partial, 1);
    assert_eq!(st.stats().full, 0);
    assert_eq!(st.last_reload_kind(), Some(ReloadKind::Partial));
    let after = st.snapshot();
    assert_eq!(after.len(), n + 1);
    // every old key reads the same
    for (k, v) in before.iter() {
        assert_eq!(after.raw_value(k), Some(v));
    }
    // the old handle still serves the old state
    assert_eq!(before.get_str("new-key"), None);
    assert_eq!(before.len(), n);
    assert_eq!(after.generation(), before.generation() + 1);

    // overwrite and delete through appends
    let victim = before.keys().next().unwrap().to_vec();
    let mut rec = Vec::new();
    record(&mut rec, b"new-key", &vi(42));
    record(&mut rec, &victim, b"");
    append_stored(&p, &rec);
    assert_eq!(st.get_i32("new-key"), Some(42));
    assert!(!st.contains(&victim));
    assert_eq!(st.len(), n);
    assert_eq!(st.stats().partial, 2);
}

#[test]
fn encrypted_appends_are_partial() {
    for (id, key_hex, aes256) in [
        ("aes128", "6d6d6b762d636f6e666f726d616e6365", false),
        (
            "aes256",
            "3031323334353637383961626364656630313233343536373839414243444546",
            true,
        ),
        ("aes128-short-key", "73686f7274", false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let p = copy_store(dir.path(), "v2.4.2", id, "s");
        let key = unhex(key_hex);
        let st = Store::open(&p, opts().crypt_key(&key).aes256(aes256)).unwrap();
        let n = st.len();
        // several appends of odd sizes so the CFB continuation starts mid-block
        for i in 0..5u32 {
            let mut rec = Vec::new();
            let k = format!("added-{i}");
            record(&mut rec, k.as_bytes(), &lp(&vec![b'x'; 3 + 7 * i as usize]));
            append_encrypted(&p, &key, aes256, &rec);
            assert_eq!(
                st.get_bytes(&k),
                Some(vec![b'x'; 3 + 7 * i as usize]),
                "{id} append {i}"
            );
        }
        assert_eq!(st.len(), n + 5, "{id}");
        assert_eq!(st.stats().partial, 5, "{id}");
        assert_eq!(st.stats().full, 0, "{id}");
        // the same files opened fresh agree
        let fresh = Store::open(&p, opts().crypt_key(&key).aes256(aes256)).unwrap();
        let a = st.snapshot();
        let b = fresh.snapshot();
        assert_eq!(a.len(), b.len());
        for (k, v) in b.iter() {
            assert_eq!(a.raw_value(k), Some(v), "{id}");
        }
    }
}

#[test]
fn expire_store_append_with_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "expire-aes128", "s");
    let key = b"mmkv-conformance".to_vec();
    let clock = Arc::new(ManualClock::new(2_000_000_000));
    let st = Store::open(&p, Options::new().crypt_key(&key).clock(clock.clone())).unwrap();
    let n = st.len();
    let mut rec = Vec::new();
    let mut v = vi(7);
    v.extend_from_slice(&2_000_000_100u32.to_le_bytes());
    record(&mut rec, b"soon", &v);
    let mut v = vi(8);
    v.extend_from_slice(&1u32.to_le_bytes());
    record(&mut rec, b"past", &v);
    let mut v = vi(9);
    v.extend_from_slice(&0u32.to_le_bytes());
    record(&mut rec, b"never", &v);
    append_encrypted(&p, &key, false, &rec);
    assert_eq!(st.get_i32("soon"), Some(7));
    assert_eq!(st.expire_at("soon"), Some(2_000_000_100));
    assert_eq!(st.get_i32("past"), None);
    assert_eq!(st.get_i32("never"), Some(9));
    assert_eq!(st.expire_at("never"), Some(0));
    assert_eq!(st.len(), n + 2);
    assert_eq!(st.stats().partial, 1);
    clock.set(2_000_000_100);
    assert_eq!(st.get_i32("soon"), None, "expired when expire time <= now");
    assert_eq!(st.len(), n + 1);
}

/// Deterministic pseudo-random numbers.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn model_matches(st: &Store, model: &HashMap<Vec<u8>, Vec<u8>>) {
    let s = st.snapshot();
    assert_eq!(s.len(), model.len());
    for (k, v) in model {
        assert_eq!(s.raw_value(k), Some(&v[..]), "key {k:?}");
    }
    assert_eq!(s.keys().count(), model.len());
}

fn many_appends(encrypted: Option<(&[u8], bool)>) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s");
    let mut model: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    let mut rng = Lcg(7);
    let mut recs = Vec::new();
    for i in 0..50u32 {
        let k = format!("k{i}").into_bytes();
        let v = vi(i as u64 + 1);
        model.insert(k.clone(), v.clone());
        recs.push((k, v));
    }
    let refs: Vec<(&[u8], &[u8])> = recs.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    let mut o = opts();
    match encrypted {
        None => {
            write_plain_store(&p, &refs, MetaSpec::default());
        }
        Some((key, aes256)) => {
            let mut region = vec![0x80, 0x80, 0x80, 0x01];
            for (k, v) in &refs {
                record(&mut region, k, v);
            }
            let iv = [0x5a; 16];
            let crypt = mmkv_reader::CryptKey::new(key, aes256).unwrap();
            mmkv_reader::crypto::encrypt_cfb(&crypt, &iv, &mut region);
            std::fs::write(&p, data_bytes(&region)).unwrap();
            let spec = MetaSpec {
                iv,
                ..MetaSpec::default()
            };
            std::fs::write(crc_path(&p), meta_bytes(&region, spec)).unwrap();
            o = o.crypt_key(key).aes256(aes256);
        }
    }
    let st = Store::open(&p, o).unwrap();
    model_matches(&st, &model);
    let mut max_levels = 0;
    for step in 0..300u32 {
        let mut rec = Vec::new();
        for _ in 0..(1 + rng.next() % 4) {
            let k = format!("k{}", rng.next() % 120).into_bytes();
            let v = if rng.next() % 5 < 1 {
                Vec::new()
            } else {
                lp(format!("v{step}-{}", rng.next()).as_bytes())
            };
            record(&mut rec, &k, &v);
            if v.is_empty() {
                model.remove(&k);
            } else {
                model.insert(k, v);
            }
        }
        match encrypted {
            None => {
                append_stored(&p, &rec);
            }
            Some((key, aes256)) => {
                append_encrypted(&p, key, aes256, &rec);
            }
        }
        model_matches(&st, &model);
        max_levels = max_levels.max(st.snapshot().levels());
    }
    assert_eq!(st.stats().partial, 300);
    assert_eq!(st.stats().full, 0);
    assert!(max_levels <= 12, "levels grew to {max_levels}");
}

#[test]
fn many_plain_appends_match_model() {
    many_appends(None);
}

#[test]
fn many_encrypted_appends_match_model() {
    many_appends(Some((b"a-key", false)));
    many_appends(Some((b"0123456789abcdef0123456789abcdef", true)));
}

#[test]
fn old_meta_version_append_uses_header_size() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s");
    let spec = MetaSpec {
        version: 2,
        ..MetaSpec::default()
    };
    let v1 = vi(1);
    write_plain_store(&p, &[(b"a", &v1)], spec);
    let st = Store::open(&p, opts()).unwrap();
    assert_eq!(st.get_i32("a"), Some(1));
    let mut rec = Vec::new();
    record(&mut rec, b"b", &vi(2));
    append_stored(&p, &rec);
    assert_eq!(st.get_i32("b"), Some(2));
    assert_eq!(st.stats().partial, 1);
}

#[test]
fn replaced_store_is_fully_reloaded() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let st = Store::open(&p, opts()).unwrap();
    let other = corpus().join("v2.4.1").join("plain");
    // the writer rewrites both files (meta in place: it is never truncated)
    std::fs::write(&p, std::fs::read(&other).unwrap()).unwrap();
    write_in_place(&crc_path(&p), 0, &std::fs::read(crc_path(&other)).unwrap());
    assert_eq!(st.refresh(), Ok(true));
    assert_eq!(st.last_reload_kind(), Some(ReloadKind::Full));
    assert_eq!(st.stats().full, 1);
    let want = Store::open(&other, opts()).unwrap().snapshot();
    let got = st.snapshot();
    assert_eq!(got.len(), want.len());
    for (k, v) in want.iter() {
        assert_eq!(got.raw_value(k), Some(v));
    }
}

#[test]
fn sequence_change_forces_full_reload() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let st = Store::open(&p, opts()).unwrap();
    let mut rec = Vec::new();
    record(&mut rec, b"z", &vi(5));
    append_stored(&p, &rec);
    let seq = read_u32(&crc_path(&p), 8);
    set_u32(&crc_path(&p), 8, seq + 1);
    assert_eq!(st.get_i32("z"), Some(5));
    assert_eq!(st.stats().full, 1);
    assert_eq!(st.stats().partial, 0);
}

/// A partial reload reads only the header and the appended bytes, however large the file.
#[test]
fn partial_reload_cost_follows_appended_size() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big");
    let vals: Vec<(Vec<u8>, Vec<u8>)> = (0..20_000u32)
        .map(|i| {
            (
                format!("key-{i:06}").into_bytes(),
                lp(&vec![b'v'; 40 + (i % 17) as usize]),
            )
        })
        .collect();
    let refs: Vec<(&[u8], &[u8])> = vals.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    let region = write_plain_store(&p, &refs, MetaSpec::default());
    assert!(region.len() > 1_000_000);
    let st = Store::open(&p, opts()).unwrap();
    assert_eq!(st.len(), 20_000);
    let mut total_appended = 0u64;
    for i in 0..20u32 {
        let mut rec = Vec::new();
        record(&mut rec, format!("tail-{i}").as_bytes(), &vi(i as u64));
        total_appended += rec.len() as u64;
        append_stored(&p, &rec);
        assert_eq!(st.get_u32(format!("tail-{i}")), Some(i));
    }
    let s = st.stats();
    assert_eq!(s.partial, 20);
    // 4 header bytes per reload + the appended bytes, nothing of the 1 MB before them
    assert_eq!(s.bytes_read, 20 * 4 + total_appended, "{s:?}");
    // a full reload reads the whole region
    let c = crc_path(&p);
    set_u32(&c, 8, read_u32(&c, 8) + 1);
    assert_eq!(st.refresh(), Ok(true));
    assert!(st.stats().bytes_read > s.bytes_read + region.len() as u64);
    assert_eq!(st.len(), 20_020);
}

/// A writer that keeps overwriting the same few keys: every append is a partial reload. The
/// snapshot must not collect one chunk per reload (a reload would then cost O(reloads since
/// the last full load)); levels, chunks and retained bytes stay bounded.
#[test]
fn repeated_overwrites_keep_chunks_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("hot");
    let base: Vec<(Vec<u8>, Vec<u8>)> = (0..64u32)
        .map(|i| (format!("base-{i:03}").into_bytes(), lp(b"base value")))
        .collect();
    let refs: Vec<(&[u8], &[u8])> = base.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    write_plain_store(&p, &refs, MetaSpec::default());
    let st = Store::open(&p, opts()).unwrap();
    assert_eq!(st.len(), 64);
    let hot: [&[u8]; 3] = [b"hot-a", b"hot-b", b"base-007"];
    let mut max_levels = 0;
    let mut max_chunks = 0;
    for i in 0..2_000u32 {
        let key = hot[(i % 7 % 3) as usize];
        let mut rec = Vec::new();
        record(&mut rec, key, &vi(i as u64));
        append_stored(&p, &rec);
        assert_eq!(st.refresh(), Ok(true));
        let snap = st.snapshot();
        assert_eq!(snap.get_u32(key), Some(i));
        max_levels = max_levels.max(snap.levels());
        max_chunks = max_chunks.max(snap.chunks());
        assert!(
            snap.retained_bytes() <= snap.region_len(),
            "{} > {}",
            snap.retained_bytes(),
            snap.region_len()
        );
    }
    let s = st.stats();
    assert_eq!((s.partial, s.full, s.failed), (2_000, 0, 0));
    // base + at most one level per hot key; chunks: the base region + one per live hot entry
    // in each level
    assert!(max_levels <= 4, "levels {max_levels}");
    assert!(max_chunks <= 1 + 2 * hot.len(), "chunks {max_chunks}");
    let snap = st.snapshot();
    assert_eq!(snap.len(), 66);
    assert_eq!(snap.get_str("base-000"), Some("base value"));
}

/// `Store::view` (borrowed guard handle) answers exactly like `Store::snapshot`, checks the
/// meta first like every read, and keeps serving the state it was taken on.
#[test]
fn view_matches_snapshot_and_checks_on_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let st = Store::open(&p, opts()).unwrap();
    {
        let snap = st.snapshot();
        let view = st.view();
        assert_eq!(view.len(), snap.len());
        assert_eq!(view.generation(), snap.generation());
        for k in snap.keys() {
            assert_eq!(view.raw_value(k), snap.raw_value(k));
            assert_eq!(view.get_bytes(k), snap.get_bytes(k));
            assert_eq!(view.get_i64(k), snap.get_i64(k));
            assert_eq!(view.get_i32(k), st.get_i32(k));
            assert_eq!(view.get_string_vec(k), snap.get_string_vec(k));
            assert_eq!(view.expire_at(k), snap.expire_at(k));
        }
        let mut a: Vec<&[u8]> = view.keys().collect();
        let mut b: Vec<&[u8]> = snap.keys().collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
    }
    let old = st.view();
    let n = old.len();
    let mut rec = Vec::new();
    record(&mut rec, b"view-key", &lp(b"fresh"));
    append_stored(&p, &rec);
    // a new view sees the append (check-on-read reloads)...
    let new = st.view();
    assert_eq!(new.get_str("view-key"), Some("fresh"));
    assert_eq!(new.len(), n + 1);
    assert_eq!(st.stats().partial, 1);
    // ...the one taken before still serves its own state, and so does its owned copy
    assert_eq!(old.get_str("view-key"), None);
    assert_eq!(old.len(), n);
    let kept = old.to_snapshot();
    drop(old);
    assert_eq!(kept.get_str("view-key"), None);
    assert_eq!(kept.generation() + 1, new.generation());
}

/// Overwriting every key of the base through appends makes a merge into the base drop the
/// original region (chunk 0 of the base): lookups must keep answering from the right chunks,
/// and the old region must no longer be retained.
#[test]
fn base_region_dropped_once_every_key_is_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("turnover");
    let base: Vec<(Vec<u8>, Vec<u8>)> = (0..8u32)
        .map(|i| (format!("k{i}").into_bytes(), lp(&[b'o'; 100])))
        .collect();
    let refs: Vec<(&[u8], &[u8])> = base.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    let region = write_plain_store(&p, &refs, MetaSpec::default());
    let st = Store::open(&p, opts()).unwrap();
    let mut model: HashMap<Vec<u8>, Vec<u8>> = base.iter().cloned().collect();
    // one append per key (each a partial reload), then new keys so that levels merge into
    // the base several times
    for round in 0..3u32 {
        for i in 0..8u32 {
            let k = format!("k{i}").into_bytes();
            let v = vi((round * 100 + i) as u64);
            let mut rec = Vec::new();
            record(&mut rec, &k, &v);
            append_stored(&p, &rec);
            model.insert(k, v);
            assert_eq!(st.refresh(), Ok(true));
            model_matches(&st, &model);
        }
    }
    let snap = st.snapshot();
    assert_eq!(st.stats().partial, 24);
    assert_eq!(snap.len(), 8);
    // none of the original 100-byte values is live any more: the original region is gone
    assert!(
        snap.retained_bytes() < region.len(),
        "retained {} of a {}-byte original region, {} chunks, {} levels",
        snap.retained_bytes(),
        region.len(),
        snap.chunks(),
        snap.levels()
    );
    for i in 0..8u32 {
        assert_eq!(snap.get_u32(format!("k{i}")), Some(200 + i));
    }
}
