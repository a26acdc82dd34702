//! Every value type of the reader's table (`mmkv_reader::decode::ValueType::ALL`) through every
//! conversion of the harness: the reader's `Value` into the harness's, the manifest encoding,
//! the fault suite's child protocol and both workload generators. The conversions match on the
//! types without wildcard arms, so a new type does not compile until each handles it; this
//! test fails until each handles it right.

use std::collections::{BTreeMap, BTreeSet};

use conformance::corpus::golden::{Entry, TypedEntry};
use conformance::sides::reads::{read_payload, Reads};
use conformance::vocab::value::{Value, ValueType};
use conformance::vocab::SplitMix;
use mmkv_reader::test_support::{encode_value, sample_values};

#[test]
fn every_type_through_every_conversion() {
    let mut reads = Vec::new();
    for ty in ValueType::ALL {
        for sample in sample_values(ty) {
            let value = Value::from(sample.clone());
            assert_eq!(value.value_type(), ty, "{value}");
            // The reader's decoders, as the fault suite and `mmkv dump` read payloads.
            assert_eq!(
                read_payload(&encode_value(&sample), ty),
                Some(value.clone())
            );
            // The corpus manifest encoding.
            let entry = Entry::from_value("k", &value, None);
            assert_eq!(entry.value_type(), Ok(ty));
            assert_eq!(entry.typed_value(), Ok(value.clone()), "{ty}");
            reads.push((ty, value));
        }
        // The seeded values of the fault writer and the corpus recorder.
        let mut rng = SplitMix::new(ty as u64);
        for size in [0, 17, 4096] {
            let written = conformance::writer::value::seeded(&mut rng, ty, size);
            assert_eq!(written.value_type(), ty);
        }
    }
    // The fault suite's one-line child protocol: one key per sample, read as its own type.
    let getters: Vec<ValueType> = reads.iter().map(|(t, _)| *t).collect();
    let mut keys = BTreeMap::new();
    for (i, (_, v)) in reads.iter().enumerate() {
        let mut row = vec![None; getters.len()];
        row[i] = Some(v.clone());
        keys.insert(format!("k{i}").into_bytes(), row);
    }
    let all = Reads { getters, keys };
    assert_eq!(Reads::decode(&all.encode()), Some(all.clone()));
    let types: BTreeSet<ValueType> = all.getters.iter().copied().collect();
    assert_eq!(types.len(), ValueType::ALL.len());
}
