//! Value types, decoding a payload as a given type (official getter semantics, through
//! `mmkv_reader::decode`), and type inference for reading by eye.
//!
//! MMKV does not store types. [`guesses`] lists the plausible decodings of a payload, most likely first:
//!
//! | candidate | condition | rank |
//! |---|---|---|
//! | `strings` | varint total length = rest, items (varint length + UTF-8) consume it exactly, all printable | 92 |
//! | `string` | varint length = rest, valid UTF-8, printable, non-empty | 90 |
//! | `f64` / `f32` | 8 / 4 bytes, "round" value (many trailing zero mantissa bits, normal, 1e-6..1e12 or 0) | 85 / 84 |
//! | `i32` / `i64` | one varint consuming every byte (signed; `u64` too when the top bit is set) | 80 |
//! | `f64` / `f32` | 8 / 4 bytes, normal, magnitude 1e-6..1e12 or zero | 75 / 74 |
//! | `bool` | one byte, 0 or 1 | 70 |
//! | `vec_f64` / `vec_f32` | total length = rest, multiple of 8 / 4, every item "nice" | 60 / 58 |
//! | `vec_f64` / `vec_f32` | as above, some items not "nice" | 25 / 24 |
//! | `vec_i32` / `vec_i64` | total length = rest, varint items consume it exactly | 55 |
//! | `string` | empty (`00`) | 50 |
//! | `bytes` | varint length = rest, empty | 45 |
//! | `strings` / `string` | as above with control characters | 40 / 35 |
//! | `bytes` | varint length = rest | 20 |
//! | `f64` / `f32` | any other 8 / 4 bytes (subnormal, huge, infinite, NaN) | 15 / 14 |
//! | `raw` | nothing else fits: the whole payload as hex | 0 |
//!
//! A `--type KEY=TYPE` pin replaces the guesses of that key by the one decoding the official getter gives.

use std::fmt;
use std::str::FromStr;

use mmkv_reader::decode;
use mmkv_reader::varint::{read_varint32, read_varint64};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

pub use mmkv_reader::decode::ValueType;

/// How a payload is decoded: as one official getter reads it, or as raw hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decoding {
    /// The official getter of that type (names as in the corpus manifests).
    Getter(ValueType),
    /// Not a getter: the whole payload as hex (inference fallback only).
    Raw,
}

impl Decoding {
    /// Every decoding accepted by `--type`, in documentation order (the getters, then `raw`).
    pub const ALL: [Decoding; ValueType::ALL.len() + 1] = {
        let mut all = [Decoding::Raw; ValueType::ALL.len() + 1];
        let mut i = 0;
        while i < ValueType::ALL.len() {
            all[i] = Decoding::Getter(ValueType::ALL[i]);
            i += 1;
        }
        all
    };

    /// The decoding's name (`i32`, `string`, `vec_f64`, ..., `raw`).
    pub fn name(self) -> &'static str {
        match self {
            Decoding::Getter(t) => t.name(),
            Decoding::Raw => "raw",
        }
    }
}

impl From<ValueType> for Decoding {
    fn from(t: ValueType) -> Self {
        Decoding::Getter(t)
    }
}

impl fmt::Display for Decoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Decoding {
    type Err = String;

    /// Accepts the manifest names and `raw` (case-insensitive) plus a few aliases (`int`, `double`, ...).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        let alias = match lower.as_str() {
            "int" | "int32" => "i32",
            "uint" | "uint32" => "u32",
            "int64" | "long" => "i64",
            "uint64" => "u64",
            "float" => "f32",
            "double" => "f64",
            "str" => "string",
            "data" => "bytes",
            "string_vec" | "vec_string" | "stringset" => "strings",
            other => other,
        };
        if alias == Decoding::Raw.name() {
            return Ok(Decoding::Raw);
        }
        alias
            .parse::<ValueType>()
            .map(Decoding::Getter)
            .map_err(|_| {
                let names: Vec<&str> = Decoding::ALL.iter().map(|t| t.name()).collect();
                format!("unknown type {s:?} (expected one of: {})", names.join(", "))
            })
    }
}

/// A decoded value, serialized to JSON naturally (floats that JSON cannot hold become `"inf"`, `"-inf"`,
/// `"NaN"`; bytes become lowercase hex).
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    I64(i64),
    /// An unsigned integer.
    U64(u64),
    /// A single-precision float.
    F32(f32),
    /// A double-precision float.
    F64(f64),
    /// Text.
    Str(String),
    /// Binary data (shown as hex).
    Hex(Vec<u8>),
    /// A vector.
    List(Vec<Val>),
}

fn non_finite(x: f64) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

impl Serialize for Val {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Val::Bool(b) => s.serialize_bool(*b),
            Val::I64(v) => s.serialize_i64(*v),
            Val::U64(v) => s.serialize_u64(*v),
            Val::F32(v) if v.is_finite() => s.serialize_f32(*v),
            Val::F32(v) => s.serialize_str(non_finite(f64::from(*v))),
            Val::F64(v) if v.is_finite() => s.serialize_f64(*v),
            Val::F64(v) => s.serialize_str(non_finite(*v)),
            Val::Str(t) => s.serialize_str(t),
            Val::Hex(b) => s.serialize_str(&crate::util::hex(b)),
            Val::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
        }
    }
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Bool(b) => write!(f, "{b}"),
            Val::I64(v) => write!(f, "{v}"),
            Val::U64(v) => write!(f, "{v}"),
            Val::F32(v) => write!(f, "{v:?}"),
            Val::F64(v) => write!(f, "{v:?}"),
            Val::Str(t) => write!(f, "{}", serde_json::to_string(t).map_err(|_| fmt::Error)?),
            Val::Hex(b) => write!(f, "{}", crate::util::hex(b)),
            Val::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// One plausible decoding of a payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Guess {
    /// The decoding.
    pub ty: Decoding,
    /// The value decoded as that type.
    pub value: Val,
    /// Plausibility rank (higher first); see the module docs.
    pub rank: u32,
}

impl Serialize for Guess {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("type", self.ty.name())?;
        m.serialize_entry("value", &self.value)?;
        m.end()
    }
}

impl fmt::Display for Guess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.ty, self.value)
    }
}

/// Decodes `payload` (expire suffix removed) as `ty` with the official getter semantics
/// (`mmkv_reader::decode::decode`). `None`: the getter reports no value.
pub fn decode_as(ty: Decoding, payload: &[u8]) -> Option<Val> {
    let ty = match ty {
        Decoding::Getter(t) => t,
        Decoding::Raw => return Some(Val::Hex(payload.to_vec())),
    };
    match decode::decode(ty, payload) {
        Some(v) => Some(Val::from(v)),
        // Not UTF-8: the official getString still returns the bytes; show them lossily.
        None if ty == ValueType::String => Some(Val::Str(
            String::from_utf8_lossy(decode::as_bytes(payload)?).into_owned(),
        )),
        None => None,
    }
}

impl From<decode::Value<'_>> for Val {
    /// A getter's result as shown: integers widened to 64 bits, bytes as hex, vectors as lists.
    fn from(v: decode::Value<'_>) -> Val {
        use decode::Value as V;
        match v {
            V::Bool(x) => Val::Bool(x),
            V::I32(x) => Val::I64(i64::from(x)),
            V::U32(x) => Val::U64(u64::from(x)),
            V::I64(x) => Val::I64(x),
            V::U64(x) => Val::U64(x),
            V::F32(x) => Val::F32(x),
            V::F64(x) => Val::F64(x),
            V::String(x) => Val::Str(x.to_string()),
            V::Bytes(x) => Val::Hex(x.to_vec()),
            V::Strings(x) => list(x, Val::Str),
            V::VecI32(x) => list(x, |v| Val::I64(i64::from(v))),
            V::VecU32(x) => list(x, |v| Val::U64(u64::from(v))),
            V::VecI64(x) => list(x, Val::I64),
            V::VecU64(x) => list(x, Val::U64),
            V::VecF32(x) => list(x, Val::F32),
            V::VecF64(x) => list(x, Val::F64),
            V::VecBool(x) => list(x, Val::Bool),
        }
    }
}

fn list<T>(items: Vec<T>, f: impl Fn(T) -> Val) -> Val {
    Val::List(items.into_iter().map(f).collect())
}

/// Size of `v` as a protobuf varint.
fn varint_size(v: u64) -> usize {
    let bits = 64 - v.leading_zeros() as usize;
    bits.max(1).div_ceil(7)
}

fn printable(s: &str) -> bool {
    s.chars()
        .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
}

fn nice_f64(x: f64) -> bool {
    x == 0.0 || (x.is_normal() && (1e-6..=1e12).contains(&x.abs()))
}

fn round_f64(x: f64) -> bool {
    nice_f64(x) && (x.to_bits() & ((1u64 << 52) - 1)).trailing_zeros() >= 20
}

fn nice_f32(x: f32) -> bool {
    x == 0.0 || (x.is_normal() && (1e-6..=1e12).contains(&x.abs()))
}

fn round_f32(x: f32) -> bool {
    nice_f32(x) && (x.to_bits() & ((1u32 << 23) - 1)).trailing_zeros() >= 10
}

/// One varint consuming the whole payload, if it is one.
fn whole_varint(payload: &[u8]) -> Option<u64> {
    let mut pos = 0;
    let v = read_varint64(payload, &mut pos).ok()?;
    (pos == payload.len()).then_some(v)
}

/// The body of a length-delimited payload (varint length == the rest), if it is one.
fn delimited(payload: &[u8]) -> Option<&[u8]> {
    let mut pos = 0;
    let len = read_varint32(payload, &mut pos).ok()? as usize;
    let rest = payload.get(pos..)?;
    (rest.len() == len).then_some(rest)
}

/// Whether `payload` has the shape of some MMKV value: one varint, 4 or 8 bytes, or a
/// length-delimited body (string, bytes, vectors). Cheap; used to judge carved records.
pub fn is_typed(payload: &[u8]) -> bool {
    matches!(payload.len(), 4 | 8)
        || whole_varint(payload).is_some()
        || delimited(payload).is_some()
}

/// The plausible decodings of `payload` (expire suffix removed), most likely first. Never empty.
pub fn guesses(payload: &[u8]) -> Vec<Guess> {
    let mut out: Vec<Guess> = Vec::new();
    let mut push = |ty: ValueType, value, rank| {
        out.push(Guess {
            ty: Decoding::Getter(ty),
            value,
            rank,
        })
    };

    if let Some(v) = whole_varint(payload) {
        let s = v as i64;
        if i32::try_from(s).is_ok() {
            push(ValueType::I32, Val::I64(s), 80);
        } else {
            push(ValueType::I64, Val::I64(s), 80);
        }
        if s < 0 {
            push(ValueType::U64, Val::U64(v), 65);
        }
        if payload.len() == 1 && v <= 1 {
            push(ValueType::Bool, Val::Bool(v == 1), 70);
        }
    }
    if let Ok(b) = <[u8; 8]>::try_from(payload) {
        let x = f64::from_le_bytes(b);
        let rank = if round_f64(x) {
            85
        } else if nice_f64(x) {
            75
        } else {
            15
        };
        push(ValueType::F64, Val::F64(x), rank);
    }
    if let Ok(b) = <[u8; 4]>::try_from(payload) {
        let x = f32::from_le_bytes(b);
        let rank = if round_f32(x) {
            84
        } else if nice_f32(x) {
            74
        } else {
            14
        };
        push(ValueType::F32, Val::F32(x), rank);
    }
    if let Some(body) = delimited(payload) {
        if body.is_empty() {
            push(ValueType::String, Val::Str(String::new()), 50);
            push(ValueType::Bytes, Val::Hex(Vec::new()), 45);
        } else {
            match std::str::from_utf8(body) {
                Ok(s) => {
                    let rank = if printable(s) { 90 } else { 35 };
                    push(ValueType::String, Val::Str(s.to_string()), rank);
                }
                Err(_) => push(ValueType::Bytes, Val::Hex(body.to_vec()), 20),
            }
            // A string vector: the getter's items must account for every byte of the body.
            if let Some(items) = decode::as_string_vec(payload) {
                let size: usize = items
                    .iter()
                    .map(|s| varint_size(s.len() as u64) + s.len())
                    .sum();
                if !items.is_empty() && size == body.len() {
                    let rank = if items.iter().all(|s| printable(s)) {
                        92
                    } else {
                        40
                    };
                    push(
                        ValueType::Strings,
                        Val::List(items.into_iter().map(Val::Str).collect()),
                        rank,
                    );
                }
            }
            if let Some(items) = decode::as_vec_i64(payload) {
                let size: usize = items.iter().map(|&v| varint_size(v as u64)).sum();
                if !items.is_empty() && size == body.len() {
                    if items.iter().all(|&v| i32::try_from(v).is_ok()) {
                        push(ValueType::VecI32, list(items, Val::I64), 55);
                    } else {
                        push(ValueType::VecI64, list(items, Val::I64), 55);
                    }
                }
            }
            if body.len().is_multiple_of(8) {
                if let Some(items) = decode::as_vec_f64(payload) {
                    if items.len() * 8 == body.len() {
                        let rank = if items.iter().all(|&x| nice_f64(x)) {
                            60
                        } else {
                            25
                        };
                        push(ValueType::VecF64, list(items, Val::F64), rank);
                    }
                }
            }
            if body.len().is_multiple_of(4) {
                if let Some(items) = decode::as_vec_f32(payload) {
                    if items.len() * 4 == body.len() {
                        let rank = if items.iter().all(|&x| nice_f32(x)) {
                            58
                        } else {
                            24
                        };
                        push(ValueType::VecF32, list(items, Val::F32), rank);
                    }
                }
            }
            if std::str::from_utf8(body).is_ok() {
                push(ValueType::Bytes, Val::Hex(body.to_vec()), 20);
            }
        }
    }
    if out.is_empty() {
        out.push(Guess {
            ty: Decoding::Raw,
            value: Val::Hex(payload.to_vec()),
            rank: 0,
        });
    }
    out.sort_by_key(|g| std::cmp::Reverse(g.rank));
    out
}

/// The guesses for a value, or the single pinned decoding when the key's type is pinned.
/// A pinned type the getter cannot read yields no guess (callers show "no value").
pub fn guesses_or_pinned(payload: &[u8], pinned: Option<Decoding>) -> Vec<Guess> {
    match pinned {
        Some(ty) => decode_as(ty, payload)
            .map(|value| Guess {
                ty,
                value,
                rank: 100,
            })
            .into_iter()
            .collect(),
        None => guesses(payload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn top(payload: &[u8]) -> Guess {
        guesses(payload).into_iter().next().unwrap()
    }

    #[test]
    fn strings_are_recognised() {
        let g = top(b"\x05hello");
        assert_eq!(g.ty, Decoding::Getter(ValueType::String));
        assert_eq!(g.value, Val::Str("hello".into()));
    }

    #[test]
    fn string_vectors_beat_strings() {
        // total 8: "abc" (4 bytes) + "de" (3 bytes) = 7 -> use a correct total
        let payload = b"\x07\x03abc\x02de";
        let g = guesses(payload);
        assert_eq!(g[0].ty, Decoding::Getter(ValueType::Strings), "{g:?}");
        assert_eq!(
            g[0].value,
            Val::List(vec![Val::Str("abc".into()), Val::Str("de".into())])
        );
    }

    #[test]
    fn integers_signed_first() {
        // -1 as a 10-byte varint.
        let mut p = vec![0xffu8; 9];
        p.push(0x01);
        let g = guesses(&p);
        assert_eq!(g[0].ty, Decoding::Getter(ValueType::I32));
        assert_eq!(g[0].value, Val::I64(-1));
        assert!(g
            .iter()
            .any(|x| x.ty == Decoding::Getter(ValueType::U64) && x.value == Val::U64(u64::MAX)));
        let g = top(&[0x96, 0x01]);
        assert_eq!(g.value, Val::I64(150));
        let g = guesses(&[0x01]);
        assert_eq!(g[0].ty, Decoding::Getter(ValueType::I32));
        assert!(g.iter().any(|x| x.ty == Decoding::Getter(ValueType::Bool)));
    }

    #[test]
    fn floats_by_width() {
        let g = top(&3.5f64.to_le_bytes());
        assert_eq!(g.ty, Decoding::Getter(ValueType::F64));
        assert_eq!(g.value, Val::F64(3.5));
        let g = top(&1.25f32.to_le_bytes());
        assert_eq!(g.ty, Decoding::Getter(ValueType::F32));
    }

    #[test]
    fn raw_fallback() {
        let g = guesses(&[0xff, 0xff, 0xff]);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].ty, Decoding::Raw);
    }

    #[test]
    fn type_names_round_trip() {
        for t in Decoding::ALL {
            assert_eq!(t.name().parse::<Decoding>().unwrap(), t);
        }
        assert_eq!(
            "double".parse::<Decoding>().unwrap(),
            Decoding::Getter(ValueType::F64)
        );
        assert!("nope".parse::<Decoding>().is_err());
    }

    /// Every type of the reader's table decodes as itself through `mmkv get --type` /
    /// `dump --type` (`decode_as`), with the value the one conversion makes of it.
    #[test]
    fn every_value_type_decodes_as_pinned() {
        use mmkv_reader::test_support::{encode_value, sample_values};
        for ty in ValueType::ALL {
            assert!(Decoding::ALL.contains(&Decoding::Getter(ty)), "{ty}");
            for sample in sample_values(ty) {
                let got = decode_as(Decoding::Getter(ty), &encode_value(&sample));
                assert_eq!(got, Some(Val::from(sample.clone())), "{ty}: {sample:?}");
            }
        }
        let text = Val::from(decode::Value::VecI32(vec![-1, 2]));
        assert_eq!(text.to_string(), "[-1, 2]");
        // A string that is not UTF-8 is still shown, lossily.
        assert_eq!(
            decode_as(Decoding::Getter(ValueType::String), &[2, 0xff, b'a']),
            Some(Val::Str("\u{fffd}a".into()))
        );
    }

    #[test]
    fn varint_sizes() {
        assert_eq!(varint_size(0), 1);
        assert_eq!(varint_size(127), 1);
        assert_eq!(varint_size(128), 2);
        assert_eq!(varint_size(u64::MAX), 10);
    }
}
