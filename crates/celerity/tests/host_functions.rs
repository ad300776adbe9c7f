//! Host functions from typed closures ([`celerity::EnvBuilder::host_function`]): the overload
//! is declared from the closure's types, arguments and results are converted, and a closure's
//! `Err` is an evaluation error.

use celerity::{Env, MapActivation, Type, Value};

fn eval(env: &Env, expr: &str) -> Result<Value, String> {
    let ast = env.compile(expr).map_err(|e| e.to_string())?;
    let program = env.program(&ast).map_err(|e| e.to_string())?;
    let vars = MapActivation::new().with("d", Value::from("dyn"));
    program.eval(&vars).map_err(|e| e.to_string())
}

fn env() -> Env {
    Env::builder()
        .variable("d", Type::Dyn)
        .host_function("answer", || 42i64)
        .host_function("greet", |name: &str, times: i64| -> String {
            format!("hello {}", name.repeat(times.max(0) as usize))
        })
        .host_function("half", |x: u64| x / 2)
        .host_function("join", |parts: Vec<String>, sep: &str| parts.join(sep))
        .host_function("concat3", |a: &str, b: &str, c: &str| format!("{a}{b}{c}"))
        .host_function("ratio", |a: f64, b: f64| -> Result<f64, String> {
            if b == 0.0 {
                Err("ratio: division by zero".to_string())
            } else {
                Ok(a / b)
            }
        })
        .host_function("echo", |v: Value| v)
        .host_function("flags", |b: bool| vec![b, !b])
        .build()
}

#[test]
fn typed_closures_are_declared_and_called() {
    let env = env();
    for (expr, want) in [
        ("answer()", Value::Int(42)),
        ("greet('ab', 2)", Value::from("hello abab")),
        ("half(9u)", Value::Uint(4)),
        ("join(['a', 'b'], '-')", Value::from("a-b")),
        ("concat3('x', 'y', 'z')", Value::from("xyz")),
        ("ratio(1.0, 4.0)", Value::Double(0.25)),
        ("echo([1, 'a']) == [1, 'a']", Value::Bool(true)),
        (
            "flags(true)",
            Value::list(vec![Value::Bool(true), Value::Bool(false)]),
        ),
    ] {
        assert_eq!(eval(&env, expr), Ok(want), "{expr}");
    }
}

#[test]
fn declarations_follow_the_closures_types() {
    let env = env();
    // The checker knows the parameter types...
    let err = eval(&env, "greet(1, 2)").unwrap_err();
    assert!(
        err.contains("found no matching overload for 'greet'"),
        "{err}"
    );
    // ...and the result type.
    let ast = env.compile("half(2u)").expect("compiles");
    assert_eq!(ast.result_type(), Some(&Type::Uint));
    let ast = env.compile("join([], '')").expect("compiles");
    assert_eq!(ast.result_type(), Some(&Type::String));
    // The overload ids say the parameter types.
    let greet = env
        .functions()
        .into_iter()
        .find(|f| f.name == "greet")
        .expect("declared");
    assert_eq!(greet.overloads[0].id, "greet_string_int");
}

#[test]
fn errors_and_dynamic_arguments() {
    let env = env();
    assert_eq!(
        eval(&env, "ratio(1.0, 0.0)"),
        Err("ratio: division by zero".to_string())
    );
    // A `dyn` argument of the wrong type is "no such overload", as for any function.
    let err = eval(&env, "half(d)").unwrap_err();
    assert!(err.contains("no such overload"), "{err}");
}
