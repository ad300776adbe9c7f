//! Cost hooks scoped to opaque values (Kubernetes prices `_==_` by name for its own types)
//! are decided when a program is made: a call whose first argument the checker typed as
//! anything else never runs the hook, one typed `dyn` runs it only for opaque values, and
//! the costs are those of the unscoped hook on both backends.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use celerity::kubernetes::KubernetesEnv;
use celerity::{
    ActualCostFn, Backend, CostKey, Env, HookScope, MapActivation, ProgramOptions, Type, Value,
};

/// An environment whose `_==_` hook charges 100 for `kubernetes.Quantity` operands, counting
/// how often it runs; `scoped` says whether it is registered with its scope.
fn env(scoped: bool, calls: &Arc<AtomicUsize>) -> Env {
    let counter = calls.clone();
    let hook: ActualCostFn<Value> = Arc::new(move |args: &[Value], _: &Value| {
        counter.fetch_add(1, Ordering::Relaxed);
        match args.first() {
            Some(Value::Opaque(o)) if o.type_name() == "kubernetes.Quantity" => Some(100),
            _ => None,
        }
    });
    let key = CostKey::Function("_==_".to_string());
    let builder = KubernetesEnv::newest()
        .builder()
        .variable("i", Type::Int)
        .variable("s", Type::String)
        .variable("d", Type::Dyn)
        .variable("q", Type::Dyn);
    let builder = if scoped {
        let scope = HookScope::OpaqueFirstArgument(vec!["kubernetes.Quantity".to_string()]);
        builder.actual_cost_scoped(key, hook, scope)
    } else {
        builder.actual_cost(key, hook)
    };
    builder.build()
}

fn vars() -> MapActivation {
    MapActivation::new()
        .with("i", 1i64)
        .with("s", "x")
        .with("d", "x")
        .with("q", Value::Null)
}

/// Evaluates `expr` on `backend`: the value, the cost and how often the hook ran.
fn run(scoped: bool, backend: Backend, expr: &str, act: &MapActivation) -> (Value, u64, usize) {
    let calls = Arc::new(AtomicUsize::new(0));
    let env = env(scoped, &calls);
    let ast = env
        .compile(expr)
        .unwrap_or_else(|e| panic!("{expr}: {e:?}"));
    let options = ProgramOptions::default().backend(backend);
    let program = env.program_with(&ast, options).expect("program");
    let (value, details) = program.eval_details(act);
    let value = value.unwrap_or_else(|e| panic!("{expr}: {e}"));
    (value, details.actual_cost, calls.load(Ordering::Relaxed))
}

#[test]
fn scoped_hooks_run_only_where_an_opaque_value_can_be() {
    let act = vars();
    // (expression, how often the scoped hook runs)
    let cases = [
        ("i == 1", 0),
        ("s == 'x'", 0),
        ("[1, 2] == [1, 2]", 0),
        // `dyn` operands: a tag test, no hook for a string...
        ("d == 'x'", 0),
        ("['a', 'x'].exists(x, d == x)", 0),
        // ...and the hook for a quantity, typed or not.
        ("quantity('1') == quantity('1')", 1),
        ("dyn(quantity('1')) == quantity('1')", 1),
        (
            "[quantity('1'), quantity('2')].exists(x, dyn(x) == quantity('2'))",
            2,
        ),
    ];
    for backend in [Backend::Interpreter, Backend::Jit] {
        for (expr, runs) in cases {
            let scoped = run(true, backend, expr, &act);
            let unscoped = run(false, backend, expr, &act);
            assert_eq!(scoped.0, Value::Bool(true), "{backend:?} {expr}");
            assert_eq!(scoped.0, unscoped.0, "{backend:?} {expr}");
            assert_eq!(scoped.1, unscoped.1, "{backend:?} {expr}: costs");
            assert_eq!(scoped.2, runs, "{backend:?} {expr}: hook runs");
        }
    }
    // The hook's price shows: 100 per quantity comparison, on top of the arguments'.
    let (_, plain, _) = run(true, Backend::Jit, "quantity('1') != quantity('2')", &act);
    let (_, hooked, _) = run(true, Backend::Jit, "quantity('1') == quantity('1')", &act);
    assert!(hooked >= plain + 99, "{hooked} vs {plain}");
}
