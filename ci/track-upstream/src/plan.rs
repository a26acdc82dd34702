//! Which official versions a CI job or an `add-version` test run builds, derived from
//! versions.yaml: its tags cut into slices (`plan-slices`, the CI matrix), each slice built
//! together with the anchors.
//!
//! The anchors are the versions that the conformance tests need next to any slice: one version
//! of each older era whose writer keeps its process lock (v1.2.15, v1.3.9: the live-writer test
//! follows a writer of every era; v1.3.9 also adds in u32 for key expiration, which the breakage
//! tests need), and two AES-256 versions (the first one, v2.3.0, and the newest entry), so every
//! store kind runs on at least two built versions (the differential and migration tests refuse a
//! kind that ran on none). The old ones are facts about old tags; the newest is read from the file.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::tags::Tag;
use crate::versions::VersionsFile;

/// Old tags built next to every slice (see the module docs); the newest entry is added to them.
pub const OLD_ANCHORS: [&str; 3] = ["v1.2.15", "v1.3.9", "v2.3.0"];

/// The anchors of `file`: [`OLD_ANCHORS`] (each must be listed) and its newest tag.
pub fn anchors(file: &VersionsFile) -> Result<Vec<Tag>> {
    let mut tags = Vec::new();
    for name in OLD_ANCHORS {
        let tag = Tag::parse(name).ok_or_else(|| Error::Plan(format!("bad anchor {name}")))?;
        if file.entry(tag).is_none() {
            return Err(Error::Plan(format!(
                "anchor {tag} is not in versions.yaml (see track-upstream's plan module)"
            )));
        }
        tags.push(tag);
    }
    if let Some(newest) = file.versions.iter().map(|e| e.tag).max() {
        tags.push(newest);
    }
    tags.sort();
    tags.dedup();
    Ok(tags)
}

/// `tags` followed by the anchors it lacks, comma-separated: an `MMKV_VERSIONS` value.
pub fn with_anchors(tags: &[Tag], anchors: &[Tag]) -> String {
    let mut all: Vec<Tag> = tags.to_vec();
    all.extend(anchors.iter().filter(|a| !tags.contains(a)));
    join(&all)
}

/// One CI job's share of the versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Slice {
    /// `first-last` tag of the slice (the job and artifact name).
    pub name: String,
    /// The slice's tags, comma-separated: what its report covers (`report --only`).
    pub tags: String,
    /// The slice plus the anchors, comma-separated: what the job builds (`MMKV_VERSIONS`).
    pub versions: String,
}

/// Cuts `file`'s tags (oldest first) into `count` contiguous slices whose sizes differ by at
/// most one (fewer when there are fewer tags); every tag is in exactly one slice.
pub fn plan_slices(file: &VersionsFile, count: usize) -> Result<Vec<Slice>> {
    if count == 0 {
        return Err(Error::Plan("--slices must be at least 1".into()));
    }
    let mut tags: Vec<Tag> = file.versions.iter().map(|e| e.tag).collect();
    tags.sort();
    let anchors = anchors(file)?;
    let count = count.min(tags.len());
    let mut slices = Vec::with_capacity(count);
    let mut start = 0;
    for i in 0..count {
        let len = tags.len() / count + usize::from(i < tags.len() % count);
        let part = &tags[start..start + len];
        start += len;
        slices.push(Slice {
            name: format!("{}-{}", part[0], part[part.len() - 1]),
            tags: join(part),
            versions: with_anchors(part, &anchors),
        });
    }
    Ok(slices)
}

fn join(tags: &[Tag]) -> String {
    tags.iter()
        .map(Tag::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::versions::VersionsFileExt;
    use std::path::Path;

    fn file(tags: &[&str]) -> VersionsFile {
        let mut text = String::from("versions:\n");
        for t in tags {
            text.push_str(&format!("  - tag: {t}\n    source: none\n"));
        }
        VersionsFile::parse(&text, Path::new("test.yaml")).unwrap()
    }

    fn names(slices: &[Slice]) -> Vec<&str> {
        slices.iter().map(|s| s.name.as_str()).collect()
    }

    const TAGS: [&str; 8] = [
        "v1.2.15", "v1.3.9", "v2.0.0", "v2.1.0", "v2.2.0", "v2.3.0", "v2.4.0", "v2.4.2",
    ];

    #[test]
    fn every_tag_is_in_one_slice_and_a_new_entry_joins_the_last() {
        let slices = plan_slices(&file(&TAGS), 3).unwrap();
        assert_eq!(
            names(&slices),
            ["v1.2.15-v2.0.0", "v2.1.0-v2.3.0", "v2.4.0-v2.4.2"]
        );
        assert_eq!(slices[0].tags, "v1.2.15,v1.3.9,v2.0.0");
        assert_eq!(slices[0].versions, "v1.2.15,v1.3.9,v2.0.0,v2.3.0,v2.4.2");
        assert_eq!(slices[2].versions, "v2.4.0,v2.4.2,v1.2.15,v1.3.9,v2.3.0");

        // A new release is planned with no other edit: it is in a slice, and it is the newest
        // anchor of every slice.
        let mut grown = TAGS.to_vec();
        grown.push("v2.5.0");
        let slices = plan_slices(&file(&grown), 3).unwrap();
        let all: Vec<&str> = slices.iter().flat_map(|s| s.tags.split(',')).collect();
        assert_eq!(all, grown);
        assert_eq!(names(&slices)[2], "v2.4.0-v2.5.0");
        for s in &slices {
            assert!(s.versions.split(',').any(|t| t == "v2.5.0"), "{s:?}");
            assert!(!s.versions.split(',').any(|t| t == "v2.4.2") || s.tags.contains("v2.4.2"));
        }
    }

    #[test]
    fn more_slices_than_tags_and_zero_slices() {
        let slices = plan_slices(&file(&TAGS), 20).unwrap();
        assert_eq!(slices.len(), TAGS.len());
        assert!(plan_slices(&file(&TAGS), 0).is_err());
    }

    #[test]
    fn a_missing_anchor_is_an_error() {
        let err = plan_slices(&file(&["v1.2.15", "v2.4.2"]), 1).unwrap_err();
        assert!(err.to_string().contains("v1.3.9"), "{err}");
    }

    #[test]
    fn the_project_file_plans_every_entry() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../versions.yaml");
        let file = VersionsFile::load(&path).unwrap();
        let slices = plan_slices(&file, 5).unwrap();
        let planned: Vec<String> = slices
            .iter()
            .flat_map(|s| s.tags.split(',').map(String::from))
            .collect();
        let listed: Vec<String> = file.versions.iter().map(|e| e.tag.to_string()).collect();
        assert_eq!(planned, listed);
        let sizes: Vec<usize> = slices.iter().map(|s| s.tags.split(',').count()).collect();
        assert!(
            sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
            "{sizes:?}"
        );
    }
}
