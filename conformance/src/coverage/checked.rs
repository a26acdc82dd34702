//! What the two checked-in coverage files (the floor, the explained unreached list) share:
//! reading one, with its path in every error, and checking each measured version against its
//! entry, where a version without an entry is named and a check of nothing fails.

use std::path::Path;

use crate::{Error, Result};

/// What a check found: lines to print, and whether it passed.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// One or more lines per measured version, then any closing line.
    pub lines: Vec<String>,
    /// Every checked version passed, and at least one version was checked (a check that
    /// compared nothing has not passed).
    pub passed: bool,
}

/// Reads the file at `path` and parses it with `parse`; errors name the file.
pub fn load<T>(
    path: &Path,
    parse: impl FnOnce(&str) -> std::result::Result<T, String>,
) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse(&text).map_err(|e| Error::Other(format!("{}: {e}", path.display())))
}

/// Checks each measured version against its entry: `entry_of(tag)` finds it, and
/// `one(entry, measured)` gives the version's lines and whether it passed. `what` names the
/// entry in the lines for versions without one ("floor", "list").
pub fn each<'e, E: 'e, M>(
    measured: &[M],
    tag_of: impl Fn(&M) -> &str,
    entry_of: impl Fn(&str) -> Option<&'e E>,
    what: &str,
    mut one: impl FnMut(&E, &M) -> (Vec<String>, bool),
) -> Check {
    let mut lines = Vec::new();
    let mut passed = true;
    let mut checked = 0;
    for m in measured {
        let tag = tag_of(m);
        let Some(entry) = entry_of(tag) else {
            lines.push(format!("{tag}: no {what}"));
            continue;
        };
        checked += 1;
        let (more, ok) = one(entry, m);
        lines.extend(more);
        passed &= ok;
    }
    if checked == 0 {
        passed = false;
        lines.push(format!(
            "no measured version has a {what}: nothing was checked"
        ));
    }
    Check { lines, passed }
}
