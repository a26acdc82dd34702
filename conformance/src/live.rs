//! The live multi-process scenario: a seeded writer sequence run by the official library in
//! MULTI_PROCESS mode in a child process (`conformance writer ...`), and the model the reading
//! process uses to judge what it observes.
//!
//! Every set writes a value derived from `(key index, op index)` only, so an observed value
//! identifies the op that wrote it, and any torn or foreign value fails the exact
//! re-derivation. The model also knows, for every key, which prefixes of the op sequence
//! leave it in which state, which lets readers check that a snapshot corresponds to a single
//! prefix and that successive snapshots never go back in time.

use std::io::Write as _;
use std::path::Path;

use crate::error::Result;
use crate::kind::StoreKind;
use crate::official::OfficialLib;
use crate::value::{Value, ValueType};

/// Parameters of a live run (shared by the writer process and the test).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveSpec {
    /// Seed of the op sequence.
    pub seed: u64,
    /// Number of ops.
    pub ops: usize,
    /// Number of keys.
    pub keys: usize,
}

/// One writer operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveOp {
    /// Set key `key` to `live_value(key, op index, size)`.
    Set {
        /// Key index.
        key: usize,
        /// Size class of the value (big values force growth and full write-backs).
        size: usize,
    },
    /// Remove key `key`.
    Remove {
        /// Key index.
        key: usize,
    },
    /// `clearAll()`.
    ClearAll,
    /// `trim()`.
    Trim,
}

/// The store id of the live store.
pub const LIVE_ID: &str = "live";

/// The configuration of the live store (multi-process, plaintext).
pub const LIVE_KIND: StoreKind = StoreKind::Multi;

/// A small deterministic generator (SplitMix64), so that the writer and the test derive the
/// same sequence without sharing state.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator from a seed.
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// The op sequence of `spec`.
pub fn live_ops(spec: &LiveSpec) -> Vec<LiveOp> {
    let mut rng = SplitMix::new(spec.seed);
    let keys = spec.keys.max(1) as u64;
    (0..spec.ops)
        .map(|_| {
            let r = rng.below(1000);
            let key = rng.below(keys) as usize;
            if r < 3 {
                LiveOp::ClearAll
            } else if r < 13 {
                LiveOp::Trim
            } else if r < 160 {
                LiveOp::Remove { key }
            } else {
                let size = if rng.below(10) == 0 {
                    1024 + rng.below(12 * 1024) as usize
                } else {
                    rng.below(64) as usize
                };
                LiveOp::Set { key, size }
            }
        })
        .collect()
}

/// The name of key `i`.
pub fn live_key(i: usize) -> String {
    format!("live-{i:03}")
}

/// The (fixed) type of key `i`.
pub fn live_type(i: usize) -> ValueType {
    match i % 5 {
        0 => ValueType::String,
        1 => ValueType::I64,
        2 => ValueType::Bytes,
        3 => ValueType::U32,
        _ => ValueType::Strings,
    }
}

fn filler(key: usize, seq: usize, n: usize) -> impl Iterator<Item = u8> {
    let mut rng = SplitMix::new(((key as u64) << 32) ^ seq as u64);
    (0..n).map(move |_| b'a' + (rng.below(26) as u8))
}

/// The value op `seq` writes to key `key` with size class `size`.
pub fn live_value(key: usize, seq: usize, size: usize) -> Value {
    match live_type(key) {
        ValueType::String => {
            let mut s = format!("{key}#{seq}#{size}#");
            s.extend(filler(key, seq, size).map(char::from));
            Value::String(s)
        }
        ValueType::I64 => Value::I64(((key as i64) << 40) | seq as i64),
        ValueType::Bytes => {
            let mut b = format!("{key}#{seq}#{size}#").into_bytes();
            b.extend(filler(key, seq, size));
            Value::Bytes(b)
        }
        ValueType::U32 => Value::U32(seq as u32),
        _ => Value::Strings(vec![
            format!("{key}#{seq}#{size}#"),
            filler(key, seq, size).map(char::from).collect(),
        ]),
    }
}

/// The op index (and size class) encoded in an observed value of key `key`, if it parses.
fn decode_seq(key: usize, v: &Value) -> Option<(usize, Option<usize>)> {
    fn head(text: &[u8]) -> Option<(usize, usize, usize)> {
        let text = std::str::from_utf8(text.get(..text.len().min(40))?).ok()?;
        let mut parts = text.split('#');
        let k = parts.next()?.parse().ok()?;
        let s = parts.next()?.parse().ok()?;
        let z = parts.next()?.parse().ok()?;
        Some((k, s, z))
    }
    let (k, seq, size) = match v {
        Value::String(s) => {
            let (k, s, z) = head(s.as_bytes())?;
            (k, s, Some(z))
        }
        Value::Bytes(b) => {
            let (k, s, z) = head(b)?;
            (k, s, Some(z))
        }
        Value::Strings(v) => {
            let (k, s, z) = head(v.first()?.as_bytes())?;
            (k, s, Some(z))
        }
        Value::I64(x) => ((x >> 40) as usize, (x & ((1 << 40) - 1)) as usize, None),
        Value::U32(x) => (key, *x as usize, None),
        _ => return None,
    };
    (k == key).then_some((seq, size))
}

/// What the writer's sequence says about every key and prefix.
#[derive(Debug, Clone)]
pub struct LiveModel {
    /// The ops.
    pub ops: Vec<LiveOp>,
    /// Number of keys.
    pub keys: usize,
    /// Per key: state changes `(first prefix with this state, Some(op index of the set))`,
    /// starting with `(0, None)`. Prefix `p` = the first `p` ops applied.
    pub history: Vec<Vec<(usize, Option<usize>)>>,
}

/// A half-open window `[lo, hi)` of op-sequence prefixes.
pub type Window = (usize, usize);

impl LiveModel {
    /// Builds the model of `spec`.
    pub fn new(spec: &LiveSpec) -> LiveModel {
        let ops = live_ops(spec);
        let keys = spec.keys.max(1);
        let mut history: Vec<Vec<(usize, Option<usize>)>> = vec![vec![(0, None)]; keys];
        let mut state: Vec<Option<usize>> = vec![None; keys];
        for (i, op) in ops.iter().enumerate() {
            let mut change = |k: usize, s: Option<usize>, history: &mut Vec<Vec<_>>| {
                if state[k] != s || s.is_some() {
                    state[k] = s;
                    history[k].push((i + 1, s));
                }
            };
            match *op {
                LiveOp::Set { key, .. } => change(key, Some(i), &mut history),
                LiveOp::Remove { key } => change(key, None, &mut history),
                LiveOp::ClearAll => {
                    for k in 0..keys {
                        change(k, None, &mut history);
                    }
                }
                LiveOp::Trim => {}
            }
        }
        LiveModel { ops, keys, history }
    }

    /// Number of prefixes (`ops.len() + 1`).
    pub fn prefixes(&self) -> usize {
        self.ops.len() + 1
    }

    /// The value key `k` holds after every op (the final state).
    pub fn final_value(&self, k: usize) -> Option<Value> {
        let last = self.history[k].last()?.1?;
        match self.ops[last] {
            LiveOp::Set { size, .. } => Some(live_value(k, last, size)),
            _ => None,
        }
    }

    /// The windows of prefixes in which key `k` is in the observed state; an error when the
    /// observation is no value the writer ever committed for that key.
    pub fn windows(
        &self,
        k: usize,
        observed: &Option<Value>,
    ) -> std::result::Result<Vec<Window>, String> {
        let h = &self.history[k];
        let end_of = |i: usize| h.get(i + 1).map(|x| x.0).unwrap_or(self.prefixes());
        match observed {
            None => Ok(h
                .iter()
                .enumerate()
                .filter(|(_, (_, s))| s.is_none())
                .map(|(i, (start, _))| (*start, end_of(i)))
                .collect()),
            Some(v) => {
                let (seq, _) = decode_seq(k, v)
                    .ok_or_else(|| format!("key {}: foreign or torn value {v}", live_key(k)))?;
                let size = match self.ops.get(seq) {
                    Some(LiveOp::Set { key, size }) if *key == k => *size,
                    _ => {
                        return Err(format!(
                            "key {}: value claims op {seq}, which did not set this key: {v}",
                            live_key(k)
                        ))
                    }
                };
                if live_value(k, seq, size) != *v {
                    return Err(format!("key {}: torn value for op {seq}: {v}", live_key(k)));
                }
                let i = h
                    .iter()
                    .position(|(_, s)| *s == Some(seq))
                    .ok_or_else(|| format!("key {}: op {seq} missing from history", live_key(k)))?;
                Ok(vec![(h[i].0, end_of(i))])
            }
        }
    }

    /// Checks one consistent observation of several keys (a snapshot): every value was
    /// committed, and some prefix `>= floor` explains all of them. Returns the lowest prefix
    /// that does (the new floor).
    pub fn check_snapshot(
        &self,
        observed: &[(usize, Option<Value>)],
        floor: usize,
    ) -> std::result::Result<usize, String> {
        // Candidate prefixes: intersect the union-of-windows of every key, clipped to >= floor.
        let mut candidates: Vec<Window> = vec![(floor, self.prefixes())];
        for (k, v) in observed {
            let windows = self.windows(*k, v)?;
            let mut next = Vec::new();
            for &(a, b) in &candidates {
                for &(c, d) in &windows {
                    let lo = a.max(c);
                    let hi = b.min(d);
                    if lo < hi {
                        next.push((lo, hi));
                    }
                }
            }
            if next.is_empty() {
                return Err(format!(
                    "no single writer prefix >= {floor} explains the snapshot; first conflict at key {} = {}",
                    live_key(*k),
                    crate::value::show(v)
                ));
            }
            candidates = next;
        }
        Ok(candidates.iter().map(|w| w.0).min().unwrap_or(floor))
    }
}

/// Runs the writer side: opens the live store with `lib` in `dir` (MULTI_PROCESS), prints
/// `ready` on stdout, performs every op of `spec`, syncs, prints `done N` and returns.
pub fn run_writer(lib: &dyn OfficialLib, dir: &Path, spec: &LiveSpec) -> Result<()> {
    let ops = live_ops(spec);
    let mut store = lib.open(dir, LIVE_ID, LIVE_KIND)?;
    store.sync()?;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "ready");
    let _ = out.flush();
    for (i, op) in ops.iter().enumerate() {
        match *op {
            LiveOp::Set { key, size } => {
                store.set(live_key(key).as_bytes(), &live_value(key, i, size), None)?;
            }
            LiveOp::Remove { key } => store.remove(live_key(key).as_bytes())?,
            LiveOp::ClearAll => store.clear_all()?,
            LiveOp::Trim => store.trim()?,
        }
    }
    store.sync()?;
    store.close()?;
    let _ = writeln!(out, "done {}", ops.len());
    let _ = out.flush();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LiveSpec {
        LiveSpec {
            seed: 7,
            ops: 400,
            keys: 12,
        }
    }

    #[test]
    fn sequence_is_deterministic_and_mixed() {
        let a = live_ops(&spec());
        assert_eq!(a, live_ops(&spec()));
        assert!(a.iter().any(|op| matches!(op, LiveOp::Remove { .. })));
        assert!(a
            .iter()
            .any(|op| matches!(op, LiveOp::Set { size, .. } if *size > 1024)));
    }

    #[test]
    fn model_accepts_true_prefixes_and_rejects_mixtures() {
        let model = LiveModel::new(&spec());
        // Replay the sequence: the state after every prefix must be accepted with floor = prefix.
        let mut state: Vec<Option<Value>> = vec![None; model.keys];
        let mut floor = 0;
        for (i, op) in model.ops.iter().enumerate() {
            match *op {
                LiveOp::Set { key, size } => state[key] = Some(live_value(key, i, size)),
                LiveOp::Remove { key } => state[key] = None,
                LiveOp::ClearAll => state.iter_mut().for_each(|s| *s = None),
                LiveOp::Trim => {}
            }
            let obs: Vec<_> = state.iter().cloned().enumerate().collect();
            let lo = model.check_snapshot(&obs, floor).unwrap();
            assert!(lo <= i + 1);
            floor = lo;
        }
        for (k, want) in state.iter().enumerate() {
            assert_eq!(model.final_value(k), *want);
        }
        // Going back in time is rejected: the first set value of some key, observed at the end.
        let (seq, key, size) = model
            .ops
            .iter()
            .enumerate()
            .find_map(|(i, op)| match *op {
                LiveOp::Set { key, size } => Some((i, key, size)),
                _ => None,
            })
            .unwrap();
        let old = vec![(key, Some(live_value(key, seq, size)))];
        if model.final_value(key) != old[0].1 {
            assert!(model.check_snapshot(&old, model.prefixes() - 1).is_err());
        }
        // A torn value is rejected.
        let torn = match live_value(key, seq, size) {
            Value::String(mut s) => {
                s.push('!');
                Value::String(s)
            }
            Value::I64(x) => Value::I64(x ^ (1 << 45)),
            Value::Bytes(mut b) => {
                b.pop();
                Value::Bytes(b)
            }
            Value::U32(x) => Value::U32(x + 100_000),
            Value::Strings(mut v) => {
                v.pop();
                Value::Strings(v)
            }
            other => other,
        };
        assert!(model.windows(key, &Some(torn)).is_err());
    }
}
