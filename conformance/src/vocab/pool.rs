//! A bounded pool for child-process work (the report's rows, the fault suites' writer runs, the
//! suite's grading): items run on `jobs` worker threads, results
//! come back in input order (so the report's rows and their text stay in the order of a
//! sequential run), and a progress bar shows units done / running / left.
//!
//! Each report cell is a child process that keeps one core busy on the test clock (its workloads
//! call the official library and the reader on one thread and never sleep), so the default is
//! one job per available core ([`default_jobs`]); `--jobs N` / `CONFORMANCE_JOBS` override it.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};

use indicatif::{ProgressBar, ProgressStyle};

/// One job per available core (2 when that cannot be read).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Runs `f` on every item with at most `jobs` (at least 1) at a time; returns the results in
/// the order of `items`. A panic in `f` propagates once the other workers are done.
pub fn run_ordered<T, R, F>(items: Vec<T>, jobs: usize, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    let mut out = Vec::with_capacity(items.len());
    let _ = run_in_order(items, jobs, f, |r| {
        out.push(r);
        Ok::<_, std::convert::Infallible>(ControlFlow::Continue(()))
    });
    out
}

/// Runs `f` on every item with at most `jobs` (at least 1) at a time and hands each result to
/// `each`, on the calling thread, in the order of `items`, as soon as it and every result
/// before it are in (so a caller can print progress and keep sequential bookkeeping while the
/// work runs in parallel). When `each` returns [`ControlFlow::Break`] or an error, no further
/// item starts; items already running finish and their results are dropped; the error is
/// returned. A panic in `f` or `each` propagates once the workers are done.
pub fn run_in_order<T, R, F, E, Er>(items: Vec<T>, jobs: usize, f: F, mut each: E) -> Result<(), Er>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
    E: FnMut(R) -> Result<ControlFlow<()>, Er>,
{
    let n = items.len();
    let queue = Mutex::new(items.into_iter().enumerate());
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        // Workers stop taking items once this drops (the caller stopped or panicked).
        struct StopOnDrop<'a>(&'a AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let _stop = StopOnDrop(&stop);
        let (tx, rx) = mpsc::channel::<(usize, R)>();
        for _ in 0..jobs.clamp(1, n.max(1)) {
            let tx = tx.clone();
            let (queue, stop, f) = (&queue, &stop, &f);
            s.spawn(move || loop {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let next = queue.lock().unwrap_or_else(|p| p.into_inner()).next();
                let Some((i, item)) = next else { break };
                if tx.send((i, f(item))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // Results that came in ahead of their turn.
        let mut waiting: BTreeMap<usize, R> = BTreeMap::new();
        let mut next = 0;
        // Ends when every worker is gone (all done, or one panicked: the scope re-raises it).
        for (i, r) in rx {
            waiting.insert(i, r);
            while let Some(r) = waiting.remove(&next) {
                next += 1;
                if each(r)?.is_break() {
                    return Ok(());
                }
            }
        }
        Ok(())
    })
}

/// A progress bar over units of work some of which run at once: the bar's position is the
/// units done, its message the units running (named) and left.
pub struct Progress {
    bar: ProgressBar,
    total: usize,
    /// Every update happens under this lock, the bar's included, so frames are never stale.
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    started: usize,
    done: usize,
    running: Vec<String>,
}

impl Progress {
    /// A bar over `total` units (drawn on stderr, hidden when that is not a terminal).
    pub fn new(total: u64) -> Progress {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} done {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        Progress {
            bar,
            total: usize::try_from(total).unwrap_or(usize::MAX),
            state: Mutex::new(State::default()),
        }
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut state);
        self.bar.set_position(state.done as u64);
        self.bar.set_message(format!(
            "{} running, {} left: {}",
            state.running.len(),
            self.total.saturating_sub(state.started),
            state.running.join(", ")
        ));
    }

    /// A unit named `name` starts.
    pub fn start(&self, name: &str) {
        self.update(|s| {
            s.started += 1;
            s.running.push(name.to_string());
        });
    }

    /// The unit named `name` is done.
    pub fn finish(&self, name: &str) {
        self.update(|s| {
            remove(&mut s.running, name);
            s.done += 1;
        });
    }

    /// A unit that needs no running (it is done as it starts).
    pub fn skip(&self) {
        self.update(|s| {
            s.started += 1;
            s.done += 1;
        });
    }

    /// Work outside the units (e.g. a live writer), shown as running until the guard drops.
    pub fn note(&self, name: &str) -> NoteGuard<'_> {
        self.update(|s| s.running.push(name.to_string()));
        NoteGuard {
            progress: self,
            name: name.to_string(),
        }
    }

    /// Removes the bar.
    pub fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
    }
}

fn remove(running: &mut Vec<String>, name: &str) {
    if let Some(i) = running.iter().position(|r| r == name) {
        running.remove(i);
    }
}

/// Work shown as running until dropped (see [`Progress::note`]).
pub struct NoteGuard<'a> {
    progress: &'a Progress,
    name: String,
}

impl Drop for NoteGuard<'_> {
    fn drop(&mut self) {
        self.progress.update(|s| remove(&mut s.running, &self.name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn results_keep_the_input_order_and_at_most_jobs_run_at_once() {
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let out = run_ordered((0..40u64).collect(), 3, |i| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            // Later items finish first when they can.
            std::thread::sleep(std::time::Duration::from_millis(40 - i));
            running.fetch_sub(1, Ordering::SeqCst);
            i * 2
        });
        assert_eq!(out, (0..40u64).map(|i| i * 2).collect::<Vec<_>>());
        assert!(peak.load(Ordering::SeqCst) <= 3);
        assert!(peak.load(Ordering::SeqCst) >= 2, "never ran two at once");
        assert!(run_ordered(Vec::<u8>::new(), 4, |x| x).is_empty());
        assert_eq!(run_ordered(vec![5], 0, |x| x + 1), vec![6]);
    }

    #[test]
    fn results_arrive_in_order_while_others_run_and_a_break_stops_new_items() {
        let started = AtomicUsize::new(0);
        let mut seen = Vec::new();
        let done: Result<(), ()> = run_in_order(
            (0..100u64).collect(),
            2,
            |i| {
                started.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(if i % 2 == 0 {
                    5
                } else {
                    1
                }));
                i
            },
            |i| {
                seen.push(i);
                Ok(if i == 9 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                })
            },
        );
        assert_eq!(done, Ok(()));
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        // Only the few items in flight when the caller stopped ran after it.
        let n = started.load(Ordering::SeqCst);
        assert!((10..20).contains(&n), "{n} items started");
    }
}
