//! The writers' op streams: each plan turns a [`WriterSpec`] into the workload ops
//! ([`crate::differential::workload::Op`]) the child writer performs and the parent derives again to judge
//! what it reads.
//!
//! - `live`: sets of self-identifying values of five types (one in ten 1–13 KB), removes,
//!   rare `trim` and `clearAll`; expiring kinds give every third key a 30-day duration;
//! - `stress`: a long stream of self-identifying byte values (small, some 2 KB, some up to
//!   16 KB), removes, trims (~0.3%) and clearAll (~0.02%);
//! - `shrink`: `ops` cycles of grow to megabytes / remove most / trim / set a quarter /
//!   clearAll, then a quarter of the keys set once more;
//! - `faults`: every getter type of the version with seeded values
//!   ([`crate::writer::value::seeded`], one in eight up to 0.5–6.5 KB), removes, rare
//!   `clearAll` and `trim`, over 8–47 keys; far-future durations on expiring kinds;
//! - `powerloss`: the `faults` ops, with `sync()` after about one op in 16 ([`syncs`]);
//! - `diskerr`: the `powerloss` ops and syncs (run while the official file calls fail as the
//!   writer's `--io-faults` schedule says).

use crate::differential::workload::{Key, Op};
use crate::vocab::kind::Features;
use crate::vocab::value::{Value, ValueType};
use crate::vocab::{key_name, SplitMix};
use crate::writer::value::{key_type, seeded, stamp};
use crate::writer::{Plan, WriterSpec};

/// The expire duration (30 days) the live plan gives every third key of an expiring store.
pub const LIVE_EXPIRE: u32 = 30 * 24 * 3600;

/// Expire duration of the fault plan's explicit durations: far enough never to pass during a
/// run (the official getters would delete expired keys as they read).
pub const FAR: u32 = 600_000_000;

fn key(i: usize) -> Key {
    Key(key_name(i).into_bytes())
}

fn set(k: usize, value: Value, expire: Option<u32>) -> Op {
    Op::Set {
        key: key(k),
        value,
        expire,
    }
}

/// The op stream of `spec` (`features`: the writer's version; only the fault plan uses it).
pub fn ops(spec: &WriterSpec, features: &Features) -> Vec<Op> {
    match spec.plan {
        Plan::Live => live(spec),
        Plan::Stress => stress(spec.seed, spec.ops, spec.keys.max(1)),
        Plan::Shrink => shrink(spec.ops, spec.keys.max(1)),
        Plan::Faults | Plan::Powerloss | Plan::Diskerr => faults(spec, features),
    }
}

/// After which of the `ops` ops the writer calls `sync()`: about one in 16 (seeded) for the
/// power-loss and disk-error plans, none for the others.
pub fn syncs(spec: &WriterSpec, ops: usize) -> Vec<bool> {
    let mut rng = SplitMix::new(spec.seed ^ 0x5e7c_0ff5);
    (0..ops)
        .map(|_| matches!(spec.plan, Plan::Powerloss | Plan::Diskerr) && rng.below(16) == 0)
        .collect()
}

/// A stream of `ops` ops over `keys` keys: per mille, `clear` clearAll, `trim` trims, removes
/// up to 160, the rest sets made by `set(rng, op index, key)`.
fn mixed(
    rng: &mut SplitMix,
    ops: usize,
    keys: u64,
    (clear, trim): (u64, u64),
    mut set: impl FnMut(&mut SplitMix, usize, usize) -> Op,
) -> Vec<Op> {
    (0..ops)
        .map(|i| {
            let r = rng.below(1000);
            let k = rng.below(keys) as usize;
            match r {
                r if r < clear => Op::ClearAll,
                r if r < clear + trim => Op::Trim,
                r if r < 160 => Op::Remove { key: key(k) },
                _ => set(rng, i, k),
            }
        })
        .collect()
}

fn live(spec: &WriterSpec) -> Vec<Op> {
    let mut rng = SplitMix::new(spec.seed);
    mixed(
        &mut rng,
        spec.ops,
        spec.keys.max(1) as u64,
        (3, 10),
        |rng, i, k| {
            let size = if rng.below(10) == 0 {
                1024 + rng.below(12 * 1024) as usize
            } else {
                rng.below(64) as usize
            };
            let expire = (spec.kind.key_expire() && k.is_multiple_of(3)).then_some(LIVE_EXPIRE);
            set(k, stamp(k, i, key_type(k), size), expire)
        },
    )
}

fn stress(seed: u64, ops: usize, keys: usize) -> Vec<Op> {
    let mut rng = SplitMix::new(seed);
    (0..ops)
        .map(|i| {
            let r = rng.next_u64();
            let k = (r >> 32) as usize % keys;
            match r % 10_000 {
                0..=6_999 => {
                    let l = rng.next_u64();
                    let size = match l % 100 {
                        0..=84 => 24 + (l >> 8) as usize % 200,
                        85..=98 => 200 + (l >> 8) as usize % 1800,
                        _ => 4_000 + (l >> 8) as usize % 12_000,
                    };
                    set(k, stamp(k, i, ValueType::Bytes, size), None)
                }
                7_000..=9_967 => Op::Remove { key: key(k) },
                9_968..=9_997 => Op::Trim,
                _ => Op::ClearAll,
            }
        })
        .collect()
}

fn shrink(cycles: usize, keys: usize) -> Vec<Op> {
    let mut out = Vec::new();
    let mut rng = SplitMix::new(0x5eed);
    let push_set = |out: &mut Vec<Op>, k: usize, size: usize| {
        let seq = out.len();
        out.push(set(k, stamp(k, seq, ValueType::Bytes, size), None));
    };
    for _ in 0..cycles {
        for k in 0..keys {
            push_set(&mut out, k, 8_192 + rng.below(57_344) as usize);
        }
        for k in (0..keys).filter(|k| k % 8 != 0) {
            out.push(Op::Remove { key: key(k) });
        }
        out.push(Op::Trim);
        for k in (0..keys).filter(|k| k % 4 == 1) {
            push_set(&mut out, k, 1_000 + rng.below(8_000) as usize);
        }
        out.push(Op::ClearAll);
    }
    // End with some values so the final-state check has something to compare.
    for k in (0..keys).filter(|k| k % 4 == 2) {
        push_set(&mut out, k, 100 + rng.below(30_000) as usize);
    }
    out
}

fn faults(spec: &WriterSpec, features: &Features) -> Vec<Op> {
    let mut rng = SplitMix::new(spec.seed ^ 0xfa17_5eed);
    let keys = 8 + rng.below(40);
    let types = features.getters();
    mixed(&mut rng, spec.ops, keys, (4, 11), |rng, _, k| {
        let expire = (spec.kind.key_expire() && rng.below(3) == 0).then_some(FAR);
        let n = if rng.below(8) == 0 {
            512 + rng.below(6000) as usize
        } else {
            rng.below(40) as usize
        };
        let ty = types[rng.below(types.len() as u64) as usize];
        set(k, seeded(rng, ty, n), expire)
    })
}
