//! `mmkv_reader._native`: the Python extension module of the `mmkv-reader` Python package
//! (PyO3, abi3 for CPython >= 3.9). The public Python API is re-exported by
//! `python/mmkv_reader/__init__.py` (and `compat.py`, the drop-in for `mmkv_parser`).
//!
//! Everything is read-only and built on `mmkv_reader` (typed getters, check-on-read) and
//! `mmkv_inspect`'s library (record statuses, carving, type guesses): no format knowledge lives
//! here.
#![warn(missing_docs)]

mod compat;
mod convert;
mod errors;
mod records;
mod store;

use mmkv_inspect::infer::Decoding;
use mmkv_reader::decode::ValueType;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<store::Store>()?;
    m.add_class::<store::Meta>()?;
    m.add_class::<records::Record>()?;
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(compat::read_entries, m)?)?;
    m.add_function(wrap_pyfunction!(compat::read_dict, m)?)?;
    m.add_function(wrap_pyfunction!(compat::carve_slack, m)?)?;
    m.add_function(wrap_pyfunction!(compat::decode_value, m)?)?;
    m.add_function(wrap_pyfunction!(compat::_most_likely_slow, m)?)?;
    // From the reader's value-type table: (type name, Store getter name) per getter type, and
    // every name `type_hints` accepts (those, then `raw`).
    let value_types: Vec<(&str, &str)> = ValueType::ALL
        .iter()
        .map(|t| (t.name(), t.store_getter()))
        .collect();
    m.add("VALUE_TYPES", PyTuple::new(m.py(), value_types)?)?;
    let types: Vec<&str> = Decoding::ALL.iter().map(|d| d.name()).collect();
    m.add("TYPES", PyTuple::new(m.py(), types)?)?;
    Ok(())
}
