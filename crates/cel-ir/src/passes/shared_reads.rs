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
//! Reads are matched along the dominator tree (the verifier's), walked with an explicit
//! stack and a table of the reads that dominate the current point: linear in the function's
//! size once the dominators are known.

use std::collections::HashMap;
use std::sync::Arc;

use cel_syntax::ExprId;

use super::simplify::Renames;
use crate::ir::{Function, Inst, Op, Value};
use crate::verify::{dominator_children, dominators};

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
    if func.blocks.is_empty() {
        return;
    }
    let children = dominator_children(&dominators(func));
    let mut firsts: HashMap<Read, First> = HashMap::new();
    // What each entered block added to `firsts`, undone when its subtree is left.
    let mut added: Vec<Read> = Vec::new();
    let mut renames = Renames::default();
    enum Step {
        Enter(usize),
        Leave(usize),
    }
    let mut stack = vec![Step::Enter(0)];
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
