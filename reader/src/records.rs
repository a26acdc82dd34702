//! The record stream of the data region.
//!
//! The region (data-file bytes `4 .. 4 + actual size`) starts with an item-size holder
//! (a varint read and ignored, 1..=5 bytes as written), then records
//! `varint key length, key, varint value length, value` until the region end.
//! As in the official `decodeOneMap`, a record whose key is empty has no value part:
//! the parser skips the empty key and goes on with the next length prefix.

use crate::parse::{Cursor, ParseResult};

/// One record as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Offset of the record start relative to the data region (data-file byte 4).
    pub offset: usize,
    /// The key bytes.
    pub key: &'a [u8],
    /// The value bytes as stored (including the 4-byte expire suffix when key expiration is
    /// on). Empty means "deleted".
    pub value: &'a [u8],
}

/// Length of the item-size holder varint at the start of the region.
pub fn holder_len(region: &[u8]) -> ParseResult<usize> {
    let mut c = Cursor::new(region);
    c.read_varint32()?;
    Ok(c.position())
}

/// Iterator over the records of a region (see [`records`]).
#[derive(Debug, Clone)]
pub struct Records<'a> {
    cur: Cursor<'a>,
    base: usize,
    need_holder: bool,
    done: bool,
}

impl<'a> Records<'a> {
    /// How far the iterator has parsed, as an offset relative to the region start.
    pub fn position(&self) -> usize {
        self.base + self.cur.position()
    }
}

/// Iterates the records of a whole region (skipping the item-size holder first). A record
/// that does not parse ends the iteration with its [`crate::parse::ParseError`] (offsets
/// relative to the region; `Error::from` gives the public error).
pub fn records(region: &[u8]) -> Records<'_> {
    Records {
        cur: Cursor::new(region),
        base: 0,
        need_holder: true,
        done: false,
    }
}

/// Iterates records in `chunk`, a piece of a region that starts at a record boundary at
/// region offset `base_offset` (no holder is read). Record offsets and
/// [`Records::position`] are reported relative to the region.
pub fn records_at(chunk: &[u8], base_offset: usize) -> Records<'_> {
    Records {
        cur: Cursor::new(chunk),
        base: base_offset,
        need_holder: false,
        done: false,
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = ParseResult<Record<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.step();
        match r {
            Ok(Some(rec)) => Some(Ok(rec)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e.at(self.base)))
            }
        }
    }
}

impl<'a> Records<'a> {
    fn step(&mut self) -> ParseResult<Option<Record<'a>>> {
        if self.need_holder {
            self.need_holder = false;
            self.cur.read_varint32()?;
        }
        loop {
            if self.cur.is_empty() {
                return Ok(None);
            }
            let start = self.cur.position();
            // The record is taken whole or not at all: the position stays at its start
            // when it does not parse.
            let mut c = self.cur;
            let key = c.read_len_prefixed()?;
            if key.is_empty() {
                self.cur = c;
                continue;
            }
            let value = c.read_len_prefixed()?;
            self.cur = c;
            return Ok(Some(Record {
                offset: self.base + start,
                key,
                value,
            }));
        }
    }
}

/// Splits a stored value into its payload and expire time (LE u32 suffix, 0 = never).
/// `None` when the value is shorter than 4 bytes.
pub fn split_expire(value: &[u8]) -> Option<(&[u8], u32)> {
    let (payload, t) = value.split_at_checked(value.len().checked_sub(4)?)?;
    Some((payload, Cursor::new(t).read_u32().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ParseError, ParseErrorKind};
    use crate::varint::write_varint;

    fn rec(out: &mut Vec<u8>, k: &[u8], v: &[u8]) {
        write_varint(out, k.len() as u64);
        out.extend_from_slice(k);
        write_varint(out, v.len() as u64);
        out.extend_from_slice(v);
    }

    #[test]
    fn parses_records_with_holder() {
        let mut r = vec![0x80, 0x80, 0x80, 0x01];
        rec(&mut r, b"a", b"\x01");
        rec(&mut r, b"bb", b"");
        assert_eq!(holder_len(&r).unwrap(), 4);
        let v: Vec<_> = records(&r).collect::<ParseResult<_>>().unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].offset, 4);
        assert_eq!(v[0].key, b"a");
        assert_eq!(v[1].value, b"");
        let mut it = records(&r);
        it.by_ref().for_each(drop);
        assert_eq!(it.position(), r.len());
    }

    #[test]
    fn empty_key_has_no_value() {
        let mut r = vec![0x00];
        r.push(0); // empty key
        rec(&mut r, b"k", b"v");
        let v: Vec<_> = records(&r).collect::<ParseResult<_>>().unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].key, b"k");
    }

    #[test]
    fn error_once_then_stop() {
        let mut r = vec![0x00];
        rec(&mut r, b"k", b"v");
        r.extend_from_slice(&[5, b'x']);
        let v: Vec<_> = records(&r).collect();
        assert_eq!(v.len(), 2);
        let past_end = |r: &ParseResult<Record>| {
            matches!(
                r,
                Err(ParseError {
                    kind: ParseErrorKind::LengthPastEnd { .. },
                    offset: 5
                })
            )
        };
        assert!(past_end(&v[1]));
        let chunk = &r[5..];
        let v: Vec<_> = records_at(chunk, 5).collect();
        assert!(past_end(&v[0]));
    }

    #[test]
    fn split() {
        assert_eq!(split_expire(b"abc"), None);
        assert_eq!(split_expire(&[9, 1, 0, 0, 0]), Some((&[9u8][..], 1u32)));
    }
}
