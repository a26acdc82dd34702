//! The reader protocol of `suite grade` (suite/README.md, "Reader protocol"), the driver's
//! side of a grade: runs a reader's driver on cases and parses what it printed into an
//! [`Output`] per case, in one of two modes.
//!
//! - Single mode: `sh -c 'COMMAND "$1"' sh CASE_DIR`, one process per case; its exit status,
//!   stdout and stderr decide (a signal, a panic or a traceback is a crash).
//! - Batch mode: `sh -c COMMAND` with [`BATCH_ENV`]`=1`, stderr joined to stdout. The driver
//!   greets with `{"batch": 1}`, then reads case folders on stdin, one per line, and answers
//!   each with one line: the protocol's object with `"case"` (the folder as sent) and
//!   optionally `"stderr"` (what it would have printed on stderr for that case alone).
//!
//! Batch answers are only shortcuts: a case whose answer is not exactly that one line (the
//! driver died, hung, printed anything else: a traceback, a warning) is run alone in single
//! mode, which decides its output, and so is the case answered just before (its cleanup may be
//! what failed; likewise the last case when the process does not end cleanly: exit 0 and
//! nothing printed once its stdin closed). Answers count only once a batch process of the same
//! run of cases has ended cleanly, since a driver that fails at exit fails every single-mode
//! run; otherwise every answered case is run alone too. A driver that does not greet is run in
//! single mode for every case.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::writer::child::{in_own_group, last_line, run_watched, Line, Running};

/// Set to `1` in a driver's environment to ask for batch mode.
pub const BATCH_ENV: &str = "MMKV_SUITE_BATCH";

/// A reader under test: `NAME=COMMAND` (run as `sh -c 'COMMAND "$1"' sh CASE_DIR`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderSpec {
    /// Its name in the table.
    pub name: String,
    /// The shell command; the case folder is appended as one argument.
    pub command: String,
}

impl std::str::FromStr for ReaderSpec {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<ReaderSpec, String> {
        let (name, command) = s
            .split_once('=')
            .ok_or_else(|| format!("expected NAME=COMMAND, got {s:?}"))?;
        if name.is_empty() || command.trim().is_empty() {
            return Err(format!("expected NAME=COMMAND, got {s:?}"));
        }
        Ok(ReaderSpec {
            name: name.to_string(),
            command: command.to_string(),
        })
    }
}

/// What a driver printed for one case, parsed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Output {
    /// key hex -> (payload hex, type, value); true when the driver reads with
    /// `OnErrorRecover` (`"strategy": "recover"`).
    Entries(Got, bool),
    /// The reader refused the store (message).
    Error(String),
    /// A signal, a panic, a traceback, or no protocol output with a non-zero exit.
    Crash(String),
    /// No answer within the timeout.
    Timeout,
}

/// What a driver listed: key hex -> (payload hex, type, typed value).
pub(crate) type Got = BTreeMap<String, (String, Option<String>, Option<serde_json::Value>)>;

/// Process counts of a grade run, shared by its workers.
#[derive(Debug, Default)]
pub struct DriverStats {
    /// Driver processes started (batch and single).
    pub processes: AtomicUsize,
    /// Cases run in single mode (drivers without batch mode included).
    pub alone: AtomicUsize,
}

/// Whether a reader's driver speaks batch mode: not known yet, yes, no.
#[derive(Debug, Default)]
pub struct Speaks(AtomicU8);

const UNKNOWN: u8 = 0;
const YES: u8 = 1;
const NO: u8 = 2;

/// One reader's driver in a grade run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Driver<'a> {
    /// The command.
    pub command: &'a str,
    /// Per case (and for the batch greeting).
    pub timeout: Duration,
    /// Shared by every run of this reader.
    pub speaks: &'a Speaks,
    /// Shared by the whole grade run.
    pub stats: &'a DriverStats,
}

impl Driver<'_> {
    /// The outputs of the driver on `dirs`, in order: through batch processes where the driver
    /// speaks batch mode, each case whose batch answer is not certain run alone.
    pub fn outputs(&self, dirs: &[&Path]) -> Vec<Output> {
        let n = dirs.len();
        let mut out: Vec<Option<Output>> = vec![None; n];
        // Batch answers waiting for a clean end of a batch process.
        let mut answered: Vec<(usize, Output)> = Vec::new();
        let mut clean_end = false;
        let mut next = 0;
        while next < n {
            let session = match self.speaks.0.load(Ordering::Relaxed) {
                NO => None,
                _ => self.start(),
            };
            let Some(mut session) = session else {
                out[next] = Some(self.alone(dirs[next]));
                next += 1;
                continue;
            };
            // The last answer: it stands once the next answer or a clean end follows.
            let mut last: Option<(usize, Output)> = None;
            loop {
                if next == n {
                    if session.finish(self.timeout) {
                        clean_end = true;
                        answered.extend(last.take());
                    } else if let Some((i, _)) = last.take() {
                        // what it printed after its last answer may be that case's
                        out[i] = Some(self.alone(dirs[i]));
                    }
                    break;
                }
                let answer = dirs[next]
                    .to_str()
                    .filter(|d| !d.contains('\n'))
                    .and_then(|d| session.ask(d, self.timeout));
                match answer {
                    Some(o) => {
                        answered.extend(last.replace((next, o)));
                        next += 1;
                    }
                    None => {
                        session.abandon();
                        if let Some((i, _)) = last.take() {
                            out[i] = Some(self.alone(dirs[i]));
                        }
                        out[next] = Some(self.alone(dirs[next]));
                        next += 1;
                        break;
                    }
                }
            }
        }
        if !answered.is_empty() && !clean_end {
            // No batch process of these cases ended cleanly: one that answers nothing must.
            clean_end = self.start().is_some_and(|s| s.finish(self.timeout));
        }
        for (i, o) in answered {
            out[i] = Some(if clean_end { o } else { self.alone(dirs[i]) });
        }
        out.into_iter()
            .zip(dirs)
            .map(|(o, d)| o.unwrap_or_else(|| self.alone(d)))
            .collect()
    }

    /// Single mode for one case.
    fn alone(&self, dir: &Path) -> Output {
        self.stats.processes.fetch_add(1, Ordering::Relaxed);
        self.stats.alone.fetch_add(1, Ordering::Relaxed);
        run_driver(self.command, dir, self.timeout)
    }

    /// A batch process that greeted; `None` (and the reader marked as not speaking batch mode,
    /// unless one of its processes greeted before) when it did not.
    fn start(&self) -> Option<Session> {
        self.stats.processes.fetch_add(1, Ordering::Relaxed);
        let session = Session::start(self.command, self.timeout);
        let speaks = &self.speaks.0;
        match session {
            Some(_) => speaks.store(YES, Ordering::Relaxed),
            None => {
                let _ = speaks.compare_exchange(UNKNOWN, NO, Ordering::Relaxed, Ordering::Relaxed);
            }
        }
        session
    }
}

/// A driver process in batch mode.
struct Session(Running);

impl Session {
    /// Starts `command` in batch mode; `None` unless its first line is the greeting.
    fn start(command: &str, timeout: Duration) -> Option<Session> {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("exec 2>&1\n{command}"))
            .arg("sh")
            .env(BATCH_ENV, "1");
        in_own_group(&mut cmd);
        let mut session = Session(Running::spawn(cmd, true).ok()?);
        let greeted = match session.0.next_line(timeout) {
            Line::Line(l) => {
                serde_json::from_str::<serde_json::Value>(&l).ok()
                    == Some(serde_json::json!({"batch": 1}))
            }
            Line::Closed | Line::TimedOut => false,
        };
        if greeted {
            Some(session)
        } else {
            session.abandon();
            None
        }
    }

    /// Sends one case folder; its answer, or `None` when the next line is not exactly an
    /// answer for it (or none came within `timeout`).
    fn ask(&mut self, dir: &str, timeout: Duration) -> Option<Output> {
        self.0.send_line(dir).ok()?;
        match self.0.next_line(timeout) {
            Line::Line(l) => batch_answer(&l, dir),
            Line::Closed | Line::TimedOut => None,
        }
    }

    /// Closes stdin and waits for the end: true when the driver printed nothing more and
    /// exited with status 0 within `timeout`.
    fn finish(mut self, timeout: Duration) -> bool {
        self.0.close_stdin();
        let deadline = Instant::now() + timeout;
        let quiet = self.0.next_line(timeout) == Line::Closed;
        while quiet && !self.0.exited() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        if !(quiet && self.0.exited()) {
            self.abandon();
            return false;
        }
        matches!(self.0.wait(), Ok((status, rest, _)) if status.success() && rest.is_empty())
    }

    /// Kills the driver (its whole process group) and reaps it.
    fn abandon(mut self) {
        self.0.kill();
        let _ = self.0.wait();
    }
}

/// A batch answer line for the case folder `dir`: the protocol's object with `"case": dir`;
/// its `"stderr"` is judged as a single run's stderr would be. `None` for anything else.
fn batch_answer(line: &str, dir: &str) -> Option<Output> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    if v.get("case")?.as_str()? != dir {
        return None;
    }
    let stderr = match v.get("stderr") {
        None | Some(serde_json::Value::Null) => "",
        Some(s) => s.as_str()?,
    };
    let parsed = parse_output(line.as_bytes())?;
    Some(crash_on_stderr(stderr).unwrap_or(parsed))
}

/// Runs `command` on `dir` with a timeout (single mode: one process for the case); the driver
/// runs in its own process group, killed whole on timeout.
fn run_driver(command: &str, dir: &Path, timeout: Duration) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("{command} \"$1\""))
        .arg("sh")
        .arg(dir)
        .env_remove(BATCH_ENV);
    in_own_group(&mut cmd);
    let run = match run_watched(cmd, timeout, None, true) {
        Ok(run) => run,
        Err(e) => return Output::Crash(format!("cannot start: {e}")),
    };
    let Some(status) = run.status else {
        return Output::Timeout;
    };
    let stdout = run.lines.join("\n");
    let stderr = run.stderr;
    if let Some(sig) = status.signal() {
        return Output::Crash(format!("signal {sig}"));
    }
    let code = status.code().unwrap_or(-1);
    if (129..=159).contains(&code) {
        return Output::Crash(format!("exit {code} (signal {} in the shell)", code - 128));
    }
    if let Some(crash) = crash_on_stderr(&stderr) {
        return crash;
    }
    match parse_output(stdout.as_bytes()) {
        Some(o) => o,
        None if code != 0 => Output::Crash(format!("exit {code}: {}", last_line(&stderr, 200))),
        None => Output::Error(format!(
            "output is not the protocol's JSON: {}",
            last_line(&stdout, 200)
        )),
    }
}

/// A crash shown on a driver's stderr: a Rust panic or a Python traceback (whatever it printed
/// on stdout).
fn crash_on_stderr(stderr: &str) -> Option<Output> {
    if let Some(at) = stderr.find("panicked at") {
        // the panic line and its message (the next line)
        let panic: Vec<&str> = stderr[at..].lines().take(2).collect();
        return Some(Output::Crash(panic.join(": ").chars().take(200).collect()));
    }
    if stderr.contains("Traceback (most recent call last)") {
        return Some(Output::Crash(last_line(stderr, 200)));
    }
    None
}

fn parse_output(stdout: &[u8]) -> Option<Output> {
    let v: serde_json::Value = serde_json::from_slice(stdout).ok()?;
    if let Some(e) = v.get("error") {
        if !e.is_null() {
            return Some(Output::Error(
                e.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| e.to_string()),
            ));
        }
    }
    let mut out = BTreeMap::new();
    for e in v.get("entries")?.as_array()? {
        let key = e.get("key")?.as_str()?.to_ascii_lowercase();
        let value = e.get("value")?.as_str()?.to_ascii_lowercase();
        let ty = e.get("type").and_then(|t| t.as_str()).map(str::to_string);
        let typed = e.get("typed").cloned();
        out.insert(key, (value, ty, typed));
    }
    let recover = v.get("strategy").and_then(|s| s.as_str()) == Some("recover");
    Some(Output::Entries(out, recover))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_outputs_are_classified() {
        let dir = Path::new("/");
        let t = Duration::from_secs(5);
        assert_eq!(
            run_driver("kill -9 $$; echo", dir, t),
            Output::Crash("signal 9".into())
        );
        assert!(
            matches!(run_driver("echo '{\"error\": \"no\"}'; true", dir, t), Output::Error(m) if m == "no")
        );
        assert_eq!(
            run_driver("sleep 20; true", dir, Duration::from_millis(200)),
            Output::Timeout
        );
        assert!(matches!(
            run_driver(
                "echo 'thread main panicked at x' >&2; exit 101; true",
                dir,
                t
            ),
            Output::Crash(_)
        ));
        match run_driver(
            "echo '{\"entries\": [{\"key\": \"6B\", \"value\": \"01\"}]}'; true",
            dir,
            t,
        ) {
            Output::Entries(e, false) => assert_eq!(e["6b"].0, "01"),
            o => panic!("{o:?}"),
        }
    }
}
