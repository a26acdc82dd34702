//! Typed MMKV values and getter types, shared by workloads, manifests and comparisons.
//!
//! Floats are compared by their bit patterns everywhere (`-0.0 != 0.0`), because the
//! question is always "did the reader return exactly the bytes the official getter did".

use std::fmt;

use serde::{Deserialize, Serialize};

pub use mmkv_reader::decode::ValueType;

/// A typed value as set through (or read back from) the official API.
///
/// Serialized (YAML workloads) as `{type: i32, value: -5}`; bytes as lowercase hex.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum Value {
    /// bool
    Bool(bool),
    /// int32_t
    I32(i32),
    /// uint32_t
    U32(u32),
    /// int64_t
    I64(i64),
    /// uint64_t
    U64(u64),
    /// float (a NaN is written as `"nan:0x..."` with its bits)
    F32(#[serde(with = "float_bits::f32s")] f32),
    /// double (a NaN is written as `"nan:0x..."` with its bits)
    F64(#[serde(with = "float_bits::f64s")] f64),
    /// `std::string`
    String(String),
    /// `MMBuffer` (raw bytes)
    Bytes(#[serde(with = "hex_bytes")] Vec<u8>),
    /// `std::vector<std::string>`
    Strings(Vec<String>),
    /// `std::vector<std::string>` with items of any bytes (written only; read back through the
    /// string-vector getter, which is UTF-8-only, and `get_bytes_vec`); items as hex
    ByteStrings(#[serde(with = "hex_bytes::many")] Vec<Vec<u8>>),
    /// `std::vector<int32_t>`
    VecI32(Vec<i32>),
    /// `std::vector<uint32_t>`
    VecU32(Vec<u32>),
    /// `std::vector<int64_t>`
    VecI64(Vec<i64>),
    /// `std::vector<uint64_t>`
    VecU64(Vec<u64>),
    /// `std::vector<float>`
    VecF32(#[serde(with = "float_bits::vec_f32")] Vec<f32>),
    /// `std::vector<double>`
    VecF64(#[serde(with = "float_bits::vec_f64")] Vec<f64>),
    /// `std::vector<bool>`
    VecBool(Vec<bool>),
}

impl Value {
    /// The getter type that reads this value back as written.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::Bool(_) => ValueType::Bool,
            Value::I32(_) => ValueType::I32,
            Value::U32(_) => ValueType::U32,
            Value::I64(_) => ValueType::I64,
            Value::U64(_) => ValueType::U64,
            Value::F32(_) => ValueType::F32,
            Value::F64(_) => ValueType::F64,
            Value::String(_) => ValueType::String,
            Value::Bytes(_) => ValueType::Bytes,
            Value::Strings(_) | Value::ByteStrings(_) => ValueType::Strings,
            Value::VecI32(_) => ValueType::VecI32,
            Value::VecU32(_) => ValueType::VecU32,
            Value::VecI64(_) => ValueType::VecI64,
            Value::VecU64(_) => ValueType::VecU64,
            Value::VecF32(_) => ValueType::VecF32,
            Value::VecF64(_) => ValueType::VecF64,
            Value::VecBool(_) => ValueType::VecBool,
        }
    }

    /// The reader's payload encoding of a typed value (the official writer's encoding, from
    /// `mmkv_reader::test_support`); `None` for byte-string vectors (never read back typed).
    pub fn payload(&self) -> Option<Vec<u8>> {
        use mmkv_reader::decode::Value as R;
        use mmkv_reader::test_support::encode_value;
        let r = match self {
            Value::Bool(x) => R::Bool(*x),
            Value::I32(x) => R::I32(*x),
            Value::U32(x) => R::U32(*x),
            Value::I64(x) => R::I64(*x),
            Value::U64(x) => R::U64(*x),
            Value::F32(x) => R::F32(*x),
            Value::F64(x) => R::F64(*x),
            Value::String(x) => R::String(x),
            Value::Bytes(x) => R::Bytes(x),
            Value::Strings(x) => R::Strings(x.clone()),
            Value::ByteStrings(_) => return None,
            Value::VecI32(x) => R::VecI32(x.clone()),
            Value::VecU32(x) => R::VecU32(x.clone()),
            Value::VecI64(x) => R::VecI64(x.clone()),
            Value::VecU64(x) => R::VecU64(x.clone()),
            Value::VecF32(x) => R::VecF32(x.clone()),
            Value::VecF64(x) => R::VecF64(x.clone()),
            Value::VecBool(x) => R::VecBool(x.clone()),
        };
        Some(encode_value(&r))
    }
}

impl From<mmkv_reader::decode::Value<'_>> for Value {
    /// What the reader's getter returned, as the harness holds it (the one conversion from the
    /// reader's value table).
    fn from(v: mmkv_reader::decode::Value<'_>) -> Value {
        use mmkv_reader::decode::Value as R;
        match v {
            R::Bool(x) => Value::Bool(x),
            R::I32(x) => Value::I32(x),
            R::U32(x) => Value::U32(x),
            R::I64(x) => Value::I64(x),
            R::U64(x) => Value::U64(x),
            R::F32(x) => Value::F32(x),
            R::F64(x) => Value::F64(x),
            R::String(x) => Value::String(x.to_string()),
            R::Bytes(x) => Value::Bytes(x.to_vec()),
            R::Strings(x) => Value::Strings(x),
            R::VecI32(x) => Value::VecI32(x),
            R::VecU32(x) => Value::VecU32(x),
            R::VecI64(x) => Value::VecI64(x),
            R::VecU64(x) => Value::VecU64(x),
            R::VecF32(x) => Value::VecF32(x),
            R::VecF64(x) => Value::VecF64(x),
            R::VecBool(x) => Value::VecBool(x),
        }
    }
}

impl PartialEq for Value {
    /// Exact equality; floats compare by bit pattern.
    fn eq(&self, other: &Value) -> bool {
        fn bits<T: Copy, B: PartialEq>(a: &[T], b: &[T], f: impl Fn(T) -> B) -> bool {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| f(*x) == f(*y))
        }
        match self {
            Value::Bool(a) => matches!(other, Value::Bool(b) if a == b),
            Value::I32(a) => matches!(other, Value::I32(b) if a == b),
            Value::U32(a) => matches!(other, Value::U32(b) if a == b),
            Value::I64(a) => matches!(other, Value::I64(b) if a == b),
            Value::U64(a) => matches!(other, Value::U64(b) if a == b),
            Value::F32(a) => matches!(other, Value::F32(b) if a.to_bits() == b.to_bits()),
            Value::F64(a) => matches!(other, Value::F64(b) if a.to_bits() == b.to_bits()),
            Value::String(a) => matches!(other, Value::String(b) if a == b),
            Value::Bytes(a) => matches!(other, Value::Bytes(b) if a == b),
            Value::Strings(a) => matches!(other, Value::Strings(b) if a == b),
            Value::ByteStrings(a) => matches!(other, Value::ByteStrings(b) if a == b),
            Value::VecI32(a) => matches!(other, Value::VecI32(b) if a == b),
            Value::VecU32(a) => matches!(other, Value::VecU32(b) if a == b),
            Value::VecI64(a) => matches!(other, Value::VecI64(b) if a == b),
            Value::VecU64(a) => matches!(other, Value::VecU64(b) if a == b),
            Value::VecBool(a) => matches!(other, Value::VecBool(b) if a == b),
            Value::VecF32(a) => matches!(other, Value::VecF32(b) if bits(a, b, f32::to_bits)),
            Value::VecF64(a) => matches!(other, Value::VecF64(b) if bits(a, b, f64::to_bits)),
        }
    }
}

impl Eq for Value {}

/// Shortens long renderings in diffs and progress output.
fn clip(s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &s[..end], s.len())
}

impl fmt::Display for Value {
    /// A compact rendering: `i32(-5)`, `f32(0x80000000 = -0)`, `bytes[3](00ff10)` ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let body = match self {
            Value::Bool(v) => format!("{v}"),
            Value::I32(v) => format!("{v}"),
            Value::U32(v) => format!("{v}"),
            Value::I64(v) => format!("{v}"),
            Value::U64(v) => format!("{v}"),
            Value::F32(v) => format!("{:#010x} = {v:e}", v.to_bits()),
            Value::F64(v) => format!("{:#018x} = {v:e}", v.to_bits()),
            Value::String(v) => format!("[{}] {v:?}", v.len()),
            Value::Bytes(v) => format!("[{}] {}", v.len(), hex_bytes::encode(v)),
            Value::Strings(v) => format!("{v:?}"),
            Value::ByteStrings(v) => format!(
                "{:?}",
                v.iter().map(|b| hex_bytes::encode(b)).collect::<Vec<_>>()
            ),
            Value::VecI32(v) => format!("{v:?}"),
            Value::VecU32(v) => format!("{v:?}"),
            Value::VecI64(v) => format!("{v:?}"),
            Value::VecU64(v) => format!("{v:?}"),
            Value::VecBool(v) => format!("{v:?}"),
            Value::VecF32(v) => format!(
                "{:?}",
                v.iter()
                    .map(|x| format!("{:#010x}", x.to_bits()))
                    .collect::<Vec<_>>()
            ),
            Value::VecF64(v) => format!(
                "{:?}",
                v.iter()
                    .map(|x| format!("{:#018x}", x.to_bits()))
                    .collect::<Vec<_>>()
            ),
        };
        write!(f, "{}({})", self.value_type(), clip(body, 160))
    }
}

/// Renders an optional read for diffs: `none` or the value.
pub fn show(read: &Option<Value>) -> String {
    match read {
        None => "none".to_string(),
        Some(v) => v.to_string(),
    }
}

/// Floats in YAML/JSON workloads: numbers, except NaNs, which keep their exact bits as
/// `"nan:0x7fc00001"` (a YAML `.nan` would lose sign and payload).
pub mod float_bits {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Repr<F> {
        Number(F),
        Bits(String),
    }

    fn parse_bits(s: &str) -> Option<u64> {
        u64::from_str_radix(s.strip_prefix("nan:0x")?, 16).ok()
    }

    macro_rules! float_mod {
        ($name:ident, $vec:ident, $f:ty, $bits:ty) => {
            /// Serde for one float.
            pub mod $name {
                use super::*;

                fn to_repr(v: $f) -> Repr<$f> {
                    if v.is_nan() {
                        Repr::Bits(format!("nan:{:#x}", v.to_bits()))
                    } else {
                        Repr::Number(v)
                    }
                }

                fn from_repr<E: serde::de::Error>(r: Repr<$f>) -> Result<$f, E> {
                    match r {
                        Repr::Number(v) => Ok(v),
                        Repr::Bits(s) => parse_bits(&s)
                            .and_then(|b| <$bits>::try_from(b).ok())
                            .map(<$f>::from_bits)
                            .ok_or_else(|| E::custom(format!("bad float {s:?}"))),
                    }
                }

                /// Serializes.
                pub fn serialize<S: Serializer>(v: &$f, s: S) -> Result<S::Ok, S::Error> {
                    to_repr(*v).serialize(s)
                }

                /// Deserializes.
                pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<$f, D::Error> {
                    from_repr(Repr::<$f>::deserialize(d)?)
                }

                pub(super) fn many<S: Serializer>(v: &[$f], s: S) -> Result<S::Ok, S::Error> {
                    s.collect_seq(v.iter().map(|x| to_repr(*x)))
                }

                pub(super) fn many_de<'de, D: Deserializer<'de>>(
                    d: D,
                ) -> Result<Vec<$f>, D::Error> {
                    Vec::<Repr<$f>>::deserialize(d)?
                        .into_iter()
                        .map(from_repr)
                        .collect()
                }
            }

            /// Serde for a vector of floats.
            pub mod $vec {
                use super::*;

                /// Serializes.
                pub fn serialize<S: Serializer>(v: &[$f], s: S) -> Result<S::Ok, S::Error> {
                    super::$name::many(v, s)
                }

                /// Deserializes.
                pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<$f>, D::Error> {
                    super::$name::many_de(d)
                }
            }
        };
    }

    float_mod!(f32s, vec_f32, f32, u32);
    float_mod!(f64s, vec_f64, f64, u64);
}

/// Lowercase hex encoding for byte strings (serde `with` module and helpers).
pub mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub use mmkv_corpus::hex::{decode, encode};

    /// serde serializer: bytes as a hex string.
    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&encode(bytes))
    }

    /// serde deserializer: a hex string to bytes.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        decode(&text).ok_or_else(|| serde::de::Error::custom("invalid hex string"))
    }

    /// serde `with` module for a list of byte strings, each as a hex string.
    pub mod many {
        use serde::{Deserialize, Deserializer, Serializer};

        /// Serializes.
        pub fn serialize<S: Serializer>(items: &[Vec<u8>], s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(items.iter().map(|b| super::encode(b)))
        }

        /// Deserializes.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<u8>>, D::Error> {
            Vec::<String>::deserialize(d)?
                .iter()
                .map(|t| {
                    super::decode(t).ok_or_else(|| serde::de::Error::custom("invalid hex string"))
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_compare_by_bits() {
        assert_ne!(Value::F32(0.0), Value::F32(-0.0));
        assert_eq!(Value::F64(f64::INFINITY), Value::F64(f64::INFINITY));
        assert_ne!(Value::VecF64(vec![0.0]), Value::VecF64(vec![-0.0]));
        assert_ne!(Value::I32(1), Value::U32(1));
    }

    #[test]
    fn byte_strings_round_trip_through_yaml() {
        let v = Value::ByteStrings(vec![vec![0xff, 0], b"ok".to_vec(), vec![]]);
        let text = serde_norway::to_string(&v).unwrap();
        assert!(text.contains("ff00"), "{text}");
        assert_eq!(serde_norway::from_str::<Value>(&text).unwrap(), v);
        assert_eq!(v.value_type(), ValueType::Strings);
    }

    #[test]
    fn hex_round_trip() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(hex_bytes::decode(&hex_bytes::encode(&bytes)), Some(bytes));
        assert_eq!(hex_bytes::decode("0"), None);
        assert_eq!(hex_bytes::decode("zz"), None);
    }
}
