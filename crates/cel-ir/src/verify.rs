//! The verifier: structural rules every function must satisfy before code generation.
//!
//! Every block is terminated; every value is defined exactly once; every use is dominated by
//! its definition; jumps pass as many arguments, of the right types, as the target has
//! parameters; branch conditions are `bool`; the results and operands of each instruction
//! have the types its operation requires; and an update in place only writes a value the
//! lowering owns (see [`check_in_place`]).

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

/// Immediate dominators by the iterative algorithm over reverse post-order: the entry's is
/// itself, an unreachable block's `None`.
pub(crate) fn dominators(func: &Function) -> Vec<Option<usize>> {
    let n = func.blocks.len();
    let order = func.reverse_post_order();
    let mut rpo_index = vec![usize::MAX; n];
    for (i, b) in order.iter().enumerate() {
        rpo_index[*b] = i;
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, data) in func.blocks.iter().enumerate() {
        if let Some(t) = &data.term {
            for s in t.successors() {
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
pub(crate) struct DomTree {
    enter: Vec<usize>,
    leave: Vec<usize>,
}

impl DomTree {
    /// The tree of the immediate dominators [`dominators`] gives (of a function with blocks).
    pub(crate) fn new(idom: &[Option<usize>]) -> DomTree {
        let n = idom.len();
        let children = dominator_children(idom);
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

    /// Whether block `a` dominates block `b` (never for an unreachable block).
    pub(crate) fn dominates(&self, a: usize, b: usize) -> bool {
        self.enter[a] != usize::MAX
            && self.enter[b] != usize::MAX
            && self.enter[a] <= self.enter[b]
            && self.leave[b] <= self.leave[a]
    }
}

/// The children of each block in the dominator tree given by [`dominators`].
pub(crate) fn dominator_children(idom: &[Option<usize>]) -> Vec<Vec<usize>> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); idom.len()];
    for (b, d) in idom.iter().enumerate() {
        if let Some(p) = d
            && *p != b
        {
            children[*p].push(b);
        }
    }
    children
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
    check_in_place(func)
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
            | Op::ConcatCompare { .. }
            | Op::ConcatBuild { .. }
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
        Op::ErrAgain { .. } => {
            all(Ty::Err) && args.len() == 1 && results.len() == 1 && t(&results[0]) == Ty::Err
        }
        Op::Call { function, .. } if t(&results[0]) == Ty::Int => {
            function.as_ref() == "size" && args.len() == 1 && all(Ty::Val)
        }
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
        Op::ConcatCompare { steps, .. } => {
            args.len() == 2 * steps.len() + 4
                && args
                    .chunks(2)
                    .all(|pair| t(&pair[0]) == Ty::Val && t(&pair[1]) == Ty::Err)
                && t(&results[0]) == Ty::Bool
        }
        Op::ConcatBuild { steps } => {
            args.len() == 2 * steps.len() + 2
                && args
                    .chunks(2)
                    .all(|pair| t(&pair[0]) == Ty::Val && t(&pair[1]) == Ty::Err)
                && t(&results[0]) == Ty::Val
        }
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

/// The operations that update their first operand in place, handing the same storage on as
/// their result.
fn updates_in_place(op: &Op) -> bool {
    matches!(
        op,
        Op::ListPushOpt | Op::MapEntry { .. } | Op::ListAppend | Op::MapInsert | Op::MapMerge
    )
}

/// Where a `val` may come from, for the in-place rule.
enum Origin {
    /// Storage of the lowering's own: new (`list.new`, `map.new`, `own`, `box`) or handed on
    /// by an earlier update; or a pooled constant, which lives outside the evaluation's
    /// arena, so the update shims copy it before the first write.
    Owned,
    /// As owned as the values it stands for (a copy, a local slot's reads, a block
    /// parameter), given by the edges of the graph in [`check_in_place`].
    Derived,
    /// Anything else: a variable's value, a call's or a field's result, an iteration
    /// variable; storage another value may still refer to.
    Foreign,
}

fn origin(op: &Op) -> Origin {
    match op {
        Op::MakeList | Op::MapNew | Op::Own | Op::Box | Op::ValConst(_) => Origin::Owned,
        op if updates_in_place(op) => Origin::Owned,
        Op::Copy | Op::LocalGet(_) => Origin::Derived,
        _ => Origin::Foreign,
    }
}

/// The rule the lowering follows for in-place updates: the value an update writes (its
/// first operand) is one the lowering owns. Following copies, local slots (every value
/// stored in the slot) and block parameters (every incoming argument) back to where the
/// operand came from must lead only to new storage, to earlier updates, or to constants
/// (see [`Origin`]); never to a variable's value or to a value another instruction made,
/// which other values may still refer to. Loop-carried values (an accumulator slot, stored
/// from its own updates) are owned when everything entering the cycle is.
fn check_in_place(func: &Function) -> Result<(), VerifyError> {
    let mut insts = func.blocks.iter().flat_map(|b| &b.insts);
    if !insts.any(|i| updates_in_place(&i.op)) {
        return Ok(());
    }
    let nv = func.types.len();
    // Nodes: values, then local slots. `feeds[n]`: the nodes `n` flows into.
    let slot = |s: u32| nv + s as usize;
    let mut feeds: Vec<Vec<usize>> = vec![Vec::new(); nv + func.locals.len()];
    let mut foreign = vec![false; nv + func.locals.len()];
    for b in &func.blocks {
        for inst in &b.insts {
            if let (Op::LocalSet(s), [x]) = (&inst.op, inst.args.as_slice()) {
                if (*s as usize) < func.locals.len() {
                    feeds[x.0 as usize].push(slot(*s));
                }
                continue;
            }
            let Some(r) = inst.results.first() else {
                continue;
            };
            if func.ty(*r) != Ty::Val {
                continue;
            }
            match (origin(&inst.op), &inst.op) {
                (Origin::Owned, _) => {}
                (Origin::Derived, Op::LocalGet(s)) if (*s as usize) < func.locals.len() => {
                    feeds[slot(*s)].push(r.0 as usize);
                }
                (Origin::Derived, Op::Copy) if inst.args.len() == 1 => {
                    feeds[inst.args[0].0 as usize].push(r.0 as usize);
                }
                _ => foreign[r.0 as usize] = true,
            }
        }
        let edges: Vec<(Block, &Vec<Value>)> = match b.term.as_ref() {
            Some(Term::Jump(t, args)) => vec![(*t, args)],
            Some(Term::Branch {
                then, otherwise, ..
            }) => vec![(then.0, &then.1), (otherwise.0, &otherwise.1)],
            _ => vec![],
        };
        for (t, args) in edges {
            for (a, p) in args.iter().zip(&func.block(t).params) {
                feeds[a.0 as usize].push(p.0 as usize);
            }
        }
    }
    let mut work: Vec<usize> = (0..foreign.len()).filter(|n| foreign[*n]).collect();
    while let Some(n) = work.pop() {
        for &m in &feeds[n] {
            if !foreign[m] {
                foreign[m] = true;
                work.push(m);
            }
        }
    }
    for (bi, b) in func.blocks.iter().enumerate() {
        for inst in &b.insts {
            if let (true, Some(v)) = (updates_in_place(&inst.op), inst.args.first())
                && foreign[v.0 as usize]
            {
                return Err(VerifyError(format!(
                    "bb{bi}: {:?} updates {v} in place, but {v} may be a value the lowering \
                     does not own (a variable's, or one another instruction made)",
                    inst.op
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Builder, Constant};
    use cel_syntax::Literal;

    /// `[1]` appended to in place, the list coming from `list_of`; returned.
    fn append_to(list_of: impl FnOnce(&mut Builder) -> Value) -> Function {
        let mut b = Builder::new();
        let l = list_of(&mut b);
        let k = b.constant(Constant::Literal(Literal::Int(1)));
        let one = b.inst1(Op::ValConst(k), vec![], Ty::Val, 1);
        let r = b.inst1(Op::ListAppend, vec![l, one], Ty::Val, 1);
        let e = b.inst1(Op::NoErr, vec![], Ty::Err, 1);
        b.terminate(Term::Return { value: r, err: e });
        b.finish()
    }

    #[test]
    fn in_place_update_of_a_variable_is_rejected() {
        let f = append_to(|b| b.inst2(Op::LoadVar("xs".into()), vec![], Ty::Val, 1).0);
        let e = verify(&f).expect_err("a variable's value updated in place");
        assert!(e.0.contains("in place"), "{e}");
    }

    #[test]
    fn in_place_update_of_a_new_list_is_accepted() {
        let f = append_to(|b| b.inst1(Op::MakeList, vec![], Ty::Val, 1));
        verify(&f).expect("a new list is the lowering's own");
    }

    #[test]
    fn in_place_update_through_a_slot_holding_a_variable_is_rejected() {
        // A loop-carried accumulator slot: stored from its own update and, on one path,
        // from a variable.
        let build = |foreign: bool| {
            append_to(|b| {
                let s = b.new_local(Ty::Val);
                let init = if foreign {
                    b.inst2(Op::LoadVar("xs".into()), vec![], Ty::Val, 1).0
                } else {
                    b.inst1(Op::MapNew, vec![], Ty::Val, 1)
                };
                b.inst0(Op::LocalSet(s), vec![init], 1);
                let body = b.create_block();
                b.jump(body, vec![]);
                b.switch_to(body);
                let acc = b.inst1(Op::LocalGet(s), vec![], Ty::Val, 1);
                let c = b.inst1(Op::Copy, vec![acc], Ty::Val, 1);
                let next = b.inst1(Op::ListAppend, vec![c, c], Ty::Val, 1);
                b.inst0(Op::LocalSet(s), vec![next], 1);
                acc
            })
        };
        verify(&build(false)).expect("an accumulator of the lowering's own");
        let e = verify(&build(true)).expect_err("a variable reached through a slot");
        assert!(e.0.contains("in place"), "{e}");
    }
}
