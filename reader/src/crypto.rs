//! AES-CFB128 as the official `AESCrypt` uses it.
//!
//! The key is a [`CryptKey`] (the caller's bytes normalised once to 16 or 32 bytes, with its
//! AES mode). The whole data region (item-size holder included) is one CFB128 stream. The IV
//! is the meta file's IV when the meta version is >= 2, otherwise the first 16 bytes of the
//! padded key (what `AESCrypt::resetIV` does without an IV); see [`CryptKey::iv_for`].

use aes::cipher::KeyIvInit;
use aes::{Aes128, Aes256};
use cfb_mode::{BufDecryptor, BufEncryptor};

use crate::cryptkey::{CryptKey, KeyBytes};
use crate::error::{Error, Result};

/// AES block size.
pub const BLOCK: usize = 16;

#[allow(clippy::large_enum_variant)]
enum Dec {
    A128(BufDecryptor<Aes128>),
    A256(BufDecryptor<Aes256>),
}

/// A streaming CFB128 decryptor that can also resume in the middle of a stream.
pub struct CfbDecryptor {
    inner: Dec,
}

impl std::fmt::Debug for CfbDecryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CfbDecryptor")
    }
}

impl CfbDecryptor {
    /// Starts decrypting a stream at offset 0.
    pub fn new(key: &CryptKey, iv: &[u8; 16]) -> CfbDecryptor {
        let iv = (*iv).into();
        let inner = match key.key_bytes() {
            KeyBytes::Aes128(k) => Dec::A128(BufDecryptor::<Aes128>::new(&(*k).into(), &iv)),
            KeyBytes::Aes256(k) => Dec::A256(BufDecryptor::<Aes256>::new(&(*k).into(), &iv)),
        };
        CfbDecryptor { inner }
    }

    /// Resumes decryption of a stream at byte `offset`.
    ///
    /// `prev_ciphertext` must be the ciphertext bytes that immediately precede `offset`
    /// in the stream (its last byte is the stream's byte `offset - 1`). Only the last
    /// `offset % 16 + 16` bytes of it (or all bytes from the stream start when `offset` is
    /// smaller) are used; fewer bytes than that is an [`Error::UnexpectedEnd`].
    pub fn resume(
        key: &CryptKey,
        iv: &[u8; 16],
        offset: usize,
        prev_ciphertext: &[u8],
    ) -> Result<CfbDecryptor> {
        let in_block = offset % BLOCK;
        let block_start = offset - in_block;
        // Ciphertext of the block before the current one is the feedback register.
        let needed = if block_start == 0 {
            in_block
        } else {
            in_block + BLOCK
        };
        if prev_ciphertext.len() < needed {
            return Err(Error::UnexpectedEnd {
                offset: offset - prev_ciphertext.len(),
            });
        }
        let tail = &prev_ciphertext[prev_ciphertext.len() - needed..];
        let (reg, partial) = if block_start == 0 {
            (*iv, tail)
        } else {
            let mut r = [0u8; 16];
            r.copy_from_slice(&tail[..BLOCK]);
            (r, &tail[BLOCK..])
        };
        let mut d = CfbDecryptor::new(key, &reg);
        // Feed the already-consumed bytes of the current block so the register state
        // (which needs the full ciphertext block) is right.
        let mut scratch = [0u8; BLOCK];
        scratch[..partial.len()].copy_from_slice(partial);
        d.decrypt(&mut scratch[..partial.len()]);
        Ok(d)
    }

    /// Decrypts `data` in place, continuing the stream.
    pub fn decrypt(&mut self, data: &mut [u8]) {
        match &mut self.inner {
            Dec::A128(d) => d.decrypt(data),
            Dec::A256(d) => d.decrypt(data),
        }
    }
}

impl CryptKey {
    /// Decrypts a whole region in place (one CFB-128 stream from offset 0 with `iv`).
    pub fn decrypt(&self, iv: &[u8; 16], region: &mut [u8]) {
        decrypt_cfb(self, iv, region);
    }
}

/// Decrypts a whole CFB128 stream in place.
pub fn decrypt_cfb(key: &CryptKey, iv: &[u8; 16], data: &mut [u8]) {
    CfbDecryptor::new(key, iv).decrypt(data);
}

/// Encrypts a whole CFB128 stream in place (used by tests and tools that synthesize stores;
/// the reader itself never writes).
pub fn encrypt_cfb(key: &CryptKey, iv: &[u8; 16], data: &mut [u8]) {
    let iv = (*iv).into();
    match key.key_bytes() {
        KeyBytes::Aes128(k) => BufEncryptor::<Aes128>::new(&(*k).into(), &iv).encrypt(data),
        KeyBytes::Aes256(k) => BufEncryptor::<Aes256>::new(&(*k).into(), &iv).encrypt(data),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_matches_one_shot() {
        let key = b"0123456789abcdef0123";
        let iv = [9u8; 16];
        let plain: Vec<u8> = (0..200u32).map(|i| (i * 7) as u8).collect();
        for aes256 in [false, true] {
            let key = &CryptKey::new(key, aes256).unwrap();
            let mut ct = plain.clone();
            encrypt_cfb(key, &iv, &mut ct);
            for off in [0usize, 1, 15, 16, 17, 31, 32, 33, 100, 199, 200] {
                let mut d = CfbDecryptor::resume(key, &iv, off, &ct[..off]).unwrap();
                let mut rest = ct[off..].to_vec();
                d.decrypt(&mut rest);
                assert_eq!(rest, plain[off..], "aes256={aes256} off={off}");
            }
            assert!(CfbDecryptor::resume(key, &iv, 40, &ct[30..40]).is_err());
        }
    }
}
