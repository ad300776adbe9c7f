//! The JIT against the interpreter on hand-picked expressions: values, errors and costs must
//! be the same. (The whole conformance suite and the random expressions run in `spec-tests`.)

use celerity::{Backend, CompileTask, Env, MapActivation, Program, ProgramOptions, Type, Value};

#[path = "support/ir.rs"]
mod ir;
use ir::ir_of;

fn env() -> Env {
    Env::builder()
        .variable("x", Type::Int)
        .variable("y", Type::Int)
        .variable("u", Type::Uint)
        .variable("d", Type::Double)
        .variable("s", Type::String)
        .variable("b", Type::Bool)
        .variable("l", Type::list(Type::Int))
        .variable("m", Type::map(Type::String, Type::Dyn))
        .variable("self", Type::Dyn)
        .all_extension_libraries()
        .build()
}

fn vars() -> MapActivation {
    let obj = celerity::value_from_json(&serde_json::json!({
        "minReplicas": 1, "replicas": 3, "maxReplicas": 5,
        "metadata": {"name": "singleton"},
        "widgets": [{"key": "a", "foo": 20}, {"key": "x", "foo": 3}],
        "names": ["a", "b"],
    }))
    .unwrap();
    MapActivation::new()
        .with("x", 7i64)
        .with("y", 5i64)
        .with("u", Value::Uint(3))
        .with("d", Value::Double(2.5))
        .with("s", "hello")
        .with("b", true)
        .with(
            "l",
            Value::list(vec![Value::Int(1), Value::Int(2), Value::Int(3)]),
        )
        .with(
            "m",
            celerity::value_from_json(&serde_json::json!({"a": 1, "b": "two"})).unwrap(),
        )
        .with("self", obj)
}

fn programs(env: &Env, expr: &str) -> (Program, Program) {
    let ast = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let interp = env
        .program_with(
            &ast,
            ProgramOptions::default().backend(Backend::Interpreter),
        )
        .unwrap();
    let jit = env
        .program_with(&ast, ProgramOptions::default().backend(Backend::Jit))
        .unwrap_or_else(|e| panic!("{expr}: {e}"));
    assert_eq!(jit.backend(), Backend::Jit);
    (interp, jit)
}

fn outcome(p: &Program, vars: &MapActivation) -> String {
    let (r, d) = p.eval_details(vars);
    let r = match r {
        Ok(v) => format!("{} : {}", celerity::to_cel_literal(&v), v.type_name()),
        Err(e) => format!("error {:?} at {}: {}", e.kind, e.expr_id, e.message),
    };
    format!("{r} (cost {})", d.actual_cost)
}

/// Runs each expression on both backends over `activations`, in order, through the same two
/// programs: the interpreter's outcomes, and a line for each outcome native code differs on.
fn against_interpreter<S: AsRef<str>>(
    env: &Env,
    exprs: &[S],
    activations: &[&MapActivation],
) -> (Vec<String>, Vec<String>) {
    let (mut outcomes, mut failures) = (Vec::new(), Vec::new());
    for expr in exprs {
        let expr = expr.as_ref();
        let (i, j) = programs(env, expr);
        for vars in activations {
            let (x, y) = (outcome(&i, vars), outcome(&j, vars));
            if x != y {
                failures.push(format!("{expr}\n  interpreter: {x}\n  jit: {y}"));
            }
            outcomes.push(x);
        }
    }
    (outcomes, failures)
}

/// Each expression on both backends with `self` bound to each of `data`, then the same in
/// reverse order (so that read sites meet the shapes in both orders): asserts they agree and
/// returns the interpreter's outcomes.
fn agree_on_self(env: &Env, exprs: &[&str], data: &[serde_json::Value]) -> Vec<String> {
    let vars: Vec<MapActivation> = data
        .iter()
        .map(|d| vars().with("self", celerity::value_from_json(d).unwrap()))
        .collect();
    let activations: Vec<&MapActivation> = vars.iter().chain(vars.iter().rev()).collect();
    let (outcomes, failures) = against_interpreter(env, exprs, &activations);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    outcomes
}

const EXPRS: &[&str] = &[
    "true",
    // A binding first read inside a loop whose iteration also keeps an inner loop's list:
    // freeing the iteration's values moved one into the other's old place, and the binding
    // read as the list (found by the differential fuzzer).
    "cel.bind(v1, 'zz', l.map(x2, l.filter(x3, x3 > 5) == [] ? v1 : 'no'))",
    "cel.bind(v1, 'zz', l.map(x2, (l.filter(x3, x3 > 5).map(x4, v1) != ['a', 'b']), v1))",
    "1 + 2",
    "x + y * 3 - x / 2 > 10",
    "(x + y) * 3 - x / 2 > 10",
    "x / 0",
    "x % 0",
    "-9223372036854775807 - x",
    "9223372036854775807 + x",
    "u - 4u",
    "u * 2u",
    "d * 2.0 < 6.0",
    "d / 0.0",
    "s + ' world' == 'hello world'",
    "s.startsWith('he')",
    "s.size() + 1",
    // `==` with a constant string: unequal lengths decided inline, the rest by the call.
    "self.metadata.name == 'singleton' && self.metadata.name != 'single'",
    "self.widgets.filter(w, w.key == 'x' || 'a' == w.key || w.foo == 'ab')",
    "[self.names[0] == 'a', dyn(b'ab') == 'ab', dyn(2) == 'x', s == '', self.missing == 'a']",
    "'é' == dyn('\\u00e9') && 'e' != dyn('é')",
    // `size` held as an `int`: typed, dynamic (every `size` overload), failed operands.
    "(l.size() == 0) != (self.names.size() == 0)",
    "size(m) + self.widgets.size() > self.metadata.size()",
    "self.metadata.name.size() < 9 && size(self.names) <= x",
    "self.widgets.map(w, w.key.size() + w.size())",
    "self.missing.size() == 0 || self.replicas.size() == 1",
    "[self.names.size(), dyn(b'ab').size(), dyn(s).size()]",
    "l.size() == 3",
    "l.all(i, i > 0)",
    "l.exists(i, i == 2)",
    "l.exists_one(i, i > 1)",
    "l.map(i, i * i)",
    "l.filter(i, i % 2 == 1)",
    "l.map(i, i * i).filter(i, i % 2 == 1).size() == 2",
    "[1, 2, 3, 4, 5].map(x, x * x).filter(x, x % 2 == 1).size() == 3",
    "m.a == 1",
    "m.c",
    "has(m.a) && !has(m.z)",
    "m['b']",
    "'a' in m",
    "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas",
    "self.metadata.name == 'singleton'",
    "self.widgets.exists(w, w.key == 'x' && w.foo < 10)",
    "self.names.all(n, n.matches('^[a-z]$'))",
    "self.nope || true",
    "self.nope && false",
    "false && self.nope",
    "self.nope || self.other",
    "b ? x : y",
    "x > 100 ? 'big' : 'small'",
    "{'k': x, 'j': [y, s]}",
    "[x, y, u]",
    "dyn(x) == dyn(7u)",
    "dyn(1) < 2.5",
    "x in [1, 7, 9]",
    "s in ['a', 'hello']",
    "optional.of(x).orValue(0)",
    "m.?c.orValue('none')",
    "[?optional.none(), ?optional.of(1)]",
    "cel.bind(z, x * 2, z + z)",
    "l.transformList(i, v, i + v)",
    "m.transformMap(k, v, k)",
    "int('12') + 1",
    "string(x) + s",
    "timestamp('2024-01-01T00:00:00Z') + duration('1h')",
    "type(x) == int",
    // An error an inner loop kept across its iterations, absorbed by `||`, and a later error
    // of the outer loop: releasing the outer iteration's errors must not mix their handles
    // (found by the differential fuzz target).
    "[0].map(x0, ([1].exists(e4, l[5] == 0) || true), ({'a': s}['-5'] == s))",
    "[0, 1].map(x0, [1, 2].exists(e4, l[5] == 0) || true, m['zz'] == x0)",
    "[1, 2] + [3]",
    "{1: 2}.map(k, k)",
    "l.map(i, l.map(j, i * j))",
    "l.all(i, i / (i - 2) > 0)",
    "l.exists(i, i / (i - 2) > 0)",
    "dyn(x).size()",
    "1 / 0 > 1 || true",
    "!(x == 7)",
    "-x",
    "-d",
    "d == d",
    "0.0 / 0.0 < 1.0",
    "sets.contains([1, 2, 3], [2])",
    "'abc'.upperAscii()",
];

#[test]
fn jit_agrees_with_the_interpreter() {
    let env = env();
    let vars = vars();
    let mut failures = Vec::new();
    for expr in EXPRS {
        let (i, j) = programs(&env, expr);
        let (a, b) = (outcome(&i, &vars), outcome(&j, &vars));
        if a != b {
            failures.push(format!("{expr}\n  interpreter: {a}\n  jit:         {b}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Native code checks once, on entry, that each variable is bound and that those declared
/// `int`, `uint`, `double` or `bool` hold such a value, and reads them without checks after
/// that; an evaluation where one does not is the interpreter's. Either way the answers are
/// the interpreter's, errors and costs included.
#[test]
fn variables_that_do_not_fit_their_declarations_get_the_interpreters_answers() {
    let env = env();
    let exprs = [
        "x + 1",
        "x > 0 || y > 0",
        "y > 0 || x + 1 > 0",
        "u + 1u",
        "d * 2.0",
        "b && x > 1",
        "!b || s == 'hello'",
        "s + '!'",
    ];
    let bindings = [
        ("bound as declared", vars()),
        ("x a string", vars().with("x", "seven")),
        ("y a double", vars().with("y", Value::Double(5.0))),
        ("u an int", vars().with("u", 3i64)),
        ("d an int", vars().with("d", 2i64)),
        ("b null", vars().with("b", Value::Null)),
        ("s an int", vars().with("s", 1i64)),
        ("x unbound", without(vars(), "x")),
        ("s unbound", without(vars(), "s")),
    ];
    let mut failures = Vec::new();
    let mut native_values = 0;
    for expr in exprs {
        let (i, j) = programs(&env, expr);
        for (what, vars) in &bindings {
            let (a, b) = (outcome(&i, vars), outcome(&j, vars));
            if a != b {
                failures.push(format!(
                    "{expr} with {what}\n  interpreter: {a}\n  jit: {b}"
                ));
            }
            native_values += usize::from(*what == "bound as declared" && !a.starts_with("error"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(native_values, exprs.len());
}

/// `vars` without `name`.
fn without(vars: MapActivation, name: &str) -> MapActivation {
    let mut out = MapActivation::new();
    for (n, v) in vars.iter().filter(|(n, _)| *n != name) {
        out = out.with(n, v.clone());
    }
    out
}

#[test]
fn cost_limits_stop_both_backends_at_the_same_step() {
    let env = env();
    let vars = vars();
    for expr in [
        "l.map(i, l.map(j, i * j))",
        "self.widgets.exists(w, w.key == 'x' && w.foo < 10)",
        "s + s + s",
    ] {
        let (i, j) = programs(&env, expr);
        for limit in 0..40u64 {
            let (i, j) = (
                i.clone().with_cost_limit(Some(limit)),
                j.clone().with_cost_limit(Some(limit)),
            );
            assert_eq!(
                outcome(&i, &vars),
                outcome(&j, &vars),
                "{expr} with limit {limit}"
            );
        }
    }
}

#[test]
fn programs_evaluate_from_many_threads() {
    let env = env();
    let (_, j) = programs(
        &env,
        "self.widgets.exists(w, w.key == 'x' && w.foo < 10) && s.size() == 5",
    );
    let vars = vars();
    std::thread::scope(|sc| {
        for _ in 0..4 {
            sc.spawn(|| {
                for _ in 0..2000 {
                    assert_eq!(j.eval(&vars).unwrap(), Value::Bool(true));
                }
            });
        }
    });
}

/// With an executor that compiles on the spot, `Auto` compiles on its
/// [`Backend::AUTO_JIT_AFTER`]th evaluation, which runs native code. (Compiles in the
/// background are tested in `tiering.rs`.)
#[test]
fn auto_compiles_after_repeated_evaluations() {
    let env = env().extend().compile_executor(CompileTask::run).build();
    let ast = env.compile("x + y").unwrap();
    let p = env.program(&ast).unwrap();
    let vars = vars();
    assert_eq!(p.backend(), Backend::Interpreter);
    for _ in 1..Backend::AUTO_JIT_AFTER {
        let (r, details) = p.eval_details(&vars);
        assert_eq!(r.unwrap(), Value::Int(12));
        assert_eq!(details.backend, Backend::Interpreter);
    }
    assert_eq!(p.backend(), Backend::Interpreter);
    let (r, details) = p.eval_details(&vars);
    assert_eq!(r.unwrap(), Value::Int(12));
    assert_eq!(details.backend, Backend::Jit);
    assert_eq!(p.backend(), Backend::Jit);
}

/// An activation that counts how often each variable is asked for.
struct Counting {
    asked: std::sync::Mutex<Vec<String>>,
}

impl celerity::Activation for Counting {
    fn resolve(&self, name: &str) -> Option<Value> {
        self.asked.lock().unwrap().push(name.to_string());
        match name {
            "b" => Some(Value::Bool(true)),
            "x" => Some(Value::Int(1)),
            _ => None,
        }
    }
}

#[test]
fn lazy_variables_are_asked_for_where_they_are_read() {
    let env = env();
    let ast = env.compile("b || x > 0").unwrap();
    let asked = |lazy: bool| {
        let p = env
            .program_with(
                &ast,
                ProgramOptions::default()
                    .backend(Backend::Jit)
                    .lazy_variables(lazy),
            )
            .unwrap();
        let act = Counting {
            asked: std::sync::Mutex::new(Vec::new()),
        };
        assert_eq!(p.eval(&act).unwrap(), Value::Bool(true));
        act.asked.into_inner().unwrap()
    };
    // At entry, every variable the program reads; lazily, only the one the evaluation
    // reaches (`b` is true, so `x > 0` is not evaluated), as the interpreter does.
    assert_eq!(asked(false), vec!["b", "x"]);
    assert_eq!(asked(true), vec!["b"]);
}

/// Size-dependent charges on values of dynamic type: native code charges a scalar's (or a
/// failed argument's) size of 1 inline, and a string's or bytes' that is short enough (in
/// bytes) for the cost not to depend on it, and measures anything else, so every kind of
/// value, strings and bytes on either side of the 0.1 factor's steps (in bytes and in code
/// points), and missing fields, meet in `==`, `<`, `+` and `matches`, with the interpreter's
/// values, errors and costs.
#[test]
fn size_dependent_charges_on_dynamic_values_are_the_interpreters() {
    let env = env();
    let fields = serde_json::json!({
        "empty": "", "one": "a", "nine": "abcdefghi", "ten": "abcdefghij",
        "eleven": "abcdefghijk", "wide": "ééééééééééé", "long": "x".repeat(95),
        "four": "abcd", "five": "abcde", "two_wide": "éé", "five_wide": "ééééé",
        "int": 7, "double": 2.5, "flag": true, "nothing": null,
        "nolist": [], "list": [1, 2, 3], "map": {"k": "v"},
    });
    let mut names: Vec<&str> = fields
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    names.push("missing");
    let vars = vars().with("self", celerity::value_from_json(&fields).unwrap());
    let mut exprs = Vec::new();
    for a in &names {
        exprs.extend([
            format!("self.{a} == 'abcdefghijkl'"),
            format!("self.{a} == ''"),
            // Short constants: 1 unless the other side is empty, tested inline for text.
            format!("self.{a} == 'x'"),
            format!("self.{a} == 'abcdefghij'"),
            format!("bytes(self.{a}) == b'x'"),
            format!("self.{a}.matches('^a')"),
            format!("'abcdef' + self.{a}"),
            format!("b'abcdef' + bytes(self.{a})"),
            format!("bytes(self.{a}) + b'abcdefgh'"),
        ]);
        for b in &names {
            exprs.push(format!("self.{a} == self.{b}"));
            exprs.push(format!("self.{a} < self.{b}"));
            exprs.push(format!("self.{a} + self.{b}"));
        }
    }
    let (outcomes, failures) = against_interpreter(&env, &exprs, &[&vars]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Some charges are past the scalar fast path: `long == long` costs 2 + 10.
    let measured = outcomes
        .iter()
        .filter(|x| x.ends_with("(cost 4)") || x.ends_with("(cost 13)"))
        .count();
    assert!(measured > 0);
}

/// `'key' in container` with a constant key is looked up in a map by native code itself,
/// the key hashed once and looked for first where it was in the last map: the answers are
/// the interpreter's for maps of any key order, evaluated one after the other through the
/// same programs, and for every other container (which the call answers).
#[test]
fn constant_keys_in_containers_are_the_interpreters() {
    let env = env();
    let data = |order: &[(&str, serde_json::Value)]| {
        let map: serde_json::Map<String, serde_json::Value> = order
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let fields = serde_json::json!({
            "map": map, "list": ["k", "a", ""], "nolist": [], "text": "k", "int": 7,
            "nothing": null,
        });
        vars()
            .with("self", celerity::value_from_json(&fields).unwrap())
            .with(
                "m",
                celerity::value_from_json(&serde_json::Value::Object(map)).unwrap(),
            )
    };
    let one = serde_json::json!(1);
    let orders = [
        data(&[("k", one.clone()), ("a", one.clone()), ("", one.clone())]),
        data(&[("a", one.clone()), ("", one.clone()), ("k", one.clone())]),
        data(&[("z", one.clone())]),
        data(&[]),
        data(&[("k", serde_json::Value::Null), ("kk", one.clone())]),
    ];
    let mut exprs = Vec::new();
    for container in [
        "m",
        "self.map",
        "self.list",
        "self.nolist",
        "self.text",
        "self.int",
        "self.nothing",
        "self.missing",
        "dyn(m)",
    ] {
        for key in ["'k'", "'a'", "''", "'missing'", "'é'"] {
            exprs.push(format!("{key} in {container}"));
        }
    }
    let activations: Vec<&MapActivation> = orders.iter().chain(orders.iter().rev()).collect();
    let (outcomes, failures) = against_interpreter(&env, &exprs, &activations);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(outcomes.iter().any(|x| x.starts_with("true")));
}

/// A field read that an identical read always precedes takes that read's value
/// (`cel_ir::passes::share_reads`): the values, errors (each at its own expression) and
/// costs are the interpreter's whether the fields are there, missing, `null` or of another
/// kind, on both sides of `&&`, `||` and `?:`, and inside and after loops.
#[test]
fn repeated_reads_are_the_interpreters() {
    let env = env();
    let exprs = [
        "self.spec.min <= self.spec.n && self.spec.n <= self.spec.max",
        "self.spec.n > 0 || self.spec.n < 0 || self.spec.n == 0",
        "self.spec.n > 0 && self.spec.n < 0",
        "[1, 2].all(x, self.spec.n > x) || self.spec.n == 0",
        "self.spec.n == 1 ? self.spec.n : self.spec.min",
        "self.list.exists(e, e == self.spec.n) && self.list.size() > self.spec.n",
        "self.list.map(e, self.spec.n + e).filter(e, e > self.spec.min)",
        "has(self.spec.n) && self.spec.n > self.spec.min",
        "self.spec.n.x == self.spec.n.x || m.a == m.a + 0",
        "self.list.all(e, self.list.exists(f, f == e && self.spec.n > 0))",
        // The first read's error is absorbed, the repeat's is the result: at its own place.
        "(self.spec.n > 0 || true) && self.spec.n == 1",
        "[self.spec.n > 0 || self.spec.min > 0, self.spec.n, self.spec]",
        "self.list.exists(e, self.spec.n > e) || true ? self.spec.n : 0",
    ];
    let data = [
        serde_json::json!({"spec": {"min": 1, "n": 3, "max": 5}, "list": [1, 3]}),
        serde_json::json!({"spec": {"min": 1, "max": 5}, "list": [1, 3]}),
        serde_json::json!({"spec": {"min": 1, "n": {"x": 1}, "max": 5}, "list": []}),
        serde_json::json!({"spec": null, "list": [2]}),
        serde_json::json!({"spec": "text", "list": [1]}),
        serde_json::json!({"list": [1, 2, 3]}),
        serde_json::json!({"spec": {"n": 0}}),
    ];
    let outcomes = agree_on_self(&env, &exprs, &data);
    let errors = outcomes.iter().filter(|x| x.starts_with("error")).count();
    assert!(errors > 20, "the data makes reads fail: {errors} errors");
    // The reads are shared: `self.spec` is read once, `self.spec.n` once, each repeat an
    // `err.again`.
    let ir = ir_of(&env, exprs[0]);
    assert_eq!(ir.matches("select \"spec\"").count(), 1, "{ir}");
    assert_eq!(ir.matches("select \"n\"").count(), 1, "{ir}");
    assert_eq!(ir.matches("err.again").count(), 4, "{ir}");
}

#[test]
fn invariant_reads_are_hoisted_as_the_interpreter_reads_them() {
    let env = env();
    let exprs = [
        "self.list.all(e, e <= self.spec.max)",
        "self.list.exists(e, has(self.spec.n) && self.spec.n == e)",
        "self.list.all(e, !has(self.spec.n) || has(self.spec.n.x) || self.spec.n >= e)",
        "self.list.map(e, self.spec.min + e)",
        "self.list.filter(e, e in self.set)",
        "self.list.map(e, self.list.map(f, self.spec.min + e + f))",
        "[1, 2].all(x, self.list.all(e, self.spec.max >= e + x))",
        // The hoisted read's error outlives the values each iteration frees (the strings):
        // it surfaces in a later iteration, or is absorbed by one.
        "self.list.exists(e, string(e) + 'x' == '3x' && self.spec.gone > 0)",
        "self.list.map(e, string(e) + 'x' == '3x' ? self.spec.gone : e)",
        "self.list.exists(e, string(e) + 'x' == '1x' || self.spec.gone > 0)",
        // Read before the loop too: shared after hoisting.
        "self.spec.max > 0 && self.list.all(e, e < self.spec.max)",
        "self.list.all(e, self.list.exists(f, f == e && self.spec.n.x > 0))",
    ];
    let data = [
        serde_json::json!({"spec": {"min": 1, "n": 3, "max": 5}, "list": [1, 3], "set": [3]}),
        serde_json::json!({"spec": {"min": 1, "max": 5}, "list": [1, 3], "set": []}),
        serde_json::json!({"spec": {"min": 1, "n": {"x": 1}, "max": 5}, "list": []}),
        serde_json::json!({"spec": null, "list": [2], "set": [2]}),
        serde_json::json!({"spec": "text", "list": [1, 3]}),
        serde_json::json!({"list": [1, 2, 3], "set": {"a": 1}}),
        serde_json::json!({"spec": {"n": 0, "max": 2}, "list": [3, 1]}),
    ];
    let outcomes = agree_on_self(&env, &exprs, &data);
    let errors = outcomes.iter().filter(|x| x.starts_with("error")).count();
    assert!(errors > 30, "the data makes reads fail: {errors} errors");
    // The reads (and presence tests) leave the innermost loop: in it (after the last
    // `arena.mark`) only `err.again` is left.
    for (expr, first) in [
        (exprs[0], "select \"max\""),
        (exprs[6], "select \"max\""),
        (exprs[2], "has \"x\""),
    ] {
        let ir = ir_of(&env, expr);
        let (before, in_loops) = ir.rsplit_once("arena.mark").unwrap_or((&ir, ""));
        assert!(before.contains(first), "{ir}");
        assert!(
            !in_loops.contains("select") && !in_loops.contains("has "),
            "{ir}"
        );
        assert!(in_loops.contains("err.again"), "{ir}");
    }
    // A read leaves one loop only: before the outer loop (its `arena.mark` first) nothing
    // of the inner loop's is read.
    let nested = ir_of(&env, exprs[6]);
    let (outside, _) = nested.split_once("arena.mark").unwrap_or((&nested, ""));
    assert!(!outside.contains("select \"max\""), "{nested}");
}
