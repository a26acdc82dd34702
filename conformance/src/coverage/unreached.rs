//! The explained list of Core's unreached functions (conformance/coverage-unreached.yaml):
//! per version, every function of Core (without `cbridge/`) that a coverage run never
//! executes, each with why ([`Class`]). `conformance coverage --check-unreached FILE` fails
//! when a listed function is reached (remove it: the list only shrinks by being right) or
//! when an unreached function is not listed (a path was lost, or a new function is not
//! explained); `--write-unreached FILE` writes the list from the measurement, keeping the
//! reasons of the functions still unreached and marking new ones `unclassified` (which the
//! check refuses until a reason is given).
//!
//! Functions are matched by file and name (the line moves with unrelated edits upstream).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::checked;
pub use super::checked::Check;
use super::gcovr::Coverage;
use crate::{Error, Result};

/// Why a function is never executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Code for a platform this harness does not run on, or for a configuration it cannot
    /// have on Linux (Apple, Android, Win32, OHOS; ashmem and other `MMKV_ANDROID` paths).
    PlatformOnly,
    /// Logging and its handler hooks (log levels, log redirection).
    Logging,
    /// Assertion or error-report helpers reached only when an invariant breaks.
    Assert,
    /// Out-of-memory and failed-allocation paths.
    OutOfMemory,
    /// Reached only when the disk fails a read or write (`EIO` and the like), which the
    /// temporary stores on tmpfs never do.
    IoError,
    /// Nothing in Core calls it on any platform (dead code, or only `cbridge/`).
    Unused,
    /// API or behaviour the harness does not drive yet: an op #36 still has to add.
    NotYetReached,
    /// Written by `--write-unreached` for a function the list did not name: classify it.
    Unclassified,
}

impl Class {
    /// Every class, in the file's order.
    pub const ALL: [Class; 8] = [
        Class::PlatformOnly,
        Class::Logging,
        Class::Assert,
        Class::OutOfMemory,
        Class::IoError,
        Class::Unused,
        Class::NotYetReached,
        Class::Unclassified,
    ];

    /// Its spelling in the file.
    pub fn id(self) -> &'static str {
        match self {
            Class::PlatformOnly => "platform-only",
            Class::Logging => "logging",
            Class::Assert => "assert",
            Class::OutOfMemory => "out-of-memory",
            Class::IoError => "io-error",
            Class::Unused => "unused",
            Class::NotYetReached => "not-yet-reached",
            Class::Unclassified => "unclassified",
        }
    }
}

/// One explained function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explained {
    /// Its file, relative to Core.
    pub file: String,
    /// Its name as the coverage run prints it.
    pub name: String,
    /// Why it is unreached.
    pub class: Class,
    /// The reason in words (what it does, what would reach it).
    pub why: String,
}

/// One version's list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionList {
    /// The tag.
    pub version: String,
    /// Its unreached functions.
    pub functions: Vec<Explained>,
}

/// Parses the file: a YAML list of [`VersionList`]s, each version once, each function once.
pub fn parse(text: &str) -> std::result::Result<Vec<VersionList>, String> {
    let lists: Vec<VersionList> = serde_norway::from_str(text).map_err(|e| e.to_string())?;
    for (i, l) in lists.iter().enumerate() {
        if lists[..i].iter().any(|m| m.version == l.version) {
            return Err(format!("{} is listed twice", l.version));
        }
        for (j, f) in l.functions.iter().enumerate() {
            if l.functions[..j]
                .iter()
                .any(|g| (&g.file, &g.name) == (&f.file, &f.name))
            {
                return Err(format!(
                    "{}: {} {} is listed twice",
                    l.version, f.file, f.name
                ));
            }
        }
    }
    Ok(lists)
}

/// Reads and parses the file.
pub fn load(path: &Path) -> Result<Vec<VersionList>> {
    checked::load(path, parse)
}

/// Compares each measured version's unreached functions with its list (versions without a
/// list are named, not failed; a check of nothing fails).
pub fn check(lists: &[VersionList], measured: &[Coverage]) -> Check {
    checked::each(
        measured,
        |m| m.tag.as_str(),
        |tag| lists.iter().find(|l| l.version == tag),
        "list",
        |list, m| {
            let mut problems = Vec::new();
            for f in &m.unreached {
                match list
                    .functions
                    .iter()
                    .find(|e| (&e.file, &e.name) == (&f.file, &f.name))
                {
                    None => problems.push(format!(
                        "NOT LISTED (unreached, unexplained): {}:{} {}",
                        f.file, f.line, f.name
                    )),
                    Some(e) if e.class == Class::Unclassified => {
                        problems.push(format!("UNCLASSIFIED: {}:{} {}", f.file, f.line, f.name))
                    }
                    Some(_) => {}
                }
            }
            for e in &list.functions {
                if !m
                    .unreached
                    .iter()
                    .any(|f| (&e.file, &e.name) == (&f.file, &f.name))
                {
                    problems.push(format!(
                        "REACHED (remove it from the list): {} {} ({})",
                        e.file,
                        e.name,
                        e.class.id()
                    ));
                }
            }
            let mut per_class: BTreeMap<Class, usize> = BTreeMap::new();
            for e in &list.functions {
                *per_class.entry(e.class).or_default() += 1;
            }
            let classes: Vec<String> = per_class
                .iter()
                .map(|(c, n)| format!("{} {n}", c.id()))
                .collect();
            let summary = format!(
                "{}: {} unreached, {} listed ({}): {}",
                m.tag,
                m.unreached.len(),
                list.functions.len(),
                classes.join(", "),
                if problems.is_empty() {
                    "every one explained".to_string()
                } else {
                    format!("{} problem(s)", problems.len())
                }
            );
            let passed = problems.is_empty();
            let mut lines = vec![summary];
            lines.extend(problems.into_iter().map(|p| format!("  {p}")));
            (lines, passed)
        },
    )
}

/// The list after a measurement: each measured version's unreached functions, in its order,
/// with the reasons `old` gives them for that version, else the reason `old` gives the same
/// file and name in another version (a version measured for the first time starts from what
/// is already explained; review what it took), else `unclassified`. Versions not measured are
/// kept as they were, and every version keeps its place in the file (a version new to it
/// comes last): a rewrite for v2.4.2 leaves the blocks of the eras measured by hand as they are.
pub fn regenerate(old: &[VersionList], measured: &[Coverage]) -> Vec<VersionList> {
    let mut out: Vec<VersionList> = old.to_vec();
    for m in measured {
        let before = old.iter().find(|l| l.version == m.tag);
        let functions = m
            .unreached
            .iter()
            .map(|f| {
                let same = |l: &VersionList| {
                    l.functions
                        .iter()
                        .find(|e| (&e.file, &e.name) == (&f.file, &f.name))
                        .cloned()
                };
                let classified =
                    |l: &VersionList| same(l).filter(|e| e.class != Class::Unclassified);
                before
                    .and_then(same)
                    .or_else(|| {
                        old.iter()
                            .filter(|l| l.version != m.tag)
                            .find_map(classified)
                    })
                    .unwrap_or_else(|| Explained {
                        file: f.file.clone(),
                        name: f.name.clone(),
                        class: Class::Unclassified,
                        why: "new in this measurement: classify it".into(),
                    })
            })
            .collect();
        let list = VersionList {
            version: m.tag.clone(),
            functions,
        };
        match out.iter_mut().find(|l| l.version == m.tag) {
            Some(place) => *place = list,
            None => out.push(list),
        }
    }
    out
}

/// The file's header: what it is, the classes, the command that rewrites it.
const HEADER: &str = "\
# Every function of official Core (without cbridge/) that `conformance coverage` never executes,
# per version, each with why (conformance/README.md, \"Coverage\"). Checked by
# `conformance coverage --check-unreached conformance/coverage-unreached.yaml` (.ci/run, for
# v2.4.2): a listed function that is reached, or an unreached one not listed (or unclassified),
# fails. Classes: platform-only (Apple, Android, Win32, OHOS code), logging (and the handler
# hooks), assert, out-of-memory, io-error (a failing disk), unused (no caller in Core),
# not-yet-reached (an op #36 still has to add), unclassified (new: classify it).
# Rewrite it after new ops land (reasons of the functions still unreached are kept, reached
# ones drop out, new ones take the reason another version's list gives the same function, or
# come in unclassified):
#   MMKV_SYS_COVERAGE=1 MMKV_VERSIONS=v2.4.2 CARGO_TARGET_DIR=target-cov \\
#     cargo run --release -p conformance -- coverage --only v2.4.2 --cases 2 \\
#     --write-unreached conformance/coverage-unreached.yaml
# (with CONFORMANCE_SEED=1 CONFORMANCE_FAULT_STATES=60 CONFORMANCE_POWERLOSS_STATES=60, as the
# gate runs it). The v1.2.16 and v1.3.17 blocks are measured by hand, not by the gate
# (conformance/README.md, \"Coverage\", says how and when); a rewrite for v2.4.2 keeps them.
";

/// `s` as a YAML double-quoted scalar (a JSON string is one).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

/// The file's text for `lists` (the [`HEADER`], then each version's functions).
pub fn render(lists: &[VersionList]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(HEADER);
    for l in lists {
        let _ = writeln!(s, "- version: {}", l.version);
        if l.functions.is_empty() {
            let _ = writeln!(s, "  functions: []");
            continue;
        }
        let _ = writeln!(s, "  functions:");
        for f in &l.functions {
            let _ = writeln!(s, "  - file: {}", quoted(&f.file));
            let _ = writeln!(s, "    name: {}", quoted(&f.name));
            let _ = writeln!(s, "    class: {}", f.class.id());
            let _ = writeln!(s, "    why: {}", quoted(&f.why));
        }
    }
    s
}

/// Writes `lists` to `path`.
pub fn write(path: &Path, lists: &[VersionList]) -> Result<()> {
    std::fs::write(path, render(lists)).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::gcovr::{Function, Tally};

    fn measured(tag: &str, names: &[&str]) -> Coverage {
        Coverage {
            tag: tag.into(),
            all: Tally::default(),
            files: Vec::new(),
            unreached: names
                .iter()
                .enumerate()
                .map(|(i, n)| Function {
                    file: "MMKV.cpp".into(),
                    line: 10 + i as u64,
                    name: (*n).into(),
                })
                .collect(),
        }
    }

    const FILE: &str = r#"
- version: v2.4.2
  functions:
  - file: MMKV.cpp
    name: "mmkv::MMKV::lock()"
    class: not-yet-reached
    why: "no op locks"
  - file: MMKV.cpp
    name: "mmkv::MMKV::importFrom(mmkv::MMKV*)"
    class: not-yet-reached
    why: "no op imports"
"#;

    #[test]
    fn every_unreached_function_explained_passes() {
        let lists = parse(FILE).unwrap();
        let m = measured(
            "v2.4.2",
            &["mmkv::MMKV::importFrom(mmkv::MMKV*)", "mmkv::MMKV::lock()"],
        );
        let c = check(&lists, &[m]);
        assert!(c.passed, "{c:?}");
        assert!(c.lines[0].contains("not-yet-reached 2"), "{c:?}");
    }

    #[test]
    fn a_listed_function_that_is_reached_fails() {
        let lists = parse(FILE).unwrap();
        let c = check(&lists, &[measured("v2.4.2", &["mmkv::MMKV::lock()"])]);
        assert!(!c.passed);
        assert!(
            c.lines.iter().any(|l| l.contains("REACHED")
                && l.contains("importFrom")
                && l.contains("not-yet-reached")),
            "{c:?}"
        );
    }

    #[test]
    fn an_unreached_function_missing_from_the_list_fails() {
        let lists = parse(FILE).unwrap();
        let m = measured(
            "v2.4.2",
            &[
                "mmkv::MMKV::importFrom(mmkv::MMKV*)",
                "mmkv::MMKV::lock()",
                "mmkv::MMKV::unlock()",
            ],
        );
        let c = check(&lists, &[m]);
        assert!(!c.passed);
        assert!(
            c.lines
                .iter()
                .any(|l| l.contains("NOT LISTED") && l.contains("MMKV.cpp:12 mmkv::MMKV::unlock()")),
            "{c:?}"
        );
    }

    #[test]
    fn unclassified_fails_and_nothing_checked_fails() {
        let text = FILE.replacen("class: not-yet-reached", "class: unclassified", 1);
        let lists = parse(&text).unwrap();
        let m = measured(
            "v2.4.2",
            &["mmkv::MMKV::importFrom(mmkv::MMKV*)", "mmkv::MMKV::lock()"],
        );
        let c = check(&lists, std::slice::from_ref(&m));
        assert!(!c.passed);
        assert!(c.lines.iter().any(|l| l.contains("UNCLASSIFIED")), "{c:?}");
        let c = check(&parse(FILE).unwrap(), &[measured("v1.3.17", &[])]);
        assert!(!c.passed, "{c:?}");
        assert_eq!(c.lines[0], "v1.3.17: no list");
    }

    #[test]
    fn regenerating_keeps_reasons_drops_reached_and_adds_unclassified() {
        let old = parse(FILE).unwrap();
        let m = measured("v2.4.2", &["mmkv::MMKV::lock()", "mmkv::MMKV::unlock()"]);
        let new = regenerate(&old, std::slice::from_ref(&m));
        assert_eq!(new.len(), 1);
        let f = &new[0].functions;
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].class, f[0].why.as_str()),
            (Class::NotYetReached, "no op locks")
        );
        assert_eq!(f[1].class, Class::Unclassified);
        // What it writes reads back as it was, and names every class the enum has.
        let text = render(&new);
        assert_eq!(parse(&text).unwrap(), new);
        for c in Class::ALL {
            assert!(HEADER.contains(c.id()), "{}", c.id());
        }
        assert!(
            !check(&new, &[m]).passed,
            "an unclassified entry must not pass"
        );
    }

    #[test]
    fn a_new_version_takes_the_reasons_of_another() {
        let old = parse(FILE).unwrap();
        let m = measured("v1.3.17", &["mmkv::MMKV::lock()", "mmkv::MMKV::unlock()"]);
        let new = regenerate(&old, std::slice::from_ref(&m));
        assert_eq!(new.len(), 2, "the v2.4.2 list is kept beside the new one");
        let f = &new
            .iter()
            .find(|l| l.version == "v1.3.17")
            .unwrap()
            .functions;
        assert_eq!(
            (f[0].class, f[0].why.as_str()),
            (Class::NotYetReached, "no op locks")
        );
        assert_eq!(f[1].class, Class::Unclassified);
    }

    #[test]
    fn rewriting_one_version_keeps_the_other_blocks_where_they_are() {
        let era = r#"
- version: v1.2.16
  functions:
  - file: MMKV.cpp
    name: "mmkv::MMKV::unlock()"
    class: not-yet-reached
    why: "not drawn"
"#;
        let old = parse(&format!("{FILE}{}", &era[1..])).unwrap();
        let m = measured("v2.4.2", &["mmkv::MMKV::lock()"]);
        let new = regenerate(&old, std::slice::from_ref(&m));
        let versions: Vec<&str> = new.iter().map(|l| l.version.as_str()).collect();
        assert_eq!(
            versions,
            ["v2.4.2", "v1.2.16"],
            "each block keeps its place"
        );
        assert_eq!(new[1], old[1], "the block not measured is kept as it was");
        assert_eq!(new[0].functions.len(), 1);
        // A check of v2.4.2 alone is not disturbed by the other version's block.
        let c = check(&new, &[m]);
        assert!(c.passed, "{c:?}");
        assert_eq!(c.lines.len(), 1, "{c:?}");
        // A version new to the file comes last.
        let new = regenerate(&old, &[measured("v1.3.17", &[])]);
        let versions: Vec<&str> = new.iter().map(|l| l.version.as_str()).collect();
        assert_eq!(versions, ["v2.4.2", "v1.2.16", "v1.3.17"]);
    }

    #[test]
    fn bad_files_are_refused() {
        assert!(parse(&format!("{FILE}{}", &FILE[1..])).is_err());
        assert!(parse(&FILE.replace("not-yet-reached", "nobody-cares")).is_err());
        let twice = FILE.replace("importFrom(mmkv::MMKV*)", "lock()");
        assert!(parse(&twice).unwrap_err().contains("twice"));
    }

    #[test]
    fn the_checked_in_list_reads_and_every_entry_is_classified() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("coverage-unreached.yaml");
        let lists = load(&path).unwrap();
        assert!(lists.iter().any(|l| l.version == "v2.4.2"), "{lists:?}");
        // As `--write-unreached` writes it: a rewrite for one version changes only its block.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            render(&lists) == text,
            "not as render() writes it:\n{}",
            render(&lists)
        );
        for l in &lists {
            for f in &l.functions {
                assert_ne!(f.class, Class::Unclassified, "{}: {f:?}", l.version);
                assert!(!f.why.trim().is_empty(), "{}: {f:?}", l.version);
            }
        }
    }
}
