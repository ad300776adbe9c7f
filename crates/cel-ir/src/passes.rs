//! Passes over the IR: constant folding of scalar operations, simplification of the
//! control flow the lowering's error checks leave ([`simplify_control_flow`]), hoisting of
//! loop-invariant field reads ([`hoist_invariant_reads`]), sharing of repeated field and
//! variable reads ([`share_reads`]), and
//! aggregation of constant costs so that generated code adds each block's constant cost
//! once.

use crate::ir::{ArithOp, CmpOp, Function, Op, Ty, Value};

mod hoisted_reads;
mod shared_reads;
mod simplify;

pub use hoisted_reads::hoist_invariant_reads;
pub use shared_reads::share_reads;
pub use simplify::simplify_control_flow;

/// Folds operations on constant scalars into constants (`1 + 2` → `3`), leaving alone any
/// operation that would fail (overflow, division by zero): those keep their run-time error.
pub fn fold_constants(func: &mut Function) {
    use std::collections::HashMap;
    let mut consts: HashMap<Value, Op> = HashMap::new();
    for b in &mut func.blocks {
        for inst in &mut b.insts {
            let c = |v: &Value| consts.get(v).cloned();
            let folded = match (&inst.op, inst.args.as_slice()) {
                (Op::IntArith(op), [a, b]) => match (c(a), c(b)) {
                    (Some(Op::IntConst(x)), Some(Op::IntConst(y))) => {
                        int_arith(*op, x, y).map(Op::IntConst)
                    }
                    _ => None,
                },
                (Op::UintArith(op), [a, b]) => match (c(a), c(b)) {
                    (Some(Op::UintConst(x)), Some(Op::UintConst(y))) => {
                        uint_arith(*op, x, y).map(Op::UintConst)
                    }
                    _ => None,
                },
                (Op::ScalarCmp(op), [a, b]) => match (c(a), c(b)) {
                    (Some(Op::IntConst(x)), Some(Op::IntConst(y))) => {
                        Some(Op::BoolConst(cmp(*op, x.cmp(&y))))
                    }
                    (Some(Op::UintConst(x)), Some(Op::UintConst(y))) => {
                        Some(Op::BoolConst(cmp(*op, x.cmp(&y))))
                    }
                    (Some(Op::BoolConst(x)), Some(Op::BoolConst(y))) => {
                        Some(Op::BoolConst(cmp(*op, x.cmp(&y))))
                    }
                    _ => None,
                },
                (Op::Not, [a]) => match c(a) {
                    Some(Op::BoolConst(x)) => Some(Op::BoolConst(!x)),
                    _ => None,
                },
                _ => None,
            };
            if let Some(op) = folded {
                // A fallible operation that folded keeps its err result, now always "none".
                if inst.results.len() == 2 {
                    let err = inst.results[1];
                    // Replace by two instructions is not possible in place; keep the
                    // operation's shape: the value folds, the err result becomes `noerr`
                    // through a separate pass below.
                    consts.insert(inst.results[0], op.clone());
                    inst.op = Op::Copy;
                    let _ = err;
                    continue;
                }
                inst.op = op.clone();
                inst.args.clear();
                consts.insert(inst.results[0], op);
                continue;
            }
            if let (Some(r), true) = (inst.results.first(), is_const(&inst.op)) {
                consts.insert(*r, inst.op.clone());
            }
        }
    }
    // Fallible instructions that folded were marked `Copy`: split them into a constant
    // and a `noerr`.
    for b in &mut func.blocks {
        let mut out = Vec::with_capacity(b.insts.len());
        for inst in b.insts.drain(..) {
            if inst.op == Op::Copy && inst.results.len() == 2 {
                let value = inst.results[0];
                let err = inst.results[1];
                if let Some(op) = consts.get(&value) {
                    out.push(crate::ir::Inst {
                        op: op.clone(),
                        args: vec![],
                        results: vec![value],
                        expr: inst.expr,
                    });
                    out.push(crate::ir::Inst {
                        op: Op::NoErr,
                        args: vec![],
                        results: vec![err],
                        expr: inst.expr,
                    });
                    continue;
                }
            }
            out.push(inst);
        }
        b.insts = out;
    }
    let _ = Ty::Int;
}

fn is_const(op: &Op) -> bool {
    matches!(
        op,
        Op::IntConst(_) | Op::UintConst(_) | Op::DoubleConst(_) | Op::BoolConst(_)
    )
}

fn cmp(op: CmpOp, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        CmpOp::Eq => o == Equal,
        CmpOp::Ne => o != Equal,
        CmpOp::Lt => o == Less,
        CmpOp::Le => o != Greater,
        CmpOp::Gt => o == Greater,
        CmpOp::Ge => o != Less,
    }
}

fn int_arith(op: ArithOp, x: i64, y: i64) -> Option<i64> {
    match op {
        ArithOp::Add => x.checked_add(y),
        ArithOp::Sub => x.checked_sub(y),
        ArithOp::Mul => x.checked_mul(y),
        ArithOp::Div => x.checked_div(y),
        ArithOp::Rem => x.checked_rem(y),
    }
}

fn uint_arith(op: ArithOp, x: u64, y: u64) -> Option<u64> {
    match op {
        ArithOp::Add => x.checked_add(y),
        ArithOp::Sub => x.checked_sub(y),
        ArithOp::Mul => x.checked_mul(y),
        ArithOp::Div => x.checked_div(y),
        ArithOp::Rem => x.checked_rem(y),
    }
}

/// Merges every block's constant charges into one `charge.region` at the block's first
/// charge. Charges are only observed as a total (generated code checks the limit at loop
/// back-edges and at the end, and a program over its limit is re-run by the interpreter for
/// cel-go's exact figure), so moving them within a block changes nothing observable.
pub fn aggregate_costs(func: &mut Function) {
    for b in &mut func.blocks {
        let amounts: Vec<u64> = b
            .insts
            .iter()
            .filter_map(|i| match i.op {
                Op::Charge(n) => Some(n),
                _ => None,
            })
            .collect();
        if amounts.len() < 2 {
            continue;
        }
        let first = b
            .insts
            .iter()
            .position(|i| matches!(i.op, Op::Charge(_)))
            .expect("at least two charges");
        let expr = b.insts[first].expr;
        b.insts.retain(|i| !matches!(i.op, Op::Charge(_)));
        b.insts.insert(
            first,
            crate::ir::Inst {
                op: Op::ChargeRegion(amounts),
                args: vec![],
                results: vec![],
                expr,
            },
        );
    }
}
