//! The region locator: which bytes of a data file the official loader reads, and why.
//!
//! [`locate`] is a pure function of the meta file's content, the data file's content (any
//! [`ReadAt`] source: a byte slice or an open file) and the [`Rules`] (recovery strategy and
//! page size). It makes the decisions of the official `MMKV::loadFromFile` /
//! `checkDataValid` / `checkLastConfirmedInfo`, which are the same in every release from
//! v1.1.0 to v2.4.2:
//!
//! 1. The actual size is the meta's (meta version >= 3, [`MetaInfo::has_actual_size`]) or
//!    the data file's 4-byte header (older metas).
//! 2. The official library maps the data file rounded up to whole pages (at least one page,
//!    the new bytes zero-filled), so a region "fits" when `size + 4 <= that rounded size`;
//!    bytes past the real end of file read as zeros. The page is the machine's that opens the
//!    store ([`Rules::page_size`], see [`crate::page`]): a truncated file can fit at 16 KiB
//!    and not at 4 KiB.
//! 3. The region fits and its CRC-32 equals the meta's crc digest: it is used
//!    ([`Source::Meta`], or [`Source::Header`] for metas older than version 3).
//! 4. Otherwise, for metas of version >= 3 only: the header's size with the meta's crc when it
//!    differs from the meta's ("downgrade & upgrade", [`Source::Header`]), then the
//!    last-confirmed size and crc ([`Source::LastConfirmed`]).
//! 5. Otherwise the strategy decides: [`Strategy::Discard`] (the official default) loads
//!    nothing ([`Source::Discarded`]); [`Strategy::Recover`] (`OnErrorRecover`) loads the
//!    actual-size region anyway, or everything after the header when the actual size does not
//!    fit, and decodes it greedily: records up to the first one that does not parse
//!    ([`Source::Recovered`], see [`greedy_len`]).
//!
//! A meta file shorter than its structure reads as if zero-filled (the official library maps
//! at least one zero-filled page of it; a missing meta file is created that way), see
//! [`parse_meta`]. The CRC is over the bytes as stored (ciphertext when encrypted), so the
//! decision never needs the crypt key; decrypting and parsing the chosen region is
//! [`crate::Store`]'s and the tools' job.
//!
//! ```
//! use mmkv_reader::locate::{locate, parse_meta, Rules, Source};
//!
//! let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/v2.4.2");
//! let meta = std::fs::read(dir.join("plain.crc")).unwrap();
//! let data = std::fs::read(dir.join("plain")).unwrap();
//! let found = locate(&parse_meta(&meta), data.as_slice(), Rules::official()).unwrap();
//! assert_eq!(found.location.source, Source::Meta);
//! assert!(found.location.crc_ok);
//! assert_eq!(found.region.len() as u64, found.location.size);
//! ```

use crate::error::Result;
use crate::meta::{MetaInfo, META_SIZE};
use crate::parse::u32_zero_filled;
pub use crate::read_at::{ReadAt, HEADER_LEN};

/// Which size the loaded region has (see [`Source`] for the full decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionSource {
    /// The actual size (the meta's from version 3, else the data-file header's) with the meta
    /// crc: [`Source::Meta`], or [`Source::Header`] for metas older than version 3.
    Actual,
    /// The data-file header's size with the meta crc (meta version >= 3, "downgrade & upgrade").
    OldStyleHeader,
    /// The meta's last-confirmed size and crc.
    LastConfirmed,
    /// No region passed the CRC check and the store was opened with
    /// [`crate::Options::recover`]: decoded greedily, unverified ([`Source::Recovered`]).
    Recovered,
}

impl RegionSource {
    /// The snapshot-level source of a located region; `None` for [`Source::Discarded`].
    pub(crate) fn of(loc: &Location) -> Option<RegionSource> {
        Some(match loc.source {
            Source::Meta => RegionSource::Actual,
            Source::Header if loc.is_primary() => RegionSource::Actual,
            Source::Header => RegionSource::OldStyleHeader,
            Source::LastConfirmed => RegionSource::LastConfirmed,
            Source::Recovered => RegionSource::Recovered,
            Source::Discarded => return None,
        })
    }
}

/// What the official loader does when no region passes its CRC check
/// (`MMKVRecoverStrategic`, chosen by the app's `onMMKVCRCCheckFail` /
/// `onMMKVFileLengthError` handler or, from v1.3.0 on, per instance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Strategy {
    /// `OnErrorDiscard`, the official default: the store opens empty.
    #[default]
    Discard,
    /// `OnErrorRecover`: the region is decoded anyway, keeping every record before the first
    /// one that does not parse.
    Recover,
}

/// Everything besides the two files that the official decision depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rules {
    /// What to do when no region passes the CRC check.
    pub strategy: Strategy,
    /// The page size of the machine that would open the store (files are mapped rounded up
    /// to whole pages, see [`crate::page`]). Not validated here: values below 1 are taken as 1.
    pub page_size: u64,
}

impl Default for Rules {
    fn default() -> Self {
        Rules::official()
    }
}

impl Rules {
    /// The official default on this machine: [`Strategy::Discard`], this machine's page size
    /// ([`crate::page::host_page_size`], what `getpagesize()` gives the official library here).
    pub fn official() -> Rules {
        Rules {
            strategy: Strategy::Discard,
            page_size: crate::page::host_page_size(),
        }
    }

    /// `OnErrorRecover`, this machine's page size.
    pub fn recover() -> Rules {
        Rules::official().with_strategy(Strategy::Recover)
    }

    /// The same rules with another strategy.
    pub const fn with_strategy(self, strategy: Strategy) -> Rules {
        Rules { strategy, ..self }
    }

    /// The same rules with another page size.
    pub const fn with_page_size(self, page_size: u64) -> Rules {
        Rules { page_size, ..self }
    }

    /// The size the official library maps a file of `len` bytes at: rounded up to whole
    /// pages, at least one page (`MemoryFile::reloadFromFile`).
    pub fn mapped_size(&self, len: u64) -> u64 {
        let page = self.page_size.max(1);
        len.div_ceil(page).max(1).saturating_mul(page)
    }
}

/// Where the loaded region's size (and the crc it was checked against) came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The meta's actual size with the meta's crc (meta version >= 3).
    Meta,
    /// The data file's 4-byte header with the meta's crc: the actual size of metas older than
    /// version 3, or the "downgrade & upgrade" fallback of newer ones.
    Header,
    /// The meta's last-confirmed size and crc (meta version >= 3).
    LastConfirmed,
    /// No region passed the CRC check and the strategy is [`Strategy::Recover`]: the region
    /// is read unverified and decoded greedily.
    Recovered,
    /// No region passed the CRC check and the strategy is [`Strategy::Discard`]: the official
    /// library opens the store empty.
    Discarded,
}

impl Source {
    /// The name used in tool output: `meta`, `header`, `last_confirmed`, `recovered`,
    /// `discarded`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Meta => "meta",
            Source::Header => "header",
            Source::LastConfirmed => "last_confirmed",
            Source::Recovered => "recovered",
            Source::Discarded => "discarded",
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the actual-size region was not used as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Problem {
    /// The region fits in the file but its CRC-32 is not the meta's crc digest.
    CrcMismatch {
        /// The actual size that was checked.
        size: u32,
        /// The meta's crc digest.
        expected: u32,
        /// The CRC-32 of the stored region.
        actual: u32,
    },
    /// The actual size does not fit in the (page-rounded) data file.
    SizeBeyondFile {
        /// The actual size.
        size: u32,
        /// The data file as the official library maps it (rounded up to whole pages).
        mapped_size: u64,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Problem::CrcMismatch {
                size,
                expected,
                actual,
            } => write!(
                f,
                "CRC mismatch over {size} bytes: meta says {expected:#010x}, data has {actual:#010x}"
            ),
            Problem::SizeBeyondFile { size, mapped_size } => write!(
                f,
                "actual size {size} does not fit in the data file ({mapped_size} bytes as mapped)"
            ),
        }
    }
}

/// The locator's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    /// Where the region's size came from.
    pub source: Source,
    /// Bytes of region (data-file bytes `4 .. 4 + size`); 0 when discarded.
    pub size: u64,
    /// The region's CRC-32 matched the crc it was checked against (false for
    /// [`Source::Recovered`] and [`Source::Discarded`]).
    pub crc_ok: bool,
    /// CRC-32 of the region's stored bytes (0 when discarded).
    pub crc: u32,
    /// The actual size the loader started from (meta's or header's, see [`Source`]).
    pub actual_size: u32,
    /// Why the actual-size region was not used as it is (`None` when it was).
    pub problem: Option<Problem>,
    /// The meta (version >= 3) allowed the header and last-confirmed fallbacks.
    pub fallbacks_tried: bool,
    /// The data file's real length in bytes.
    pub file_len: u64,
    /// The data file's size as the official library maps it (see [`Rules::mapped_size`]).
    pub mapped_size: u64,
}

impl Location {
    /// The region's bytes in `data`, the data file this location was decided on, when they
    /// all lie inside it; `None` when the region runs past the end of the file (where the
    /// official mapping reads zeros).
    pub fn in_file<'a>(&self, data: &'a [u8]) -> Option<&'a [u8]> {
        let end = HEADER_LEN.checked_add(usize::try_from(self.size).ok()?)?;
        data.get(HEADER_LEN..end)
    }

    /// The region must be decoded greedily (records up to the first one that does not
    /// parse, see [`greedy_len`]) rather than all-or-nothing.
    pub fn greedy(&self) -> bool {
        self.source == Source::Recovered
    }

    /// The region was verified by a CRC and is the one the meta describes now
    /// (not a fallback, not recovered, not discarded).
    pub fn is_primary(&self) -> bool {
        self.problem.is_none()
    }
}

/// A located region: the decision and the region's stored bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The decision.
    pub location: Location,
    /// The region's bytes as stored (ciphertext when encrypted), zero-filled past the real
    /// end of the file as the official mapping is; empty when discarded.
    pub region: Vec<u8>,
}

/// Parses meta bytes the way the official loader sees them: missing bytes (a short or empty
/// file, or no file at all: pass `&[]`) read as zeros. Never fails.
pub fn parse_meta(bytes: &[u8]) -> MetaInfo {
    let mut padded = [0u8; META_SIZE];
    let n = bytes.len().min(META_SIZE);
    padded[..n].copy_from_slice(&bytes[..n]);
    // A full-size buffer satisfies every version's length requirement.
    MetaInfo::parse(&padded).unwrap_or_default()
}

/// `len` bytes at `offset` of the data as mapped (real bytes, then zeros past the end) and
/// their CRC-32.
fn read_mapped_crc<D: ReadAt + ?Sized>(
    data: &D,
    file_len: u64,
    offset: u64,
    len: u64,
) -> Result<(Vec<u8>, u32)> {
    let real = file_len.saturating_sub(offset).min(len);
    let (mut out, mut crc) = if real > 0 {
        data.read_at_crc(offset, real as usize)?
    } else {
        (Vec::new(), 0)
    };
    let zeros = len - out.len() as u64;
    if zeros > 0 {
        out.resize(len as usize, 0);
        crc = crc_with_zeros(crc32fast::Hasher::new_with_initial(crc), zeros);
    }
    Ok((out, crc))
}

/// The CRC-32 of what `hasher` has seen followed by `zeros` zero bytes (a file as the official
/// library maps it, past its end).
fn crc_with_zeros(mut hasher: crc32fast::Hasher, mut zeros: u64) -> u32 {
    const ZEROS: [u8; 4096] = [0; 4096];
    while zeros > 0 {
        let n = zeros.min(ZEROS.len() as u64);
        hasher.update(&ZEROS[..n as usize]);
        zeros -= n;
    }
    hasher.finalize()
}

/// Decides, as the official loader does, which region of the data file is loaded (see the
/// [module documentation](self)). `meta` is usually [`parse_meta`] of the meta file's bytes.
///
/// Errors come only from `data` (I/O, a file shrinking while it is read); a byte-slice
/// source never fails. Memory use is bounded by the data's length.
pub fn locate<D: ReadAt + ?Sized>(meta: &MetaInfo, data: &D, rules: Rules) -> Result<Located> {
    let file_len = data.len()?;
    // Past the end of the file the header reads as zeros.
    let header = u32_zero_filled(
        &data.read_at(0, file_len.min(HEADER_LEN as u64) as usize)?,
        0,
    );
    // The first region read with its CRC (the actual size's, kept for `Strategy::Recover`)
    // and the latest.
    let mut first: Option<(Vec<u8>, u32)> = None;
    let mut latest: Option<(Vec<u8>, u32)> = None;
    let location = decide(meta, file_len, header, rules, |size| -> Result<u32> {
        let (bytes, crc) = read_mapped_crc(data, file_len, HEADER_LEN as u64, size)?;
        let slot = if first.is_none() {
            &mut first
        } else {
            &mut latest
        };
        *slot = Some((bytes, crc));
        Ok(crc)
    })?;
    let region = if location.source == Source::Discarded {
        Vec::new()
    } else {
        [latest, first]
            .into_iter()
            .flatten()
            .find(|(r, crc)| r.len() as u64 == location.size && *crc == location.crc)
            .map(|(r, _)| r)
            .unwrap_or_default()
    };
    Ok(Located { location, region })
}

/// [`locate`] on a data file held in memory, without copying the region: the decision only.
/// The region is `data[4 .. 4 + location.size]`, zero-filled past the end of `data` (see
/// [`Location::in_file`]).
pub fn locate_in(meta: &MetaInfo, data: &[u8], rules: Rules) -> Location {
    let file_len = data.len() as u64;
    let crc_of = |size: u64| -> std::result::Result<u32, std::convert::Infallible> {
        let body = data.get(HEADER_LEN..).unwrap_or_default();
        let real = body.len().min(usize::try_from(size).unwrap_or(usize::MAX));
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&body[..real]);
        Ok(crc_with_zeros(hasher, size - real as u64))
    };
    match decide(meta, file_len, u32_zero_filled(data, 0), rules, crc_of) {
        Ok(l) => l,
        Err(never) => match never {},
    }
}

/// The actual size the official loader starts from: the meta's when its version is >= 3,
/// else the data-file header.
pub(crate) fn actual_size(meta: &MetaInfo, header: u32) -> u32 {
    if meta.has_actual_size() {
        meta.actual_size
    } else {
        header
    }
}

/// The decision of [`locate`] for a data file of `file_len` bytes whose 4-byte header reads
/// `header`; `crc_of(size)` is the CRC-32 of the region of `size` bytes after the header
/// (zero-filled past the end of the file), called only for sizes that fit the mapped file.
fn decide<E>(
    meta: &MetaInfo,
    file_len: u64,
    header: u32,
    rules: Rules,
    mut crc_of: impl FnMut(u64) -> std::result::Result<u32, E>,
) -> std::result::Result<Location, E> {
    let mapped_size = rules.mapped_size(file_len);
    let actual = actual_size(meta, header);
    let fits = |size: u32| size as u64 + HEADER_LEN as u64 <= mapped_size;
    let fallbacks_tried = meta.has_actual_size();
    let done = |source, size: u64, crc, crc_ok, problem| Location {
        source,
        size,
        crc_ok,
        crc,
        actual_size: actual,
        problem,
        fallbacks_tried,
        file_len,
        mapped_size,
    };

    let mut actual_crc = None;
    let problem = if fits(actual) {
        let crc = crc_of(actual as u64)?;
        if crc == meta.crc_digest {
            let source = if meta.has_actual_size() {
                Source::Meta
            } else {
                Source::Header
            };
            return Ok(done(source, actual as u64, crc, true, None));
        }
        actual_crc = Some(crc);
        Problem::CrcMismatch {
            size: actual,
            expected: meta.crc_digest,
            actual: crc,
        }
    } else {
        Problem::SizeBeyondFile {
            size: actual,
            mapped_size,
        }
    };

    if fallbacks_tried {
        // In this order: the old-style header size with the meta crc (when it differs from
        // the actual size, already tried), then the last-confirmed size with its own crc.
        let fallbacks = [
            (Source::Header, header, meta.crc_digest, header != actual),
            (
                Source::LastConfirmed,
                meta.last_confirmed_size,
                meta.last_confirmed_crc,
                true,
            ),
        ];
        for (source, size, expected, untried) in fallbacks {
            if untried && fits(size) {
                let crc = crc_of(size as u64)?;
                if crc == expected {
                    return Ok(done(source, size as u64, crc, true, Some(problem)));
                }
            }
        }
    }

    match rules.strategy {
        Strategy::Discard => Ok(done(Source::Discarded, 0, 0, false, Some(problem))),
        Strategy::Recover => {
            let (size, crc) = match actual_crc {
                Some(crc) => (actual as u64, crc),
                // "make sure we don't over read the file": everything after the header
                None => {
                    let size = mapped_size - HEADER_LEN as u64;
                    (size, crc_of(size)?)
                }
            };
            Ok(done(Source::Recovered, size, crc, false, Some(problem)))
        }
    }
}

/// How many leading bytes of a (decrypted) region the official greedy decoder uses: the
/// item-size holder and every complete record before the first one that does not parse
/// (0 when even the holder does not parse). Parsing `&region[..greedy_len(region)]` as a
/// whole region yields exactly the records the official `greedyDecodeMap` keeps.
pub fn greedy_len(region: &[u8]) -> usize {
    if region.is_empty() {
        return 0;
    }
    let mut it = crate::records::records(region);
    let mut good = match crate::records::holder_len(region) {
        Ok(n) => n,
        Err(_) => return 0,
    };
    loop {
        match it.next() {
            Some(Ok(_)) => good = it.position(),
            Some(Err(_)) => return good,
            None => return it.position().max(good),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::{OFF_ACTUAL_SIZE, OFF_CRC, OFF_LAST_CRC, OFF_LAST_SIZE, OFF_VERSION};
    use proptest::prelude::{prop_assert, prop_assert_eq, proptest};

    /// The official default at 4 KiB pages (the tests below are about 4 KiB machines; the
    /// host's page may differ, e.g. under qemu `-p 16384`).
    fn official() -> Rules {
        Rules::official().with_page_size(4096)
    }

    /// `OnErrorRecover` at 4 KiB pages.
    fn recover() -> Rules {
        Rules::recover().with_page_size(4096)
    }

    fn meta(version: u32, crc: u32, actual: u32, last: (u32, u32)) -> MetaInfo {
        let mut b = vec![0u8; META_SIZE];
        b[OFF_CRC..OFF_CRC + 4].copy_from_slice(&crc.to_le_bytes());
        b[OFF_VERSION..OFF_VERSION + 4].copy_from_slice(&version.to_le_bytes());
        b[OFF_ACTUAL_SIZE..OFF_ACTUAL_SIZE + 4].copy_from_slice(&actual.to_le_bytes());
        b[OFF_LAST_SIZE..OFF_LAST_SIZE + 4].copy_from_slice(&last.0.to_le_bytes());
        b[OFF_LAST_CRC..OFF_LAST_CRC + 4].copy_from_slice(&last.1.to_le_bytes());
        parse_meta(&b)
    }

    /// A data file: header, region, padding to `len`.
    fn data(header: u32, region: &[u8], len: usize) -> Vec<u8> {
        let mut d = header.to_le_bytes().to_vec();
        d.extend_from_slice(region);
        d.resize(len.max(d.len()), 0);
        d
    }

    // holder (1 byte) + "a" = 1, "b" = 2
    const REGION: &[u8] = &[0x00, 1, b'a', 1, 1, 1, b'b', 1, 2];

    #[test]
    fn valid_meta_region() {
        let crc = crc32fast::hash(REGION);
        let m = meta(4, crc, REGION.len() as u32, (0, 0));
        let d = data(0, REGION, 4096);
        let l = locate(&m, d.as_slice(), official()).unwrap();
        assert_eq!(l.location.source, Source::Meta);
        assert_eq!(l.region, REGION);
        assert!(l.location.crc_ok && l.location.is_primary());
    }

    #[test]
    fn old_meta_uses_header() {
        let crc = crc32fast::hash(REGION);
        let m = meta(2, crc, 999, (0, 0));
        let d = data(REGION.len() as u32, REGION, 4096);
        let l = locate(&m, d.as_slice(), official()).unwrap();
        assert_eq!(l.location.source, Source::Header);
        assert!(l.location.is_primary());
        // pre-v3: no fallbacks, discard on mismatch
        let m = meta(2, crc ^ 1, 0, (REGION.len() as u32, crc));
        let l = locate(&m, d.as_slice(), official()).unwrap();
        assert_eq!(l.location.source, Source::Discarded);
        assert!(!l.location.fallbacks_tried);
    }

    #[test]
    fn header_then_last_confirmed_fallback() {
        let crc = crc32fast::hash(REGION);
        let short = &REGION[..5];
        // meta size stale, header right
        let m = meta(4, crc, 5, (0, 0));
        let d = data(REGION.len() as u32, REGION, 4096);
        let l = locate(&m, d.as_slice(), official()).unwrap();
        assert_eq!(l.location.source, Source::Header);
        assert_eq!(l.region, REGION);
        assert!(matches!(
            l.location.problem,
            Some(Problem::CrcMismatch { size: 5, .. })
        ));
        // meta size beyond the file, last confirmed right
        let m = meta(4, 7, 1 << 20, (5, crc32fast::hash(short)));
        let l = locate(&m, d.as_slice(), official()).unwrap();
        assert_eq!(l.location.source, Source::LastConfirmed);
        assert_eq!(l.region, short);
        assert!(matches!(
            l.location.problem,
            Some(Problem::SizeBeyondFile {
                mapped_size: 4096,
                ..
            })
        ));
    }

    #[test]
    fn discard_or_recover() {
        let m = meta(4, 7, REGION.len() as u32, (3, 3));
        let d = data(0, REGION, 4096);
        let l = locate(&m, d.as_slice(), official()).unwrap();
        assert_eq!(l.location.source, Source::Discarded);
        assert!(l.region.is_empty());
        let l = locate(&m, d.as_slice(), recover()).unwrap();
        assert_eq!(l.location.source, Source::Recovered);
        assert_eq!(l.region, REGION);
        assert!(l.location.greedy() && !l.location.crc_ok);
        // size beyond the file: everything after the header
        let m = meta(4, 7, 1 << 30, (3, 3));
        let l = locate(&m, d.as_slice(), recover()).unwrap();
        assert_eq!(l.location.size, 4092);
    }

    #[test]
    fn file_is_mapped_page_rounded_and_zero_filled() {
        // a region running past the real end of file fits in the mapped page
        let mut region = REGION.to_vec();
        region.extend_from_slice(&[0, 0, 0]);
        let crc = crc32fast::hash(&region);
        let m = meta(4, crc, region.len() as u32, (0, 0));
        let d = data(0, REGION, 0); // file ends right after the records
        let l = locate(&m, d.as_slice(), official()).unwrap();
        assert_eq!(l.location.source, Source::Meta);
        assert_eq!(l.region, region);
        assert_eq!((l.location.file_len, l.location.mapped_size), (13, 4096));
        // an empty data file and a missing meta: an empty region with crc 0 matches
        let l = locate(&parse_meta(&[]), &[][..], official()).unwrap();
        assert_eq!((l.location.source, l.location.size), (Source::Header, 0));
        assert_eq!(official().mapped_size(4096), 4096);
        assert_eq!(official().mapped_size(4097), 8192);
        assert_eq!(official().with_page_size(0).mapped_size(5), 5);
    }

    /// `locate_in` (in memory, no copy) makes `locate`'s decision in every case above, and the
    /// region `locate` copies is the file's bytes there, zero-filled past the end.
    #[test]
    fn locate_in_agrees_with_locate() {
        let crc = crc32fast::hash(REGION);
        let short_crc = crc32fast::hash(&REGION[..5]);
        let n = REGION.len() as u32;
        let metas = [
            meta(4, crc, n, (0, 0)),
            meta(2, crc, 999, (0, 0)),
            meta(2, crc ^ 1, 0, (n, crc)),
            meta(4, crc, 5, (0, 0)),
            meta(4, 7, 1 << 20, (5, short_crc)),
            meta(4, 7, n, (3, 3)),
            meta(4, 7, 1 << 30, (3, 3)),
            meta(
                4,
                crc32fast::hash(&[REGION, &[0; 3]].concat()),
                n + 3,
                (0, 0),
            ),
            parse_meta(&[]),
        ];
        let datas = [
            data(0, REGION, 4096),
            data(n, REGION, 4096),
            data(0, REGION, 0),
            data(n, REGION, 4100),
            vec![],
            vec![1, 0],
        ];
        let mut cases = 0;
        for m in &metas {
            for d in &datas {
                for rules in [official(), recover()] {
                    let l = locate(m, d.as_slice(), rules).unwrap();
                    assert_eq!(locate_in(m, d, rules), l.location, "{m:?} {d:?} {rules:?}");
                    let mut want = d.get(HEADER_LEN..).unwrap_or_default().to_vec();
                    want.resize(l.location.size as usize, 0);
                    assert_eq!(l.region, want);
                    let inside = HEADER_LEN + l.region.len() <= d.len();
                    assert_eq!(l.location.in_file(d), inside.then_some(&want[..]));
                    cases += 1;
                }
            }
        }
        assert_eq!(cases, 108);
    }

    #[test]
    fn official_rules_follow_the_host_page() {
        let host = crate::page::host_page_size();
        assert_eq!(Rules::official().page_size, host);
        assert_eq!(
            Rules::recover(),
            Rules::official().with_strategy(Strategy::Recover)
        );
        assert_eq!(Rules::default(), Rules::official());
        assert_eq!(Rules::official().mapped_size(1), host);
    }

    /// A data file cut short inside a 16 KiB writer's last page: its region (ending in a
    /// value of zeros) fits the file as a 16 KiB machine maps it, zero-filled, and not as a
    /// 4 KiB machine does, so the two official loaders decide differently on the same bytes.
    #[test]
    fn decisions_depend_on_the_page_size() {
        let mut region = REGION.to_vec();
        region.extend_from_slice(&[1, b'z', 0xfb, 0x26]); // "z" = 4987 bytes
        region.resize(5000, 0);
        let m = meta(4, crc32fast::hash(&region), 5000, (3, 3));
        let d = data(0, &region[..REGION.len() + 4], 0);
        for (rules, want, mapped) in [
            (official(), Source::Discarded, 4096),
            (official().with_page_size(16384), Source::Meta, 16384),
            (official().with_page_size(65536), Source::Meta, 65536),
            (recover(), Source::Recovered, 4096),
        ] {
            let l = locate(&m, d.as_slice(), rules).unwrap();
            assert_eq!(
                (l.location.source, l.location.mapped_size),
                (want, mapped),
                "{rules:?}"
            );
            assert_eq!(locate_in(&m, &d, rules), l.location);
            if want == Source::Meta {
                assert_eq!(l.region, region);
            }
        }
        // recovering a size beyond the file reads the whole mapped file after the header
        let l = locate(&m, d.as_slice(), recover()).unwrap();
        assert_eq!(l.location.size, 4092);
        assert_eq!(greedy_len(&l.region), REGION.len());
        assert!(matches!(
            l.location.problem,
            Some(Problem::SizeBeyondFile {
                size: 5000,
                mapped_size: 4096
            })
        ));
    }

    proptest! {
        /// The mapped size is the file rounded up to whole pages, at least one, for every page
        /// size a reader follows; a region fits at a page size when it fits at a smaller one.
        #[test]
        fn mapped_size_rounds_up_to_pages(len in 0u64..300_000, shift in 12u32..17, size in 0u32..300_000) {
            let page = 1u64 << shift;
            let rules = official().with_page_size(page);
            let mapped = rules.mapped_size(len);
            prop_assert_eq!(mapped % page, 0);
            prop_assert!(mapped >= len.max(1) && mapped < len.max(1) + page);
            let smaller = official().with_page_size(page / 2).mapped_size(len);
            prop_assert!(smaller <= mapped);
            let m = meta(4, 0, size, (0, 0));
            let d = data(0, &[], len as usize);
            let small = locate_in(&m, &d, recover().with_page_size(page / 2));
            let large = locate_in(&m, &d, recover().with_page_size(page));
            let beyond = |l: &Location| matches!(l.problem, Some(Problem::SizeBeyondFile { .. }));
            prop_assert!(beyond(&small) || !beyond(&large), "{:?} {:?}", small, large);
        }
    }

    #[test]
    fn greedy_keeps_records_before_the_first_bad_one() {
        let mut r = REGION.to_vec();
        assert_eq!(greedy_len(&r), r.len());
        r.extend_from_slice(&[5, b'x']); // key length past the end
        assert_eq!(greedy_len(&r), REGION.len());
        assert_eq!(greedy_len(&[0x80]), 0);
        assert_eq!(greedy_len(&[]), 0);
        // trailing zeros are empty keys: consumed, not an error
        let mut z = REGION.to_vec();
        z.extend_from_slice(&[0; 10]);
        assert_eq!(greedy_len(&z), z.len());
    }
}
