//! Interrupting an evaluation ([`celerity::Program::eval_interruptible`]): a flag the host
//! sets, from another thread, stops the evaluation at its next comprehension iteration with
//! "operation interrupted", on both backends.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use celerity::{Backend, Env, ErrorKind, MapActivation, Program, ProgramOptions, Value};

fn program(expr: &str, backend: Backend, track_cost: bool) -> Program {
    let env = Env::builder().all_extension_libraries().build();
    let ast = env.compile(expr).expect("compiles");
    let options = ProgramOptions::default()
        .backend(backend)
        .track_cost(track_cost);
    env.program_with(&ast, options).expect("program")
}

const BACKENDS: [(Backend, bool); 3] = [
    (Backend::Interpreter, true),
    (Backend::Jit, true),
    (Backend::Jit, false),
];

#[test]
fn a_flag_set_before_stops_at_the_first_iteration() {
    for (backend, track) in BACKENDS {
        let p = program("[1, 2, 3].all(x, x > 0)", backend, track);
        let stop = AtomicBool::new(true);
        let (r, _) = p.eval_interruptible(&MapActivation::new(), &stop);
        let e = r.expect_err("interrupted");
        assert_eq!(e.kind, ErrorKind::Cancelled, "{backend:?}");
        assert_eq!(e.message, "operation interrupted");
        // `&&` and `||` do not absorb it.
        let p = program("true || [1].exists(x, x > 0) || false", backend, track);
        assert_eq!(
            p.eval_interruptible(&MapActivation::new(), &stop).0,
            Ok(Value::Bool(true)),
            "short-circuited before the loop"
        );
        let p = program("[1].exists(x, x > 0) || true", backend, track);
        let e = p.eval_interruptible(&MapActivation::new(), &stop).0;
        assert_eq!(e.unwrap_err().kind, ErrorKind::Cancelled, "{backend:?}");
        // Unset, the same program runs to the end.
        stop.store(false, Ordering::Relaxed);
        assert_eq!(
            p.eval_interruptible(&MapActivation::new(), &stop).0,
            Ok(Value::Bool(true))
        );
    }
}

#[test]
fn another_thread_stops_an_endless_evaluation() {
    // 10^10 iterations: only the interrupt ends it.
    let expr = "lists.range(100000).all(i, lists.range(100000).all(j, j >= 0))";
    for (backend, track) in BACKENDS {
        let p = Arc::new(program(expr, backend, track));
        let stop = Arc::new(AtomicBool::new(false));
        let (done, finished) = mpsc::channel();
        let (p2, stop2) = (p.clone(), stop.clone());
        std::thread::spawn(move || {
            let (r, _) = p2.eval_interruptible(&MapActivation::new(), &stop2);
            let _ = done.send(r);
        });
        std::thread::sleep(Duration::from_millis(20));
        stop.store(true, Ordering::Relaxed);
        // A bound on how long stopping may take, not a measurement: without the check the
        // evaluation would run for hours.
        let r = finished
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{backend:?}: the evaluation did not stop"));
        assert_eq!(r.unwrap_err().kind, ErrorKind::Cancelled, "{backend:?}");
    }
}
