//! The writer of the fault suite: a seeded workload run by the official library in a child
//! process (`faults write ...`), optionally killed with SIGKILL — right before op `k`
//! (deterministic) or `delay` microseconds after op `k` started (lands inside an op: an
//! expansion, a full write-back, a meta update), from a thread of the writer itself.

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::kind::{Features, StoreKind};
use crate::official::OfficialLib;
use crate::value::{Value, ValueType};
use crate::vocab::{key_name, SplitMix, STORE_ID};
use crate::writer::child::{run_watched, ChildExe, CHILD_TIMEOUT};

/// Expire duration of the expiring kinds' explicit durations: far enough never to pass during
/// a run (the official getters would delete expired keys as they read).
pub const FAR: u32 = 600_000_000;

/// One writer operation.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOp {
    /// `set(value, key[, expire])`.
    Set(Vec<u8>, Value, Option<u32>),
    /// `removeValueForKey`.
    Remove(Vec<u8>),
    /// `clearAll()`.
    ClearAll,
    /// `trim()`.
    Trim,
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

    /// Parses [`Kill::arg`].
    pub fn parse(s: &str) -> Option<Kill> {
        let mut p = s.split(':');
        match (p.next()?, p.next(), p.next()) {
            ("never", None, None) => Some(Kill::Never),
            ("before", Some(k), None) => Some(Kill::BeforeOp(k.parse().ok()?)),
            ("during", Some(k), Some(us)) => Some(Kill::During(k.parse().ok()?, us.parse().ok()?)),
            _ => None,
        }
    }
}

fn value(rng: &mut SplitMix, features: &Features) -> Value {
    let big = rng.below(8) == 0;
    let n = if big {
        512 + rng.below(6000) as usize
    } else {
        rng.below(40) as usize
    };
    let types: Vec<ValueType> = features.getters();
    let ty = types[rng.below(types.len() as u64) as usize];
    let x = rng.next_u64();
    value_of(rng, ty, n, x)
}

/// The writer's value of type `ty`: `n` sizes strings, bytes and vectors; `x` seeds scalars.
pub fn value_of(rng: &mut SplitMix, ty: ValueType, n: usize, x: u64) -> Value {
    match ty {
        ValueType::Bool => Value::Bool(x & 1 == 1),
        ValueType::I32 => Value::I32(x as i32 >> (x % 31)),
        ValueType::U32 => Value::U32(x as u32 >> (x % 31)),
        ValueType::I64 => Value::I64(x as i64 >> (x % 63)),
        ValueType::U64 => Value::U64(x >> (x % 63)),
        ValueType::F32 => Value::F32(f32::from_bits(x as u32)),
        ValueType::F64 => Value::F64(f64::from_bits(x)),
        ValueType::String => Value::String(rng.letters(n)),
        ValueType::Bytes => Value::Bytes(rng.letters(n).into_bytes()),
        ValueType::Strings => Value::Strings((0..1 + n / 64).map(|i| rng.letters(i % 9)).collect()),
        ValueType::VecBool => Value::VecBool((0..n / 8).map(|i| i % 3 == 0).collect()),
        ValueType::VecI32 => Value::VecI32((0..n / 8).map(|i| i as i32 - 3).collect()),
        ValueType::VecU32 => Value::VecU32((0..n / 8).map(|i| i as u32 * 7).collect()),
        ValueType::VecI64 => Value::VecI64((0..n / 8).map(|i| -(i as i64) << 33).collect()),
        ValueType::VecU64 => Value::VecU64((0..n / 8).map(|i| i as u64 * 1_000_003).collect()),
        ValueType::VecF32 => Value::VecF32((0..n / 8).map(|i| i as f32 * 0.5).collect()),
        ValueType::VecF64 => Value::VecF64((0..n / 8).map(|i| i as f64 / 3.0).collect()),
    }
}

/// The seeded workload: mostly sets (every getter type of the version, small values and, one
/// in eight, values of 0.5–6.5 KB that force expansions and full write-backs), removes, rare
/// `clearAll` and `trim`. Expiring kinds also get explicit far-future durations.
pub fn workload(seed: u64, ops: usize, kind: StoreKind, features: &Features) -> Vec<WriteOp> {
    let mut rng = SplitMix::new(seed ^ 0xfa17_5eed);
    let keys = 8 + rng.below(40);
    (0..ops)
        .map(|_| {
            let r = rng.below(1000);
            let key = key_name(rng.below(keys) as usize).into_bytes();
            if r < 4 {
                WriteOp::ClearAll
            } else if r < 15 {
                WriteOp::Trim
            } else if r < 160 {
                WriteOp::Remove(key)
            } else {
                let expire = (kind.key_expire() && rng.below(3) == 0).then_some(FAR);
                WriteOp::Set(key, value(&mut rng, features), expire)
            }
        })
        .collect()
}

fn kill_self() -> ! {
    // SIGKILL: no destructor, no msync, no munmap — what a crash or the OOM killer leaves.
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Runs the writer side (in the child process): opens [`STORE_ID`] in `dir` with `kind`,
/// performs the workload and dies as `kill` says.
pub fn run_writer(
    lib: &dyn OfficialLib,
    dir: &Path,
    kind: StoreKind,
    seed: u64,
    ops: usize,
    kill: Kill,
) -> Result<()> {
    let features = lib.features();
    let ops = workload(seed, ops, kind, &features);
    let mut store = lib.open(dir, STORE_ID, kind)?;
    if kind.key_expire() && !store.enable_key_expire(0)? {
        return Err(Error::Official {
            tag: lib.tag().to_string(),
            message: "enableAutoKeyExpire refused".into(),
        });
    }
    for (i, op) in ops.iter().enumerate() {
        match kill {
            Kill::BeforeOp(k) if k == i => kill_self(),
            Kill::During(k, us) if k == i => {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_micros(us));
                    kill_self();
                });
            }
            _ => {}
        }
        match op {
            WriteOp::Set(k, v, e) => {
                store.set(k, v, *e)?;
            }
            WriteOp::Remove(k) => store.remove(k)?,
            WriteOp::ClearAll => store.clear_all()?,
            WriteOp::Trim => store.trim()?,
        }
    }
    if kill != Kill::Never {
        // The kill point lies past the last op: die before closing.
        kill_self();
    }
    store.sync()?;
    store.close()
}

/// Parent side: runs the writer child (`conformance faults write ...`) into `dir`; `Ok(true)`
/// when it was killed as `kill` asked, `Ok(false)` when it ran to its end.
pub fn run_writer_child(
    exe: &ChildExe,
    tag: &str,
    dir: &Path,
    kind: StoreKind,
    seed: u64,
    ops: usize,
    kill: Kill,
) -> Result<bool> {
    let mut cmd = exe.command(&["faults", "write"]);
    cmd.args(["--tag", tag, "--kind", kind.id()])
        .arg("--dir")
        .arg(dir)
        .args(["--seed", &seed.to_string(), "--ops", &ops.to_string()])
        .args(["--kill", &kill.arg()]);
    let child = run_watched(cmd, CHILD_TIMEOUT, None, true)?;
    use std::os::unix::process::ExitStatusExt;
    match child.status {
        Some(st) if st.success() && kill == Kill::Never => Ok(false),
        Some(st) if st.signal() == Some(9) && kill != Kill::Never => Ok(true),
        other => Err(Error::Other(format!(
            "writer {tag} {kind} seed {seed} kill {}: {other:?}, stderr: {}",
            kill.arg(),
            child.stderr.trim()
        ))),
    }
}
