//! `mmkv_reader.Store`: the Rust `mmkv_reader::Store` (check-on-read) with typed getters.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use mmkv_inspect::analysis::CryptOpts;
use mmkv_inspect::util::now_secs;
use mmkv_reader::decode::{self, UnknownValueType, ValueType};
use mmkv_reader::meta::MetaInfo;
use mmkv_reader::{Error as ReaderError, FixedClock, Options, PageSize, PageSizeChoice};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use crate::convert::{key_str, value_to_py, KeyArg};
use crate::errors::reader_err;
use crate::records::{
    analyse, collapse, decode_payload, parse_hints, reset_encrypted_err, reset_walk, to_record,
    Record,
};

/// The fields of a store's meta file (`PATH.crc`).
#[pyclass(module = "mmkv_reader", frozen, get_all)]
pub struct Meta {
    /// Meta version (0-4; higher values are read as 3).
    pub version: u32,
    /// Full write-back count.
    pub sequence: u32,
    /// CRC-32 digest of the data region, as recorded.
    pub crc: u32,
    /// AES IV (16 bytes; random in plaintext stores after `clearAll()`: not evidence of encryption).
    pub iv: Py<PyBytes>,
    /// Actual size of the data region (meta version >= 3; 0 otherwise).
    pub actual_size: u32,
    /// Last confirmed actual size.
    pub last_confirmed_size: u32,
    /// Last confirmed CRC digest.
    pub last_confirmed_crc: u32,
    /// Flags word (bit 0: key expiration).
    pub flags: u64,
    /// Key expiration is enabled.
    pub key_expire: bool,
}

#[pymethods]
impl Meta {
    fn __repr__(&self) -> String {
        format!(
            "Meta(version={}, sequence={}, crc={:#010x}, actual_size={}, key_expire={})",
            self.version, self.sequence, self.crc, self.actual_size, self.key_expire
        )
    }
}

fn meta_obj(py: Python<'_>, m: &MetaInfo) -> Meta {
    Meta {
        version: m.version,
        sequence: m.sequence,
        crc: m.crc_digest,
        iv: PyBytes::new(py, &m.iv).unbind(),
        actual_size: m.actual_size,
        last_confirmed_size: m.last_confirmed_size,
        last_confirmed_crc: m.last_confirmed_crc,
        flags: m.flags,
        key_expire: m.key_expire(),
    }
}

// One Backend per Store: boxing the larger variant would add a pointer chase to every read.
#[allow(clippy::large_enum_variant)]
enum Backend {
    /// The reader's store: check-on-read on every call.
    Live(mmkv_reader::Store),
    /// `recover=True` on a store the strict reader refuses or reads as reset: a fixed view.
    Recovered {
        entries: HashMap<Vec<u8>, (Vec<u8>, u32)>,
        meta: MetaInfo,
    },
}

/// An MMKV store (data file `path`, meta file `path + ".crc"`), read-only.
///
/// Every getter compares the meta file with the current snapshot first, and reloads when a writer
/// changed the store (check-on-read, as the Rust `mmkv_reader::Store`). Getters return `None` when
/// the official getter of that type reports no value (absent, removed, expired, or not decodable
/// as the type). Keys are `str` or `bytes`.
///
/// Args:
///     path: the data file.
///     crypt_key: the store's crypt key (`str`: its UTF-8 bytes; or `bytes`), zero-padded or
///         truncated to 16 bytes (32 with `aes256`) as MMKV does.
///     aes256: the store uses AES-256 (MMKV v2.3.0+).
///     recover: when the strict reader refuses the store because of a CRC mismatch, read its
///         region anyway; when the store was reset (recorded size 0, e.g. after `clearAll()`)
///         and its old records still walk cleanly to the end of the file, read those. A
///         recovered store is a fixed view (`recovered` is True; no check-on-read). A meta file
///         shorter than its structure is read zero-filled, as the official library reads it,
///         also as a fixed view.
///     now: evaluate key expiration at this time (epoch seconds) instead of the system clock.
///     page_size: read as the official library does on a machine with this page size, as
///         `mmkv --page-size`: `None` or `"auto"` (the default) infers the writer's page from the
///         `.crc` length (one page of the machine that wrote it: 4, 16 or 64 KiB), else uses this
///         machine's; `"host"` is this machine's; an `int` is a power of two from 4096 to 65536.
///         The official loader maps the data file rounded up to whole pages, so a damaged or
///         truncated store can read differently at 4 KiB and 16 KiB (stores off iPhones and
///         Android 15+ devices). `page_size` and `page_size_source` say which was used.
///
/// Raises:
///     StoreNotFoundError, StoreIOError, CorruptStoreError, EncryptedStoreError, WrongKeyError;
///     ValueError for a page size the reader cannot follow.
#[pyclass(module = "mmkv_reader", frozen)]
pub struct Store {
    path: PathBuf,
    crypt: CryptOpts,
    now: Option<u32>,
    page: PageSize,
    backend: Backend,
}

impl Store {
    fn path_str(&self) -> String {
        self.path.display().to_string()
    }

    fn now(&self) -> u32 {
        self.now.unwrap_or_else(now_secs)
    }

    /// Runs `f` on the live payload of `key` (expire suffix removed).
    fn with_payload<R>(&self, key: &[u8], f: impl FnOnce(&[u8]) -> Option<R>) -> Option<R> {
        match &self.backend {
            Backend::Live(s) => f(s.view().raw_value(key)?),
            Backend::Recovered { entries, .. } => f(&entries.get(key)?.0),
        }
    }

    /// The value of `key` read by the getter of type `ty`, as a Python object: every named
    /// getter goes through this one dispatch ([`decode::decode`]) and one conversion
    /// ([`value_to_py`]).
    fn typed<'py>(
        &self,
        py: Python<'py>,
        key: &[u8],
        ty: ValueType,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.with_payload(key, |p| decode::decode(ty, p).map(|v| value_to_py(py, v)))
            .transpose()
    }

    /// Live `(key, payload)` pairs sorted by key bytes.
    fn live_pairs(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut v: Vec<(Vec<u8>, Vec<u8>)> = match &self.backend {
            Backend::Live(s) => {
                let snap = s.snapshot();
                snap.iter().map(|(k, p)| (k.to_vec(), p.to_vec())).collect()
            }
            Backend::Recovered { entries, .. } => entries
                .iter()
                .map(|(k, (p, _))| (k.clone(), p.clone()))
                .collect(),
        };
        v.sort();
        v
    }

    fn recovered_from(entries: Vec<(Vec<u8>, Vec<u8>, u32)>, meta: MetaInfo) -> Backend {
        Backend::Recovered {
            entries: entries.into_iter().map(|(k, p, t)| (k, (p, t))).collect(),
            meta,
        }
    }
}

#[pymethods]
impl Store {
    #[new]
    #[pyo3(signature = (path, crypt_key=None, aes256=false, recover=false, now=None, page_size=None))]
    fn new(
        path: PathBuf,
        crypt_key: Option<KeyArg>,
        aes256: bool,
        recover: bool,
        now: Option<u32>,
        page_size: Option<PageArg>,
    ) -> PyResult<Store> {
        let key = crypt_key.map(|k| k.0).filter(|k| !k.is_empty());
        if aes256 && key.is_none() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "aes256=True needs a crypt_key",
            ));
        }
        let choice = page_size.map_or(PageSizeChoice::Inferred, |p| p.0);
        let page = CryptOpts {
            page: choice,
            ..CryptOpts::default()
        }
        .page_size(&path)
        .map_err(|e| crate::errors::inspect_err(&e, false))?;
        // Every read of this store (the live store, recovery, history, carving) at that size.
        let crypt = CryptOpts {
            key: key.clone(),
            aes256,
            recover,
            page: PageSizeChoice::Given(page.size),
        };
        let mut opts = Options::new().aes256(aes256).page_size(page.size);
        if let Some(k) = &key {
            opts = opts.crypt_key(k);
        }
        if let Some(t) = now {
            opts = opts.clock(Arc::new(FixedClock(t)));
        }
        let at = now.unwrap_or_else(now_secs);
        let keyed = key.is_some();
        let backend = match mmkv_reader::Store::open(&path, opts.clone()) {
            Ok(s) => {
                let reset = s.is_empty() && s.snapshot().region_len() == 0;
                if recover && reset {
                    recover_reset(&path, &crypt, at)?.unwrap_or(Backend::Live(s))
                } else {
                    Backend::Live(s)
                }
            }
            Err(ReaderError::CrcMismatch { .. }) if recover => {
                let a = analyse(&path, &crypt, at)?;
                let live = a
                    .live()
                    .into_iter()
                    .map(|r| (r.key.clone(), r.payload.clone(), r.expire_at.unwrap_or(0)))
                    .collect();
                Store::recovered_from(live, a.raw.meta)
            }
            Err(ReaderError::MetaTooShort { .. }) => short_meta(&path, &opts)
                .map_err(|e| reader_err(&path.display().to_string(), &e, keyed))?,
            Err(e) => return Err(reader_err(&path.display().to_string(), &e, keyed)),
        };
        Ok(Store {
            path,
            crypt,
            now,
            page,
            backend,
        })
    }

    /// The page size the store is read with (bytes): the official loader on a machine with
    /// pages of this size reads what this store reads.
    #[getter]
    fn page_size(&self) -> u64 {
        self.page.size
    }

    /// Why `page_size`: `"inferred"` (from the `.crc` length), `"host_not_inferred"` (this
    /// machine's page: no `.crc`, or one that is not one 4, 16 or 64 KiB page), `"host"` or
    /// `"given"`.
    #[getter]
    fn page_size_source(&self) -> &'static str {
        self.page.source.as_str()
    }

    /// A sentence saying which page size was used and why (what `mmkv` prints on stderr).
    #[getter]
    fn page_size_note(&self) -> String {
        self.page.to_string()
    }

    /// The data file's path.
    #[getter]
    fn path(&self) -> String {
        self.path_str()
    }

    /// True when the store was opened with `recover=True` and read through recovery (a fixed view).
    #[getter]
    fn recovered(&self) -> bool {
        matches!(self.backend, Backend::Recovered { .. })
    }

    /// The meta file's fields as of the current snapshot (check-on-read).
    #[getter]
    fn meta(&self, py: Python<'_>) -> Meta {
        match &self.backend {
            Backend::Live(s) => meta_obj(py, &s.meta()),
            Backend::Recovered { meta, .. } => meta_obj(py, meta),
        }
    }

    /// Checks the meta file now and reloads if the store changed. True when a reload happened.
    /// Raises the typed error of a failed reload (the previous snapshot keeps serving).
    fn refresh(&self) -> PyResult<bool> {
        match &self.backend {
            Backend::Live(s) => s
                .refresh()
                .map_err(|e| reader_err(&self.path_str(), &e, self.crypt.key.is_some())),
            Backend::Recovered { .. } => Ok(false),
        }
    }

    /// The message of the latest failed reload, or None.
    #[getter]
    fn last_reload_error(&self) -> Option<String> {
        match &self.backend {
            Backend::Live(s) => s.last_reload_error().map(|e| e.to_string()),
            Backend::Recovered { .. } => None,
        }
    }

    /// Number of live (unexpired) keys.
    fn __len__(&self) -> usize {
        match &self.backend {
            Backend::Live(s) => s.len(),
            Backend::Recovered { entries, .. } => entries.len(),
        }
    }

    /// The key is present (and not expired).
    fn __contains__(&self, key: KeyArg) -> bool {
        self.with_payload(&key.0, |_| Some(())).is_some()
    }

    fn __repr__(&self) -> String {
        format!(
            "Store({:?}, keys={}, page_size={})",
            self.path_str(),
            self.__len__(),
            self.page.size
        )
    }

    /// The live keys, sorted by their bytes (`str`, `surrogateescape` for keys that are not UTF-8;
    /// `raw=True`: `bytes`).
    #[pyo3(signature = (raw=false))]
    fn keys<'py>(&self, py: Python<'py>, raw: bool) -> PyResult<Bound<'py, PyList>> {
        let mut keys = match &self.backend {
            Backend::Live(s) => s.keys(),
            Backend::Recovered { entries, .. } => entries.keys().cloned().collect(),
        };
        keys.sort();
        let list = PyList::empty(py);
        for k in &keys {
            if raw {
                list.append(PyBytes::new(py, k))?;
            } else {
                list.append(key_str(py, k)?)?;
            }
        }
        Ok(list)
    }

    /// The live entries as `(key, value)` pairs sorted by key bytes. A key in `type_hints`
    /// (`{key: type name}`, names as `mmkv dump --type`: `bool i32 u32 i64 u64 f32 f64 string bytes
    /// strings vec_i32 vec_u32 vec_i64 vec_u64 vec_f32 vec_f64 raw`) is decoded as the official
    /// getter of that type reads it (`None` when it reports no value); other keys get their most
    /// likely decoding (MMKV stores no types; see inspect/README.md, "Types").
    #[pyo3(signature = (type_hints=None))]
    fn items<'py>(
        &self,
        py: Python<'py>,
        type_hints: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let hints = parse_hints(type_hints)?;
        let list = PyList::empty(py);
        for (k, p) in self.live_pairs() {
            let v = decode_payload(py, &p, hints.get(&k).copied())?;
            list.append(PyTuple::new(
                py,
                [key_str(py, &k)?.into_any(), v.into_pyobject(py)?],
            )?)?;
        }
        Ok(list)
    }

    /// The live value's payload bytes (expire suffix removed), or None.
    fn raw_value<'py>(&self, py: Python<'py>, key: KeyArg) -> Option<Bound<'py, PyBytes>> {
        self.with_payload(&key.0, |p| Some(PyBytes::new(py, p)))
    }

    /// Expire time of a live key (epoch seconds); 0 when it never expires or the store has no
    /// key expiration; None when the key is absent or expired.
    fn expire_at(&self, key: KeyArg) -> Option<u32> {
        match &self.backend {
            Backend::Live(s) => s.expire_at(&key.0),
            Backend::Recovered { entries, .. } => entries.get(&key.0).map(|e| e.1),
        }
    }

    /// Every record of the data region in file order, with its status (`live`, `superseded`,
    /// `removed`, `expired`), read afresh from the files (no CRC enforcement). `now`: evaluate
    /// expiration at this time (default: the store's `now`, else the system clock).
    #[pyo3(signature = (now=None))]
    fn history(&self, py: Python<'_>, now: Option<u32>) -> PyResult<Vec<Record>> {
        let a = analyse(&self.path, &self.crypt, now.unwrap_or_else(|| self.now()))?;
        a.records.iter().map(|r| to_record(py, r)).collect()
    }

    /// Records carved from the bytes after the data region (left over from before a full
    /// write-back, `trim()` or `clearAll()`), status `stale`. Inferences: expect a few false
    /// records carved out of the tail of long old text values.
    fn carve(&self, py: Python<'_>) -> PyResult<Vec<Record>> {
        let a = analyse(&self.path, &self.crypt, self.now())?;
        a.carve().iter().map(|r| to_record(py, r)).collect()
    }

    /// The value of `key` as the official getter of `type` reads it (`type` is one of
    /// `VALUE_TYPES`' names: `"i32"`, `"string"`, `"vec_f64"`...); the named getters are this
    /// with the type fixed. Raises ValueError for an unknown type name.
    #[pyo3(name = "get", signature = (key, r#type))]
    fn get_typed<'py>(
        &self,
        py: Python<'py>,
        key: KeyArg,
        r#type: &str,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let ty: ValueType = r#type.parse().map_err(|e: UnknownValueType| {
            pyo3::exceptions::PyValueError::new_err(e.to_string())
        })?;
        self.typed(py, &key.0, ty)
    }

    /// `getBool`.
    fn get_bool<'py>(&self, py: Python<'py>, key: KeyArg) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::Bool)
    }

    /// `getInt32` (a value written as a wider integer keeps its low 32 bits, as in C++).
    fn get_i32<'py>(&self, py: Python<'py>, key: KeyArg) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::I32)
    }

    /// `getUInt32`.
    fn get_u32<'py>(&self, py: Python<'py>, key: KeyArg) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::U32)
    }

    /// `getInt64`.
    fn get_i64<'py>(&self, py: Python<'py>, key: KeyArg) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::I64)
    }

    /// `getUInt64`.
    fn get_u64<'py>(&self, py: Python<'py>, key: KeyArg) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::U64)
    }

    /// `getFloat` (as a Python float).
    fn get_f32<'py>(&self, py: Python<'py>, key: KeyArg) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::F32)
    }

    /// `getDouble`.
    fn get_f64<'py>(&self, py: Python<'py>, key: KeyArg) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::F64)
    }

    /// `getString`; None also when the bytes are not UTF-8 (read those with `get_bytes`).
    fn get_string<'py>(&self, py: Python<'py>, key: KeyArg) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::String)
    }

    /// `getBytes`.
    fn get_bytes<'py>(&self, py: Python<'py>, key: KeyArg) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::Bytes)
    }

    /// `getVector` of strings (an empty list for a value that is no string vector, as in C++).
    fn get_string_vec<'py>(
        &self,
        py: Python<'py>,
        key: KeyArg,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::Strings)
    }

    /// v2.x `getVector<bool>`.
    fn get_vec_bool<'py>(
        &self,
        py: Python<'py>,
        key: KeyArg,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::VecBool)
    }

    /// v2.x `getVector<int32_t>`.
    fn get_vec_i32<'py>(
        &self,
        py: Python<'py>,
        key: KeyArg,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::VecI32)
    }

    /// v2.x `getVector<uint32_t>`.
    fn get_vec_u32<'py>(
        &self,
        py: Python<'py>,
        key: KeyArg,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::VecU32)
    }

    /// v2.x `getVector<int64_t>`.
    fn get_vec_i64<'py>(
        &self,
        py: Python<'py>,
        key: KeyArg,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::VecI64)
    }

    /// v2.x `getVector<uint64_t>`.
    fn get_vec_u64<'py>(
        &self,
        py: Python<'py>,
        key: KeyArg,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::VecU64)
    }

    /// v2.x `getVector<float>`.
    fn get_vec_f32<'py>(
        &self,
        py: Python<'py>,
        key: KeyArg,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::VecF32)
    }

    /// v2.x `getVector<double>`.
    fn get_vec_f64<'py>(
        &self,
        py: Python<'py>,
        key: KeyArg,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.typed(py, &key.0, ValueType::VecF64)
    }
}

/// A meta file shorter than its structure: the official library reads it zero-filled (its
/// default strategy then decides), as [`mmkv_reader::load_bytes`] does; `Store::open` refuses it
/// because it keeps the meta mapped for the check-on-read, so this is a fixed view of one load.
fn short_meta(path: &std::path::Path, opts: &Options) -> Result<Backend, ReaderError> {
    let data = std::fs::read(path).map_err(|e| ReaderError::io(path, &e))?;
    let meta_path = mmkv_reader::meta_path(path);
    let meta = std::fs::read(&meta_path).map_err(|e| ReaderError::io(&meta_path, &e))?;
    let (snap, _) = mmkv_reader::load_bytes(&meta, &data, opts)?;
    let live = snap
        .entries()
        .map(|(k, p, t)| (k.to_vec(), p.to_vec(), t))
        .collect();
    Ok(Store::recovered_from(live, *snap.meta()))
}

/// `page_size=`: `None`, `"auto"`, `"host"` or a size in bytes (validated here).
pub struct PageArg(PageSizeChoice);

impl<'py> FromPyObject<'_, 'py> for PageArg {
    type Error = PyErr;

    fn extract(ob: pyo3::Borrowed<'_, 'py, PyAny>) -> PyResult<PageArg> {
        let bad = |what: String| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "page_size: {what} (expected None, \"auto\", \"host\" or a power of two from 4096 to 65536)"
            ))
        };
        if let Ok(s) = ob.extract::<String>() {
            return match s.as_str() {
                "auto" => Ok(PageArg(PageSizeChoice::Inferred)),
                "host" => Ok(PageArg(PageSizeChoice::Host)),
                other => Err(bad(format!("{other:?}"))),
            };
        }
        if ob.is_instance_of::<pyo3::types::PyBool>() {
            return Err(bad("a bool".into()));
        }
        let n: u64 = ob
            .extract()
            .map_err(|_| bad(ob.repr().map_or_else(|_| "?".into(), |r| r.to_string())))?;
        mmkv_reader::page::validate_page_size(n)
            .map(|n| PageArg(PageSizeChoice::Given(n)))
            .map_err(|e| bad(e.to_string()))
    }
}

/// `recover=True` on a reset store: its surviving records, when they walk cleanly.
fn recover_reset(path: &std::path::Path, crypt: &CryptOpts, now: u32) -> PyResult<Option<Backend>> {
    let page = crypt
        .page_size(path)
        .map_err(|e| crate::errors::inspect_err(&e, false))?;
    // without the key and with the default strategy, as `read_raw` reads (the walk needs the file)
    let opts = mmkv_reader::raw::RawOptions {
        rules: mmkv_reader::locate::Rules::official().with_page_size(page.size),
        ..mmkv_reader::raw::RawOptions::default()
    };
    let raw = mmkv_reader::raw::read_store(path, &opts)
        .map_err(|e| reader_err(&path.display().to_string(), &e, false))?;
    let Some(recs) = reset_walk(&raw.file) else {
        return Ok(None);
    };
    if crypt.key.is_some() {
        return Err(reset_encrypted_err(path));
    }
    let live = collapse(&recs, raw.meta.key_expire(), now);
    Ok((!live.is_empty()).then(|| Store::recovered_from(live, raw.meta)))
}
