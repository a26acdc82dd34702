//! Reading a snapshot: the key lookup through the levels, expiration, and every public getter
//! (the named ones generated from [`decode::value_table`]).

use std::hash::BuildHasher;

use super::SnapshotData;
use crate::clock::expired;
use crate::decode::{self, Value, ValueType};
use crate::locate::RegionSource;
use crate::meta::MetaInfo;
use crate::records::split_expire;

impl SnapshotData {
    #[inline]
    pub(super) fn find_raw_hashed(&self, h: u64, key: &[u8]) -> Option<&[u8]> {
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

    /// Payload and expire time of stored value `v`, `None` when it has expired at `now` (asked
    /// only when the value has an expire time): the one place a stored value is judged live or
    /// expired.
    #[inline]
    fn live_at<'a>(&self, v: &'a [u8], now: impl FnOnce() -> u32) -> Option<(&'a [u8], u32)> {
        let (p, t) = self.split(v);
        if expired(t, now) {
            None
        } else {
            Some((p, t))
        }
    }

    /// The payload of a live, unexpired key.
    #[inline]
    pub(crate) fn payload(&self, key: &[u8]) -> Option<&[u8]> {
        if self.plain {
            // One level (which holds no tombstones) over one chunk, no expire suffix.
            return self.base.find_in_first(self.hasher.hash_one(key), key);
        }
        self.payload_in_levels(key)
    }

    /// [`SnapshotData::payload`] of a snapshot with more than one level or key expiration
    /// (out of line: the plain lookup stays small).
    #[inline(never)]
    fn payload_in_levels(&self, key: &[u8]) -> Option<&[u8]> {
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
        self.live_at(v, || self.clock.now_secs()).map(|(p, _)| p)
    }

    fn expire_at_raw(&self, key: &[u8]) -> Option<u32> {
        let v = self.stored(key)?;
        self.live_at(v, || self.clock.now_secs()).map(|(_, t)| t)
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
        self.entries().map(|(k, p, _)| (k, p))
    }

    pub(crate) fn live_len(&self) -> usize {
        if self.key_expire {
            self.iter_live().count()
        } else {
            self.len
        }
    }
}

/// The named zero-copy getters, one per row of [`decode::value_table`].
macro_rules! snapshot_getters {
    ($($v:ident, $name:literal, $official:literal, $class:ident,
        $dec:ident : $t:ty => $get:ident $(| $own:ident : $o:ty => $oget:ident)?;)*) => {
        $(
            #[doc = concat!("`", $official, "` ([`decode::", stringify!($dec), "`]).")]
            #[inline(always)]
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
        // Read once per iteration; without key expiration every expire time is 0 and the
        // clock is not asked.
        let now = if self.key_expire {
            self.clock.now_secs()
        } else {
            0
        };
        self.iter_stored()
            .filter_map(move |(k, v)| self.live_at(v, || now).map(|(p, t)| (k, p, t)))
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
