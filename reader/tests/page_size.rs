//! The reader follows the page size: stores as writers with 16 KiB and 64 KiB pages lay them
//! out (built byte by byte, one-page `.crc`), read with the page size given, this machine's,
//! or inferred from the `.crc` length; a truncated copy that the official loader reads only
//! when it maps the file in 16 KiB pages.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use mmkv_reader::test_support::{self, StoreBuilder};
use mmkv_reader::{
    host_page_size, load_bytes, Error, Options, PageSize, PageSizeChoice, PageSizeSource,
    RegionSource, Store,
};

/// A region of keys "a" = 1, "b" = 2 and "z" = 4984 zero bytes (5000 bytes in all, with its
/// 4-byte holder), so a copy of the data file cut after "z"'s length still has every non-zero
/// byte of the region.
fn zero_tail_region() -> (Vec<u8>, usize) {
    let mut b = StoreBuilder::with_holder(vec![0x80, 0x80, 0x80, 0x00]);
    b.raw(b"a", &[1]).raw(b"b", &[2]);
    let mut region = b.region();
    region.extend_from_slice(&[1, b'z', 0xf8, 0x26]); // key "z", value of 4984 bytes
    let nonzero = region.len();
    region.resize(5000, 0);
    (region, nonzero)
}

/// Writes the store of [`zero_tail_region`] as a writer with `page`-byte pages does, then cuts
/// its data file right after the last non-zero byte (a copy that lost the rest of the page).
fn truncated_store(dir: &Path, page: usize) -> PathBuf {
    let p = dir.join("cut");
    let (region, nonzero) = zero_tail_region();
    test_support::write_store_paged(&p, &region, &[], &MetaSpec::default(), page).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(4 + nonzero as u64).unwrap();
    p
}

fn keys(s: &Store) -> Vec<Vec<u8>> {
    let mut k = s.keys();
    k.sort();
    k
}

#[test]
fn stores_of_16k_and_64k_writers_read_at_every_page_size() {
    let dir = tempfile::tempdir().unwrap();
    for page in [16384usize, 65536] {
        let p = dir.path().join(format!("s{page}"));
        let mut b = StoreBuilder::with_holder(vec![0x80, 0x80, 0x80, 0x00]);
        for i in 0..300u32 {
            b.raw(format!("key{i}").as_bytes(), &lp(&[i as u8; 40]));
        }
        test_support::write_store_paged(&p, &b.region(), &[], &MetaSpec::default(), page).unwrap();
        assert_eq!(std::fs::metadata(crc_path(&p)).unwrap().len(), page as u64);
        assert_eq!(std::fs::metadata(&p).unwrap().len() % page as u64, 0);
        let inferred = Store::open(
            &p,
            Options::new().page_size_choice(PageSizeChoice::Inferred),
        )
        .unwrap();
        assert_eq!(
            inferred.page_size_used(),
            PageSize {
                size: page as u64,
                source: PageSizeSource::Inferred {
                    meta_len: page as u64
                }
            }
        );
        // an intact store reads the same whatever the page size
        for size in [4096, 16384, 65536] {
            let s = Store::open(&p, Options::new().page_size(size)).unwrap();
            assert_eq!(s.page_size(), size);
            assert_eq!(s.page_size_used().source, PageSizeSource::Given);
            assert_eq!(s.len(), 300);
            assert_eq!(keys(&s), keys(&inferred));
            assert_eq!(s.raw_value("key7"), Some(lp(&[7; 40])));
        }
    }
}

#[test]
fn the_default_is_this_machines_page() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s");
    write_plain_store(&p, &[(b"k", &[1])], MetaSpec::default());
    let s = Store::open(&p, Options::new()).unwrap();
    assert_eq!(s.page_size(), host_page_size());
    assert_eq!(s.page_size_used().source, PageSizeSource::Host);
    // a 4 KiB .crc says the writer had 4 KiB pages
    let s = Store::open(
        &p,
        Options::new().page_size_choice(PageSizeChoice::Inferred),
    )
    .unwrap();
    assert_eq!(s.page_size(), 4096);
}

/// The page size this machine has is the one the run expects, when it says one
/// (`MMKV_READER_EXPECT_PAGE_SIZE`; ci/arm64.sh sets it to its emulated guest's page, 16384 under
/// qemu 7.2's `-p 16384`), so that a run meant for other pages than the host's fails when the
/// emulator did not give them instead of passing at the host's; and the default follows it: a
/// 16 KiB writer's cut store reads only when this machine's pages are 16 KiB or more.
#[test]
fn this_machines_page_is_the_one_the_run_expects() {
    let host = host_page_size();
    assert_eq!(mmkv_reader::page::validate_page_size(host), Ok(host));
    if let Some(want) = std::env::var_os("MMKV_READER_EXPECT_PAGE_SIZE") {
        let want = want.to_str().and_then(|w| w.parse::<u64>().ok());
        assert_eq!(
            Some(host),
            want,
            "this machine's page size, MMKV_READER_EXPECT_PAGE_SIZE"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let p = truncated_store(dir.path(), 16384);
    let read = Store::open(&p, Options::new()).map(|s| s.len());
    assert_eq!(read.is_ok(), host >= 16384, "{read:?} at {host}-byte pages");
}

/// The case the page size decides: a 16 KiB writer's store cut short. The official loader on a
/// 16 KiB machine maps the cut file as one zero-filled 16 KiB page, where the region fits and
/// its CRC matches; on a 4 KiB machine the region does not fit in the one page it maps.
#[test]
fn a_truncated_16k_store_reads_only_at_16k_pages() {
    let dir = tempfile::tempdir().unwrap();
    let p = truncated_store(dir.path(), 16384);
    let at_4k = Store::open(&p, Options::new().page_size(4096)).unwrap_err();
    assert_eq!(
        at_4k,
        Error::ActualSizeBeyondFile {
            actual_size: 5000,
            file_size: 20
        }
    );
    for opts in [
        Options::new().page_size(16384),
        Options::new().page_size(65536),
        Options::new().page_size_choice(PageSizeChoice::Inferred),
    ] {
        let s = Store::open(&p, opts.clone()).unwrap();
        assert_eq!(keys(&s), [b"a".to_vec(), b"b".to_vec(), b"z".to_vec()]);
        assert_eq!(s.raw_value("z"), Some(vec![0; 4984]));
        assert_eq!(s.snapshot().region_source(), RegionSource::Actual);
        // the pure load agrees
        let meta = std::fs::read(crc_path(&p)).unwrap();
        let data = std::fs::read(&p).unwrap();
        let (snap, loc) = load_bytes(&meta, &data, &opts).unwrap();
        assert_eq!(snap.len(), 3);
        assert_eq!(loc.mapped_size, s.page_size());
    }
    // OnErrorRecover at 4 KiB: the 4092 bytes after the header, decoded greedily ("z" is cut)
    let s = Store::open(&p, Options::new().page_size(4096).recover(true)).unwrap();
    assert_eq!(keys(&s), [b"a".to_vec(), b"b".to_vec()]);
    assert_eq!(s.snapshot().region_source(), RegionSource::Recovered);
}

#[test]
fn a_page_size_the_reader_cannot_follow_is_refused_before_any_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none");
    for bad in [0, 1000, 4095, 12288, 131072] {
        let e = Store::open(&missing, Options::new().page_size(bad)).unwrap_err();
        assert_eq!(e, Error::InvalidPageSize { size: bad });
        let e = load_bytes(&[], &[], &Options::new().page_size(bad)).unwrap_err();
        assert_eq!(e, Error::InvalidPageSize { size: bad });
    }
    // valid sizes that no writer platform has are followed when given
    let p = truncated_store(dir.path(), 16384);
    for size in [8192, 32768] {
        let s = Store::open(&p, Options::new().page_size(size)).unwrap();
        assert_eq!(s.page_size(), size);
        assert_eq!(s.len(), 3);
    }
}

#[test]
fn a_crc_of_no_writer_page_falls_back_to_this_machines_page() {
    let dir = tempfile::tempdir().unwrap();
    let p = truncated_store(dir.path(), 16384);
    // the .crc zero-padded to 8 KiB by a copying tool: no writer's page
    let mut meta = std::fs::read(crc_path(&p)).unwrap();
    meta.truncate(8192);
    std::fs::write(crc_path(&p), &meta).unwrap();
    let opts = Options::new().page_size_choice(PageSizeChoice::Inferred);
    let used = match Store::open(&p, opts.clone()) {
        Ok(s) => s.page_size_used(),
        // a 4 KiB host reads the cut store as beyond the file
        Err(e) => {
            assert_eq!(host_page_size(), 4096, "{e}");
            PageSizeChoice::Inferred.resolve(Some(8192)).unwrap()
        }
    };
    assert_eq!(
        used,
        PageSize {
            size: host_page_size(),
            source: PageSizeSource::HostNotInferred {
                meta_len: Some(8192)
            }
        }
    );
    assert_eq!(
        mmkv_reader::infer_page_size(8192),
        Err(Error::PageSizeNotInferred { meta_len: 8192 })
    );
}
