//! Calls that build large values (`lists.range(n)`, `replace`, `join`, `regex.replace`) are
//! charged before they run under a cost limit, so the limit stops them before they allocate;
//! the error and the cost reported are the ones the call would have reached afterwards.
//!
//! A counting global allocator measures the peak of live heap bytes during each evaluation.
//! Each case also runs without a limit, which must allocate the large value: that shows
//! the measurement would catch an allocation.

use celerity::{
    Backend, Env, EnvBuilder, ErrorKind, KubernetesEnv, MapActivation, ProgramOptions, Type, Value,
};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::{Counting, SERIAL, peak_during};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const MIB: usize = 1 << 20;

struct Case {
    expr: &'static str,
    /// The smallest heap the unlimited evaluation must reach.
    builds_at_least: usize,
}

fn vars() -> MapActivation {
    let big = "x".repeat(100_000);
    MapActivation::new()
        .with("n", 2_000_000i64)
        .with("s", "ab".repeat(10_000))
        .with("t", "y".repeat(1_000))
        .with("l", Value::list(vec![Value::from(big.as_str()); 400]))
}

/// The environment `builder` makes, with the variables and a cost limit.
fn declare(builder: &dyn Fn() -> EnvBuilder, limit: Option<u64>) -> Env {
    builder()
        .variable("n", Type::Int)
        .variable("s", Type::String)
        .variable("t", Type::String)
        .variable("l", Type::list(Type::String))
        .cost_limit(limit)
        .build()
}

fn check(builder: &dyn Fn() -> EnvBuilder, cases: &[Case]) {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = declare(builder, Some(10_000));
    let unlimited = declare(builder, None);
    let vars = vars();
    for case in cases {
        let ast = env.compile(case.expr).unwrap();
        for backend in [Backend::Interpreter, Backend::Jit] {
            let options = ProgramOptions::default().backend(backend);
            let limited = env.program_with(&ast, options).unwrap();
            let ((result, details), peak) = peak_during(|| limited.eval_details(&vars));
            let err = result.expect_err(case.expr);
            assert_eq!(
                err.kind,
                ErrorKind::CostLimitExceeded,
                "{}: {err}",
                case.expr
            );
            assert!(
                peak < MIB,
                "{} ({backend:?}): {peak} bytes allocated under the limit",
                case.expr
            );

            // Without a limit the value is built, at the cost the limited run reported:
            // the call is the whole expression, so its cost is the last charge.
            let program = unlimited.program_with(&ast, options).unwrap();
            let ((result, full), peak) = peak_during(|| program.eval_details(&vars));
            assert!(result.is_ok(), "{}: {result:?}", case.expr);
            assert!(
                peak >= case.builds_at_least,
                "{} ({backend:?}): only {peak} bytes without a limit",
                case.expr
            );
            assert_eq!(details.actual_cost, full.actual_cost, "{}", case.expr);
        }
    }
}

#[test]
fn extension_calls_stop_before_building_their_results() {
    check(
        &|| Env::builder().all_extension_libraries(),
        &[
            Case {
                expr: "lists.range(n)",
                builds_at_least: 30 * MIB,
            },
            Case {
                expr: "s.replace('', t)",
                builds_at_least: 19 * MIB,
            },
            Case {
                expr: "l.join(', ')",
                builds_at_least: 38 * MIB,
            },
            Case {
                expr: "regex.replace(s, 'b', t)",
                builds_at_least: 9 * MIB,
            },
        ],
    );
}

#[test]
fn kubernetes_calls_stop_before_building_their_results() {
    // Kubernetes charges `join` by its result and `lists.range` by its size.
    check(
        &|| KubernetesEnv::newest().builder(),
        &[
            Case {
                expr: "lists.range(n)",
                builds_at_least: 30 * MIB,
            },
            Case {
                expr: "l.join()",
                builds_at_least: 38 * MIB,
            },
        ],
    );
}
