//! Repeated reads shared: a field read (or a variable read) that an identical read always
//! precedes takes that read's value instead of reading again.
//!
//! Kubernetes rules name the same paths again and again: `self.spec.minReplicas <=
//! self.spec.replicas && self.spec.replicas <= self.spec.maxReplicas` reads `self.spec` four
//! times and `self.spec.replicas` twice, and each read is a helper call or an inline lookup
//! that Cranelift compiles and the evaluation runs. A field read computes its results from
//! its operand and its field name alone (it calls nothing a host defined), so a read of the
//! same field of the same operand value gives the same value and the same error. Only the
//! error's position differs: a read's error names its own expression. So where an earlier
//! read dominates a repeat (every path to the repeat ran it), the repeat's value becomes the
//! earlier read's, and the repeat itself becomes `err.again`, which is no error when the
//! earlier read succeeded and otherwise the same error attached to the repeat's expression.
//! Every charge stays where it was, taking the shared results, which equal what the repeat
//! would have produced.
//!
//! Variables are shared too when the backend resolves every variable on entry (then reading
//! one asks the host nothing and cannot fail); otherwise each read asks the host, which may
//! charge for it, and stays.
//!
//! Reads are matched along the dominator tree, walked with an explicit stack and a table of
//! the reads that dominate the current point: linear in the function's size once the
//! dominators are known. They are computed by the iterative algorithm of Cooper, Harvey and
//! Kennedy, which settles in a few rounds on the structured control flow the lowering
//! produces; a function that has not settled after [`MAX_ROUNDS`] is left as it is.

use std::collections::HashMap;
use std::sync::Arc;

use cel_syntax::ExprId;

use super::simplify::Renames;
use crate::ir::{Function, Inst, Op, Term, Value};

/// The most rounds of the dominator computation before the pass gives up on a function.
const MAX_ROUNDS: usize = 64;

/// What a read reads.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Read {
    /// A variable, by name.
    Variable(Arc<str>),
    /// A field of an operand value (the operand after earlier sharing).
    Field {
        operand: Value,
        field: Arc<str>,
        object: bool,
    },
}

/// The first read of something: its value and error handle, and its expression.
#[derive(Clone, Copy)]
struct First {
    value: Value,
    err: Value,
    expr: ExprId,
}

/// Shares repeated reads in `func` (see the module's documentation). `variables` says
/// whether variables may be shared (the backend resolves them all on entry).
pub fn share_reads(func: &mut Function, variables: bool) {
    let order = func.reverse_post_order();
    let Some(children) = dominator_tree(func, &order) else {
        return;
    };
    let mut firsts: HashMap<Read, First> = HashMap::new();
    // What each entered block added to `firsts`, undone when its subtree is left.
    let mut added: Vec<Read> = Vec::new();
    let mut renames = Renames::default();
    enum Step {
        Enter(usize),
        Leave(usize),
    }
    let mut stack: Vec<Step> = order.first().map(|&b| Step::Enter(b)).into_iter().collect();
    while let Some(step) = stack.pop() {
        match step {
            Step::Leave(mark) => {
                for read in added.drain(mark..) {
                    firsts.remove(&read);
                }
            }
            Step::Enter(b) => {
                stack.push(Step::Leave(added.len()));
                let insts = std::mem::take(&mut func.blocks[b].insts);
                func.blocks[b].insts = insts
                    .into_iter()
                    .filter_map(|inst| {
                        share(inst, variables, &mut firsts, &mut added, &mut renames)
                    })
                    .collect();
                stack.extend(children[b].iter().rev().map(|&c| Step::Enter(c)));
            }
        }
    }
    renames.apply(func);
}

/// One instruction: kept, rewritten to `err.again` (a repeated field read) or dropped (a
/// repeated variable read, its results renamed).
fn share(
    mut inst: Inst,
    variables: bool,
    firsts: &mut HashMap<Read, First>,
    added: &mut Vec<Read>,
    renames: &mut Renames,
) -> Option<Inst> {
    for a in &mut inst.args {
        *a = renames.resolve(*a);
    }
    let read = match (&inst.op, inst.args.as_slice()) {
        (Op::LoadVar(name), []) if variables => Read::Variable(name.clone()),
        (Op::Select { field, object }, [operand]) => Read::Field {
            operand: *operand,
            field: field.clone(),
            object: *object,
        },
        _ => return Some(inst),
    };
    let [value, err] = inst.results[..] else {
        return Some(inst);
    };
    match firsts.get(&read) {
        None => {
            firsts.insert(
                read.clone(),
                First {
                    value,
                    err,
                    expr: inst.expr,
                },
            );
            added.push(read);
            Some(inst)
        }
        Some(first) => {
            renames.add(value, first.value);
            if matches!(read, Read::Variable(_)) {
                // A variable resolved on entry has no error: its handle is the first's.
                renames.add(err, first.err);
                return None;
            }
            Some(Inst {
                op: Op::ErrAgain { from: first.expr },
                args: vec![first.err],
                results: vec![err],
                expr: inst.expr,
            })
        }
    }
}

/// The children of each block in the dominator tree of the blocks in `order` (the reachable
/// ones, in reverse post-order), or `None` when the computation does not settle in
/// [`MAX_ROUNDS`] rounds.
fn dominator_tree(func: &Function, order: &[usize]) -> Option<Vec<Vec<usize>>> {
    let n = func.blocks.len();
    let mut rank = vec![usize::MAX; n];
    for (i, &b) in order.iter().enumerate() {
        rank[b] = i;
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &b in order {
        for s in func.blocks[b].term.iter().flat_map(Term::successors) {
            let s = s.0 as usize;
            if s < n && rank[s] != usize::MAX {
                preds[s].push(b);
            }
        }
    }
    let &entry = order.first()?;
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[entry] = Some(entry);
    let mut settled = false;
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for &b in &order[1..] {
            let mut new: Option<usize> = None;
            for &p in &preds[b] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(x) => common_dominator(x, p, &idom, &rank)?,
                });
            }
            if new != idom[b] {
                idom[b] = new;
                changed = true;
            }
        }
        if !changed {
            settled = true;
            break;
        }
    }
    if !settled {
        return None;
    }
    let mut children = vec![Vec::new(); n];
    for &b in &order[1..] {
        children[idom[b]?].push(b);
    }
    Some(children)
}

/// The nearest common dominator of `a` and `b` as far as `idom` knows (the two-finger walk
/// up the tree by reverse post-order rank); `None` when the walk meets a block without a
/// dominator yet, which a settled computation never leaves.
fn common_dominator(
    mut a: usize,
    mut b: usize,
    idom: &[Option<usize>],
    rank: &[usize],
) -> Option<usize> {
    while a != b {
        while rank[a] > rank[b] {
            a = idom[a]?;
        }
        while rank[b] > rank[a] {
            b = idom[b]?;
        }
    }
    Some(a)
}
