//! Reads from a 1,000-key store written by the official library: the official library in
//! single-process and MULTI_PROCESS mode, mmkv-reader (check-on-read on every read), and the
//! floor (a bare `HashMap` lookup with the reader's hasher and the same keys).

mod common;

use std::collections::HashMap;
use std::hint::black_box;

use benches::ids::{self, FLOOR, OFFICIAL_MULTI, OFFICIAL_SINGLE, READER};
use benches::memory::FixtureInfo;
use common::Cycle;
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use mmkv_reader::{KeyHasher, Options, Store};
use mmkv_sys::{Instance, Mode};

const N_I32: usize = 400;
const N_STRING: usize = 300;
const N_BYTES: usize = 300;
const STRING_LEN: usize = 38;
const BYTES_LEN: usize = 4096;

/// Function id: the reader's snapshot taken once and held (no meta check per read).
const READER_HELD: &str = "reader_held_snapshot";
/// Function id: check-on-read through an owned `Store::snapshot()` per read.
const READER_SNAPSHOT: &str = "reader_snapshot";

struct Fixture {
    _dir: tempfile::TempDir,
    single: Instance,
    multi: Instance,
    store: Store,
    i32_keys: Vec<Vec<u8>>,
    string_keys: Vec<Vec<u8>>,
    bytes_keys: Vec<Vec<u8>>,
    floor_i32: HashMap<Vec<u8>, i32, KeyHasher>,
    floor_string: HashMap<Vec<u8>, String, KeyHasher>,
    floor_bytes: HashMap<Vec<u8>, Vec<u8>, KeyHasher>,
}

fn i32_value(i: usize) -> i32 {
    // Mixed varint lengths (1..=10 bytes: negatives take 10).
    match i % 4 {
        0 => i as i32,
        1 => (i as i32) * 1_000,
        2 => (i as i32) * 1_000_000,
        _ => -(i as i32) - 1,
    }
}

fn string_value(i: usize) -> String {
    let s = format!("{i:04}-{}", "abcdefghijklmnopqrstuvwxyz0123456789");
    s[..STRING_LEN].to_string()
}

/// Keys are at most 15 bytes so the official shim's per-call `std::string` key stays in the
/// small-string buffer (no heap allocation that MMKV's own `string_view` API would not make).
fn build() -> Fixture {
    let official = common::newest_official();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let i32_keys: Vec<Vec<u8>> = (0..N_I32)
        .map(|i| format!("int.{i:04}").into_bytes())
        .collect();
    let string_keys: Vec<Vec<u8>> = (0..N_STRING)
        .map(|i| format!("str.{i:04}").into_bytes())
        .collect();
    let bytes_keys: Vec<Vec<u8>> = (0..N_BYTES)
        .map(|i| format!("blob.{i:04}").into_bytes())
        .collect();
    {
        let w = common::open_official(&official, d, "gets", Mode::Single);
        for (i, k) in i32_keys.iter().enumerate() {
            assert!(w.set_i32(k, i32_value(i), None).expect("set_i32"));
        }
        for (i, k) in string_keys.iter().enumerate() {
            assert!(w.set_string(k, string_value(i), None).expect("set_string"));
        }
        for (i, k) in bytes_keys.iter().enumerate() {
            assert!(w
                .set_bytes(k, &common::pattern(BYTES_LEN, i), None)
                .expect("set_bytes"));
        }
        assert_eq!(w.count().expect("count"), 1000);
        w.sync().expect("sync");
        w.close().expect("close");
    }
    // The same bytes under a second id, so the MULTI_PROCESS instance is a separate one.
    common::copy_store(d, "gets", "gets_multi");
    let single = common::open_official(&official, d, "gets", Mode::Single);
    let multi = common::open_official(&official, d, "gets_multi", Mode::Multi);
    let store = Store::open(common::data_path(d, "gets"), Options::new()).expect("reader open");

    let mut floor_i32 = HashMap::with_hasher(KeyHasher::default());
    let mut floor_string = HashMap::with_hasher(KeyHasher::default());
    let mut floor_bytes = HashMap::with_hasher(KeyHasher::default());
    // Every implementation must see the values that were written.
    for (i, k) in i32_keys.iter().enumerate() {
        let v = i32_value(i);
        assert_eq!(single.get_i32(k).expect("get"), Some(v));
        assert_eq!(multi.get_i32(k).expect("get"), Some(v));
        assert_eq!(store.get_i32(k), Some(v));
        floor_i32.insert(k.clone(), v);
    }
    for (i, k) in string_keys.iter().enumerate() {
        let v = string_value(i);
        assert_eq!(v.len(), STRING_LEN);
        assert_eq!(
            single.get_string(k).expect("get"),
            Some(v.clone().into_bytes())
        );
        assert_eq!(
            multi.get_string(k).expect("get"),
            Some(v.clone().into_bytes())
        );
        assert_eq!(store.get_string(k), Some(v.clone()));
        floor_string.insert(k.clone(), v);
    }
    for (i, k) in bytes_keys.iter().enumerate() {
        let v = common::pattern(BYTES_LEN, i);
        assert_eq!(single.get_bytes(k).expect("get").as_ref(), Some(&v));
        assert_eq!(multi.get_bytes(k).expect("get").as_ref(), Some(&v));
        assert_eq!(store.get_bytes(k).as_ref(), Some(&v));
        assert_eq!(store.snapshot().get_bytes(k), Some(&v[..]));
        assert_eq!(store.view().get_bytes(k), Some(&v[..]));
        floor_bytes.insert(k.clone(), v);
    }
    common::record_fixture(
        "gets",
        &FixtureInfo {
            mmkv_version: official.version(),
            keys: 1000,
            data_bytes: store.snapshot().region_len() as u64,
            notes: Vec::new(),
        },
    );
    Fixture {
        _dir: dir,
        single,
        multi,
        store,
        i32_keys,
        string_keys,
        bytes_keys,
        floor_i32,
        floor_string,
        floor_bytes,
    }
}

type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// Benchmarks `read` as `id` in `g`, called with `keys` in turn (each through `black_box`).
fn over_keys<R>(g: &mut Group<'_>, id: &str, keys: &[Vec<u8>], mut read: impl FnMut(&[u8]) -> R) {
    g.bench_function(id, |b| {
        let mut k = Cycle::new(keys);
        b.iter(|| read(black_box(k.next_key())))
    });
}

/// The official library in both modes, as `OFFICIAL_SINGLE` and `OFFICIAL_MULTI`.
fn officials(fx: &Fixture) -> [(&'static str, &Instance); 2] {
    [(OFFICIAL_SINGLE, &fx.single), (OFFICIAL_MULTI, &fx.multi)]
}

fn bench_get_i32(c: &mut Criterion, fx: &Fixture) {
    let mut g = c.benchmark_group(ids::GET_I32.group);
    common::fast_group(&mut g);
    let keys = &fx.i32_keys;
    for (id, official) in officials(fx) {
        over_keys(&mut g, id, keys, |k| official.get_i32(k).ok().flatten());
    }
    over_keys(&mut g, READER, keys, |k| fx.store.get_i32(k));
    let snap = fx.store.snapshot();
    over_keys(&mut g, READER_HELD, keys, |k| snap.get_i32(k));
    over_keys(&mut g, FLOOR, keys, |k| fx.floor_i32.get(k).copied());
    g.finish();
}

fn bench_get_string(c: &mut Criterion, fx: &Fixture) {
    let mut g = c.benchmark_group(ids::GET_STRING.group);
    common::fast_group(&mut g);
    let keys = &fx.string_keys;
    for (id, official) in officials(fx) {
        over_keys(&mut g, id, keys, |k| official.get_string(k).ok().flatten());
    }
    over_keys(&mut g, READER, keys, |k| fx.store.get_string(k));
    over_keys(&mut g, FLOOR, keys, |k| fx.floor_string.get(k).cloned());
    g.finish();
}

fn bench_get_bytes_copy(c: &mut Criterion, fx: &Fixture) {
    let mut g = c.benchmark_group(ids::GET_BYTES_COPY.group);
    common::fast_group(&mut g);
    let keys = &fx.bytes_keys;
    for (id, official) in officials(fx) {
        over_keys(&mut g, id, keys, |k| official.get_bytes(k).ok().flatten());
    }
    over_keys(&mut g, READER, keys, |k| fx.store.get_bytes(k));
    over_keys(&mut g, FLOOR, keys, |k| {
        fx.floor_bytes.get(k).map(|v| v.to_vec())
    });
    g.finish();
}

fn bench_get_bytes_zero_copy(c: &mut Criterion, fx: &Fixture) {
    let mut g = c.benchmark_group(ids::GET_BYTES_ZERO_COPY.group);
    common::fast_group(&mut g);
    let keys = &fx.bytes_keys;
    // The official library has no zero-copy getter: the same copying call as above.
    for (id, official) in officials(fx) {
        over_keys(&mut g, id, keys, |k| official.get_bytes(k).ok().flatten());
    }
    // Check-on-read, then a borrowed view into the current state (`Store::view`: no
    // reference-count traffic).
    over_keys(&mut g, READER, keys, |k| {
        let view = fx.store.view();
        black_box(view.get_bytes(k));
    });
    // The same through an owned `Snapshot` handle (one Arc increment and decrement per read).
    over_keys(&mut g, READER_SNAPSHOT, keys, |k| {
        let snap = fx.store.snapshot();
        black_box(snap.get_bytes(k));
    });
    let snap = fx.store.snapshot();
    over_keys(&mut g, READER_HELD, keys, |k| {
        black_box(snap.get_bytes(k)).is_some()
    });
    over_keys(&mut g, FLOOR, keys, |k| {
        black_box(fx.floor_bytes.get(k).map(Vec::as_slice)).is_some()
    });
    g.finish();
}

fn gets(c: &mut Criterion) {
    let fx = build();
    bench_get_i32(c, &fx);
    bench_get_string(c, &fx);
    bench_get_bytes_copy(c, &fx);
    bench_get_bytes_zero_copy(c, &fx);
}

criterion_group!(get_benches, gets);
criterion_main!(get_benches);
