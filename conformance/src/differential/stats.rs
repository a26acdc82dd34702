//! Counters of what a differential run did (the report and the tests print them).

use mmkv_reader::ReloadStats;

use crate::vocab::merge::merge_fields;

/// Counters of one run (what ran: the report and the tests print them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunStats {
    /// Operations executed by the official library.
    pub ops: u64,
    /// Operations this version cannot perform (skipped).
    pub unsupported_ops: u64,
    /// `set()` calls the library refused.
    pub rejected_sets: u64,
    /// Checks (comparison points).
    pub checks: u64,
    /// Keys compared, summed over every capture of either reader.
    pub keys_compared: u64,
    /// (key, getter) reads compared, summed likewise.
    pub reads_compared: u64,
    /// Expire times compared with what the writer set.
    pub expire_checked: u64,
    /// Reload counters of the long-lived reader(s), summed.
    pub long_lived: ReloadCounts,
    /// Times the long-lived reader had to be replaced (a `reKey` changed the key).
    pub long_lived_replaced: u64,
    /// Switches of the writing version (migration) that were checked.
    pub version_switches: u64,
    /// Backup copies (`backupOneToDirectory`) the reader was judged on.
    #[serde(default)]
    pub backups_judged: u64,
    /// Checks at which a read-only official instance (`MMKV_READ_ONLY`) was judged too.
    #[serde(default)]
    pub read_only_checks: u64,
    /// Read-only checks skipped because the version crashes opening these files read-only
    /// ([`crate::judge::crashing_calls::read_only_load_crashes`]).
    #[serde(default)]
    pub read_only_skipped: u64,
    /// Official opens through a name space (`MMKV::nameSpace(root).mmkvWithID`).
    #[serde(default)]
    pub name_space_opens: u64,
}

/// [`ReloadStats`] that can be summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReloadCounts {
    /// Full reloads.
    pub full: u64,
    /// Partial reloads.
    pub partial: u64,
    /// Failed reloads.
    pub failed: u64,
}

impl ReloadCounts {
    /// Adds a reader's reload counters.
    pub fn add(&mut self, s: &ReloadStats) {
        self.full += s.full;
        self.partial += s.partial;
        self.failed += s.failed;
    }
}

merge_fields!(ReloadCounts: full, partial, failed);
merge_fields!(RunStats: ops, unsupported_ops, rejected_sets, checks, keys_compared,
    reads_compared, expire_checked, long_lived, long_lived_replaced, version_switches,
    backups_judged, read_only_checks, read_only_skipped, name_space_opens);
