//! Immutable parsed state of a store, and the zero-copy [`Snapshot`] handle.
//!
//! A snapshot is a stack of *levels*, newest last. Level 0 is the base: the decrypted data
//! region of the last full load and a hash table of its live keys (12 bytes per entry: the
//! key's span in that buffer, the value being the length-prefixed run after it; nothing is
//! copied per key). A partial reload (the writer only appended)
//! parses just the appended bytes into a new small level (tombstones for deletions) and
//! shares every older level through `Arc`. Levels merge like a binary counter (a level is
//! merged into the one below when it has at least half as many entries), so a reload costs
//! amortized O(appended bytes) and a lookup probes O(log n) tables at worst, usually one.

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::hash_table::{Entry as TEntry, HashTable};

use crate::clock::Clock;
use crate::decode::{self, Value, ValueType};
use crate::load::RegionSource;
use crate::meta::MetaInfo;
use crate::parse::{Cursor, ParseResult};
use crate::records::{records, records_at, split_expire};

/// The `BuildHasher` of the snapshot's key tables (foldhash, randomly seeded per process).
pub type KeyHasher = foldhash::fast::RandomState;

/// (crc digest, actual size field, sequence) as stored in the meta file: the check-on-read key.
pub(crate) type Triple = (u32, u32, u32);

/// A record in a level: its key's span in one of the level's chunks. The stored value is the
/// length-prefixed run right after the key (parsed on each read: keeping its span here too
/// would make the table 20 bytes per bucket instead of 12, a third of the data size for
/// 100-byte values); an empty value is a tombstone (a live value is never empty: an empty
/// value deletes).
#[derive(Clone, Copy, Debug)]
struct Entry {
    chunk: u32,
    key_off: u32,
    key_len: u32,
}

#[derive(Clone)]
pub(crate) struct Level {
    // Arc<Vec> rather than Arc<[u8]>: wrapping the loaded buffer costs no copy.
    chunks: Vec<Arc<Vec<u8>>>,
    /// `chunks[0]` (an empty buffer when there are no chunks): the chunk of every entry of a
    /// freshly built level, reached without the `chunks` indirection and bounds check.
    first: Arc<Vec<u8>>,
    table: HashTable<Entry>,
}

impl Level {
    fn new(chunks: Vec<Arc<Vec<u8>>>, table: HashTable<Entry>) -> Level {
        let first = chunks.first().cloned().unwrap_or_default();
        Level {
            chunks,
            first,
            table,
        }
    }
    #[inline]
    fn chunk(&self, i: u32) -> &[u8] {
        if i == 0 {
            &self.first
        } else {
            &self.chunks[i as usize]
        }
    }
    // Spans are added in `usize` (no wrap-around), so each slice costs one bounds check.
    #[inline]
    fn key(&self, e: &Entry) -> &[u8] {
        let start = e.key_off as usize;
        &self.chunk(e.chunk)[start..start + e.key_len as usize]
    }
    /// The stored value of `e` (empty for a tombstone).
    #[inline]
    fn val(&self, e: &Entry) -> &[u8] {
        value_after(self.chunk(e.chunk), e.key_off as usize + e.key_len as usize)
    }
    #[inline]
    fn is_tombstone(&self, e: &Entry) -> bool {
        self.val(e).is_empty()
    }
    #[inline]
    fn find(&self, h: u64, key: &[u8]) -> Option<&Entry> {
        self.table.find(h, |e| key_eq(self.key(e), key))
    }
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
    match chunk.get(at) {
        // One- and two-byte lengths (values under 16 KiB) inline.
        Some(&n) if n < 0x80 => chunk.get(at + 1..at + 1 + n as usize).unwrap_or_default(),
        Some(&b0) => match chunk.get(at + 1) {
            Some(&b1) if b1 < 0x80 => {
                let len = (b0 & 0x7f) as usize | (b1 as usize) << 7;
                chunk.get(at + 2..at + 2 + len).unwrap_or_default()
            }
            _ => long_value(chunk.get(at..).unwrap_or_default()),
        },
        None => &[],
    }
}

/// [`value_after`] of a value with a length of three bytes or more (out of line: the usual
/// values' lookup stays small).
#[inline(never)]
fn long_value(rest: &[u8]) -> &[u8] {
    Cursor::new(rest).read_len_prefixed().unwrap_or_default()
}

/// Where a chunk's bytes come from: spans of a record inside the chunk buffer.
fn span(chunk: &[u8], part: &[u8]) -> (u32, u32) {
    let off = part.as_ptr() as usize - chunk.as_ptr() as usize;
    (off as u32, part.len() as u32)
}

/// The immutable parsed state of a store, with every getter. It is only reached through a
/// handle: [`Snapshot`] (owned, cheap to clone, may be kept) or [`SnapshotRef`] (borrowed from
/// the [`Store`](crate::Store) by [`Store::view`](crate::Store::view), no reference-count
/// traffic), both of which dereference to it. Zero-copy views (`get_bytes`, `get_str`, `keys`...)
/// borrow from the handle, so they can never observe a reload.
pub struct SnapshotData {
    /// `levels[0]`, kept inline for the single-level lookup (no `levels` indirection).
    base: Arc<Level>,
    pub(crate) levels: Vec<Arc<Level>>,
    pub(crate) hasher: KeyHasher,
    pub(crate) meta: MetaInfo,
    pub(crate) observed: Triple,
    pub(crate) key_expire: bool,
    pub(crate) clock: Arc<dyn Clock>,
    /// Live entries, not counting expiration.
    pub(crate) len: usize,
    /// Loaded region size and its crc (stored bytes).
    pub(crate) region_len: usize,
    pub(crate) region_crc: u32,
    /// Last <= 32 ciphertext bytes of the region (encrypted stores), for CFB continuation.
    pub(crate) cipher_tail: Vec<u8>,
    pub(crate) source: RegionSource,
    pub(crate) iv: [u8; 16],
    pub(crate) generation: u64,
}

/// What [`SnapshotData::apply`] needs to know about the region it builds from.
pub(crate) struct BuildInfo {
    pub meta: MetaInfo,
    pub observed: Triple,
    pub clock: Arc<dyn Clock>,
    pub region_len: usize,
    pub region_crc: u32,
    pub cipher_tail: Vec<u8>,
    pub source: RegionSource,
    pub iv: [u8; 16],
    pub generation: u64,
}

impl SnapshotData {
    /// Builds a one-level snapshot from a whole decrypted region.
    pub(crate) fn from_region(region: Vec<u8>, info: BuildInfo) -> ParseResult<SnapshotData> {
        let hasher = KeyHasher::default();
        let chunk: Arc<Vec<u8>> = Arc::new(region);
        // One pass over the records (each record's bytes are touched once, while hashing its
        // key): (hash, entry) in record order, then a table sized for all of them (no rehash,
        // which would read every key from the region again).
        let mut parsed: Vec<(u64, Entry, bool)> = Vec::new();
        // An empty region is an empty store (the official loader decodes only when the actual
        // size is > 0); otherwise it starts with the item-size holder.
        if !chunk.is_empty() {
            for rec in records(&chunk) {
                let rec = rec?;
                let (ko, kl) = span(&chunk, rec.key);
                parsed.push((
                    hasher.hash_one(rec.key),
                    Entry {
                        chunk: 0,
                        key_off: ko,
                        key_len: kl,
                    },
                    !rec.value.is_empty(),
                ));
            }
        }
        let mut table: HashTable<Entry> = HashTable::with_capacity(parsed.len());
        {
            let region: &[u8] = &chunk;
            let key_of = |e: &Entry| -> &[u8] {
                let start = e.key_off as usize;
                &region[start..start + e.key_len as usize]
            };
            for (h, new, live) in parsed {
                let key = key_of(&new);
                match table.entry(h, |e| key_of(e) == key, |e| hasher.hash_one(key_of(e))) {
                    TEntry::Occupied(o) if !live => {
                        o.remove();
                    }
                    TEntry::Occupied(mut o) => *o.get_mut() = new,
                    TEntry::Vacant(v) => {
                        if live {
                            v.insert(new);
                        }
                    }
                }
            }
        }
        let len = table.len();
        let base = Arc::new(Level::new(vec![chunk], table));
        Ok(SnapshotData::assemble(vec![base], hasher, len, info))
    }

    /// Builds a new snapshot from this one plus the records of `chunk` (decrypted bytes
    /// appended to the region at offset `self.region_len`).
    pub(crate) fn append(&self, chunk: Vec<u8>, info: BuildInfo) -> ParseResult<SnapshotData> {
        let chunk: Arc<Vec<u8>> = Arc::new(chunk);
        let mut len = self.len;
        let mut lvl = Level::new(vec![chunk.clone()], HashTable::new());
        for rec in records_at(&chunk, self.region_len) {
            let rec = rec?;
            let h = self.hasher.hash_one(rec.key);
            let was_live = match lvl.find(h, rec.key) {
                Some(e) => !lvl.is_tombstone(e),
                None => self.find_raw_hashed(h, rec.key).is_some(),
            };
            let now_live = !rec.value.is_empty();
            match (was_live, now_live) {
                (false, true) => len += 1,
                (true, false) => len -= 1,
                _ => {}
            }
            let (ko, kl) = span(&chunk, rec.key);
            let new = Entry {
                chunk: 0,
                key_off: ko,
                key_len: kl,
            };
            let hasher = &self.hasher;
            let chunks = &lvl.chunks;
            let key_of = |e: &Entry| -> &[u8] {
                let start = e.key_off as usize;
                &chunks[0][start..start + e.key_len as usize]
            };
            match lvl
                .table
                .entry(h, |e| key_of(e) == rec.key, |e| hasher.hash_one(key_of(e)))
            {
                TEntry::Occupied(mut o) => *o.get_mut() = new,
                TEntry::Vacant(v) => {
                    v.insert(new);
                }
            }
        }
        let mut levels = self.levels.clone();
        levels.push(Arc::new(lvl));
        while levels.len() >= 2 {
            let n = levels.len();
            if levels[n - 1].table.len() * 2 < levels[n - 2].table.len() {
                break;
            }
            let newer = levels.pop().expect("len >= 2");
            let older = levels.pop().expect("len >= 2");
            let is_base = levels.is_empty();
            levels.push(Arc::new(merge(&older, &newer, is_base, &self.hasher)));
        }
        Ok(SnapshotData::assemble(
            levels,
            self.hasher.clone(),
            len,
            info,
        ))
    }

    /// The one place a snapshot is put together from its levels (the first is the base) and
    /// the facts of the load that produced it.
    fn assemble(levels: Vec<Arc<Level>>, hasher: KeyHasher, len: usize, info: BuildInfo) -> Self {
        SnapshotData {
            base: Arc::clone(&levels[0]),
            levels,
            hasher,
            key_expire: info.meta.key_expire(),
            meta: info.meta,
            observed: info.observed,
            clock: info.clock,
            len,
            region_len: info.region_len,
            region_crc: info.region_crc,
            cipher_tail: info.cipher_tail,
            source: info.source,
            iv: info.iv,
            generation: info.generation,
        }
    }

    #[inline]
    fn find_raw_hashed(&self, h: u64, key: &[u8]) -> Option<&[u8]> {
        for lvl in self.levels.iter().rev() {
            if let Some(e) = lvl.find(h, key) {
                return if lvl.is_tombstone(e) {
                    None
                } else {
                    Some(lvl.val(e))
                };
            }
        }
        None
    }

    /// The stored value bytes of a live key (expire suffix included), ignoring expiration.
    #[inline]
    pub(crate) fn stored(&self, key: &[u8]) -> Option<&[u8]> {
        let h = self.hasher.hash_one(key);
        if self.levels.len() == 1 {
            let lvl = &*self.base;
            return lvl.find(h, key).map(|e| lvl.val(e));
        }
        self.stored_in_levels(h, key)
    }

    /// [`SnapshotData::stored`] with more than one level, kept out of line so the
    /// single-level lookup stays small.
    #[inline(never)]
    fn stored_in_levels(&self, h: u64, key: &[u8]) -> Option<&[u8]> {
        self.find_raw_hashed(h, key)
    }

    /// Payload and expire time of a stored value under this snapshot's mode.
    #[inline]
    fn split<'a>(&self, v: &'a [u8]) -> (&'a [u8], u32) {
        if self.key_expire {
            // The official getter strips the suffix only from values of >= 4 bytes.
            split_expire(v).unwrap_or((v, 0))
        } else {
            (v, 0)
        }
    }

    /// The payload of a live, unexpired key.
    #[inline]
    pub(crate) fn payload(&self, key: &[u8]) -> Option<&[u8]> {
        let v = self.stored(key)?;
        if !self.key_expire {
            return Some(v);
        }
        self.unexpired(v)
    }

    /// The payload of stored value `v` of a key-expiring store, `None` when expired (out of
    /// line: the clock call keeps registers busy that the lookup wants).
    #[inline(never)]
    fn unexpired<'a>(&self, v: &'a [u8]) -> Option<&'a [u8]> {
        let (p, t) = self.split(v);
        if t != 0 && t <= self.clock.now_secs() {
            None
        } else {
            Some(p)
        }
    }

    fn expire_at_raw(&self, key: &[u8]) -> Option<u32> {
        let v = self.stored(key)?;
        let (_, t) = self.split(v);
        if self.key_expire && t != 0 && t <= self.clock.now_secs() {
            return None;
        }
        Some(t)
    }

    /// Iterates `(key, stored value)` of live keys (ignoring expiration), newest level first,
    /// each key once.
    pub(crate) fn iter_stored(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        let n = self.levels.len();
        self.levels
            .iter()
            .enumerate()
            .rev()
            .flat_map(move |(i, lvl)| {
                lvl.table.iter().filter_map(move |e| {
                    if lvl.is_tombstone(e) {
                        return None;
                    }
                    let k = lvl.key(e);
                    if i + 1 < n {
                        let h = self.hasher.hash_one(k);
                        if self.levels[i + 1..].iter().any(|l| l.find(h, k).is_some()) {
                            return None;
                        }
                    }
                    Some((k, lvl.val(e)))
                })
            })
    }

    /// Iterates live, unexpired `(key, payload)` pairs.
    pub(crate) fn iter_live(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        let now = if self.key_expire {
            self.clock.now_secs()
        } else {
            0
        };
        self.iter_stored().filter_map(move |(k, v)| {
            let (p, t) = self.split(v);
            if self.key_expire && t != 0 && t <= now {
                None
            } else {
                Some((k, p))
            }
        })
    }

    pub(crate) fn live_len(&self) -> usize {
        if self.key_expire {
            self.iter_live().count()
        } else {
            self.len
        }
    }
}

/// Merges `newer` into a copy of `older` (newer entries win; tombstones are dropped when
/// merging into the base) and keeps only the chunks a surviving entry points into. Without
/// that, a key overwritten on every append would make the merged level collect one chunk per
/// reload, and every later merge would copy that ever-growing chunk list. Costs
/// O(entries + chunks of both levels); the chunks of a merged level are at most its entries
/// (+ the base region), so a reload stays O(appended records), amortized, whatever the number
/// of reloads since the last full load.
fn merge(older: &Level, newer: &Level, into_base: bool, hasher: &KeyHasher) -> Level {
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

/// An owned handle on one immutable state of a store ([`Store::snapshot`](crate::Store::snapshot)).
/// Every getter is a method of [`SnapshotData`], which it dereferences to. Views borrowed from
/// it (`get_bytes`, `get_str`, `keys`...) cannot outlive it, so they can never observe a
/// reload. Cloning is cheap (an `Arc`); it may be kept as long as wanted and sent to other
/// threads. Taking one costs an atomic reference-count increment (and a decrement on drop);
/// for short zero-copy reads [`SnapshotRef`] avoids both.
#[derive(Clone)]
pub struct Snapshot {
    pub(crate) inner: Arc<SnapshotData>,
}

impl std::ops::Deref for Snapshot {
    type Target = SnapshotData;
    #[inline]
    fn deref(&self) -> &SnapshotData {
        &self.inner
    }
}

/// A short-lived borrowed handle on the current state of a store
/// ([`Store::view`](crate::Store::view)): the same getters as [`Snapshot`] (it dereferences to
/// [`SnapshotData`] too), but it borrows the snapshot the calling thread already caches for
/// the store, so taking and dropping it costs no atomic operation. It borrows the store, so it
/// cannot outlive it, and it stays on its thread (not `Send`). Hold it for a read or a few,
/// not for long: while one is alive on a thread, that thread's reads of a changed store fall
/// back to reference counting. Use [`SnapshotRef::to_snapshot`] to keep the state longer.
pub struct SnapshotRef<'a> {
    pub(crate) pin: crate::sys::slots::Pinned<'a>,
}

impl std::ops::Deref for SnapshotRef<'_> {
    type Target = SnapshotData;
    #[inline]
    fn deref(&self) -> &SnapshotData {
        &self.pin
    }
}

impl SnapshotRef<'_> {
    /// An owned [`Snapshot`] of the same state (one reference-count increment).
    pub fn to_snapshot(&self) -> Snapshot {
        Snapshot {
            inner: self.pin.to_arc(),
        }
    }
}

impl std::fmt::Debug for SnapshotRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotRef")
            .field("meta", &self.meta)
            .field("len", &self.len)
            .field("levels", &self.levels.len())
            .finish()
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("meta", &self.inner.meta)
            .field("len", &self.inner.len)
            .field("levels", &self.inner.levels.len())
            .finish()
    }
}

/// The named zero-copy getters, one per row of [`decode::value_table`].
macro_rules! snapshot_getters {
    ($($v:ident, $name:literal, $official:literal, $class:ident,
        $dec:ident : $t:ty => $get:ident $(| $own:ident : $o:ty => $oget:ident)?;)*) => {
        $(
            #[doc = concat!("`", $official, "` ([`decode::", stringify!($dec), "`]).")]
            #[inline]
            #[allow(clippy::needless_lifetimes)]
            pub fn $get<'a>(&'a self, key: impl AsRef<[u8]>) -> Option<$t> {
                decode::$dec(self.payload(key.as_ref())?)
            }
        )*
    };
}

impl SnapshotData {
    decode::value_table!(snapshot_getters);

    /// The value as an owned string (see [`SnapshotData::get_str`]).
    pub fn get_string(&self, key: impl AsRef<[u8]>) -> Option<String> {
        decode::as_string(self.payload(key.as_ref())?)
    }

    /// The value read by the getter of a runtime type ([`decode::decode`]); the named getters
    /// return the same without the dispatch.
    pub fn get_value(&self, key: impl AsRef<[u8]>, ty: ValueType) -> Option<Value<'_>> {
        decode::decode(ty, self.payload(key.as_ref())?)
    }

    /// `getVector` of strings as raw byte strings (zero-copy; no UTF-8 requirement).
    pub fn get_bytes_vec(&self, key: impl AsRef<[u8]>) -> Option<Vec<&[u8]>> {
        decode::as_bytes_vec(self.payload(key.as_ref())?)
    }

    /// The value payload (expire suffix removed), zero-copy; `None` when absent or expired.
    #[inline]
    pub fn raw_value(&self, key: impl AsRef<[u8]>) -> Option<&[u8]> {
        self.payload(key.as_ref())
    }

    /// The key is present (and not expired).
    #[inline]
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.payload(key.as_ref()).is_some()
    }

    /// The expire time of a live key: `Some(0)` for "never" and for stores without key
    /// expiration; `None` when the key is absent or expired.
    pub fn expire_at(&self, key: impl AsRef<[u8]>) -> Option<u32> {
        self.expire_at_raw(key.as_ref())
    }

    /// Number of live (unexpired) keys.
    pub fn len(&self) -> usize {
        self.live_len()
    }

    /// No live keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Live (unexpired) keys, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.iter_live().map(|(k, _)| k)
    }

    /// Live (unexpired) `(key, payload)` pairs, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.iter_live()
    }

    /// Live `(key, payload, expire time)` triples (expire time 0 = never / no expiration).
    pub fn entries(&self) -> impl Iterator<Item = (&[u8], &[u8], u32)> + '_ {
        let inner = self;
        let now = if inner.key_expire {
            inner.clock.now_secs()
        } else {
            0
        };
        inner.iter_stored().filter_map(move |(k, v)| {
            let (p, t) = inner.split(v);
            if inner.key_expire && t != 0 && t <= now {
                None
            } else {
                Some((k, p, t))
            }
        })
    }

    /// The meta file as it was when this snapshot was loaded.
    pub fn meta(&self) -> &MetaInfo {
        &self.meta
    }

    /// Key expiration is on for this store (meta flag).
    pub fn key_expire(&self) -> bool {
        self.key_expire
    }

    /// Size of the data region this snapshot was built from.
    pub fn region_len(&self) -> usize {
        self.region_len
    }

    /// Which size/crc pair verified the region (the actual size, or a fallback).
    pub fn region_source(&self) -> RegionSource {
        self.source
    }

    /// Counts loads of the owning store: 0 for the first, +1 per successful reload.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Number of hash-table levels (1 after a full load; more after partial reloads).
    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    /// Number of separately allocated buffers this snapshot keeps alive (the base region plus
    /// the appended chunks still referenced by some entry). A diagnostic: it stays bounded by
    /// the number of entries, never by the number of partial reloads.
    pub fn chunks(&self) -> usize {
        self.levels.iter().map(|l| l.chunks.len()).sum()
    }

    /// Bytes of the buffers this snapshot keeps alive (see [`SnapshotData::chunks`]); about the
    /// region size.
    pub fn retained_bytes(&self) -> usize {
        self.levels
            .iter()
            .flat_map(|l| l.chunks.iter())
            .map(|c| c.len())
            .sum()
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
