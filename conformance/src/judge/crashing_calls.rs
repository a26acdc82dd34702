//! Calls the harness does not make: where an official version corrupts its own memory (a
//! crash or a heap abort, nothing the judge could compare), the runner skips the call and
//! counts it as unsupported. Each entry names its upstream cause.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_encrypted_stores_without_expiration() {
        assert!(import_from_crashes(v(2, 2, 1), true, false).is_some());
        assert!(import_from_crashes(v(2, 4, 2), true, false).is_some());
        assert!(import_from_crashes(v(2, 4, 2), true, true).is_none());
        assert!(import_from_crashes(v(2, 4, 2), false, false).is_none());
    }
}
