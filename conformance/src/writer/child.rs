//! The one way this crate runs a child process: the `conformance` binary ([`ChildExe`]) with
//! piped output read line by line on a thread, so that a parent can wait for a line with a
//! timeout ([`Running::next_line`]) and a watchdog can kill a child that stops making
//! progress ([`run_watched`]: a total timeout, or one per heartbeat line). The report's cells,
//! the fault suite's official reads and writers, the live writer, the robustness tests' writer
//! and `suite grade`'s drivers (in their own process group, one case per process or many
//! through stdin in batch mode) all run through here.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// The default of [`child_timeout`], in seconds.
pub const DEFAULT_CHILD_TIMEOUT: u64 = 30;

/// How long a one-shot child (a fault-suite writer or official read, a stepped writer's next
/// call) may take before it is called hung and killed: `CONFORMANCE_CHILD_TIMEOUT` seconds,
/// else [`DEFAULT_CHILD_TIMEOUT`] (ci/arm64-report.sh raises it under emulation).
pub fn child_timeout() -> Duration {
    secs_from_env("CONFORMANCE_CHILD_TIMEOUT", DEFAULT_CHILD_TIMEOUT)
}

/// The positive whole number of seconds in the environment variable `var`, else `default`
/// seconds (the one parse of this crate's timeout variables).
pub fn secs_from_env(var: &str, default: u64) -> Duration {
    Duration::from_secs(
        std::env::var(var)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .filter(|n| *n > 0)
            .unwrap_or(default),
    )
}

/// The program children run: the `conformance` binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildExe {
    /// The executable.
    pub exe: PathBuf,
    /// The page size its official libraries run with (`MMKV_SYS_PAGE_SIZE` in the child's
    /// environment); `None`: this process's environment, as inherited.
    pub page_size: Option<u64>,
}

impl ChildExe {
    /// The `conformance` binary at `exe`.
    pub fn conformance(exe: impl Into<PathBuf>) -> ChildExe {
        ChildExe {
            exe: exe.into(),
            page_size: None,
        }
    }

    /// The same binary, its official libraries on pages of `size` bytes.
    pub fn with_page_size(self, size: u64) -> ChildExe {
        ChildExe {
            page_size: Some(size),
            ..self
        }
    }

    /// The page size its official libraries run with: the one it passes them, else the one
    /// they inherit (this process's official page size, [`mmkv_sys::page_size`]). States
    /// they write are judged at this size on both sides.
    pub fn official_page_size(&self) -> u64 {
        self.page_size.unwrap_or_else(mmkv_sys::page_size)
    }

    /// The running `conformance` binary.
    pub fn this() -> Result<ChildExe> {
        std::env::current_exe()
            .map(ChildExe::conformance)
            .map_err(|e| Error::Other(format!("current_exe: {e}")))
    }

    /// A command running the subcommand `sub` (e.g. `["faults", "read"]`, `["writer"]`).
    pub fn command(&self, sub: &[&str]) -> Command {
        let mut cmd = Command::new(&self.exe);
        cmd.args(sub);
        if let Some(size) = self.page_size {
            cmd.env(mmkv_sys::page_size::PAGE_SIZE_VAR, size.to_string());
        }
        cmd
    }
}

/// What [`Running::next_line`] got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A line of the child's stdout (without its newline).
    Line(String),
    /// The child closed its stdout (it exited, normally or not).
    Closed,
    /// No line within the timeout.
    TimedOut,
}

/// A child process whose stdout is read line by line on a thread.
#[derive(Debug)]
pub struct Running {
    what: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    pump: Option<JoinHandle<()>>,
    stderr: Option<JoinHandle<String>>,
}

impl Running {
    /// Starts `cmd` with piped stdin and stdout; stderr is captured when `capture_stderr`
    /// (returned by [`Running::wait`]), else inherited.
    pub fn spawn(mut cmd: Command, capture_stderr: bool) -> Result<Running> {
        let what = format!("{cmd:?}");
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        if capture_stderr {
            cmd.stderr(Stdio::piped());
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| Error::Other(format!("spawning {what}: {e}")))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| Error::Other(format!("{what}: no stdout")))?;
        let (tx, lines) = mpsc::channel();
        // Lines are read as bytes (invalid UTF-8 shown lossily), so that the pipe is drained
        // whatever the child prints.
        let pump = std::thread::spawn(move || {
            let mut out = BufReader::new(stdout);
            let mut line = Vec::new();
            while matches!(out.read_until(b'\n', &mut line), Ok(n) if n > 0) {
                let text = String::from_utf8_lossy(&line);
                let text = text.strip_suffix('\n').unwrap_or(&text);
                let text = text.strip_suffix('\r').unwrap_or(text);
                if tx.send(text.to_string()).is_err() {
                    break;
                }
                line.clear();
            }
        });
        let stderr = child.stderr.take().map(|mut p| {
            std::thread::spawn(move || {
                let mut s = Vec::new();
                let _ = p.read_to_end(&mut s);
                String::from_utf8_lossy(&s).into_owned()
            })
        });
        Ok(Running {
            what,
            stdin: child.stdin.take(),
            child,
            lines,
            pump: Some(pump),
            stderr,
        })
    }

    /// The next stdout line, waiting at most `timeout`.
    pub fn next_line(&mut self, timeout: Duration) -> Line {
        match self.lines.recv_timeout(timeout) {
            Ok(l) => Line::Line(l),
            Err(RecvTimeoutError::Disconnected) => Line::Closed,
            Err(RecvTimeoutError::Timeout) => Line::TimedOut,
        }
    }

    /// Writes one line to the child's stdin.
    pub fn send_line(&mut self, line: &str) -> Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| Error::Other(format!("{}: stdin closed", self.what)))?;
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .map_err(|e| Error::Other(format!("{}: writing stdin: {e}", self.what)))
    }

    /// Closes the child's stdin (it reads end of file), e.g. to end a batch driver.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Whether the child has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Kills the child (SIGKILL) if it still runs; a child that leads its own process group
    /// (see [`in_own_group`]) is killed with its whole group, so that its own children do not
    /// keep its stdout open.
    pub fn kill(&mut self) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32);
        if let Some(pid) = pid.filter(|&p| rustix::process::getpgid(Some(p)) == Ok(p)) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
    }

    /// Waits for the child to exit: its status, the stdout lines nobody read, and its stderr
    /// (empty unless captured).
    pub fn wait(mut self) -> Result<(ExitStatus, Vec<String>, String)> {
        self.stdin = None;
        let status = self
            .child
            .wait()
            .map_err(|e| Error::Other(format!("waiting for {}: {e}", self.what)))?;
        if let Some(p) = self.pump.take() {
            let _ = p.join();
        }
        let rest = self.lines.try_iter().collect();
        let stderr = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        Ok((status, rest, stderr))
    }
}

/// Makes `cmd`'s child the leader of a new process group, killed whole by [`Running::kill`]
/// (for a shell command whose own children must not outlive a timeout).
pub fn in_own_group(cmd: &mut Command) -> &mut Command {
    cmd.process_group(0)
}

/// How a child run under [`run_watched`] ended.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The exit status; `None` when the watchdog killed the child.
    pub status: Option<ExitStatus>,
    /// Its stdout lines, heartbeats left out.
    pub lines: Vec<String>,
    /// Its stderr (empty unless captured).
    pub stderr: String,
    /// Heartbeat lines seen.
    pub heartbeats: u64,
}

impl Finished {
    /// The last line of stderr, at most 300 characters (for one-line failure messages).
    pub fn stderr_tail(&self) -> String {
        last_line(&self.stderr, 300)
    }
}

/// The last line of `s` that is not blank, at most `max` characters.
pub fn last_line(s: &str, max: usize) -> String {
    let line = s.lines().rev().find(|l| !l.trim().is_empty());
    line.unwrap_or("").chars().take(max).collect()
}

/// Runs `cmd` to its end under a watchdog: killed when `timeout` passes without progress.
/// With a `heartbeat` line, each heartbeat restarts the clock (a per-step timeout); without
/// one, `timeout` is for the whole run. The child's stdin is closed at once.
pub fn run_watched(
    cmd: Command,
    timeout: Duration,
    heartbeat: Option<&str>,
    capture_stderr: bool,
) -> Result<Finished> {
    let mut child = Running::spawn(cmd, capture_stderr)?;
    child.stdin = None;
    let mut lines = Vec::new();
    let mut heartbeats = 0;
    let mut deadline = Instant::now() + timeout;
    let timed_out = loop {
        match child.next_line(deadline.saturating_duration_since(Instant::now())) {
            Line::Line(l) if Some(l.as_str()) == heartbeat => {
                heartbeats += 1;
                deadline = Instant::now() + timeout;
            }
            Line::Line(l) => lines.push(l),
            Line::Closed => break false,
            Line::TimedOut => break true,
        }
    };
    if timed_out {
        child.kill();
    }
    let (status, rest, stderr) = child.wait()?;
    lines.extend(rest);
    Ok(Finished {
        status: (!timed_out).then_some(status),
        lines,
        stderr,
        heartbeats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn collects_lines_status_and_stderr() {
        let f = run_watched(
            sh("echo a; echo beat; echo b; echo oops >&2; exit 3"),
            Duration::from_secs(20),
            Some("beat"),
            true,
        )
        .unwrap();
        assert_eq!(f.lines, ["a", "b"]);
        assert_eq!(f.heartbeats, 1);
        assert_eq!(f.status.and_then(|s| s.code()), Some(3));
        assert_eq!(f.stderr_tail(), "oops");
    }

    #[test]
    fn watchdog_kills_a_silent_child() {
        let t = Instant::now();
        let f = run_watched(
            sh("echo a; exec sleep 30"),
            Duration::from_millis(300),
            None,
            true,
        )
        .unwrap();
        assert!(f.status.is_none(), "killed by the watchdog");
        assert_eq!(f.lines, ["a"]);
        assert!(t.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn watchdog_kills_a_whole_process_group() {
        let t = Instant::now();
        let mut cmd = sh("sleep 30; true");
        in_own_group(&mut cmd);
        let f = run_watched(cmd, Duration::from_millis(300), None, false).unwrap();
        assert!(f.status.is_none(), "killed by the watchdog");
        // without the group kill, `sleep` would hold stdout open for 30 s
        assert!(t.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn invalid_utf8_is_read_lossily_and_stdin_is_closed() {
        let f = run_watched(
            sh("printf 'a\\377b\\r\\nc\\n'; cat; echo end"),
            Duration::from_secs(20),
            None,
            false,
        )
        .unwrap();
        assert_eq!(f.lines, ["a\u{fffd}b", "c", "end"]);
    }

    #[test]
    fn heartbeats_keep_a_slow_child_alive() {
        let f = run_watched(
            sh("for i in 1 2 3 4; do echo beat; sleep 0.2; done; echo done"),
            Duration::from_millis(1500),
            Some("beat"),
            false,
        )
        .unwrap();
        assert!(f.status.is_some_and(|s| s.success()));
        assert_eq!((f.heartbeats, f.lines), (4, vec!["done".to_string()]));
    }
}
