//! What the runner knows the store must hold, from the operations it gave the official
//! library: the expire-time window of every key set while expiration is on, and the value
//! last written to each key while it is certainly still there.

use std::collections::BTreeMap;

use crate::differential::workload::{expire_time, YEAR_EXPIRE};
use crate::judge::compare::{Compared, Mismatch, ReaderReads};
use crate::vocab::value::Value;

/// What the reader must report as a key's expire time: within `lo..=hi` (0 = never).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Window(u32, u32),
    Unknown,
}

/// The runner's model of the store (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Model {
    expect: BTreeMap<Vec<u8>, Expect>,
    /// The value last written to each key, while it is certainly still there.
    written: BTreeMap<Vec<u8>, Value>,
}

impl Model {
    /// A `set` of `value` the official library accepted between the precise seconds `t0` and
    /// `t1`, with the expire duration `duration` in effect (`None`: expiration off).
    pub fn set(
        &mut self,
        key: &[u8],
        value: &Value,
        duration: Option<u32>,
        (t0, t1): (u64, u64),
        saturating_expire: bool,
    ) {
        // The official clock may be a coarse one that lags a tick behind.
        let t0 = t0.saturating_sub(1);
        // The expire time the official library writes for a duration set at `t`.
        let at = |t: u64, d: u32| expire_time(t, d, saturating_expire);
        let lasting = match duration {
            None | Some(0) => true,
            // A year or more ahead, unless the sum wrapped to the past.
            Some(d) => d >= YEAR_EXPIRE && u64::from(at(t0, d)) > t1,
        };
        if lasting {
            self.written.insert(key.to_vec(), value.clone());
        } else {
            self.written.remove(key);
        }
        let expect = match duration {
            None | Some(0) => Expect::Window(0, 0),
            // The sum wrapped between the two readings of the clock.
            Some(d) if at(t0, d) > at(t1, d) => Expect::Unknown,
            Some(d) => Expect::Window(at(t0, d), at(t1, d)),
        };
        self.expect.insert(key.to_vec(), expect);
    }

    /// `key` was removed.
    pub fn remove(&mut self, key: &[u8]) {
        self.expect.remove(key);
        self.written.remove(key);
    }

    /// Every key was removed.
    pub fn clear(&mut self) {
        self.expect.clear();
        self.written.clear();
    }

    /// Expiration was turned on in a store that had it off: what the existing keys get is
    /// the library's choice.
    pub fn expiration_enabled(&mut self) {
        self.expect.values_mut().for_each(|e| *e = Expect::Unknown);
    }

    /// Expiration was turned off: no key expires.
    pub fn expiration_disabled(&mut self) {
        self.expect
            .values_mut()
            .for_each(|e| *e = Expect::Window(0, 0));
    }

    /// The value last written to `key`, while it is certainly still there.
    pub fn written(&self, key: &[u8]) -> Option<&Value> {
        self.written.get(key)
    }

    /// The expire times `reads` reports against the windows of the writer's sets: the number
    /// checked and the differences.
    pub fn check_expire(&self, reads: &ReaderReads) -> (u64, Vec<Mismatch>) {
        let mut checked = 0;
        let mut out = Vec::new();
        for (key, got) in &reads.expire_at {
            if let Some(Expect::Window(lo, hi)) = self.expect.get(key) {
                checked += 1;
                let got = got.unwrap_or(0);
                if !(*lo..=*hi).contains(&got) {
                    let want = if lo == hi {
                        lo.to_string()
                    } else {
                        format!("{lo}..={hi}")
                    };
                    let what = Compared::ExpireVsWriter;
                    out.push(Mismatch::new(
                        Some(key.as_slice()),
                        what,
                        want,
                        got.to_string(),
                    ));
                }
            }
        }
        (checked, out)
    }
}
