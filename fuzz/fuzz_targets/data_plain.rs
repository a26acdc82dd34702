//! Plaintext data region: records + every getter on every value.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mmkv_reader_fuzz::harness::check_region(data);
});
