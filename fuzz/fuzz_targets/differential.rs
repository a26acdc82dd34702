//! Differential: the reader against the official library (one version, both error
//! strategies) on a mutated store. Input: `[mode byte][meta length: u16 LE][meta][data]`.
#![no_main]

use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use mmkv_reader_fuzz::differential::DiffHarness;

static HARNESS: Mutex<Option<DiffHarness>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let mut h = HARNESS.lock().unwrap_or_else(|p| p.into_inner());
    h.get_or_insert_with(DiffHarness::new).run(data);
});
