//! Deliberately broken readers: the real reader with one getter, the key handling, one form of
//! a result or the long-lived reader's reloads wrong (the reader crate itself is not modified).
//! `tests/breakage.rs` checks that the harness catches each one; `conformance hunt --break
//! NAME` hunts with one ([`Bug::named`]) to show what a finding looks like, in the fault and
//! power-loss suites too ([`Broken::reader_fn`]).

use std::path::Path;
use std::sync::{Mutex, OnceLock};

use mmkv_reader::{ReloadStats, Snapshot, Store};
use mmkv_sys::ErrorStrategy;

use crate::sides::reader::{read_snapshot, RealReader, StoreView};
use crate::sides::reads::{open_store, ReaderFn, ReaderOutcome, Reads};
use crate::sides::view::{Listed, ReaderFactory, ReaderView};
use crate::vocab::kind::{Features, StoreKind};
use crate::vocab::value::{Value, ValueType};

/// A reader factory over the real reader with one [`Bug`].
#[derive(Clone, Copy, Debug)]
pub struct Broken {
    /// What is broken, for messages.
    pub name: &'static str,
    /// The bug.
    pub bug: Bug,
}

impl Broken {
    /// The broken reader named `name` on the command line (one of [`Bug::NAMES`]).
    pub fn named(name: &str) -> Option<Broken> {
        Bug::named(name).map(|bug| Broken {
            name: bug.name(),
            bug,
        })
    }

    /// [`Broken::named`] for a command line's `--break NAME`: an unknown name is an error
    /// listing the names.
    pub fn parse(name: &str) -> Result<Broken, String> {
        Broken::named(name).ok_or_else(|| {
            let names: Vec<&str> = Bug::NAMES.iter().map(|(n, _)| *n).collect();
            format!("no broken reader {name:?}; one of: {}", names.join(", "))
        })
    }

    /// The bug's view over an opened `Store` (opened with whatever options the caller needs:
    /// the fault suites' page size and error strategy, or [`ReaderFactory::open`]'s);
    /// `encrypted`: it was opened with a crypt key.
    pub fn view_of(&self, store: Store, encrypted: bool) -> Box<dyn ReaderView> {
        match self.bug {
            Bug::Stale(stale) => Box::new(StaleView::of(store, stale, encrypted)),
            Bug::Form(bug) => Box::new(FormView {
                inner: StoreView { store },
                bug,
            }),
            bug => Box::new(BrokenView(Box::new(StoreView { store }), bug)),
        }
    }

    /// This bug as the fault and power-loss suites' `Store` path: the keys and every getter
    /// of [`Broken::view_of`] over the store `read_reader` opens. A [`ReaderFn`] is a plain
    /// `fn`, so the bug is this process's: the first call sets it, and a call with another
    /// bug is refused (one `--break` per process).
    pub fn reader_fn(&self) -> Result<ReaderFn, String> {
        let set = PROCESS_BUG.get_or_init(|| self.bug);
        if *set != self.bug {
            return Err(format!(
                "this process already reads with the broken reader {}, not {}",
                set.name(),
                self.bug.name()
            ));
        }
        Ok(read_broken)
    }
}

/// The bug of [`Broken::reader_fn`].
static PROCESS_BUG: OnceLock<Bug> = OnceLock::new();

/// [`crate::sides::reads::read_reader`] through the process's broken view.
fn read_broken(
    dir: &Path,
    kind: StoreKind,
    features: &Features,
    strategy: ErrorStrategy,
    page: u64,
) -> ReaderOutcome {
    let bug = *PROCESS_BUG.get().ok_or("no broken reader chosen")?;
    let store = open_store(dir, kind, strategy, page).map_err(|e| e.to_string())?;
    let view = Broken {
        name: bug.name(),
        bug,
    }
    .view_of(store, kind.crypt_key().is_some());
    let getters = features.getters();
    let keys = view
        .keys()
        .into_iter()
        .map(|k| {
            let reads = getters.iter().map(|&t| view.read(&k, t)).collect();
            (k, reads)
        })
        .collect();
    Ok(Reads { getters, keys })
}

/// What is broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bug {
    /// `getInt32` decoded through the u32 getter and range-checked into i32 (a classic sign
    /// bug: negative values are lost).
    I32ViaU32,
    /// `get_vec_bool` drops the last element.
    VecBoolDropsLast,
    /// Keys cut at the first NUL and decoded as lossy UTF-8 ([`c_string`]).
    KeysAsCStrings,
    /// A long-lived reader that cannot follow one kind of change ([`Stale`]).
    Stale(Stale),
    /// One form of a reader result wrong ([`FormBug`]).
    Form(FormBug),
}

impl Bug {
    /// Every bug with its command-line name.
    pub const NAMES: &'static [(&'static str, Bug)] = &[
        ("i32-via-u32", Bug::I32ViaU32),
        ("vec-bool-drops-last", Bug::VecBoolDropsLast),
        ("keys-as-c-strings", Bug::KeysAsCStrings),
        ("stale-encrypted-append", Bug::Stale(Stale::EncryptedAppend)),
        ("stale-expire-flag", Bug::Stale(Stale::ExpireFlag)),
        ("stale-meta-upgrade", Bug::Stale(Stale::MetaUpgrade)),
        ("stale-restore", Bug::Stale(Stale::Restore)),
        ("store-len-off-by-one", Bug::Form(FormBug::StoreLenOffByOne)),
        (
            "store-keys-drop-last",
            Bug::Form(FormBug::StoreKeysDropLast),
        ),
        (
            "store-contains-never",
            Bug::Form(FormBug::StoreContainsNever),
        ),
        ("store-expire-never", Bug::Form(FormBug::StoreExpireNever)),
        ("iter-drops-last", Bug::Form(FormBug::IterDropsLast)),
        (
            "entries-expire-never",
            Bug::Form(FormBug::EntriesExpireNever),
        ),
        (
            "raw-value-one-byte-long",
            Bug::Form(FormBug::RawValueOneByteLong),
        ),
        (
            "bytes-vec-drops-last",
            Bug::Form(FormBug::BytesVecDropsLast),
        ),
        ("bytes-vec-lossy", Bug::Form(FormBug::BytesVecLossy)),
    ];

    /// The bug named `name` in [`Bug::NAMES`].
    pub fn named(name: &str) -> Option<Bug> {
        Bug::NAMES.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
    }

    /// Its name in [`Bug::NAMES`].
    pub fn name(self) -> &'static str {
        Bug::NAMES
            .iter()
            .find(|(_, b)| *b == self)
            .map_or("?", |(n, _)| n)
    }
}

/// A long-lived reader whose reloads fail in one situation; like the real reader after a
/// failed reload, it keeps serving its previous snapshot. Fresh readers (opened after the
/// change) are unaffected, so only the long-lived reader can catch these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stale {
    /// Broken CFB continuation: an append-only reload of an encrypted store decrypts garbage
    /// and fails, until the next full reload.
    EncryptedAppend,
    /// The meta's key-expire flag differs from the one seen at open.
    ExpireFlag,
    /// The store was opened with a meta version before 4 (v1.2 and older) and the meta now
    /// has version 4 (written by v1.3.0+: the flags field).
    MetaUpgrade,
    /// The data region shrank without a full write-back (same meta sequence): what
    /// `restoreOneFromDirectory` of an older backup leaves.
    Restore,
}

/// A bug in one form of a reader result (a `Store`-level getter, a listing, `raw_value`,
/// `get_bytes_vec`), injected into the real reader's named form; every other form stays right,
/// so only the comparison of that form can catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormBug {
    /// `Store::len` counts one too many.
    StoreLenOffByOne,
    /// `Store::keys` loses its last key.
    StoreKeysDropLast,
    /// `Store::contains` says no for every key.
    StoreContainsNever,
    /// `Store::expire_at` reports "never" for every key.
    StoreExpireNever,
    /// `iter` drops its last pair.
    IterDropsLast,
    /// `entries` reports expire time 0 (never) for every key.
    EntriesExpireNever,
    /// The snapshot's `raw_value` includes one byte too many (as if the expire suffix or the
    /// next record leaked into it).
    RawValueOneByteLong,
    /// `get_bytes_vec` drops the last element.
    BytesVecDropsLast,
    /// `get_bytes_vec` items decoded as lossy UTF-8 (invalid bytes replaced): wrong only for
    /// string vectors whose items are not UTF-8.
    BytesVecLossy,
}

impl ReaderFactory for Broken {
    fn name(&self) -> String {
        format!("broken: {}", self.name)
    }

    fn open(
        &self,
        path: &Path,
        key: Option<&[u8]>,
        aes256: bool,
    ) -> Result<Box<dyn ReaderView>, String> {
        let store = RealReader::new()
            .open_store(path, key, aes256)
            .map_err(|e| e.to_string())?;
        Ok(self.view_of(store, key.is_some()))
    }
}

/// `key` as a C string of UTF-8: cut at the first NUL, invalid bytes replaced
/// ([`Bug::KeysAsCStrings`]).
pub fn c_string(key: &[u8]) -> Vec<u8> {
    let cut = key.iter().position(|&b| b == 0).unwrap_or(key.len());
    String::from_utf8_lossy(&key[..cut])
        .into_owned()
        .into_bytes()
}

/// The real reader's view with one getter or the key handling broken.
struct BrokenView(Box<dyn ReaderView>, Bug);

impl BrokenView {
    fn key(&self, key: &[u8]) -> Vec<u8> {
        match self.1 {
            Bug::KeysAsCStrings => c_string(key),
            _ => key.to_vec(),
        }
    }
}

impl ReaderView for BrokenView {
    fn read(&self, key: &[u8], ty: ValueType) -> Option<Value> {
        if matches!(self.1, Bug::I32ViaU32) && ty == ValueType::I32 {
            return match self.0.read(key, ValueType::U32)? {
                Value::U32(u) => i32::try_from(u).ok().map(Value::I32),
                _ => None,
            };
        }
        let v = self.0.read(&self.key(key), ty)?;
        Some(match (self.1, v) {
            (Bug::VecBoolDropsLast, Value::VecBool(mut b)) => {
                b.pop();
                Value::VecBool(b)
            }
            (_, v) => v,
        })
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.0.contains(&self.key(key))
    }
    fn keys(&self) -> Vec<Vec<u8>> {
        self.0.keys().iter().map(|k| self.key(k)).collect()
    }
    fn count(&self) -> usize {
        self.0.count()
    }
    fn expire_at(&self, key: &[u8]) -> Option<u32> {
        self.0.expire_at(&self.key(key))
    }
}

/// The long-lived reader of a [`Stale`] bug.
struct StaleView {
    store: Store,
    stale: Stale,
    encrypted: bool,
    opened: Snapshot,
    /// (snapshot served, reload counters at the last read, stuck)
    state: Mutex<(Snapshot, ReloadStats, bool)>,
}

impl StaleView {
    fn of(store: Store, stale: Stale, encrypted: bool) -> StaleView {
        let opened = store.snapshot();
        let state = Mutex::new((opened.clone(), store.stats(), false));
        StaleView {
            encrypted,
            store,
            stale,
            opened,
            state,
        }
    }

    /// The snapshot the broken reader serves.
    fn current(&self) -> Snapshot {
        let snap = self.store.snapshot();
        let stats = self.store.stats();
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let stuck = match self.stale {
            Stale::EncryptedAppend => {
                if stats.full > g.1.full {
                    false
                } else {
                    g.2 || (self.encrypted && stats.partial > g.1.partial)
                }
            }
            Stale::ExpireFlag => snap.meta().flags & 1 != self.opened.meta().flags & 1,
            Stale::MetaUpgrade => self.opened.meta().version < 4 && snap.meta().version >= 4,
            Stale::Restore => {
                let (now, served) = (snap.meta(), g.0.meta());
                now.sequence == served.sequence && now.actual_size < served.actual_size
            }
        };
        if !stuck {
            g.0 = snap;
        }
        g.1 = stats;
        g.2 = stuck;
        g.0.clone()
    }
}

impl ReaderView for StaleView {
    fn read(&self, key: &[u8], ty: ValueType) -> Option<Value> {
        read_snapshot(&self.current(), key, ty)
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.current().contains(key)
    }
    fn keys(&self) -> Vec<Vec<u8>> {
        self.current().keys().map(<[u8]>::to_vec).collect()
    }
    fn count(&self) -> usize {
        self.current().len()
    }
    fn expire_at(&self, key: &[u8]) -> Option<u32> {
        self.current().expire_at(key)
    }
    fn stats(&self) -> Option<ReloadStats> {
        Some(self.store.stats())
    }
}

/// The real reader's `Store` forms with one [`FormBug`].
struct FormView {
    inner: StoreView,
    bug: FormBug,
}

impl ReaderView for FormView {
    fn read(&self, key: &[u8], ty: ValueType) -> Option<Value> {
        self.inner.read(key, ty)
    }
    fn read_paths(&self, key: &[u8], ty: ValueType) -> Vec<(&'static str, Option<Value>)> {
        self.inner.read_paths(key, ty)
    }
    fn raw_values(&self, key: &[u8]) -> Vec<(&'static str, Option<Vec<u8>>)> {
        let mut raws = self.inner.raw_values(key);
        if let FormBug::RawValueOneByteLong = self.bug {
            for (name, raw) in &mut raws {
                if *name == "snapshot raw_value" {
                    if let Some(p) = raw.as_mut() {
                        p.push(0);
                    }
                }
            }
        }
        raws
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.inner.contains(key)
    }
    fn keys(&self) -> Vec<Vec<u8>> {
        self.inner.keys()
    }
    fn count(&self) -> usize {
        self.inner.count()
    }
    fn expire_at(&self, key: &[u8]) -> Option<u32> {
        self.inner.expire_at(key)
    }
    fn key_sets(&self) -> Vec<(&'static str, Vec<Vec<u8>>)> {
        let mut sets = self.inner.key_sets();
        if let FormBug::StoreKeysDropLast = self.bug {
            for (name, keys) in &mut sets {
                if *name == "Store::keys" {
                    keys.pop();
                }
            }
        }
        sets
    }
    fn counts(&self) -> Vec<(&'static str, usize)> {
        let mut counts = self.inner.counts();
        if let FormBug::StoreLenOffByOne = self.bug {
            for (name, n) in &mut counts {
                if *name == "Store::len" {
                    *n += 1;
                }
            }
        }
        counts
    }
    fn contains_paths(&self, key: &[u8]) -> Vec<(&'static str, bool)> {
        let mut paths = self.inner.contains_paths(key);
        if let FormBug::StoreContainsNever = self.bug {
            for (name, c) in &mut paths {
                if *name == "Store::contains" {
                    *c = false;
                }
            }
        }
        paths
    }
    fn expire_paths(&self, key: &[u8]) -> Vec<(&'static str, Option<u32>)> {
        let mut paths = self.inner.expire_paths(key);
        if let FormBug::StoreExpireNever = self.bug {
            for (name, t) in &mut paths {
                if *name == "Store::expire_at" {
                    *t = t.map(|_| 0);
                }
            }
        }
        paths
    }
    fn listings(&self) -> Vec<(&'static str, Vec<Listed>)> {
        let mut listings = self.inner.listings();
        for (name, items) in &mut listings {
            match (self.bug, *name) {
                (FormBug::IterDropsLast, "iter") => {
                    items.pop();
                }
                (FormBug::EntriesExpireNever, "entries") => {
                    for (_, _, t) in items.iter_mut() {
                        *t = Some(0);
                    }
                }
                _ => {}
            }
        }
        listings
    }
    fn bytes_vec(&self, key: &[u8]) -> Option<Option<Vec<Vec<u8>>>> {
        let mut v = self.inner.bytes_vec(key)?;
        match (self.bug, v.as_mut()) {
            (FormBug::BytesVecDropsLast, Some(items)) => {
                items.pop();
            }
            (FormBug::BytesVecLossy, Some(items)) => {
                for item in items.iter_mut() {
                    *item = String::from_utf8_lossy(item).into_owned().into_bytes();
                }
            }
            _ => {}
        }
        Some(v)
    }
    fn stats(&self) -> Option<ReloadStats> {
        self.inner.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bug_has_one_name() {
        for &(name, bug) in Bug::NAMES {
            assert_eq!(Bug::named(name), Some(bug));
            assert_eq!(bug.name(), name);
        }
        let mut names: Vec<_> = Bug::NAMES.iter().map(|(n, _)| n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Bug::NAMES.len());
        assert!(Broken::named("no-such-bug").is_none());
    }
}
