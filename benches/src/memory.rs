//! Memory measurement: a counting global allocator and the report the `open` bench writes.

/// The workspace's one counting allocator (heap bytes, peak; installed by the `open` and
/// `scaling` benches).
pub use mmkv_reader::test_support::CountingAlloc;

/// The process's resident set size in bytes (`VmRSS` of `/proc/self/status`), if readable.
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_rss(&status)
}

/// Parses the `VmRSS:` line of a `/proc/<pid>/status` text into bytes.
pub fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let mut parts = line["VmRSS:".len()..].split_whitespace();
    let n: u64 = parts.next()?.parse().ok()?;
    match parts.next() {
        Some("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

/// One scaling store as the `scaling` bench measured it (an entry of [`crate::ids::SCALING_FILE`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScaleStore {
    /// The store's name ([`crate::ids::ReloadStore::name`]).
    pub name: String,
    /// Keys in the store.
    pub keys: u64,
    /// The store's actual data size, bytes.
    pub data_bytes: u64,
    /// Heap bytes the open reader `Store` keeps.
    pub reader_heap_bytes: u64,
}

impl ScaleStore {
    /// Reader heap bytes per byte of actual data (`None` for an empty store).
    pub fn heap_ratio(&self) -> Option<f64> {
        (self.data_bytes > 0).then(|| self.reader_heap_bytes as f64 / self.data_bytes as f64)
    }
}

/// What the `open` bench measured about memory (written to [`crate::ids::MEMORY_FILE`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MemoryReport {
    /// The official version that wrote the store.
    pub mmkv_version: String,
    /// Keys in the store.
    pub keys: u64,
    /// The store's actual data size (the data region the meta file declares), bytes.
    pub data_bytes: u64,
    /// Size of the data file on disk, bytes.
    pub file_bytes: u64,
    /// Heap bytes the open reader `Store` keeps (live allocations after `Store::open`).
    pub reader_heap_bytes: u64,
    /// Peak extra heap bytes during `Store::open`.
    pub reader_peak_heap_bytes: u64,
    /// Growth of the process's resident set across `Store::open` (bytes; may be negative).
    pub reader_rss_delta_bytes: i64,
    /// Growth of the process's resident set across the official open + `count()` (bytes;
    /// includes the pages of the data file it maps).
    pub official_rss_delta_bytes: Option<i64>,
}

impl MemoryReport {
    /// Reader heap bytes per byte of actual data (`None` for an empty store).
    pub fn heap_ratio(&self) -> Option<f64> {
        (self.data_bytes > 0).then(|| self.reader_heap_bytes as f64 / self.data_bytes as f64)
    }

    /// Reader peak heap bytes during open per byte of actual data.
    pub fn peak_ratio(&self) -> Option<f64> {
        (self.data_bytes > 0).then(|| self.reader_peak_heap_bytes as f64 / self.data_bytes as f64)
    }
}

/// What a bench wrote its measurements against (written to [`crate::ids::fixture_file`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FixtureInfo {
    /// The official version that wrote the store(s).
    pub mmkv_version: String,
    /// Keys in the (main) store.
    pub keys: u64,
    /// Actual data size of the (main) store, bytes.
    pub data_bytes: u64,
    /// Free-form notes (e.g. how many reloads were excluded and why).
    #[serde(default)]
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_rss_parsing() {
        let s = "Name:\tx\nVmPeak:\t  9999 kB\nVmRSS:\t   1234 kB\nThreads: 1\n";
        assert_eq!(parse_vm_rss(s), Some(1234 * 1024));
        assert_eq!(parse_vm_rss("VmRSS: 7\n"), Some(7));
        assert_eq!(parse_vm_rss("VmRSS: x kB\n"), None);
        assert_eq!(parse_vm_rss("VmRSS: 5 MB\n"), None);
        assert_eq!(parse_vm_rss("Name: y\n"), None);
        assert!(resident_bytes().is_some_and(|b| b > 0));
    }

    #[test]
    fn ratios() {
        let mut r = MemoryReport {
            mmkv_version: "v2.0.0".into(),
            keys: 1,
            data_bytes: 1000,
            file_bytes: 4096,
            reader_heap_bytes: 1100,
            reader_peak_heap_bytes: 2200,
            reader_rss_delta_bytes: 0,
            official_rss_delta_bytes: None,
        };
        assert_eq!(r.heap_ratio(), Some(1.1));
        assert_eq!(r.peak_ratio(), Some(2.2));
        r.data_bytes = 0;
        assert_eq!(r.heap_ratio(), None);
    }
}
