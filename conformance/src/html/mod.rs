//! The report as a static web page (`conformance report --html DIR`).
//!
//! One self-contained `index.html` (CSS, JavaScript and the SVG chart inline; nothing is fetched
//! at view time, which its Content-Security-Policy also enforces) plus a copy of the report's
//! JSON. It reads without JavaScript: every matrix cell is a link to its detail, shown with the
//! CSS `:target` rule (one click from a red cell to its replay command); the script only adds
//! filtering. Sections: the matrix, versions, accepted differences, faults, readers ([`grades`]),
//! speed ([`speed`]) and the official Core's coverage ([`coverage`]).
//!
//! The page is rendered by askama templates (`conformance/templates/`), which escape every
//! value they print: store-derived text (keys in failure messages) renders as text.

pub mod coverage;
pub mod grades;
mod page;
pub mod speed;

use std::path::{Path, PathBuf};

use askama::Template as _;

use crate::error::{Error, Result};
use crate::report::Report;

pub use page::Page;

/// What the page shows besides the report.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// The readers' grade table (`conformance suite grade` JSON), if given.
    pub grades: Option<grades::Grades>,
    /// The speedup table.
    pub speed: Option<speed::Speed>,
    /// Why the speed section is empty, when it is.
    pub speed_missing: Option<String>,
    /// The official Core's coverage (`conformance coverage`'s summary JSON), if given.
    pub coverage: Option<coverage::CoverageView>,
}

impl Inputs {
    /// Reads the grade file and the coverage summary (each an error when given but
    /// unreadable) and the speed data: the criterion directory `speed` when given (an error
    /// when it holds no estimate), else the speedup table checked in to the repository
    /// (absent: the section says so).
    pub fn load(
        grades: Option<&Path>,
        speed: Option<&Path>,
        coverage: Option<&Path>,
    ) -> Result<Inputs> {
        let grades = grades.map(grades::Grades::load).transpose()?;
        let coverage = coverage.map(coverage::CoverageView::load).transpose()?;
        let (speed, speed_missing) = match speed {
            Some(dir) => (Some(speed::Speed::from_criterion(dir)?), None),
            None => match speed::Speed::checked_in(&workspace_root()) {
                Ok(s) => (Some(s), None),
                Err(why) => (None, Some(why)),
            },
        };
        Ok(Inputs {
            grades,
            speed,
            speed_missing,
            coverage,
        })
    }
}

/// The workspace root (where the README and docs/ are).
fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// The page as HTML text.
pub fn render(report: &Report, inputs: &Inputs) -> Result<String> {
    Page::new(report, inputs)
        .render()
        .map_err(|e| Error::Other(format!("rendering the page: {e}")))
}

/// Writes `dir/index.html` and `dir/report.json` (creating `dir`); returns the page's path.
pub fn write_site(dir: &Path, report: &Report, inputs: &Inputs) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let index = dir.join("index.html");
    std::fs::write(&index, render(report, inputs)?).map_err(|e| Error::io(&index, e))?;
    let json = dir.join("report.json");
    std::fs::write(&json, report.to_json() + "\n").map_err(|e| Error::io(&json, e))?;
    Ok(index)
}
