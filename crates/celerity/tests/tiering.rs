//! Tiered compilation under [`Backend::Auto`]: the [`Backend::AUTO_JIT_AFTER`]th evaluation
//! submits one compile task (whatever the number of threads evaluating), every evaluation is
//! interpreted until the task has run, then runs native code with the same answers; the
//! outcome (compiled, declined, failed) shows in [`Program::native_status`] and reaches the
//! environment's compile hook.
//!
//! Most tests give the environment an executor that only collects the tasks, so the test
//! decides when a compile runs; one waits for the default background thread.

use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use celerity::{
    Backend, CompileTask, DeclineReason, Env, EnvBuilder, EvalDetails, MapActivation, NativeStatus,
    Program, Type, Value,
};

/// A rule without comprehensions: they compile to loops, whose native code trips a debug
/// assertion in Cranelift in unoptimised test builds (an issue of `cel-jit`, not of
/// tiering), and these tests should hold in every profile.
const RULE: &str = "x > 0 && s.startsWith('ab') && size(l) == 3 && l[2] < x";

fn builder() -> EnvBuilder {
    Env::builder()
        .all_extension_libraries()
        .variable("x", Type::Int)
        .variable("s", Type::String)
        .variable("l", Type::list(Type::Int))
}

fn vars() -> MapActivation {
    let l = Value::list(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
    MapActivation::new()
        .with("x", 7i64)
        .with("s", "abc")
        .with("l", l)
}

/// The tasks an environment's programs submitted, not yet run.
#[derive(Clone, Default)]
struct Collected(Arc<Mutex<Vec<CompileTask>>>);

impl Collected {
    fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    fn take(&self) -> Vec<CompileTask> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// What the compile hook heard: the expression, the backend that asked, and the outcome.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<(String, Backend, NativeStatus)>>>);

impl Heard {
    fn all(&self) -> Vec<(String, Backend, NativeStatus)> {
        self.0.lock().unwrap().clone()
    }

    /// `builder` with a compile hook that keeps every report here.
    fn listen(&self, builder: EnvBuilder) -> EnvBuilder {
        let hook = self.clone();
        builder.on_native_compile(move |report| {
            let entry = (
                report.expression.to_string(),
                report.backend,
                report.outcome.clone(),
            );
            hook.0.lock().unwrap().push(entry);
        })
    }
}

/// An environment whose compile tasks are collected, and whose compile reports are kept.
fn collecting_env() -> (Env, Collected, Heard) {
    let tasks = Collected::default();
    let heard = Heard::default();
    let sink = tasks.clone();
    let env = heard
        .listen(builder())
        .compile_executor(move |task| sink.0.lock().unwrap().push(task))
        .build();
    (env, tasks, heard)
}

fn program(env: &Env, expr: &str) -> Program {
    let ast = env
        .compile(expr)
        .unwrap_or_else(|e| panic!("{expr:.60}: {e}"));
    env.program(&ast).unwrap()
}

fn eval(p: &Program) -> (Value, EvalDetails) {
    let (result, details) = p.eval_details(&vars());
    (result.expect("evaluates"), details)
}

#[test]
fn the_threshold_evaluation_submits_one_compile_and_everything_is_interpreted_until_it_runs() {
    let (env, tasks, heard) = collecting_env();
    let p = program(&env, RULE);
    assert_eq!(p.native_status(), NativeStatus::Pending);
    for _ in 1..Backend::AUTO_JIT_AFTER {
        assert_eq!(eval(&p).1.backend, Backend::Interpreter);
    }
    assert_eq!(
        tasks.count(),
        0,
        "nothing is submitted before the threshold"
    );
    assert_eq!(p.native_status(), NativeStatus::Pending);

    let (interpreted, details) = eval(&p);
    assert_eq!(interpreted, Value::Bool(true));
    assert_eq!(details.backend, Backend::Interpreter);
    assert_eq!(
        tasks.count(),
        1,
        "the threshold evaluation submits the compile"
    );
    assert_eq!(p.native_status(), NativeStatus::Compiling);
    for _ in 0..3 * Backend::AUTO_JIT_AFTER {
        assert_eq!(eval(&p), (interpreted.clone(), details.clone()));
    }
    assert_eq!(
        tasks.count(),
        1,
        "no second compile while the first is pending"
    );
    assert_eq!(p.backend(), Backend::Interpreter);
    assert!(heard.all().is_empty());

    for task in tasks.take() {
        task.run();
    }
    assert_eq!(p.native_status(), NativeStatus::Compiled);
    assert_eq!(p.backend(), Backend::Jit);
    let (native, native_details) = eval(&p);
    assert_eq!(native, interpreted);
    assert_eq!(native_details.backend, Backend::Jit);
    assert_eq!(native_details.actual_cost, details.actual_cost);
    assert_eq!(
        heard.all(),
        [(RULE.to_string(), Backend::Auto, NativeStatus::Compiled)]
    );
}

#[test]
fn concurrent_evaluations_submit_exactly_one_compile_and_never_wait_for_it() {
    const THREADS: usize = 8;
    let (env, tasks, heard) = collecting_env();
    let p = program(&env, RULE);
    let reference = eval(&p);
    let start = Barrier::new(THREADS);
    let per_thread = 2 * Backend::AUTO_JIT_AFTER as usize;
    // Every thread crosses the threshold together; the task is not run, so an evaluation
    // that waited for the compile would never return.
    let seen: Vec<Vec<(Value, EvalDetails)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    (0..per_thread).map(|_| eval(&p)).collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for results in &seen {
        assert!(results.iter().all(|r| *r == reference), "{results:?}");
    }
    assert_eq!(tasks.count(), 1);
    assert_eq!(p.native_status(), NativeStatus::Compiling);

    tasks.take().into_iter().for_each(CompileTask::run);
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                let (value, details) = eval(&p);
                assert_eq!(value, reference.0);
                assert_eq!(details.backend, Backend::Jit);
                assert_eq!(details.actual_cost, reference.1.actual_cost);
            });
        }
    });
    assert_eq!(heard.all().len(), 1, "one compile, one report");
}

#[test]
fn a_task_whose_program_was_dropped_does_nothing() {
    let (env, tasks, heard) = collecting_env();
    let p = program(&env, RULE);
    let clone = p.clone().with_cost_limit(Some(10_000));
    for _ in 0..Backend::AUTO_JIT_AFTER {
        eval(&clone);
    }
    assert_eq!(tasks.count(), 1, "clones share their tiering");
    assert_eq!(p.native_status(), NativeStatus::Compiling);
    drop(p);
    drop(clone);
    tasks.take().into_iter().for_each(CompileTask::run);
    assert!(heard.all().is_empty(), "no compile ran: {:?}", heard.all());
}

#[test]
fn a_task_dropped_without_running_leaves_the_program_interpreted_and_says_so() {
    let (env, tasks, heard) = collecting_env();
    let p = program(&env, RULE);
    for _ in 0..Backend::AUTO_JIT_AFTER {
        eval(&p);
    }
    drop(tasks.take());
    let NativeStatus::Failed { message } = p.native_status() else {
        panic!("{:?}", p.native_status());
    };
    assert!(message.contains("dropped without running"), "{message}");
    assert!(matches!(
        heard.all().as_slice(),
        [(_, Backend::Auto, NativeStatus::Failed { .. })]
    ));
    for _ in 0..2 * Backend::AUTO_JIT_AFTER {
        let (value, details) = eval(&p);
        assert_eq!(value, Value::Bool(true));
        assert_eq!(details.backend, Backend::Interpreter);
    }
    assert_eq!(tasks.count(), 0, "a failed program is not compiled again");
}

#[test]
fn expressions_over_the_native_code_budget_are_tried_then_declined() {
    let (env, tasks, heard) = collecting_env();
    // About 12,000 AST nodes (under `Backend::AUTO_MAX_NODES`, so `Auto` tries), over
    // 3,000 IR instructions.
    let expr = vec!["x == 7"; 3_000].join(" && ");
    let p = program(&env, &expr);
    for _ in 0..Backend::AUTO_JIT_AFTER {
        eval(&p);
    }
    tasks.take().into_iter().for_each(CompileTask::run);
    let declined = p.native_status();
    assert!(
        matches!(
            &declined,
            NativeStatus::Declined {
                reason: DeclineReason::TooLarge { budget }
            } if *budget > 0
        ),
        "{declined:?}"
    );
    assert_eq!(
        heard.all(),
        [(expr.clone(), Backend::Auto, declined.clone())]
    );
    let (value, details) = eval(&p);
    assert_eq!(value, Value::Bool(true));
    assert_eq!(details.backend, Backend::Interpreter);

    // `Backend::Jit` declines it when the program is made, and says so too.
    let ast = env.compile(&expr).unwrap();
    let options = celerity::ProgramOptions::default().backend(Backend::Jit);
    let jit = env.program_with(&ast, options).unwrap();
    assert_eq!(jit.native_status(), declined);
    assert_eq!(
        heard.all().last(),
        Some(&(expr, Backend::Jit, declined.clone()))
    );
}

#[test]
fn expressions_with_too_many_nodes_are_not_tried() {
    let (env, tasks, heard) = collecting_env();
    let expr = format!(
        "[{}].size() > 0",
        vec!["x"; Backend::AUTO_MAX_NODES].join(", ")
    );
    let p = program(&env, &expr);
    let NativeStatus::Declined {
        reason: DeclineReason::TooManyNodes { nodes },
    } = p.native_status()
    else {
        panic!("{:?}", p.native_status());
    };
    assert!(nodes > Backend::AUTO_MAX_NODES, "{nodes}");
    for _ in 0..Backend::AUTO_JIT_AFTER {
        eval(&p);
    }
    assert_eq!(tasks.count(), 0);
    assert!(heard.all().is_empty());
}

#[test]
fn programs_that_are_never_compiled_say_so() {
    let (env, tasks, _) = collecting_env();
    let interpreted = env
        .program_with(
            &env.compile(RULE).unwrap(),
            celerity::ProgramOptions::default().backend(Backend::Interpreter),
        )
        .unwrap();
    let unchecked = env.program(&env.parse(RULE).unwrap()).unwrap();
    for p in [&interpreted, &unchecked] {
        for _ in 0..Backend::AUTO_JIT_AFTER {
            eval(p);
        }
        assert_eq!(p.native_status(), NativeStatus::Interpreted);
    }
    assert_eq!(tasks.count(), 0);
}

#[test]
fn child_environments_keep_the_executor() {
    let (env, tasks, _) = collecting_env();
    let child = env.extend().variable("y", Type::Int).build();
    let p = program(&child, "x + y > 0 || s == ''");
    let vars = vars().with("y", 1i64);
    for _ in 0..Backend::AUTO_JIT_AFTER {
        p.eval(&vars).unwrap();
    }
    assert_eq!(tasks.count(), 1);
}

/// Without an executor, the compile runs on Celerity's background thread: the program
/// reaches `Compiled` without any further evaluation (waiting at most 30 s for it).
#[test]
fn the_background_thread_compiles_after_the_threshold() {
    let heard = Heard::default();
    let env = heard.listen(builder()).build();
    let p = program(&env, RULE);
    let (interpreted, details) = eval(&p);
    for _ in 1..Backend::AUTO_JIT_AFTER {
        eval(&p);
    }
    assert_ne!(p.native_status(), NativeStatus::Pending);
    // The hook is called after the outcome is published: once it has heard, the program
    // must be compiled.
    let deadline = Instant::now() + Duration::from_secs(30);
    while heard.all().is_empty() {
        assert!(
            Instant::now() < deadline,
            "no compile reported after 30 s: {:?}",
            p.native_status()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(p.native_status(), NativeStatus::Compiled);
    let (native, native_details) = eval(&p);
    assert_eq!(native, interpreted);
    assert_eq!(native_details.actual_cost, details.actual_cost);
    assert_eq!(native_details.backend, Backend::Jit);
    assert_eq!(
        heard.all(),
        [(RULE.to_string(), Backend::Auto, NativeStatus::Compiled)]
    );
}
