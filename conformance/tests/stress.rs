//! Stress: the official library (newest built version, MULTI_PROCESS) performs a deterministic
//! sequence of at least 100,000 operations in a child process (`robust-writer stress`): sets of
//! small and large self-checking values (large ones force full write-backs and file growth),
//! removes, trims and clearAll, while 4 reader threads in this process read continuously with
//! `mmkv_reader::Store` (check-on-read snapshots, copy getters, explicit refresh).
//!
//! Checked: every observed value is byte for byte one the writer wrote for that key (zero torn
//! values); every snapshot is explained by one prefix of the operations, never older than the
//! thread's previous one; no crash; after the writer exits, the reader's state equals both the
//! state the operation sequence implies and what the writer read back through the official API.
//!
//! `MMKV_STRESS_OPS` (default 100000) and `MMKV_STRESS_SEED` (default 1) change the run;
//! `MMKV_ROBUST_TAG` picks another built official version for the writer.

mod robust;

use robust::workload::stress_ops;
use robust::{env_or, run, Spec};

const KEYS: usize = 64;

#[test]
fn official_writer_under_four_readers() {
    let ops = env_or("MMKV_STRESS_OPS", 100_000);
    let seed = env_or("MMKV_STRESS_SEED", 1) as u64;
    let spec = Spec {
        workload: "stress",
        args: vec![
            "--ops".into(),
            ops.to_string(),
            "--seed".into(),
            seed.to_string(),
        ],
        ops: stress_ops(seed, ops, KEYS),
        keys: KEYS,
        readers: 4,
    };
    let o = run(&spec);
    eprintln!("stress: {o:#?}");
    assert!(o.writer.ops >= 100_000 || ops < 100_000);
    assert!(
        o.snapshots > 0 && o.values_checked > 0,
        "readers read nothing"
    );
    assert!(
        o.writer.seq_end > o.writer.seq_start,
        "the workload caused no full write-back"
    );
    assert!(
        o.writer.file_shrinks > 0,
        "the workload never shrank the file"
    );
}

/// The checks above can fail: a value with one byte changed, a value of another key, a value
/// no operation wrote, and a snapshot mixing two moments are all rejected.
#[test]
fn checker_rejects_bad_observations() {
    use robust::workload::{check_value, make_value, History, Op};
    let v = make_value(3, 17, 300);
    assert_eq!(check_value(3, &v), Ok((17, 300)));
    let mut torn = v.clone();
    torn[150] ^= 1;
    assert!(check_value(3, &torn).is_err());
    assert!(check_value(4, &v).is_err());
    assert!(check_value(3, &v[..299]).is_err());
    let ops = [
        Op::Set { key: 0, len: 40 },
        Op::Set { key: 1, len: 40 },
        Op::Set { key: 0, len: 50 },
        Op::Remove { key: 1 },
        Op::ClearAll,
    ];
    let h = History::new(&ops, 2);
    assert_eq!(h.written(0, 0), Some(40));
    assert_eq!(h.written(0, 1), None);
    // Key 0 holds op 0's value for prefixes [1, 3); key 1 holds op 1's for [2, 4).
    assert_eq!(h.holds(0, 0), (1, 3));
    assert_eq!(h.holds(1, 1), (2, 4));
    // Op 2's value of key 0 ([3, 5)) and key 1 absent: only from prefix 4 on.
    assert!(!h.absent_within(1, 3, 4));
    assert!(h.absent_within(1, 3, 5));
    assert!(h.final_state().is_empty());
}
