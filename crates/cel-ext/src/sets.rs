//! The sets extension (cel-go's `ext.Sets()`, library `cel.lib.ext.sets`), version 0.
//!
//! | function | signature | example | since |
//! |---|---|---|---|
//! | `sets.contains` | `sets.contains(list(T), list(T)) -> bool` | `sets.contains([1, 2, 3], [3u, 2.0])` → true | 0 |
//! | `sets.equivalent` | `sets.equivalent(list(T), list(T)) -> bool` | `sets.equivalent([1, 1], [1])` → true | 0 |
//! | `sets.intersects` | `sets.intersects(list(T), list(T)) -> bool` | `sets.intersects([1], [])` → false | 0 |
//!
//! Membership uses CEL's run-time equality, so numbers compare across types and nested
//! lists and maps compare by value. `sets.contains(a, [])` is true; `sets.intersects([], [])`
//! is false; `sets.equivalent` ignores order and duplicates.
//!
//! # Costs
//!
//! At run time and in estimates: `sets.contains` and `sets.intersects` cost
//! `1 + |a|·|b|`, `sets.equivalent` `1 + 2·|a|·|b|` ([`sets_cost`], [`sets_estimate`]).

use cel_cost::{CallEstimate, SizeRange};
use cel_runtime::{Error, Implementation, ListValue, Result, Value};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::costs::{actual_size, call_estimate, estimate, nth_size, sum, trunc_factor};
use crate::{Library, LibraryContents};

/// The sets extension library.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sets;

impl Library for Sets {
    fn name(&self) -> &str {
        "cel.lib.ext.sets"
    }

    fn contents(&self) -> LibraryContents {
        let list = || Type::list(Type::param("T"));
        let mut c = LibraryContents::default();
        for (name, id, f, factor) in [
            (
                "sets.contains",
                "list_sets_contains_list",
                contains_value as fn(&Value, &Value) -> Result<Value>,
                1.0,
            ),
            (
                "sets.equivalent",
                "list_sets_equivalent_list",
                equivalent_value,
                2.0,
            ),
            (
                "sets.intersects",
                "list_sets_intersects_list",
                intersects_value,
                1.0,
            ),
        ] {
            c.functions.push(FunctionDecl::new(
                name,
                vec![OverloadDecl::global(id, vec![list(), list()], Type::Bool)],
            ));
            c.implement(id, Implementation::Binary(f));
            c.track(id, move |a, _| {
                let size = |i: usize| a.get(i).map(actual_size).unwrap_or(1);
                Some(sets_cost(size(0), size(1), factor))
            });
            c.estimate(id, move |a| {
                (a.len() == 2).then(|| sets_estimate(nth_size(a, 0), nth_size(a, 1), factor))
            });
        }
        c
    }
}

/// Run-time cost: `1 + trunc(|a|·|b|·factor)`.
pub fn sets_cost(a: u64, b: u64, factor: f64) -> u64 {
    sum(&[1, trunc_factor(a.saturating_mul(b), factor)])
}

/// Estimate: `ceil(|a|·|b|·factor) + 1` per bound.
pub fn sets_estimate(a: SizeRange, b: SizeRange, factor: f64) -> CallEstimate {
    estimate(
        a.multiply(b)
            .multiply_by_factor(factor)
            .add(call_estimate()),
        None,
    )
}

/// Whether every element of `sub` is in `list`.
pub fn contains(list: &ListValue, sub: &ListValue) -> bool {
    sub.iter().all(|e| cel_runtime::compare::in_list(e, list))
}

/// Whether some element of `a` is in `b`.
pub fn intersects(a: &ListValue, b: &ListValue) -> bool {
    a.iter().any(|e| cel_runtime::compare::in_list(e, b))
}

/// Whether each list contains the other.
pub fn equivalent(a: &ListValue, b: &ListValue) -> bool {
    contains(a, b) && contains(b, a)
}

fn lists<'a>(a: &'a Value, b: &'a Value) -> Result<(&'a ListValue, &'a ListValue)> {
    match (a, b) {
        (Value::List(x), Value::List(y)) => Ok((x, y)),
        _ => Err(Error::no_such_overload()),
    }
}

fn contains_value(a: &Value, b: &Value) -> Result<Value> {
    let (a, b) = lists(a, b)?;
    Ok(Value::Bool(contains(a, b)))
}

fn equivalent_value(a: &Value, b: &Value) -> Result<Value> {
    let (a, b) = lists(a, b)?;
    Ok(Value::Bool(equivalent(a, b)))
}

fn intersects_value(a: &Value, b: &Value) -> Result<Value> {
    let (a, b) = lists(a, b)?;
    Ok(Value::Bool(intersects(a, b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(items: Vec<Value>) -> ListValue {
        ListValue::from(items)
    }

    #[test]
    fn semantics() {
        let a = l(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
        assert!(contains(&a, &l(vec![Value::Uint(3), Value::Double(2.0)])));
        assert!(contains(&a, &l(vec![])));
        assert!(!intersects(&l(vec![]), &l(vec![])));
        assert!(equivalent(
            &l(vec![Value::Int(1), Value::Int(1)]),
            &l(vec![Value::Int(1)])
        ));
        let nested = l(vec![
            Value::list(vec![Value::Int(1)]),
            Value::list(vec![Value::Int(2), Value::Int(3)]),
        ]);
        assert!(contains(
            &nested,
            &l(vec![Value::list(vec![Value::Int(2), Value::Double(3.0)])])
        ));
    }

    /// cost-model.md §5.3: literal lists cost 10 each, plus the call.
    #[test]
    fn costs_match_cel_go() {
        assert_eq!(20 + sets_cost(0, 0, 1.0), 21);
        assert_eq!(20 + sets_cost(1, 1, 1.0), 22);
        assert_eq!(20 + sets_cost(4, 2, 1.0), 29);
        // sets.contains([[1], [2, 3]], [[2, 3.0]]): lists 30 + 20.
        assert_eq!(30 + 20 + sets_cost(2, 1, 1.0), 53);
        // sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]]): lists 30 + 30.
        assert_eq!(30 + 30 + sets_cost(2, 2, 1.0), 65);
        assert_eq!(20 + sets_cost(3, 3, 2.0), 39);
        // sets.contains(x, [1, 2, 3]) with x sized [0, 10]: 1 + 10 + [1, 31].
        let e = sets_estimate(SizeRange { min: 0, max: 10 }, SizeRange::exact(3), 1.0);
        assert_eq!((e.cost.min + 11, e.cost.max + 11), (12, 42));
        assert_eq!(1 + 10 + sets_cost(5, 3, 1.0), 27);
    }
}
