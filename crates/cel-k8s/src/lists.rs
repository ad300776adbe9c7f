//! Kubernetes' list library (`kubernetes.lists`, `lists.go`).
//!
//! | function | signature | example | since |
//! | --- | --- | --- | --- |
//! | `isSorted` | `list(T).isSorted() -> bool`, T comparable | `[1, 2, 3].isSorted() == true` | 1.23 |
//! | `sum` | `list(T).sum() -> T`, T in int, uint, double, duration | `[1, 3].sum() == 4` | 1.23 |
//! | `min`, `max` | `list(T).min() -> T`, T comparable | `[1, 3].max() == 3` | 1.23 |
//! | `indexOf`, `lastIndexOf` | `list(A).indexOf(A) -> int` | `[1, 2, 2, 3].indexOf(2) == 1` | 1.23 |
//! | `includes` (version 1) | `dyn.includes(dyn) -> bool` | `['a'].includes('a')` | 1.37 |
//!
//! Comparable element types: int, uint, double, bool, duration, timestamp, string, bytes.
//!
//! Semantics, as Kubernetes implements them:
//! * `isSorted` is false as soon as one element is greater than the next; elements that
//!   cannot be compared are ignored (cel-go only looks for a "greater" answer).
//! * `sum` starts from the type's zero and adds with `+` (integer overflow is an error).
//! * `min` / `max` keep the first of equal extremes; an empty list is the error
//!   `min called on empty list` / `max called on empty list`.
//! * `indexOf` / `lastIndexOf` use CEL equality (deep for lists and maps); -1 when absent.
//! * `includes`: on a list, whether some element equals the argument; on anything else,
//!   whether the receiver equals the argument.
//! * A list whose type is `dyn` dispatches on its first element, as cel-go does, and an
//!   empty one behaves as a list of ints (`dyn([]).sum() == 0`).
//!
//! Costs (Kubernetes' estimator, see [`crate::cost`]): at run time one traversal of the
//! receiver (`floor(0.1 × bytes)` for each string, 1 for anything else); statically
//! `size(list) × (1 + ceil(0.1 × size(element)))` for string and bytes lists,
//! `size(list)` otherwise, and `ceil(0.1 × size(string))` when the receiver is a string.

use std::cmp::Ordering;
use std::sync::Arc;

use cel_ext::{Library, LibraryContents};
use cel_runtime::{Duration, Error, Implementation, Result, Value, compare};
use cel_types::{FunctionDecl, OverloadDecl, Type};

/// Kubernetes' list library, at a version (0: Kubernetes 1.23–1.36 new expressions; 1:
/// 1.37+, adds `includes`).
#[derive(Clone, Copy, Debug)]
pub struct Lists {
    version: u32,
}

impl Default for Lists {
    /// The newest version.
    fn default() -> Self {
        Lists { version: 1 }
    }
}

impl Lists {
    /// The library at a version.
    pub fn version(version: u32) -> Lists {
        Lists { version }
    }

    /// The version.
    pub fn get_version(&self) -> u32 {
        self.version
    }
}

/// The overload id of `includes` (library version 1).
pub const INCLUDES_OVERLOAD: &str = "dyn_includes_dyn_bool";

/// Element kinds, in the order Kubernetes declares the overloads (the first one is what an
/// empty `dyn` list dispatches to).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Uint,
    Double,
    Bool,
    Duration,
    Timestamp,
    String,
    Bytes,
}

const COMPARABLE: [Kind; 8] = [
    Kind::Int,
    Kind::Uint,
    Kind::Double,
    Kind::Bool,
    Kind::Duration,
    Kind::Timestamp,
    Kind::String,
    Kind::Bytes,
];
const SUMMABLE: [Kind; 4] = [Kind::Int, Kind::Uint, Kind::Double, Kind::Duration];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Int => "int",
            Kind::Uint => "uint",
            Kind::Double => "double",
            Kind::Bool => "bool",
            Kind::Duration => "duration",
            Kind::Timestamp => "timestamp",
            Kind::String => "string",
            Kind::Bytes => "bytes",
        }
    }

    fn ty(self) -> Type {
        match self {
            Kind::Int => Type::Int,
            Kind::Uint => Type::Uint,
            Kind::Double => Type::Double,
            Kind::Bool => Type::Bool,
            Kind::Duration => Type::Duration,
            Kind::Timestamp => Type::Timestamp,
            Kind::String => Type::String,
            Kind::Bytes => Type::Bytes,
        }
    }

    fn of(v: &Value) -> Option<Kind> {
        Some(match v {
            Value::Int(_) => Kind::Int,
            Value::Uint(_) => Kind::Uint,
            Value::Double(_) => Kind::Double,
            Value::Bool(_) => Kind::Bool,
            Value::Duration(_) => Kind::Duration,
            Value::Timestamp(_) => Kind::Timestamp,
            Value::String(_) => Kind::String,
            Value::Bytes(_) => Kind::Bytes,
            _ => return None,
        })
    }

    fn zero(self) -> Option<Value> {
        Some(match self {
            Kind::Int => Value::Int(0),
            Kind::Uint => Value::Uint(0),
            Kind::Double => Value::Double(0.0),
            Kind::Duration => Value::Duration(Duration { nanos: 0 }),
            _ => return None,
        })
    }
}

impl Library for Lists {
    fn name(&self) -> &str {
        "kubernetes.lists"
    }

    fn contents(&self) -> LibraryContents {
        let mut functions = Vec::new();
        let mut implementations: Vec<(String, Implementation)> = Vec::new();
        let list = |k: Kind| Type::list(k.ty());

        let mut sorted = Vec::new();
        let mut maxes = Vec::new();
        let mut mins = Vec::new();
        for k in COMPARABLE {
            let n = k.name();
            let id = format!("list_{n}_is_sorted_bool");
            sorted.push(OverloadDecl::member(&id, vec![list(k)], Type::Bool));
            implementations.push((id, Implementation::Unary(is_sorted)));
            let id = format!("list_{n}_max_{n}");
            maxes.push(OverloadDecl::member(&id, vec![list(k)], k.ty()));
            implementations.push((id, Implementation::Unary(max)));
            let id = format!("list_{n}_min_{n}");
            mins.push(OverloadDecl::member(&id, vec![list(k)], k.ty()));
            implementations.push((id, Implementation::Unary(min)));
        }
        let mut sums = Vec::new();
        for k in SUMMABLE {
            let n = k.name();
            let id = format!("list_{n}_sum_{n}");
            sums.push(OverloadDecl::member(&id, vec![list(k)], k.ty()));
            implementations.push((
                id,
                Implementation::Host(Arc::new(move |args: &[Value]| match args {
                    [l] => sum(l, k),
                    _ => Err(Error::no_such_overload()),
                })),
            ));
        }
        functions.push(FunctionDecl::new("isSorted", sorted));
        functions.push(FunctionDecl::new("sum", sums));
        functions.push(FunctionDecl::new("max", maxes));
        functions.push(FunctionDecl::new("min", mins));
        let a = || Type::param("A");
        functions.push(FunctionDecl::new(
            "indexOf",
            vec![OverloadDecl::member(
                "list_a_index_of_int",
                vec![Type::list(a()), a()],
                Type::Int,
            )],
        ));
        implementations.push((
            "list_a_index_of_int".into(),
            Implementation::Binary(index_of),
        ));
        functions.push(FunctionDecl::new(
            "lastIndexOf",
            vec![OverloadDecl::member(
                "list_a_last_index_of_int",
                vec![Type::list(a()), a()],
                Type::Int,
            )],
        ));
        implementations.push((
            "list_a_last_index_of_int".into(),
            Implementation::Binary(last_index_of),
        ));
        if self.version >= 1 {
            functions.push(FunctionDecl::new(
                "includes",
                vec![OverloadDecl::member(
                    INCLUDES_OVERLOAD,
                    vec![Type::Dyn, Type::Dyn],
                    Type::Bool,
                )],
            ));
            implementations.push((INCLUDES_OVERLOAD.into(), Implementation::Binary(includes)));
        }
        LibraryContents {
            functions,
            implementations,
            ..LibraryContents::default()
        }
    }
}

fn items(v: &Value) -> Result<&[Value]> {
    match v {
        Value::List(l) => Ok(&l.items),
        _ => Err(Error::no_such_overload()),
    }
}

/// Whether `a > b` in CEL's ordering; values that cannot be ordered are never greater.
fn greater(a: &Value, b: &Value) -> bool {
    matches!(compare::compare(a, b), Ok(Ordering::Greater))
}

/// `list.isSorted()`.
pub fn is_sorted(list: &Value) -> Result<Value> {
    let items = items(list)?;
    if let Some(first) = items.first()
        && Kind::of(first).is_none()
    {
        return Err(Error::no_such_overload());
    }
    Ok(Value::Bool(
        !items.windows(2).any(|w| greater(&w[0], &w[1])),
    ))
}

/// `list.sum()`: `declared` is the element type of the overload the checker chose; a
/// non-empty list sums from the zero of its first element's type, as dynamic dispatch does.
fn sum(list: &Value, declared: Kind) -> Result<Value> {
    let items = items(list)?;
    let kind = match items.first() {
        Some(first) => Kind::of(first).ok_or_else(Error::no_such_overload)?,
        None => declared,
    };
    let mut acc = kind.zero().ok_or_else(Error::no_such_overload)?;
    for v in items {
        acc = cel_runtime::arith::add(&acc, v)?;
    }
    Ok(acc)
}

fn extreme(list: &Value, name: &str, replace_when: Ordering) -> Result<Value> {
    let items = items(list)?;
    let Some(first) = items.first() else {
        return Err(Error::new(format!("{name} called on empty list")));
    };
    if Kind::of(first).is_none() {
        return Err(Error::no_such_overload());
    }
    let mut best = first;
    for v in &items[1..] {
        if compare::compare(best, v) == Ok(replace_when) {
            best = v;
        }
    }
    Ok(best.clone())
}

/// `list.min()`.
pub fn min(list: &Value) -> Result<Value> {
    extreme(list, "min", Ordering::Greater)
}

/// `list.max()`.
pub fn max(list: &Value) -> Result<Value> {
    extreme(list, "max", Ordering::Less)
}

/// `list.indexOf(x)`.
pub fn index_of(list: &Value, x: &Value) -> Result<Value> {
    let items = items(list)?;
    Ok(Value::Int(
        items
            .iter()
            .position(|v| compare::equals(v, x))
            .map_or(-1, |i| i as i64),
    ))
}

/// `list.lastIndexOf(x)`.
pub fn last_index_of(list: &Value, x: &Value) -> Result<Value> {
    let items = items(list)?;
    Ok(Value::Int(
        items
            .iter()
            .rposition(|v| compare::equals(v, x))
            .map_or(-1, |i| i as i64),
    ))
}

/// `x.includes(y)`.
pub fn includes(target: &Value, x: &Value) -> Result<Value> {
    Ok(Value::Bool(match target {
        Value::List(l) => l.iter().any(|v| compare::equals(v, x)),
        other => compare::equals(other, x),
    }))
}
