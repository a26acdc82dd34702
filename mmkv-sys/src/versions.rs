//! The parsed `versions.yaml` (repository root): every official MMKV tag the project knows,
//! what it brings, and where its Core sources come from.
//!
//! The schema and parsing live in the `mmkv-versions` crate (shared with build.rs and the
//! upstream tracker) and are re-exported here; this module adds the file compiled into the crate.

pub use mmkv_versions::*;

/// The repository's `versions.yaml` as compiled into this crate.
///
/// # Panics
/// Never at run time for a built crate: build.rs refuses to build with an invalid file.
pub fn embedded() -> &'static VersionsFile {
    static FILE: std::sync::OnceLock<VersionsFile> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        parse_versions(include_str!("../../versions.yaml"))
            .expect("versions.yaml was validated by build.rs")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn embedded_file_is_consistent() {
        let file = embedded();
        let known: Vec<&str> = KNOWN_FEATURES.iter().map(|(f, _)| *f).collect();
        let mut last = 0;
        for e in &file.versions {
            let n = tag_number(&e.tag).unwrap();
            assert!(n > last, "{} out of order", e.tag);
            last = n;
            for f in &e.features {
                assert!(
                    known.contains(&f.as_str()),
                    "{}: unknown feature {f}",
                    e.tag
                );
            }
        }
        // Format/API features never disappear once a tag introduced them (const_crypt_key is the
        // exception: v1.3.14 on the 1.3 branch has it, v2.0.0 does not).
        for (f, _) in KNOWN_FEATURES
            .iter()
            .filter(|(f, _)| *f != "const_crypt_key")
        {
            let first = file.versions.iter().position(|e| e.has_feature(f));
            if let Some(first) = first {
                for e in &file.versions[first..] {
                    assert!(
                        e.has_feature(f),
                        "{} lacks {f} although an older tag has it",
                        e.tag
                    );
                }
            }
        }
    }

    #[test]
    fn every_corpus_tag_from_v1_2_10_has_an_entry() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
        let mut tags: Vec<String> = std::fs::read_dir(&corpus)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|t| tag_number(t).is_some_and(|n| n >= 10210))
            .collect();
        tags.sort_by_key(|t| tag_number(t));
        let listed: Vec<String> = embedded().versions.iter().map(|e| e.tag.clone()).collect();
        assert_eq!(listed, tags);
    }
}
