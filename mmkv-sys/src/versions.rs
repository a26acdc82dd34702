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
        // Upstream fixes that also reached a maintenance release of an older release line
        // (v1.3.17 has `saturating_expire`, v2.0.0-v2.4.0 do not): in tag order such a feature
        // comes and goes, so it is checked within each release line, and it must have reached
        // the newest tag (a back-port comes from the newest line).
        const BACK_PORTED: &[Feature] = &[Feature::SaturatingExpire];
        for f in BACK_PORTED {
            let newest = file.versions.last().expect("entries");
            assert!(
                newest.has(*f),
                "{f} is back-ported but {} lacks it",
                newest.tag
            );
        }
        // Features never disappear once a tag introduced them (back-ported ones: once a tag
        // of the same major.minor line introduced them).
        for f in Feature::ALL {
            let line_only = BACK_PORTED.contains(f);
            for (i, older) in file.versions.iter().enumerate().filter(|(_, e)| e.has(*f)) {
                for e in &file.versions[i..] {
                    let same_line =
                        (e.tag.major, e.tag.minor) == (older.tag.major, older.tag.minor);
                    assert!(
                        e.has(*f) || line_only && !same_line,
                        "{} lacks {f} although the older {} has it",
                        e.tag,
                        older.tag
                    );
                }
            }
        }
        // Every entry is pinned to its upstream git tag.
        for e in &file.versions {
            let git = e
                .source
                .git
                .as_ref()
                .unwrap_or_else(|| panic!("{}: no git source", e.tag));
            assert_eq!(git.url, UPSTREAM_GIT_URL, "{}", e.tag);
            assert_eq!(git.tag, e.tag);
        }
    }

    #[test]
    fn every_upstream_tag_and_corpus_tag_has_an_entry() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
        let mut tags: Vec<Tag> = std::fs::read_dir(&corpus)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .filter_map(|e| Tag::parse(&e.file_name().to_string_lossy()))
            .collect();
        tags.sort();
        let listed: Vec<Tag> = embedded().versions.iter().map(|e| e.tag).collect();
        // The corpus folders are exactly versions.yaml's tags (add-version records the corpus
        // of a new tag): no count and no newest tag are pinned here, so a new release passes.
        assert_eq!(listed, tags);
        assert!(
            listed.windows(2).all(|w| w[0] < w[1]),
            "versions.yaml lists its tags oldest first, each once: {listed:?}"
        );
        // Facts about old tags: the project starts at v1.1.0 and covers v1.1.0-v2.4.2.
        assert_eq!(
            listed.first().map(Tag::to_string).as_deref(),
            Some("v1.1.0")
        );
        for old in ["v1.2.9", "v1.2.10", "v1.3.17", "v2.4.2"] {
            assert!(
                Tag::parse(old).is_some_and(|t| listed.contains(&t)),
                "{old} is missing"
            );
        }
    }
}
