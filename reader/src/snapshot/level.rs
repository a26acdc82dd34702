//! Levels: a hash table of key spans over immutable chunks of decrypted records, and how two
//! levels merge.

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::hash_table::{Entry as TEntry, HashTable};

use super::KeyHasher;
use crate::parse::Cursor;

/// A record in a level: its key's span in one of the level's chunks. The stored value is the
/// length-prefixed run right after the key (parsed on each read: keeping its span here too
/// would make the table 20 bytes per bucket instead of 12, a third of the data size for
/// 100-byte values); an empty value is a tombstone (a live value is never empty: an empty
/// value deletes).
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) chunk: u32,
    pub(super) key_off: u32,
    pub(super) key_len: u32,
}

#[derive(Clone)]
pub(super) struct Level {
    // Arc<Vec> rather than Arc<[u8]>: wrapping the loaded buffer costs no copy.
    pub(super) chunks: Vec<Arc<Vec<u8>>>,
    /// `chunks[0]` (an empty buffer when there are no chunks): the chunk of every entry of a
    /// freshly built level, reached without the `chunks` indirection and bounds check.
    first: Arc<Vec<u8>>,
    pub(super) table: HashTable<Entry>,
}

impl Level {
    pub(super) fn new(chunks: Vec<Arc<Vec<u8>>>, table: HashTable<Entry>) -> Level {
        let first = chunks.first().cloned().unwrap_or_default();
        Level {
            chunks,
            first,
            table,
        }
    }
    #[inline]
    pub(super) fn chunk(&self, i: u32) -> &[u8] {
        if i == 0 {
            &self.first
        } else {
            &self.chunks[i as usize]
        }
    }
    #[inline]
    pub(super) fn key(&self, e: &Entry) -> &[u8] {
        key_in(self.chunk(e.chunk), e)
    }
    /// The stored value of `e` (empty for a tombstone).
    #[inline]
    pub(super) fn val(&self, e: &Entry) -> &[u8] {
        value_after(self.chunk(e.chunk), e.key_off as usize + e.key_len as usize)
    }
    #[inline]
    pub(super) fn is_tombstone(&self, e: &Entry) -> bool {
        self.val(e).is_empty()
    }
    #[inline]
    pub(super) fn find(&self, h: u64, key: &[u8]) -> Option<&Entry> {
        self.table.find(h, |e| key_eq(self.key(e), key))
    }
    /// The stored value of `key` (hash `h`) in a level that has at most one chunk (so every
    /// entry points into `chunks[0]`): [`Level::find`] then [`Level::val`] without choosing a
    /// chunk per entry. Only for such levels: on others it would compare keys against the
    /// wrong buffer.
    #[inline]
    pub(super) fn find_in_first(&self, h: u64, key: &[u8]) -> Option<&[u8]> {
        let chunk: &[u8] = &self.first;
        // The key's end is checked to be before the chunk's end (a record's value length
        // follows its key), which also bounds the value's first byte below.
        let e = self.table.find(h, |e| {
            let end = e.key_off as usize + e.key_len as usize;
            end < chunk.len() && key_eq(key_in(chunk, e), key)
        })?;
        value_at(chunk, e.key_off as usize + e.key_len as usize)
    }
}

/// The key of `e` in its chunk `chunk`. Spans are added in `usize` (no wrap-around), so the
/// slice costs one bounds check.
#[inline(always)]
fn key_in<'a>(chunk: &'a [u8], e: &Entry) -> &'a [u8] {
    let start = e.key_off as usize;
    &chunk[start..start + e.key_len as usize]
}

/// `a == b` without a `memcmp` call (a call in the probe loop makes the whole lookup save and
/// restore registers): keys of 4 to 16 bytes (the usual MMKV key) by two overlapping word
/// loads, longer ones word by word, shorter ones byte by byte.
#[inline(always)]
fn key_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_ne_bytes(w)
    };
    let half = |s: &[u8], at: usize| -> u32 {
        let mut w = [0u8; 4];
        w.copy_from_slice(&s[at..at + 4]);
        u32::from_ne_bytes(w)
    };
    match n {
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        // Longer: 8-byte words, the last one overlapping (no call in the probe loop).
        _ => {
            let mut at = 0;
            while at + 8 < n {
                if word(a, at) != word(b, at) {
                    return false;
                }
                at += 8;
            }
            word(a, n - 8) == word(b, n - 8)
        }
    }
}

/// The length-prefixed value that starts at `at` in `chunk` (a record's value after its key).
/// Entries point only at records that parsed when the chunk was loaded and chunks never
/// change, so the run is always there; were it not, the result is empty (no value), never a
/// panic.
#[inline]
fn value_after(chunk: &[u8], at: usize) -> &[u8] {
    value_at(chunk, at).unwrap_or_default()
}

/// [`value_after`], `None` where it is empty because the run is not there.
#[inline]
fn value_at(chunk: &[u8], at: usize) -> Option<&[u8]> {
    match chunk.get(at) {
        // One- and two-byte lengths (values under 16 KiB) inline.
        Some(&n) if n < 0x80 => chunk.get(at + 1..at + 1 + n as usize),
        Some(&b0) => match chunk.get(at + 1) {
            Some(&b1) if b1 < 0x80 => {
                let len = (b0 & 0x7f) as usize | (b1 as usize) << 7;
                chunk.get(at + 2..at + 2 + len)
            }
            _ => long_value(chunk.get(at..)?),
        },
        None => None,
    }
}

/// [`value_at`] of a value with a length of three bytes or more (out of line: the usual
/// values' lookup stays small).
#[inline(never)]
fn long_value(rest: &[u8]) -> Option<&[u8]> {
    Cursor::new(rest).read_len_prefixed().ok()
}

/// Where a chunk's bytes come from: spans of a record inside the chunk buffer.
pub(super) fn span(chunk: &[u8], part: &[u8]) -> (u32, u32) {
    let off = part.as_ptr() as usize - chunk.as_ptr() as usize;
    (off as u32, part.len() as u32)
}

/// Merges `newer` into a copy of `older` (newer entries win; tombstones are dropped when
/// merging into the base) and keeps only the chunks a surviving entry points into. Without
/// that, a key overwritten on every append would make the merged level collect one chunk per
/// reload, and every later merge would copy that ever-growing chunk list. Costs
/// O(entries + chunks of both levels); the chunks of a merged level are at most its entries
/// (+ the base region), so a reload stays O(appended records), amortized, whatever the number
/// of reloads since the last full load.
pub(super) fn merge(older: &Level, newer: &Level, into_base: bool, hasher: &KeyHasher) -> Level {
    let mut out = older.clone();
    let shift = out.chunks.len() as u32;
    out.chunks.extend(newer.chunks.iter().cloned());
    for e in newer.table.iter() {
        let k = newer.key(e);
        let h = hasher.hash_one(k);
        let mut moved = *e;
        moved.chunk += shift;
        let tombstone = newer.is_tombstone(e);
        let chunks = &out.chunks;
        let key_of = |x: &Entry| -> &[u8] {
            let c = &chunks[x.chunk as usize];
            let start = x.key_off as usize;
            &c[start..start + x.key_len as usize]
        };
        match out
            .table
            .entry(h, |x| key_of(x) == k, |x| hasher.hash_one(key_of(x)))
        {
            TEntry::Occupied(mut o) => {
                if into_base && tombstone {
                    o.remove();
                } else {
                    *o.get_mut() = moved;
                }
            }
            TEntry::Vacant(v) => {
                if !(into_base && tombstone) {
                    v.insert(moved);
                }
            }
        }
    }
    drop_unreferenced_chunks(&mut out);
    out.first = out.chunks.first().cloned().unwrap_or_default();
    out
}

/// Removes the chunks no entry points into and renumbers the entries' chunk indexes
/// (keys and spans are unchanged, so nothing is rehashed).
fn drop_unreferenced_chunks(lvl: &mut Level) {
    let mut used = vec![false; lvl.chunks.len()];
    for e in lvl.table.iter() {
        used[e.chunk as usize] = true;
    }
    if used.iter().all(|&u| u) {
        return;
    }
    let mut remap = vec![u32::MAX; used.len()];
    let mut kept = Vec::with_capacity(used.iter().filter(|&&u| u).count());
    for (i, c) in lvl.chunks.drain(..).enumerate() {
        if used[i] {
            remap[i] = kept.len() as u32;
            kept.push(c);
        }
    }
    lvl.chunks = kept;
    for e in lvl.table.iter_mut() {
        e.chunk = remap[e.chunk as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::varint::write_varint;

    /// A record's value after its key, for lengths of 1, 2 and 3 varint bytes, non-minimal
    /// length encodings, and runs that do not fit (empty, never a panic).
    #[test]
    fn value_after_key_matches_the_record_parser() {
        for len in [0usize, 1, 127, 128, 300, 16_383, 16_384, 70_000] {
            let value: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let mut chunk = b"xx".to_vec();
            write_varint(&mut chunk, len as u64);
            chunk.extend_from_slice(&value);
            chunk.extend_from_slice(b"trailing");
            assert_eq!(value_after(&chunk, 2), &value[..], "len {len}");
            // cut inside the value: no run
            assert_eq!(value_after(&chunk[..chunk.len() - 9], 2), b"", "len {len}");
        }
        // non-minimal encodings of 5 (2 and 3 bytes), as read_len_prefixed reads them
        assert_eq!(
            value_after(&[0x85, 0x00, 1, 2, 3, 4, 5], 0),
            &[1, 2, 3, 4, 5]
        );
        assert_eq!(value_after(&[0x85, 0x80, 0x00, 9, 9, 9, 9, 9], 0), &[9; 5]);
        // past the end, empty chunk, a negative length
        assert_eq!(value_after(b"ab", 5), b"");
        assert_eq!(value_after(b"", 0), b"");
        assert_eq!(value_after(&[0xff, 0xff, 0xff, 0xff, 0x0f], 0), b"");
    }
}
