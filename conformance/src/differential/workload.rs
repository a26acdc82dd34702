//! Workloads: sequences of operations performed through the official library, their YAML form
//! (saved repros) and the proptest strategies that generate them.
//!
//! Expire durations are chosen so that the official library and the reader agree on "now"
//! without a fake clock: either far in the future ([`FAR_EXPIRE`] ...), never (`0`),
//! [`PAST_EXPIRE`] (already in the past through the `u32` wrap-around of the versions without
//! the `saturating_expire` feature, `u32::MAX` in those with it: see [`expire_time`]), or
//! [`SHORT_EXPIRE`] (1 s), which the runner makes certainly expired by sleeping before it
//! compares (such sets are rare, see [`GenConfig::short_expire_weight`]).

use serde::{Deserialize, Serialize};

use proptest::prelude::*;

pub use crate::vocab::kind::{Features, ModeKind, StoreKind};
pub use crate::vocab::value::{Value, ValueType};

/// A 1-second duration: expired once the runner has slept past it.
pub const SHORT_EXPIRE: u32 = 1;
/// A duration whose sum with the current time overflows `u32`: in the versions without the
/// `saturating_expire` feature the sum wraps and the expire time lands ~11 days in the past,
/// so the key is already expired without sleeping; in those with it (v2.4.1+, v1.3.17) the sum
/// saturates at `u32::MAX` and the key lasts. Either way both sides see the same expire time
/// ([`expire_time`]).
pub const PAST_EXPIRE: u32 = 4_294_000_000;
/// About one year.
pub const YEAR_EXPIRE: u32 = 365 * 24 * 3600;

/// The expire time the official library records for `duration` (not 0) set at `now` (seconds
/// since the epoch): `now + duration` in `u32`, saturating at `u32::MAX` with the
/// `saturating_expire` feature ([`Features::saturating_expire`]), wrapping around without it.
pub fn expire_time(now: u64, duration: u32, saturating: bool) -> u32 {
    let sum = now + u64::from(duration);
    if saturating {
        u32::try_from(sum).unwrap_or(u32::MAX)
    } else {
        sum as u32 // the official u32 addition wraps
    }
}
/// About 19 years (also used by the corpus).
pub const FAR_EXPIRE: u32 = 600_000_000;
/// About 63 years (also used by the corpus); `now + this` still fits in a u32 until ~2074.
pub const VERY_FAR_EXPIRE: u32 = 2_000_000_000;

/// A key: any bytes. Serialized as a YAML string when it is UTF-8, else as `{hex: ...}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(pub Vec<u8>);

impl Key {
    /// The key's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl From<&str> for Key {
    fn from(s: &str) -> Key {
        Key(s.as_bytes().to_vec())
    }
}

impl From<String> for Key {
    fn from(s: String) -> Key {
        Key(s.into_bytes())
    }
}

impl From<Vec<u8>> for Key {
    fn from(b: Vec<u8>) -> Key {
        Key(b)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum KeyRepr {
    Text(String),
    Hex { hex: String },
}

impl Serialize for Key {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(text) => KeyRepr::Text(text.to_string()),
            Err(_) => KeyRepr::Hex {
                hex: crate::vocab::value::hex_bytes::encode(&self.0),
            },
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        match KeyRepr::deserialize(deserializer)? {
            KeyRepr::Text(t) => Ok(Key(t.into_bytes())),
            KeyRepr::Hex { hex } => crate::vocab::value::hex_bytes::decode(&hex)
                .map(Key)
                .ok_or_else(|| serde::de::Error::custom("invalid hex key")),
        }
    }
}

/// The crypt configuration a `reKey` switches to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Crypt {
    /// The new key (`None`: decrypt the store, `reKey("")`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<Key>,
    /// The key is an AES-256 key (v2.3.0+).
    #[serde(default)]
    pub aes256: bool,
}

/// One operation on an official store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// `set(value, key)` or, with `expire`, `set(value, key, expireDuration)`.
    Set {
        /// The key (any bytes; may be empty, long, non-UTF-8).
        key: Key,
        /// The typed value.
        value: Value,
        /// An explicit expire duration in seconds (0 = never); `None` uses the store default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expire: Option<u32>,
    },
    /// `removeValueForKey(key)`.
    Remove {
        /// The key.
        key: Key,
    },
    /// `removeValuesForKeys(keys)`.
    RemoveKeys {
        /// The keys.
        keys: Vec<Key>,
    },
    /// `clearAll()`.
    ClearAll,
    /// `clearAll(true)` (keep the file's size; v1.3.2+, skipped before).
    ClearAllKeepSpace,
    /// `trim()`.
    Trim,
    /// `close()` and open again with the current configuration.
    Reopen,
    /// Sleep until every short expiration set so far has passed (then later ops see them expired).
    WaitExpiry,
    /// `enableAutoKeyExpire(default_expire)` on the (possibly populated) store (v1.3.0+).
    EnableExpire {
        /// The default duration (0 = keys without a duration never expire).
        default_expire: u32,
    },
    /// `disableAutoKeyExpire()` (v1.3.0+).
    DisableExpire,
    /// `reKey(key[, aes256])`: encrypt, decrypt or change the key.
    Rekey(Crypt),
    /// `sync(MMKV_SYNC)`, or with `asynchronous` `sync(MMKV_ASYNC)`.
    Sync {
        /// `MMKV_ASYNC` (msync without waiting).
        #[serde(default)]
        asynchronous: bool,
    },
    /// `clearMemoryCache()`: the next access loads the files again.
    ClearMemoryCache,
    /// `lock()`: the store's inter-process lock (held until `Unlock`; the runner releases
    /// what is still held before it closes the instance).
    Lock,
    /// `try_lock()` (held like `Lock` when it succeeds).
    TryLock,
    /// `unlock()` of a held lock (skipped when none is held).
    Unlock,
    /// `enableCompareBeforeSet()` or, with `enable: false`, `disableCompareBeforeSet()`
    /// (v1.3.2+; both refused while expiration or encryption is on). Held across reopens.
    CompareBeforeSet {
        /// Enable (else disable).
        enable: bool,
    },
    /// `backupOneToDirectory` of the store into the run's backup folder (v1.2.11+); the
    /// reader is then judged on the backup copy as on the store.
    Backup,
    /// `restoreOneFromDirectory` of the last backup over the store (v1.2.11+). When there is
    /// none, or the store's key or expiration changed since, from an empty folder instead
    /// (the store must stay as it is).
    Restore,
    /// `isFileValid(id, dir)`: the official verdict on the files, judged against the reader's.
    IsFileValid,
    /// Close, `removeStorage(id, dir)` (v1.3.3+), judge "no store", then open again (empty).
    RemoveStorage,
    /// `importFrom(src)` (v2.2.1+): `src` is a new plaintext store given `entries` first.
    ImportFrom {
        /// The source store's keys and values.
        entries: Vec<Entry>,
    },
}

/// One key and value (of an `ImportFrom` source).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The key.
    pub key: Key,
    /// The value.
    pub value: Value,
}

impl Op {
    /// The keys this operation touches.
    pub fn keys(&self) -> Vec<&Key> {
        match self {
            Op::Set { key, .. } | Op::Remove { key } => vec![key],
            Op::RemoveKeys { keys } => keys.iter().collect(),
            Op::ImportFrom { entries } => entries.iter().map(|e| &e.key).collect(),
            _ => Vec::new(),
        }
    }
}

/// A generated (or hand-written) workload for one store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    /// Default expire duration passed to `enableAutoKeyExpire` for expiring kinds (0 = never).
    #[serde(default)]
    pub default_expire: u32,
    /// Compare the long-lived reader with the official getters after every this many
    /// operations (`None`: [`DEFAULT_CHECK_EVERY`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_every: Option<usize>,
    /// The operations, in order.
    pub ops: Vec<Op>,
    /// The store lives under another root, opened through `MMKV::nameSpace(root)` by every
    /// version that has name spaces (v2.1.0+; the others open the same folder as usual).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub name_space: bool,
}

/// Operations per comparison batch when a workload does not say.
pub const DEFAULT_CHECK_EVERY: usize = 4;

impl Workload {
    /// A workload with the default expire duration and batch size.
    pub fn new(ops: Vec<Op>) -> Workload {
        Workload {
            default_expire: 0,
            check_every: None,
            ops,
            name_space: false,
        }
    }
}

/// Every key `ops` touch, in first-touch order, without duplicates.
pub fn touched_keys<'a>(ops: impl IntoIterator<Item = &'a Op>) -> Vec<Key> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for op in ops {
        for k in op.keys() {
            if seen.insert(k.clone()) {
                out.push(k.clone());
            }
        }
    }
    out
}

/// A continuation of a workload by another version (version migration): the store the
/// previous version left is opened by `tag` and `ops` run on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Continuation {
    /// The version that continues.
    pub tag: String,
    /// Its operations.
    pub ops: Vec<Op>,
}

/// A saved reproduction: which version and configuration ran which workload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repro {
    /// Upstream tag (`v2.0.0`).
    pub tag: String,
    /// Store configuration.
    pub kind: StoreKind,
    /// The workload.
    pub workload: Workload,
    /// Versions that continue the store after `tag` (version migration), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then: Vec<Continuation>,
    /// The official clock's second when the saved run began. The official library seeds its
    /// AES IV from `time()`, so an encrypted store's bytes (and an upstream bug that depends
    /// on them) come back only from that second: [`run_repro`] then runs on the test clock
    /// from it. `None`: the clock in use.
    ///
    /// [`run_repro`]: crate::differential::runner::run_repro
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<u32>,
}

impl Repro {
    /// YAML text of this repro.
    pub fn to_yaml(&self) -> String {
        // Serializing plain data structures to YAML cannot fail.
        serde_norway::to_string(self).unwrap_or_else(|e| format!("# unserializable: {e}\n"))
    }

    /// Parses YAML text.
    pub fn from_yaml(text: &str) -> Result<Repro, serde_norway::Error> {
        serde_norway::from_str(text)
    }
}

/// Knobs of the generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GenConfig {
    /// Maximum number of operations in a workload (at least 1 is generated).
    pub max_ops: usize,
    /// Relative weight (out of ~100) of [`SHORT_EXPIRE`] among explicit expire choices.
    /// Workloads using it sleep ~1 s before comparing, so it stays small by default.
    pub short_expire_weight: u32,
    /// Relative weight (out of ~100) of [`PAST_EXPIRE`] among explicit expire choices.
    pub past_expire_weight: u32,
    /// Relative weight (out of ~100) of big values (1-8 KB) among set values.
    pub big_value_weight: u32,
    /// Generate the file-changing calls too (sync, clearMemoryCache, locks, compare-before-set,
    /// backup/restore, isFileValid, removeStorage, importFrom), where the version has them.
    #[serde(default = "default_on")]
    pub file_api: bool,
    /// Run half the workloads of a version with name spaces in one ([`Workload::name_space`]).
    #[serde(default = "default_on")]
    pub name_space: bool,
}

/// The default of the knobs that are on unless turned off (`file_api`, `name_space`).
fn default_on() -> bool {
    true
}

impl Default for GenConfig {
    fn default() -> GenConfig {
        GenConfig {
            max_ops: 40,
            short_expire_weight: 1,
            past_expire_weight: 8,
            big_value_weight: 8,
            file_api: true,
            name_space: true,
        }
    }
}

/// The key pool: small, so that overwrites and removes hit; includes non-ASCII and
/// 100-300-byte keys, and keys as bytes: empty (the official library refuses it), a NUL
/// inside, not UTF-8, and a 3,000-byte key. Shrinking moves towards the first (shortest) key.
pub fn key_pool() -> Vec<Key> {
    vec![
        Key::from("k0"),
        Key::from("k1"),
        Key::from("k2"),
        Key::from("k3"),
        Key::from("键"),
        Key::from("🔑-emoji"),
        Key::from("clé é\u{1}\""),
        Key::from(format!("long-{}", "x".repeat(115))),
        Key::from(format!("长键-{}", "长".repeat(90))),
        Key::from(format!("edge-{}", "k".repeat(295))),
        Key(Vec::new()),
        Key(b"nul\0inside".to_vec()),
        Key(vec![0xff, 0xfe, b'k', 0x80, 0xc3]),
        Key(vec![b'L'; 3000]),
    ]
}

fn small_string() -> impl Strategy<Value = String> {
    "[a-z0-9 é€中🔑\u{0}\u{1}\"\\\\\n\t]{0,16}"
}

fn big_string() -> BoxedStrategy<String> {
    (
        1000usize..6000,
        prop::sample::select(vec!["a", "中", "🔑", "ab\u{0}"]),
    )
        .prop_map(|(n, unit)| unit.repeat(n / unit.len()))
        .boxed()
}

fn big_bytes() -> BoxedStrategy<Vec<u8>> {
    (1000usize..8000, any::<u8>())
        .prop_map(|(n, seed)| (0..n).map(|i| seed.wrapping_add((i % 251) as u8)).collect())
        .boxed()
}

/// NaN bit patterns: quiet and signalling, positive and negative, with payload bits.
pub const F32_NAN_BITS: [u32; 6] = [
    0x7fc0_0000,
    0xffc0_0000,
    0x7fc1_2345,
    0x7f80_0001,
    0x7fa5_5a5a,
    0xff80_0f0f,
];
/// NaN bit patterns for doubles (as [`F32_NAN_BITS`]).
pub const F64_NAN_BITS: [u64; 6] = [
    0x7ff8_0000_0000_0000,
    0xfff8_0000_0000_0000,
    0x7ff8_dead_beef_0001,
    0x7ff0_0000_0000_0001,
    0x7ff5_5555_aaaa_5555,
    0xfff0_0f0f_0f0f_0f0f,
];

fn f32_any() -> impl Strategy<Value = f32> {
    use prop::num::f32;
    prop_oneof![
        4 => f32::POSITIVE | f32::NEGATIVE | f32::NORMAL | f32::SUBNORMAL | f32::ZERO | f32::INFINITE,
        1 => prop::sample::select(vec![0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE, f32::MAX, 1.0e-45]),
        1 => prop::sample::select(F32_NAN_BITS.to_vec()).prop_map(f32::from_bits),
    ]
}

fn f64_any() -> impl Strategy<Value = f64> {
    use prop::num::f64;
    prop_oneof![
        4 => f64::POSITIVE | f64::NEGATIVE | f64::NORMAL | f64::SUBNORMAL | f64::ZERO | f64::INFINITE,
        1 => prop::sample::select(vec![0.0f64, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, f64::MAX, 5.0e-324]),
        1 => prop::sample::select(F64_NAN_BITS.to_vec()).prop_map(f64::from_bits),
    ]
}

fn i32_any() -> impl Strategy<Value = i32> {
    prop_oneof![
        3 => any::<i32>(),
        2 => prop::sample::select(vec![0, -1, 1, i32::MIN, i32::MAX, 127, 128, -128]),
    ]
}

fn u32_any() -> impl Strategy<Value = u32> {
    prop_oneof![
        3 => any::<u32>(),
        2 => prop::sample::select(vec![0, 1, u32::MAX, 127, 128, 1 << 31]),
    ]
}

fn i64_any() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => any::<i64>(),
        2 => prop::sample::select(vec![0, -1, 1, i64::MIN, i64::MAX, i64::from(i32::MIN) - 1, 1 << 35]),
    ]
}

fn u64_any() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => any::<u64>(),
        2 => prop::sample::select(vec![0, 1, u64::MAX, u64::from(u32::MAX) + 1, 1 << 63]),
    ]
}

/// A `std::vector<std::string>` with at least one item that is not UTF-8 (it ends in 0xff),
/// next to UTF-8 ones: the case where only `get_bytes_vec` reads the value.
fn byte_strings(max: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
    let item = prop_oneof![
        small_string().prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(|mut b| {
            b.push(0xff);
            b
        }),
    ];
    (
        prop::collection::vec(item, 0..max),
        prop::collection::vec(any::<u8>(), 0..8),
    )
        .prop_map(|(mut items, mut bad)| {
            bad.push(0xff);
            items.push(bad);
            items
        })
}

/// Items of a generated vector: fewer than this.
const VEC_MAX: usize = 6;

/// Vectors of `item`s as `value`.
fn vec<T: std::fmt::Debug + 'static>(
    item: impl Strategy<Value = T> + 'static,
    value: fn(Vec<T>) -> Value,
) -> BoxedStrategy<Value> {
    prop::collection::vec(item, 0..VEC_MAX)
        .prop_map(value)
        .boxed()
}

/// Values of every type the version supports (typed vectors only with `typed_vectors`).
pub fn value_strategy(features: Features, cfg: GenConfig) -> BoxedStrategy<Value> {
    let big = cfg.big_value_weight;
    let mut choices: Vec<(u32, BoxedStrategy<Value>)> = vec![
        (6, any::<bool>().prop_map(Value::Bool).boxed()),
        (8, i32_any().prop_map(Value::I32).boxed()),
        (6, u32_any().prop_map(Value::U32).boxed()),
        (6, i64_any().prop_map(Value::I64).boxed()),
        (6, u64_any().prop_map(Value::U64).boxed()),
        (5, f32_any().prop_map(Value::F32).boxed()),
        (5, f64_any().prop_map(Value::F64).boxed()),
        (8, small_string().prop_map(Value::String).boxed()),
        (
            6,
            prop::collection::vec(any::<u8>(), 0..24)
                .prop_map(Value::Bytes)
                .boxed(),
        ),
        (5, vec(small_string(), Value::Strings)),
        (
            2,
            byte_strings(VEC_MAX).prop_map(Value::ByteStrings).boxed(),
        ),
    ];
    if big > 0 {
        choices.push((
            big.div_ceil(2),
            big_string().prop_map(Value::String).boxed(),
        ));
        choices.push((big.div_ceil(2), big_bytes().prop_map(Value::Bytes).boxed()));
    }
    if features.typed_vectors {
        choices.extend([
            (3, vec(i32_any(), Value::VecI32)),
            (3, vec(u32_any(), Value::VecU32)),
            (3, vec(i64_any(), Value::VecI64)),
            (3, vec(u64_any(), Value::VecU64)),
            (3, vec(f32_any(), Value::VecF32)),
            (3, vec(f64_any(), Value::VecF64)),
            (3, vec(any::<bool>(), Value::VecBool)),
        ]);
        if big > 0 {
            choices.push((
                1,
                (300usize..1200, i64_any())
                    .prop_map(|(n, x)| Value::VecI64(vec![x; n]))
                    .boxed(),
            ));
        }
    }
    prop::strategy::Union::new_weighted(choices).boxed()
}

/// Explicit expire durations for expiring kinds (`None` = the store default).
pub fn expire_strategy(cfg: GenConfig) -> BoxedStrategy<Option<u32>> {
    let mut choices: Vec<(u32, BoxedStrategy<Option<u32>>)> = vec![
        (40, Just(None).boxed()),
        (12, Just(Some(0)).boxed()),
        (
            40,
            prop::sample::select(vec![YEAR_EXPIRE, FAR_EXPIRE, VERY_FAR_EXPIRE])
                .prop_map(Some)
                .boxed(),
        ),
    ];
    if cfg.past_expire_weight > 0 {
        choices.push((cfg.past_expire_weight, Just(Some(PAST_EXPIRE)).boxed()));
    }
    if cfg.short_expire_weight > 0 {
        choices.push((cfg.short_expire_weight, Just(Some(SHORT_EXPIRE)).boxed()));
    }
    prop::strategy::Union::new_weighted(choices).boxed()
}

/// The keys `reKey` switches between (besides the kind's own key, and no key).
pub mod rekeys {
    /// A 16-byte AES-128 key.
    pub const AES128: &[u8] = b"rekeyed-aes-128!";
    /// A 32-byte AES-256 key.
    pub const AES256: &[u8] = b"rekeyed-aes-256-key-of-32-bytes!";
}

fn crypt_strategy(kind: StoreKind, features: Features) -> BoxedStrategy<Crypt> {
    let mut choices = vec![
        Crypt {
            key: None,
            aes256: false,
        },
        Crypt {
            key: Some(Key(rekeys::AES128.to_vec())),
            aes256: false,
        },
    ];
    if let Some(own) = kind.crypt_key() {
        choices.push(Crypt {
            key: Some(Key(own.to_vec())),
            aes256: kind.aes256(),
        });
    }
    if features.aes256 {
        choices.push(Crypt {
            key: Some(Key(rekeys::AES256.to_vec())),
            aes256: true,
        });
    }
    prop::sample::select(choices).boxed()
}

/// One operation for a store of `kind` on a version with `features`.
pub fn op_strategy(kind: StoreKind, features: Features, cfg: GenConfig) -> BoxedStrategy<Op> {
    let key = prop::sample::select(key_pool());
    let expire = if kind.key_expire() {
        expire_strategy(cfg)
    } else {
        Just(None).boxed()
    };
    let set = (key.clone(), value_strategy(features, cfg), expire)
        .prop_map(|(key, value, expire)| Op::Set { key, value, expire });
    let mut choices: Vec<(u32, BoxedStrategy<Op>)> = vec![
        (70, set.boxed()),
        (8, key.clone().prop_map(|key| Op::Remove { key }).boxed()),
        (
            3,
            prop::collection::vec(key, 0..4)
                .prop_map(|keys| Op::RemoveKeys { keys })
                .boxed(),
        ),
        (2, Just(Op::ClearAll).boxed()),
        (1, Just(Op::ClearAllKeepSpace).boxed()),
        (3, Just(Op::Trim).boxed()),
        (5, Just(Op::Reopen).boxed()),
        (
            2,
            crypt_strategy(kind, features).prop_map(Op::Rekey).boxed(),
        ),
    ];
    if features.key_expire {
        choices.push((
            2,
            prop::sample::select(vec![0u32, FAR_EXPIRE, YEAR_EXPIRE])
                .prop_map(|default_expire| Op::EnableExpire { default_expire })
                .boxed(),
        ));
        choices.push((2, Just(Op::DisableExpire).boxed()));
    }
    if kind.key_expire() && cfg.short_expire_weight > 0 {
        choices.push((1, Just(Op::WaitExpiry).boxed()));
    }
    if cfg.file_api {
        choices.extend(file_api_ops(features, cfg));
    }
    prop::strategy::Union::new_weighted(choices).boxed()
}

/// The file-changing calls `features` has, with their weights (out of ~130 for one op).
fn file_api_ops(features: Features, cfg: GenConfig) -> Vec<(u32, BoxedStrategy<Op>)> {
    let mut choices: Vec<(u32, BoxedStrategy<Op>)> = Vec::new();
    choices.extend([
        (
            2,
            any::<bool>()
                .prop_map(|asynchronous| Op::Sync { asynchronous })
                .boxed(),
        ),
        (2, Just(Op::ClearMemoryCache).boxed()),
        (1, Just(Op::Lock).boxed()),
        (1, Just(Op::TryLock).boxed()),
        (2, Just(Op::Unlock).boxed()),
        (1, Just(Op::IsFileValid).boxed()),
    ]);
    if features.compare_before_set {
        choices.push((
            3,
            proptest::bool::weighted(0.8)
                .prop_map(|enable| Op::CompareBeforeSet { enable })
                .boxed(),
        ));
    }
    if features.backup_restore {
        choices.push((2, Just(Op::Backup).boxed()));
        choices.push((2, Just(Op::Restore).boxed()));
    }
    if features.remove_storage {
        choices.push((1, Just(Op::RemoveStorage).boxed()));
    }
    if features.import_from {
        let entry = (
            prop::sample::select(key_pool()),
            value_strategy(features, cfg),
        )
            .prop_map(|(key, value)| Entry { key, value });
        choices.push((
            2,
            prop::collection::vec(entry, 0..4)
                .prop_map(|entries| Op::ImportFrom { entries })
                .boxed(),
        ));
    }
    choices
}

/// Whole workloads for a store of `kind` on a version with `features`.
///
/// Shrinking removes operations, moves keys to the front of the pool and values towards
/// zero/empty, so a failure shrinks to a short workload.
pub fn workload_strategy(
    kind: StoreKind,
    features: Features,
    cfg: GenConfig,
) -> BoxedStrategy<Workload> {
    let default_expire = if kind.key_expire() {
        prop::sample::select(vec![0u32, FAR_EXPIRE]).boxed()
    } else {
        Just(0u32).boxed()
    };
    // Half the workloads of a version with name spaces run in one (shrinking goes to false).
    let name_space = if features.name_space && cfg.name_space {
        prop::bool::ANY.boxed()
    } else {
        Just(false).boxed()
    };
    (
        default_expire,
        prop::collection::vec(op_strategy(kind, features, cfg), 1..=cfg.max_ops.max(1)),
        name_space,
    )
        .prop_map(|(default_expire, ops, name_space)| Workload {
            default_expire,
            check_every: None,
            ops,
            name_space,
        })
        .boxed()
}

/// The "many keys" profile: `n` distinct keys (at least 10,000 in the report) set with
/// values of every type, a fifth of them overwritten with another type, a tenth removed,
/// then a reopen, a trim, more overwrites and a final reopen. Deterministic in `seed`.
pub fn many_keys_workload(kind: StoreKind, features: Features, n: usize, seed: u64) -> Workload {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::new_with_rng(
        proptest::test_runner::Config::default(),
        proptest::test_runner::TestRng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &{
            let mut b = [0u8; 32];
            b[..8].copy_from_slice(&seed.to_le_bytes());
            b
        }),
    );
    let cfg = GenConfig {
        big_value_weight: 1,
        ..GenConfig::default()
    };
    let values = value_strategy(features, cfg);
    let mut value = || {
        values
            .new_tree(&mut runner)
            .map(|t| t.current())
            .unwrap_or(Value::I32(0))
    };
    let key = |i: usize| Key::from(format!("many-{i:05}"));
    let expire = |i: usize| {
        kind.key_expire()
            .then_some(if i.is_multiple_of(3) { 0 } else { FAR_EXPIRE })
    };
    let mut ops = Vec::with_capacity(n * 2);
    for i in 0..n {
        ops.push(Op::Set {
            key: key(i),
            value: value(),
            expire: expire(i),
        });
    }
    for i in (0..n).step_by(5) {
        ops.push(Op::Set {
            key: key(i),
            value: value(),
            expire: expire(i + 1),
        });
    }
    for i in (3..n).step_by(10) {
        ops.push(Op::Remove { key: key(i) });
    }
    ops.push(Op::Reopen);
    ops.push(Op::Trim);
    for i in (1..n).step_by(7) {
        ops.push(Op::Set {
            key: key(i),
            value: value(),
            expire: None,
        });
    }
    ops.push(Op::Reopen);
    Workload {
        default_expire: 0,
        check_every: Some(n.max(1)),
        ops,
        name_space: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    fn all_features() -> Features {
        Features {
            key_expire: true,
            empty_string_expire: true,
            typed_vectors: true,
            aes256: true,
            has_value_flag: true,
            count_filter_expire: true,
            bytes_flag: true,
            saturating_expire: false,
            compare_before_set: true,
            backup_restore: true,
            remove_storage: true,
            import_from: true,
            read_only: true,
            name_space: true,
        }
    }

    #[test]
    fn expire_times_wrap_or_saturate() {
        let now = 1_796_000_000; // 2026-12
        assert_eq!(
            expire_time(now, YEAR_EXPIRE, false),
            1_796_000_000 + YEAR_EXPIRE
        );
        assert_eq!(
            expire_time(now, YEAR_EXPIRE, true),
            1_796_000_000 + YEAR_EXPIRE
        );
        let wrapped = expire_time(now, PAST_EXPIRE, false);
        assert!(u64::from(wrapped) < now && now - u64::from(wrapped) < 30 * 24 * 3600);
        assert_eq!(expire_time(now, PAST_EXPIRE, true), u32::MAX);
    }

    #[test]
    fn yaml_round_trip_of_generated_workloads() {
        let mut runner = TestRunner::deterministic();
        let strategy = workload_strategy(StoreKind::Expire, all_features(), GenConfig::default());
        for _ in 0..64 {
            let workload = strategy.new_tree(&mut runner).unwrap().current();
            let repro = Repro {
                tag: "v2.4.2".into(),
                kind: StoreKind::Expire,
                workload,
                then: Vec::new(),
                clock: Some(1_796_000_000),
            };
            let text = repro.to_yaml();
            let back = Repro::from_yaml(&text).unwrap();
            assert_eq!(back, repro, "{text}");
        }
    }

    #[test]
    fn old_versions_get_no_typed_vectors_and_plain_kinds_no_expire() {
        let mut runner = TestRunner::deterministic();
        let old = Features::from_tag("v1.2.16").unwrap();
        let strategy = workload_strategy(StoreKind::Plain, old, GenConfig::default());
        for _ in 0..64 {
            let w = strategy.new_tree(&mut runner).unwrap().current();
            for op in &w.ops {
                if let Op::Set { value, expire, .. } = op {
                    assert!(!value.value_type().is_typed_vector());
                    assert_eq!(*expire, None);
                }
                assert_ne!(*op, Op::WaitExpiry);
            }
        }
    }

    #[test]
    fn key_pool_has_long_and_non_ascii_keys() {
        let pool = key_pool();
        assert!(pool.iter().any(|k| (100..=300).contains(&k.0.len())));
        assert!(pool.iter().any(|k| !k.0.is_ascii()));
        assert!(pool.iter().any(|k| k.0.is_empty()));
        assert!(pool.iter().any(|k| k.0.contains(&0)));
        assert!(pool.iter().any(|k| std::str::from_utf8(&k.0).is_err()));
        assert!(pool.iter().any(|k| k.0.len() >= 3000));
    }
}
