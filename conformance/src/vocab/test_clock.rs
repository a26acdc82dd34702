//! One test clock for both sides of a differential run.
//!
//! With the test clock on, the official library of every loaded version reads its `time()` from
//! [`mmkv_sys::test_clock`] (a link-time wrap, see that module for exactly what is interposed),
//! and the reader reads the same value through [`SharedClock`] (the reader's default clock in
//! [`crate::RealReader`]). A workload that must wait for a short expiry then moves the test time
//! on instead of sleeping ([`crate::vocab::clock`]'s `sleep_until_secs`, `now_secs` and
//! `official_now_secs` follow it). The clock starts at the real second and only moves forward, so expire durations near
//! `u32::MAX` wrap exactly as with the real clock.
//!
//! Off (the default in a process), both sides read the real clock: the official `time(nullptr)`
//! (on Linux the coarse clock, a tick behind the precise one) and the reader's `SystemClock`,
//! which reads that same clock. The report keeps one real-clock cell per expiring kind for the
//! newest version of each era ([`real_clock_tags`]), so that coarse-tick behaviour stays covered.
//!
//! The setting is process-wide: a report cell is a process of its own; tests that turn it on
//! belong in test binaries whose tests all agree on it.

use std::sync::atomic::{AtomicU64, Ordering};

use mmkv_reader::{Clock, SystemClock};
use mmkv_sys::versions::Tag;

/// The reader's clock in the harness: the test time when the test clock is on, otherwise the
/// official library's real clock (`time(nullptr)`, [`SystemClock`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct SharedClock;

impl Clock for SharedClock {
    fn now_secs(&self) -> u32 {
        mmkv_sys::test_clock::get().unwrap_or_else(|| SystemClock.now_secs())
    }
}

/// Turns the test clock on (both sides), starting at the real clock's current second; a clock
/// already on keeps its time. Returns the test time.
pub fn start() -> u32 {
    mmkv_sys::test_clock::advance_to(0)
}

/// Turns the test clock off: both sides read the real clock again.
pub fn stop() {
    mmkv_sys::test_clock::set(None);
}

/// The test time, `None` when the real clock is in use.
pub fn now() -> Option<u32> {
    mmkv_sys::test_clock::get()
}

/// Waits this process skipped by moving the test clock ([`advance_to`] calls that moved it).
static ADVANCES: AtomicU64 = AtomicU64::new(0);

/// With the test clock on: moves it to `secs` (never back) and returns true, so the caller need
/// not sleep. With the real clock: false.
pub fn advance_to(secs: u64) -> bool {
    let Some(before) = now() else {
        return false;
    };
    let after = mmkv_sys::test_clock::advance_to(u32::try_from(secs).unwrap_or(u32::MAX));
    if after > before {
        ADVANCES.fetch_add(1, Ordering::Relaxed);
    }
    true
}

/// How many times this process moved the test clock forward instead of sleeping.
pub fn advances() -> u64 {
    ADVANCES.load(Ordering::Relaxed)
}

/// The test clock on (`test: true`) or off until dropped, then the previous setting again (a
/// test time it had moves back to where it was).
#[must_use = "the setting ends when this is dropped"]
pub struct Scoped {
    before: Option<u32>,
}

impl Scoped {
    /// Turns the test clock on (`test: true`, see [`start`]) or off.
    pub fn new(test: bool) -> Scoped {
        let before = now();
        if test {
            start();
        } else {
            stop();
        }
        Scoped { before }
    }

    /// Turns the test clock on at `secs` (it may go back: a replay of a saved run).
    pub fn at(secs: u32) -> Scoped {
        let before = now();
        mmkv_sys::test_clock::set(Some(secs));
        Scoped { before }
    }
}

impl Drop for Scoped {
    fn drop(&mut self) {
        mmkv_sys::test_clock::set(self.before);
    }
}

/// Runs `f` with the test clock on (`test: true`) or off, restoring the previous setting after.
pub fn with<T>(test: bool, f: impl FnOnce() -> T) -> T {
    let _scoped = Scoped::new(test);
    f()
}

/// The eras whose newest version keeps the real clock in the report, as (major, minor) ranges:
/// v1.3.x (the first with expiration), v2.0–v2.3, v2.4.x.
const ERAS: [((u32, u32), (u32, u32)); 3] = [((1, 3), (1, 3)), ((2, 0), (2, 3)), ((2, 4), (2, 4))];

/// The versions whose expiring cells run on the real clock: among `live` (tags), the newest of
/// each era in [`ERAS`].
pub fn real_clock_tags<'a>(live: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    // Per era: the newest version seen, with its tag.
    type Newest<'t> = Option<((u32, u32, u32), &'t str)>;
    let mut newest: [Newest<'a>; 3] = [None; 3];
    for tag in live {
        let Some(t) = Tag::parse(tag) else { continue };
        let v = (t.major, t.minor, t.patch);
        for (i, (lo, hi)) in ERAS.iter().enumerate() {
            if (v.0, v.1) >= *lo && (v.0, v.1) <= *hi && newest[i].is_none_or(|(n, _)| v > n) {
                newest[i] = Some((v, tag));
            }
        }
    }
    newest
        .iter()
        .flatten()
        .map(|(_, t)| t.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_version_of_each_era_keeps_the_real_clock() {
        let live = [
            "v1.2.16", "v1.3.0", "v1.3.16", "v1.3.9", "v2.0.0", "v2.3.0", "v2.2.4", "v2.4.0",
            "v2.4.2", "v2.4.1",
        ];
        assert_eq!(real_clock_tags(live), ["v1.3.16", "v2.3.0", "v2.4.2"]);
        assert_eq!(real_clock_tags(["v1.1.2", "v2.0.1"]), ["v2.0.1"]);
        assert!(real_clock_tags(["v1.2.0"]).is_empty());
    }
}
