//! Forensic access: the whole data file plus the region the official loader would read
//! (decided by [`crate::locate`]), decrypted when a key is given, without enforcing the CRC.

use std::path::Path;
use std::time::Duration;

use crate::cryptkey::CryptKey;
use crate::error::{Error, Result};
use crate::fsio::{
    file_len, meta_path, open_regular, read_at_into, read_prefix, Which, DEFAULT_LOCK_TIMEOUT,
};
use crate::load::{consistent, ReadSync};
use crate::locate::HEADER_LEN;
use crate::locate::{locate_in, parse_meta, Location, Rules, Strategy};
use crate::meta::{MetaInfo, META_SIZE};

/// A store as read for forensics.
#[derive(Debug, Clone)]
pub struct RawStore {
    /// The meta as the official loader sees it (a short meta file zero-filled).
    pub meta: MetaInfo,
    /// The whole data file.
    pub file: Vec<u8>,
    /// The located region, see [`RawStore::region`].
    region: Region,
    /// Offset of the region in `file` (always 4).
    pub region_offset: usize,
    /// The region size (`location.size`).
    pub actual_size: usize,
    /// The region passed its CRC check (`location.crc_ok`).
    pub crc_ok: bool,
    /// Which region was chosen and why.
    pub location: Location,
    /// How the read was kept consistent with writers.
    pub sync: ReadSync,
    /// Bytes read from the meta file (at most its structure's 112); `None` when it is missing.
    /// Fewer than 112 means the meta was read zero-filled, as the official library maps it.
    pub meta_len: Option<usize>,
}

/// Where a [`RawStore`]'s region is: in the file buffer (plaintext, inside the file) or a
/// copy (decrypted, or zero-filled past the end of the file).
#[derive(Debug, Clone)]
enum Region {
    /// `file[HEADER_LEN .. HEADER_LEN + len]`.
    InFile(usize),
    /// A copy.
    Owned(Vec<u8>),
}

impl RawStore {
    /// The located region (`location.size` bytes from data-file byte 4, zero-filled past the
    /// end of the file as the official mapping is), decrypted when a key was given; empty
    /// when the official loader discards the content.
    pub fn region(&self) -> &[u8] {
        match &self.region {
            Region::InFile(len) => self
                .file
                .get(HEADER_LEN..HEADER_LEN + len)
                .unwrap_or_default(),
            Region::Owned(v) => v,
        }
    }

    /// The meta file is shorter than the meta structure (or missing) and was read zero-filled.
    pub fn meta_short(&self) -> bool {
        self.meta_len.is_none_or(|n| n < META_SIZE)
    }
}

/// How [`read_store`] reads.
#[derive(Debug, Clone)]
pub struct RawOptions {
    /// The crypt key (`None`: not encrypted).
    pub key: Option<CryptKey>,
    /// The loader's rules (strategy, page size).
    pub rules: Rules,
    /// How long to retry the shared lock before reading optimistically.
    pub lock_timeout: Duration,
}

impl Default for RawOptions {
    fn default() -> Self {
        RawOptions {
            key: None,
            rules: Rules::official(),
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
        }
    }
}

/// [`read_store`] with the official default rules (`None`: not encrypted).
pub fn read_raw(path: &Path, key: Option<CryptKey>) -> Result<RawStore> {
    read_store(
        path,
        &RawOptions {
            key,
            ..RawOptions::default()
        },
    )
}

/// Reads the store at `path` (meta at `PATH.crc`) under a shared lock on the meta file (or
/// optimistically, see [`ReadSync`]) and locates its region with `opts.rules`.
///
/// With [`Strategy::Recover`] a missing meta file reads as an all-zero one (what the official
/// library creates): the region is then the data-file header's size, unverified.
///
/// Errors: missing meta (default strategy), missing data file, a directory or special file,
/// I/O.
pub fn read_store(path: &Path, opts: &RawOptions) -> Result<RawStore> {
    read_store_reusing(path, opts, Vec::new())
}

/// [`read_store`] reading the data file into `buffer`'s allocation (its content is replaced;
/// [`RawStore::file`] is that buffer). A caller reading many stores passes the previous
/// store's `file` back: a reused buffer's memory is already mapped, so a large file costs no
/// page faults.
pub fn read_store_reusing(path: &Path, opts: &RawOptions, buffer: Vec<u8>) -> Result<RawStore> {
    let mpath = meta_path(path);
    let mut buffer = Some(buffer);
    let mut load = |mbytes: &[u8]| -> Result<RawStore> {
        let meta = parse_meta(mbytes);
        let dfile = open_regular(path, Which::Data)?;
        let len = file_len(&dfile, path)?;
        let len = usize::try_from(len).map_err(|_| Error::DataTooShort { len })?;
        let mut file = buffer.take().unwrap_or_default();
        read_at_into(&dfile, path, 0, len, &mut file)?;
        let location = locate_in(&meta, &file, opts.rules);
        let region = match (location.in_file(&file), &opts.key) {
            (Some(r), None) => Region::InFile(r.len()),
            (in_file, key) => {
                // Zero-filled past the end of the file, as the official mapping reads it.
                let mut region = in_file
                    .map(<[u8]>::to_vec)
                    .unwrap_or_else(|| file.get(HEADER_LEN..).unwrap_or_default().to_vec());
                region.resize(location.size as usize, 0);
                if let Some(key) = key {
                    key.decrypt(&key.iv_for(&meta), &mut region);
                }
                Region::Owned(region)
            }
        };
        Ok(RawStore {
            meta,
            file,
            region,
            region_offset: HEADER_LEN,
            actual_size: location.size as usize,
            crc_ok: location.crc_ok,
            location,
            sync: ReadSync::Locked,
            meta_len: Some(mbytes.len()),
        })
    };
    let mfile = match open_regular(&mpath, Which::Meta) {
        Err(Error::MetaMissing { .. }) if opts.rules.strategy == Strategy::Recover => {
            let mut raw = load(&[])?;
            raw.sync = ReadSync::NoMetaFile;
            raw.meta_len = None;
            return Ok(raw);
        }
        r => r?,
    };
    let (mut raw, sync) = consistent(
        &mfile,
        &mpath,
        opts.lock_timeout,
        || read_prefix(&mfile, &mpath, META_SIZE),
        load,
        |r| r.location.is_primary(),
    )?;
    raw.sync = sync;
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::locate;

    fn corpus(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus/v2.4.2")
            .join(name)
    }

    /// The region is what `locate` copies out of the file (decrypted with the key), whatever
    /// buffer the read reuses: larger and full of other bytes, smaller, or none.
    #[test]
    fn region_matches_locate_with_any_reused_buffer() {
        let mut checked = 0;
        for (name, key) in [
            ("plain", None),
            ("trimmed", None),
            ("empty", None),
            ("aes128", Some(&b"mmkv-conformance"[..])),
        ] {
            let path = corpus(name);
            let file = std::fs::read(&path).unwrap();
            let meta = parse_meta(&std::fs::read(meta_path(&path)).unwrap());
            let opts = RawOptions {
                key: key.and_then(|k| CryptKey::new(k, false)),
                ..RawOptions::default()
            };
            let want = locate(&meta, file.as_slice(), opts.rules).unwrap();
            let mut region = want.region.clone();
            if let Some(k) = &opts.key {
                k.decrypt(&k.iv_for(&meta), &mut region);
            }
            for buffer in [Vec::new(), vec![0xa5; file.len() * 2 + 100], vec![7; 3]] {
                let raw = read_store_reusing(&path, &opts, buffer).unwrap();
                assert_eq!(raw.file, file, "{name}");
                assert_eq!(raw.location, want.location, "{name}");
                assert_eq!(raw.region(), region.as_slice(), "{name}");
                let parsed = crate::records::records(raw.region()).map_while(|r| r.ok());
                assert_eq!(parsed.count() > 0, name != "empty", "{name}");
                checked += 1;
            }
        }
        assert_eq!(checked, 12);
    }
}
