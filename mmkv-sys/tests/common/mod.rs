//! Helpers shared by the integration tests.
#![allow(dead_code)]

use mmkv_sys::versions::{embedded, VersionEntry};
use mmkv_sys::{Instance, Official};

/// What `MMKV_VERSION` says for a tag (the v1.2.3 and v2.1.1 tags report an older string,
/// v1.1.0 and v1.1.1 declare none).
pub fn expected_version(tag: &str) -> &str {
    match tag {
        "v1.1.0" | "v1.1.1" => "",
        "v1.2.3" => "v1.2.2",
        "v2.1.1" => "v2.1.0",
        t => t,
    }
}

/// Every built version, loaded.
pub fn all_built() -> Vec<Official> {
    let tags = mmkv_sys::built_versions();
    assert!(
        !tags.is_empty(),
        "mmkv-sys was built without any version (MMKV_VERSIONS=none?)"
    );
    tags.iter()
        .map(|t| Official::load(t).unwrap_or_else(|e| panic!("load {t}: {e}")))
        .collect()
}

/// Every built version with its versions.yaml entry; an extra tag (MMKV_EXTRA_TAGS) has no
/// entry to agree with and is left out.
pub fn listed_built() -> Vec<(Official, &'static VersionEntry)> {
    all_built()
        .into_iter()
        .filter_map(|lib| {
            let entry = embedded().get(lib.tag())?;
            Some((lib, entry))
        })
        .collect()
}

/// True when `r` is the shim's refusal of a call the version lacks.
pub fn unsupported<T: std::fmt::Debug>(r: &mmkv_sys::Result<T>) -> bool {
    matches!(r, Err(mmkv_sys::Error::Unsupported { .. }))
}

/// One value of every kind a version supports, written under `prefix`-named keys.
pub struct Sample;

impl Sample {
    pub const STRINGS: [&'static str; 3] = ["", "hello", "日本語 🎉"];

    /// Writes every value kind the version supports (expire: the duration to pass, if any).
    pub fn write(store: &Instance, prefix: &str, expire: Option<u32>) {
        let k = |name: &str| format!("{prefix}{name}").into_bytes();
        let ok = |r: mmkv_sys::Result<bool>, what: &str| {
            assert!(
                r.unwrap_or_else(|e| panic!("{} {what}: {e}", store.tag())),
                "{} {what} returned false",
                store.tag()
            )
        };
        ok(store.set_bool(&k("bool"), true, expire), "set_bool");
        ok(store.set_i32(&k("i32"), -123_456, expire), "set_i32");
        ok(store.set_i32(&k("i32min"), i32::MIN, expire), "set_i32 min");
        ok(store.set_u32(&k("u32"), u32::MAX, expire), "set_u32");
        ok(store.set_i64(&k("i64"), i64::MIN, expire), "set_i64");
        ok(store.set_u64(&k("u64"), u64::MAX, expire), "set_u64");
        ok(store.set_f32(&k("f32"), -1.5e-3, expire), "set_f32");
        ok(
            store.set_f64(&k("f64"), std::f64::consts::PI, expire),
            "set_f64",
        );
        ok(
            store.set_string(&k("string"), "hello, mmkv", expire),
            "set_string",
        );
        ok(
            store.set_bytes(&k("bytes"), &[0u8, 1, 2, 255, 254], expire),
            "set_bytes",
        );
        ok(
            store.set_string_vec(&k("strings"), &Self::STRINGS, expire),
            "set_string_vec",
        );
        if store_caps(store).typed_vectors {
            ok(
                store.set_vec_bool(&k("vbool"), &[true, false, true], expire),
                "set_vec_bool",
            );
            ok(
                store.set_vec_i32(&k("vi32"), &[i32::MIN, -1, 0, 1, i32::MAX], expire),
                "set_vec_i32",
            );
            ok(
                store.set_vec_u32(&k("vu32"), &[0, 7, u32::MAX], expire),
                "set_vec_u32",
            );
            ok(
                store.set_vec_i64(&k("vi64"), &[i64::MIN, 0, i64::MAX], expire),
                "set_vec_i64",
            );
            ok(
                store.set_vec_u64(&k("vu64"), &[0, u64::MAX], expire),
                "set_vec_u64",
            );
            ok(
                store.set_vec_f32(&k("vf32"), &[0.5, -0.0, f32::INFINITY], expire),
                "set_vec_f32",
            );
            ok(
                store.set_vec_f64(&k("vf64"), &[1e300, -2.25, f64::MIN_POSITIVE], expire),
                "set_vec_f64",
            );
        }
    }

    /// Reads back what `write` wrote through the official getters.
    pub fn check(store: &Instance, prefix: &str) {
        let k = |name: &str| format!("{prefix}{name}").into_bytes();
        let tag = store.tag().to_string();
        let ctx = |what: &str| format!("{tag} {prefix}{what}");
        assert_eq!(
            store.get_bool(&k("bool")).unwrap(),
            Some(true),
            "{}",
            ctx("bool")
        );
        assert_eq!(
            store.get_i32(&k("i32")).unwrap(),
            Some(-123_456),
            "{}",
            ctx("i32")
        );
        assert_eq!(
            store.get_i32(&k("i32min")).unwrap(),
            Some(i32::MIN),
            "{}",
            ctx("i32min")
        );
        assert_eq!(
            store.get_u32(&k("u32")).unwrap(),
            Some(u32::MAX),
            "{}",
            ctx("u32")
        );
        assert_eq!(
            store.get_i64(&k("i64")).unwrap(),
            Some(i64::MIN),
            "{}",
            ctx("i64")
        );
        assert_eq!(
            store.get_u64(&k("u64")).unwrap(),
            Some(u64::MAX),
            "{}",
            ctx("u64")
        );
        assert_eq!(
            store.get_f32(&k("f32")).unwrap().map(f32::to_bits),
            Some((-1.5e-3f32).to_bits()),
            "{}",
            ctx("f32")
        );
        assert_eq!(
            store.get_f64(&k("f64")).unwrap(),
            Some(std::f64::consts::PI),
            "{}",
            ctx("f64")
        );
        assert_eq!(
            store.get_string(&k("string")).unwrap().as_deref(),
            Some(&b"hello, mmkv"[..]),
            "{}",
            ctx("string")
        );
        assert_eq!(
            store.get_bytes(&k("bytes")).unwrap().as_deref(),
            Some(&[0u8, 1, 2, 255, 254][..]),
            "{}",
            ctx("bytes")
        );
        let strings: Vec<Vec<u8>> = Self::STRINGS
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(
            store.get_string_vec(&k("strings")).unwrap(),
            Some(strings),
            "{}",
            ctx("strings")
        );
        if store_caps(store).typed_vectors {
            assert_eq!(
                store.get_vec_bool(&k("vbool")).unwrap(),
                Some(vec![true, false, true]),
                "{}",
                ctx("vbool")
            );
            assert_eq!(
                store.get_vec_i32(&k("vi32")).unwrap(),
                Some(vec![i32::MIN, -1, 0, 1, i32::MAX]),
                "{}",
                ctx("vi32")
            );
            assert_eq!(
                store.get_vec_u32(&k("vu32")).unwrap(),
                Some(vec![0, 7, u32::MAX]),
                "{}",
                ctx("vu32")
            );
            assert_eq!(
                store.get_vec_i64(&k("vi64")).unwrap(),
                Some(vec![i64::MIN, 0, i64::MAX]),
                "{}",
                ctx("vi64")
            );
            assert_eq!(
                store.get_vec_u64(&k("vu64")).unwrap(),
                Some(vec![0, u64::MAX]),
                "{}",
                ctx("vu64")
            );
            let f32s: Vec<u32> = store
                .get_vec_f32(&k("vf32"))
                .unwrap()
                .unwrap()
                .iter()
                .map(|f| f.to_bits())
                .collect();
            assert_eq!(
                f32s,
                vec![
                    0.5f32.to_bits(),
                    (-0.0f32).to_bits(),
                    f32::INFINITY.to_bits()
                ],
                "{}",
                ctx("vf32")
            );
            assert_eq!(
                store.get_vec_f64(&k("vf64")).unwrap(),
                Some(vec![1e300, -2.25, f64::MIN_POSITIVE]),
                "{}",
                ctx("vf64")
            );
        }
    }

    /// Number of keys `write` creates for this version.
    pub fn key_count(store: &Instance) -> u64 {
        if store_caps(store).typed_vectors {
            18
        } else {
            11
        }
    }
}

fn store_caps(store: &Instance) -> mmkv_sys::Capabilities {
    Official::load(store.tag()).expect("loaded").capabilities()
}
