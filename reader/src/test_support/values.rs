//! Every value type encoded as the official writer encodes it, and sample values of every type:
//! the inverse of [`crate::decode::decode`], for tests that walk [`ValueType::ALL`].

use super::{length_prefixed, varint_bytes};
use crate::decode::{Value, ValueType};
use crate::varint::write_varint;

/// The payload the official setter writes for `value` (without an expire suffix): varints
/// for integers and bools (`int32` sign-extended to 64 bits, as `writeInt32` does), little-endian
/// floats, length-prefixed strings and bytes, vectors as a varint content length then the items.
pub fn encode_value(value: &Value<'_>) -> Vec<u8> {
    match value {
        Value::Bool(b) => varint_bytes(u64::from(*b)),
        Value::I32(x) => varint_bytes(i64::from(*x) as u64),
        Value::U32(x) => varint_bytes(u64::from(*x)),
        Value::I64(x) => varint_bytes(*x as u64),
        Value::U64(x) => varint_bytes(*x),
        Value::F32(x) => x.to_le_bytes().to_vec(),
        Value::F64(x) => x.to_le_bytes().to_vec(),
        Value::String(s) => length_prefixed(s.as_bytes()),
        Value::Bytes(b) => length_prefixed(b),
        Value::Strings(items) => vector(items, |o, s| o.extend(length_prefixed(s.as_bytes()))),
        Value::VecI32(xs) => vector(xs, |o, x| write_varint(o, i64::from(*x) as u64)),
        Value::VecU32(xs) => vector(xs, |o, x| write_varint(o, u64::from(*x))),
        Value::VecI64(xs) => vector(xs, |o, x| write_varint(o, *x as u64)),
        Value::VecU64(xs) => vector(xs, |o, x| write_varint(o, *x)),
        Value::VecF32(xs) => vector(xs, |o, x| o.extend_from_slice(&x.to_le_bytes())),
        Value::VecF64(xs) => vector(xs, |o, x| o.extend_from_slice(&x.to_le_bytes())),
        Value::VecBool(xs) => vector(xs, |o, x| write_varint(o, u64::from(*x))),
    }
}

fn vector<T>(items: &[T], mut item: impl FnMut(&mut Vec<u8>, &T)) -> Vec<u8> {
    let mut content = Vec::new();
    for x in items {
        item(&mut content, x);
    }
    length_prefixed(&content)
}

/// A few values of type `ty` (edge values, empty and non-empty vectors; no NaN, so that
/// `==` compares them), each decoding back to itself.
pub fn sample_values(ty: ValueType) -> Vec<Value<'static>> {
    match ty {
        ValueType::Bool => vec![Value::Bool(false), Value::Bool(true)],
        ValueType::I32 => [0, 1, -1, i32::MIN, i32::MAX].map(Value::I32).to_vec(),
        ValueType::U32 => [0, 300, u32::MAX].map(Value::U32).to_vec(),
        ValueType::I64 => [0, -2, i64::MIN, i64::MAX].map(Value::I64).to_vec(),
        ValueType::U64 => [0, 1 << 40, u64::MAX].map(Value::U64).to_vec(),
        ValueType::F32 => [0.0, -1.5, f32::INFINITY].map(Value::F32).to_vec(),
        ValueType::F64 => [0.0, 1e300, f64::NEG_INFINITY].map(Value::F64).to_vec(),
        ValueType::String => ["", "hello", "é€"].map(Value::String).to_vec(),
        ValueType::Bytes => [&b""[..], &[0, 0xff, 7]].map(Value::Bytes).to_vec(),
        ValueType::Strings => vec![
            Value::Strings(vec![]),
            Value::Strings(vec!["a".into(), String::new(), "文".into()]),
        ],
        ValueType::VecI32 => vec![Value::VecI32(vec![]), Value::VecI32(vec![-1, 0, i32::MAX])],
        ValueType::VecU32 => vec![Value::VecU32(vec![]), Value::VecU32(vec![u32::MAX, 5])],
        ValueType::VecI64 => vec![Value::VecI64(vec![]), Value::VecI64(vec![i64::MIN, 3])],
        ValueType::VecU64 => vec![Value::VecU64(vec![]), Value::VecU64(vec![u64::MAX, 0])],
        ValueType::VecF32 => vec![Value::VecF32(vec![]), Value::VecF32(vec![-0.5, 2.0])],
        ValueType::VecF64 => vec![Value::VecF64(vec![]), Value::VecF64(vec![1e-300, -7.25])],
        ValueType::VecBool => vec![
            Value::VecBool(vec![]),
            Value::VecBool(vec![true, false, true]),
        ],
    }
}
