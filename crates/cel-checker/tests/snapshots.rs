//! Snapshot tests of the checker: the type (and reference) of every sub-expression for a
//! curated set of expressions, and the diagnostics of ill-typed ones.

use cel_checker::{CheckerEnv, CheckerOptions, check, format_checked};
use cel_syntax::{ParserOptions, Source, macros::MacroTable, parse, render_diagnostics};
use cel_types::{Container, FunctionDecl, OverloadDecl, Type, VariableDecl};

fn env() -> CheckerEnv {
    let mut env = CheckerEnv::standard();
    env.add_optional_library();
    for (name, ty) in [
        ("x", Type::Int),
        ("y", Type::Uint),
        ("d", Type::Double),
        ("s", Type::String),
        ("b", Type::Bytes),
        ("t", Type::Timestamp),
        ("dur", Type::Duration),
        ("l", Type::list(Type::Int)),
        ("ls", Type::list(Type::String)),
        ("m", Type::map(Type::String, Type::Int)),
        (
            "mm",
            Type::map(Type::String, Type::map(Type::String, Type::Int)),
        ),
        ("dy", Type::Dyn),
        ("opt", Type::optional(Type::Int)),
        ("a.b.c", Type::String),
        ("a.b", Type::map(Type::String, Type::Bool)),
        ("self", Type::map(Type::String, Type::Dyn)),
    ] {
        env.add_variable(VariableDecl::new(name, ty));
    }
    env
}

fn parser_options() -> ParserOptions {
    let mut macros = MacroTable::standard();
    macros.extend(cel_syntax::macros::optional_macros());
    ParserOptions {
        macros,
        ..ParserOptions::default()
    }
}

fn check_one(env: &CheckerEnv, expr: &str) -> String {
    check_with(env, &parser_options(), expr)
}

fn check_with(env: &CheckerEnv, options: &ParserOptions, expr: &str) -> String {
    let source = Source::new(expr);
    let parsed = parse(&source, options);
    assert!(
        parsed.diagnostics.is_empty(),
        "{expr}: {}",
        render_diagnostics(&parsed.diagnostics, &source)
    );
    let (checked, diags) = check(env, &parsed.ast);
    if diags.is_empty() {
        format_checked(&checked)
    } else {
        render_diagnostics(&diags, &source)
    }
}

fn run_all(env: &CheckerEnv, exprs: &[&str]) -> String {
    let mut out = String::new();
    for e in exprs {
        out.push_str("=== ");
        out.push_str(e);
        out.push('\n');
        out.push_str(&check_one(env, e));
        out.push_str("\n\n");
    }
    out
}

const WELL_TYPED: &[&str] = &[
    "1",
    "1u",
    "1.5",
    "'s'",
    "b'b'",
    "true",
    "null",
    "x",
    "x + 1",
    "x - 2 * 3 / 4 % 5",
    "-x",
    "y + 1u",
    "d * 2.0",
    "s + 'suffix'",
    "b + b'x'",
    "!true",
    "x < 10 && y > 1u || d >= 0.5",
    "x == 1",
    "s != 'a'",
    "x in l",
    "'k' in m",
    "l[0]",
    "m['k']",
    "m.k",
    "mm.a.b",
    "mm['a']['b']",
    "size(s)",
    "s.size()",
    "size(l) + size(m)",
    "s.contains('a') && s.startsWith('b') && s.endsWith('c')",
    "s.matches('^a+$')",
    "int(s)",
    "uint(x)",
    "double(x)",
    "string(d)",
    "bytes(s)",
    "bool('true')",
    "timestamp('2023-01-01T00:00:00Z')",
    "duration('1h')",
    "t + dur",
    "t - t",
    "t.getHours('America/Los_Angeles')",
    "dur.getMinutes()",
    "type(x)",
    "type(x) == int",
    "dyn(x)",
    "dy + 1",
    "dy.field",
    "dy[0]",
    "x > 0 ? 'pos' : 'neg'",
    "[1, 2, 3]",
    "[1, 'a']",
    "[]",
    "{'a': 1, 'b': 2}",
    "{1: 'a', 2u: 'b'}",
    "{}",
    "l.all(i, i > 0)",
    "l.exists(i, i == 2)",
    "l.exists_one(i, i == 2)",
    "l.map(i, i * 2)",
    "l.map(i, i > 1, string(i))",
    "l.filter(i, i % 2 == 0)",
    "m.all(k, m[k] > 0)",
    "has(m.k)",
    "has(self.spec)",
    "a.b.c",
    "a.b.d",
    "opt.hasValue()",
    "opt.value() + 1",
    "opt.orValue(0)",
    "optional.of(1)",
    "optional.none()",
    "m.?k",
    "m.?k.orValue(0)",
    "l[?0]",
    "[?opt, 1]",
    "{?'a': opt}",
    "opt.optMap(v, v + 1)",
    "google.protobuf.Int64Value{value: 1}",
    "ls.map(s, s + '!').filter(s, size(s) > 1)",
    "[[1], [2, 3]].map(inner, inner.size())",
    "self.items.all(i, i.name != '')",
];

const ILL_TYPED: &[&str] = &[
    "1 + 'a'",
    "1 + 1u",
    "1 == 1.0",
    "undeclared",
    "x.field",
    "undeclaredFn(1)",
    "s.noSuchMethod()",
    "-1u",
    "-dur",
    "1.0 % 2.0",
    "size(1)",
    "x.size()",
    "'a' < 1",
    "l[0u]",
    "l['a']",
    "m[1]",
    "int(b)",
    "!1",
    "x ? 1 : 2",
    "true ? 1 : 'a' + 1",
    "x.all(i, i > 0)",
    "l.all(i, i)",
    "l.map(i, i + 's')",
    "l.filter(i, 1)",
    "[1, 2].exists(i, i == 'a')",
    "t + t",
    "dur - t",
    "s.contains(1)",
    "s.matches(1)",
    "t.getHours(1)",
    "opt.value() + 's'",
    "[?1]",
    "{?'a': 1}",
    "1 in m",
    "has(x.f)",
    "null + 1",
    "x < d",
    "y == x",
    "[1] + ['a']",
    "{'a': 1} == {'a': 'b'}",
];

#[test]
fn types_of_well_typed_expressions() {
    insta::assert_snapshot!(run_all(&env(), WELL_TYPED));
}

#[test]
fn diagnostics_of_ill_typed_expressions() {
    insta::assert_snapshot!(run_all(&env(), ILL_TYPED));
}

#[test]
fn options_change_acceptance() {
    let mut strict = env();
    strict.set_options(CheckerOptions {
        homogeneous_aggregate_literals: true,
        cross_type_numeric_comparisons: true,
    });
    insta::assert_snapshot!(run_all(
        &strict,
        &[
            "[1, 'a']",
            "{'a': 1, 'b': 'c'}",
            "[1, dy]",
            "x < d",
            "1u < -1",
            "-1 < 1u",
            "x == d"
        ]
    ));
}

#[test]
fn container_resolution() {
    let mut env = env();
    env.set_container(Container::new("a.b"));
    env.add_variable(VariableDecl::new("a.b.local", Type::Int));
    env.add_variable(VariableDecl::new("top", Type::Int));
    insta::assert_snapshot!(run_all(
        &env,
        &["local + top", ".top", "c", "b.c", ".a.b.c", "missing"]
    ));
}

/// `cel.@block` as cel-go's bindings library (version 1) declares it, `cel_block_list(list(dyn),
/// T) -> T`, with the `cel.block` test macros and `@index0` to `@index3` declared `dyn`, as in
/// cel-go's conformance environment: the block is an ordinary call whose type is its result's.
#[test]
fn block_expressions() {
    let mut env = env();
    let t = Type::param("T");
    env.add_function(FunctionDecl::new(
        "cel.@block",
        vec![OverloadDecl::global(
            "cel_block_list",
            vec![Type::list(Type::Dyn), t.clone()],
            t,
        )],
    ));
    for i in 0..4 {
        env.add_variable(VariableDecl::new(format!("@index{i}"), Type::Dyn));
    }
    let mut options = parser_options();
    options
        .macros
        .extend(cel_syntax::macros::block_test_macros());
    let exprs = [
        "cel.block([x, cel.index(0) + 1], cel.index(1))",
        "cel.block([[1, 2], size(cel.index(0))], cel.index(1) == 2)",
        "cel.block([], 's')",
        "cel.block([l.map(cel.iterVar(0, 0), cel.iterVar(0, 0) * 2)], cel.index(0)[0])",
        // A mixed list is fine: the subexpressions are list(dyn) elements.
        "cel.block(['a', 1], [cel.index(0), cel.index(1)])",
        // Beyond the declared indices: undeclared.
        "cel.block([1], cel.index(4))",
    ];
    let mut out = String::new();
    for e in exprs {
        out.push_str(&format!("=== {e}\n{}\n\n", check_with(&env, &options, e)));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn every_well_typed_expression_has_a_type_for_every_node() {
    let env = env();
    for expr in WELL_TYPED {
        let source = Source::new(*expr);
        let parsed = parse(&source, &parser_options());
        let (checked, diags) = check(&env, &parsed.ast);
        assert!(diags.is_empty(), "{expr}");
        checked.ast.expr.walk(&mut |e| {
            assert!(
                checked.types.contains_key(&e.id),
                "{expr}: node {} untyped",
                e.id
            );
        });
    }
}
