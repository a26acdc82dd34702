//! A run's hold on the process while it uses official instances in-process: the versions
//! whose multi-process writer loses its process lock (an exceptions-table row) must not
//! share the process with other runs.

use std::cell::Cell;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::judge::exceptions::{accepted, Difference, Scope};
use crate::vocab::kind::{ModeKind, StoreKind};

/// A run's hold on the process while it uses official instances in-process: shared for most
/// runs, exclusive for a run whose version and kind lose the official process lock
/// ([`Difference::WriterLosesProcessLock`](crate::judge::exceptions::Difference::WriterLosesProcessLock),
/// v1.2.16–v1.3.0 multi-process). Those versions close the meta file in `clearMemoryCache()`
/// and keep `flock`ing its old descriptor number, which any thread's next `open()` can take: in
/// a process where other threads run workloads at the same time (the parallel tests of one
/// test binary), the instance then locks, and can wait forever on, other runs' files. Holding
/// the process alone leaves the descriptor numbers it frees to its own run, as in the report's
/// one-cell child processes. A thread that already holds it gets a free nested hold (no
/// self-deadlock).
pub struct ProcessHold {
    guard: Option<Hold>,
}

/// The lock behind a [`ProcessHold`] (kept only to be released on drop).
#[allow(dead_code)]
enum Hold {
    Shared(RwLockReadGuard<'static, ()>),
    Alone(RwLockWriteGuard<'static, ()>),
}

static PROCESS: RwLock<()> = RwLock::new(());

thread_local! {
    /// This thread holds [`PROCESS`] (through its outermost [`ProcessHold`]).
    static HELD: Cell<bool> = const { Cell::new(false) };
}

impl ProcessHold {
    /// Whether this hold has the process to itself.
    pub fn alone(&self) -> bool {
        matches!(self.guard, Some(Hold::Alone(_)))
    }
}

impl Drop for ProcessHold {
    fn drop(&mut self) {
        if self.guard.is_some() {
            HELD.with(|h| h.set(false));
        }
    }
}

/// Whether runs of `tag` with `kind` must have the process to themselves (see
/// [`ProcessHold`]): the exceptions table's rows for the lost process lock, in either
/// encryption state (a `reKey` can change it within a run).
pub fn needs_process_alone(tag: &str, kind: StoreKind) -> bool {
    kind.mode() == ModeKind::Multi
        && [false, true].into_iter().any(|encrypted| {
            Scope::new(tag, encrypted, true)
                .is_some_and(|s| accepted(Difference::WriterLosesProcessLock, &s).is_some())
        })
}

/// Holds the process for a run of `kind` by the versions `tags` (see [`ProcessHold`]): alone
/// when one of `tags` needs it (waiting until no other run holds it), else shared (waiting
/// only while a run holds it alone).
pub fn hold_process<'a>(tags: impl IntoIterator<Item = &'a str>, kind: StoreKind) -> ProcessHold {
    if HELD.with(|h| h.replace(true)) {
        return ProcessHold { guard: None };
    }
    // A run that panicked while holding the lock leaves nothing it protects inconsistent.
    let guard = if tags.into_iter().any(|t| needs_process_alone(t, kind)) {
        Hold::Alone(PROCESS.write().unwrap_or_else(PoisonError::into_inner))
    } else {
        Hold::Shared(PROCESS.read().unwrap_or_else(PoisonError::into_inner))
    };
    ProcessHold { guard: Some(guard) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn only_the_lock_losing_multi_process_runs_need_the_process_alone() {
        for (tag, kind, alone) in [
            ("v1.2.16", StoreKind::Multi, true),
            ("v1.3.0", StoreKind::Multi, true),
            ("v1.2.15", StoreKind::Multi, false),
            ("v1.3.1", StoreKind::Multi, false),
            ("v1.2.16", StoreKind::Plain, false),
            ("v1.3.0", StoreKind::Aes128, false),
        ] {
            assert_eq!(needs_process_alone(tag, kind), alone, "{tag} {kind}");
        }
        let mixed = hold_process(["v2.4.2", "v1.3.0"], StoreKind::Multi);
        assert!(
            mixed.alone(),
            "a migration through v1.3.0 holds the process alone"
        );
    }

    #[test]
    fn an_alone_hold_keeps_other_threads_out_and_nested_holds_are_free() {
        let hold = hold_process(["v1.2.16"], StoreKind::Multi);
        assert!(hold.alone());
        // Nested on the same thread: returns at once (no self-deadlock), holds nothing more.
        let nested = hold_process(["v2.4.2"], StoreKind::Plain);
        assert!(!nested.alone());
        drop(nested);
        let entered = Arc::new(AtomicBool::new(false));
        let other = {
            let entered = Arc::clone(&entered);
            std::thread::spawn(move || {
                let _h = hold_process(["v2.4.2"], StoreKind::Plain);
                entered.store(true, Ordering::SeqCst);
            })
        };
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            !entered.load(Ordering::SeqCst),
            "another run entered while one held the process alone"
        );
        drop(hold);
        other.join().unwrap();
        assert!(entered.load(Ordering::SeqCst));
        // The outermost hold's end cleared the thread's mark: a new hold takes the lock again.
        assert!(hold_process(["v1.3.0"], StoreKind::Multi).alone());
    }
}
