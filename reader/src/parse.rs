//! The parsing layer: a bounds-checked [`Cursor`] over untrusted bytes with typed
//! little-endian reads (and, in [`crate::varint`], the varint reads), and the small `Copy`
//! [`ParseError`] it reports: what went wrong and at which offset.
//!
//! Every read checks its bounds and reports [`ParseErrorKind::UnexpectedEnd`] instead of
//! panicking; a failed read leaves the cursor where it was. A [`ParseError`] is cheap to build
//! and to discard (a getter that only wants `Option` pays nothing for it); where a parse
//! result leaves the format layer it becomes the public [`Error`] with its context (the
//! offset in the region, whether the bytes were decrypted: [`ParseError::at`],
//! [`ParseError::in_content`]).

use crate::error::Error;

/// What went wrong while parsing (see [`ParseError`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParseErrorKind {
    /// The input ended in the middle of an item (the offset is where a byte was missing).
    UnexpectedEnd,
    /// A varint of more than ten bytes, as the official decoder rejects.
    MalformedVarint,
    /// A length prefix that is negative as a 32-bit signed number.
    NegativeLength(i32),
    /// A length prefix longer than the rest of the input.
    LengthPastEnd {
        /// The decoded length.
        len: u32,
        /// Bytes left after the length prefix.
        remaining: usize,
    },
}

/// A parse failure: its kind and the offset (in the parsed bytes) it is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParseError {
    /// What went wrong.
    pub kind: ParseErrorKind,
    /// Offset of the item that failed (of the missing byte for
    /// [`ParseErrorKind::UnexpectedEnd`]).
    pub offset: usize,
}

// Small enough to build and drop on the hot path (24 bytes on 64-bit targets, 16 on 32-bit).
const _: () = assert!(std::mem::size_of::<ParseError>() <= 24);

/// Result of the parsing layer.
pub type ParseResult<T> = Result<T, ParseError>;

impl ParseError {
    /// A `kind` error at `offset`.
    #[inline]
    pub const fn new(kind: ParseErrorKind, offset: usize) -> ParseError {
        ParseError { kind, offset }
    }

    /// The same error for bytes that start at offset `base` of what the caller reports
    /// offsets in (a chunk of a region parsed on its own).
    #[inline]
    pub const fn at(self, base: usize) -> ParseError {
        ParseError {
            kind: self.kind,
            offset: self.offset.saturating_add(base),
        }
    }

    /// The public error for content that was (`decrypted`) or was not decrypted with a crypt
    /// key: a parse failure of decrypted content is [`Error::Undecryptable`] (wrong key, wrong
    /// AES mode or corrupt ciphertext), otherwise the plain parse error.
    pub fn in_content(self, decrypted: bool) -> Error {
        let e = Error::from(self);
        if decrypted {
            Error::Undecryptable {
                source: Box::new(e),
            }
        } else {
            e
        }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&Error::from(*self), f)
    }
}

impl std::error::Error for ParseError {}

impl From<ParseError> for Error {
    fn from(e: ParseError) -> Error {
        let offset = e.offset;
        match e.kind {
            ParseErrorKind::UnexpectedEnd => Error::UnexpectedEnd { offset },
            ParseErrorKind::MalformedVarint => Error::MalformedVarint { offset },
            ParseErrorKind::NegativeLength(len) => Error::NegativeLength { offset, len },
            ParseErrorKind::LengthPastEnd { len, remaining } => Error::LengthPastEnd {
                offset,
                len: len.into(),
                remaining,
            },
        }
    }
}

/// A read position in untrusted bytes (after gimli-rs/object's `Bytes` and ttf-parser's
/// `Stream`). Reads advance it on success and leave it unchanged on failure; none panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// `read_u32`-style typed little-endian reads.
macro_rules! le_reads {
    ($($(#[$doc:meta])* $name:ident -> $t:ty;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub fn $name(&mut self) -> ParseResult<$t> {
            self.read_array().map(<$t>::from_le_bytes)
        }
    )*};
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    #[inline]
    pub const fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor { buf, pos: 0 }
    }

    /// A cursor at offset `pos` of `buf` (past the end: every read fails).
    #[inline]
    pub const fn at(buf: &'a [u8], pos: usize) -> Cursor<'a> {
        Cursor { buf, pos }
    }

    /// The offset of the next read in the whole input.
    #[inline]
    pub const fn position(&self) -> usize {
        self.pos
    }

    /// The whole input.
    #[inline]
    pub const fn input(&self) -> &'a [u8] {
        self.buf
    }

    /// The bytes not read yet.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// Nothing is left to read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// An [`ParseErrorKind::UnexpectedEnd`] for the byte `i` bytes after the position.
    #[inline]
    pub(crate) fn end_at(&self, i: usize) -> ParseError {
        ParseError::new(ParseErrorKind::UnexpectedEnd, self.pos.saturating_add(i))
    }

    /// Moves the position `n` bytes on; `n` must not pass the end of the input (the parsers
    /// advance by what they have checked).
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        self.pos += n;
    }

    /// The next `n` bytes.
    #[inline]
    pub fn read_bytes(&mut self, n: usize) -> ParseResult<&'a [u8]> {
        let rest = self.rest();
        match rest.get(..n) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => Err(self.end_at(rest.len())),
        }
    }

    /// Skips `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: usize) -> ParseResult<()> {
        self.read_bytes(n).map(drop)
    }

    /// The next `N` bytes as an array.
    #[inline]
    pub fn read_array<const N: usize>(&mut self) -> ParseResult<[u8; N]> {
        let rest = self.rest();
        match rest.first_chunk::<N>() {
            Some(a) => {
                self.pos += N;
                Ok(*a)
            }
            None => Err(self.end_at(rest.len())),
        }
    }

    /// The next byte.
    #[inline]
    pub fn read_u8(&mut self) -> ParseResult<u8> {
        self.read_array::<1>().map(|[b]| b)
    }

    le_reads! {
        /// A little-endian `u32`.
        read_u32 -> u32;
        /// A little-endian `u64`.
        read_u64 -> u64;
        /// A little-endian IEEE 754 single (`getFloat`'s four bytes).
        read_f32 -> f32;
        /// A little-endian IEEE 754 double (`getDouble`'s eight bytes).
        read_f64 -> f64;
    }
}

/// The little-endian `u32` at `offset` of `bytes`, missing bytes read as zeros (a short meta
/// file or data-file header as the official library maps it).
pub fn u32_zero_filled(bytes: &[u8], offset: usize) -> u32 {
    let mut a = [0u8; 4];
    let have = bytes.get(offset..).unwrap_or_default();
    let n = have.len().min(4);
    a[..n].copy_from_slice(&have[..n]);
    u32::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_reads_advance_and_fail_in_place() {
        let b = [1u8, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 9];
        let mut c = Cursor::new(&b);
        assert_eq!(c.read_u32(), Ok(1));
        assert_eq!(c.read_u64(), Ok(2));
        assert_eq!(c.position(), 12);
        assert_eq!(
            c.read_u32(),
            Err(ParseError::new(ParseErrorKind::UnexpectedEnd, 13))
        );
        assert_eq!(c.position(), 12);
        assert_eq!(c.rest(), &[9]);
        assert_eq!(c.read_u8(), Ok(9));
        assert!(c.is_empty());
        assert_eq!(c.read_bytes(0), Ok(&[][..]));
        let mut past = Cursor::at(&b, 20);
        assert!(past.is_empty() && past.rest().is_empty());
        assert_eq!(
            past.read_u8(),
            Err(ParseError::new(ParseErrorKind::UnexpectedEnd, 20))
        );
        assert_eq!(Cursor::new(&1.5f32.to_le_bytes()).read_f32(), Ok(1.5f32));
        assert_eq!(Cursor::new(&(-2.25f64).to_le_bytes()).read_f64(), Ok(-2.25));
    }

    #[test]
    fn errors_convert_with_context() {
        let e = ParseError::new(ParseErrorKind::MalformedVarint, 3).at(10);
        assert_eq!(Error::from(e), Error::MalformedVarint { offset: 13 });
        assert_eq!(
            Error::from(ParseError::new(
                ParseErrorKind::LengthPastEnd {
                    len: 7,
                    remaining: 2
                },
                1
            )),
            Error::LengthPastEnd {
                offset: 1,
                len: 7,
                remaining: 2
            }
        );
        assert!(matches!(
            e.in_content(true),
            Error::Undecryptable { source } if *source == Error::MalformedVarint { offset: 13 }
        ));
        assert_eq!(e.in_content(false), Error::MalformedVarint { offset: 13 });
        assert_eq!(e.to_string(), "malformed varint at region offset 13");
    }

    #[test]
    fn zero_filled_u32() {
        assert_eq!(u32_zero_filled(&[1, 2, 3, 4, 5], 1), 0x0504_0302);
        assert_eq!(u32_zero_filled(&[1, 2], 0), 0x0201);
        assert_eq!(u32_zero_filled(&[], 0), 0);
        assert_eq!(u32_zero_filled(&[1], 9), 0);
    }
}
