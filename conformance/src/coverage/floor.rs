//! The pinned coverage figures (conformance/coverage-floor.yaml): per version, the line,
//! branch and function percentages of Core that `conformance coverage --check-floor` must
//! reach.

use std::path::Path;

use serde::Deserialize;

use super::checked;
pub use super::checked::Check;
use crate::Result;

/// One version's pinned figures.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Floor {
    /// The tag.
    pub version: String,
    /// Lowest line coverage, percent.
    pub lines: f64,
    /// Lowest branch coverage, percent.
    pub branches: f64,
    /// Lowest function coverage, percent.
    pub functions: f64,
}

/// One version's measured figures, percent.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// The tag.
    pub version: String,
    /// Line coverage.
    pub lines: f64,
    /// Branch coverage.
    pub branches: f64,
    /// Function coverage.
    pub functions: f64,
}

/// Parses a floor file: a YAML list of [`Floor`]s, each version once, each figure a
/// percentage.
pub fn parse(text: &str) -> std::result::Result<Vec<Floor>, String> {
    let floors: Vec<Floor> = serde_norway::from_str(text).map_err(|e| e.to_string())?;
    for (i, f) in floors.iter().enumerate() {
        for (what, v) in [
            ("lines", f.lines),
            ("branches", f.branches),
            ("functions", f.functions),
        ] {
            if !(0.0..=100.0).contains(&v) {
                return Err(format!("{}: {what} {v} is not a percentage", f.version));
            }
        }
        if floors[..i].iter().any(|g| g.version == f.version) {
            return Err(format!("{} is listed twice", f.version));
        }
    }
    Ok(floors)
}

/// Reads and parses a floor file.
pub fn load(path: &Path) -> Result<Vec<Floor>> {
    checked::load(path, parse)
}

/// Compares each measured version with its floor (versions without one are named, not failed).
pub fn check(floors: &[Floor], measured: &[Figures]) -> Check {
    checked::each(
        measured,
        |m| m.version.as_str(),
        |tag| floors.iter().find(|f| f.version == tag),
        "floor",
        |f, m| {
            let mut below = Vec::new();
            for (what, got, floor) in [
                ("lines", m.lines, f.lines),
                ("branches", m.branches, f.branches),
                ("functions", m.functions, f.functions),
            ] {
                if got < floor {
                    below.push(format!("{what} {got:.2}% < floor {floor:.2}%"));
                }
            }
            if below.is_empty() {
                let line = format!(
                    "{}: lines {:.2}% >= {:.2}%, branches {:.2}% >= {:.2}%, functions {:.2}% >= {:.2}%",
                    m.version, m.lines, f.lines, m.branches, f.branches, m.functions, f.functions
                );
                (vec![line], true)
            } else {
                let line = format!("{}: BELOW FLOOR: {}", m.version, below.join(", "));
                (vec![line], false)
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(version: &str, lines: f64, branches: f64) -> Figures {
        Figures {
            version: version.into(),
            lines,
            branches,
            functions: 80.0,
        }
    }

    const FILE: &str = "- version: v2.4.2\n  lines: 75.0\n  branches: 47.0\n  functions: 78.0\n";

    #[test]
    fn at_or_above_the_floor_passes() {
        let floors = parse(FILE).unwrap();
        assert!(check(&floors, &[figures("v2.4.2", 75.0, 47.0)]).passed);
        assert!(check(&floors, &[figures("v2.4.2", 91.0, 80.0)]).passed);
    }

    #[test]
    fn below_either_figure_fails_and_says_which() {
        let floors = parse(FILE).unwrap();
        let c = check(&floors, &[figures("v2.4.2", 74.99, 60.0)]);
        assert!(!c.passed);
        assert!(c.lines[0].contains("lines 74.99% < floor 75.00%"), "{c:?}");
        assert!(!c.lines[0].contains("branches"), "{c:?}");
        let c = check(&floors, &[figures("v2.4.2", 80.0, 46.0)]);
        assert!(!c.passed);
        assert!(
            c.lines[0].contains("branches 46.00% < floor 47.00%"),
            "{c:?}"
        );
        let c = check(
            &floors,
            &[Figures {
                functions: 77.9,
                ..figures("v2.4.2", 80.0, 50.0)
            }],
        );
        assert!(!c.passed);
        assert!(
            c.lines[0].contains("BELOW FLOOR: functions 77.90% < floor 78.00%"),
            "{c:?}"
        );
    }

    #[test]
    fn the_checked_in_floor_fails_a_figure_just_below_it() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("coverage-floor.yaml");
        let floors = load(&path).unwrap();
        let f = floors.iter().find(|f| f.version == "v2.4.2").unwrap();
        let at = Figures {
            version: f.version.clone(),
            lines: f.lines,
            branches: f.branches,
            functions: f.functions,
        };
        assert!(check(&floors, std::slice::from_ref(&at)).passed);
        let below = Figures {
            lines: f.lines - 0.01,
            ..at
        };
        assert!(!check(&floors, &[below]).passed);
    }

    #[test]
    fn a_version_without_floor_is_named_and_a_check_of_nothing_fails() {
        let floors = parse(FILE).unwrap();
        let c = check(
            &floors,
            &[figures("v1.2.16", 10.0, 5.0), figures("v2.4.2", 76.0, 48.0)],
        );
        assert!(c.passed, "{c:?}");
        assert_eq!(c.lines[0], "v1.2.16: no floor");
        let c = check(&floors, &[figures("v1.2.16", 99.0, 99.0)]);
        assert!(!c.passed, "{c:?}");
    }

    #[test]
    fn bad_files_are_refused() {
        assert!(parse("- version: v2.4.2\n  lines: 175\n  branches: 4\n  functions: 3\n").is_err());
        assert!(parse("- version: v2.4.2\n  lines: 75\n  branches: 4\n").is_err());
        assert!(parse(&format!("{FILE}  calls: 3\n")).is_err());
        assert!(parse(&format!("{FILE}{FILE}")).is_err());
    }
}
