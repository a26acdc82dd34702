//! [`Options`]: how a store is opened ([`crate::Store::open`], [`crate::load_bytes`]).

use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::cryptkey::CryptKey;
use crate::fsio::DEFAULT_LOCK_TIMEOUT;
use crate::locate::Strategy;
use crate::page::PageSizeChoice;

/// How to open a store.
#[derive(Clone)]
pub struct Options {
    crypt_key: Option<Vec<u8>>,
    aes256: bool,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) strategy: Strategy,
    pub(crate) lock_timeout: std::time::Duration,
    pub(crate) page: PageSizeChoice,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("encrypted", &self.crypt_key.is_some())
            .field("aes256", &self.aes256)
            .field("strategy", &self.strategy)
            .field("lock_timeout", &self.lock_timeout)
            .field("page", &self.page)
            .finish()
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::new()
    }
}

impl Options {
    /// No encryption, AES-128 when a key is given, system clock, this machine's page size.
    pub fn new() -> Options {
        Options {
            crypt_key: None,
            aes256: false,
            clock: Arc::new(SystemClock),
            strategy: Strategy::Discard,
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            page: PageSizeChoice::Host,
        }
    }

    /// Read as the official library does on a machine with pages of `size` bytes (a power of
    /// two from 4 KiB to 64 KiB; checked when the store is opened, else
    /// [`crate::Error::InvalidPageSize`]). Default: this machine's page size
    /// ([`crate::page::host_page_size`]), as the official library here would read it. The
    /// official loader maps both files rounded up to whole pages, so a damaged or truncated
    /// store can read differently at 4, 16 and 64 KiB (see [`crate::page`]); give the page
    /// size of the device a store comes from, or see [`PageSizeChoice::Inferred`].
    pub fn page_size(self, size: u64) -> Options {
        self.page_size_choice(PageSizeChoice::Given(size))
    }

    /// How the page size is chosen when the store is opened: this machine's (the default), a
    /// given size, or the writer's inferred from the meta file's length
    /// ([`crate::page::infer_page_size`]). [`crate::Store::page_size_used`] says which was used.
    pub fn page_size_choice(mut self, choice: PageSizeChoice) -> Options {
        self.page = choice;
        self
    }

    /// Read what the official library's `OnErrorRecover` strategy reads when no region passes
    /// the CRC check (see [`crate::locate`]): the region decoded greedily, unverified
    /// ([`crate::RegionSource::Recovered`]). Off by default: such a load is then an error
    /// ([`crate::Error::CrcMismatch`], [`crate::Error::ActualSizeBeyondFile`]) where the official default
    /// opens the store empty.
    pub fn recover(mut self, on: bool) -> Options {
        self.strategy = if on {
            Strategy::Recover
        } else {
            Strategy::Discard
        };
        self
    }

    /// How long a load keeps retrying the shared `flock` on the meta file while a writer holds
    /// it exclusively (non-blocking attempts, backoff from 1 ms doubling up to 16 ms) before
    /// reading without the lock: meta, data, CRC check, meta again, retried when the meta
    /// changed ([`crate::ReloadStats::unlocked`] counts those loads). Default: 100 ms. Official
    /// multi-process writers hold the exclusive lock only while they write; v2.2.0 and v2.2.1
    /// hold it as long as a store is open in single-process mode.
    pub fn lock_timeout(mut self, timeout: std::time::Duration) -> Options {
        self.lock_timeout = timeout;
        self
    }

    /// The crypt key as given to the official library (zero-padded / truncated like it does).
    /// An empty key means "not encrypted", as with the official library.
    pub fn crypt_key(mut self, key: impl AsRef<[u8]>) -> Options {
        let k = key.as_ref();
        self.crypt_key = if k.is_empty() { None } else { Some(k.to_vec()) };
        self
    }

    /// Use AES-256 (v2.3.0+ stores opened with the 256-bit flag).
    pub fn aes256(mut self, on: bool) -> Options {
        self.aes256 = on;
        self
    }

    /// The clock used for key expiration.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Options {
        self.clock = clock;
        self
    }

    /// The crypt key these options stand for (`None`: not encrypted).
    pub(crate) fn key(&self) -> Option<CryptKey> {
        CryptKey::new(self.crypt_key.as_deref()?, self.aes256)
    }
}
