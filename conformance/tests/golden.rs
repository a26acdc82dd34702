//! Golden corpora: every store of every tag in `corpus/` passes through the reader against its
//! manifest (values by their type's getter, expire times, absent keys for every getter, key set,
//! count). Tags with no reachable official sources are covered by this test alone.

use conformance::corpus::golden::{check_corpus_dir, corpus_root, corpus_tags};
use conformance::RealReader;

#[test]
fn every_corpus_store_matches_its_manifest() {
    let root = corpus_root();
    let tags = corpus_tags(&root).expect("corpus folder readable");
    assert!(
        tags.len() >= 50,
        "expected the 50 corpus tags in {}, found {}",
        root.display(),
        tags.len()
    );
    let reader = RealReader::new();
    let mut stores = 0;
    let mut failures = Vec::new();
    for tag in &tags {
        let check = check_corpus_dir(&root.join(tag), &reader).expect("manifest loads");
        for store in &check.stores {
            stores += 1;
            if !store.passed() {
                failures.push(format!(
                    "{tag}/{}: {} mismatch(es), first: {}",
                    store.id,
                    store.mismatches.len(),
                    store.mismatches[0]
                ));
            }
        }
    }
    eprintln!("golden: {} tags, {stores} stores checked", tags.len());
    assert!(stores >= 472, "only {stores} stores found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
