//! Loading: the [`crate::locate`] decision applied to bytes in memory ([`load_bytes`]) or to
//! the files on disk, under the meta file's shared `flock`, or optimistically when a writer
//! holds it exclusively. Never writes.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

use std::sync::Arc;

use crate::clock::Clock;
use crate::cryptkey::CryptKey;
use crate::error::{Error, Result};
use crate::fsio::SharedLock;
use crate::locate::{
    greedy_len, locate, Location, Problem, ReadAt, RegionSource, Rules, HEADER_LEN,
};
use crate::meta::MetaInfo;
use crate::meta::{OFF_ACTUAL_SIZE, OFF_CRC, OFF_SEQUENCE};
use crate::options::Options;
use crate::parse::Cursor;
use crate::snapshot::{BuildInfo, Snapshot, SnapshotData, Triple};

/// The check-on-read triple from meta bytes (missing bytes read as 0).
pub(crate) fn triple_of(b: &[u8]) -> Triple {
    let rd = |o: usize| Cursor::at(b, o).read_u32().unwrap_or(0);
    (rd(OFF_CRC), rd(OFF_ACTUAL_SIZE), rd(OFF_SEQUENCE))
}

/// The load path of [`crate::Store::open`] on bytes in memory: the region chosen by
/// [`crate::locate::locate`] with `opts`' strategy, decrypted with its key, parsed (greedily
/// when recovered). The meta is read as the official library reads it
/// ([`crate::locate::parse_meta`]: a short or empty meta, or `&[]` for a missing one, reads
/// zero-filled), where [`crate::Store::open`] requires a meta file long enough for its version.
/// The page size is `opts`' choice ([`Options::page_size`]); [`crate::PageSizeChoice::Inferred`]
/// infers it from `meta.len()`, so pass the whole meta file. Returns the snapshot and the
/// locator's decision (its [`Location::mapped_size`] shows the page size used); otherwise the
/// errors of [`crate::Store::open`]. Pure: no file is touched (fuzz targets and differential tests use it).
pub fn load_bytes(
    meta: &[u8],
    data: &[u8],
    opts: &Options,
) -> Result<(Snapshot, crate::locate::Location)> {
    let key = opts.key();
    let page = opts.page.resolve(Some(meta.len() as u64))?;
    let full = crate::load::FullLoad {
        meta: crate::locate::parse_meta(meta),
        observed: triple_of(meta),
        key: key.as_ref(),
        rules: Rules::official()
            .with_strategy(opts.strategy)
            .with_page_size(page.size),
        clock: &opts.clock,
        generation: 0,
    };
    let (inner, loc) = full.build(data)?;
    Ok((
        Snapshot {
            inner: Arc::new(inner),
        },
        loc,
    ))
}

/// Whether `size` bytes of region fit in a file of `file_size` bytes as it is on disk
/// (`size + 4 <= fileSize`); used by the partial-reload fast path, which falls back to a full
/// load (and the locator) whenever this does not hold.
pub(crate) fn fits(size: u64, file_size: u64) -> bool {
    size + HEADER_LEN as u64 <= file_size
}

/// The typed error a read-only reader reports where the official default strategy would
/// discard the content (see [`crate::locate::Strategy::Discard`]).
pub(crate) fn discard_error(loc: &Location) -> Error {
    if loc.file_len < HEADER_LEN as u64 {
        return Error::DataTooShort { len: loc.file_len };
    }
    match loc.problem {
        Some(Problem::CrcMismatch {
            expected, actual, ..
        }) => Error::CrcMismatch {
            expected,
            actual,
            last_confirmed_tried: loc.fallbacks_tried,
        },
        Some(Problem::SizeBeyondFile { size, .. }) => Error::ActualSizeBeyondFile {
            actual_size: size as u64,
            file_size: loc.file_len,
        },
        None => Error::ActualSizeBeyondFile {
            actual_size: loc.actual_size as u64,
            file_size: loc.file_len,
        },
    }
}

/// Everything a full load needs besides the data: the one load path of [`crate::Store`] and
/// [`load_bytes`].
pub(crate) struct FullLoad<'a> {
    pub meta: MetaInfo,
    pub observed: Triple,
    pub key: Option<&'a CryptKey>,
    pub rules: Rules,
    pub clock: &'a Arc<dyn Clock>,
    pub generation: u64,
}

impl FullLoad<'_> {
    /// The region [`locate`] chooses, decrypted and parsed (greedily when recovered); where
    /// the official default would discard the content, a typed error ([`discard_error`]).
    pub(crate) fn build<D: ReadAt + ?Sized>(&self, data: &D) -> Result<(SnapshotData, Location)> {
        let found = locate(&self.meta, data, self.rules)?;
        let loc = found.location;
        let source = RegionSource::of(&loc).ok_or_else(|| discard_error(&loc))?;
        let iv = self.key.map_or([0; 16], |k| k.iv_for(&self.meta));
        let mut bytes = found.region;
        let cipher_tail = match self.key {
            Some(_) => bytes[bytes.len().saturating_sub(2 * crate::crypto::BLOCK)..].to_vec(),
            None => Vec::new(),
        };
        if let Some(k) = self.key {
            k.decrypt(&iv, &mut bytes);
        }
        if loc.greedy() {
            bytes.truncate(greedy_len(&bytes));
        }
        let info = BuildInfo {
            meta: self.meta,
            observed: self.observed,
            clock: self.clock.clone(),
            region_len: bytes.len(),
            region_crc: loc.crc,
            cipher_tail,
            source,
            iv,
            generation: self.generation,
        };
        let snap =
            SnapshotData::from_region(bytes, info).map_err(|e| e.in_content(self.key.is_some()))?;
        Ok((snap, loc))
    }
}

/// How a load was kept consistent with writers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReadSync {
    /// Under the shared `flock` on the meta file, like an official reader process.
    Locked,
    /// A writer held the lock exclusively past the lock timeout: meta read, data read and
    /// CRC-checked, meta read again, retried until the meta did not change around the read.
    Unlocked,
    /// There was no meta file to lock (forensic reads with
    /// [`crate::locate::Strategy::Recover`] only).
    NoMetaFile,
}

impl ReadSync {
    /// A sentence for tool output.
    pub fn describe(self) -> &'static str {
        match self {
            ReadSync::Locked => "read under a shared lock",
            ReadSync::Unlocked => {
                "a writer holds an exclusive lock; read without lock, meta re-checked around the read"
            }
            ReadSync::NoMetaFile => "no meta file; read without lock",
        }
    }
}

/// Optimistic attempts before giving up on a meta file that keeps changing.
const OPTIMISTIC_ATTEMPTS: u32 = 8;
/// Attempts (of the above) on which a result that is not the primary region, or an error,
/// is retried once more in case a writer was between its data and meta writes.
const UNSETTLED_RETRIES: u32 = 3;

/// Runs `load` on meta bytes from `read_meta` consistently with writers: under the shared
/// lock when it can be had within `timeout`, otherwise optimistically (see [`ReadSync`]).
/// `settled` says whether a successful result needs no retry (e.g. the primary region). An
/// optimistic load that fails while the meta keeps changing is [`Error::Busy`]; one that fails
/// over a still meta is judged once more under the lock if the writer lets go within another
/// `timeout` (a writer preempted between its data and meta writes), is [`Error::Busy`] if the
/// meta changed during that wait, else it is the result.
pub(crate) fn consistent<T>(
    meta_file: &File,
    meta_path: &Path,
    timeout: Duration,
    read_meta: impl Fn() -> Result<Vec<u8>>,
    mut load: impl FnMut(&[u8]) -> Result<T>,
    settled: impl Fn(&T) -> bool,
) -> Result<(T, ReadSync)> {
    // `load` on the meta under the shared lock, when the lock can be had within `timeout`.
    let locked = |load: &mut dyn FnMut(&[u8]) -> Result<T>| -> Result<Option<(T, ReadSync)>> {
        match SharedLock::try_acquire(meta_file, meta_path, timeout)? {
            Some(_lock) => load(&read_meta()?).map(|t| Some((t, ReadSync::Locked))),
            None => Ok(None),
        }
    };
    if let Some(done) = locked(&mut load)? {
        return Ok(done);
    }
    let mut attempt = 0;
    // Whether the meta changed at any point of these attempts: the writer was active.
    let mut seen: Option<Vec<u8>> = None;
    let mut changed = false;
    loop {
        attempt += 1;
        let before = read_meta()?;
        changed |= seen.as_ref().is_some_and(|s| *s != before);
        let result = load(&before);
        let after = read_meta()?;
        changed |= after != before;
        let last = attempt >= OPTIMISTIC_ATTEMPTS;
        let retry = if before != after {
            true
        } else {
            attempt < UNSETTLED_RETRIES && !result.as_ref().is_ok_and(&settled)
        };
        if !retry || last {
            // Even on the last attempt the result is CRC-checked against the meta it was
            // located with, so a meta that kept changing cannot yield a torn region; a failure
            // while the meta changed during these attempts is the writer's activity, not the
            // file's fault (the next read tries again and judges a still file).
            if result.is_err() {
                if changed {
                    return Err(Error::Busy { attempts: attempt });
                }
                // The meta stood still while the load failed: a writer that holds its lock
                // between its data and meta writes (preempted there) looks the same as a damaged
                // file. Wait for the lock once more; when the writer lets go, judge the file
                // under it.
                if let Some(done) = locked(&mut load)? {
                    return Ok(done);
                }
                // The writer kept its lock that long too. A meta that moved meanwhile says the
                // writer was preempted between its data and meta writes (an official
                // `clearAll` truncates the data file before it writes the meta, a full
                // write-back rewrites the region first) and has written since: not the file's
                // fault either. Only a meta still unchanged is judged.
                if read_meta()? != after {
                    return Err(Error::Busy { attempts: attempt });
                }
            }
            return result.map(|t| (t, ReadSync::Unlocked));
        }
        seen = Some(after);
        std::thread::sleep(Duration::from_millis(u64::from(attempt)));
    }
}
