//! The harness's one clock. Two readings of real time matter: the precise second
//! (`CLOCK_REALTIME`, [`now_secs`]), with which the harness brackets an official `set`, and
//! the second the official library's `time(nullptr)` returns ([`official_now_secs`]), on Linux
//! the coarse clock, up to a tick behind. The reader's
//! [`SystemClock`](mmkv_reader::SystemClock) and `mmkv` read the latter, so every expiry
//! decision (official, reader, `mmkv dump` in the fault suite) is made on the same clock.
//! With the test clock on ([`test_clock`](crate::vocab::test_clock)), every function here
//! follows the test time instead, as the official library and the reader then do.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Seconds since the epoch on the precise clock (it can be a second ahead of
/// [`official_now_secs`] right after a second begins).
pub fn now_secs() -> u64 {
    if let Some(t) = crate::vocab::test_clock::now() {
        return u64::from(t);
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Sleeps until `now_secs() >= secs` and the official library's clock says so too: it reads
/// `time(nullptr)`, on Linux the coarse clock the kernel advances once a tick, so right after a
/// second begins it can still report the one before (7 ms behind on a CI machine). A check
/// made then would find a short expiry not yet passed for the official instance (a CI run,
/// whose reader still read the precise clock, failed so in three expiring kinds at once).
///
/// With the test clock on ([`crate::vocab::test_clock`]) it moves that clock to `secs` instead.
pub fn sleep_until_secs(secs: u64) {
    if crate::vocab::test_clock::advance_to(secs) {
        return;
    }
    loop {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        if now.as_secs() >= secs && u64::from(official_now_secs()) >= secs {
            return;
        }
        let left = Duration::from_secs(secs).saturating_sub(now);
        std::thread::sleep(left + Duration::from_millis(5));
    }
}

/// The seconds the official library's `time(nullptr)` returns now: the reader's
/// [`SystemClock`](mmkv_reader::SystemClock) (and `mmkv`) read that same clock.
/// (`u32`, as MMKV stores expire times).
/// With the test clock on, the test time.
pub fn official_now_secs() -> u32 {
    mmkv_reader::Clock::now_secs(&crate::vocab::test_clock::SharedClock)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After the wait, both clocks have reached the second: the precise one the harness reads
    /// and `time(nullptr)`'s, which the official library (and the reader) read. The CPUs are
    /// kept busy meanwhile, as in a CI run: a CPU that wakes from idle brings the coarse clock
    /// up to date, a busy one leaves it to the next tick.
    #[test]
    fn sleep_until_secs_waits_for_the_official_clock_too() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = AtomicBool::new(false);
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let behind = std::thread::scope(|s| {
            for _ in 0..cpus {
                s.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                });
            }
            let behind = (0..3).find_map(|_| {
                let target = now_secs() + 1;
                sleep_until_secs(target);
                let official = u64::from(official_now_secs());
                (official < target).then_some((official, target))
            });
            stop.store(true, Ordering::Relaxed);
            behind
        });
        assert_eq!(
            behind, None,
            "time(nullptr) was still at the first second after the wait for the second"
        );
    }
}
