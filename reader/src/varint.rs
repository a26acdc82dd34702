//! Varints with the official `CodedInputData` semantics.
//!
//! * [`Cursor::read_varint32`] is `readRawVarint32`: up to five bytes build the 32-bit value (the
//!   fifth contributes only its low four bits); if the fifth byte still has its continuation
//!   bit, up to five more bytes are skipped (the upper half of a 64-bit varint, as written for a
//!   negative `int32`); a tenth byte with its continuation bit is malformed.
//! * [`Cursor::read_varint64`] is `readInt64`: up to ten 7-bit groups, bits past 64 dropped; a tenth
//!   byte with its continuation bit is malformed.
//!
//! They are [`Cursor`] reads (on error the cursor does not move), with position-based forms
//! ([`read_varint32`], ...) for callers that keep an offset. The simple reference decoders
//! they are checked against live in the tests (`tests/varint_fast.rs`).

use crate::parse::{Cursor, ParseError, ParseErrorKind, ParseResult};

impl<'a> Cursor<'a> {
    /// Reads a varint as the official `readRawVarint32` does; the result is the bit pattern
    /// of the official `int32_t` (cast with `as i32` for the signed value).
    #[inline(always)]
    pub fn read_varint32(&mut self) -> ParseResult<u32> {
        self.read_varint_with(varint32)
    }

    /// Reads a varint as the official `readInt64` does (also used for `uint64`).
    #[inline(always)]
    pub fn read_varint64(&mut self) -> ParseResult<u64> {
        self.read_varint_with(varint64)
    }

    /// A varint decoded by `decode` (value and bytes taken) at the position.
    #[inline(always)]
    fn read_varint_with<T>(&mut self, decode: fn(&[u8]) -> Option<(T, usize)>) -> ParseResult<T> {
        let buf = self.rest();
        match decode(buf) {
            Some((v, n)) => {
                self.advance(n);
                Ok(v)
            }
            None => Err(self.varint_error(buf.len())),
        }
    }

    /// Why a varint at the position did not decode with `available` bytes left: both decoders
    /// read byte after byte and stop at a terminator, so a failure with ten bytes at hand is a
    /// malformed varint, with fewer the input ended (out of line: the getters only want
    /// `Option`, and the decoders stay small enough to inline).
    #[cold]
    #[inline(never)]
    fn varint_error(&self, available: usize) -> ParseError {
        if available >= MAX_VARINT_LEN {
            ParseError::new(ParseErrorKind::MalformedVarint, self.position())
        } else {
            self.end_at(available)
        }
    }

    /// Reads a length-prefixed byte run as the official `readData` / `readString` do: the
    /// length is a [`Cursor::read_varint32`]; negative is
    /// [`ParseErrorKind::NegativeLength`], longer than the rest of the input
    /// [`ParseErrorKind::LengthPastEnd`] (both at the length's offset).
    #[inline(always)]
    pub fn read_len_prefixed(&mut self) -> ParseResult<&'a [u8]> {
        match len_prefixed(self.rest()) {
            Some((run, end)) => {
                self.advance(end);
                Ok(run)
            }
            None => Err(self.len_prefixed_error()),
        }
    }

    /// Why [`Cursor::read_len_prefixed`] failed (out of line, see [`Cursor::varint_error`]).
    #[cold]
    #[inline(never)]
    fn len_prefixed_error(&self) -> ParseError {
        let start = self.position();
        let mut body = *self;
        let len = match body.read_varint32() {
            Ok(len) => len,
            Err(e) => return e,
        };
        let kind = if (len as i32) < 0 {
            ParseErrorKind::NegativeLength(len as i32)
        } else {
            ParseErrorKind::LengthPastEnd {
                len,
                remaining: body.rest().len(),
            }
        };
        ParseError::new(kind, start)
    }
}

/// [`Cursor::read_len_prefixed`] at the start of `buf`: the run and where it ends; `None`
/// where the read fails. The byte getters ([`crate::decode::as_bytes`] ...) call it directly:
/// no cursor, no error to build.
#[inline(always)]
pub(crate) fn len_prefixed(buf: &[u8]) -> Option<(&[u8], usize)> {
    let (len, n) = varint32(buf)?;
    if (len as i32) < 0 {
        return None;
    }
    // n <= 10 and len < 2^31: the sum fits even a 32-bit usize.
    let run = buf.get(n..n + len as usize)?;
    Some((run, n + run.len()))
}

/// The longest varint either decoder reads.
const MAX_VARINT_LEN: usize = 10;

/// `readRawVarint32` at the start of `buf`: the value and the bytes it took; `None` when the
/// input ends first or the tenth byte still has its continuation bit.
#[inline]
fn varint32(buf: &[u8]) -> Option<(u32, usize)> {
    varint32_with(buf, upper_half_end)
}

/// [`varint32`] for the scalar getters ([`crate::decode::as_i32`] ...), which call it
/// directly (no cursor, no error to build), inlined whole, with the upper half of a negative
/// value (ten bytes) tested as a word ([`upper_half_end_word`]).
#[inline(always)]
pub(crate) fn varint32_value(buf: &[u8]) -> Option<(u32, usize)> {
    varint32_with(buf, upper_half_end_word)
}

/// How a varint32's skipped upper half is found: `(buf, value)` to `(value, length)` (see
/// [`upper_half_end`]).
type UpperEnd = fn(&[u8], u32) -> Option<(u32, usize)>;

/// The `readRawVarint32` rule, the skipped upper half (when the fifth byte has its
/// continuation bit) left to `upper_end`, given the value.
#[inline(always)]
fn varint32_with(buf: &[u8], upper_end: UpperEnd) -> Option<(u32, usize)> {
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
    // The upper half of a 64-bit varint (a negative `int32`): skipped.
    upper_end(buf, result)
}

/// `result` and the varint's length, the end of the skipped upper half of a varint32 found:
/// the first of bytes 5 to 9 of `buf` without a continuation bit ends it; `None` when the
/// input ends first or the tenth byte still has its continuation bit.
#[inline]
fn upper_half_end(buf: &[u8], result: u32) -> Option<(u32, usize)> {
    for i in 5..MAX_VARINT_LEN {
        if *buf.get(i)? < 0x80 {
            return Some((result, i + 1));
        }
    }
    None
}

/// [`upper_half_end`] testing bytes 5 to 8 as one word when all five bytes are at hand.
#[inline]
fn upper_half_end_word(buf: &[u8], result: u32) -> Option<(u32, usize)> {
    let Some(&[b5, b6, b7, b8, b9]) = buf.get(5..MAX_VARINT_LEN) else {
        return upper_half_end(buf, result);
    };
    let ends = !u32::from_le_bytes([b5, b6, b7, b8]) & 0x8080_8080;
    if ends != 0 {
        return Some((result, 6 + ends.trailing_zeros() as usize / 8));
    }
    (b9 < 0x80).then_some((result, MAX_VARINT_LEN))
}

/// `readInt64` at the start of `buf`: the value and the bytes it took; `None` when the input
/// ends first or the tenth byte still has its continuation bit.
#[inline]
pub(crate) fn varint64(buf: &[u8]) -> Option<(u64, usize)> {
    let mut result = 0u64;
    for i in 0..MAX_VARINT_LEN {
        let b = *buf.get(i)?;
        result |= ((b & 0x7f) as u64) << (7 * i);
        if b < 0x80 {
            return Some((result, i + 1));
        }
    }
    None
}

/// [`Cursor::read_varint32`] at `*pos` of `buf`, advancing `pos` (unchanged on error).
#[inline]
pub fn read_varint32(buf: &[u8], pos: &mut usize) -> ParseResult<u32> {
    at(buf, pos, Cursor::read_varint32)
}

/// [`Cursor::read_varint64`] at `*pos` of `buf`, advancing `pos` (unchanged on error).
#[inline]
pub fn read_varint64(buf: &[u8], pos: &mut usize) -> ParseResult<u64> {
    at(buf, pos, Cursor::read_varint64)
}

/// [`Cursor::read_len_prefixed`] at `*pos` of `buf`, advancing `pos` (unchanged on error);
/// returns the run's byte range in `buf`.
#[inline]
pub fn read_len_prefixed(buf: &[u8], pos: &mut usize) -> ParseResult<std::ops::Range<usize>> {
    let run = at(buf, pos, Cursor::read_len_prefixed)?;
    Ok(*pos - run.len()..*pos)
}

#[inline]
fn at<'a, T>(
    buf: &'a [u8],
    pos: &mut usize,
    read: impl FnOnce(&mut Cursor<'a>) -> ParseResult<T>,
) -> ParseResult<T> {
    let mut c = Cursor::at(buf, *pos);
    let v = read(&mut c)?;
    *pos = c.position();
    Ok(v)
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

    /// The scalar getters' decoder (upper half tested as a word) against the byte-by-byte
    /// reference: the same value and length for a terminator at every byte, whatever follows
    /// it, and the same `None` for every truncation and for a tenth byte that continues.
    #[test]
    fn varint32_value_matches_the_reference() {
        for len in 1..=MAX_VARINT_LEN {
            for fill in [0x00u8, 0x01, 0x2a, 0x55, 0x7f] {
                for tail in [
                    &[][..],
                    &[0x00],
                    &[0x80, 0x80, 0x80, 0x80, 0x01],
                    &[0xff; 9],
                ] {
                    let mut b: Vec<u8> = (0..len)
                        .map(|i| if i + 1 < len { fill | 0x80 } else { fill })
                        .collect();
                    b.extend_from_slice(tail);
                    for cut in 0..=b.len() {
                        let part = &b[..cut];
                        assert_eq!(
                            varint32_value(part),
                            varint32(part),
                            "{part:02x?} (terminator at byte {len})"
                        );
                    }
                }
            }
        }
        let endless = [0xffu8; 12];
        assert_eq!(varint32_value(&endless), None);
        assert_eq!(varint32(&endless), None);
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
        use crate::parse::ParseErrorKind::{MalformedVarint, UnexpectedEnd};
        let err = |kind, offset| ParseError::new(kind, offset);
        let b = [0xffu8; 11];
        let mut p = 0;
        assert_eq!(
            read_varint32(&b, &mut p).unwrap_err(),
            err(MalformedVarint, 0)
        );
        assert_eq!(p, 0);
        assert_eq!(
            read_varint64(&b, &mut p).unwrap_err(),
            err(MalformedVarint, 0)
        );
        let b = [0x80u8, 0x80];
        assert_eq!(
            read_varint32(&b, &mut p).unwrap_err(),
            err(UnexpectedEnd, 2)
        );
        assert_eq!(
            read_varint64(&[], &mut p).unwrap_err(),
            err(UnexpectedEnd, 0)
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
            read_len_prefixed(&b, &mut p).map_err(|e| e.kind),
            Err(ParseErrorKind::LengthPastEnd { len: 10, .. })
        ));
        let b = enc(0xffff_fff0);
        let mut p = 0;
        assert!(matches!(
            read_len_prefixed(&b, &mut p).map_err(|e| e.kind),
            Err(ParseErrorKind::NegativeLength(_))
        ));
    }
}
