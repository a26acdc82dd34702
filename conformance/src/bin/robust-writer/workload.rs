//! Deterministic workloads of the robustness tests, shared by the `robust-writer` binary and
//! the tests that check its output (`conformance/tests/shrink.rs`, `stress.rs` include this
//! file with `#[path]`), so both sides derive the same operations and the same values.
//!
//! Values are self-checking: the value written by operation `n` for key `k` with length `len`
//! is `"k|n|len|" + filler(k, n) + "|" + hash`, and [`check_value`] re-derives it byte for byte,
//! so a torn, stale-mixed or garbage value can never pass.

#![allow(dead_code)] // each includer uses a different part

/// One writer operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `set(key, make_value(key, op index, len))` as bytes.
    Set {
        /// Key index (`key_name`).
        key: usize,
        /// Length of the value.
        len: usize,
    },
    /// `removeValueForKey(key)`.
    Remove {
        /// Key index.
        key: usize,
    },
    /// `trim()`.
    Trim,
    /// `clearAll()`.
    ClearAll,
}

/// The store id the writer uses.
pub const STORE_ID: &str = "robust";

/// The key bytes of key index `k`.
pub fn key_name(k: usize) -> String {
    format!("key-{k:03}")
}

/// SplitMix64 step.
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a 64.
pub fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// FNV-1a 64 offset basis.
pub const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// The value operation `n` writes for key `key` (`len` bytes at least the header and hash).
pub fn make_value(key: usize, n: u64, len: usize) -> Vec<u8> {
    let mut v = format!("{key}|{n}|{len}|").into_bytes();
    // Room for "|" and 16 hex digits of the hash at the end.
    let target = len.saturating_sub(17);
    let mut s = ((key as u64) << 40) ^ n;
    while v.len() < target {
        let r = splitmix(&mut s);
        for i in 0..8 {
            if v.len() >= target {
                break;
            }
            v.push(b'a' + ((r >> (i * 8)) as u8 % 26));
        }
    }
    let h = fnv(&v, FNV_BASIS);
    v.push(b'|');
    v.extend_from_slice(format!("{h:016x}").as_bytes());
    v
}

/// Parses and re-derives a value observed for key `key`: `Ok((n, len))` when it is exactly
/// `make_value(key, n, len)`, else a description of what is wrong.
pub fn check_value(key: usize, v: &[u8]) -> Result<(u64, usize), String> {
    let text = String::from_utf8_lossy(v);
    let mut parts = text.splitn(4, '|');
    let bad = || {
        format!(
            "key {key}: malformed value {:?}",
            String::from_utf8_lossy(&v[..v.len().min(64)])
        )
    };
    let k: usize = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
    let n: u64 = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
    let len: usize = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
    if k != key {
        return Err(format!("value of key {k} observed under key {key}"));
    }
    if len > 1 << 24 {
        return Err(bad());
    }
    if make_value(key, n, len) != v {
        return Err(format!(
            "key {key}: torn or corrupt value (claims op {n}, len {len}, got {} bytes)",
            v.len()
        ));
    }
    Ok((n, len))
}

/// The stress workload: `ops` operations over `keys` keys. Mostly small sets (with some large
/// ones, which force full write-backs and file growth), removes, trims (~0.3%) and clearAll
/// (~0.02%).
pub fn stress_ops(seed: u64, ops: usize, keys: usize) -> Vec<Op> {
    let mut s = seed;
    (0..ops)
        .map(|_| {
            let r = splitmix(&mut s);
            let key = (r >> 32) as usize % keys;
            match r % 10_000 {
                0..=6_999 => {
                    let l = splitmix(&mut s);
                    let len = match l % 100 {
                        0..=84 => 24 + (l >> 8) as usize % 200,
                        85..=98 => 200 + (l >> 8) as usize % 1800,
                        _ => 4_000 + (l >> 8) as usize % 12_000,
                    };
                    Op::Set { key, len }
                }
                7_000..=9_967 => Op::Remove { key },
                9_968..=9_997 => Op::Trim,
                _ => Op::ClearAll,
            }
        })
        .collect()
}

/// The shrink workload: `cycles` times: set every key to a big value (the file grows to
/// megabytes), remove seven keys in eight, trim (the file shrinks), set a quarter of the keys
/// again, clearAll (the file shrinks to one page); then a quarter of the keys are set once more.
pub fn shrink_ops(cycles: usize, keys: usize) -> Vec<Op> {
    let mut out = Vec::new();
    let mut s = 0x5eed_u64;
    for _ in 0..cycles {
        for key in 0..keys {
            let len = 8_192 + splitmix(&mut s) as usize % 57_344;
            out.push(Op::Set { key, len });
        }
        for key in (0..keys).filter(|k| k % 8 != 0) {
            out.push(Op::Remove { key });
        }
        out.push(Op::Trim);
        for key in (0..keys).filter(|k| k % 4 == 1) {
            let len = 1_000 + splitmix(&mut s) as usize % 8_000;
            out.push(Op::Set { key, len });
        }
        out.push(Op::ClearAll);
    }
    // End with some values so the final-state check has something to compare.
    for key in (0..keys).filter(|k| k % 4 == 2) {
        let len = 100 + splitmix(&mut s) as usize % 30_000;
        out.push(Op::Set { key, len });
    }
    out
}

/// A key's state after an operation: `Some((n, len))` for the value op `n` wrote.
pub type State = Option<(u64, usize)>;

/// Per-key history of a workload: `(op index, state after it)`, in order; the state is
/// `Some((n, len))` for a value written by op `n`, `None` for absent.
pub struct History {
    /// Number of keys.
    pub keys: usize,
    /// Number of operations.
    pub ops: usize,
    /// Changes per key.
    pub changes: Vec<Vec<(u64, State)>>,
}

impl History {
    /// Replays `ops` over `keys` keys.
    pub fn new(ops: &[Op], keys: usize) -> History {
        let mut changes = vec![Vec::new(); keys];
        let mut live = vec![false; keys];
        for (i, op) in ops.iter().enumerate() {
            let i = i as u64;
            match *op {
                Op::Set { key, len } => {
                    changes[key].push((i, Some((i, len))));
                    live[key] = true;
                }
                Op::Remove { key } => {
                    if live[key] {
                        changes[key].push((i, None));
                        live[key] = false;
                    }
                }
                Op::Trim => {}
                Op::ClearAll => {
                    for k in 0..keys {
                        if live[k] {
                            changes[k].push((i, None));
                            live[k] = false;
                        }
                    }
                }
            }
        }
        History {
            keys,
            ops: ops.len(),
            changes,
        }
    }

    /// The value op `n` wrote for `key` (its length), if op `n` is a set of that key.
    pub fn written(&self, key: usize, n: u64) -> Option<usize> {
        let c = &self.changes[key];
        let i = c.binary_search_by_key(&n, |x| x.0).ok()?;
        c[i].1.filter(|(m, _)| *m == n).map(|(_, len)| len)
    }

    /// The prefix lengths `p` (ops `0..p` applied) during which `key` holds op `n`'s value:
    /// `[n + 1, next change + 1)`.
    pub fn holds(&self, key: usize, n: u64) -> (u64, u64) {
        let c = &self.changes[key];
        let next = match c.binary_search_by_key(&n, |x| x.0) {
            Ok(i) => c.get(i + 1).map_or(self.ops as u64, |x| x.0),
            Err(_) => n,
        };
        (n + 1, next + 1)
    }

    /// Whether `key` is absent for some prefix length in `[lo, hi)`.
    pub fn absent_within(&self, key: usize, lo: u64, hi: u64) -> bool {
        let c = &self.changes[key];
        // State at prefix `lo`: the last change with op index < lo.
        let idx = c.partition_point(|x| x.0 < lo);
        if idx == 0 || c[idx - 1].1.is_none() {
            return true;
        }
        // A removal at op j gives "absent" at prefix j + 1.
        c[idx..]
            .iter()
            .take_while(|x| x.0 + 1 < hi)
            .any(|x| x.1.is_none())
    }

    /// The final state: `(key, n, len)` of every live key.
    pub fn final_state(&self) -> Vec<(usize, u64, usize)> {
        (0..self.keys)
            .filter_map(|k| match self.changes[k].last() {
                Some((_, Some((n, len)))) => Some((k, *n, *len)),
                _ => None,
            })
            .collect()
    }
}

/// Digest of a store state (live keys in key order with their values), as the writer
/// reports it and the tests recompute it.
pub fn state_digest<'a>(entries: impl IntoIterator<Item = (usize, &'a [u8])>) -> u64 {
    let mut h = FNV_BASIS;
    for (k, v) in entries {
        h = fnv(key_name(k).as_bytes(), h);
        h = fnv(&(v.len() as u64).to_le_bytes(), h);
        h = fnv(v, h);
    }
    h
}
