//! The shim compiled against each version's headers detects that version's C++ API; what it
//! detects must be exactly the API part of the tag's features in versions.yaml (one version
//! model: a wrong feature list, or a shim that misdetects an API, fails here).

mod common;

use common::all_built;
use mmkv_sys::versions::{embedded, Feature};

#[test]
fn shim_capabilities_equal_each_built_tags_feature_set() {
    let mut checked = 0;
    for lib in all_built() {
        let Some(entry) = embedded().get(lib.tag()) else {
            continue; // an extra tag (MMKV_EXTRA_TAGS) has no entry to agree with
        };
        let caps = lib.capabilities();
        assert_eq!(
            caps.api,
            entry.features.api(),
            "{}: the shim detected {} in the C++ API, versions.yaml lists {}",
            lib.tag(),
            caps.api,
            entry.features.api()
        );
        assert_eq!(lib.features(), entry.features);
        // The named views agree with the set.
        assert_eq!(caps.key_expire, caps.api.has(Feature::KeyExpire));
        assert_eq!(caps.aes256, caps.api.has(Feature::Aes256));
        checked += 1;
    }
    assert!(checked > 0, "no built version is listed in versions.yaml");
}
