//! [`OfficialLib`] / [`OfficialStore`] over `mmkv-sys` (the official library of one version,
//! loaded in-process).

use std::path::Path;

use mmkv_sys::{Instance, Mode, Official, OpenAs};

use crate::error::{Error, Result};
use crate::sides::official::{LockCall, OfficialLib, OfficialStore, OpenVia};
use crate::vocab::kind::{Features, ModeKind};
use crate::vocab::value::{Value, ValueType};

/// Tags built into `mmkv-sys`, oldest first.
pub fn built_versions() -> &'static [&'static str] {
    mmkv_sys::built_versions()
}

/// [`built_versions`] as owned tags (the suites' default).
pub fn built_tags() -> Vec<String> {
    built_versions().iter().map(|s| s.to_string()).collect()
}

/// One loaded official version.
#[derive(Debug, Clone)]
pub struct SysLib {
    official: Official,
    features: Features,
}

impl SysLib {
    /// Loads a built version.
    pub fn load(tag: &str) -> Result<SysLib> {
        let official = Official::load(tag).map_err(|e| Error::Official {
            tag: tag.to_string(),
            message: e.to_string(),
        })?;
        Ok(SysLib::new(official))
    }

    /// Wraps a loaded version. Features come from `versions.yaml` (as embedded in mmkv-sys),
    /// cross-checked with what the compiled shim detected in the C++ API.
    pub fn new(official: Official) -> SysLib {
        let caps = official.capabilities();
        let mut features = Features::from_set(official.features());
        // The compiled API is the authority on what can be called.
        features.key_expire &= caps.key_expire;
        features.typed_vectors &= caps.typed_vectors;
        features.aes256 &= caps.aes256;
        features.has_value_flag = caps.has_value_flag;
        features.count_filter_expire = caps.count_filter_expire;
        features.bytes_flag = caps.get_bytes_flag;
        features.compare_before_set &= caps.compare_before_set;
        features.backup_restore &= caps.backup_restore;
        features.remove_storage &= caps.remove_storage;
        features.import_from &= caps.import_from;
        features.read_only &= caps.read_only;
        features.name_space &= caps.name_space;
        SysLib { official, features }
    }

    /// The underlying handle.
    pub fn official(&self) -> &Official {
        &self.official
    }
}

impl OfficialLib for SysLib {
    fn tag(&self) -> &str {
        self.official.tag()
    }

    fn features(&self) -> Features {
        self.features
    }

    fn open_with(
        &self,
        dir: &Path,
        id: &str,
        mode: ModeKind,
        crypt_key: Option<&[u8]>,
        aes256: bool,
    ) -> Result<Box<dyn OfficialStore>> {
        self.open_as(dir, id, mode, crypt_key, aes256, OpenAs::default())
    }

    fn open_via(
        &self,
        via: OpenVia,
        dir: &Path,
        id: &str,
        mode: ModeKind,
        crypt_key: Option<&[u8]>,
        aes256: bool,
    ) -> Result<Option<Box<dyn OfficialStore>>> {
        let (listed, how) = match via {
            OpenVia::ReadOnly => (
                self.features.read_only,
                OpenAs {
                    read_only: true,
                    ..OpenAs::default()
                },
            ),
            OpenVia::NameSpace => (
                self.features.name_space,
                OpenAs {
                    name_space: true,
                    ..OpenAs::default()
                },
            ),
        };
        if !listed {
            return Ok(None);
        }
        self.open_as(dir, id, mode, crypt_key, aes256, how)
            .map(Some)
    }

    fn backup_one(&self, id: &str, from: &Path, to: &Path) -> Result<Option<bool>> {
        supported(self.official.backup_one(id, from, to)).map_err(|e| self.err(e))
    }

    fn restore_one(&self, id: &str, from: &Path, to: &Path) -> Result<Option<bool>> {
        supported(self.official.restore_one(id, from, to)).map_err(|e| self.err(e))
    }

    fn is_file_valid(&self, id: &str, dir: &Path) -> Result<bool> {
        self.official
            .is_file_valid(id, dir)
            .map_err(|e| self.err(e))
    }

    fn remove_storage(&self, id: &str, dir: &Path) -> Result<Option<bool>> {
        supported(self.official.remove_storage(id, dir)).map_err(|e| self.err(e))
    }
}

/// A call's result, `None` when the version lacks the call.
fn supported<T>(r: mmkv_sys::Result<T>) -> mmkv_sys::Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(mmkv_sys::Error::Unsupported { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

impl SysLib {
    fn open_as(
        &self,
        dir: &Path,
        id: &str,
        mode: ModeKind,
        crypt_key: Option<&[u8]>,
        aes256: bool,
        how: OpenAs,
    ) -> Result<Box<dyn OfficialStore>> {
        let mode = match mode {
            ModeKind::Single => Mode::Single,
            ModeKind::Multi => Mode::Multi,
        };
        let inst = self
            .official
            .open_as(dir, id, mode, crypt_key, aes256, how)
            .map_err(|e| self.err(e))?;
        Ok(Box::new(SysStore {
            official: self.official.clone(),
            tag: self.tag().to_string(),
            inst: Some(inst),
        }))
    }

    fn err(&self, e: mmkv_sys::Error) -> Error {
        Error::Official {
            tag: self.tag().to_string(),
            message: e.to_string(),
        }
    }
}

/// One open official instance.
#[derive(Debug)]
pub struct SysStore {
    official: Official,
    tag: String,
    inst: Option<Instance>,
}

fn utf8(bytes: Vec<u8>) -> Option<String> {
    String::from_utf8(bytes).ok()
}

impl SysStore {
    fn inst(&self) -> Result<&Instance> {
        self.inst.as_ref().ok_or_else(|| Error::Official {
            tag: self.tag.clone(),
            message: "instance already closed".to_string(),
        })
    }

    /// `f` on the open instance, its error as ours.
    fn call<T>(&self, f: impl FnOnce(&Instance) -> mmkv_sys::Result<T>) -> Result<T> {
        f(self.inst()?).map_err(|e| self.err(e))
    }

    fn err(&self, e: mmkv_sys::Error) -> Error {
        Error::Official {
            tag: self.tag.clone(),
            message: e.to_string(),
        }
    }
}

/// The expiry-filtering form of a call when `filter_expire` is asked for and the version has
/// it, else the plain form (on versions without the filtered call, expired keys are included).
fn filtered_or_all<T>(
    filter_expire: bool,
    filtered: impl FnOnce() -> mmkv_sys::Result<T>,
    all: impl FnOnce() -> mmkv_sys::Result<T>,
) -> mmkv_sys::Result<T> {
    if !filter_expire {
        return all();
    }
    match filtered() {
        Err(mmkv_sys::Error::Unsupported { .. }) => all(),
        other => other,
    }
}

impl OfficialStore for SysStore {
    fn enable_key_expire(&mut self, default_secs: u32) -> Result<bool> {
        self.call(|i| i.enable_key_expire(default_secs))
    }

    fn set(&mut self, key: &[u8], value: &Value, expire: Option<u32>) -> Result<bool> {
        let i = self.inst()?;
        let r = match value {
            Value::Bool(v) => i.set_bool(key, *v, expire),
            Value::I32(v) => i.set_i32(key, *v, expire),
            Value::U32(v) => i.set_u32(key, *v, expire),
            Value::I64(v) => i.set_i64(key, *v, expire),
            Value::U64(v) => i.set_u64(key, *v, expire),
            Value::F32(v) => i.set_f32(key, *v, expire),
            Value::F64(v) => i.set_f64(key, *v, expire),
            Value::String(v) => i.set_string(key, v.as_bytes(), expire),
            Value::Bytes(v) => i.set_bytes(key, v, expire),
            Value::Strings(v) => i.set_string_vec(key, v, expire),
            Value::ByteStrings(v) => i.set_string_vec(key, v, expire),
            Value::VecI32(v) => i.set_vec_i32(key, v, expire),
            Value::VecU32(v) => i.set_vec_u32(key, v, expire),
            Value::VecI64(v) => i.set_vec_i64(key, v, expire),
            Value::VecU64(v) => i.set_vec_u64(key, v, expire),
            Value::VecF32(v) => i.set_vec_f32(key, v, expire),
            Value::VecF64(v) => i.set_vec_f64(key, v, expire),
            Value::VecBool(v) => i.set_vec_bool(key, v, expire),
        };
        r.map_err(|e| self.err(e))
    }

    fn remove(&mut self, key: &[u8]) -> Result<()> {
        self.call(|i| i.remove(key).map(|_| ()))
    }

    fn clear_all(&mut self) -> Result<()> {
        self.call(|i| i.clear_all())
    }

    fn remove_keys(&mut self, keys: &[&[u8]]) -> Result<()> {
        self.call(|i| i.remove_keys(keys))
    }

    fn clear_all_keep_space(&mut self) -> Result<bool> {
        let i = self.inst()?;
        match i.clear_all_keep_space() {
            Ok(()) => Ok(true),
            Err(mmkv_sys::Error::Unsupported { .. }) => Ok(false),
            Err(e) => Err(self.err(e)),
        }
    }

    fn disable_key_expire(&mut self) -> Result<bool> {
        self.call(|i| i.disable_key_expire())
    }

    fn rekey(&mut self, key: Option<&[u8]>, aes256: bool) -> Result<Option<bool>> {
        let i = self.inst()?;
        match i.rekey(key.unwrap_or(&[]), aes256) {
            Ok(b) => Ok(Some(b)),
            Err(mmkv_sys::Error::Unsupported { .. }) => Ok(None),
            Err(e) => Err(self.err(e)),
        }
    }

    fn trim(&mut self) -> Result<()> {
        self.call(|i| i.trim())
    }

    fn sync(&mut self) -> Result<()> {
        self.call(|i| i.sync())
    }

    fn sync_async(&mut self) -> Result<()> {
        self.call(|i| i.sync_async())
    }

    fn clear_memory_cache(&mut self) -> Result<()> {
        self.call(|i| i.clear_memory_cache())
    }

    fn lock(&mut self, call: LockCall) -> Result<bool> {
        self.call(|i| match call {
            LockCall::Lock => i.lock().map(|()| true),
            LockCall::Unlock => i.unlock().map(|()| true),
            LockCall::TryLock => i.try_lock(),
        })
    }

    fn compare_before_set(&mut self, enable: bool) -> Result<Option<bool>> {
        self.call(|i| supported(i.compare_before_set(enable)))
    }

    fn import_from(
        &mut self,
        dir: &Path,
        id: &str,
        entries: &[(&[u8], &Value)],
    ) -> Result<Option<u64>> {
        if !self.official.capabilities().import_from {
            return Ok(None);
        }
        let inst = self
            .official
            .open(dir, id, Mode::Single, None, false)
            .map_err(|e| self.err(e))?;
        let mut src = SysStore {
            official: self.official.clone(),
            tag: self.tag.clone(),
            inst: Some(inst),
        };
        for (key, value) in entries {
            src.set(key, value, None)?;
        }
        let n = {
            let src_inst = src.inst()?;
            self.call(|i| i.import_from(src_inst))?
        };
        src.close()?;
        Ok(Some(n))
    }

    /// Official getters. `getString` / `getVector<std::string>` may return bytes that are not
    /// UTF-8 (a C++ string holds any bytes); the reader's string getters are UTF-8-only by
    /// design, so such results are reported as `None` (the raw bytes are still compared
    /// through `getBytes`, which decodes the same length-prefixed payload).
    fn get(&mut self, key: &[u8], ty: ValueType) -> Result<Option<Value>> {
        let i = self.inst()?;
        let r = match ty {
            ValueType::Bool => i.get_bool(key).map(|v| v.map(Value::Bool)),
            ValueType::I32 => i.get_i32(key).map(|v| v.map(Value::I32)),
            ValueType::U32 => i.get_u32(key).map(|v| v.map(Value::U32)),
            ValueType::I64 => i.get_i64(key).map(|v| v.map(Value::I64)),
            ValueType::U64 => i.get_u64(key).map(|v| v.map(Value::U64)),
            ValueType::F32 => i.get_f32(key).map(|v| v.map(Value::F32)),
            ValueType::F64 => i.get_f64(key).map(|v| v.map(Value::F64)),
            ValueType::String => i
                .get_string(key)
                .map(|v| v.and_then(utf8).map(Value::String)),
            ValueType::Bytes => i.get_bytes(key).map(|v| v.map(Value::Bytes)),
            ValueType::Strings => i.get_string_vec(key).map(|v| {
                v.and_then(|items| items.into_iter().map(utf8).collect::<Option<Vec<_>>>())
                    .map(Value::Strings)
            }),
            ValueType::VecI32 => i.get_vec_i32(key).map(|v| v.map(Value::VecI32)),
            ValueType::VecU32 => i.get_vec_u32(key).map(|v| v.map(Value::VecU32)),
            ValueType::VecI64 => i.get_vec_i64(key).map(|v| v.map(Value::VecI64)),
            ValueType::VecU64 => i.get_vec_u64(key).map(|v| v.map(Value::VecU64)),
            ValueType::VecF32 => i.get_vec_f32(key).map(|v| v.map(Value::VecF32)),
            ValueType::VecF64 => i.get_vec_f64(key).map(|v| v.map(Value::VecF64)),
            ValueType::VecBool => i.get_vec_bool(key).map(|v| v.map(Value::VecBool)),
        };
        r.map_err(|e| self.err(e))
    }

    fn get_bytes_vec(&mut self, key: &[u8]) -> Result<Option<Vec<Vec<u8>>>> {
        self.call(|i| i.get_string_vec(key))
    }

    fn contains(&mut self, key: &[u8]) -> Result<bool> {
        self.call(|i| i.contains(key))
    }

    fn all_keys(&mut self, filter_expire: bool) -> Result<Vec<Vec<u8>>> {
        let i = self.inst()?;
        filtered_or_all(filter_expire, || i.all_keys_filtered(), || i.all_keys())
            .map_err(|e| self.err(e))
    }

    fn count(&mut self, filter_expire: bool) -> Result<usize> {
        let i = self.inst()?;
        filtered_or_all(filter_expire, || i.count_filtered(), || i.count())
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            .map_err(|e| self.err(e))
    }

    fn close(&mut self) -> Result<()> {
        match self.inst.take() {
            Some(i) => i.close().map_err(|e| self.err(e)),
            None => Ok(()),
        }
    }
}
