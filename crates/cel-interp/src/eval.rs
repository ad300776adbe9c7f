//! Evaluation of a planned expression, with cel-go's run-time cost accounting.
//!
//! Errors are values: every node returns `Result<Value, Error>`, and `&&`, `||`, `?:`,
//! `@not_strictly_false` and comprehensions decide what to do with an error operand exactly
//! as cel-go does (commutative absorption in the logical operators, the accumulator of a
//! comprehension holding an error and carrying on). Only cost-limit and cancellation errors
//! stop evaluation outright.
//!
//! Every node charges its cost when it has been evaluated, in the order cel-go's observer
//! sees them; after each charge the running total is compared with the limit, and exceeding
//! it stops evaluation with the total reached (including the step that crossed the limit).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cel_runtime::{Activation, Error, MapValue, Result, Value};

use crate::functions::dispatch;
use crate::ops::{
    self, call_cost, has_field, index_value, map_insert, opt_index, opt_select, select,
};
use crate::plan::{CallCost, Dispatch, Fold, MAX_BLOCK_EVAL_DEPTH, Node, Plan, StepCost};

/// A comprehension variable's state.
#[derive(Clone, Debug)]
enum Slot<'p> {
    Empty,
    Ready(Result<Value>),
    /// An accumulator whose initial value has not been needed yet (cel-go initialises it on
    /// first read).
    Lazy(&'p Node),
    /// A block subexpression not read yet (evaluated on first read), with its AST depth.
    Pending(&'p Node, u32),
    /// A block subexpression being evaluated: reading it again (from within itself) finds
    /// nothing, as in cel-go.
    Evaluating,
}

/// Per-evaluation state.
pub(crate) struct State<'p, 'a> {
    activation: &'a dyn Activation,
    slots: Vec<Slot<'p>>,
    /// The depth the block subexpressions being evaluated add to the recursion (see
    /// [`MAX_BLOCK_EVAL_DEPTH`]).
    block_depth: u32,
    cost: u64,
    limit: u64,
    /// Set by the host to stop the evaluation; read at each comprehension iteration.
    interrupt: Option<&'a AtomicBool>,
}

impl State<'_, '_> {
    /// Fails when the host has interrupted the evaluation.
    #[inline]
    fn check_interrupt(&self) -> Result<()> {
        match self.interrupt {
            Some(flag) if flag.load(Ordering::Relaxed) => Err(Error::interrupted()),
            _ => Ok(()),
        }
    }

    /// Adds to the running cost; fails once it exceeds the limit.
    #[inline]
    fn charge(&mut self, n: u64) -> Result<()> {
        self.cost = self.cost.saturating_add(n);
        if self.cost > self.limit {
            return Err(Error::cost_limit_exceeded());
        }
        Ok(())
    }
}

/// The outcome of one evaluation: the value or error, and the cost reached.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// The value, or the error the expression evaluated to.
    pub result: Result<Value>,
    /// The run-time cost, in cel-go's units; for a failed evaluation, the cost reached when
    /// it failed.
    pub cost: u64,
}

impl Plan {
    /// Evaluates the expression against an activation, without a cost limit.
    pub fn eval(&self, activation: &dyn Activation) -> Result<Value> {
        self.eval_with_limit(activation, None).result
    }

    /// Evaluates with an optional cost limit, reporting the cost.
    pub fn eval_with_limit(&self, activation: &dyn Activation, limit: Option<u64>) -> Evaluation {
        self.eval_interruptible(activation, limit, None)
    }

    /// [`Plan::eval_with_limit`] that stops with "operation interrupted" at the next
    /// comprehension iteration once `interrupt` is set (by another thread, say).
    pub fn eval_interruptible(
        &self,
        activation: &dyn Activation,
        limit: Option<u64>,
        interrupt: Option<&AtomicBool>,
    ) -> Evaluation {
        let _allowance = cel_runtime::limits::BuildAllowance::enter();
        let mut st = State {
            activation,
            slots: vec![Slot::Empty; self.slots],
            block_depth: 0,
            cost: 0,
            limit: limit.unwrap_or(u64::MAX),
            interrupt,
        };
        let result = eval(&self.root, &mut st);
        Evaluation {
            result,
            cost: st.cost,
        }
    }
}

/// Whether a result must stop evaluation rather than be absorbed.
#[inline]
fn fatal(r: &Result<Value>) -> bool {
    matches!(r, Err(e) if !e.is_absorbable())
}

fn no_such_overload(id: i64) -> Error {
    Error::no_such_overload().at(id)
}

/// Charges a step's qualifier (when its operand resolved) and then its root, keeping the
/// step's result.
#[inline]
fn finish_step(
    st: &mut State<'_, '_>,
    cost: StepCost,
    qualified: bool,
    r: Result<Value>,
) -> Result<Value> {
    if qualified {
        st.charge(cost.qualifier)?;
    }
    st.charge(cost.root)?;
    r
}

/// Which kind of qualifier a step applies, for [`ops::qualifier_charged`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Qualify {
    /// `.f`, `[i]`: charged unless the chain is in optional mode.
    Plain,
    /// `.?f`, `[?i]`: charged only when something was found.
    Optional,
    /// `has(.f)`: always charged.
    Presence,
}

impl Qualify {
    #[inline]
    fn charged(self, operand: &Value, r: &Result<Value>) -> bool {
        match self {
            Qualify::Presence => true,
            q => ops::qualifier_charged(q == Qualify::Optional, operand, r.as_ref().ok()),
        }
    }
}

/// A field step (`.f`, `has(.f)`, `.?f`): the operand, then `op` on it, charged as an
/// attribute step (the qualifier only when the operand resolved, and in an optional chain
/// only when the field was found). Generic, so each use is compiled with its operation
/// inline.
#[inline]
fn field_step<'p>(
    st: &mut State<'p, '_>,
    id: i64,
    operand: &'p Node,
    field: &str,
    cost: StepCost,
    kind: Qualify,
    op: impl Fn(&Value, &str) -> Result<Value>,
) -> Result<Value> {
    match eval(operand, st) {
        Ok(v) => {
            let r = op(&v, field).map_err(|e| e.at(id));
            let charged = kind.charged(&v, &r);
            finish_step(st, cost, charged, r)
        }
        Err(e) if !e.is_absorbable() => Err(e),
        Err(e) => finish_step(st, cost, false, Err(e)),
    }
}

/// An index step (`[i]`, `[?i]`): the operand, then the index (not evaluated when the
/// operand failed), then `op`, charged as an attribute step.
#[inline]
fn index_step<'p>(
    st: &mut State<'p, '_>,
    id: i64,
    operand: &'p Node,
    index: &'p Node,
    cost: StepCost,
    kind: Qualify,
    op: impl Fn(&Value, &Value) -> Result<Value>,
) -> Result<Value> {
    match eval(operand, st) {
        Ok(v) => {
            let i = eval(index, st);
            if fatal(&i) {
                return i;
            }
            let r = i.and_then(|i| op(&v, &i).map_err(|e| e.at(id)));
            let charged = kind.charged(&v, &r);
            finish_step(st, cost, charged, r)
        }
        Err(e) if !e.is_absorbable() => Err(e),
        Err(e) => finish_step(st, cost, false, Err(e)),
    }
}

pub(crate) fn eval<'p>(node: &'p Node, st: &mut State<'p, '_>) -> Result<Value> {
    cel_syntax::stack::guarded(|| eval_unguarded(node, st))
}

fn eval_unguarded<'p>(node: &'p Node, st: &mut State<'p, '_>) -> Result<Value> {
    match node {
        Node::Const(v) => Ok(v.clone()),
        Node::ConstList { value, cost } => {
            st.charge(*cost)?;
            Ok(value.clone())
        }
        Node::Global { id, name, cost } => {
            let r = st
                .activation
                .resolve(name)
                .ok_or_else(|| Error::no_such_attribute(name).at(*id));
            st.charge(*cost)?;
            r
        }
        Node::MaybeGlobal {
            id,
            candidates,
            type_value,
            cost,
        } => {
            let found = candidates.iter().find_map(|c| st.activation.resolve(c));
            let r = match (found, type_value) {
                (Some(v), _) => Ok(v),
                (None, Some(t)) => Ok(t.clone()),
                (None, None) => Err(Error::no_such_attribute(
                    candidates.last().map(|s| &**s).unwrap_or(""),
                )
                .at(*id)),
            };
            st.charge(*cost)?;
            r
        }
        Node::Qualified {
            id,
            candidates,
            type_value,
            cost,
        } => {
            let mut result = None;
            for (var, rest) in candidates {
                if let Some(mut v) = st.activation.resolve(var) {
                    let mut r = Ok(());
                    for field in rest {
                        let x = select(&v, field);
                        if ops::qualifier_charged(false, &v, x.as_ref().ok()) {
                            st.charge(cost.qualifier)?;
                        }
                        match x {
                            Ok(x) => v = x,
                            Err(e) => {
                                r = Err(e.at(*id));
                                break;
                            }
                        }
                    }
                    result = Some(r.map(|_| v));
                    break;
                }
            }
            let r = match (result, type_value) {
                (Some(r), _) => r,
                (None, Some(t)) => Ok(t.clone()),
                (None, None) => Err(Error::no_such_attribute(
                    candidates.first().map(|(s, _)| &**s).unwrap_or(""),
                )
                .at(*id)),
            };
            st.charge(cost.root)?;
            r
        }
        Node::Local { slot, cost } => {
            let r = read_slot(*slot, st);
            if fatal(&r) {
                return r;
            }
            st.charge(*cost)?;
            r
        }
        Node::BlockIndex {
            id,
            slot,
            name,
            cost,
        } => {
            let r = read_block_index(*slot, *id, st)
                .unwrap_or_else(|| Err(Error::no_such_attribute(name).at(*id)));
            if fatal(&r) {
                return r;
            }
            st.charge(*cost)?;
            r
        }
        Node::Block { slots, result } => {
            for s in slots {
                st.slots[s.slot] = Slot::Pending(&s.node, s.depth);
            }
            let r = eval(result, st);
            for s in slots {
                st.slots[s.slot] = Slot::Empty;
            }
            r
        }
        Node::Select {
            id,
            operand,
            field,
            cost,
        } => field_step(st, *id, operand, field, *cost, Qualify::Plain, select),
        Node::Has {
            id,
            operand,
            field,
            cost,
        } => field_step(st, *id, operand, field, *cost, Qualify::Presence, has_field),
        Node::OptSelect {
            id,
            operand,
            field,
            cost,
        } => field_step(
            st,
            *id,
            operand,
            field,
            *cost,
            Qualify::Optional,
            opt_select,
        ),
        Node::Index {
            id,
            operand,
            index,
            cost,
        } => index_step(st, *id, operand, index, *cost, Qualify::Plain, index_value),
        Node::OptIndex {
            id,
            operand,
            index,
            cost,
        } => index_step(st, *id, operand, index, *cost, Qualify::Optional, opt_index),
        Node::And { id, lhs, rhs } => eval_logical(*id, lhs, rhs, false, st),
        Node::Or { id, lhs, rhs } => eval_logical(*id, lhs, rhs, true, st),
        Node::Conditional {
            id,
            cond,
            then,
            otherwise,
        } => match eval(cond, st)? {
            Value::Bool(true) => eval(then, st),
            Value::Bool(false) => eval(otherwise, st),
            _ => Err(no_such_overload(*id)),
        },
        Node::NotStrictlyFalse { arg, cost } => {
            let r = eval(arg, st);
            if fatal(&r) {
                return r;
            }
            let out = Value::Bool(!matches!(r, Ok(Value::Bool(false))));
            let arg_value = r.unwrap_or(Value::Null);
            let c = call_cost(cost, std::slice::from_ref(&arg_value), &Ok(out.clone()));
            st.charge(c)?;
            Ok(out)
        }
        // cel-go returns the right-hand side as it is (`evalOptionalOr`).
        Node::OptOr {
            id,
            lhs,
            rhs,
            lenient,
        } => match eval(lhs, st)? {
            v @ Value::Optional(Some(_)) => Ok(v),
            Value::Optional(None) => eval(rhs, st),
            v if *lenient => Ok(v),
            _ => Err(no_such_overload(*id)),
        },
        Node::OptOrValue {
            id,
            lhs,
            rhs,
            lenient,
        } => match &eval(lhs, st)? {
            Value::Optional(Some(v)) => Ok((**v).clone()),
            Value::Optional(None) => eval(rhs, st),
            v if *lenient => Ok(v.clone()),
            _ => Err(no_such_overload(*id)),
        },
        Node::Call {
            id,
            args,
            dispatch,
            cost,
        } => eval_call(*id, args, dispatch, cost, st),
        Node::MatchesConst {
            id,
            subject,
            pattern,
            regex,
            cost,
        } => {
            // A binary call: charged even when its subject failed (the subject then counts
            // as null), as `eval_call` charges every unary and binary call.
            let s = eval(subject, st);
            if fatal(&s) {
                return s;
            }
            let r = match (&s, regex) {
                (Err(e), _) => Err(e.clone()),
                (Ok(Value::String(s)), Ok(re)) => Ok(Value::Bool(re.is_match(s))),
                (Ok(Value::String(_)), Err(e)) => Err(e.clone()),
                _ => Err(no_such_overload(*id)),
            };
            let subject_value = s.unwrap_or(Value::Null);
            let c = call_cost(cost, &[subject_value, pattern.clone()], &r);
            st.charge(c)?;
            r
        }
        Node::InSet { id, elem, set } => {
            let v = eval(elem, st)?;
            let _ = id;
            Ok(Value::Bool(
                set.iter().any(|s| cel_runtime::compare::equals(&v, s)),
            ))
        }
        Node::List {
            id,
            elements,
            optional,
            cost,
        } => {
            let r = eval_list(*id, elements, optional, st);
            if fatal(&r) {
                return r;
            }
            st.charge(*cost)?;
            r
        }
        Node::Map { id, entries, cost } => {
            let r = eval_map(*id, entries, st);
            if fatal(&r) {
                return r;
            }
            st.charge(*cost)?;
            r
        }
        Node::Struct {
            id,
            type_name,
            message,
            builds_map,
            fields,
            cost,
        } => {
            let r = eval_struct(*id, type_name, message.as_ref(), *builds_map, fields, st);
            if fatal(&r) {
                return r;
            }
            st.charge(*cost)?;
            r
        }
        Node::Fold(fold) => eval_fold(fold, st),
        Node::AccuAppend {
            slot,
            accu_cost,
            elem,
            list_cost,
            add_cost,
        } => {
            let acc = take_accumulator(*slot, *accu_cost, st)?;
            let e = eval(elem, st);
            if fatal(&e) {
                return e;
            }
            st.charge(*list_cost)?;
            // A host's hook on `_+_` prices the append as it would the call, seeing `[e]` (a
            // failed operand as null) and, below, the accumulator appended to, as in cel-go,
            // which appends in place before it charges.
            let listed = add_cost.has_hooks().then(|| match &e {
                Ok(x) => (Value::from(vec![x.clone()]), None),
                // Nothing is appended: the hook sees the accumulator as it is.
                Err(_) => (Value::Null, acc.as_ref().ok().cloned()),
            });
            // The cost of `acc + [e]` as cel-go computes it: sizes of both operands.
            let acc_size = match &acc {
                Ok(Value::List(l)) => l.len() as u64,
                _ => 1,
            };
            let r = match (acc, e) {
                (Ok(mut acc), Ok(e)) => match &mut acc {
                    Value::List(list) => {
                        Arc::make_mut(list).push(e);
                        Ok(acc)
                    }
                    _ => Err(Error::no_such_overload()),
                },
                (Err(a), _) => Err(a),
                (_, Err(e)) => Err(e),
            };
            // Without a hook, the built-in cost of `add_list` (fixed anyway), whose formula was
            // resolved from the overload id when the plan was made.
            let c = match listed {
                Some((listed, unchanged)) => {
                    let appended = match &r {
                        Ok(appended) => appended.clone(),
                        Err(_) => unchanged.unwrap_or(Value::Null),
                    };
                    add_cost.compute(&[appended, listed], &r)
                }
                None => {
                    let sizes = [acc_size, 1];
                    add_cost
                        .formula
                        .eval(|i| sizes.get(i).copied().unwrap_or(1))
                }
            };
            st.charge(c)?;
            r
        }
        Node::AccuMapInsert {
            id,
            slot,
            accu_cost,
            key,
            value,
            cost,
        } => {
            let acc = take_accumulator(*slot, *accu_cost, st)?;
            let (k, v) = match key {
                // `cel.@mapInsert(acc, k, v)` takes three arguments: it stops at the first
                // failed one, and is then not charged.
                Some(key) => {
                    let acc_ok = acc.clone()?;
                    let k = eval(key, st)?;
                    let v = eval(value, st)?;
                    let _ = acc_ok;
                    (Some(k), Ok(v))
                }
                // `cel.@mapInsert(acc, m)` is binary: both are evaluated, the call charged.
                None => {
                    let v = eval(value, st);
                    if fatal(&v) {
                        return v;
                    }
                    (None, v)
                }
            };
            let r = map_insert(*id, acc, k, v);
            let c = match cost.fixed {
                Some(c) => c,
                None => cost.formula.eval(|_| 1),
            };
            st.charge(c)?;
            r
        }
        Node::Fail(e) => Err(e.clone()),
    }
}

fn eval_list<'p>(
    id: i64,
    elements: &'p [Node],
    optional: &[bool],
    st: &mut State<'p, '_>,
) -> Result<Value> {
    let mut items = Vec::with_capacity(elements.len());
    for (i, el) in elements.iter().enumerate() {
        let v = eval(el, st)?;
        ops::list_element(&mut items, v, optional.get(i).copied().unwrap_or(false), id)?;
    }
    Ok(Value::list(items))
}

fn eval_map<'p>(
    id: i64,
    entries: &'p [(Node, Node, bool)],
    st: &mut State<'p, '_>,
) -> Result<Value> {
    let mut m = MapValue::with_capacity(entries.len());
    for (k, v, optional) in entries {
        let k = eval(k, st)?;
        let v = eval(v, st)?;
        ops::map_entry(&mut m, &k, v, *optional, id)?;
    }
    Ok(Value::Map(Arc::new(m)))
}

/// `lhs && rhs` (`decisive` false) or `lhs || rhs` (`decisive` true), with CEL's
/// commutative error absorption: the decisive value wins over an error on either side; an
/// error wins over the other value; anything but a bool is "no such overload".
fn eval_logical<'p>(
    id: i64,
    lhs: &'p Node,
    rhs: &'p Node,
    decisive: bool,
    st: &mut State<'p, '_>,
) -> Result<Value> {
    let l = eval(lhs, st);
    if fatal(&l) || matches!(l, Ok(Value::Bool(b)) if b == decisive) {
        return l;
    }
    let r = eval(rhs, st);
    if fatal(&r) {
        return r;
    }
    match (l, r) {
        (_, Ok(Value::Bool(b))) if b == decisive => Ok(Value::Bool(decisive)),
        (Ok(Value::Bool(_)), Ok(Value::Bool(_))) => Ok(Value::Bool(!decisive)),
        (Err(e), _) => Err(e),
        (Ok(Value::Bool(_)), Err(e)) => Err(e),
        _ => Err(no_such_overload(id)),
    }
}

fn eval_struct<'p>(
    id: i64,
    type_name: &str,
    message: Option<&cel_runtime::proto::MessageDescriptor>,
    builds_map: bool,
    fields: &'p [(Arc<str>, Node, bool)],
    st: &mut State<'p, '_>,
) -> Result<Value> {
    // Field values in order, stopping at the first error.
    let mut values = Vec::with_capacity(fields.len());
    for (name, node, optional) in fields {
        let v = eval(node, st)?;
        crate::ops::struct_field(&mut values, name, *optional, v).map_err(|e| e.at(id))?;
    }
    crate::ops::make_struct(type_name, message, builds_map, values).map_err(|e| e.at(id))
}

/// Reads an accumulator for an in-place update (`acc + [e]`, `cel.@mapInsert`): charged as a
/// read, then taken out of its slot so that its list or map is uniquely owned and grows in
/// place. The outer error stops the evaluation (a fatal error, the cost limit).
fn take_accumulator(slot: usize, cost: u64, st: &mut State<'_, '_>) -> Result<Result<Value>> {
    let acc = read_slot(slot, st);
    if fatal(&acc) {
        return acc.map(Ok);
    }
    st.charge(cost)?;
    st.slots[slot] = Slot::Empty;
    Ok(acc)
}

fn read_slot<'p>(slot: usize, st: &mut State<'p, '_>) -> Result<Value> {
    match &st.slots[slot] {
        Slot::Ready(r) => r.clone(),
        Slot::Lazy(init) => {
            let init: &'p Node = init;
            let r = eval(init, st);
            if fatal(&r) {
                return r;
            }
            st.slots[slot] = Slot::Ready(r.clone());
            r
        }
        Slot::Empty | Slot::Pending(..) | Slot::Evaluating => {
            Err(Error::internal("read of an unset comprehension variable"))
        }
    }
}

/// Reads a block subexpression's slot, evaluating the subexpression on the first read.
/// `None` when the subexpression is being evaluated (it refers to itself): cel-go then finds
/// no such variable. A first read that would nest subexpressions deeper than
/// [`MAX_BLOCK_EVAL_DEPTH`] fails (at `id`, the reading identifier) and leaves the
/// subexpression unevaluated.
fn read_block_index<'p>(slot: usize, id: i64, st: &mut State<'p, '_>) -> Option<Result<Value>> {
    match &st.slots[slot] {
        Slot::Ready(r) => Some(r.clone()),
        Slot::Pending(node, depth) => {
            let node: &'p Node = node;
            let weight = depth.saturating_add(1);
            let nested = st.block_depth.saturating_add(weight);
            if nested > MAX_BLOCK_EVAL_DEPTH {
                return Some(Err(Error::new(format!(
                    "cel.@block subexpressions nested too deeply (evaluation depth over \
                     {MAX_BLOCK_EVAL_DEPTH})"
                ))
                .at(id)));
            }
            st.slots[slot] = Slot::Evaluating;
            st.block_depth = nested;
            let r = eval(node, st);
            st.block_depth -= weight;
            if !fatal(&r) {
                st.slots[slot] = Slot::Ready(r.clone());
            }
            Some(r)
        }
        Slot::Evaluating => None,
        Slot::Empty | Slot::Lazy(_) => Some(Err(Error::internal(
            "read of a block index outside its block",
        ))),
    }
}

fn eval_call<'p>(
    id: i64,
    args: &'p [Node],
    dispatch_kind: &'p Dispatch,
    cost: &CallCost,
    st: &mut State<'p, '_>,
) -> Result<Value> {
    // Unary and binary calls evaluate every argument before looking at errors and are always
    // charged; longer argument lists stop at the first error, and such a call is not
    // charged (cel-go's strict call behaviour and its cost tracker).
    let mut values: Vec<Value> = Vec::with_capacity(args.len());
    let mut first_error: Option<Error> = None;
    for a in args {
        match eval(a, st) {
            Ok(v) => values.push(v),
            Err(e) if !e.is_absorbable() => return Err(e),
            Err(e) => {
                if args.len() > 2 {
                    return Err(e);
                }
                values.push(Value::Null);
                if first_error.is_none() {
                    first_error = Some(e);
                }
            }
        }
    }
    // A call that can build a large value is charged before it runs when a limit is set, so
    // that the limit stops it before it allocates (with the cost and error it would have
    // reached afterwards).
    if first_error.is_none()
        && st.limit != u64::MAX
        && let Some(pre) = cost.precharge(&values, st.limit.saturating_sub(st.cost))
    {
        st.cost = st.cost.saturating_add(pre);
        return Err(Error::cost_limit_exceeded());
    }
    let r = match first_error {
        Some(e) => Err(e),
        None => match dispatch_kind {
            Dispatch::Direct(imp, maps) => imp.call_taking(*maps, &values),
            Dispatch::Candidates(c) => dispatch(c, &values),
            Dispatch::Unknown(name) => Err(Error::unbound_function(name)),
        }
        .map_err(|e| e.at(id)),
    };
    let c = call_cost(cost, &values, &r);
    st.charge(c)?;
    r
}

fn eval_fold<'p>(fold: &'p Fold, st: &mut State<'p, '_>) -> Result<Value> {
    let range = eval(&fold.range, st)?;
    st.slots[fold.accu_slot] = Slot::Lazy(&fold.init);
    match &range {
        Value::List(items) => {
            for (i, item) in items.iter().enumerate() {
                match fold.iter2_slot {
                    Some(s2) => {
                        st.slots[fold.iter_slot] = Slot::Ready(Ok(Value::Int(i as i64)));
                        st.slots[s2] = Slot::Ready(Ok(item.clone()));
                    }
                    None => st.slots[fold.iter_slot] = Slot::Ready(Ok(item.clone())),
                }
                if !fold_step(fold, st)? {
                    break;
                }
            }
        }
        // Maps, and opaque values standing for maps with fixed entries.
        r if let Some(m) = r.map_entries() => {
            for (k, v) in m.iter() {
                st.slots[fold.iter_slot] = Slot::Ready(Ok(k.to_value()));
                if let Some(s2) = fold.iter2_slot {
                    st.slots[s2] = Slot::Ready(Ok(v.clone()));
                }
                if !fold_step(fold, st)? {
                    break;
                }
            }
        }
        // A schema-typed object (through `dyn`) ranges over its present fields' names.
        Value::Object(o) => {
            for (f, v) in o.present() {
                st.slots[fold.iter_slot] = Slot::Ready(Ok(Value::String(f.name.clone())));
                if let Some(s2) = fold.iter2_slot {
                    st.slots[s2] = Slot::Ready(Ok(v.clone()));
                }
                if !fold_step(fold, st)? {
                    break;
                }
            }
        }
        other => {
            return Err(Error::not_iterable(other).at(fold.id));
        }
    }
    let r = eval(&fold.result, st);
    st.slots[fold.iter_slot] = Slot::Empty;
    if let Some(s2) = fold.iter2_slot {
        st.slots[s2] = Slot::Empty;
    }
    st.slots[fold.accu_slot] = Slot::Empty;
    r
}

/// One iteration: the loop condition, then the step. `Ok(false)` stops the loop.
fn fold_step<'p>(fold: &'p Fold, st: &mut State<'p, '_>) -> Result<bool> {
    st.check_interrupt().map_err(|e| e.at(fold.id))?;
    let c = eval(&fold.cond, st);
    if let Err(e) = &c
        && !e.is_absorbable()
    {
        return Err(e.clone());
    }
    if let Ok(Value::Bool(false)) = c {
        return Ok(false);
    }
    let s = eval(&fold.step, st);
    if let Err(e) = &s
        && !e.is_absorbable()
    {
        return Err(e.clone());
    }
    st.slots[fold.accu_slot] = Slot::Ready(s);
    Ok(true)
}
