//! The verifier: structural rules every function must satisfy before code generation.
//!
//! Every block is terminated; every value is defined exactly once; every use is dominated by
//! its definition; jumps pass as many arguments, of the right types, as the target has
//! parameters; branch conditions are `bool`; the results and operands of each instruction
//! have the types its operation requires.

use std::collections::HashMap;

use crate::ir::{Block, Function, Op, Term, Ty, Value};

/// A broken rule, with where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError(pub String);

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for VerifyError {}

fn successors(t: &Term) -> Vec<Block> {
    match t {
        Term::Jump(b, _) => vec![*b],
        Term::Branch {
            then, otherwise, ..
        } => vec![then.0, otherwise.0],
        Term::Return { .. } => vec![],
    }
}

/// Immediate dominators by the iterative algorithm over reverse post-order.
fn dominators(func: &Function) -> Vec<Option<usize>> {
    let n = func.blocks.len();
    // Reverse post-order from the entry.
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    seen[0] = true;
    while let Some((b, i)) = stack.pop() {
        let succ = func.blocks[b]
            .term
            .as_ref()
            .map(successors)
            .unwrap_or_default();
        if i < succ.len() {
            stack.push((b, i + 1));
            let s = succ[i].0 as usize;
            if s < n && !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            order.push(b);
        }
    }
    order.reverse();
    let mut rpo_index = vec![usize::MAX; n];
    for (i, b) in order.iter().enumerate() {
        rpo_index[*b] = i;
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, data) in func.blocks.iter().enumerate() {
        if let Some(t) = &data.term {
            for s in successors(t) {
                if (s.0 as usize) < n {
                    preds[s.0 as usize].push(b);
                }
            }
        }
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[0] = Some(0);
    let intersect = |idom: &Vec<Option<usize>>, mut a: usize, mut b: usize| {
        while a != b {
            while rpo_index[a] > rpo_index[b] {
                a = idom[a].unwrap_or(0);
            }
            while rpo_index[b] > rpo_index[a] {
                b = idom[b].unwrap_or(0);
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new: Option<usize> = None;
            for &p in &preds[b] {
                if idom[p].is_some() {
                    new = Some(match new {
                        None => p,
                        Some(x) => intersect(&idom, p, x),
                    });
                }
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

/// The dominator tree numbered in depth-first order: `a` dominates `b` exactly when `b`'s
/// interval lies in `a`'s, so each question is answered in constant time (walking up the
/// tree would make verifying a long chain quadratic).
struct DomTree {
    enter: Vec<usize>,
    leave: Vec<usize>,
}

impl DomTree {
    fn new(idom: &[Option<usize>]) -> DomTree {
        let n = idom.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (b, d) in idom.iter().enumerate() {
            if let Some(p) = d
                && *p != b
            {
                children[*p].push(b);
            }
        }
        let mut enter = vec![usize::MAX; n];
        let mut leave = vec![0; n];
        let mut clock = 0;
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        enter[0] = 0;
        while let Some((b, i)) = stack.pop() {
            if let Some(&c) = children[b].get(i) {
                stack.push((b, i + 1));
                clock += 1;
                enter[c] = clock;
                stack.push((c, 0));
            } else {
                clock += 1;
                leave[b] = clock;
            }
        }
        DomTree { enter, leave }
    }

    fn dominates(&self, a: usize, b: usize) -> bool {
        self.enter[a] != usize::MAX
            && self.enter[b] != usize::MAX
            && self.enter[a] <= self.enter[b]
            && self.leave[b] <= self.leave[a]
    }
}

/// Checks a function.
pub fn verify(func: &Function) -> Result<(), VerifyError> {
    let err = |m: String| Err(VerifyError(m));
    // Definitions: value → (block, position; params at -1).
    let mut def: HashMap<Value, (usize, isize)> = HashMap::new();
    for (bi, b) in func.blocks.iter().enumerate() {
        for p in &b.params {
            if def.insert(*p, (bi, -1)).is_some() {
                return err(format!("{p} defined twice"));
            }
        }
        for (ii, inst) in b.insts.iter().enumerate() {
            for r in &inst.results {
                if def.insert(*r, (bi, ii as isize)).is_some() {
                    return err(format!("{r} defined twice"));
                }
            }
        }
        if b.term.is_none() {
            return err(format!("bb{bi} has no terminator"));
        }
    }
    let idom = dominators(func);
    let tree = DomTree::new(&idom);
    let check_use = |v: Value, bi: usize, pos: isize| -> Result<(), VerifyError> {
        let Some(&(db, dp)) = def.get(&v) else {
            return err(format!("{v} used in bb{bi} but never defined"));
        };
        if idom[bi].is_none() {
            // Unreachable blocks are not checked for dominance.
            return Ok(());
        }
        let ok = if db == bi {
            dp < pos
        } else {
            tree.dominates(db, bi)
        };
        if ok {
            Ok(())
        } else {
            err(format!(
                "{v} used in bb{bi} where its definition does not dominate"
            ))
        }
    };
    for (bi, b) in func.blocks.iter().enumerate() {
        for (ii, inst) in b.insts.iter().enumerate() {
            for a in &inst.args {
                check_use(*a, bi, ii as isize)?;
            }
            check_types(func, bi, &inst.op, &inst.args, &inst.results)?;
        }
        let end = b.insts.len() as isize;
        match b.term.as_ref().expect("checked above") {
            Term::Jump(t, args) => {
                check_jump(func, bi, *t, args)?;
                for a in args {
                    check_use(*a, bi, end)?;
                }
            }
            Term::Branch {
                cond,
                then,
                otherwise,
            } => {
                check_use(*cond, bi, end)?;
                if func.ty(*cond) != Ty::Bool {
                    return err(format!("bb{bi}: branch on {cond}, not a bool"));
                }
                for (t, args) in [then, otherwise] {
                    check_jump(func, bi, *t, args)?;
                    for a in args {
                        check_use(*a, bi, end)?;
                    }
                }
            }
            Term::Return { value, err: e } => {
                check_use(*value, bi, end)?;
                check_use(*e, bi, end)?;
                if func.ty(*e) != Ty::Err {
                    return err(format!("bb{bi}: returns {e} as the error, not an err"));
                }
            }
        }
    }
    Ok(())
}

fn check_jump(func: &Function, from: usize, to: Block, args: &[Value]) -> Result<(), VerifyError> {
    let Some(target) = func.blocks.get(to.0 as usize) else {
        return Err(VerifyError(format!("bb{from} jumps to missing {to}")));
    };
    if target.params.len() != args.len() {
        return Err(VerifyError(format!(
            "bb{from} passes {} arguments to {to}, which has {} parameters",
            args.len(),
            target.params.len()
        )));
    }
    for (a, p) in args.iter().zip(&target.params) {
        if func.ty(*a) != func.ty(*p) {
            return Err(VerifyError(format!(
                "bb{from} passes {a}: {} to {to}'s {p}: {}",
                func.ty(*a),
                func.ty(*p)
            )));
        }
    }
    Ok(())
}

fn check_types(
    func: &Function,
    bi: usize,
    op: &Op,
    args: &[Value],
    results: &[Value],
) -> Result<(), VerifyError> {
    let t = |v: &Value| func.ty(*v);
    let fail = |what: &str| {
        Err(VerifyError(format!(
            "bb{bi}: {what} in {op:?} with args {args:?} and results {results:?}"
        )))
    };
    // Fallible operations end with an err result.
    let fallible = matches!(
        op,
        Op::LoadVar(_)
            | Op::Unbox(_)
            | Op::Select { .. }
            | Op::OptSelect { .. }
            | Op::Has { .. }
            | Op::Index
            | Op::OptIndex
            | Op::Call { .. }
            | Op::MatchesConst { .. }
            | Op::IntArith(_)
            | Op::UintArith(_)
            | Op::IntNeg
            | Op::DoubleCmp(_)
            | Op::ValCmp { .. }
            | Op::ListPushOpt
            | Op::MapEntry { .. }
            | Op::MakeStruct { .. }
            | Op::IterLen
            | Op::MapInsert
            | Op::MapMerge
            | Op::Residual(_)
            | Op::LogicalAnd
            | Op::LogicalOr
            | Op::OptHasValue
    );
    if fallible && (results.len() != 2 || t(&results[1]) != Ty::Err) {
        return fail("a fallible operation without an err result");
    }
    let all = |ty: Ty| args.iter().all(|a| t(a) == ty);
    let ok = match op {
        Op::IntArith(_) | Op::IntNeg => all(Ty::Int) && t(&results[0]) == Ty::Int,
        Op::UintArith(_) => all(Ty::Uint) && t(&results[0]) == Ty::Uint,
        Op::DoubleArith(_) | Op::DoubleNeg => all(Ty::Double) && t(&results[0]) == Ty::Double,
        Op::DoubleCmp(_) => all(Ty::Double),
        Op::Not | Op::BoolAnd => all(Ty::Bool),
        Op::ScalarCmp(_) => args.len() == 2 && t(&args[0]) == t(&args[1]),
        Op::ValEq { .. }
        | Op::ValCmp { .. }
        | Op::Index
        | Op::OptIndex
        | Op::ListAppend
        | Op::Own => all(Ty::Val),
        Op::Select { .. } | Op::OptSelect { .. } | Op::Has { .. } | Op::Unbox(_) => {
            args.len() == 1 && t(&args[0]) == Ty::Val
        }
        Op::Box => args.len() == 1 && t(&args[0]) != Ty::Val && t(&args[0]) != Ty::Err,
        Op::ErrOr => all(Ty::Err) && args.len() == 2,
        Op::IsErr => all(Ty::Err) && args.len() == 1,
        Op::Call { .. }
        | Op::MakeList
        | Op::ListPushOpt
        | Op::MapEntry { .. }
        | Op::MakeStruct { .. } => all(Ty::Val),
        Op::LogicalAnd | Op::LogicalOr => {
            args.len() == 4
                && t(&args[0]) == Ty::Bool
                && t(&args[1]) == Ty::Err
                && t(&args[2]) == Ty::Bool
                && t(&args[3]) == Ty::Err
        }
        Op::NotStrictlyFalse => args.len() == 2 && t(&args[1]) == Ty::Err,
        Op::IterKey { .. } | Op::IterValue => {
            args.len() == 2 && t(&args[0]) == Ty::Val && t(&args[1]) == Ty::Index
        }
        Op::IndexInc => all(Ty::Index) && args.len() == 1,
        Op::IndexLt => all(Ty::Index) && args.len() == 2,
        Op::LocalGet(s) => func.locals.get(*s as usize) == Some(&t(&results[0])),
        Op::LocalSet(s) => args.len() == 1 && func.locals.get(*s as usize) == Some(&t(&args[0])),
        Op::ArenaMark => results.len() == 1 && t(&results[0]) == Ty::Index,
        Op::ArenaRelease { vals, errs } => {
            args.len() == 1
                && all(Ty::Index)
                && vals
                    .iter()
                    .all(|s| func.locals.get(*s as usize) == Some(&Ty::Val))
                && errs
                    .iter()
                    .all(|s| func.locals.get(*s as usize) == Some(&Ty::Err))
        }
        Op::ChargeIfOk(_) => all(Ty::Err) && args.len() == 1,
        Op::ChargeUnless(_) => all(Ty::Bool) && args.len() == 1,
        Op::ChargeQualifier { .. } => {
            args.len() == 4
                && t(&args[0]) == Ty::Val
                && t(&args[1]) == Ty::Err
                && t(&args[2]) == Ty::Val
                && t(&args[3]) == Ty::Err
        }
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        fail("operand or result types do not fit")
    }
}
