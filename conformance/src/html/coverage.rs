//! The page's coverage section: per version the line, branch and function coverage of the
//! official Core, each file's, and the functions never executed, from the JSON a
//! `conformance coverage` run writes ([`crate::coverage::summary`]). Without it the section
//! says the coverage was not measured.

use std::path::Path;

use crate::coverage::gcovr::{Counts, Function, Tally};
use crate::coverage::summary::Summary;
use crate::Result;

/// What the section shows.
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageView {
    /// What the coverage run ran, one line per path.
    pub paths: Vec<String>,
    /// Each measured version.
    pub versions: Vec<VersionCoverage>,
}

/// One version.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionCoverage {
    /// The tag.
    pub tag: String,
    /// All of Core.
    pub all: Figures,
    /// Per file.
    pub files: Vec<(String, Figures)>,
    /// The functions never executed.
    pub unreached: Vec<Function>,
}

/// Lines, branches and functions as `72.7% (3392/4667)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// Lines.
    pub lines: String,
    /// Branches.
    pub branches: String,
    /// Functions.
    pub functions: String,
}

impl Figures {
    fn of(t: &Tally) -> Figures {
        let text = |c: Counts| c.to_string();
        Figures {
            lines: text(t.lines),
            branches: text(t.branches),
            functions: text(t.functions),
        }
    }
}

impl CoverageView {
    /// The section of a coverage run.
    pub fn new(s: &Summary) -> CoverageView {
        CoverageView {
            paths: s.paths.clone(),
            versions: s
                .versions
                .iter()
                .map(|c| VersionCoverage {
                    tag: c.tag.clone(),
                    all: Figures::of(&c.all),
                    files: c
                        .files
                        .iter()
                        .map(|f| (f.file.clone(), Figures::of(&f.tally)))
                        .collect(),
                    unreached: c.unreached.clone(),
                })
                .collect(),
        }
    }

    /// Reads a coverage run's JSON (`OUT/coverage-summary.json`).
    pub fn load(path: &Path) -> Result<CoverageView> {
        Ok(CoverageView::new(&Summary::load(path)?))
    }
}
