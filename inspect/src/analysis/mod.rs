//! Reading a store for inspection: every record with its status, detection of encryption and wrong
//! keys, and carving of stale records after the data region.
//!
//! Built on `mmkv_reader::raw::read_raw` (meta + data file without CRC enforcement, region decrypted
//! when a key is given) and `mmkv_reader::records` (the record grammar). Nothing here parses records
//! itself. Submodules: `status` (what happened to each record), `detect` (damaged, encrypted
//! or wrong key), `carve` (stale records after the region).
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

mod carve;
mod detect;
mod status;

use std::path::{Path, PathBuf};

use mmkv_reader::locate::{greedy_len, Rules};
use mmkv_reader::meta::MetaInfo;
use mmkv_reader::raw::{read_store, RawOptions, RawStore};
use mmkv_reader::{CryptKey, PageSize, PageSizeChoice};

use crate::error::{Error, Result};

pub use carve::{Carved, KeyRules, MAX_CARVED_KEY};
pub use detect::{discard_message, meta_rules_out_encryption};
pub use status::{Counts, RecordInfo, Status};

/// How to read a store: decryption, the official loader's recovery strategy and the page size
/// of the machine whose official loader is followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CryptOpts {
    /// The crypt key bytes (`--crypt-key` / `--crypt-key-hex`), `None` for plaintext.
    pub key: Option<Vec<u8>>,
    /// AES-256 (`--aes256`).
    pub aes256: bool,
    /// Read what the official `OnErrorRecover` strategy reads (`--recover`) instead of the
    /// official default (`OnErrorDiscard`).
    pub recover: bool,
    /// The page size (`--page-size`), resolved per store by [`CryptOpts::page_size`].
    pub page: PageSizeChoice,
}

impl Default for CryptOpts {
    /// Plaintext, the official default strategy, the page size inferred from each store's
    /// `.crc` (stores inspected come off other devices; `mmkv --page-size auto`).
    fn default() -> Self {
        CryptOpts {
            key: None,
            aes256: false,
            recover: false,
            page: PageSizeChoice::Inferred,
        }
    }
}

impl CryptOpts {
    /// The crypt key these stand for (`None`: plaintext).
    pub fn crypt_key(&self) -> Option<CryptKey> {
        self.key
            .as_ref()
            .and_then(|k| CryptKey::new(k, self.aes256))
    }

    /// The page size the store at `path` is read with, and why: [`CryptOpts::page`] resolved
    /// with the length of its `.crc` (none when it cannot be read). Errors:
    /// [`Error::BadArgument`] for a page size the reader cannot follow.
    pub fn page_size(&self, path: &Path) -> Result<PageSize> {
        let meta_len = std::fs::metadata(mmkv_reader::meta_path(path))
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        self.page
            .resolve(meta_len)
            .map_err(|e| Error::BadArgument(format!("--page-size: {e}")))
    }

    /// The reader options these stand for, at `page_size`.
    pub fn raw_options(&self, page_size: u64) -> RawOptions {
        RawOptions {
            key: self.crypt_key(),
            rules: self.rules(page_size),
            ..RawOptions::default()
        }
    }

    /// The loader's rules (official default, or `OnErrorRecover` with `--recover`) at
    /// `page_size`.
    pub fn rules(&self, page_size: u64) -> Rules {
        if self.recover {
            Rules::recover()
        } else {
            Rules::official()
        }
        .with_page_size(page_size)
    }
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
    /// The page size it was read with, and why.
    pub page: PageSize,
    /// The time expiration was evaluated at (epoch seconds).
    pub now: u32,
}

/// Reads the raw store with `crypt`'s key, strategy and page size. A missing meta file without
/// `--recover` is [`Error::MetaMissing`].
pub fn read(path: &Path, crypt: &CryptOpts) -> Result<RawStore> {
    read_at(path, crypt, crypt.page_size(path)?.size)
}

/// [`read`] at a page size already resolved.
fn read_at(path: &Path, crypt: &CryptOpts, page_size: u64) -> Result<RawStore> {
    read_store(path, &crypt.raw_options(page_size)).map_err(|e| match e {
        mmkv_reader::Error::MetaMissing { path: meta } => Error::MetaMissing {
            path: path.to_path_buf(),
            meta,
        },
        e => Error::reader(path, e),
    })
}

impl Analysis {
    /// Reads `path` (meta `PATH.crc`) with `crypt` (at the page size [`CryptOpts::page_size`]
    /// gives), evaluating expiration at `now`.
    ///
    /// Errors: reader errors (missing/short meta, actual size beyond the file, I/O);
    /// [`Error::LooksEncrypted`] (no key, region does not parse); [`Error::WrongKey`] (key given,
    /// decrypted region does not parse; with a hint when the other AES flag or no key works);
    /// [`Error::ZeroRecords`] (no record although the region is larger than its holder).
    pub fn open(path: &Path, crypt: &CryptOpts, now: u32) -> Result<Analysis> {
        Analysis::open_at(path, crypt, now, crypt.page_size(path)?)
    }

    /// [`Analysis::open`] at a page size already resolved (the one a note announced).
    pub fn open_at(path: &Path, crypt: &CryptOpts, now: u32, page: PageSize) -> Result<Analysis> {
        let raw = read_at(path, crypt, page.size)?;
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
            &raw.region()[..greedy_len(raw.region())]
        } else {
            raw.region()
        };
        let (holder, recs) = match detect::parse_region(parsed) {
            Ok(p) => p,
            Err(fail) => return Err(detect::classify_failure(path, crypt, &raw, fail)),
        };
        if !raw.location.greedy() && recs.is_empty() && raw.region().len() > holder {
            return Err(Error::ZeroRecords {
                path: path.to_path_buf(),
                region_len: raw.region().len(),
                holder_len: holder,
            });
        }
        let mut records: Vec<RecordInfo> = recs
            .iter()
            .enumerate()
            .map(|(index, r)| {
                let (payload, expire_at) = status::split_value(r.value, key_expire);
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
        status::assign_statuses(&mut records, now);
        Ok(Analysis {
            path: path.to_path_buf(),
            raw,
            holder_len: holder,
            records,
            crypt: crypt.clone(),
            page,
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
}
