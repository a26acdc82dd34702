//! Open + parse of a ~64 MB store of 100,000 keys written by the official library: the
//! official load (`mmkvWithID` + first access) against `Store::open`; and the memory the
//! reader's snapshot keeps relative to the store's actual data size (written to
//! `<criterion dir>/memory.json` for the table tool).

mod common;

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use benches::ids;
use benches::memory::{resident_bytes, CountingAlloc, FixtureInfo, MemoryReport};
use criterion::{criterion_group, criterion_main, Criterion};
use mmkv_reader::{Options, Store};
use mmkv_sys::{Mode, Official};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const ID: &str = "open_100k";

fn rss() -> i64 {
    resident_bytes().map_or(0, |b| b as i64)
}

/// Memory of the reader's snapshot (heap via the counting allocator, RSS growth) and the
/// RSS growth of the official load, measured once before the timed runs.
fn measure_memory(official: &Official, dir: &Path, keys: u64) -> MemoryReport {
    let path = common::data_path(dir, ID);
    let file_bytes = std::fs::metadata(&path).map_or(0, |m| m.len());

    let rss0 = rss();
    let heap0 = ALLOC.current();
    ALLOC.reset_peak();
    let store = Store::open(&path, Options::new()).expect("reader open");
    assert_eq!(store.len() as u64, keys);
    let heap1 = ALLOC.current();
    let peak = ALLOC.peak();
    let rss1 = rss();
    let data_bytes = store.snapshot().region_len() as u64;
    drop(store);

    let rss2 = rss();
    let inst = common::open_official(official, dir, ID, Mode::Single);
    assert_eq!(inst.count().expect("count"), keys);
    let rss3 = rss();
    inst.close().expect("close");

    MemoryReport {
        mmkv_version: official.version(),
        keys,
        data_bytes,
        file_bytes,
        reader_heap_bytes: heap1.saturating_sub(heap0) as u64,
        reader_peak_heap_bytes: peak.saturating_sub(heap0) as u64,
        reader_rss_delta_bytes: rss1 - rss0,
        official_rss_delta_bytes: Some(rss3 - rss2),
    }
}

fn open(c: &mut Criterion) {
    let official = common::newest_official();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let store = ids::OPEN_STORE;
    common::write_bytes_store(&official, d, ID, store.keys, store.value_len);
    let keys = store.keys as u64;

    let mem = measure_memory(&official, d, keys);
    eprintln!(
        "memory: data {} B, reader heap {} B ({:.3}× data), peak {} B, RSS +{} B; official RSS +{:?} B",
        mem.data_bytes,
        mem.reader_heap_bytes,
        mem.heap_ratio().unwrap_or(f64::NAN),
        mem.reader_peak_heap_bytes,
        mem.reader_rss_delta_bytes,
        mem.official_rss_delta_bytes
    );
    if let Err(e) = benches::paths::write_json(ids::MEMORY_FILE, &mem) {
        eprintln!("warning: cannot write {}: {e}", ids::MEMORY_FILE);
    }
    common::record_fixture(
        "open",
        &FixtureInfo {
            mmkv_version: official.version(),
            keys,
            data_bytes: mem.data_bytes,
            notes: Vec::new(),
        },
    );

    let mut g = c.benchmark_group(ids::OPEN_GROUP);
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
    // Only the open + first access is timed; closing (freeing) happens outside the clock.
    g.bench_function(ids::OPEN_OFFICIAL, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t = Instant::now();
                let inst = common::open_official(&official, d, ID, Mode::Single);
                let n = inst.count().expect("count");
                total += t.elapsed();
                assert_eq!(black_box(n), keys);
                inst.close().expect("close");
            }
            total
        })
    });
    g.bench_function(ids::OPEN_READER, |b| {
        let path = common::data_path(d, ID);
        b.iter_custom(|iters| common::time_reader_open(&path, keys, iters))
    });
    g.finish();
}

criterion_group!(open_benches, open);
criterion_main!(open_benches);
