//! NIST SP 800-38A, appendix F.3.13–F.3.18: CFB128 known-answer vectors for AES-128 and
//! AES-256 (the AES-192 vectors F.3.15/F.3.16 do not apply: MMKV has no 192-bit mode),
//! through the crate's crypto module, whole-buffer and streamed/resumed.

use mmkv_reader::crypto::{decrypt_cfb, encrypt_cfb, CfbDecryptor};
use mmkv_reader::CryptKey;

fn h(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const IV: &str = "000102030405060708090a0b0c0d0e0f";
const PLAIN: &str = "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51
                     30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710";
const KEY128: &str = "2b7e151628aed2a6abf7158809cf4f3c";
const CT128: &str = "3b3fd92eb72dad20333449f8e83cfb4a c8a64537a0b3a93fcde3cdad9f1ce58b
                     26751f67a3cbb140b1808cf187a4f4df c04b05357c5d1c0eeac4c66f9ff7f2e6";
const KEY256: &str = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
const CT256: &str = "dc7e84bfda79164b7ecd8486985d3860 39ffed143b28b1c832113c6331e5407b
                     df10132415e54b92a13ed0a8267ae2f9 75a385741ab9cef82031623d55b1e471";

/// The hex key as a crypt key of the mode.
fn key_of(key: &str, aes256: bool) -> CryptKey {
    CryptKey::new(h(key), aes256).unwrap()
}

fn iv() -> [u8; 16] {
    h(IV).try_into().unwrap()
}

fn encrypt(key: &str, aes256: bool, ct: &str) {
    let mut buf = h(PLAIN);
    encrypt_cfb(&key_of(key, aes256), &iv(), &mut buf);
    assert_eq!(buf, h(ct));
}

fn decrypt(key: &str, aes256: bool, ct: &str) {
    let mut buf = h(ct);
    decrypt_cfb(&key_of(key, aes256), &iv(), &mut buf);
    assert_eq!(buf, h(PLAIN));
    // streamed in odd pieces
    let mut d = CfbDecryptor::new(&key_of(key, aes256), &iv());
    let mut buf = h(ct);
    let mut pos = 0;
    for n in [1usize, 7, 16, 5, 20, 15] {
        d.decrypt(&mut buf[pos..pos + n]);
        pos += n;
    }
    d.decrypt(&mut buf[pos..]);
    assert_eq!(buf, h(PLAIN));
    // resumed at every offset from the preceding ciphertext
    let ct = h(ct);
    for off in 0..=ct.len() {
        let mut d = CfbDecryptor::resume(&key_of(key, aes256), &iv(), off, &ct[..off]).unwrap();
        let mut rest = ct[off..].to_vec();
        d.decrypt(&mut rest);
        assert_eq!(rest, h(PLAIN)[off..], "resume at {off}");
    }
}

#[test]
fn f_3_13_cfb128_aes128_encrypt() {
    encrypt(KEY128, false, CT128);
}

#[test]
fn f_3_14_cfb128_aes128_decrypt() {
    decrypt(KEY128, false, CT128);
}

#[test]
fn f_3_17_cfb128_aes256_encrypt() {
    encrypt(KEY256, true, CT256);
}

#[test]
fn f_3_18_cfb128_aes256_decrypt() {
    decrypt(KEY256, true, CT256);
}

#[test]
fn wrong_mode_does_not_decrypt() {
    // The AES-128 key bytes used as an AES-256 key (zero-padded) give other plaintext.
    let mut buf = h(CT128);
    decrypt_cfb(&key_of(KEY128, true), &iv(), &mut buf);
    assert_ne!(buf, h(PLAIN));
}
