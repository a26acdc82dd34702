//! Scaling of the reader with the store size: for stores of 1k, 10k, 100k and 1M keys
//! (100-byte values, written by the official library) the open + first access time and the
//! heap the open store keeps; and on each, the partial reload after the official writer
//! (single-process instance in this process) appends about k bytes (one value of k bytes),
//! k = 1 KB, 64 KB and 1 MB. Open must grow linearly with the size, reload with k only.
//!
//! Only `Store::open` + `len()` and `Store::refresh()` are timed. Appends after which the
//! writer compacted the file (a full write-back with a new sequence) make the reader do a
//! full reload: those are not counted (the number is recorded in the fixture notes).

mod common;

use std::cell::Cell;
use std::time::{Duration, Instant};

use benches::ids::{self, ReloadStore};
use benches::memory::{CountingAlloc, FixtureInfo, ScaleStore};
use criterion::{criterion_group, criterion_main, Criterion};
use mmkv_reader::{Options, ReloadKind, Store};
use mmkv_sys::Mode;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

fn mib(b: usize) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn scaling(c: &mut Criterion) {
    let official = common::newest_official();
    let mut notes = Vec::new();
    let mut sizes = Vec::new();
    for store_kind in ids::SCALE_STORES {
        let ReloadStore {
            name,
            keys,
            value_len,
        } = store_kind;
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        common::write_bytes_store(&official, d, name, keys, value_len);
        let path = common::data_path(d, name);

        // Heap kept by an open store.
        let heap0 = ALLOC.current();
        let probe = Store::open(&path, Options::new()).expect("reader open");
        let heap = ALLOC.current().saturating_sub(heap0);
        assert_eq!(probe.len(), keys);
        let data_bytes = probe.snapshot().region_len() as u64;
        drop(probe);
        sizes.push(ScaleStore {
            name: name.to_string(),
            keys: keys as u64,
            data_bytes,
            reader_heap_bytes: heap as u64,
        });

        let mut g = c.benchmark_group(ids::SCALE_OPEN_GROUP);
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1));
        g.bench_function(name, |b| {
            b.iter_custom(|iters| common::time_reader_open(&path, keys as u64, iters))
        });
        g.finish();

        let writer = common::open_official(&official, d, name, Mode::Single);
        let reader = Store::open(&path, Options::new()).expect("reader open");
        let mut g = c.benchmark_group(ids::RELOAD_GROUP);
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1));
        for (append, k) in ids::RELOAD_APPENDS {
            let key = format!("appended-{append}").into_bytes();
            let mut value = common::pattern(k, k);
            let counted = Cell::new(0u64);
            let skipped = Cell::new(0u64);
            g.bench_function(ids::reload_function(name, append), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut done = 0;
                    while done < iters {
                        value[0] = value[0].wrapping_add(1);
                        assert!(writer.set_bytes(&key, &value, None).expect("official set"));
                        let t = Instant::now();
                        let changed = reader.refresh().expect("reader refresh");
                        let el = t.elapsed();
                        assert!(changed, "the reader saw no change after an append");
                        if reader.last_reload_kind() == Some(ReloadKind::Partial) {
                            total += el;
                            done += 1;
                        } else {
                            skipped.set(skipped.get() + 1);
                        }
                    }
                    counted.set(counted.get() + done);
                    total
                })
            });
            // The reader must still agree with the writer after all those reloads.
            assert_eq!(reader.get_bytes(&key), Some(value.clone()));
            assert_eq!(reader.len() as u64, writer.count().expect("count"));
            notes.push(format!(
                "{}: {} partial reloads timed, {} full reloads after writer compaction not timed",
                ids::reload_function(name, append),
                counted.get(),
                skipped.get()
            ));
        }
        g.finish();
        // Heap the reader kept after all those reloads (freed when it is dropped), against the
        // store's current actual data size.
        let region = reader.snapshot().region_len();
        let before = ALLOC.current();
        drop(reader);
        let kept = before.saturating_sub(ALLOC.current());
        notes.push(format!(
            "{name}: after the reloads the reader held {:.1} MiB of heap for a {:.1} MiB region ({:.2}×)",
            mib(kept),
            mib(region),
            kept as f64 / region.max(1) as f64
        ));
        writer.close().expect("close");
    }
    if let Err(e) = benches::paths::write_json(ids::SCALING_FILE, &sizes) {
        eprintln!("warning: cannot write {}: {e}", ids::SCALING_FILE);
    }
    common::record_fixture(
        "scaling",
        &FixtureInfo {
            mmkv_version: official.version(),
            keys: ids::SCALE_STORES[3].keys as u64,
            data_bytes: sizes.last().map_or(0, |s| s.data_bytes),
            notes,
        },
    );
}

criterion_group!(scaling_benches, scaling);
criterion_main!(scaling_benches);
