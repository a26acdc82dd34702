//! The one table of accepted differences between the reader and the official library.
//!
//! Every difference the harness tolerates is a row here, scoped to the versions and store
//! configurations of one listed upstream bug or API limitation. The same difference anywhere
//! else is a failure. The README's "Accepted differences" table is generated from
//! [`TABLE`] ([`markdown_table`]) and a test keeps the two identical.

use std::fmt::Write as _;

use crate::kind::{parse_tag, ModeKind, StoreKind};

/// A class of difference the comparison can see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Difference {
    /// The official instance's in-memory state disagreed with what the official library reads
    /// back from its own files (after close and reopen), and the reader agreed with the files.
    OfficialMemoryVsFiles,
    /// The official key set changed across close/reopen: the library cannot read back its own
    /// files, so there is no trustworthy reference for the reader.
    OfficialLostOwnFiles,
    /// After a load from its files the official key set differs from the files' in exactly
    /// keys whose last record the v1.2.0–v1.2.2 encrypted loader can misjudge
    /// ([`crypt_loader_v1_2_0_keeps`]): removed keys listed again, or live keys with a small
    /// value missing. The reader agrees with the files.
    OfficialMisloadsInlineRecords,
    /// The reopened official instance does not return the value last written for a key (its
    /// getter of the written type returns something else or nothing), and the reader returns
    /// exactly that value: the library cannot read back its own write.
    OfficialMisreadsOwnWrite,
    /// The official key set changed across close/reopen after v1.2.0 rewrote a file a
    /// version without the 4-byte item-size holder (v1.1.x) had written: its full write-back
    /// wrote the holder over the first record before moving it
    /// ([`writeback_v1_2_0_clobbered`]), so the files no longer hold what the instance has.
    OfficialWriteBackClobbersFirstRecord,
    /// `reKey` to another key (or to/from no key) reported success on a non-empty store but
    /// left both files byte-for-byte unchanged: they still hold the content under the old key
    /// while the official instance now uses the new one, so neither it nor a reader given the
    /// new key can read them.
    OfficialRekeyNotWritten,
    /// `reKey` with the AES-128 key the store already uses, given in a form the library keeps
    /// only truncated (longer than 16 bytes, or with a NUL), reported success on a non-empty
    /// store and left both files unchanged; the official instance restarted its cipher stream,
    /// so what it appends next does not decrypt under the file's IV.
    OfficialRekeyRestartsCipher,
    /// While a multi-process official writer runs, a reader that takes the shared lock on the
    /// meta file observes a state no prefix of the writer's operations explains, or a reload
    /// fails: the writer no longer holds the lock it believes it holds. The state after the
    /// writer exits is exact.
    WriterLosesProcessLock,
    /// A scalar getter returns its default value where the reader reports no value.
    DefaultForAbsentScalar,
    /// `getBytes` returns an empty buffer where the reader reports no value.
    EmptyForAbsentBytes,
}

impl Difference {
    /// A short description.
    pub fn describe(self) -> &'static str {
        match self {
            Difference::OfficialMemoryVsFiles => {
                "official in-memory value differs from what it reads back from its files; reader agrees with the files"
            }
            Difference::OfficialLostOwnFiles => {
                "official key set changes across close/reopen (it cannot read back its own files)"
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
        }
    }
}

/// The store configuration a difference was seen in (the configuration at that moment: a
/// `reKey` can change it within a workload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope {
    /// The official version (`vX.Y.Z`) whose result differs.
    pub version: (u32, u32, u32),
    /// The store was encrypted.
    pub encrypted: bool,
    /// The store was opened `MMKV_MULTI_PROCESS`.
    pub multi_process: bool,
}

impl Scope {
    /// A scope from a tag (`None` when the tag does not parse).
    pub fn new(tag: &str, encrypted: bool, multi_process: bool) -> Option<Scope> {
        Some(Scope {
            version: parse_tag(tag)?,
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

    fn text(self) -> &'static str {
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
    pub first: (u32, u32, u32),
    /// Last affected version (inclusive).
    pub last: (u32, u32, u32),
    /// Affected configurations.
    pub configs: Configs,
    /// Why the reader's answer is the right one.
    pub why: &'static str,
}

impl Exception {
    /// True when this row covers `difference` in `scope`.
    pub fn covers(&self, difference: Difference, scope: &Scope) -> bool {
        self.difference == difference
            && (self.first..=self.last).contains(&scope.version)
            && self.configs.covers(scope)
    }
}

/// Every accepted difference. Nothing else is tolerated.
pub const TABLE: &[Exception] = &[
    Exception {
        difference: Difference::OfficialMemoryVsFiles,
        reference: "Tencent/MMKV#1351",
        first: (1, 3, 3),
        last: (1, 3, 7),
        configs: Configs::EncryptedSingleProcess,
        why: "encrypted appends after a key is overwritten with a larger value can leave the in-memory dictionary out of step with the file until the next load",
    },
    Exception {
        difference: Difference::OfficialLostOwnFiles,
        reference: "Tencent/MMKV#1351",
        first: (1, 3, 3),
        last: (1, 3, 7),
        configs: Configs::EncryptedSingleProcess,
        why: "the same bug can write an encrypted file whose CRC the next load rejects, so the reopened instance discards it",
    },
    Exception {
        difference: Difference::OfficialMisreadsOwnWrite,
        reference: "Tencent/MMKV#1351",
        first: (1, 3, 3),
        last: (1, 3, 7),
        configs: Configs::EncryptedSingleProcess,
        why: "large encrypted values are decrypted on demand from a saved cipher state, which the same bug records wrongly: the library returns garbage or nothing for its own write",
    },
    Exception {
        difference: Difference::OfficialMisloadsInlineRecords,
        reference: "upstream v1.2.3 fix of MiniPBCoder::decodeOneMap (encrypted map)",
        first: (1, 2, 0),
        last: (1, 2, 2),
        configs: Configs::Encrypted,
        why: "the encrypted loader of v1.2.0-v1.2.2 keeps a record when the holder's valueSize is non-zero instead of its realValueSize(); a value of up to 27 bytes is held inline (packed KeyValueHolderCrypt), where valueSize overlaps value bytes 2..6 and, past a shorter value, stale stack bytes: a deletion record can keep its key (removed keys come back) and a value whose bytes 2..6 are zero is dropped (a double 0.0). Accepted only when every differing key's last record in the file is such a record (a deletion for a listed key; for a missing key a value of at most 27 bytes with no non-zero byte at 2..6), and the run stops there",
    },
    Exception {
        difference: Difference::OfficialWriteBackClobbersFirstRecord,
        reference: "upstream v1.2.1 fix of memmoveDictionary (writes the item-size holder after moving the records)",
        first: (1, 2, 0),
        last: (1, 2, 0),
        configs: Configs::All,
        why: "v1.2.0's full write-back (expansion, trim, reKey) reuses the records in place: it first writes the 4-byte holder 0x00ffffff at the region start, then moves the records behind it; a v1.1.x file's records start 1-3 bytes in, so its first record (plaintext; encrypted: a value of 256+ bytes) is moved with its first bytes overwritten (encrypted: also decrypted in place with an overlap), under a valid CRC, and a later write of that key copies the damaged key bytes (v1.2.0 reuses an overwritten key's encoded bytes from the file): the library discards its own file on the next load and the reader refuses it. Accepted only after a pre-v1.2.0 version left a holder shorter than 4 bytes, when the region starts with the holder and exactly the damaged bytes, or (plaintext map) putting the overwritten bytes back wherever a record carries the damage makes the files hold exactly the instance's keys; the run stops there",
    },
    Exception {
        difference: Difference::OfficialRekeyNotWritten,
        reference: "upstream v1.2.6 fix of MMKV::reKey (clears m_hasFullWriteback first)",
        first: (1, 1, 0),
        last: (1, 2, 5),
        configs: Configs::All,
        why: "fullWriteback() returns at once while m_hasFullWriteback is set (after trim, removeValuesForKeys or another reKey), so reKey only swaps the in-memory crypter: the files still hold the old-key content, which the reader reads with the old key; accepted only when the harness sees both files byte-for-byte unchanged after a key-changing reKey of a non-empty store, and the run stops there",
    },
    Exception {
        difference: Difference::OfficialRekeyRestartsCipher,
        reference: "upstream v1.2.6 fix of MMKV::reKey (clears m_hasFullWriteback first)",
        first: (1, 1, 0),
        last: (1, 1, 2),
        configs: Configs::Encrypted,
        why: "reKey compares the requested key with cryptKey() (16 bytes, up to a NUL), so it takes the change-key path, makes a new AESCrypt (IV = key) and calls fullWriteback(), which returns at once after a full write-back: the file keeps its IV while appends continue from the new one; v1.2.0-v1.2.5 reload after reKey and v1.2.6 rewrites. Accepted only when the harness sees both files unchanged, and the run stops there; the files themselves are intact and the reader reads them",
    },
    Exception {
        difference: Difference::WriterLosesProcessLock,
        reference: "upstream v1.3.1 fix of MMKV::clearMemoryCache (\"inter-process lock rely on MetaFile's fd, never close it\")",
        first: (1, 2, 16),
        last: (1, 3, 0),
        configs: Configs::MultiProcess,
        why: "v1.2.16 made clearMemoryCache() (full reloads, clearAll, reKey) close the meta file too; loadFromFile() reopens the meta file before the data file, so the two descriptors can swap numbers, and the FileLock keeps the meta file's old number: the writer then flocks the data file while readers lock the meta file, and they read while it writes. Accepted only in the live-writer runs, for the states observed while the writer runs (counted, not failed); the state after it exits must be exact",
    },
    Exception {
        difference: Difference::DefaultForAbsentScalar,
        reference: "API: no hasValue flag before v1.2.13",
        first: (1, 1, 0),
        last: (1, 2, 12),
        configs: Configs::All,
        why: "the getters return the caller's default when a present value does not decode; presence is containsKey",
    },
    Exception {
        difference: Difference::EmptyForAbsentBytes,
        reference: "API: no bool getBytes(key, MMBuffer&) before v1.2.13",
        first: (1, 1, 0),
        last: (1, 2, 12),
        configs: Configs::All,
        why: "getBytes(key) returns an empty buffer both for \"no value\" and for a value that does not decode",
    },
];

/// The row that accepts `difference` in `scope`, if any.
pub fn accepted(difference: Difference, scope: &Scope) -> Option<&'static Exception> {
    TABLE.iter().find(|e| e.covers(difference, scope))
}

/// The keys in which the official and the reader's key sets differ, when the table lists the
/// v1.2.0–v1.2.2 encrypted loader bug for `scope` and every such key's last record in
/// `region` (the decrypted data region the reader read; records up to the first that does not
/// parse) is one that loader misjudges ([`crypt_loader_v1_2_0_explains`]). `None` otherwise
/// (also when the sets agree).
pub fn crypt_loader_misjudged(
    scope: &Scope,
    region: &[u8],
    official: &std::collections::BTreeSet<Vec<u8>>,
    reader: &std::collections::BTreeSet<Vec<u8>>,
) -> Option<std::collections::BTreeSet<Vec<u8>>> {
    accepted(Difference::OfficialMisloadsInlineRecords, scope)?;
    let differing: std::collections::BTreeSet<Vec<u8>> =
        official.symmetric_difference(reader).cloned().collect();
    if differing.is_empty() {
        return None;
    }
    let mut last = std::collections::BTreeMap::new();
    for rec in mmkv_reader::records::records(region).map_while(|r| r.ok()) {
        last.insert(rec.key, rec.value);
    }
    differing
        .iter()
        .all(|k| {
            crypt_loader_v1_2_0_explains(official.contains(k), last.get(k.as_slice()).copied())
        })
        .then_some(differing)
}

/// Largest value `KeyValueHolderCrypt` holds inline in v1.2.0–v1.2.2 (29-byte packed struct:
/// type, size byte, then the value).
const CRYPT_INLINE_MAX: usize = 27;

/// The value bytes that the inline holder's `valueSize` field overlaps in v1.2.0–v1.2.2
/// (packed union: `pbKeyValueSize` u8, `keySize` u16, then `valueSize` u32, against
/// `paddedSize` u8 and the value from union byte 1).
const CRYPT_VALUE_SIZE_BYTES: std::ops::Range<usize> = 2..6;

/// What the encrypted loader of v1.2.0–v1.2.2 (`MiniPBCoder::decodeOneMap` on an
/// `MMKVMapCrypt`) decides for a key whose last record in the file stores `value`: it keeps
/// the key when the holder's `valueSize` is non-zero. `Some(true)`: kept; `Some(false)`:
/// dropped; `None`: decided by stale bytes (either can happen).
///
/// Values of at least 256 bytes are held by offset with `valueSize` set; 28..=255 bytes go to
/// the heap, where `valueSize` overlaps the size's high byte and a heap pointer's low bytes
/// (not zero); up to 27 bytes are held inline, where `valueSize` is value bytes 2..6 and,
/// past the end of a shorter value, bytes the temporary holder never initialised.
pub fn crypt_loader_v1_2_0_keeps(value: &[u8]) -> Option<bool> {
    if value.len() > CRYPT_INLINE_MAX {
        return Some(true);
    }
    let known = value
        .get(
            CRYPT_VALUE_SIZE_BYTES.start.min(value.len())
                ..CRYPT_VALUE_SIZE_BYTES.end.min(value.len()),
        )
        .unwrap_or(&[]);
    if known.iter().any(|&b| b != 0) {
        Some(true)
    } else if value.len() >= CRYPT_VALUE_SIZE_BYTES.end {
        Some(false)
    } else {
        None
    }
}

/// True when the v1.2.0–v1.2.2 encrypted loader explains a key on which the official instance
/// (`official_has`) and the files disagree, given the key's last record in the files
/// (`last_value`, `None` when the files have no record of it; an empty value is a deletion).
/// A key listed by the official but not by the files must end in a deletion the loader can
/// keep; a key in the files the official lacks must end in a value it can drop.
pub fn crypt_loader_v1_2_0_explains(official_has: bool, last_value: Option<&[u8]>) -> bool {
    match last_value {
        None => false,
        Some(v) if official_has => v.is_empty() && crypt_loader_v1_2_0_keeps(v) != Some(false),
        Some(v) => !v.is_empty() && crypt_loader_v1_2_0_keeps(v) != Some(true),
    }
}

/// The item-size holder v1.2.0+ write at the start of the data region in a full write-back
/// (varint of 0x00ffffff).
pub const ITEM_SIZE_HOLDER: [u8; 4] = [0xff, 0xff, 0xff, 0x07];

/// True when the decrypted data region `region` starts as v1.2.0's full write-back leaves a
/// region whose records began `old_holder_len` (1..=3) bytes in: the 4-byte holder, then the
/// first record whose first `4 - old_holder_len` bytes are what the write-back read back from
/// the holder it had just written over them.
///
/// `old_stream` is the first key-stream block of the file's IV before the write-back (`None`:
/// the store was plaintext then) and `new_stream` the one after it (all zero when it is
/// plaintext now). A plaintext map is moved with `memmove` (and encrypted afterwards by a
/// `reKey` to a key): the bytes are the holder's own. An encrypted map's holder is encrypted
/// with the new stream before the record is decrypted with the old one: the bytes are the
/// holder XOR both streams (AES-CFB, first block).
pub fn writeback_v1_2_0_clobbered(
    old_holder_len: usize,
    region: &[u8],
    old_stream: Option<&[u8; 16]>,
    new_stream: &[u8; 16],
) -> bool {
    let h = ITEM_SIZE_HOLDER.len();
    if !(1..h).contains(&old_holder_len) || !region.starts_with(&ITEM_SIZE_HOLDER) {
        return false;
    }
    let expected: Vec<u8> = (old_holder_len..h)
        .map(|i| match old_stream {
            None => ITEM_SIZE_HOLDER[i],
            Some(old) => ITEM_SIZE_HOLDER[i] ^ new_stream[i] ^ old[i],
        })
        .collect();
    region[h..].starts_with(&expected)
}

/// The bytes v1.2.0's write-back leaves at the start of a plaintext region's first record
/// when the region's records began `old_holder_len` (1..=3) bytes in (the holder's tail).
pub fn writeback_v1_2_0_clobber(old_holder_len: usize) -> Option<&'static [u8]> {
    (1..ITEM_SIZE_HOLDER.len())
        .contains(&old_holder_len)
        .then(|| &ITEM_SIZE_HOLDER[old_holder_len..])
}

/// `region` with the v1.2.0 write-back damage undone: every record that starts with
/// `clobbered` gets `original` (the first record's bytes the holder overwrote) back. Later
/// writes of the same key reuse the damaged key bytes (v1.2.0 appends an overwritten key by
/// copying its encoded key from the file), so the damage can sit on any record. `None` when
/// no record starts with `clobbered`, the lengths differ, or the repaired region still does
/// not parse as records.
pub fn repair_v1_2_0_clobber(region: &[u8], clobbered: &[u8], original: &[u8]) -> Option<Vec<u8>> {
    if clobbered.is_empty() || clobbered.len() != original.len() {
        return None;
    }
    let mut out = region.to_vec();
    let mut pos = mmkv_reader::records::holder_len(&out).ok()?;
    let mut repaired = 0;
    while pos < out.len() {
        if out[pos..].starts_with(clobbered) {
            out[pos..pos + original.len()].copy_from_slice(original);
            repaired += 1;
        }
        let mut record = mmkv_reader::records::records_at(&out[pos..], pos);
        record.next()?.ok()?;
        pos = record.position();
    }
    (repaired > 0).then_some(out)
}

fn version_text(v: (u32, u32, u32)) -> String {
    format!("v{}.{}.{}", v.0, v.1, v.2)
}

/// The table as Markdown (pasted into the README between the `exceptions-table` markers).
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| difference | reference | versions | configurations | why the reader is right |\n|---|---|---|---|---|\n",
    );
    for e in TABLE {
        let _ = writeln!(
            out,
            "| {} | {} | {}–{} | {} | {} |",
            e.difference.describe(),
            e.reference,
            version_text(e.first),
            version_text(e.last),
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
        (
            D::OfficialMisloadsInlineRecords,
            "v1.2.0",
            true,
            false,
            true,
        ),
        (D::OfficialMisloadsInlineRecords, "v1.2.2", true, true, true),
        (
            D::OfficialMisloadsInlineRecords,
            "v1.2.3",
            true,
            false,
            false,
        ),
        (
            D::OfficialMisloadsInlineRecords,
            "v1.1.2",
            true,
            false,
            false,
        ),
        (
            D::OfficialMisloadsInlineRecords,
            "v1.2.1",
            false,
            false,
            false,
        ),
        // The write-back over a v1.1.x file: v1.2.0 only, every configuration.
        (
            D::OfficialWriteBackClobbersFirstRecord,
            "v1.2.0",
            false,
            false,
            true,
        ),
        (
            D::OfficialWriteBackClobbersFirstRecord,
            "v1.2.0",
            true,
            true,
            true,
        ),
        (
            D::OfficialWriteBackClobbersFirstRecord,
            "v1.2.1",
            false,
            false,
            false,
        ),
        (
            D::OfficialWriteBackClobbersFirstRecord,
            "v1.1.2",
            false,
            false,
            false,
        ),
        // Unwritten reKey: v1.1.0-v1.2.5; the cipher restart: v1.1.x, encrypted.
        (D::OfficialRekeyNotWritten, "v1.1.0", false, false, true),
        (D::OfficialRekeyNotWritten, "v1.2.5", true, true, true),
        (D::OfficialRekeyNotWritten, "v1.2.6", true, false, false),
        (D::OfficialRekeyNotWritten, "v2.4.2", false, false, false),
        (D::OfficialRekeyRestartsCipher, "v1.1.2", true, true, true),
        (
            D::OfficialRekeyRestartsCipher,
            "v1.1.0",
            false,
            false,
            false,
        ),
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
    fn crypt_loader_v1_2_0_mechanism() {
        let keeps = crypt_loader_v1_2_0_keeps;
        // Deletion records and short values: the field is (partly) stale bytes.
        assert_eq!(keeps(&[]), None);
        assert_eq!(keeps(&[1, 0]), None);
        assert_eq!(
            keeps(&[0, 0, 0, 0]),
            None,
            "f32 0.0: bytes 2..4 zero, 4..6 stale"
        );
        assert_eq!(
            keeps(&[0, 0, 0, 0x80]),
            Some(true),
            "a non-zero byte inside 2..6"
        );
        // Inline values of 6..=27 bytes: decided by bytes 2..6 alone.
        assert_eq!(keeps(&[0; 8]), Some(false), "f64 0.0 is dropped");
        assert_eq!(keeps(&[9, 9, 0, 0, 0, 0, 9, 9]), Some(false));
        assert_eq!(keeps(&[0, 0, 0, 0, 0, 1, 0, 0]), Some(true));
        assert_eq!(keeps(&[0; 27]), Some(false));
        // Heap (28..=255) and offset (256+) holders keep every value.
        assert_eq!(keeps(&[0; 28]), Some(true));
        assert_eq!(keeps(&[0; 300]), Some(true));

        let explains = crypt_loader_v1_2_0_explains;
        assert!(explains(true, Some(&[])), "a removed key listed again");
        assert!(!explains(true, None), "a key the files never had");
        assert!(!explains(true, Some(&[0; 8])), "the files have it too");
        assert!(explains(false, Some(&[0; 8])), "a live double 0.0 dropped");
        assert!(
            explains(false, Some(&[0, 0, 0])),
            "stale bytes may drop a short value"
        );
        assert!(
            !explains(false, Some(&[0, 0, 7, 0, 0, 0])),
            "byte 2 set: always kept"
        );
        assert!(
            !explains(false, Some(&[0; 28])),
            "held on the heap: always kept"
        );
        assert!(
            !explains(false, Some(&[])),
            "a deletion: the files do not have it"
        );
        assert!(!explains(false, None));
    }

    #[test]
    fn writeback_v1_2_0_fingerprint() {
        let zero = [0u8; 16];
        let f = |h: usize, region: &[u8]| writeback_v1_2_0_clobbered(h, region, None, &zero);
        // A 1-byte holder (v1.1.x, small store): the key length became ff ff 07.
        assert!(f(
            1,
            &[0xff, 0xff, 0xff, 0x07, 0xff, 0xff, 0x07, 0x01, 0x00]
        ));
        assert!(f(2, &[0xff, 0xff, 0xff, 0x07, 0xff, 0x07, 0x6b]));
        assert!(f(3, &[0xff, 0xff, 0xff, 0x07, 0x07]));
        // An intact first record, or a file that already had a 4-byte holder.
        assert!(!f(
            1,
            &[0xff, 0xff, 0xff, 0x07, 0x02, 0x6b, 0x30, 0x01, 0x00]
        ));
        assert!(!f(4, &[0xff, 0xff, 0xff, 0x07, 0xff, 0xff, 0x07]));
        assert!(!f(1, &[0x05, 0x02, 0x6b, 0x30, 0x01, 0x00]));
        // A plaintext map encrypted by a reKey afterwards: the holder's own bytes.
        let new = [0x22u8; 16];
        assert!(writeback_v1_2_0_clobbered(
            2,
            &[0xff, 0xff, 0xff, 0x07, 0xff, 0x07],
            None,
            &new
        ));
        // Encrypted map: the holder under the new stream, decrypted with the old one.
        let old = [0x11u8; 16];
        let region = [0xff, 0xff, 0xff, 0x07, 0xff ^ 0x33, 0x07 ^ 0x33];
        assert!(writeback_v1_2_0_clobbered(2, &region, Some(&old), &new));
        assert!(!writeback_v1_2_0_clobbered(2, &region, None, &new));
        assert!(!writeback_v1_2_0_clobbered(2, &region, Some(&zero), &zero));
    }

    #[test]
    fn writeback_v1_2_0_repair() {
        let clobber = writeback_v1_2_0_clobber(1).unwrap();
        assert_eq!(clobber, &[0xff, 0xff, 0x07]);
        assert_eq!(writeback_v1_2_0_clobber(4), None);
        let original = [0x02, 0x6b, 0x32];
        // holder, k3 = [1], then k2 = [8] with its key bytes damaged.
        let damaged = [
            0xff, 0xff, 0xff, 0x07, 0x02, 0x6b, 0x33, 0x01, 0x01, 0xff, 0xff, 0x07, 0x01, 0x08,
        ];
        let repaired = repair_v1_2_0_clobber(&damaged, clobber, &original).unwrap();
        assert_eq!(&repaired[9..12], &original);
        // Nothing damaged, or damage that the original bytes do not explain.
        assert_eq!(repair_v1_2_0_clobber(&repaired, clobber, &original), None);
        assert_eq!(
            repair_v1_2_0_clobber(&damaged, clobber, &[0x09, 0x6b, 0x32]),
            None
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
            "README's accepted-differences table differs from conformance::exceptions::TABLE"
        );
    }
}
