//! The readers section's input: the JSON of `conformance suite grade --json FILE` (schema 1,
//! documented in suite/README.md): per reader the cases per grade, passed/cases per class
//! and per era; per case each reader's grade and what differed. Unknown fields are ignored.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};

/// The schema version this page reads.
pub const SCHEMA: u32 = 1;

/// The grade file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Grades {
    /// Schema version (1).
    pub schema: u32,
    /// Grade names in table order (`pass`, `missing_key`, ...).
    pub grades: Vec<String>,
    /// Era names in table order.
    pub eras: Vec<String>,
    /// One row per reader.
    pub readers: Vec<ReaderRow>,
    /// One row per case.
    pub cases: Vec<CaseRow>,
    /// Wall-clock seconds of the grading.
    pub seconds: f64,
}

/// One reader's totals.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ReaderRow {
    /// Its name.
    pub name: String,
    /// Its driver command.
    pub command: String,
    /// Cases per grade.
    pub counts: BTreeMap<String, u64>,
    /// Per class: [passed, cases].
    pub by_class: BTreeMap<String, [u64; 2]>,
    /// Per era: [passed, cases].
    pub by_era: BTreeMap<String, [u64; 2]>,
}

/// One case and each reader's result.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CaseRow {
    /// Case name.
    pub name: String,
    /// Its class (`must_read`, `must_not_read`, `version_dependent`).
    pub class: String,
    /// The writing version.
    pub writer: String,
    /// Its era.
    pub era: String,
    /// What it tests.
    pub what: String,
    /// Reader name -> result.
    pub results: BTreeMap<String, CaseResult>,
}

/// One reader's result on one case.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CaseResult {
    /// The grade.
    pub grade: String,
    /// What differed.
    pub detail: String,
}

/// A case a reader does not pass.
pub struct Failing<'a> {
    /// The case.
    pub case: &'a CaseRow,
    /// The reader's result.
    pub result: &'a CaseResult,
}

/// The classes in table order.
pub const CLASSES: [&str; 3] = ["must_read", "must_not_read", "version_dependent"];

impl ReaderRow {
    /// Cases graded `grade`.
    pub fn count(&self, grade: &str) -> u64 {
        self.counts.get(grade).copied().unwrap_or(0)
    }

    /// `passed/cases` of a class, `–` when none.
    pub fn class(&self, class: &str) -> String {
        fraction(self.by_class.get(class))
    }

    /// `passed/cases` of an era, `–` when none.
    pub fn era(&self, era: &str) -> String {
        fraction(self.by_era.get(era))
    }
}

fn fraction(v: Option<&[u64; 2]>) -> String {
    v.map_or_else(|| "–".to_string(), |[p, n]| format!("{p}/{n}"))
}

impl Grades {
    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<Grades> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let g: Grades = serde_json::from_str(&text)
            .map_err(|e| Error::Other(format!("{}: not a grade file: {e}", path.display())))?;
        if g.schema != SCHEMA {
            return Err(Error::Other(format!(
                "{}: grade file schema {} (this page reads schema {SCHEMA})",
                path.display(),
                g.schema
            )));
        }
        if g.readers.is_empty() {
            return Err(Error::Other(format!(
                "{}: grades no reader",
                path.display()
            )));
        }
        Ok(g)
    }

    /// The cases `reader` does not pass.
    pub fn failing(&self, reader: &str) -> Vec<Failing<'_>> {
        self.cases
            .iter()
            .filter_map(|case| {
                let result = case.results.get(reader)?;
                (result.grade != "pass").then_some(Failing { case, result })
            })
            .collect()
    }
}
