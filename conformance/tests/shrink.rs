//! File shrinking under the reader: the official library (newest built version, MULTI_PROCESS)
//! in a child process (`conformance writer --plan shrink`) repeatedly grows the data file to megabytes with
//! big values, removes most of them, `trim()`s (the file is truncated), writes again and
//! `clearAll()`s (truncated to one page), while reader threads reload continuously
//! (`Store::refresh`, check-on-read snapshots, copy getters) and poll the file size.
//!
//! A reader that memory-mapped the data file would take SIGBUS touching pages past the new
//! end; `mmkv_reader` reads it with `pread` into owned memory under the shared lock, so the
//! test process must survive, every value it sees must be one the writer wrote, and
//! `/proc/self/maps` must never show a mapping of the data file (the meta file is mapped).
//!
//! `MMKV_SHRINK_CYCLES` (default 20) changes the number of grow/trim/clear cycles;
//! `MMKV_ROBUST_TAG` picks another built official version for the writer.

mod robust;

use conformance::writer::{Plan, WriterSpec};
use robust::{env_or, run, Spec};

const KEYS: usize = 64;

#[test]
fn file_shrinks_while_readers_reload() {
    let cycles = env_or("MMKV_SHRINK_CYCLES", 20);
    // Whether a reader catches the file between a truncation and the next growth depends on
    // scheduling: an unpaced writer can finish in ~170 ms, and on a loaded machine (seen in
    // CI, niced) the readers then took 58 snapshots and saw no shrink. Each attempt checks
    // everything else; the writer is paced more on each, and one attempt must see a shrink.
    for (attempt, pace_us) in [0, 200, 1_000].into_iter().enumerate() {
        let spec = Spec {
            writer: WriterSpec {
                pace_us,
                ..WriterSpec::new(Plan::Shrink, cycles, KEYS)
            },
            readers: 4,
        };
        let o = run(&spec);
        eprintln!("shrink, attempt {attempt} (pace {pace_us} us): {o:#?}");
        assert!(
            o.snapshots > 0 && o.values_checked > 0,
            "readers read nothing"
        );
        // The writer really truncated the file, repeatedly, from megabytes.
        assert!(o.writer.file_shrinks >= cycles as u64, "{:?}", o.writer);
        assert!(o.writer.max_file_size >= 1 << 20, "{:?}", o.writer);
        // The data file was never mapped (checked in /proc/self/maps while reading).
        if cfg!(target_os = "linux") {
            assert!(o.maps_checked > 0);
        }
        // And the readers were reading while it did.
        if o.file_shrinks_seen + o.region_shrinks_seen > 0 {
            return;
        }
    }
    panic!("readers never observed a shrink in three attempts, the last with a paced writer");
}
