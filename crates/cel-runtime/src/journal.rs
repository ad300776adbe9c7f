//! The journal of calls that reach outside an evaluation, so that each runs at most once.
//!
//! A host's function ([`Implementation::External`](crate::Implementation::External): a
//! closure the embedder registered, or a library's call into the host such as Kubernetes'
//! authorizer) may have effects and need not answer the same way twice. Native code that
//! stops early (over its cost limit, or before a call whose cost would cross it) is finished
//! by the interpreter, which evaluates the expression again from the start to stop exactly
//! where cel-go stops. So while native code runs, its external calls are recorded
//! ([`Scope::record`]), and the interpreter, when it meets the same call again, takes the
//! recorded answer ([`Scope::replay`]) instead of calling the host a second time.
//!
//! A recorded call is replayed to a call of the same closure with identical arguments
//! ([`Value::identical`]; opaque values written the same way), the oldest first; the interpreter makes the same calls in the
//! same order as native code, so this is the same call, and a call that matches nothing is
//! made for real. A journal holds at most [`MAX_RECORDED_CALLS`] calls: an evaluation that
//! makes more host calls than that has its later ones made again if the interpreter must
//! finish it.
//!
//! The journal is per thread and per evaluation: a scope restores the one it replaced when
//! it ends, and a host function runs with no journal at all, so an evaluation nested in
//! another (a host function that evaluates CEL, a variable computed on demand) neither
//! records into nor replays from the outer one.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use crate::{HostFn, Result, Value};

/// The most calls one journal records: 65,536 (a few MiB at most).
pub const MAX_RECORDED_CALLS: usize = 1 << 16;

/// How far past the oldest recorded call of a closure a replayed call is looked for.
const REPLAY_WINDOW: usize = 64;

thread_local! {
    /// What the evaluation running on this thread does with external calls.
    static MODE: RefCell<Mode> = const { RefCell::new(Mode::Off) };
}

/// What happens to external calls.
#[derive(Default)]
enum Mode {
    /// They are made, and nothing is kept.
    #[default]
    Off,
    /// They are made and their answers kept.
    Record(Journal),
    /// Their kept answers are given back; calls not kept are made.
    Replay(Journal),
}

/// External calls made by one evaluation, with their answers.
#[derive(Default)]
pub struct Journal {
    /// By the address of the closure called, in the order they were made.
    calls: HashMap<usize, VecDeque<RecordedCall>>,
    recorded: usize,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("recorded", &self.recorded)
            .finish_non_exhaustive()
    }
}

struct RecordedCall {
    args: Vec<Value>,
    answer: Result<Value>,
}

impl Journal {
    /// How many calls were recorded.
    pub fn len(&self) -> usize {
        self.recorded
    }

    /// Whether no call was recorded.
    pub fn is_empty(&self) -> bool {
        self.recorded == 0
    }

    fn record(&mut self, key: usize, args: &[Value], answer: &Result<Value>) {
        if self.recorded >= MAX_RECORDED_CALLS {
            return;
        }
        self.recorded += 1;
        self.calls.entry(key).or_default().push_back(RecordedCall {
            args: args.to_vec(),
            answer: answer.clone(),
        });
    }

    /// The answer recorded for this call, taken out of the journal.
    fn take(&mut self, key: usize, args: &[Value]) -> Option<Result<Value>> {
        let calls = self.calls.get_mut(&key)?;
        let same = |c: &RecordedCall| {
            c.args.len() == args.len() && c.args.iter().zip(args).all(|(a, b)| same_argument(a, b))
        };
        // Calls come back in the order they were made: the match is at the front, and a
        // bounded look past it keeps a replay linear whatever happens.
        let i = calls.iter().take(REPLAY_WINDOW).position(same)?;
        calls.remove(i).map(|c| c.answer)
    }
}

/// Whether two arguments are the same: identical values, or opaque values of one type
/// written the same way (each evaluation builds its own opaque values, such as the
/// authorizer's checks, which are only equal to themselves).
fn same_argument(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Opaque(x), Value::Opaque(y)) => {
            x.type_name() == y.type_name() && {
                let (mut wx, mut wy) = (String::new(), String::new());
                x.write_cel(&mut wx);
                y.write_cel(&mut wy);
                wx == wy
            }
        }
        _ => a.identical(b),
    }
}

/// The journal mode of this thread while it lasts; the previous one comes back when it
/// drops.
#[must_use = "the scope ends when it drops"]
pub struct Scope {
    outer: Option<Mode>,
}

impl Scope {
    /// Records the external calls made until the scope ends (see [`Scope::finish`]).
    pub fn record() -> Scope {
        Scope::enter(Mode::Record(Journal::default()))
    }

    /// Answers external calls from `journal` until the scope ends.
    pub fn replay(journal: Journal) -> Scope {
        Scope::enter(Mode::Replay(journal))
    }

    /// Neither records nor replays until the scope ends (an evaluation that may run inside
    /// another one's recording or replay).
    pub fn isolate() -> Scope {
        Scope::enter(Mode::Off)
    }

    fn enter(mode: Mode) -> Scope {
        Scope {
            outer: Some(MODE.with(|m| m.replace(mode))),
        }
    }

    /// Ends the scope, returning what it recorded (nothing if it was not recording).
    pub fn finish(mut self) -> Journal {
        let outer = self.outer.take().unwrap_or_default();
        match MODE.with(|m| m.replace(outer)) {
            Mode::Record(j) | Mode::Replay(j) => j,
            Mode::Off => Journal::default(),
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        if let Some(outer) = self.outer.take() {
            MODE.with(|m| *m.borrow_mut() = outer);
        }
    }
}

/// Makes an external call, or takes its answer from the journal being replayed; records it
/// when the journal is recording.
pub(crate) fn call(f: &HostFn, args: &[Value]) -> Result<Value> {
    // Outside any journal (every call but those of limited native evaluations and their
    // replays), there is nothing to record, replay or hide from the function.
    if MODE.with(|m| matches!(*m.borrow(), Mode::Off)) {
        return f(args);
    }
    let key = std::sync::Arc::as_ptr(f).cast::<()>() as usize;
    // The host function runs with no journal: an evaluation it makes is its own.
    let mut mode = MODE.with(|m| m.take());
    let replayed = match &mut mode {
        Mode::Replay(j) => j.take(key, args),
        _ => None,
    };
    let answer = replayed.unwrap_or_else(|| {
        let answer = f(args);
        if let Mode::Record(j) = &mut mode {
            j.record(key, args, &answer);
        }
        answer
    });
    MODE.with(|m| *m.borrow_mut() = mode);
    answer
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    /// A host function answering how many times it was called.
    fn counter() -> (HostFn, Arc<AtomicU64>) {
        let n = Arc::new(AtomicU64::new(0));
        let seen = n.clone();
        let f: HostFn = Arc::new(move |_args: &[Value]| {
            Ok(Value::Uint(seen.fetch_add(1, Ordering::Relaxed) + 1))
        });
        (f, n)
    }

    #[test]
    fn replay_gives_recorded_answers_and_calls_only_what_was_not_recorded() {
        let (f, n) = counter();
        let rec = Scope::record();
        assert_eq!(call(&f, &[Value::Int(1)]).unwrap(), Value::Uint(1));
        assert_eq!(call(&f, &[Value::Int(2)]).unwrap(), Value::Uint(2));
        let journal = rec.finish();
        assert_eq!(journal.len(), 2);
        let _replay = Scope::replay(journal);
        // The same calls get the same answers without calling again; `1u` is not `1`.
        assert_eq!(call(&f, &[Value::Int(1)]).unwrap(), Value::Uint(1));
        assert_eq!(call(&f, &[Value::Uint(2)]).unwrap(), Value::Uint(3));
        assert_eq!(call(&f, &[Value::Int(2)]).unwrap(), Value::Uint(2));
        assert_eq!(call(&f, &[Value::Int(1)]).unwrap(), Value::Uint(4));
        assert_eq!(n.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn scopes_nest_and_host_functions_run_outside_them() {
        let (f, _) = counter();
        let inner_calls: Arc<AtomicU64> = Arc::default();
        let seen = inner_calls.clone();
        let g = f.clone();
        // A host function that itself records (as an evaluation it makes would).
        let nested: HostFn = Arc::new(move |_args: &[Value]| {
            let inner = Scope::record();
            let r = call(&g, &[]);
            seen.store(inner.finish().len() as u64, Ordering::Relaxed);
            r
        });
        let outer = Scope::record();
        call(&nested, &[]).unwrap();
        {
            let _off = Scope::isolate();
            call(&f, &[]).unwrap();
        }
        let journal = outer.finish();
        assert_eq!(inner_calls.load(Ordering::Relaxed), 1);
        // The outer journal has the nested call only, not the inner or isolated ones.
        assert_eq!(journal.len(), 1);
        assert!(MODE.with(|m| matches!(*m.borrow(), Mode::Off)));
    }

    #[test]
    fn a_journal_is_bounded() {
        let (f, n) = counter();
        let rec = Scope::record();
        for i in 0..MAX_RECORDED_CALLS as i64 + 10 {
            call(&f, &[Value::Int(i)]).unwrap();
        }
        let journal = rec.finish();
        assert_eq!(journal.len(), MAX_RECORDED_CALLS);
        let _replay = Scope::replay(journal);
        let past = Value::Int(MAX_RECORDED_CALLS as i64 + 1);
        call(&f, &[past]).unwrap();
        assert_eq!(n.load(Ordering::Relaxed), MAX_RECORDED_CALLS as u64 + 11);
    }
}
