//! Lowering a checked AST into the IR.
//!
//! The lowering follows the interpreter (`cel-interp`'s `eval.rs`) construct by construct:
//! the same evaluation order, the same error rules (binary calls evaluate both arguments,
//! longer calls stop at the first error; `&&` and `||` absorb errors commutatively;
//! comprehension steps may hold errors), and the same cost charges, read from the
//! [`CostPlan`] both evaluators share. Where the checker proved a value scalar and the
//! operation maps to machine arithmetic, the value stays unboxed; everything else is a
//! reference to a runtime value and a call into the runtime.
//!
//! Subtrees the lowering does not handle (message literals) become *residuals*: the
//! smallest enclosing subtree without free comprehension variables is left to the
//! interpreter, so every checked program lowers.

use cel_types::overloads as ov;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use cel_checker::CheckedAst;
use cel_cost::{Charge, CostPlan};
use cel_syntax::{Comprehension, Expr, ExprId, ExprKind, Literal, operators};
use cel_types::{OlderCelGo, Type};

use crate::ir::{ArithOp, Builder, CmpOp, Constant, Function, Op, Ty, Value};

/// The most elements a list literal is built from in one instruction; longer ones are built
/// element by element.
const MAX_LIST_OPERANDS: usize = 32;

/// A comprehension's accumulator as its loop updates it: the scope entry, the value and
/// error slots, their representation, and the flags (lazy initialisation, deferred literal
/// cost) a step settles.
struct LoopAccumulator {
    local: Local,
    value: u32,
    err: u32,
    ty: Ty,
    flags: [Option<u32>; 2],
}

/// A lowered expression: its value and, if it can fail, its error handle.
#[derive(Clone, Copy, Debug)]
struct Lv {
    v: Value,
    err: Option<Value>,
}

/// A comprehension variable or accumulator in scope.
#[derive(Clone, Debug)]
enum Local {
    /// An iteration variable: an SSA value of the current iteration.
    Iter(Value),
    /// An accumulator in local slots: value, error, and (for lazily initialised ones) the
    /// "initialised" flag and the initial value's expression.
    Accu {
        value: u32,
        err: u32,
        lazy: Option<(u32, ExprId)>,
        /// For an accumulator created ahead of time: the flag saying whether its literal's
        /// cost was charged, and that cost. cel-go charges it when the accumulator is first
        /// read, which may be never (a step that fails replaces it unread).
        deferred: Option<(u32, u64)>,
    },
}

/// Why an expression was not lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LowerError {
    /// The function would have more instructions than the budget allows (native code
    /// whose compile time would grow faster than the expression: left to the interpreter).
    TooLarge {
        /// The budget, in instructions.
        budget: usize,
    },
    /// The lowering could not prove where a lazily initialised value is computed (a bug;
    /// the expression is left to the interpreter rather than compiled wrongly).
    Unsound,
}

impl std::fmt::Display for LowerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LowerError::TooLarge { budget } => {
                write!(f, "the expression needs more than {budget} IR instructions")
            }
            LowerError::Unsound => f.write_str("the lowering lost track of dominance"),
        }
    }
}

impl std::error::Error for LowerError {}

/// Lowers a checked expression. `costs` must come from the same AST. The lowering stops as
/// soon as the function has more than `budget` instructions, so its own time and memory
/// stay proportional to the budget and the expression's size.
pub fn lower(
    checked: &CheckedAst,
    costs: &CostPlan,
    budget: usize,
    older: OlderCelGo,
) -> Result<Function, LowerError> {
    let root = &checked.ast.expr;
    let residual_roots = residual_roots(root);
    let mut exprs: HashMap<ExprId, &Expr> = HashMap::new();
    root.walk(&mut |e| {
        exprs.insert(e.id, e);
    });
    let mut l = Lowerer {
        b: Builder::new(),
        checked,
        costs,
        scopes: Vec::new(),
        residual_roots,
        exprs,
        budget,
        lazy_ready: HashMap::new(),
        older,
    };
    let lv = l.lower(root);
    if l.b.inst_count() > budget {
        return Err(LowerError::TooLarge { budget });
    }
    if !l.b.dominance_sound() {
        return Err(LowerError::Unsound);
    }
    let err = l.err_or_none(lv.err, root.id);
    l.b.terminate(crate::ir::Term::Return { value: lv.v, err });
    Ok(l.b.finish())
}

/// The nodes that must be evaluated by the interpreter: for every node the lowering does not
/// handle, its smallest ancestor (or itself) without free comprehension variables.
fn residual_roots(root: &Expr) -> HashSet<ExprId> {
    // Parent links and free-variable sets.
    let mut parent: HashMap<ExprId, ExprId> = HashMap::new();
    root.walk(&mut |e| {
        e.for_each_child(&mut |c| {
            parent.insert(c.id, e.id);
        });
    });
    let mut free: HashMap<ExprId, HashSet<String>> = HashMap::new();
    free_vars(root, &mut free);
    let mut out = HashSet::new();
    root.walk(&mut |e| {
        if unsupported(e) {
            let mut cur = e.id;
            while free.get(&cur).is_some_and(|f| !f.is_empty()) {
                match parent.get(&cur) {
                    Some(p) => cur = *p,
                    None => break,
                }
            }
            out.insert(cur);
        }
    });
    // A residual inside another residual is covered by the outer one.
    let mut covered = HashSet::new();
    for id in &out {
        let mut cur = *id;
        while let Some(p) = parent.get(&cur) {
            if out.contains(p) {
                covered.insert(*id);
                break;
            }
            cur = *p;
        }
    }
    out.retain(|id| !covered.contains(id));
    out
}

/// Whether the lowering leaves a node to the interpreter.
fn unsupported(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Error => true,
        ExprKind::Call(c) => c.function.starts_with("cel.@block"),
        _ => false,
    }
}

/// Computes the free comprehension variables of every node (names bound by an enclosing
/// comprehension and used inside). Globals count too, but they are never bound, so a node
/// with only globals is treated as closed by the caller, which only asks about locals.
fn free_vars(e: &Expr, out: &mut HashMap<ExprId, HashSet<String>>) -> HashSet<String> {
    cel_syntax::stack::guarded(|| free_vars_of_node(e, out))
}

fn free_vars_of_node(e: &Expr, out: &mut HashMap<ExprId, HashSet<String>>) -> HashSet<String> {
    let set: HashSet<String> = match &e.kind {
        ExprKind::Ident(name) if !name.starts_with('.') => {
            // Only names that some comprehension could bind are interesting; qualified names
            // cannot be comprehension variables.
            if name.contains('.') {
                HashSet::new()
            } else {
                std::iter::once(name.clone()).collect()
            }
        }
        ExprKind::Comprehension(c) => {
            let mut s = free_vars(&c.iter_range, out);
            s.extend(free_vars(&c.accu_init, out));
            let mut inner = free_vars(&c.loop_condition, out);
            inner.extend(free_vars(&c.loop_step, out));
            inner.remove(&c.iter_var);
            if let Some(v2) = &c.iter_var2 {
                inner.remove(v2);
            }
            let mut res = free_vars(&c.result, out);
            res.extend(inner);
            res.remove(&c.accu_var);
            s.extend(res);
            s
        }
        _ => {
            let mut s = HashSet::new();
            e.for_each_child(&mut |c| s.extend(free_vars(c, out)));
            s
        }
    };
    // Globals are names too; keep only what is bound somewhere above by filtering at the
    // use site: a name is free here if an enclosing comprehension binds it. We cannot know
    // that bottom-up, so record everything and let `residual_roots` walk up until the set
    // is empty or only names no comprehension binds remain.
    out.insert(e.id, set.clone());
    set
}

struct Lowerer<'a> {
    b: Builder,
    checked: &'a CheckedAst,
    costs: &'a CostPlan,
    scopes: Vec<(String, Local)>,
    residual_roots: HashSet<ExprId>,
    exprs: HashMap<ExprId, &'a Expr>,
    /// The most instructions the function may have.
    budget: usize,
    /// For each lazily initialised accumulator (by its flag slot): the blocks where an
    /// initialisation has completed.
    lazy_ready: HashMap<u32, Vec<crate::ir::Block>>,
    /// The behaviours of an older cel-go to reproduce.
    older: OlderCelGo,
}

/// The lowering's view of a scalar checked type.
fn scalar_ty(t: &Type) -> Option<Ty> {
    match t {
        Type::Int => Some(Ty::Int),
        Type::Uint => Some(Ty::Uint),
        Type::Double => Some(Ty::Double),
        Type::Bool => Some(Ty::Bool),
        _ => None,
    }
}

impl<'a> Lowerer<'a> {
    fn checked_type(&self, e: &Expr) -> &'a Type {
        self.checked.types.get(&e.id).unwrap_or(&Type::Dyn)
    }

    fn local(&self, name: &str) -> Option<Local> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, l)| l.clone())
    }

    fn no_err(&mut self, expr: ExprId) -> Value {
        self.b.inst1(Op::NoErr, vec![], Ty::Err, expr)
    }

    fn err_or_none(&mut self, err: Option<Value>, expr: ExprId) -> Value {
        match err {
            Some(e) => e,
            None => self.no_err(expr),
        }
    }

    fn charge(&mut self, n: u64, expr: ExprId) {
        if n > 0 {
            self.b.inst0(Op::Charge(n), vec![], expr);
        }
    }

    /// Charges `n` if `err` is not an error (unconditionally if there is no error value).
    fn charge_if_ok(&mut self, n: u64, err: Option<Value>, expr: ExprId) {
        if n == 0 {
            return;
        }
        match err {
            None => self.charge(n, expr),
            Some(e) => self.b.inst0(Op::ChargeIfOk(n), vec![e], expr),
        }
    }

    /// Whether an operand's value may be an optional at run time (its checked type is an
    /// optional, `dyn` or a type parameter), which puts the step after it in an optional
    /// chain.
    fn may_be_optional(&self, operand: &Expr) -> bool {
        let t = self.checked_type(operand);
        t.optional_elem().is_some() || t.is_dyn_or_error() || matches!(t, Type::TypeParam(_))
    }

    /// Charges a step's qualifier by `cel_interp::ops::qualifier_charged`'s rule, given the
    /// operand and the step's result.
    fn charge_qualifier(
        &mut self,
        n: u64,
        optional: bool,
        operand: Lv,
        result: Value,
        result_err: Value,
        expr: ExprId,
    ) {
        if n == 0 {
            return;
        }
        let operand_err = self.err_or_none(operand.err, expr);
        self.b.inst0(
            Op::ChargeQualifier { cost: n, optional },
            vec![operand.v, operand_err, result, result_err],
            expr,
        );
    }

    /// A value as a reference to a runtime value.
    fn as_val(&mut self, lv: Lv, expr: ExprId) -> Lv {
        match self.b.ty(lv.v) {
            Ty::Val => lv,
            _ => Lv {
                v: self.b.inst1(Op::Box, vec![lv.v], Ty::Val, expr),
                err: lv.err,
            },
        }
    }

    /// A value as a scalar of type `ty`: values of another type are "no such overload",
    /// attached to `expr`. An error already present wins.
    fn as_scalar(&mut self, lv: Lv, ty: Ty, expr: ExprId) -> Lv {
        let have = self.b.ty(lv.v);
        if have == ty {
            return lv;
        }
        let v = if have == Ty::Val {
            lv.v
        } else {
            self.b.inst1(Op::Box, vec![lv.v], Ty::Val, expr)
        };
        let (s, e) = self.b.inst2(Op::Unbox(ty), vec![v], ty, expr);
        let err = self.first_err(lv.err, Some(e), expr);
        Lv { v: s, err }
    }

    /// The first of two possible errors.
    fn first_err(&mut self, a: Option<Value>, b: Option<Value>, expr: ExprId) -> Option<Value> {
        match (a, b) {
            (None, x) | (x, None) => x,
            (Some(a), Some(b)) => Some(self.b.inst1(Op::ErrOr, vec![a, b], Ty::Err, expr)),
        }
    }

    /// Lowers `e`; the walk recurses with the expression's depth, so each level runs under the
    /// stack guard (a deep expression grows the stack on the heap instead of overflowing it).
    fn lower(&mut self, e: &'a Expr) -> Lv {
        cel_syntax::stack::guarded(|| self.lower_node(e))
    }

    fn lower_node(&mut self, e: &'a Expr) -> Lv {
        if self.b.inst_count() > self.budget {
            // Over budget: the function is discarded; stop doing work for it.
            self.b.stop_tracking();
            let ty = scalar_ty(self.checked_type(e)).unwrap_or(Ty::Val);
            let v = self.dummy(ty, e.id);
            return Lv { v, err: None };
        }
        if self.residual_roots.contains(&e.id) {
            let (v, err) = self.b.inst2(Op::Residual(e.id), vec![], Ty::Val, e.id);
            return Lv { v, err: Some(err) };
        }
        if self.costs.is_constant(e.id) {
            return self.lower_constant(e);
        }
        match &e.kind {
            ExprKind::Error => {
                let (v, err) = self.b.inst2(Op::Residual(e.id), vec![], Ty::Val, e.id);
                Lv { v, err: Some(err) }
            }
            ExprKind::Literal(lit) => self.lower_literal(lit, e.id),
            ExprKind::Ident(name) => self.lower_ident(e, name),
            ExprKind::Select(s) => {
                let operand = self.lower(&s.operand);
                let operand = self.as_val(operand, e.id);
                let (qual, root) = self.step_cost(e.id);
                let object = matches!(self.checked_type(&s.operand), Type::Message(_));
                let op = if s.test_only {
                    Op::Has {
                        field: s.field.as_str().into(),
                        object,
                    }
                } else {
                    Op::Select {
                        field: s.field.as_str().into(),
                        object,
                    }
                };
                let ty = if s.test_only { Ty::Bool } else { Ty::Val };
                let (v, err) = self.b.inst2(op, vec![operand.v], ty, e.id);
                // The qualifier is charged only when the operand resolved (and, in an optional
                // chain, only when the field was found); the step always.
                if s.test_only || !self.may_be_optional(&s.operand) {
                    self.charge_if_ok(qual, operand.err, e.id);
                } else {
                    self.charge_qualifier(qual, false, operand, v, err, e.id);
                }
                self.charge(root, e.id);
                Lv {
                    v,
                    err: self.first_err(operand.err, Some(err), e.id),
                }
            }
            ExprKind::Call(call) => self.lower_call(e, call),
            ExprKind::List(list) => self.lower_list(e, list),
            ExprKind::Map(map) => self.lower_map(e, map),
            ExprKind::Struct(s) => self.lower_struct(e, s),
            ExprKind::Comprehension(c) => self.lower_fold(e, c),
        }
    }

    fn step_cost(&self, id: ExprId) -> (u64, u64) {
        match self.costs.charge(id) {
            Charge::Attribute { qualifier, root } => (*qualifier, *root),
            Charge::Presence {
                qualifier,
                presence,
            } => (*qualifier, *presence),
            _ => (0, 0),
        }
    }

    fn root_cost(&self, id: ExprId) -> u64 {
        match self.costs.charge(id) {
            Charge::Attribute { root, .. } => *root,
            _ => 0,
        }
    }

    fn literal_cost(&self, id: ExprId) -> u64 {
        match self.costs.charge(id) {
            Charge::Literal(c) => *c,
            _ => 0,
        }
    }

    fn lower_literal(&mut self, lit: &Literal, id: ExprId) -> Lv {
        let v = match lit {
            Literal::Int(i) => self.b.inst1(Op::IntConst(*i), vec![], Ty::Int, id),
            Literal::Uint(u) => self.b.inst1(Op::UintConst(*u), vec![], Ty::Uint, id),
            Literal::Double(d) => self.b.inst1(Op::DoubleConst(*d), vec![], Ty::Double, id),
            Literal::Bool(b) => self.b.inst1(Op::BoolConst(*b), vec![], Ty::Bool, id),
            other => {
                let k = self.b.constant(Constant::Literal(other.clone()));
                self.b.inst1(Op::ValConst(k), vec![], Ty::Val, id)
            }
        };
        Lv { v, err: None }
    }

    /// A subtree folded before evaluation (type names, enum constants, `OptOptimize`).
    fn lower_constant(&mut self, e: &Expr) -> Lv {
        match &e.kind {
            ExprKind::Literal(lit) => self.lower_literal(lit, e.id),
            _ => {
                let k = self.b.constant(Constant::Folded(e.id));
                let v = self.b.inst1(Op::ValConst(k), vec![], Ty::Val, e.id);
                Lv { v, err: None }
            }
        }
    }

    fn lower_ident(&mut self, e: &Expr, name: &str) -> Lv {
        let cost = self.root_cost(e.id);
        if !name.starts_with('.')
            && let Some(local) = self.local(name)
        {
            let lv = self.read_local(local, e.id);
            self.charge(cost, e.id);
            return lv;
        }
        let resolved: Arc<str> = self
            .checked
            .references
            .get(&e.id)
            .map(|r| r.name.as_str())
            .unwrap_or(name)
            .into();
        let (v, err) = self.b.inst2(Op::LoadVar(resolved), vec![], Ty::Val, e.id);
        self.charge(cost, e.id);
        Lv { v, err: Some(err) }
    }

    fn read_local(&mut self, local: Local, id: ExprId) -> Lv {
        match local {
            Local::Iter(v) => Lv { v, err: None },
            Local::Accu {
                value,
                err,
                lazy,
                deferred,
            } => {
                if let Some((flag, cost)) = deferred {
                    let charged = self.b.inst1(Op::LocalGet(flag), vec![], Ty::Bool, id);
                    self.b.inst0(Op::ChargeUnless(cost), vec![charged], id);
                    let t = self.b.inst1(Op::BoolConst(true), vec![], Ty::Bool, id);
                    self.b.inst0(Op::LocalSet(flag), vec![t], id);
                }
                if let Some((flag, init)) = lazy
                    && !self.initialised_here(flag)
                {
                    // Initialise on first read, as cel-go does. The initialiser is emitted
                    // once on each path: a read that a completed initialisation dominates
                    // reads the slot directly, so code grows linearly with the bindings.
                    let ready = self.b.create_block();
                    let init_block = self.b.create_block();
                    let f = self.b.inst1(Op::LocalGet(flag), vec![], Ty::Bool, id);
                    self.b.branch(f, (ready, vec![]), (init_block, vec![]));
                    self.b.switch_to(init_block);
                    let init_expr = self.exprs[&init];
                    let acc_ty = self.b_local_ty(value);
                    let lv = self.lower(init_expr);
                    let mut lv = self.coerce(lv, acc_ty, id);
                    if acc_ty == Ty::Val {
                        // Steps may update the accumulator in place: it must not share its
                        // storage with the value it started from.
                        lv.v = self.b.inst1(Op::Own, vec![lv.v], Ty::Val, id);
                    }
                    let e = self.err_or_none(lv.err, id);
                    self.b.inst0(Op::LocalSet(value), vec![lv.v], id);
                    self.b.inst0(Op::LocalSet(err), vec![e], id);
                    let t = self.b.inst1(Op::BoolConst(true), vec![], Ty::Bool, id);
                    self.b.inst0(Op::LocalSet(flag), vec![t], id);
                    self.b.jump(ready, vec![]);
                    self.b.switch_to(ready);
                    self.lazy_ready.entry(flag).or_default().push(ready);
                }
                let ty = self.b_local_ty(value);
                let v = self.b.inst1(Op::LocalGet(value), vec![], ty, id);
                let e = self.b.inst1(Op::LocalGet(err), vec![], Ty::Err, id);
                Lv { v, err: Some(e) }
            }
        }
    }

    /// Whether the lazily initialised slot guarded by `flag` was initialised on every path
    /// to the current block.
    fn initialised_here(&self, flag: u32) -> bool {
        let here = self.b.current();
        self.lazy_ready
            .get(&flag)
            .is_some_and(|blocks| blocks.iter().any(|r| self.b.dominates(*r, here)))
    }

    fn b_local_ty(&self, slot: u32) -> Ty {
        self.b.locals()[slot as usize]
    }

    /// Converts to a representation: `Val` boxes, scalars unbox (with a type check).
    fn coerce(&mut self, lv: Lv, ty: Ty, expr: ExprId) -> Lv {
        match ty {
            Ty::Val => self.as_val(lv, expr),
            t => self.as_scalar(lv, t, expr),
        }
    }

    fn lower_call(&mut self, e: &'a Expr, call: &'a cel_syntax::Call) -> Lv {
        let f = call.function.as_str();
        if call.target.is_none() {
            match (f, call.args.as_slice()) {
                (operators::LOGICAL_AND, [l, r]) => return self.lower_logical(e, l, r, true),
                (operators::LOGICAL_OR, [l, r]) => return self.lower_logical(e, l, r, false),
                (operators::CONDITIONAL, [c, t, o]) => return self.lower_conditional(e, c, t, o),
                (operators::NOT_STRICTLY_FALSE | operators::OLD_NOT_STRICTLY_FALSE, [a]) => {
                    let lv = self.lower(a);
                    let err = self.err_or_none(lv.err, e.id);
                    let v = self
                        .b
                        .inst1(Op::NotStrictlyFalse, vec![lv.v, err], Ty::Bool, e.id);
                    self.charge_call_fixed(e, f, &[lv], Lv { v, err: None });
                    return Lv { v, err: None };
                }
                (operators::INDEX | operators::OPT_INDEX, [o, i]) => {
                    return self.lower_index(e, o, i, f == operators::OPT_INDEX);
                }
                (operators::OPT_SELECT, [o, field]) => {
                    if let ExprKind::Literal(Literal::String(name)) = &field.kind {
                        let operand = self.lower(o);
                        let operand = self.as_val(operand, e.id);
                        let (qual, root) = self.step_cost(e.id);
                        let (v, err) = self.b.inst2(
                            Op::OptSelect {
                                field: name.as_str().into(),
                            },
                            vec![operand.v],
                            Ty::Val,
                            e.id,
                        );
                        self.charge_qualifier(qual, true, operand, v, err, e.id);
                        self.charge(root, e.id);
                        return Lv {
                            v,
                            err: self.first_err(operand.err, Some(err), e.id),
                        };
                    }
                }
                _ => {}
            }
        }
        if call.target.is_none()
            && matches!(f, operators::EQUALS | operators::NOT_EQUALS)
            && let [l, r] = call.args.as_slice()
            && let Some((pieces, steps)) = self.concat_chain(l)
        {
            return self.lower_concat_compare(e, f == operators::NOT_EQUALS, &pieces, steps, r);
        }
        if f == operators::ADD
            && let Some((pieces, steps)) = self.concat_chain(e)
            && steps.len() >= 2
        {
            return self.lower_concat_build(e, &pieces, steps);
        }
        if let Some(t) = &call.target
            && let [arg] = call.args.as_slice()
            && matches!(self.costs.charge(e.id), Charge::Free)
            && matches!(f, "or" | "orValue")
        {
            return self.lower_opt_or(e, t, arg, f == "orValue");
        }
        if let Charge::SetMembership = self.costs.charge(e.id)
            && let [elem, list] = call.args.as_slice()
            && let ExprKind::List(l) = &list.kind
        {
            let lv = self.lower(elem);
            let lv = self.as_val(lv, e.id);
            let set = l
                .elements
                .iter()
                .filter_map(|x| match &x.kind {
                    ExprKind::Literal(lit) => Some(self.b.constant(Constant::Literal(lit.clone()))),
                    _ => None,
                })
                .collect();
            let v = self.b.inst1(Op::InSet(set), vec![lv.v], Ty::Bool, e.id);
            return Lv { v, err: lv.err };
        }

        // A strict call. Arguments: receiver first.
        let args: Vec<&'a Expr> = call
            .target
            .iter()
            .map(|t| &**t)
            .chain(call.args.iter())
            .collect();
        let overloads: Vec<Arc<str>> = self
            .checked
            .references
            .get(&e.id)
            .map(|r| {
                r.overload_ids
                    .iter()
                    .map(|o| Arc::from(o.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        let dynamic = args.iter().any(|a| self.checked_type(a).is_dynamic());
        if args.len() <= 2 {
            // Every argument is evaluated before errors are looked at; the call is charged.
            let lvs: Vec<Lv> = args.iter().map(|a| self.lower(a)).collect();
            let mut err = None;
            for lv in &lvs {
                err = self.first_err(err, lv.err, e.id);
            }
            match err {
                None => {
                    let r = self.apply(e, call, &args, &lvs, &overloads, dynamic);
                    self.charge_call(e, f, &overloads, &lvs, r);
                    r
                }
                Some(err) => {
                    // Only call when no argument failed.
                    let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, e.id);
                    let call_block = self.b.create_block();
                    let fail_block = self.b.create_block();
                    let join = self.b.create_block();
                    let result_ty = self.result_ty(e, call, &args, &overloads, dynamic);
                    let jv = self.b.add_param(join, result_ty);
                    let je = self.b.add_param(join, Ty::Err);
                    self.b
                        .branch(any, (fail_block, vec![]), (call_block, vec![]));
                    self.b.switch_to(call_block);
                    let r = self.apply(e, call, &args, &lvs, &overloads, dynamic);
                    let r = self.coerce(r, result_ty, e.id);
                    let re = self.err_or_none(r.err, e.id);
                    self.b.jump(join, vec![r.v, re]);
                    self.b.switch_to(fail_block);
                    let dummy = self.dummy(result_ty, e.id);
                    self.b.jump(join, vec![dummy, err]);
                    self.b.switch_to(join);
                    let r = Lv {
                        v: jv,
                        err: Some(je),
                    };
                    self.charge_call(e, f, &overloads, &lvs, r);
                    r
                }
            }
        } else {
            // Longer calls stop at the first failed argument and are then not charged.
            let exit = self.b.create_block();
            let xv = self.b.add_param(exit, Ty::Val);
            let xe = self.b.add_param(exit, Ty::Err);
            let mut lvs = Vec::with_capacity(args.len());
            for a in &args {
                let lv = self.lower(a);
                if let Some(err) = lv.err {
                    let ok = self.b.create_block();
                    let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, e.id);
                    let dummy = self.dummy(Ty::Val, e.id);
                    self.b.branch(any, (exit, vec![dummy, err]), (ok, vec![]));
                    self.b.switch_to(ok);
                }
                lvs.push(Lv { v: lv.v, err: None });
            }
            let r = self.apply(e, call, &args, &lvs, &overloads, dynamic);
            let r = self.as_val(r, e.id);
            self.charge_call(e, f, &overloads, &lvs, r);
            let re = self.err_or_none(r.err, e.id);
            self.b.jump(exit, vec![r.v, re]);
            self.b.switch_to(exit);
            Lv {
                v: xv,
                err: Some(xe),
            }
        }
    }

    /// Whether `e` is a `+` the checker resolved to string concatenation alone, evaluated
    /// (not folded, not left to the interpreter) and charged as a call.
    fn is_string_concat(&self, e: &Expr) -> bool {
        let ExprKind::Call(c) = &e.kind else {
            return false;
        };
        c.target.is_none()
            && c.function == operators::ADD
            && c.args.len() == 2
            && !self.residual_roots.contains(&e.id)
            && !self.costs.is_constant(e.id)
            && matches!(self.costs.charge(e.id), Charge::Call { .. })
            && self
                .checked
                .references
                .get(&e.id)
                .is_some_and(|r| r.overload_ids.len() == 1 && r.overload_ids[0] == ov::ADD_STRING)
    }

    /// The pieces of a left-associated chain of string concatenations, `((a + b) + c)`, and
    /// its `+` calls from the innermost; `None` for anything else.
    fn concat_chain(&self, e: &'a Expr) -> Option<(Vec<&'a Expr>, Vec<ExprId>)> {
        let mut steps = Vec::new();
        let mut rights = Vec::new();
        let mut node = e;
        while self.is_string_concat(node) {
            let ExprKind::Call(c) = &node.kind else {
                break;
            };
            steps.push(node.id);
            rights.push(&c.args[1]);
            node = &c.args[0];
        }
        if steps.is_empty() {
            return None;
        }
        steps.reverse();
        rights.reverse();
        let mut pieces = vec![node];
        pieces.extend(rights);
        Some((pieces, steps))
    }

    /// `chain == other` (or `!=`) as one [`Op::ConcatCompare`]: the pieces and the other
    /// operand are evaluated in the order the calls would evaluate them; the op makes the
    /// calls' and the comparison's results and charges.
    fn lower_concat_compare(
        &mut self,
        e: &Expr,
        negate: bool,
        pieces: &[&'a Expr],
        steps: Vec<ExprId>,
        other: &'a Expr,
    ) -> Lv {
        let operands: Vec<&'a Expr> = pieces.iter().copied().chain([other]).collect();
        let args = self.lower_operand_pairs(&operands, e.id);
        let (v, err) = self
            .b
            .inst2(Op::ConcatCompare { negate, steps }, args, Ty::Bool, e.id);
        Lv { v, err: Some(err) }
    }

    /// A chain of two or more string concatenations (not compared) as one
    /// [`Op::ConcatBuild`], which builds the string once instead of once per `+`: the pieces
    /// are evaluated in the order the calls would evaluate them; the op makes the calls'
    /// results and charges.
    fn lower_concat_build(&mut self, e: &Expr, pieces: &[&'a Expr], steps: Vec<ExprId>) -> Lv {
        let args = self.lower_operand_pairs(pieces, e.id);
        let (v, err) = self.b.inst2(Op::ConcatBuild { steps }, args, Ty::Val, e.id);
        Lv { v, err: Some(err) }
    }

    /// Each operand lowered, in order, as a value and its error (`noerr` when it cannot
    /// fail): the arguments of the concatenation ops.
    fn lower_operand_pairs(&mut self, operands: &[&'a Expr], expr: ExprId) -> Vec<Value> {
        let mut args = Vec::with_capacity(2 * operands.len());
        for operand in operands {
            let lv = self.lower(operand);
            let lv = self.as_val(lv, expr);
            args.push(lv.v);
            args.push(self.err_or_none(lv.err, expr));
        }
        args
    }

    /// A value of a type to pass along an error path (never used).
    fn dummy(&mut self, ty: Ty, expr: ExprId) -> Value {
        match ty {
            Ty::Int => self.b.inst1(Op::IntConst(0), vec![], Ty::Int, expr),
            Ty::Uint => self.b.inst1(Op::UintConst(0), vec![], Ty::Uint, expr),
            Ty::Double => self.b.inst1(Op::DoubleConst(0.0), vec![], Ty::Double, expr),
            Ty::Bool => self.b.inst1(Op::BoolConst(false), vec![], Ty::Bool, expr),
            Ty::Err => self.no_err(expr),
            Ty::Index => self.b.inst1(Op::IntConst(0), vec![], Ty::Index, expr),
            Ty::Val => {
                let k = self.b.constant(Constant::Literal(Literal::Null));
                self.b.inst1(Op::ValConst(k), vec![], Ty::Val, expr)
            }
        }
    }

    /// The representation `apply` produces for a call.
    fn result_ty(
        &self,
        e: &Expr,
        call: &cel_syntax::Call,
        args: &[&Expr],
        overloads: &[Arc<str>],
        dynamic: bool,
    ) -> Ty {
        if let Some((_, ty)) = inline_op(&call.function, args.len(), overloads, dynamic, |i| {
            scalar_ty(self.checked_type(args[i]))
        }) {
            return ty;
        }
        let f = call.function.as_str();
        if args.len() == 2
            && (matches!(f, operators::EQUALS | operators::NOT_EQUALS)
                || (relation(f).is_some() && overloads.iter().all(|o| is_ordering_overload(o)))
                || (f == "matches"
                    && matches!(&args[1].kind, ExprKind::Literal(Literal::String(_)))))
        {
            return Ty::Bool;
        }
        if self.is_size(e, overloads) {
            return Ty::Int;
        }
        Ty::Val
    }

    /// Performs a call whose arguments are all values: inline for scalar arithmetic and
    /// comparisons the checker resolved to one overload, otherwise through the runtime.
    fn apply(
        &mut self,
        e: &Expr,
        call: &cel_syntax::Call,
        args: &[&Expr],
        lvs: &[Lv],
        overloads: &[Arc<str>],
        dynamic: bool,
    ) -> Lv {
        if let Some((op, ty)) = inline_op(&call.function, args.len(), overloads, dynamic, |i| {
            scalar_ty(self.checked_type(args[i]))
        }) {
            let operand_ty = match &op {
                Op::IntArith(_) | Op::IntNeg => Ty::Int,
                Op::UintArith(_) => Ty::Uint,
                Op::DoubleArith(_) | Op::DoubleNeg | Op::DoubleCmp(_) => Ty::Double,
                Op::Not => Ty::Bool,
                Op::ScalarCmp(_) => scalar_ty(self.checked_type(args[0])).unwrap_or(Ty::Int),
                _ => Ty::Val,
            };
            let mut vals = Vec::with_capacity(lvs.len());
            let mut err = None;
            for lv in lvs {
                let s = self.as_scalar(*lv, operand_ty, e.id);
                err = self.first_err(err, s.err, e.id);
                vals.push(s.v);
            }
            let fallible = matches!(
                op,
                Op::IntArith(_) | Op::UintArith(_) | Op::IntNeg | Op::DoubleCmp(_)
            );
            return match err {
                // Arguments of the wrong runtime type: "no such overload", as the runtime
                // function would say.
                Some(err) => {
                    let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, e.id);
                    let ok_block = self.b.create_block();
                    let join = self.b.create_block();
                    let jv = self.b.add_param(join, ty);
                    let je = self.b.add_param(join, Ty::Err);
                    let dummy = self.dummy(ty, e.id);
                    self.b
                        .branch(any, (join, vec![dummy, err]), (ok_block, vec![]));
                    self.b.switch_to(ok_block);
                    let (v, ve) = if fallible {
                        let (v, ve) = self.b.inst2(op, vals, ty, e.id);
                        (v, ve)
                    } else {
                        let v = self.b.inst1(op, vals, ty, e.id);
                        (v, self.no_err(e.id))
                    };
                    self.b.jump(join, vec![v, ve]);
                    self.b.switch_to(join);
                    Lv {
                        v: jv,
                        err: Some(je),
                    }
                }
                None if fallible => {
                    let (v, ve) = self.b.inst2(op, vals, ty, e.id);
                    Lv { v, err: Some(ve) }
                }
                None => Lv {
                    v: self.b.inst1(op, vals, ty, e.id),
                    err: None,
                },
            };
        }
        // Equality never fails and compares across types. Two genuinely scalar operands of
        // one type (computed inline, or literals) compare inline.
        if matches!(
            call.function.as_str(),
            operators::EQUALS | operators::NOT_EQUALS
        ) && lvs.len() == 2
        {
            let (ta, tb) = (self.b.ty(lvs[0].v), self.b.ty(lvs[1].v));
            if ta == tb && matches!(ta, Ty::Int | Ty::Uint | Ty::Bool | Ty::Double) {
                let op = if call.function == operators::EQUALS {
                    CmpOp::Eq
                } else {
                    CmpOp::Ne
                };
                let v = self
                    .b
                    .inst1(Op::ScalarCmp(op), vec![lvs[0].v, lvs[1].v], Ty::Bool, e.id);
                return Lv { v, err: None };
            }
            let a = self.as_val(lvs[0], e.id);
            let b = self.as_val(lvs[1], e.id);
            let v = self.b.inst1(
                Op::ValEq {
                    negate: call.function == operators::NOT_EQUALS,
                },
                vec![a.v, b.v],
                Ty::Bool,
                e.id,
            );
            return Lv { v, err: None };
        }
        if let Some(cmp) = relation(&call.function)
            && lvs.len() == 2
            && overloads.iter().all(|o| is_ordering_overload(o))
        {
            let a = self.as_val(lvs[0], e.id);
            let b = self.as_val(lvs[1], e.id);
            let op = Op::ValCmp {
                op: cmp,
                function: call.function.as_str().into(),
                overloads: overloads.to_vec(),
                dynamic,
            };
            let (v, err) = self.b.inst2(op, vec![a.v, b.v], Ty::Bool, e.id);
            return Lv { v, err: Some(err) };
        }
        if call.function == "matches"
            && lvs.len() == 2
            && let ExprKind::Literal(Literal::String(pattern)) = &args[1].kind
        {
            let s = self.as_val(lvs[0], e.id);
            let (v, err) = self.b.inst2(
                Op::MatchesConst {
                    pattern: pattern.as_str().into(),
                },
                vec![s.v],
                Ty::Bool,
                e.id,
            );
            return Lv { v, err: Some(err) };
        }
        let vals: Vec<Value> = lvs.iter().map(|lv| self.as_val(*lv, e.id).v).collect();
        // `size` gives an `int` every time it succeeds: held as one, so that what follows
        // (`== 0`, `> n`) compares scalars inline and nothing is boxed.
        let ty = if self.is_size(e, overloads) {
            Ty::Int
        } else {
            Ty::Val
        };
        let (v, err) = self.b.inst2(
            Op::Call {
                function: call.function.as_str().into(),
                overloads: overloads.to_vec(),
                member: call.target.is_some(),
                dynamic,
            },
            vals,
            ty,
            e.id,
        );
        Lv { v, err: Some(err) }
    }

    /// Whether a call is `size` on a standard type with one argument: every overload it may
    /// run (those the checker resolved; for a dynamic argument, every `size` of the
    /// environment, which the checker then typed `int` only when they all return one) gives
    /// an `int`.
    fn is_size(&self, e: &Expr, overloads: &[Arc<str>]) -> bool {
        const SIZES: &[&str] = &[
            ov::SIZE_BYTES,
            ov::SIZE_LIST,
            ov::SIZE_MAP,
            ov::SIZE_STRING,
            ov::BYTES_SIZE,
            ov::LIST_SIZE,
            ov::MAP_SIZE,
            ov::STRING_SIZE,
        ];
        let args = |c: &cel_syntax::Call| c.args.len() + usize::from(c.target.is_some());
        matches!(&e.kind, ExprKind::Call(c) if c.function == "size" && args(c) == 1)
            && !overloads.is_empty()
            && overloads.iter().all(|o| SIZES.contains(&o.as_ref()))
            && matches!(self.checked_type(e), Type::Int)
    }

    /// Charges a call's cost: a constant for overloads whose cost does not depend on
    /// sizes (the backend adds hooks where the environment has them), else computed from
    /// the arguments and the result.
    fn charge_call(
        &mut self,
        e: &Expr,
        function: &str,
        overloads: &[Arc<str>],
        lvs: &[Lv],
        result: Lv,
    ) {
        self.charge_call_appending(e, function, overloads, lvs, result, false);
    }

    /// [`Self::charge_call`] that says whether the call is a comprehension's append (see
    /// [`Op::ChargeCall`]).
    fn charge_call_appending(
        &mut self,
        e: &Expr,
        function: &str,
        overloads: &[Arc<str>],
        lvs: &[Lv],
        result: Lv,
        appends: bool,
    ) {
        let overload: Arc<str> = match self.costs.charge(e.id) {
            Charge::Call { overload, .. } => overload.as_str().into(),
            _ => match overloads {
                [only] => only.clone(),
                _ => "".into(),
            },
        };
        // Operands are passed as they are (scalars unboxed): the backend boxes them only
        // when the cost actually depends on them.
        let mut args = Vec::with_capacity(lvs.len() * 2 + 2);
        for lv in lvs.iter().chain(std::iter::once(&result)) {
            let err = self.err_or_none(lv.err, e.id);
            args.push(lv.v);
            args.push(err);
        }
        let first_arg = match &e.kind {
            ExprKind::Call(c) => c.target.as_deref().or(c.args.first()).map(|a| a.id),
            _ => None,
        };
        self.b.inst0(
            Op::ChargeCall {
                function: function.into(),
                overload,
                first_arg,
                appends,
            },
            args,
            e.id,
        );
    }

    /// Charges a call whose cost is fixed by its overload (here `@not_strictly_false`).
    fn charge_call_fixed(&mut self, e: &Expr, function: &str, lvs: &[Lv], result: Lv) {
        let overloads: Vec<Arc<str>> = Vec::new();
        self.charge_call(e, function, &overloads, lvs, result);
    }

    fn lower_logical(&mut self, e: &'a Expr, l: &'a Expr, r: &'a Expr, is_and: bool) -> Lv {
        let id = e.id;
        let lv = self.lower(l);
        let lb = self.as_scalar(lv, Ty::Bool, id);
        let l_err = self.err_or_none(lb.err, id);
        // Short circuit: `false && _` is false, `true || _` is true (without error).
        let short = self.b.create_block();
        let rhs = self.b.create_block();
        let join = self.b.create_block();
        let jv = self.b.add_param(join, Ty::Bool);
        let je = self.b.add_param(join, Ty::Err);
        let is_err = self.b.inst1(Op::IsErr, vec![l_err], Ty::Bool, id);
        // decides = !is_err && (l == !is_and)
        let target = self.b.inst1(Op::BoolConst(!is_and), vec![], Ty::Bool, id);
        let eq = self
            .b
            .inst1(Op::ScalarCmp(CmpOp::Eq), vec![lb.v, target], Ty::Bool, id);
        let ok = self.b.inst1(Op::Not, vec![is_err], Ty::Bool, id);
        let decides = self.b.inst1(Op::BoolAnd, vec![ok, eq], Ty::Bool, id);
        self.b.branch(decides, (short, vec![]), (rhs, vec![]));
        self.b.switch_to(short);
        let none = self.no_err(id);
        self.b.jump(join, vec![target, none]);
        self.b.switch_to(rhs);
        let rv = self.lower(r);
        let rb = self.as_scalar(rv, Ty::Bool, id);
        let r_err = self.err_or_none(rb.err, id);
        let op = if is_and {
            Op::LogicalAnd
        } else {
            Op::LogicalOr
        };
        let (v, err) = self
            .b
            .inst2(op, vec![lb.v, l_err, rb.v, r_err], Ty::Bool, id);
        self.b.jump(join, vec![v, err]);
        self.b.switch_to(join);
        Lv {
            v: jv,
            err: Some(je),
        }
    }

    fn lower_conditional(&mut self, e: &'a Expr, c: &'a Expr, t: &'a Expr, o: &'a Expr) -> Lv {
        let id = e.id;
        let cv = self.lower(c);
        // An error condition is the result; a non-bool one is "no such overload".
        let cb = self.as_scalar(cv, Ty::Bool, id);
        let ty = match (
            scalar_ty(self.checked_type(t)),
            scalar_ty(self.checked_type(o)),
        ) {
            (Some(a), Some(b)) if a == b => a,
            _ => Ty::Val,
        };
        let join = self.b.create_block();
        let jv = self.b.add_param(join, ty);
        let je = self.b.add_param(join, Ty::Err);
        if let Some(err) = cb.err {
            let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, id);
            let go = self.b.create_block();
            let dummy = self.dummy(ty, id);
            self.b.branch(any, (join, vec![dummy, err]), (go, vec![]));
            self.b.switch_to(go);
        }
        let then_b = self.b.create_block();
        let else_b = self.b.create_block();
        self.b.branch(cb.v, (then_b, vec![]), (else_b, vec![]));
        for (block, branch) in [(then_b, t), (else_b, o)] {
            self.b.switch_to(block);
            let lv = self.lower(branch);
            let lv = self.coerce(lv, ty, id);
            let err = self.err_or_none(lv.err, id);
            self.b.jump(join, vec![lv.v, err]);
        }
        self.b.switch_to(join);
        Lv {
            v: jv,
            err: Some(je),
        }
    }

    fn lower_opt_or(&mut self, e: &'a Expr, target: &'a Expr, arg: &'a Expr, or_value: bool) -> Lv {
        let id = e.id;
        let tv = self.lower(target);
        let tv = self.as_val(tv, id);
        let join = self.b.create_block();
        let jv = self.b.add_param(join, Ty::Val);
        let je = self.b.add_param(join, Ty::Err);
        if let Some(err) = tv.err {
            let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, id);
            let go = self.b.create_block();
            self.b.branch(any, (join, vec![tv.v, err]), (go, vec![]));
            self.b.switch_to(go);
        }
        let (has, herr) = self.b.inst2(Op::OptHasValue, vec![tv.v], Ty::Bool, id);
        let not_opt = self.b.inst1(Op::IsErr, vec![herr], Ty::Bool, id);
        let check = self.b.create_block();
        // Before cel-go v0.28 a receiver that is not an optional is the result as it is.
        let not_opt_err = if self.older.optional_or_takes_any_receiver {
            self.no_err(id)
        } else {
            herr
        };
        self.b
            .branch(not_opt, (join, vec![tv.v, not_opt_err]), (check, vec![]));
        self.b.switch_to(check);
        let present = self.b.create_block();
        let absent = self.b.create_block();
        self.b.branch(has, (present, vec![]), (absent, vec![]));
        self.b.switch_to(present);
        let out = if or_value {
            self.b.inst1(Op::OptValue, vec![tv.v], Ty::Val, id)
        } else {
            tv.v
        };
        let none = self.no_err(id);
        self.b.jump(join, vec![out, none]);
        self.b.switch_to(absent);
        let av = self.lower(arg);
        let av = self.as_val(av, id);
        let aerr = self.err_or_none(av.err, id);
        // The right-hand side is the result as it is (cel-go's `evalOptionalOr`).
        self.b.jump(join, vec![av.v, aerr]);
        self.b.switch_to(join);
        Lv {
            v: jv,
            err: Some(je),
        }
    }

    fn lower_index(
        &mut self,
        e: &'a Expr,
        operand: &'a Expr,
        index: &'a Expr,
        optional: bool,
    ) -> Lv {
        let id = e.id;
        let (qual, root) = self.step_cost(id);
        let ov = self.lower(operand);
        let ov = self.as_val(ov, id);
        let join = self.b.create_block();
        let jv = self.b.add_param(join, Ty::Val);
        let je = self.b.add_param(join, Ty::Err);
        if let Some(err) = ov.err {
            // A failed operand: the index is not evaluated, only the step is charged.
            let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, id);
            let go = self.b.create_block();
            let fail = self.b.create_block();
            self.b.branch(any, (fail, vec![]), (go, vec![]));
            self.b.switch_to(fail);
            self.charge(root, id);
            self.b.jump(join, vec![ov.v, err]);
            self.b.switch_to(go);
        }
        let iv = self.lower(index);
        let iv = self.as_val(iv, id);
        let op = if optional { Op::OptIndex } else { Op::Index };
        let (v, err) = self.b.inst2(op, vec![ov.v, iv.v], Ty::Val, id);
        let err = match iv.err {
            Some(ie) => self.b.inst1(Op::ErrOr, vec![ie, err], Ty::Err, id),
            None => err,
        };
        // The operand resolved here; in an optional chain the qualifier is charged only when
        // the element or entry was found.
        if optional || self.may_be_optional(operand) {
            let resolved = Lv { v: ov.v, err: None };
            self.charge_qualifier(qual, optional, resolved, v, err, id);
        } else {
            self.charge(qual, id);
        }
        self.charge(root, id);
        self.b.jump(join, vec![v, err]);
        self.b.switch_to(join);
        Lv {
            v: jv,
            err: Some(je),
        }
    }

    /// Branches to `exit` with `(value, err)` when `err` is an error; continues otherwise.
    fn exit_on_err(
        &mut self,
        err: Option<Value>,
        value: Value,
        exit: crate::ir::Block,
        id: ExprId,
    ) {
        if let Some(err) = err {
            let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, id);
            let ok = self.b.create_block();
            self.b.branch(any, (exit, vec![value, err]), (ok, vec![]));
            self.b.switch_to(ok);
        }
    }

    /// An aggregate literal (list, map, message): `build` lowers its parts, branching to the
    /// exit block it is given on the first error, and returns the (value, error) pair that
    /// ends it well. The literal is charged at the exit, after its parts, even when one
    /// failed.
    fn lower_aggregate(
        &mut self,
        id: ExprId,
        build: impl FnOnce(&mut Self, crate::ir::Block) -> (Value, Value),
    ) -> Lv {
        let cost = self.literal_cost(id);
        let exit = self.b.create_block();
        let xv = self.b.add_param(exit, Ty::Val);
        let xe = self.b.add_param(exit, Ty::Err);
        let (v, err) = build(self, exit);
        self.b.jump(exit, vec![v, err]);
        self.b.switch_to(exit);
        self.charge(cost, id);
        Lv {
            v: xv,
            err: Some(xe),
        }
    }

    /// Lowers a part of an aggregate literal as a value, leaving for `exit` if it failed.
    fn lower_part(&mut self, e: &'a Expr, exit: crate::ir::Block, id: ExprId) -> Value {
        let lv = self.lower(e);
        let lv = self.as_val(lv, id);
        self.exit_on_err(lv.err, lv.v, exit, id);
        lv.v
    }

    fn lower_list(&mut self, e: &'a Expr, list: &'a cel_syntax::ListExpr) -> Lv {
        let id = e.id;
        self.lower_aggregate(id, |this, exit| {
            if list.optional_indices.is_empty() && list.elements.len() <= MAX_LIST_OPERANDS {
                // Elements in order, stopping at the first error; then one list.
                let vals = list
                    .elements
                    .iter()
                    .map(|el| this.lower_part(el, exit, id))
                    .collect();
                let v = this.b.inst1(Op::MakeList, vals, Ty::Val, id);
                return (v, this.no_err(id));
            }
            // Built element by element: an optional element is checked as soon as it is
            // evaluated, as the interpreter does, and a long list does not keep every
            // element live at once (register allocation would take quadratic time).
            let mut l = this.b.inst1(Op::MakeList, vec![], Ty::Val, id);
            for (i, el) in list.elements.iter().enumerate() {
                let v = this.lower_part(el, exit, id);
                if list.optional_indices.contains(&i) {
                    let (nl, err) = this.b.inst2(Op::ListPushOpt, vec![l, v], Ty::Val, id);
                    this.exit_on_err(Some(err), nl, exit, id);
                    l = nl;
                } else {
                    l = this.b.inst1(Op::ListAppend, vec![l, v], Ty::Val, id);
                }
            }
            (l, this.no_err(id))
        })
    }

    /// A message literal: field values in order, stopping at the first error; then one
    /// message (which also unwraps `?f` initialisers).
    fn lower_struct(&mut self, e: &'a Expr, s: &'a cel_syntax::StructExpr) -> Lv {
        let id = e.id;
        self.lower_aggregate(id, |this, exit| {
            let vals = s
                .fields
                .iter()
                .map(|f| this.lower_part(&f.value, exit, id))
                .collect();
            let op = Op::MakeStruct {
                type_name: s.type_name.strip_prefix('.').unwrap_or(&s.type_name).into(),
                fields: s
                    .fields
                    .iter()
                    .map(|f| (Arc::from(f.name.as_str()), f.optional))
                    .collect(),
            };
            this.b.inst2(op, vals, Ty::Val, id)
        })
    }

    fn lower_map(&mut self, e: &'a Expr, map: &'a cel_syntax::MapExpr) -> Lv {
        let id = e.id;
        self.lower_aggregate(id, |this, exit| {
            let mut m = this.b.inst1(Op::MapNew, vec![], Ty::Val, id);
            for entry in &map.entries {
                let k = this.lower_part(&entry.key, exit, id);
                let v = this.lower_part(&entry.value, exit, id);
                let op = Op::MapEntry {
                    optional: entry.optional,
                };
                let (nm, err) = this.b.inst2(op, vec![m, k, v], Ty::Val, id);
                this.exit_on_err(Some(err), nm, exit, id);
                m = nm;
            }
            (m, this.no_err(id))
        })
    }

    fn lower_fold(&mut self, e: &'a Expr, c: &'a Comprehension) -> Lv {
        let id = e.id;
        let range = self.lower(&c.iter_range);
        let range = self.as_val(range, id);
        let done = self.b.create_block();
        let result_ty = scalar_ty(self.checked_type(&c.result)).unwrap_or(Ty::Val);
        let dv = self.b.add_param(done, result_ty);
        let de = self.b.add_param(done, Ty::Err);
        if let Some(err) = range.err {
            let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, id);
            let go = self.b.create_block();
            let dummy = self.dummy(result_ty, id);
            self.b.branch(any, (done, vec![dummy, err]), (go, vec![]));
            self.b.switch_to(go);
        }
        // `cel.bind` iterates over `[]`: no loop at all (its code would be dead).
        let empty_range = matches!(&c.iter_range.kind, ExprKind::List(l) if l.elements.is_empty());
        let n = if empty_range {
            None
        } else {
            let (n, nerr) = self.b.inst2(Op::IterLen, vec![range.v], Ty::Index, id);
            let any = self.b.inst1(Op::IsErr, vec![nerr], Ty::Bool, id);
            let go = self.b.create_block();
            let dummy = self.dummy(result_ty, id);
            self.b.branch(any, (done, vec![dummy, nerr]), (go, vec![]));
            self.b.switch_to(go);
            Some(n)
        };

        // The accumulator lives in local slots; it is initialised lazily unless its
        // initial value is a literal the result always reads.
        let accu_ty = scalar_ty(self.checked_type(&c.accu_init)).unwrap_or(Ty::Val);
        let acc_v = self.b.new_local(accu_ty);
        let acc_e = self.b.new_local(Ty::Err);
        let eager = is_eager_init(c);
        let mut deferred = None;
        let lazy = if eager {
            // An empty list or map accumulator is always a fresh value (even where
            // `OptOptimize` folded the literal): it is updated in place. Its literal's cost
            // is charged when the accumulator is first read.
            let mut defer_cost = |this: &mut Self| {
                let cost = this.literal_cost(c.accu_init.id);
                if cost > 0 {
                    let flag = this.b.new_local(Ty::Bool);
                    let f = this.b.inst1(Op::BoolConst(false), vec![], Ty::Bool, id);
                    this.b.inst0(Op::LocalSet(flag), vec![f], id);
                    deferred = Some((flag, cost));
                }
            };
            let lv = match &c.accu_init.kind {
                ExprKind::List(l) if l.elements.is_empty() => {
                    defer_cost(self);
                    Lv {
                        v: self.b.inst1(Op::MakeList, vec![], Ty::Val, c.accu_init.id),
                        err: None,
                    }
                }
                ExprKind::Map(m) if m.entries.is_empty() => {
                    defer_cost(self);
                    let v = self.b.inst1(Op::MapNew, vec![], Ty::Val, c.accu_init.id);
                    Lv { v, err: None }
                }
                _ => self.lower(&c.accu_init),
            };
            let lv = self.coerce(lv, accu_ty, id);
            let err = self.err_or_none(lv.err, id);
            self.b.inst0(Op::LocalSet(acc_v), vec![lv.v], id);
            self.b.inst0(Op::LocalSet(acc_e), vec![err], id);
            None
        } else {
            let flag = self.b.new_local(Ty::Bool);
            let f = self.b.inst1(Op::BoolConst(false), vec![], Ty::Bool, id);
            self.b.inst0(Op::LocalSet(flag), vec![f], id);
            // Give the slots a defined value before the first read.
            let dummy = self.dummy(accu_ty, id);
            self.b.inst0(Op::LocalSet(acc_v), vec![dummy], id);
            let none = self.no_err(id);
            self.b.inst0(Op::LocalSet(acc_e), vec![none], id);
            Some((flag, c.accu_init.id))
        };
        let accu = Local::Accu {
            value: acc_v,
            err: acc_e,
            lazy,
            deferred,
        };

        if let Some(n) = n {
            let loop_state = LoopAccumulator {
                local: accu.clone(),
                value: acc_v,
                err: acc_e,
                ty: accu_ty,
                flags: [lazy.map(|(f, _)| f), deferred.map(|(f, _)| f)],
            };
            self.lower_loop(c, id, range.v, n, &loop_state);
        }

        // The result, with the accumulator in scope.
        self.scopes.push((c.accu_var.clone(), accu));
        let r = self.lower(&c.result);
        let r = self.coerce(r, result_ty, id);
        self.scopes.pop();
        let rerr = self.err_or_none(r.err, id);
        self.b.jump(done, vec![r.v, rerr]);
        self.b.switch_to(done);
        Lv {
            v: dv,
            err: Some(de),
        }
    }

    /// The loop of a comprehension over `range` (of `n` iterations): header(i) → body →
    /// header(i + 1), or → exit, where it leaves the builder.
    fn lower_loop(
        &mut self,
        c: &'a Comprehension,
        id: ExprId,
        range: Value,
        n: Value,
        accu: &LoopAccumulator,
    ) {
        let zero = self.b.inst1(Op::IntConst(0), vec![], Ty::Index, id);
        let header = self.b.create_block();
        let i = self.b.add_param(header, Ty::Index);
        let body = self.b.create_block();
        let exit = self.b.create_block();
        let preheader = self.b.current();
        self.b.jump(header, vec![zero]);
        self.b.switch_to(header);
        let more = self.b.inst1(Op::IndexLt, vec![i, n], Ty::Bool, id);
        self.b.branch(more, (body, vec![]), (exit, vec![]));

        self.b.switch_to(body);
        self.b.begin_loop_writes();
        let allocating_before = self.b.allocating_count();
        self.scopes.push((c.accu_var.clone(), accu.local.clone()));
        let k = self.b.inst1(
            Op::IterKey {
                two_var: c.iter_var2.is_some(),
            },
            vec![range, i],
            Ty::Val,
            id,
        );
        match &c.iter_var2 {
            Some(v2) => {
                let val = self.b.inst1(Op::IterValue, vec![range, i], Ty::Val, id);
                self.scopes.push((c.iter_var.clone(), Local::Iter(k)));
                self.scopes.push((v2.clone(), Local::Iter(val)));
            }
            None => self.scopes.push((c.iter_var.clone(), Local::Iter(k))),
        }
        // The loop condition: a bool `false` stops the loop; anything else continues.
        let cond = self.lower(&c.loop_condition);
        let stop = match self.b.ty(cond.v) {
            Ty::Bool => {
                let err = self.err_or_none(cond.err, id);
                let ok = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, id);
                let ok = self.b.inst1(Op::Not, vec![ok], Ty::Bool, id);
                let not = self.b.inst1(Op::Not, vec![cond.v], Ty::Bool, id);
                self.b.inst1(Op::BoolAnd, vec![ok, not], Ty::Bool, id)
            }
            _ => {
                // A dynamic value: stop only on a bool false.
                let err = self.err_or_none(cond.err, id);
                let nsf = self
                    .b
                    .inst1(Op::NotStrictlyFalse, vec![cond.v, err], Ty::Bool, id);
                self.b.inst1(Op::Not, vec![nsf], Ty::Bool, id)
            }
        };
        let step_block = self.b.create_block();
        self.b.branch(stop, (exit, vec![]), (step_block, vec![]));
        self.b.switch_to(step_block);
        let step = self.lower_step(&c.loop_step, &c.accu_var, accu.ty);
        let step = self.coerce(step, accu.ty, id);
        let serr = self.err_or_none(step.err, id);
        self.b.inst0(Op::LocalSet(accu.value), vec![step.v], id);
        self.b.inst0(Op::LocalSet(accu.err), vec![serr], id);
        // The step's value replaces the accumulator: its initial value is no longer
        // pending, whether or not the step read it.
        for flag in accu.flags.into_iter().flatten() {
            let t = self.b.inst1(Op::BoolConst(true), vec![], Ty::Bool, id);
            self.b.inst0(Op::LocalSet(flag), vec![t], id);
        }
        self.release_iteration(preheader, allocating_before, id);
        let next = self.b.inst1(Op::IndexInc, vec![i], Ty::Index, id);
        self.b.jump(header, vec![next]);
        self.scopes.pop();
        self.scopes.pop();
        if c.iter_var2.is_some() {
            self.scopes.pop();
        }
        self.b.switch_to(exit);
    }

    /// Ends a loop body entered from `preheader`: if the body may make values, the values
    /// and errors made since the loop began are freed at each back edge, but for those the
    /// local slots written in the body hold (the accumulator, lazily initialised bindings).
    /// So native code's memory does not grow with the number of iterations.
    fn release_iteration(
        &mut self,
        preheader: crate::ir::Block,
        allocating_before: usize,
        id: ExprId,
    ) {
        let written = self.b.end_loop_writes();
        if self.b.allocating_count() == allocating_before {
            return;
        }
        let mark = self
            .b
            .inst_in(preheader, Op::ArenaMark, vec![], &[Ty::Index], id);
        let (vals, errs): (Vec<u32>, Vec<u32>) = written
            .into_iter()
            .partition(|slot| self.b_local_ty(*slot) == Ty::Val);
        self.b.inst0(Op::ArenaRelease { vals, errs }, mark, id);
    }

    /// Lowers a comprehension step, appending to a list or inserting into a map in place for
    /// the shapes of `map`, `filter` and the transforms.
    fn lower_step(&mut self, step: &'a Expr, accu_var: &str, accu_ty: Ty) -> Lv {
        if accu_ty == Ty::Val
            && let Some(lv) = self.lower_accu_update(step, accu_var)
        {
            return lv;
        }
        if accu_ty == Ty::Val
            && let ExprKind::Call(call) = &step.kind
            && call.function == operators::CONDITIONAL
            && call.target.is_none()
            && let [c, t, f] = call.args.as_slice()
            && matches!(&f.kind, ExprKind::Ident(n) if n == accu_var)
            && is_accu_update(t, accu_var)
        {
            let id = step.id;
            let cv = self.lower(c);
            let cb = self.as_scalar(cv, Ty::Bool, id);
            let join = self.b.create_block();
            let jv = self.b.add_param(join, Ty::Val);
            let je = self.b.add_param(join, Ty::Err);
            if let Some(err) = cb.err {
                let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, id);
                let go = self.b.create_block();
                let dummy = self.dummy(Ty::Val, id);
                self.b.branch(any, (join, vec![dummy, err]), (go, vec![]));
                self.b.switch_to(go);
            }
            let then_b = self.b.create_block();
            let else_b = self.b.create_block();
            self.b.branch(cb.v, (then_b, vec![]), (else_b, vec![]));
            self.b.switch_to(then_b);
            let lv = self
                .lower_accu_update(t, accu_var)
                .expect("checked by is_accu_update");
            let e1 = self.err_or_none(lv.err, id);
            self.b.jump(join, vec![lv.v, e1]);
            self.b.switch_to(else_b);
            // The untouched accumulator, read as any other reference to it.
            let lv = self.lower(f);
            let lv = self.as_val(lv, id);
            let e2 = self.err_or_none(lv.err, id);
            self.b.jump(join, vec![lv.v, e2]);
            self.b.switch_to(join);
            return Lv {
                v: jv,
                err: Some(je),
            };
        }
        self.lower(step)
    }

    fn lower_accu_update(&mut self, e: &'a Expr, accu_var: &str) -> Option<Lv> {
        let ExprKind::Call(call) = &e.kind else {
            return None;
        };
        if !is_accu_update(e, accu_var) {
            return None;
        }
        let id = e.id;
        let acc_expr = &call.args[0];
        let acc = self.lower(acc_expr);
        match (call.function.as_str(), call.args.as_slice()) {
            (operators::ADD, [_, rhs]) => {
                let ExprKind::List(list) = &rhs.kind else {
                    return None;
                };
                let elem = self.lower(&list.elements[0]);
                let elem = self.as_val(elem, id);
                self.charge(self.literal_cost(rhs.id), rhs.id);
                // acc + [elem]: both evaluated; the first error wins; charged as `add_list`.
                let err = self.first_err(acc.err, elem.err, id);
                let r = match err {
                    None => Lv {
                        v: self
                            .b
                            .inst1(Op::ListAppend, vec![acc.v, elem.v], Ty::Val, id),
                        err: None,
                    },
                    Some(err) => {
                        let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, id);
                        let ok = self.b.create_block();
                        let join = self.b.create_block();
                        let jv = self.b.add_param(join, Ty::Val);
                        let je = self.b.add_param(join, Ty::Err);
                        self.b.branch(any, (join, vec![acc.v, err]), (ok, vec![]));
                        self.b.switch_to(ok);
                        let v = self
                            .b
                            .inst1(Op::ListAppend, vec![acc.v, elem.v], Ty::Val, id);
                        let none = self.no_err(id);
                        self.b.jump(join, vec![v, none]);
                        self.b.switch_to(join);
                        Lv {
                            v: jv,
                            err: Some(je),
                        }
                    }
                };
                let ovl = self.overloads_of(id);
                // The accumulator a hook sees is the list appended to, as in cel-go, whose
                // list is appended to in place before the call is charged.
                let appended = Lv {
                    v: r.v,
                    err: acc.err,
                };
                self.charge_call_appending(e, operators::ADD, &ovl, &[appended, elem], r, true);
                Some(r)
            }
            ("cel.@mapInsert", [_, k, v]) => {
                // Three arguments: stop at the first failed one, uncharged.
                let exit = self.b.create_block();
                let xv = self.b.add_param(exit, Ty::Val);
                let xe = self.b.add_param(exit, Ty::Err);
                let mut vals = vec![acc.v];
                let mut lvs = vec![Lv {
                    v: acc.v,
                    err: None,
                }];
                if let Some(err) = acc.err {
                    let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, id);
                    let ok = self.b.create_block();
                    self.b.branch(any, (exit, vec![acc.v, err]), (ok, vec![]));
                    self.b.switch_to(ok);
                }
                for part in [k, v] {
                    let lv = self.lower(part);
                    let lv = self.as_val(lv, id);
                    if let Some(err) = lv.err {
                        let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, id);
                        let ok = self.b.create_block();
                        // With the error goes the accumulator's value, never read but stored
                        // in its slot: the slot holds only values the lowering owns, which
                        // the verifier checks of what an update writes in place.
                        self.b.branch(any, (exit, vec![acc.v, err]), (ok, vec![]));
                        self.b.switch_to(ok);
                    }
                    vals.push(lv.v);
                    lvs.push(Lv { v: lv.v, err: None });
                }
                let (r, rerr) = self.b.inst2(Op::MapInsert, vals, Ty::Val, id);
                let ovl = self.overloads_of(id);
                self.charge_call(
                    e,
                    "cel.@mapInsert",
                    &ovl,
                    &lvs,
                    Lv {
                        v: r,
                        err: Some(rerr),
                    },
                );
                self.b.jump(exit, vec![r, rerr]);
                self.b.switch_to(exit);
                Some(Lv {
                    v: xv,
                    err: Some(xe),
                })
            }
            ("cel.@mapInsert", [_, m]) => {
                let mv = self.lower(m);
                let mv = self.as_val(mv, id);
                let err = self.first_err(acc.err, mv.err, id);
                let r = match err {
                    None => {
                        let (r, rerr) = self.b.inst2(Op::MapMerge, vec![acc.v, mv.v], Ty::Val, id);
                        Lv {
                            v: r,
                            err: Some(rerr),
                        }
                    }
                    Some(err) => {
                        let any = self.b.inst1(Op::IsErr, vec![err], Ty::Bool, id);
                        let ok = self.b.create_block();
                        let join = self.b.create_block();
                        let jv = self.b.add_param(join, Ty::Val);
                        let je = self.b.add_param(join, Ty::Err);
                        self.b.branch(any, (join, vec![acc.v, err]), (ok, vec![]));
                        self.b.switch_to(ok);
                        let (r, rerr) = self.b.inst2(Op::MapMerge, vec![acc.v, mv.v], Ty::Val, id);
                        self.b.jump(join, vec![r, rerr]);
                        self.b.switch_to(join);
                        Lv {
                            v: jv,
                            err: Some(je),
                        }
                    }
                };
                let ovl = self.overloads_of(id);
                self.charge_call(e, "cel.@mapInsert", &ovl, &[acc, mv], r);
                Some(r)
            }
            _ => None,
        }
    }

    fn overloads_of(&self, id: ExprId) -> Vec<Arc<str>> {
        self.checked
            .references
            .get(&id)
            .map(|r| {
                r.overload_ids
                    .iter()
                    .map(|o| Arc::from(o.as_str()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Whether an accumulator may be initialised before the loop: its initial value is a
/// literal (or an empty list or map literal) and the result always reads it, so charging
/// and failing cannot differ from cel-go's lazy initialisation.
fn is_eager_init(c: &Comprehension) -> bool {
    let simple_init = match &c.accu_init.kind {
        ExprKind::Literal(_) => true,
        ExprKind::List(l) => l.elements.is_empty(),
        ExprKind::Map(m) => m.entries.is_empty(),
        _ => false,
    };
    let reads_accu = |e: &Expr| matches!(&e.kind, ExprKind::Ident(n) if *n == c.accu_var);
    let result_reads = match &c.result.kind {
        ExprKind::Ident(n) => *n == c.accu_var,
        ExprKind::Call(call) => call.args.first().is_some_and(reads_accu),
        _ => false,
    };
    simple_init && result_reads
}

/// Whether `e` is one of the in-place accumulator updates.
fn is_accu_update(e: &Expr, accu_var: &str) -> bool {
    let ExprKind::Call(call) = &e.kind else {
        return false;
    };
    if call.target.is_some() {
        return false;
    }
    let is_accu = |x: &Expr| matches!(&x.kind, ExprKind::Ident(n) if n == accu_var);
    match (call.function.as_str(), call.args.as_slice()) {
        (operators::ADD, [acc, rhs]) if is_accu(acc) => {
            matches!(&rhs.kind, ExprKind::List(l) if l.elements.len() == 1 && l.optional_indices.is_empty())
        }
        ("cel.@mapInsert", [acc, _]) | ("cel.@mapInsert", [acc, _, _]) => is_accu(acc),
        _ => false,
    }
}

fn relation(function: &str) -> Option<CmpOp> {
    Some(match function {
        operators::LESS => CmpOp::Lt,
        operators::LESS_EQUALS => CmpOp::Le,
        operators::GREATER => CmpOp::Gt,
        operators::GREATER_EQUALS => CmpOp::Ge,
        _ => return None,
    })
}

/// The standard ordering overloads (`less_int64`, `greater_equals_string`, ...), which all
/// mean CEL ordering of their two arguments.
fn is_ordering_overload(id: &str) -> bool {
    ["less_", "greater_"].iter().any(|p| id.starts_with(p))
}

/// The inline operation for a call, if the checker resolved it to exactly one scalar
/// overload and no argument is dynamic: (operation, result type).
fn inline_op(
    function: &str,
    argc: usize,
    overloads: &[Arc<str>],
    dynamic: bool,
    arg_ty: impl Fn(usize) -> Option<Ty>,
) -> Option<(Op, Ty)> {
    if dynamic {
        return None;
    }
    let [only] = overloads else {
        return None;
    };
    let _ = function;
    let arith = |name: &str| match name {
        "add" => Some(ArithOp::Add),
        "subtract" => Some(ArithOp::Sub),
        "multiply" => Some(ArithOp::Mul),
        "divide" => Some(ArithOp::Div),
        "modulo" => Some(ArithOp::Rem),
        _ => None,
    };
    let cmp = |name: &str| match name {
        "less" => Some(CmpOp::Lt),
        "less_equals" => Some(CmpOp::Le),
        "greater" => Some(CmpOp::Gt),
        "greater_equals" => Some(CmpOp::Ge),
        _ => None,
    };
    let id = only.as_ref();
    let r = match id {
        ov::NEGATE_INT64 if argc == 1 => (Op::IntNeg, Ty::Int),
        ov::NEGATE_DOUBLE if argc == 1 => (Op::DoubleNeg, Ty::Double),
        ov::LOGICAL_NOT if argc == 1 => (Op::Not, Ty::Bool),
        _ => {
            let (name, suffix) = id.rsplit_once('_')?;
            match (arith(name), cmp(name), suffix) {
                (Some(op), _, "int64") if argc == 2 => (Op::IntArith(op), Ty::Int),
                (Some(op), _, "uint64") if argc == 2 => (Op::UintArith(op), Ty::Uint),
                (Some(op), _, "double") if argc == 2 && op != ArithOp::Rem => {
                    (Op::DoubleArith(op), Ty::Double)
                }
                (_, Some(c), "int64" | "uint64" | "bool") if argc == 2 => {
                    (Op::ScalarCmp(c), Ty::Bool)
                }
                (_, Some(c), "double") if argc == 2 => (Op::DoubleCmp(c), Ty::Bool),
                _ => return None,
            }
        }
    };
    // Arguments must be statically scalar of the operation's type for the inline form; the
    // values may still come boxed (variables) and are checked when unboxed.
    for i in 0..argc {
        arg_ty(i)?;
    }
    Some(r)
}
