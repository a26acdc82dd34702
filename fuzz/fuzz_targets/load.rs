//! The full load path from bytes (`mmkv_reader::load_bytes`: locator, decryption, parse,
//! greedy recovery) with both recovery strategies, on a mutated meta + data pair.
//! Input: `[mode byte][meta length: u16 LE][meta bytes][data file bytes]` (as `reload`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mmkv_reader_fuzz::harness::check_load(data));
