//! The environment's cache of native programs (`EnvBuilder::native_cache`): a program made
//! again from an expression the environment compiled shares the native code, under both
//! native backends, with the same answers, errors and costs; and only then (other options,
//! trees another environment had a hand in, a disabled or full cache compile again).

use std::sync::{Arc, Mutex};

use celerity::{
    Backend, CompileTask, DeclineReason, Env, EnvBuilder, MapActivation, NativeStatus, Program,
    ProgramOptions, Type, Value,
};

const RULE: &str = "x > 0 && s.startsWith('ab') && 10 / (x - 7) == 5";

fn builder() -> EnvBuilder {
    Env::builder()
        .variable("x", Type::Int)
        .variable("s", Type::String)
}

/// An environment whose compiles are counted, and run on the spot under `Backend::Auto`.
fn counting_env(builder: EnvBuilder) -> (Env, Arc<Mutex<Vec<String>>>) {
    let compiles = Arc::new(Mutex::new(Vec::new()));
    let heard = compiles.clone();
    let env = builder
        .compile_executor(CompileTask::run)
        .on_native_compile(move |report| heard.lock().unwrap().push(report.expression.to_string()))
        .build();
    (env, compiles)
}

fn jit() -> ProgramOptions {
    ProgramOptions::default().backend(Backend::Jit)
}

fn make(env: &Env, expr: &str, options: ProgramOptions) -> Program {
    env.program_with(&env.compile(expr).unwrap(), options)
        .unwrap()
}

fn vars(x: i64) -> MapActivation {
    MapActivation::new().with("x", x).with("s", "abc")
}

#[test]
fn a_program_made_again_shares_the_native_code_with_the_same_answers() {
    let (env, compiles) = counting_env(builder());
    let first = make(&env, RULE, jit());
    let again = make(&env, RULE, jit());
    assert_eq!(first.native_status(), NativeStatus::Compiled);
    assert!(again.shares_native_code(&first));
    assert_eq!(*compiles.lock().unwrap(), [RULE], "compiled once");
    for x in [9, 7, -1] {
        let (a, da) = first.eval_details(&vars(x));
        let (b, db) = again.eval_details(&vars(x));
        assert_eq!(a, b, "x = {x}");
        assert_eq!(da, db, "x = {x}");
        assert_eq!(db.backend, Backend::Jit);
    }
    // The division by zero (x = 7) is an error of the shared code, reported by each program.
    let err = again.eval(&vars(7)).unwrap_err();
    assert_eq!(err.message, "division by zero");
}

#[test]
fn auto_programs_made_again_start_native_and_feed_the_cache() {
    let (env, compiles) = counting_env(builder());
    let first = make(&env, RULE, ProgramOptions::default());
    assert_eq!(first.native_status(), NativeStatus::Pending);
    for _ in 0..Backend::AUTO_JIT_AFTER {
        first.eval(&vars(9)).unwrap();
    }
    assert_eq!(first.native_status(), NativeStatus::Compiled);
    // Made after the tiered compile: native from its first evaluation, with no compile.
    let again = make(&env, RULE, ProgramOptions::default());
    assert_eq!(again.native_status(), NativeStatus::Compiled);
    assert!(again.shares_native_code(&first));
    assert_eq!(again.eval_details(&vars(9)).1.backend, Backend::Jit);
    // `Backend::Jit` with the same options finds it too.
    assert!(make(&env, RULE, jit()).shares_native_code(&first));
    assert_eq!(compiles.lock().unwrap().len(), 1);
}

#[test]
fn other_options_compile_again() {
    let (env, compiles) = counting_env(builder());
    let tracked = make(&env, RULE, jit());
    let untracked = make(&env, RULE, jit().track_cost(false));
    let with_text = make(&env, RULE, jit().keep_code_text(true));
    assert!(!untracked.shares_native_code(&tracked));
    assert!(!with_text.shares_native_code(&tracked));
    assert!(with_text.ir_text().is_some());
    assert_eq!(untracked.eval_details(&vars(9)).1.actual_cost, 0);
    assert_eq!(compiles.lock().unwrap().len(), 3);
}

#[test]
fn trees_another_environment_made_are_compiled_without_the_cache() {
    let (env, compiles) = counting_env(builder());
    // The same declarations with macros off: its trees of `RULE` happen to be the same,
    // but the cache cannot know that of another environment's parser or checker.
    let other = builder().macros(false).build();
    let first = make(&env, RULE, jit());
    let parsed_elsewhere = env.check(&other.parse(RULE).unwrap()).unwrap();
    let checked_elsewhere = other.compile(RULE).unwrap();
    for ast in [parsed_elsewhere, checked_elsewhere] {
        let p = env.program_with(&ast, jit()).unwrap();
        assert_eq!(p.native_status(), NativeStatus::Compiled);
        assert!(!p.shares_native_code(&first));
        assert_eq!(p.eval(&vars(9)).unwrap(), Value::Bool(true));
    }
    assert_eq!(compiles.lock().unwrap().len(), 3);
    // Nor did they enter the cache: the environment's own tree still finds the first.
    assert!(make(&env, RULE, jit()).shares_native_code(&first));
    // Another environment has a cache of its own.
    assert!(!make(&other, RULE, jit()).shares_native_code(&first));
}

#[test]
fn a_disabled_or_full_cache_compiles_again() {
    let (env, compiles) = counting_env(builder().native_cache(0));
    let a = make(&env, RULE, jit());
    assert!(!make(&env, RULE, jit()).shares_native_code(&a));
    assert_eq!(compiles.lock().unwrap().len(), 2);

    let (env, _) = counting_env(builder().native_cache(1));
    let a = make(&env, RULE, jit());
    let b = make(&env, "x < 3", jit());
    assert!(make(&env, "x < 3", jit()).shares_native_code(&b));
    // `b` evicted `a`.
    let a_again = make(&env, RULE, jit());
    assert!(!a_again.shares_native_code(&a));
    assert_eq!(a_again.eval(&vars(9)).unwrap(), Value::Bool(true));
}

#[test]
fn expressions_over_the_budget_are_declined_once() {
    let (env, compiles) = counting_env(builder());
    // About 10 KB, under the 16 KiB the cache keeps; over 3,000 IR instructions.
    let expr = vec!["x == 7"; 1_200].join(" && ");
    let first = make(&env, &expr, jit());
    let again = make(&env, &expr, jit());
    for p in [&first, &again] {
        assert!(
            matches!(
                p.native_status(),
                NativeStatus::Declined {
                    reason: DeclineReason::TooLarge { .. }
                }
            ),
            "{:?}",
            p.native_status()
        );
        assert_eq!(p.eval(&vars(7)).unwrap(), Value::Bool(true));
    }
    assert_eq!(compiles.lock().unwrap().len(), 1, "tried once");
}
