//! Record lists shared by `Store.history()`, `Store.carve()` and the drop-in module: the
//! [`Record`] class, opening a store for inspection, and walking a reset store's region.

use std::collections::HashMap;
use std::path::Path;

use mmkv_inspect::analysis::{Analysis, CryptOpts, RecordInfo};
use mmkv_inspect::infer::{decode_as, guesses, Decoding, Guess, Val, ValueType};
use mmkv_reader::parse::Cursor;
use mmkv_reader::records::{records, split_expire};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crate::convert::{key_str, val_to_py, KeyArg};
use crate::errors::{inspect_err, CorruptStoreError};

/// One record of a store's file, as `Store.history()` and `Store.carve()` return it.
#[pyclass(module = "mmkv_reader", frozen, get_all)]
pub struct Record {
    /// Position in file order (0-based; carved records continue the numbering).
    pub index: usize,
    /// Byte offset of the record in the data file (for encrypted stores, in the ciphertext).
    pub offset: usize,
    /// The key as `str` (UTF-8, `surrogateescape` for other bytes).
    pub key: Py<PyString>,
    /// The key's exact bytes.
    pub key_bytes: Py<PyBytes>,
    /// The value payload (without the 4-byte expire suffix); `b""` for a deletion marker.
    pub value: Py<PyBytes>,
    /// `"live"`, `"superseded"`, `"removed"`, `"expired"` or `"stale"` (carved).
    pub status: &'static str,
    /// Expire time (epoch seconds), `None` when the key never expires or the store has no expiration.
    pub expire_at: Option<u32>,
    /// The record is a deletion marker (empty stored value).
    pub deletion: bool,
}

#[pymethods]
impl Record {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Record(index={}, offset={}, key={}, status={:?}, value={}, expire_at={:?})",
            self.index,
            self.offset,
            self.key
                .bind(py)
                .repr()
                .map_or_else(|_| "?".into(), |r| r.to_string()),
            self.status,
            crate::convert::short_repr(self.value.bind(py).as_bytes()),
            self.expire_at,
        )
    }

    /// The value decoded as `type` (`"i32"`, `"string"`, ... as the official getter reads it),
    /// or, without `type`, as the most likely decoding. `None` for a deletion marker or when the
    /// getter of that type reports no value.
    #[pyo3(signature = (r#type=None))]
    fn decoded<'py>(
        &self,
        py: Python<'py>,
        r#type: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if self.deletion {
            return Ok(None);
        }
        let ty = r#type.map(parse_type).transpose()?;
        decode_payload(py, self.value.bind(py).as_bytes(), ty)
    }
}

/// Parses a type name (`i32`, `string`, `vec_f64`, `raw`, ...).
pub fn parse_type(name: &str) -> PyResult<Decoding> {
    name.parse::<Decoding>().map_err(PyValueError::new_err)
}

/// Rank (see `mmkv_inspect::infer`) below which a guess counts as weak.
const WEAK_RANK: u32 = 50;

/// The most likely decoding of a payload, for Python. From `mmkv_inspect::infer::guesses`:
/// - the typed vectors (v2.x `vec_*`) are left out: rare in apps, and any short binary value
///   parses as one (ask for them with a type hint);
/// - a length-delimited payload that is not also one varint is read as text or bytes (`strings`,
///   `string`, `bytes`), never as a float: random bytes of length 3 or 7 are 4 or 8 bytes long
///   with a length prefix, while a float's first byte is that length 1 time in 256 (and never
///   for the "round" floats the guesses rank first);
/// - a weak top guess (rank below 50: text with control characters, ...) of such a payload
///   gives way to its plain reading, `str` when the body is UTF-8 and `bytes` otherwise (what
///   `mmkv_parser` returns there, and what random binary values are);
/// - otherwise the top guess.
pub fn most_likely(payload: &[u8]) -> Option<Val> {
    let is = |g: &Guess, t: ValueType| g.ty == Decoding::Getter(t);
    let mut gs = guesses(payload);
    gs.retain(|g| !matches!(g.ty, Decoding::Getter(t) if t.is_typed_vector()));
    let delimited = gs.iter().any(|g| is(g, ValueType::Bytes));
    let integer = gs
        .iter()
        .any(|g| is(g, ValueType::I32) || is(g, ValueType::I64));
    if delimited && !integer {
        gs.retain(|g| {
            is(g, ValueType::String) || is(g, ValueType::Strings) || is(g, ValueType::Bytes)
        });
    }
    let Some(top) = gs.first() else {
        return Some(Val::Hex(payload.to_vec()));
    };
    let pick = if top.rank >= WEAK_RANK || !delimited {
        0
    } else {
        let plain = |t: ValueType| gs.iter().position(|g| is(g, t));
        plain(ValueType::String)
            .or_else(|| plain(ValueType::Bytes))
            .unwrap_or(0)
    };
    Some(gs.swap_remove(pick).value)
}

/// The shapes most values have, as [`most_likely_fast`] recognises them (borrowing the
/// payload, so nothing is allocated before the Python object is built).
#[derive(Debug, PartialEq)]
pub enum Quick<'a> {
    /// One varint, read as a signed 64-bit integer.
    Int(i64),
    /// A length-delimited body: `str` when it is UTF-8, else `bytes`.
    Body(&'a [u8]),
}

/// The payload is a non-empty string vector (`as_bytes_vec` without building the list or an
/// error): after the leading total length, length-delimited items to the end.
fn is_bytes_vec(payload: &[u8]) -> bool {
    let mut c = Cursor::new(payload);
    if c.read_varint32().is_err() || c.is_empty() {
        return false;
    }
    while !c.is_empty() {
        if c.read_len_prefixed().is_err() {
            return false;
        }
    }
    true
}

/// The payload is exactly one varint (what `read_varint64` reads to its end): 1 to 10 bytes,
/// every one but the last with its continuation bit.
fn is_one_varint(payload: &[u8]) -> bool {
    match payload.split_last() {
        Some((&last, init)) => {
            payload.len() <= 10 && last < 0x80 && init.iter().all(|&b| b >= 0x80)
        }
        None => false,
    }
}

/// [`most_likely`] for the shapes most values have, without building every guess:
/// - one varint: an integer (rank 80). A one-varint payload of 4 or 8 bytes also reads as a
///   float, but never as a "round" one (rank 84/85): its first byte has the continuation bit, so
///   bit 7 of the float's mantissa is set, and "round" wants at least 10 (f32) or 20 (f64)
///   trailing zero bits; nor as text (its length varint would be the whole payload);
/// - otherwise a length-delimited body that does not parse as a string vector: [`most_likely`]
///   keeps only the `string` and `bytes` readings of it (no integer reading exists), and picks the
///   string (rank 90 when printable; a weak 35 otherwise, which gives way to the plain reading,
///   the string again) when the body is UTF-8, the bytes (the only reading) when it is not.
///
/// `None`: not one of these (floats, vectors, ...), ask [`most_likely`]. `tests/test_compat.py`
/// checks that both agree on every record of the corpus.
pub fn most_likely_fast(payload: &[u8]) -> Option<Quick<'_>> {
    if is_one_varint(payload) {
        return Cursor::new(payload)
            .read_varint64()
            .ok()
            .map(|v| Quick::Int(v as i64));
    }
    let mut c = Cursor::new(payload);
    let len = c.read_varint32().ok()?;
    let body = c.rest();
    if body.is_empty() || body.len() != len as usize || is_bytes_vec(payload) {
        return None;
    }
    Some(Quick::Body(body))
}

/// Decodes a payload as `ty`, or as its most likely decoding ([`most_likely`]) when `ty` is `None`.
pub fn decode_payload<'py>(
    py: Python<'py>,
    payload: &[u8],
    ty: Option<Decoding>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let val = match ty {
        Some(t) => decode_as(t, payload),
        None => match most_likely_fast(payload) {
            Some(Quick::Int(x)) => return Ok(Some(x.into_pyobject(py)?.into_any())),
            // CPython validates the UTF-8 once, while it builds the `str` (both reject the same
            // byte sequences: overlong forms, surrogates, beyond U+10FFFF).
            Some(Quick::Body(b)) => {
                return Ok(Some(match PyString::from_bytes(py, b) {
                    Ok(s) => s.into_any(),
                    Err(_) => PyBytes::new(py, b).into_any(),
                }))
            }
            None => most_likely(payload),
        },
    };
    val.map(|v| val_to_py(py, &v)).transpose()
}

/// `type_hints` (`{key: type name}`) as a map of key bytes to decodings.
pub fn parse_hints(hints: Option<&Bound<'_, PyDict>>) -> PyResult<HashMap<Vec<u8>, Decoding>> {
    let mut out = HashMap::new();
    if let Some(h) = hints {
        for (k, v) in h.iter() {
            let key: KeyArg = k.extract()?;
            let name: String = v.extract()?;
            out.insert(key.0, parse_type(&name)?);
        }
    }
    Ok(out)
}

/// A [`RecordInfo`] as a Python [`Record`].
pub fn to_record(py: Python<'_>, r: &RecordInfo) -> PyResult<Record> {
    Ok(Record {
        index: r.index,
        offset: r.offset,
        key: key_str(py, &r.key)?.unbind(),
        key_bytes: PyBytes::new(py, &r.key).unbind(),
        value: PyBytes::new(py, &r.payload).unbind(),
        status: r.status.name(),
        expire_at: r.expire_at,
        deletion: r.deletion,
    })
}

/// Opens a store for inspection (no CRC enforcement, every record with its status).
pub fn analyse(path: &Path, crypt: &CryptOpts, now: u32) -> PyResult<Analysis> {
    Analysis::open(path, crypt, now).map_err(|e| inspect_err(&e, crypt.key.is_some()))
}

/// One entry of a store's live view: key, payload, expire time (0 = never).
pub type LiveEntry = (Vec<u8>, Vec<u8>, u32);

/// The records of a **reset** store's surviving region: a store whose recorded size is 0
/// (`clearAll()`, or the official loader discarding a store whose CRC failed) keeps its old
/// records after the header. They are returned, in file order as `(key, stored value)`, only
/// when the bytes after the header walk as records to the end of the file (the zero padding
/// parses as skipped empty keys) and at least one record is found; `None` otherwise.
pub fn reset_walk(file: &[u8]) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    let body = file.get(4..)?;
    if body.iter().all(|&b| b == 0) {
        return None;
    }
    let mut out = Vec::new();
    for r in records(body) {
        let r = r.ok()?;
        out.push((r.key.to_vec(), r.value.to_vec()));
    }
    (!out.is_empty()).then_some(out)
}

/// Last write wins over `(key, stored value)` records in file order: an empty value deletes,
/// values are split into payload and expire time (key expiration on), expired keys are left out.
pub fn collapse(recs: &[(Vec<u8>, Vec<u8>)], key_expire: bool, now: u32) -> Vec<LiveEntry> {
    let mut map: HashMap<&[u8], (&[u8], u32)> = HashMap::new();
    for (k, v) in recs {
        if v.is_empty() {
            map.remove(k.as_slice());
            continue;
        }
        let (payload, t) = if key_expire {
            split_expire(v).unwrap_or((v.as_slice(), 0))
        } else {
            (v.as_slice(), 0)
        };
        map.insert(k, (payload, t));
    }
    let mut out: Vec<LiveEntry> = map
        .into_iter()
        .filter(|(_, (_, t))| *t == 0 || *t > now)
        .map(|(k, (p, t))| (k.to_vec(), p.to_vec(), t))
        .collect();
    out.sort();
    out
}

/// The error for `recover=True` on a reset store that is encrypted.
pub fn reset_encrypted_err(path: &Path) -> PyErr {
    CorruptStoreError::new_err(format!(
        "{}: cannot recover a reset encrypted store: its records were written under an IV the meta no longer holds",
        path.display()
    ))
}
