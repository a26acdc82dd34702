//! Disk errors on chosen calls: a failure schedule for the file calls of every loaded official
//! version.
//!
//! Each version's library is linked with `-Wl,--wrap=NAME` for each [`IoCall`] (see `build.rs`,
//! as `time` and `getpagesize` are): the calls Core's objects make go to the shim's
//! `__wrap_NAME` (`shim/io_faults.cpp`), which counts them and, when the [`Schedule`] names the
//! call, returns the call's failure (`-1`, or `MAP_FAILED` for `mmap`) with `errno` set, and
//! otherwise calls libc's. The official sources are untouched. With the empty schedule (the
//! default) every call goes to libc unchanged: a library behaves as one linked without the
//! wraps (only a counter moves).
//!
//! What is wrapped: the file calls Core makes on Linux, in every tag v1.1.0-v2.4.2 (read from
//! `MemoryFile.cpp`, `MemoryFile_Linux.cpp`, `MMKV_IO.cpp`, `InterProcessLock.cpp`):
//!
//! - `ftruncate`: growing the data file or the `.crc` file, `trim`, `clearAll`, and (from
//!   v1.3.2) truncating back after a failed zero fill;
//! - `mmap`: every load and every remap after a resize;
//! - `msync`: `sync()`, and the `.crc` file's sync after a full write-back or a key-expire
//!   change;
//! - `write`: zero-filling the grown part of a file (and `copyFile`);
//! - `rename`: `tryAtomicRename` (from v1.2.11; only backup, restore and migration paths call
//!   it, which the shim does not expose, so no run fails it today).
//!
//! No tag calls `fallocate`, `posix_fallocate`, `fsync`, `fdatasync` or `pwrite` on Linux;
//! nothing of those is wrapped. `--wrap` binds only the calls of the objects in that link step
//! (libcore.a and the shim): other libraries, the process and Rust's own I/O keep libc's.
//!
//! The setting is process-wide: [`set`] applies to every version loaded now and to every
//! version loaded later, and restarts every call's count (calls are numbered from 1 since the
//! last [`set`]). Tests that use it belong in their own process (the conformance suite runs its
//! writers as child processes).

use crate::{registry, Error, Result};
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;

/// A wrapped file call (the shim's `MMKV_IO_*` numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IoCall {
    /// `ftruncate(2)`.
    Ftruncate,
    /// `mmap(2)`.
    Mmap,
    /// `msync(2)`.
    Msync,
    /// `write(2)`.
    Write,
    /// `rename(2)`.
    Rename,
}

impl IoCall {
    /// Every wrapped call, in the shim's order.
    pub const ALL: [IoCall; 5] = [
        IoCall::Ftruncate,
        IoCall::Mmap,
        IoCall::Msync,
        IoCall::Write,
        IoCall::Rename,
    ];

    /// The libc name.
    pub fn name(self) -> &'static str {
        match self {
            IoCall::Ftruncate => "ftruncate",
            IoCall::Mmap => "mmap",
            IoCall::Msync => "msync",
            IoCall::Write => "write",
            IoCall::Rename => "rename",
        }
    }

    fn index(self) -> u32 {
        self as u32
    }
}

impl fmt::Display for IoCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for IoCall {
    type Err = Error;

    fn from_str(s: &str) -> Result<IoCall> {
        IoCall::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| Error::InvalidArgument(format!("no wrapped call {s:?}")))
    }
}

/// The error a failed call reports in `errno`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IoErrno {
    /// `ENOSPC`: the disk is full.
    Enospc,
    /// `EIO`: the device failed.
    Eio,
    /// `ENOMEM`: no memory (or address space) left.
    Enomem,
}

impl IoErrno {
    /// Every error a schedule can give.
    pub const ALL: [IoErrno; 3] = [IoErrno::Enospc, IoErrno::Eio, IoErrno::Enomem];

    /// The C name.
    pub fn name(self) -> &'static str {
        match self {
            IoErrno::Enospc => "ENOSPC",
            IoErrno::Eio => "EIO",
            IoErrno::Enomem => "ENOMEM",
        }
    }

    /// The `errno` value.
    pub fn raw(self) -> i32 {
        use rustix::io::Errno;
        match self {
            IoErrno::Enospc => Errno::NOSPC,
            IoErrno::Eio => Errno::IO,
            IoErrno::Enomem => Errno::NOMEM,
        }
        .raw_os_error()
    }
}

impl fmt::Display for IoErrno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for IoErrno {
    type Err = Error;

    fn from_str(s: &str) -> Result<IoErrno> {
        IoErrno::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| Error::InvalidArgument(format!("no schedule error {s:?}")))
    }
}

/// One rule: calls `from`, `from + 1`, ... of `call` fail with `errno`, `count` of them
/// (`None`: every call from `from` on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rule {
    /// The call.
    pub call: IoCall,
    /// The first failing call (numbered from 1 since [`set`]).
    pub from: u64,
    /// How many calls fail; `None`: all from `from` on.
    pub count: Option<u64>,
    /// The error.
    pub errno: IoErrno,
}

impl fmt::Display for Rule {
    /// `CALL@N:ERR` (call N), `CALL@NxC:ERR` (C calls from N), `CALL@N+:ERR` (every call
    /// from N on).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let span = match self.count {
            Some(1) => String::new(),
            Some(c) => format!("x{c}"),
            None => "+".into(),
        };
        write!(f, "{}@{}{span}:{}", self.call, self.from, self.errno)
    }
}

impl FromStr for Rule {
    type Err = Error;

    /// Parses [`Rule`]'s `Display` form.
    fn from_str(s: &str) -> Result<Rule> {
        let bad = || {
            Error::InvalidArgument(format!(
                "bad disk-error rule {s:?} (CALL@N:ERR, CALL@NxC:ERR or CALL@N+:ERR)"
            ))
        };
        let (call, rest) = s.split_once('@').ok_or_else(bad)?;
        let (span, errno) = rest.split_once(':').ok_or_else(bad)?;
        let num = |t: &str| t.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(bad);
        let (from, count) = if let Some(n) = span.strip_suffix('+') {
            (num(n)?, None)
        } else if let Some((n, c)) = span.split_once('x') {
            (num(n)?, Some(num(c)?))
        } else {
            (num(span)?, Some(1))
        };
        Ok(Rule {
            call: call.parse()?,
            from,
            count,
            errno: errno.parse()?,
        })
    }
}

/// A failure schedule: at most one [`Rule`] per call (a later rule for the same call replaces
/// the earlier). The default, empty, fails nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Schedule {
    rules: Vec<Rule>,
}

impl Schedule {
    /// The schedule of `rules` (the last rule of a call wins), in call order.
    pub fn new(rules: impl IntoIterator<Item = Rule>) -> Schedule {
        let mut out: Vec<Rule> = Vec::new();
        for r in rules {
            out.retain(|o| o.call != r.call);
            out.push(r);
        }
        out.sort();
        Schedule { rules: out }
    }

    /// Its rules, in call order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// It fails nothing.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

impl fmt::Display for Schedule {
    /// The rules joined with `,`; `none` when empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.rules.is_empty() {
            return f.write_str("none");
        }
        let parts: Vec<String> = self.rules.iter().map(Rule::to_string).collect();
        f.write_str(&parts.join(","))
    }
}

impl FromStr for Schedule {
    type Err = Error;

    /// Parses [`Schedule`]'s `Display` form.
    fn from_str(s: &str) -> Result<Schedule> {
        if s.trim() == "none" || s.trim().is_empty() {
            return Ok(Schedule::default());
        }
        s.split(',')
            .map(|r| r.trim().parse())
            .collect::<Result<Vec<Rule>>>()
            .map(Schedule::new)
    }
}

/// The schedule now set (applied to every library loaded later). Written only under the
/// registry lock.
static CURRENT: Mutex<Schedule> = Mutex::new(Schedule { rules: Vec::new() });

/// Sets the failure schedule of every loaded official version (and of every version loaded
/// later) and restarts every call's count. The empty schedule fails nothing.
///
/// Errors: [`Error::Library`] when a loaded library has no schedule (one built from older shim
/// sources) and `schedule` is not empty.
pub fn set(schedule: &Schedule) -> Result<()> {
    let libs = registry().lock().unwrap_or_else(|p| p.into_inner());
    *CURRENT.lock().unwrap_or_else(|p| p.into_inner()) = schedule.clone();
    for lib in libs.values() {
        lib.apply_io_faults(schedule)?;
    }
    Ok(())
}

/// The schedule now set.
pub fn get() -> Schedule {
    CURRENT.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Calls of one wrapped call since the last [`set`] (or load), over every loaded version.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Calls made (failed ones included).
    pub made: u64,
    /// Calls the schedule failed.
    pub failed: u64,
}

/// Each wrapped call's [`Counts`], in [`IoCall::ALL`] order (libraries built without the
/// schedule count nothing).
pub fn counts() -> Result<Vec<(IoCall, Counts)>> {
    let libs = registry().lock().unwrap_or_else(|p| p.into_inner());
    let mut out: Vec<(IoCall, Counts)> = IoCall::ALL
        .iter()
        .map(|c| (*c, Counts::default()))
        .collect();
    for lib in libs.values() {
        for (call, c) in out.iter_mut() {
            let (made, failed) = lib.io_fault_counts(*call).unwrap_or((0, 0));
            c.made += made;
            c.failed += failed;
        }
    }
    Ok(out)
}

/// The shim's arguments for one rule: (call, from, count, errno); count `u64::MAX` for "every
/// call from `from` on".
pub(crate) fn shim_rule(r: &Rule) -> (u32, u64, u64, i32) {
    (
        r.call.index(),
        r.from,
        r.count.unwrap_or(u64::MAX),
        r.errno.raw(),
    )
}

/// The shim's "reset" call number (`MMKV_IO_CALLS`).
pub(crate) const RESET: u32 = IoCall::ALL.len() as u32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_and_schedules_round_trip() {
        for s in [
            "ftruncate@3:ENOSPC",
            "msync@5+:EIO",
            "mmap@2x4:ENOMEM",
            "write@1:EIO,rename@7+:ENOSPC",
        ] {
            let sched: Schedule = s.parse().unwrap();
            assert_eq!(sched.to_string(), s);
        }
        assert_eq!("none".parse::<Schedule>().unwrap(), Schedule::default());
        assert_eq!(Schedule::default().to_string(), "none");
        let later: Schedule = "msync@1:EIO,msync@2:ENOSPC".parse().unwrap();
        assert_eq!(later.to_string(), "msync@2:ENOSPC");
        for bad in [
            "fsync@1:EIO",
            "msync@0:EIO",
            "msync@1:EPERM",
            "msync1:EIO",
            "msync@1x0:EIO",
            "msync@1",
        ] {
            assert!(bad.parse::<Schedule>().is_err(), "{bad}");
        }
        assert_eq!(IoErrno::Enospc.raw(), 28);
        assert_eq!(shim_rule(&"msync@5+:EIO".parse().unwrap()).2, u64::MAX);
    }
}
