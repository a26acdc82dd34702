//! Official getter semantics on a value payload (the value bytes without the expire suffix).
//!
//! Each function reproduces the official `MMKV::getXxx` on the same bytes: the getter builds a
//! `CodedInputData` over the payload and reads ONE item from its start; trailing bytes are
//! ignored; any decoder exception (input ended, malformed varint, negative or overlong length)
//! makes the getter return its default with `hasValue = false`, which is `None` here. An
//! empty payload is "no value" for every getter.
//!
//! | getter | official read | notes |
//! |---|---|---|
//! | [`as_bool`] | `readRawVarint32() != 0` | a 64-bit varint keeps only its low 32 bits |
//! | [`as_i32`], [`as_u32`] | `readRawVarint32` | fifth byte contributes 4 bits; 10-byte negatives fold to 32 bits |
//! | [`as_i64`], [`as_u64`] | `readInt64` | up to 10 bytes |
//! | [`as_f32`], [`as_f64`] | 4 / 8 bytes little-endian | a shorter payload is no value |
//! | [`as_bytes`], [`as_str`] | `readData` / `readString`: varint32 length + bytes | same rule for both |
//! | [`as_string_vec`] | varint32 (ignored), then `readString` until the payload end | |
//! | `as_vec_*` | varint32 (ignored), then items until the payload end | v2.x `decodeOneVector` |
//!
//! The official string getter returns arbitrary bytes; [`as_str`] additionally requires
//! UTF-8 (use [`as_bytes`] for the exact bytes, which the official string getter also returns).
//!
//! The getter types are one table (`value_table!`, below): [`ValueType`], [`Value`], the
//! runtime dispatch [`decode`] and the named getters of the snapshot and the store are generated
//! from its rows, so they cannot disagree on a type.

use std::fmt;
use std::str::FromStr;

use crate::parse::{Cursor, ParseResult};
use crate::varint::{len_prefixed, varint32_value, varint64};

/// THE value-type table: one row per getter type of the official API, in manifest order.
///
/// `value_table!(then)` calls `then! { rows }`; a row is
/// `Variant, "manifest name", "official getter", Class, decoder: type => getter;` where the
/// decoder (a function of this module) returns the zero-copy `type`, `getter` is the name of
/// the snapshot and store getters, and `| owned decoder: type => store getter` follows where
/// the store's copy getter differs (strings and bytes). Everything per type is generated from
/// it: [`ValueType`] (with [`ValueType::ALL`], names, classes), [`Value`], [`decode`], the
/// named getters of [`crate::SnapshotData`] and [`crate::Store`]. Adding a type is one row
/// here (plus its decoder); consumers match on [`ValueType`] / [`Value`] without wildcard
/// arms, so the workspace does not compile until each handles it.
macro_rules! value_table {
    ($then:ident) => {
        $then! {
            Bool,    "bool",     "getBool",     Scalar, as_bool: bool => get_bool;
            I32,     "i32",      "getInt32",    Scalar, as_i32: i32 => get_i32;
            U32,     "u32",      "getUInt32",   Scalar, as_u32: u32 => get_u32;
            I64,     "i64",      "getInt64",    Scalar, as_i64: i64 => get_i64;
            U64,     "u64",      "getUInt64",   Scalar, as_u64: u64 => get_u64;
            F32,     "f32",      "getFloat",    Scalar, as_f32: f32 => get_f32;
            F64,     "f64",      "getDouble",   Scalar, as_f64: f64 => get_f64;
            String,  "string",   "getString",   Data,   as_str: &'a str => get_str
                                                        | as_string: String => get_string;
            Bytes,   "bytes",    "getBytes",    Data,   as_bytes: &'a [u8] => get_bytes
                                                        | as_owned_bytes: Vec<u8> => get_bytes;
            Strings, "strings",  "getVector(std::vector<std::string>)", Data,
                as_string_vec: Vec<String> => get_string_vec;
            VecI32,  "vec_i32",  "getVector(std::vector<int32_t>) (v1.3.6+)", TypedVector,
                as_vec_i32: Vec<i32> => get_vec_i32;
            VecU32,  "vec_u32",  "getVector(std::vector<uint32_t>) (v1.3.6+)", TypedVector,
                as_vec_u32: Vec<u32> => get_vec_u32;
            VecI64,  "vec_i64",  "getVector(std::vector<int64_t>) (v1.3.6+)", TypedVector,
                as_vec_i64: Vec<i64> => get_vec_i64;
            VecU64,  "vec_u64",  "getVector(std::vector<uint64_t>) (v1.3.6+)", TypedVector,
                as_vec_u64: Vec<u64> => get_vec_u64;
            VecF32,  "vec_f32",  "getVector(std::vector<float>) (v1.3.6+)", TypedVector,
                as_vec_f32: Vec<f32> => get_vec_f32;
            VecF64,  "vec_f64",  "getVector(std::vector<double>) (v1.3.6+)", TypedVector,
                as_vec_f64: Vec<f64> => get_vec_f64;
            VecBool, "vec_bool", "getVector(std::vector<bool>) (v1.3.6+)", TypedVector,
                as_vec_bool: Vec<bool> => get_vec_bool;
        }
    };
}
pub(crate) use value_table;

/// What kind of result a getter returns (a column of the value-type table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Scalar,
    Data,
    TypedVector,
}

/// The last of one or two getter names (a row's store getter: its owned one when it has one).
macro_rules! last_name {
    ($get:ident) => {
        stringify!($get)
    };
    ($get:ident, $owned:ident) => {
        stringify!($owned)
    };
}

macro_rules! define_values {
    ($($v:ident, $name:literal, $official:literal, $class:ident,
        $dec:ident : $t:ty => $get:ident $(| $own:ident : $o:ty => $oget:ident)?;)*) => {
        /// One getter of the official API, named like the `type` field of a corpus manifest.
        ///
        /// The names ([`ValueType::name`], [`Display`](fmt::Display), [`FromStr`]) are the
        /// corpus manifest names: `bool`, `i32`, `u32`, `i64`, `u64`, `f32`, `f64`, `string`,
        /// `bytes`, `strings`, `vec_i32`, `vec_u32`, `vec_i64`, `vec_u64`, `vec_f32`,
        /// `vec_f64`, `vec_bool`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ValueType {
            $(
                #[doc = concat!("`", $official, "` ([`", stringify!($dec), "`]).")]
                $v,
            )*
        }

        impl ValueType {
            /// Every getter type, in table order (scalar ones first, manifest documentation
            /// order).
            pub const ALL: [ValueType; [$(ValueType::$v),*].len()] = [$(ValueType::$v),*];

            /// The corpus manifest name (`"i32"`, `"strings"`, `"vec_f64"` ...).
            pub fn name(self) -> &'static str {
                match self {
                    $(ValueType::$v => $name,)*
                }
            }

            /// The name of the [`Store`](crate::Store) getter of this type (`get_i32`,
            /// `get_string`, `get_string_vec` ...): the owned-value getter, which bindings
            /// expose under the same name.
            pub fn store_getter(self) -> &'static str {
                match self {
                    $(ValueType::$v => last_name!($get $(, $oget)?),)*
                }
            }

            fn class(self) -> Class {
                match self {
                    $(ValueType::$v => Class::$class,)*
                }
            }
        }

        /// What one official getter returned: the result of [`decode`], borrowing strings and
        /// bytes from the payload. Floats compare by value (`NaN != NaN`); compare their bits
        /// where exactness matters.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Value<'a> {
            $(
                #[doc = concat!("`", $official, "`.")]
                $v($t),
            )*
        }

        impl Value<'_> {
            /// The getter type that returned this value.
            pub fn value_type(&self) -> ValueType {
                match self {
                    $(Value::$v(_) => ValueType::$v,)*
                }
            }
        }

        /// The official getter of type `ty` on `payload` (the value bytes without the expire
        /// suffix): the one dispatch from a runtime [`ValueType`] to its decoder. `None` is the
        /// getter's "no value". The named getters (`get_i32` ...) call the same decoders directly.
        pub fn decode(ty: ValueType, payload: &[u8]) -> Option<Value<'_>> {
            match ty {
                $(ValueType::$v => $dec(payload).map(Value::$v),)*
            }
        }
    };
}

value_table!(define_values);

impl ValueType {
    /// True for the typed vectors that exist only from v1.3.6.
    pub fn is_typed_vector(self) -> bool {
        self.class() == Class::TypedVector
    }

    /// True for getters returning a scalar (bool, integers, floats).
    pub fn is_scalar(self) -> bool {
        self.class() == Class::Scalar
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of the manifest names of [`ValueType`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownValueType(pub String);

impl fmt::Display for UnknownValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown type {:?} (expected one of:", self.0)?;
        for (i, t) in ValueType::ALL.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            f.write_str(t.name())?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownValueType {}

impl FromStr for ValueType {
    type Err = UnknownValueType;

    /// Parses a manifest name exactly (case-sensitive, no aliases).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ValueType::ALL
            .iter()
            .copied()
            .find(|t| t.name() == s)
            .ok_or_else(|| UnknownValueType(s.to_string()))
    }
}

fn nonempty(p: &[u8]) -> Option<&[u8]> {
    if p.is_empty() {
        None
    } else {
        Some(p)
    }
}

/// `getBool`: varint32 != 0.
#[inline]
pub fn as_bool(payload: &[u8]) -> Option<bool> {
    varint32_value(payload).map(|(v, _)| v != 0)
}

/// `getInt32`: `readRawVarint32` as signed.
#[inline]
pub fn as_i32(payload: &[u8]) -> Option<i32> {
    varint32_value(payload).map(|(v, _)| v as i32)
}

/// `getUInt32`: `readRawVarint32` as unsigned.
#[inline]
pub fn as_u32(payload: &[u8]) -> Option<u32> {
    varint32_value(payload).map(|(v, _)| v)
}

/// `getInt64`: `readInt64`.
#[inline]
pub fn as_i64(payload: &[u8]) -> Option<i64> {
    varint64(payload).map(|(v, _)| v as i64)
}

/// `getUInt64`: `readInt64` as unsigned.
#[inline]
pub fn as_u64(payload: &[u8]) -> Option<u64> {
    varint64(payload).map(|(v, _)| v)
}

/// `getFloat`: 4 bytes little-endian.
pub fn as_f32(payload: &[u8]) -> Option<f32> {
    Cursor::new(payload).read_f32().ok()
}

/// `getDouble`: 8 bytes little-endian.
pub fn as_f64(payload: &[u8]) -> Option<f64> {
    Cursor::new(payload).read_f64().ok()
}

/// `getBytes` (and the bytes of `getString`): a varint32 length then that many bytes
/// (zero-copy). `Some(&[])` for an empty byte string.
#[inline]
pub fn as_bytes(payload: &[u8]) -> Option<&[u8]> {
    len_prefixed(payload).map(|(run, _)| run)
}

/// `getBytes` into an owned buffer.
pub fn as_owned_bytes(payload: &[u8]) -> Option<Vec<u8>> {
    as_bytes(payload).map(<[u8]>::to_vec)
}

/// `getString`, zero-copy; `None` also when the bytes are not UTF-8.
#[inline]
pub fn as_str(payload: &[u8]) -> Option<&str> {
    std::str::from_utf8(as_bytes(payload)?).ok()
}

/// `getString` into an owned `String` (`None` when absent or not UTF-8).
pub fn as_string(payload: &[u8]) -> Option<String> {
    // Copied first, then checked: the UTF-8 check of the (16-byte aligned) heap copy takes
    // its word-at-a-time ASCII path from the first byte, where the unaligned bytes in the
    // region go byte by byte up to an alignment boundary (38 ASCII bytes: about a third of the
    // instructions). Invalid bytes cost an allocation that is freed at once.
    String::from_utf8(as_bytes(payload)?.to_vec()).ok()
}

/// `getVector(key, std::vector<std::string>&)` as raw byte strings.
pub fn as_bytes_vec(payload: &[u8]) -> Option<Vec<&[u8]>> {
    let mut c = Cursor::new(nonempty(payload)?);
    c.read_varint32().ok()?;
    let mut out = Vec::new();
    while !c.is_empty() {
        out.push(c.read_len_prefixed().ok()?);
    }
    Some(out)
}

/// `getVector(key, std::vector<std::string>&)`; `None` also when an item is not UTF-8.
pub fn as_string_vec(payload: &[u8]) -> Option<Vec<String>> {
    as_bytes_vec(payload)?
        .into_iter()
        .map(|b| std::str::from_utf8(b).ok().map(str::to_owned))
        .collect()
}

fn typed_vec<'a, T>(
    payload: &'a [u8],
    mut item: impl FnMut(&mut Cursor<'a>) -> ParseResult<T>,
) -> Option<Vec<T>> {
    let mut c = Cursor::new(nonempty(payload)?);
    // The leading total length is read (it must decode) and otherwise ignored; the official
    // decoder reserves capacity from it, which cannot fail for any 32-bit value on 64-bit hosts
    // short of an allocation failure.
    c.read_varint32().ok()?;
    let mut out = Vec::new();
    while !c.is_empty() {
        out.push(item(&mut c).ok()?);
    }
    Some(out)
}

/// v2.x `getVector<std::vector<bool>>`: varint32 items != 0.
pub fn as_vec_bool(payload: &[u8]) -> Option<Vec<bool>> {
    typed_vec(payload, |c| c.read_varint32().map(|v| v != 0))
}

/// v2.x `getVector<std::vector<int32_t>>`: varint32 items.
pub fn as_vec_i32(payload: &[u8]) -> Option<Vec<i32>> {
    typed_vec(payload, |c| c.read_varint32().map(|v| v as i32))
}

/// v2.x `getVector<std::vector<uint32_t>>`: varint32 items.
pub fn as_vec_u32(payload: &[u8]) -> Option<Vec<u32>> {
    typed_vec(payload, Cursor::read_varint32)
}

/// v2.x `getVector<std::vector<int64_t>>`: 64-bit varint items.
pub fn as_vec_i64(payload: &[u8]) -> Option<Vec<i64>> {
    typed_vec(payload, |c| c.read_varint64().map(|v| v as i64))
}

/// v2.x `getVector<std::vector<uint64_t>>`: 64-bit varint items.
pub fn as_vec_u64(payload: &[u8]) -> Option<Vec<u64>> {
    typed_vec(payload, Cursor::read_varint64)
}

/// v2.x `getVector<std::vector<float>>`: 4-byte LE items; a partial last item is no value.
pub fn as_vec_f32(payload: &[u8]) -> Option<Vec<f32>> {
    typed_vec(payload, Cursor::read_f32)
}

/// v2.x `getVector<std::vector<double>>`: 8-byte LE items; a partial last item is no value.
pub fn as_vec_f64(payload: &[u8]) -> Option<Vec<f64>> {
    typed_vec(payload, Cursor::read_f64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn value_type_names_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for t in ValueType::ALL {
            assert!(seen.insert(t.name()), "duplicate name {}", t.name());
            assert_eq!(t.to_string(), t.name());
            assert_eq!(t.name().parse::<ValueType>(), Ok(t));
        }
        assert_eq!(seen.len(), 17);
        assert_eq!("vec_f64".parse::<ValueType>(), Ok(ValueType::VecF64));
        assert_eq!("strings".parse::<ValueType>(), Ok(ValueType::Strings));
        // the store getter's name: the owned getter where the row has one
        assert_eq!(ValueType::I32.store_getter(), "get_i32");
        assert_eq!(ValueType::String.store_getter(), "get_string");
        assert_eq!(ValueType::Bytes.store_getter(), "get_bytes");
        assert_eq!(ValueType::Strings.store_getter(), "get_string_vec");
        assert_eq!(ValueType::VecBool.store_getter(), "get_vec_bool");
        let err = "i8".parse::<ValueType>().unwrap_err();
        assert_eq!(err, UnknownValueType("i8".to_string()));
        assert!(err.to_string().contains("vec_u64"));
        assert!("I32".parse::<ValueType>().is_err());
        assert!(ValueType::VecI32.is_typed_vector() && !ValueType::Strings.is_typed_vector());
        assert!(ValueType::F64.is_scalar() && !ValueType::String.is_scalar());
    }

    use super::*;
    use crate::test_support::{encode_value, sample_values, write_store, MetaSpec, StoreBuilder};
    use crate::varint::write_varint;

    #[test]
    fn every_type_has_samples_that_decode_to_themselves() {
        for ty in ValueType::ALL {
            let samples = sample_values(ty);
            assert!(samples.len() >= 2, "{ty}");
            for v in samples {
                assert_eq!(v.value_type(), ty);
                assert_eq!(decode(ty, &encode_value(&v)), Some(v.clone()), "{ty}");
            }
        }
    }

    /// Debug renderings compare floats exactly enough here (NaN equals NaN) and borrowed with
    /// owned results (`"a"` for `&str` and `String`, lists for `&[u8]` and `Vec<u8>`).
    fn dbg<T: std::fmt::Debug>(x: T) -> String {
        format!("{x:?}")
    }

    /// The store's getter of a row: its owned getter where the row has one.
    macro_rules! owned {
        ($store:ident, $key:ident, $oget:ident, $get:ident) => {
            $store.$oget($key)
        };
        ($store:ident, $key:ident, $get:ident) => {
            $store.$get($key)
        };
    }

    macro_rules! check_named_getters {
        ($($v:ident, $name:literal, $official:literal, $class:ident,
            $dec:ident : $t:ty => $get:ident $(| $own:ident : $o:ty => $oget:ident)?;)*) => {
            fn check_named_getters(store: &crate::Store, key: &[u8], payload: &[u8]) -> usize {
                let snap = store.snapshot();
                let mut checked = 0;
                $(
                    let read = snap.$get(key);
                    let what = format!("{} of {key:?}", $name);
                    assert_eq!(dbg(&read), dbg($dec(payload)), "{what}");
                    let value = snap.get_value(key, ValueType::$v);
                    assert_eq!(dbg(value), dbg(read.clone().map(Value::$v)), "{what}");
                    assert_eq!(dbg(read), dbg(owned!(store, key $(, $oget)? , $get)), "{what}");
                    checked += 1;
                )*
                checked
            }
        };
    }
    value_table!(check_named_getters);

    /// Every named getter of the snapshot and the store returns what [`decode`] returns, for
    /// payloads of every type read as every type (and a few payloads of no type).
    #[test]
    fn named_getters_are_the_decoders() {
        let mut payloads: Vec<Vec<u8>> = vec![vec![0x80], vec![5], vec![2, 0xff, 0xfe]];
        for ty in ValueType::ALL {
            payloads.extend(sample_values(ty).iter().map(encode_value));
        }
        let mut b = StoreBuilder::new(4);
        for (i, p) in payloads.iter().enumerate() {
            b.set(format!("k{i}").as_bytes(), p, 0);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("values");
        write_store(&path, &b.region(), &[], &MetaSpec::default()).unwrap();
        let store = crate::Store::open(&path, crate::Options::new()).unwrap();
        assert_eq!(store.len(), payloads.len());
        for (i, p) in payloads.iter().enumerate() {
            let n = check_named_getters(&store, format!("k{i}").as_bytes(), p);
            assert_eq!(n, ValueType::ALL.len());
        }
    }

    fn v(x: u64) -> Vec<u8> {
        let mut o = Vec::new();
        write_varint(&mut o, x);
        o
    }

    #[test]
    fn scalars() {
        assert_eq!(as_i32(&v((-1i64) as u64)), Some(-1));
        assert_eq!(as_i64(&v((-1i64) as u64)), Some(-1));
        assert_eq!(as_u32(&v(1 << 40)), Some(0));
        assert_eq!(as_bool(&v(1 << 40)), Some(false));
        assert_eq!(as_bool(&v(2)), Some(true));
        assert_eq!(as_i32(&[]), None);
        assert_eq!(as_i32(&[0x80]), None);
        assert_eq!(as_f32(&1.5f32.to_le_bytes()), Some(1.5));
        assert_eq!(as_f32(&[1, 2, 3]), None);
        assert_eq!(as_f64(&[0u8; 9]), Some(0.0));
        // trailing bytes are ignored
        assert_eq!(as_i32(&[5, 0xff]), Some(5));
    }

    #[test]
    fn strings_and_bytes() {
        assert_eq!(as_bytes(&[0]), Some(&b""[..]));
        assert_eq!(as_str(&[2, b'h', b'i', 9]), Some("hi"));
        assert_eq!(as_str(&[2, 0xff, 0xfe]), None);
        assert_eq!(as_bytes(&[2, 0xff, 0xfe]), Some(&[0xff, 0xfe][..]));
        assert_eq!(as_bytes(&[5]), None); // an int read as bytes: length past end
        assert_eq!(as_bytes(&v(0xffff_ffff)), None); // negative length
    }

    #[test]
    fn owned_strings_are_the_checked_strs() {
        let ascii = [&[38u8][..], &[b'x'; 38]].concat();
        let multi = [&[5u8][..], "é€".as_bytes()].concat();
        for p in [&ascii[..], &multi, &[2, 0xc3, 0x28], &[3, b'a'], &[0], &[]] {
            assert_eq!(as_string(p), as_str(p).map(str::to_owned), "{p:?}");
        }
        assert_eq!(as_string(&multi).as_deref(), Some("é€"));
        assert_eq!(as_string(&[2, 0xc3, 0x28]), None); // not UTF-8
    }

    #[test]
    fn vectors() {
        assert_eq!(
            as_string_vec(&[4, 1, b'a', 1, b'b']),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        // an int payload decodes as an empty vector
        assert_eq!(as_string_vec(&[5]), Some(vec![]));
        assert_eq!(as_string_vec(&[4, 3, b'a']), None);
        assert_eq!(as_vec_i32(&[2, 1, 0x7f]), Some(vec![1, 127]));
        assert_eq!(as_vec_f32(&[4, 0, 0, 0x80, 0x3f]), Some(vec![1.0]));
        assert_eq!(as_vec_f32(&[4, 0, 0, 0x80]), None);
        assert_eq!(as_vec_f64(&[0]), Some(vec![]));
        assert_eq!(as_vec_u64(&[1, 0x80]), None);
    }
}
