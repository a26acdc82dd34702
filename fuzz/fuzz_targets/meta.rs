//! `MetaInfo::parse` on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mmkv_reader_fuzz::harness::check_meta(data);
});
