//! AES-256-CFB decryption (one-shot and resumed) + parse. Input: 16-byte IV, then ciphertext.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mmkv_reader_fuzz::harness::check_decrypt(data, true);
});
