//! [`CryptKey`]: a store's crypt key, normalised once, with its AES mode.

use crate::meta::MetaInfo;

/// A crypt key as the official library uses it: the caller's bytes zero-padded or truncated
/// to 16 bytes (AES-128) or 32 bytes (AES-256, v2.3.0+). "No encryption" is `None` of an
/// `Option<CryptKey>`, so AES-256 without a key cannot be expressed; an empty key is no
/// key, as with the official library.
#[derive(Clone, PartialEq, Eq)]
pub struct CryptKey {
    key: KeyBytes,
}

/// The normalised key bytes, by AES mode.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum KeyBytes {
    Aes128([u8; 16]),
    Aes256([u8; 32]),
}

impl std::fmt::Debug for CryptKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CryptKey")
            .field("aes256", &self.is_aes256())
            .finish_non_exhaustive()
    }
}

/// `key` zero-padded or truncated to `N` bytes, as the official `AESCrypt` copies it.
fn normalized<const N: usize>(key: &[u8]) -> [u8; N] {
    let mut k = [0u8; N];
    k.iter_mut().zip(key).for_each(|(d, s)| *d = *s);
    k
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
            key: if aes256 {
                KeyBytes::Aes256(normalized(key))
            } else {
                KeyBytes::Aes128(normalized(key))
            },
        })
    }

    /// The normalised key (16 or 32 bytes).
    pub fn bytes(&self) -> &[u8] {
        match &self.key {
            KeyBytes::Aes128(k) => k,
            KeyBytes::Aes256(k) => k,
        }
    }

    /// AES-256 rather than AES-128.
    pub fn is_aes256(&self) -> bool {
        matches!(self.key, KeyBytes::Aes256(_))
    }

    /// The key bytes by mode (for the ciphers).
    pub(crate) fn key_bytes(&self) -> &KeyBytes {
        &self.key
    }

    /// The IV the official library uses for a store with this meta: the meta's when its
    /// version is >= 2, else the first 16 bytes of the key.
    pub fn iv_for(&self, meta: &MetaInfo) -> [u8; 16] {
        if meta.has_iv() {
            meta.iv
        } else {
            normalized(self.bytes())
        }
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
        assert_eq!((k.bytes(), k.is_aes256()), (&[7u8; 32][..], true));
        assert_eq!(CryptKey::aes128([7u8; 40]).unwrap().bytes(), &[7u8; 16]);
        assert_eq!(CryptKey::aes128([1u8; 20]).unwrap().bytes(), &[1u8; 16]);
        assert!(!format!("{k:?}").contains('7'));
        // Before meta version 2 the IV is the key's first 16 bytes.
        let k = CryptKey::aes256((0..40).collect::<Vec<u8>>()).unwrap();
        let iv: Vec<u8> = (0..16).collect();
        assert_eq!(k.iv_for(&MetaInfo::default()).to_vec(), iv);
        assert_eq!(
            CryptKey::aes128("ab").unwrap().iv_for(&MetaInfo::default())[..3],
            *b"ab\0"
        );
    }
}
