//! Stress: the official library (newest built version, MULTI_PROCESS) performs a deterministic
//! sequence of at least 100,000 operations in a child process (`conformance writer --plan
//! stress`): sets of
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

use conformance::writer::{Plan, WriterSpec};
use robust::{env_or, run, Spec};

const KEYS: usize = 64;

#[test]
fn official_writer_under_four_readers() {
    let ops = env_or("MMKV_STRESS_OPS", 100_000);
    let seed = env_or("MMKV_STRESS_SEED", 1) as u64;
    let spec = Spec {
        writer: WriterSpec {
            seed,
            ..WriterSpec::new(Plan::Stress, ops, KEYS)
        },
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

/// The checks above can fail: a value with one byte changed, a value of another key, a
/// truncated value, a value no operation wrote, and a snapshot mixing two moments are all
/// rejected.
#[test]
fn checker_rejects_bad_observations() {
    use conformance::differential::workload::{Key, Op};
    use conformance::vocab::key_name;
    use conformance::vocab::value::{Value, ValueType};
    use conformance::writer::model::Model;
    use conformance::writer::value::stamp;
    let set = |k: usize, seq: usize, size: usize| Op::Set {
        key: Key(key_name(k).into_bytes()),
        value: stamp(k, seq, ValueType::Bytes, size),
        expire: None,
    };
    let ops = vec![
        set(0, 0, 40),
        set(1, 1, 40),
        set(0, 2, 50),
        Op::Remove {
            key: Key(key_name(1).into_bytes()),
        },
        Op::ClearAll,
    ];
    let m = Model::new(ops, 2);
    let v = |seq: usize, size: usize| Some(stamp(0, seq, ValueType::Bytes, size));
    assert_eq!(m.windows(0, &v(0, 40)), Ok(vec![(1, 3)]));
    let Some(Value::Bytes(good)) = v(2, 50) else {
        unreachable!()
    };
    let mut torn = good.clone();
    torn[20] ^= 1;
    assert!(m.windows(0, &Some(Value::Bytes(torn))).is_err(), "torn");
    assert!(
        m.windows(0, &Some(Value::Bytes(good[..49].to_vec())))
            .is_err(),
        "truncated"
    );
    assert!(m.windows(1, &v(2, 50)).is_err(), "another key's value");
    assert!(m.windows(0, &v(1, 40)).is_err(), "op 1 did not set key 0");
    assert!(m.windows(0, &v(0, 41)).is_err(), "not what op 0 wrote");
    // Key 0 holds op 0's value for prefixes [1, 3); key 1 holds op 1's for [2, 4).
    let one = Some(stamp(1, 1, ValueType::Bytes, 40));
    assert_eq!(
        m.check_snapshot(&[(0, v(0, 40)), (1, one.clone())], 0),
        Ok(2)
    );
    // Op 2's value of key 0 ([3, 5)) with key 1 absent: only from prefix 4 on.
    assert_eq!(m.check_snapshot(&[(0, v(2, 50)), (1, None)], 0), Ok(4));
    // Op 0's value of key 0 ([1, 3)) with key 1 absent after its set ([4, ..)): mixed.
    assert!(m.check_snapshot(&[(0, v(0, 40)), (1, None)], 2).is_err());
    // Going back: key 1's value after a floor past its removal.
    assert!(m.check_snapshot(&[(1, one)], 4).is_err());
    assert_eq!(m.final_value(0), None);
}
