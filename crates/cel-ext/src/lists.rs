//! The lists extension (cel-go's `ext.Lists()`, library `cel.lib.ext.lists`).
//!
//! [`Lists::version`] chooses the version; the default is the newest, 3 (what Kubernetes
//! 1.34 and later use).
//!
//! | function | signature | example | since |
//! |---|---|---|---|
//! | `slice` | `list(T).slice(int, int) -> list(T)` | `[1, 2, 3, 4].slice(1, 3)` → `[2, 3]` | 0 |
//! | `flatten` | `list(list(T)).flatten() -> list(T)`, `list.flatten(int) -> list` | `[1, [2, [3]]].flatten(2)` → `[1, 2, 3]` | 1 |
//! | `sort` | `list(T).sort() -> list(T)`, T comparable | `['b', 'a'].sort()` → `['a', 'b']` | 2 |
//! | `sortBy` | macro: `list(T).sortBy(var, keyExpr) -> list(T)` | `[-2, 1].sortBy(x, math.abs(x))` → `[1, -2]` | 2 |
//! | `lists.range` | `lists.range(int) -> list(int)` | `lists.range(3)` → `[0, 1, 2]` | 2 |
//! | `reverse` | `list(T).reverse() -> list(T)` | `[1, 2].reverse()` → `[2, 1]` | 2 |
//! | `distinct` | `list(T).distinct() -> list(T)` | `[1, 2, 2, 1.0].distinct()` → `[1, 2]` | 2 |
//!
//! Comparable types are int, uint, double, bool, duration, timestamp, string and bytes.
//! `sortBy` expands to a binding of the list (`@__sortBy_input__`) whose keys are computed by
//! a `map` and passed to the internal `@sortByAssociatedKeys`.
//!
//! Errors, in cel-go's words: `cannot slice(1, 5), list is length 4`, `cannot slice(-1, 2),
//! negative indexes not supported`, `cannot slice(3, 1), start index must be less than or
//! equal to end index`, `level must be non-negative`, `list elements must have the same type`,
//! `list elements must be comparable`, `lists.range: size must be non-negative, got -1`,
//! `lists.range: size 10000001 exceeds maximum allowed (10000000)` (cel-go's own limit).
//! `flatten` fails rather than build more than [`MAX_LIST_ELEMENTS`] elements (nested lists
//! may share structure, so a small value can flatten into an enormous one).
//!
//! Sorting is stable. cel-go's `sort.Slice` is not stable for lists of more than 12
//! elements, so the relative order of elements with equal keys can differ from cel-go's
//! there.
//!
//! # Costs (version 3)
//!
//! | function | run time | estimate |
//! |---|---|---|
//! | `slice`, `lists.range`, `reverse` | `r + 11` (r = result size) | `n + 11` |
//! | `flatten` | `trunc(n·depth) + 11` (depth 1 if absent or negative) | `ceil(n·depth) + 11` |
//! | `sort`, `distinct`, `@sortByAssociatedKeys` | `trunc(n²·f) + 11`, f = 2.1 when the first element is a string or bytes, else 2 | `ceil(n²·f) + 11` |
//!
//! For `sortBy`, n is the size of the key list. Like cel-go's estimator, the estimate hooks
//! read literal integer arguments (`lists.range(4)`, `slice(0, 2)`, `flatten(2)`; a negative
//! literal counts as 0) and otherwise assume the unknown value (see [`range_estimate`] and
//! friends).

use std::collections::HashSet;
use std::sync::Arc;

use cel_cost::{CallEstimate, SizeRange};
use cel_runtime::{Error, Implementation, ListValue, Result, Value};
use cel_syntax::macros::{ExprFactory, Macro, MacroError, ident_name};
use cel_syntax::{Expr, ExprKind, Literal, operators};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::costs::{
    STRING_FACTOR, actual_size, allocating_list_cost, allocating_list_estimate, arg_size,
};
use crate::{Library, LibraryContents, MAX_LIST_ELEMENTS};

/// The newest version of the lists library.
pub const LATEST_VERSION: u32 = 3;

/// cel-go's limit on `lists.range`.
pub const MAX_RANGE_SIZE: i64 = 10_000_000;

/// The variable `sortBy` binds its list to.
pub const SORT_BY_VAR: &str = "@__sortBy_input__";

/// The lists extension library at a version (0 to 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lists {
    version: u32,
}

impl Default for Lists {
    fn default() -> Self {
        Lists::version(LATEST_VERSION)
    }
}

impl Lists {
    /// The library at a version; versions above the newest behave as the newest.
    pub fn version(version: u32) -> Lists {
        Lists { version }
    }
}

/// The comparable element types and their cel-go type names (used in overload ids).
fn comparable_types() -> [(Type, &'static str); 8] {
    [
        (Type::Int, "int"),
        (Type::Uint, "uint"),
        (Type::Double, "double"),
        (Type::Bool, "bool"),
        (Type::Duration, "google.protobuf.Duration"),
        (Type::Timestamp, "google.protobuf.Timestamp"),
        (Type::String, "string"),
        (Type::Bytes, "bytes"),
    ]
}

impl Library for Lists {
    fn name(&self) -> &str {
        "cel.lib.ext.lists"
    }

    fn contents(&self) -> LibraryContents {
        let v = self.version;
        let t = || Type::param("T");
        let list_t = || Type::list(t());
        let mut c = LibraryContents::default();
        c.functions.push(FunctionDecl::new(
            "slice",
            vec![OverloadDecl::member(
                "list_slice",
                vec![list_t(), Type::Int, Type::Int],
                list_t(),
            )],
        ));
        c.implement("list_slice", Implementation::Nary(slice_value));
        if v >= 1 {
            c.functions.push(FunctionDecl::new(
                "flatten",
                vec![
                    OverloadDecl::member("list_flatten", vec![Type::list(list_t())], list_t()),
                    OverloadDecl::member(
                        "list_flatten_int",
                        vec![Type::list(Type::Dyn), Type::Int],
                        Type::list(Type::Dyn),
                    ),
                ],
            ));
            c.implement("list_flatten", Implementation::Unary(flatten_value));
            c.implement(
                "list_flatten_int",
                Implementation::Binary(flatten_depth_value),
            );
        }
        if v >= 2 {
            let mut sorts = Vec::new();
            let mut by_keys = Vec::new();
            for (ty, name) in comparable_types() {
                let id = format!("list_{name}_sort");
                sorts.push(OverloadDecl::member(
                    &id,
                    vec![Type::list(ty.clone())],
                    Type::list(ty.clone()),
                ));
                c.implement(&id, Implementation::Unary(sort_value));
                let id = format!("list_{name}_sortByAssociatedKeys");
                by_keys.push(OverloadDecl::member(
                    &id,
                    vec![list_t(), Type::list(ty)],
                    list_t(),
                ));
                c.implement(&id, Implementation::Binary(sort_by_keys_value));
            }
            c.functions.push(FunctionDecl::new("sort", sorts));
            c.functions
                .push(FunctionDecl::new("@sortByAssociatedKeys", by_keys));
            c.macros.push(Macro::receiver("sortBy", 2, expand_sort_by));
            c.functions.push(FunctionDecl::new(
                "lists.range",
                vec![OverloadDecl::global(
                    "lists_range",
                    vec![Type::Int],
                    Type::list(Type::Int),
                )],
            ));
            c.implement("lists_range", Implementation::Unary(range_value));
            // Charged before it runs under a cost limit: `lists.range(10000000)` would
            // otherwise allocate about 240 MB before a small limit could stop it.
            c.result_size("lists_range", None, |a| match a {
                [Value::Int(n)] if (0..=MAX_RANGE_SIZE).contains(n) => u64::try_from(*n).ok(),
                _ => None,
            });
            c.functions.push(FunctionDecl::new(
                "reverse",
                vec![OverloadDecl::member(
                    "list_reverse",
                    vec![list_t()],
                    list_t(),
                )],
            ));
            c.implement("list_reverse", Implementation::Unary(reverse_value));
            c.functions.push(FunctionDecl::new(
                "distinct",
                vec![OverloadDecl::member(
                    "list_distinct",
                    vec![list_t()],
                    list_t(),
                )],
            ));
            c.implement("list_distinct", Implementation::Unary(distinct_value));
        }
        if v >= 3 {
            add_costs(&mut c);
        }
        c
    }
}

fn add_costs(c: &mut LibraryContents) {
    for id in ["list_slice", "lists_range", "list_reverse"] {
        c.track(id, |_, r| Some(allocating_list_cost(1.0, actual_size(r))));
    }
    for id in ["list_flatten", "list_flatten_int"] {
        c.track(id, |a, _| {
            let depth = match a.get(1) {
                Some(Value::Int(d)) => *d as f64,
                _ => 1.0,
            };
            Some(flatten_cost(a.first().map(actual_size).unwrap_or(1), depth))
        });
        c.estimate(id, |a| {
            (!a.is_empty() && a.len() <= 2).then(|| {
                // A depth argument is only known to cel-go's estimator as a literal.
                let depth = match a.get(1) {
                    Some(d) => d.uint_literal(),
                    None => Some(1),
                };
                flatten_estimate(arg_size(&a[0]), depth)
            })
        });
    }
    c.track("list_distinct", |a, _| a.first().map(self_compare_cost));
    c.estimate("list_distinct", |a| {
        (a.len() == 1).then(|| {
            let string_like = matches!(elem_type(&a[0].ty), Some(Type::String | Type::Bytes));
            self_compare_estimate(arg_size(&a[0]), string_like)
        })
    });
    for (ty, name) in comparable_types() {
        let string_like = matches!(ty, Type::String | Type::Bytes);
        c.track(&format!("list_{name}_sort"), |a, _| {
            a.first().map(self_compare_cost)
        });
        c.estimate(&format!("list_{name}_sort"), move |a| {
            (a.len() == 1).then(|| self_compare_estimate(arg_size(&a[0]), string_like))
        });
        c.track(&format!("list_{name}_sortByAssociatedKeys"), |a, _| {
            a.get(1).map(self_compare_cost)
        });
        c.estimate(&format!("list_{name}_sortByAssociatedKeys"), move |a| {
            (a.len() == 2).then(|| self_compare_estimate(arg_size(&a[1]), string_like))
        });
    }
    c.estimate("list_slice", |a| {
        (a.len() == 3)
            .then(|| slice_estimate(arg_size(&a[0]), a[1].uint_literal(), a[2].uint_literal()))
    });
    c.estimate("lists_range", |a| {
        (a.len() == 1).then(|| range_estimate(a[0].uint_literal()))
    });
    c.estimate("list_reverse", |a| {
        (a.len() == 1).then(|| allocating_list_estimate(1.0, arg_size(&a[0]), arg_size(&a[0])))
    });
}

fn elem_type(t: &Type) -> Option<&Type> {
    match t {
        Type::List(e) => Some(e),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// Cost formulas.

/// `flatten` at run time: `trunc(n·depth) + 11`, a negative depth counting as 1.
pub fn flatten_cost(input_size: u64, depth: f64) -> u64 {
    allocating_list_cost(depth, input_size)
}

/// `flatten` estimate: `ceil(n·depth) + 11`, the depth being the literal argument when
/// known, else unbounded; the result size is taken to be the input size.
pub fn flatten_estimate(n: SizeRange, depth: Option<u64>) -> CallEstimate {
    let depth = depth.unwrap_or(u64::MAX) as f64;
    allocating_list_estimate(depth, n, n)
}

/// `sort`, `distinct`, `@sortByAssociatedKeys` at run time: `trunc(n²·f) + 11` with
/// f = 2.1 when the first element is a string or bytes, else 2.
pub fn self_compare_cost(list: &Value) -> u64 {
    let Value::List(l) = list else {
        return allocating_list_cost(2.0, 0);
    };
    let n = l.len() as u64;
    let factor = match l.first() {
        Some(Value::String(_) | Value::Bytes(_)) => 2.0 + STRING_FACTOR,
        _ => 2.0,
    };
    if n == 0 {
        return allocating_list_cost(factor, 0);
    }
    allocating_list_cost(factor, n.saturating_mul(n))
}

/// `sort`, `distinct`, `@sortByAssociatedKeys` estimate: `ceil(n²·f) + 11`, the result size
/// being `n²` as in cel-go.
pub fn self_compare_estimate(n: SizeRange, string_like: bool) -> CallEstimate {
    let factor = if string_like {
        2.0 + STRING_FACTOR
    } else {
        2.0
    };
    let squared = n.multiply(n);
    allocating_list_estimate(factor, squared, squared)
}

/// `slice` estimate: `(end − start) + 11`, with the literal start (else 0) and end (else the
/// list's maximum size).
pub fn slice_estimate(list: SizeRange, start: Option<u64>, end: Option<u64>) -> CallEstimate {
    let start = start.unwrap_or(0);
    let end = end.unwrap_or(list.max);
    let size = SizeRange::exact(end.wrapping_sub(start));
    allocating_list_estimate(1.0, size, size)
}

/// `lists.range` estimate: `n + 11` for a literal n, unbounded otherwise.
pub fn range_estimate(n: Option<u64>) -> CallEstimate {
    let size = SizeRange::exact(n.unwrap_or(u64::MAX));
    allocating_list_estimate(1.0, size, size)
}

// ---------------------------------------------------------------------------------------
// Functions.

fn list_arg(v: &Value) -> Result<&Arc<ListValue>> {
    match v {
        Value::List(l) => Ok(l),
        _ => Err(Error::no_such_overload()),
    }
}

fn int_arg(v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        _ => Err(Error::no_such_overload()),
    }
}

/// `list.slice(start, end)`.
pub fn slice(list: &ListValue, start: i64, end: i64) -> Result<Vec<Value>> {
    if start < 0 || end < 0 {
        return Err(Error::new(format!(
            "cannot slice({start}, {end}), negative indexes not supported"
        )));
    }
    if start > end {
        return Err(Error::new(format!(
            "cannot slice({start}, {end}), start index must be less than or equal to end index"
        )));
    }
    if (list.len() as i64) < end {
        return Err(Error::new(format!(
            "cannot slice({start}, {end}), list is length {}",
            list.len()
        )));
    }
    Ok(list[start as usize..end as usize].to_vec())
}

/// `list.flatten(depth)`: list elements are spliced in, recursively down to `depth` levels.
/// Iterative, so any nesting is safe; fails rather than build more than
/// [`MAX_LIST_ELEMENTS`] elements.
pub fn flatten(list: &ListValue, depth: i64) -> Result<Vec<Value>> {
    if depth < 0 {
        return Err(Error::new("level must be non-negative"));
    }
    let mut out = Vec::with_capacity(list.len());
    let mut stack: Vec<(std::slice::Iter<'_, Value>, i64)> = vec![(list.iter(), depth)];
    while let Some((iter, d)) = stack.last_mut() {
        let d = *d;
        match iter.next() {
            None => {
                stack.pop();
            }
            Some(Value::List(inner)) if d > 0 => stack.push((inner.iter(), d - 1)),
            Some(v) => {
                if out.len() >= MAX_LIST_ELEMENTS {
                    return Err(Error::new(format!(
                        "flatten: result size exceeds maximum allowed ({MAX_LIST_ELEMENTS} elements)"
                    )));
                }
                out.push(v.clone());
            }
        }
    }
    Ok(out)
}

/// `lists.range(n)`: `[0, 1, ..., n-1]`.
pub fn range(n: i64) -> Result<Vec<Value>> {
    if n < 0 {
        return Err(Error::new(format!(
            "lists.range: size must be non-negative, got {n}"
        )));
    }
    if n > MAX_RANGE_SIZE {
        return Err(Error::new(format!(
            "lists.range: size {n} exceeds maximum allowed ({MAX_RANGE_SIZE})"
        )));
    }
    Ok((0..n).map(Value::Int).collect())
}

/// A discriminant for "same type" checks of sort keys.
fn same_type(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Opaque(x), Value::Opaque(y)) => x.type_name() == y.type_name(),
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

fn is_comparable(v: &Value) -> bool {
    matches!(
        v,
        Value::Int(_)
            | Value::Uint(_)
            | Value::Double(_)
            | Value::Bool(_)
            | Value::String(_)
            | Value::Bytes(_)
            | Value::Timestamp(_)
            | Value::Duration(_)
    )
}

/// A total order over keys of one comparable type (NaN after every other double), so the
/// sort is well defined whatever the values.
fn key_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        },
        _ => cel_runtime::compare::compare(a, b).unwrap_or(Ordering::Equal),
    }
}

/// `list.@sortByAssociatedKeys(keys)`: the elements of `list` ordered by the corresponding
/// keys (a stable sort).
pub fn sort_by_keys(list: &Arc<ListValue>, keys: &ListValue) -> Result<Value> {
    if list.len() != keys.len() {
        return Err(Error::new(format!(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got {} and {} elements respectively",
            list.len(),
            keys.len()
        )));
    }
    let Some(first) = keys.first() else {
        return Ok(Value::List(list.clone()));
    };
    if !is_comparable(first) {
        return Err(Error::new("list elements must be comparable"));
    }
    if keys.len() > 1 && keys.iter().any(|k| !same_type(k, first)) {
        return Err(Error::new("list elements must have the same type"));
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&i, &j| key_order(&keys[i], &keys[j]));
    Ok(Value::list(
        order.into_iter().map(|i| list[i].clone()).collect(),
    ))
}

/// A hashable identity for scalars under CEL equality (`1`, `1u` and `1.0` are the same key);
/// `None` for values compared by [`cel_runtime::compare::equals`] instead.
#[derive(Hash, PartialEq, Eq)]
enum ScalarKey<'a> {
    Null,
    Bool(bool),
    Integer(i128),
    Fraction(u64),
    String(&'a str),
    Bytes(&'a [u8]),
    Timestamp(i64, u32),
    Duration(i64),
}

fn scalar_key(v: &Value) -> Option<ScalarKey<'_>> {
    Some(match v {
        Value::Null => ScalarKey::Null,
        Value::Bool(b) => ScalarKey::Bool(*b),
        Value::Int(i) => ScalarKey::Integer(i128::from(*i)),
        Value::Uint(u) => ScalarKey::Integer(i128::from(*u)),
        Value::Double(d) => {
            if d.is_nan() {
                return None;
            }
            if d.fract() == 0.0 && d.abs() < 1e38 {
                ScalarKey::Integer(*d as i128)
            } else {
                ScalarKey::Fraction(d.to_bits())
            }
        }
        Value::String(s) => ScalarKey::String(s),
        Value::Bytes(b) => ScalarKey::Bytes(b),
        Value::Timestamp(t) => ScalarKey::Timestamp(t.seconds, t.nanos),
        Value::Duration(d) => ScalarKey::Duration(d.nanos),
        _ => return None,
    })
}

/// `list.distinct()`: the first occurrence of each value under CEL equality. Scalars are
/// hashed; other values are compared one by one with the earlier distinct ones.
pub fn distinct(list: &Arc<ListValue>) -> Value {
    if list.is_empty() {
        return Value::List(list.clone());
    }
    let mut seen: HashSet<ScalarKey<'_>> = HashSet::with_capacity(list.len());
    let mut others: Vec<&Value> = Vec::new();
    let mut out = Vec::with_capacity(list.len());
    for v in list.iter() {
        let fresh = match scalar_key(v) {
            Some(k) => seen.insert(k),
            None if matches!(v, Value::Double(_)) => true, // NaN equals nothing
            None => {
                if others.iter().any(|o| cel_runtime::compare::equals(v, o)) {
                    false
                } else {
                    others.push(v);
                    true
                }
            }
        };
        if fresh {
            out.push(v.clone());
        }
    }
    Value::list(out)
}

fn slice_value(args: &[Value]) -> Result<Value> {
    match args {
        [l, s, e] => Ok(Value::list(slice(list_arg(l)?, int_arg(s)?, int_arg(e)?)?)),
        _ => Err(Error::no_such_overload()),
    }
}

fn flatten_value(l: &Value) -> Result<Value> {
    Ok(Value::list(flatten(list_arg(l)?, 1)?))
}

fn flatten_depth_value(l: &Value, d: &Value) -> Result<Value> {
    Ok(Value::list(flatten(list_arg(l)?, int_arg(d)?)?))
}

fn range_value(n: &Value) -> Result<Value> {
    Ok(Value::list(range(int_arg(n)?)?))
}

fn reverse_value(l: &Value) -> Result<Value> {
    Ok(Value::list(list_arg(l)?.iter().rev().cloned().collect()))
}

fn distinct_value(l: &Value) -> Result<Value> {
    Ok(distinct(list_arg(l)?))
}

fn sort_value(l: &Value) -> Result<Value> {
    let l = list_arg(l)?;
    sort_by_keys(l, l)
}

fn sort_by_keys_value(l: &Value, keys: &Value) -> Result<Value> {
    sort_by_keys(list_arg(l)?, list_arg(keys)?)
}

// ---------------------------------------------------------------------------------------
// The sortBy macro.

fn expand_sort_by(
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
) -> std::result::Result<Option<Expr>, MacroError> {
    let Some(target) = target else {
        return Ok(None);
    };
    let var_ident = f.ident(SORT_BY_VAR);
    if !matches!(
        target.kind,
        ExprKind::List(_)
            | ExprKind::Select(_)
            | ExprKind::Ident(_)
            | ExprKind::Comprehension(_)
            | ExprKind::Call(_)
    ) {
        return Err(f.error(
            target.id,
            "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
        ));
    }
    let range = f.copy(&var_ident);
    let keys = make_map(f, range, args)?;
    let receiver = f.copy(&var_ident);
    let call = f.member_call("@sortByAssociatedKeys", receiver, vec![keys]);
    let empty = f.list(Vec::new());
    let cond = f.literal(Literal::Bool(false));
    Ok(Some(f.comprehension(
        empty,
        crate::bindings::UNUSED_ITER_VAR,
        None,
        SORT_BY_VAR,
        target,
        cond,
        var_ident,
        call,
    )))
}

/// The `map` macro's expansion (`range.map(v, [filter,] expr)`), as cel-go's
/// `parser.MakeMap` builds it.
fn make_map(
    f: &mut ExprFactory<'_>,
    range: Expr,
    args: Vec<Expr>,
) -> std::result::Result<Expr, MacroError> {
    let mut args = args.into_iter();
    let (Some(var), Some(second)) = (args.next(), args.next()) else {
        return Err(f.error(0, "argument is not an identifier"));
    };
    let Some(name) = ident_name(&var).map(str::to_string) else {
        return Err(f.error(var.id, "argument is not an identifier"));
    };
    if name == f.accu_name() || name == "__result__" {
        return Err(f.error(var.id, "iteration variable overwrites accumulator variable"));
    }
    let (filter, transform) = match args.next() {
        Some(t) => (Some(second), t),
        None => (None, second),
    };
    let accu = f.accu_name().to_string();
    let init = f.list(Vec::new());
    let condition = f.literal(Literal::Bool(true));
    let a = f.accu_ident();
    let item = f.list(vec![transform]);
    let mut step = f.global_call(operators::ADD, vec![a, item]);
    if let Some(filter) = filter {
        let a = f.accu_ident();
        step = f.global_call(operators::CONDITIONAL, vec![filter, step, a]);
    }
    let result = f.accu_ident();
    Ok(f.comprehension(range, &name, None, &accu, init, condition, step, result))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i64]) -> Vec<Value> {
        v.iter().map(|&i| Value::Int(i)).collect()
    }

    #[test]
    fn slices_and_errors() {
        let l = ListValue::from(ints(&[1, 2, 3, 4]));
        assert_eq!(slice(&l, 1, 3).unwrap().len(), 2);
        assert_eq!(
            slice(&l, 1, 5).unwrap_err().message,
            "cannot slice(1, 5), list is length 4"
        );
        assert_eq!(
            slice(&l, 3, 1).unwrap_err().message,
            "cannot slice(3, 1), start index must be less than or equal to end index"
        );
        assert_eq!(
            slice(&l, -1, 2).unwrap_err().message,
            "cannot slice(-1, 2), negative indexes not supported"
        );
    }

    #[test]
    fn flatten_is_iterative_and_bounded() {
        let mut v = Value::Int(1);
        for _ in 0..100_000 {
            v = Value::list(vec![v]);
        }
        let l = ListValue::from(vec![v]);
        assert_eq!(flatten(&l, i64::MAX).unwrap().len(), 1);
        assert_eq!(
            flatten(&l, -1).unwrap_err().message,
            "level must be non-negative"
        );
        // Shared structure: 2^40 leaves in a few kilobytes.
        let mut shared = Value::list(ints(&[1, 2]));
        for _ in 0..39 {
            shared = Value::list(vec![shared.clone(), shared]);
        }
        let l = ListValue::from(vec![shared]);
        assert!(
            flatten(&l, 100)
                .unwrap_err()
                .message
                .contains("exceeds maximum allowed")
        );
    }

    #[test]
    fn ranges() {
        assert_eq!(range(3).unwrap().len(), 3);
        assert_eq!(
            range(-1).unwrap_err().message,
            "lists.range: size must be non-negative, got -1"
        );
        assert_eq!(
            range(i64::MAX).unwrap_err().message,
            "lists.range: size 9223372036854775807 exceeds maximum allowed (10000000)"
        );
    }

    #[test]
    fn distinct_uses_cel_equality() {
        let l = Arc::new(ListValue::from(vec![
            Value::Int(1),
            Value::Int(2),
            Value::Int(2),
            Value::Double(1.0),
            Value::Uint(2),
            Value::Double(f64::NAN),
            Value::Double(f64::NAN),
            Value::list(vec![Value::Int(1)]),
            Value::list(vec![Value::Double(1.0)]),
        ]));
        let Value::List(out) = &distinct(&l) else {
            panic!()
        };
        assert_eq!(out.len(), 5);
        assert!(out[0].identical(&Value::Int(1)));
    }

    #[test]
    fn sorting() {
        let l = Arc::new(ListValue::from(vec![Value::from("b"), Value::from("a")]));
        let Value::List(s) = &sort_by_keys(&l, &l).unwrap() else {
            panic!()
        };
        assert!(s[0].identical(&Value::from("a")));
        let mixed = Arc::new(ListValue::from(vec![Value::Int(1), Value::from("b")]));
        assert_eq!(
            sort_by_keys(&mixed, &mixed).unwrap_err().message,
            "list elements must have the same type"
        );
        let lists = Arc::new(ListValue::from(vec![Value::list(vec![])]));
        assert_eq!(
            sort_by_keys(&lists, &lists).unwrap_err().message,
            "list elements must be comparable"
        );
        let nan = Arc::new(ListValue::from(vec![
            Value::Double(f64::NAN),
            Value::Double(1.0),
            Value::Double(f64::NAN),
            Value::Double(-1.0),
        ]));
        assert!(sort_by_keys(&nan, &nan).is_ok());
    }

    /// cost-model.md §5.3 (literal lists cost 10, `==` of small lists 1).
    #[test]
    fn costs_match_cel_go() {
        // lists.range(4) == [0, 1, 2, 3]
        assert_eq!(allocating_list_cost(1.0, 4) + 10 + 1, 26);
        assert_eq!(range_estimate(Some(4)).cost, cel_cost::CostRange::exact(15));
        // [[1, 2], 3].flatten(2) == [1, 2, 3]
        assert_eq!(20 + flatten_cost(2, 2.0) + 10 + 1, 46);
        assert_eq!(flatten_estimate(SizeRange::exact(2), Some(2)).cost.max, 15);
        // [1,[2]].flatten(-1) is charged with depth 1.
        assert_eq!(20 + flatten_cost(2, -1.0), 33);
        // [1, 2, 3].distinct() == [1, 2, 3]
        let l = Value::list(ints(&[1, 2, 3]));
        assert_eq!(10 + self_compare_cost(&l) + 10 + 1, 50);
        // x.sort() == ["a", "a", "b", "b", "c", "c"], x of six strings, hint 10.
        let x = Value::list(["c", "b", "a", "c", "b", "a"].map(Value::from).to_vec());
        assert_eq!(1 + self_compare_cost(&x) + 10 + 1, 98);
        let e = self_compare_estimate(SizeRange { min: 0, max: 10 }, true);
        assert_eq!((e.cost.min + 12, e.cost.max + 12), (23, 233));
        assert_eq!(self_compare_cost(&Value::list(vec![])), 11);
        assert_eq!(
            slice_estimate(SizeRange::exact(4), Some(1), Some(3))
                .cost
                .max,
            13
        );
    }
}
