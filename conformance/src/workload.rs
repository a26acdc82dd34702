//! Workloads: sequences of operations performed through the official library, their YAML form
//! (saved repros) and the proptest strategies that generate them.
//!
//! Expire durations are chosen so that the official library and the reader agree on "now"
//! without a fake clock: either far in the future ([`FAR_EXPIRE`] ...), never (`0`), already
//! in the past ([`PAST_EXPIRE`], through the official `u32` wrap-around), or [`SHORT_EXPIRE`]
//! (1 s), which the runner makes certainly expired by sleeping before it compares (such sets
//! are rare, see [`GenConfig::short_expire_weight`]).

use serde::{Deserialize, Serialize};

use proptest::prelude::*;

pub use crate::kind::{Features, ModeKind, StoreKind};
pub use crate::value::{Value, ValueType};

/// A 1-second duration: expired once the runner has slept past it.
pub const SHORT_EXPIRE: u32 = 1;
/// A duration that wraps around `u32` when added to the current time in the versions that
/// add without overflow checks (up to v2.0.x at least): the expire time lands ~11 days in the
/// past, so the key is already expired without sleeping. Versions that saturate the sum see a
/// far-future time instead. Either way both sides see the same expire time.
pub const PAST_EXPIRE: u32 = 4_294_000_000;
/// About one year.
pub const YEAR_EXPIRE: u32 = 365 * 24 * 3600;
/// About 19 years (also used by the corpus).
pub const FAR_EXPIRE: u32 = 600_000_000;
/// About 63 years (also used by the corpus); `now + this` still fits in a u32 until ~2074.
pub const VERY_FAR_EXPIRE: u32 = 2_000_000_000;

/// One operation on an official store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// `set(value, key)` or, with `expire`, `set(value, key, expireDuration)`.
    Set {
        /// The key (UTF-8; may be long or non-ASCII).
        key: String,
        /// The typed value.
        value: Value,
        /// An explicit expire duration in seconds (0 = never); `None` uses the store default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expire: Option<u32>,
    },
    /// `removeValueForKey(key)`.
    Remove {
        /// The key.
        key: String,
    },
    /// `clearAll()`.
    ClearAll,
    /// `trim()`.
    Trim,
    /// `close()` and open again with the same configuration.
    Reopen,
    /// Sleep until every short expiration set so far has passed (then later ops see them expired).
    WaitExpiry,
}

impl Op {
    /// The key this operation touches, if any.
    pub fn key(&self) -> Option<&str> {
        match self {
            Op::Set { key, .. } | Op::Remove { key } => Some(key),
            _ => None,
        }
    }
}

/// A generated (or hand-written) workload for one store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    /// Default expire duration passed to `enableAutoKeyExpire` for expiring kinds (0 = never).
    #[serde(default)]
    pub default_expire: u32,
    /// The operations, in order.
    pub ops: Vec<Op>,
}

impl Workload {
    /// Every key the workload touches, in first-touch order, without duplicates.
    pub fn touched_keys(&self) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for op in &self.ops {
            if let Some(k) = op.key() {
                if seen.insert(k.to_string()) {
                    out.push(k.to_string());
                }
            }
        }
        out
    }

    /// True when some set uses a short (sleep-requiring) expiration.
    pub fn uses_short_expire(&self) -> bool {
        self.ops.iter().any(
            |op| matches!(op, Op::Set { expire: Some(d), .. } if *d != 0 && *d <= SHORT_EXPIRE),
        ) || (self.default_expire != 0 && self.default_expire <= SHORT_EXPIRE)
    }
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

impl Default for GenConfig {
    fn default() -> GenConfig {
        GenConfig {
            max_ops: 40,
            short_expire_weight: 1,
            past_expire_weight: 8,
            big_value_weight: 8,
        }
    }
}

/// The key pool: small, so that overwrites and removes hit; includes non-ASCII and
/// 100-300-byte keys. Shrinking moves towards the first (shortest) key.
pub fn key_pool() -> Vec<String> {
    vec![
        "k0".to_string(),
        "k1".to_string(),
        "k2".to_string(),
        "k3".to_string(),
        "键".to_string(),
        "🔑-emoji".to_string(),
        "clé é\u{1}\"".to_string(),
        format!("long-{}", "x".repeat(115)),
        format!("长键-{}", "长".repeat(90)),
        format!("edge-{}", "k".repeat(295)),
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

fn f32_any() -> impl Strategy<Value = f32> {
    use prop::num::f32;
    prop_oneof![
        4 => f32::POSITIVE | f32::NEGATIVE | f32::NORMAL | f32::SUBNORMAL | f32::ZERO | f32::INFINITE,
        1 => prop::sample::select(vec![0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE, f32::MAX, 1.0e-45]),
    ]
}

fn f64_any() -> impl Strategy<Value = f64> {
    use prop::num::f64;
    prop_oneof![
        4 => f64::POSITIVE | f64::NEGATIVE | f64::NORMAL | f64::SUBNORMAL | f64::ZERO | f64::INFINITE,
        1 => prop::sample::select(vec![0.0f64, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, f64::MAX, 5.0e-324]),
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

/// Values of every type the version supports (typed vectors only with `typed_vectors`).
pub fn value_strategy(features: Features, cfg: GenConfig) -> BoxedStrategy<Value> {
    const V: usize = 6;
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
        (
            5,
            prop::collection::vec(small_string(), 0..V)
                .prop_map(Value::Strings)
                .boxed(),
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
            (
                3,
                prop::collection::vec(i32_any(), 0..V)
                    .prop_map(Value::VecI32)
                    .boxed(),
            ),
            (
                3,
                prop::collection::vec(u32_any(), 0..V)
                    .prop_map(Value::VecU32)
                    .boxed(),
            ),
            (
                3,
                prop::collection::vec(i64_any(), 0..V)
                    .prop_map(Value::VecI64)
                    .boxed(),
            ),
            (
                3,
                prop::collection::vec(u64_any(), 0..V)
                    .prop_map(Value::VecU64)
                    .boxed(),
            ),
            (
                3,
                prop::collection::vec(f32_any(), 0..V)
                    .prop_map(Value::VecF32)
                    .boxed(),
            ),
            (
                3,
                prop::collection::vec(f64_any(), 0..V)
                    .prop_map(Value::VecF64)
                    .boxed(),
            ),
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
        (10, key.prop_map(|key| Op::Remove { key }).boxed()),
        (2, Just(Op::ClearAll).boxed()),
        (3, Just(Op::Trim).boxed()),
        (5, Just(Op::Reopen).boxed()),
    ];
    if kind.key_expire() && cfg.short_expire_weight > 0 {
        choices.push((1, Just(Op::WaitExpiry).boxed()));
    }
    prop::strategy::Union::new_weighted(choices).boxed()
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
    (
        default_expire,
        prop::collection::vec(op_strategy(kind, features, cfg), 1..=cfg.max_ops.max(1)),
    )
        .prop_map(|(default_expire, ops)| Workload {
            default_expire,
            ops,
        })
        .boxed()
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
        }
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
        assert!(pool.iter().any(|k| (100..=300).contains(&k.len())));
        assert!(pool.iter().any(|k| !k.is_ascii()));
        assert!(pool.iter().all(|k| k.len() <= 300));
    }
}
