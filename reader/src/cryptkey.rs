//! [`CryptKey`]: a store's crypt key, normalised once, with its AES mode.

use crate::crypto::{default_iv, normalize_key};
use crate::meta::MetaInfo;

/// A crypt key as the official library uses it: the caller's bytes zero-padded or truncated
/// to 16 bytes (AES-128) or 32 bytes (AES-256, v2.3.0+). "No encryption" is `None` of an
/// `Option<CryptKey>`, so AES-256 without a key cannot be expressed; an empty key is no
/// key, as with the official library.
#[derive(Clone, PartialEq, Eq)]
pub struct CryptKey {
    key: Vec<u8>,
    aes256: bool,
}

impl std::fmt::Debug for CryptKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CryptKey")
            .field("aes256", &self.aes256)
            .finish_non_exhaustive()
    }
}

impl CryptKey {
    /// An AES-128 key; `None` for an empty key (not encrypted).
    pub fn aes128(key: impl AsRef<[u8]>) -> Option<CryptKey> {
        CryptKey::new(key, false)
    }

    /// An AES-256 key; `None` for an empty key (not encrypted).
    pub fn aes256(key: impl AsRef<[u8]>) -> Option<CryptKey> {
        CryptKey::new(key, true)
    }

    /// A key for either mode; `None` for an empty key (not encrypted).
    pub fn new(key: impl AsRef<[u8]>, aes256: bool) -> Option<CryptKey> {
        let key = key.as_ref();
        (!key.is_empty()).then(|| CryptKey {
            key: normalize_key(key, aes256),
            aes256,
        })
    }

    /// The normalised key (16 or 32 bytes).
    pub fn bytes(&self) -> &[u8] {
        &self.key
    }

    /// AES-256 rather than AES-128.
    pub fn is_aes256(&self) -> bool {
        self.aes256
    }

    /// The IV the official library uses for a store with this meta: the meta's when its
    /// version is >= 2, else the first 16 bytes of the key.
    pub fn iv_for(&self, meta: &MetaInfo) -> [u8; 16] {
        if meta.has_iv() {
            meta.iv
        } else {
            default_iv(&self.key)
        }
    }

    /// Decrypts a whole region in place (one CFB-128 stream from offset 0 with `iv`).
    pub fn decrypt(&self, iv: &[u8; 16], region: &mut [u8]) {
        crate::crypto::decrypt_cfb(&self.key, self.aes256, iv, region);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_once_and_empty_is_none() {
        assert!(CryptKey::aes128("").is_none() && CryptKey::aes256([]).is_none());
        let k = CryptKey::aes128("short").unwrap();
        assert_eq!(k.bytes(), b"short\0\0\0\0\0\0\0\0\0\0\0");
        let k = CryptKey::aes256([7u8; 40]).unwrap();
        assert_eq!((k.bytes().len(), k.is_aes256()), (32, true));
        assert_eq!(CryptKey::aes128([1u8; 20]).unwrap().bytes(), &[1u8; 16]);
        assert!(!format!("{k:?}").contains('7'));
    }
}
