//! Tests of the facade: the pipeline end to end, threads, JSON, host functions and deep
//! values.

use std::sync::Arc;

use celerity::{
    Env, EvalError, MapActivation, OverloadDecl, Program, Type, Value, activation_from_json,
    value_from_json, value_to_json,
};

fn eval(env: &Env, expr: &str, act: &MapActivation) -> Result<Value, EvalError> {
    let ast = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    env.program(&ast).unwrap().eval(act)
}

#[test]
fn program_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Program>();
    assert_send_sync::<Env>();
}

#[test]
fn one_program_from_eight_threads() {
    let env = Env::builder().variable("n", Type::Int).build();
    let ast = env
        .compile("[1, 2, 3, 4].map(i, i * n).filter(x, x % 2 == 0).size() + n")
        .unwrap();
    let program = Arc::new(env.program(&ast).unwrap());
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let program = Arc::clone(&program);
            std::thread::spawn(move || {
                for i in 0..2_000i64 {
                    let n = t * 1000 + i;
                    let act = MapActivation::new().with("n", n);
                    let evens = if n % 2 == 0 { 4 } else { 2 };
                    assert_eq!(program.eval(&act).unwrap(), Value::Int(evens + n));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn json_activation_maps_numbers_like_the_cli() {
    let act = activation_from_json(&serde_json::json!({
        "self": {"replicas": 3, "ratio": 0.5, "big": 18446744073709551615u64, "tags": ["a"]}
    }))
    .unwrap();
    let env = Env::builder().variable("self", Type::Dyn).build();
    assert_eq!(
        eval(
            &env,
            "type(self.replicas) == int && type(self.ratio) == double",
            &act
        )
        .unwrap(),
        Value::Bool(true)
    );
    // Integers beyond int64 become doubles.
    assert_eq!(
        eval(&env, "type(self.big)", &act).unwrap(),
        Value::type_value(Type::Double)
    );
    assert_eq!(
        eval(&env, "self.tags[0] == 'a'", &act).unwrap(),
        Value::Bool(true)
    );
}

#[test]
fn json_round_trip() {
    let json = serde_json::json!({"a": [1, 2.5, "x", null, true], "b": {"c": {}}});
    let v = value_from_json(&json).unwrap();
    assert_eq!(value_to_json(&v).unwrap(), json);
}

#[test]
fn host_functions_and_errors() {
    let env = Env::builder()
        .variable("x", Type::Int)
        .function(
            "safeDiv",
            OverloadDecl::global("safe_div_int_int", vec![Type::Int, Type::Int], Type::Int),
            |args: &[Value]| match args {
                [Value::Int(_), Value::Int(0)] => Err(EvalError::new("custom: zero")),
                [Value::Int(a), Value::Int(b)] => Ok(Value::Int(a / b)),
                _ => Err(EvalError::no_such_overload()),
            },
        )
        .build();
    let act = MapActivation::new().with("x", 10i64);
    assert_eq!(eval(&env, "safeDiv(x, 2)", &act).unwrap(), Value::Int(5));
    let err = eval(&env, "safeDiv(x, 0)", &act).unwrap_err();
    assert_eq!(err.message, "custom: zero");
    // Errors are absorbed by logical operators like any other.
    assert_eq!(
        eval(&env, "safeDiv(x, 0) == 1 || true", &act).unwrap(),
        Value::Bool(true)
    );
}

#[test]
fn compile_reports_every_diagnostic() {
    let env = Env::default();
    let err = env.compile("a + b").unwrap_err();
    assert_eq!(err.diagnostics().len(), 2);
    let text = err.to_string();
    assert!(text.contains("undeclared reference to 'a'"), "{text}");
    assert!(text.contains("undeclared reference to 'b'"), "{text}");
}

#[test]
fn errors_carry_the_failing_expression() {
    let env = Env::default();
    let ast = env.compile("1 + 2 / 0").unwrap();
    let err = env
        .program(&ast)
        .unwrap()
        .eval(&MapActivation::new())
        .unwrap_err();
    assert_eq!(err.message, "division by zero");
    // The `/` node: positions are in the AST's source info.
    let anchor = ast.syntax().source_info.anchor(err.expr_id);
    assert_eq!(anchor, Some(6));
}

/// Builds a list nested `depth` levels deep: `[[[...[]...]]]`.
fn nested_list(depth: usize) -> Value {
    let mut v = Value::list(vec![]);
    for _ in 0..depth {
        v = Value::list(vec![v]);
    }
    v
}

#[test]
fn deep_data_is_not_a_stack_risk() {
    // Runs on a thread with the default 2 MiB stack, as a host's worker thread would.
    std::thread::Builder::new()
        .spawn(|| {
            let env = Env::builder().variable("x", Type::Dyn).build();
            let act = MapActivation::new().with("x", nested_list(10_000));
            assert_eq!(eval(&env, "x == x", &act).unwrap(), Value::Bool(true));
            assert_eq!(eval(&env, "size(x)", &act).unwrap(), Value::Int(1));
            // Lists are not ordered: an error, not a crash.
            assert!(eval(&env, "x < x", &act).is_err());
            assert_eq!(eval(&env, "x in [x]", &act).unwrap(), Value::Bool(true));
            let printed = celerity::to_cel_literal(&act_value(&act));
            assert_eq!(printed.len(), 20_002);
            assert!(value_to_json(&act_value(&act)).is_err());
        })
        .unwrap()
        .join()
        .unwrap();
}

fn act_value(act: &MapActivation) -> Value {
    use celerity::Activation;
    act.resolve("x").unwrap()
}

#[test]
fn kubernetes_literal_validators() {
    let env = Env::builder()
        .options(celerity::EnvOptions::kubernetes())
        .variable("x", Type::String)
        .variable("d", Type::Dyn)
        .build();
    let err = |e: &str| env.compile(e).unwrap_err().to_string();
    assert_eq!(
        err("duration('1')"),
        "ERROR: <input>:1:10: invalid duration argument\n | duration('1')\n | .........^"
    );
    assert_eq!(
        err("duration('1us')\n < duration('1nns')"),
        "ERROR: <input>:2:13: invalid duration argument\n |  < duration('1nns')\n | ............^"
    );
    assert!(
        err("timestamp('2023-13-01T00:00:00Z') == timestamp(0)")
            .contains("invalid timestamp argument")
    );
    assert!(err("x.matches('[')").contains("invalid matches argument"));
    assert!(err("[1, d]").contains("expected type 'int' but found 'dyn'"));
    assert!(err("{'a': 1, 'b': 'c'}").contains("expected type 'int' but found 'string'"));
    for ok in [
        "duration('1h') > duration('1m')",
        "x.matches('^a+$')",
        "[1, 2]",
        "{'a': [1]}",
    ] {
        env.compile(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

#[test]
fn functions_leave_out_names_only_macros_can_reach() {
    let env = Env::builder().all_extension_libraries().build();
    let names: Vec<String> = env.functions().into_iter().map(|f| f.name).collect();
    assert!(names.iter().all(|n| !n.contains('@')), "{names:?}");
    // Callable functions and operators stay.
    for n in ["math.abs", "cel.bind", "_+_", "size"] {
        let listed = names.iter().any(|x| x == n)
            // `cel.bind` is a macro, not a function.
            || n == "cel.bind";
        assert!(listed, "{n}");
    }
    // The hidden ones are still there for the macros that expand to them.
    let ast = env.compile("math.greatest(1, 2) == 2").unwrap();
    assert_eq!(
        env.program(&ast)
            .unwrap()
            .eval(&MapActivation::new())
            .unwrap(),
        Value::Bool(true)
    );
}

#[test]
fn literal_format_calls_are_checked_when_compiled() {
    // cel-go's string_format validator (ext/formatting_v2.go stringFormatValidatorV2 for the
    // newest strings library, ext/formatting.go stringFormatValidator for versions 1 to 3).
    let env = Env::builder().all_extension_libraries().build();
    for (expr, message) in [
        (
            "'%d'.format(['a'])",
            "error during formatting: decimal clause can only be used on ints, uints, and doubles, was given string",
        ),
        ("'%s %s'.format([1])", "index 1 out of range"),
        (
            "'%s'.format([1, 2])",
            "too many arguments supplied to string.format (expected 1, got 2)",
        ),
        ("'filler %'.format([])", "unexpected end of string"),
        (
            "'%j'.format([1])",
            "could not parse formatting clause: unrecognized formatting clause \"j\"",
        ),
        (
            "'%s'.format([[1, optional.none()]])",
            "was given optional_type",
        ),
    ] {
        let err = env.compile(expr).expect_err(expr).to_string();
        assert!(err.contains(message), "{expr}: {err}");
    }
    // Arguments of type dyn, and calls that are not literal, are left to run time.
    for expr in ["'%d'.format([dyn('a')])", "'%d'.format(dyn(['a']))"] {
        let ast = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        let err = env
            .program(&ast)
            .unwrap()
            .eval(&MapActivation::new())
            .unwrap_err();
        assert!(err.to_string().contains("decimal clause"), "{expr}: {err}");
    }
    // The legacy formatter's own words, at strings version 2 (Kubernetes).
    let v2 = Env::builder().library(cel_ext::Strings::version(2)).build();
    let err = v2.compile("'%d'.format([1.5])").unwrap_err().to_string();
    assert!(
        err.contains("decimal clause can only be used on integers, was given double"),
        "{err}"
    );
    assert!(v2.compile("'%d'.format([1])").is_ok());
}
