//! Reader reload after the official writer (single-process instance in this process) appends
//! about k bytes (one value of k bytes), k = 1 KB and 1 MB, on the ~64 MB store and on a small
//! one: the partial-reload path must cost O(k), not O(file size).
//!
//! Only `Store::refresh()` is timed. Appends after which the writer compacted the file (a full
//! write-back with a new sequence) make the reader do a full reload: those are not counted
//! (the number is recorded in the fixture notes).

mod common;

use std::cell::Cell;
use std::time::{Duration, Instant};

use benches::ids::{self, ReloadStore};
use benches::memory::{CountingAlloc, FixtureInfo};
use criterion::{criterion_group, criterion_main, Criterion};
use mmkv_reader::{Options, ReloadKind, Store};
use mmkv_sys::Mode;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

fn mib(b: usize) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn reload(c: &mut Criterion) {
    let official = common::newest_official();
    let mut g = c.benchmark_group(ids::RELOAD_GROUP);
    g.sample_size(10).warm_up_time(Duration::from_millis(500));
    let mut notes = Vec::new();
    let mut large_bytes = 0;
    for store_kind in ids::RELOAD_STORES {
        let ReloadStore {
            name,
            keys,
            value_len,
        } = store_kind;
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        common::write_bytes_store(&official, d, name, keys, value_len);
        let writer = common::open_official(&official, d, name, Mode::Single);
        let reader = Store::open(common::data_path(d, name), Options::new()).expect("reader open");
        assert_eq!(reader.len(), keys);
        if store_kind == ids::RELOAD_LARGE {
            large_bytes = reader.snapshot().region_len() as u64;
        }
        for (append, k) in ids::RELOAD_APPENDS {
            g.measurement_time(Duration::from_secs(if k > 64 * 1024 { 2 } else { 3 }));
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
        // Heap the reader kept after all those reloads (freed when it is dropped), against the
        // store's current actual data size.
        let region = reader.snapshot().region_len();
        let before = ALLOC.current();
        drop(reader);
        let kept = before.saturating_sub(ALLOC.current());
        notes.push(format!(
            "{name}: after the runs the reader held {:.1} MiB of heap for a {:.1} MiB region ({:.2}×)",
            mib(kept),
            mib(region),
            kept as f64 / region.max(1) as f64
        ));
        writer.close().expect("close");
    }
    g.finish();
    common::record_fixture(
        "reload",
        &FixtureInfo {
            mmkv_version: official.version(),
            keys: ids::RELOAD_LARGE.keys as u64,
            data_bytes: large_bytes,
            notes,
        },
    );
}

criterion_group!(reload_benches, reload);
criterion_main!(reload_benches);
