//! Check-on-read reload of an open `Store` onto a mutated file pair (files in /dev/shm).
//! Input: `[mode byte][meta length: u16 LE][meta bytes][data file bytes]`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mmkv_reader_fuzz::harness::ReloadHarness;

static HARNESS: OnceLock<ReloadHarness> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    HARNESS
        .get_or_init(|| ReloadHarness::new(&ReloadHarness::default_dir()))
        .run(data);
});
