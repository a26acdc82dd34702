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
//! 4. at a `Reopen`, after a restore and at the end, where the version has `MMKV_READ_ONLY`:
//!    closes the official instance, captures a fresh reader and compares it with a read-only
//!    instance of the files, then opens the read-write instance again.
//!
//! A workload with [`Workload::name_space`] keeps its store in a folder of its own and opens it
//! through `MMKV::nameSpace` wherever the version has name spaces.
//!
//! The reader is judged against what the official library makes of the FILES: a difference
//! with the reopened instance is a failure. A difference seen only with the live instance
//! means the official in-memory state disagreed with its own files; and an official key set
//! that changes across close/reopen means the library cannot read back its own files. Both
//! are upstream bugs, accepted only where a row of [`crate::judge::exceptions::TABLE`] covers the
//! version and configuration and its recogniser ([`crate::judge::recognise`]) explains the
//! difference (then kept as [`RunOutcome::divergences`]); anywhere else they
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
use std::path::{Path, PathBuf};

use mmkv_sys::versions::Tag;

use crate::differential::model::Model;
use crate::differential::outcome::{Judged, RunOutcome};
use crate::differential::stats::RunStats;
use crate::differential::workload::{
    touched_keys, Entry, Op, Repro, Workload, DEFAULT_CHECK_EVERY, SHORT_EXPIRE,
};
use crate::error::{Error, Result};
use crate::judge::compare::{
    ask_official, capture_reader, judge_reads, official_visible_keys, render_keys, Compared,
    Mismatch, ReaderReads, ReaderSide,
};
use crate::judge::crashing_calls::{import_from_crashes, read_only_load_crashes};
use crate::judge::exceptions::{accepted, v, Difference, Exception, Scope};
use crate::judge::process_hold::hold_process;
use crate::judge::recognise::{
    file_valid_zero_header, inline_misload, read_only_without_expiry, writeback_clobbered,
    RegionStart, StoreFiles,
};
use crate::sides::official::{LockCall, OfficialLib, OfficialStore, OpenVia};
use crate::sides::view::{ReaderFactory, ReaderView};
use crate::vocab::clock::{now_secs, official_now_secs, sleep_until_secs};
use crate::vocab::kind::{ModeKind, StoreKind};
use crate::vocab::test_clock;

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

/// Runs a repro with `libs[0]` for its workload and `libs[i]` for its i-th continuation; a
/// repro with a recorded second ([`Repro::clock`]) on the test clock from that second.
pub fn run_repro(
    libs: &[&dyn OfficialLib],
    repro: &Repro,
    reader: &dyn ReaderFactory,
) -> Result<RunOutcome> {
    let _clock = repro.clock.map(test_clock::Scoped::at);
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
    let started = official_now_secs();
    // Held to the end of the run: v1.2.16-v1.3.0 multi-process instances must not share the
    // process with other runs (see `ProcessHold`).
    let _process = hold_process(steps.iter().map(|s| s.lib.tag()), kind);
    let dir = tempfile::Builder::new()
        .prefix("conformance-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let id = kind.id().to_string();
    // A name-space workload keeps its store in a folder of its own, which the name space's
    // root names (see `name_space_root`).
    let store_dir = if workload.name_space {
        let d = dir.path().join(NAME_SPACE_DIR);
        std::fs::create_dir(&d).map_err(|e| Error::io(&d, e))?;
        d
    } else {
        dir.path().to_path_buf()
    };
    let keys: Vec<Vec<u8>> = touched_keys(steps.iter().flat_map(|s| s.ops.iter()))
        .into_iter()
        .map(|k| k.0)
        .collect();
    let config = Config {
        mode: kind.mode(),
        crypt_key: kind.crypt_key().map(<[u8]>::to_vec),
        aes256: kind.aes256(),
        expire: kind.key_expire().then_some(workload.default_expire),
        compare_before_set: false,
        name_space: workload.name_space,
    };
    let mut stats = RunStats::default();
    let official = open_official(first.lib, &store_dir, &id, &config, &mut stats)?;
    let mut r = Runner {
        reader,
        dir: store_dir.clone(),
        id: id.clone(),
        lib: first.lib,
        official,
        config,
        long: None,
        keys,
        stats,
        judged: Judged::default(),
        model: Model::default(),
        last_short: None,
        takeover: None,
        locks: 0,
        backup: None,
        imports: 0,
    };
    r.open_long_lived();
    let every = workload.check_every.unwrap_or(DEFAULT_CHECK_EVERY).max(1);
    for (n, step) in steps.iter().enumerate() {
        if n > 0 {
            r.switch_version(step.lib)?;
        }
        let mut since_check = 0;
        for (i, op) in step.ops.iter().enumerate() {
            if r.judged.lost {
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
    if !r.judged.lost {
        r.check("end", true)?;
    }
    r.release_locks()?;
    r.official.close()?;
    r.retire_long_lived();
    Ok(RunOutcome {
        mismatches: r.judged.mismatches,
        divergences: r.judged.divergences,
        stopped: r.judged.stopped,
        stats: r.stats,
        dir,
        store_dir,
        store_id: id,
        started,
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
    /// `enableCompareBeforeSet` succeeded last (asked again at every open; the library
    /// refuses it while expiration or encryption is on).
    compare_before_set: bool,
    /// Opened through a name space where the version has them
    /// ([`Workload::name_space`]).
    name_space: bool,
}

/// The folder of a name-space workload's store, in the run's folder.
const NAME_SPACE_DIR: &str = "name-space";

/// The root given to `MMKV::nameSpace` for the store folder `dir`: `dir` spelt with a detour
/// and a trailing slash (`<dir>/unnormalised/../`), which the name space must normalise back to
/// `dir` (absolute, canonical, no trailing slash), where the reader reads the files.
fn name_space_root(dir: &Path) -> PathBuf {
    let mut root = dir.as_os_str().to_owned();
    root.push("/unnormalised/../");
    PathBuf::from(root)
}

/// Opens the store of `dir` as `config` says (through a name space where it says so and the
/// version has them; `stats` counts those).
fn open_official(
    lib: &dyn OfficialLib,
    dir: &Path,
    id: &str,
    config: &Config,
    stats: &mut RunStats,
) -> Result<Box<dyn OfficialStore>> {
    let (key, aes256) = (config.crypt_key.as_deref(), config.aes256);
    let in_name_space = if config.name_space {
        lib.open_via(
            OpenVia::NameSpace,
            &name_space_root(dir),
            id,
            config.mode,
            key,
            aes256,
        )?
    } else {
        None
    };
    if in_name_space.is_some() {
        stats.name_space_opens += 1;
    }
    let mut store = match in_name_space {
        Some(store) => store,
        None => lib.open_with(dir, id, config.mode, key, aes256)?,
    };
    if let Some(default) = config.expire {
        if lib.features().key_expire {
            store.enable_key_expire(default)?;
        }
    }
    if config.compare_before_set {
        store.compare_before_set(true)?;
    }
    Ok(store)
}

/// The folder the backups of a run go to is made in `P_tmpdir` (glibc: `/tmp`): the
/// library copies each file to a temporary file there and renames it into the backup
/// folder, and before v1.3.12 a rename across file systems fails the backup.
const LIBRARY_TMPDIR: &str = "/tmp";

/// A new folder named `prefix...` in [`LIBRARY_TMPDIR`], for a backup or a restore's source.
fn library_tempdir(prefix: &str) -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(LIBRARY_TMPDIR)
        .map_err(|e| Error::io(PathBuf::from(LIBRARY_TMPDIR), e))
}

/// The last backup of a run: where it is and what the store held then.
struct Backup {
    dir: tempfile::TempDir,
    /// The model when the backup was taken (a restore brings it back).
    model: Model,
    crypt_key: Option<Vec<u8>>,
    aes256: bool,
    expire: bool,
}

/// One run in progress: the official instance and the readers it is compared with.
struct Runner<'a> {
    reader: &'a dyn ReaderFactory,
    /// The folder of the store files and the store id (file name).
    dir: PathBuf,
    id: String,
    lib: &'a dyn OfficialLib,
    official: Box<dyn OfficialStore>,
    config: Config,
    /// The long-lived reader (`None` while it cannot be opened).
    long: Option<Box<dyn ReaderView>>,
    /// Every key the workload touches (each is read at every check).
    keys: Vec<Vec<u8>>,
    stats: RunStats,
    judged: Judged,
    model: Model,
    /// When the last short expire duration was set (precise seconds).
    last_short: Option<u64>,
    /// The region start as the previous version left the files when the current one took
    /// them over.
    takeover: Option<RegionStart>,
    /// `lock()`s (and successful `try_lock()`s) not yet unlocked.
    locks: u32,
    /// The last backup (`Op::Backup`).
    backup: Option<Backup>,
    /// `importFrom` sources made so far (each op imports from a new store).
    imports: u32,
}

/// Why an unaccepted upstream difference fails: no row covers it.
const UNLISTED: &str = "no listed upstream bug covers this version and configuration";

/// Why an unaccepted difference of the live instance alone fails.
const UNLISTED_MEMORY: &str = "official in-memory state differs from its files; \
                               no listed upstream bug covers this version and configuration";

/// What one reader said at a check, or why it could not be opened.
type Capture = (ReaderSide, std::result::Result<ReaderReads, Mismatch>);

fn open_error(side: ReaderSide, e: String) -> Mismatch {
    Mismatch::new(None, Compared::Open(side), "opened", format!("error: {e}"))
}

impl<'a> Runner<'a> {
    /// The data file.
    fn path(&self) -> PathBuf {
        self.dir.join(&self.id)
    }

    /// The files as the recognisers read them, with the current key.
    fn files<'s>(&'s self, path: &'s Path) -> StoreFiles<'s> {
        StoreFiles {
            path,
            crypt_key: self.config.crypt_key.as_deref(),
            aes256: self.config.aes256,
        }
    }

    /// The exceptions table's scope now (v0.0.0, covered by no row, for an unparsable tag).
    fn scope(&self) -> Scope {
        Scope {
            version: Tag::parse(self.lib.tag()).unwrap_or(v(0, 0, 0)),
            encrypted: self.config.crypt_key.is_some(),
            multi_process: self.config.mode == ModeKind::Multi,
        }
    }

    fn open_reader(&self) -> std::result::Result<Box<dyn ReaderView>, String> {
        self.reader.open(
            &self.path(),
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
                let mismatch = open_error(ReaderSide::LongLived, e);
                let live_keys = official_visible_keys(self.official.as_mut()).ok();
                match self.writeback_clobbered(live_keys.as_ref()) {
                    Some(exception) => self.judged.accept_and_stop(
                        format!("{}: long-lived reader", self.lib.tag()),
                        mismatch,
                        exception,
                    ),
                    None => self
                        .judged
                        .record("start".to_string(), mismatch, None, None),
                }
            }
        }
    }

    fn retire_long_lived(&mut self) {
        if let Some(s) = self.long.take().and_then(|v| v.stats()) {
            self.stats.long_lived.add(&s);
        }
    }

    /// Unlocks every lock the workload still holds (before the instance closes).
    fn release_locks(&mut self) -> Result<()> {
        while self.locks > 0 {
            self.official.lock(LockCall::Unlock)?;
            self.locks -= 1;
        }
        Ok(())
    }

    fn reopen_official(&mut self) -> Result<()> {
        self.release_locks()?;
        self.official.close()?;
        self.official =
            open_official(self.lib, &self.dir, &self.id, &self.config, &mut self.stats)?;
        Ok(())
    }

    fn switch_version(&mut self, lib: &'a dyn OfficialLib) -> Result<()> {
        let stage = format!("{}: before switching to {}", self.lib.tag(), lib.tag());
        self.check(&stage, false)?;
        if self.judged.lost {
            return Ok(());
        }
        let before = official_visible_keys(self.official.as_mut())?;
        self.release_locks()?;
        self.official.close()?;
        let older = Tag::parse(lib.tag()) < Tag::parse(self.lib.tag());
        let from = self.lib.tag().to_string();
        if older && self.config.aes256 && !lib.features().aes256 {
            self.judged.stopped = Some(format!(
                "{} has no AES-256 but the store {from} left is AES-256",
                lib.tag()
            ));
            self.judged.lost = true;
            return Ok(());
        }
        if older && !lib.features().key_expire && self.meta_key_expire() {
            // The file says its values carry expire times; a version without expiration
            // ignores that and is no reference for it.
            self.judged.stopped = Some(format!(
                "{} has no key expiration but the store {from} left has it enabled",
                lib.tag()
            ));
            self.judged.lost = true;
            return Ok(());
        }
        let path = self.path();
        self.takeover = RegionStart::of(&self.files(&path));
        self.lib = lib;
        self.official =
            open_official(self.lib, &self.dir, &self.id, &self.config, &mut self.stats)?;
        if older {
            let after = official_visible_keys(self.official.as_mut())?;
            if after != before {
                // An older version that cannot read a newer file is no reference.
                self.judged.stopped = Some(format!(
                    "{} cannot read the store {from} left ({} of {} keys visible)",
                    lib.tag(),
                    after.len(),
                    before.len()
                ));
                self.judged.lost = true;
                return Ok(());
            }
        }
        self.stats.version_switches += 1;
        let stage = format!("{}: opened after {}", lib.tag(), stage);
        self.check(&stage, false)
    }

    /// The store's meta file (`<data file>.crc`).
    fn meta_file(&self) -> PathBuf {
        mmkv_reader::meta_path(&self.path())
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
                let duration = self.config.expire.map(|default| expire.unwrap_or(default));
                self.model.set(
                    &key.0,
                    value,
                    duration,
                    (t0, t1),
                    features.saturating_expire,
                );
            }
            Op::Remove { key } => {
                self.official.remove(&key.0)?;
                self.model.remove(&key.0);
            }
            Op::RemoveKeys { keys } => {
                let ks: Vec<&[u8]> = keys.iter().map(|k| k.0.as_slice()).collect();
                self.official.remove_keys(&ks)?;
                for k in keys {
                    self.model.remove(&k.0);
                }
            }
            Op::ClearAll => {
                self.official.clear_all()?;
                self.model.clear();
            }
            Op::ClearAllKeepSpace => {
                if self.official.clear_all_keep_space()? {
                    self.model.clear();
                } else {
                    self.stats.unsupported_ops += 1;
                }
            }
            Op::Trim => self.official.trim()?,
            Op::Sync { asynchronous } => {
                if *asynchronous {
                    self.official.sync_async()?
                } else {
                    self.official.sync()?
                }
            }
            Op::ClearMemoryCache => self.official.clear_memory_cache()?,
            Op::Lock => {
                self.official.lock(LockCall::Lock)?;
                self.locks += 1;
            }
            Op::TryLock => {
                if self.official.lock(LockCall::TryLock)? {
                    self.locks += 1;
                }
            }
            Op::Unlock => {
                if self.locks == 0 {
                    self.stats.unsupported_ops += 1;
                } else {
                    self.official.lock(LockCall::Unlock)?;
                    self.locks -= 1;
                }
            }
            Op::CompareBeforeSet { enable } => match self.official.compare_before_set(*enable)? {
                None => self.stats.unsupported_ops += 1,
                Some(true) => self.config.compare_before_set = *enable,
                Some(false) => {}
            },
            Op::Backup => self.backup()?,
            Op::Restore => self.restore()?,
            Op::IsFileValid => self.is_file_valid()?,
            Op::RemoveStorage => self.remove_storage()?,
            Op::ImportFrom { entries } => self.import_from(entries)?,
            Op::Reopen => self.reopen_official()?,
            Op::WaitExpiry => self.wait_short_expiry(),
            Op::EnableExpire { default_expire } => {
                if !features.key_expire {
                    self.stats.unsupported_ops += 1;
                } else if self.official.enable_key_expire(*default_expire)? {
                    if self.config.expire.is_none() {
                        self.model.expiration_enabled();
                    }
                    self.config.expire = Some(*default_expire);
                }
            }
            Op::DisableExpire => {
                if !features.key_expire {
                    self.stats.unsupported_ops += 1;
                } else if self.official.disable_key_expire()? {
                    self.config.expire = None;
                    self.model.expiration_disabled();
                }
            }
            Op::Rekey(crypt) => {
                let key = crypt.key.as_ref().map(|k| k.0.as_slice());
                self.official.sync()?;
                let before = self.store_files();
                // Where the library can lose its store in its own reKey write-back: that row
                // and the keys it shows before the reKey, to compare with those after.
                let lost_before = match accepted(Difference::OfficialLostOwnFiles, &self.scope()) {
                    Some(row) => Some((row, official_visible_keys(self.official.as_mut())?)),
                    None => None,
                };
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
                            if self.rekey_not_written(
                                &before,
                                truncated_same,
                                new_key.as_deref(),
                                aes256,
                            ) || self.rekey_lost_keys(lost_before)?
                            {
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

    /// `Op::Backup`: the store into a new backup folder; the reader is then judged on the
    /// copy as on the store (against the same version opening the copy).
    fn backup(&mut self) -> Result<()> {
        if !self.lib.features().backup_restore {
            self.stats.unsupported_ops += 1;
            return Ok(());
        }
        let dir = library_tempdir("conformance-backup-")?;
        self.official.sync()?;
        if self.lib.backup_one(&self.id, &self.dir, dir.path())? != Some(true) {
            return Ok(());
        }
        self.judge_backup(dir.path())?;
        self.backup = Some(Backup {
            dir,
            model: self.model.clone(),
            crypt_key: self.config.crypt_key.clone(),
            aes256: self.config.aes256,
            expire: self.config.expire.is_some(),
        });
        Ok(())
    }

    /// A fresh reader on the backup copy in `dir`, compared with the version's own instance
    /// of the copy (and with the expire times the writer set).
    fn judge_backup(&mut self, dir: &Path) -> Result<()> {
        let stage = format!("{}: backup copy", self.lib.tag());
        let getters = self.lib.features().getters();
        let scope = self.scope();
        let path = dir.join(&self.id);
        let reads = self
            .reader
            .open(&path, self.config.crypt_key.as_deref(), self.config.aes256)
            .map(|v| capture_reader(v.as_ref(), &self.keys, &getters))
            .map_err(|e| open_error(ReaderSide::Fresh, e));
        self.count(&reads);
        let mut copy = open_official(self.lib, dir, &self.id, &self.config, &mut self.stats)?;
        let mismatches = match &reads {
            Err(m) => vec![m.clone()],
            Ok(r) => {
                let answers = ask_official(copy.as_mut(), &self.lib.features(), [r], &getters)?;
                let mut ms = judge_reads(&answers, &scope, r, &getters);
                ms.extend(self.model.check_expire(r).1);
                ms
            }
        };
        copy.close()?;
        for m in mismatches {
            self.judged.record(stage.clone(), m, None, None);
        }
        self.stats.backups_judged += 1;
        Ok(())
    }

    /// `Op::Restore`: the last backup over the store, then a check with a reopen. Skipped
    /// without a backup, or when the key or expiration changed since (the copy would not be
    /// the store the instance is configured for).
    fn restore(&mut self) -> Result<()> {
        let same = self.backup.as_ref().is_some_and(|b| {
            b.crypt_key == self.config.crypt_key
                && b.aes256 == self.config.aes256
                && b.expire == self.config.expire.is_some()
        });
        if !self.lib.features().backup_restore {
            self.stats.unsupported_ops += 1;
            return Ok(());
        }
        self.official.sync()?;
        let Some(backup) = self.backup.as_ref().filter(|_| same) else {
            return self.restore_from_empty();
        };
        let from = backup.dir.path().to_path_buf();
        let model = backup.model.clone();
        if self.lib.restore_one(&self.id, &from, &self.dir)? != Some(true) {
            return Ok(());
        }
        self.model = model;
        self.check(&format!("{}: after restore", self.lib.tag()), true)
    }

    /// `Op::Restore` with no backup to bring back: a restore from a folder without a copy of
    /// the store, which leaves the store as it was (checked with a reopen, whatever the
    /// library answered).
    fn restore_from_empty(&mut self) -> Result<()> {
        let empty = library_tempdir("conformance-no-backup-")?;
        self.lib.restore_one(&self.id, empty.path(), &self.dir)?;
        self.check(
            &format!("{}: after a restore from an empty folder", self.lib.tag()),
            true,
        )
    }

    /// `Op::IsFileValid`: the official verdict against the reader's (it reads the store, or
    /// there is no data file, which isFileValid calls valid).
    fn is_file_valid(&mut self) -> Result<()> {
        self.official.sync()?;
        let official = self.lib.is_file_valid(&self.id, &self.dir)?;
        let path = self.path();
        let opened = self.open_reader();
        let reader = opened.is_ok() || !path.exists();
        if official == reader {
            return Ok(());
        }
        let said = |valid: bool| if valid { "valid" } else { "invalid" };
        let reader_text = match &opened {
            Ok(v) => format!("{} (reads {} keys)", said(reader), v.count()),
            Err(e) => format!("{} ({e})", said(reader)),
        };
        let m = Mismatch::new(None, Compared::FileValid, said(official), reader_text);
        let exception = file_valid_zero_header(&self.scope(), &path, official, reader);
        let stage = format!("{}: isFileValid", self.lib.tag());
        self.judged.record(stage, m, exception, Some(UNLISTED));
        Ok(())
    }

    /// `Op::RemoveStorage`: closes the instance, removes the store, judges that the reader
    /// finds no store, and opens it again (a new, empty store; a new long-lived reader).
    fn remove_storage(&mut self) -> Result<()> {
        if !self.lib.features().remove_storage {
            self.stats.unsupported_ops += 1;
            return Ok(());
        }
        self.release_locks()?;
        self.official.close()?;
        let removed = self.lib.remove_storage(&self.id, &self.dir)? == Some(true);
        if removed {
            if let Ok(v) = self.open_reader() {
                let reader = format!("opened, {} keys", v.count());
                let m = Mismatch::new(None, Compared::StoreRemoved, "no store", reader);
                let stage = format!("{}: removeStorage", self.lib.tag());
                self.judged.record(stage, m, None, None);
            }
            self.model.clear();
            self.retire_long_lived();
            self.stats.long_lived_replaced += 1;
        }
        self.official =
            open_official(self.lib, &self.dir, &self.id, &self.config, &mut self.stats)?;
        if removed {
            self.open_long_lived();
        }
        Ok(())
    }

    /// `Op::ImportFrom`: a new plaintext store holding `entries`, imported into the store.
    fn import_from(&mut self, entries: &[Entry]) -> Result<()> {
        let crashes = import_from_crashes(
            self.scope().version,
            self.config.crypt_key.is_some(),
            self.config.expire.is_some(),
        );
        if !self.lib.features().import_from || crashes.is_some() {
            self.stats.unsupported_ops += 1;
            return Ok(());
        }
        self.imports += 1;
        let src = format!("{}-import-{}", self.id, self.imports);
        let pairs: Vec<(&[u8], &crate::vocab::value::Value)> = entries
            .iter()
            .map(|e| (e.key.0.as_slice(), &e.value))
            .collect();
        let t0 = now_secs();
        let imported = self.official.import_from(&self.dir, &src, &pairs)?;
        let t1 = now_secs();
        if imported.is_none() {
            self.stats.unsupported_ops += 1;
            return Ok(());
        }
        // The source holds the last value given to each key (the library refuses the empty
        // key); each gets the store's default expire duration.
        let mut last = BTreeMap::new();
        for e in entries.iter().filter(|e| !e.key.0.is_empty()) {
            last.insert(e.key.0.as_slice(), &e.value);
        }
        let saturating = self.lib.features().saturating_expire;
        for (key, value) in last {
            self.model
                .set(key, value, self.config.expire, (t0, t1), saturating);
        }
        Ok(())
    }

    /// The data file and the meta file as they are now (`None` when either is unreadable).
    fn store_files(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        Some((
            std::fs::read(self.path()).ok()?,
            std::fs::read(self.meta_file()).ok()?,
        ))
    }

    /// After a successful `reKey` the library takes as a key change: true when it wrote
    /// nothing although the store has content (both files byte-for-byte as `before`, and the
    /// reader with the old key finds at least one key in them, or the new key cannot read
    /// them: records of removed keys) and the
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
        new_key: Option<&[u8]>,
        new_aes256: bool,
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
        let mut reader = match &old {
            Ok(v) => format!("with the old key: {} key(s)", v.count()),
            Err(e) => format!("with the old key: error: {e}"),
        };
        if old.as_ref().is_ok_and(|v| v.count() == 0) {
            // Nothing to re-encrypt when the files also read under the new key (holder-only
            // files after clearAll, which v2.4.2 leaves alone): later comparisons judge them
            // as usual. Records of removed keys are content the new key cannot decode.
            match self.reader.open(&self.path(), new_key, new_aes256) {
                Ok(_) => return false,
                Err(e) => reader.push_str(&format!("; with the new key: error: {e}")),
            }
        }
        let official = "reKey returned true but left both files unchanged";
        let m = Mismatch::new(None, Compared::FilesAfterRekey, official, reader);
        let stage = format!("{}: reKey", self.lib.tag());
        let difference = if truncated_same {
            Difference::OfficialRekeyRestartsCipher
        } else {
            Difference::OfficialRekeyNotWritten
        };
        match accepted(difference, &self.scope()) {
            Some(exception) => {
                self.judged.accept_and_stop(stage, m, exception);
                true
            }
            None if truncated_same => false,
            None => {
                self.judged.record(stage, m, None, Some(UNLISTED));
                false
            }
        }
    }

    /// After a `reKey` that rewrote the files, where `lost_before` holds the row that accepts
    /// the library losing its own store and the keys it showed before: true (and the run
    /// stops) when the keys it shows now differ. Tencent/MMKV#1351: the write-back
    /// re-encodes each value as the library reads it, and a value it misreads (a wrongly
    /// saved cipher state) is written back as bytes its own reload rejects, so it discards
    /// the whole store.
    fn rekey_lost_keys(
        &mut self,
        lost_before: Option<(&'static Exception, BTreeSet<Vec<u8>>)>,
    ) -> Result<bool> {
        let Some((exception, before)) = lost_before else {
            return Ok(false);
        };
        let after = official_visible_keys(self.official.as_mut())?;
        if after == before {
            return Ok(false);
        }
        let official = format!(
            "before {} / after {}",
            render_keys(&before),
            render_keys(&after)
        );
        let m = Mismatch::new(None, Compared::OfficialKeysAcrossRekey, official, "n/a");
        let stage = format!("{}: reKey", self.lib.tag());
        self.judged.accept_and_stop(stage, m, exception);
        Ok(true)
    }

    /// Captures of the long-lived reader (when open) and of a fresh one, in that order.
    fn capture(&self, getters: &[crate::vocab::value::ValueType]) -> Vec<Capture> {
        let mut out = Vec::new();
        if let Some(v) = &self.long {
            out.push((
                ReaderSide::LongLived,
                Ok(capture_reader(v.as_ref(), &self.keys, getters)),
            ));
        }
        let fresh = self
            .open_reader()
            .map(|v| capture_reader(v.as_ref(), &self.keys, getters))
            .map_err(|e| open_error(ReaderSide::Fresh, e));
        out.push((ReaderSide::Fresh, fresh));
        out
    }

    /// Compares each capture with the current official instance. The official getters run
    /// once for all of them ([`ask_official`]): the long-lived and the fresh reader read the
    /// same keys, and a second sweep costs as much as the first (an encrypted store decrypts
    /// every value again) to answer the same questions.
    fn compare_all(&mut self, captures: &[Capture]) -> Result<Vec<Vec<Mismatch>>> {
        let getters = self.lib.features().getters();
        let scope = self.scope();
        let answers = ask_official(
            self.official.as_mut(),
            &self.lib.features(),
            captures.iter().filter_map(|(_, r)| r.as_ref().ok()),
            &getters,
        )?;
        Ok((captures.iter())
            .map(|(_, reads)| match reads {
                Err(m) => vec![m.clone()],
                Ok(reads) => judge_reads(&answers, &scope, reads, &getters),
            })
            .collect())
    }

    fn count(&mut self, reads: &std::result::Result<ReaderReads, Mismatch>) {
        if let Ok(r) = reads {
            self.stats.keys_compared += r.keys_read();
            self.stats.reads_compared += r.reads();
        }
    }

    /// Expire times the reader reports against what the writer set: the differences.
    fn check_expire(
        &mut self,
        side: ReaderSide,
        reads: &std::result::Result<ReaderReads, Mismatch>,
    ) -> Vec<(ReaderSide, Mismatch)> {
        let Ok(reads) = reads else { return Vec::new() };
        let (checked, wrong) = self.model.check_expire(reads);
        self.stats.expire_checked += checked;
        wrong.into_iter().map(|m| (side, m)).collect()
    }

    /// Reader failures against the reopened official, except those of keys for which the
    /// official library cannot read back its own last write while the reader returns exactly
    /// it (accepted only where the exceptions table says so).
    fn judge_reopened(
        &mut self,
        stage: &str,
        side: ReaderSide,
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
            let exception = exception.filter(|_| own);
            self.judged
                .record(format!("{stage}, {side}"), m, exception, None);
        }
        Ok(())
    }

    /// True when the reader returns exactly the value last written to `key` (through the
    /// getter of its type) and the official instance does not.
    fn official_misreads(
        &mut self,
        key: &[u8],
        reads: &ReaderReads,
        getters: &[crate::vocab::value::ValueType],
    ) -> Result<bool> {
        let Some(written) = self.model.written(key).cloned() else {
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

    /// [`inline_misload`] on the files as they are now, against the fresh reader's keys.
    fn inline_misload(
        &self,
        official_keys: &BTreeSet<Vec<u8>>,
        reads: &std::result::Result<ReaderReads, Mismatch>,
    ) -> Option<(&'static Exception, BTreeSet<Vec<u8>>)> {
        let reads = reads.as_ref().ok()?;
        let path = self.path();
        inline_misload(
            &self.scope(),
            &self.files(&path),
            official_keys,
            &reads.keys,
        )
    }

    /// [`writeback_clobbered`] on the files as they are now, over the region the previous
    /// version left.
    fn writeback_clobbered(
        &self,
        live_keys: Option<&BTreeSet<Vec<u8>>>,
    ) -> Option<&'static Exception> {
        let path = self.path();
        writeback_clobbered(
            &self.scope(),
            self.takeover.as_ref(),
            &self.files(&path),
            live_keys,
        )
    }

    /// Records the live instance's mismatches as divergences accepted by `exception` and
    /// stops the run: the official instance no longer matches its own files.
    fn accept_lost(
        &mut self,
        stage: &str,
        live: Vec<(ReaderSide, Mismatch)>,
        exception: &'static Exception,
    ) {
        for (side, m) in live {
            self.judged
                .accept_and_stop(format!("{stage}, live, {side}"), m, exception);
        }
        self.judged.lost = true;
    }

    /// One check (see the module docs); `reopen` forces the close/reopen part.
    fn check(&mut self, stage: &str, reopen: bool) -> Result<()> {
        if self.judged.lost {
            return Ok(());
        }
        self.wait_short_expiry();
        self.official.sync()?;
        self.stats.checks += 1;
        let getters = self.lib.features().getters();
        let captures = self.capture(&getters);
        let mut expire = Vec::new();
        for (side, reads) in &captures {
            self.count(reads);
            expire.extend(self.check_expire(*side, reads));
        }
        self.judge_check(stage, reopen, &captures, &mut expire)?;
        // Unless the official library lost its own files (then the readers may keep their
        // last good snapshot, and the run stops), the reader must report what the writer set.
        for (side, m) in expire {
            self.judged
                .record(format!("{stage}, {side}"), m, None, None);
        }
        Ok(())
    }

    /// The captures of one check against the official instance, live and reopened. A
    /// difference that stops the run also takes `expire`, the reader's differences from the
    /// writer's expire times.
    fn judge_check(
        &mut self,
        stage: &str,
        reopen: bool,
        captures: &[Capture],
        expire: &mut Vec<(ReaderSide, Mismatch)>,
    ) -> Result<()> {
        let getters = self.lib.features().getters();
        let scope = self.scope();
        let mut live = Vec::new();
        let compared = self.compare_all(captures)?;
        for ((side, _), ms) in captures.iter().zip(compared) {
            live.extend(ms.into_iter().map(|m| (*side, m)));
        }
        if live.is_empty() && !reopen {
            return Ok(());
        }
        let fresh = &captures.last().expect("the fresh capture").1;
        let live_keys = official_visible_keys(self.official.as_mut())?;
        if !live.is_empty() {
            // v1.2.0 wrote over the first record of a v1.1.x file: nothing can be judged. Or
            // the live instance itself loaded the files (a reKey, a version switch) with the
            // v1.2.0-v1.2.2 encrypted loader, and only the keys it misjudged differ.
            let accepted = self.writeback_clobbered(Some(&live_keys)).or_else(|| {
                let (exception, keys) = self.inline_misload(&live_keys, fresh)?;
                (live.iter().chain(expire.iter()))
                    .all(|(_, m)| m.only_about(&keys))
                    .then_some(exception)
            });
            if let Some(exception) = accepted {
                live.append(expire);
                self.accept_lost(stage, live, exception);
                return Ok(());
            }
        }
        self.reopen_official()?;
        let reopened_keys = official_visible_keys(self.official.as_mut())?;
        if live_keys != reopened_keys {
            let (was, now) = (render_keys(&live_keys), render_keys(&reopened_keys));
            let official = format!("live {was} / reopened {now}");
            let m = Mismatch::new(None, Compared::OfficialKeysAcrossReopen, official, "n/a");
            // A live instance that agreed with the reader, and a reload that differs from the
            // files in exactly keys the v1.2.0-v1.2.2 encrypted loader misjudges.
            let misload = live
                .is_empty()
                .then(|| self.inline_misload(&reopened_keys, fresh))
                .flatten();
            if let Some((exception, _)) = misload {
                self.judged.accept_and_stop(stage.to_string(), m, exception);
                return Ok(());
            }
            let lost = self
                .writeback_clobbered(Some(&live_keys))
                .or_else(|| accepted(Difference::OfficialLostOwnFiles, &scope));
            if let Some(exception) = lost {
                self.judged
                    .record(stage.to_string(), m, Some(exception), None);
                live.append(expire);
                self.accept_lost(stage, live, exception);
                return Ok(());
            }
            self.judged
                .record(stage.to_string(), m, None, Some(UNLISTED));
        }
        let reopened: Vec<_> = (captures.iter().map(|(side, _)| *side))
            .zip(self.compare_all(captures)?)
            .collect();
        for (side, m) in live {
            let confirmed = reopened
                .iter()
                .any(|(s, ms)| *s == side && ms.iter().any(|r| r.key == m.key && r.what == m.what));
            if confirmed {
                continue; // reported once, from the reopened comparison
            }
            // The official in-memory state differs from its files.
            self.judged.record(
                format!("{stage}, live, {side}"),
                m,
                accepted(Difference::OfficialMemoryVsFiles, &scope),
                Some(UNLISTED_MEMORY),
            );
        }
        let reopened_stage = format!("{stage}, reopened official");
        for ((side, reads), (_, ms)) in captures.iter().zip(reopened) {
            self.judge_reopened(&reopened_stage, *side, ms, reads)?;
        }
        // Both readers again, on the files as they are now (the reopen and the official
        // getters may have written: deletion records of expired keys, upgrades on load).
        let after = format!("{stage}, after reopen");
        let captures = self.capture(&getters);
        for (_, reads) in &captures {
            self.count(reads);
        }
        let compared = self.compare_all(&captures)?;
        for ((side, reads), ms) in captures.iter().zip(compared) {
            self.judge_reopened(&after, *side, ms, reads)?;
        }
        if reopen {
            self.judge_read_only(stage)?;
        }
        Ok(())
    }

    /// A fresh reader against a read-only official instance of the files (`MMKV_READ_ONLY`,
    /// where the version has it): another official reading side, judged like the reopened
    /// instance. The library keeps one instance per store and process, so the read-write
    /// instance closes first (its locks released) and opens again after.
    fn judge_read_only(&mut self, stage: &str) -> Result<()> {
        if !self.lib.features().read_only || self.judged.lost {
            return Ok(());
        }
        self.release_locks()?;
        self.official.close()?;
        if read_only_load_crashes(self.scope().version, &self.path()).is_some() {
            self.stats.read_only_skipped += 1;
            self.official =
                open_official(self.lib, &self.dir, &self.id, &self.config, &mut self.stats)?;
            return Ok(());
        }
        let getters = self.lib.features().getters();
        let reads = self
            .open_reader()
            .map(|v| capture_reader(v.as_ref(), &self.keys, &getters))
            .map_err(|e| open_error(ReaderSide::Fresh, e));
        self.count(&reads);
        let key = self.config.crypt_key.as_deref();
        let opened = (self.lib).open_via(
            OpenVia::ReadOnly,
            &self.dir,
            &self.id,
            self.config.mode,
            key,
            self.config.aes256,
        )?;
        let Some(mut read_only) = opened else {
            return Err(Error::Other(format!(
                "{}: lists read_only but opened no read-only instance",
                self.lib.tag()
            )));
        };
        // As the read-write instance: expiration enabled where the store has it on (a
        // read-only instance may refuse; the judge decides what that explains).
        let expiry_enabled = match self.config.expire {
            Some(default) if self.lib.features().key_expire => {
                read_only.enable_key_expire(default)?
            }
            _ => true,
        };
        let features = self.lib.features();
        let (mismatches, exception) = match &reads {
            Err(m) => (vec![m.clone()], None),
            Ok(r) => {
                let answers = ask_official(read_only.as_mut(), &features, [r], &getters)?;
                let mismatches = judge_reads(&answers, &self.scope(), r, &getters);
                let path = self.path();
                let explained = (!mismatches.is_empty())
                    .then(|| {
                        read_only_without_expiry(
                            &self.scope(),
                            &self.files(&path),
                            expiry_enabled,
                            self.reader,
                            (&self.keys, &getters),
                            &answers,
                        )
                    })
                    .flatten();
                (mismatches, explained)
            }
        };
        read_only.close()?;
        self.official =
            open_official(self.lib, &self.dir, &self.id, &self.config, &mut self.stats)?;
        self.stats.read_only_checks += 1;
        let stage = format!("{stage}, read-only official, {}", ReaderSide::Fresh);
        for m in mismatches {
            let accepted = exception.as_ref().and_then(|e| e.explains(&m));
            self.judged.record(stage.clone(), m, accepted, None);
        }
        Ok(())
    }
}
