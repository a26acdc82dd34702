//! Running the command line clients (`npm`, `gh`) the tracker drives.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// Runs `program args...` (in `cwd` if given, stdin closed) and returns its standard output;
/// a failure to start, a non-zero exit (with the trimmed stderr) or non-UTF-8 output is an
/// [`Error::Command`] / [`Error::Output`] naming the command line.
pub(crate) fn run(program: &str, args: &[&str], cwd: Option<&Path>) -> Result<String> {
    let shown = format!("{program} {}", args.join(" "));
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let out = cmd.output().map_err(|e| Error::Command {
        command: shown.clone(),
        message: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(Error::Command {
            command: shown,
            message: format!(
                "{}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    String::from_utf8(out.stdout).map_err(|e| Error::Output {
        command: shown,
        message: e.to_string(),
    })
}
