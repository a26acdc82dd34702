//! Upstream release tags (`vMAJOR.MINOR.PATCH`), ordered by version.

use std::fmt;
use std::str::FromStr;

/// An upstream MMKV release tag of the strict form `vMAJOR.MINOR.PATCH`, ordered by version
/// (`v1.2.10 > v1.2.9`).
///
/// Decorated tags (`v1.2.3-beta`, `v1.3.0.1`, `1.2.3`) do not parse with [`Tag::parse`];
/// [`Tag::release_of`] reads the release part of a `-suffix`ed name (unreleased builds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tag {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch version.
    pub patch: u32,
}

/// A name that is not a `vMAJOR.MINOR.PATCH` tag.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad tag `{0}` (expected vMAJOR.MINOR.PATCH)")]
pub struct BadTag(pub String);

fn number(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 2 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl Tag {
    /// Parses a strict `vX.Y.Z` tag (each part 0–99); `None` for anything else.
    pub fn parse(s: &str) -> Option<Tag> {
        let mut parts = s.strip_prefix('v')?.split('.');
        let major = number(parts.next()?)?;
        let minor = number(parts.next()?)?;
        let patch = number(parts.next()?)?;
        if parts.next().is_some() {
            return None;
        }
        Some(Tag {
            major,
            minor,
            patch,
        })
    }

    /// The release part of `vX.Y.Z` or `vX.Y.Z-suffix` / `vX.Y.Z+suffix` (an unreleased
    /// build named after the release it precedes or follows).
    pub fn release_of(s: &str) -> Option<Tag> {
        Tag::parse(s.split(['-', '+']).next()?)
    }

    /// `MAJOR*10000 + MINOR*100 + PATCH`, the number the shim is compiled with
    /// (`MMKV_SHIM_VERSION`).
    pub fn number(self) -> u32 {
        self.major * 10000 + self.minor * 100 + self.patch
    }

    /// The name of the variable that overrides this tag's Core sources (`MMKV_CORE_V2_0_0`).
    pub fn core_override_var(self) -> String {
        crate::override_var(&self.to_string())
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl FromStr for Tag {
    type Err = BadTag;

    fn from_str(s: &str) -> Result<Tag, BadTag> {
        Tag::parse(s).ok_or_else(|| BadTag(s.to_string()))
    }
}

impl TryFrom<String> for Tag {
    type Error = BadTag;

    fn try_from(s: String) -> Result<Tag, BadTag> {
        s.parse()
    }
}

impl From<Tag> for String {
    fn from(t: Tag) -> String {
        t.to_string()
    }
}

impl PartialEq<str> for Tag {
    fn eq(&self, other: &str) -> bool {
        Tag::parse(other) == Some(*self)
    }
}

impl PartialEq<&str> for Tag {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

impl serde::Serialize for Tag {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Tag {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Tag, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Tag {
        Tag::parse(s).expect(s)
    }

    #[test]
    fn strict_tags_only_and_version_order() {
        assert_eq!(
            Tag::parse("v2.4.2"),
            Some(Tag {
                major: 2,
                minor: 4,
                patch: 2
            })
        );
        for bad in [
            "2.4.2",
            "v2.4",
            "v2.4.2.1",
            "v2.4.2-beta",
            "v2.x.1",
            "v",
            "",
            "v2..1",
            "v+1.2.3",
            "v1.2.300",
        ] {
            assert_eq!(Tag::parse(bad), None, "{bad}");
        }
        assert!(t("v1.2.10") > t("v1.2.9"));
        assert!(t("v2.0.0") > t("v1.3.17"));
        assert_eq!(t("v1.2.10").to_string(), "v1.2.10");
        assert_eq!(t("v1.3.14").number(), 10314);
        assert_eq!(Tag::release_of("v2.4.3-dev"), Some(t("v2.4.3")));
        assert_eq!(t("v2.0.0").core_override_var(), "MMKV_CORE_V2_0_0");
        assert!("nope".parse::<Tag>().is_err());
        assert!(t("v2.1.0") == "v2.1.0" && t("v2.1.0") != "v2.1.1");
        let yaml: Vec<Tag> = serde_norway::from_str("[v1.2.3, \"v2.0.0\"]").unwrap();
        assert_eq!(yaml, [t("v1.2.3"), t("v2.0.0")]);
        assert!(serde_norway::from_str::<Tag>("v1.2").is_err());
    }
}
