//! Field reads hoisted out of loops: a read (or a presence test, `has(x.f)`) whose operand is
//! defined before a loop reads the same field of the same value at every iteration, so it is
//! made once, before the loop.
//!
//! Kubernetes rules compare each element of a list with something outside it:
//! `self.spec.containers.all(c, c.cpu <= self.spec.maxCpu)`, `self.set1.all(e, !(e in
//! self.set2))`. Left in place, `self.spec.maxCpu` is two reads (two helper calls, or two
//! inline lookups) at every iteration. A field read computes its results from its operand
//! and its field name alone (it calls nothing a host defined, and a failed read is an
//! error value, not a stop), so it may run once in the loop's preheader, even when the loop
//! runs no iteration or reaches the read only on some. Inside the loop the read becomes
//! `err.again` of the hoisted read's error, attached to the same expression: no error when
//! the read succeeded, its error where the read stood otherwise. Charges stay in the loop.
//!
//! The hoisted read goes before the preheader's `arena.mark`, so that what it makes
//! outlives the values each iteration frees. A loop whose iterations free down to a mark
//! made elsewhere, or whose header has more than one way in from outside, is left alone.
//!
//! Loops are the natural loops of the back edges (an edge to a block that dominates its
//! source), handled from the innermost out. A read leaves one loop, the innermost around
//! it: hoisted from an inner loop, it lands in the outer loop's body, once per outer
//! iteration, and stays there (a value live across many levels of loops costs the register
//! allocator more than the read saves). Variable reads, resolved on entry, move freely.
//! Dominance is the verifier's (`DomTree`: constant time per question).

use super::simplify::Renames;
use crate::ir::{Function, Inst, Op, Value};
use crate::verify::{DomTree, dominators};

/// A natural loop: the blocks of its body (its header included), how many, and the one
/// block outside it that enters it.
struct Loop {
    body: Vec<bool>,
    size: usize,
    preheader: usize,
}

/// Hoists loop-invariant field reads in `func` (see the module's documentation), and
/// variable reads when `variables` (the backend resolves every variable on entry, so a read
/// of one asks the host nothing and cannot fail).
pub fn hoist_invariant_reads(func: &mut Function, variables: bool) {
    if func.blocks.is_empty() {
        return;
    }
    let mut loops = natural_loops(func);
    if loops.is_empty() {
        return;
    }
    loops.sort_by_key(|l| l.size);
    let order = func.reverse_post_order();
    let mut defined_in = definitions(func);
    let mut renames = Renames::default();
    // Values from here on are hoisted reads' (see `hoist_from`).
    let hoisted_from = func.types.len();
    for l in &loops {
        let pass = Pass {
            variables,
            hoisted_from,
        };
        hoist_from(func, l, &order, pass, &mut defined_in, &mut renames);
    }
    renames.apply(func);
}

/// The block defining each value (`usize::MAX` for none).
fn definitions(func: &Function) -> Vec<usize> {
    let mut defined_in = vec![usize::MAX; func.types.len()];
    for (b, block) in func.blocks.iter().enumerate() {
        let values = block
            .params
            .iter()
            .chain(block.insts.iter().flat_map(|i| &i.results));
        for v in values {
            if let Some(d) = defined_in.get_mut(v.0 as usize) {
                *d = b;
            }
        }
    }
    defined_in
}

/// The natural loops whose header has a single predecessor outside the loop, which ends
/// with a jump to it.
fn natural_loops(func: &Function) -> Vec<Loop> {
    let n = func.blocks.len();
    let tree = DomTree::new(&dominators(func));
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, block) in func.blocks.iter().enumerate() {
        for s in block.term.iter().flat_map(|t| t.successors()) {
            if let Some(p) = preds.get_mut(s.0 as usize) {
                p.push(b);
            }
        }
    }
    let mut loops: Vec<Loop> = Vec::new();
    for header in 0..n {
        let latches: Vec<usize> = preds[header]
            .iter()
            .copied()
            .filter(|&p| tree.dominates(header, p))
            .collect();
        if latches.is_empty() {
            continue;
        }
        // The body: the header and every block reaching a latch without passing it.
        let mut body = vec![false; n];
        body[header] = true;
        let mut size = 1;
        let mut stack = latches;
        while let Some(b) = stack.pop() {
            if !body[b] {
                body[b] = true;
                size += 1;
                stack.extend(preds[b].iter().copied());
            }
        }
        let mut outside = preds[header].iter().copied().filter(|p| !body[*p]);
        let (Some(preheader), None) = (outside.next(), outside.next()) else {
            continue;
        };
        let enters_by_jump = matches!(
            &func.blocks[preheader].term,
            Some(crate::ir::Term::Jump(t, _)) if t.0 as usize == header
        );
        if enters_by_jump {
            loops.push(Loop {
                body,
                size,
                preheader,
            });
        }
    }
    loops
}

/// What holds for every loop of a function.
#[derive(Clone, Copy)]
struct Pass {
    /// Variable reads may move (the backend resolves every variable on entry).
    variables: bool,
    /// The first value made by hoisting: a read with such results was hoisted from an inner
    /// loop and stays in that loop's preheader. Hoisting it further would save nothing per
    /// iteration of the inner loop, and would keep its value live across every loop around
    /// it, which the register allocator pays for with each level of nesting (30 nested
    /// loops compiled 4 times slower, and evaluated slower, when reads left every level).
    hoisted_from: usize,
}

/// Hoists the invariant reads of one loop into its preheader.
fn hoist_from(
    func: &mut Function,
    l: &Loop,
    order: &[usize],
    Pass {
        variables,
        hoisted_from,
    }: Pass,
    defined_in: &mut Vec<usize>,
    renames: &mut Renames,
) {
    let Some(at) = insertion_point(func, l, defined_in) else {
        return;
    };
    // Where each value of the preheader is defined in it, to hoist only reads whose
    // operand is defined before the insertion point.
    let before_at = |func: &Function, v: Value| {
        func.blocks[l.preheader].insts[..at]
            .iter()
            .any(|i| i.results.contains(&v))
            || func.blocks[l.preheader].params.contains(&v)
    };
    let mut hoisted: Vec<Inst> = Vec::new();
    for &b in order.iter().filter(|&&b| l.body[b]) {
        let mut i = 0;
        while i < func.blocks[b].insts.len() {
            let inst = &mut func.blocks[b].insts[i];
            for a in &mut inst.args {
                *a = renames.resolve(*a);
            }
            match (&inst.op, inst.args.as_slice(), inst.results.as_slice()) {
                (Op::LoadVar(_), [], _) if variables => {
                    // Resolved on entry: the same value and no error anywhere, so the read
                    // itself moves (and `share_reads` then merges it with the first).
                    let read = func.blocks[b].insts.remove(i);
                    for r in &read.results {
                        defined_in[r.0 as usize] = l.preheader;
                    }
                    hoisted.push(read);
                    continue;
                }
                (Op::Select { .. } | Op::Has { .. }, [operand], [value, err])
                    if (value.0 as usize) < hoisted_from =>
                {
                    let (operand, value, err) = (*operand, *value, *err);
                    let home = defined_in[operand.0 as usize];
                    let invariant = home != usize::MAX
                        && !l.body[home]
                        && (home != l.preheader
                            || before_at(func, operand)
                            || hoisted.iter().any(|h| h.results.contains(&operand)));
                    if invariant {
                        let read = hoist_select(func, (b, i), value, err, l.preheader, defined_in);
                        renames.add(value, read.results[0]);
                        hoisted.push(read);
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
    func.blocks[l.preheader].insts.splice(at..at, hoisted);
}

/// Replaces the field read (or presence test) at `(block, index)` with `err.again` of a copy
/// of it made with fresh results (defined in `home`), and returns the copy.
fn hoist_select(
    func: &mut Function,
    (b, i): (usize, usize),
    value: Value,
    err: Value,
    home: usize,
    defined_in: &mut Vec<usize>,
) -> Inst {
    let fresh_value = fresh(func, value, home, defined_in);
    let fresh_err = fresh(func, err, home, defined_in);
    let inst = &mut func.blocks[b].insts[i];
    let expr = inst.expr;
    let read = std::mem::replace(
        inst,
        Inst {
            op: Op::ErrAgain { from: expr },
            args: vec![fresh_err],
            results: vec![err],
            expr,
        },
    );
    Inst {
        results: vec![fresh_value, fresh_err],
        ..read
    }
}

/// Where hoisted reads go in the loop's preheader: before its `arena.mark` when the loop's
/// iterations free down to it, at its end when they free nothing; `None` when they free down
/// to a mark made anywhere else (what a read made there would not outlive).
fn insertion_point(func: &Function, l: &Loop, defined_in: &[usize]) -> Option<usize> {
    let preheader = &func.blocks[l.preheader];
    let mut at = preheader.insts.len();
    for (block, _) in func
        .blocks
        .iter()
        .zip(&l.body)
        .filter(|(_, inside)| **inside)
    {
        for inst in &block.insts {
            let (Op::ArenaRelease { .. }, [mark]) = (&inst.op, inst.args.as_slice()) else {
                continue;
            };
            let home = defined_in.get(mark.0 as usize).copied()?;
            if l.body.get(home).copied()? {
                continue; // an inner loop's: it frees only what that loop made
            }
            let position = preheader
                .insts
                .iter()
                .position(|i| i.op == Op::ArenaMark && i.results.as_slice() == [*mark])?;
            at = at.min(position);
        }
    }
    Some(at)
}

/// A new value of `like`'s type, defined in block `home`.
fn fresh(func: &mut Function, like: Value, home: usize, defined_in: &mut Vec<usize>) -> Value {
    let v = Value(func.types.len() as u32);
    func.types.push(func.ty(like));
    defined_in.push(home);
    v
}
