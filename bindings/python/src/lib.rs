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

use pyo3::prelude::*;

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
    Ok(())
}
