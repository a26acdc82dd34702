//! The native side of `mmkv_reader.compat`, the drop-in for the pure-Python `mmkv_parser`
//! module: `read_entries`, `read_dict`, `carve_slack`, `decode_value`, same arguments and return
//! shapes. Reads like `mmkv dump`: no CRC enforcement (the content is evidence), encryption
//! detected by parsing (never by a non-zero IV), expiry suffixes removed, expired keys left out
//! of `read_dict`.

use std::path::{Path, PathBuf};

use mmkv_inspect::analysis::{Analysis, CryptOpts};
use mmkv_inspect::util::now_secs;
use mmkv_inspect::Error as InspectError;
use mmkv_reader::records::{records, split_expire};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyTuple};

use crate::convert::{key_str, KeyArg};
use crate::errors::inspect_err;
use crate::records::{collapse, decode_payload, parse_hints, reset_walk, LiveEntry};

/// The drop-in's read options: the key when one is given, and the region located as
/// `mmkv dump --recover` locates it (the official `OnErrorRecover`): like the old module, a CRC
/// mismatch or a damaged `.crc` never hides the records. Both the fast path and [`open`] use it.
fn drop_in_opts(key: Option<Vec<u8>>, aes256: bool) -> CryptOpts {
    CryptOpts {
        aes256: aes256 && key.is_some(),
        key,
        recover: true,
    }
}

/// Opens a store the way the drop-in does ([`drop_in_opts`]); a plaintext store read with a
/// key is read without it (the old module ignores a key for a plaintext store).
fn open(path: &Path, key: Option<KeyArg>, aes256: bool) -> PyResult<Analysis> {
    let key = key.map(|k| k.0).filter(|k| !k.is_empty());
    let crypt = drop_in_opts(key, aes256);
    let now = now_secs();
    match Analysis::open(path, &crypt, now) {
        Ok(a) => Ok(a),
        Err(e @ InspectError::WrongKey { .. }) => {
            Analysis::open(path, &drop_in_opts(None, false), now).map_err(|_| inspect_err(&e, true))
        }
        Err(e) => Err(inspect_err(&e, crypt.key.is_some())),
    }
}

/// The fast path of `read_entries`/`read_dict`: the region read and parsed in place, without
/// the per-record statuses and copies of an [`Analysis`]. `None` whenever the result could differ
/// from the analysis or an error is due (the region does not parse to its end, holds no record
/// although it is larger than its holder, or `recover` applies to a reset store): the caller then
/// takes the [`open`] path, which reports the typed error.
struct Fast {
    raw: mmkv_reader::raw::RawStore,
    /// `(key, stored value)` spans of `raw.region`, in file order.
    spans: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
}

impl Fast {
    fn open(path: &Path, key: Option<&KeyArg>, aes256: bool, recover: bool) -> Option<Fast> {
        let key = key.map(|k| k.0.clone()).filter(|k| !k.is_empty());
        let opts = drop_in_opts(key, aes256).raw_options();
        let raw = mmkv_reader::raw::read_store(path, &opts).ok()?;
        if raw.region.is_empty() {
            return (!recover).then_some(Fast {
                raw,
                spans: Vec::new(),
            });
        }
        let base = raw.region.as_ptr() as usize;
        let mut spans = Vec::new();
        let mut it = records(&raw.region);
        for r in it.by_ref() {
            let r = r.ok()?;
            let k = r.key.as_ptr() as usize - base;
            let v = r.value.as_ptr() as usize - base;
            spans.push((k..k + r.key.len(), v..v + r.value.len()));
        }
        if it.position() != raw.region.len() || spans.is_empty() {
            return None;
        }
        Some(Fast { raw, spans })
    }

    /// `(key, payload, expire time)` of every record in file order (payload without the suffix).
    fn records(&self) -> impl Iterator<Item = (&[u8], &[u8], u32)> + '_ {
        let key_expire = self.raw.meta.key_expire();
        self.spans.iter().map(move |(k, v)| {
            let value = &self.raw.region[v.clone()];
            let (p, t) = if key_expire && !value.is_empty() {
                split_expire(value).unwrap_or((value, 0))
            } else {
                (value, 0)
            };
            (&self.raw.region[k.clone()], p, t)
        })
    }

    /// The live entries (last write wins, empty values delete, expired left out), in the file
    /// order of their last write (no sort: a dict's order carries no meaning here).
    fn live(&self, now: u32) -> Vec<(&[u8], &[u8])> {
        let recs: Vec<(&[u8], &[u8], u32)> = self.records().collect();
        let mut last: std::collections::HashMap<&[u8], usize> =
            std::collections::HashMap::with_capacity(recs.len());
        for (i, (k, _, _)) in recs.iter().enumerate() {
            last.insert(k, i);
        }
        recs.iter()
            .enumerate()
            .filter(|(i, (k, p, t))| {
                last.get(k) == Some(i) && !p.is_empty() && (*t == 0 || *t > now)
            })
            .map(|(_, (k, p, _))| (*k, *p))
            .collect()
    }
}

/// The surviving records of a reset store (recorded size 0) when `recover` asks for them.
fn reset_records(a: &Analysis, recover: bool) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    if !recover || a.raw.actual_size != 0 {
        return None;
    }
    reset_walk(&a.raw.file)
}

/// Every `(key, value)` entry in file order, deletion markers (`b""`) included.
fn entries(a: &Analysis, recover: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    if let Some(recs) = reset_records(a, recover) {
        let key_expire = a.raw.meta.key_expire();
        return recs
            .into_iter()
            .map(|(k, v)| {
                let p = if key_expire && !v.is_empty() {
                    split_expire(&v).map_or(v.clone(), |(p, _)| p.to_vec())
                } else {
                    v
                };
                (k, p)
            })
            .collect();
    }
    a.records
        .iter()
        .map(|r| (r.key.clone(), r.payload.clone()))
        .collect()
}

/// The live entries (last write wins, removed and expired keys left out), in file order.
fn live(a: &Analysis, recover: bool) -> Vec<LiveEntry> {
    if let Some(recs) = reset_records(a, recover) {
        return collapse(&recs, a.raw.meta.key_expire(), a.now);
    }
    // File order of the last writes, as the fast path gives them.
    let mut recs = a.live();
    recs.sort_by_key(|r| r.index);
    recs.into_iter()
        .map(|r| (r.key.clone(), r.payload.clone(), r.expire_at.unwrap_or(0)))
        .collect()
}

/// `read_entries(path, key=None, aes256=False, recover=False)`: every `(key, value)` record in
/// file order (values are payloads without the expire suffix; `b""` marks a removal).
#[pyfunction]
#[pyo3(signature = (path, key=None, aes256=false, recover=false))]
pub fn read_entries<'py>(
    py: Python<'py>,
    path: PathBuf,
    key: Option<KeyArg>,
    aes256: bool,
    recover: bool,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    if let Some(f) = Fast::open(&path, key.as_ref(), aes256, recover) {
        for (k, p, _) in f.records() {
            list.append(PyTuple::new(
                py,
                [key_str(py, k)?.into_any(), PyBytes::new(py, p).into_any()],
            )?)?;
        }
        return Ok(list);
    }
    let a = open(&path, key, aes256)?;
    for (k, v) in entries(&a, recover) {
        list.append(PyTuple::new(
            py,
            [key_str(py, &k)?.into_any(), PyBytes::new(py, &v).into_any()],
        )?)?;
    }
    Ok(list)
}

/// `read_dict(path, key=None, aes256=False, recover=False, type_hints=None)`: `{key: value}` of
/// the live entries, each decoded as its `type_hints` type or as its most likely type.
#[pyfunction]
#[pyo3(signature = (path, key=None, aes256=false, recover=false, type_hints=None))]
pub fn read_dict<'py>(
    py: Python<'py>,
    path: PathBuf,
    key: Option<KeyArg>,
    aes256: bool,
    recover: bool,
    type_hints: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let hints = parse_hints(type_hints)?;
    let dict = PyDict::new(py);
    if let Some(f) = Fast::open(&path, key.as_ref(), aes256, recover) {
        for (k, p) in f.live(now_secs()) {
            let v = decode_payload(py, p, hints.get(k).copied())?;
            dict.set_item(key_str(py, k)?, v)?;
        }
        return Ok(dict);
    }
    let a = open(&path, key, aes256)?;
    for (k, p, _) in live(&a, recover) {
        let v = decode_payload(py, &p, hints.get(&k).copied())?;
        dict.set_item(key_str(py, &k)?, v)?;
    }
    Ok(dict)
}

/// `carve_slack(path, key=None, aes256=False)`: `(offset, key, value, live_key)` for each record
/// carved from the bytes after the data region, in file order.
#[pyfunction]
#[pyo3(signature = (path, key=None, aes256=false))]
pub fn carve_slack<'py>(
    py: Python<'py>,
    path: PathBuf,
    key: Option<KeyArg>,
    aes256: bool,
) -> PyResult<Bound<'py, PyList>> {
    let a = open(&path, key, aes256)?;
    let live_keys: std::collections::HashSet<&[u8]> =
        a.live().into_iter().map(|r| r.key.as_slice()).collect();
    let list = PyList::empty(py);
    for r in a.carve() {
        let is_live = PyBool::new(py, live_keys.contains(r.key.as_slice()));
        list.append(PyTuple::new(
            py,
            [
                r.offset.into_pyobject(py)?.into_any(),
                key_str(py, &r.key)?.into_any(),
                PyBytes::new(py, &r.payload).into_any(),
                is_live.to_owned().into_any(),
            ],
        )?)?;
    }
    Ok(list)
}

/// The full-guess decoding (`most_likely` without its fast path), for the tests.
#[pyfunction]
pub fn _most_likely_slow<'py>(
    py: Python<'py>,
    payload: &Bound<'py, PyBytes>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    crate::records::most_likely(payload.as_bytes())
        .map(|v| crate::convert::val_to_py(py, &v))
        .transpose()
}

/// `decode_value(container)`: `None` for a removal marker (`b""`), else the most likely decoding.
#[pyfunction]
pub fn decode_value<'py>(
    py: Python<'py>,
    container: &Bound<'py, PyBytes>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let b = container.as_bytes();
    if b.is_empty() {
        return Ok(None);
    }
    decode_payload(py, b, None)
}
