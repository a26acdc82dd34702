//! The comparison at the heart of the tracker: which upstream tags are missing from
//! versions.yaml, where a source for them was found, and the issue text for each.

use std::collections::{BTreeMap, BTreeSet};

use crate::npm::CoreProbe;
use crate::tags::{NpmVersion, Tag};
use crate::tarball::EmbeddedCore;
use crate::versions::Known;

/// The title of the issue for `tag`. The tracker's idempotency check looks for the tag in
/// existing titles, so the tag must stay in it.
pub fn issue_title(tag: Tag) -> String {
    format!("Upstream MMKV {tag} is not in versions.yaml")
}

/// One npm package version that was probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmFinding {
    /// Package name.
    pub package: String,
    /// Package version.
    pub version: String,
    /// The Core it embeds, if any.
    pub core: Option<EmbeddedCore>,
}

impl NpmFinding {
    /// The release tag the embedded Core declares, if it is a strict `vX.Y.Z`.
    pub fn tag(&self) -> Option<Tag> {
        self.core.as_ref().and_then(|c| Tag::parse(&c.mmkv_version))
    }

    /// `package@version`.
    pub fn spec(&self) -> String {
        format!("{}@{}", self.package, self.version)
    }
}

/// The result of probing npm packages.
#[derive(Debug, Clone, Default)]
pub struct NpmScan {
    /// Every package version that was probed, per package newest first.
    pub findings: Vec<NpmFinding>,
    /// Problems that did not stop the scan (one per failed package or version).
    pub warnings: Vec<String>,
    /// How many packages could be listed at all.
    pub listed: usize,
    /// One line per probed package version, for the log.
    pub log: Vec<String>,
}

/// Probes, for each package, its newest `max_per_package` release versions newer than
/// the version versions.yaml pins for it (all versions count as newer when none is pinned).
/// Pre-release versions are skipped. Failures become warnings; the scan carries on.
pub fn scan_npm(
    probe: &dyn CoreProbe,
    known: &Known,
    packages: &[String],
    max_per_package: usize,
) -> NpmScan {
    let mut scan = NpmScan::default();
    for package in packages {
        let versions = match probe.versions(package) {
            Ok(v) => v,
            Err(e) => {
                scan.warnings
                    .push(format!("npm: cannot list versions of {package}: {e}"));
                continue;
            }
        };
        scan.listed += 1;
        let pinned = known.pinned.get(package);
        scan.log.push(format!(
            "npm: {package}: {} version(s) published, newest pinned: {}",
            versions.len(),
            pinned.map_or("none".to_string(), |p| p.to_string())
        ));
        let mut candidates: Vec<NpmVersion> = versions
            .iter()
            .filter_map(|v| NpmVersion::parse(v))
            .filter(|v| v.is_release())
            .filter(|v| pinned.is_none_or(|p| v > p))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        candidates.reverse();
        candidates.truncate(max_per_package);
        for version in candidates {
            let version = version.to_string();
            match probe.embedded_core(package, &version) {
                Ok(core) => {
                    scan.log.push(match &core {
                        Some(c) => format!(
                            "npm: {package}@{version} embeds MMKV {} ({})",
                            c.mmkv_version, c.core_path
                        ),
                        None => format!("npm: {package}@{version} embeds no MMKV/Core"),
                    });
                    scan.findings.push(NpmFinding {
                        package: package.clone(),
                        version,
                        core,
                    })
                }
                Err(e) => scan
                    .warnings
                    .push(format!("npm: cannot probe {package}@{version}: {e}")),
            }
        }
    }
    scan
}

/// Why a tag is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Newer than the newest tag in versions.yaml.
    Newer,
    /// Within the range versions.yaml covers, but not listed.
    Missing,
}

/// A tag that versions.yaml lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTag {
    /// The tag.
    pub tag: Tag,
    /// Why it is reported.
    pub reason: Reason,
    /// Whether the upstream tag list names it.
    pub in_upstream: bool,
    /// npm package versions that embed its Core, newest package version first.
    pub npm_sources: Vec<NpmFinding>,
}

/// A listed tag with `source: none` for which an npm package now embeds the Core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceHint {
    /// The tag.
    pub tag: Tag,
    /// The package version that embeds it.
    pub finding: NpmFinding,
}

/// The comparison's outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Tags to report, oldest first.
    pub new_tags: Vec<NewTag>,
    /// Source hints for listed tags without a source.
    pub hints: Vec<SourceHint>,
}

/// Compares the upstream tags and npm findings with versions.yaml.
///
/// A tag is reported when versions.yaml does not list it and it is either newer than the
/// newest listed tag, or not older than `since` (default: the oldest listed tag). Tags
/// older than that are history the project chose not to cover and are ignored.
pub fn compare(
    known: &Known,
    upstream: &BTreeSet<Tag>,
    findings: &[NpmFinding],
    since: Option<Tag>,
) -> Comparison {
    let floor = since.or(known.oldest());
    let newest = known.newest();
    let mut by_tag: BTreeMap<Tag, Vec<NpmFinding>> = BTreeMap::new();
    for finding in findings {
        if let Some(tag) = finding.tag() {
            by_tag.entry(tag).or_default().push(finding.clone());
        }
    }
    let candidates: BTreeSet<Tag> = upstream
        .iter()
        .copied()
        .chain(by_tag.keys().copied())
        .collect();
    let mut out = Comparison::default();
    for tag in candidates {
        let mut sources = by_tag.get(&tag).cloned().unwrap_or_default();
        sources.sort_by(|a, b| {
            let va = NpmVersion::parse(&a.version);
            let vb = NpmVersion::parse(&b.version);
            vb.cmp(&va).then_with(|| a.package.cmp(&b.package))
        });
        if known.tags.contains(&tag) {
            if known.without_source.contains(&tag) {
                if let Some(first) = sources.into_iter().next() {
                    out.hints.push(SourceHint {
                        tag,
                        finding: first,
                    });
                }
            }
            continue;
        }
        let reason = if newest.is_none_or(|n| tag > n) {
            Reason::Newer
        } else if floor.is_none_or(|f| tag >= f) {
            Reason::Missing
        } else {
            continue;
        };
        out.new_tags.push(NewTag {
            tag,
            reason,
            in_upstream: upstream.contains(&tag),
            npm_sources: sources,
        });
    }
    out
}

/// The body of the issue for a new tag: the tag, where a source was found, and the exact
/// steps to add it.
pub fn issue_body(new: &NewTag, known: &Known, packages_checked: &[String]) -> String {
    let tag = new.tag;
    let var = tag.core_override_var();
    let mut b = String::new();
    let why = match (new.reason, known.newest()) {
        (Reason::Newer, Some(n)) => format!("newer than the newest tag in versions.yaml ({n})"),
        (Reason::Newer, None) => "and versions.yaml lists no tag at all".to_string(),
        (Reason::Missing, _) => {
            "within the range versions.yaml covers, but not listed in it".to_string()
        }
    };
    b.push_str(&format!(
        "The upstream MMKV release tag `{tag}` is {why}. Until it is added, the differential \
         harness does not check the reader against it.\n\n"
    ));
    b.push_str("## Where it was seen\n\n");
    if new.in_upstream {
        b.push_str("- upstream git tags (`git ls-remote --tags` of Tencent/MMKV)\n");
    }
    for s in &new.npm_sources {
        let path = s.core.as_ref().map_or("?", |c| c.core_path.as_str());
        b.push_str(&format!(
            "- npm `{}` embeds it (`{path}/MMKVPredef.h` says `{tag}`)\n",
            s.spec()
        ));
    }
    b.push_str("\n## Source\n\n");
    b.push_str(&format!(
        "The upstream git tag itself: versions.yaml pins `{tag}` by the git tree hash of its \
         `Core/` directory, and mmkv-sys fetches it at build time (`MMKV_GIT_URL` points every \
         fetch at a mirror or a git bundle).\n"
    ));
    match new.npm_sources.first() {
        Some(s) => b.push_str(&format!(
            "An npm alternate was found too: `{}` (add it with `--npm`, below).\n",
            s.spec()
        )),
        None => {
            let checked = if packages_checked.is_empty() {
                "no npm package was checked".to_string()
            } else {
                format!("checked: {}", packages_checked.join(", "))
            };
            b.push_str(&format!("No npm alternate found ({checked}).\n"));
        }
    }
    b.push_str("\n## Steps to add it\n\n");
    let anchors = crate::plan::OLD_ANCHORS.join(", ");
    let newest = known.newest().map_or(tag, |n| n.max(tag));
    b.push_str(&format!(
        "From the repository root (one command):\n\n\
         ```sh\n\
         cargo run -p track-upstream -- add-version {tag}\n\
         ```\n\n\
         It\n\n\
         1. fetches `refs/tags/{tag}` (from `MMKV_GIT_URL` when set, else upstream) and checks \
         that its `Core/MMKVPredef.h` declares `{tag}`; otherwise it stops with `refs/tags/{tag} \
         of <url> embeds MMKV <declared> (MMKVPredef.h), not the requested {tag}` and changes \
         nothing (`--accept-predef <declared>` accepts a header upstream did not bump: say so \
         in a `note:`);\n\
         2. adds the `{tag}` entry to versions.yaml after the previous tag, pinned by \
         `git rev-parse {tag}:Core` as its `core_tree`, with the previous tag's `features:` \
         copied under the comment `# features copied from <previous> by add-version: review \
         them against the {tag} sources`;\n\
         3. records the golden corpus `corpus/{tag}` (official {tag} writing every store kind) \
         if it is missing;\n\
         4. runs `MMKV_VERSIONS={tag} cargo test -p mmkv-sys` and \
         `MMKV_VERSIONS={tag},<anchors> cargo test -p conformance` (the anchors are the \
         versions its tests compare with: {anchors} and {newest}).\n\n\
         ## What to review\n\n\
         The entry's `features:` (the one thing copied, not verified): compare them with the \
         release notes and the `{tag}` sources. A new on-disk format feature needs reader \
         support and a new `Feature` in `versions/`; `mmkv-sys/tests/capabilities.rs` fails \
         when an API feature or `saturating_expire` is wrong. Then delete the comment and \
         commit `versions.yaml` and `corpus/{tag}`: nothing else is edited. CI's matrix comes \
         from versions.yaml (`track-upstream plan-slices`), so the next run builds `{tag}`, \
         and `MMKV_VERSIONS={tag} cargo run --release -p conformance -- report --only {tag}` \
         shows its row (`live`, every kind of the tag `pass`).\n\n"
    ));
    if let Some(s) = new.npm_sources.first() {
        b.push_str(&format!(
            "To record the npm alternate as well (its sha512 integrity and the tree hash of the \
             Core it ships, compared with the tag's):\n\n\
             ```sh\n\
             cargo run -p track-upstream -- add-version {tag} --npm {spec} --no-test\n\
             ```\n\n",
            spec = s.spec()
        ));
    }
    b.push_str(&format!(
        "For an unreleased commit (no tag to fetch), point the build at a local Core:\n\n\
         ```sh\n\
         cargo run -p track-upstream -- add-version {tag} --core-dir /path/to/MMKV/Core\n\
         ```\n\n\
         This checks `MMKVPredef.h`, adds the entry with `source: none`, records `corpus/{tag}` \
         with `{var}=/path/to/MMKV/Core` and runs the tests for `{tag}`.\n\n\
         _Opened by the scheduled upstream tracker (`ci/track-upstream`)._\n"
    ));
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::versions::{VersionsFile, VersionsFileExt};
    use std::path::Path;

    fn t(s: &str) -> Tag {
        Tag::parse(s).unwrap()
    }

    fn known() -> Known {
        VersionsFile::parse(
            "versions:\n\
             - {tag: v1.2.10, source: none}\n\
             - {tag: v1.2.12, source: none}\n\
             - tag: v2.0.0\n  source: {npm: {package: p, version: 3.1.0, integrity: x, path: package/MMKV/Core}}\n",
            Path::new("k"),
        )
        .unwrap()
        .known()
    }

    fn finding(package: &str, version: &str, mmkv: Option<&str>) -> NpmFinding {
        NpmFinding {
            package: package.into(),
            version: version.into(),
            core: mmkv.map(|m| EmbeddedCore {
                mmkv_version: m.into(),
                core_path: "package/MMKV/Core".into(),
            }),
        }
    }

    #[test]
    fn reports_newer_and_gaps_but_not_history() {
        let upstream: BTreeSet<Tag> = [
            "v1.0.0", "v1.2.10", "v1.2.11", "v1.2.12", "v2.0.0", "v2.0.1",
        ]
        .iter()
        .map(|s| t(s))
        .collect();
        let c = compare(&known(), &upstream, &[], None);
        let got: Vec<(Tag, Reason)> = c.new_tags.iter().map(|n| (n.tag, n.reason)).collect();
        assert_eq!(
            got,
            vec![
                (t("v1.2.11"), Reason::Missing),
                (t("v2.0.1"), Reason::Newer)
            ]
        );
        let with_since = compare(&known(), &upstream, &[], Some(t("v1.0.0")));
        assert_eq!(with_since.new_tags.len(), 3);
        assert_eq!(with_since.new_tags[0].tag, t("v1.0.0"));
    }

    #[test]
    fn npm_findings_add_tags_and_hints() {
        let findings = vec![
            finding("p", "3.2.0", Some("v2.1.0")),
            finding("q", "1.0.0", Some("v2.1.0")),
            finding("p", "4.0.0", None),
            finding("q", "0.9.0", Some("v1.2.12")),
            finding("q", "0.8.0", Some("not-a-tag")),
        ];
        let c = compare(&known(), &BTreeSet::new(), &findings, None);
        assert_eq!(c.new_tags.len(), 1);
        let n = &c.new_tags[0];
        assert_eq!(n.tag, t("v2.1.0"));
        assert!(!n.in_upstream);
        let specs: Vec<String> = n.npm_sources.iter().map(NpmFinding::spec).collect();
        assert_eq!(specs, vec!["p@3.2.0", "q@1.0.0"]);
        assert_eq!(c.hints.len(), 1);
        assert_eq!(c.hints[0].tag, t("v1.2.12"));
        assert_eq!(c.hints[0].finding.spec(), "q@0.9.0");
    }

    #[test]
    fn issue_text_names_tag_source_and_steps() {
        let new = NewTag {
            tag: t("v2.4.3"),
            reason: Reason::Newer,
            in_upstream: true,
            npm_sources: vec![finding("react-native-mmkv", "3.4.0", Some("v2.4.3"))],
        };
        assert_eq!(
            issue_title(new.tag),
            "Upstream MMKV v2.4.3 is not in versions.yaml"
        );
        let body = issue_body(&new, &known(), &["react-native-mmkv".into()]);
        assert!(body.contains("newer than the newest tag in versions.yaml (v2.0.0)"));
        assert!(body.contains("An npm alternate was found too: `react-native-mmkv@3.4.0`"));
        assert!(
            body.contains("add-version v2.4.3\n```"),
            "the git source is the default"
        );
        assert!(body.contains("core_tree"));
        assert!(body.contains("not the requested v2.4.3"));
        assert!(body.contains("features copied from <previous> by add-version: review"));
        assert!(body.contains("MMKV_VERSIONS=v2.4.3,<anchors> cargo test -p conformance"));
        assert!(body.contains("v1.2.15, v1.3.9, v2.3.0 and v2.4.3"));
        assert!(body.contains("## What to review"));
        assert!(body.contains("add-version v2.4.3 --npm react-native-mmkv@3.4.0"));
        assert!(body.contains("MMKV_CORE_V2_4_3=/path/to/MMKV/Core"));

        let none = NewTag {
            npm_sources: vec![],
            ..new
        };
        let body = issue_body(&none, &known(), &["a".into(), "b".into()]);
        assert!(body.contains("No npm alternate found (checked: a, b)"));
        assert!(!body.contains("--npm "));
        assert!(body.contains("add-version v2.4.3 --core-dir"));
    }
}
