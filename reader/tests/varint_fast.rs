//! The reader's varint decoders (`Cursor::read_varint32` / `read_varint64` /
//! `read_len_prefixed`, and the getters built on them: `decode::as_bool/as_i32/as_u32/
//! as_i64/as_u64/as_bytes/as_str`) must agree with the test-only reference decoders in
//! `varint_fast/naive.rs` (the official `CodedInputData` semantics written plainly) on every
//! input: same value, same position after the read, and an error exactly where the
//! reference fails (with the cursor left where it was).

#[path = "varint_fast/naive.rs"]
mod naive;

use mmkv_reader::decode;
use mmkv_reader::parse::Cursor;
use mmkv_reader::varint::{read_len_prefixed, read_varint32, read_varint64};
use proptest::prelude::*;

/// A fast read from the start of `p` as (value, position), the cursor unmoved on error.
fn fast<'a, T>(
    p: &'a [u8],
    read: impl FnOnce(&mut Cursor<'a>) -> Result<T, mmkv_reader::parse::ParseError>,
) -> Option<(T, usize)> {
    let mut c = Cursor::new(p);
    match read(&mut c) {
        Ok(v) => Some((v, c.position())),
        Err(_) => {
            assert_eq!(c.position(), 0, "a failed read moved the cursor {p:02x?}");
            None
        }
    }
}

/// A reference read from the start of `p` as (value, position).
fn reference<'a, T>(
    p: &'a [u8],
    read: impl FnOnce(&'a [u8], &mut usize) -> Option<T>,
) -> Option<(T, usize)> {
    let mut pos = 0;
    read(p, &mut pos).map(|v| (v, pos))
}

fn check(p: &[u8]) {
    let r32 = reference(p, naive::varint32);
    assert_eq!(fast(p, Cursor::read_varint32), r32, "varint32 {p:02x?}");
    let r64 = reference(p, naive::varint64);
    assert_eq!(fast(p, Cursor::read_varint64), r64, "varint64 {p:02x?}");
    let rb = reference(p, naive::len_prefixed);
    assert_eq!(
        fast(p, Cursor::read_len_prefixed),
        rb,
        "len-prefixed {p:02x?}"
    );
    // The position-based forms.
    let mut pos = 0;
    assert_eq!(read_varint32(p, &mut pos).ok().map(|v| (v, pos)), r32);
    let mut pos = 0;
    assert_eq!(read_varint64(p, &mut pos).ok().map(|v| (v, pos)), r64);
    let mut pos = 0;
    assert_eq!(
        read_len_prefixed(p, &mut pos).ok().map(|r| (&p[r], pos)),
        rb
    );
    // The getters.
    let rb = rb.map(|(b, _)| b);
    assert_eq!(decode::as_bytes(p), rb, "as_bytes {p:02x?}");
    assert_eq!(
        decode::as_str(p),
        rb.and_then(|b| std::str::from_utf8(b).ok()),
        "as_str {p:02x?}"
    );
    let r32 = r32.map(|(v, _)| v);
    let r64 = r64.map(|(v, _)| v);
    assert_eq!(decode::as_u32(p), r32, "as_u32 {p:02x?}");
    assert_eq!(decode::as_i32(p), r32.map(|v| v as i32), "as_i32 {p:02x?}");
    assert_eq!(decode::as_bool(p), r32.map(|v| v != 0), "as_bool {p:02x?}");
    assert_eq!(decode::as_u64(p), r64, "as_u64 {p:02x?}");
    assert_eq!(decode::as_i64(p), r64.map(|v| v as i64), "as_i64 {p:02x?}");
}

/// Bytes biased towards the interesting classes: continuation bytes (so that 5..=11-byte
/// varints are common), terminators with high nibbles set (dropped bits of the fifth byte).
fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        any::<u8>(),
        0x80u8..=0xff,
        0x80u8..=0xff,
        prop::sample::select(vec![0x00u8, 0x01, 0x0f, 0x10, 0x7f, 0x80, 0x8f, 0x90, 0xff]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn decoders_equal_reference_on_arbitrary_bytes(p in prop::collection::vec(byte(), 0..16)) {
        check(&p);
    }

    #[test]
    fn decoders_equal_reference_on_encoded_values(v in any::<u64>(), tail in prop::collection::vec(any::<u8>(), 0..4)) {
        let mut p = Vec::new();
        mmkv_reader::varint::write_varint(&mut p, v);
        let n = p.len();
        p.extend_from_slice(&tail);
        check(&p);
        // every truncation of an encoded value too
        for cut in 0..n {
            check(&p[..cut]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5_000))]

    /// Length-prefixed runs whose length is near the bytes that follow (exact, short, long),
    /// in minimal and padded (non-minimal, up to 10 bytes) varint forms.
    #[test]
    fn len_prefixed_near_fit(data in prop::collection::vec(any::<u8>(), 0..40), delta in -3i64..3, pad in 0usize..6) {
        let len = (data.len() as i64 + delta).max(0) as u64;
        let mut p = Vec::new();
        mmkv_reader::varint::write_varint(&mut p, len);
        if pad > 0 {
            // non-minimal encoding: continuation bytes with zero payload
            let last = p.len() - 1;
            p[last] |= 0x80;
            p.extend(std::iter::repeat_n(0x80u8, pad - 1));
            p.push(0);
        }
        p.extend_from_slice(&data);
        check(&p);
    }
}

/// Exhaustive over a byte alphabet that covers every branch, for lengths 0..=5, then every
/// prefix length up to 12 of runs of continuation bytes ended by each alphabet byte.
#[test]
fn decoders_equal_reference_exhaustive_small() {
    const A: [u8; 9] = [0x00, 0x01, 0x0f, 0x10, 0x7f, 0x80, 0x8f, 0x90, 0xff];
    let mut buf = Vec::new();
    fn rec(buf: &mut Vec<u8>, depth: usize) {
        check(buf);
        if depth == 0 {
            return;
        }
        for b in A {
            buf.push(b);
            rec(buf, depth - 1);
            buf.pop();
        }
    }
    rec(&mut buf, 5);
    for run in 0..12 {
        for cont in [0x80u8, 0xff, 0x8f] {
            for last in A {
                let mut p = vec![cont; run];
                p.push(last);
                check(&p);
                check(&p[..run]);
            }
        }
    }
    // The known official edge cases, as values.
    let v32 = |p: &[u8]| Cursor::new(p).read_varint32().ok();
    assert_eq!(v32(&[0xff, 0xff, 0xff, 0xff, 0x7f]), Some(0xffff_ffff));
    assert_eq!(v32(&[0x80, 0x80, 0x80, 0x80, 0x10]), Some(0));
    assert_eq!(v32(&[0xff; 10]), None);
    assert_eq!(
        v32(&[0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
        Some((-5i32) as u32)
    );
    assert_eq!(Cursor::new(&[0xff; 9]).read_varint64().ok(), None);
    assert_eq!(Cursor::new(&[]).read_varint64().ok(), None);
}
