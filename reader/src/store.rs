//! [`Store`]: an open store with check-on-read.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;

use crate::clock::{Clock, SystemClock};
use crate::cryptkey::CryptKey;
use crate::crypto::CfbDecryptor;
use crate::decode;
use crate::error::{Error, Result};
use crate::fsio::{meta_path, open_regular, MetaMap, Which, MAPPED_META_MIN};
use crate::load::{consistent, fits, triple_of, ReadSync};
use crate::locate::{actual_size, RegionSource, Rules, HEADER_LEN};
use crate::meta::{MetaInfo, META_SIZE};
use crate::options::Options;
use crate::page::PageSize;
use crate::read_at::{read_header, DataFile, ReadAt};
use crate::snapshot::{BuildInfo, Snapshot, SnapshotData, SnapshotRef, Triple};
use crate::sys::slots::{Pinned, Slots};

/// How a reload was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReloadKind {
    /// The whole region was read, verified and parsed.
    Full,
    /// Only bytes appended since the previous snapshot were read, verified and parsed.
    Partial,
}

/// Counters about the store's reloads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReloadStats {
    /// Successful full reloads (not counting the initial open).
    pub full: u64,
    /// Successful partial (append-only) reloads.
    pub partial: u64,
    /// Failed reload attempts (a file that does not load; the previous snapshot keeps
    /// serving).
    pub failed: u64,
    /// Reloads put off because a writer kept changing the store while it was read without
    /// the lock ([`Error::Busy`]); the previous snapshot kept serving and the next read tried
    /// again. Not failures.
    pub busy: u64,
    /// Data-file bytes read by reloads (not counting the initial open). A partial reload reads
    /// only the 4-byte header and the appended bytes.
    pub bytes_read: u64,
    /// Loads (the initial open included) done without the shared lock because a writer held
    /// it exclusively past [`Options::lock_timeout`] (see there).
    pub unlocked: u64,
}

#[derive(Default)]
struct ReloadState {
    /// Meta triple and error of the last failed reload: reads do not retry it (refresh() does).
    failed: Option<(Triple, Error)>,
    last_kind: Option<ReloadKind>,
}

/// An open MMKV store (data file `PATH`, meta file `PATH.crc`), read-only.
///
/// Every read first compares (crc digest, actual size, sequence) in the memory-mapped meta
/// file with the snapshot the calling thread cached for this store; when they are equal (the
/// common case) the read is a hash lookup in that snapshot with no lock, no atomic
/// read-modify-write, no system call and no allocation (copy getters allocate only their
/// result). When they differ, the thread takes the store's current snapshot, and when that
/// one differs too the store reloads under a shared `flock` on the meta file, verifies the CRC
/// and swaps in a new snapshot; a failed reload keeps the previous snapshot
/// serving and is reported by [`Store::last_reload_error`] / [`Store::refresh`].
///
/// The data file is never mapped (only read with `pread` into owned memory), so a writer
/// that truncates it cannot crash the reader. Nothing is ever written.
///
/// Limitation: the meta file (`PATH.crc`) IS kept memory-mapped for the syscall-free check.
/// The official library never shrinks it (it is rewritten in place), but if a foreign process
/// truncates it (to 0 bytes) while a `Store` is open, the next read of that store gets
/// `SIGBUS` (on Windows the truncation itself fails while the file is mapped).
pub struct Store {
    data_path: PathBuf,
    meta_path: PathBuf,
    key: Option<CryptKey>,
    rules: Rules,
    page: PageSize,
    lock_timeout: std::time::Duration,
    clock: Arc<dyn Clock>,
    meta_file: File,
    meta_map: MetaMap,
    current: ArcSwap<SnapshotData>,
    /// Each reading thread's cached snapshot (the check-on-read fast path, see `crate::sys::slots`).
    local: Slots<SnapshotData>,
    reload: Mutex<ReloadState>,
    last_error: Mutex<Option<Error>>,
    /// The most recent failed reload's error, kept when later reloads succeed.
    last_failure: Mutex<Option<Error>>,
    full: AtomicU64,
    partial: AtomicU64,
    failed: AtomicU64,
    busy: AtomicU64,
    bytes_read: AtomicU64,
    unlocked: AtomicU64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.data_path)
            .field("page_size", &self.page.size)
            .field("stats", &self.stats())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Meta bytes a `Store` needs mapped (through the actual size, for the check-on-read).
const MIN_META_LEN: usize = MAPPED_META_MIN;

/// The meta as a [`Store`] parses it: at least [`MIN_META_LEN`] bytes, then the version's
/// length ([`MetaInfo::parse`]); stricter than the official zero-filling
/// ([`crate::locate::parse_meta`]).
pub(crate) fn store_meta(bytes: &[u8]) -> Result<MetaInfo> {
    if bytes.len() < MIN_META_LEN {
        return Err(Error::MetaTooShort {
            len: bytes.len(),
            needed: META_SIZE,
        });
    }
    MetaInfo::parse(bytes)
}

impl Store {
    /// Opens the store at `path` (its meta file is `PATH.crc`) and loads it.
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Store> {
        let data_path = path.as_ref().to_path_buf();
        let meta_path = meta_path(&data_path);
        // A page size given out of range fails before any file is opened.
        if let crate::page::PageSizeChoice::Given(n) = opts.page {
            crate::page::validate_page_size(n)?;
        }
        let meta_file = open_regular(&meta_path, Which::Meta)?;
        let meta_map = MetaMap::new(&meta_file, &meta_path)?;
        let page = opts
            .page
            .resolve(Some(crate::fsio::file_len(&meta_file, &meta_path)?))?;
        let key = opts.key();
        let Options {
            clock,
            strategy,
            lock_timeout,
            ..
        } = opts;
        let mut store = Store {
            data_path,
            meta_path,
            key,
            rules: Rules::official()
                .with_strategy(strategy)
                .with_page_size(page.size),
            page,
            lock_timeout,
            clock,
            meta_file,
            meta_map,
            current: ArcSwap::from_pointee(empty_inner()),
            local: Slots::default(),
            reload: Mutex::new(ReloadState::default()),
            last_error: Mutex::new(None),
            last_failure: Mutex::new(None),
            full: AtomicU64::new(0),
            partial: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            busy: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            unlocked: AtomicU64::new(0),
        };
        let (inner, sync) = consistent(
            &store.meta_file,
            &store.meta_path,
            store.lock_timeout,
            || Ok(store.meta_bytes()),
            |bytes| {
                let meta = store_meta(bytes)?;
                store.full_load_with(meta, bytes, 0)
            },
            |s| s.source == RegionSource::Actual,
        )?;
        store.count_sync(sync);
        store.current = ArcSwap::from_pointee(inner);
        Ok(store)
    }

    /// The data file path.
    pub fn path(&self) -> &Path {
        &self.data_path
    }

    /// The page size this store is read with: the official loader on a machine with pages of
    /// this size reads what this store reads ([`Options::page_size`]).
    pub fn page_size(&self) -> u64 {
        self.page.size
    }

    /// The page size this store is read with and why (given, this machine's, or inferred from
    /// the `.crc` length when it was opened); its `Display` is a sentence for tool output.
    pub fn page_size_used(&self) -> PageSize {
        self.page
    }

    /// Reads the meta bytes from the mapping (a copy, so a concurrent writer cannot tear
    /// the parse itself; the shared lock makes it consistent).
    fn meta_bytes(&self) -> Vec<u8> {
        self.meta_map.copy_prefix(META_SIZE)
    }

    #[inline]
    fn mapped_triple(&self) -> Triple {
        self.meta_map.triple()
    }

    /// Check-on-read: the snapshot to read, reloading first if the meta changed. Fast path:
    /// this thread's cached snapshot, when its meta triple is the mapped one (no atomic
    /// read-modify-write, nothing shared written).
    #[inline]
    fn checked(&self) -> Pinned<'_, SnapshotData> {
        if let Some(slot) = self.local.get() {
            let mapped = self.mapped_triple();
            if let Some(p) = slot.pin_if(|s| s.observed == mapped) {
                return p;
            }
        }
        self.checked_slow()
    }

    /// The slow path of [`Store::checked`]: the store's current snapshot (reloaded first when
    /// the meta changed), cached in this thread's slot.
    #[cold]
    #[inline(never)]
    fn checked_slow(&self) -> Pinned<'_, SnapshotData> {
        let cur = self.checked_arc();
        self.local.install(cur)
    }

    /// The store's current snapshot after the check-on-read (reloading first if the meta
    /// changed).
    fn checked_arc(&self) -> Arc<SnapshotData> {
        let cur = self.current.load_full();
        if cur.observed == self.mapped_triple() {
            return cur;
        }
        drop(cur);
        let _ = self.reload(false);
        self.current.load_full()
    }

    /// Checks the meta file now and reloads if it changed. `Ok(true)`: a new snapshot was
    /// loaded; `Ok(false)`: nothing changed; `Err`: the reload failed (the previous snapshot
    /// keeps serving). Unlike reads, this retries a state whose reload failed before.
    pub fn refresh(&self) -> Result<bool> {
        self.reload(true)
    }

    /// The latest reload failure, if the most recent reload attempt failed.
    pub fn last_reload_error(&self) -> Option<Error> {
        lock(&self.last_error).clone()
    }

    /// The error of the most recent failed reload (one counted by [`ReloadStats::failed`]),
    /// even when later reloads succeeded; `None` when no reload ever failed. Reads keep serving
    /// the previous snapshot and a later success clears [`Store::last_reload_error`], so this
    /// is what says why a reload failed.
    pub fn last_failed_reload(&self) -> Option<Error> {
        lock(&self.last_failure).clone()
    }

    /// Reload counters.
    pub fn stats(&self) -> ReloadStats {
        ReloadStats {
            full: self.full.load(Ordering::Relaxed),
            partial: self.partial.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            busy: self.busy.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            unlocked: self.unlocked.load(Ordering::Relaxed),
        }
    }

    fn count_sync(&self, sync: ReadSync) {
        if sync == ReadSync::Unlocked {
            self.unlocked.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How the latest successful reload was done (`None` before the first reload).
    pub fn last_reload_kind(&self) -> Option<ReloadKind> {
        lock(&self.reload).last_kind
    }

    /// A snapshot handle (after the check-on-read). Zero-copy views borrow from it.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            inner: self.checked().to_arc(),
        }
    }

    /// A borrowed handle on the current state (after the check-on-read), for zero-copy reads
    /// without reference counting: the same getters as [`Store::snapshot`]'s [`Snapshot`]
    /// (both dereference to [`SnapshotData`]). Keep it short-lived; see [`SnapshotRef`].
    #[inline]
    pub fn view(&self) -> SnapshotRef<'_> {
        SnapshotRef {
            pin: self.checked(),
        }
    }

    /// The current snapshot without checking the meta file.
    pub fn snapshot_unchecked(&self) -> Snapshot {
        Snapshot {
            inner: self.current.load_full(),
        }
    }

    fn reload(&self, force: bool) -> Result<bool> {
        let mut st = lock(&self.reload);
        let cur = self.current.load_full();
        let triple = self.mapped_triple();
        if triple == cur.observed && !force {
            return Ok(false);
        }
        if !force {
            if let Some((t, e)) = &st.failed {
                if *t == triple {
                    return Err(e.clone());
                }
            }
        }
        let read_before = crate::fsio::bytes_read_on_thread();
        let seen = std::cell::Cell::new(triple);
        let result = consistent(
            &self.meta_file,
            &self.meta_path,
            self.lock_timeout,
            || Ok(self.meta_bytes()),
            |bytes| {
                let t = triple_of(bytes);
                seen.set(t);
                if t == cur.observed {
                    Ok(None)
                } else {
                    self.load_changed(&cur, bytes).map(Some)
                }
            },
            |r| {
                r.as_ref()
                    .is_none_or(|(s, _)| s.source == RegionSource::Actual)
            },
        )
        .map(|(r, sync)| {
            self.count_sync(sync);
            r
        })
        .map_err(|e| (e, seen.get()));
        self.bytes_read.fetch_add(
            crate::fsio::bytes_read_on_thread() - read_before,
            Ordering::Relaxed,
        );
        match result {
            Ok(None) => {
                st.failed = None;
                *lock(&self.last_error) = None;
                Ok(false)
            }
            Ok(Some((inner, kind))) => {
                self.current.store(Arc::new(inner));
                st.failed = None;
                st.last_kind = Some(kind);
                *lock(&self.last_error) = None;
                match kind {
                    ReloadKind::Full => &self.full,
                    ReloadKind::Partial => &self.partial,
                }
                .fetch_add(1, Ordering::Relaxed);
                Ok(true)
            }
            Err((e @ Error::Busy { .. }, _)) => {
                // Not remembered as a failure: the next read tries again.
                self.busy.fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
            Err((e, t)) => {
                st.failed = Some((t, e.clone()));
                *lock(&self.last_error) = Some(e.clone());
                *lock(&self.last_failure) = Some(e.clone());
                self.failed.fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// Loads a changed store (shared lock held): partially when only the tail grew.
    fn load_changed(
        &self,
        cur: &SnapshotData,
        meta_bytes: &[u8],
    ) -> Result<(SnapshotData, ReloadKind)> {
        let meta = MetaInfo::parse(meta_bytes)?;
        let gen = cur.generation + 1;
        if let Some(inner) = self.try_partial(cur, &meta, meta_bytes)? {
            return Ok((inner, ReloadKind::Partial));
        }
        Ok((
            self.full_load_with(meta, meta_bytes, gen)?,
            ReloadKind::Full,
        ))
    }

    fn iv_for(&self, meta: &MetaInfo) -> [u8; 16] {
        match &self.key {
            Some(k) => k.iv_for(meta),
            None => [0; 16],
        }
    }

    /// A full load (see [`crate::load::build_full`]).
    fn full_load_with(&self, meta: MetaInfo, meta_bytes: &[u8], gen: u64) -> Result<SnapshotData> {
        let data = open_regular(&self.data_path, Which::Data)?;
        let src = DataFile {
            file: &data,
            path: &self.data_path,
        };
        let full = crate::load::FullLoad {
            meta,
            observed: triple_of(meta_bytes),
            key: self.key.as_ref(),
            rules: self.rules,
            clock: &self.clock,
            generation: gen,
        };
        full.build(&src).map(|(s, _)| s)
    }

    /// The official `partialLoadFromFile` condition: same sequence, the region only grew,
    /// and the CRC continued over the appended bytes matches the meta.
    fn try_partial(
        &self,
        cur: &SnapshotData,
        meta: &MetaInfo,
        meta_bytes: &[u8],
    ) -> Result<Option<SnapshotData>> {
        if cur.source != RegionSource::Actual
            || meta.sequence != cur.meta.sequence
            || meta.key_expire() != cur.key_expire
            || meta.effective_version() != cur.meta.effective_version()
        {
            return Ok(None);
        }
        let iv = self.iv_for(meta);
        if iv != cur.iv {
            return Ok(None);
        }
        let data = open_regular(&self.data_path, Which::Data)?;
        let src = DataFile {
            file: &data,
            path: &self.data_path,
        };
        let (header, file_size) = read_header(&src)?;
        let new_size = actual_size(meta, header) as usize;
        if new_size <= cur.region_len || !fits(new_size as u64, file_size) {
            return Ok(None);
        }
        let added = src.read_at(
            (HEADER_LEN + cur.region_len) as u64,
            new_size - cur.region_len,
        )?;
        let mut h = crc32fast::Hasher::new_with_initial(cur.region_crc);
        h.update(&added);
        let crc = h.finalize();
        if crc != meta.crc_digest {
            return Ok(None);
        }
        let mut cipher_tail = Vec::new();
        let mut plain = added;
        if let Some(k) = &self.key {
            let mut joined = cur.cipher_tail.clone();
            joined.extend_from_slice(&plain);
            let keep = joined.len().saturating_sub(2 * crate::crypto::BLOCK);
            cipher_tail = joined[keep..].to_vec();
            let mut d = CfbDecryptor::resume(k, &iv, cur.region_len, &cur.cipher_tail)?;
            d.decrypt(&mut plain);
        }
        let info = BuildInfo {
            meta: *meta,
            observed: triple_of(meta_bytes),
            clock: self.clock.clone(),
            region_len: new_size,
            region_crc: crc,
            cipher_tail,
            source: RegionSource::Actual,
            iv,
            generation: cur.generation + 1,
        };
        cur.append(plain, info)
            .map(Some)
            .map_err(|e| e.in_content(self.key.is_some()))
    }
}

fn empty_inner() -> SnapshotData {
    SnapshotData::from_region(
        Vec::new(),
        BuildInfo {
            meta: MetaInfo::default(),
            observed: (0, 0, 0),
            clock: Arc::new(SystemClock),
            region_len: 0,
            region_crc: 0,
            cipher_tail: Vec::new(),
            source: RegionSource::Actual,
            iv: [0; 16],
            generation: 0,
        },
    )
    .unwrap_or_else(|_| unreachable!("an empty region has no records"))
}

/// One copy getter: `decode::$dec` on the payload of the snapshot pinned by a check-on-read.
macro_rules! copy_getter {
    ($official:literal, $dec:ident : $t:ty => $get:ident) => {
        #[doc = concat!("`", $official, "` (check-on-read; [`decode::", stringify!($dec), "`]).")]
        #[inline]
        pub fn $get(&self, key: impl AsRef<[u8]>) -> Option<$t> {
            decode::$dec(self.checked().raw_value(key)?)
        }
    };
}

/// The named copy getters, one per row of `decode::value_table` (its owned decoder where the
/// row has one).
macro_rules! copy_getters {
    ($($v:ident, $name:literal, $official:literal, $class:ident,
        $dec:ident : $t:ty => $get:ident $(| $own:ident : $o:ty => $oget:ident)?;)*) => {
        $(copy_getters!(@row $official, $dec: $t => $get $(, $own: $o => $oget)?);)*
    };
    (@row $official:literal, $dec:ident : $t:ty => $get:ident) => {
        copy_getter!($official, $dec: $t => $get);
    };
    (@row $official:literal, $dec:ident : $t:ty => $get:ident,
        $own:ident : $o:ty => $oget:ident) => {
        copy_getter!($official, $own: $o => $oget);
    };
}

impl Store {
    crate::decode::value_table!(copy_getters);

    /// The value payload (expire suffix removed) as an owned buffer (check-on-read).
    pub fn raw_value(&self, key: impl AsRef<[u8]>) -> Option<Vec<u8>> {
        self.checked().raw_value(key).map(<[u8]>::to_vec)
    }

    /// The key is present and not expired (check-on-read).
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.checked().contains(key)
    }

    /// Expire time of a live key (see [`SnapshotData::expire_at`]) (check-on-read).
    pub fn expire_at(&self, key: impl AsRef<[u8]>) -> Option<u32> {
        self.checked().expire_at(key)
    }

    /// Number of live keys (check-on-read).
    pub fn len(&self) -> usize {
        self.checked().len()
    }

    /// No live keys (check-on-read).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Live keys as owned byte strings (check-on-read).
    pub fn keys(&self) -> Vec<Vec<u8>> {
        let g = self.checked();
        g.iter_live().map(|(k, _)| k.to_vec()).collect()
    }

    /// The meta file as of the current snapshot (check-on-read).
    pub fn meta(&self) -> MetaInfo {
        self.checked().meta
    }
}
