//! `cel.@block` (the bindings library, version 1) and the `cel.block` test macros of cel-go's
//! conformance environment, end to end through the facade: values and costs on both backends
//! (which must agree), laziness, and a diagnostic or an error, never a panic, for every
//! malformed use.

use cel_ext::{Bindings, BlockTestMacros};
use celerity::{Backend, Env, MapActivation, ProgramOptions, Type, Value};

/// What cel-go's conformance environment has: every extension library (bindings at its
/// newest version) and the test macros, plus `x: int`.
fn env() -> Env {
    Env::builder()
        .variable("x", Type::Int)
        .all_extension_libraries()
        .library(BlockTestMacros)
        .build()
}

fn show(v: &Value) -> String {
    cel_runtime::format::display(v)
}

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    result: Result<String, String>,
    cost: u64,
}

fn run_on(env: &Env, expr: &str, backend: Backend, checked: bool) -> Outcome {
    let ast = if checked {
        env.compile(expr)
    } else {
        env.parse(expr)
    };
    let ast = ast.unwrap_or_else(|e| panic!("{expr}: {e}"));
    let program = env
        .program_with(&ast, ProgramOptions::default().backend(backend))
        .unwrap_or_else(|e| panic!("{expr}: {e}"));
    let act = MapActivation::new().with("x", 5i64);
    let (r, details) = program.eval_details(&act);
    Outcome {
        result: r.map(|v| show(&v)).map_err(|e| e.to_string()),
        cost: details.actual_cost,
    }
}

/// Evaluates a checked expression on the interpreter and on native code, which must agree.
#[track_caller]
fn eval(expr: &str) -> Outcome {
    let env = env();
    let interpreted = run_on(&env, expr, Backend::Interpreter, true);
    let native = run_on(&env, expr, Backend::Jit, true);
    assert_eq!(interpreted, native, "{expr}: interpreter vs native code");
    interpreted
}

/// The value of a checked expression (both backends), rendered.
#[track_caller]
fn value(expr: &str) -> String {
    match eval(expr).result {
        Ok(v) => v,
        Err(e) => panic!("{expr}: {e}"),
    }
}

/// The evaluation error of a checked expression (both backends).
#[track_caller]
fn eval_error(expr: &str) -> String {
    match eval(expr).result {
        Ok(v) => panic!("{expr}: expected an error, got {v}"),
        Err(e) => e,
    }
}

/// The diagnostics of an expression that does not compile.
#[track_caller]
fn compile_error(env: &Env, expr: &str) -> String {
    match env.compile(expr) {
        Ok(_) => panic!("{expr}: expected diagnostics"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn conformance_cases_with_comprehension_variables() {
    // block_ext's cases that use `cel.iterVar` inside `exists`/`map`/`filter`: the
    // conformance runner's parse stage uses only the standard macros, so it cannot expand
    // them; the facade (the check stage's parser) does.
    let cases = [
        (
            "cel.block([[1].exists(cel.iterVar(0, 0), cel.iterVar(0, 0) > 0), size([cel.index(0)]), [2].exists(cel.iterVar(0, 0), cel.iterVar(0, 0) > 1), size([cel.index(2)])], cel.index(1) + cel.index(1) + cel.index(3) + cel.index(3))",
            "4",
        ),
        (
            "cel.block([[1].exists(cel.iterVar(0, 0), cel.iterVar(0, 0) > 0), [cel.index(0)], ['a'].exists(cel.iterVar(0, 1), cel.iterVar(0, 1) == 'a'), [cel.index(2)]], cel.index(1) + cel.index(1) + cel.index(3) + cel.index(3))",
            "[true, true, true, true]",
        ),
        (
            "cel.block([[1].exists(cel.iterVar(0, 0), cel.iterVar(0, 0) > 0)], cel.index(0) && cel.index(0) && [1].exists(cel.iterVar(0, 0), cel.iterVar(0, 0) > 1) && [2].exists(cel.iterVar(0, 0), cel.iterVar(0, 0) > 1))",
            "false",
        ),
        (
            "cel.block([[1, 2, 3]], cel.index(0).map(cel.iterVar(0, 0), cel.index(0).map(cel.iterVar(1, 0), cel.iterVar(1, 0) + 1)))",
            "[[2, 3, 4], [2, 3, 4], [2, 3, 4]]",
        ),
        (
            "[1, 2].map(cel.iterVar(0, 0), [1, 2, 3].filter(cel.iterVar(1, 0), cel.iterVar(1, 0) == cel.iterVar(0, 0)))",
            "[[1], [2]]",
        ),
        (
            "cel.block([[1, 2, 3], cel.index(0).map(cel.iterVar(0, 0), cel.index(0).map(cel.iterVar(1, 0), cel.iterVar(1, 0) + 1))], cel.index(1) == cel.index(1))",
            "true",
        ),
        (
            "cel.block([x - 1, cel.index(0) > 3], [cel.index(1) ? cel.index(0) : 5].exists(cel.iterVar(0, 0), cel.iterVar(0, 0) - 1 > 3) || cel.index(1))",
            "true",
        ),
        (
            "['foo', 'bar'].map(cel.iterVar(1, 0), [cel.iterVar(1, 0) + cel.iterVar(1, 0), cel.iterVar(1, 0) + cel.iterVar(1, 0)]).map(cel.iterVar(0, 0), [cel.iterVar(0, 0) + cel.iterVar(0, 0), cel.iterVar(0, 0) + cel.iterVar(0, 0)])",
            r#"[[["foofoo", "foofoo", "foofoo", "foofoo"], ["foofoo", "foofoo", "foofoo", "foofoo"]], [["barbar", "barbar", "barbar", "barbar"], ["barbar", "barbar", "barbar", "barbar"]]]"#,
        ),
    ];
    for (expr, want) in cases {
        assert_eq!(value(expr), want, "{expr}");
    }
}

#[test]
fn costs_follow_cel_go_tracker() {
    // Each subexpression once, when first read; 1 per `@indexN` read; the block call and its
    // list literal nothing. 4 reads + 3 additions:
    let int_add =
        "cel.block([1, cel.index(0) + 1, cel.index(1) + 1, cel.index(2) + 1], cel.index(3))";
    assert_eq!(
        eval(int_add),
        Outcome {
            result: Ok("4".into()),
            cost: 7
        }
    );
    // Concatenations 1 + 2 + 2 + 2 + 3 (sizes grow), reads 2, matches ceil(1.2) * ceil(1.25).
    let call = r#"cel.block(["h" + "e", cel.index(0) + "l", cel.index(1) + "l", cel.index(2) + "o", cel.index(3) + " world"], cel.index(4).matches(cel.index(3)))"#;
    assert_eq!(eval(call).cost, 16);
    // Unread subexpressions are never evaluated, and cost nothing.
    assert_eq!(
        eval("cel.block([[1, 2, 3].map(v, v * 2), 1 / 0], 3)"),
        Outcome {
            result: Ok("3".into()),
            cost: 0
        }
    );
    assert_eq!(eval("cel.block([], 3)").cost, 0);
    // A subexpression read twice is evaluated once: the block costs the subexpression, two
    // reads and the comparison (lists of 3: ceil(0.3)).
    let slot = "[1, 2, 3].map(v, v * 2)";
    let once = eval(slot).cost;
    assert_eq!(
        eval(&format!(
            "cel.block([{slot}], cel.index(0) == cel.index(0))"
        ))
        .cost,
        once + 2 + 1
    );
    // Short-circuited reads: never evaluated.
    assert_eq!(
        eval("cel.block([1 / 0 == 1], true || cel.index(0))"),
        Outcome {
            result: Ok("true".into()),
            cost: 0
        }
    );
    // An error is kept like a value: the division is charged once.
    assert_eq!(
        eval("cel.block([1 / 0], cel.index(0) + cel.index(0))"),
        Outcome {
            result: Err("division by zero".into()),
            cost: 4
        }
    );
}

#[test]
fn cost_limit_inside_a_subexpression() {
    let env = Env::builder()
        .all_extension_libraries()
        .library(BlockTestMacros)
        .cost_limit(Some(20))
        .build();
    let expr =
        "cel.block([[1, 2, 3, 4, 5].map(v, v * v)], size(cel.index(0)) + size(cel.index(0)))";
    let a = run_on(&env, expr, Backend::Interpreter, true);
    let b = run_on(&env, expr, Backend::Jit, true);
    assert_eq!(a, b);
    assert_eq!(
        a.result,
        Err("operation cancelled: actual cost limit exceeded".into())
    );
    assert_eq!(a.cost, 21);
}

#[test]
fn scoping_and_laziness() {
    // Forward references work: subexpressions are evaluated when read, not in order.
    assert_eq!(
        value("cel.block([cel.index(1) * 2, 5], cel.index(0))"),
        "10"
    );
    // An inner block's indices shadow the outer block's; higher ones reach the outer block.
    assert_eq!(
        value("cel.block([1, 2], cel.block([10], cel.index(0) + cel.index(1)))"),
        "12"
    );
    // Subexpressions see the comprehension variables around the block.
    assert_eq!(
        value("[1, 2, 3].map(v, cel.block([v * 10], cel.index(0) + 1))"),
        "[11, 21, 31]"
    );
    // A subexpression first read inside a comprehension (of the result or of another
    // subexpression) has its own comprehension variables.
    assert_eq!(
        value("cel.block([[1, 2].map(v, v * 2)], [3, 4].map(w, cel.index(0)[0] + w))"),
        "[5, 6]"
    );
    assert_eq!(
        value(
            "cel.block([[1, 2].exists(v, v > 1), [5].map(v, cel.index(0))], [3].map(v, cel.index(1)))"
        ),
        "[[true]]"
    );
    assert_eq!(
        value(
            "cel.block([[1, 2, 3].map(v, [4, 5].map(w, v * w))], cel.index(0).map(l, l.exists(e, e == cel.index(0)[2][1])))"
        ),
        "[false, false, true]"
    );
    // Thirty subexpressions, each reading the one before.
    let elements: Vec<String> = std::iter::once("0".to_string())
        .chain((0..29).map(|i| format!("cel.index({i}) + 1")))
        .collect();
    assert_eq!(
        value(&format!(
            "cel.block([{}], cel.index(29))",
            elements.join(", ")
        )),
        "29"
    );
    // The same without the checker: names are resolved at run time, to the same slots.
    let env = env();
    let expr = "cel.block([x, cel.index(0) + 1], [cel.index(1), cel.index(0)])";
    let unchecked = run_on(&env, expr, Backend::Interpreter, false);
    assert_eq!(unchecked, run_on(&env, expr, Backend::Interpreter, true));
    assert_eq!(unchecked.result, Ok("[6, 5]".into()));
}

#[test]
fn malformed_uses_are_diagnostics_or_errors() {
    let env = env();
    let cases = [
        (
            "cel.index(-1)",
            "ERROR: <input>:1:11: cel.index requires a single non-negative int constant arg",
        ),
        (
            "cel.index('a')",
            "ERROR: <input>:1:11: cel.index requires a single non-negative int constant arg",
        ),
        (
            "cel.block([1], cel.index(1.0))",
            "ERROR: <input>:1:26: cel.index requires a single non-negative int constant arg",
        ),
        (
            "cel.block(1, 2)",
            "ERROR: <input>:1:11: cel.block requires the first arg to be a list literal",
        ),
        (
            "cel.block({}, 2)",
            "ERROR: <input>:1:11: cel.block requires the first arg to be a list literal",
        ),
        (
            "[1].map(cel.iterVar(0, -2), 1)",
            "ERROR: <input>:1:24: cel.iterVar requires two non-negative int constant args",
        ),
        (
            "[1].map(cel.accuVar('a', 0), 1)",
            "ERROR: <input>:1:21: cel.accuVar requires two non-negative int constant args",
        ),
        // Wrong arities are not macros: ordinary calls on an undeclared `cel`.
        (
            "cel.block([1])",
            "ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')",
        ),
        (
            "cel.block([1], 2, 3)",
            "ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')",
        ),
        (
            "cel.index(1, 2)",
            "ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')",
        ),
        // Thirty indices are declared, as in cel-go's conformance environment.
        (
            "cel.block([1], cel.index(30))",
            "ERROR: <input>:1:25: undeclared reference to '@index30' (in container '')",
        ),
    ];
    for (expr, want) in cases {
        let got = compile_error(&env, expr);
        assert!(got.starts_with(want), "{expr}:\n{got}\nwanted: {want}");
    }

    // Out of range, self-reference and cycles are evaluation errors (cel-go finds no such
    // variable), charged 1 per read.
    assert_eq!(
        eval("cel.block([1], cel.index(1))"),
        Outcome {
            result: Err("no such attribute(s): @index1".into()),
            cost: 1
        }
    );
    assert_eq!(
        eval_error("cel.block([cel.index(0) + 1], cel.index(0))"),
        "no such attribute(s): @index0"
    );
    assert_eq!(
        eval_error("cel.block([cel.index(1), cel.index(0)], cel.index(0))"),
        "no such attribute(s): @index0"
    );
    // An index outside any block is an unbound variable.
    assert_eq!(eval_error("cel.index(3)"), "no such attribute(s): @index3");
    // Nothing panics on absurd indices.
    let huge = "cel.block([1], cel.index(9223372036854775807))";
    assert!(
        compile_error(&env, huge).contains("undeclared reference to '@index9223372036854775807'")
    );
    let parsed = env.parse(huge).unwrap();
    let program = env.program(&parsed).unwrap();
    assert!(program.eval(&MapActivation::new()).is_err());
}

/// A block whose subexpressions each need the one before.
fn chain(levels: usize, additions: usize) -> String {
    let elements: Vec<String> = std::iter::once("0".to_string())
        .chain((1..=levels).map(|i| format!("cel.index({}){}", i - 1, " + 1".repeat(additions))))
        .collect();
    format!("cel.block([{}], cel.index({levels}))", elements.join(", "))
}

#[test]
fn deep_chains_of_subexpressions_fail_instead_of_exhausting_the_stack() {
    // Subexpressions of depth 100 (each counts 101): three nest (305 of 314), four do not.
    assert_eq!(value(&chain(3, 99)), "297");
    let err = eval_error(&chain(4, 99));
    assert!(err.contains("nested too deeply"), "{err}");
    // Twenty-nine of depth 241, about 7,000 nested evaluations without the limit: an error,
    // on a small stack.
    let expr = chain(29, 240);
    let outcome = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || eval(&expr))
        .unwrap()
        .join()
        .unwrap();
    assert!(
        matches!(&outcome.result, Err(e) if e.contains("nested too deeply")),
        "{outcome:?}"
    );
}

#[test]
fn block_needs_bindings_version_1() {
    let v0 = Env::builder()
        .library(Bindings::version(0))
        .library(BlockTestMacros)
        .build();
    assert!(
        compile_error(&v0, "cel.block([1], cel.index(0))")
            .contains("undeclared reference to 'cel.@block'")
    );
    let v1 = Env::builder()
        .library(Bindings::version(1))
        .library(BlockTestMacros)
        .build();
    let ast = v1.compile("cel.block([1], cel.index(0))").unwrap();
    let program = v1.program(&ast).unwrap();
    assert_eq!(show(&program.eval(&MapActivation::new()).unwrap()), "1");
    // `cel.bind` is there at both versions.
    for env in [&v0, &v1] {
        let ast = env.compile("cel.bind(a, 2, a * a)").unwrap();
        let program = env.program(&ast).unwrap();
        assert_eq!(show(&program.eval(&MapActivation::new()).unwrap()), "4");
    }
}
