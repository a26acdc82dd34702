//! AES-CFB128 as the official `AESCrypt` uses it.
//!
//! The key is the caller's bytes copied into a zeroed 16-byte (AES-128) or 32-byte
//! (AES-256, `aes256`) buffer: shorter keys are zero-padded, longer ones truncated.
//! The whole data region (item-size holder included) is one CFB128 stream. The IV is the
//! meta file's IV when the meta version is >= 2, otherwise the first 16 bytes of the padded
//! key (what `AESCrypt::resetIV` does without an IV); see [`default_iv`].

use aes::cipher::KeyIvInit;
use aes::{Aes128, Aes256};
use cfb_mode::{BufDecryptor, BufEncryptor};

use crate::error::{Error, Result};

/// AES block size.
pub const BLOCK: usize = 16;

/// The key as the official library uses it: zero-padded or truncated to 16 bytes
/// (32 with `aes256`).
pub fn normalize_key(key: &[u8], aes256: bool) -> Vec<u8> {
    let len = if aes256 { 32 } else { 16 };
    let mut k = vec![0u8; len];
    let n = key.len().min(len);
    k[..n].copy_from_slice(&key[..n]);
    k
}

/// The IV the official library uses when the meta has none (meta version < 2):
/// the first 16 bytes of the normalized key.
pub fn default_iv(key: &[u8]) -> [u8; 16] {
    let mut iv = [0u8; 16];
    let n = key.len().min(16);
    iv[..n].copy_from_slice(&key[..n]);
    iv
}

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
    pub fn new(key: &[u8], aes256: bool, iv: &[u8; 16]) -> CfbDecryptor {
        let k = normalize_key(key, aes256);
        let inner = if aes256 {
            Dec::A256(BufDecryptor::<Aes256>::new(
                k.as_slice().into(),
                iv.as_slice().into(),
            ))
        } else {
            Dec::A128(BufDecryptor::<Aes128>::new(
                k.as_slice().into(),
                iv.as_slice().into(),
            ))
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
        key: &[u8],
        aes256: bool,
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
        let mut d = CfbDecryptor::new(key, aes256, &reg);
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

/// Decrypts a whole CFB128 stream in place.
pub fn decrypt_cfb(key: &[u8], aes256: bool, iv: &[u8; 16], data: &mut [u8]) {
    CfbDecryptor::new(key, aes256, iv).decrypt(data);
}

/// Encrypts a whole CFB128 stream in place (used by tests and tools that synthesize stores;
/// the reader itself never writes).
pub fn encrypt_cfb(key: &[u8], aes256: bool, iv: &[u8; 16], data: &mut [u8]) {
    let k = normalize_key(key, aes256);
    if aes256 {
        BufEncryptor::<Aes256>::new(k.as_slice().into(), iv.as_slice().into()).encrypt(data);
    } else {
        BufEncryptor::<Aes128>::new(k.as_slice().into(), iv.as_slice().into()).encrypt(data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_normalization() {
        assert_eq!(normalize_key(b"ab", false), {
            let mut v = vec![0u8; 16];
            v[0] = b'a';
            v[1] = b'b';
            v
        });
        assert_eq!(normalize_key(&[7u8; 40], true), vec![7u8; 32]);
        assert_eq!(normalize_key(&[7u8; 40], false), vec![7u8; 16]);
    }

    #[test]
    fn resume_matches_one_shot() {
        let key = b"0123456789abcdef0123";
        let iv = [9u8; 16];
        let plain: Vec<u8> = (0..200u32).map(|i| (i * 7) as u8).collect();
        for aes256 in [false, true] {
            let mut ct = plain.clone();
            encrypt_cfb(key, aes256, &iv, &mut ct);
            for off in [0usize, 1, 15, 16, 17, 31, 32, 33, 100, 199, 200] {
                let mut d = CfbDecryptor::resume(key, aes256, &iv, off, &ct[..off]).unwrap();
                let mut rest = ct[off..].to_vec();
                d.decrypt(&mut rest);
                assert_eq!(rest, plain[off..], "aes256={aes256} off={off}");
            }
            assert!(CfbDecryptor::resume(key, aes256, &iv, 40, &ct[30..40]).is_err());
        }
    }
}
