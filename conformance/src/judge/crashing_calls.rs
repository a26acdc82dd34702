//! Calls the harness does not make: where an official version corrupts its own memory (a
//! crash or a heap abort, nothing the judge could compare), the runner skips the call and
//! counts it as unsupported. Each entry names its upstream cause.

use std::path::Path;

use mmkv_sys::versions::Tag;

use crate::judge::exceptions::v;

/// Why `importFrom` into a store of this configuration crashes the official library, `None`
/// when it does not.
///
/// An encrypted store without key expiration keeps each imported value of more than a small
/// buffer's size as a `KeyValueHolderCrypt` built from the source's `MMBuffer`:
/// `KeyValueHolderCrypt(MMBuffer &&)` adopts the buffer's pointer as its own heap memory, but
/// `getDataForKey` of the (plaintext) source returns a no-copy buffer into the source's mapped
/// file. Reading the value once the source closed reads unmapped memory (SIGSEGV), and the
/// next write-back (`reKey`, `close`) frees the mapped pointer (`munmap_chunk(): invalid
/// pointer`). With expiration on, the library copies each value into a new buffer first.
pub fn import_from_crashes(
    version: Tag,
    encrypted: bool,
    key_expire: bool,
) -> Option<&'static str> {
    (version >= v(2, 2, 1) && encrypted && !key_expire).then_some(
        "importFrom into an encrypted store without expiration adopts the source's mapped \
         memory as heap buffers (KeyValueHolderCrypt(MMBuffer &&)); reading or freeing them \
         crashes",
    )
}

/// Why opening the store whose data file is `path` read-only (`MMKV_READ_ONLY`) crashes the
/// official library, `None` when it does not.
///
/// v2.0.0-v2.2.4 load a store without content (actual size 0: a new or cleared store) by
/// writing its actual size back, `writeActualSize(0, ..)`, which stores into the data file's
/// first 4 bytes through the mapping; a read-only instance maps the file read-only, so the
/// store faults (SIGSEGV). v2.3.0 skips that write for read-only instances. The size is read
/// as the library reads it: the meta's actual size (every supported meta has one) or the
/// data file's first 4 bytes; a missing or unreadable meta counts as no content.
pub fn read_only_load_crashes(version: Tag, path: &Path) -> Option<&'static str> {
    if !(v(2, 0, 0)..v(2, 3, 0)).contains(&version) {
        return None;
    }
    let meta = std::fs::read(mmkv_reader::meta_path(path)).ok();
    let meta_size = meta
        .and_then(|b| mmkv_reader::meta::MetaInfo::parse(&b).ok())
        .map(|m| m.actual_size);
    let header = std::fs::read(path).ok().and_then(|d| {
        d.get(..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    });
    let empty = meta_size.is_none_or(|n| n == 0) || header == Some(0);
    empty.then_some(
        "a read-only instance of a store without content writes its actual size (0) back \
         through the read-only mapping on load (writeActualSize in loadFromFile): SIGSEGV",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_load_of_an_empty_store_before_v2_3_0() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        // No files: no content.
        assert!(read_only_load_crashes(v(2, 0, 0), &path).is_some());
        assert!(read_only_load_crashes(v(2, 2, 4), &path).is_some());
        assert!(read_only_load_crashes(v(2, 3, 0), &path).is_none());
        assert!(read_only_load_crashes(v(1, 3, 17), &path).is_none());
        // Content: a data file whose first 4 bytes and meta give a size.
        let mut data = vec![0u8; 4096];
        data[0] = 3;
        std::fs::write(&path, &data).unwrap();
        let mut meta = vec![0u8; 4096];
        meta[4..8].copy_from_slice(&3u32.to_le_bytes()); // version 3
        meta[28..32].copy_from_slice(&3u32.to_le_bytes()); // actual size, after the IV
        std::fs::write(mmkv_reader::meta_path(&path), &meta).unwrap();
        let parsed = mmkv_reader::meta::MetaInfo::parse(&meta).map(|m| m.actual_size);
        assert_eq!(parsed.ok(), Some(3), "the meta layout this test writes");
        assert!(read_only_load_crashes(v(2, 0, 0), &path).is_none());
    }

    #[test]
    fn only_encrypted_stores_without_expiration() {
        assert!(import_from_crashes(v(2, 2, 1), true, false).is_some());
        assert!(import_from_crashes(v(2, 4, 2), true, false).is_some());
        assert!(import_from_crashes(v(2, 4, 2), true, true).is_none());
        assert!(import_from_crashes(v(2, 4, 2), false, false).is_none());
    }
}
