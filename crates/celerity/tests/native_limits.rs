//! Native code stays proportional to its input: nested `cel.bind` compiles to code linear in
//! the bindings, expressions over the native-code budget are interpreted (with the same
//! answers), and a loop's temporaries die with their iteration, so native code's peak memory
//! stays within twice the interpreter's. Operations that cost the same whatever they build
//! (a dynamically dispatched `+`) stop at the evaluation's allowance on both backends.
//!
//! A counting global allocator measures the peak of live heap bytes during each evaluation.

use celerity::{
    Backend, Env, EnvOptions, KubernetesEnv, MapActivation, Program, ProgramOptions, Type, Value,
};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::{Counting, SERIAL, peak_during};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn program(env: &Env, expr: &str, backend: Backend) -> Program {
    let ast = env
        .compile(expr)
        .unwrap_or_else(|e| panic!("{expr}: {e:?}"));
    let options = ProgramOptions::default().backend(backend);
    env.program_with(&ast, options)
        .unwrap_or_else(|e| panic!("{expr}: {e:?}"))
}

fn kubernetes_env() -> Env {
    KubernetesEnv::newest()
        .builder()
        .variable("s", Type::Dyn)
        .variable("n", Type::Int)
        .build()
}

fn default_env() -> Env {
    Env::builder()
        .options(EnvOptions::default())
        .all_extension_libraries()
        .variable("a", Type::Int)
        .variable("s", Type::String)
        .build()
}

/// `cel.bind(a0, a, cel.bind(a1, a0 + a0, ... a{n-1}))`: each binding read twice.
fn nested_binds(n: usize, doubling: bool) -> String {
    let mut e = format!("a{}", n - 1);
    for k in (0..n).rev() {
        let init = match k {
            0 => "a".to_string(),
            _ if doubling => format!("a{0} + a{0}", k - 1),
            _ => format!("(a > 0 ? a{0} : a{0} + 1)", k - 1),
        };
        e = format!("cel.bind(a{k}, {init}, {e})");
    }
    e
}

#[test]
fn nested_bindings_compile_to_code_linear_in_their_number() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = default_env();
    let vars = MapActivation::new().with("a", 1i64).with("s", "x");
    let ir_len = |n: usize| {
        let ast = env.compile(&nested_binds(n, true)).unwrap();
        let options = ProgramOptions::default()
            .backend(Backend::Jit)
            .keep_code_text(true);
        let p = env.program_with(&ast, options).unwrap();
        assert_eq!(p.backend(), Backend::Jit, "{n} bindings are compiled");
        assert_eq!(p.eval(&vars).unwrap(), Value::Int(1 << (n - 1)));
        p.ir_text().map(str::len).unwrap_or_default()
    };
    let (four, eight, sixteen) = (ir_len(4), ir_len(8), ir_len(16));
    // Doubling per binding would make sixteen 2^8 times eight.
    assert!(
        sixteen < eight * 5 / 2 && eight < four * 5 / 2,
        "IR sizes {four}, {eight}, {sixteen} for 4, 8, 16 bindings"
    );
}

#[test]
fn expressions_over_the_native_code_budget_are_interpreted_with_the_same_answers() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = default_env();
    let vars = MapActivation::new().with("a", 1i64).with("s", "x");
    let long_list = format!("[{}].size()", vec!["a"; 5_000].join(", "));
    let cases = [
        (long_list, Value::Int(5_000)),
        (vec!["a == 1"; 3_000].join(" && "), Value::Bool(true)),
        // Each binding's initialiser reads the previous one on both branches of a
        // conditional: code would double per binding.
        (nested_binds(40, false), Value::Int(1)),
    ];
    for (expr, expected) in cases {
        let native = program(&env, &expr, Backend::Jit);
        assert_eq!(native.backend(), Backend::Interpreter, "{expr:.60}");
        let interp = program(&env, &expr, Backend::Interpreter);
        let a = native.eval_details(&vars);
        let b = interp.eval_details(&vars);
        assert_eq!(a.0.as_ref().unwrap(), &expected, "{expr:.60}");
        assert_eq!(a.0, b.0);
        assert_eq!(a.1.actual_cost, b.1.actual_cost, "{expr:.60}");
    }
    // Small expressions are still compiled.
    let small = program(&env, "[a, a, a].size() == 3", Backend::Jit);
    assert_eq!(small.backend(), Backend::Jit);
}

/// Loops whose iterations make large temporaries, or keep values and errors across
/// iterations (which freeing must not lose).
const LOOPS: &[&str] = &[
    "lists.range(200).exists(i, (s + s).size() < 0)",
    "lists.range(200).all(i, (s + string(i)).size() > 0)",
    "lists.range(50).map(i, s + string(i)).size() == 50",
    "lists.range(50).filter(i, (s + string(i)).size() % 2 == 0).size() == 25",
    "lists.range(20).exists(i, lists.range(20).exists(j, (s + s + string(j)).size() < 0))",
    "cel.bind(x, s + s, lists.range(30).all(i, lists.range(5).all(j, x.size() > i)))",
    "lists.range(40).all(i, 10 / (i - 1) != 100)",
    "lists.range(40).exists(i, (s + s).size() / (i - 3) == -1)",
    "lists.range(30).transformMap(i, v, s + string(v)).size() == 30",
];

#[test]
fn native_loops_free_each_iterations_temporaries() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // No cost limit: the evaluations run to the end (an evaluation over the limit would be
    // redone by the interpreter, which is measured elsewhere).
    let env = KubernetesEnv::newest()
        .builder()
        .variable("s", Type::Dyn)
        .cost_limit(None)
        .build();
    let env_with_bind = Env::builder()
        .options(EnvOptions::kubernetes())
        .all_extension_libraries()
        .variable("s", Type::Dyn)
        .cost_limit(None)
        .build();
    let big = "z".repeat(200_000);
    let vars = MapActivation::new().with("s", big.as_str());
    for expr in LOOPS {
        let env = if expr.contains("cel.bind") || expr.contains("transformMap") {
            &env_with_bind
        } else {
            &env
        };
        let interp = program(env, expr, Backend::Interpreter);
        let native = program(env, expr, Backend::Jit);
        assert_eq!(native.backend(), Backend::Jit, "{expr}");
        // Warm up thread-local caches (the arena's spare chunk).
        let _ = native.eval_details(&vars);
        let (want, interp_peak) = peak_during(|| interp.eval_details(&vars));
        let (got, native_peak) = peak_during(|| native.eval_details(&vars));
        assert_eq!(got.0, want.0, "{expr}");
        assert_eq!(got.1.actual_cost, want.1.actual_cost, "{expr}");
        assert!(
            native_peak <= 2 * interp_peak + (64 << 10),
            "{expr}: native code held {native_peak} bytes at once, the interpreter {interp_peak}"
        );
    }
}

#[test]
fn the_measurement_sees_temporaries_that_live_together() {
    // Without freeing, 200 concatenations of 400 KB would be 80 MB; here the list keeps
    // 50 strings of 200 KB alive on both backends, which the measurement must see.
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = kubernetes_env();
    let vars = MapActivation::new()
        .with("s", "z".repeat(200_000).as_str())
        .with("n", 1i64);
    let native = program(
        &env,
        "lists.range(50).map(i, s + string(i)).size()",
        Backend::Jit,
    );
    let (_, peak) = peak_during(|| native.eval_details(&vars));
    assert!(peak > 40 * 200_000, "peak {peak}");
}

/// `[x].map(a, a + a)[0]` nested `levels` times around `seed`: each level doubles `x` at a
/// cost of a few units (cel-go charges a dynamically dispatched `+` 1, whatever its size).
fn doubled(seed: &str, levels: usize) -> String {
    (0..levels).fold(seed.to_string(), |e, _| format!("[{e}].map(a, a + a)[0]"))
}

/// The most an evaluation may build with cost-free operations (`cel_runtime::limits::
/// MAX_BUILT_BYTES`, 256 MiB) and twice that, the peak allowed here.
const ALLOWANCE: usize = 256 << 20;

#[test]
fn cost_free_doublings_stop_at_the_evaluations_allowance() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = kubernetes_env();
    let strings = doubled("dyn('xxxxxxxxxxxxxxxx')", 30);
    let lists = doubled("dyn([1, 2, 3, 4, 5, 6, 7, 8])", 30);
    // A thousand distinct 32 MiB strings would be 32 GiB: each under the bound on one value.
    let wide = format!(
        "{}.map(a, a + a).size()",
        doubled(&format!("[{}]", doubled("dyn('xxxxxxxxxxxxxxxx')", 21)), 10)
    );
    let vars = MapActivation::new();
    for (expr, error) in [
        (
            format!("size({strings})"),
            "result size exceeds maximum allowed",
        ),
        (
            format!("size({lists})"),
            "result size exceeds maximum allowed",
        ),
        (wide, "evaluation exceeds its allowance for built values"),
    ] {
        let interp = program(&env, &expr, Backend::Interpreter);
        let native = program(&env, &expr, Backend::Jit);
        let (want, interp_peak) = peak_during(|| interp.eval_details(&vars));
        let (got, native_peak) = peak_during(|| native.eval_details(&vars));
        let message = want.0.as_ref().expect_err(&expr).to_string();
        assert!(message.contains(error), "{expr}: {message}");
        assert_eq!(got.0, want.0, "{expr}");
        assert_eq!(got.1.actual_cost, want.1.actual_cost, "{expr}");
        for (who, peak) in [("interpreter", interp_peak), ("native code", native_peak)] {
            assert!(
                peak <= 2 * ALLOWANCE,
                "{expr}: the {who} held {peak} bytes at once"
            );
        }
    }
}

/// About 4 MiB compiled from 40 characters: a counted repetition of a counted repetition.
const LARGE_PATTERN: &str = "((abcdefghijklmnopqrstuvwxyz|u){100}){30}";

#[test]
fn a_programs_constant_patterns_share_one_compiled_size_allowance() {
    // Twenty large patterns would take 80 MiB and over a second to compile; the program's
    // allowance (`PROGRAM_SIZE_LIMIT`, 32 MiB) holds the first few, and the rest fail as
    // patterns too large for Go's engine do, on both backends alike.
    let _serial = SERIAL.lock();
    let env = default_env();
    let calls: Vec<String> = (0..20)
        .map(|_| format!("s.matches('{LARGE_PATTERN}')"))
        .collect();
    let expr = format!("[{}]", calls.join(", "));
    let one = format!("s.matches('{LARGE_PATTERN}')");
    let vars = MapActivation::new().with("s", "u".repeat(3000));
    for backend in [Backend::Interpreter, Backend::Jit] {
        assert_eq!(
            program(&env, &one, backend).eval(&vars),
            Ok(Value::Bool(true)),
            "{backend:?}"
        );
        let (compiled, grew) = peak_during(|| program(&env, &expr, backend));
        assert!(
            grew < 2 * cel_runtime::regex::PROGRAM_SIZE_LIMIT,
            "{backend:?}: compiling grew the heap by {grew} bytes"
        );
        let err = compiled
            .eval(&vars)
            .expect_err("a pattern past the allowance");
        assert_eq!(
            err.message,
            format!("error parsing regexp: expression too large: `{LARGE_PATTERN}`"),
            "{backend:?}"
        );
    }
}
