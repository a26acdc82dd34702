//! How the manifest writes values (`corpus/README.md`, "Value encodings by `type`"): booleans
//! as JSON booleans, integers as decimal strings, floats as their IEEE-754 bit pattern in 8 / 16
//! lowercase hex digits, strings as JSON strings, bytes as lowercase hex, vectors as arrays of
//! their items' encoding.
//!
//! Decoders take the JSON value of an entry (or of one item) and fail with [`BadValue`];
//! encoders give the JSON text the manifest writes. Which decoder applies to which type name is
//! the consumer's table (it owns its value type).

use std::str::FromStr;

use serde_json::Value;

/// A manifest value that does not have its type's encoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad {what} value {value}")]
pub struct BadValue {
    /// What was expected (a type name, or `array`).
    pub what: &'static str,
    /// The JSON found.
    pub value: String,
}

impl From<BadValue> for String {
    fn from(e: BadValue) -> String {
        e.to_string()
    }
}

/// The error for `v` not being a `what`.
pub fn bad(what: &'static str, v: &Value) -> BadValue {
    BadValue {
        what,
        value: v.to_string(),
    }
}

/// A JSON boolean (`bool`, and the items of `vec_bool`).
pub fn boolean(v: &Value, what: &'static str) -> Result<bool, BadValue> {
    v.as_bool().ok_or_else(|| bad(what, v))
}

/// A decimal string (`i32`, `u32`, `i64`, `u64` and their vector items).
pub fn dec<T: FromStr>(v: &Value, what: &'static str) -> Result<T, BadValue> {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad(what, v))
}

/// An `f32` as its bit pattern in 8 hex digits.
pub fn hex32(v: &Value) -> Result<f32, BadValue> {
    bit_pattern(v, "f32", f32::from_bits)
}

/// An `f64` as its bit pattern in 16 hex digits.
pub fn hex64(v: &Value) -> Result<f64, BadValue> {
    bit_pattern(v, "f64", f64::from_bits)
}

/// A float (`what`) as its bit pattern `B` in exactly two hex digits per byte of `B`.
fn bit_pattern<B: TryFrom<u64>, F>(
    v: &Value,
    what: &'static str,
    from_bits: fn(B) -> F,
) -> Result<F, BadValue> {
    v.as_str()
        .filter(|s| s.len() == 2 * std::mem::size_of::<B>())
        .and_then(|s| u64::from_str_radix(s, 16).ok())
        .and_then(|bits| B::try_from(bits).ok())
        .map(from_bits)
        .ok_or_else(|| bad(what, v))
}

/// A JSON string (`string`, and the items of `strings`).
pub fn text<'a>(v: &'a Value, what: &'static str) -> Result<&'a str, BadValue> {
    v.as_str().ok_or_else(|| bad(what, v))
}

/// Bytes as hex (`bytes`).
pub fn bytes(v: &Value) -> Result<Vec<u8>, BadValue> {
    v.as_str()
        .and_then(crate::hex::decode)
        .ok_or_else(|| bad("bytes", v))
}

/// An array, each item decoded by `f` (the vectors).
pub fn items<T>(v: &Value, f: impl Fn(&Value) -> Result<T, BadValue>) -> Result<Vec<T>, BadValue> {
    v.as_array()
        .ok_or_else(|| bad("array", v))?
        .iter()
        .map(f)
        .collect()
}

/// The manifest text of an `f32` (its bit pattern, 8 hex digits).
pub fn f32_text(x: f32) -> String {
    format!("{:08x}", x.to_bits())
}

/// The manifest text of an `f64` (its bit pattern, 16 hex digits).
pub fn f64_text(x: f64) -> String {
    format!("{:016x}", x.to_bits())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_each_encoding() {
        assert_eq!(boolean(&json!(true), "bool"), Ok(true));
        assert_eq!(dec::<i32>(&json!("-5"), "i32"), Ok(-5));
        assert_eq!(
            dec::<u64>(&json!("18446744073709551615"), "u64"),
            Ok(u64::MAX)
        );
        assert_eq!(hex32(&json!("3f800000")), Ok(1.0));
        assert_eq!(
            hex64(&json!("8000000000000000")).map(f64::to_bits),
            Ok(1 << 63)
        );
        assert_eq!(text(&json!("日本"), "string"), Ok("日本"));
        assert_eq!(bytes(&json!("00ff")), Ok(vec![0, 255]));
        assert_eq!(
            items(&json!(["1", "2"]), |x| dec::<u32>(x, "vec_u32")),
            Ok(vec![1, 2])
        );
    }

    #[test]
    fn rejects_other_encodings() {
        assert_eq!(
            dec::<i32>(&json!(5), "i32").unwrap_err().to_string(),
            "bad i32 value 5"
        );
        assert!(dec::<u32>(&json!("-1"), "u32").is_err());
        assert!(hex32(&json!("3f80000")).is_err());
        assert!(hex64(&json!("3f800000")).is_err());
        assert!(bytes(&json!("abc")).is_err());
        assert!(boolean(&json!("true"), "bool").is_err());
        assert_eq!(
            items(&json!("1"), |x| dec::<u32>(x, "vec_u32")),
            Err(bad("array", &json!("1")))
        );
    }

    #[test]
    fn floats_round_trip_through_their_text() {
        for x in [0.0f32, -0.0, f32::INFINITY, f32::MIN_POSITIVE / 2.0, 1.5] {
            let back = hex32(&Value::String(f32_text(x))).unwrap();
            assert_eq!(back.to_bits(), x.to_bits());
        }
        for x in [0.0f64, -0.0, f64::NEG_INFINITY, 5e-324, -2.25] {
            let back = hex64(&Value::String(f64_text(x))).unwrap();
            assert_eq!(back.to_bits(), x.to_bits());
        }
    }
}
