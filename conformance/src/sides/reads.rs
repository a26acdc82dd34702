//! What one side (the official library or the reader) read from a store: its visible keys and,
//! for every key, the result of every getter. Serialized on one line for the child-process
//! protocol with an exact encoding (floats by bits, NaN payloads included).

use std::collections::BTreeMap;
use std::path::Path;

use mmkv_sys::ErrorStrategy;

use crate::vocab::kind::{Features, StoreKind};
use crate::vocab::value::{hex_bytes, Value, ValueType};
use crate::vocab::STORE_ID;

/// What the official library did with one damaged state and one strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OfficialOutcome {
    /// It opened the store and read these keys and values.
    Read(Reads),
    /// `mmkvWithID` failed or a call threw (message).
    Failed(String),
    /// The child died (by signal, or exited abnormally) before reporting (description).
    Crashed(String),
    /// The child did not finish within [`child_timeout`](crate::writer::child::child_timeout).
    Hung,
}

/// The reader's side of a state: its reads, or the typed error it refused the store with.
pub type ReaderOutcome = std::result::Result<Reads, String>;

/// A reader under test: reads the store in a folder as `kind` with the getters of `features`
/// and the given error strategy.
pub type ReaderFn = fn(&Path, StoreKind, &Features, ErrorStrategy, u64) -> ReaderOutcome;

/// Which reader path is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReaderPath {
    /// `mmkv_reader::Store::open` (`Options::recover` for `OnErrorRecover`).
    Store,
    /// What `mmkv dump` shows (`mmkv_inspect::analysis::Analysis::open`, `--recover`).
    Dump,
}

impl ReaderPath {
    /// Name in reports.
    pub fn name(self) -> &'static str {
        match self {
            ReaderPath::Store => "store",
            ReaderPath::Dump => "dump",
        }
    }
}

/// The reader on the store in `dir`: `Store::open` (with `Options::recover` for
/// `OnErrorRecover`, on pages of `page` bytes) and every getter of every key.
pub fn read_reader(
    dir: &Path,
    kind: StoreKind,
    features: &Features,
    strategy: ErrorStrategy,
    page: u64,
) -> ReaderOutcome {
    open_store(dir, kind, strategy, page)
        .map(|s| Reads::of_snapshot(&s.snapshot(), features))
        .map_err(|e| e.to_string())
}

/// `Store::open` on the store in `dir` as `kind`, with `Options::recover` for
/// `OnErrorRecover`, on pages of `page` bytes: the page size the official library wrote and
/// read the store with (a state written at 16 KiB is read as a 16 KiB machine reads it).
pub fn open_store(
    dir: &Path,
    kind: StoreKind,
    strategy: ErrorStrategy,
    page: u64,
) -> mmkv_reader::Result<mmkv_reader::Store> {
    let mut opts = mmkv_reader::Options::new()
        .page_size(page)
        .aes256(kind.aes256())
        .recover(strategy == ErrorStrategy::Recover);
    if let Some(key) = kind.crypt_key() {
        opts = opts.crypt_key(key);
    }
    mmkv_reader::Store::open(dir.join(STORE_ID), opts)
}

/// What `mmkv dump` (with `--recover` for `OnErrorRecover`) shows of the store in `dir`: its
/// live records, decoded with every getter; its refusal (discarded, unreadable) as an error.
pub fn read_dump(
    dir: &Path,
    kind: StoreKind,
    features: &Features,
    strategy: ErrorStrategy,
    page: u64,
) -> ReaderOutcome {
    let crypt = mmkv_inspect::analysis::CryptOpts {
        key: kind.crypt_key().map(|k| k.to_vec()),
        aes256: kind.aes256(),
        recover: strategy == ErrorStrategy::Recover,
        // `mmkv dump --page-size PAGE`: the writer's page, which `--page-size auto` (the
        // default) takes from the `.crc` only while that file is whole
        page: mmkv_reader::PageSizeChoice::Given(page),
    };
    let now = crate::vocab::clock::official_now_secs();
    let a = mmkv_inspect::analysis::Analysis::open(&dir.join(STORE_ID), &crypt, now)
        .map_err(|e| e.to_string())?;
    let live = a.live();
    Ok(Reads::of_payloads(
        live.iter()
            .map(|r| (r.key.as_slice(), r.payload.as_slice())),
        features,
    ))
}

/// Visible keys and, per key, one read per getter of [`Reads::getters`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reads {
    /// The getter types, in the order of every key's reads.
    pub getters: Vec<ValueType>,
    /// Key -> one read per getter.
    pub keys: BTreeMap<Vec<u8>, Vec<Option<Value>>>,
}

impl Reads {
    /// Number of visible keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when no key is visible.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The reads of a reader snapshot, with the getters of a version with `features`.
    pub fn of_snapshot(snap: &mmkv_reader::Snapshot, features: &Features) -> Reads {
        let getters = features.getters();
        let keys = snap
            .keys()
            .map(|k| {
                let reads = getters
                    .iter()
                    .map(|&t| crate::sides::reader::read_snapshot(snap, k, t))
                    .collect();
                (k.to_vec(), reads)
            })
            .collect();
        Reads { getters, keys }
    }

    /// The reads of `(key, payload)` pairs (payloads without their expire suffix), decoded
    /// with the reader's getter functions (`mmkv_reader::decode`), as `mmkv dump` sees them.
    pub fn of_payloads<'a>(
        entries: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
        features: &Features,
    ) -> Reads {
        let getters = features.getters();
        let keys = entries
            .into_iter()
            .map(|(k, p)| {
                (
                    k.to_vec(),
                    getters.iter().map(|&t| read_payload(p, t)).collect(),
                )
            })
            .collect();
        Reads { getters, keys }
    }

    /// One line: `getter-indices;key=read,read,...;...` with hex fields, `-` for "no value".
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let idx: Vec<String> = self
            .getters
            .iter()
            .map(|t| type_index(*t).to_string())
            .collect();
        out.push_str(&idx.join(","));
        for (k, reads) in &self.keys {
            out.push(';');
            out.push_str(&hex_bytes::encode(k));
            out.push('=');
            let fields: Vec<String> = reads
                .iter()
                .map(|r| match r {
                    None => "-".to_string(),
                    Some(v) => hex_bytes::encode(&encode_value(v)),
                })
                .collect();
            out.push_str(&fields.join(","));
        }
        out
    }

    /// Parses [`Reads::encode`]'s output.
    pub fn decode(line: &str) -> Option<Reads> {
        let mut parts = line.trim_end().split(';');
        let head = parts.next()?;
        let getters = if head.is_empty() {
            Vec::new()
        } else {
            head.split(',')
                .map(|i| ValueType::ALL.get(i.parse::<usize>().ok()?).copied())
                .collect::<Option<Vec<_>>>()?
        };
        let mut keys = BTreeMap::new();
        for part in parts {
            let (k, rest) = part.split_once('=')?;
            let reads = rest
                .split(',')
                .zip(&getters)
                .map(|(f, &ty)| {
                    if f == "-" {
                        Some(None)
                    } else {
                        decode_value(ty, &hex_bytes::decode(f)?).map(Some)
                    }
                })
                .collect::<Option<Vec<_>>>()?;
            if reads.len() != getters.len() {
                return None;
            }
            keys.insert(hex_bytes::decode(k)?, reads);
        }
        Some(Reads { getters, keys })
    }
}

/// What the getter of type `ty` returns for a payload (the reader's decode functions).
pub fn read_payload(p: &[u8], ty: ValueType) -> Option<Value> {
    mmkv_reader::decode::decode(ty, p).map(Value::from)
}

fn type_index(t: ValueType) -> usize {
    ValueType::ALL.iter().position(|&x| x == t).unwrap_or(0)
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

/// Exact bytes of a value's content (its type is known from the getter).
fn encode_value(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    match v {
        Value::Bool(b) => out.push(u8::from(*b)),
        Value::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F32(x) => out.extend_from_slice(&x.to_bits().to_le_bytes()),
        Value::F64(x) => out.extend_from_slice(&x.to_bits().to_le_bytes()),
        Value::String(s) => out.extend_from_slice(s.as_bytes()),
        Value::Bytes(b) => out.extend_from_slice(b),
        Value::Strings(items) => {
            for s in items {
                put_len(&mut out, s.len());
                out.extend_from_slice(s.as_bytes());
            }
        }
        Value::ByteStrings(items) => {
            for s in items {
                put_len(&mut out, s.len());
                out.extend_from_slice(s);
            }
        }
        Value::VecBool(xs) => out.extend(xs.iter().map(|&x| u8::from(x))),
        Value::VecI32(xs) => xs.iter().for_each(|x| out.extend(x.to_le_bytes())),
        Value::VecU32(xs) => xs.iter().for_each(|x| out.extend(x.to_le_bytes())),
        Value::VecI64(xs) => xs.iter().for_each(|x| out.extend(x.to_le_bytes())),
        Value::VecU64(xs) => xs.iter().for_each(|x| out.extend(x.to_le_bytes())),
        Value::VecF32(xs) => xs
            .iter()
            .for_each(|x| out.extend(x.to_bits().to_le_bytes())),
        Value::VecF64(xs) => xs
            .iter()
            .for_each(|x| out.extend(x.to_bits().to_le_bytes())),
    }
    out
}

/// `b` as little-endian items of `N` bytes each, converted by `from`; `None` unless `b` is a
/// whole number of items.
fn le_items<const N: usize, T>(b: &[u8], from: fn([u8; N]) -> T) -> Option<Vec<T>> {
    if !b.len().is_multiple_of(N) {
        return None;
    }
    Some(
        b.chunks_exact(N)
            .map(|c| {
                let mut a = [0u8; N];
                a.copy_from_slice(c);
                from(a)
            })
            .collect(),
    )
}

fn decode_value(ty: ValueType, b: &[u8]) -> Option<Value> {
    let one = |n: usize| (b.len() == n).then_some(b);
    Some(match ty {
        ValueType::Bool => Value::Bool(one(1)?[0] != 0),
        ValueType::I32 => Value::I32(le_items(one(4)?, i32::from_le_bytes)?[0]),
        ValueType::U32 => Value::U32(le_items(one(4)?, u32::from_le_bytes)?[0]),
        ValueType::I64 => Value::I64(le_items(one(8)?, i64::from_le_bytes)?[0]),
        ValueType::U64 => Value::U64(le_items(one(8)?, u64::from_le_bytes)?[0]),
        ValueType::F32 => Value::F32(le_items(one(4)?, f32::from_le_bytes)?[0]),
        ValueType::F64 => Value::F64(le_items(one(8)?, f64::from_le_bytes)?[0]),
        ValueType::String => Value::String(String::from_utf8(b.to_vec()).ok()?),
        ValueType::Bytes => Value::Bytes(b.to_vec()),
        ValueType::Strings => {
            let mut items = Vec::new();
            let mut at = 0usize;
            while at < b.len() {
                let len = u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize;
                at += 4;
                let s = b.get(at..at.checked_add(len)?)?;
                items.push(String::from_utf8(s.to_vec()).ok()?);
                at += len;
            }
            Value::Strings(items)
        }
        ValueType::VecBool => Value::VecBool(
            b.iter()
                .map(|&x| match x {
                    0 => Some(false),
                    1 => Some(true),
                    _ => None,
                })
                .collect::<Option<_>>()?,
        ),
        ValueType::VecI32 => Value::VecI32(le_items(b, i32::from_le_bytes)?),
        ValueType::VecU32 => Value::VecU32(le_items(b, u32::from_le_bytes)?),
        ValueType::VecI64 => Value::VecI64(le_items(b, i64::from_le_bytes)?),
        ValueType::VecU64 => Value::VecU64(le_items(b, u64::from_le_bytes)?),
        ValueType::VecF32 => Value::VecF32(le_items(b, f32::from_le_bytes)?),
        ValueType::VecF64 => Value::VecF64(le_items(b, f64::from_le_bytes)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_nan_payloads_and_empty_values() {
        let getters = vec![
            ValueType::F32,
            ValueType::F64,
            ValueType::Strings,
            ValueType::Bytes,
            ValueType::VecF64,
            ValueType::Bool,
        ];
        let mut keys = BTreeMap::new();
        keys.insert(
            b"k\xff;=,".to_vec(),
            vec![
                Some(Value::F32(f32::from_bits(0x7fc0_1234))),
                Some(Value::F64(-0.0)),
                Some(Value::Strings(vec![String::new(), "é".into()])),
                Some(Value::Bytes(vec![])),
                Some(Value::VecF64(vec![f64::from_bits(0x7ff8_0000_0000_0001)])),
                None,
            ],
        );
        keys.insert(Vec::new(), vec![None; 6]);
        let reads = Reads { getters, keys };
        let back = Reads::decode(&reads.encode()).unwrap();
        assert_eq!(back, reads);
        let Some(Value::F32(x)) = &back.keys[&b"k\xff;=,".to_vec()][0] else {
            panic!()
        };
        assert_eq!(x.to_bits(), 0x7fc0_1234);
        assert_eq!(Reads::decode("0;zz=1"), None);
    }
}
