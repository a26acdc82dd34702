//! Edges of the reload path a writer's partial state reaches (written for surviving mutants of
//! `load.rs`, docs/mutation-testing.md): an append whose bytes are not all in the data file yet
//! is no partial reload (the full load's fallback serves), a data file of only its 4-byte
//! header or less, and the optimistic load (a writer holds the lock exclusively) reading a
//! result that is not the primary region three times before accepting it, in case the writer
//! was between its data and meta writes.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use mmkv_reader::{Error, Options, RegionSource, ReloadKind, Store};

/// A store of 100 keys whose last-confirmed state is its current one (the fallback a reload
/// finds when a newer meta does not match the data).
fn store(dir: &Path) -> (PathBuf, Vec<u8>) {
    numbered_store(dir, 100)
}

/// Publishes an append of `rec` to `region` in the meta (crc and actual size, same sequence,
/// last-confirmed left at the state before) and cuts the data file to `len` bytes.
fn publish_append(p: &Path, region: &[u8], rec: &[u8], len: u64) {
    let mut data = data_bytes(&[region, rec].concat());
    data.truncate(len as usize);
    std::fs::write(p, &data).unwrap();
    publish_meta_only(p, region, rec);
}

#[test]
fn an_append_not_all_in_the_file_is_read_from_the_last_confirmed_state() {
    let dir = tempfile::tempdir().unwrap();
    let (p, region) = store(dir.path());
    let st = Store::open(&p, Options::new()).unwrap();
    let rec = late_record();
    let new_size = (region.len() + rec.len()) as u64;
    // The header and all appended bytes but the last 2: no partial reload (it would read past
    // the end of the file); the full load finds the meta's size beyond the file and falls back
    // to the last-confirmed state, which is the loaded one.
    publish_append(&p, &region, &rec, 4 + new_size - 2);
    assert_eq!(st.refresh(), Ok(true));
    assert_eq!(st.last_reload_kind(), Some(ReloadKind::Full));
    assert_eq!(st.snapshot().region_source(), RegionSource::LastConfirmed);
    assert_eq!(st.len(), 100);
    assert_eq!(st.get_string("late"), None);
    assert_eq!(st.get_string("key-0042").as_deref(), Some("value 42"));

    // All of it there, the file exactly as long as header and region: a partial reload, as a
    // writer that only appended is read.
    let dir = tempfile::tempdir().unwrap();
    let (p, region) = store(dir.path());
    let st = Store::open(&p, Options::new()).unwrap();
    publish_append(&p, &region, &rec, 4 + new_size);
    assert_eq!(st.refresh(), Ok(true));
    assert_eq!(st.last_reload_kind(), Some(ReloadKind::Partial));
    assert_eq!(st.get_string("late").as_deref(), Some("value"));
}

#[test]
fn a_data_file_of_its_header_or_less_under_a_grown_meta() {
    let dir = tempfile::tempdir().unwrap();
    let (p, region) = store(dir.path());
    let st = Store::open(&p, Options::new()).unwrap();
    // Exactly the header: it is read (no region fits after it) and the full load judges the
    // files, as an open of them does; less than a header is too short to be a data file.
    publish_append(&p, &region, &late_record(), 4);
    let open_err = Store::open(&p, Options::new()).unwrap_err();
    assert!(
        !matches!(open_err, Error::DataTooShort { .. }),
        "{open_err:?}"
    );
    assert_eq!(st.refresh(), Err(open_err));
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(2).unwrap();
    assert_eq!(
        Store::open(&p, Options::new()).unwrap_err(),
        Error::DataTooShort { len: 2 }
    );
    assert_eq!(st.refresh(), Err(Error::DataTooShort { len: 2 }));
    assert_eq!(st.stats().failed, 2);
    assert_eq!(st.len(), 100, "the loaded snapshot keeps serving");
}

#[cfg(unix)]
#[test]
fn an_unlocked_reload_reads_a_fallback_three_times_before_accepting_it() {
    let dir = tempfile::tempdir().unwrap();
    let (p, _) = store(dir.path());
    let locked = Store::open(&p, Options::new()).unwrap();
    let quick = std::time::Duration::from_millis(2);
    let unlocked = Store::open(&p, Options::new().lock_timeout(quick)).unwrap();
    // A meta crc no region has: the full load falls back to the last-confirmed state, which is
    // not the primary region, so a load without the lock tries again (3 attempts in all) in
    // case the writer was between its data and meta writes, then takes it.
    let c = crc_path(&p);
    set_u32(&c, 0, read_u32(&c, 0) ^ 0xdead_beef);
    assert_eq!(locked.refresh(), Ok(true));
    assert_eq!(
        locked.snapshot().region_source(),
        RegionSource::LastConfirmed
    );
    {
        let _writer = writer_lock(&c);
        assert_eq!(unlocked.refresh(), Ok(true));
    }
    assert_eq!(
        unlocked.snapshot().region_source(),
        RegionSource::LastConfirmed
    );
    assert_eq!(unlocked.len(), locked.len());
    let (l, u) = (locked.stats(), unlocked.stats());
    assert_eq!((l.unlocked, u.unlocked), (0, 1));
    assert_eq!((l.full, u.full, u.failed, u.busy), (1, 1, 0, 0));
    assert!(l.bytes_read > 0);
    assert_eq!(u.bytes_read, 3 * l.bytes_read, "{l:?} {u:?}");
}
