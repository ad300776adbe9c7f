//! Snapshots of the IR of representative expressions (and a check that each verifies).

use std::sync::Arc;

use cel_checker::{CheckedAst, CheckerEnv, CheckerOptions};
use cel_cost::{CostOptions, CostPlan};
use cel_syntax::macros::{self, MacroTable};
use cel_syntax::{ParserOptions, Source};
use cel_types::{FieldType, Type, TypeProvider, VariableDecl};

/// The environment the snapshots are taken in: the standard library, optional types and
/// every extension library of `cel-ext`, as the facade's
/// `Env::builder().all_extension_libraries()` sets it up, but put together here from the
/// parser, the checker and the libraries' declarations, so that these tests build without
/// an evaluator or code generation (see the crate's documentation).
struct Env {
    parser: ParserOptions,
    checker: CheckerEnv,
}

/// The types the libraries define (`net.IP`, ...), resolved by name.
#[derive(Debug)]
struct LibraryTypes(Vec<Type>);

impl TypeProvider for LibraryTypes {
    fn find_type(&self, name: &str) -> Option<Type> {
        self.0.iter().find(|t| t.runtime_name() == name).cloned()
    }
    fn find_field(&self, _message: &str, _field: &str) -> Option<FieldType> {
        None
    }
    fn find_enum_value(&self, _name: &str) -> Option<i64> {
        None
    }
}

fn env() -> Env {
    let mut checker = CheckerEnv::standard();
    checker.add_optional_library_version(u32::MAX);
    checker.set_options(CheckerOptions {
        homogeneous_aggregate_literals: false,
        cross_type_numeric_comparisons: false,
    });
    let mut table = MacroTable::new();
    table.extend(macros::standard_macros());
    table.extend(macros::optional_macros_at(u32::MAX));
    let mut variables = Vec::new();
    let mut functions = Vec::new();
    let mut types = Vec::new();
    for library in cel_ext::all_libraries() {
        let contents = library.contents();
        variables.extend(contents.variables);
        functions.extend(contents.functions);
        table.extend(contents.macros);
        types.extend(contents.types);
    }
    checker.set_provider(Arc::new(LibraryTypes(types)));
    let declared = [
        ("x", Type::Int),
        ("y", Type::Int),
        ("u", Type::Uint),
        ("d", Type::Double),
        ("s", Type::String),
        ("b", Type::Bool),
        ("l", Type::list(Type::Int)),
        ("ls", Type::list(Type::String)),
        ("m", Type::map(Type::String, Type::Int)),
        ("self", Type::map(Type::String, Type::Dyn)),
        ("dy", Type::Dyn),
        ("opt", Type::optional(Type::Int)),
    ];
    variables.extend(declared.into_iter().map(|(n, t)| VariableDecl::new(n, t)));
    for v in variables {
        checker.add_variable(v);
    }
    for f in functions {
        checker.add_function(f);
    }
    let parser = ParserOptions {
        enable_optional_syntax: true,
        macros: table,
        ..ParserOptions::default()
    };
    Env { parser, checker }
}

fn compile(env: &Env, expr: &str) -> CheckedAst {
    let parsed = cel_syntax::parse(&Source::new(expr), &env.parser);
    assert!(
        parsed.diagnostics.is_empty(),
        "{expr}: {:?}",
        parsed.diagnostics
    );
    let (checked, diagnostics) = cel_checker::check(&env.checker, &parsed.ast);
    assert!(diagnostics.is_empty(), "{expr}: {diagnostics:?}");
    checked
}

fn ir(env: &Env, expr: &str) -> String {
    ir_with(env, expr, false)
}

/// The IR `cel_ir::compile_with` gives, for a backend that checks variables on entry or not.
fn ir_with(env: &Env, expr: &str, variables_checked_on_entry: bool) -> String {
    let checked = &compile(env, expr);
    let costs = CostPlan::analyze(
        &checked.ast.expr,
        Some(checked),
        CostOptions::default(),
        &|n| {
            matches!(
                n,
                "int"
                    | "uint"
                    | "double"
                    | "bool"
                    | "string"
                    | "bytes"
                    | "list"
                    | "map"
                    | "type"
                    | "null_type"
            )
        },
    );
    let options = cel_ir::CompileOptions {
        budget: cel_ir::DEFAULT_BUDGET,
        variables_checked_on_entry,
        older: Default::default(),
    };
    let f =
        cel_ir::compile_with(checked, &costs, options).unwrap_or_else(|e| panic!("{expr}: {e}"));
    cel_ir::print(&f)
}

const EXPRS: &[&str] = &[
    "true",
    "1 + 2",
    "x + 1",
    "x * y - 3",
    "u + 1u",
    "d * 2.0",
    "-x",
    "!b",
    "x < y",
    "x == 1",
    "d < 1.5",
    "s == 'a'",
    "s + 'b'",
    "'a' + s + 'b' != s",
    "s.startsWith('a')",
    "s.matches('^a+$')",
    "size(s)",
    "x in l",
    "'k' in m",
    "m['k']",
    "m.k",
    "has(m.k)",
    "l[0]",
    "self.a.b",
    "self.replicas <= self.max",
    "dy + 1",
    "b && x > 0",
    "b || x > 0",
    "x > 0 ? 'pos' : 'neg'",
    "[1, 2, x]",
    "{'a': x}",
    "l.all(i, i > 0)",
    "l.exists(i, i == 2)",
    "l.exists_one(i, i == 2)",
    "l.map(i, i * 2)",
    "l.filter(i, i % 2 == 0)",
    "ls.map(s, s + '!').filter(s, size(s) > 1)",
    "m.all(k, m[k] > 0)",
    "l.all(i, v, v > i)",
    "l.transformMap(i, v, v * 2)",
    "cel.bind(z, x + 1, z * z)",
    "opt.orValue(0)",
    "m.?k",
    "l[?0]",
    "[?opt, 1]",
    "int('12') + x",
    "type(x) == int",
    "timestamp('2023-01-01T00:00:00Z').getHours()",
    "google.protobuf.Int64Value{value: 1}",
    "self.items.all(i, i.name != '' && i.count < 10)",
];

#[test]
fn ir_of_expressions() {
    let env = env();
    let mut out = String::new();
    for e in EXPRS {
        out.push_str("=== ");
        out.push_str(e);
        out.push('\n');
        out.push_str(&ir(&env, e));
        out.push('\n');
    }
    insta::assert_snapshot!(out);
}

/// Expressions whose error paths come from reading variables, which a backend that checks
/// them on entry (native code, unless variables are read lazily) never takes.
const CHECKED_ON_ENTRY: &[&str] = &[
    "x * y - 3",
    "(x + y) * 3 - x / 2 > 10",
    "self.replicas <= self.max",
    "b && x > 0",
    "l.all(i, i > 0)",
    // Repeated reads shared: `self.spec` read once, the repeats `err.again`.
    "self.spec.min <= self.spec.n && self.spec.n <= 10",
    // Loop-invariant reads hoisted: `self.spec.max` read before the loop, `err.again` in it.
    "self.items.all(i, i.count <= self.spec.max)",
];

#[test]
fn ir_with_variables_checked_on_entry() {
    let env = env();
    let mut out = String::new();
    for e in CHECKED_ON_ENTRY {
        out.push_str("=== ");
        out.push_str(e);
        out.push('\n');
        out.push_str(&ir_with(&env, e, true));
        out.push('\n');
    }
    insta::assert_snapshot!(out);
}

#[test]
fn verifier_rejects_broken_functions() {
    use cel_ir::{Builder, Op, Term, Ty};
    // A use before any definition.
    let mut b = Builder::new();
    let v = b.new_value(Ty::Int);
    let e = b.inst1(Op::NoErr, vec![], Ty::Err, 1);
    b.terminate(Term::Return { value: v, err: e });
    assert!(cel_ir::verify(&b.finish()).is_err());
    // A jump with the wrong number of arguments.
    let mut b = Builder::new();
    let t = b.create_block();
    b.add_param(t, Ty::Int);
    b.jump(t, vec![]);
    b.switch_to(t);
    let e = b.inst1(Op::NoErr, vec![], Ty::Err, 1);
    let x = b.inst1(Op::IntConst(1), vec![], Ty::Int, 1);
    b.terminate(Term::Return { value: x, err: e });
    assert!(cel_ir::verify(&b.finish()).is_err());
    // Operand types.
    let mut b = Builder::new();
    let x = b.inst1(Op::IntConst(1), vec![], Ty::Int, 1);
    let d = b.inst1(Op::DoubleConst(1.0), vec![], Ty::Double, 1);
    let (r, e) = b.inst2(Op::IntArith(cel_ir::ArithOp::Add), vec![x, d], Ty::Int, 1);
    b.terminate(Term::Return { value: r, err: e });
    assert!(cel_ir::verify(&b.finish()).is_err());
}
