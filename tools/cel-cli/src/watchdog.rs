//! The command's last defence against a hang: work that runs far past its time limit ends
//! the process with an error naming it, instead of leaving the user's terminal or CI job
//! waiting forever.
//!
//! The library stops evaluations cooperatively at their deadline (admission requests answer
//! `504 Timeout`); the watchdog is for what that cannot reach, a bug that blocks instead of
//! computing. It is one thread, started with the first watch, which looks at the watched
//! work a few times a second.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The status the process ends with when work did not finish.
pub(crate) const DID_NOT_FINISH: i32 = 3;

/// How long past its own time limit work may run before the watchdog ends the process.
pub(crate) const GRACE: Duration = Duration::from_secs(10);

/// Watches work for running past a limit.
#[derive(Clone)]
pub(crate) struct Watchdog {
    inner: Arc<Inner>,
}

struct Inner {
    limit: Duration,
    running: Mutex<BTreeMap<u64, (Instant, String)>>,
    next: AtomicU64,
}

/// One piece of work being watched; dropping it ends the watch.
pub(crate) struct Watched {
    inner: Arc<Inner>,
    id: u64,
}

impl Watchdog {
    /// A watchdog that ends the process when watched work runs longer than `limit`.
    pub(crate) fn start(limit: Duration) -> Watchdog {
        let inner = Arc::new(Inner {
            limit,
            running: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(0),
        });
        let watcher = inner.clone();
        let every = (limit / 10).clamp(Duration::from_millis(10), Duration::from_millis(500));
        // Without a thread the command still runs; only this defence is missing.
        let _ = std::thread::Builder::new()
            .name("cel-watchdog".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(every);
                    watcher.check();
                }
            });
        Watchdog { inner }
    }

    /// Starts watching `what` (a file and document, say), until the result is dropped.
    pub(crate) fn watch(&self, what: impl Into<String>) -> Watched {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.inner.running).insert(id, (Instant::now(), what.into()));
        Watched {
            inner: self.inner.clone(),
            id,
        }
    }
}

impl Inner {
    fn check(&self) {
        let running = lock(&self.running);
        if let Some((_, (_, what))) = running
            .iter()
            .find(|(_, (start, _))| start.elapsed() > self.limit)
        {
            eprintln!(
                "error: {what}: did not finish within {:?}; stopping (this is a bug in cel: please report it with the input)",
                self.limit
            );
            std::process::exit(DID_NOT_FINISH);
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        lock(&self.inner.running).remove(&self.id);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
