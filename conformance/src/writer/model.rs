//! What an op stream says about every key at every prefix, and the check of what a reader
//! observed while the writer ran: every value is exactly one the writer committed for that
//! key, every snapshot is explained by a single prefix of the op stream, never older than the
//! previous one.

use crate::differential::workload::Op;
use crate::vocab::value::Value;
use crate::vocab::{key_index, key_name};
use crate::writer::value::claimed_seq;

/// A half-open window `[lo, hi)` of op-stream prefixes (prefix `p`: the first `p` ops applied).
pub type Window = (usize, usize);

/// The history of every key of an op stream over keys `0..keys` (named by [`key_name`]).
#[derive(Debug, Clone)]
pub struct Model {
    /// The ops.
    pub ops: Vec<Op>,
    /// Number of keys.
    pub keys: usize,
    /// Per key: state changes `(first prefix with this state, Some(index of the set op))`,
    /// starting with `(0, None)`.
    pub history: Vec<Vec<(usize, Option<usize>)>>,
}

impl Model {
    /// The model of `ops` over `keys` keys (ops on other keys are ignored).
    pub fn new(ops: Vec<Op>, keys: usize) -> Model {
        let keys = keys.max(1);
        let mut history: Vec<Vec<(usize, Option<usize>)>> = vec![vec![(0, None)]; keys];
        let mut state: Vec<Option<usize>> = vec![None; keys];
        let index = |k: &crate::differential::workload::Key| key_index(&k.0).filter(|i| *i < keys);
        for (i, op) in ops.iter().enumerate() {
            let mut change = |k: usize, s: Option<usize>| {
                if state[k] != s || s.is_some() {
                    state[k] = s;
                    history[k].push((i + 1, s));
                }
            };
            match op {
                Op::Set { key, .. } => index(key).into_iter().for_each(|k| change(k, Some(i))),
                Op::Remove { key } => index(key).into_iter().for_each(|k| change(k, None)),
                Op::RemoveKeys { keys } => {
                    keys.iter().filter_map(index).for_each(|k| change(k, None))
                }
                Op::ClearAll | Op::ClearAllKeepSpace => (0..keys).for_each(|k| change(k, None)),
                _ => {}
            }
        }
        Model { ops, keys, history }
    }

    /// Number of prefixes (`ops.len() + 1`).
    pub fn prefixes(&self) -> usize {
        self.ops.len() + 1
    }

    /// The value key `k` holds after every op (the final state).
    pub fn final_value(&self, k: usize) -> Option<Value> {
        let last = self.history[k].last()?.1?;
        match &self.ops[last] {
            Op::Set { value, .. } => Some(value.clone()),
            _ => None,
        }
    }

    /// The windows of prefixes in which key `k` is in the observed state; an error when the
    /// observation is no value the writer ever committed for that key.
    pub fn windows(&self, k: usize, observed: &Option<Value>) -> Result<Vec<Window>, String> {
        self.windows_within(k, observed, (0, self.prefixes()))
    }

    /// [`Model::windows`] that overlap `within` (found by binary search: a long stream's
    /// absent key has many windows).
    fn windows_within(
        &self,
        k: usize,
        observed: &Option<Value>,
        within: Window,
    ) -> Result<Vec<Window>, String> {
        let h = &self.history[k];
        let end_of = |i: usize| h.get(i + 1).map(|x| x.0).unwrap_or(self.prefixes());
        let name = key_name(k);
        let Some(v) = observed else {
            let first = h.partition_point(|x| x.0 <= within.0).saturating_sub(1);
            return Ok((first..h.len())
                .take_while(|&i| h[i].0 < within.1)
                .filter(|&i| h[i].1.is_none())
                .map(|i| (h[i].0, end_of(i)))
                .collect());
        };
        let seq =
            claimed_seq(k, v).ok_or_else(|| format!("key {name}: foreign or torn value {v}"))?;
        match self.ops.get(seq) {
            Some(Op::Set { key, value, .. }) if key.0 == name.as_bytes() => {
                if value != v {
                    return Err(format!("key {name}: torn value for op {seq}: {v}"));
                }
            }
            _ => {
                return Err(format!(
                    "key {name}: value claims op {seq}, which did not set this key: {v}"
                ))
            }
        }
        // The set of op `seq` starts prefix `seq + 1`.
        let i = h.partition_point(|x| x.0 < seq + 1);
        match h.get(i) {
            Some((start, Some(s))) if *start == seq + 1 && *s == seq => {
                Ok(vec![(*start, end_of(i))])
            }
            _ => Err(format!("key {name}: op {seq} missing from history")),
        }
    }

    /// Checks one consistent observation of several keys (a snapshot): every value was
    /// committed, and some prefix `>= floor` explains all of them. Returns the lowest prefix
    /// that does (the new floor).
    pub fn check_snapshot(
        &self,
        observed: &[(usize, Option<Value>)],
        floor: usize,
    ) -> Result<usize, String> {
        // Sorted, disjoint candidate windows; values first (one window each) narrow them most.
        let mut candidates: Vec<Window> = vec![(floor, self.prefixes())];
        let order = observed
            .iter()
            .filter(|o| o.1.is_some())
            .chain(observed.iter().filter(|o| o.1.is_none()));
        for (k, v) in order {
            let within = (candidates[0].0, candidates[candidates.len() - 1].1);
            let windows = self.windows_within(*k, v, within)?;
            let mut next = Vec::new();
            let (mut i, mut j) = (0, 0);
            while i < candidates.len() && j < windows.len() {
                let (a, b) = candidates[i];
                let (c, d) = windows[j];
                let (lo, hi) = (a.max(c), b.min(d));
                if lo < hi {
                    next.push((lo, hi));
                }
                if b < d {
                    i += 1;
                } else {
                    j += 1;
                }
            }
            if next.is_empty() {
                return Err(format!(
                    "no single writer prefix >= {floor} explains the snapshot; first conflict at key {} = {}",
                    key_name(*k),
                    crate::vocab::value::show(v)
                ));
            }
            candidates = next;
        }
        Ok(candidates[0].0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::kind::Features;
    use crate::writer::{Plan, WriterSpec};

    #[test]
    fn model_accepts_true_prefixes_and_rejects_mixtures() {
        let mut spec = WriterSpec::new(Plan::Live, 400, 12);
        spec.seed = 7;
        let model = Model::new(spec.ops(&Features::default()), spec.keys);
        // Replay the stream: the state after every prefix must be accepted.
        let mut state: Vec<Option<Value>> = vec![None; model.keys];
        let mut floor = 0;
        for (i, op) in model.ops.iter().enumerate() {
            match op {
                Op::Set { key, value, .. } => {
                    state[key_index(&key.0).unwrap()] = Some(value.clone())
                }
                Op::Remove { key } => state[key_index(&key.0).unwrap()] = None,
                Op::ClearAll => state.iter_mut().for_each(|s| *s = None),
                _ => {}
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
        let (key, first) = model
            .ops
            .iter()
            .find_map(|op| match op {
                Op::Set { key, value, .. } => Some((key_index(&key.0).unwrap(), value.clone())),
                _ => None,
            })
            .unwrap();
        let old = vec![(key, Some(first.clone()))];
        if model.final_value(key) != old[0].1 {
            assert!(model.check_snapshot(&old, model.prefixes() - 1).is_err());
        }
        // A torn value, a value of another key and a value no op wrote are rejected.
        let torn = match first.clone() {
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
        assert!(model.windows(key + 1, &Some(first)).is_err());
        let never =
            crate::writer::value::stamp(key, 10_000, crate::vocab::value::ValueType::Bytes, 3);
        assert!(model.windows(key, &Some(never)).is_err());
    }
}
