//! The standard library's table: an implementation for every overload id declared by
//! `cel_types::stdlib::functions()` and `optional_functions()`, except the few the
//! interpreter evaluates itself ([`SPECIAL_FORMS`]), plus list and map indexing.
//!
//! Every implementation checks the runtime types of its arguments against its overload's
//! signature and answers "no such overload" otherwise, so the same table serves dynamic
//! dispatch of unchecked expressions. The work itself is done by the typed functions of the
//! other modules; this module only matches on [`Value`] variants and forwards.

use std::cmp::Ordering;

use crate::Error;
use crate::format::error_text;
use crate::time::{self, TimeField};
use crate::{
    FunctionRegistry, Implementation, ListValue, Result, Value, arith, compare, convert, optional,
    regex, strings,
};

/// Overload ids that are declared but not registered, because they are not strict functions:
/// the interpreter evaluates them itself (short-circuiting, error absorption, field presence).
pub const SPECIAL_FORMS: &[&str] = &[
    "conditional",
    "logical_and",
    "logical_or",
    "not_strictly_false",
    "optional_or_optional",
    "optional_orValue_value",
    "select_optional_field",
];

#[cold]
fn no_such_overload() -> Error {
    Error::no_such_overload()
}

/// The position a list index denotes, following cel-go: an `int`, or a `double` or `uint`
/// that converts to an int without loss. `Ok(None)` when it is out of range; an error for an
/// index that is not a whole number ("unsupported index value 1.5 in list") or not a number
/// ("unsupported index type 'string' in list").
pub fn list_index_position(list: &ListValue, index: &Value) -> Result<Option<usize>> {
    let i: i64 = match index {
        Value::Int(i) => *i,
        Value::Double(d) => match convert::int_from_double(*d) {
            Ok(i) if i as f64 == *d => i,
            _ => {
                return Err(Error::new(format!(
                    "unsupported index value {} in list",
                    error_text(index)
                )));
            }
        },
        Value::Uint(u) => i64::try_from(*u)
            .map_err(|_| Error::new(format!("unsupported index value {u} in list")))?,
        other => {
            return Err(Error::new(format!(
                "unsupported index type '{}' in list",
                other.type_name()
            )));
        }
    };
    Ok(usize::try_from(i).ok().filter(|&i| i < list.len()))
}

/// `list[index]`: "index out of bounds: 2" past either end.
pub fn index_list(list: &Value, index: &Value) -> Result<Value> {
    let Value::List(l) = list else {
        return Err(no_such_overload());
    };
    match list_index_position(l, index)? {
        Some(i) => {
            let v = &l.items[i];
            crate::object::check_data(v)?;
            Ok(v.clone())
        }
        None => Err(Error::new(format!(
            "index out of bounds: {}",
            error_text(index)
        ))),
    }
}

/// `map[key]`: numeric keys match across int, uint and double; "no such key: k" otherwise.
pub fn index_map(map: &Value, key: &Value) -> Result<Value> {
    let found = match map {
        Value::Map(m) => m.get(key).ok().flatten(),
        // A schema-typed object indexed as a map (through `dyn`): by property name.
        Value::Object(o) => match key {
            Value::String(k) => o.get(k),
            _ => return Err(no_such_overload()),
        },
        _ => return Err(no_such_overload()),
    };
    match found {
        Some(v) => {
            crate::object::check_data(v)?;
            Ok(v.clone())
        }
        None => Err(Error::no_such_key(error_text(key))),
    }
}

/// `container[index]` on a list or a map.
pub fn index(container: &Value, index: &Value) -> Result<Value> {
    match container {
        Value::List(_) => index_list(container, index),
        Value::Map(_) => index_map(container, index),
        _ => Err(no_such_overload()),
    }
}

/// A binary implementation over two specific variants.
macro_rules! binary {
    ($r:expr, $id:expr, |$a:ident: $A:ident, $b:ident: $B:ident| $body:expr) => {
        $r.add(
            $id,
            Implementation::Binary(|x, y| match (x, y) {
                (Value::$A($a), Value::$B($b)) => $body,
                _ => Err(no_such_overload()),
            }),
        )
    };
}

/// A unary implementation over one specific variant.
macro_rules! unary {
    ($r:expr, $id:expr, |$a:ident: $A:ident| $body:expr) => {
        $r.add(
            $id,
            Implementation::Unary(|x| match x {
                Value::$A($a) => $body,
                _ => Err(no_such_overload()),
            }),
        )
    };
}

/// The four relational overloads of one pair of operand types.
macro_rules! relations {
    ($r:expr, $suffix:literal, $A:ident, $B:ident) => {
        relations!(@one $r, concat!("less_", $suffix), $A, $B, Ordering::is_lt);
        relations!(@one $r, concat!("less_equals_", $suffix), $A, $B, Ordering::is_le);
        relations!(@one $r, concat!("greater_", $suffix), $A, $B, Ordering::is_gt);
        relations!(@one $r, concat!("greater_equals_", $suffix), $A, $B, Ordering::is_ge);
    };
    (@one $r:expr, $id:expr, $A:ident, $B:ident, $test:path) => {
        $r.add(
            $id,
            Implementation::Binary(|x, y| match (x, y) {
                (Value::$A(_), Value::$B(_)) => compare::compare(x, y).map(|o| Value::Bool($test(o))),
                _ => Err(no_such_overload()),
            }),
        )
    };
}

/// A timestamp accessor in UTC and with a time-zone argument.
macro_rules! timestamp_field {
    ($r:expr, $id:literal, $tz_id:literal, $field:expr) => {
        unary!($r, $id, |t: Timestamp| Ok(Value::Int(
            time::timestamp_field_utc(*t, $field)
        )));
        binary!($r, $tz_id, |t: Timestamp, z: String| Ok(Value::Int(
            time::timestamp_field(*t, $field, z)?
        )));
    };
}

pub(crate) fn register(r: &mut FunctionRegistry) {
    register_operators(r);
    register_relations(r);
    register_collections(r);
    register_conversions(r);
    register_strings(r);
    register_time(r);
    register_optionals(r);
}

fn register_operators(r: &mut FunctionRegistry) {
    r.add(
        "logical_not",
        Implementation::Unary(|v| match v {
            Value::Bool(b) => Ok(Value::Bool(!b)),
            _ => Err(no_such_overload()),
        }),
    );
    r.add(
        "equals",
        Implementation::Binary(|a, b| Ok(Value::Bool(compare::equals(a, b)))),
    );
    r.add(
        "not_equals",
        Implementation::Binary(|a, b| Ok(Value::Bool(!compare::equals(a, b)))),
    );

    binary!(r, "add_int64", |a: Int, b: Int| Ok(Value::Int(
        arith::add_int(*a, *b)?
    )));
    binary!(r, "add_uint64", |a: Uint, b: Uint| Ok(Value::Uint(
        arith::add_uint(*a, *b)?
    )));
    binary!(r, "add_double", |a: Double, b: Double| Ok(Value::Double(
        a + b
    )));
    binary!(r, "add_string", |a: String, b: String| Ok(Value::String(
        arith::concat_strings(a, b)?
    )));
    binary!(r, "add_bytes", |a: Bytes, b: Bytes| Ok(Value::Bytes(
        arith::concat_bytes(a, b)?
    )));
    binary!(r, "add_list", |a: List, b: List| Ok(Value::List(
        arith::concat_lists(a, b)?
    )));
    binary!(r, "add_duration_duration", |a: Duration, b: Duration| Ok(
        Value::Duration(arith::add_durations(*a, *b)?)
    ));
    binary!(r, "add_timestamp_duration", |a: Timestamp, b: Duration| Ok(
        Value::Timestamp(arith::add_timestamp_duration(*a, *b)?)
    ));
    binary!(r, "add_duration_timestamp", |a: Duration, b: Timestamp| Ok(
        Value::Timestamp(arith::add_timestamp_duration(*b, *a)?)
    ));

    binary!(r, "subtract_int64", |a: Int, b: Int| Ok(Value::Int(
        arith::sub_int(*a, *b)?
    )));
    binary!(r, "subtract_uint64", |a: Uint, b: Uint| Ok(Value::Uint(
        arith::sub_uint(*a, *b)?
    )));
    binary!(r, "subtract_double", |a: Double, b: Double| Ok(
        Value::Double(a - b)
    ));
    binary!(
        r,
        "subtract_duration_duration",
        |a: Duration, b: Duration| Ok(Value::Duration(arith::sub_durations(*a, *b)?))
    );
    binary!(
        r,
        "subtract_timestamp_duration",
        |a: Timestamp, b: Duration| Ok(Value::Timestamp(arith::sub_timestamp_duration(*a, *b)?))
    );
    binary!(
        r,
        "subtract_timestamp_timestamp",
        |a: Timestamp, b: Timestamp| Ok(Value::Duration(arith::sub_timestamps(*a, *b)?))
    );

    binary!(r, "multiply_int64", |a: Int, b: Int| Ok(Value::Int(
        arith::mul_int(*a, *b)?
    )));
    binary!(r, "multiply_uint64", |a: Uint, b: Uint| Ok(Value::Uint(
        arith::mul_uint(*a, *b)?
    )));
    binary!(r, "multiply_double", |a: Double, b: Double| Ok(
        Value::Double(a * b)
    ));

    binary!(r, "divide_int64", |a: Int, b: Int| Ok(Value::Int(
        arith::div_int(*a, *b)?
    )));
    binary!(r, "divide_uint64", |a: Uint, b: Uint| Ok(Value::Uint(
        arith::div_uint(*a, *b)?
    )));
    binary!(r, "divide_double", |a: Double, b: Double| Ok(
        Value::Double(a / b)
    ));

    binary!(r, "modulo_int64", |a: Int, b: Int| Ok(Value::Int(
        arith::rem_int(*a, *b)?
    )));
    binary!(r, "modulo_uint64", |a: Uint, b: Uint| Ok(Value::Uint(
        arith::rem_uint(*a, *b)?
    )));

    unary!(r, "negate_int64", |a: Int| Ok(Value::Int(arith::neg_int(
        *a
    )?)));
    unary!(r, "negate_double", |a: Double| Ok(Value::Double(-a)));
}

fn register_relations(r: &mut FunctionRegistry) {
    relations!(r, "bool", Bool, Bool);
    relations!(r, "int64", Int, Int);
    relations!(r, "int64_double", Int, Double);
    relations!(r, "int64_uint64", Int, Uint);
    relations!(r, "uint64", Uint, Uint);
    relations!(r, "uint64_double", Uint, Double);
    relations!(r, "uint64_int64", Uint, Int);
    relations!(r, "double", Double, Double);
    relations!(r, "double_int64", Double, Int);
    relations!(r, "double_uint64", Double, Uint);
    relations!(r, "string", String, String);
    relations!(r, "bytes", Bytes, Bytes);
    relations!(r, "timestamp", Timestamp, Timestamp);
    relations!(r, "duration", Duration, Duration);
}

fn register_collections(r: &mut FunctionRegistry) {
    r.add("index_list", Implementation::Binary(index_list));
    r.add("index_map", Implementation::Binary(index_map));
    r.add(
        "in_list",
        Implementation::Binary(|e, l| match l {
            Value::List(l) => Ok(Value::Bool(compare::in_list(e, l))),
            _ => Err(no_such_overload()),
        }),
    );
    r.add(
        "in_map",
        Implementation::Binary(|k, m| match m {
            Value::Map(m) => Ok(Value::Bool(compare::in_map(k, m))),
            Value::Object(o) => Ok(Value::Bool(
                matches!(k, Value::String(k) if o.get(k).is_some()),
            )),
            _ => Err(no_such_overload()),
        }),
    );
    for id in ["size_string", "string_size"] {
        unary!(r, id, |s: String| Ok(Value::Int(strings::size_string(s))));
    }
    for id in ["size_bytes", "bytes_size"] {
        unary!(r, id, |b: Bytes| Ok(Value::Int(strings::size_bytes(b))));
    }
    for id in ["size_list", "list_size"] {
        unary!(r, id, |l: List| Ok(Value::Int(l.len() as i64)));
    }
    for id in ["size_map", "map_size"] {
        // A schema-typed object (through `dyn`) counts every property of its data.
        r.add(
            id,
            Implementation::Unary(|v| match v {
                Value::Map(m) => Ok(Value::Int(m.len() as i64)),
                Value::Object(o) => Ok(Value::Int(o.len() as i64)),
                _ => Err(no_such_overload()),
            }),
        );
    }
}

fn register_conversions(r: &mut FunctionRegistry) {
    r.add("type", Implementation::Unary(convert::to_type));
    r.add("to_dyn", Implementation::Unary(convert::to_dyn));

    unary!(r, "bool_to_bool", |b: Bool| Ok(Value::Bool(*b)));
    unary!(r, "string_to_bool", |s: String| Ok(Value::Bool(
        convert::bool_from_string(s)?
    )));

    unary!(r, "bytes_to_bytes", |b: Bytes| Ok(Value::Bytes(b.clone())));
    unary!(r, "string_to_bytes", |s: String| Ok(Value::Bytes(
        s.as_bytes().into()
    )));

    unary!(r, "double_to_double", |d: Double| Ok(Value::Double(*d)));
    unary!(r, "int64_to_double", |i: Int| Ok(Value::Double(*i as f64)));
    unary!(r, "uint64_to_double", |u: Uint| Ok(Value::Double(
        *u as f64
    )));
    unary!(r, "string_to_double", |s: String| Ok(Value::Double(
        convert::double_from_string(s)?
    )));

    unary!(r, "duration_to_duration", |d: Duration| Ok(
        Value::Duration(*d)
    ));
    unary!(r, "int64_to_duration", |_i: Int| convert::to_duration(
        &Value::Int(*_i)
    ));
    unary!(r, "string_to_duration", |s: String| Ok(Value::Duration(
        convert::duration_from_string(s)?
    )));

    unary!(r, "int64_to_int64", |i: Int| Ok(Value::Int(*i)));
    unary!(r, "double_to_int64", |d: Double| Ok(Value::Int(
        convert::int_from_double(*d)?
    )));
    unary!(r, "duration_to_int64", |d: Duration| Ok(Value::Int(
        convert::int_from_duration(*d)
    )));
    unary!(r, "string_to_int64", |s: String| Ok(Value::Int(
        convert::int_from_string(s)?
    )));
    unary!(r, "timestamp_to_int64", |t: Timestamp| Ok(Value::Int(
        convert::int_from_timestamp(*t)
    )));
    unary!(r, "uint64_to_int64", |u: Uint| Ok(Value::Int(
        convert::int_from_uint(*u)?
    )));

    unary!(r, "string_to_string", |s: String| Ok(Value::String(
        s.clone()
    )));
    r.add("bool_to_string", Implementation::Unary(to_string_of_bool));
    r.add("bytes_to_string", Implementation::Unary(to_string_of_bytes));
    r.add(
        "double_to_string",
        Implementation::Unary(to_string_of_double),
    );
    r.add(
        "duration_to_string",
        Implementation::Unary(to_string_of_duration),
    );
    r.add("int64_to_string", Implementation::Unary(to_string_of_int));
    r.add(
        "timestamp_to_string",
        Implementation::Unary(to_string_of_timestamp),
    );
    r.add("uint64_to_string", Implementation::Unary(to_string_of_uint));

    unary!(r, "timestamp_to_timestamp", |t: Timestamp| Ok(
        Value::Timestamp(*t)
    ));
    unary!(r, "int64_to_timestamp", |i: Int| Ok(Value::Timestamp(
        convert::timestamp_from_int(*i)?
    )));
    unary!(r, "string_to_timestamp", |s: String| Ok(Value::Timestamp(
        convert::timestamp_from_string(s)?
    )));

    unary!(r, "uint64_to_uint64", |u: Uint| Ok(Value::Uint(*u)));
    unary!(r, "double_to_uint64", |d: Double| Ok(Value::Uint(
        convert::uint_from_double(*d)?
    )));
    unary!(r, "int64_to_uint64", |i: Int| Ok(Value::Uint(
        convert::uint_from_int(*i)?
    )));
    unary!(r, "string_to_uint64", |s: String| Ok(Value::Uint(
        convert::uint_from_string(s)?
    )));
}

fn to_string_of_bool(v: &Value) -> Result<Value> {
    match v {
        Value::Bool(_) => convert::to_string(v),
        _ => Err(no_such_overload()),
    }
}

fn to_string_of_bytes(v: &Value) -> Result<Value> {
    match v {
        Value::Bytes(_) => convert::to_string(v),
        _ => Err(no_such_overload()),
    }
}

fn to_string_of_double(v: &Value) -> Result<Value> {
    match v {
        Value::Double(_) => convert::to_string(v),
        _ => Err(no_such_overload()),
    }
}

fn to_string_of_duration(v: &Value) -> Result<Value> {
    match v {
        Value::Duration(_) => convert::to_string(v),
        _ => Err(no_such_overload()),
    }
}

fn to_string_of_int(v: &Value) -> Result<Value> {
    match v {
        Value::Int(_) => convert::to_string(v),
        _ => Err(no_such_overload()),
    }
}

fn to_string_of_timestamp(v: &Value) -> Result<Value> {
    match v {
        Value::Timestamp(_) => convert::to_string(v),
        _ => Err(no_such_overload()),
    }
}

fn to_string_of_uint(v: &Value) -> Result<Value> {
    match v {
        Value::Uint(_) => convert::to_string(v),
        _ => Err(no_such_overload()),
    }
}

fn register_strings(r: &mut FunctionRegistry) {
    binary!(r, "contains_string", |s: String, t: String| Ok(
        Value::Bool(strings::contains(s, t))
    ));
    binary!(r, "starts_with_string", |s: String, t: String| Ok(
        Value::Bool(strings::starts_with(s, t))
    ));
    binary!(r, "ends_with_string", |s: String, t: String| Ok(
        Value::Bool(strings::ends_with(s, t))
    ));
    for id in ["matches", "matches_string"] {
        binary!(r, id, |s: String, p: String| Ok(Value::Bool(
            regex::matches(s, p)?
        )));
    }
}

fn register_time(r: &mut FunctionRegistry) {
    timestamp_field!(
        r,
        "timestamp_to_year",
        "timestamp_to_year_with_tz",
        TimeField::FullYear
    );
    timestamp_field!(
        r,
        "timestamp_to_month",
        "timestamp_to_month_with_tz",
        TimeField::Month
    );
    timestamp_field!(
        r,
        "timestamp_to_day_of_year",
        "timestamp_to_day_of_year_with_tz",
        TimeField::DayOfYear
    );
    timestamp_field!(
        r,
        "timestamp_to_day_of_month",
        "timestamp_to_day_of_month_with_tz",
        TimeField::DayOfMonth
    );
    timestamp_field!(
        r,
        "timestamp_to_day_of_month_1_based",
        "timestamp_to_day_of_month_1_based_with_tz",
        TimeField::Date
    );
    timestamp_field!(
        r,
        "timestamp_to_day_of_week",
        "timestamp_to_day_of_week_with_tz",
        TimeField::DayOfWeek
    );
    timestamp_field!(
        r,
        "timestamp_to_hours",
        "timestamp_to_hours_with_tz",
        TimeField::Hours
    );
    timestamp_field!(
        r,
        "timestamp_to_minutes",
        "timestamp_to_minutes_with_tz",
        TimeField::Minutes
    );
    timestamp_field!(
        r,
        "timestamp_to_seconds",
        "timestamp_to_seconds_tz",
        TimeField::Seconds
    );
    timestamp_field!(
        r,
        "timestamp_to_milliseconds",
        "timestamp_to_milliseconds_with_tz",
        TimeField::Milliseconds
    );
    unary!(r, "duration_to_hours", |d: Duration| Ok(Value::Int(
        time::duration_hours(*d)
    )));
    unary!(r, "duration_to_minutes", |d: Duration| Ok(Value::Int(
        time::duration_minutes(*d)
    )));
    unary!(r, "duration_to_seconds", |d: Duration| Ok(Value::Int(
        time::duration_seconds(*d)
    )));
    unary!(r, "duration_to_milliseconds", |d: Duration| Ok(Value::Int(
        time::duration_milliseconds(*d)
    )));
}

fn register_optionals(r: &mut FunctionRegistry) {
    r.add("optional_of", Implementation::Unary(optional::of));
    r.add(
        "optional_ofNonZeroValue",
        Implementation::Unary(optional::of_non_zero_value),
    );
    r.add("optional_none", Implementation::Nary(optional::none));
    r.add(
        "optional_hasValue",
        Implementation::Unary(optional::has_value),
    );
    r.add("optional_value", Implementation::Unary(optional::value));
    r.add(
        "list_optindex_optional_int",
        Implementation::Binary(optional::list_opt_index),
    );
    r.add(
        "map_optindex_optional_value",
        Implementation::Binary(optional::map_opt_index),
    );
    for id in [
        "optional_list_optindex_optional_int",
        "optional_list_index_int",
    ] {
        r.add(id, Implementation::Binary(optional::optional_list_index));
    }
    for id in [
        "optional_map_optindex_optional_value",
        "optional_map_index_value",
    ] {
        r.add(id, Implementation::Binary(optional::optional_map_index));
    }
    r.add("list_first", Implementation::Unary(optional::first));
    r.add("list_last", Implementation::Unary(optional::last));
    for id in ["optional_unwrap", "optional_unwrapOpt"] {
        r.add(id, Implementation::Unary(optional::unwrap));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Key;
    use std::collections::HashSet;

    fn declared_ids() -> Vec<String> {
        cel_types::stdlib::functions()
            .into_iter()
            .chain(cel_types::stdlib::optional_functions())
            .flat_map(|f| f.overloads.into_iter().map(|o| o.id))
            .collect()
    }

    #[test]
    fn every_declared_overload_is_registered() {
        let r = FunctionRegistry::standard();
        let mut missing = Vec::new();
        for id in declared_ids() {
            if !SPECIAL_FORMS.contains(&id.as_str()) && !r.contains(&id) {
                missing.push(id);
            }
        }
        assert!(missing.is_empty(), "not registered: {missing:?}");
        for id in SPECIAL_FORMS {
            assert!(
                !r.contains(id),
                "{id} is special and must not be registered"
            );
        }
    }

    #[test]
    fn every_registered_overload_is_declared() {
        let declared: HashSet<String> = declared_ids().into_iter().collect();
        let r = FunctionRegistry::standard();
        let undeclared: Vec<&str> = r.ids().filter(|id| !declared.contains(*id)).collect();
        assert!(
            undeclared.is_empty(),
            "registered but not declared: {undeclared:?}"
        );
        for id in SPECIAL_FORMS {
            assert!(declared.contains(*id), "{id} is not declared");
        }
    }

    fn call(id: &str, args: &[Value]) -> Result<Value> {
        let r = FunctionRegistry::standard();
        match r.get(id) {
            Some(f) => f.call(args),
            None => Err(Error::new(format!("unregistered {id}"))),
        }
    }

    fn err(r: Result<Value>) -> String {
        r.err().map(|e| e.message).unwrap_or_default()
    }

    #[test]
    fn implementations_check_argument_types() {
        assert_eq!(
            err(call("add_int64", &[Value::Int(1), Value::Uint(1)])),
            "no such overload"
        );
        assert_eq!(
            err(call("less_int64", &[Value::Int(1), Value::Double(1.0)])),
            "no such overload"
        );
        assert_eq!(
            err(call("size_string", &[Value::bytes(vec![1u8])])),
            "no such overload"
        );
        assert_eq!(
            err(call("logical_not", &[Value::Int(1)])),
            "no such overload"
        );
        assert_eq!(err(call("add_int64", &[Value::Int(1)])), "no such overload");
        assert!(matches!(
            call("less_int64_double", &[Value::Int(1), Value::Double(1.5)]),
            Ok(Value::Bool(true))
        ));
        assert!(matches!(
            call(
                "greater_equals_uint64_int64",
                &[Value::Uint(1), Value::Int(-1)]
            ),
            Ok(Value::Bool(true))
        ));
        assert_eq!(
            err(call(
                "less_double",
                &[Value::Double(f64::NAN), Value::Double(1.0)]
            )),
            "NaN values cannot be ordered"
        );
        assert!(matches!(
            call("optional_none", &[]),
            Ok(Value::Optional(None))
        ));
    }

    #[test]
    fn indexing() {
        let l = Value::list(vec![Value::Int(1), Value::Int(2)]);
        assert!(matches!(
            index_list(&l, &Value::Double(1.0)),
            Ok(Value::Int(2))
        ));
        assert!(matches!(index_list(&l, &Value::Uint(0)), Ok(Value::Int(1))));
        assert_eq!(
            err(index_list(&l, &Value::Int(2))),
            "index out of bounds: 2"
        );
        assert_eq!(
            err(index_list(&l, &Value::Int(-1))),
            "index out of bounds: -1"
        );
        assert_eq!(
            err(index_list(&l, &Value::Double(1.5))),
            "unsupported index value 1.5 in list"
        );
        assert_eq!(
            err(index_list(&l, &Value::from("a"))),
            "unsupported index type 'string' in list"
        );
        let m = Value::map([(Key::Int(1), Value::from("a"))]);
        assert!(matches!(
            index_map(&m, &Value::Double(1.0)),
            Ok(Value::String(_))
        ));
        assert!(matches!(
            index_map(&m, &Value::Uint(1)),
            Ok(Value::String(_))
        ));
        assert_eq!(err(index_map(&m, &Value::Double(1.5))), "no such key: 1.5");
        let sm = Value::map([(Key::String("a".into()), Value::Int(1))]);
        assert_eq!(err(index_map(&sm, &Value::from("b"))), "no such key: b");
    }

    #[test]
    fn time_accessors_through_the_table() {
        let t = Value::Timestamp(
            crate::time::parse_timestamp("2023-01-01T02:00:00Z")
                .unwrap_or(crate::Timestamp::utc(0, 0)),
        );
        assert!(matches!(
            call("timestamp_to_hours", std::slice::from_ref(&t)),
            Ok(Value::Int(2))
        ));
        assert!(matches!(
            call(
                "timestamp_to_hours_with_tz",
                &[t.clone(), Value::from("America/Los_Angeles")]
            ),
            Ok(Value::Int(18))
        ));
        assert_eq!(
            err(call(
                "timestamp_to_hours_with_tz",
                &[t, Value::from("Invalid/Zone")]
            )),
            "unknown time zone Invalid/Zone"
        );
        let d = Value::Duration(crate::Duration {
            nanos: 1_234_000_000,
        });
        assert!(matches!(
            call("duration_to_milliseconds", &[d]),
            Ok(Value::Int(1234))
        ));
    }

    #[test]
    fn strings_and_regex_through_the_table() {
        assert!(matches!(
            call("matches_string", &[Value::from("abc"), Value::from("b")]),
            Ok(Value::Bool(true))
        ));
        assert_eq!(
            err(call("matches", &[Value::from("abc"), Value::from("[")])),
            "error parsing regexp: missing closing ]: `[`"
        );
        assert!(matches!(
            call("contains_string", &[Value::from("abc"), Value::from("")]),
            Ok(Value::Bool(true))
        ));
        assert!(matches!(
            call("string_size", &[Value::from("héllo")]),
            Ok(Value::Int(5))
        ));
    }
}
