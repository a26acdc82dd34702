//! Runs a workload through the official library of one version (or of several in turn:
//! version migration) in a fresh temporary folder, comparing the reader with the official
//! getters all along.
//!
//! Two readers are judged: a **long-lived** `Store` opened right after the official library
//! created the store and kept open to the end (its check-on-read, partial reloads, CFB
//! continuation of encrypted appends and full reloads after write-backs are what it
//! exercises; it is replaced only when a `reKey` changes the key, which a `Store` cannot
//! follow), and a **fresh** reader opened at each comparison.
//!
//! A comparison (a *check*) happens after every batch of operations
//! ([`Workload::check_every`]), at every `Reopen`, when the writing version changes and at
//! the end. A check:
//! 1. syncs the official instance and captures every read of both readers before any
//!    official getter runs (official getters delete expired keys as a side effect);
//! 2. compares them with the live official instance (its getters read its in-process state);
//! 3. at a `Reopen`, at the end, or when step 2 found a difference: closes and reopens the
//!    official instance (its state now comes from the files only) and compares the same
//!    captured reads again, then a new capture of both readers.
//!
//! The reader is judged against what the official library makes of the FILES: a difference
//! with the reopened instance is a failure. A difference seen only with the live instance
//! means the official in-memory state disagreed with its own files; and an official key set
//! that changes across close/reopen means the library cannot read back its own files. Both
//! are upstream bugs, accepted only where a row of [`crate::judge::exceptions::TABLE`] covers the
//! version and configuration (then kept as [`RunOutcome::divergences`]); anywhere else they
//! fail the run. The verdict therefore does not depend on whether the official library's
//! random IVs happened to trigger such a bug in this run.
//!
//! The expire time the reader reports for a key is checked against the time window around
//! the `set` call that wrote it (whenever that window is known exactly).
//!
//! Time: the reader reads the official library's clock (`time(nullptr)`, see
//! [`mmkv_reader::SystemClock`]). Workloads only use expire durations far from "now" or
//! [`SHORT_EXPIRE`]; after a short one the runner sleeps until it has certainly passed, on that
//! clock too ([`sleep_until_secs`]), before anything is compared.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mmkv_reader::ReloadStats;
use mmkv_sys::versions::Tag;

use crate::judge::compare::{
    capture_reader, compare_with_official, official_visible_keys, render_keys, Mismatch,
    ReaderReads,
};
use crate::error::{Error, Result};
use crate::judge::exceptions::{accepted, Difference, Exception, Scope};
use crate::kind::{ModeKind, StoreKind};
use crate::official::{hold_process, OfficialLib, OfficialStore};
use crate::value::Value;
use crate::view::{ReaderFactory, ReaderView};
use crate::workload::{
    expire_time, touched_keys, Op, Repro, Workload, DEFAULT_CHECK_EVERY, SHORT_EXPIRE, YEAR_EXPIRE,
};

/// Seconds since the epoch, as `time(nullptr)` sees them.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Sleeps until `now_secs() >= secs` and the official library's clock says so too: it reads
/// `time(nullptr)`, on Linux the coarse clock the kernel advances once a tick, so right after a
/// second begins it can still report the one before (7 ms behind on a CI machine). A check
/// made then would find a short expiry not yet passed for the official instance (a CI run,
/// whose reader still read the precise clock, failed so in three expiring kinds at once).
pub fn sleep_until_secs(secs: u64) {
    loop {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        if now.as_secs() >= secs && official_clock_secs() >= secs {
            return;
        }
        let left = Duration::from_secs(secs).saturating_sub(now);
        std::thread::sleep(left + Duration::from_millis(5));
    }
}

/// The seconds the official library's `time(nullptr)` returns now: the reader's
/// [`SystemClock`](mmkv_reader::SystemClock) reads that same clock.
fn official_clock_secs() -> u64 {
    u64::from(mmkv_reader::Clock::now_secs(&mmkv_reader::SystemClock))
}

/// An accepted upstream difference (see [`crate::judge::exceptions`]).
#[derive(Debug, Clone)]
pub struct Divergence {
    /// The check it was seen in.
    pub stage: String,
    /// What differed.
    pub mismatch: Mismatch,
    /// The table row that accepts it.
    pub exception: &'static Exception,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{}] {} (accepted: {}, {})",
            self.stage,
            self.mismatch,
            self.exception.reference,
            self.exception.difference.describe()
        )
    }
}

/// Counters of one run (what ran: the report and the tests print them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunStats {
    /// Operations executed by the official library.
    pub ops: u64,
    /// Operations this version cannot perform (skipped).
    pub unsupported_ops: u64,
    /// `set()` calls the library refused.
    pub rejected_sets: u64,
    /// Checks (comparison points).
    pub checks: u64,
    /// Keys compared, summed over every capture of either reader.
    pub keys_compared: u64,
    /// (key, getter) reads compared, summed likewise.
    pub reads_compared: u64,
    /// Expire times compared with what the writer set.
    pub expire_checked: u64,
    /// Reload counters of the long-lived reader(s), summed.
    pub long_lived: ReloadCounts,
    /// Times the long-lived reader had to be replaced (a `reKey` changed the key).
    pub long_lived_replaced: u64,
    /// Switches of the writing version (migration) that were checked.
    pub version_switches: u64,
}

/// [`ReloadStats`] that can be summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReloadCounts {
    /// Full reloads.
    pub full: u64,
    /// Partial reloads.
    pub partial: u64,
    /// Failed reloads.
    pub failed: u64,
}

impl ReloadCounts {
    fn add(&mut self, s: &ReloadStats) {
        self.full += s.full;
        self.partial += s.partial;
        self.failed += s.failed;
    }

    /// Sums two counters.
    pub fn merge(&mut self, o: &ReloadCounts) {
        self.full += o.full;
        self.partial += o.partial;
        self.failed += o.failed;
    }
}

impl RunStats {
    /// Adds another run's counters.
    pub fn merge(&mut self, o: &RunStats) {
        self.ops += o.ops;
        self.unsupported_ops += o.unsupported_ops;
        self.rejected_sets += o.rejected_sets;
        self.checks += o.checks;
        self.keys_compared += o.keys_compared;
        self.reads_compared += o.reads_compared;
        self.expire_checked += o.expire_checked;
        self.long_lived.merge(&o.long_lived);
        self.long_lived_replaced += o.long_lived_replaced;
        self.version_switches += o.version_switches;
    }
}

/// What one run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// Reader failures, each with the check it was seen in.
    pub mismatches: Vec<(String, Mismatch)>,
    /// Differences accepted by a row of the exceptions table.
    pub divergences: Vec<Divergence>,
    /// Why a migration run stopped before its end: an older version could not read the file
    /// a newer one left (not a failure: that version is no reference for such files).
    pub stopped: Option<String>,
    /// What ran.
    pub stats: RunStats,
    /// The folder holding the store files (deleted on drop).
    pub dir: tempfile::TempDir,
    /// Store id (file name) inside `dir`.
    pub store_id: String,
}

impl RunOutcome {
    /// True when the reader agreed everywhere.
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty()
    }

    /// True when the official library lost its own files (an accepted upstream bug) and the
    /// run stopped comparing there.
    pub fn official_lost_files(&self) -> bool {
        self.divergences.iter().any(|d| {
            matches!(
                d.exception.difference,
                Difference::OfficialLostOwnFiles
                    | Difference::OfficialMisloadsInlineRecords
                    | Difference::OfficialWriteBackClobbersFirstRecord
                    | Difference::OfficialRekeyNotWritten
                    | Difference::OfficialRekeyRestartsCipher
            )
        })
    }

    /// The differing reads, one per line (accepted upstream divergences last).
    pub fn diff_text(&self) -> String {
        let mut out = String::new();
        for (stage, m) in &self.mismatches {
            let _ = writeln!(out, "[{stage}] {m}");
        }
        for d in &self.divergences {
            let _ = writeln!(out, "{d}");
        }
        out
    }

    /// A short summary (first few mismatches) for test failure messages.
    pub fn summary(&self, max: usize) -> String {
        let mut out = format!("{} mismatch(es)", self.mismatches.len());
        for (stage, m) in self.mismatches.iter().take(max) {
            let _ = write!(out, "\n  [{stage}] {m}");
        }
        out
    }
}

/// One version's part of a run.
#[derive(Clone, Copy)]
pub struct Step<'a> {
    /// The official version that performs `ops`.
    pub lib: &'a dyn OfficialLib,
    /// Its operations.
    pub ops: &'a [Op],
}

/// Executes `workload` on a fresh store of `kind` with the official library `lib`, comparing
/// the reader made by `reader` with it all along (see the module docs).
pub fn run_workload(
    lib: &dyn OfficialLib,
    kind: StoreKind,
    workload: &Workload,
    reader: &dyn ReaderFactory,
) -> Result<RunOutcome> {
    run_steps(
        &[Step {
            lib,
            ops: &workload.ops,
        }],
        kind,
        workload,
        reader,
    )
}

/// Runs a repro with `libs[0]` for its workload and `libs[i]` for its i-th continuation.
pub fn run_repro(
    libs: &[&dyn OfficialLib],
    repro: &Repro,
    reader: &dyn ReaderFactory,
) -> Result<RunOutcome> {
    let lib = *libs
        .first()
        .ok_or_else(|| Error::Other("no official version".to_string()))?;
    let mut steps = vec![Step {
        lib,
        ops: &repro.workload.ops,
    }];
    for (c, lib) in repro.then.iter().zip(libs.iter().skip(1)) {
        steps.push(Step {
            lib: *lib,
            ops: &c.ops,
        });
    }
    run_steps(&steps, repro.kind, &repro.workload, reader)
}

/// Runs `steps` in order on one store of `kind` (each version opens the store the previous
/// one closed; the long-lived reader stays open across the switch). `workload` gives the
/// default expire duration and the batch size; its own ops are ignored.
pub fn run_steps(
    steps: &[Step<'_>],
    kind: StoreKind,
    workload: &Workload,
    reader: &dyn ReaderFactory,
) -> Result<RunOutcome> {
    let first = steps
        .first()
        .ok_or_else(|| Error::Other("a run needs at least one step".to_string()))?;
    // Held to the end of the run: v1.2.16-v1.3.0 multi-process instances must not share the
    // process with other runs (see `ProcessHold`).
    let _process = hold_process(steps.iter().map(|s| s.lib.tag()), kind);
    let dir = tempfile::Builder::new()
        .prefix("conformance-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let id = kind.id().to_string();
    let keys: Vec<Vec<u8>> = touched_keys(steps.iter().flat_map(|s| s.ops.iter()))
        .into_iter()
        .map(|k| k.0)
        .collect();
    let config = Config {
        mode: kind.mode(),
        crypt_key: kind.crypt_key().map(<[u8]>::to_vec),
        aes256: kind.aes256(),
        expire: kind.key_expire().then_some(workload.default_expire),
    };
    let official = open_official(first.lib, dir.path(), &id, &config)?;
    let mut r = Runner {
        reader,
        path: dir.path().join(&id),
        dir: dir.path().to_path_buf(),
        id: id.clone(),
        lib: first.lib,
        official,
        config,
        long: None,
        keys,
        stats: RunStats::default(),
        mismatches: Vec::new(),
        divergences: Vec::new(),
        last_short: None,
        expect: BTreeMap::new(),
        written: BTreeMap::new(),
        lost: false,
        stopped: None,
        takeover: None,
    };
    r.open_long_lived();
    let every = workload.check_every.unwrap_or(DEFAULT_CHECK_EVERY).max(1);
    for (n, step) in steps.iter().enumerate() {
        if n > 0 {
            r.switch_version(step.lib)?;
        }
        let mut since_check = 0;
        for (i, op) in step.ops.iter().enumerate() {
            if r.lost {
                break;
            }
            if matches!(op, Op::Reopen) {
                r.check(&format!("{}: reopen at op {i}", r.lib.tag()), true)?;
                since_check = 0;
                continue;
            }
            r.apply(op)?;
            since_check += 1;
            if since_check >= every {
                r.check(&format!("{}: after op {i}", r.lib.tag()), false)?;
                since_check = 0;
            }
        }
    }
    if !r.lost {
        r.check("end", true)?;
    }
    r.official.close()?;
    r.retire_long_lived();
    Ok(RunOutcome {
        mismatches: r.mismatches,
        divergences: r.divergences,
        stopped: r.stopped,
        stats: r.stats,
        dir,
        store_id: id,
    })
}

/// The store configuration at a point of a run (`reKey` and expire toggles change it).
#[derive(Debug, Clone)]
struct Config {
    mode: ModeKind,
    crypt_key: Option<Vec<u8>>,
    aes256: bool,
    /// `Some(default duration)` while `enableAutoKeyExpire` is in effect.
    expire: Option<u32>,
}

fn open_official(
    lib: &dyn OfficialLib,
    dir: &Path,
    id: &str,
    config: &Config,
) -> Result<Box<dyn OfficialStore>> {
    let mut store = lib.open_with(
        dir,
        id,
        config.mode,
        config.crypt_key.as_deref(),
        config.aes256,
    )?;
    if let Some(default) = config.expire {
        if lib.features().key_expire {
            store.enable_key_expire(default)?;
        }
    }
    Ok(store)
}

/// What the reader must report as a key's expire time: within `lo..=hi` (0 = never).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Window(u32, u32),
    Unknown,
}

struct Runner<'a> {
    reader: &'a dyn ReaderFactory,
    path: PathBuf,
    dir: PathBuf,
    id: String,
    lib: &'a dyn OfficialLib,
    official: Box<dyn OfficialStore>,
    config: Config,
    long: Option<Box<dyn ReaderView>>,
    keys: Vec<Vec<u8>>,
    stats: RunStats,
    mismatches: Vec<(String, Mismatch)>,
    divergences: Vec<Divergence>,
    last_short: Option<u64>,
    expect: BTreeMap<Vec<u8>, Expect>,
    /// The value last written to each key, while it is certainly still there.
    written: BTreeMap<Vec<u8>, Value>,
    /// The official library lost its own files (accepted), or an older version cannot read
    /// a newer file: nothing more can be judged.
    lost: bool,
    /// Why a migration run stopped early (an older version cannot read the newer file).
    stopped: Option<String>,
    /// The region start as the previous version left the files when the current one took
    /// them over.
    takeover: Option<Takeover>,
}

/// The start of the data region as one version left it for the next (what v1.2.0's
/// write-back over a v1.1.x file damages).
#[derive(Debug, Clone)]
struct Takeover {
    /// Length of the item-size holder.
    holder_len: usize,
    /// The first key-stream block of the file's IV (`None`: plaintext).
    stream: Option<[u8; 16]>,
    /// The region's bytes from the holder's end to byte 4 (the first record's start).
    first: Vec<u8>,
}

fn open_error(which: &str, e: String) -> Mismatch {
    Mismatch {
        key: None,
        what: format!("open ({which})"),
        official: "opened".to_string(),
        reader: format!("error: {e}"),
    }
}

impl<'a> Runner<'a> {
    fn scope(&self) -> Scope {
        Scope::new(
            self.lib.tag(),
            self.config.crypt_key.is_some(),
            self.config.mode == ModeKind::Multi,
        )
        .unwrap_or(Scope {
            version: Tag {
                major: 0,
                minor: 0,
                patch: 0,
            },
            encrypted: self.config.crypt_key.is_some(),
            multi_process: self.config.mode == ModeKind::Multi,
        })
    }

    fn open_reader(&self) -> std::result::Result<Box<dyn ReaderView>, String> {
        self.reader.open(
            &self.path,
            self.config.crypt_key.as_deref(),
            self.config.aes256,
        )
    }

    fn open_long_lived(&mut self) {
        self.official.sync().ok();
        match self.open_reader() {
            Ok(v) => self.long = Some(v),
            Err(e) => {
                self.long = None;
                let mismatch = open_error("long-lived reader", e);
                let live_keys = official_visible_keys(self.official.as_mut()).ok();
                match self.writeback_clobbered(live_keys.as_ref()) {
                    Some(exception) => {
                        self.divergences.push(Divergence {
                            stage: format!("{}: long-lived reader", self.lib.tag()),
                            mismatch,
                            exception,
                        });
                        self.lost = true;
                    }
                    None => self.mismatches.push(("start".to_string(), mismatch)),
                }
            }
        }
    }

    fn retire_long_lived(&mut self) {
        if let Some(s) = self.long.take().and_then(|v| v.stats()) {
            self.stats.long_lived.add(&s);
        }
    }

    fn reopen_official(&mut self) -> Result<()> {
        self.official.close()?;
        self.official = open_official(self.lib, &self.dir, &self.id, &self.config)?;
        Ok(())
    }

    fn switch_version(&mut self, lib: &'a dyn OfficialLib) -> Result<()> {
        let stage = format!("{}: before switching to {}", self.lib.tag(), lib.tag());
        self.check(&stage, false)?;
        if self.lost {
            return Ok(());
        }
        let before = official_visible_keys(self.official.as_mut())?;
        self.official.close()?;
        let older = Tag::parse(lib.tag()) < Tag::parse(self.lib.tag());
        let from = self.lib.tag().to_string();
        if older && self.config.aes256 && !lib.features().aes256 {
            self.stopped = Some(format!(
                "{} has no AES-256 but the store {from} left is AES-256",
                lib.tag()
            ));
            self.lost = true;
            return Ok(());
        }
        if older && !lib.features().key_expire && self.meta_key_expire() {
            // The file says its values carry expire times; a version without expiration
            // ignores that and is no reference for it.
            self.stopped = Some(format!(
                "{} has no key expiration but the store {from} left has it enabled",
                lib.tag()
            ));
            self.lost = true;
            return Ok(());
        }
        self.takeover = self.region_start();
        self.lib = lib;
        self.official = open_official(self.lib, &self.dir, &self.id, &self.config)?;
        if older {
            let after = official_visible_keys(self.official.as_mut())?;
            if after != before {
                // An older version that cannot read a newer file is no reference.
                self.stopped = Some(format!(
                    "{} cannot read the store {from} left ({} of {} keys visible)",
                    lib.tag(),
                    after.len(),
                    before.len()
                ));
                self.lost = true;
                return Ok(());
            }
        }
        self.stats.version_switches += 1;
        let stage = format!("{}: opened after {}", lib.tag(), stage);
        self.check(&stage, false)
    }

    /// The store's meta file (`<data file>.crc`).
    fn meta_file(&self) -> PathBuf {
        mmkv_reader::meta_path(&self.path)
    }

    /// The key-expiration flag of the meta file as it is now.
    fn meta_key_expire(&self) -> bool {
        std::fs::read(self.meta_file())
            .ok()
            .and_then(|b| mmkv_reader::meta::MetaInfo::parse(&b).ok())
            .is_some_and(|m| m.key_expire())
    }

    fn wait_short_expiry(&mut self) {
        if let Some(t) = self.last_short.take() {
            sleep_until_secs(t + u64::from(SHORT_EXPIRE));
        }
    }

    fn apply(&mut self, op: &Op) -> Result<()> {
        let features = self.lib.features();
        self.stats.ops += 1;
        match op {
            Op::Set { key, value, expire } => {
                if (value.value_type().is_typed_vector() && !features.typed_vectors)
                    || (expire.is_some() && !features.key_expire)
                {
                    self.stats.unsupported_ops += 1;
                    return Ok(());
                }
                let t0 = now_secs();
                let done = self.official.set(&key.0, value, *expire)?;
                let t1 = now_secs();
                if !done {
                    self.stats.rejected_sets += 1;
                    return Ok(());
                }
                if matches!(expire, Some(d) if *d != 0 && *d <= SHORT_EXPIRE) {
                    self.last_short = Some(t1);
                }
                // The official clock may be a coarse one that lags a tick behind.
                let t0 = t0.saturating_sub(1);
                // The expire time the official library writes for a duration set at `t`.
                let at = |t: u64, d: u32| expire_time(t, d, features.saturating_expire);
                let duration = self.config.expire.map(|default| expire.unwrap_or(default));
                let lasting = match duration {
                    None | Some(0) => true,
                    // A year or more ahead, unless the sum wrapped to the past.
                    Some(d) => d >= YEAR_EXPIRE && u64::from(at(t0, d)) > t1,
                };
                if lasting {
                    self.written.insert(key.0.clone(), value.clone());
                } else {
                    self.written.remove(&key.0);
                }
                let expect = match duration {
                    None | Some(0) => Expect::Window(0, 0),
                    // The sum wrapped between the two readings of the clock.
                    Some(d) if at(t0, d) > at(t1, d) => Expect::Unknown,
                    Some(d) => Expect::Window(at(t0, d), at(t1, d)),
                };
                self.expect.insert(key.0.clone(), expect);
            }
            Op::Remove { key } => {
                self.official.remove(&key.0)?;
                self.expect.remove(&key.0);
                self.written.remove(&key.0);
            }
            Op::RemoveKeys { keys } => {
                let ks: Vec<&[u8]> = keys.iter().map(|k| k.0.as_slice()).collect();
                self.official.remove_keys(&ks)?;
                for k in keys {
                    self.expect.remove(&k.0);
                    self.written.remove(&k.0);
                }
            }
            Op::ClearAll => {
                self.official.clear_all()?;
                self.expect.clear();
                self.written.clear();
            }
            Op::ClearAllKeepSpace => {
                if self.official.clear_all_keep_space()? {
                    self.expect.clear();
                    self.written.clear();
                } else {
                    self.stats.unsupported_ops += 1;
                }
            }
            Op::Trim => self.official.trim()?,
            Op::Reopen => self.reopen_official()?,
            Op::WaitExpiry => self.wait_short_expiry(),
            Op::EnableExpire { default_expire } => {
                if !features.key_expire {
                    self.stats.unsupported_ops += 1;
                } else if self.official.enable_key_expire(*default_expire)? {
                    if self.config.expire.is_none() {
                        // What a populated store's existing keys get is the library's choice.
                        self.expect.values_mut().for_each(|e| *e = Expect::Unknown);
                    }
                    self.config.expire = Some(*default_expire);
                }
            }
            Op::DisableExpire => {
                if !features.key_expire {
                    self.stats.unsupported_ops += 1;
                } else if self.official.disable_key_expire()? {
                    self.config.expire = None;
                    self.expect
                        .values_mut()
                        .for_each(|e| *e = Expect::Window(0, 0));
                }
            }
            Op::Rekey(crypt) => {
                let key = crypt.key.as_ref().map(|k| k.0.as_slice());
                self.official.sync()?;
                let before = self.store_files();
                match self.official.rekey(key, crypt.aes256)? {
                    None => self.stats.unsupported_ops += 1,
                    Some(false) => {}
                    Some(true) => {
                        let new_key = key.filter(|k| !k.is_empty()).map(<[u8]>::to_vec);
                        let aes256 = new_key.is_some() && crypt.aes256;
                        let changed =
                            new_key != self.config.crypt_key || aes256 != self.config.aes256;
                        // The library compares the requested AES-128 key with the one it
                        // holds (at most 16 bytes, up to a NUL): a longer key, or one with a
                        // NUL, is a key change for it even when the bytes are the same.
                        let truncated_same = !changed
                            && !aes256
                            && new_key
                                .as_deref()
                                .is_some_and(|k| k.len() > 16 || k.contains(&0));
                        if changed || truncated_same {
                            self.official.sync()?;
                            if self.rekey_not_written(&before, truncated_same) {
                                return Ok(());
                            }
                        }
                        if changed {
                            // A Store's key is fixed at open: check the old reader on the
                            // re-encrypted files is impossible, so it is replaced.
                            self.retire_long_lived();
                            self.config.crypt_key = new_key;
                            self.config.aes256 = aes256;
                            self.stats.long_lived_replaced += 1;
                            self.open_long_lived();
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The data file and the meta file as they are now (`None` when either is unreadable).
    fn store_files(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        Some((
            std::fs::read(&self.path).ok()?,
            std::fs::read(self.meta_file()).ok()?,
        ))
    }

    /// After a successful `reKey` the library takes as a key change: true when it wrote
    /// nothing although the store has content (both files byte-for-byte as `before`, and the
    /// reader with the old key finds at least one key in them) and the
    /// exceptions table lists that for this version (the run stops: the official instance no
    /// longer matches its files).
    ///
    /// A changed key left unwritten means the files still hold the old-key content while the
    /// instance uses the new key: a failure where the table does not list it. `truncated_same`
    /// (the same AES-128 key given longer than 16 bytes or with a NUL) needs no rewrite, so an
    /// unwritten one is only a difference where the table lists it (the cipher-stream restart
    /// of v1.1.x); elsewhere the comparisons go on as usual.
    fn rekey_not_written(
        &mut self,
        before: &Option<(Vec<u8>, Vec<u8>)>,
        truncated_same: bool,
    ) -> bool {
        let Some(before) = before else {
            return false;
        };
        // Content by the data header's size or the meta's actual size (newer versions may
        // leave the header zero).
        let has_content = before.0.get(..4).is_some_and(|b| b != [0u8; 4])
            || mmkv_reader::meta::MetaInfo::parse(&before.1).is_ok_and(|m| m.actual_size > 0);
        if !has_content || self.store_files().as_ref() != Some(before) {
            return false;
        }
        // The configuration still has the old key here, and the files are as before.
        let old = self.open_reader();
        if old.as_ref().is_ok_and(|v| v.count() == 0) {
            // Nothing to re-encrypt (e.g. a reKey right after clearAll: v2.4.2 leaves the
            // holder-only files alone); later comparisons judge the files as usual.
            return false;
        }
        let m = Mismatch {
            key: None,
            what: "files after reKey".to_string(),
            official: "reKey returned true but left both files unchanged".to_string(),
            reader: match old {
                Ok(v) => format!("with the old key: {} key(s)", v.count()),
                Err(e) => format!("with the old key: error: {e}"),
            },
        };
        let stage = format!("{}: reKey", self.lib.tag());
        let difference = if truncated_same {
            Difference::OfficialRekeyRestartsCipher
        } else {
            Difference::OfficialRekeyNotWritten
        };
        match accepted(difference, &self.scope()) {
            Some(exception) => {
                self.divergences.push(Divergence {
                    stage,
                    mismatch: m,
                    exception,
                });
                self.lost = true;
                true
            }
            None if truncated_same => false,
            None => {
                self.mismatches.push((
                    format!(
                        "{stage} (no listed upstream bug covers this version and configuration)"
                    ),
                    m,
                ));
                false
            }
        }
    }

    fn capture_long(
        &self,
        getters: &[crate::value::ValueType],
    ) -> Option<std::result::Result<ReaderReads, Mismatch>> {
        self.long
            .as_ref()
            .map(|v| Ok(capture_reader(v.as_ref(), &self.keys, getters)))
    }

    fn capture_fresh(
        &self,
        getters: &[crate::value::ValueType],
    ) -> std::result::Result<ReaderReads, Mismatch> {
        self.open_reader()
            .map(|v| capture_reader(v.as_ref(), &self.keys, getters))
            .map_err(|e| open_error("fresh reader", e))
    }

    /// Compares one capture with the current official instance.
    fn compare(
        &mut self,
        reads: &std::result::Result<ReaderReads, Mismatch>,
    ) -> Result<Vec<Mismatch>> {
        match reads {
            Err(m) => Ok(vec![m.clone()]),
            Ok(reads) => {
                let getters = self.lib.features().getters();
                let scope = self.scope();
                compare_with_official(
                    self.official.as_mut(),
                    &self.lib.features(),
                    &scope,
                    reads,
                    &getters,
                )
            }
        }
    }

    fn count(&mut self, reads: &std::result::Result<ReaderReads, Mismatch>) {
        if let Ok(r) = reads {
            self.stats.keys_compared += r.keys_read();
            self.stats.reads_compared += r.reads();
        }
    }

    /// Expire times the reader reports against what the writer set.
    fn check_expire(
        &mut self,
        stage: &str,
        which: &str,
        reads: &std::result::Result<ReaderReads, Mismatch>,
    ) {
        let Ok(reads) = reads else { return };
        for (key, got) in &reads.expire_at {
            if let Some(Expect::Window(lo, hi)) = self.expect.get(key) {
                self.stats.expire_checked += 1;
                let got = got.unwrap_or(0);
                if !(*lo..=*hi).contains(&got) {
                    self.mismatches.push((
                        format!("{stage}, {which}"),
                        Mismatch {
                            key: Some(key.clone()),
                            what: "expire_at (vs the writer's set)".to_string(),
                            official: if lo == hi {
                                lo.to_string()
                            } else {
                                format!("{lo}..={hi}")
                            },
                            reader: got.to_string(),
                        },
                    ));
                }
            }
        }
    }

    /// Reader failures against the reopened official, except those of keys for which the
    /// official library cannot read back its own last write while the reader returns exactly
    /// it (accepted only where the exceptions table says so).
    fn judge_reopened(
        &mut self,
        stage: &str,
        which: &str,
        mismatches: Vec<Mismatch>,
        reads: &std::result::Result<ReaderReads, Mismatch>,
    ) -> Result<()> {
        let exception = accepted(Difference::OfficialMisreadsOwnWrite, &self.scope());
        let getters = self.lib.features().getters();
        let mut misread: BTreeMap<Vec<u8>, bool> = BTreeMap::new();
        // Key set and count differences are explained when every key in which they differ
        // is one the official library misreads.
        let store_explained = match (exception, reads) {
            (Some(_), Ok(reads)) if mismatches.iter().any(|m| m.key.is_none()) => {
                let official_keys = official_visible_keys(self.official.as_mut())?;
                let differing: Vec<Vec<u8>> = reads
                    .keys
                    .symmetric_difference(&official_keys)
                    .cloned()
                    .collect();
                let mut all = !differing.is_empty();
                for k in differing {
                    let v = self.official_misreads(&k, reads, &getters)?;
                    misread.insert(k, v);
                    all &= v;
                }
                all
            }
            _ => false,
        };
        for m in mismatches {
            let own = match (&m.key, exception, reads) {
                (None, Some(_), _) => store_explained,
                (Some(k), Some(_), Ok(reads)) => {
                    if let Some(&known) = misread.get(k) {
                        known
                    } else {
                        let verdict = self.official_misreads(k, reads, &getters)?;
                        misread.insert(k.clone(), verdict);
                        verdict
                    }
                }
                _ => false,
            };
            match (own, exception) {
                (true, Some(exception)) => self.divergences.push(Divergence {
                    stage: format!("{stage}, {which}"),
                    mismatch: m,
                    exception,
                }),
                _ => self.mismatches.push((format!("{stage}, {which}"), m)),
            }
        }
        Ok(())
    }

    /// True when the reader returns exactly the value last written to `key` (through the
    /// getter of its type) and the official instance does not.
    fn official_misreads(
        &mut self,
        key: &[u8],
        reads: &ReaderReads,
        getters: &[crate::value::ValueType],
    ) -> Result<bool> {
        let Some(written) = self.written.get(key).cloned() else {
            return Ok(false);
        };
        let ty = written.value_type();
        let Some(i) = getters.iter().position(|&t| t == ty) else {
            return Ok(false);
        };
        let reader_ok = reads
            .per_key
            .iter()
            .find(|(k, _, _)| k == key)
            .is_some_and(|(_, _, r)| r[i].as_ref() == Some(&written));
        if !reader_ok {
            return Ok(false);
        }
        Ok(self.official.get(key, ty)?.as_ref() != Some(&written))
    }

    /// The keys in which `official_keys` and the reader's key set differ, when the exceptions
    /// table lists the v1.2.0-v1.2.2 encrypted loader bug for this version and configuration
    /// and every such key's last record in the files (parsed here from the decrypted region,
    /// not through the reader under test) is one that loader can misjudge
    /// ([`crate::judge::recognise::crypt_loader_v1_2_0_explains`]). `None` otherwise.
    fn inline_misload(
        &self,
        official_keys: &BTreeSet<Vec<u8>>,
        reads: &std::result::Result<ReaderReads, Mismatch>,
    ) -> Option<(&'static Exception, BTreeSet<Vec<u8>>)> {
        let exception = accepted(Difference::OfficialMisloadsInlineRecords, &self.scope())?;
        let reads = reads.as_ref().ok()?;
        let (region, _) = self.raw_region()?;
        let keys = crate::judge::recognise::crypt_loader_misjudged(
            &self.scope(),
            &region,
            official_keys,
            &reads.keys,
        )?;
        Some((exception, keys))
    }

    /// The decrypted data region as the files are now (parsed here, not through the reader
    /// under test) and the first key-stream block of their IV (`None` without encryption).
    fn raw_region(&self) -> Option<(Vec<u8>, Option<[u8; 16]>)> {
        let key = self
            .config
            .crypt_key
            .as_deref()
            .and_then(|k| mmkv_reader::CryptKey::new(k, self.config.aes256));
        let raw = mmkv_reader::raw::read_raw(&self.path, key.clone()).ok()?;
        let stream = key.map(|k| {
            let mut stream = [0u8; 16];
            k.decrypt(&k.iv_for(&raw.meta), &mut stream);
            stream
        });
        Some((raw.region().to_vec(), stream))
    }

    /// The start of the region as the files are now.
    fn region_start(&self) -> Option<Takeover> {
        let (region, stream) = self.raw_region()?;
        let holder_len = mmkv_reader::records::holder_len(&region).ok()?;
        let first = region
            .get(holder_len..crate::judge::recognise::ITEM_SIZE_HOLDER.len())
            .unwrap_or_default()
            .to_vec();
        Some(Takeover {
            holder_len,
            stream,
            first,
        })
    }

    /// The exceptions row of v1.2.0's write-back over a v1.1.x file, when it covers this
    /// version and configuration and the files show exactly its damage over the region the
    /// previous version left: the region starts with the holder and the damaged first record
    /// ([`crate::judge::recognise::writeback_v1_2_0_clobbered`]), or (a plaintext map) undoing the
    /// damage wherever a record carries it makes the files hold exactly `live_keys`, the
    /// official instance's keys before it reloaded them.
    fn writeback_clobbered(
        &self,
        live_keys: Option<&BTreeSet<Vec<u8>>>,
    ) -> Option<&'static Exception> {
        use crate::judge::recognise as x;
        let exception = accepted(
            Difference::OfficialWriteBackClobbersFirstRecord,
            &self.scope(),
        )?;
        let old = self.takeover.as_ref()?;
        let (region, new_stream) = self.raw_region()?;
        if x::writeback_v1_2_0_clobbered(
            old.holder_len,
            &region,
            old.stream.as_ref(),
            &new_stream.unwrap_or_default(),
        ) {
            return Some(exception);
        }
        if old.stream.is_some() {
            return None;
        }
        let clobber = x::writeback_v1_2_0_clobber(old.holder_len)?;
        let repaired = x::repair_v1_2_0_clobber(&region, clobber, &old.first)?;
        let mut last: BTreeMap<&[u8], bool> = BTreeMap::new();
        for record in mmkv_reader::records::records(&repaired) {
            let record = record.ok()?;
            last.insert(record.key, !record.value.is_empty());
        }
        let keys: BTreeSet<Vec<u8>> = last
            .into_iter()
            .filter(|(_, live)| *live)
            .map(|(k, _)| k.to_vec())
            .collect();
        (Some(&keys) == live_keys).then_some(exception)
    }

    /// One check (see the module docs); `reopen` forces the close/reopen part.
    /// Records the live instance's mismatches as divergences accepted by `exception` and
    /// stops the run: the official instance no longer matches its own files.
    fn accept_lost(
        &mut self,
        stage: &str,
        live: Vec<(&str, Mismatch)>,
        exception: &'static Exception,
    ) {
        for (which, m) in live {
            self.divergences.push(Divergence {
                stage: format!("{stage}, live, {which}"),
                mismatch: m,
                exception,
            });
        }
        self.lost = true;
    }

    fn check(&mut self, stage: &str, reopen: bool) -> Result<()> {
        if self.lost {
            return Ok(());
        }
        self.wait_short_expiry();
        self.official.sync()?;
        self.stats.checks += 1;
        let getters = self.lib.features().getters();
        let scope = self.scope();
        let long = self.capture_long(&getters);
        let fresh = self.capture_fresh(&getters);
        let mut live = Vec::new();
        if let Some(long) = &long {
            self.count(long);
            self.check_expire(stage, "long-lived reader", long);
            for m in self.compare(long)? {
                live.push(("long-lived reader", m));
            }
        }
        self.count(&fresh);
        self.check_expire(stage, "fresh reader", &fresh);
        for m in self.compare(&fresh)? {
            live.push(("fresh reader", m));
        }
        if live.is_empty() && !reopen {
            return Ok(());
        }
        let live_keys = official_visible_keys(self.official.as_mut())?;
        if !live.is_empty() {
            // v1.2.0 wrote over the first record of a v1.1.x file: nothing can be judged. Or
            // the live instance itself loaded the files (a reKey, a version switch) with the
            // v1.2.0-v1.2.2 encrypted loader, and only the keys it misjudged differ.
            let accepted = self.writeback_clobbered(Some(&live_keys)).or_else(|| {
                let (exception, keys) = self.inline_misload(&live_keys, &fresh)?;
                live.iter()
                    .all(|(_, m)| match &m.key {
                        Some(k) => keys.contains(k),
                        None => matches!(m.what.as_str(), "keys" | "count"),
                    })
                    .then_some(exception)
            });
            if let Some(exception) = accepted {
                self.accept_lost(stage, live, exception);
                return Ok(());
            }
        }
        self.reopen_official()?;
        let reopened_keys = official_visible_keys(self.official.as_mut())?;
        if live_keys != reopened_keys {
            let m = Mismatch {
                key: None,
                what: "official key set across close/reopen".to_string(),
                official: format!(
                    "live {} / reopened {}",
                    render_keys(&live_keys),
                    render_keys(&reopened_keys)
                ),
                reader: "n/a".to_string(),
            };
            // A live instance that agreed with the reader, and a reload that differs from the
            // files in exactly keys the v1.2.0-v1.2.2 encrypted loader misjudges.
            let misload = live
                .is_empty()
                .then(|| self.inline_misload(&reopened_keys, &fresh))
                .flatten();
            if let Some((exception, _)) = misload {
                self.divergences.push(Divergence {
                    stage: stage.to_string(),
                    mismatch: m,
                    exception,
                });
                self.lost = true;
                return Ok(());
            }
            let lost = self
                .writeback_clobbered(Some(&live_keys))
                .or_else(|| accepted(Difference::OfficialLostOwnFiles, &scope));
            if let Some(exception) = lost {
                self.divergences.push(Divergence {
                    stage: stage.to_string(),
                    mismatch: m,
                    exception,
                });
                self.accept_lost(stage, live, exception);
                return Ok(());
            }
            self.mismatches.push((
                format!("{stage} (no listed upstream bug covers this version and configuration)"),
                m,
            ));
        }
        let mut reopened = Vec::new();
        let mut reopened_long = Vec::new();
        if let Some(long) = &long {
            reopened_long = self.compare(long)?;
            for m in &reopened_long {
                reopened.push(("long-lived reader", m.clone()));
            }
        }
        let reopened_fresh = self.compare(&fresh)?;
        for m in &reopened_fresh {
            reopened.push(("fresh reader", m.clone()));
        }
        for (which, m) in live {
            let confirmed = reopened
                .iter()
                .any(|(w, r)| *w == which && r.key == m.key && r.what == m.what);
            if confirmed {
                continue; // reported once, from the reopened comparison
            }
            match accepted(Difference::OfficialMemoryVsFiles, &scope) {
                Some(exception) => self.divergences.push(Divergence {
                    stage: format!("{stage}, live, {which}"),
                    mismatch: m,
                    exception,
                }),
                None => self.mismatches.push((
                    format!(
                        "{stage}, live, {which} (official in-memory state differs from its files; \
                         no listed upstream bug covers this version and configuration)"
                    ),
                    m,
                )),
            }
        }
        let reopened_stage = format!("{stage}, reopened official");
        if let Some(long) = &long {
            self.judge_reopened(&reopened_stage, "long-lived reader", reopened_long, long)?;
        }
        self.judge_reopened(&reopened_stage, "fresh reader", reopened_fresh, &fresh)?;
        // Both readers again, on the files as they are now (the reopen and the official
        // getters may have written: deletion records of expired keys, upgrades on load).
        let long = self.capture_long(&getters);
        let fresh = self.capture_fresh(&getters);
        let after = format!("{stage}, after reopen");
        if let Some(long) = &long {
            self.count(long);
            let ms = self.compare(long)?;
            self.judge_reopened(&after, "long-lived reader", ms, long)?;
        }
        self.count(&fresh);
        let ms = self.compare(&fresh)?;
        self.judge_reopened(&after, "fresh reader", ms, &fresh)?;
        Ok(())
    }
}

/// Where failure folders go: `$CONFORMANCE_FAILURES_DIR`, else
/// `$CARGO_TARGET_DIR/conformance-failures`, else `<workspace>/target/conformance-failures`.
pub fn failures_root() -> PathBuf {
    if let Some(p) = std::env::var_os("CONFORMANCE_FAILURES_DIR") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .unwrap_or(Path::new(env!("CARGO_MANIFEST_DIR")))
                .join("target")
        });
    target.join("conformance-failures")
}

/// Saves a failing run under `root/<tag>-<kind>-<n>/`: `workload.yaml`, the store files and
/// `diff.txt`. Returns the folder.
pub fn save_failure(root: &Path, repro: &Repro, outcome: &RunOutcome) -> Result<PathBuf> {
    std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
    let mut n = 0;
    let dir = loop {
        let candidate = root.join(format!("{}-{}-{n}", repro.tag, repro.kind.id()));
        match std::fs::create_dir(&candidate) {
            Ok(()) => break candidate,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(Error::io(&candidate, e)),
        }
    };
    let write = |name: &str, text: &str| -> Result<()> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| Error::io(&p, e))
    };
    write("workload.yaml", &repro.to_yaml())?;
    write("diff.txt", &outcome.diff_text())?;
    for entry in
        std::fs::read_dir(outcome.dir.path()).map_err(|e| Error::io(outcome.dir.path(), e))?
    {
        let entry = entry.map_err(|e| Error::io(outcome.dir.path(), e))?;
        if entry.path().is_file() {
            let to = dir.join(entry.file_name());
            std::fs::copy(entry.path(), &to).map_err(|e| Error::io(&to, e))?;
        }
    }
    Ok(dir)
}

/// The one line that reproduces a saved failure.
pub fn replay_command(dir: &Path) -> String {
    format!("cargo run -p conformance -- replay {}", dir.display())
}

/// Loads `workload.yaml` from a failure folder (or a YAML file path).
pub fn load_repro(path: &Path) -> Result<Repro> {
    let file = if path.is_dir() {
        path.join("workload.yaml")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
    Repro::from_yaml(&text).map_err(|e| Error::Workload {
        path: file,
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After the wait, both clocks have reached the second: the precise one the harness reads
    /// and `time(nullptr)`'s, which the official library (and the reader) read. The CPUs are
    /// kept busy meanwhile, as in a CI run: a CPU that wakes from idle brings the coarse clock
    /// up to date, a busy one leaves it to the next tick.
    #[test]
    fn sleep_until_secs_waits_for_the_official_clock_too() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = AtomicBool::new(false);
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let behind = std::thread::scope(|s| {
            for _ in 0..cpus {
                s.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                });
            }
            let behind = (0..3).find_map(|_| {
                let target = now_secs() + 1;
                sleep_until_secs(target);
                let official = official_clock_secs();
                (official < target).then_some((official, target))
            });
            stop.store(true, Ordering::Relaxed);
            behind
        });
        assert_eq!(
            behind, None,
            "time(nullptr) was still at the first second after the wait for the second"
        );
    }
}
