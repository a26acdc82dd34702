//! Memory measurement: a counting global allocator and the report the `open` bench writes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A global allocator that forwards to [`System`] and counts live heap bytes and their peak.
///
/// Install it in a bench binary with `#[global_allocator] static A: CountingAlloc = CountingAlloc::new();`.
/// It sees only Rust allocations (the official library's C++ `new` bypasses it).
#[derive(Debug)]
pub struct CountingAlloc {
    current: AtomicUsize,
    peak: AtomicUsize,
}

impl CountingAlloc {
    /// A counter at zero.
    pub const fn new() -> CountingAlloc {
        CountingAlloc {
            current: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// Live heap bytes allocated through this allocator.
    pub fn current(&self) -> usize {
        self.current.load(Ordering::Relaxed)
    }

    /// The highest [`current`](Self::current) value since the last [`reset_peak`](Self::reset_peak).
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Sets the peak to the current value.
    pub fn reset_peak(&self) {
        self.peak.store(self.current(), Ordering::Relaxed);
    }

    fn add(&self, n: usize) {
        let now = self.current.fetch_add(n, Ordering::Relaxed) + n;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    fn sub(&self, n: usize) {
        self.current.fetch_sub(n, Ordering::Relaxed);
    }
}

impl Default for CountingAlloc {
    fn default() -> Self {
        CountingAlloc::new()
    }
}

// SAFETY: every call forwards to `System` with the caller's arguments unchanged; the counters
// are only bookkeeping.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            self.add(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            self.add(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) };
        self.sub(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            self.sub(layout.size());
            self.add(new_size);
        }
        p
    }
}

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
    fn counting_alloc_tracks_current_and_peak() {
        let a = CountingAlloc::new();
        let l = Layout::from_size_align(1000, 8).expect("layout");
        // SAFETY: matching alloc/realloc/dealloc of one block with its layouts.
        unsafe {
            let p = a.alloc(l);
            assert!(!p.is_null());
            assert_eq!(a.current(), 1000);
            let p = a.realloc(p, l, 3000);
            assert!(!p.is_null());
            assert_eq!(a.current(), 3000);
            assert_eq!(a.peak(), 3000);
            a.dealloc(p, Layout::from_size_align(3000, 8).expect("layout"));
        }
        assert_eq!(a.current(), 0);
        assert_eq!(a.peak(), 3000);
        a.reset_peak();
        assert_eq!(a.peak(), 0);
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
