//! The one child-writer protocol. A writer is the `conformance writer` child process: it opens
//! [`STORE_ID`] in a folder with the official library of one version, prints `ready`
//! (and with `--wait-go` waits for a line on stdin), performs the op stream of its plan
//! ([`plan`]: one stream of [`crate::differential::workload::Op`]) with an optional pace, dies by SIGKILL
//! where `--kill` says, else syncs, reads its final state back through the official getters
//! and prints one [`Done`] line. With `--steps` it stops after every official call (the open,
//! each op, each `sync()` of its plan) until the parent, which copies both files meanwhile,
//! says go ([`Call`], [`run_steps`]: the power-loss recorder). The parent derives the same op stream from the same
//! [`WriterSpec`] and judges what it reads ([`model`]); values identify the op that wrote
//! them ([`value`]). The live writer, the robustness tests' stress and shrink writers, the
//! fault suite's killed writers, the power-loss recorder and the disk-error writers (`--io-faults`,
//! [`IoFailure`]) are plans of this one writer.
//!
//! - [`child`]: spawning a child, waiting for its lines with a timeout, the watchdog;
//! - [`plan`]: the op streams; [`value`]: the self-identifying values; [`model`]: the check.

pub mod child;
pub mod model;
pub mod plan;
pub mod value;

use std::collections::BTreeMap;
use std::io::{BufRead as _, Write as _};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::differential::workload::Op;
use crate::error::{Error, Result};
use crate::sides::official::{OfficialLib, OfficialStore};
use crate::vocab::kind::{Features, ModeKind, StoreKind};
use crate::vocab::value::{Value, ValueType};
use crate::vocab::{le32, STORE_ID};
use child::{child_timeout, run_watched, ChildExe, Line, Running};
use mmkv_sys::io_faults::{self, IoCall, Schedule};

/// Which op stream a writer performs (see [`plan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Plan {
    /// The live writer (`conformance::live`): typed self-identifying values.
    Live,
    /// The robustness stress writer: a long stream of self-identifying byte values.
    Stress,
    /// The robustness shrink writer: grow, trim and clear cycles (`ops` = cycles).
    Shrink,
    /// The fault suite's writer: every getter type, seeded contents.
    Faults,
    /// The power-loss recorder's writer: the fault plan's ops, opened as the fault suite
    /// opens its kinds, with `sync()` after about one op in 16 ([`plan::syncs`]).
    Powerloss,
    /// The disk-error suite's writer: the power-loss plan's ops and syncs while the official
    /// library's file calls fail as `--io-faults` says; it goes on after a failed call as an
    /// app would and prints an [`IoFailure`] line after each call that saw one.
    Diskerr,
}

impl Plan {
    /// Whether the plan opens its kind's own mode (else MULTI_PROCESS).
    fn own_mode(self) -> bool {
        matches!(self, Plan::Faults | Plan::Powerloss | Plan::Diskerr)
    }

    /// Whether an official call that fails is recorded and the run goes on (else it ends the
    /// run with an error).
    fn keeps_going(self) -> bool {
        self == Plan::Diskerr
    }
}

/// One official call of a writer run with `--steps`: its line is `step open`, `step op I` or
/// `step sync`, and the writer waits for a line on stdin after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// The store opened (key expiration enabled) and synced: the start of the run.
    Open,
    /// Op `.0` of the plan.
    Op(usize),
    /// `sync(MMKV_SYNC)`.
    Sync,
}

impl Call {
    /// The line the writer prints.
    pub fn line(self) -> String {
        match self {
            Call::Open => "step open".into(),
            Call::Op(i) => format!("step op {i}"),
            Call::Sync => "step sync".into(),
        }
    }

    /// Parses [`Call::line`].
    pub fn parse(line: &str) -> Option<Call> {
        match line.strip_prefix("step ")? {
            "open" => Some(Call::Open),
            "sync" => Some(Call::Sync),
            rest => rest.strip_prefix("op ")?.parse().ok().map(Call::Op),
        }
    }
}

/// When the writer dies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// Runs every op, syncs and closes.
    Never,
    /// SIGKILL right before op `.0`.
    BeforeOp(usize),
    /// SIGKILL `.1` microseconds after op `.0` started (the writer goes on meanwhile).
    During(usize, u64),
}

impl Kill {
    /// Command-line form (`never`, `before:K`, `during:K:US`).
    pub fn arg(self) -> String {
        match self {
            Kill::Never => "never".into(),
            Kill::BeforeOp(k) => format!("before:{k}"),
            Kill::During(k, us) => format!("during:{k}:{us}"),
        }
    }
}

impl std::str::FromStr for Kill {
    type Err = String;

    /// Parses [`Kill::arg`].
    fn from_str(s: &str) -> std::result::Result<Kill, String> {
        let bad = || format!("bad kill point {s:?} (never, before:K or during:K:US)");
        let mut p = s.split(':');
        let num = |x: Option<&str>| x.and_then(|x| x.parse().ok()).ok_or_else(bad);
        match (p.next(), p.next(), p.next(), p.next()) {
            (Some("never"), None, None, None) => Ok(Kill::Never),
            (Some("before"), k, None, None) => Ok(Kill::BeforeOp(num(k)? as usize)),
            (Some("during"), k, us, None) => Ok(Kill::During(num(k)? as usize, num(us)?)),
            _ => Err(bad()),
        }
    }
}

/// Everything that defines a writer run besides its version and folder: the child's
/// command-line options (`conformance writer --tag T --dir D ...`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct WriterSpec {
    /// The op stream.
    #[arg(long, value_enum)]
    pub plan: Plan,
    /// Seed of the op stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of ops (`shrink`: cycles).
    #[arg(long)]
    pub ops: usize,
    /// Number of keys (`faults` picks its own).
    #[arg(long, default_value_t = 64)]
    pub keys: usize,
    /// Store kind: encryption and expiration; every plan but `faults` opens it MULTI_PROCESS.
    #[arg(long, default_value = "multi")]
    pub kind: StoreKind,
    /// Microseconds to sleep after every op (0: unpaced).
    #[arg(long, default_value_t = 0)]
    pub pace_us: u64,
    /// `never`, `before:K` or `during:K:US`.
    #[arg(long, default_value = "never")]
    pub kill: Kill,
    /// After `ready`, wait for a line on stdin before the first op.
    #[arg(long)]
    pub wait_go: bool,
    /// After `ready`, print a [`Call`] line after every official call and wait for a line on
    /// stdin (the parent copies the files meanwhile).
    #[arg(long)]
    pub steps: bool,
    /// The official library's disk-error schedule (`mmkv_sys::io_faults`, e.g.
    /// `ftruncate@3:ENOSPC,msync@5+:EIO`), set before the store opens; `none` fails nothing.
    #[arg(long, default_value = "none")]
    pub io_faults: Schedule,
}

impl WriterSpec {
    /// A spec of `plan` with `ops` ops over `keys` keys (seed 1, a MULTI_PROCESS plaintext store,
    /// unpaced, never killed, not waiting).
    pub fn new(plan: Plan, ops: usize, keys: usize) -> WriterSpec {
        WriterSpec {
            plan,
            seed: 1,
            ops,
            keys,
            kind: StoreKind::Multi,
            pace_us: 0,
            kill: Kill::Never,
            wait_go: false,
            steps: false,
            io_faults: Schedule::default(),
        }
    }

    /// The op stream (`features`: the writer's version's; only the fault plan uses them).
    pub fn ops(&self, features: &Features) -> Vec<Op> {
        plan::ops(self, features)
    }

    /// The `conformance writer ...` command that runs this spec with `tag` into `dir`.
    pub fn command(&self, exe: &ChildExe, tag: &str, dir: &Path) -> std::process::Command {
        use clap::ValueEnum as _;
        let plan = self
            .plan
            .to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        let mut cmd = exe.command(&["writer", "--tag", tag, "--dir"]);
        cmd.arg(dir)
            .args([
                "--plan",
                &plan,
                "--kind",
                self.kind.id(),
                "--kill",
                &self.kill.arg(),
            ])
            .args([
                "--seed",
                &self.seed.to_string(),
                "--ops",
                &self.ops.to_string(),
            ])
            .args(["--keys", &self.keys.to_string()])
            .args(["--pace-us", &self.pace_us.to_string()]);
        if self.wait_go {
            cmd.arg("--wait-go");
        }
        if self.steps {
            cmd.arg("--steps");
        }
        if !self.io_faults.is_empty() {
            cmd.args(["--io-faults", &self.io_faults.to_string()]);
        }
        cmd
    }
}

/// The writer's closing line, `done` and this as JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Done {
    /// Ops performed.
    pub ops: u64,
    /// `count()` at the end.
    pub count: u64,
    /// [`state_digest`] of the final state, read through the official getters.
    pub digest: u64,
    /// Largest data file size seen after an op.
    pub max_file_size: u64,
    /// Times the data file got smaller after an op.
    pub file_shrinks: u64,
    /// Meta sequence (full write-backs) before the first op.
    pub seq_start: u32,
    /// And after the last.
    pub seq_end: u32,
    /// Milliseconds the ops took.
    pub writer_ms: u64,
}

impl Done {
    /// The line.
    pub fn line(&self) -> String {
        format!("done {}", serde_json::to_string(self).unwrap_or_default())
    }

    /// Parses [`Done::line`].
    pub fn parse(line: &str) -> Option<Done> {
        serde_json::from_str(line.strip_prefix("done ")?).ok()
    }
}

/// An official call of a [`Plan::Diskerr`] writer during which scheduled calls failed: its
/// line is `ioerr ` and this as JSON, printed as soon as the call returns (a writer the
/// library then crashes has said it).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IoFailure {
    /// The official call: `open`, `op I`, `sync` (after op I: `sync I`) or `end` (the closing
    /// sync, reads and close).
    pub at: String,
    /// The wrapped calls that failed during it, with how many times.
    pub failed: BTreeMap<String, u64>,
    /// What the API returned: `true` / `false` (a set), `ok`, or `error: MESSAGE`.
    pub returned: String,
}

impl IoFailure {
    /// The line.
    pub fn line(&self) -> String {
        format!("ioerr {}", serde_json::to_string(self).unwrap_or_default())
    }

    /// Parses [`IoFailure::line`].
    pub fn parse(line: &str) -> Option<IoFailure> {
        serde_json::from_str(line.strip_prefix("ioerr ")?).ok()
    }
}

/// Follows the failed-call counts of the disk-error schedule between official calls.
struct FailureWatch {
    failed: BTreeMap<IoCall, u64>,
}

impl FailureWatch {
    fn new() -> FailureWatch {
        FailureWatch {
            failed: BTreeMap::new(),
        }
    }

    /// The failures since the last call, as the [`IoFailure`] of `at` that returned
    /// `returned`; `None` when none failed.
    fn take(&mut self, at: String, returned: impl FnOnce() -> String) -> Option<IoFailure> {
        let counts = io_faults::counts().ok()?;
        let mut failed = BTreeMap::new();
        for (call, c) in counts {
            let before = self.failed.insert(call, c.failed).unwrap_or(0);
            if c.failed > before {
                failed.insert(call.name().to_string(), c.failed - before);
            }
        }
        (!failed.is_empty()).then(|| IoFailure {
            at,
            failed,
            returned: returned(),
        })
    }
}

/// What an official call returned, for an [`IoFailure`].
fn returned<T: std::fmt::Debug>(r: &Result<T>) -> String {
    match r {
        Ok(v) => {
            let v = format!("{v:?}");
            if v == "()" {
                "ok".into()
            } else {
                v
            }
        }
        Err(e) => format!("error: {}", e.to_string().replace('\n', " ")),
    }
}

/// The type of the last value `ops` set for each key (the keys a final state can hold).
pub fn final_types(ops: &[Op]) -> BTreeMap<Vec<u8>, ValueType> {
    let mut out = BTreeMap::new();
    for op in ops {
        if let Op::Set { key, value, .. } = op {
            out.insert(key.0.clone(), value.value_type());
        }
    }
    out
}

/// FNV-1a digest of a store state: each present key (in order) with its value, read with
/// `get` as the type [`final_types`] says. The writer and the reader side compute it alike.
pub fn state_digest(
    ops: &[Op],
    mut get: impl FnMut(&[u8], ValueType) -> Result<Option<Value>>,
) -> Result<u64> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (key, ty) in final_types(ops) {
        if let Some(v) = get(&key, ty)? {
            for b in key.iter().chain(format!("={v:?};").as_bytes()) {
                h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    Ok(h)
}

fn kill_self() -> ! {
    // SIGKILL: no destructor, no msync, no munmap — what a crash or the OOM killer leaves.
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The meta file's sequence number (full write-backs), 0 when unreadable.
fn meta_sequence(dir: &Path) -> u32 {
    std::fs::read(mmkv_reader::meta_path(&dir.join(STORE_ID))).map_or(0, |b| le32(&b, 8))
}

/// Performs `op`; `Ok(false)` when the library refused a set.
fn apply(store: &mut dyn OfficialStore, op: &Op) -> Result<bool> {
    match op {
        Op::Set { key, value, expire } => store.set(&key.0, value, *expire),
        Op::Remove { key } => store.remove(&key.0).map(|()| true),
        Op::ClearAll => store.clear_all().map(|()| true),
        Op::Trim => store.trim().map(|()| true),
        Op::Sync {
            asynchronous: false,
        } => store.sync().map(|()| true),
        Op::Sync { asynchronous: true } => store.sync_async().map(|()| true),
        Op::ClearMemoryCache => store.clear_memory_cache().map(|()| true),
        other => Err(Error::Other(format!("writer: op {other:?} is in no plan"))),
    }
}

/// The child side (`conformance writer`): runs `spec` with `lib` into `dir` as the module
/// documentation says. Returns its [`Done`] line (also printed) unless killed. A
/// [`Plan::Diskerr`] writer sets its disk-error schedule first and goes on after every failed
/// official call, printing an [`IoFailure`] line for each call during which scheduled calls
/// failed (a store that does not open ends the run: `done` with no op).
pub fn run_writer(lib: &dyn OfficialLib, dir: &Path, spec: &WriterSpec) -> Result<Done> {
    let ops = spec.ops(&lib.features());
    let kind = spec.kind;
    let mode = if spec.plan.own_mode() {
        kind.mode()
    } else {
        ModeKind::Multi
    };
    let say = |line: &str| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    let keep_going = spec.plan.keeps_going();
    let mut watch = FailureWatch::new();
    // Says what failed during the official call `at`; without `keep_going`, its error ends
    // the run.
    let mut seen = |at: &dyn Fn() -> String, r: Result<bool>| -> Result<bool> {
        if let Some(f) = watch.take(at(), || returned(&r)) {
            say(&f.line());
        }
        match r {
            Err(_) if keep_going => Ok(false),
            r => r,
        }
    };
    if keep_going || !spec.io_faults.is_empty() {
        io_faults::set(&spec.io_faults).map_err(|e| Error::Official {
            tag: lib.tag().to_string(),
            message: e.to_string(),
        })?;
    }
    let opened = lib.open_with(dir, STORE_ID, mode, kind.crypt_key(), kind.aes256());
    let opened = match opened {
        Err(e) if keep_going => {
            let r: Result<bool> = Err(e);
            seen(&|| "open".into(), r)?;
            let done = Done::default();
            say(&done.line());
            return Ok(done);
        }
        r => r?,
    };
    let mut store = opened;
    if kind.key_expire() {
        let enabled = store.enable_key_expire(0);
        if !seen(&|| "open".into(), enabled)? && !keep_going {
            return Err(Error::Official {
                tag: lib.tag().to_string(),
                message: "enableAutoKeyExpire refused".into(),
            });
        }
    }
    let wait = || {
        let _ = std::io::stdin().lock().read_line(&mut String::new());
    };
    // With `--steps`: says the call and waits for the parent.
    let step = |call: Call| {
        if spec.steps {
            say(&call.line());
            wait();
        }
    };
    let syncs = plan::syncs(spec, ops.len());
    if spec.plan != Plan::Faults {
        let r = store.sync().map(|()| true);
        seen(&|| "open".into(), r)?;
        say("ready");
    }
    if spec.wait_go {
        wait();
    }
    step(Call::Open);
    let data = dir.join(STORE_ID);
    let size = || std::fs::metadata(&data).map(|m| m.len()).unwrap_or(0);
    let mut done = Done {
        seq_start: meta_sequence(dir),
        max_file_size: size(),
        ..Done::default()
    };
    let mut last_size = done.max_file_size;
    let started = Instant::now();
    for (i, op) in ops.iter().enumerate() {
        match spec.kill {
            Kill::BeforeOp(k) if k == i => kill_self(),
            Kill::During(k, us) if k == i => {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_micros(us));
                    kill_self();
                });
            }
            _ => {}
        }
        let r = apply(store.as_mut(), op);
        seen(&|| format!("op {i}"), r).map_err(|e| Error::Other(format!("op {i} {op:?}: {e}")))?;
        step(Call::Op(i));
        if syncs[i] {
            let r = store.sync().map(|()| true);
            seen(&|| format!("sync {i}"), r)?;
            step(Call::Sync);
        }
        if spec.plan != Plan::Faults {
            let s = size();
            done.max_file_size = done.max_file_size.max(s);
            done.file_shrinks += u64::from(s < last_size);
            last_size = s;
        }
        if spec.pace_us > 0 {
            std::thread::sleep(Duration::from_micros(spec.pace_us));
        }
    }
    if spec.kill != Kill::Never {
        // The kill point lies past the last op: die before closing.
        kill_self();
    }
    done.writer_ms = started.elapsed().as_millis() as u64;
    let end = || "end".to_string();
    let r = store.sync().map(|()| true);
    seen(&end, r)?;
    done.ops = ops.len() as u64;
    match store.count(false) {
        Ok(n) => done.count = n as u64,
        Err(e) if !keep_going => return Err(e),
        Err(_) => {}
    }
    match state_digest(&ops, |k, ty| store.get(k, ty)) {
        Ok(d) => done.digest = d,
        Err(e) if !keep_going => return Err(e),
        Err(_) => {}
    }
    done.seq_end = meta_sequence(dir);
    let r = store.close().map(|()| true);
    seen(&end, r)?;
    say(&done.line());
    Ok(done)
}

/// How long a writer child may take to open its store and say `ready`.
pub const WRITER_START: Duration = Duration::from_secs(60);

/// Parent side: starts the writer of `spec` with `tag` into `dir` and waits for its `ready`
/// (send `go` with [`Running::send_line`] when `spec.wait_go`; end with [`finish`]).
pub fn start(exe: &ChildExe, tag: &str, dir: &Path, spec: &WriterSpec) -> Result<Running> {
    let mut child = Running::spawn(spec.command(exe, tag, dir), true)?;
    match child.next_line(WRITER_START) {
        Line::Line(l) if l == "ready" => Ok(child),
        other => {
            child.kill();
            let stderr = child.wait().map(|(_, _, e)| e).unwrap_or_default();
            Err(Error::Other(format!(
                "writer {tag} did not start (said {other:?}): {}",
                stderr.trim()
            )))
        }
    }
}

/// Parent side: waits for a started writer to end and parses its [`Done`] line.
pub fn finish(child: Running) -> Result<Done> {
    let (status, rest, stderr) = child.wait()?;
    match rest.last().and_then(|l| Done::parse(l)) {
        Some(done) if status.success() => Ok(done),
        _ => Err(Error::Other(format!(
            "writer failed: {status}, said {rest:?}, stderr: {}",
            stderr.trim()
        ))),
    }
}

/// Parent side of a writer started with `spec.steps` ([`start`]): calls `at` after every
/// official call (the writer waits meanwhile), then waits for the writer's end as [`finish`]
/// does. A call later than [`child_timeout`] kills the writer.
pub fn run_steps(mut child: Running, mut at: impl FnMut(Call) -> Result<()>) -> Result<Done> {
    let stop = |mut child: Running, why: String| {
        child.kill();
        let stderr = child.wait().map(|(_, _, e)| e).unwrap_or_default();
        Err(Error::Other(format!(
            "stepped writer: {why}; stderr: {}",
            stderr.trim()
        )))
    };
    loop {
        match child.next_line(child_timeout()) {
            Line::Line(l) => match Call::parse(&l) {
                Some(call) => {
                    if let Err(e) = at(call) {
                        return stop(child, format!("at {call:?}: {e}"));
                    }
                    child.send_line("go")?;
                }
                None => {
                    let (status, rest, stderr) = child.wait()?;
                    return match Done::parse(&l) {
                        Some(d) if status.success() => Ok(d),
                        _ => Err(Error::Other(format!(
                            "stepped writer failed: {status}, said {l:?} {rest:?}, stderr: {}",
                            stderr.trim()
                        ))),
                    };
                }
            },
            Line::Closed => return finish(child),
            Line::TimedOut => return stop(child, "no call within the timeout".into()),
        }
    }
}

/// Parent side of the fault plan: runs the writer under [`child_timeout`]; `Ok(true)` when it
/// was killed as `spec.kill` asked, `Ok(false)` when it ran to its end.
pub fn run_killed(exe: &ChildExe, tag: &str, dir: &Path, spec: &WriterSpec) -> Result<bool> {
    let child = run_watched(spec.command(exe, tag, dir), child_timeout(), None, true)?;
    use std::os::unix::process::ExitStatusExt;
    match child.status {
        Some(st) if st.success() && spec.kill == Kill::Never => Ok(false),
        Some(st) if st.signal() == Some(9) && spec.kill != Kill::Never => Ok(true),
        other => Err(Error::Other(format!(
            "writer {tag} {} seed {} kill {}: {other:?}, stderr: {}",
            spec.kind,
            spec.seed,
            spec.kill.arg(),
            child.stderr.trim()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_and_done_round_trip() {
        for k in [Kill::Never, Kill::BeforeOp(3), Kill::During(7, 250)] {
            assert_eq!(k.arg().parse::<Kill>(), Ok(k));
        }
        assert!("during:1".parse::<Kill>().is_err());
        assert!("sometimes".parse::<Kill>().is_err());
        for c in [Call::Open, Call::Op(0), Call::Op(41), Call::Sync] {
            assert_eq!(Call::parse(&c.line()), Some(c));
        }
        assert_eq!(Call::parse("step op x"), None);
        assert_eq!(Call::parse("done {}"), None);
        let d = Done {
            ops: 5,
            count: 2,
            digest: 0xabc,
            max_file_size: 4096,
            file_shrinks: 1,
            seq_start: 1,
            seq_end: 3,
            writer_ms: 9,
        };
        assert_eq!(Done::parse(&d.line()), Some(d));
        assert_eq!(Done::parse("done 5"), None);
    }

    #[test]
    fn plans_are_deterministic_and_mixed() {
        let features = Features::from_tag("v2.4.2").unwrap();
        for plan in [
            Plan::Live,
            Plan::Stress,
            Plan::Shrink,
            Plan::Faults,
            Plan::Powerloss,
            Plan::Diskerr,
        ] {
            let ops = match plan {
                Plan::Shrink => 2,
                Plan::Stress => 20_000,
                _ => 3000,
            };
            let mut spec = WriterSpec::new(plan, ops, 12);
            spec.seed = 7;
            let a = spec.ops(&features);
            assert_eq!(a, spec.ops(&features), "{plan:?}");
            assert!(
                a.iter().any(|op| matches!(op, Op::Remove { .. })),
                "{plan:?}"
            );
            assert!(a.iter().any(|op| matches!(op, Op::Trim)), "{plan:?}");
            assert!(a.iter().any(|op| matches!(op, Op::ClearAll)), "{plan:?}");
            let big = a.iter().any(|op| {
                matches!(op, Op::Set { value: Value::Bytes(b), .. } if b.len() > 1024)
                    || matches!(op, Op::Set { value: Value::String(s), .. } if s.len() > 1024)
            });
            assert!(big, "{plan:?} has big values");
            let syncs = plan::syncs(&spec, a.len()).iter().filter(|s| **s).count();
            if matches!(plan, Plan::Powerloss | Plan::Diskerr) {
                assert!((100..300).contains(&syncs), "{syncs} syncs in 3000 ops");
            } else {
                assert_eq!(syncs, 0, "{plan:?}");
            }
        }
    }
}
