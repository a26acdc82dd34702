//! The one self-identifying value scheme: the value op `seq` writes to key `key` names both,
//! so a reader that observes it knows which op wrote it, and the exact comparison with that
//! op's value ([`crate::writer::model::Model`]) rejects any torn or foreign value.
//!
//! Text values start with the header `key#seq#size#` followed by `size` seeded letters;
//! `I64` is `key << 40 | seq`, `U32` is `seq` (its key is where it was read).

use crate::value::{Value, ValueType};
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
