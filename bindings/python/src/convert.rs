//! Conversions between Python objects and the reader's bytes and values.
//!
//! Keys: MMKV keys are bytes. They reach Python as `str`, decoded as UTF-8 with the
//! `surrogateescape` error handler (like `os.fsdecode`), so a key that is not UTF-8 is still a
//! `str` and `key.encode("utf-8", "surrogateescape")` gives its exact bytes back. Arguments
//! accept `str` (encoded the same way) or `bytes`.

use std::ffi::CStr;

use mmkv_inspect::infer::Val;
use mmkv_reader::decode::Value;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

const UTF8: &CStr = c"utf-8";
const SURROGATEESCAPE: &CStr = c"surrogateescape";

/// A key (or crypt key) given from Python as `str` or `bytes`.
pub struct KeyArg(pub Vec<u8>);

impl<'py> FromPyObject<'_, 'py> for KeyArg {
    type Error = PyErr;

    fn extract(ob: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(b) = ob.cast::<PyBytes>() {
            return Ok(KeyArg(b.as_bytes().to_vec()));
        }
        if let Ok(s) = ob.cast::<PyString>() {
            return Ok(KeyArg(str_bytes(&s)?));
        }
        if let Ok(v) = ob.extract::<Vec<u8>>() {
            // bytearray, memoryview of bytes, ...
            return Ok(KeyArg(v));
        }
        Err(PyTypeError::new_err(format!(
            "expected str or bytes, got {}",
            ob.get_type().name()?
        )))
    }
}

/// The bytes of a Python `str` (UTF-8; lone surrogates from `surrogateescape` map back to the
/// original bytes).
fn str_bytes(s: &Bound<'_, PyString>) -> PyResult<Vec<u8>> {
    match s.encode_utf8() {
        Ok(b) => Ok(b.as_bytes().to_vec()),
        Err(_) => {
            let b = s.call_method1("encode", ("utf-8", "surrogateescape"))?;
            Ok(b.cast_into::<PyBytes>()?.as_bytes().to_vec())
        }
    }
}

/// A key as a Python `str` (UTF-8, `surrogateescape` for bytes that are not).
pub fn key_str<'py>(py: Python<'py>, key: &[u8]) -> PyResult<Bound<'py, PyString>> {
    // Strict UTF-8 first (validated once, by CPython, while it builds the `str`).
    PyString::from_bytes(py, key).or_else(|_| {
        let b = PyBytes::new(py, key);
        PyString::from_encoded_object(&b, Some(UTF8), Some(SURROGATEESCAPE))
    })
}

/// A decoded value as a Python object: `bool`, `int`, `float`, `str`, `bytes` or `list`.
pub fn val_to_py<'py>(py: Python<'py>, v: &Val) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Val::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Val::I64(x) => x.into_pyobject(py)?.into_any(),
        Val::U64(x) => x.into_pyobject(py)?.into_any(),
        Val::F32(x) => f64::from(*x).into_pyobject(py)?.into_any(),
        Val::F64(x) => x.into_pyobject(py)?.into_any(),
        Val::Str(s) => PyString::new(py, s).into_any(),
        Val::Hex(b) => PyBytes::new(py, b).into_any(),
        Val::List(items) => {
            let list = PyList::empty(py);
            for i in items {
                list.append(val_to_py(py, i)?)?;
            }
            list.into_any()
        }
    })
}

/// A getter's result as a Python object, straight from the decoded value (no intermediate copy
/// of strings, bytes or vectors: the named getters' path): `bool`, `int`, `float`, `str`,
/// `bytes`, or a `list` of those.
pub fn value_to_py<'py>(py: Python<'py>, v: Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Bool(x) => x.into_pyobject(py)?.to_owned().into_any(),
        Value::I32(x) => x.into_pyobject(py)?.into_any(),
        Value::U32(x) => x.into_pyobject(py)?.into_any(),
        Value::I64(x) => x.into_pyobject(py)?.into_any(),
        Value::U64(x) => x.into_pyobject(py)?.into_any(),
        Value::F32(x) => x.into_pyobject(py)?.into_any(),
        Value::F64(x) => x.into_pyobject(py)?.into_any(),
        Value::String(x) => PyString::new(py, x).into_any(),
        Value::Bytes(x) => PyBytes::new(py, x).into_any(),
        Value::Strings(x) => x.into_pyobject(py)?.into_any(),
        Value::VecI32(x) => x.into_pyobject(py)?.into_any(),
        Value::VecU32(x) => x.into_pyobject(py)?.into_any(),
        Value::VecI64(x) => x.into_pyobject(py)?.into_any(),
        Value::VecU64(x) => x.into_pyobject(py)?.into_any(),
        Value::VecF32(x) => x.into_pyobject(py)?.into_any(),
        Value::VecF64(x) => x.into_pyobject(py)?.into_any(),
        Value::VecBool(x) => x.into_pyobject(py)?.into_any(),
    })
}

/// `repr()`-like text of a byte string, cut after 40 bytes (for `__repr__`).
pub fn short_repr(b: &[u8]) -> String {
    let shown: String = b
        .iter()
        .take(40)
        .flat_map(|&c| std::ascii::escape_default(c))
        .map(char::from)
        .collect();
    if b.len() > 40 {
        format!("b'{shown}'... ({} bytes)", b.len())
    } else {
        format!("b'{shown}'")
    }
}
