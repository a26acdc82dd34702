//! Detection: does a region parse, and if not, why — damaged, encrypted without a key, or the
//! wrong key (with a hint when another key setting works) — and when the official loader
//! discards a store.

use std::path::Path;

use mmkv_reader::locate::Source;
use mmkv_reader::meta::MetaInfo;
use mmkv_reader::raw::RawStore;
use mmkv_reader::records::{holder_len, records, Record};

use super::{read, CryptOpts};
use crate::error::Error;

/// Where parsing a region stopped early.
pub(super) struct ParseFail {
    position: usize,
    detail: String,
}

/// Parses a whole region; it must be consumed to its last byte.
pub(super) fn parse_region(
    region: &[u8],
) -> std::result::Result<(usize, Vec<Record<'_>>), ParseFail> {
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

/// The meta rules encryption out: an encrypted store's meta of version >= 2 holds the random
/// IV the official library generated, so an all-zero IV there means "not encrypted".
pub fn meta_rules_out_encryption(meta: &MetaInfo) -> bool {
    meta.has_iv() && meta.iv == [0u8; 16]
}

/// Whether a region parses as records to its last byte.
fn parses(region: &[u8]) -> bool {
    parse_region(region).is_ok()
}

/// Turns a region that does not parse into the right error: looks encrypted (no key) or wrong key
/// (with a hint when the other AES flag, or no key at all, makes the region parse).
pub(super) fn classify_failure(
    path: &Path,
    crypt: &CryptOpts,
    raw: &RawStore,
    fail: ParseFail,
) -> Error {
    let detail = format!(
        "stopped at region offset {}: {}",
        fail.position, fail.detail
    );
    if crypt.key.is_none() && meta_rules_out_encryption(&raw.meta) {
        return Error::Unparsable {
            path: path.to_path_buf(),
            region_len: raw.region().len(),
            version: raw.meta.version,
            detail,
        };
    }
    if crypt.key.is_none() {
        return Error::LooksEncrypted {
            path: path.to_path_buf(),
            region_len: raw.region().len(),
            detail,
        };
    }
    let mut hint = String::new();
    let other = CryptOpts {
        aes256: !crypt.aes256,
        ..crypt.clone()
    };
    if read(path, &other).is_ok_and(|r| parses(r.region()) && !r.region().is_empty()) {
        hint = if other.aes256 {
            "; the key works as AES-256: pass --aes256".to_string()
        } else {
            "; the key works as AES-128: drop --aes256".to_string()
        };
    } else if read(
        path,
        &CryptOpts {
            key: None,
            aes256: false,
            ..crypt.clone()
        },
    )
    .is_ok_and(|r| parses(r.region()))
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
