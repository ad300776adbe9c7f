//! `cel.@block` in the planner and evaluator, on hand-built ASTs (the internal call cannot be
//! written in CEL text): malformed blocks fail to plan, with the call's id, and never panic;
//! indices that name no slot are unbound variables.

use std::sync::Arc;

use cel_checker::CheckerEnv;
use cel_cost::CostOptions;
use cel_interp::{FunctionTable, Plan, PlanEnv};
use cel_runtime::{FunctionRegistry, MapActivation, Value};
use cel_syntax::{Ast, Call, Expr, ExprKind, ListExpr, Literal, operators};
use cel_types::Container;

fn plan_env() -> PlanEnv {
    let checker = CheckerEnv::standard();
    PlanEnv {
        functions: Arc::new(FunctionTable::new(
            checker.functions(),
            &FunctionRegistry::standard(),
        )),
        container: Container::default(),
        provider: checker.provider().clone(),
        cost_options: CostOptions::default(),
        cost_hooks: Arc::default(),
        messages: None,
        older: Default::default(),
    }
}

/// Builds nodes with fresh ids.
#[derive(Default)]
struct Builder {
    next: i64,
}

impl Builder {
    fn node(&mut self, kind: ExprKind) -> Expr {
        self.next += 1;
        Expr::new(self.next, kind)
    }
    fn int(&mut self, v: i64) -> Expr {
        self.node(ExprKind::Literal(Literal::Int(v)))
    }
    fn ident(&mut self, name: &str) -> Expr {
        self.node(ExprKind::Ident(name.to_string()))
    }
    fn list(&mut self, elements: Vec<Expr>) -> Expr {
        self.node(ExprKind::List(ListExpr {
            elements,
            optional_indices: Vec::new(),
        }))
    }
    fn call(&mut self, function: &str, args: Vec<Expr>) -> Expr {
        self.node(ExprKind::Call(Call {
            target: None,
            function: function.to_string(),
            args,
        }))
    }
}

fn plan(expr: Expr) -> Result<Plan, cel_runtime::Error> {
    let ast = Ast {
        expr,
        source_info: Default::default(),
    };
    Plan::unchecked(&ast, &plan_env())
}

#[test]
fn evaluates_hand_built_blocks() {
    // cel-go's TestBlockEval: [x, @index0, @index1] with @index2 + @index1 + @index0.
    let mut b = Builder::default();
    let elements = vec![b.ident("x"), b.ident("@index0"), b.ident("@index1")];
    let slots = b.list(elements);
    let (i2, i1, i0) = (b.ident("@index2"), b.ident("@index1"), b.ident("@index0"));
    let sum = b.call(operators::ADD, vec![i2, i1]);
    let result = b.call(operators::ADD, vec![sum, i0]);
    let block = b.call("cel.@block", vec![slots, result]);
    let plan = plan(block).expect("plans");
    let act = MapActivation::new().with("x", "hello");
    let out = plan.eval_with_limit(&act, None);
    assert!(
        matches!(&out.result, Ok(Value::String(s)) if &**s == "hellohellohello"),
        "{:?}",
        out.result
    );
    // Reads: x once, @index0 twice, @index1 twice, @index2 once; two unchecked calls
    // (no overload resolved, 1 each).
    assert_eq!(out.cost, 6 + 2);
}

#[test]
fn malformed_blocks_fail_to_plan() {
    // Not a list literal (cel-go's TestBlockEval_BadBlock).
    let mut b = Builder::default();
    let (i1, i0) = (b.ident("@index1"), b.ident("@index0"));
    let not_list = b.call(operators::ADD, vec![i1, i0]);
    let x = b.ident("x");
    let block = b.call("cel.@block", vec![not_list, x]);
    let id = block.id;
    let err = plan(block).expect_err("a block of no list");
    assert_eq!(
        err.message,
        "cel.@block expects a list constructor as the first argument"
    );
    assert_eq!(err.expr_id, id);

    // Three arguments (cel-go's TestBlockEval_BadPlan), one, none.
    for argc in [3, 1, 0] {
        let mut b = Builder::default();
        let elements = vec![b.ident("x")];
        let mut args = vec![b.list(elements)];
        for i in 1..argc {
            args.push(b.int(i));
        }
        args.truncate(argc as usize);
        let block = b.call("cel.@block", args);
        let id = block.id;
        let err = plan(block).expect_err("wrong arity");
        assert_eq!(
            err.message,
            format!("cel.@block expects two arguments, but got {argc}")
        );
        assert_eq!(err.expr_id, id);
    }

    // Nested inside another expression, still a planning error.
    let mut b = Builder::default();
    let one = b.int(1);
    let block = b.call("cel.@block", vec![one]);
    let two = b.int(2);
    let sum = b.call(operators::ADD, vec![block, two]);
    assert!(plan(sum).is_err());
}

#[test]
fn indices_that_name_no_slot_are_unbound() {
    // cel-go's TestBlockEval_BadIndex, and out-of-range and negative indices.
    for name in ["@indexNext", "@index2", "@index-1", "@index", "@index 1"] {
        let mut b = Builder::default();
        let elements = vec![b.ident("x"), b.int(1)];
        let slots = b.list(elements);
        let result = b.ident(name);
        let block = b.call("cel.@block", vec![slots, result]);
        let plan = plan(block).expect("plans");
        let act = MapActivation::new().with("x", 1i64);
        let out = plan.eval_with_limit(&act, None);
        let err = out.result.expect_err(name);
        assert_eq!(
            err.message,
            format!("no such attribute(s): {name}"),
            "{name}"
        );
    }
    // cel-go reads the number as Go's `strconv.Atoi` does.
    for name in ["@index01", "@index+1", "@index1"] {
        let mut b = Builder::default();
        let elements = vec![b.ident("x"), b.int(1)];
        let slots = b.list(elements);
        let result = b.ident(name);
        let block = b.call("cel.@block", vec![slots, result]);
        let out = plan(block)
            .expect("plans")
            .eval_with_limit(&MapActivation::new(), None);
        assert!(matches!(out.result, Ok(Value::Int(1))), "{name}");
    }
    // A slot that reads itself, directly or through another.
    for (first, second) in [("@index0", "@index1"), ("@index1", "@index0")] {
        let mut b = Builder::default();
        let elements = vec![b.ident(first), b.ident(second)];
        let slots = b.list(elements);
        let result = b.ident("@index0");
        let block = b.call("cel.@block", vec![slots, result]);
        let out = plan(block)
            .expect("plans")
            .eval_with_limit(&MapActivation::new(), None);
        let err = out.result.expect_err("cycle");
        assert_eq!(err.message, "no such attribute(s): @index0");
    }
    // An empty block is its result.
    let mut b = Builder::default();
    let slots = b.list(Vec::new());
    let result = b.int(7);
    let block = b.call("cel.@block", vec![slots, result]);
    let out = plan(block)
        .expect("plans")
        .eval_with_limit(&MapActivation::new(), None);
    assert!(matches!(out.result, Ok(Value::Int(7))));
    assert_eq!(out.cost, 0);
}
