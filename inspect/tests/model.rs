//! Random write sequences: `dump --json` agrees with `mmkv_reader::Store` (the reader's view of what
//! the official getters return), and the `--history` statuses agree with the write sequence.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::*;
use mmkv_reader::{FixedClock, Options, Store};

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const NOW: u32 = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Set,
    Remove,
}

#[test]
fn random_sequences_match_the_reader_and_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed);
    for case in 0..40 {
        let width = 1 + rng.below(4) as usize;
        let mut b = Builder::new(width);
        b.key_expire = rng.below(2) == 1;
        let mut ops: Vec<(String, Op, Option<u32>)> = Vec::new();
        for _ in 0..(1 + rng.below(30)) {
            let key = format!("key{}", rng.below(6));
            if rng.below(4) == 0 {
                b.remove(&key);
                ops.push((key, Op::Remove, None));
            } else {
                let mut payload = Vec::new();
                match rng.below(3) {
                    0 => varint(&mut payload, rng.next() >> rng.below(64)),
                    1 => delimited(&mut payload, format!("value {}", rng.next()).as_bytes()),
                    _ => payload.extend_from_slice(&(rng.next() as f64).to_le_bytes()),
                }
                let expire = match rng.below(4) {
                    0 => NOW - 1 - rng.below(1000) as u32,
                    1 => NOW + 1 + rng.below(1000) as u32,
                    2 => NOW,
                    _ => 0,
                };
                b.set(&key, &payload, expire);
                let e = (b.key_expire && expire != 0).then_some(expire);
                ops.push((key, Op::Set, e));
            }
        }
        let path = b.write(dir.path(), &format!("case{case}"), 4, &[]);
        let p = path.to_str().unwrap();
        let ctx = format!("case {case} (holder {width}, expire {})", b.key_expire);

        // The reader's view.
        let store = Store::open(&path, Options::new().clock(Arc::new(FixedClock(NOW)))).unwrap();
        let snap = store.snapshot();
        let want: BTreeMap<String, (String, Option<u32>)> = snap
            .entries()
            .map(|(k, v, t)| {
                (
                    String::from_utf8(k.to_vec()).unwrap(),
                    (hex(v), (t != 0).then_some(t)),
                )
            })
            .collect();

        let now = NOW.to_string();
        let d = run_json(&["dump", "--json", "--now", &now, p]);
        let got: BTreeMap<String, (String, Option<u32>)> = d["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["key"].as_str().unwrap().to_string(),
                    (
                        e["value_hex"].as_str().unwrap().to_string(),
                        e["expire_at"].as_u64().map(|t| t as u32),
                    ),
                )
            })
            .collect();
        assert_eq!(got, want, "{ctx}");

        // The statuses the sequence implies.
        let h = run_json(&["dump", "--history", "--json", "--now", &now, p]);
        let recs = h["records"].as_array().unwrap();
        assert_eq!(recs.len(), ops.len(), "{ctx}");
        for (i, (key, op, expire)) in ops.iter().enumerate() {
            let next = ops[i + 1..].iter().find(|(k, _, _)| k == key).map(|o| o.1);
            let want = match (op, next) {
                (Op::Remove, _) => "removed",
                (Op::Set, Some(Op::Set)) => "superseded",
                (Op::Set, Some(Op::Remove)) => "removed",
                (Op::Set, None) if expire.is_some_and(|t| t <= NOW) => "expired",
                (Op::Set, None) => "live",
            };
            assert_eq!(recs[i]["key"], key.as_str(), "{ctx} #{i}");
            assert_eq!(recs[i]["status"], want, "{ctx} #{i}");
        }
    }
}
