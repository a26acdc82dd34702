//! Carving: records left in the bytes after the data region (from before a write-back), marked
//! stale.

use mmkv_reader::records::{records_at, Record};

use super::status::split_value;
use super::{Analysis, RecordInfo, Status};

impl Analysis {
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
        if let Some(key) = self.crypt.crypt_key() {
            key.decrypt(&key.iv_for(&self.raw.meta), &mut stream);
        }
        let region_end = self.raw.region().len().min(stream.len());
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

#[cfg(test)]
mod tests {
    use super::*;

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
