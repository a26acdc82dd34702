//! Running an external command (git, npm) with its output captured and an optional time limit:
//! what the build script's source fetching and the upstream tracker share.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` with no stdin, returning its stdout. A failure to start, a non-zero exit (with the
/// command's stderr), or — with `timeout` — running longer than that (the child is killed) is an
/// error message naming the command.
pub fn run(cmd: &mut Command, timeout: Option<Duration>) -> Result<Vec<u8>, String> {
    let what = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(format!("{what}: {e}")),
        }
        if let Some(limit) = timeout.filter(|t| start.elapsed() > *t) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{what}: no answer within {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let joined = |h: Option<std::thread::JoinHandle<Vec<u8>>>| {
        h.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    let (out, err) = (joined(stdout), joined(stderr));
    if !status.success() {
        return Err(format!(
            "{what}: {status}: {}",
            String::from_utf8_lossy(&err).trim()
        ));
    }
    Ok(out)
}

/// Reads a pipe to its end on a thread of its own (so that neither pipe can fill and block the
/// child while the other is read).
fn drain<R: Read + Send + 'static>(mut pipe: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = pipe.read_to_end(&mut b);
        b
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_exit_status_and_time_limit() {
        let out = run(Command::new("sh").args(["-c", "printf hi"]), None).unwrap();
        assert_eq!(out, b"hi");
        let err = run(
            Command::new("sh").args(["-c", "echo bad >&2; exit 3"]),
            None,
        )
        .unwrap_err();
        assert!(err.contains("bad") && err.contains('3'), "{err}");
        let err = run(
            Command::new("sh").args(["-c", "sleep 5"]),
            Some(Duration::from_millis(100)),
        )
        .unwrap_err();
        assert!(err.contains("no answer within"), "{err}");
        let err = run(&mut Command::new("/nonexistent/command"), None).unwrap_err();
        assert!(err.starts_with("cannot run"), "{err}");
    }
}
