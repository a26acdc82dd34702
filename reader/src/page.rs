//! The page size the official loader works in, and how the reader chooses it.
//!
//! Every official release (v1.1.0 to v2.4.2) sets `DEFAULT_MMAP_SIZE = getpagesize()` once, when
//! the library initialises (`MMKV::initializeMMKV`), and uses it for both files of a store:
//! `MemoryFile::reloadFromFile` extends a file that is shorter than a page or not a whole number
//! of pages to the next page boundary (zero-filled) before mapping it, and
//! `MemoryFile::truncate` rounds every size it is asked for up to whole pages. So:
//!
//! * the data file grows and trims in whole pages of the writer's machine, and the loader
//!   checks sizes against the file *as mapped* (rounded up to its own pages): a region fits when
//!   `size + 4 <= mapped size` (`checkDataValid`, the header and last-confirmed fallbacks of
//!   `checkLastConfirmedInfo`), and `OnErrorRecover` on a size that does not fit reads
//!   `mapped size - 4` bytes ([`crate::locate`]);
//! * the meta file (`.crc`) is exactly one page of the first machine that created it (a larger
//!   page rounds it up again when a machine with bigger pages opens it): [`infer_page_size`].
//!
//! From v1.3.2 a store opened with an `expectedCapacity` is extended to that capacity rounded up
//! to pages (the reader models the default, 0: one page), and from v2.0.0 a read-only instance
//! maps the file as it is, without rounding. Nothing else a loader decides depends on the page
//! size (`trim`, `ensureMemorySize` and the iOS `mlock` are the writer's).
//!
//! 4 KiB is what x86-64, most Android devices and most arm64 Linux kernels use; iOS and Apple
//! Silicon macOS use 16 KiB, Android 15+ runs on 16 KiB devices, and several arm64 Linux
//! kernels use 64 KiB. A store pulled off such a device and read here is read correctly only
//! with that device's page size; intact stores read the same at every page size, damaged or
//! truncated ones may not.

use crate::error::{Error, Result};

/// The smallest page size [`validate_page_size`] accepts (and any platform MMKV runs on has).
pub const MIN_PAGE_SIZE: u64 = 4096;

/// The largest page size [`validate_page_size`] accepts (arm64 Linux with 64 KiB pages).
pub const MAX_PAGE_SIZE: u64 = 65536;

/// The page sizes a writer's `.crc` length is recognised as ([`infer_page_size`]): 4, 16 and
/// 64 KiB, the pages of the platforms MMKV runs on.
pub const WRITER_PAGE_SIZES: [u64; 3] = [4096, 16384, 65536];

/// The page size of the machine this runs on (what the official library there gets from
/// `getpagesize()`): `AT_PAGESZ` of the process on Unix (through rustix), so a qemu guest
/// started with `-p 16384` sees 16 KiB. Off Unix: 4 KiB, what Windows' `GetSystemInfo`
/// reports as `dwPageSize` on every architecture it runs on (the official Win32 build's
/// `getPageSize`).
pub fn host_page_size() -> u64 {
    #[cfg(unix)]
    {
        rustix::param::page_size() as u64
    }
    #[cfg(not(unix))]
    {
        MIN_PAGE_SIZE
    }
}

/// `size` when it is a page size the reader can follow: a power of two from
/// [`MIN_PAGE_SIZE`] to [`MAX_PAGE_SIZE`]; else [`Error::InvalidPageSize`].
pub fn validate_page_size(size: u64) -> Result<u64> {
    if size.is_power_of_two() && (MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&size) {
        Ok(size)
    } else {
        Err(Error::InvalidPageSize { size })
    }
}

/// The page size of the machine that wrote a store, from its meta file's length: the official
/// library creates the `.crc` as exactly one page (and never shrinks it), so a length of 4, 16
/// or 64 KiB ([`WRITER_PAGE_SIZES`]) is that page. Any other length (a meta file copied short,
/// zero-padded by a tool, or written by something else) is [`Error::PageSizeNotInferred`].
///
/// A `.crc` that machines with different pages opened has the largest of their pages (each
/// rounds it up to its own), which is also the page its data file was last rounded to.
pub fn infer_page_size(meta_len: u64) -> Result<u64> {
    if WRITER_PAGE_SIZES.contains(&meta_len) {
        Ok(meta_len)
    } else {
        Err(Error::PageSizeNotInferred { meta_len })
    }
}

/// How a page size is chosen when a store is opened ([`crate::Options::page_size`],
/// [`crate::Options::page_size_choice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PageSizeChoice {
    /// The page size of this machine ([`host_page_size`]), as the official library here
    /// would read the store. The default.
    #[default]
    Host,
    /// This page size (validated by [`validate_page_size`] when the store is opened).
    Given(u64),
    /// The writer's page size inferred from the meta file's length ([`infer_page_size`]);
    /// the host's when it cannot be inferred. For stores pulled off another device.
    Inferred,
}

impl PageSizeChoice {
    /// The page size this choice gives for a store whose meta file is `meta_len` bytes long
    /// (`None`: no meta file), and why. Errors: [`Error::InvalidPageSize`] for a
    /// [`PageSizeChoice::Given`] size (or a host page) out of range.
    pub fn resolve(self, meta_len: Option<u64>) -> Result<PageSize> {
        let host = || validate_page_size(host_page_size());
        let (size, source) = match self {
            PageSizeChoice::Host => (host()?, PageSizeSource::Host),
            PageSizeChoice::Given(n) => (validate_page_size(n)?, PageSizeSource::Given),
            PageSizeChoice::Inferred => match meta_len.map(infer_page_size) {
                Some(Ok(n)) => (n, PageSizeSource::Inferred { meta_len: n }),
                _ => (host()?, PageSizeSource::HostNotInferred { meta_len }),
            },
        };
        Ok(PageSize { size, source })
    }
}

/// Why a store was read with its page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PageSizeSource {
    /// The caller gave it ([`PageSizeChoice::Given`]).
    Given,
    /// This machine's page ([`PageSizeChoice::Host`]).
    Host,
    /// Inferred from a meta file of `meta_len` bytes, one page of the writer's machine.
    Inferred {
        /// The meta file's length.
        meta_len: u64,
    },
    /// [`PageSizeChoice::Inferred`] could not infer it (no meta file, or one whose length is no
    /// writer page), so this machine's page was used.
    HostNotInferred {
        /// The meta file's length (`None`: no meta file).
        meta_len: Option<u64>,
    },
}

impl PageSizeSource {
    /// The name used in tool output: `given`, `host`, `inferred`, `host_not_inferred`.
    pub fn as_str(self) -> &'static str {
        match self {
            PageSizeSource::Given => "given",
            PageSizeSource::Host => "host",
            PageSizeSource::Inferred { .. } => "inferred",
            PageSizeSource::HostNotInferred { .. } => "host_not_inferred",
        }
    }
}

/// The page size a store is read with, and why ([`crate::Store::page_size_used`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageSize {
    /// Bytes per page.
    pub size: u64,
    /// Why this size.
    pub source: PageSizeSource,
}

impl std::fmt::Display for PageSize {
    /// One sentence for tool output, e.g. `page size 16384 (inferred: the .crc is 16384 bytes,
    /// one page of the writer's machine)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let size = self.size;
        match self.source {
            PageSizeSource::Given => write!(f, "page size {size} (given)"),
            PageSizeSource::Host => write!(f, "page size {size} (this machine's page)"),
            PageSizeSource::Inferred { meta_len } => write!(
                f,
                "page size {size} (inferred: the .crc is {meta_len} bytes, one page of the writer's machine)"
            ),
            PageSizeSource::HostNotInferred { meta_len: None } => write!(
                f,
                "page size {size} (this machine's page: no .crc to infer the writer's page from)"
            ),
            PageSizeSource::HostNotInferred {
                meta_len: Some(len),
            } => write!(
                f,
                "page size {size} (this machine's page: the .crc is {len} bytes, not one 4, 16 or 64 KiB page, so the writer's page is unknown)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn host_page_is_valid() {
        let host = host_page_size();
        assert_eq!(validate_page_size(host), Ok(host));
        assert_eq!(
            PageSizeChoice::default().resolve(Some(16384)).unwrap(),
            PageSize {
                size: host,
                source: PageSizeSource::Host
            }
        );
    }

    #[test]
    fn validation() {
        for ok in [4096, 8192, 16384, 32768, 65536] {
            assert_eq!(validate_page_size(ok), Ok(ok));
        }
        for bad in [0, 1, 2048, 4095, 4097, 12288, 131072, u64::MAX] {
            assert_eq!(
                validate_page_size(bad),
                Err(Error::InvalidPageSize { size: bad })
            );
        }
        assert_eq!(
            PageSizeChoice::Given(12288).resolve(None),
            Err(Error::InvalidPageSize { size: 12288 })
        );
    }

    #[test]
    fn inference() {
        for n in WRITER_PAGE_SIZES {
            assert_eq!(infer_page_size(n), Ok(n));
            let p = PageSizeChoice::Inferred.resolve(Some(n)).unwrap();
            assert_eq!(
                (p.size, p.source),
                (n, PageSizeSource::Inferred { meta_len: n })
            );
        }
        // 8 and 32 KiB are valid pages but no platform's: not inferred
        for bad in [0, 112, 4095, 8192, 32768, 131072] {
            assert_eq!(
                infer_page_size(bad),
                Err(Error::PageSizeNotInferred { meta_len: bad })
            );
        }
        let p = PageSizeChoice::Inferred.resolve(Some(8192)).unwrap();
        assert_eq!(
            (p.size, p.source),
            (
                host_page_size(),
                PageSizeSource::HostNotInferred {
                    meta_len: Some(8192)
                }
            )
        );
        let p = PageSizeChoice::Inferred.resolve(None).unwrap();
        assert_eq!(p.source, PageSizeSource::HostNotInferred { meta_len: None });
        assert!(p.to_string().contains("no .crc"), "{p}");
    }

    #[test]
    fn notes_name_the_size_and_the_reason() {
        let p = PageSizeChoice::Inferred.resolve(Some(65536)).unwrap();
        assert_eq!(
            p.to_string(),
            "page size 65536 (inferred: the .crc is 65536 bytes, one page of the writer's machine)"
        );
        assert_eq!(
            PageSizeChoice::Given(16384)
                .resolve(None)
                .unwrap()
                .to_string(),
            "page size 16384 (given)"
        );
        let p = PageSizeChoice::Inferred.resolve(Some(5000)).unwrap();
        assert!(p.to_string().contains("5000 bytes"), "{p}");
        assert_eq!(p.source.as_str(), "host_not_inferred");
    }

    proptest! {
        /// Exactly the powers of two from 4 to 64 KiB are valid, and only the three writer
        /// pages are inferred; inference never gives an invalid size.
        #[test]
        fn validate_and_infer_agree(n in prop_oneof![any::<u64>(), (0u32..64).prop_map(|s| 1u64 << s), 0u64..70000]) {
            let valid = validate_page_size(n).is_ok();
            prop_assert_eq!(valid, n.is_power_of_two() && (4096..=65536).contains(&n));
            if let Ok(p) = infer_page_size(n) {
                prop_assert!(valid);
                prop_assert_eq!(p, n);
                prop_assert!(n == 4096 || n == 16384 || n == 65536);
            }
        }
    }
}
