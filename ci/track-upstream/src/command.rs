//! Running the command line clients (`npm`, `gh`, `git`) the tracker drives.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// Runs `program args...` (in `cwd` if given, stdin closed) and returns its standard output;
/// a failure to start, a non-zero exit (with the trimmed stderr) or non-UTF-8 output is an
/// [`Error::Command`] / [`Error::Output`] naming the command line.
pub(crate) fn run(program: &str, args: &[&str], cwd: Option<&Path>) -> Result<String> {
    let shown = format!("{program} {}", args.join(" "));
    let mut cmd = Command::new(program);
    cmd.args(args);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    String::from_utf8(output(&mut cmd, &shown)?).map_err(|e| Error::Output {
        command: shown,
        message: e.to_string(),
    })
}

/// Runs `cmd` (stdin closed) and returns its standard output as bytes; a failure to start or
/// a non-zero exit (with its status and trimmed stderr) is an [`Error::Command`] naming the
/// command line as `shown`.
pub(crate) fn output(cmd: &mut Command, shown: &str) -> Result<Vec<u8>> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Command {
            command: shown.to_string(),
            message: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(Error::Command {
            command: shown.to_string(),
            message: format!(
                "{}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    Ok(out.stdout)
}
