//! Run-time costs against cel-go v0.29.2's figures (§5.2, §5.3 and §5.4 of
//! `../shared/docs/cost-model.md`, beside the repository): every (expression, input, cost)
//! data point, in cel-go's default mode and in the Kubernetes mode (presence tests free,
//! `OptOptimize`).

use celerity::{Env, EnvOptions, MapActivation, Type, Value, value_from_json};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Default,
    Kubernetes,
}

fn env(mode: Mode, vars: &serde_json::Value, decls: &[(&str, Type)]) -> Env {
    let mut options = EnvOptions::default();
    if mode == Mode::Kubernetes {
        options.presence_test_has_cost = false;
        options.optimize = true;
        options.homogeneous_aggregate_literals = true;
        options.cross_type_numeric_comparisons = true;
    }
    let mut b = Env::builder().options(options).all_extension_libraries();
    for (name, ty) in decls {
        b = b.variable(name, ty.clone());
    }
    if let Some(obj) = vars.as_object() {
        for (name, v) in obj {
            if !decls.iter().any(|(n, _)| n == name) {
                b = b.variable(name, json_type(v));
            }
        }
    }
    b.build()
}

/// The type cel-go's tests declare for a variable holding this JSON value: the most specific
/// type that fits (lists and maps of one element type), `dyn` where elements differ.
fn json_type(v: &serde_json::Value) -> Type {
    use serde_json::Value as J;
    fn join(types: impl Iterator<Item = Type>) -> Type {
        let mut out: Option<Type> = None;
        for t in types {
            out = Some(match out {
                None => t,
                Some(o) if o == t => o,
                Some(_) => return Type::Dyn,
            });
        }
        out.unwrap_or(Type::Dyn)
    }
    match v {
        J::Null => Type::Null,
        J::Bool(_) => Type::Bool,
        J::Number(n) if n.is_i64() => Type::Int,
        J::Number(_) => Type::Double,
        J::String(_) => Type::String,
        J::Array(items) => Type::list(join(items.iter().map(json_type))),
        J::Object(m) => Type::map(Type::String, join(m.values().map(json_type))),
    }
}

fn activation(vars: &serde_json::Value) -> MapActivation {
    let mut act = MapActivation::new();
    if let Some(obj) = vars.as_object() {
        for (k, v) in obj {
            act.bind(k.as_str(), value_from_json(v).unwrap());
        }
    }
    act
}

/// Evaluates and returns (result, cost).
fn run(
    mode: Mode,
    expr: &str,
    vars: serde_json::Value,
    decls: &[(&str, Type)],
    limit: Option<u64>,
) -> (Result<Value, celerity::EvalError>, u64) {
    let env = env(mode, &vars, decls);
    let ast = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    // Every data point runs on both backends, which must agree to the unit.
    let mut outcomes = Vec::new();
    for backend in [celerity::Backend::Interpreter, celerity::Backend::Jit] {
        let options = celerity::ProgramOptions::default().backend(backend);
        let program = env
            .program_with(&ast, options)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .with_cost_limit(limit);
        let (r, details) = program.eval_details(&activation(&vars));
        outcomes.push((r, details.actual_cost));
    }
    let jit = outcomes.pop().expect("two backends");
    let interpreter = outcomes.pop().expect("two backends");
    assert_eq!(
        format!("{:?}", interpreter),
        format!("{:?}", jit),
        "`{expr}`: the backends disagree (interpreter, then native code)"
    );
    interpreter
}

fn check(
    mode: Mode,
    expr: &str,
    vars: serde_json::Value,
    decls: &[(&str, Type)],
    want: u64,
) -> Option<String> {
    let (r, cost) = run(mode, expr, vars, decls, None);
    (cost != want).then(|| format!("{mode:?} `{expr}`: cost {cost}, cel-go {want} (result {r:?})"))
}

fn s(n: usize, c: char) -> String {
    std::iter::repeat_n(c, n).collect()
}

#[test]
fn runtime_costs_match_cel_go() {
    use Mode::*;
    use serde_json::json;
    let none = json!({});
    let mut failures = Vec::new();
    let mut n = 0;
    let mut t = |mode: Mode, expr: &str, vars: serde_json::Value, want: u64| {
        n += 1;
        if let Some(f) = check(mode, expr, vars, &[], want) {
            failures.push(f);
        }
    };
    // cost-model.md §5.2 (interpreter/runtimecost_test.go).
    t(Default, r#""Hello World!""#, none.clone(), 0);
    t(Default, "input", json!({"input": [1, 2]}), 1);
    t(Default, "input['key']", json!({"input": {"key": "v"}}), 2);
    t(Default, "input[0]", json!({"input": ["v"]}), 2);
    t(
        Default,
        "input['ke' + 'y']",
        json!({"input": {"key": "v"}}),
        3,
    );
    t(Default, "input[3-3]", json!({"input": ["v"]}), 3);
    let nested = json!({"input": {"testAttr": {"nestedAttr": "x"}}});
    t(Default, "has(input.testAttr.nestedAttr)", nested.clone(), 3);
    t(Kubernetes, "has(input.testAttr.nestedAttr)", nested, 2);
    t(Default, "[1, 2, 3]", none.clone(), 10);
    t(Default, r#"{"a": 1, "b": 2, "c": 3}"#, none.clone(), 30);
    t(Default, "input.all(x, true)", json!({"input": []}), 2);
    t(
        Default,
        "input.all(x, x.all(y, true))",
        json!({"input": []}),
        2,
    );
    t(Default, "[1, 2, 3].all(x, true)", none.clone(), 20);
    let s500 = json!({"input": s(500, 'x')});
    t(Default, "input.matches('[0-9]')", s500.clone(), 103);
    t(Default, "'123'.matches('[0-9]')", none.clone(), 2);
    for e in [
        "false || false",
        "true || false",
        "true && false",
        "false && true",
    ] {
        t(Default, e, none.clone(), 0);
    }
    let abcd_false = json!({"a": false, "b": false, "c": false, "d": false});
    let abcd_true = json!({"a": true, "b": true, "c": true, "d": true});
    t(Default, "a || b || c || d", abcd_false, 4);
    t(Default, "a && b && c && d", abcd_true, 4);
    for e in [
        "1 < 2", "1 <= 2", "1 == 2", "2 > 1", "2 >= 1", "1 + 1", "1 - 1", "1 / 1", "1 * 1", "1 % 1",
    ] {
        t(Default, e, none.clone(), 1);
    }
    t(Default, "2 in [1, 2, 3]", none.clone(), 13);
    t(Default, "true ? 1 : 2", none.clone(), 0);
    t(Default, "size(\"123\")", none.clone(), 1);
    t(
        Default,
        "'12345678901234567890' == '123456789012345678901234567890'",
        none.clone(),
        2,
    );
    t(Default, "string(1)", none.clone(), 1);
    t(Default, "bytes(input)", s500.clone(), 51);
    t(
        Default,
        "input.contains(arg1)",
        json!({"input": s(500, 'a'), "arg1": s(500, 'b')}),
        2502,
    );
    t(
        Default,
        "input.matches('\\\\d+a\\\\d+b')",
        s500.clone(),
        103,
    );
    t(
        Default,
        "matches(input, '\\\\d+a\\\\d+b')",
        s500.clone(),
        103,
    );
    let idc = json!({"input": "idc", "arg1": s(500, 'a')});
    t(Default, "input.startsWith(arg1)", idc.clone(), 52);
    t(Default, "input.endsWith(arg1)", idc, 52);
    t(Default, "input.size()", json!({"input": "500"}), 2);
    t(Default, "size(input)", json!({"input": "500"}), 2);
    t(
        Default,
        "(x > 2 ? input1 : input2).all(y, true)",
        json!({"x": 1, "input1": [1], "input2": [2]}),
        6,
    );
    t(Default, "true ? false : 1 > 3", none.clone(), 0);
    t(Default, "false ? false : 1 > 3", none.clone(), 1);
    t(
        Default,
        "input.all(k, input[k].all(x, true))",
        json!({"input": {}}),
        2,
    );
    t(
        Default,
        "input.all(k, k.contains(k))",
        json!({"input": {}}),
        2,
    );
    t(
        Default,
        "(list1 + list2).all(x, true)",
        json!({"list1": [], "list2": []}),
        4,
    );
    t(
        Default,
        "\"abcdefg\".contains(str1 + str2)",
        json!({"str1": "val1", "str2": "val2222222"}),
        6,
    );
    t(Default, "(1 > 2 ? 5 : 3) > 1", none.clone(), 2);
    t(Default, "(1 > 2 || 2 > 1) == true", none.clone(), 3);
    t(
        Default,
        "[{'k1': 1}, {'k2': 2}].all(x, true)",
        none.clone(),
        77,
    );
    t(
        Default,
        "[1,2,3,4,5].filter(x, x % 2 == 0)",
        none.clone(),
        62,
    );
    t(Default, "[1,2,3,4,5].map(x, x)", none.clone(), 86);
    t(
        Default,
        "[1,2,3,4,5].map(x, x).filter(x, x % 2 == 0)",
        none.clone(),
        138,
    );
    t(
        Default,
        "[1,2,3,4,5].map(x, x).exists(x, x == 5) == true",
        none.clone(),
        118,
    );
    t(
        Default,
        "[1,2,3,4,5].map(x, x).map(x, x)",
        none.clone(),
        162,
    );
    t(
        Default,
        "[1,2,3,4,5].map(x, [x, x]).filter(z, z.size() == 2)",
        none.clone(),
        232,
    );
    t(
        Default,
        "[1,2,3,4,5].map(x, [x, x]).all(y, y.all(y, y == 1))",
        none.clone(),
        171,
    );
    t(
        Default,
        "[1,2,3,4,5].map(x, x).map(x, x) + [1]",
        none.clone(),
        173,
    );
    t(
        Default,
        "[1,2,3].all(i, i in [1,2,3].map(j, j + j))",
        none.clone(),
        86,
    );

    // §5.3: two-variable comprehensions.
    t(
        Default,
        "[1, 2, 3, 4].all(i, v, i < 5 && v > 0)",
        none.clone(),
        39,
    );
    t(
        Default,
        "{1: 1, 2: 2, 3: 3}.all(i, v, i < 5 && v > 0)",
        none.clone(),
        52,
    );
    t(
        Default,
        "!{0: 0}.all(i, v, i < 5 && v > 0)",
        none.clone(),
        39,
    );
    t(Default, "[].transformList(i, v, v) == []", none.clone(), 31);
    t(
        Default,
        "[1].transformList(i, v, i) == [0]",
        none.clone(),
        45,
    );
    t(
        Default,
        "[3, 2, 1].transformList(i, v, v > i, v) == [3, 2]",
        none.clone(),
        67,
    );
    t(
        Default,
        "[].transformMap(k, v, v + 1) == {}",
        none.clone(),
        71,
    );
    t(
        Default,
        "{}.transformMap(k, v, v + 1) == {}",
        none.clone(),
        91,
    );
    t(
        Default,
        "{1: 2}.transformMap(k, v, v + 1) == {1: 3}",
        none.clone(),
        97,
    );
    t(
        Default,
        "{1: 2, 3: 4, 5: 6}.transformMap(k, v, k % 3 == 0, v + 1) == {3: 5}",
        none.clone(),
        106,
    );
    t(
        Default,
        "{1: 2}.transformMapEntry(k, v, {v: k}) == {2: 1}",
        none.clone(),
        126,
    );

    // §5.4: probe runs, default and Kubernetes modes.
    let b = json!({"x": "b"});
    t(Default, "x in ['a','b','c']", b.clone(), 14);
    t(Kubernetes, "x in ['a','b','c']", b.clone(), 1);
    t(Default, "x in {'a':1,'b':2}", b.clone(), 32);
    t(
        Default,
        "x in m",
        json!({"x": "b", "m": {"a": 1, "b": 2, "c": 3}}),
        3,
    );
    let l5 = json!({"l": [1, 2, 3, 4, 5], "x": 3});
    t(Default, "x in l", l5.clone(), 7);
    t(Default, "1 in l", json!({"l": []}), 1);
    t(
        Default,
        "l1 == l2",
        json!({"l1": (0..11).collect::<Vec<i64>>(), "l2": (0..21).collect::<Vec<i64>>()}),
        4,
    );
    t(
        Default,
        "s + t",
        json!({"s": s(16, 'a'), "t": s(10, 'b')}),
        5,
    );
    t(
        Default,
        "s < t",
        json!({"s": s(16, 'a'), "t": s(23, 'b')}),
        4,
    );
    t(
        Default,
        "s != t",
        json!({"s": s(104, 'a'), "t": s(104, 'b')}),
        13,
    );
    t(Default, "l + l", l5.clone(), 3);
    t(Default, "s.startsWith('abc')", json!({"s": s(49, 'a')}), 2);
    t(Default, "'abc'.startsWith(s)", json!({"s": s(49, 'a')}), 6);
    t(Default, "'abc'.startsWith('')", none.clone(), 0);
    t(
        Kubernetes,
        "s.matches('^[a-z]+$')",
        json!({"s": s(52, 'a')}),
        13,
    );
    let ma = json!({"m": {"a": 1}});
    t(Default, "has(m.a)", ma.clone(), 2);
    t(Kubernetes, "has(m.a)", ma.clone(), 1);
    let mabc = json!({"m": {"a": {"b": {"c": 1}}}});
    t(Default, "has(m.a.b.c)", mabc.clone(), 4);
    t(Kubernetes, "has(m.a.b.c)", mabc, 3);
    t(Default, "m.?a", ma.clone(), 2);
    t(Default, "m[?'a']", ma.clone(), 2);
    t(Default, "m.?a.optMap(v, v + 1)", ma.clone(), 19);
    t(Default, "[?m.?a, 2]", ma.clone(), 12);
    t(Default, "optional.none().orValue(1)", none.clone(), 1);
    t(Default, "l.all(x, x > 0)", l5.clone(), 27);
    t(Kubernetes, "l.all(x, x > 0)", l5.clone(), 27);
    t(Default, "l.all(x, x > 2)", l5.clone(), 9);
    t(Default, "l.exists(x, x > 2)", l5.clone(), 23);
    t(Default, "l.exists_one(x, x > 2)", l5.clone(), 19);
    t(Default, "l.map(x, x * 2)", l5.clone(), 82);
    t(Kubernetes, "l.map(x, x * 2)", l5.clone(), 72);
    t(Default, "l.map(x, x > 2, x * 2)", l5.clone(), 64);
    t(Default, "l.filter(x, x > 2)", l5.clone(), 61);
    t(Kubernetes, "l.filter(x, x > 2)", l5.clone(), 51);
    t(
        Default,
        "m.all(k, v, v > 0)",
        json!({"m": {"a": 1, "b": 2}}),
        12,
    );
    let l3 = json!({"l": [1, 2, 3]});
    t(Default, "l.transformList(i, v, v * i)", l3.clone(), 57);
    t(Default, "l.transformMap(i, v, v * i)", l3.clone(), 50);
    t(
        Default,
        "m.transformMapEntry(k, v, {v: k})",
        json!({"m": {"a": "x", "b": "y"}}),
        100,
    );
    t(Default, "l[i + 1]", json!({"l": [1, 2, 3], "i": 0}), 4);
    t(Default, "size(l) > 0 ? l[0] : 0", l3.clone(), 4);
    t(
        Default,
        "(c ? m1 : m2).f",
        json!({"c": true, "m1": {"f": 1}, "m2": {"f": 2}}),
        2,
    );
    t(Default, "1/0", none.clone(), 1);
    t(Default, "[1,2,3].all(x, true)", none.clone(), 20);
    t(Kubernetes, "[1,2,3].all(x, true)", none.clone(), 10);
    t(Kubernetes, "[1,2,3]", none.clone(), 0);
    t(Kubernetes, "{'a':1}", none.clone(), 0);
    t(Kubernetes, "duration('1h')", none.clone(), 0);
    t(
        Kubernetes,
        "timestamp('2020-01-01T00:00:00Z').getHours()",
        none.clone(),
        1,
    );

    assert!(
        failures.is_empty(),
        "{} of {n} costs differ from cel-go:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn cost_limit_stops_with_the_cost_reached() {
    use serde_json::json;
    let l = json!({"l": [1, 2, 3, 4, 5]});
    // cel-go: limit 50 → error with ActualCost 52; limit 82 (the exact cost) → success.
    let (r, cost) = run(Mode::Default, "l.map(x, x * 2)", l.clone(), &[], Some(50));
    let e = r.unwrap_err();
    assert_eq!(e.message, "operation cancelled: actual cost limit exceeded");
    assert_eq!(e.kind, celerity::ErrorKind::CostLimitExceeded);
    assert_eq!(cost, 52);
    let (r, cost) = run(Mode::Default, "l.map(x, x * 2)", l, &[], Some(82));
    assert!(r.is_ok());
    assert_eq!(cost, 82);
    // "abcdefg".contains(str1 + str2): limit 6 is enough, 5 is not.
    let v = json!({"str1": "val1", "str2": "val2222222"});
    let e = "\"abcdefg\".contains(str1 + str2)";
    assert!(run(Mode::Default, e, v.clone(), &[], Some(6)).0.is_ok());
    assert!(run(Mode::Default, e, v, &[], Some(5)).0.is_err());
}

#[test]
fn cost_limit_errors_are_not_absorbed() {
    use serde_json::json;
    // `|| true` absorbs ordinary errors, never the budget.
    let (r, _) = run(
        Mode::Default,
        "l.map(x, x * 2).size() > 100 || true",
        json!({"l": [1, 2, 3, 4, 5]}),
        &[],
        Some(10),
    );
    assert_eq!(r.unwrap_err().kind, celerity::ErrorKind::CostLimitExceeded);
}

#[test]
fn nested_comprehension_over_large_lists_stops_promptly() {
    let big: Vec<i64> = (0..100_000).collect();
    let vars = serde_json::json!({"l": big});
    let (r, cost) = run(
        Mode::Default,
        "l.all(x, l.all(y, x + y >= 0))",
        vars,
        &[],
        Some(10_000),
    );
    assert_eq!(r.unwrap_err().kind, celerity::ErrorKind::CostLimitExceeded);
    // Stopped within one iteration of crossing the budget, not after 10^10 iterations.
    assert!(cost > 10_000 && cost < 10_100, "{cost}");
}

/// Static estimates against cel-go v0.29.2 (`cost-model.md` §5.1, §5.3, §5.4). A hint `n`
/// for a path means its size is in `[0, n]`, as in cel-go's tests.
#[test]
fn estimates_match_cel_go() {
    use Mode::*;
    const MAX: u64 = u64::MAX;
    let mut failures = Vec::new();
    let mut n = 0;
    let mut e = |mode: Mode,
                 expr: &str,
                 decls: &[(&str, &str)],
                 hints: &[(&str, u64)],
                 want: (u64, u64)| {
        n += 1;
        let decls: Vec<(&str, Type)> = decls
            .iter()
            .map(|(name, t)| (*name, Type::parse(t).unwrap()))
            .collect();
        let env = env(mode, &serde_json::json!({}), &decls);
        let ast = match env.compile(expr) {
            Ok(a) => a,
            Err(err) => {
                failures.push(format!("{mode:?} `{expr}`: {err}"));
                return;
            }
        };
        let sizes = celerity::PathSizes(
            hints
                .iter()
                .map(|(p, h)| (p.to_string(), celerity::SizeRange { min: 0, max: *h }))
                .collect(),
        );
        let got = env.estimate_cost(&ast, &sizes).unwrap();
        if (got.min, got.max) != want {
            failures.push(format!(
                "{mode:?} `{expr}`: estimate [{}, {}], cel-go [{}, {}]",
                got.min, got.max, want.0, want.1
            ));
        }
    };
    let s = [("input", "string")];
    let b = [("input", "bytes")];
    // §5.1 (checker/cost_test.go), the cases without protobuf messages.
    e(Default, r#""Hello World!""#, &[], &[], (0, 0));
    e(Default, "input", &s, &[], (1, 1));
    e(
        Default,
        "input['key']",
        &[("input", "map(string, string)")],
        &[],
        (2, 2),
    );
    let nested = [("input", "map(string, map(string, string))")];
    e(
        Default,
        "has(input.testAttr.nestedAttr)",
        &nested,
        &[],
        (3, 3),
    );
    e(
        Kubernetes,
        "has(input.testAttr.nestedAttr)",
        &nested,
        &[],
        (2, 2),
    );
    e(Default, "[1, 2, 3]", &[], &[], (10, 10));
    e(Default, r#"{"a": 1, "b": 2, "c": 3}"#, &[], &[], (30, 30));
    e(
        Default,
        "input.all(x, true)",
        &[("input", "list(dyn)")],
        &[("input", 100)],
        (2, 302),
    );
    e(
        Default,
        "input.all(x, x.all(y, true))",
        &[("input", "list(list(dyn))")],
        &[("input", 50), ("input.@items", 10)],
        (2, 1752),
    );
    e(Default, "[1, 2, 3].all(x, true)", &[], &[], (20, 20));
    e(
        Default,
        "input.matches('[0-9]')",
        &s,
        &[("input", 500)],
        (3, 103),
    );
    e(Default, "'123'.matches('[0-9]')", &[], &[], (2, 2));
    e(Default, "true || false", &[], &[], (0, 0));
    let abcd = [("a", "bool"), ("b", "bool"), ("c", "bool"), ("d", "bool")];
    e(Default, "a || b || c || d", &abcd, &[], (1, 4));
    e(Default, "a && b && c && d", &abcd, &[], (1, 4));
    for x in [
        "1 < 2", "1 <= 2", "1 == 2", "2 > 1", "2 >= 1", "1 + 1", "1 - 1", "1 / 1", "1 * 1", "1 % 1",
    ] {
        e(Default, x, &[], &[], (1, 1));
    }
    e(Default, "2 in [1, 2, 3]", &[], &[], (13, 13));
    e(Default, "true ? 1 : 2", &[], &[], (0, 0));
    e(Default, "size(\"123\")", &[], &[], (1, 1));
    e(Default, "size(b\"123\")", &[], &[], (1, 1));
    e(Default, "string(input)", &b, &[("input", 500)], (1, 51));
    e(
        Default,
        "string(input) == string(input)",
        &b,
        &[("input", 500)],
        (3, 152),
    );
    e(Default, "bytes(input)", &s, &[("input", 500)], (1, 51));
    e(
        Default,
        "bytes(input) == bytes(input)",
        &s,
        &[("input", 500)],
        (3, 302),
    );
    e(Default, "string(1)", &[], &[], (1, 1));
    let s2 = [("input", "string"), ("arg1", "string")];
    e(
        Default,
        "input.contains(arg1)",
        &s2,
        &[("input", 500), ("arg1", 500)],
        (2, 2502),
    );
    e(
        Default,
        "input.matches('\\\\d+a\\\\d+b')",
        &s,
        &[("input", 500)],
        (3, 103),
    );
    e(
        Default,
        "matches(input, '\\\\d+a\\\\d+b')",
        &s,
        &[("input", 500)],
        (3, 103),
    );
    e(
        Default,
        "input.startsWith(arg1)",
        &s2,
        &[("arg1", 500)],
        (2, 52),
    );
    e(
        Default,
        "input.endsWith(arg1)",
        &s2,
        &[("arg1", 500)],
        (2, 52),
    );
    e(Default, "input.size()", &s, &[], (2, 2));
    e(Default, "size(input)", &s, &[], (2, 2));
    e(
        Default,
        "(x > 2 ? input1 : input2).all(y, true)",
        &[
            ("x", "int"),
            ("input1", "list(dyn)"),
            ("input2", "list(dyn)"),
        ],
        &[("input1", 1), ("input2", 1)],
        (4, 7),
    );
    e(
        Default,
        "input.all(k, input[k].single_int32 > 3)",
        &[("input", "map(string, map(string, int))")],
        &[("input", 10)],
        (2, 82),
    );
    e(
        Default,
        "input.all(k, input[k].all(x, true))",
        &[("input", "map(string, list(dyn))")],
        &[("input", 5), ("input.@values", 10)],
        (2, 187),
    );
    e(
        Default,
        "input.all(k, k.contains(k))",
        &[("input", "map(string, dyn)")],
        &[("input", 5), ("input.@keys", 10)],
        (2, 32),
    );
    e(
        Default,
        "input.all(k, input[k].all(k, true) && k.contains(k))",
        &[("input", "map(string, list(string))")],
        &[("input", 2), ("input.@values", 2), ("input.@keys", 5)],
        (2, 34),
    );
    let lists = [
        ("list1", "list(int)"),
        ("list2", "list(int)"),
        ("x", "int"),
        ("y", "int"),
    ];
    e(
        Default,
        "(list1 + list2).all(x, true)",
        &lists,
        &[("list1", 10), ("list2", 10)],
        (4, 64),
    );
    e(
        Default,
        "\"abcdefg\".contains(str1 + str2)",
        &[("str1", "string"), ("str2", "string")],
        &[("str1", 10), ("str2", 10)],
        (2, 6),
    );
    e(Default, "list1.size() == list2.size()", &lists, &[], (5, 5));
    e(
        Default,
        "x > y ? list1.size() : list2.size()",
        &lists,
        &[],
        (5, 5),
    );
    e(
        Default,
        "([x, y] + list1 + list2).size()",
        &lists,
        &[("list1", 10), ("list2", 20)],
        (17, 17),
    );
    e(
        Default,
        "[list1, list2].exists(l, l.exists(v, v.startsWith('hi')))",
        &[("list1", "list(string)"), ("list2", "list(string)")],
        &[
            ("list1", 10),
            ("list1.@items", 64),
            ("list2", 20),
            ("list2.@items", 128),
        ],
        (21, 265),
    );
    e(
        Default,
        "str1.endsWith(\"abcdefghijklmnopqrstuvwxyz\") == str2.endsWith(\"abcdefghijklmnopqrstuvwxyz\")",
        &[("str1", "string"), ("str2", "string")],
        &[],
        (9, 9),
    );
    e(
        Default,
        "((5 != 6) == (1 == 2)) == ((3 <= 4) == (9 != 9))",
        &[],
        &[],
        (7, 7),
    );
    let ts = [
        ("timestamp1", "google.protobuf.Timestamp"),
        ("timestamp2", "google.protobuf.Timestamp"),
        ("duration1", "google.protobuf.Duration"),
        ("duration2", "google.protobuf.Duration"),
    ];
    e(
        Default,
        "string(timestamp1) == string(timestamp2)",
        &ts,
        &[],
        (5, 1844674407370955268),
    );
    e(Default, "timestamp1 == timestamp2", &ts, &[], (3, 3));
    e(Default, "duration1 != duration2", &ts, &[], (3, 3));
    e(
        Default,
        "[1,2,3,4,5].filter(x, x % 2 == 0)",
        &[],
        &[],
        (41, 101),
    );
    e(Default, "[1,2,3,4,5].map(x, x)", &[], &[], (86, 86));
    e(
        Default,
        "[1,2,3,4,5].map(x, x).filter(x, x % 2 == 0)",
        &[],
        &[],
        (117, 177),
    );
    e(
        Default,
        "[1,2,3,4,5].map(x, x).exists(x, x == 5) == true",
        &[],
        &[],
        (108, 118),
    );
    e(
        Default,
        "[1,2,3,4,5].map(x, x).map(x, x)",
        &[],
        &[],
        (162, 162),
    );
    e(Default, "[1,2,3,4,5].map(x, x)[4]", &[], &[], (87, 87));
    e(
        Default,
        "[[1,2],[1,2],[1,2],[1,2],[1,2]][4]",
        &[],
        &[],
        (61, 61),
    );
    e(
        Default,
        "{'a': [1,2], 'b': [1,2], 'c': [1,2], 'd': [1,2], 'e': [1,2]}.b",
        &[],
        &[],
        (81, 81),
    );
    e(
        Default,
        "[[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]].all(y, y.all(y, y == 1))",
        &[],
        &[],
        (76, 136),
    );
    e(
        Default,
        "[1,2,3,4,5].map(x, [x, x]).all(y, y.all(y, y == 1))",
        &[],
        &[],
        (157, 217),
    );
    e(
        Default,
        "[\"a\", \"ab\", \"abc\", \"abcd\", \"abcde\"].map(x, [x, x]).all(y, y.all(y, y.startsWith('a')))",
        &[],
        &[],
        (157, 217),
    );
    e(
        Default,
        "input.map(x, [x, x]).all(y, y.all(y, y.startsWith('a')))",
        &[("input", "list(string)")],
        &[("input", 5), ("input.@items", 10)],
        (13, 208),
    );
    e(
        Default,
        "[1,2,3,4,5].map(x, x).map(x, x) + [1]",
        &[],
        &[],
        (173, 173),
    );
    e(
        Default,
        "[1,2,3].all(i, i in [1,2,3].map(j, j + j))",
        &[],
        &[],
        (20, 230),
    );
    e(
        Default,
        "dyn([1,2,3]).all(i, i in dyn([1,2,3]).map(j, j + j))",
        &[],
        &[],
        (21, 234),
    );
    e(
        Default,
        "{'hello': 'hi'}['hello'] != {'hello': 'bye'}['hello']",
        &[],
        &[],
        (63, 63),
    );
    e(
        Default,
        "['hello', 'hi'][0] != ['hello', 'bye'][1]",
        &[],
        &[],
        (23, 23),
    );
    e(Default, "type(1)", &[], &[], (1, 1));
    let si = [("self", "map(string, int)")];
    e(Default, "type(self.val1)", &si, &[], (3, 3));
    e(
        Default,
        "type(self.val1) == int",
        &si,
        &[],
        (5, 1844674407370955268),
    );
    e(
        Default,
        "type(1) == int",
        &[],
        &[],
        (3, 1844674407370955266),
    );
    e(
        Default,
        "self.val1 == 1.0",
        &[("self.val1", "double")],
        &[],
        (2, 2),
    );
    e(
        Default,
        "self.val1 == 1.0",
        &[("self", "map(string, double)")],
        &[],
        (3, 3),
    );
    let st = [("self", "map(string, google.protobuf.Timestamp)")];
    e(
        Default,
        "self.val1 == timestamp('2011-08-18T00:00:00.000+01:00') + duration('19h3m37s10ms')",
        &st,
        &[],
        (6, 6),
    );
    e(
        Default,
        "timestamp(self.val1) == timestamp('2011-08-18T00:00:00.000+01:00') + duration('19h3m37s10ms')",
        &st,
        &[],
        (7, 7),
    );
    let sb = [("self", "map(string, bool)")];
    e(Default, "self.val1 != self.val2", &sb, &[], (5, 5));
    e(Default, "self.val1 != true", &sb, &[], (3, 3));

    // §5.4: probe runs.
    let x = [("x", "string")];
    e(Default, "x in ['a','b','c']", &x, &[], (14, 14));
    e(Kubernetes, "x in ['a','b','c']", &x, &[], (14, 14));
    e(Default, "x in {'a':1,'b':2}", &x, &[], (32, 32));
    e(
        Default,
        "x in m",
        &[("x", "string"), ("m", "map(string, int)")],
        &[],
        (3, 3),
    );
    let li = [("l", "list(int)"), ("x", "int"), ("i", "int")];
    e(Default, "x in l", &li, &[], (2, MAX));
    e(
        Default,
        "l1 == l2",
        &[("l1", "list(int)"), ("l2", "list(int)")],
        &[],
        (3, 1844674407370955266),
    );
    let st2 = [("s", "string"), ("t", "string")];
    e(Default, "s + t", &st2, &[], (2, 1844674407370955266));
    e(Default, "l + l", &li, &[("l", 10)], (3, 3));
    e(Default, "s.startsWith('abc')", &st2, &[], (2, 2));
    e(Default, "'abc'.startsWith(s)", &st2, &[("s", 50)], (1, 6));
    e(Default, "'abc'.startsWith('')", &[], &[], (0, 0));
    let m = [("m", "map(string, int)")];
    e(Default, "has(m.a)", &m, &[], (2, 2));
    e(Kubernetes, "has(m.a)", &m, &[], (1, 1));
    let mn = [("m", "map(string, map(string, map(string, int)))")];
    e(Default, "has(m.a.b.c)", &mn, &[], (4, 4));
    e(Kubernetes, "has(m.a.b.c)", &mn, &[], (3, 3));
    e(Default, "m.?a", &m, &[], (2, 2));
    e(Default, "m[?'a']", &m, &[], (2, 2));
    e(Default, "m.?a.optMap(v, v + 1)", &m, &[], (4, 19));
    e(Default, "[?m.?a, 2]", &m, &[], (12, 12));
    e(Default, "optional.none().orValue(1)", &[], &[], (2, 2));
    e(Default, "l.all(x, x > 0)", &li, &[("l", 5)], (2, 27));
    e(Default, "l.exists(x, x > 2)", &li, &[("l", 5)], (2, 32));
    e(Default, "l.exists_one(x, x > 2)", &li, &[("l", 5)], (3, 23));
    e(Default, "l.map(x, x * 2)", &li, &[("l", 5)], (12, 82));
    e(
        Default,
        "l.map(x, x > 2, x * 2)",
        &li,
        &[("l", 5)],
        (12, 92),
    );
    e(Default, "l.filter(x, x > 2)", &li, &[("l", 5)], (12, 87));
    e(Default, "m.all(k, v, v > 0)", &m, &[("m", 2)], (2, 12));
    e(
        Default,
        "l.transformList(i, v, v * i)",
        &li,
        &[("l", 3)],
        (12, 57),
    );
    e(
        Default,
        "l.transformMap(i, v, v * i)",
        &li,
        &[("l", 3)],
        (32, 50),
    );
    e(
        Default,
        "m.transformMapEntry(k, v, {v: k})",
        &[("m", "map(string, string)")],
        &[("m", 2)],
        (32, 100),
    );
    e(Default, "l[i + 1]", &li, &[], (4, 4));
    e(Default, "size(l) > 0 ? l[0] : 0", &li, &[], (3, 5));
    e(
        Default,
        "(c ? m1 : m2).f",
        &[
            ("c", "bool"),
            ("m1", "map(string, int)"),
            ("m2", "map(string, int)"),
        ],
        &[],
        (3, 3),
    );
    e(Default, "1/0", &[], &[], (1, 1));

    // §5.3: two-variable comprehensions.
    e(
        Default,
        "[1, 2, 3, 4].all(i, v, i < 5 && v > 0)",
        &[],
        &[],
        (23, 39),
    );
    e(
        Default,
        "{1: 1, 2: 2, 3: 3}.all(i, v, i < 5 && v > 0)",
        &[],
        &[],
        (40, 52),
    );
    e(
        Default,
        "!{0: 0}.all(i, v, i < 5 && v > 0)",
        &[],
        &[],
        (35, 39),
    );
    e(
        Default,
        "m.all(i, v, i < 5 && v > 0)",
        &[("m", "map(int, int)")],
        &[("m", 3)],
        (2, 23),
    );
    e(
        Default,
        "[].transformList(i, v, v) == []",
        &[],
        &[],
        (31, 31),
    );
    e(
        Default,
        "[1].transformList(i, v, i) == [0]",
        &[],
        &[],
        (45, 45),
    );
    e(
        Default,
        "[3, 2, 1].transformList(i, v, v > i, v) == [3, 2]",
        &[],
        &[],
        (44, 80),
    );
    e(
        Default,
        "[].transformMap(k, v, v + 1) == {}",
        &[],
        &[],
        (71, 71),
    );
    e(
        Default,
        "{}.transformMap(k, v, v + 1) == {}",
        &[],
        &[],
        (91, 91),
    );
    e(
        Default,
        "{1: 2}.transformMap(k, v, v + 1) == {1: 3}",
        &[],
        &[],
        (97, 97),
    );
    e(
        Default,
        "{1: 2, 3: 4, 5: 6}.transformMap(k, v, k % 3 == 0, v + 1) == {3: 5}",
        &[],
        &[],
        (104, 116),
    );
    e(
        Default,
        "{1: 2}.transformMapEntry(k, v, {v: k}) == {2: 1}",
        &[],
        &[],
        (126, 126),
    );

    assert!(
        failures.is_empty(),
        "{} of {n} estimates differ from cel-go:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
