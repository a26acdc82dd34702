//! The shim compiled against each version's headers detects that version's C++ API; what it
//! detects must be exactly the API part of the tag's features in versions.yaml (one version
//! model: a wrong feature list, or a shim that misdetects an API, fails here). Behaviour
//! features are checked against the built library and its sources (`saturating_expire` here,
//! the item-size holders in `multi_version.rs`).

mod common;

use common::listed_built;
use mmkv_sys::versions::{embedded, Feature};
use mmkv_sys::{Mode, Official};

#[test]
fn shim_capabilities_equal_each_built_tags_feature_set() {
    let mut checked = 0;
    for (lib, entry) in listed_built() {
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

/// `saturating_expire` is listed exactly for the tags whose `MMKV.cpp` adds expire durations
/// through `safeExpirationPlusCurrentTime`, and the built library behaves accordingly: a
/// duration near `u32::MAX` keeps the key (the sum saturates) or expires it at once (the u32
/// sum wraps to ~11 days ago). A one-year duration keeps the key in every version.
#[test]
fn saturating_expire_is_listed_where_the_library_saturates() {
    const WRAPPING: u32 = 4_294_000_000;
    const YEAR: u32 = 365 * 24 * 3600;
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for built in mmkv_sys::built() {
        let Some(entry) = embedded().get(built.tag) else {
            continue; // an extra tag (MMKV_EXTRA_TAGS) has no entry to agree with
        };
        let listed = entry.has(Feature::SaturatingExpire);
        let core = std::path::Path::new(built.core);
        let mmkv_cpp = std::fs::read_to_string(core.join("MMKV.cpp"))
            .unwrap_or_else(|e| panic!("{}: {}: {e}", built.tag, core.display()));
        assert_eq!(
            mmkv_cpp.contains("safeExpirationPlusCurrentTime("),
            listed,
            "{}: versions.yaml {} saturating_expire, its MMKV.cpp {} safeExpirationPlusCurrentTime",
            built.tag,
            if listed { "lists" } else { "does not list" },
            if listed { "does not call" } else { "calls" },
        );
        checked += 1;
        if !entry.has(Feature::KeyExpire) {
            assert!(
                !listed,
                "{}: saturating_expire without key_expire",
                built.tag
            );
            continue;
        }
        let lib = Official::load(built.tag).unwrap();
        let store = lib
            .open(
                &tmp.path().join(built.tag),
                "sum",
                Mode::Single,
                None,
                false,
            )
            .unwrap();
        assert!(store.enable_key_expire(0).unwrap());
        assert!(store.set_i32(b"year", 1, Some(YEAR)).unwrap());
        assert!(store.set_i32(b"wrapping", 2, Some(WRAPPING)).unwrap());
        assert_eq!(store.get_i32(b"year").unwrap(), Some(1), "{}", built.tag);
        assert_eq!(
            store.get_i32(b"wrapping").unwrap(),
            listed.then_some(2),
            "{}: a {WRAPPING} s duration, saturating_expire {}",
            built.tag,
            if listed { "listed" } else { "not listed" },
        );
        store.close().unwrap();
    }
    assert!(checked > 0, "no built version is listed in versions.yaml");
}
