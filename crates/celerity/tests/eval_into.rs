//! `Program::eval_into` writes the value `Program::eval_details` returns into the caller's
//! slot, with the same error, cost and backend, on every backend and on each of native
//! code's exits: a value of each result kind, an error, and a cost limit (which the
//! interpreter finishes). A failed evaluation leaves the slot as it was.

use celerity::{Backend, Env, MapActivation, ProgramOptions, Type, Value};

fn env() -> Env {
    Env::builder()
        .all_extension_libraries()
        .variable("i", Type::Int)
        .variable("s", Type::String)
        .variable("m", Type::map(Type::String, Type::Dyn))
        .build()
}

fn activation() -> MapActivation {
    let m = celerity::value_from_json(&serde_json::json!({"a": 1, "b": "x"})).expect("JSON");
    MapActivation::new()
        .with("i", Value::Int(7))
        .with("s", Value::from("str"))
        .with("m", m)
}

/// Expressions covering each result kind and each way an evaluation ends.
const CASES: &[&str] = &[
    "true",
    "i * 2 < 10",
    "i + 1",
    "uint(i) * 3u",
    "double(i) / 2.0",
    "s + '!'",
    "[i, i + 1].map(x, x * 2)",
    "{'k': s}",
    "m.b",
    "m.missing",
    "i / (i - 7)",
    "lists.range(50).all(x, x >= 0)",
    "lists.range(50).map(x, s + string(x)).size()",
    "m.exists(k, k == 'z') || true",
];

#[test]
fn eval_into_agrees_with_eval_details() {
    let env = env();
    let act = activation();
    for backend in [Backend::Interpreter, Backend::Jit] {
        for limit in [None, Some(20)] {
            for expr in CASES {
                let ast = env.compile(expr).expect(expr);
                let options = ProgramOptions::default().backend(backend);
                let program = env
                    .program_with(&ast, options)
                    .expect(expr)
                    .with_cost_limit(limit);
                let what = format!("{expr} on {backend:?}, limit {limit:?}");
                let (expected, expected_details) = program.eval_details(&act);
                let sentinel = Value::from("before");
                let mut slot = sentinel.clone();
                let (outcome, details) = program.eval_into(&act, &mut slot);
                assert_eq!(details.actual_cost, expected_details.actual_cost, "{what}");
                assert_eq!(details.backend, expected_details.backend, "{what}");
                match (expected, outcome) {
                    (Ok(value), Ok(())) => assert_eq!(slot, value, "{what}"),
                    (Err(e), Err(f)) => {
                        assert_eq!((e.kind, e.message), (f.kind, f.message), "{what}");
                        assert_eq!(slot, sentinel, "{what}: a failure leaves the slot");
                    }
                    (e, f) => panic!("{what}: eval_details gave {e:?}, eval_into {f:?}"),
                }
                // Again into the slot the first evaluation filled.
                let (again, _) = program.eval_into(&act, &mut slot);
                assert_eq!(again.is_ok(), outcome_is_ok(&program, &act), "{what}");
            }
        }
    }
}

fn outcome_is_ok(program: &celerity::Program, act: &MapActivation) -> bool {
    program.eval(act).is_ok()
}

#[test]
fn the_cases_reach_each_exit() {
    // Native code must compile every case, and the cases must include failing evaluations
    // without a limit, or the test above would compare less than it says.
    let env = env();
    let act = activation();
    let mut errors = 0;
    for expr in CASES {
        let ast = env.compile(expr).unwrap();
        let program = env
            .program_with(&ast, ProgramOptions::default().backend(Backend::Jit))
            .unwrap();
        assert_eq!(program.backend(), Backend::Jit, "{expr} compiles natively");
        let mut slot = Value::Null;
        errors += usize::from(program.eval_into(&act, &mut slot).0.is_err());
    }
    assert!(errors >= 2, "the cases include failing evaluations");
}

/// Programs whose every evaluation is the same (no variable, no loop) are evaluated once
/// when compiled, and each evaluation hands that out: the interpreter's value, error and
/// cost, under a cost limit below, at and above the cost, with cost tracking off, and into
/// slots of every kind.
#[test]
fn constant_programs_give_the_interpreters_evaluation() {
    let env = env();
    let act = MapActivation::new();
    let constants = [
        "true",
        "1 + 2 == 3",
        "'ab' + 'cd'",
        "[1, 2, 3].size() * 7",
        "{'a': 1}.a",
        "1 / 0",
        "string(12) + 'x' == '12x'",
        // Costs more than is worth computing ahead of time: evaluated each time.
        "lists.range(3000).size() == 3000",
    ];
    for expr in constants {
        let ast = env.compile(expr).expect(expr);
        let (full, _) = {
            let p = env
                .program_with(
                    &ast,
                    ProgramOptions::default().backend(Backend::Interpreter),
                )
                .unwrap();
            let (r, d) = p.eval_details(&act);
            (d.actual_cost, r)
        };
        for limit in [None, Some(0), Some(full.saturating_sub(1)), Some(full)] {
            for track in [true, false] {
                let build = |backend| {
                    let options = ProgramOptions::default().backend(backend).track_cost(track);
                    env.program_with(&ast, options)
                        .unwrap()
                        .with_cost_limit(limit)
                };
                let (interpreter, native) = (build(Backend::Interpreter), build(Backend::Jit));
                let what = format!("{expr}, limit {limit:?}, tracking {track}");
                let (want, want_details) = interpreter.eval_details(&act);
                let want = want.map_err(|e| (e.kind, e.message));
                for _ in 0..2 {
                    let (got, details) = native.eval_details(&act);
                    assert_eq!(got.map_err(|e| (e.kind, e.message)), want, "{what}");
                    assert_eq!(details.actual_cost, want_details.actual_cost, "{what}");
                }
                for before in [
                    Value::Null,
                    Value::Bool(false),
                    Value::Int(5),
                    Value::from("s"),
                ] {
                    let mut slot = before.clone();
                    let (outcome, details) = native.eval_into(&act, &mut slot);
                    assert_eq!(details.actual_cost, want_details.actual_cost, "{what}");
                    match (&want, outcome) {
                        (Ok(v), Ok(())) => assert_eq!(&slot, v, "{what}, slot {before:?}"),
                        (Err(e), Err(f)) => {
                            assert_eq!(e, &(f.kind, f.message), "{what}");
                            assert_eq!(slot, before, "{what}");
                        }
                        (w, g) => panic!("{what}: want {w:?}, got {g:?}"),
                    }
                }
            }
        }
    }
}
