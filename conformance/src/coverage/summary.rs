//! The JSON a coverage run leaves for the dashboard (`OUT/coverage-summary.json`, schema
//! [`SCHEMA`]): per version the totals, each file's figures and the unreached functions, and
//! what each path ran. `conformance report --html DIR --coverage FILE` (and `merge`) shows it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::gcovr::Coverage;
use crate::{Error, Result};

/// The schema id of the file.
pub const SCHEMA: &str = "conformance-coverage/1";

/// The file's name in a coverage run's output folder.
pub const FILE_NAME: &str = "coverage-summary.json";

/// One coverage run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// [`SCHEMA`].
    pub schema: String,
    /// What ran, one line per path (`workloads: 82 property workloads`, ...).
    pub paths: Vec<String>,
    /// Each measured version.
    pub versions: Vec<Coverage>,
}

impl Summary {
    /// A summary of `versions`, measured under `paths`.
    pub fn new(paths: Vec<String>, versions: Vec<Coverage>) -> Summary {
        Summary {
            schema: SCHEMA.into(),
            paths,
            versions,
        }
    }

    /// Parses the file (refusing another schema).
    pub fn parse(text: &str) -> std::result::Result<Summary, String> {
        let s: Summary = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if s.schema != SCHEMA {
            return Err(format!("schema {:?}, expected {SCHEMA:?}", s.schema));
        }
        Ok(s)
    }

    /// Reads the file.
    pub fn load(path: &Path) -> Result<Summary> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Summary::parse(&text).map_err(|e| Error::Other(format!("{}: {e}", path.display())))
    }

    /// Writes it as pretty JSON.
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::Other(format!("coverage summary: {e}")))?;
        std::fs::write(path, text + "\n").map_err(|e| Error::io(path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::gcovr::{Counts, FileTally, Function, Tally};

    fn sample() -> Summary {
        let t = Tally {
            lines: Counts {
                covered: 3,
                total: 4,
            },
            ..Tally::default()
        };
        Summary::new(
            vec!["workloads: 2 property workloads".into()],
            vec![Coverage {
                tag: "v2.4.2".into(),
                all: t.clone(),
                files: vec![FileTally {
                    file: "MMKV.cpp".into(),
                    tally: t,
                }],
                unreached: vec![Function {
                    file: "MMKV.cpp".into(),
                    line: 9,
                    name: "mmkv::MMKV::lock()".into(),
                }],
            }],
        )
    }

    #[test]
    fn written_and_read_back() {
        let s = sample();
        let text = serde_json::to_string(&s).unwrap();
        assert!(
            text.contains(r#""file":"MMKV.cpp","lines":{"covered":3"#),
            "{text}"
        );
        assert_eq!(Summary::parse(&text).unwrap(), s);
    }

    #[test]
    fn another_schema_is_refused() {
        let text = serde_json::to_string(&sample())
            .unwrap()
            .replace(SCHEMA, "conformance-coverage/0");
        assert!(Summary::parse(&text).unwrap_err().contains("schema"));
    }
}
