//! Varints with the official `CodedInputData` semantics.
//!
//! * [`read_varint32`] is `readRawVarint32`: up to five bytes build the 32-bit value (the
//!   fifth contributes only its low four bits); if the fifth byte still has its continuation
//!   bit, up to five more bytes are skipped (the upper half of a 64-bit varint, as written for a
//!   negative `int32`); a tenth byte with its continuation bit is malformed.
//! * [`read_varint64`] is `readInt64`: up to ten 7-bit groups, bits past 64 dropped; a tenth
//!   byte with its continuation bit is malformed.
//!
//! On error `pos` is left unchanged.

use crate::error::{Error, Result};

#[inline]
fn byte(buf: &[u8], p: usize) -> Result<u8> {
    buf.get(p)
        .copied()
        .ok_or(Error::UnexpectedEnd { offset: p })
}

/// Reads a varint as the official `readRawVarint32` does; the result is the bit pattern of
/// the official `int32_t` (cast with `as i32` for the signed value).
#[inline]
pub fn read_varint32(buf: &[u8], pos: &mut usize) -> Result<u32> {
    let start = *pos;
    let mut p = start;
    let b0 = byte(buf, p)?;
    p += 1;
    if b0 < 0x80 {
        *pos = p;
        return Ok(b0 as u32);
    }
    let mut result = (b0 & 0x7f) as u32;
    for shift in [7u32, 14, 21] {
        let b = byte(buf, p)?;
        p += 1;
        if b < 0x80 {
            *pos = p;
            return Ok(result | ((b as u32) << shift));
        }
        result |= ((b & 0x7f) as u32) << shift;
    }
    let b4 = byte(buf, p)?;
    p += 1;
    result |= (b4 as u32) << 28;
    if b4 >= 0x80 {
        for _ in 0..5 {
            let b = byte(buf, p)?;
            p += 1;
            if b < 0x80 {
                *pos = p;
                return Ok(result);
            }
        }
        return Err(Error::MalformedVarint { offset: start });
    }
    *pos = p;
    Ok(result)
}

/// Reads a varint as the official `readInt64` does (also used for `uint64`).
#[inline]
pub fn read_varint64(buf: &[u8], pos: &mut usize) -> Result<u64> {
    let start = *pos;
    let mut p = start;
    let mut result = 0u64;
    let mut shift = 0u32;
    while shift < 64 {
        let b = byte(buf, p)?;
        p += 1;
        result |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            *pos = p;
            return Ok(result);
        }
        shift += 7;
    }
    Err(Error::MalformedVarint { offset: start })
}

/// [`read_varint32`] at the start of `buf`, without position or error: the same value, and
/// `None` exactly where [`read_varint32`] fails (input ended, or a tenth byte with its
/// continuation bit). The scalar getters use it (no `Error` is built on the hot path).
#[inline]
pub fn varint32_prefix(buf: &[u8]) -> Option<u32> {
    varint32_prefix_len(buf).map(|(v, _)| v)
}

/// [`varint32_prefix`] and the number of bytes the varint took (what [`read_varint32`]
/// advances `pos` by).
#[inline]
pub fn varint32_prefix_len(buf: &[u8]) -> Option<(u32, usize)> {
    let mut result = 0u32;
    for i in 0..4 {
        let b = *buf.get(i)?;
        result |= ((b & 0x7f) as u32) << (7 * i);
        if b < 0x80 {
            return Some((result, i + 1));
        }
    }
    let b4 = *buf.get(4)?;
    // Only the low four bits fit; the rest of the fifth byte is dropped as officially.
    result |= (b4 as u32) << 28;
    if b4 < 0x80 {
        return Some((result, 5));
    }
    for i in 5..10 {
        if *buf.get(i)? < 0x80 {
            return Some((result, i + 1));
        }
    }
    None
}

/// [`read_len_prefixed`] at the start of `buf`, without position or error: the run itself,
/// and `None` exactly where [`read_len_prefixed`] fails (bad varint, negative length, length
/// past the end).
#[inline]
pub fn len_prefixed_prefix(buf: &[u8]) -> Option<&[u8]> {
    let (len, n) = varint32_prefix_len(buf)?;
    if (len as i32) < 0 {
        return None;
    }
    buf.get(n..n.checked_add(len as usize)?)
}

/// [`read_varint64`] at the start of `buf`, without position or error: the same value, and
/// `None` exactly where [`read_varint64`] fails.
#[inline]
pub fn varint64_prefix(buf: &[u8]) -> Option<u64> {
    let mut result = 0u64;
    for i in 0..10 {
        let b = *buf.get(i)?;
        result |= ((b & 0x7f) as u64) << (7 * i);
        if b < 0x80 {
            return Some(result);
        }
    }
    None
}

/// Reads a length-prefixed byte run as the official `readData` / `readString` do:
/// the length is a [`read_varint32`]; negative => [`Error::NegativeLength`], longer than
/// the remaining input => [`Error::LengthPastEnd`]. Returns the run's byte range.
#[inline]
pub fn read_len_prefixed(buf: &[u8], pos: &mut usize) -> Result<std::ops::Range<usize>> {
    let start = *pos;
    let mut p = start;
    let len = read_varint32(buf, &mut p)? as i32;
    if len < 0 {
        return Err(Error::NegativeLength { offset: start, len });
    }
    let len = len as usize;
    let remaining = buf.len() - p;
    if len > remaining {
        return Err(Error::LengthPastEnd {
            offset: start,
            len: len as u64,
            remaining,
        });
    }
    *pos = p + len;
    Ok(p..p + len)
}

/// Encodes `value` as a standard (LEB128) varint, appending to `out`.
/// Provided for tests and tools that synthesize records.
pub fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let b = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: u64) -> Vec<u8> {
        let mut o = Vec::new();
        write_varint(&mut o, v);
        o
    }

    #[test]
    fn small_and_large() {
        for v in [0u64, 1, 127, 128, 300, 0x7fff_ffff, 0xffff_ffff] {
            let b = enc(v);
            let mut p = 0;
            assert_eq!(read_varint32(&b, &mut p).unwrap() as u64, v);
            assert_eq!(p, b.len());
            let mut p = 0;
            assert_eq!(read_varint64(&b, &mut p).unwrap(), v);
        }
    }

    #[test]
    fn negative_int32_as_ten_bytes() {
        let b = enc((-5i64) as u64);
        assert_eq!(b.len(), 10);
        let mut p = 0;
        assert_eq!(read_varint32(&b, &mut p).unwrap() as i32, -5);
        assert_eq!(p, 10);
        let mut p = 0;
        assert_eq!(read_varint64(&b, &mut p).unwrap() as i64, -5);
    }

    #[test]
    fn varint32_truncates_upper_bits() {
        // 2^32 + 7 as a 5-byte varint: the fifth byte's bit 4 is dropped.
        let b = enc((1u64 << 32) + 7);
        let mut p = 0;
        assert_eq!(read_varint32(&b, &mut p).unwrap(), 7);
        assert_eq!(p, 5);
    }

    #[test]
    fn malformed_and_truncated() {
        let b = [0xffu8; 11];
        let mut p = 0;
        assert_eq!(
            read_varint32(&b, &mut p),
            Err(Error::MalformedVarint { offset: 0 })
        );
        assert_eq!(p, 0);
        assert_eq!(
            read_varint64(&b, &mut p),
            Err(Error::MalformedVarint { offset: 0 })
        );
        let b = [0x80u8, 0x80];
        assert_eq!(
            read_varint32(&b, &mut p),
            Err(Error::UnexpectedEnd { offset: 2 })
        );
        assert_eq!(
            read_varint64(&[], &mut p),
            Err(Error::UnexpectedEnd { offset: 0 })
        );
    }

    #[test]
    fn len_prefixed() {
        let mut b = enc(3);
        b.extend_from_slice(b"abcd");
        let mut p = 0;
        assert_eq!(read_len_prefixed(&b, &mut p).unwrap(), 1..4);
        assert_eq!(p, 4);
        let b = enc(10);
        let mut p = 0;
        assert!(matches!(
            read_len_prefixed(&b, &mut p),
            Err(Error::LengthPastEnd { len: 10, .. })
        ));
        let b = enc(0xffff_fff0);
        let mut p = 0;
        assert!(matches!(
            read_len_prefixed(&b, &mut p),
            Err(Error::NegativeLength { .. })
        ));
    }
}
