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
    /// The official key set grew across close/reopen: the reopened instance lists every key
    /// the live instance had plus keys the workload removed; the reader agrees with the live
    /// instance.
    OfficialResurrectsRemovedKeys,
    /// The reopened official instance does not return the value last written for a key (its
    /// getter of the written type returns something else or nothing), and the reader returns
    /// exactly that value: the library cannot read back its own write.
    OfficialMisreadsOwnWrite,
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
            Difference::OfficialResurrectsRemovedKeys => {
                "reopened official lists removed keys again (its key set grows across close/reopen; nothing live is lost); reader agrees with the live instance"
            }
            Difference::OfficialMisreadsOwnWrite => {
                "reopened official does not return the value last written for a key; the reader returns exactly that value"
            }
            Difference::OfficialRekeyNotWritten => {
                "reKey reports success but leaves the files unchanged (still under the old key); the official instance then uses the new key on them"
            }
            Difference::OfficialRekeyRestartsCipher => {
                "reKey to the store's own AES-128 key given longer than 16 bytes (or with a NUL) leaves the files unchanged but restarts the official cipher stream; its later appends do not decrypt under the file's IV"
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
}

impl Configs {
    fn covers(self, s: &Scope) -> bool {
        match self {
            Configs::All => true,
            Configs::EncryptedSingleProcess => s.encrypted && !s.multi_process,
            Configs::Encrypted => s.encrypted,
        }
    }

    fn text(self) -> &'static str {
        match self {
            Configs::All => "all",
            Configs::EncryptedSingleProcess => "encrypted, single-process",
            Configs::Encrypted => "encrypted",
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
        difference: Difference::OfficialResurrectsRemovedKeys,
        reference: "upstream v1.2.3 fix of MiniPBCoder::decodeOneMap (encrypted map)",
        first: (1, 2, 0),
        last: (1, 2, 2),
        configs: Configs::Encrypted,
        why: "the encrypted loader of v1.2.0-v1.2.2 decides keep-or-delete on the holder's valueSize instead of realValueSize; for small records stored inline that field overlaps the inline bytes, so a deletion record can keep its key: removed keys come back after a reopen; the file says they were removed",
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
        // Removed keys come back: v1.2.0-v1.2.2, encrypted.
        (
            D::OfficialResurrectsRemovedKeys,
            "v1.2.0",
            true,
            false,
            true,
        ),
        (D::OfficialResurrectsRemovedKeys, "v1.2.2", true, true, true),
        (
            D::OfficialResurrectsRemovedKeys,
            "v1.2.3",
            true,
            false,
            false,
        ),
        (
            D::OfficialResurrectsRemovedKeys,
            "v1.1.2",
            true,
            false,
            false,
        ),
        (
            D::OfficialResurrectsRemovedKeys,
            "v1.2.1",
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
