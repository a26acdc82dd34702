//! Damaged stores, each built from a corpus store the official library wrote and then damaged
//! the way the official loader's fallbacks are meant for. Where the official loader reads the
//! whole current region (header fallback, zero-filled short meta, missing meta recovered by
//! the header size), the expected result is the undamaged store, whose reads the corpus test
//! checks against the official getters' manifest. The other outcomes (last-confirmed state,
//! greedy recovery) are checked against the live official library in
//! `conformance/tests/damaged.rs`.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use mmkv_reader::locate::{Problem, Source};
use mmkv_reader::raw::{read_store, RawOptions};
use mmkv_reader::{load_bytes, Error, FixedClock, Options, ReadSync, RegionSource, Store};

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// The corpus stores come from a 4 KiB writer and the decisions expected here are the official
/// 4 KiB loader's (sizes against a 32 KiB file as mapped): 4 KiB pages whatever the host's.
fn opts(id: &str) -> Options {
    let o = Options::new()
        .clock(Arc::new(FixedClock(2_000_000_000)))
        .page_size(4096);
    match id {
        "aes128" => o.crypt_key("mmkv-conformance"),
        _ => o,
    }
}

fn entries_of(snap: &mmkv_reader::Snapshot) -> Entries {
    let mut v: Entries = snap.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
    v.sort();
    v
}

fn pristine(tag: &str, id: &str) -> Entries {
    let st = Store::open(corpus().join(tag).join(id), opts(id)).unwrap();
    entries_of(&st.snapshot())
}

fn manifest_count(tag: &str, id: &str) -> usize {
    let m = mmkv_corpus::Manifest::load(&corpus().join(tag)).unwrap();
    m.store(id).unwrap().count
}

fn files(p: &Path) -> (Vec<u8>, Vec<u8>) {
    (
        std::fs::read(crc_path(p)).unwrap(),
        std::fs::read(p).unwrap(),
    )
}

/// The `.crc` actual size is out of date (the last-confirmed size, as after a lost meta
/// update) while the data header holds the size the checksum matches: the official loader's
/// "downgrade & upgrade" check reads the header's region, i.e. the whole current store.
#[test]
fn stale_meta_size_reads_the_header_region() {
    for (tag, id) in [
        ("v2.3.0", "plain"),
        ("v2.3.0", "aes128"),
        ("v1.3.9", "plain"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let p = copy_store(dir.path(), tag, id, id);
        let c = crc_path(&p);
        let stale = read_u32(&c, 32);
        assert_ne!(stale, read_u32(&c, 28));
        set_u32(&c, 28, stale);
        let want = pristine(tag, id);
        assert_eq!(want.len(), manifest_count(tag, id), "{tag}/{id}");

        let st = Store::open(&p, opts(id)).unwrap();
        assert_eq!(st.snapshot().region_source(), RegionSource::OldStyleHeader);
        assert_eq!(entries_of(&st.snapshot()), want, "{tag}/{id}");

        let (m, d) = files(&p);
        let (snap, loc) = load_bytes(&m, &d, &opts(id)).unwrap();
        assert_eq!(loc.source, Source::Header);
        assert!(matches!(loc.problem, Some(Problem::CrcMismatch { size, .. }) if size == stale));
        assert_eq!(entries_of(&snap), want);

        let at_4k = RawOptions {
            rules: mmkv_reader::locate::Rules::official().with_page_size(4096),
            ..RawOptions::default()
        };
        let raw = read_store(&p, &at_4k).unwrap();
        assert_eq!(raw.location, loc);
        assert_eq!(raw.region().len(), read_u32(&p, 0) as usize);
    }
}

/// The recorded size runs past the end of the file: the official loader falls back to the
/// last-confirmed size and crc, i.e. the state at the last confirmed sync (a prefix of the
/// current region: the store as it was then).
#[test]
fn size_past_end_of_file_reads_the_last_confirmed_state() {
    for id in ["plain", "aes128"] {
        let dir = tempfile::tempdir().unwrap();
        let p = copy_store(dir.path(), "v2.4.2", id, id);
        let c = crc_path(&p);
        let (last, last_crc) = (read_u32(&c, 32), read_u32(&c, 36));
        set_u32(&c, 28, 40_000); // data file is 32 KiB
        let st = Store::open(&p, opts(id)).unwrap();
        assert_eq!(st.snapshot().region_source(), RegionSource::LastConfirmed);
        assert_eq!(st.snapshot().region_len(), last as usize);

        // The same state, described by a meta whose current size/crc are the confirmed ones.
        let q = copy_store(dir.path(), "v2.4.2", id, "confirmed");
        set_u32(&crc_path(&q), 28, last);
        set_u32(&crc_path(&q), 0, last_crc);
        let then = Store::open(&q, opts(id)).unwrap();
        assert_eq!(then.snapshot().region_source(), RegionSource::Actual);
        assert_eq!(entries_of(&st.snapshot()), entries_of(&then.snapshot()));
        assert!(!st.is_empty() && st.len() != pristine("v2.4.2", id).len());

        let (m, d) = files(&p);
        let (_, loc) = load_bytes(&m, &d, &opts(id)).unwrap();
        assert_eq!(loc.source, Source::LastConfirmed);
        assert!(matches!(
            loc.problem,
            Some(Problem::SizeBeyondFile {
                size: 40_000,
                mapped_size: 32768
            })
        ));

        // Without valid last-confirmed info: discarded by default (an error here), and
        // OnErrorRecover reads everything after the header, greedily.
        set_u32(&c, 36, last_crc ^ 1);
        assert!(matches!(
            Store::open(&p, opts(id)),
            Err(Error::ActualSizeBeyondFile {
                actual_size: 40_000,
                file_size: 32768
            })
        ));
        let st = Store::open(&p, opts(id).recover(true)).unwrap();
        assert_eq!(st.snapshot().region_source(), RegionSource::Recovered);
        if id == "plain" {
            // the current region parses, then zeros (empty keys) up to the file end
            assert_eq!(entries_of(&st.snapshot()), pristine("v2.4.2", id));
        }
    }
}

/// A flipped byte late in the region, after the last-confirmed prefix: the last-confirmed
/// fallback reads the confirmed state; without it the default discards and OnErrorRecover
/// keeps the records before the damaged one.
#[test]
fn flipped_byte_recovers_the_records_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.4.2", "plain", "s");
    let c = crc_path(&p);
    let at = 4 + read_u32(&c, 28) as u64 - 200;
    let b = std::fs::read(&p).unwrap()[at as usize];
    write_in_place(&p, at, &[b ^ 0xff]);
    let st = Store::open(&p, opts("plain")).unwrap();
    assert_eq!(st.snapshot().region_source(), RegionSource::LastConfirmed);

    set_u32(&c, 36, read_u32(&c, 36) ^ 1);
    assert!(matches!(
        Store::open(&p, opts("plain")),
        Err(Error::CrcMismatch {
            last_confirmed_tried: true,
            ..
        })
    ));
    let st = Store::open(&p, opts("plain").recover(true)).unwrap();
    assert_eq!(st.snapshot().region_source(), RegionSource::Recovered);
    let got = entries_of(&st.snapshot());
    let want = pristine("v2.4.2", "plain");
    // everything written before the damaged record is there, unchanged or superseded later
    assert!(
        got.len() >= want.len() - 3,
        "{} of {}",
        got.len(),
        want.len()
    );
}

/// A missing, empty or short `.crc`: the official library maps it zero-filled. Pre-v2.4
/// stores keep the size in the data header, so a short meta whose crc survived reads the
/// whole store by default (header fallback), and a missing one reads it with OnErrorRecover
/// (header size, unverified); v2.4+ stores (zero header) read empty.
#[test]
fn missing_empty_and_short_meta() {
    let want = pristine("v2.3.0", "plain");
    let dir = tempfile::tempdir().unwrap();
    let p = copy_store(dir.path(), "v2.3.0", "plain", "s");
    let (m, d) = files(&p);

    // short: crc, version and sequence survive
    let (snap, loc) = load_bytes(&m[..20], &d, &opts("plain")).unwrap();
    assert_eq!(loc.source, Source::Header);
    assert_eq!(entries_of(&snap), want);

    // missing or empty: discarded by default, the header's region with --recover
    for meta in [&[][..], &m[..0], &[0u8; 4096][..]] {
        assert!(matches!(
            load_bytes(meta, &d, &opts("plain")),
            Err(Error::CrcMismatch {
                last_confirmed_tried: false,
                ..
            })
        ));
        let (snap, loc) = load_bytes(meta, &d, &opts("plain").recover(true)).unwrap();
        assert_eq!((loc.source, loc.size), (Source::Recovered, want_size(&d)));
        assert_eq!(entries_of(&snap), want);
    }

    // the forensic path: no meta file at all
    std::fs::remove_file(crc_path(&p)).unwrap();
    assert!(matches!(
        read_store(&p, &RawOptions::default()),
        Err(Error::MetaMissing { .. })
    ));
    let raw = read_store(
        &p,
        &RawOptions {
            rules: mmkv_reader::locate::Rules::recover().with_page_size(4096),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(raw.sync, ReadSync::NoMetaFile);
    assert_eq!(raw.location.source, Source::Recovered);
    assert_eq!(raw.region().len() as u64, want_size(&d));

    // v2.4+: the header is 0, so there is nothing to recover by
    let (_, d) = files(&corpus().join("v2.4.2/plain"));
    let (snap, loc) = load_bytes(&[], &d, &opts("plain").recover(true)).unwrap();
    assert_eq!((loc.source, loc.size), (Source::Header, 0));
    assert!(snap.is_empty());
}

fn want_size(data: &[u8]) -> u64 {
    u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as u64
}
