//! The getters' Option fast path (`varint32_prefix[_len]` / `varint64_prefix` /
//! `len_prefixed_prefix`, used by `decode::as_bool/as_i32/as_u32/as_i64/as_u64/as_bytes/as_str`)
//! must agree with the reference decoders `read_varint32` / `read_varint64` /
//! `read_len_prefixed` (the official `CodedInputData` semantics) on every input:
//! same value, and `None` exactly where the reference fails.

use mmkv_reader::decode;
use mmkv_reader::varint::{
    len_prefixed_prefix, read_len_prefixed, read_varint32, read_varint64, varint32_prefix,
    varint32_prefix_len, varint64_prefix,
};
use proptest::prelude::*;

/// The getters as they were defined before the fast path: non-empty payload, one
/// reference read from its start, any error is no value.
fn ref32(p: &[u8]) -> Option<u32> {
    if p.is_empty() {
        return None;
    }
    read_varint32(p, &mut 0).ok()
}

fn ref64(p: &[u8]) -> Option<u64> {
    if p.is_empty() {
        return None;
    }
    read_varint64(p, &mut 0).ok()
}

fn ref_bytes(p: &[u8]) -> Option<&[u8]> {
    if p.is_empty() {
        return None;
    }
    let mut pos = 0;
    read_len_prefixed(p, &mut pos).ok().map(|r| &p[r])
}

fn check(p: &[u8]) {
    let mut pos = 0;
    let reference = read_varint32(p, &mut pos).ok().map(|v| (v, pos));
    assert_eq!(varint32_prefix_len(p), reference, "varint32 len {p:02x?}");
    let rb = ref_bytes(p);
    assert_eq!(len_prefixed_prefix(p), rb, "len-prefixed {p:02x?}");
    assert_eq!(decode::as_bytes(p), rb, "as_bytes {p:02x?}");
    assert_eq!(
        decode::as_str(p),
        rb.and_then(|b| std::str::from_utf8(b).ok()),
        "as_str {p:02x?}"
    );
    let r32 = ref32(p);
    let r64 = ref64(p);
    assert_eq!(varint32_prefix(p), r32, "varint32 {p:02x?}");
    assert_eq!(varint64_prefix(p), r64, "varint64 {p:02x?}");
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
    fn fast_path_equals_reference_on_arbitrary_bytes(p in prop::collection::vec(byte(), 0..16)) {
        check(&p);
    }

    #[test]
    fn fast_path_equals_reference_on_encoded_values(v in any::<u64>(), tail in prop::collection::vec(any::<u8>(), 0..4)) {
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
fn fast_path_equals_reference_exhaustive_small() {
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
    assert_eq!(
        varint32_prefix(&[0xff, 0xff, 0xff, 0xff, 0x7f]),
        Some(0xffff_ffff)
    );
    assert_eq!(varint32_prefix(&[0x80, 0x80, 0x80, 0x80, 0x10]), Some(0));
    assert_eq!(varint32_prefix(&[0xff; 10]), None);
    assert_eq!(
        varint32_prefix(&[0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
        Some((-5i32) as u32)
    );
    assert_eq!(varint64_prefix(&[0xff; 9]), None);
    assert_eq!(varint64_prefix(&[]), None);
}
