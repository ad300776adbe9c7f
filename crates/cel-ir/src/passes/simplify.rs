//! Control-flow simplification: what the lowering's per-operation error checks leave
//! redundant once operations are chained.
//!
//! The lowering tests each operand's error handle where the operand is used, and joins each
//! operation's outcomes in a block of their own. Chained operations therefore test again
//! what a branch before them already decided, and pass their results through blocks that
//! only forward them. Cranelift compiles every instruction and block it is given, and
//! spends most of a program's compile time doing so; it does not see through either
//! pattern. Three rewrites remove them, none of which changes what any path computes or the
//! order in which it computes it:
//!
//! - **Known errors.** A block entered by one edge only takes that edge's arguments for
//!   its parameters. On the edge taken when `is.err x` is false, `x` is no error, and
//!   neither is either operand of the `err.or` that made it; on the edge taken when it is
//!   true, `x` is an error. In the blocks entered by that edge alone (and those entered by
//!   them alone), `is.err x` is a constant, an `err.or` of a known handle is one of its
//!   operands (and one of two handles already combined on the path is that combination),
//!   `not` and `bool.and` of known conditions are constants or one operand, `charge.if.ok`
//!   and `charge.unless` of a known operand are a plain charge or nothing, and a branch on
//!   a condition already decided is a jump.
//! - **Forwarding blocks.** A block without instructions that jumps on with its own
//!   parameters is skipped by the jumps into it.
//! - **Straight lines.** A block entered by a single jump is appended to the block that
//!   jumps, its parameters replaced by the jump's arguments.
//!
//! Blocks no longer reachable are dropped and the rest renumbered in their order, the entry
//! first; constants and tests whose results are no longer used are dropped too. Every step
//! is linear in the function's size (a chain of forwarding blocks is followed a bounded
//! number of steps, and so is a chain of `err.or`s for what an edge teaches), so the pass
//! keeps compile time linear.

use std::collections::HashMap;

use crate::ir::{Block, Function, Inst, Op, Term, Value};

/// Simplifies `func`'s control flow (see the module's documentation). `never_errors` are
/// error handles the backend guarantees are never errors.
pub fn simplify_control_flow(func: &mut Function, never_errors: &[Value]) {
    let mut renames = Renames::default();
    fold_known_errors(func, never_errors, &mut renames);
    renames.apply(func);
    skip_forwarding_blocks(func);
    merge_straight_lines(func, &mut renames);
    renames.apply(func);
    drop_unreachable(func);
    remove_unused(func);
}

/// Values replaced by others (a value that is always equal to an earlier one).
#[derive(Default)]
pub(super) struct Renames(HashMap<Value, Value>);

impl Renames {
    pub(super) fn add(&mut self, from: Value, to: Value) {
        if from != to {
            self.0.insert(from, to);
        }
    }

    /// The value `v` stands for, following chains, each of which is then shortened to one
    /// step (so that every rename is followed a bounded number of times in all).
    pub(super) fn resolve(&mut self, v: Value) -> Value {
        let mut end = v;
        let mut steps = 0;
        while let Some(next) = self.0.get(&end) {
            end = *next;
            steps += 1;
            if steps > self.0.len() {
                break; // a cycle cannot arise (a rename points at an earlier value, or at a fresh one)
            }
        }
        if steps > 1 {
            let mut at = v;
            while at != end {
                match self.0.insert(at, end) {
                    Some(next) => at = next,
                    None => break,
                }
            }
        }
        end
    }

    /// Rewrites every use in the function.
    pub(super) fn apply(&mut self, func: &mut Function) {
        if self.0.is_empty() {
            return;
        }
        for block in &mut func.blocks {
            for inst in &mut block.insts {
                for a in &mut inst.args {
                    *a = self.resolve(*a);
                }
            }
            match &mut block.term {
                Some(Term::Jump(_, args)) => {
                    for a in args {
                        *a = self.resolve(*a);
                    }
                }
                Some(Term::Branch {
                    cond,
                    then,
                    otherwise,
                }) => {
                    *cond = self.resolve(*cond);
                    for a in then.1.iter_mut().chain(otherwise.1.iter_mut()) {
                        *a = self.resolve(*a);
                    }
                }
                Some(Term::Return { value, err }) => {
                    *value = self.resolve(*value);
                    *err = self.resolve(*err);
                }
                None => {}
            }
        }
    }
}

/// How many edges from the blocks of `order` (the reachable ones) enter each block; a
/// branch with both arms to one block counts twice.
fn predecessor_counts(func: &Function, order: &[usize]) -> Vec<u32> {
    let mut counts = vec![0u32; func.blocks.len()];
    for &b in order {
        for s in func.blocks[b].term.iter().flat_map(Term::successors) {
            counts[s.0 as usize] += 1;
        }
    }
    counts
}

/// What is known of error handles and conditions where a block runs: facts that hold
/// everywhere (constants) and facts of the path, which are undone when the walk leaves the
/// blocks the path alone enters.
#[derive(Default)]
struct Facts {
    /// Whether an error handle is an error.
    errs: HashMap<Value, bool>,
    /// The value of a `bool` condition.
    conds: HashMap<Value, bool>,
    /// The `err.or` of two handles made on the path: a second one is the same value.
    err_ors: HashMap<(Value, Value), Value>,
    /// Path facts in the order they were added, with what they replaced.
    undo: Vec<Undo>,
}

enum Undo {
    Err(Value, Option<bool>),
    Cond(Value, Option<bool>),
    ErrOr((Value, Value), Option<Value>),
}

impl Facts {
    fn err(&self, v: Value) -> Option<bool> {
        self.errs.get(&v).copied()
    }

    fn cond(&self, v: Value) -> Option<bool> {
        self.conds.get(&v).copied()
    }

    fn learn_err(&mut self, v: Value, is_err: bool) {
        let before = self.errs.insert(v, is_err);
        self.undo.push(Undo::Err(v, before));
    }

    fn learn_cond(&mut self, v: Value, value: bool) {
        let before = self.conds.insert(v, value);
        self.undo.push(Undo::Cond(v, before));
    }

    fn learn_err_or(&mut self, operands: (Value, Value), r: Value) {
        let before = self.err_ors.insert(operands, r);
        self.undo.push(Undo::ErrOr(operands, before));
    }

    /// Forgets the path facts added since the log had `mark` entries.
    fn undo_to(&mut self, mark: usize) {
        fn restore<K: std::hash::Hash + Eq, V>(map: &mut HashMap<K, V>, k: K, before: Option<V>) {
            match before {
                Some(b) => map.insert(k, b),
                None => map.remove(&k),
            };
        }
        while self.undo.len() > mark {
            match self.undo.pop() {
                Some(Undo::Err(v, before)) => restore(&mut self.errs, v, before),
                Some(Undo::Cond(v, before)) => restore(&mut self.conds, v, before),
                Some(Undo::ErrOr(k, before)) => restore(&mut self.err_ors, k, before),
                None => break,
            }
        }
    }
}

/// What a condition or handle was made from, for the facts an edge teaches.
#[derive(Default)]
struct Origins {
    /// `c = is.err x`: `c → x`.
    is_err: HashMap<Value, Value>,
    /// `e = err.or a b`: `e → (a, b)`.
    err_or: HashMap<Value, (Value, Value)>,
}

impl Origins {
    /// The facts of taking the edge on which `cond` is `taken`.
    fn edge_facts(&self, cond: Value, taken: bool, facts: &mut Facts) {
        facts.learn_cond(cond, taken);
        let Some(&handle) = self.is_err.get(&cond) else {
            return;
        };
        facts.learn_err(handle, taken);
        if taken {
            return;
        }
        // No error: nor any operand of the `err.or`s it was made from (a bounded walk).
        let mut work = vec![handle];
        let mut budget = 32;
        while let Some(e) = work.pop() {
            let Some(&(a, b)) = self.err_or.get(&e) else {
                continue;
            };
            for operand in [a, b] {
                facts.learn_err(operand, false);
                if budget > 0 {
                    budget -= 1;
                    work.push(operand);
                }
            }
        }
    }
}

/// The walk's steps: entering a block with the facts of the edge into it, or leaving the
/// blocks it alone enters.
enum Step {
    Enter {
        block: usize,
        edge: Option<(Value, bool)>,
        /// The block it is entered from, and which arm of its terminator (0 for a jump or
        /// a branch's `then`, 1 for `otherwise`).
        from: Option<(usize, usize)>,
    },
    Leave {
        mark: usize,
    },
}

/// The "known errors" rewrite (see the module's documentation). Blocks are visited along
/// the tree of single-predecessor edges, roots in reverse post-order, so that a block sees
/// the facts of every block that alone leads to it.
fn fold_known_errors(func: &mut Function, never_errors: &[Value], renames: &mut Renames) {
    let n = func.blocks.len();
    let order = func.reverse_post_order();
    let preds = predecessor_counts(func, &order);
    let mut facts = Facts::default();
    for v in never_errors {
        facts.errs.insert(*v, false);
    }
    for block in &func.blocks {
        for inst in &block.insts {
            match (&inst.op, inst.results.as_slice()) {
                (Op::NoErr, [r]) => {
                    facts.errs.insert(*r, false);
                }
                (Op::BoolConst(b), [r]) => {
                    facts.conds.insert(*r, *b);
                }
                _ => {}
            }
        }
    }
    let mut origins = Origins::default();
    let mut stack: Vec<Step> = Vec::new();
    for root in order {
        if root != 0 && preds[root] == 1 {
            continue; // visited from its predecessor
        }
        stack.push(Step::Enter {
            block: root,
            edge: None,
            from: None,
        });
        while let Some(step) = stack.pop() {
            let (block, edge) = match step {
                Step::Leave { mark } => {
                    facts.undo_to(mark);
                    continue;
                }
                Step::Enter { block, edge, from } => {
                    if let Some((parent, arm)) = from {
                        bind_params(func, parent, arm, block, renames);
                    }
                    (block, edge)
                }
            };
            stack.push(Step::Leave {
                mark: facts.undo.len(),
            });
            if let Some((cond, taken)) = edge {
                origins.edge_facts(cond, taken, &mut facts);
            }
            fold_block(func, block, &mut facts, &mut origins, renames);
            // The blocks this one alone enters, with what each edge teaches.
            let edges: Vec<(Block, Option<(Value, bool)>)> = match &func.blocks[block].term {
                Some(Term::Jump(t, _)) => vec![(*t, None)],
                Some(Term::Branch {
                    cond,
                    then,
                    otherwise,
                }) => vec![
                    (then.0, Some((*cond, true))),
                    (otherwise.0, Some((*cond, false))),
                ],
                _ => vec![],
            };
            for (arm, (target, edge)) in edges.into_iter().enumerate() {
                let t = target.0 as usize;
                if t != 0 && t < n && preds[t] == 1 {
                    stack.push(Step::Enter {
                        block: t,
                        edge,
                        from: Some((block, arm)),
                    });
                }
            }
        }
    }
}

/// Replaces the parameters of `block`, entered only by arm `arm` of `parent`'s terminator,
/// by that arm's arguments (so that what is known of the arguments is known of them), and
/// drops both.
fn bind_params(
    func: &mut Function,
    parent: usize,
    arm: usize,
    block: usize,
    renames: &mut Renames,
) {
    if func.blocks[block].params.is_empty() {
        return;
    }
    let args = match (&mut func.blocks[parent].term, arm) {
        (Some(Term::Jump(_, args)), 0) => args,
        (Some(Term::Branch { then, .. }), 0) => &mut then.1,
        (Some(Term::Branch { otherwise, .. }), 1) => &mut otherwise.1,
        _ => return,
    };
    let args = std::mem::take(args);
    let params = std::mem::take(&mut func.blocks[block].params);
    for (param, arg) in params.into_iter().zip(args) {
        let arg = renames.resolve(arg);
        renames.add(param, arg);
    }
}

/// Rewrites one block's instructions and terminator with what is known where it runs.
fn fold_block(
    func: &mut Function,
    block: usize,
    facts: &mut Facts,
    origins: &mut Origins,
    renames: &mut Renames,
) {
    let insts = std::mem::take(&mut func.blocks[block].insts);
    let mut kept = Vec::with_capacity(insts.len());
    for mut inst in insts {
        for a in &mut inst.args {
            *a = renames.resolve(*a);
        }
        match (&inst.op, inst.args.as_slice(), inst.results.as_slice()) {
            (&Op::IsErr, &[x], &[r]) => match facts.err(x) {
                Some(known) => constant_cond(&mut inst, r, known, facts),
                None => {
                    origins.is_err.insert(r, x);
                }
            },
            (&Op::ErrOr, &[a, b], &[r]) => {
                // `a` if it is an error, else `b`.
                let same_as = match (facts.err(a), facts.err(b)) {
                    (Some(true), _) | (None, Some(false)) => Some(a),
                    (Some(false), _) => Some(b),
                    (None, Some(true)) => {
                        facts.learn_err(r, true);
                        None
                    }
                    // The same as an `err.or` of the same handles made before it.
                    (None, None) => facts.err_ors.get(&(a, b)).copied(),
                };
                match same_as {
                    Some(v) => {
                        renames.add(r, v);
                        continue;
                    }
                    None => {
                        origins.err_or.insert(r, (a, b));
                        facts.learn_err_or((a, b), r);
                    }
                }
            }
            (&Op::Not, &[x], &[r]) => {
                if let Some(known) = facts.cond(x) {
                    constant_cond(&mut inst, r, !known, facts);
                }
            }
            (&Op::BoolAnd, &[a, b], &[r]) => match (facts.cond(a), facts.cond(b)) {
                (Some(false), _) | (_, Some(false)) => constant_cond(&mut inst, r, false, facts),
                (Some(true), _) => {
                    renames.add(r, b);
                    continue;
                }
                (_, Some(true)) => {
                    renames.add(r, a);
                    continue;
                }
                (None, None) => {}
            },
            (&Op::ChargeIfOk(cost), &[e], &[]) => match facts.err(e) {
                Some(true) => continue,
                Some(false) => {
                    inst.op = Op::Charge(cost);
                    inst.args.clear();
                }
                None => {}
            },
            (&Op::ChargeUnless(cost), &[c], &[]) => match facts.cond(c) {
                Some(true) => continue,
                Some(false) => {
                    inst.op = Op::Charge(cost);
                    inst.args.clear();
                }
                None => {}
            },
            _ => {}
        }
        kept.push(inst);
    }
    func.blocks[block].insts = kept;
    let term = &mut func.blocks[block].term;
    if let Some(Term::Branch {
        cond,
        then,
        otherwise,
    }) = term
    {
        let c = renames.resolve(*cond);
        *cond = c;
        if let Some(taken) = facts.cond(c) {
            let (target, args) = if taken { then } else { otherwise };
            *term = Some(Term::Jump(*target, std::mem::take(args)));
        }
    }
}

/// Makes `inst`, whose result `r` is known to be `value` where it runs, that constant. The
/// fact then holds wherever `r` is used, since its definition says so.
fn constant_cond(inst: &mut Inst, r: Value, value: bool, facts: &mut Facts) {
    facts.conds.insert(r, value);
    inst.op = Op::BoolConst(value);
    inst.args.clear();
}

/// The "forwarding blocks" rewrite: jumps into a block that only passes its parameters on
/// go straight to where it passes them.
fn skip_forwarding_blocks(func: &mut Function) {
    // For a forwarding block: its target, and for each of the target's arguments, the
    // index of the parameter it is. Every parameter must be passed on: one that is not may
    // be used where the target's own parameters were replaced by it (`bind_params`).
    let forward: Vec<Option<(Block, Vec<usize>)>> = func
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| match &b.term {
            Some(Term::Jump(t, args)) if i != 0 && b.insts.is_empty() && t.0 as usize != i => {
                let picks: Option<Vec<usize>> = args
                    .iter()
                    .map(|a| b.params.iter().position(|p| p == a))
                    .collect();
                let all_passed = b.params.iter().all(|p| args.contains(p));
                picks.filter(|_| all_passed).map(|p| (*t, p))
            }
            _ => None,
        })
        .collect();
    // Chains of forwarding blocks are short; a bounded number of steps keeps this linear.
    const MAX_STEPS: usize = 8;
    let skip = |target: &mut Block, args: &mut Vec<Value>| {
        for _ in 0..MAX_STEPS {
            let Some((next, picks)) = &forward[target.0 as usize] else {
                return;
            };
            *args = picks.iter().map(|&p| args[p]).collect();
            *target = *next;
        }
    };
    for block in &mut func.blocks {
        match &mut block.term {
            Some(Term::Jump(t, args)) => skip(t, args),
            Some(Term::Branch {
                then, otherwise, ..
            }) => {
                skip(&mut then.0, &mut then.1);
                skip(&mut otherwise.0, &mut otherwise.1);
            }
            _ => {}
        }
    }
}

/// The "straight lines" rewrite: a block entered by a single jump joins the block that
/// jumps. Visited in reverse post-order, so that each instruction moves once.
fn merge_straight_lines(func: &mut Function, renames: &mut Renames) {
    let order = func.reverse_post_order();
    let mut preds = predecessor_counts(func, &order);
    for b in order {
        if b != 0 && preds[b] == 0 {
            continue; // joined an earlier block
        }
        while let Some(Term::Jump(t, _)) = &func.blocks[b].term {
            let t = t.0 as usize;
            if t == b || t == 0 || preds[t] != 1 {
                break;
            }
            let Some(Term::Jump(_, args)) = func.blocks[b].term.take() else {
                unreachable!("matched above");
            };
            let joined = std::mem::take(&mut func.blocks[t]);
            for (param, arg) in joined.params.iter().zip(args) {
                renames.add(*param, arg);
            }
            let insts: Vec<Inst> = joined.insts;
            func.blocks[b].insts.extend(insts);
            func.blocks[b].term = joined.term;
            preds[t] = 0;
        }
    }
}

/// Drops the blocks the entry no longer reaches and renumbers the others in order.
fn drop_unreachable(func: &mut Function) {
    let n = func.blocks.len();
    let mut reached = vec![false; n];
    for b in func.reverse_post_order() {
        reached[b] = true;
    }
    if reached.iter().all(|r| *r) {
        return;
    }
    let mut new_index = vec![u32::MAX; n];
    let mut next = 0u32;
    for (i, r) in reached.iter().enumerate() {
        if *r {
            new_index[i] = next;
            next += 1;
        }
    }
    let renumber = |b: &mut Block| *b = Block(new_index[b.0 as usize]);
    let blocks = std::mem::take(&mut func.blocks);
    for (i, mut block) in blocks.into_iter().enumerate() {
        if !reached[i] {
            continue;
        }
        match &mut block.term {
            Some(Term::Jump(t, _)) => renumber(t),
            Some(Term::Branch {
                then, otherwise, ..
            }) => {
                renumber(&mut then.0);
                renumber(&mut otherwise.0);
            }
            _ => {}
        }
        func.blocks.push(block);
    }
}

/// Whether an instruction only computes its results (dropping it when they are unused
/// changes nothing).
fn is_pure(op: &Op) -> bool {
    matches!(
        op,
        Op::IntConst(_)
            | Op::UintConst(_)
            | Op::DoubleConst(_)
            | Op::BoolConst(_)
            | Op::ValConst(_)
            | Op::NoErr
            | Op::IsErr
            | Op::ErrOr
            | Op::ErrAgain { .. }
            | Op::Copy
            | Op::Not
            | Op::BoolAnd
            | Op::ScalarCmp(_)
    )
}

/// Drops pure instructions whose results nothing uses, uses before definitions (reverse
/// post-order, backwards), so that a chain of them goes at once.
fn remove_unused(func: &mut Function) {
    let mut uses = vec![0u32; func.types.len()];
    for block in &func.blocks {
        for inst in &block.insts {
            for a in &inst.args {
                uses[a.0 as usize] += 1;
            }
        }
        match &block.term {
            Some(Term::Jump(_, args)) => args.iter().for_each(|a| uses[a.0 as usize] += 1),
            Some(Term::Branch {
                cond,
                then,
                otherwise,
            }) => {
                uses[cond.0 as usize] += 1;
                for a in then.1.iter().chain(&otherwise.1) {
                    uses[a.0 as usize] += 1;
                }
            }
            Some(Term::Return { value, err }) => {
                uses[value.0 as usize] += 1;
                uses[err.0 as usize] += 1;
            }
            None => {}
        }
    }
    for b in func.reverse_post_order().into_iter().rev() {
        let insts = std::mem::take(&mut func.blocks[b].insts);
        let mut kept: Vec<Inst> = Vec::with_capacity(insts.len());
        for inst in insts.into_iter().rev() {
            let unused = inst.results.iter().all(|r| uses[r.0 as usize] == 0);
            if unused && !inst.results.is_empty() && is_pure(&inst.op) {
                for a in &inst.args {
                    uses[a.0 as usize] -= 1;
                }
                continue;
            }
            kept.push(inst);
        }
        kept.reverse();
        func.blocks[b].insts = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ArithOp, Builder, Ty};
    use crate::{print, verify};

    /// The lowering's shape for `a + b` on two fallible operands: test the operands' errors,
    /// add or pass the error on, join. Returns the join's `(value, err)`.
    fn checked_add(b: &mut Builder, x: (Value, Value), y: (Value, Value)) -> (Value, Value) {
        let err = b.inst1(Op::ErrOr, vec![x.1, y.1], Ty::Err, 1);
        let failed = b.inst1(Op::IsErr, vec![err], Ty::Bool, 1);
        let (add, pass, join) = (b.create_block(), b.create_block(), b.create_block());
        let forward = b.create_block();
        b.branch(failed, (pass, vec![]), (add, vec![]));
        b.switch_to(add);
        let (sum, e) = b.inst2(Op::IntArith(ArithOp::Add), vec![x.0, y.0], Ty::Int, 1);
        b.jump(forward, vec![sum, e]);
        b.switch_to(forward);
        let (fv, fe) = (b.add_param(forward, Ty::Int), b.add_param(forward, Ty::Err));
        b.jump(join, vec![fv, fe]);
        b.switch_to(pass);
        let zero = b.inst1(Op::IntConst(0), vec![], Ty::Int, 1);
        b.jump(join, vec![zero, err]);
        b.switch_to(join);
        (b.add_param(join, Ty::Int), b.add_param(join, Ty::Err))
    }

    fn simplified(b: Builder, never_errors: &[Value]) -> String {
        let mut f = b.finish();
        verify(&f).expect("valid before");
        simplify_control_flow(&mut f, never_errors);
        verify(&f).expect("valid after");
        print(&f)
    }

    /// `x + y` on both arms of a branch that tested whether either operand is an error:
    /// each arm's own test is decided (on one arm the same combination of handles is no
    /// error, on the other it is an error, passed on), its forwarding block skipped and its
    /// straight line joined.
    #[test]
    fn a_decided_error_test_is_not_made_again() {
        let mut b = Builder::new();
        let x = b.inst2(Op::LoadVar("x".into()), vec![], Ty::Int, 1);
        let y = b.inst2(Op::LoadVar("y".into()), vec![], Ty::Int, 2);
        let either = b.inst1(Op::ErrOr, vec![x.1, y.1], Ty::Err, 3);
        let failed = b.inst1(Op::IsErr, vec![either], Ty::Bool, 3);
        let (ok, out) = (b.create_block(), b.create_block());
        b.branch(failed, (out, vec![]), (ok, vec![]));
        b.switch_to(ok);
        let sum = checked_add(&mut b, x, y);
        b.terminate(Term::Return {
            value: sum.0,
            err: sum.1,
        });
        b.switch_to(out);
        let again = checked_add(&mut b, x, y);
        b.terminate(Term::Return {
            value: again.0,
            err: again.1,
        });
        insta::assert_snapshot!(simplified(b, &[]));
    }

    /// A block that only forwards to a block it alone enters (an error exit into the
    /// function's return) gives that block its parameters; it is joined to it, not
    /// skipped, since the target now reads the forwarder's parameters.
    #[test]
    fn a_forwarder_into_a_block_it_alone_enters_is_joined() {
        let mut b = Builder::new();
        let x = b.inst2(Op::LoadVar("x".into()), vec![], Ty::Int, 1);
        let y = b.inst2(Op::LoadVar("y".into()), vec![], Ty::Int, 2);
        let (forward, exit, next) = (b.create_block(), b.create_block(), b.create_block());
        let failed = b.inst1(Op::IsErr, vec![x.1], Ty::Bool, 1);
        b.branch(failed, (forward, vec![x.0, x.1]), (next, vec![]));
        b.switch_to(next);
        b.jump(forward, vec![y.0, y.1]);
        b.switch_to(forward);
        let (fv, fe) = (b.add_param(forward, Ty::Int), b.add_param(forward, Ty::Err));
        b.jump(exit, vec![fv, fe]);
        b.switch_to(exit);
        let (ev, ee) = (b.add_param(exit, Ty::Int), b.add_param(exit, Ty::Err));
        b.terminate(Term::Return { value: ev, err: ee });
        insta::assert_snapshot!(simplified(b, &[]));
    }

    /// With the variables' errors known to be none (checked on entry), only the additions'
    /// own overflow errors are tested.
    #[test]
    fn handles_that_are_never_errors_remove_their_tests() {
        let mut b = Builder::new();
        let x = b.inst2(Op::LoadVar("x".into()), vec![], Ty::Int, 1);
        let y = b.inst2(Op::LoadVar("y".into()), vec![], Ty::Int, 2);
        let sum = checked_add(&mut b, x, y);
        b.terminate(Term::Return {
            value: sum.0,
            err: sum.1,
        });
        insta::assert_snapshot!(simplified(b, &[x.1, y.1]));
    }

    /// A loop's header, entered from before the loop and from its back edge, stays a block
    /// of its own, and what the body learnt does not reach it.
    #[test]
    fn loops_keep_their_headers() {
        let mut b = Builder::new();
        let x = b.inst2(Op::LoadVar("x".into()), vec![], Ty::Int, 1);
        let zero = b.inst1(Op::IntConst(0), vec![], Ty::Index, 1);
        let (header, body, exit) = (b.create_block(), b.create_block(), b.create_block());
        b.jump(header, vec![zero]);
        b.switch_to(header);
        let i = b.add_param(header, Ty::Index);
        let failed = b.inst1(Op::IsErr, vec![x.1], Ty::Bool, 1);
        b.branch(failed, (exit, vec![]), (body, vec![]));
        b.switch_to(body);
        let again = b.inst1(Op::IsErr, vec![x.1], Ty::Bool, 1);
        let next = b.inst1(Op::IndexInc, vec![i], Ty::Index, 1);
        let (cont, done) = (b.create_block(), b.create_block());
        b.branch(again, (done, vec![]), (cont, vec![]));
        b.switch_to(cont);
        b.jump(header, vec![next]);
        b.switch_to(done);
        b.jump(exit, vec![]);
        b.switch_to(exit);
        b.terminate(Term::Return {
            value: x.0,
            err: x.1,
        });
        insta::assert_snapshot!(simplified(b, &[]));
    }
}
