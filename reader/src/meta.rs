//! The meta file (`<id>.crc`): crc digest, version, sequence, IV, actual size,
//! last-confirmed size/crc and flags, all little-endian.
//!
//! Layout (offsets in bytes): 0 crc digest (u32), 4 version (u32), 8 sequence (u32),
//! 12 IV (16 bytes), 28 actual size (u32), 32 last-confirmed actual size (u32),
//! 36 last-confirmed crc (u32), 40..104 reserved, 104 flags (u64).

use crate::error::{Error, Result};
use crate::parse::{Cursor, ParseResult};

/// Offset of the crc digest.
pub const OFF_CRC: usize = 0;
/// Offset of the meta version.
pub const OFF_VERSION: usize = 4;
/// Offset of the sequence (full write-back count).
pub const OFF_SEQUENCE: usize = 8;
/// Offset of the 16-byte AES IV.
pub const OFF_IV: usize = 12;
/// Offset of the actual size.
pub const OFF_ACTUAL_SIZE: usize = 28;
/// Offset of the last-confirmed actual size.
pub const OFF_LAST_SIZE: usize = 32;
/// Offset of the last-confirmed crc digest.
pub const OFF_LAST_CRC: usize = 36;
/// Offset of the 64-bit flags.
pub const OFF_FLAGS: usize = 104;
/// Size of the whole structure as the official library writes it.
pub const META_SIZE: usize = 112;

/// Meta version that introduced the sequence.
pub const VERSION_SEQUENCE: u32 = 1;
/// Meta version that introduced the random IV.
pub const VERSION_RANDOM_IV: u32 = 2;
/// Meta version that introduced the actual size (and last-confirmed info) in the meta.
pub const VERSION_ACTUAL_SIZE: u32 = 3;
/// Meta version that introduced the flags.
pub const VERSION_FLAG: u32 = 4;
/// Versions at or above this are "specious": the official loader treats them as
/// [`VERSION_ACTUAL_SIZE`] with no flags (`MMKVVersionHolder`). That is 7 from v2.4.0
/// (`MMKVVersionPreserved = 5, MMKVVersionNext = 6`); v1.3.0-v2.3.0 use 6 (their
/// `MMKVVersionNext` is 5) and read a version-6 meta as version 3 without flags, a
/// difference no official writer produces (they write at most version 4). The reader follows
/// the newest loader.
pub const VERSION_HOLDER: u32 = 7;

/// Flag bit: key expiration is enabled (every value ends with a LE u32 expire time).
pub const FLAG_KEY_EXPIRE: u64 = 1;

/// The parsed meta file.
///
/// `version` is the raw value from the file. Fields the (effective) version does not have
/// are reported as 0, as the official loader ignores them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MetaInfo {
    /// CRC-32 (zlib) of the stored data region (ciphertext when encrypted).
    pub crc_digest: u32,
    /// Meta version as stored.
    pub version: u32,
    /// Full write-back count.
    pub sequence: u32,
    /// AES IV (meaningful when [`MetaInfo::has_iv`]).
    pub iv: [u8; 16],
    /// Size of the data region (meaningful when [`MetaInfo::has_actual_size`]).
    pub actual_size: u32,
    /// Last confirmed (synced) actual size.
    pub last_confirmed_size: u32,
    /// CRC of the data region at the last confirmed size.
    pub last_confirmed_crc: u32,
    /// Flags (bit 0: key expiration), only when the version is >= 4.
    pub flags: u64,
}

/// Bytes a meta file of the given (raw) version must have.
pub fn needed_len(version: u32) -> usize {
    match effective_version(version) {
        0 | 1 => OFF_IV,
        2 => OFF_ACTUAL_SIZE,
        3 => OFF_FLAGS,
        _ => META_SIZE,
    }
}

/// The version the official loader acts on: versions >= [`VERSION_HOLDER`] are treated as
/// [`VERSION_ACTUAL_SIZE`].
pub fn effective_version(version: u32) -> u32 {
    if version >= VERSION_HOLDER {
        VERSION_ACTUAL_SIZE
    } else {
        version
    }
}

impl MetaInfo {
    /// Parses a meta file's content. Input shorter than the version requires
    /// (at least 8 bytes to read the version) is [`Error::MetaTooShort`].
    pub fn parse(bytes: &[u8]) -> Result<MetaInfo> {
        if bytes.len() < OFF_SEQUENCE {
            return Err(Error::MetaTooShort {
                len: bytes.len(),
                needed: META_SIZE,
            });
        }
        let version = Cursor::at(bytes, OFF_VERSION).read_u32()?;
        let needed = needed_len(version);
        if bytes.len() < needed {
            return Err(Error::MetaTooShort {
                len: bytes.len(),
                needed,
            });
        }
        // Every field the version has lies within `needed`: the reads below cannot fail.
        Ok(MetaInfo::read(bytes, effective_version(version))?)
    }

    /// The fields of `bytes` that meta version `ev` (effective) has, in file order.
    fn read(bytes: &[u8], ev: u32) -> ParseResult<MetaInfo> {
        let mut c = Cursor::new(bytes);
        let mut m = MetaInfo {
            crc_digest: c.read_u32()?,
            version: c.read_u32()?,
            ..MetaInfo::default()
        };
        // Every version's needed length reaches the IV offset: the sequence is always there.
        m.sequence = c.read_u32()?;
        if ev >= VERSION_RANDOM_IV {
            m.iv = c.read_array()?;
        }
        if ev >= VERSION_ACTUAL_SIZE {
            m.actual_size = c.read_u32()?;
            m.last_confirmed_size = c.read_u32()?;
            m.last_confirmed_crc = c.read_u32()?;
        }
        if ev >= VERSION_FLAG {
            m.flags = Cursor::at(bytes, OFF_FLAGS).read_u64()?;
        }
        Ok(m)
    }

    /// The version the official loader acts on (see [`effective_version`]).
    pub fn effective_version(&self) -> u32 {
        effective_version(self.version)
    }

    /// Key expiration is enabled (flag bit 0; only when the version is >= 4).
    pub fn key_expire(&self) -> bool {
        self.effective_version() >= VERSION_FLAG && self.flags & FLAG_KEY_EXPIRE != 0
    }

    /// The meta holds the actual size (version >= 3); otherwise it is in the data-file header.
    pub fn has_actual_size(&self) -> bool {
        self.effective_version() >= VERSION_ACTUAL_SIZE
    }

    /// The meta holds the AES IV (version >= 2); otherwise the IV is the key itself.
    pub fn has_iv(&self) -> bool {
        self.effective_version() >= VERSION_RANDOM_IV
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(version: u32) -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        b[0..4].copy_from_slice(&0x1122_3344u32.to_le_bytes());
        b[4..8].copy_from_slice(&version.to_le_bytes());
        b[8..12].copy_from_slice(&7u32.to_le_bytes());
        for (i, x) in b[12..28].iter_mut().enumerate() {
            *x = i as u8 + 1;
        }
        b[28..32].copy_from_slice(&100u32.to_le_bytes());
        b[32..36].copy_from_slice(&90u32.to_le_bytes());
        b[36..40].copy_from_slice(&0xabcdu32.to_le_bytes());
        b[104..112].copy_from_slice(&1u64.to_le_bytes());
        b
    }

    #[test]
    fn parses_v4() {
        let m = MetaInfo::parse(&sample(4)).unwrap();
        assert_eq!(m.crc_digest, 0x1122_3344);
        assert_eq!(m.sequence, 7);
        assert_eq!(m.iv[0], 1);
        assert_eq!(m.actual_size, 100);
        assert_eq!(m.last_confirmed_size, 90);
        assert_eq!(m.last_confirmed_crc, 0xabcd);
        assert!(m.key_expire() && m.has_actual_size() && m.has_iv());
    }

    #[test]
    fn older_versions_zero_missing_fields() {
        let m = MetaInfo::parse(&sample(3)).unwrap();
        assert_eq!(m.flags, 0);
        assert!(!m.key_expire());
        let m = MetaInfo::parse(&sample(1)).unwrap();
        assert_eq!((m.actual_size, m.iv, m.flags), (0, [0; 16], 0));
        assert!(!m.has_iv());
        let m = MetaInfo::parse(&sample(9)).unwrap();
        assert_eq!(m.effective_version(), 3);
        assert!(!m.key_expire());
    }

    #[test]
    fn short_input_is_error() {
        assert!(matches!(
            MetaInfo::parse(&[]),
            Err(Error::MetaTooShort { len: 0, .. })
        ));
        let b = sample(4);
        assert!(matches!(
            MetaInfo::parse(&b[..50]),
            Err(Error::MetaTooShort { needed: 112, .. })
        ));
        assert!(MetaInfo::parse(&b[..112]).is_ok());
    }
}
