//! The recognisers: for each row of [`crate::judge::exceptions::TABLE`], the precise check
//! that tells its upstream bug from any other difference (the differential runner and the
//! fault suite call them; nothing else accepts a difference).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use mmkv_sys::ErrorStrategy;

use crate::error::{Error, Result};
use crate::judge::compare::{capture_reader, judge_reads, Compared, Mismatch, OfficialAnswers};
use crate::judge::exceptions::{accepted, Difference, Exception, Scope};
use crate::sides::reads::{open_store, Reads};
use crate::sides::view::ReaderFactory;
use crate::vocab::kind::StoreKind;
use crate::vocab::{le32, STORE_ID};

/// Values longer than this stay encrypted in the file and are decrypted lazily from a saved
/// AES state (`MediumBufferSize()`, v1.2.0+; [`Difference::CryptOverlongLength`]).
pub const LAZY_DECRYPT_MIN_LEN: usize = 257;

/// The keys in which the official and the reader's key sets differ, when the table lists the
/// v1.2.0–v1.2.2 encrypted loader bug for `scope` and every such key's last record in
/// `region` (the decrypted data region the reader read; records up to the first that does not
/// parse) is one that loader misjudges ([`crypt_loader_v1_2_0_explains`]). `None` otherwise
/// (also when the sets agree).
pub fn crypt_loader_misjudged(
    scope: &Scope,
    region: &[u8],
    official: &BTreeSet<Vec<u8>>,
    reader: &BTreeSet<Vec<u8>>,
) -> Option<BTreeSet<Vec<u8>>> {
    accepted(Difference::OfficialMisloadsInlineRecords, scope)?;
    let differing: BTreeSet<Vec<u8>> = official.symmetric_difference(reader).cloned().collect();
    if differing.is_empty() {
        return None;
    }
    let mut last = BTreeMap::new();
    for rec in mmkv_reader::records::records(region).map_while(|r| r.ok()) {
        last.insert(rec.key, rec.value);
    }
    differing
        .iter()
        .all(|k| {
            crypt_loader_v1_2_0_explains(official.contains(k), last.get(k.as_slice()).copied())
        })
        .then_some(differing)
}

/// Largest value `KeyValueHolderCrypt` holds inline in v1.2.0–v1.2.2 (29-byte packed struct:
/// type, size byte, then the value).
const CRYPT_INLINE_MAX: usize = 27;

/// The value bytes that the inline holder's `valueSize` field overlaps in v1.2.0–v1.2.2
/// (packed union: `pbKeyValueSize` u8, `keySize` u16, then `valueSize` u32, against
/// `paddedSize` u8 and the value from union byte 1).
const CRYPT_VALUE_SIZE_BYTES: std::ops::Range<usize> = 2..6;

/// What the encrypted loader of v1.2.0–v1.2.2 (`MiniPBCoder::decodeOneMap` on an
/// `MMKVMapCrypt`) decides for a key whose last record in the file stores `value`: it keeps
/// the key when the holder's `valueSize` is non-zero. `Some(true)`: kept; `Some(false)`:
/// dropped; `None`: decided by stale bytes (either can happen).
///
/// Values of at least 256 bytes are held by offset with `valueSize` set; 28..=255 bytes go to
/// the heap, where `valueSize` overlaps the size's high byte and a heap pointer's low bytes
/// (not zero); up to 27 bytes are held inline, where `valueSize` is value bytes 2..6 and,
/// past the end of a shorter value, bytes the temporary holder never initialised.
pub fn crypt_loader_v1_2_0_keeps(value: &[u8]) -> Option<bool> {
    if value.len() > CRYPT_INLINE_MAX {
        return Some(true);
    }
    let known = value
        .get(
            CRYPT_VALUE_SIZE_BYTES.start.min(value.len())
                ..CRYPT_VALUE_SIZE_BYTES.end.min(value.len()),
        )
        .unwrap_or(&[]);
    if known.iter().any(|&b| b != 0) {
        Some(true)
    } else if value.len() >= CRYPT_VALUE_SIZE_BYTES.end {
        Some(false)
    } else {
        None
    }
}

/// True when the v1.2.0–v1.2.2 encrypted loader explains a key on which the official instance
/// (`official_has`) and the files disagree, given the key's last record in the files
/// (`last_value`, `None` when the files have no record of it; an empty value is a deletion).
/// A key listed by the official but not by the files must end in a deletion the loader can
/// keep; a key in the files the official lacks must end in a value it can drop.
pub fn crypt_loader_v1_2_0_explains(official_has: bool, last_value: Option<&[u8]>) -> bool {
    match last_value {
        None => false,
        Some(v) if official_has => v.is_empty() && crypt_loader_v1_2_0_keeps(v) != Some(false),
        Some(v) => !v.is_empty() && crypt_loader_v1_2_0_keeps(v) != Some(true),
    }
}

/// The item-size holder v1.2.0+ write at the start of the data region in a full write-back
/// (varint of 0x00ffffff).
pub const ITEM_SIZE_HOLDER: [u8; 4] = [0xff, 0xff, 0xff, 0x07];

/// True when the decrypted data region `region` starts as v1.2.0's full write-back leaves a
/// region whose records began `old_holder_len` (1..=3) bytes in: the 4-byte holder, then the
/// first record whose first `4 - old_holder_len` bytes are what the write-back read back from
/// the holder it had just written over them.
///
/// `old_stream` is the first key-stream block of the file's IV before the write-back (`None`:
/// the store was plaintext then) and `new_stream` the one after it (all zero when it is
/// plaintext now). A plaintext map is moved with `memmove` (and encrypted afterwards by a
/// `reKey` to a key): the bytes are the holder's own. An encrypted map's holder is encrypted
/// with the new stream before the record is decrypted with the old one: the bytes are the
/// holder XOR both streams (AES-CFB, first block).
pub fn writeback_v1_2_0_clobbered(
    old_holder_len: usize,
    region: &[u8],
    old_stream: Option<&[u8; 16]>,
    new_stream: &[u8; 16],
) -> bool {
    let h = ITEM_SIZE_HOLDER.len();
    if !(1..h).contains(&old_holder_len) || !region.starts_with(&ITEM_SIZE_HOLDER) {
        return false;
    }
    let expected: Vec<u8> = (old_holder_len..h)
        .map(|i| match old_stream {
            None => ITEM_SIZE_HOLDER[i],
            Some(old) => ITEM_SIZE_HOLDER[i] ^ new_stream[i] ^ old[i],
        })
        .collect();
    region[h..].starts_with(&expected)
}

/// The bytes v1.2.0's write-back leaves at the start of a plaintext region's first record
/// when the region's records began `old_holder_len` (1..=3) bytes in (the holder's tail).
pub fn writeback_v1_2_0_clobber(old_holder_len: usize) -> Option<&'static [u8]> {
    (1..ITEM_SIZE_HOLDER.len())
        .contains(&old_holder_len)
        .then(|| &ITEM_SIZE_HOLDER[old_holder_len..])
}

/// `region` with the v1.2.0 write-back damage undone: every record that starts with
/// `clobbered` gets `original` (the first record's bytes the holder overwrote) back. Later
/// writes of the same key reuse the damaged key bytes (v1.2.0 appends an overwritten key by
/// copying its encoded key from the file), so the damage can sit on any record. `None` when
/// no record starts with `clobbered`, the lengths differ, or the repaired region still does
/// not parse as records.
pub fn repair_v1_2_0_clobber(region: &[u8], clobbered: &[u8], original: &[u8]) -> Option<Vec<u8>> {
    if clobbered.is_empty() || clobbered.len() != original.len() {
        return None;
    }
    let mut out = region.to_vec();
    let mut pos = mmkv_reader::records::holder_len(&out).ok()?;
    let mut repaired = 0;
    while pos < out.len() {
        if out[pos..].starts_with(clobbered) {
            out[pos..pos + original.len()].copy_from_slice(original);
            repaired += 1;
        }
        let mut record = mmkv_reader::records::records_at(&out[pos..], pos);
        record.next()?.ok()?;
        pos = record.position();
    }
    (repaired > 0).then_some(out)
}

/// Copies the files of the store `STORE_ID` from `from` to `to` (created).
pub fn copy_store(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    for name in [STORE_ID.to_string(), format!("{STORE_ID}.crc")] {
        let src = from.join(&name);
        if src.exists() {
            std::fs::copy(&src, to.join(&name)).map_err(|e| Error::io(&src, e))?;
        }
    }
    Ok(())
}

/// Extends the files of store `id` in `dir` as the official library does when it opens them
/// (see [`Difference::ZeroFill`]) on pages of `page` bytes: a missing or short file grows
/// with zeros to the next page.
pub fn zero_fill_like_official(dir: &Path, id: &str, page: u64) -> Result<()> {
    let page = page.max(1);
    for name in [id.to_string(), format!("{id}.crc")] {
        let p = dir.join(name);
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&p)
            .map_err(|e| Error::io(&p, e))?;
        let len = f.metadata().map_err(|e| Error::io(&p, e))?.len();
        if len == 0 || len % page != 0 {
            f.set_len((len / page + 1) * page)
                .map_err(|e| Error::io(&p, e))?;
        }
    }
    Ok(())
}

fn meta_path(dir: &Path) -> PathBuf {
    mmkv_reader::meta_path(&dir.join(STORE_ID))
}

/// The raw version field of the store's meta file (0 when it is too short).
pub fn meta_version(dir: &Path) -> Option<u32> {
    let meta = std::fs::read(meta_path(dir)).ok()?;
    Some(le32(&meta, mmkv_reader::meta::OFF_VERSION))
}

/// Rewrites the meta file as v1.3.0-v2.3.0 do on open when its version is "specious"
/// ([`Difference::SpeciousMetaV6`]): version 3, flags 0.
pub fn rewrite_specious_meta(dir: &Path) -> Result<()> {
    use mmkv_reader::meta::{OFF_FLAGS, OFF_VERSION, VERSION_ACTUAL_SIZE};
    let p = meta_path(dir);
    let mut meta = std::fs::read(&p).map_err(|e| Error::io(&p, e))?;
    if let Some(v) = meta.get_mut(OFF_VERSION..OFF_VERSION + 4) {
        v.copy_from_slice(&VERSION_ACTUAL_SIZE.to_le_bytes());
    }
    if let Some(f) = meta.get_mut(OFF_FLAGS..OFF_FLAGS + 8) {
        f.fill(0);
    }
    std::fs::write(&p, meta).map_err(|e| Error::io(&p, e))
}

/// Bytes of the shortest varint encoding of `n`.
fn varint_width(n: usize) -> usize {
    let bits = usize::BITS - n.leading_zeros();
    (bits.max(1) as usize).div_ceil(7)
}

/// The data region of the store in `dir` (decrypted when encrypted) as the reader locates it
/// with `strategy` on pages of `page` bytes (`None` when it cannot be read).
fn located_region(
    dir: &Path,
    kind: StoreKind,
    strategy: ErrorStrategy,
    page: u64,
) -> Option<Vec<u8>> {
    located_region_at(&dir.join(STORE_ID), kind, strategy, page)
}

/// The data region of the store at `path` (a `kind` store; decrypted when encrypted) as the
/// reader locates it with `strategy` on pages of `page` bytes: the official rules, or the
/// recovering ones (`None` when it cannot be read).
pub fn located_region_at(
    path: &Path,
    kind: StoreKind,
    strategy: ErrorStrategy,
    page: u64,
) -> Option<Vec<u8>> {
    let rules = match strategy {
        ErrorStrategy::Discard => mmkv_reader::locate::Rules::official(),
        ErrorStrategy::Recover => mmkv_reader::locate::Rules::recover(),
    }
    .with_page_size(page);
    let opts = mmkv_reader::raw::RawOptions {
        key: kind
            .crypt_key()
            .and_then(|k| mmkv_reader::CryptKey::new(k, kind.aes256())),
        rules,
        ..mmkv_reader::raw::RawOptions::default()
    };
    let raw = mmkv_reader::raw::read_store(path, &opts).ok()?;
    Some(raw.region().to_vec())
}

/// The keys in which the official and the reader's key sets differ, when the exceptions
/// table lists the v1.2.0-v1.2.2 encrypted loader bug for `scope` and each such key's last
/// record in the located region (records up to the first that does not parse) is one that
/// loader misjudges ([`Difference::OfficialMisloadsInlineRecords`]); `None` otherwise.
pub fn crypt_loader_misjudged_in(
    scope: &Scope,
    dir: &Path,
    kind: StoreKind,
    strategy: ErrorStrategy,
    page: u64,
    official: &Reads,
    reader: &Reads,
) -> Option<BTreeSet<Vec<u8>>> {
    // The row first: the region is read only where it can explain something.
    accepted(Difference::OfficialMisloadsInlineRecords, scope)?;
    let keys = |r: &Reads| r.keys.keys().cloned().collect::<BTreeSet<Vec<u8>>>();
    let region = located_region(dir, kind, strategy, page)?;
    crypt_loader_misjudged(scope, &region, &keys(official), &keys(reader))
}

/// Keys of an encrypted store whose live record has a value of at least
/// [`LAZY_DECRYPT_MIN_LEN`] bytes behind a non-minimal key-length or value-length varint
/// ([`Difference::CryptOverlongLength`]), in the region the reader locates with `strategy`
/// (records up to the first that does not parse, as a recovered region is read).
pub fn overlong_lazy_keys(
    dir: &Path,
    kind: StoreKind,
    strategy: ErrorStrategy,
    page: u64,
) -> Vec<Vec<u8>> {
    let Some(region) = located_region(dir, kind, strategy, page) else {
        return Vec::new();
    };
    let region = region.as_slice();
    let at = |s: &[u8]| s.as_ptr() as usize - region.as_ptr() as usize;
    let mut live: BTreeMap<Vec<u8>, bool> = BTreeMap::new();
    for rec in mmkv_reader::records::records(region).map_while(|r| r.ok()) {
        let key_at = at(rec.key);
        let key_end = key_at + rec.key.len();
        let value_at = if rec.value.is_empty() {
            key_end + 1
        } else {
            at(rec.value)
        };
        let overlong = key_at - rec.offset > varint_width(rec.key.len())
            || value_at - key_end > varint_width(rec.value.len());
        live.insert(
            rec.key.to_vec(),
            overlong && rec.value.len() >= LAZY_DECRYPT_MIN_LEN,
        );
    }
    live.into_iter()
        .filter(|(_, o)| *o)
        .map(|(k, _)| k)
        .collect()
}

/// Keys of an expiring store whose live value is only the expire suffix (empty payload), as
/// the reader reads it with `strategy` (a recovered region has its own records).
/// The first of `dirs` that `Store` opens is read (the state, then its zero-filled copy).
pub fn empty_payload_keys(
    dirs: &[&Path],
    kind: StoreKind,
    strategy: ErrorStrategy,
    page: u64,
) -> Vec<Vec<u8>> {
    let Some(store) = dirs
        .iter()
        .find_map(|d| open_store(d, kind, strategy, page).ok())
    else {
        return Vec::new();
    };
    let snap = store.snapshot();
    if !snap.key_expire() {
        return Vec::new();
    }
    snap.iter()
        .filter(|(_, v)| v.is_empty())
        .map(|(k, _)| k.to_vec())
        .collect()
}

/// Keys of an expiring store whose live record's value is shorter than the 4-byte expire
/// suffix, in the region the reader locates with `strategy` (records up to the first that does
/// not parse; [`Difference::ShortExpireValue`]). Expiring as the meta's flag says, as the
/// official library takes it (a damaged flag turns a store without expiration into one);
/// the store's kind when `Store` refuses the files.
pub fn short_expire_value_keys(
    dir: &Path,
    kind: StoreKind,
    strategy: ErrorStrategy,
    page: u64,
) -> BTreeSet<Vec<u8>> {
    let expiring = open_store(dir, kind, strategy, page)
        .map_or(kind.key_expire(), |s| s.snapshot().key_expire());
    if !expiring {
        return BTreeSet::new();
    }
    let Some(region) = located_region(dir, kind, strategy, page) else {
        return BTreeSet::new();
    };
    let mut last = BTreeMap::new();
    for rec in mmkv_reader::records::records(&region).map_while(|r| r.ok()) {
        last.insert(rec.key, rec.value.len());
    }
    last.into_iter()
        .filter(|(_, len)| (1..4).contains(len))
        .map(|(k, _)| k.to_vec())
        .collect()
}

/// A store's files as a recogniser reads them (parsed here, not through the reader under
/// test): the data file and the key it is encrypted with, if any.
#[derive(Debug, Clone, Copy)]
pub struct StoreFiles<'a> {
    /// The data file (the meta file is `<path>.crc`).
    pub path: &'a Path,
    /// The encryption key (`None`: plaintext).
    pub crypt_key: Option<&'a [u8]>,
    /// AES-256 instead of AES-128.
    pub aes256: bool,
}

impl StoreFiles<'_> {
    /// The decrypted data region as the files are now and the first key-stream block of
    /// their IV (`None` without encryption).
    pub fn region(&self) -> Option<(Vec<u8>, Option<[u8; 16]>)> {
        let key = self
            .crypt_key
            .and_then(|k| mmkv_reader::CryptKey::new(k, self.aes256));
        let raw = mmkv_reader::raw::read_raw(self.path, key.clone()).ok()?;
        let stream = key.map(|k| {
            let mut stream = [0u8; 16];
            k.decrypt(&k.iv_for(&raw.meta), &mut stream);
            stream
        });
        Some((raw.region().to_vec(), stream))
    }
}

/// The start of the data region as one version left it for the next (what v1.2.0's
/// write-back over a v1.1.x file damages).
#[derive(Debug, Clone)]
pub struct RegionStart {
    /// Length of the item-size holder.
    holder_len: usize,
    /// The first key-stream block of the file's IV (`None`: plaintext).
    stream: Option<[u8; 16]>,
    /// The region's bytes from the holder's end to byte 4 (the first record's start).
    first: Vec<u8>,
}

impl RegionStart {
    /// The start of the region as `files` are now.
    pub fn of(files: &StoreFiles<'_>) -> Option<RegionStart> {
        let (region, stream) = files.region()?;
        let holder_len = mmkv_reader::records::holder_len(&region).ok()?;
        let first = region
            .get(holder_len..ITEM_SIZE_HOLDER.len())
            .unwrap_or_default()
            .to_vec();
        Some(RegionStart {
            holder_len,
            stream,
            first,
        })
    }
}

/// The row of v1.2.0's write-back over a v1.1.x file, when it covers `scope` and `files`
/// show exactly its damage over the region `old` the previous version left: the region
/// starts with the holder and the damaged first record ([`writeback_v1_2_0_clobbered`]), or
/// (a plaintext map) undoing the damage wherever a record carries it makes the files hold
/// exactly `live_keys`, the official instance's keys before it reloaded them.
pub fn writeback_clobbered(
    scope: &Scope,
    old: Option<&RegionStart>,
    files: &StoreFiles<'_>,
    live_keys: Option<&BTreeSet<Vec<u8>>>,
) -> Option<&'static Exception> {
    let exception = accepted(Difference::OfficialWriteBackClobbersFirstRecord, scope)?;
    let old = old?;
    let (region, new_stream) = files.region()?;
    if writeback_v1_2_0_clobbered(
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
    let clobber = writeback_v1_2_0_clobber(old.holder_len)?;
    let repaired = repair_v1_2_0_clobber(&region, clobber, &old.first)?;
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

/// The row of the v1.2.0-v1.2.2 encrypted loader and the keys in which `official_keys` and
/// `reader_keys` differ, when that row covers `scope` and every such key's last record in
/// `files` is one that loader can misjudge ([`crypt_loader_v1_2_0_explains`]).
pub fn inline_misload(
    scope: &Scope,
    files: &StoreFiles<'_>,
    official_keys: &BTreeSet<Vec<u8>>,
    reader_keys: &BTreeSet<Vec<u8>>,
) -> Option<(&'static Exception, BTreeSet<Vec<u8>>)> {
    let exception = accepted(Difference::OfficialMisloadsInlineRecords, scope)?;
    let (region, _) = files.region()?;
    let keys = crypt_loader_misjudged(scope, &region, official_keys, reader_keys)?;
    Some((exception, keys))
}

/// The row that explains an `isFileValid` of `false` on the store whose data file is `path`,
/// when the reader reads the store (`reader_reads`): the table lists
/// [`Difference::IsFileValidZeroHeader`] for `scope`, the data file's first 4 bytes (the
/// old-style size isFileValid sums the CRC over) are not the meta's actual size (v2.4.0+ leave
/// them 0, or as an older version last wrote them), and the check isFileValid makes over them
/// fails: the CRC of that many bytes differs from the meta's digest (or they exceed the file).
/// `None` otherwise.
pub fn file_valid_zero_header(
    scope: &Scope,
    path: &Path,
    official_valid: bool,
    reader_reads: bool,
) -> Option<&'static Exception> {
    let row = accepted(Difference::IsFileValidZeroHeader, scope)?;
    if official_valid || !reader_reads {
        return None;
    }
    let data = std::fs::read(path).ok()?;
    let meta = std::fs::read(mmkv_reader::meta_path(path)).ok()?;
    let meta = mmkv_reader::meta::MetaInfo::parse(&meta).ok()?;
    let header = le32(&data, 0);
    if data.len() < 4 || header == meta.actual_size {
        return None;
    }
    let checked = usize::try_from(header)
        .ok()
        .and_then(|n| data.get(4..4 + n));
    let fails = checked.is_none_or(|region| crc32fast::hash(region) != meta.crc_digest);
    fails.then_some(row)
}

/// What explains the differences of a read-only official instance of `files`, which
/// answered `answers` for `keys` and `getters` ([`WithoutExpiry::explains`]): the table lists
/// [`Difference::ReadOnlyWithoutExpiry`] for `scope` and the instance refused
/// `enableAutoKeyExpire` (`enabled` false) while the meta file has the key-expiration flag.
/// Then it ran without expiration (v2.3.0+ do not take it from the meta for a read-only
/// instance), reading each value with its expire-time suffix and no key as expired: `reader`
/// reads a copy of the files whose meta has that flag cleared, and each of the instance's
/// answers it reads alike is explained. `None` otherwise.
pub fn read_only_without_expiry(
    scope: &Scope,
    files: &StoreFiles<'_>,
    enabled: bool,
    reader: &dyn ReaderFactory,
    (keys, getters): (&[Vec<u8>], &[crate::vocab::value::ValueType]),
    answers: &OfficialAnswers,
) -> Option<WithoutExpiry> {
    let row = accepted(Difference::ReadOnlyWithoutExpiry, scope)?;
    if enabled {
        return None;
    }
    let meta_file = mmkv_reader::meta_path(files.path);
    let mut meta = std::fs::read(&meta_file).ok()?;
    if !mmkv_reader::meta::MetaInfo::parse(&meta).ok()?.key_expire() {
        return None;
    }
    let flags = mmkv_reader::meta::OFF_FLAGS;
    meta.get_mut(flags..flags + 8)?.fill(0);
    let copy = tempfile::Builder::new()
        .prefix("read-only-without-expiry-")
        .tempdir()
        .ok()?;
    let data = copy.path().join(files.path.file_name()?);
    std::fs::copy(files.path, &data).ok()?;
    std::fs::write(mmkv_reader::meta_path(&data), &meta).ok()?;
    let view = reader.open(&data, files.crypt_key, files.aes256).ok()?;
    let reads = capture_reader(view.as_ref(), keys, getters);
    let unexplained = judge_reads(answers, scope, &reads, getters)
        .into_iter()
        .map(|m| (m.key, m.what))
        .collect();
    Some(WithoutExpiry { row, unexplained })
}

/// A read-only instance that ran without expiration ([`read_only_without_expiry`]).
#[derive(Debug)]
pub struct WithoutExpiry {
    row: &'static Exception,
    /// What the reader read differently from the instance on the copy without the flag.
    unexplained: Vec<(Option<Vec<u8>>, Compared)>,
}

impl WithoutExpiry {
    /// The row, when the reader on the copy without the flag read what `m` compared as the
    /// instance answered it.
    pub fn explains(&self, m: &Mismatch) -> Option<&'static Exception> {
        let differs = (self.unexplained.iter()).any(|(k, what)| *k == m.key && *what == m.what);
        (!differs).then_some(self.row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crypt_loader_v1_2_0_mechanism() {
        let keeps = crypt_loader_v1_2_0_keeps;
        // Deletion records and short values: the field is (partly) stale bytes.
        assert_eq!(keeps(&[]), None);
        assert_eq!(keeps(&[1, 0]), None);
        assert_eq!(
            keeps(&[0, 0, 0, 0]),
            None,
            "f32 0.0: bytes 2..4 zero, 4..6 stale"
        );
        assert_eq!(
            keeps(&[0, 0, 0, 0x80]),
            Some(true),
            "a non-zero byte inside 2..6"
        );
        // Inline values of 6..=27 bytes: decided by bytes 2..6 alone.
        assert_eq!(keeps(&[0; 8]), Some(false), "f64 0.0 is dropped");
        assert_eq!(keeps(&[9, 9, 0, 0, 0, 0, 9, 9]), Some(false));
        assert_eq!(keeps(&[0, 0, 0, 0, 0, 1, 0, 0]), Some(true));
        assert_eq!(keeps(&[0; 27]), Some(false));
        // Heap (28..=255) and offset (256+) holders keep every value.
        assert_eq!(keeps(&[0; 28]), Some(true));
        assert_eq!(keeps(&[0; 300]), Some(true));

        let explains = crypt_loader_v1_2_0_explains;
        assert!(explains(true, Some(&[])), "a removed key listed again");
        assert!(!explains(true, None), "a key the files never had");
        assert!(!explains(true, Some(&[0; 8])), "the files have it too");
        assert!(explains(false, Some(&[0; 8])), "a live double 0.0 dropped");
        assert!(
            explains(false, Some(&[0, 0, 0])),
            "stale bytes may drop a short value"
        );
        assert!(
            !explains(false, Some(&[0, 0, 7, 0, 0, 0])),
            "byte 2 set: always kept"
        );
        assert!(
            !explains(false, Some(&[0; 28])),
            "held on the heap: always kept"
        );
        assert!(
            !explains(false, Some(&[])),
            "a deletion: the files do not have it"
        );
        assert!(!explains(false, None));
    }

    #[test]
    fn writeback_v1_2_0_fingerprint() {
        let zero = [0u8; 16];
        let f = |h: usize, region: &[u8]| writeback_v1_2_0_clobbered(h, region, None, &zero);
        // A 1-byte holder (v1.1.x, small store): the key length became ff ff 07.
        assert!(f(
            1,
            &[0xff, 0xff, 0xff, 0x07, 0xff, 0xff, 0x07, 0x01, 0x00]
        ));
        assert!(f(2, &[0xff, 0xff, 0xff, 0x07, 0xff, 0x07, 0x6b]));
        assert!(f(3, &[0xff, 0xff, 0xff, 0x07, 0x07]));
        // An intact first record, or a file that already had a 4-byte holder.
        assert!(!f(
            1,
            &[0xff, 0xff, 0xff, 0x07, 0x02, 0x6b, 0x30, 0x01, 0x00]
        ));
        assert!(!f(4, &[0xff, 0xff, 0xff, 0x07, 0xff, 0xff, 0x07]));
        assert!(!f(1, &[0x05, 0x02, 0x6b, 0x30, 0x01, 0x00]));
        // A plaintext map encrypted by a reKey afterwards: the holder's own bytes.
        let new = [0x22u8; 16];
        assert!(writeback_v1_2_0_clobbered(
            2,
            &[0xff, 0xff, 0xff, 0x07, 0xff, 0x07],
            None,
            &new
        ));
        // Encrypted map: the holder under the new stream, decrypted with the old one.
        let old = [0x11u8; 16];
        let region = [0xff, 0xff, 0xff, 0x07, 0xff ^ 0x33, 0x07 ^ 0x33];
        assert!(writeback_v1_2_0_clobbered(2, &region, Some(&old), &new));
        assert!(!writeback_v1_2_0_clobbered(2, &region, None, &new));
        assert!(!writeback_v1_2_0_clobbered(2, &region, Some(&zero), &zero));
    }

    #[test]
    fn writeback_v1_2_0_repair() {
        let clobber = writeback_v1_2_0_clobber(1).unwrap();
        assert_eq!(clobber, &[0xff, 0xff, 0x07]);
        assert_eq!(writeback_v1_2_0_clobber(4), None);
        let original = [0x02, 0x6b, 0x32];
        // holder, k3 = [1], then k2 = [8] with its key bytes damaged.
        let damaged = [
            0xff, 0xff, 0xff, 0x07, 0x02, 0x6b, 0x33, 0x01, 0x01, 0xff, 0xff, 0x07, 0x01, 0x08,
        ];
        let repaired = repair_v1_2_0_clobber(&damaged, clobber, &original).unwrap();
        assert_eq!(&repaired[9..12], &original);
        // Nothing damaged, or damage that the original bytes do not explain.
        assert_eq!(repair_v1_2_0_clobber(&repaired, clobber, &original), None);
        assert_eq!(
            repair_v1_2_0_clobber(&damaged, clobber, &[0x09, 0x6b, 0x32]),
            None
        );
    }
}
