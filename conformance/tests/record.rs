//! `record`: a corpus recorded with a built official version passes the golden checker, has
//! the same store set as the project's corpus for that tag, and a tampered manifest fails.

use conformance::corpus::golden::{check_corpus_dir, corpus_root, Manifest};
use conformance::record::{record_corpus, RecordSpec};
use conformance::sides::sys::{built_versions, SysLib};
use conformance::RealReader;

#[test]
fn recorded_corpus_passes_the_golden_check() {
    let tag = *built_versions().last().expect("a built version");
    let lib = SysLib::load(tag).expect("load");
    let out = tempfile::tempdir().expect("tempdir");
    let dir = out.path().join(tag);
    let spec = RecordSpec { seed: 9, keys: 48 };
    let manifest = record_corpus(&lib, tag, &dir, &spec).expect("record");

    // Same store ids as the project's corpus of that tag.
    let ours: Vec<&str> = manifest.stores.iter().map(|s| s.id.as_str()).collect();
    let theirs = Manifest::load(&corpus_root().join(tag)).expect("project corpus manifest");
    let theirs: Vec<&str> = theirs.stores.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ours, theirs);

    // The written manifest parses back to the same thing.
    assert_eq!(Manifest::load(&dir).expect("manifest parses"), manifest);

    // Non-trivial content: values, removals and (for expiring stores) expired keys.
    let plain = &manifest.stores[0];
    assert!(plain.count > 10 && !plain.absent.is_empty(), "{plain:?}");
    let expire = manifest
        .stores
        .iter()
        .find(|s| s.id == "expire")
        .expect("expire store");
    assert!(expire.entries.iter().any(|e| e.expire_at.is_some()));
    assert!(manifest
        .stores
        .iter()
        .any(|s| s.id == "empty" && s.count == 0));

    let check = check_corpus_dir(&dir, &RealReader::new()).expect("check");
    for s in &check.stores {
        assert!(s.passed(), "{}: {:?}", s.id, s.mismatches);
    }

    // Tamper with one value: the check must notice.
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let mut m: Manifest = serde_json::from_str(&text).unwrap();
    let entry = m.stores[0]
        .entries
        .iter_mut()
        .find(|e| e.ty == "bool")
        .expect("a bool entry");
    entry.value = serde_json::Value::Bool(!entry.value.as_bool().unwrap());
    std::fs::write(dir.join("manifest.json"), m.to_json_text()).unwrap();
    let check = check_corpus_dir(&dir, &RealReader::new()).expect("check");
    assert!(!check.stores[0].passed(), "tampered manifest passed");
}
