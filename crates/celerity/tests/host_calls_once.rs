//! Host functions run at most once per call an expression makes, on either backend, under a
//! cost limit too: native code that goes over its limit is finished by the interpreter
//! (which stops exactly where cel-go does), and the host calls native code already made are
//! given back to it from a journal rather than made again.
//!
//! Each host function here logs its arguments; every call passes distinct arguments, so a
//! repeated entry in the log is a call made twice. Without the journal, every limited native
//! evaluation below repeats all its calls.

use std::sync::{Arc, Mutex};

use celerity::kubernetes::{AuthorizationAttributes, Authorizer, Decision, authorizer_value};
use celerity::{
    Backend, Env, ErrorKind, KubernetesEnv, MapActivation, Program, ProgramOptions, Value,
};

/// The arguments of every call, in order.
type CallLog = Arc<Mutex<Vec<String>>>;

fn take(log: &CallLog) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

fn assert_no_repeats(log: &[String], what: &str) {
    let mut seen = std::collections::HashSet::new();
    for entry in log {
        assert!(
            seen.insert(entry),
            "{what}: {entry} was called twice: {log:?}"
        );
    }
}

struct Run {
    result: Result<Value, (ErrorKind, String)>,
    cost: u64,
    calls: Vec<String>,
}

/// The program of `expr` on `backend`.
fn program(env: &Env, expr: &str, backend: Backend) -> Program {
    let ast = env.compile(expr).unwrap();
    let options = ProgramOptions::default().backend(backend);
    let program = env.program_with(&ast, options).unwrap();
    assert_eq!(program.backend(), backend, "{expr}");
    program
}

fn run(program: &Program, limit: Option<u64>, vars: &MapActivation, log: &CallLog) -> Run {
    take(log);
    let (result, details) = program.clone().with_cost_limit(limit).eval_details(vars);
    Run {
        result: result.map_err(|e| (e.kind, e.message)),
        cost: details.actual_cost,
        calls: take(log),
    }
}

/// Runs `expr` under every limit from 0 to a little past its full cost on both backends:
/// the same result and cost, no call made twice, and native code makes at most the calls
/// of one more iteration than the interpreter (it notices the limit at the iteration's
/// end). Returns how many limits stopped the evaluation.
fn check_under_limits(env: &Env, expr: &str, vars: &MapActivation, log: &CallLog) -> usize {
    let interpreted = program(env, expr, Backend::Interpreter);
    let compiled = program(env, expr, Backend::Jit);
    let full = run(&interpreted, None, vars, log);
    assert!(full.result.is_ok(), "{expr}: {:?}", full.result);
    assert!(!full.calls.is_empty(), "{expr} calls nothing");
    let mut stopped = 0;
    for limit in 0..=full.cost + 2 {
        let interp = run(&interpreted, Some(limit), vars, log);
        let native = run(&compiled, Some(limit), vars, log);
        let at = format!("{expr} under {limit}");
        assert_eq!(native.result, interp.result, "{at}");
        assert_eq!(native.cost, interp.cost, "{at}");
        assert_no_repeats(&interp.calls, &at);
        assert_no_repeats(&native.calls, &at);
        // The interpreter's calls are where native code's start.
        assert!(
            native.calls.starts_with(&interp.calls),
            "{at}: {:?} / {:?}",
            native.calls,
            interp.calls
        );
        assert!(native.calls.len() <= interp.calls.len() + 1, "{at}");
        if let Err((kind, message)) = &interp.result {
            assert_eq!(*kind, ErrorKind::CostLimitExceeded, "{at}: {message}");
            stopped += 1;
        }
    }
    stopped
}

/// An environment with the extension libraries and `tick(i)`, a host function that logs
/// its call and answers differently each time: the number of calls so far.
fn ticking_env() -> (Env, CallLog) {
    let log: CallLog = Arc::default();
    let seen = log.clone();
    let env = Env::builder()
        .all_extension_libraries()
        .host_function("tick", move |i: i64| -> i64 {
            let mut log = seen.lock().unwrap();
            log.push(format!("tick({i})"));
            log.len() as i64
        })
        .build();
    (env, log)
}

#[test]
fn a_counting_host_function_runs_once_per_call_under_every_limit() {
    let (env, log) = ticking_env();
    let vars = MapActivation::new();
    for expr in [
        "lists.range(30).all(i, tick(i) > 0)",
        "lists.range(12).map(i, tick(i)).size() == 12",
        "[1, 2, 3].exists(x, lists.range(5).exists(y, tick(x * 10 + y) < 0))",
        "tick(-1) + tick(-2) > 0 && lists.range(8).filter(i, tick(i) % 2 == 0).size() >= 0",
    ] {
        let stopped = check_under_limits(&env, expr, &vars, &log);
        assert!(stopped > 10, "{expr}: only {stopped} limits stopped it");
    }
}

#[test]
fn without_a_limit_native_code_calls_exactly_as_the_interpreter() {
    let (env, log) = ticking_env();
    let expr = "lists.range(20).map(i, tick(i))";
    let vars = MapActivation::new();
    let interp = run(
        &program(&env, expr, Backend::Interpreter),
        None,
        &vars,
        &log,
    );
    let native = run(&program(&env, expr, Backend::Jit), None, &vars, &log);
    assert_eq!(native.calls, interp.calls);
    assert_eq!(native.result, interp.result);
    let want: Vec<Value> = (1..=20).map(Value::Int).collect();
    assert_eq!(native.result, Ok(Value::list(want)));
}

/// Logs the path of every non-resource check and allows it.
struct LoggingAuthorizer(CallLog);

impl Authorizer for LoggingAuthorizer {
    fn authorize(&self, attributes: &AuthorizationAttributes) -> Result<Decision, String> {
        self.0.lock().unwrap().push(attributes.path.clone());
        Ok(Decision::allow(""))
    }
}

#[test]
fn the_kubernetes_authorizer_is_asked_once_per_check() {
    let log: CallLog = Arc::default();
    let env = KubernetesEnv::newest().builder().build();
    let vars = MapActivation::new().with(
        "authorizer",
        authorizer_value(None, Arc::new(LoggingAuthorizer(log.clone()))),
    );
    let expr = "lists.range(10).all(i, authorizer.path('/p' + string(i)).check('get').allowed())";
    let stopped = check_under_limits(&env, expr, &vars, &log);
    assert!(stopped > 10, "only {stopped} limits stopped it");
}

#[test]
fn a_journal_does_not_leak_into_an_evaluation_made_by_a_host_function() {
    // A host function that evaluates another program calling the same host function:
    // the inner evaluation's calls are its own (made, not replayed from the outer
    // journal), and the outer ones still run once.
    let log: CallLog = Arc::default();
    let seen = log.clone();
    let inner_env = Env::builder()
        .host_function("tick", move |i: i64| -> i64 {
            let mut log = seen.lock().unwrap();
            log.push(format!("tick({i})"));
            log.len() as i64
        })
        .build();
    let inner = inner_env
        .program_with(
            &inner_env.compile("tick(1000) + tick(1001)").unwrap(),
            ProgramOptions::default().backend(Backend::Jit),
        )
        .unwrap()
        .with_cost_limit(Some(100));
    let seen = log.clone();
    let env = Env::builder()
        .all_extension_libraries()
        .host_function("outer", move |i: i64| -> i64 {
            seen.lock().unwrap().push(format!("outer({i})"));
            match inner.eval(&MapActivation::new()) {
                Ok(Value::Int(n)) => n,
                other => panic!("{other:?}"),
            }
        })
        .build();
    let expr = "lists.range(4).all(i, outer(i) > 0)";
    let vars = MapActivation::new();
    let compiled = program(&env, expr, Backend::Jit);
    let full = run(&compiled, None, &vars, &log);
    assert_eq!(full.calls.len(), 12, "{:?}", full.calls);
    for limit in 0..=full.cost {
        let native = run(&compiled, Some(limit), &vars, &log);
        let outer: Vec<&String> = native
            .calls
            .iter()
            .filter(|c| c.starts_with("outer"))
            .collect();
        let inner_calls = native.calls.len() - outer.len();
        // Every outer call made its own two inner calls, and none ran twice.
        assert_eq!(inner_calls, 2 * outer.len(), "{:?}", native.calls);
        let outer: Vec<String> = outer.into_iter().cloned().collect();
        assert_no_repeats(&outer, &format!("under {limit}"));
        if limit < full.cost {
            let kind = native.result.as_ref().map_err(|(kind, _)| *kind);
            assert_eq!(kind, Err(ErrorKind::CostLimitExceeded), "under {limit}");
        }
    }
}
