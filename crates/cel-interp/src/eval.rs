//! Evaluation of a planned expression.
//!
//! Errors are values: every node returns `Result<Value, Error>`, and `&&`, `||`, `?:`,
//! `@not_strictly_false` and comprehensions decide what to do with an error operand exactly
//! as cel-go does (commutative absorption in the logical operators, the accumulator of a
//! comprehension holding an error and carrying on). Only cost-limit and cancellation errors
//! stop evaluation outright.

use std::sync::{Arc, OnceLock};

use cel_runtime::{Activation, Error, FunctionRegistry, Implementation, MapValue, Result, Value};

use crate::functions::dispatch;
use crate::plan::{Dispatch, Fold, Node, Plan, map_key};

/// A comprehension variable's state.
#[derive(Clone, Debug)]
enum Slot<'p> {
    Empty,
    Ready(Result<Value>),
    /// An accumulator whose initial value has not been needed yet (cel-go initialises it on
    /// first read).
    Lazy(&'p Node),
}

/// Per-evaluation state.
pub(crate) struct State<'p, 'a> {
    activation: &'a dyn Activation,
    slots: Vec<Slot<'p>>,
}

impl Plan {
    /// Evaluates the expression against an activation.
    pub fn eval(&self, activation: &dyn Activation) -> Result<Value> {
        let mut st = State {
            activation,
            slots: vec![Slot::Empty; self.slots],
        };
        eval(&self.root, &mut st)
    }
}

fn std_registry() -> &'static FunctionRegistry {
    static REG: OnceLock<FunctionRegistry> = OnceLock::new();
    REG.get_or_init(FunctionRegistry::standard)
}

fn std_call(id: &str, args: &[Value]) -> Result<Value> {
    match std_registry().get(id) {
        Some(imp) => imp.call(args),
        None => Err(Error::internal(format!("missing built-in {id}"))),
    }
}

/// Whether an error must stop evaluation rather than be absorbed.
fn fatal(r: &Result<Value>) -> bool {
    matches!(r, Err(e) if !e.is_absorbable())
}

fn no_such_overload(id: i64) -> Error {
    Error::no_such_overload().at(id)
}

pub(crate) fn eval<'p>(node: &'p Node, st: &mut State<'p, '_>) -> Result<Value> {
    match node {
        Node::Const(v) => Ok(v.clone()),
        Node::ConstList { value } => Ok(value.clone()),
        Node::Global { id, name } => st
            .activation
            .resolve(name)
            .ok_or_else(|| Error::no_such_attribute(name).at(*id)),
        Node::MaybeGlobal {
            id,
            candidates,
            type_value,
        } => {
            for c in candidates {
                if let Some(v) = st.activation.resolve(c) {
                    return Ok(v);
                }
            }
            match type_value {
                Some(t) => Ok(t.clone()),
                None => Err(Error::no_such_attribute(
                    candidates.last().map(|s| &**s).unwrap_or(""),
                )
                .at(*id)),
            }
        }
        Node::Qualified {
            id,
            candidates,
            type_value,
        } => {
            for (var, rest) in candidates {
                if let Some(mut v) = st.activation.resolve(var) {
                    for field in rest {
                        v = select(&v, field).map_err(|e| e.at(*id))?;
                    }
                    return Ok(v);
                }
            }
            match type_value {
                Some(t) => Ok(t.clone()),
                None => Err(Error::no_such_attribute(
                    candidates.first().map(|(s, _)| &**s).unwrap_or(""),
                )
                .at(*id)),
            }
        }
        Node::Local { slot } => read_slot(*slot, st),
        Node::Select { id, operand, field } => {
            let v = eval(operand, st)?;
            select(&v, field).map_err(|e| e.at(*id))
        }
        Node::Has { id, operand, field } => {
            let v = eval(operand, st)?;
            has_field(&v, field).map_err(|e| e.at(*id))
        }
        Node::OptSelect { id, operand, field } => {
            let v = eval(operand, st)?;
            opt_select(&v, field).map_err(|e| e.at(*id))
        }
        Node::Index { id, operand, index } => {
            let v = eval(operand, st);
            let i = eval(index, st);
            let (v, i) = (v?, i?);
            index_value(&v, &i).map_err(|e| e.at(*id))
        }
        Node::OptIndex { id, operand, index } => {
            let v = eval(operand, st);
            let i = eval(index, st);
            let (v, i) = (v?, i?);
            opt_index(&v, &i).map_err(|e| e.at(*id))
        }
        Node::And { id, lhs, rhs } => {
            let l = eval(lhs, st);
            if fatal(&l) {
                return l;
            }
            if let Ok(Value::Bool(false)) = l {
                return l;
            }
            let r = eval(rhs, st);
            if fatal(&r) {
                return r;
            }
            match (l, r) {
                (_, Ok(Value::Bool(false))) => Ok(Value::Bool(false)),
                (Ok(Value::Bool(true)), Ok(Value::Bool(true))) => Ok(Value::Bool(true)),
                (Err(e), _) => Err(e),
                (Ok(Value::Bool(true)), Err(e)) => Err(e),
                _ => Err(no_such_overload(*id)),
            }
        }
        Node::Or { id, lhs, rhs } => {
            let l = eval(lhs, st);
            if fatal(&l) {
                return l;
            }
            if let Ok(Value::Bool(true)) = l {
                return l;
            }
            let r = eval(rhs, st);
            if fatal(&r) {
                return r;
            }
            match (l, r) {
                (_, Ok(Value::Bool(true))) => Ok(Value::Bool(true)),
                (Ok(Value::Bool(false)), Ok(Value::Bool(false))) => Ok(Value::Bool(false)),
                (Err(e), _) => Err(e),
                (Ok(Value::Bool(false)), Err(e)) => Err(e),
                _ => Err(no_such_overload(*id)),
            }
        }
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
        Node::NotStrictlyFalse { arg } => {
            let r = eval(arg, st);
            if fatal(&r) {
                return r;
            }
            Ok(Value::Bool(!matches!(r, Ok(Value::Bool(false)))))
        }
        Node::OptOr { id, lhs, rhs } => match eval(lhs, st)? {
            Value::Optional(Some(v)) => Ok(Value::Optional(Some(v))),
            Value::Optional(None) => match eval(rhs, st)? {
                v @ Value::Optional(_) => Ok(v),
                _ => Err(no_such_overload(*id)),
            },
            _ => Err(no_such_overload(*id)),
        },
        Node::OptOrValue { id, lhs, rhs } => match eval(lhs, st)? {
            Value::Optional(Some(v)) => Ok((*v).clone()),
            Value::Optional(None) => eval(rhs, st),
            _ => Err(no_such_overload(*id)),
        },
        Node::Call { id, args, dispatch } => eval_call(*id, args, dispatch, st),
        Node::MatchesConst { id, subject, regex } => {
            let s = eval(subject, st)?;
            match (s, regex) {
                (Value::String(s), Ok(re)) => Ok(Value::Bool(re.is_match(&s))),
                (Value::String(_), Err(e)) => Err(e.clone()),
                _ => Err(no_such_overload(*id)),
            }
        }
        Node::List {
            id,
            elements,
            optional,
        } => {
            let mut items = Vec::with_capacity(elements.len());
            for (i, el) in elements.iter().enumerate() {
                let v = eval(el, st)?;
                if optional.get(i).copied().unwrap_or(false) {
                    match v {
                        Value::Optional(Some(inner)) => items.push((*inner).clone()),
                        Value::Optional(None) => {}
                        other => {
                            return Err(Error::new(format!(
                                "cannot initialize optional list element from non-optional value {}",
                                cel_runtime::format::to_cel_literal(&other)
                            ))
                            .at(*id));
                        }
                    }
                } else {
                    items.push(v);
                }
            }
            Ok(Value::list(items))
        }
        Node::Map { id, entries } => {
            let mut m = MapValue::with_capacity(entries.len());
            for (k, v, optional) in entries {
                let k = eval(k, st)?;
                let v = eval(v, st)?;
                let key = map_key(&k).map_err(|e| e.at(*id))?;
                let v = if *optional {
                    match v {
                        Value::Optional(Some(inner)) => (*inner).clone(),
                        Value::Optional(None) => continue,
                        other => {
                            return Err(Error::new(format!(
                                "cannot initialize optional entry '{}' from non-optional value {}",
                                key,
                                cel_runtime::format::to_cel_literal(&other)
                            ))
                            .at(*id));
                        }
                    }
                } else {
                    v
                };
                // cel-go keeps the last of repeated keys rather than failing (see
                // ARCHITECTURE.md, "Where we follow cel-go rather than the spec").
                m.insert(key, v);
            }
            Ok(Value::Map(Arc::new(m)))
        }
        Node::Struct {
            id,
            type_name,
            fields,
        } => {
            let mut values = Vec::with_capacity(fields.len());
            for (name, node, optional) in fields {
                let v = eval(node, st)?;
                if *optional {
                    match v {
                        Value::Optional(Some(inner)) => {
                            values.push((name.clone(), (*inner).clone()))
                        }
                        Value::Optional(None) => {}
                        _ => return Err(no_such_overload(*id)),
                    }
                } else {
                    values.push((name.clone(), v));
                }
            }
            crate::wellknown::construct(type_name, values).map_err(|e| e.at(*id))
        }
        Node::Fold(fold) => eval_fold(fold, st),
        Node::AccuAppend { slot, elem } => {
            let acc = read_slot(*slot, st);
            // Take the accumulator out so that its list is uniquely owned and can grow in place.
            st.slots[*slot] = Slot::Empty;
            let e = eval(elem, st);
            match (acc, e) {
                (Ok(Value::List(mut list)), Ok(e)) => {
                    Arc::make_mut(&mut list).push(e);
                    Ok(Value::List(list))
                }
                (Err(a), _) => Err(a),
                (_, Err(e)) => Err(e),
                (Ok(_), Ok(_)) => Err(Error::no_such_overload()),
            }
        }
        Node::AccuMapInsert {
            id,
            slot,
            key,
            value,
        } => {
            let acc = read_slot(*slot, st);
            // Taken out so that the map is uniquely owned and grows in place.
            st.slots[*slot] = Slot::Empty;
            let k = key.as_ref().map(|k| eval(k, st));
            let v = eval(value, st);
            let mut map = match acc? {
                Value::Map(m) => m,
                _ => return Err(no_such_overload(*id)),
            };
            let m = Arc::make_mut(&mut map);
            match k {
                Some(k) => {
                    let (k, v) = (k?, v?);
                    cel_runtime::compare::map_insert_new(m, &k, v).map_err(|e| e.at(*id))?;
                }
                None => match v? {
                    Value::Map(update) => {
                        for (k, v) in update.iter() {
                            cel_runtime::compare::map_insert_new(m, &k.to_value(), v.clone())
                                .map_err(|e| e.at(*id))?;
                        }
                    }
                    _ => return Err(no_such_overload(*id)),
                },
            }
            Ok(Value::Map(map))
        }
        Node::Fail(e) => Err(e.clone()),
    }
}

fn read_slot<'p>(slot: usize, st: &mut State<'p, '_>) -> Result<Value> {
    match &st.slots[slot] {
        Slot::Ready(r) => r.clone(),
        Slot::Lazy(init) => {
            let init: &'p Node = init;
            let r = eval(init, st);
            st.slots[slot] = Slot::Ready(r.clone());
            r
        }
        Slot::Empty => Err(Error::internal("read of an unset comprehension variable")),
    }
}

fn eval_call<'p>(
    id: i64,
    args: &'p [Node],
    dispatch_kind: &'p Dispatch,
    st: &mut State<'p, '_>,
) -> Result<Value> {
    // Binary and unary calls evaluate every argument before looking at errors; longer
    // argument lists stop at the first error (cel-go's strict call behaviour).
    let values: Vec<Value> = if args.len() <= 2 {
        let results: Vec<Result<Value>> = args.iter().map(|a| eval(a, st)).collect();
        let mut values = Vec::with_capacity(results.len());
        for r in results {
            values.push(r?);
        }
        values
    } else {
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(eval(a, st)?);
        }
        values
    };
    let r = match dispatch_kind {
        Dispatch::Direct(imp) => call_impl(imp, &values),
        Dispatch::Candidates(c) => dispatch(c, &values),
        Dispatch::Unknown(name) => Err(Error::unbound_function(name)),
    };
    r.map_err(|e| e.at(id))
}

#[inline]
fn call_impl(imp: &Implementation, args: &[Value]) -> Result<Value> {
    imp.call(args)
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
        Value::Map(m) => {
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
        other => {
            return Err(Error::new(format!(
                "expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)",
                other.type_name()
            ))
            .at(fold.id));
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

/// `v.field`.
pub(crate) fn select(v: &Value, field: &str) -> Result<Value> {
    match v {
        Value::Map(m) => m
            .get_str(field)
            .cloned()
            .ok_or_else(|| Error::no_such_key(field)),
        Value::Optional(None) => Ok(Value::Optional(None)),
        // Inside an optional chain a missing entry is `none`, but a value that has no
        // fields at all is an error.
        Value::Optional(Some(inner)) => match &**inner {
            Value::Map(_) | Value::Optional(_) => opt_select(inner, field),
            _ => Err(Error::no_such_key(field)),
        },
        other => Err(Error::new(format!(
            "type '{}' does not support field selection",
            other.type_name()
        ))),
    }
}

/// `has(v.field)`.
fn has_field(v: &Value, field: &str) -> Result<Value> {
    match v {
        Value::Map(m) => Ok(Value::Bool(m.get_str(field).is_some())),
        Value::Optional(None) => Ok(Value::Bool(false)),
        Value::Optional(Some(inner)) => has_field(inner, field),
        // cel-go answers false rather than failing for values without fields.
        _ => Ok(Value::Bool(false)),
    }
}

/// `v.?field`.
fn opt_select(v: &Value, field: &str) -> Result<Value> {
    match v {
        Value::Map(m) => Ok(match m.get_str(field) {
            Some(x) => Value::optional_of(x.clone()),
            None => Value::Optional(None),
        }),
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => opt_select(inner, field),
        _ => Ok(Value::Optional(None)),
    }
}

/// `v[i]`.
fn index_value(v: &Value, i: &Value) -> Result<Value> {
    match v {
        Value::List(_) => std_call("index_list", &[v.clone(), i.clone()]),
        Value::Map(_) => std_call("index_map", &[v.clone(), i.clone()]),
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => opt_index(inner, i),
        _ => Err(Error::no_such_overload()),
    }
}

/// `v[?i]`: the element or entry if present, else `optional.none()`.
fn opt_index(v: &Value, i: &Value) -> Result<Value> {
    match v {
        Value::List(items) => {
            let idx = match i {
                Value::Int(n) => Some(*n),
                Value::Uint(u) => i64::try_from(*u).ok(),
                Value::Double(d) if d.fract() == 0.0 && d.is_finite() => Some(*d as i64),
                _ => return Err(Error::no_such_overload()),
            };
            Ok(idx
                .and_then(|n| usize::try_from(n).ok())
                .and_then(|n| items.get(n))
                .map(|x| Value::optional_of(x.clone()))
                .unwrap_or(Value::Optional(None)))
        }
        Value::Map(m) => match m.get(i) {
            Ok(Some(x)) => Ok(Value::optional_of(x.clone())),
            Ok(None) => Ok(Value::Optional(None)),
            Err(()) => Err(Error::new("unsupported key type")),
        },
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => opt_index(inner, i),
        _ => Err(Error::no_such_overload()),
    }
}
