//! The one table of accepted differences between the reader and the official library, for
//! the differential runs, the live writers and the fault suite alike.
//!
//! Every difference the harness tolerates is a row here, scoped to the versions and store
//! configurations of one listed upstream bug or API limitation. The same difference anywhere
//! else is a failure. Each row is recognised by a precise check in [`crate::judge::recognise`]
//! (or, for getter-level rows, in [`crate::judge::compare::agrees`]), never by "anything that
//! differs". The README's "Accepted differences" table is generated from [`TABLE`]
//! ([`markdown_table`], `conformance exceptions`) and a test keeps the two identical.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use mmkv_sys::versions::Tag;

use crate::vocab::kind::{ModeKind, StoreKind};

/// A class of difference the comparison can see. Each is one row of [`TABLE`], whose `why`
/// tells the upstream cause; [`Difference::describe`] says what differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Difference {
    /// The official in-memory state differs from what it reads back from its files.
    OfficialMemoryVsFiles,
    /// The official key set changes across close/reopen.
    OfficialLostOwnFiles,
    /// After a load, the official key set differs from the files' in exactly keys the
    /// v1.2.0–v1.2.2 encrypted loader misjudges ([`crypt_loader_v1_2_0_keeps`]).
    OfficialMisloadsInlineRecords,
    /// The reopened official does not return its last write of a key; the reader does.
    OfficialMisreadsOwnWrite,
    /// v1.2.0's full write-back of a v1.1.x file overwrote its first record
    /// ([`writeback_v1_2_0_clobbered`]).
    OfficialWriteBackClobbersFirstRecord,
    /// A key-changing `reKey` of a non-empty store succeeded but left both files unchanged.
    OfficialRekeyNotWritten,
    /// `reKey` to the store's own AES-128 key in a truncated form left the files unchanged
    /// but restarted the official cipher stream.
    OfficialRekeyRestartsCipher,
    /// Readers of a live multi-process writer see states no prefix of its operations
    /// explains (it no longer holds the lock it believes it holds).
    WriterLosesProcessLock,
    /// A scalar getter returns its default where the reader reports no value.
    DefaultForAbsentScalar,
    /// `getBytes` returns an empty buffer where the reader reports no value.
    EmptyForAbsentBytes,
    /// Fault suite: a missing or short meta file reads as zero-filled (official, `mmkv
    /// dump`); `Store` refuses it (`MetaMissing` / `MetaTooShort`).
    ZeroFill,
    /// Fault suite: an expiring store's value that is only the expire suffix: `allKeys`
    /// lists the key, `containsKey` does not; the reader lists it.
    EmptyPayloadKey,
    /// Fault suite: an expiring store's value shorter than the expire suffix: v1.3.0–v2.0.1
    /// read its expire time from the bytes before it (`allKeys`/`count` may drop the key);
    /// the reader, like v2.0.2+, keeps it.
    ShortExpireValue,
    /// Fault suite: meta version 6, read as version 3 without flags by v1.3.0–v2.3.0; the
    /// reader follows the newest loader (`mmkv_reader::meta::VERSION_HOLDER`).
    SpeciousMetaV6,
    /// Fault suite: an encrypted value over 256 bytes behind a non-minimal length varint,
    /// which `CodedInputDataCrypt::readData` decrypts wrong.
    CryptOverlongLength,
    /// The static `isFileValid` reports a store invalid that the reader (and the library's
    /// own load) reads: it checks the CRC over the data file's old-style size, which v2.4.0+
    /// no longer write ([`crate::judge::recognise::file_valid_zero_header`]).
    IsFileValidZeroHeader,
    /// A read-only instance of a store with key expiration runs without it: v2.3.0+ stop
    /// loading the meta before its key-expiration flag, and `enableAutoKeyExpire` refuses
    /// read-only instances, so it reads every value with its 4-byte expire-time suffix
    /// ([`crate::judge::recognise::read_only_without_expiry`]).
    ReadOnlyWithoutExpiry,
}

impl Difference {
    /// A short description.
    pub fn describe(self) -> &'static str {
        match self {
            Difference::OfficialMemoryVsFiles => {
                "official in-memory value differs from what it reads back from its files; reader agrees with the files"
            }
            Difference::OfficialLostOwnFiles => {
                "official key set changes across close/reopen or its own reKey (it cannot read back its own files)"
            }
            Difference::OfficialMisloadsInlineRecords => {
                "after loading its files (reopen, reKey) the official lists removed keys again or lacks live keys, each one whose last record is a small value the loader misjudges; reader agrees with the files"
            }
            Difference::OfficialMisreadsOwnWrite => {
                "reopened official does not return the value last written for a key; the reader returns exactly that value"
            }
            Difference::OfficialWriteBackClobbersFirstRecord => {
                "after its full write-back of a file written by v1.1.x the official cannot read back its files (its key set changes across close/reopen, the reader refuses them): records start with bytes of the new item-size holder"
            }
            Difference::OfficialRekeyNotWritten => {
                "reKey reports success but leaves the files unchanged (still under the old key); the official instance then uses the new key on them"
            }
            Difference::OfficialRekeyRestartsCipher => {
                "reKey to the store's own AES-128 key given longer than 16 bytes (or with a NUL) leaves the files unchanged but restarts the official cipher stream; its later appends do not decrypt under the file's IV"
            }
            Difference::WriterLosesProcessLock => {
                "a live multi-process writer: readers see states no prefix of its operations explains, or a reload fails, while it writes; the final state is exact"
            }
            Difference::DefaultForAbsentScalar => {
                "scalar getter returns the default (0/false) where the reader reports no value"
            }
            Difference::EmptyForAbsentBytes => {
                "getBytes returns empty where the reader reports no value"
            }
            Difference::ZeroFill => {
                "official (and mmkv dump) read a missing/short meta file as zero-filled; Store refuses it (MetaMissing/MetaTooShort)"
            }
            Difference::EmptyPayloadKey => {
                "expiring store, value = only the expire suffix: official allKeys lists the key but containsKey is false; the reader lists it"
            }
            Difference::ShortExpireValue => {
                "expiring store, value shorter than the 4-byte expire suffix: official v1.3.0-v2.0.1 allKeys/count read its expire time from the bytes before the value and may drop the key; the reader, like v2.0.2+, keeps it"
            }
            Difference::SpeciousMetaV6 => {
                "meta version 6 (no official writer writes it): v1.3.0-v2.3.0 read it as version 3 without flags, v2.4.0+ and the reader keep its flags"
            }
            Difference::CryptOverlongLength => {
                "encrypted store, value > 256 bytes behind a non-minimal length varint: official v1.2.0+ rewind their AES state by the minimal varint width and decrypt the value wrong; the reader reads the stored value"
            }
            Difference::IsFileValidZeroHeader => {
                "the static isFileValid reports a non-empty store invalid that the reader and the library's own load read"
            }
            Difference::ReadOnlyWithoutExpiry => {
                "a read-only instance of a store with key expiration runs without it and reads every value with its expire-time suffix"
            }
        }
    }

    /// Short code used in reports (the fault suite's verdict labels, the names of the fault
    /// regression inputs).
    pub fn code(self) -> &'static str {
        match self {
            Difference::OfficialMemoryVsFiles => "official-memory-vs-files",
            Difference::OfficialLostOwnFiles => "official-lost-own-files",
            Difference::OfficialMisloadsInlineRecords => "crypt-loader-inline",
            Difference::OfficialMisreadsOwnWrite => "official-misreads-own-write",
            Difference::OfficialWriteBackClobbersFirstRecord => "writeback-clobbers-first-record",
            Difference::OfficialRekeyNotWritten => "rekey-not-written",
            Difference::OfficialRekeyRestartsCipher => "rekey-restarts-cipher",
            Difference::WriterLosesProcessLock => "writer-loses-process-lock",
            Difference::DefaultForAbsentScalar => "default-for-absent-scalar",
            Difference::EmptyForAbsentBytes => "empty-for-absent-bytes",
            Difference::ZeroFill => "zero-fill",
            Difference::EmptyPayloadKey => "empty-payload-key",
            Difference::ShortExpireValue => "short-expire-value",
            Difference::SpeciousMetaV6 => "specious-meta-v6",
            Difference::CryptOverlongLength => "crypt-overlong-length",
            Difference::IsFileValidZeroHeader => "is-file-valid-zero-header",
            Difference::ReadOnlyWithoutExpiry => "read-only-without-expiry",
        }
    }

    /// True when the official instance no longer matches its own files once this difference
    /// is seen in a differential run: the run stops comparing there.
    pub fn stops_run(self) -> bool {
        matches!(
            self,
            Difference::OfficialLostOwnFiles
                | Difference::OfficialMisloadsInlineRecords
                | Difference::OfficialWriteBackClobbersFirstRecord
                | Difference::OfficialRekeyNotWritten
                | Difference::OfficialRekeyRestartsCipher
        )
    }
}

/// The store configuration a difference was seen in (the configuration at that moment: a
/// `reKey` can change it within a workload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope {
    /// The official version whose result differs.
    pub version: Tag,
    /// The store was encrypted.
    pub encrypted: bool,
    /// The store was opened `MMKV_MULTI_PROCESS`.
    pub multi_process: bool,
}

impl Scope {
    /// A scope from a tag (`None` when the tag does not parse).
    pub fn new(tag: &str, encrypted: bool, multi_process: bool) -> Option<Scope> {
        Some(Scope {
            version: Tag::parse(tag)?,
            encrypted,
            multi_process,
        })
    }

    /// The scope of a store of `kind` written by `tag` (`None` when the tag does not parse).
    pub fn of_kind(tag: &str, kind: StoreKind) -> Option<Scope> {
        Scope::new(
            tag,
            kind.crypt_key().is_some(),
            kind.mode() == ModeKind::Multi,
        )
    }
}

/// Which store configurations a row covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Configs {
    /// Every configuration.
    All,
    /// Encrypted stores opened single-process.
    EncryptedSingleProcess,
    /// Encrypted stores (any process mode).
    Encrypted,
    /// Stores opened `MMKV_MULTI_PROCESS`.
    MultiProcess,
}

impl Configs {
    fn covers(self, s: &Scope) -> bool {
        match self {
            Configs::All => true,
            Configs::EncryptedSingleProcess => s.encrypted && !s.multi_process,
            Configs::Encrypted => s.encrypted,
            Configs::MultiProcess => s.multi_process,
        }
    }

    /// The configurations in words (`encrypted, single-process`).
    pub fn text(self) -> &'static str {
        match self {
            Configs::All => "all",
            Configs::EncryptedSingleProcess => "encrypted, single-process",
            Configs::Encrypted => "encrypted",
            Configs::MultiProcess => "multi-process",
        }
    }
}

/// One accepted difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exception {
    /// What differs.
    pub difference: Difference,
    /// The upstream bug or API fact that explains it.
    pub reference: &'static str,
    /// First affected version (inclusive).
    pub first: Tag,
    /// Last affected version (inclusive; `None`: every later version too).
    pub last: Option<Tag>,
    /// Affected configurations.
    pub configs: Configs,
    /// Why the reader's answer is the right one.
    pub why: &'static str,
}

impl Exception {
    /// True when this row covers `difference` in `scope`.
    pub fn covers(&self, difference: Difference, scope: &Scope) -> bool {
        self.difference == difference
            && self.covers_version(scope.version)
            && self.configs.covers(scope)
    }

    /// True when `version` is in this row's versions.
    pub fn covers_version(&self, version: Tag) -> bool {
        version >= self.first && self.last.is_none_or(|last| version <= last)
    }
}

/// `vMAJOR.MINOR.PATCH` in a const table.
pub const fn v(major: u32, minor: u32, patch: u32) -> Tag {
    Tag {
        major,
        minor,
        patch,
    }
}

/// Every accepted difference. Nothing else is tolerated.
pub const TABLE: &[Exception] = &[
    Exception {
        difference: Difference::OfficialMemoryVsFiles,
        reference: "Tencent/MMKV#1351",
        first: v(1, 3, 3),
        last: Some(v(1, 3, 7)),
        configs: Configs::EncryptedSingleProcess,
        why: "encrypted appends after a key is overwritten with a larger value can leave the in-memory dictionary out of step with the file until the next load",
    },
    Exception {
        difference: Difference::OfficialLostOwnFiles,
        reference: "Tencent/MMKV#1351",
        first: v(1, 3, 3),
        last: Some(v(1, 3, 7)),
        configs: Configs::EncryptedSingleProcess,
        why: "the same bug can leave files the library's next load rejects, and it then discards its store: an encrypted file whose CRC fails, or a reKey write-back (which reloads) of a large value it misread from a wrongly saved cipher state",
    },
    Exception {
        difference: Difference::OfficialMisreadsOwnWrite,
        reference: "Tencent/MMKV#1351",
        first: v(1, 3, 3),
        last: Some(v(1, 3, 7)),
        configs: Configs::EncryptedSingleProcess,
        why: "large encrypted values are decrypted on demand from a saved cipher state, which the same bug records wrongly: the library returns garbage or nothing for its own write",
    },
    Exception {
        difference: Difference::OfficialMisloadsInlineRecords,
        reference: "upstream v1.2.3 fix of MiniPBCoder::decodeOneMap (encrypted map)",
        first: v(1, 2, 0),
        last: Some(v(1, 2, 2)),
        configs: Configs::Encrypted,
        why: "the encrypted loader of v1.2.0-v1.2.2 keeps a record when the holder's valueSize is non-zero instead of its realValueSize(); a value of up to 27 bytes is held inline (packed KeyValueHolderCrypt), where valueSize overlaps value bytes 2..6 and, past a shorter value, stale stack bytes: a deletion record can keep its key (removed keys come back) and a value whose bytes 2..6 are zero is dropped (a double 0.0). Accepted only when every differing key's last record in the file is such a record (a deletion for a listed key; for a missing key a value of at most 27 bytes with no non-zero byte at 2..6), and the run stops there",
    },
    Exception {
        difference: Difference::OfficialWriteBackClobbersFirstRecord,
        reference: "upstream v1.2.1 fix of memmoveDictionary (writes the item-size holder after moving the records)",
        first: v(1, 2, 0),
        last: Some(v(1, 2, 0)),
        configs: Configs::All,
        why: "v1.2.0's full write-back (expansion, trim, reKey) reuses the records in place: it first writes the 4-byte holder 0x00ffffff at the region start, then moves the records behind it; a v1.1.x file's records start 1-3 bytes in, so its first record (plaintext; encrypted: a value of 256+ bytes) is moved with its first bytes overwritten (encrypted: also decrypted in place with an overlap), under a valid CRC, and a later write of that key copies the damaged key bytes (v1.2.0 reuses an overwritten key's encoded bytes from the file): the library discards its own file on the next load and the reader refuses it. Accepted only after a pre-v1.2.0 version left a holder shorter than 4 bytes, when the region starts with the holder and exactly the damaged bytes, or (plaintext map) putting the overwritten bytes back wherever a record carries the damage makes the files hold exactly the instance's keys; the run stops there",
    },
    Exception {
        difference: Difference::OfficialRekeyNotWritten,
        reference: "upstream v1.2.6 fix of MMKV::reKey (clears m_hasFullWriteback first)",
        first: v(1, 1, 0),
        last: Some(v(1, 2, 5)),
        configs: Configs::All,
        why: "fullWriteback() returns at once while m_hasFullWriteback is set (after trim, removeValuesForKeys or another reKey), so reKey only swaps the in-memory crypter: the files still hold the old-key content, which the reader reads with the old key; accepted only when the harness sees both files byte-for-byte unchanged after a key-changing reKey of a store with content (a key the old key reads, or records of removed keys the new key cannot read), and the run stops there",
    },
    Exception {
        difference: Difference::OfficialRekeyRestartsCipher,
        reference: "upstream v1.2.6 fix of MMKV::reKey (clears m_hasFullWriteback first)",
        first: v(1, 1, 0),
        last: Some(v(1, 1, 2)),
        configs: Configs::Encrypted,
        why: "reKey compares the requested key with cryptKey() (16 bytes, up to a NUL), so it takes the change-key path, makes a new AESCrypt (IV = key) and calls fullWriteback(), which returns at once after a full write-back: the file keeps its IV while appends continue from the new one; v1.2.0-v1.2.5 reload after reKey and v1.2.6 rewrites. Accepted only when the harness sees both files unchanged, and the run stops there; the files themselves are intact and the reader reads them",
    },
    Exception {
        difference: Difference::WriterLosesProcessLock,
        reference: "upstream v1.3.1 fix of MMKV::clearMemoryCache (\"inter-process lock rely on MetaFile's fd, never close it\")",
        first: v(1, 2, 16),
        last: Some(v(1, 3, 0)),
        configs: Configs::MultiProcess,
        why: "v1.2.16 made clearMemoryCache() (full reloads, clearAll, reKey) close the meta file too; loadFromFile() reopens the meta file before the data file, so the two descriptors can swap numbers, and the FileLock keeps the meta file's old number: the writer then flocks the data file while readers lock the meta file, and they read while it writes. Accepted only in the live-writer runs, for the states observed while the writer runs (counted, not failed); the state after it exits must be exact",
    },
    Exception {
        difference: Difference::DefaultForAbsentScalar,
        reference: "API: no hasValue flag before v1.2.13",
        first: v(1, 1, 0),
        last: Some(v(1, 2, 12)),
        configs: Configs::All,
        why: "the getters return the caller's default when a present value does not decode; presence is containsKey",
    },
    Exception {
        difference: Difference::EmptyForAbsentBytes,
        reference: "API: no bool getBytes(key, MMBuffer&) before v1.2.13",
        first: v(1, 1, 0),
        last: Some(v(1, 2, 12)),
        configs: Configs::All,
        why: "getBytes(key) returns an empty buffer both for \"no value\" and for a value that does not decode",
    },
    Exception {
        difference: Difference::ZeroFill,
        reference: "API: MemoryFile::reloadFromFile extends a short file to a whole page",
        first: v(1, 1, 0),
        last: None,
        configs: Configs::All,
        why: "the official library, like mmkv dump, reads a missing or short meta file as the zero page it makes of it; Store refuses it because it keeps the meta file mapped for its check-on-read. Fault suite only: accepted when the reader, given the same files zero-extended the way the official library extends them, reads exactly what the official library read",
    },
    Exception {
        difference: Difference::EmptyPayloadKey,
        reference: "API: containsKey filters a value that is only the expire suffix, allKeys does not",
        first: v(1, 1, 0),
        last: None,
        configs: Configs::All,
        why: "the record exists and holds no value; the reader lists it and reports no value for every getter. Fault suite only (the official writer refuses empty values): accepted when the reader, without its empty-payload keys of an expiring store, reads exactly what the official library read (on the zero-filled files when Store refuses a short meta file)",
    },
    Exception {
        difference: Difference::ShortExpireValue,
        reference: "upstream v2.0.2 filterExpiredKeys skips a value shorter than Fixed32Size",
        first: v(1, 3, 0),
        last: Some(v(2, 0, 1)),
        configs: Configs::All,
        why: "filterExpiredKeys (allKeys and count with filterExpire) reads the expire time of such a value from the 4 bytes that end where the value ends, before its start: in the file, or before the decrypted copy on the heap (undefined), and drops the key when they read as past; its getters return the value whole. The reader keeps the key and its value, as the getters do and as v2.0.2+ do. Fault suite only (official writers write no such value): accepted when the reader, without those keys that the official library does not list, reads exactly what the official library read",
    },
    Exception {
        difference: Difference::SpeciousMetaV6,
        reference: "upstream v2.4.0 MMKVVersionPreserved = 5 (specious meta versions start at 7)",
        first: v(1, 3, 0),
        last: Some(v(2, 3, 0)),
        configs: Configs::All,
        why: "no official writer writes meta version 6, so the reader follows the newest loader, which keeps its flags. Fault suite only: accepted when the meta's version is 6 and the reader, given the meta rewritten as those versions rewrite it (version 3, flags 0), reads exactly what the official library read",
    },
    Exception {
        difference: Difference::CryptOverlongLength,
        reference: "CodedInputDataCrypt::readData rewinds by pbRawVarint32Size (lazy decryption, v1.2.0+)",
        first: v(1, 2, 0),
        last: None,
        configs: Configs::Encrypted,
        why: "the reader decrypts the region as one stream and reads the stored value; no official writer writes a non-minimal varint. Fault suite only: accepted when the keys whose live value of 257+ bytes sits behind a non-minimal varint are exactly the ones that differ, and only in their values",
    },
    Exception {
        difference: Difference::IsFileValidZeroHeader,
        reference: "API: static MMKV::isFileValid reads the data file's first 4 bytes as the size, which v2.4.0 stopped writing (zero_header_size)",
        first: v(2, 4, 0),
        last: None,
        configs: Configs::All,
        why: "isFileValid computes the CRC over as many bytes as the data file's first 4 bytes say; v2.4.0+ no longer write them (the size lives in the meta file: they stay 0, or what an older version last wrote), so it compares the CRC of the wrong bytes with the meta's digest. Accepted only when the official says invalid, the reader reads the store, those 4 bytes are not the meta's actual size and the CRC over them differs from the meta's digest",
    },
    Exception {
        difference: Difference::ReadOnlyWithoutExpiry,
        reference: "API: v2.3.0 MMKV::loadMetaInfoAndCheck returns for MMKV_READ_ONLY instances before it reads the meta's EnableKeyExipre flag, and enableAutoKeyExpire returns false for them (v2.2.1)",
        first: v(2, 3, 0),
        last: None,
        configs: Configs::All,
        why: "the values of a store with key expiration end in a 4-byte expire time, which only an instance with expiration on strips; v2.0.0-v2.2.4 turn it on at load from the meta's flag, v2.3.0+ skip that for a read-only instance, which can no longer enable it either, and read each value with the suffix as part of it. Accepted only when the read-only instance refused enableAutoKeyExpire while the meta file has the key-expiration flag, and the reader, given a copy of the files whose meta has that flag cleared, reads what the difference compared exactly as the instance answered it; the read-write instance of the same files agrees with the reader",
    },
];

/// The row that accepts `difference` in `scope`, if any. Asking counts no use: the places
/// where a difference becomes accepted call [`count_uses`].
pub fn accepted(difference: Difference, scope: &Scope) -> Option<&'static Exception> {
    TABLE.iter().find(|e| e.covers(difference, scope))
}

/// Uses of each row of [`TABLE`] in this process since the last [`take_uses`].
static USES: [AtomicU64; TABLE.len()] = [const { AtomicU64::new(0) }; TABLE.len()];

/// Counts `n` uses of `row`: differences seen and accepted by it (a divergence of a
/// differential run, an accepted getter read, a fault-suite verdict, live-writer reads).
pub fn count_uses(row: &Exception, n: u64) {
    if let Some(i) = TABLE.iter().position(|e| e == row) {
        USES[i].fetch_add(n, Ordering::Relaxed);
    }
}

/// The uses counted in this process (rows used at least once, by [`Difference::code`]), reset
/// to zero. Report cells run in child processes and send theirs in their result.
pub fn take_uses() -> BTreeMap<String, u64> {
    TABLE
        .iter()
        .zip(&USES)
        .filter_map(|(row, n)| {
            let n = n.swap(0, Ordering::Relaxed);
            (n > 0).then(|| (row.difference.code().to_string(), n))
        })
        .collect()
}

/// A row's versions as the table shows them (`v1.3.3–v1.3.7`, `v1.2.0 and later`).
pub fn versions_text(e: &Exception) -> String {
    match e.last {
        Some(last) => format!("{}–{last}", e.first),
        None => format!("{} and later", e.first),
    }
}

/// The table as Markdown (pasted into the README between the `exceptions-table` markers).
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| difference | reference | versions | configurations | why the reader is right |\n|---|---|---|---|---|\n",
    );
    for e in TABLE {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            e.difference.describe(),
            e.reference,
            versions_text(e),
            e.configs.text(),
            e.why
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use Difference as D;

    fn scope(tag: &str, encrypted: bool, multi: bool) -> Scope {
        Scope::new(tag, encrypted, multi).unwrap()
    }

    /// (difference, tag, encrypted, multi-process, accepted?): each listed upstream bug is
    /// accepted in exactly its versions and configurations, and nowhere next to them.
    #[rustfmt::skip]
    const SCOPES: &[(Difference, &str, bool, bool, bool)] = &[
        // MMKV#1351: v1.3.3-v1.3.7, encrypted, single-process.
        (D::OfficialMemoryVsFiles, "v1.3.3", true, false, true),
        (D::OfficialMemoryVsFiles, "v1.3.7", true, false, true),
        (D::OfficialMemoryVsFiles, "v1.3.9", true, false, false),
        (D::OfficialMemoryVsFiles, "v1.3.2", true, false, false),
        (D::OfficialMemoryVsFiles, "v1.3.5", false, false, false),
        (D::OfficialMemoryVsFiles, "v1.3.5", true, true, false),
        (D::OfficialLostOwnFiles, "v2.0.0", true, false, false),
        // The encrypted loader misjudging inline records: v1.2.0-v1.2.2, encrypted.
        (D::OfficialMisloadsInlineRecords, "v1.2.0", true, false, true),
        (D::OfficialMisloadsInlineRecords, "v1.2.2", true, true, true),
        (D::OfficialMisloadsInlineRecords, "v1.2.3", true, false, false),
        (D::OfficialMisloadsInlineRecords, "v1.1.2", true, false, false),
        (D::OfficialMisloadsInlineRecords, "v1.2.1", false, false, false),
        // The write-back over a v1.1.x file: v1.2.0 only, every configuration.
        (D::OfficialWriteBackClobbersFirstRecord, "v1.2.0", false, false, true),
        (D::OfficialWriteBackClobbersFirstRecord, "v1.2.0", true, true, true),
        (D::OfficialWriteBackClobbersFirstRecord, "v1.2.1", false, false, false),
        (D::OfficialWriteBackClobbersFirstRecord, "v1.1.2", false, false, false),
        // Unwritten reKey: v1.1.0-v1.2.5; the cipher restart: v1.1.x, encrypted.
        (D::OfficialRekeyNotWritten, "v1.1.0", false, false, true),
        (D::OfficialRekeyNotWritten, "v1.2.5", true, true, true),
        (D::OfficialRekeyNotWritten, "v1.2.6", true, false, false),
        (D::OfficialRekeyNotWritten, "v2.4.2", false, false, false),
        (D::OfficialRekeyRestartsCipher, "v1.1.2", true, true, true),
        (D::OfficialRekeyRestartsCipher, "v1.1.0", false, false, false),
        (D::OfficialRekeyRestartsCipher, "v1.2.0", true, false, false),
        // The writer's process lock on a closed meta descriptor: v1.2.16-v1.3.0, multi-process.
        (D::WriterLosesProcessLock, "v1.2.16", false, true, true),
        (D::WriterLosesProcessLock, "v1.3.0", true, true, true),
        (D::WriterLosesProcessLock, "v1.2.15", false, true, false),
        (D::WriterLosesProcessLock, "v1.3.1", false, true, false),
        (D::WriterLosesProcessLock, "v1.2.16", false, false, false),
        // Defaults for absent scalars: before the has-value flag of v1.2.13.
        (D::DefaultForAbsentScalar, "v1.2.12", false, true, true),
        (D::DefaultForAbsentScalar, "v1.2.13", false, false, false),
        // isFileValid over the zero old-style size: v2.4.0 and later, every configuration.
        (D::IsFileValidZeroHeader, "v2.4.0", false, false, true),
        (D::IsFileValidZeroHeader, "v2.4.2", true, true, true),
        (D::IsFileValidZeroHeader, "v2.3.0", false, false, false),
        // Read-only instances without expiration: v2.3.0 and later, every configuration.
        (D::ReadOnlyWithoutExpiry, "v2.3.0", false, true, true),
        (D::ReadOnlyWithoutExpiry, "v2.4.2", true, false, true),
        (D::ReadOnlyWithoutExpiry, "v2.2.4", false, false, false),
    ];

    #[test]
    fn each_upstream_bug_only_in_its_versions_and_configurations() {
        for &(d, tag, encrypted, multi, expected) in SCOPES {
            assert_eq!(
                accepted(d, &scope(tag, encrypted, multi)).is_some(),
                expected,
                "{d:?} on {tag} (encrypted {encrypted}, multi {multi})"
            );
        }
    }

    #[test]
    fn uses_are_counted_by_code_and_taken_once() {
        // A row no other unit test uses (the counters are per process).
        let row = accepted(D::SpeciousMetaV6, &scope("v2.0.0", false, false)).unwrap();
        count_uses(row, 2);
        count_uses(row, 3);
        assert_eq!(take_uses().get("specious-meta-v6"), Some(&5));
        assert_eq!(
            take_uses().get("specious-meta-v6"),
            None,
            "taken: reset to zero"
        );
        assert!(accepted(D::SpeciousMetaV6, &scope("v2.0.0", false, false)).is_some());
        assert_eq!(
            take_uses().get("specious-meta-v6"),
            None,
            "asking is no use"
        );
    }

    #[test]
    fn readme_holds_the_table() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
            .expect("README.md");
        let begin = "<!-- exceptions-table:begin -->\n";
        let end = "<!-- exceptions-table:end -->";
        let start = readme
            .find(begin)
            .expect("README exceptions-table:begin marker")
            + begin.len();
        let stop = readme[start..].find(end).expect("end marker") + start;
        assert_eq!(
            &readme[start..stop],
            markdown_table(),
            "README's accepted-differences table differs from conformance::judge::exceptions::TABLE"
        );
    }
}
