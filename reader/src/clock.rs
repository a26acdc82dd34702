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

/// The system clock, read as the official `getCurrentTimeInSecond` reads it: `time(nullptr)`.
/// On Linux (glibc) that is the coarse real-time clock, which the kernel advances once a tick
/// and so turns to a new second a few milliseconds after the precise one does (7 ms measured on
/// a CI machine): a key whose expire time is that second is still live for the official library
/// in that window, and so for this clock. Elsewhere, the real-time clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_secs(&self) -> u32 {
        // The official library truncates `time_t` to `u32` (`static_cast`); a clock before
        // the epoch or past 2106 is clamped here instead (no MMKV expire time is there).
        u32::try_from(time_secs().max(0)).unwrap_or(u32::MAX)
    }
}

/// `time(nullptr)`: the coarse real-time clock on Linux.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn time_secs() -> i64 {
    rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse).tv_sec
}

/// `time(nullptr)`: the real-time clock.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn time_secs() -> i64 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(_) => 0,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn precise_secs() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    /// `time(nullptr)` is the precise second or, for up to a tick after a second begins, the
    /// one before; never ahead.
    #[test]
    fn system_clock_is_the_precise_second_or_a_tick_behind() {
        for _ in 0..100 {
            let before = precise_secs();
            let now = u64::from(SystemClock.now_secs());
            let after = precise_secs();
            assert!(
                now + 1 >= before && now <= after,
                "SystemClock {now} outside [{} ..= {after}]",
                before - 1
            );
        }
    }

    #[test]
    fn expired_only_at_or_after_a_nonzero_expire_time() {
        assert!(!expired(0, || u32::MAX));
        assert!(!expired(101, || 100));
        assert!(expired(100, || 100));
        assert!(expired(99, || 100));
        // The clock is not asked for a key that never expires.
        assert!(!expired(0, || unreachable!()));
    }
}
