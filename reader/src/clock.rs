//! The clock used for key expiration.

use std::sync::atomic::{AtomicU32, Ordering};

/// The expiration rule, in one place: a key whose expire time is non-zero and `<= now` (epoch
/// seconds) is absent; 0 means it never expires. `now` is asked only for a non-zero expire
/// time (a clock read per read of a never-expiring key would cost a system call, and a clock
/// may itself read the store).
#[inline]
pub fn expired(expire_at: u32, now: impl FnOnce() -> u32) -> bool {
    expire_at != 0 && expire_at <= now()
}

/// A source of "now" in epoch seconds (what the official `getCurrentTimeInSecond` returns),
/// compared with a key's expire time by [`expired`].
pub trait Clock: Send + Sync {
    /// Current time in seconds since the Unix epoch.
    fn now_secs(&self) -> u32;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_secs(&self) -> u32 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs().min(u32::MAX as u64) as u32)
            .unwrap_or(0)
    }
}

/// A clock frozen at a given second (for tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedClock(pub u32);

impl Clock for FixedClock {
    fn now_secs(&self) -> u32 {
        self.0
    }
}

/// A clock that tests can move (`set`, `advance`) while a store uses it.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU32);

impl ManualClock {
    /// A clock at `secs`.
    pub fn new(secs: u32) -> ManualClock {
        ManualClock(AtomicU32::new(secs))
    }
    /// Sets the time.
    pub fn set(&self, secs: u32) {
        self.0.store(secs, Ordering::Relaxed);
    }
    /// Moves the time forward.
    pub fn advance(&self, secs: u32) {
        self.0.fetch_add(secs, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_secs(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }
}
