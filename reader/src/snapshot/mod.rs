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

//!
//! The parts: [`level`] (a level's table and chunks, merging), `getters` (the lookup through the
//! levels, expiration, every public getter) and `handles` ([`Snapshot`], [`SnapshotRef`]); this
//! module holds the state and builds it from loaded bytes.

mod getters;
mod handles;
mod level;

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::hash_table::{Entry as TEntry, HashTable};

pub use handles::{Snapshot, SnapshotRef};
use level::{merge, span, Entry, Level};

use crate::clock::Clock;
use crate::locate::RegionSource;
use crate::meta::MetaInfo;
use crate::parse::ParseResult;
use crate::records::{records, records_at};

/// The `BuildHasher` of the snapshot's key tables (foldhash, randomly seeded per process).
pub type KeyHasher = foldhash::fast::RandomState;

/// (crc digest, actual size field, sequence) as stored in the meta file: the check-on-read key.
pub(crate) type Triple = (u32, u32, u32);

/// The immutable parsed state of a store, with every getter. It is only reached through a
/// handle: [`Snapshot`] (owned, cheap to clone, may be kept) or [`SnapshotRef`] (borrowed from
/// the [`Store`](crate::Store) by [`Store::view`](crate::Store::view), no reference-count
/// traffic), both of which dereference to it. Zero-copy views (`get_bytes`, `get_str`, `keys`...)
/// borrow from the handle, so they can never observe a reload.
pub struct SnapshotData {
    /// `levels[0]`, kept inline for the single-level lookup (no `levels` indirection).
    base: Arc<Level>,
    levels: Vec<Arc<Level>>,
    pub(crate) hasher: KeyHasher,
    pub(crate) meta: MetaInfo,
    pub(crate) observed: Triple,
    pub(crate) key_expire: bool,
    /// One level over one chunk and no key expiration (the state after a full load): a read
    /// is one table lookup in one buffer, asked with one test ([`SnapshotData::payload`]).
    plain: bool,
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
            plain: levels.len() == 1 && levels[0].chunks.len() <= 1 && !info.meta.key_expire(),
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
}
