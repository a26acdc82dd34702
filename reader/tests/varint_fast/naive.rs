//! Reference decoders (memchr's `tests/memchr/naive.rs` style): the official
//! `CodedInputData` rules written as plainly as possible, byte by byte with explicit shifts,
//! for the property tests to check the reader's decoders against. Test-only.
//!
//! `readRawVarint32`: up to five bytes build the value (the fifth contributes its low four
//! bits); a fifth byte with its continuation bit is followed by up to five more bytes that
//! are skipped; a tenth byte with its continuation bit is malformed. `readInt64`: up to ten
//! 7-bit groups, bits past 64 dropped. `readData`: a varint32 length, negative or past the end
//! fails. Every failure is `None`; the position is only advanced on success.

pub fn varint32(buf: &[u8], pos: &mut usize) -> Option<u32> {
    let mut p = *pos;
    let mut next = || {
        let b = buf.get(p).copied();
        p += 1;
        b
    };
    let b0 = next()?;
    let mut result = (b0 & 0x7f) as u32;
    if b0 >= 0x80 {
        let b1 = next()?;
        result |= ((b1 & 0x7f) as u32) << 7;
        if b1 >= 0x80 {
            let b2 = next()?;
            result |= ((b2 & 0x7f) as u32) << 14;
            if b2 >= 0x80 {
                let b3 = next()?;
                result |= ((b3 & 0x7f) as u32) << 21;
                if b3 >= 0x80 {
                    let b4 = next()?;
                    result |= (b4 as u32) << 28;
                    if b4 >= 0x80 {
                        let mut ended = false;
                        for _ in 0..5 {
                            if next()? < 0x80 {
                                ended = true;
                                break;
                            }
                        }
                        if !ended {
                            return None;
                        }
                    }
                }
            }
        }
    }
    *pos = p;
    Some(result)
}

pub fn varint64(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut p = *pos;
    let mut result = 0u64;
    let mut shift = 0u32;
    while shift < 64 {
        let b = *buf.get(p)?;
        p += 1;
        result |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            *pos = p;
            return Some(result);
        }
        shift += 7;
    }
    None
}

pub fn len_prefixed<'a>(buf: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let mut p = *pos;
    let len = varint32(buf, &mut p)? as i32;
    if len < 0 {
        return None;
    }
    let end = p.checked_add(len as usize)?;
    let run = buf.get(p..end)?;
    *pos = end;
    Some(run)
}
