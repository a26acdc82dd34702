//! The report's page-size axis: which page sizes the official library runs every cell with
//! (`report --page-sizes` / `CONFORMANCE_PAGE_SIZES`), each with its own case count.
//!
//! The official library's page size decides the files it writes (a `.crc` of one page, a data
//! file in whole pages) and how its loader judges a damaged one, so every report cell runs under
//! one page size; a cell's child process gets it through `MMKV_SYS_PAGE_SIZE` (see
//! [`mmkv_sys::page_size`]). The reading side reads at the same page size: the reader maps the
//! file length, which is what a writer of that page size left.

use std::fmt;
use std::str::FromStr;

/// The page size of a row or cell that names none (reports from before the axis).
pub const DEFAULT_PAGE_SIZE: u64 = 4096;

/// The variable `report --page-sizes` reads.
pub const PAGE_SIZES_VAR: &str = "CONFORMANCE_PAGE_SIZES";

/// The default axis: 4 KiB at the report's case count, 16 KiB for every version and kind at
/// CI's case count (2).
pub const DEFAULT_PAGE_SIZES: &str = "4096,16384:2";

/// `serde(default)` of a page-size field.
pub fn default_page_size() -> u64 {
    DEFAULT_PAGE_SIZE
}

/// `serde(skip_serializing_if)` of a page-size field: 4 KiB is left out.
pub fn is_default_page_size(size: &u64) -> bool {
    *size == DEFAULT_PAGE_SIZE
}

/// One page size of the axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRun {
    /// Bytes.
    pub size: u64,
    /// Property cases per (version, kind, seed) at this size; `None`: the report's `--cases`.
    pub cases: Option<u32>,
}

/// The axis: one or more page sizes, each at most once, the first the primary one (the rows
/// of versions that only have corpus stores, the live writer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSizes(pub Vec<PageRun>);

impl Default for PageSizes {
    fn default() -> Self {
        DEFAULT_PAGE_SIZES
            .parse()
            .expect("the default page sizes parse")
    }
}

impl PageSizes {
    /// Only `size`, at the report's case count.
    pub fn only(size: u64) -> PageSizes {
        PageSizes(vec![PageRun { size, cases: None }])
    }

    /// The primary page size.
    pub fn primary(&self) -> u64 {
        self.0.first().map_or(DEFAULT_PAGE_SIZE, |r| r.size)
    }

    /// The sizes, in order.
    pub fn sizes(&self) -> Vec<u64> {
        self.0.iter().map(|r| r.size).collect()
    }
}

impl FromStr for PageSizes {
    type Err = String;

    /// `SIZE[:CASES],...`, e.g. `4096,16384:2,65536:2`; sizes as `mmkv_sys` accepts them.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut runs: Vec<PageRun> = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (size, cases) = match part.split_once(':') {
                Some((size, cases)) => (size, Some(cases)),
                None => (part, None),
            };
            let size: u64 = size
                .trim()
                .parse()
                .map_err(|_| format!("page size `{part}`: not a number of bytes"))?;
            mmkv_sys::page_size::check_page_size(size).map_err(|e| e.to_string())?;
            let cases = match cases {
                Some(c) => match c.trim().parse::<u32>() {
                    Ok(n) if n > 0 => Some(n),
                    _ => return Err(format!("page size `{part}`: cases must be at least 1")),
                },
                None => None,
            };
            if runs.iter().any(|r| r.size == size) {
                return Err(format!("page size {size} given twice"));
            }
            runs.push(PageRun { size, cases });
        }
        if runs.is_empty() {
            return Err("no page size given".into());
        }
        Ok(PageSizes(runs))
    }
}

/// `4 KiB`, `16 KiB`, `64 KiB` (bytes when not whole KiB).
pub fn label(size: u64) -> String {
    if size.is_multiple_of(1024) {
        format!("{} KiB", size / 1024)
    } else {
        format!("{size} B")
    }
}

impl fmt::Display for PageSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|r| match r.cases {
                Some(c) => format!("{}:{c}", r.size),
                None => r.size.to_string(),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes_with_their_case_counts_and_refuses_the_rest() {
        let d = PageSizes::default();
        assert_eq!(
            d.0,
            [
                PageRun {
                    size: 4096,
                    cases: None
                },
                PageRun {
                    size: 16384,
                    cases: Some(2)
                }
            ]
        );
        assert_eq!(d.to_string(), DEFAULT_PAGE_SIZES);
        assert_eq!(d.primary(), 4096);
        let all: PageSizes = "16384, 4096:3,65536".parse().unwrap();
        assert_eq!(all.sizes(), [16384, 4096, 65536]);
        assert_eq!(all.primary(), 16384);
        for bad in ["", "4096,4096", "5000", "4096:0", "16k", "16384:x"] {
            assert!(bad.parse::<PageSizes>().is_err(), "{bad:?}");
        }
        assert_eq!(label(16384), "16 KiB");
        assert_eq!(label(65536), "64 KiB");
    }
}
