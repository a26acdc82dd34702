//! Reading a store for inspection: every record with its status, detection of encryption and wrong
//! keys, and carving of stale records after the data region.
//!
//! Built on `mmkv_reader::raw::read_raw` (meta + data file without CRC enforcement, region decrypted
//! when a key is given) and `mmkv_reader::records` (the record grammar). Nothing here parses records
//! itself.
//!
//! # Record statuses (`--history`)
//! Records are visited in file order. For a record of key K:
//! - a **deletion marker** (empty stored value) is `removed`;
//! - a value is judged by the **next** record of the same key: a later value makes it `superseded`,
//!   a later deletion marker makes it `removed` (so `set A, remove, set B` gives `removed, removed,
//!   live`, and `set A, set B, remove` gives `superseded, removed, removed`);
//! - the last value of K is `expired` when key expiration is on and its expire time is non-zero and
//!   `<= now`, else `live`;
//! - records carved after the region (`--carve`) are `stale`.
//!
//! The `live` records are exactly the entries the official loader keeps (last write wins, an empty
//! value deletes, expired keys are invisible). Records with an empty key are skipped by the official
//! loader (a 0 byte with no value part) and by `mmkv_reader::records`; they do not appear.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mmkv_reader::locate::{greedy_len, Rules, Source};
use mmkv_reader::meta::MetaInfo;
use mmkv_reader::raw::{read_store, RawOptions, RawStore};
use mmkv_reader::records::{holder_len, records, records_at, split_expire, Record};
use mmkv_reader::CryptKey;
use serde::Serialize;

use crate::error::{Error, Result};

/// How to read a store: decryption and the official loader's recovery strategy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CryptOpts {
    /// The crypt key bytes (`--crypt-key` / `--crypt-key-hex`), `None` for plaintext.
    pub key: Option<Vec<u8>>,
    /// AES-256 (`--aes256`).
    pub aes256: bool,
    /// Read what the official `OnErrorRecover` strategy reads (`--recover`) instead of the
    /// official default (`OnErrorDiscard`).
    pub recover: bool,
}

impl CryptOpts {
    /// The reader options these stand for.
    pub fn raw_options(&self) -> RawOptions {
        RawOptions {
            key: self
                .key
                .as_ref()
                .and_then(|k| CryptKey::new(k, self.aes256)),
            rules: self.rules(),
            ..RawOptions::default()
        }
    }

    /// The loader's rules (official default, or `OnErrorRecover` with `--recover`).
    pub fn rules(&self) -> Rules {
        if self.recover {
            Rules::recover()
        } else {
            Rules::official()
        }
    }
}

/// The status of a record in `--history`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The latest write of a key that is present now.
    Live,
    /// A value followed by a later value of the same key.
    Superseded,
    /// A deletion marker, or a value whose next record of the same key is a deletion marker.
    Removed,
    /// The latest write of a key whose expire time has passed.
    Expired,
    /// A record carved from the bytes after the data region (left from before a write-back).
    Stale,
}

impl Status {
    /// The status as JSON and the tables spell it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Live => "live",
            Status::Superseded => "superseded",
            Status::Removed => "removed",
            Status::Expired => "expired",
            Status::Stale => "stale",
        }
    }
}

/// One record of the store, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordInfo {
    /// Position in file order (0-based; carved records continue the numbering).
    pub index: usize,
    /// Byte offset of the record's first byte in the DATA FILE (region offset + 4).
    pub offset: usize,
    /// The key bytes.
    pub key: Vec<u8>,
    /// The value payload: the stored value without the expire suffix (empty for a deletion marker).
    pub payload: Vec<u8>,
    /// The expire time when key expiration is on and the time is non-zero.
    pub expire_at: Option<u32>,
    /// The stored value is empty: a deletion marker.
    pub deletion: bool,
    /// What happened to this record.
    pub status: Status,
}

/// Counts of records by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Live entries.
    pub live: usize,
    /// Superseded values.
    pub superseded: usize,
    /// Deletion markers and removed values.
    pub removed: usize,
    /// Expired entries.
    pub expired: usize,
}

/// A store read for inspection.
#[derive(Debug)]
pub struct Analysis {
    /// The data file.
    pub path: PathBuf,
    /// The raw store (meta, whole data file, region, CRC check).
    pub raw: RawStore,
    /// Length of the item-size holder (0 for an empty region).
    pub holder_len: usize,
    /// Every record of the region in file order, statuses assigned.
    pub records: Vec<RecordInfo>,
    /// The crypt options the store was read with.
    pub crypt: CryptOpts,
    /// The time expiration was evaluated at (epoch seconds).
    pub now: u32,
}

/// Where parsing a region stopped early.
struct ParseFail {
    position: usize,
    detail: String,
}

/// Parses a whole region; it must be consumed to its last byte.
fn parse_region(region: &[u8]) -> std::result::Result<(usize, Vec<Record<'_>>), ParseFail> {
    if region.is_empty() {
        return Ok((0, Vec::new()));
    }
    let holder = holder_len(region).map_err(|e| ParseFail {
        position: 0,
        detail: format!("item-size holder: {e}"),
    })?;
    let mut it = records(region);
    let mut out = Vec::new();
    for r in it.by_ref() {
        match r {
            Ok(rec) => out.push(rec),
            Err(e) => {
                return Err(ParseFail {
                    position: it.position(),
                    detail: e.to_string(),
                })
            }
        }
    }
    if it.position() != region.len() {
        return Err(ParseFail {
            position: it.position(),
            detail: format!(
                "records stop at region offset {} of {}",
                it.position(),
                region.len()
            ),
        });
    }
    Ok((holder, out))
}

/// Splits a stored value into payload and expire time (`None` for 0 = never).
fn split_value(value: &[u8], key_expire: bool) -> (Vec<u8>, Option<u32>) {
    if key_expire {
        if let Some((payload, t)) = split_expire(value) {
            return (payload.to_vec(), (t != 0).then_some(t));
        }
    }
    (value.to_vec(), None)
}

/// Assigns statuses to region records in file order (see the module docs).
fn assign_statuses(recs: &mut [RecordInfo], now: u32) {
    // For each key: is its next record (later in the file) a value (true) or a marker (false)?
    let mut next_is_value: HashMap<Vec<u8>, bool> = HashMap::new();
    for r in recs.iter_mut().rev() {
        r.status = if r.deletion {
            Status::Removed
        } else {
            match next_is_value.get(&r.key) {
                Some(true) => Status::Superseded,
                Some(false) => Status::Removed,
                None => match r.expire_at {
                    Some(t) if t <= now => Status::Expired,
                    _ => Status::Live,
                },
            }
        };
        next_is_value.insert(r.key.clone(), !r.deletion);
    }
}

/// When the official loader (default strategy) discards the store's content: why, in one line.
pub fn discard_message(raw: &RawStore) -> Option<String> {
    if raw.location.source != Source::Discarded {
        return None;
    }
    let problem = raw
        .location
        .problem
        .map(|p| p.to_string())
        .unwrap_or_default();
    let meta = match raw.meta_len {
        None => "; no meta file".to_string(),
        Some(n) if raw.meta_short() => format!("; meta file short ({n} bytes), read zero-filled"),
        Some(_) => String::new(),
    };
    Some(format!(
        "the official library (default strategy) discards this store's content and opens it empty ({problem}{meta}); --recover reads what OnErrorRecover reads"
    ))
}

/// Reads the raw store with `crypt`'s key and strategy. A missing meta file without
/// `--recover` is [`Error::MetaMissing`].
pub fn read(path: &Path, crypt: &CryptOpts) -> Result<RawStore> {
    read_store(path, &crypt.raw_options()).map_err(|e| match e {
        mmkv_reader::Error::MetaMissing { path: meta } => Error::MetaMissing {
            path: path.to_path_buf(),
            meta,
        },
        e => Error::reader(path, e),
    })
}

/// The meta rules encryption out: an encrypted store's meta of version >= 2 holds the random
/// IV the official library generated, so an all-zero IV there means "not encrypted".
pub fn meta_rules_out_encryption(meta: &MetaInfo) -> bool {
    meta.has_iv() && meta.iv == [0u8; 16]
}

/// Whether a region parses as records to its last byte.
fn parses(region: &[u8]) -> bool {
    parse_region(region).is_ok()
}

impl Analysis {
    /// Reads `path` (meta `PATH.crc`) with `crypt`, evaluating expiration at `now`.
    ///
    /// Errors: reader errors (missing/short meta, actual size beyond the file, I/O);
    /// [`Error::LooksEncrypted`] (no key, region does not parse); [`Error::WrongKey`] (key given,
    /// decrypted region does not parse; with a hint when the other AES flag or no key works);
    /// [`Error::ZeroRecords`] (no record although the region is larger than its holder).
    pub fn open(path: &Path, crypt: &CryptOpts, now: u32) -> Result<Analysis> {
        let raw = read(path, crypt)?;
        if let Some(detail) = discard_message(&raw) {
            return Err(Error::Discarded {
                path: path.to_path_buf(),
                detail,
            });
        }
        let key_expire = raw.meta.key_expire();
        // A recovered region is decoded greedily, as `OnErrorRecover` does: the records before
        // the first one that does not parse.
        let parsed = if raw.location.greedy() {
            &raw.region[..greedy_len(&raw.region)]
        } else {
            &raw.region[..]
        };
        let (holder, recs) = match parse_region(parsed) {
            Ok(p) => p,
            Err(fail) => return Err(classify_failure(path, crypt, &raw, fail)),
        };
        if !raw.location.greedy() && recs.is_empty() && raw.region.len() > holder {
            return Err(Error::ZeroRecords {
                path: path.to_path_buf(),
                region_len: raw.region.len(),
                holder_len: holder,
            });
        }
        let mut records: Vec<RecordInfo> = recs
            .iter()
            .enumerate()
            .map(|(index, r)| {
                let (payload, expire_at) = split_value(r.value, key_expire);
                RecordInfo {
                    index,
                    offset: raw.region_offset + r.offset,
                    key: r.key.to_vec(),
                    payload,
                    expire_at,
                    deletion: r.value.is_empty(),
                    status: Status::Live,
                }
            })
            .collect();
        assign_statuses(&mut records, now);
        Ok(Analysis {
            path: path.to_path_buf(),
            raw,
            holder_len: holder,
            records,
            crypt: crypt.clone(),
            now,
        })
    }

    /// The meta info.
    pub fn meta(&self) -> &MetaInfo {
        &self.raw.meta
    }

    /// The live records, sorted by key bytes.
    pub fn live(&self) -> Vec<&RecordInfo> {
        let mut v: Vec<&RecordInfo> = self
            .records
            .iter()
            .filter(|r| r.status == Status::Live)
            .collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    }

    /// The live record of `key`, if any.
    pub fn live_value(&self, key: &[u8]) -> Option<&RecordInfo> {
        self.records
            .iter()
            .rev()
            .find(|r| r.key == key && r.status == Status::Live)
    }

    /// Counts of the region's records by status.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for r in &self.records {
            match r.status {
                Status::Live => c.live += 1,
                Status::Superseded => c.superseded += 1,
                Status::Removed => c.removed += 1,
                Status::Expired => c.expired += 1,
                Status::Stale => {}
            }
        }
        c
    }

    /// Walks the bytes after the data region (left over from before a write-back) and returns the
    /// records that parse there, marked [`Status::Stale`], numbered after the region's records.
    /// See [`Analysis::carve_counted`].
    pub fn carve(&self) -> Vec<RecordInfo> {
        self.carve_counted().records
    }

    /// [`Analysis::carve`], with the number of candidates rejected for implausible keys.
    ///
    /// Encrypted stores: the whole data file after byte 4 is decrypted as one CFB stream with the
    /// current key and IV. CFB is self-synchronising, so stale ciphertext written with the same key
    /// (any IV) decrypts correctly except for the first 16 bytes after the region end.
    ///
    /// The bytes there usually start in the middle of an old record. A candidate is a record
    /// parsed by `mmkv_reader::records::records_at` at any byte offset whose key is plausible
    /// ([`KeyRules`]: bounded length, only characters of the alphabet observed in this store's
    /// keys) and whose value is empty (a deletion marker) or has the shape of an MMKV value: one
    /// varint, 4 or 8 bytes, or a length-delimited body (with key expiration on, judged after the
    /// 4-byte suffix). Candidates are chosen to cover the most bytes without overlapping
    /// (weighted interval scheduling), so true record chains win over accidental matches.
    pub fn carve_counted(&self) -> Carved {
        let start = self.raw.region_offset;
        let Some(after) = self.raw.file.get(start..) else {
            return Carved::default();
        };
        let mut stream = after.to_vec();
        if let Some(key) = &self.crypt.key {
            let iv = mmkv_reader::raw::store_iv(&self.raw.meta, key, self.crypt.aes256);
            mmkv_reader::crypto::decrypt_cfb(key, self.crypt.aes256, &iv, &mut stream);
        }
        let region_end = self.raw.region.len().min(stream.len());
        let key_expire = self.raw.meta.key_expire();
        let rules = KeyRules::observed(self.records.iter().map(|r| r.key.as_slice()));
        let (found, rejected) = carve_stream(&stream, region_end, key_expire, &rules);
        let first_index = self.records.len();
        let records = found
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let (payload, expire_at) = split_value(r.value, key_expire);
                RecordInfo {
                    index: first_index + i,
                    offset: start + r.offset,
                    key: r.key.to_vec(),
                    payload,
                    expire_at,
                    deletion: r.value.is_empty(),
                    status: Status::Stale,
                }
            })
            .collect();
        Carved { records, rejected }
    }
}

/// What carving found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Carved {
    /// The stale records, in file order.
    pub records: Vec<RecordInfo>,
    /// Candidate records (printable UTF-8 key, value shaped like an MMKV value) rejected by
    /// [`KeyRules`].
    pub rejected: usize,
}

/// Longest key a carved record may have when the store's own keys are shorter.
pub const MAX_CARVED_KEY: usize = 256;

/// Characters every carved key may use: letters and digits (any script) and `_ - . : /`, the
/// usual characters of identifiers and dotted or namespaced keys.
fn base_key_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/')
}

/// What a carved record's key must look like: at most `max_len` bytes, only characters of the
/// alphabet observed in the store's own keys plus [`base_key_char`], no control characters, no
/// leading, trailing or doubled whitespace, and a key with whitespace no longer than the
/// longest such key of the store (text carved out of an old string value is long and spaced).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRules {
    /// Longest key accepted: [`MAX_CARVED_KEY`], or the store's longest key when longer.
    pub max_len: usize,
    /// Longest key with whitespace accepted: the store's longest key with whitespace (0: none).
    pub max_spaced_len: usize,
    /// Characters seen in the store's keys.
    pub alphabet: std::collections::BTreeSet<char>,
}

impl KeyRules {
    /// The rules for a store whose region holds `keys`.
    pub fn observed<'a>(keys: impl Iterator<Item = &'a [u8]>) -> KeyRules {
        let mut alphabet = std::collections::BTreeSet::new();
        let (mut max_len, mut max_spaced_len) = (MAX_CARVED_KEY, 0);
        for k in keys {
            max_len = max_len.max(k.len());
            if let Ok(s) = std::str::from_utf8(k) {
                alphabet.extend(s.chars().filter(|c| !c.is_control()));
                if s.contains(char::is_whitespace) {
                    max_spaced_len = max_spaced_len.max(k.len());
                }
            }
        }
        KeyRules {
            max_len,
            max_spaced_len,
            alphabet,
        }
    }

    /// Whether `key` is plausible.
    pub fn accepts(&self, key: &[u8]) -> bool {
        if key.is_empty() || key.len() > self.max_len {
            return false;
        }
        let Ok(s) = std::str::from_utf8(key) else {
            return false;
        };
        if s.contains(char::is_whitespace)
            && (key.len() > self.max_spaced_len
                || s.starts_with(char::is_whitespace)
                || s.ends_with(char::is_whitespace)
                || s.contains("  "))
        {
            return false;
        }
        s.chars()
            .all(|c| !c.is_control() && (base_key_char(c) || self.alphabet.contains(&c)))
    }
}

/// Printable UTF-8 of at most 4 KiB: what any candidate key is before [`KeyRules`] judge it.
fn printable_key(key: &[u8]) -> bool {
    !key.is_empty()
        && key.len() <= 4096
        && std::str::from_utf8(key).is_ok_and(|s| s.chars().all(|c| !c.is_control()))
}

/// The value of a candidate record has an MMKV value's shape.
fn plausible_value(rec: &Record<'_>, key_expire: bool) -> bool {
    if rec.value.is_empty() {
        return true;
    }
    if key_expire && rec.value.len() < 4 {
        return false;
    }
    let (payload, _) = split_value(rec.value, key_expire);
    crate::infer::is_typed(&payload)
}

/// Picks non-overlapping plausible records in `stream[from..]` covering the most bytes.
/// Record offsets are relative to `stream`.
/// Also returns how many candidates [`KeyRules`] rejected.
fn carve_stream<'a>(
    stream: &'a [u8],
    from: usize,
    key_expire: bool,
    rules: &KeyRules,
) -> (Vec<Record<'a>>, usize) {
    let n = stream.len();
    if from >= n {
        return (Vec::new(), 0);
    }
    let mut rejected = 0usize;
    // best[i]: most bytes coverable in stream[from + i..]; end[i]: end of the record chosen at
    // from + i (0: none). Records are re-parsed when the choice is walked.
    let len = n - from;
    let mut best = vec![0usize; len + 1];
    let mut end_at = vec![0usize; len + 1];
    // A candidate at p: a record with a printable key and an MMKV-shaped value; `Err` when
    // only the key rules turn it down.
    let candidate = |p: usize| -> Option<std::result::Result<(Record<'a>, usize), ()>> {
        if stream[p] == 0 {
            return None; // an empty key: never a carved record
        }
        let mut it = records_at(&stream[p..], p);
        match it.next() {
            Some(Ok(rec))
                if it.position() > p
                    && printable_key(rec.key)
                    && plausible_value(&rec, key_expire) =>
            {
                Some(if rules.accepts(rec.key) {
                    Ok((rec, it.position()))
                } else {
                    Err(())
                })
            }
            _ => None,
        }
    };
    let probe = |p: usize| candidate(p).and_then(std::result::Result::ok);
    for p in (from..n).rev() {
        let i = p - from;
        best[i] = best[i + 1];
        let found = match candidate(p) {
            Some(Err(())) => {
                rejected += 1;
                None
            }
            other => other.and_then(std::result::Result::ok),
        };
        if let Some((_, end)) = found {
            let cover = (end - p) + best[end - from];
            if cover > best[i] {
                best[i] = cover;
                end_at[i] = end;
            }
        }
    }
    let mut out = Vec::new();
    let mut p = from;
    while p < n {
        let i = p - from;
        if end_at[i] != 0 && best[i] != best[i + 1] {
            if let Some((rec, end)) = probe(p) {
                out.push(rec);
                p = end;
                continue;
            }
        }
        p += 1;
    }
    (out, rejected)
}

/// Turns a region that does not parse into the right error: looks encrypted (no key) or wrong key
/// (with a hint when the other AES flag, or no key at all, makes the region parse).
fn classify_failure(path: &Path, crypt: &CryptOpts, raw: &RawStore, fail: ParseFail) -> Error {
    let detail = format!(
        "stopped at region offset {}: {}",
        fail.position, fail.detail
    );
    if crypt.key.is_none() && meta_rules_out_encryption(&raw.meta) {
        return Error::Unparsable {
            path: path.to_path_buf(),
            region_len: raw.region.len(),
            version: raw.meta.version,
            detail,
        };
    }
    if crypt.key.is_none() {
        return Error::LooksEncrypted {
            path: path.to_path_buf(),
            region_len: raw.region.len(),
            detail,
        };
    }
    let mut hint = String::new();
    let other = CryptOpts {
        aes256: !crypt.aes256,
        ..crypt.clone()
    };
    if read(path, &other).is_ok_and(|r| parses(&r.region) && !r.region.is_empty()) {
        hint = if other.aes256 {
            "; the key works as AES-256: pass --aes256".to_string()
        } else {
            "; the key works as AES-128: drop --aes256".to_string()
        };
    } else if read(
        path,
        &CryptOpts {
            recover: crypt.recover,
            ..CryptOpts::default()
        },
    )
    .is_ok_and(|r| parses(&r.region))
    {
        hint =
            "; the store parses without a key: it is not encrypted, drop --crypt-key".to_string();
    } else if !crypt.aes256 {
        hint = "; if the store is AES-256, try --aes256".to_string();
    }
    Error::WrongKey {
        path: path.to_path_buf(),
        detail,
        hint,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: &str, value: &[u8], expire: Option<u32>) -> RecordInfo {
        RecordInfo {
            index: 0,
            offset: 0,
            key: key.as_bytes().to_vec(),
            payload: value.to_vec(),
            expire_at: expire,
            deletion: value.is_empty(),
            status: Status::Stale,
        }
    }

    fn statuses(recs: &mut [RecordInfo], now: u32) -> Vec<&'static str> {
        assign_statuses(recs, now);
        recs.iter().map(|r| r.status.name()).collect()
    }

    #[test]
    fn next_event_precedence() {
        let mut v = vec![
            rec("a", b"\x01", None),
            rec("a", b"", None),
            rec("a", b"\x02", None),
        ];
        assert_eq!(statuses(&mut v, 0), ["removed", "removed", "live"]);
        let mut v = vec![
            rec("a", b"\x01", None),
            rec("a", b"\x02", None),
            rec("a", b"", None),
        ];
        assert_eq!(statuses(&mut v, 0), ["superseded", "removed", "removed"]);
        let mut v = vec![
            rec("a", b"\x01", None),
            rec("b", b"\x01", Some(10)),
            rec("c", b"\x01", Some(11)),
            rec("a", b"\x03", Some(5)),
        ];
        assert_eq!(
            statuses(&mut v, 10),
            ["superseded", "expired", "live", "expired"]
        );
    }

    #[test]
    fn carving_prefers_true_chains() {
        // Stream: 3 region bytes, then the tail of an old string value, then two old records.
        let mut s = vec![0u8, 0, 0];
        s.extend_from_slice(b"tail of text");
        s.extend_from_slice(b"\x03key\x02\x01x");
        s.extend_from_slice(b"\x02k2\x00");
        s.extend_from_slice(&[0u8; 16]);
        let rules = KeyRules::observed(std::iter::empty());
        let (got, _) = carve_stream(&s, 3, false, &rules);
        let keys: Vec<&[u8]> = got.iter().map(|r| r.key).collect();
        assert!(
            keys.ends_with(&[b"key".as_slice(), b"k2".as_slice()]),
            "{keys:?}"
        );
        let last = got.last().unwrap();
        assert_eq!(last.value, b"");
        assert_eq!(last.offset, 3 + 12 + 7);
    }
}
