//! Chains of string concatenations in native code: `a + b + c == x`, compared piece by piece
//! without building the concatenation (`concat.eq`), and `a + b + c` used otherwise, built
//! once (`concat`). Both give the interpreter's value, error and cost, with pieces and the
//! compared value failing, of other types, of several bytes per code point, past the limits
//! on built strings, under cost limits, and with a host's cost hook on `+` (which must see
//! the values).

use std::sync::Arc;

use celerity::{Backend, CostKey, Env, MapActivation, Program, ProgramOptions, Type, Value};

#[path = "support/ir.rs"]
mod ir;
use ir::ir_of;

fn env(hooked: bool) -> Env {
    let mut b = Env::builder()
        .variable("s", Type::String)
        .variable("t", Type::String)
        .variable("e", Type::String)
        .variable("big", Type::String)
        .variable("m", Type::map(Type::String, Type::Dyn))
        .variable("d", Type::Dyn)
        .all_extension_libraries();
    if hooked {
        // Charges a concatenation by its result's length in bytes, to see the values.
        // A comprehension's `acc + [x]` is charged by what it sees too.
        let hook = Arc::new(|args: &[Value], result: &Value| match (args, result) {
            ([Value::String(a), _], Value::String(r)) => Some(a.len() as u64 + r.len() as u64),
            ([Value::List(a), Value::List(x)], Value::List(r)) => {
                Some(100 * a.len() as u64 + 10 * x.len() as u64 + r.len() as u64)
            }
            ([Value::List(a), Value::Null], _) => Some(1000 + a.len() as u64),
            _ => Some(7),
        });
        b = b.actual_cost(CostKey::Function("_+_".into()), hook);
    }
    b.build()
}

fn activation() -> MapActivation {
    let m =
        celerity::value_from_json(&serde_json::json!({"a": "x", "n": 3, "u": "ü"})).expect("JSON");
    MapActivation::new()
        .with("s", "héllo")
        .with("t", "wörld ☃")
        .with("e", "")
        // Two of these make a string past the 64 MiB any operation may build.
        .with("big", Value::from("x".repeat(40 << 20)))
        .with("m", m)
        .with("d", Value::Int(3))
}

const EXPRESSIONS: &[&str] = &[
    "s + t == 'héllowörld ☃'",
    "s + ' ' + t == 'héllo wörld ☃'",
    "s + ' ' + t != 'héllo wörld ☃'",
    "s + t == 'héllowörld'",
    "s + t == 'héllowörld ☃!'",
    "s + t == 'hellowörld ☃'",
    "'' + e + '' == ''",
    "e + s + e == s",
    "s + t + s + t + s + t + s + t + s + t == s + t + s + t + s + t + s + t + s + t",
    "'a' + s + 'b' + t + 'c' + s + 'd' + t + 'e' + s + 'f' == 'a'",
    "m.a + s == 'xhéllo'",
    "m.missing + s == 'x'",
    "s + m.missing == 'x'",
    "s + m.missing + m.other == 'x'",
    "s + t == m.missing",
    "m.missing + s == m.other",
    "s + t == d",
    "s + t == dyn(m.u)",
    "s + t != d",
    "string(m.n) + s == '3héllo'",
    "big + s == s",
    "big + big == s",
    "s + big + big == m.missing",
    "e + big + big == s",
    // Each iteration builds `big + t` (40 MiB), then fails on the 80 MiB of the second `+`:
    // six of them take 240 of an evaluation's 256 MiB allowance, so a step whose bytes
    // were taken twice would run out and fail differently.
    "[1, 2, 3, 4, 5, 6].exists(i, big + t + big == s)",
    "[1, 2, 3].all(i, s + string(i) + t != t)",
    "[s, t].exists(x, x + '!' == t + '!')",
    "(s + t == s) || (s + t == t + s) || s + s == s + s",
    // Chains built, not compared.
    "s + ' ' + t",
    "'' + e + ''",
    "e + s + e",
    "s + t + s + t + s + t + s + t + s + t",
    "'a' + s + 'b' + t + 'c' + s + 'd' + t + 'e' + s + 'f'",
    "m.a + s + t",
    "m.missing + s + t",
    "s + m.missing + t",
    "s + t + m.missing",
    "s + m.missing + m.other",
    "string(m.n) + s + dyn(m.u)",
    "(s + t + s).size()",
    "(big + s + t).size()",
    "(big + big + s).size()",
    "(s + big + big).size()",
    "(e + big + e + big).size()",
    "[1, 2, 3, 4, 5, 6].exists(i, (big + t + big).size() == 0)",
    "[1, 2, 3].map(i, s + string(i) + t)",
    "[s, t].map(x, x + '!' + x)",
    "[s, t, e].filter(x, (x + '-' + x).startsWith(s))",
    "{s + t + s: 1, t + s + t: 2}",
    "(s + ' ' + t).startsWith(s + ' ')",
    "size(s + t + s) + size(t + s + t)",
    // Appends in a comprehension, which the hook sees, with elements that fail.
    "[1, 2, 3].map(i, s)",
    "[1, 2, 3].filter(i, i > 1)",
    "[0, 1].map(i, [m.a, m.missing][i])",
    "m.map(k, k + s + k)",
];

fn programs(env: &Env, expr: &str, limit: Option<u64>) -> (Program, Program) {
    let ast = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let build = |backend| {
        env.program_with(&ast, ProgramOptions::default().backend(backend))
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .with_cost_limit(limit)
    };
    (build(Backend::Interpreter), build(Backend::Jit))
}

fn outcome(program: &Program, act: &MapActivation) -> String {
    let (result, details) = program.eval_details(act);
    let result = result.map_err(|e| (e.kind, e.message));
    format!("{result:?}, cost {}", details.actual_cost)
}

#[test]
fn native_comparisons_of_concatenations_agree_with_the_interpreter() {
    let act = activation();
    for hooked in [false, true] {
        let env = env(hooked);
        for expr in EXPRESSIONS {
            let (interpreter, native) = programs(&env, expr, None);
            let full = interpreter.eval_details(&act).1.actual_cost;
            for limit in [None, Some(full / 2), Some(full)] {
                let (interpreter, native) = programs(&env, expr, limit);
                assert_eq!(
                    outcome(&interpreter, &act),
                    outcome(&native, &act),
                    "{expr} (hook on `+`: {hooked}, limit {limit:?})"
                );
            }
            assert_eq!(native.backend(), Backend::Jit, "{expr}");
        }
    }
}

/// The chains are compiled as one comparison or one build, or the test above would compare
/// less than it says.
#[test]
fn chains_compile_to_one_operation() {
    let env = env(false);
    for (expr, op) in [
        ("'a' + s + 'b' + t == 'x'", "concat.eq ["),
        ("('a' + s + 'b' + t).size()", "concat ["),
        ("[1].map(i, s + string(i) + t)", "concat ["),
    ] {
        let ir = ir_of(&env, expr);
        assert!(ir.contains(op), "{expr}: {ir}");
        // No `+` is called (`charge.call _+_` is the comprehension's append).
        assert!(!ir.contains(" call _+_ ["), "{expr}: {ir}");
        assert!(!ir.contains("call.dyn _+_"), "{expr}: {ir}");
    }
}

/// A variable bound against its declaration (a host's mistake) is not a string: the
/// evaluation is the interpreter's, whose call reports it.
#[test]
fn a_piece_that_is_not_a_string_is_the_interpreters() {
    let env = env(false);
    let act = activation().with("s", Value::Int(1));
    for expr in [
        "s + t == 'x'",
        "t + s == 'x'",
        "s + t != d",
        "s + t + t",
        "t + t + s",
        "[1, 2].map(i, t + s + t)",
    ] {
        let (interpreter, native) = programs(&env, expr, None);
        assert_eq!(
            outcome(&interpreter, &act),
            outcome(&native, &act),
            "{expr}"
        );
    }
}
