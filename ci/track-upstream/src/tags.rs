//! Release tags (`vX.Y.Z`) and npm versions, and parsing of tag lists.

use std::collections::BTreeSet;
use std::fmt;

use crate::error::Error;

/// An upstream MMKV release tag of the strict form `vMAJOR.MINOR.PATCH` (the project's one
/// tag type, from mmkv-versions). Pre-release or otherwise decorated tags (`v1.2.3-beta`,
/// `v1.3.0.1`, `1.2.3`) are not release tags for the tracker and do not parse.
pub use mmkv_versions::Tag;

/// Extracts the release tag from one line of a tag list.
///
/// Accepted forms: a bare tag (`v2.4.2`), a ref (`refs/tags/v2.4.2`) and a
/// `git ls-remote --tags` line (`<sha>\trefs/tags/v2.4.2` or the peeled
/// `<sha>\trefs/tags/v2.4.2^{}`). Blank lines, `#` comments and anything that is not
/// a strict `vX.Y.Z` release tag give `None`.
pub fn parse_tag_line(line: &str) -> Option<Tag> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let reference = line.split_whitespace().last()?;
    let name = reference.strip_prefix("refs/tags/").unwrap_or(reference);
    let name = name.strip_suffix("^{}").unwrap_or(name);
    Tag::parse(name)
}

/// Parses a whole tag list (a file given with `--tags-from`, or `git ls-remote` output)
/// into the set of release tags it names. Peeled and unpeeled refs of a tag count once.
pub fn parse_tag_list(text: &str) -> BTreeSet<Tag> {
    text.lines().filter_map(parse_tag_line).collect()
}

/// A version of an npm package (`3.1.0`, `3.0.0-beta.5`), ordered as semver orders
/// them (a pre-release sorts before its release; build metadata is ignored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmVersion {
    /// Major version.
    pub major: u64,
    /// Minor version.
    pub minor: u64,
    /// Patch version.
    pub patch: u64,
    /// Pre-release part after `-`, if any.
    pub pre: Option<String>,
}

impl NpmVersion {
    /// Parses `X.Y.Z` with an optional `-pre` and `+build`; `None` if it is not semver.
    pub fn parse(s: &str) -> Option<NpmVersion> {
        let s = s.trim();
        let s = s.split_once('+').map_or(s, |(v, _)| v);
        let (core, pre) = match s.split_once('-') {
            Some((core, pre)) if !pre.is_empty() => (core, Some(pre.to_string())),
            Some(_) => return None,
            None => (s, None),
        };
        let mut parts = core.split('.');
        let major = parse_u64(parts.next()?)?;
        let minor = parse_u64(parts.next()?)?;
        let patch = parse_u64(parts.next()?)?;
        if parts.next().is_some() {
            return None;
        }
        Some(NpmVersion {
            major,
            minor,
            patch,
            pre,
        })
    }

    /// True for a release (no pre-release part).
    pub fn is_release(&self) -> bool {
        self.pre.is_none()
    }
}

fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl Ord for NpmVersion {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (&self.pre, &other.pre) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(_), None) => std::cmp::Ordering::Less,
                (Some(a), Some(b)) => a.cmp(b),
            })
    }
}

impl PartialOrd for NpmVersion {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for NpmVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if let Some(pre) = &self.pre {
            write!(f, "-{pre}")?;
        }
        Ok(())
    }
}

/// Splits `PACKAGE@VERSION` (scoped names like `@scope/name@1.2.3` included).
pub fn split_package_spec(spec: &str) -> Result<(String, String), Error> {
    let bad = || Error::BadPackageSpec(spec.to_string());
    let at = spec.rfind('@').ok_or_else(bad)?;
    let (package, version) = (&spec[..at], &spec[at + 1..]);
    if package.is_empty() || package == "@" || version.is_empty() {
        return Err(bad());
    }
    if NpmVersion::parse(version).is_none() {
        return Err(bad());
    }
    Ok((package.to_string(), version.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Tag {
        Tag::parse(s).expect(s)
    }

    #[test]
    fn ls_remote_lines() {
        assert_eq!(
            parse_tag_line("0123456789abcdef0123456789abcdef01234567\trefs/tags/v2.4.2^{}"),
            Some(t("v2.4.2"))
        );
        assert_eq!(
            parse_tag_line("0123456789abcdef0123456789abcdef01234567\trefs/tags/v2.4.1"),
            Some(t("v2.4.1"))
        );
        assert_eq!(parse_tag_line("refs/tags/v1.3.9"), Some(t("v1.3.9")));
        assert_eq!(parse_tag_line("  v1.3.9  "), Some(t("v1.3.9")));
        assert_eq!(parse_tag_line("# v9.9.9"), None);
        assert_eq!(parse_tag_line("abc\trefs/tags/v1.0.0-beta"), None);
        assert_eq!(parse_tag_line("abc\trefs/heads/main"), None);
        let text =
            "a\trefs/tags/v2.4.2\nb\trefs/tags/v2.4.2^{}\nc\trefs/tags/v1.0.0-rc1\n\nv2.4.1\n";
        let tags: Vec<Tag> = parse_tag_list(text).into_iter().collect();
        assert_eq!(tags, vec![t("v2.4.1"), t("v2.4.2")]);
    }

    #[test]
    fn npm_versions_order_like_semver() {
        let v = |s: &str| NpmVersion::parse(s).expect(s);
        assert!(v("3.0.0") > v("3.0.0-beta.7"));
        assert!(v("3.0.0-beta.7") > v("2.12.2"));
        assert!(v("12.0.1") > v("0.11.2"));
        assert!(v("4.0.0-beta.4").pre.is_some());
        assert!(!v("4.0.0-beta.4").is_release());
        assert_eq!(v("1.2.3+build.5"), v("1.2.3"));
        assert_eq!(NpmVersion::parse("1.2"), None);
        assert_eq!(NpmVersion::parse("1.2.3-"), None);
        assert_eq!(v("3.0.0-beta.7").to_string(), "3.0.0-beta.7");
    }

    #[test]
    fn package_specs() {
        assert_eq!(
            split_package_spec("react-native-mmkv@3.1.0").unwrap(),
            ("react-native-mmkv".to_string(), "3.1.0".to_string())
        );
        assert_eq!(
            split_package_spec("@scope/pkg@1.0.0").unwrap(),
            ("@scope/pkg".to_string(), "1.0.0".to_string())
        );
        for bad in [
            "react-native-mmkv",
            "@scope/pkg",
            "pkg@",
            "@1.0.0",
            "pkg@latest",
        ] {
            assert!(split_package_spec(bad).is_err(), "{bad}");
        }
    }
}
