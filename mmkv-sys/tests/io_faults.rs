//! The disk-error schedule (`mmkv_sys::io_faults`): every version's file calls are wrapped at
//! link time; unscheduled they go to libc unchanged, scheduled they fail as asked and Core
//! sees the failure (a set that needs the file to grow is refused, the file keeps its size).
//!
//! Its own test binary: the schedule is process-wide, and the tests here take turns (`LOCK`).

mod common;

use common::all_built;
use mmkv_sys::io_faults::{self, Counts, IoCall, Schedule};
use mmkv_sys::Mode;
use std::sync::Mutex;

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn count(call: IoCall) -> Counts {
    io_faults::counts()
        .unwrap()
        .into_iter()
        .find(|(c, _)| *c == call)
        .map(|(_, n)| n)
        .unwrap()
}

fn file_len(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// Without a schedule the calls are counted and none fails; with `ftruncate@1+:ENOSPC` a set
/// that must grow the file is refused and the file keeps its size, and once the schedule is
/// cleared the same set succeeds; `msync@1+:EIO` fails `sync()`'s msync calls.
#[test]
fn scheduled_calls_fail_and_unscheduled_ones_do_not() {
    let _g = lock();
    let tmp = tempfile::tempdir().unwrap();
    let big = vec![0x5a_u8; 64 * 1024];
    for lib in all_built() {
        let tag = lib.tag().to_string();
        io_faults::set(&Schedule::default()).unwrap();
        let dir = tmp.path().join(&tag);
        let store = lib.open(&dir, "disk", Mode::Single, None, false).unwrap();
        assert!(store.set_bytes(b"small", b"v", None).unwrap(), "{tag}");
        store.sync().unwrap();
        assert!(
            count(IoCall::Mmap).made > 0,
            "{tag}: the open maps the file"
        );
        assert!(count(IoCall::Msync).made > 0, "{tag}: sync() calls msync");
        assert!(
            io_faults::counts()
                .unwrap()
                .iter()
                .all(|(_, n)| n.failed == 0),
            "{tag}: nothing fails unscheduled"
        );

        let data = dir.join("disk");
        let before = file_len(&data);
        io_faults::set(&"ftruncate@1+:ENOSPC".parse().unwrap()).unwrap();
        assert!(
            !store.set_bytes(b"big", &big, None).unwrap(),
            "{tag}: the set needing a bigger file is refused"
        );
        assert!(count(IoCall::Ftruncate).failed > 0, "{tag}");
        assert_eq!(file_len(&data), before, "{tag}: the file kept its size");
        assert_eq!(store.get_bytes(b"small").unwrap(), Some(b"v".to_vec()));

        io_faults::set(&"msync@1+:EIO".parse().unwrap()).unwrap();
        store.sync().unwrap();
        assert!(
            count(IoCall::Msync).failed > 0,
            "{tag}: sync()'s msync failed"
        );

        io_faults::set(&Schedule::default()).unwrap();
        assert!(store.set_bytes(b"big", &big, None).unwrap(), "{tag}");
        assert!(file_len(&data) > before, "{tag}: the file grew");
        assert_eq!(count(IoCall::Ftruncate).failed, 0, "{tag}");
        store.close().unwrap();
    }
    io_faults::set(&Schedule::default()).unwrap();
}
