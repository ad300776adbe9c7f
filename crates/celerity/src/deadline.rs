//! Deadlines for evaluations: a flag that a process-wide watchdog thread sets once a time
//! has passed, for [`Program::eval_interruptible`](crate::Program::eval_interruptible).
//!
//! Cost limits bound what an expression may do, but a host also needs a bound that holds
//! against a bug (an evaluation that should have finished and has not): admission requests
//! run under one (`celerity_kubernetes::admission::PolicySet::admit`). The watchdog is one
//! thread for the whole process, started by the first deadline, sleeping until the earliest
//! one; a deadline dropped before it passes is forgotten, so the watchdog's list holds only
//! the deadlines alive.
//!
//! `wasm32-unknown-unknown` has neither a clock (`Instant::now` panics there) nor threads:
//! on it a deadline reads no clock and never passes by itself; the host bounds time from
//! outside (the playground ends its Web Worker). Platforms with a clock but no threads
//! (`wasm32-wasip1`) tell the time in [`Deadline::passed`], but nothing sets the flag.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// A point in time after which an evaluation must stop. Hand [`Deadline::flag`] to
/// [`Program::eval_interruptible`](crate::Program::eval_interruptible) (or to an admission
/// request's bindings): once the deadline passes the flag is set, and evaluations reading
/// it end at their next comprehension step with "operation interrupted".
///
/// ```
/// use std::time::Duration;
/// use celerity::Deadline;
///
/// let d = Deadline::after(Duration::from_millis(10));
/// assert!(!d.passed());
/// std::thread::sleep(Duration::from_millis(200));
/// assert!(d.passed());
/// ```
#[derive(Debug)]
pub struct Deadline {
    flag: Arc<AtomicBool>,
    /// When it passes and its number, in the watchdog's list; `None` without a clock.
    key: Option<(Instant, u64)>,
    limit: Duration,
}

/// Whether the platform has a clock: `Instant::now` panics on `wasm32-unknown-unknown`.
const HAS_CLOCK: bool = !cfg!(all(target_family = "wasm", target_os = "unknown"));

impl Deadline {
    /// A deadline `limit` from now.
    pub fn after(limit: Duration) -> Deadline {
        let flag = Arc::new(AtomicBool::new(false));
        if !HAS_CLOCK {
            return Deadline {
                flag,
                key: None,
                limit,
            };
        }
        // A limit too far away to represent is a year: as good as never.
        let now = Instant::now();
        let at = now
            .checked_add(limit)
            .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600));
        let key = (at, NEXT_ID.fetch_add(1, Ordering::Relaxed));
        let w = watchdog();
        lock(&w.pending).insert(key, flag.clone());
        w.wake.notify_one();
        Deadline {
            flag,
            key: Some(key),
            limit,
        }
    }

    /// The flag the watchdog sets when the deadline passes.
    pub fn flag(&self) -> &Arc<AtomicBool> {
        &self.flag
    }

    /// Whether the deadline has passed (the watchdog may not have set the flag yet).
    pub fn passed(&self) -> bool {
        self.flag.load(Ordering::Relaxed) || self.key.is_some_and(|(at, _)| Instant::now() >= at)
    }

    /// How long after its start the deadline falls.
    pub fn limit(&self) -> Duration {
        self.limit
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        if let Some(key) = &self.key {
            lock(&watchdog().pending).remove(key);
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// The deadlines alive, by when they pass, and the condition the watchdog sleeps on.
struct Watchdog {
    pending: Mutex<BTreeMap<(Instant, u64), Arc<AtomicBool>>>,
    wake: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn watchdog() -> &'static Watchdog {
    static WATCHDOG: OnceLock<&'static Watchdog> = OnceLock::new();
    WATCHDOG.get_or_init(|| {
        let w: &'static Watchdog = Box::leak(Box::new(Watchdog {
            pending: Mutex::new(BTreeMap::new()),
            wake: Condvar::new(),
        }));
        // Without a thread (a platform that has none), deadlines never pass: evaluations
        // are still bounded by their cost limits.
        let _ = std::thread::Builder::new()
            .name("celerity-deadlines".into())
            .spawn(move || watch(w));
        w
    })
}

/// The watchdog's loop: set the flags of the deadlines that passed, then sleep until the
/// next one (or until a new deadline arrives).
fn watch(w: &'static Watchdog) {
    let mut pending = lock(&w.pending);
    loop {
        let now = Instant::now();
        while let Some(entry) = pending.first_entry() {
            if entry.key().0 > now {
                break;
            }
            entry.remove().store(true, Ordering::Relaxed);
        }
        pending = match pending.first_key_value().map(|(k, _)| k.0) {
            Some(next) => {
                let wait = next.saturating_duration_since(now);
                w.wake
                    .wait_timeout(pending, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => w.wake.wait(pending).unwrap_or_else(PoisonError::into_inner),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_deadline_is_forgotten() {
        let d = Deadline::after(Duration::from_secs(3600));
        let key = d.key.expect("a clock");
        assert!(lock(&watchdog().pending).contains_key(&key));
        drop(d);
        assert!(!lock(&watchdog().pending).contains_key(&key));
    }

    #[test]
    fn the_watchdog_sets_the_flags_of_deadlines_that_passed() {
        let late = Deadline::after(Duration::from_secs(3600));
        let soon = Deadline::after(Duration::from_millis(1));
        let start = Instant::now();
        while !soon.flag().load(Ordering::Relaxed) && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(soon.flag().load(Ordering::Relaxed));
        assert!(!late.flag().load(Ordering::Relaxed));
        assert!(!late.passed());
    }
}
