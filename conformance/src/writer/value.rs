//! The one self-identifying value scheme: the value op `seq` writes to key `key` names both,
//! so a reader that observes it knows which op wrote it, and the exact comparison with that
//! op's value ([`crate::writer::model::Model`]) rejects any torn or foreign value.
//!
//! Text values start with the header `key#seq#size#` followed by `size` seeded letters;
//! `I64` is `key << 40 | seq`, `U32` is `seq` (its key is where it was read).

use crate::vocab::value::{Value, ValueType};
use crate::vocab::SplitMix;

/// The types a self-identifying value can have.
pub const STAMPED_TYPES: [ValueType; 5] = [
    ValueType::String,
    ValueType::I64,
    ValueType::Bytes,
    ValueType::U32,
    ValueType::Strings,
];

/// The (fixed) type of key `key`'s values in a typed plan.
pub fn key_type(key: usize) -> ValueType {
    STAMPED_TYPES[key % STAMPED_TYPES.len()]
}

fn letters(key: usize, seq: usize, size: usize) -> String {
    SplitMix::new(((key as u64) << 32) ^ seq as u64).letters(size)
}

/// The value op `seq` writes to key `key`: of type `ty` (one of [`STAMPED_TYPES`]; any other
/// type gets bytes), `size` letters after the header for the text types.
pub fn stamp(key: usize, seq: usize, ty: ValueType, size: usize) -> Value {
    let head = format!("{key}#{seq}#{size}#");
    match ty {
        ValueType::String => Value::String(head + &letters(key, seq, size)),
        ValueType::I64 => Value::I64(((key as i64) << 40) | seq as i64),
        ValueType::U32 => Value::U32(seq as u32),
        ValueType::Strings => Value::Strings(vec![head, letters(key, seq, size)]),
        _ => Value::Bytes((head + &letters(key, seq, size)).into_bytes()),
    }
}

/// The op index a value observed under key `key` claims to be written by, if it parses and
/// names that key. Only a claim: compare with the op's value to rule out a torn one.
pub fn claimed_seq(key: usize, v: &Value) -> Option<usize> {
    fn head(text: &[u8]) -> Option<(usize, usize)> {
        let text = std::str::from_utf8(text.get(..text.len().min(40))?)
            .or_else(|e| std::str::from_utf8(&text[..e.valid_up_to()]))
            .ok()?;
        let mut parts = text.split('#');
        let k = parts.next()?.parse().ok()?;
        let s = parts.next()?.parse().ok()?;
        Some((k, s))
    }
    let (k, seq) = match v {
        Value::String(s) => head(s.as_bytes())?,
        Value::Bytes(b) => head(b)?,
        Value::Strings(v) => head(v.first()?.as_bytes())?,
        Value::I64(x) => ((x >> 40) as usize, (x & ((1 << 40) - 1)) as usize),
        Value::U32(x) => (key, *x as usize),
        _ => return None,
    };
    (k == key).then_some(seq)
}

const CHARS: &[&str] = &[
    "a", "b", "z", "0", "9", " ", "-", "_", "é", "ß", "€", "中", "文", "🔑", "\"", "\\", "\n",
    "\t", "\u{1}",
];

fn rand_string(rng: &mut SplitMix, max: u64) -> String {
    let n = rng.below(max + 1);
    (0..n)
        .map(|_| CHARS[rng.below(CHARS.len() as u64) as usize])
        .collect()
}

fn rand_f64(rng: &mut SplitMix) -> f64 {
    match rng.below(8) {
        0 => 0.0,
        1 => -0.0,
        2 => f64::INFINITY,
        3 => f64::NEG_INFINITY,
        4 => f64::from_bits(1 + rng.below(1 << 40)), // subnormal
        _ => loop {
            let x = f64::from_bits(rng.next_u64());
            if !x.is_nan() {
                break x;
            }
        },
    }
}

fn rand_f32(rng: &mut SplitMix) -> f32 {
    match rng.below(8) {
        0 => 0.0,
        1 => -0.0,
        2 => f32::INFINITY,
        3 => f32::NEG_INFINITY,
        4 => f32::from_bits(1 + rng.below(1 << 20) as u32),
        _ => loop {
            let x = f32::from_bits(rng.next_u64() as u32);
            if !x.is_nan() {
                break x;
            }
        },
    }
}

fn rand_i64(rng: &mut SplitMix) -> i64 {
    match rng.below(6) {
        0 => i64::MIN,
        1 => i64::MAX,
        2 => 0,
        3 => -(rng.below(1000) as i64),
        _ => rng.next_u64() as i64,
    }
}

fn rand_i32(rng: &mut SplitMix) -> i32 {
    match rng.below(6) {
        0 => i32::MIN,
        1 => i32::MAX,
        2 => 0,
        3 => -(rng.below(1000) as i32),
        _ => rng.next_u64() as i32,
    }
}

fn rand_u64(rng: &mut SplitMix) -> u64 {
    match rng.below(4) {
        0 => u64::MAX,
        1 => 0,
        _ => rng.next_u64() >> rng.below(64),
    }
}

fn rand_u32(rng: &mut SplitMix) -> u32 {
    match rng.below(4) {
        0 => u32::MAX,
        1 => 0,
        _ => (rng.next_u64() as u32) >> rng.below(32),
    }
}

/// A seeded value of type `ty` with edge cases (integer extremes, +-0.0, infinities,
/// subnormals, empty text, multi-byte and control characters) whose text and bytes run up to
/// `size` bytes and whose lists hold up to `max(size / 8, 5)` elements. These values do not
/// identify themselves: the writers that use them (the fault suite, the corpus recorder)
/// compare the official library with the reader, not with an op stream.
pub fn seeded(rng: &mut SplitMix, ty: ValueType, size: usize) -> Value {
    let max = (size / 8).max(5) as u64;
    fn list<T>(rng: &mut SplitMix, max: u64, f: impl Fn(&mut SplitMix) -> T) -> Vec<T> {
        let k = rng.below(max + 1);
        (0..k).map(|_| f(rng)).collect()
    }
    match ty {
        ValueType::Bool => Value::Bool(rng.below(2) == 1),
        ValueType::I32 => Value::I32(rand_i32(rng)),
        ValueType::U32 => Value::U32(rand_u32(rng)),
        ValueType::I64 => Value::I64(rand_i64(rng)),
        ValueType::U64 => Value::U64(rand_u64(rng)),
        ValueType::F32 => Value::F32(rand_f32(rng)),
        ValueType::F64 => Value::F64(rand_f64(rng)),
        ValueType::String => match rng.below(8) {
            0 => Value::String(String::new()),
            1 => Value::String("文".repeat(size / 3 + 1)),
            _ => Value::String(rand_string(rng, size as u64)),
        },
        ValueType::Bytes => {
            let len = match rng.below(8) {
                0 => 0,
                1 => size,
                _ => rng.below(size as u64 + 1) as usize,
            };
            Value::Bytes((0..len).map(|_| rng.next_u64() as u8).collect())
        }
        ValueType::Strings => Value::Strings(list(rng, max, |r| rand_string(r, 16))),
        ValueType::VecI32 => Value::VecI32(list(rng, max, rand_i32)),
        ValueType::VecU32 => Value::VecU32(list(rng, max, rand_u32)),
        ValueType::VecI64 => Value::VecI64(list(rng, max, rand_i64)),
        ValueType::VecU64 => Value::VecU64(list(rng, max, rand_u64)),
        ValueType::VecF32 => Value::VecF32(list(rng, max, rand_f32)),
        ValueType::VecF64 => Value::VecF64(list(rng, max, rand_f64)),
        ValueType::VecBool => Value::VecBool(list(rng, max, |r| r.below(2) == 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_name_their_key_and_op() {
        for ty in STAMPED_TYPES.into_iter().chain([ValueType::F64]) {
            let v = stamp(5, 1234, ty, 300);
            assert_eq!(claimed_seq(5, &v), Some(1234), "{ty:?}");
            assert_eq!(stamp(5, 1234, ty, 300), v, "deterministic");
            if ty != ValueType::U32 {
                assert_eq!(claimed_seq(6, &v), None, "{ty:?} under another key");
            }
        }
        assert_ne!(
            stamp(5, 1, ValueType::Bytes, 40),
            stamp(5, 2, ValueType::Bytes, 40)
        );
        assert_eq!(claimed_seq(1, &Value::Bytes(b"garbage".to_vec())), None);
    }
}
