//! The native side of `mmkv_reader.compat`, the drop-in for the pure-Python `mmkv_parser`
//! module: `read_entries`, `read_dict`, `carve_slack`, `decode_value`, same arguments and return
//! shapes. Reads like `mmkv dump`: no CRC enforcement (the content is evidence), encryption
//! detected by parsing (never by a non-zero IV), expiry suffixes removed, expired keys left out
//! of `read_dict`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mmkv_inspect::analysis::{Analysis, CryptOpts};
use mmkv_inspect::infer::Decoding;
use mmkv_inspect::util::now_secs;
use mmkv_inspect::Error as InspectError;
use mmkv_reader::records::{records, split_expire};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyTuple};

use crate::convert::{key_str, KeyArg};
use crate::errors::inspect_err;
use crate::records::{decode_payload, parse_hints, reset_walk};

/// The drop-in's read options: the key when one is given, and the region located as
/// `mmkv dump --recover` locates it (the official `OnErrorRecover`): like the old module, a CRC
/// mismatch or a damaged `.crc` never hides the records. Both the fast path and [`open`] use it.
fn drop_in_opts(key: Option<Vec<u8>>, aes256: bool) -> CryptOpts {
    CryptOpts {
        aes256: aes256 && key.is_some(),
        key,
        recover: true,
        // as `mmkv`: the page of the writer's `.crc` (stores come off devices)
        page: mmkv_reader::PageSizeChoice::Inferred,
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

/// The fast path of `read_entries`/`read_dict`: the region read and walked in place, without
/// the per-record statuses and copies of an [`Analysis`]. The caller builds its result during the
/// walk and throws it away when [`Fast::walk`] reports the walk incomplete (the region does not
/// parse to its end, or holds no record although it is larger than its holder): it then takes
/// the [`open`] path, which reports the typed error. `open` is `None` when `recover` applies to a
/// reset store (slow path too).
struct Fast {
    raw: mmkv_reader::raw::RawStore,
}

/// Files up to this size keep their read buffer for the thread's next [`Fast`] read (its
/// memory stays mapped, so the next read of a large store costs no page faults).
const KEEP_BUFFER: usize = 64 << 20;

thread_local! {
    /// The data-file buffer of this thread's last [`Fast`] read, reused by the next one.
    static BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Fast {
    fn open(path: &Path, key: Option<&KeyArg>, aes256: bool, recover: bool) -> Option<Fast> {
        let key = key.map(|k| k.0.clone()).filter(|k| !k.is_empty());
        let crypt = drop_in_opts(key, aes256);
        let opts = crypt.raw_options(crypt.page_size(path).ok()?.size);
        let buffer = BUFFER.take();
        let raw = mmkv_reader::raw::read_store_reusing(path, &opts, buffer).ok()?;
        (!(recover && raw.region().is_empty())).then_some(Fast { raw })
    }

    /// Calls `each(key, payload, expire time)` for every record in file order (the payload
    /// without the expire suffix). `Ok(false)`: the walk was incomplete, discard what `each` built.
    fn walk(&self, mut each: impl FnMut(&[u8], &[u8], u32) -> PyResult<()>) -> PyResult<bool> {
        let region = self.raw.region();
        if region.is_empty() {
            return Ok(true);
        }
        let key_expire = self.raw.meta.key_expire();
        let mut it = records(region);
        let mut any = false;
        for r in it.by_ref() {
            let Ok(r) = r else { return Ok(false) };
            let (p, t) = if key_expire && !r.value.is_empty() {
                split_expire(r.value).unwrap_or((r.value, 0))
            } else {
                (r.value, 0)
            };
            each(r.key, p, t)?;
            any = true;
        }
        Ok(any && it.position() == region.len())
    }
}

impl Drop for Fast {
    fn drop(&mut self) {
        let file = std::mem::take(&mut self.raw.file);
        if file.capacity() <= KEEP_BUFFER {
            BUFFER.set(file);
        }
    }
}

/// The surviving records of a reset store (recorded size 0) when `recover` asks for them.
fn reset_records(a: &Analysis, recover: bool) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    if !recover || a.raw.actual_size != 0 {
        return None;
    }
    reset_walk(&a.raw.file)
}

/// Every `(key, payload, expire time)` record in file order, deletion markers (`b""`) included
/// (payloads without the expire suffix; expire time 0: never).
fn entries(a: &Analysis, recover: bool) -> Vec<(Vec<u8>, Vec<u8>, u32)> {
    if let Some(recs) = reset_records(a, recover) {
        let key_expire = a.raw.meta.key_expire();
        return recs
            .into_iter()
            .map(|(k, v)| match split_expire(&v) {
                Some((p, t)) if key_expire && !v.is_empty() => (k, p.to_vec(), t),
                _ => (k, v, 0),
            })
            .collect();
    }
    a.records
        .iter()
        .map(|r| (r.key.clone(), r.payload.clone(), r.expire_at.unwrap_or(0)))
        .collect()
}

/// The key [`DictFold::new`] puts in its dict to choose the table layout (never a store key:
/// those are `str`).
const LAYOUT_KEY: i32 = 0;

/// The `read_dict` fold over records in file order, both paths: last write wins through the
/// dict itself, as in the old module (a record sets its key; a removal or an expired record takes
/// it out; the dict keeps first-insertion order).
struct DictFold<'py, 'a> {
    dict: Bound<'py, PyDict>,
    hints: &'a HashMap<Vec<u8>, Decoding>,
    now: u32,
}

impl<'py, 'a> DictFold<'py, 'a> {
    /// An empty fold. The dict starts with one non-`str` key (removed by [`DictFold::finish`]):
    /// from then on CPython (3.11+) keeps the general table layout, which stores each key's
    /// hash in its entry, instead of the `str`-only layout, which reads the hash from the key
    /// object: inserting 100,000 keys then touches far fewer cache lines (a probe that meets
    /// another key compares the stored hash; a resize rehashes from the entries). The dict
    /// returned is an ordinary `dict` with the same keys in the same order.
    fn new(
        py: Python<'py>,
        hints: &'a HashMap<Vec<u8>, Decoding>,
        now: u32,
    ) -> PyResult<DictFold<'py, 'a>> {
        let dict = PyDict::new(py);
        dict.set_item(LAYOUT_KEY, py.None())?;
        Ok(DictFold { dict, hints, now })
    }

    /// The dict, without the layout key.
    fn finish(self) -> PyResult<Bound<'py, PyDict>> {
        self.dict.del_item(LAYOUT_KEY)?;
        Ok(self.dict)
    }

    fn add(&self, key: &[u8], payload: &[u8], expire_at: u32) -> PyResult<()> {
        let py = self.dict.py();
        let k = key_str(py, key)?;
        if payload.is_empty() || (expire_at != 0 && expire_at <= self.now) {
            if self.dict.contains(&k)? {
                self.dict.del_item(&k)?;
            }
            return Ok(());
        }
        let hint = if self.hints.is_empty() {
            None
        } else {
            self.hints.get(key).copied()
        };
        self.dict.set_item(k, decode_payload(py, payload, hint)?)
    }
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
    if let Some(f) = Fast::open(&path, key.as_ref(), aes256, recover) {
        let list = PyList::empty(py);
        let complete = f.walk(|k, p, _| {
            list.append(PyTuple::new(
                py,
                [key_str(py, k)?.into_any(), PyBytes::new(py, p).into_any()],
            )?)
        })?;
        if complete {
            return Ok(list);
        }
    }
    let list = PyList::empty(py);
    let a = open(&path, key, aes256)?;
    for (k, v, _) in entries(&a, recover) {
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
    if let Some(f) = Fast::open(&path, key.as_ref(), aes256, recover) {
        let fold = DictFold::new(py, &hints, now_secs())?;
        if f.walk(|k, p, t| fold.add(k, p, t))? {
            return fold.finish();
        }
    }
    let a = open(&path, key, aes256)?;
    let fold = DictFold::new(py, &hints, a.now)?;
    for (k, p, t) in entries(&a, recover) {
        fold.add(&k, &p, t)?;
    }
    fold.finish()
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
