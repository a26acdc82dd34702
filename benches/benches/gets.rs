//! Reads from a 1,000-key store written by the official library: the official library in
//! single-process and MULTI_PROCESS mode, mmkv-reader (check-on-read on every read), and the
//! floor (a bare `HashMap` lookup with the reader's hasher and the same keys).

mod common;

use std::hint::black_box;
use std::sync::Barrier;
use std::time::Instant;

use benches::ids::{self, FLOOR, OFFICIAL_MULTI, OFFICIAL_SINGLE, READER};
use common::reads::{build, Fixture};
use common::Cycle;
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use mmkv_sys::Instance;

/// Function id: the reader's snapshot taken once and held (no meta check per read).
const READER_HELD: &str = "reader_held_snapshot";
/// Function id: check-on-read through an owned `Store::snapshot()` per read.
const READER_SNAPSHOT: &str = "reader_snapshot";

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

/// `Store::get_i32` on one `Store` from 1 and from 2 threads at once: one iteration is one read
/// on every thread, so the time per iteration of 2 threads over that of 1 thread shows how
/// reads scale (equal times: twice the reads per second). The floor's lookup is run the same
/// way: a read-only `HashMap` shares nothing written, so its scaling is the machine's own
/// limit (two vCPUs that are siblings of one physical core scale well below 2).
fn bench_threads(c: &mut Criterion, fx: &Fixture) {
    let mut g = c.benchmark_group(ids::THREADS_GROUP);
    common::fast_group(&mut g);
    let keys = &fx.i32_keys[..];
    let reader = |k: &[u8]| fx.store.get_i32(k);
    let floor = |k: &[u8]| fx.floor_i32.get(k).copied();
    for (id, threads) in [(ids::THREADS_ONE, 1usize), (ids::THREADS_TWO, 2)] {
        on_threads(&mut g, id, threads, keys, reader);
    }
    for (id, threads) in [
        (ids::THREADS_FLOOR_ONE, 1usize),
        (ids::THREADS_FLOOR_TWO, 2),
    ] {
        on_threads(&mut g, id, threads, keys, floor);
    }
    g.finish();
}

/// Benchmarks `read` as `id` on `threads` threads at once (time per read on every thread).
fn on_threads<R>(
    g: &mut Group<'_>,
    id: &str,
    threads: usize,
    keys: &[Vec<u8>],
    read: impl Fn(&[u8]) -> R + Sync,
) {
    g.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let start = Barrier::new(threads);
            std::thread::scope(|s| {
                let runs: Vec<_> = (0..threads)
                    .map(|_| {
                        s.spawn(|| {
                            let mut k = Cycle::new(keys);
                            // a first read caches the snapshot for this thread
                            black_box(read(k.next_key()));
                            start.wait();
                            let t = Instant::now();
                            for _ in 0..iters {
                                black_box(read(black_box(k.next_key())));
                            }
                            t.elapsed()
                        })
                    })
                    .collect();
                runs.into_iter()
                    .map(|r| r.join().expect("reader thread"))
                    .max()
                    .unwrap_or_default()
            })
        })
    });
}

fn gets(c: &mut Criterion) {
    // The machine and its load as the reads start (the table's header line).
    if let Err(e) =
        benches::paths::write_json(ids::MACHINE_FILE, &benches::table::Machine::current())
    {
        eprintln!("warning: cannot write {}: {e}", ids::MACHINE_FILE);
    }
    let fx = build();
    bench_threads(c, &fx);
    bench_get_i32(c, &fx);
    bench_get_string(c, &fx);
    bench_get_bytes_copy(c, &fx);
    bench_get_bytes_zero_copy(c, &fx);
}

criterion_group!(get_benches, gets);
criterion_main!(get_benches);
