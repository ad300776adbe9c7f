//! Deep expressions cannot overflow the stack in any stage, through the facade's public API:
//! parsing (with macro expansion), checking, cost estimation, planning, evaluation on the
//! interpreter, printing and dropping.
//!
//! * With the nesting and size limits raised through [`EnvOptions`], expressions nested
//!   100,000 levels deep (lists, calls, operator chains, parentheses; maps, conditionals,
//!   indexes and selections less deep, see [`run_deep`]) run, or fail with a clean error, on
//!   a thread with the default 2 MiB stack.
//! * At the default limits, the deepest expression of each kind that the parser accepts, and
//!   120 nested `exists`, run on a thread with a 128 KiB stack.
//!
//! Native code is not exercised here: these tests pin the front end and the interpreter.

use celerity::{Backend, Env, EnvOptions, Key, MapActivation, NoSizes, Type, Value};

/// Runs `f` on a thread with a stack of `size` bytes and propagates its panics (an overflow
/// aborts the test binary, which fails the run too).
fn on_stack<T: Send + 'static>(size: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
    let handle = std::thread::Builder::new()
        .stack_size(size)
        .spawn(f)
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    match handle.join() {
        Ok(v) => v,
        Err(p) => std::panic::resume_unwind(p),
    }
}

fn env(max_depth: usize, size_limit: usize) -> Env {
    env_on(Backend::Interpreter, max_depth, size_limit)
}

fn env_on(backend: Backend, max_depth: usize, size_limit: usize) -> Env {
    let options = EnvOptions::default()
        .max_recursion_depth(max_depth)
        .expression_size_limit(size_limit)
        .backend(backend);
    Env::builder()
        .options(options)
        .variable("a", Type::Int)
        .variable("l", Type::Dyn)
        .variable("s", Type::Dyn)
        .variable("t", Type::Bool)
        .build()
}

fn nested_list_value(depth: usize) -> Value {
    let mut v = Value::Int(1);
    for _ in 0..depth {
        v = Value::list(vec![v]);
    }
    v
}

fn nested_map_value(depth: usize) -> Value {
    let mut v = Value::Int(1);
    for _ in 0..depth {
        v = Value::map([(Key::String("b".into()), v)]);
    }
    v
}

/// The expressions of each kind, `n` levels deep, with the value each evaluates to (`None`:
/// a clean error is expected, from the checker or at run time).
fn cases(n: usize) -> Vec<(&'static str, String, Option<Value>)> {
    let rep = |s: &str, k: usize| s.repeat(k);
    vec![
        ("list", format!("{}1{}", rep("[", n), rep("]", n)), None),
        ("map", format!("{}1{}", rep("{1: ", n), rep("}", n)), None),
        (
            "size",
            format!("{}'x'{}", rep("size(", n), rep(")", n)),
            None,
        ),
        (
            "int",
            format!("{}1{}", rep("int(", n), rep(")", n)),
            Some(Value::Int(1)),
        ),
        (
            "ternary",
            format!("{}1", rep("t ? 0 : ", n)),
            Some(Value::Int(1)),
        ),
        (
            "ternary-then",
            format!("{}1{}", rep("!t ? (", n), rep(") : 0", n)),
            Some(Value::Int(1)),
        ),
        (
            "sum",
            format!("a{}", rep(" + a", n)),
            Some(Value::Int(n as i64 + 1)),
        ),
        ("index", format!("l{}", rep("[0]", n)), Some(Value::Int(1))),
        ("select", format!("s{}", rep(".b", n)), Some(Value::Int(1))),
        (
            "parens",
            format!("{}a{}", rep("(", n), rep(")", n)),
            Some(Value::Int(1)),
        ),
        ("not", format!("{}t{}", rep("!(", n), rep(")", n)), None),
    ]
}

/// Parses, checks, estimates, plans and evaluates `expr`; returns the value or the error's
/// text (from whichever stage failed).
fn run(env: &Env, expr: &str, act: &MapActivation) -> Result<Value, String> {
    let ast = env.compile(expr).map_err(|e| e.to_string())?;
    let _ = env.estimate_cost(&ast, &NoSizes);
    let program = env.program(&ast).map_err(|e| e.to_string())?;
    program.eval(act).map_err(|e| e.to_string())
}

fn activation(depth: usize) -> MapActivation {
    MapActivation::new()
        .with("a", Value::Int(1))
        .with("t", Value::Bool(false))
        .with("l", nested_list_value(depth))
        .with("s", nested_map_value(depth))
}

const DEEP: usize = 100_000;

/// Expressions whose checking is still quadratic in their depth run at smaller depths:
/// conditionals and indexes (the checker copies its whole substitution for every overload it
/// tries: fixed separately on main), selections (each level of a chain looks up its whole
/// qualified name before descending, as cel-go does) and map literals (each level rebuilds
/// its value's type down to the substitution's depth cap of 1000).
fn run_deep(kind: &'static str) {
    let depth = match kind {
        "ternary" | "ternary-then" | "index" => 5_000,
        "select" => 10_000,
        "map" => 20_000,
        _ => DEEP,
    };
    run_at(kind, depth);
}

fn run_at(kind: &'static str, depth: usize) {
    on_stack(2 << 20, move || {
        let env = env(depth + 10, 30 * depth + 100);
        let act = activation(depth);
        let (_, expr, expected) = cases(depth)
            .into_iter()
            .find(|(k, _, _)| *k == kind)
            .expect("kind");
        let got = run(&env, &expr, &act);
        match (expected, got) {
            (Some(want), Ok(v)) => assert!(v == want, "{kind}: {v:?}"),
            (Some(_), Err(e)) => panic!("{kind}: {}", &e[..e.len().min(300)]),
            // Evaluated or cleanly rejected: both fine, and the value is dropped here.
            (None, _) => {}
        }
    });
}

#[test]
fn deep_map_literal() {
    run_deep("map");
}

#[test]
fn deep_size_calls() {
    run_deep("size");
}

#[test]
fn deep_conversion_calls() {
    run_deep("int");
}

#[test]
fn deep_ternaries() {
    run_deep("ternary");
    run_deep("ternary-then");
}

#[test]
fn long_sum_chain() {
    run_deep("sum");
}

#[test]
fn deep_index_chain() {
    run_deep("index");
}

#[test]
fn deep_select_chain() {
    run_deep("select");
}

#[test]
fn deep_parentheses() {
    run_deep("parens");
}

#[test]
fn deep_list_literal_evaluates_to_the_deep_value() {
    on_stack(2 << 20, || {
        let env = env(DEEP + 10, 30 * DEEP + 100);
        let expr = format!("{}1{}", "[".repeat(DEEP), "]".repeat(DEEP));
        let v = run(&env, &expr, &activation(1)).expect("evaluates");
        assert!(v == nested_list_value(DEEP));
        let map = format!("{}1{}", "{'b': ".repeat(20_000), "}".repeat(20_000));
        let v = run(&env, &map, &activation(1)).expect("evaluates");
        assert!(v == nested_map_value(20_000));
    });
}

/// The largest `n` in `1..=limit` for which the parser accepts `make(n)`.
fn deepest_accepted(env: &Env, limit: usize, make: impl Fn(usize) -> String) -> usize {
    (1..=limit)
        .rev()
        .find(|&n| env.parse(&make(n)).is_ok())
        .expect("some depth is accepted")
}

#[test]
fn deepest_accepted_expressions_run_on_a_128k_stack() {
    let defaults = EnvOptions::default();
    let limit = defaults.max_recursion_depth + 20;
    // Find the deepest accepted expression of each kind on an ordinary stack...
    let found: Vec<(usize, String, Option<Value>)> = on_stack(8 << 20, move || {
        let env = env(defaults.max_recursion_depth, defaults.expression_size_limit);
        let kinds = cases(1)
            .into_iter()
            .map(|(k, _, v)| (k, v))
            .collect::<Vec<_>>();
        let mut found = Vec::new();
        for (kind, value) in kinds {
            let make = |n: usize| {
                cases(n)
                    .into_iter()
                    .find(|(k, _, _)| *k == kind)
                    .map(|(_, e, _)| e)
                    .expect("kind")
            };
            let n = deepest_accepted(&env, limit, make);
            assert!(n >= 24, "{kind}: only {n} levels accepted");
            // The expected value does not depend on the depth, except for the sum.
            let value = if kind == "sum" {
                Some(Value::Int(n as i64 + 1))
            } else {
                value
            };
            found.push((n, make(n), value));
        }
        let exists = |n: usize| format!("{}true{}", "[1].exists(x, ".repeat(n), ")".repeat(n));
        let e = exists(120);
        assert!(env.parse(&e).is_ok(), "120 nested exists are accepted");
        found.push((120, e, Some(Value::Bool(true))));
        found
    });
    // ...then run each on a 128 KiB stack, interpreted and compiled to native code.
    on_stack(128 * 1024, move || {
        for backend in [Backend::Interpreter, Backend::Jit] {
            let env = env_on(
                backend,
                defaults.max_recursion_depth,
                defaults.expression_size_limit,
            );
            run_all_on(&env, &found);
        }
    });
}

fn run_all_on(env: &Env, found: &[(usize, String, Option<Value>)]) {
    for (n, expr, expected) in found {
        // `l[0]...` and `s.b...` read values exactly as deep as the expression.
        let got = run(env, expr, &activation(*n));
        if let Ok(ast) = env.compile(expr) {
            let _ = (ast.unparse(), ast.syntax_text(), ast.checked_text());
        }
        if let Some(want) = expected {
            match got {
                Ok(v) => assert!(&v == want, "{}: {v:?}", &expr[..40]),
                Err(e) => panic!("{}: {e}", &expr[..40]),
            }
        }
    }
}

/// JSON as deep as the conversions accept ([`celerity::MAX_JSON_DEPTH`]) converts both ways,
/// typed and untyped, on a 128 KiB stack.
#[test]
fn json_at_the_depth_limit_converts_on_a_128k_stack() {
    let depth = celerity::MAX_JSON_DEPTH;
    let mut json = serde_json::json!(1);
    let mut ty = Type::Int;
    for _ in 0..depth {
        json = serde_json::Value::Array(vec![json]);
        ty = Type::list(ty);
    }
    let value = nested_list_value(depth);
    // serde_json's own drop and comparison recurse, so they run on this thread.
    let back = std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn_scoped(scope, || {
                let untyped = celerity::value_from_json(&json).expect("untyped");
                let typed = celerity::value_from_json_typed(&json, &ty).expect("typed");
                assert!(untyped == typed);
                celerity::value_to_json(&value).expect("to JSON")
            })
            .expect("spawn");
        match handle.join() {
            Ok(back) => back,
            Err(p) => std::panic::resume_unwind(p),
        }
    });
    assert!(back == json);
}
