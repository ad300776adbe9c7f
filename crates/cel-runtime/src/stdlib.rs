//! The standard library's table: an implementation for every overload id declared by
//! `cel_types::stdlib::functions()` and `optional_functions()`, except the few the
//! interpreter evaluates itself ([`SPECIAL_FORMS`]), plus list and map indexing.
//!
//! Every implementation checks the runtime types of its arguments against its overload's
//! signature and answers "no such overload" otherwise, so the same table serves dynamic
//! dispatch of unchecked expressions. The work itself is done by the typed functions of the
//! other modules; this module only matches on [`Value`] variants and forwards.

use cel_types::OlderCelGo;
use cel_types::overloads as ov;
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
    ov::CONDITIONAL,
    ov::LOGICAL_AND,
    ov::LOGICAL_OR,
    ov::NOT_STRICTLY_FALSE,
    ov::OPTIONAL_OR_OPTIONAL,
    ov::OPTIONAL_OR_VALUE_VALUE,
    ov::SELECT_OPTIONAL_FIELD,
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

/// The four relational overloads of one pair of operand types: `<`, `<=`, `>`, `>=`.
macro_rules! relations {
    ($r:expr, [$lt:expr, $le:expr, $gt:expr, $ge:expr], $A:ident, $B:ident) => {
        relations!(@one $r, $lt, $A, $B, Ordering::is_lt);
        relations!(@one $r, $le, $A, $B, Ordering::is_le);
        relations!(@one $r, $gt, $A, $B, Ordering::is_gt);
        relations!(@one $r, $ge, $A, $B, Ordering::is_ge);
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
    ($r:expr, $id:expr, $tz_id:expr, $field:expr) => {
        unary!($r, $id, |t: Timestamp| Ok(Value::Int(
            time::timestamp_field_utc(*t, $field)
        )));
        binary!($r, $tz_id, |t: Timestamp, z: String| Ok(Value::Int(
            time::timestamp_field(*t, $field, z)?
        )));
    };
}

/// The accessors with a time zone, as cel-go before v0.29 read offsets: minutes unchecked
/// (A20 of `docs/cel-go-versions.md`).
macro_rules! timestamp_field_unchecked {
    ($r:expr, $($tz_id:expr => $field:expr),* $(,)?) => {
        $(binary!($r, $tz_id, |t: Timestamp, z: String| Ok(Value::Int(
            time::timestamp_field_unchecked_minutes(*t, $field, z)?
        )));)*
    };
}

/// Replaces the implementations whose behaviour an older cel-go had (see [`OlderCelGo`]).
pub(crate) fn register_older(r: &mut FunctionRegistry, older: OlderCelGo) {
    if older.time_zone_minutes_unchecked {
        timestamp_field_unchecked!(r,
            ov::TIMESTAMP_TO_YEAR_WITH_TZ => TimeField::FullYear,
            ov::TIMESTAMP_TO_MONTH_WITH_TZ => TimeField::Month,
            ov::TIMESTAMP_TO_DAY_OF_YEAR_WITH_TZ => TimeField::DayOfYear,
            ov::TIMESTAMP_TO_DAY_OF_MONTH_WITH_TZ => TimeField::DayOfMonth,
            ov::TIMESTAMP_TO_DAY_OF_MONTH_1_BASED_WITH_TZ => TimeField::Date,
            ov::TIMESTAMP_TO_DAY_OF_WEEK_WITH_TZ => TimeField::DayOfWeek,
            ov::TIMESTAMP_TO_HOURS_WITH_TZ => TimeField::Hours,
            ov::TIMESTAMP_TO_MINUTES_WITH_TZ => TimeField::Minutes,
            ov::TIMESTAMP_TO_SECONDS_TZ => TimeField::Seconds,
            ov::TIMESTAMP_TO_MILLISECONDS_WITH_TZ => TimeField::Milliseconds,
        );
    }
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
        ov::LOGICAL_NOT,
        Implementation::Unary(|v| match v {
            Value::Bool(b) => Ok(Value::Bool(!b)),
            _ => Err(no_such_overload()),
        }),
    );
    r.add(
        ov::EQUALS,
        Implementation::Binary(|a, b| Ok(Value::Bool(compare::equals(a, b)))),
    );
    r.add(
        ov::NOT_EQUALS,
        Implementation::Binary(|a, b| Ok(Value::Bool(!compare::equals(a, b)))),
    );

    binary!(r, ov::ADD_INT64, |a: Int, b: Int| Ok(Value::Int(
        arith::add_int(*a, *b)?
    )));
    binary!(r, ov::ADD_UINT64, |a: Uint, b: Uint| Ok(Value::Uint(
        arith::add_uint(*a, *b)?
    )));
    binary!(r, ov::ADD_DOUBLE, |a: Double, b: Double| Ok(Value::Double(
        a + b
    )));
    binary!(r, ov::ADD_STRING, |a: String, b: String| Ok(Value::String(
        arith::concat_strings(a, b)?
    )));
    binary!(r, ov::ADD_BYTES, |a: Bytes, b: Bytes| Ok(Value::Bytes(
        arith::concat_bytes(a, b)?
    )));
    binary!(r, ov::ADD_LIST, |a: List, b: List| Ok(Value::List(
        arith::concat_lists(a, b)?
    )));
    binary!(r, ov::ADD_DURATION_DURATION, |a: Duration, b: Duration| Ok(
        Value::Duration(arith::add_durations(*a, *b)?)
    ));
    binary!(
        r,
        ov::ADD_TIMESTAMP_DURATION,
        |a: Timestamp, b: Duration| Ok(Value::Timestamp(arith::add_timestamp_duration(*a, *b)?))
    );
    binary!(
        r,
        ov::ADD_DURATION_TIMESTAMP,
        |a: Duration, b: Timestamp| Ok(Value::Timestamp(arith::add_timestamp_duration(*b, *a)?))
    );

    binary!(r, ov::SUBTRACT_INT64, |a: Int, b: Int| Ok(Value::Int(
        arith::sub_int(*a, *b)?
    )));
    binary!(r, ov::SUBTRACT_UINT64, |a: Uint, b: Uint| Ok(Value::Uint(
        arith::sub_uint(*a, *b)?
    )));
    binary!(r, ov::SUBTRACT_DOUBLE, |a: Double, b: Double| Ok(
        Value::Double(a - b)
    ));
    binary!(
        r,
        ov::SUBTRACT_DURATION_DURATION,
        |a: Duration, b: Duration| Ok(Value::Duration(arith::sub_durations(*a, *b)?))
    );
    binary!(
        r,
        ov::SUBTRACT_TIMESTAMP_DURATION,
        |a: Timestamp, b: Duration| Ok(Value::Timestamp(arith::sub_timestamp_duration(*a, *b)?))
    );
    binary!(
        r,
        ov::SUBTRACT_TIMESTAMP_TIMESTAMP,
        |a: Timestamp, b: Timestamp| Ok(Value::Duration(arith::sub_timestamps(*a, *b)?))
    );

    binary!(r, ov::MULTIPLY_INT64, |a: Int, b: Int| Ok(Value::Int(
        arith::mul_int(*a, *b)?
    )));
    binary!(r, ov::MULTIPLY_UINT64, |a: Uint, b: Uint| Ok(Value::Uint(
        arith::mul_uint(*a, *b)?
    )));
    binary!(r, ov::MULTIPLY_DOUBLE, |a: Double, b: Double| Ok(
        Value::Double(a * b)
    ));

    binary!(r, ov::DIVIDE_INT64, |a: Int, b: Int| Ok(Value::Int(
        arith::div_int(*a, *b)?
    )));
    binary!(r, ov::DIVIDE_UINT64, |a: Uint, b: Uint| Ok(Value::Uint(
        arith::div_uint(*a, *b)?
    )));
    binary!(r, ov::DIVIDE_DOUBLE, |a: Double, b: Double| Ok(
        Value::Double(a / b)
    ));

    binary!(r, ov::MODULO_INT64, |a: Int, b: Int| Ok(Value::Int(
        arith::rem_int(*a, *b)?
    )));
    binary!(r, ov::MODULO_UINT64, |a: Uint, b: Uint| Ok(Value::Uint(
        arith::rem_uint(*a, *b)?
    )));

    unary!(r, ov::NEGATE_INT64, |a: Int| Ok(Value::Int(
        arith::neg_int(*a)?
    )));
    unary!(r, ov::NEGATE_DOUBLE, |a: Double| Ok(Value::Double(-a)));
}

fn register_relations(r: &mut FunctionRegistry) {
    relations!(
        r,
        [
            ov::LESS_BOOL,
            ov::LESS_EQUALS_BOOL,
            ov::GREATER_BOOL,
            ov::GREATER_EQUALS_BOOL
        ],
        Bool,
        Bool
    );
    relations!(
        r,
        [
            ov::LESS_INT64,
            ov::LESS_EQUALS_INT64,
            ov::GREATER_INT64,
            ov::GREATER_EQUALS_INT64
        ],
        Int,
        Int
    );
    relations!(
        r,
        [
            ov::LESS_INT64_DOUBLE,
            ov::LESS_EQUALS_INT64_DOUBLE,
            ov::GREATER_INT64_DOUBLE,
            ov::GREATER_EQUALS_INT64_DOUBLE
        ],
        Int,
        Double
    );
    relations!(
        r,
        [
            ov::LESS_INT64_UINT64,
            ov::LESS_EQUALS_INT64_UINT64,
            ov::GREATER_INT64_UINT64,
            ov::GREATER_EQUALS_INT64_UINT64
        ],
        Int,
        Uint
    );
    relations!(
        r,
        [
            ov::LESS_UINT64,
            ov::LESS_EQUALS_UINT64,
            ov::GREATER_UINT64,
            ov::GREATER_EQUALS_UINT64
        ],
        Uint,
        Uint
    );
    relations!(
        r,
        [
            ov::LESS_UINT64_DOUBLE,
            ov::LESS_EQUALS_UINT64_DOUBLE,
            ov::GREATER_UINT64_DOUBLE,
            ov::GREATER_EQUALS_UINT64_DOUBLE
        ],
        Uint,
        Double
    );
    relations!(
        r,
        [
            ov::LESS_UINT64_INT64,
            ov::LESS_EQUALS_UINT64_INT64,
            ov::GREATER_UINT64_INT64,
            ov::GREATER_EQUALS_UINT64_INT64
        ],
        Uint,
        Int
    );
    relations!(
        r,
        [
            ov::LESS_DOUBLE,
            ov::LESS_EQUALS_DOUBLE,
            ov::GREATER_DOUBLE,
            ov::GREATER_EQUALS_DOUBLE
        ],
        Double,
        Double
    );
    relations!(
        r,
        [
            ov::LESS_DOUBLE_INT64,
            ov::LESS_EQUALS_DOUBLE_INT64,
            ov::GREATER_DOUBLE_INT64,
            ov::GREATER_EQUALS_DOUBLE_INT64
        ],
        Double,
        Int
    );
    relations!(
        r,
        [
            ov::LESS_DOUBLE_UINT64,
            ov::LESS_EQUALS_DOUBLE_UINT64,
            ov::GREATER_DOUBLE_UINT64,
            ov::GREATER_EQUALS_DOUBLE_UINT64
        ],
        Double,
        Uint
    );
    relations!(
        r,
        [
            ov::LESS_STRING,
            ov::LESS_EQUALS_STRING,
            ov::GREATER_STRING,
            ov::GREATER_EQUALS_STRING
        ],
        String,
        String
    );
    relations!(
        r,
        [
            ov::LESS_BYTES,
            ov::LESS_EQUALS_BYTES,
            ov::GREATER_BYTES,
            ov::GREATER_EQUALS_BYTES
        ],
        Bytes,
        Bytes
    );
    relations!(
        r,
        [
            ov::LESS_TIMESTAMP,
            ov::LESS_EQUALS_TIMESTAMP,
            ov::GREATER_TIMESTAMP,
            ov::GREATER_EQUALS_TIMESTAMP
        ],
        Timestamp,
        Timestamp
    );
    relations!(
        r,
        [
            ov::LESS_DURATION,
            ov::LESS_EQUALS_DURATION,
            ov::GREATER_DURATION,
            ov::GREATER_EQUALS_DURATION
        ],
        Duration,
        Duration
    );
}

fn register_collections(r: &mut FunctionRegistry) {
    r.add(ov::INDEX_LIST, Implementation::Binary(index_list));
    r.add(ov::INDEX_MAP, Implementation::Binary(index_map));
    r.add(
        ov::IN_LIST,
        Implementation::Binary(|e, l| match l {
            Value::List(l) => Ok(Value::Bool(compare::in_list(e, l))),
            _ => Err(no_such_overload()),
        }),
    );
    r.add(
        ov::IN_MAP,
        Implementation::Binary(|k, m| match m {
            Value::Map(m) => Ok(Value::Bool(compare::in_map(k, m))),
            Value::Object(o) => Ok(Value::Bool(
                matches!(k, Value::String(k) if o.get(k).is_some()),
            )),
            _ => Err(no_such_overload()),
        }),
    );
    for id in [ov::SIZE_STRING, ov::STRING_SIZE] {
        unary!(r, id, |s: String| Ok(Value::Int(strings::size_string(s))));
    }
    for id in [ov::SIZE_BYTES, ov::BYTES_SIZE] {
        unary!(r, id, |b: Bytes| Ok(Value::Int(strings::size_bytes(b))));
    }
    for id in [ov::SIZE_LIST, ov::LIST_SIZE] {
        unary!(r, id, |l: List| Ok(Value::Int(l.len() as i64)));
    }
    for id in [ov::SIZE_MAP, ov::MAP_SIZE] {
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
    r.add(ov::TYPE, Implementation::Unary(convert::to_type));
    r.add(ov::TO_DYN, Implementation::Unary(convert::to_dyn));

    unary!(r, ov::BOOL_TO_BOOL, |b: Bool| Ok(Value::Bool(*b)));
    unary!(r, ov::STRING_TO_BOOL, |s: String| Ok(Value::Bool(
        convert::bool_from_string(s)?
    )));

    unary!(r, ov::BYTES_TO_BYTES, |b: Bytes| Ok(Value::Bytes(
        b.clone()
    )));
    unary!(r, ov::STRING_TO_BYTES, |s: String| Ok(Value::Bytes(
        s.as_bytes().into()
    )));

    unary!(r, ov::DOUBLE_TO_DOUBLE, |d: Double| Ok(Value::Double(*d)));
    unary!(r, ov::INT64_TO_DOUBLE, |i: Int| Ok(Value::Double(
        *i as f64
    )));
    unary!(r, ov::UINT64_TO_DOUBLE, |u: Uint| Ok(Value::Double(
        *u as f64
    )));
    unary!(r, ov::STRING_TO_DOUBLE, |s: String| Ok(Value::Double(
        convert::double_from_string(s)?
    )));

    unary!(r, ov::DURATION_TO_DURATION, |d: Duration| Ok(
        Value::Duration(*d)
    ));
    unary!(r, ov::INT64_TO_DURATION, |_i: Int| convert::to_duration(
        &Value::Int(*_i)
    ));
    unary!(r, ov::STRING_TO_DURATION, |s: String| Ok(Value::Duration(
        convert::duration_from_string(s)?
    )));

    unary!(r, ov::INT64_TO_INT64, |i: Int| Ok(Value::Int(*i)));
    unary!(r, ov::DOUBLE_TO_INT64, |d: Double| Ok(Value::Int(
        convert::int_from_double(*d)?
    )));
    unary!(r, ov::DURATION_TO_INT64, |d: Duration| Ok(Value::Int(
        convert::int_from_duration(*d)
    )));
    unary!(r, ov::STRING_TO_INT64, |s: String| Ok(Value::Int(
        convert::int_from_string(s)?
    )));
    unary!(r, ov::TIMESTAMP_TO_INT64, |t: Timestamp| Ok(Value::Int(
        convert::int_from_timestamp(*t)
    )));
    unary!(r, ov::UINT64_TO_INT64, |u: Uint| Ok(Value::Int(
        convert::int_from_uint(*u)?
    )));

    unary!(r, ov::STRING_TO_STRING, |s: String| Ok(Value::String(
        s.clone()
    )));
    r.add(ov::BOOL_TO_STRING, Implementation::Unary(to_string_of_bool));
    r.add(
        ov::BYTES_TO_STRING,
        Implementation::Unary(to_string_of_bytes),
    );
    r.add(
        ov::DOUBLE_TO_STRING,
        Implementation::Unary(to_string_of_double),
    );
    r.add(
        ov::DURATION_TO_STRING,
        Implementation::Unary(to_string_of_duration),
    );
    r.add(ov::INT64_TO_STRING, Implementation::Unary(to_string_of_int));
    r.add(
        ov::TIMESTAMP_TO_STRING,
        Implementation::Unary(to_string_of_timestamp),
    );
    r.add(
        ov::UINT64_TO_STRING,
        Implementation::Unary(to_string_of_uint),
    );

    unary!(r, ov::TIMESTAMP_TO_TIMESTAMP, |t: Timestamp| Ok(
        Value::Timestamp(*t)
    ));
    unary!(r, ov::INT64_TO_TIMESTAMP, |i: Int| Ok(Value::Timestamp(
        convert::timestamp_from_int(*i)?
    )));
    unary!(r, ov::STRING_TO_TIMESTAMP, |s: String| Ok(
        Value::Timestamp(convert::timestamp_from_string(s)?)
    ));

    unary!(r, ov::UINT64_TO_UINT64, |u: Uint| Ok(Value::Uint(*u)));
    unary!(r, ov::DOUBLE_TO_UINT64, |d: Double| Ok(Value::Uint(
        convert::uint_from_double(*d)?
    )));
    unary!(r, ov::INT64_TO_UINT64, |i: Int| Ok(Value::Uint(
        convert::uint_from_int(*i)?
    )));
    unary!(r, ov::STRING_TO_UINT64, |s: String| Ok(Value::Uint(
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
    binary!(r, ov::CONTAINS_STRING, |s: String, t: String| Ok(
        Value::Bool(strings::contains(s, t))
    ));
    binary!(r, ov::STARTS_WITH_STRING, |s: String, t: String| Ok(
        Value::Bool(strings::starts_with(s, t))
    ));
    binary!(r, ov::ENDS_WITH_STRING, |s: String, t: String| Ok(
        Value::Bool(strings::ends_with(s, t))
    ));
    for id in [ov::MATCHES, ov::MATCHES_STRING] {
        binary!(r, id, |s: String, p: String| Ok(Value::Bool(
            regex::matches(s, p)?
        )));
    }
}

fn register_time(r: &mut FunctionRegistry) {
    timestamp_field!(
        r,
        ov::TIMESTAMP_TO_YEAR,
        ov::TIMESTAMP_TO_YEAR_WITH_TZ,
        TimeField::FullYear
    );
    timestamp_field!(
        r,
        ov::TIMESTAMP_TO_MONTH,
        ov::TIMESTAMP_TO_MONTH_WITH_TZ,
        TimeField::Month
    );
    timestamp_field!(
        r,
        ov::TIMESTAMP_TO_DAY_OF_YEAR,
        ov::TIMESTAMP_TO_DAY_OF_YEAR_WITH_TZ,
        TimeField::DayOfYear
    );
    timestamp_field!(
        r,
        ov::TIMESTAMP_TO_DAY_OF_MONTH,
        ov::TIMESTAMP_TO_DAY_OF_MONTH_WITH_TZ,
        TimeField::DayOfMonth
    );
    timestamp_field!(
        r,
        ov::TIMESTAMP_TO_DAY_OF_MONTH_1_BASED,
        ov::TIMESTAMP_TO_DAY_OF_MONTH_1_BASED_WITH_TZ,
        TimeField::Date
    );
    timestamp_field!(
        r,
        ov::TIMESTAMP_TO_DAY_OF_WEEK,
        ov::TIMESTAMP_TO_DAY_OF_WEEK_WITH_TZ,
        TimeField::DayOfWeek
    );
    timestamp_field!(
        r,
        ov::TIMESTAMP_TO_HOURS,
        ov::TIMESTAMP_TO_HOURS_WITH_TZ,
        TimeField::Hours
    );
    timestamp_field!(
        r,
        ov::TIMESTAMP_TO_MINUTES,
        ov::TIMESTAMP_TO_MINUTES_WITH_TZ,
        TimeField::Minutes
    );
    timestamp_field!(
        r,
        ov::TIMESTAMP_TO_SECONDS,
        ov::TIMESTAMP_TO_SECONDS_TZ,
        TimeField::Seconds
    );
    timestamp_field!(
        r,
        ov::TIMESTAMP_TO_MILLISECONDS,
        ov::TIMESTAMP_TO_MILLISECONDS_WITH_TZ,
        TimeField::Milliseconds
    );
    unary!(r, ov::DURATION_TO_HOURS, |d: Duration| Ok(Value::Int(
        time::duration_hours(*d)
    )));
    unary!(r, ov::DURATION_TO_MINUTES, |d: Duration| Ok(Value::Int(
        time::duration_minutes(*d)
    )));
    unary!(r, ov::DURATION_TO_SECONDS, |d: Duration| Ok(Value::Int(
        time::duration_seconds(*d)
    )));
    unary!(r, ov::DURATION_TO_MILLISECONDS, |d: Duration| Ok(
        Value::Int(time::duration_milliseconds(*d))
    ));
}

fn register_optionals(r: &mut FunctionRegistry) {
    r.add(ov::OPTIONAL_OF, Implementation::Unary(optional::of));
    r.add(
        ov::OPTIONAL_OF_NON_ZERO_VALUE,
        Implementation::Unary(optional::of_non_zero_value),
    );
    r.add(ov::OPTIONAL_NONE, Implementation::Nary(optional::none));
    r.add(
        ov::OPTIONAL_HAS_VALUE,
        Implementation::Unary(optional::has_value),
    );
    r.add(ov::OPTIONAL_VALUE, Implementation::Unary(optional::value));
    r.add(
        ov::LIST_OPTINDEX_OPTIONAL_INT,
        Implementation::Binary(optional::list_opt_index),
    );
    r.add(
        ov::MAP_OPTINDEX_OPTIONAL_VALUE,
        Implementation::Binary(optional::map_opt_index),
    );
    for id in [
        ov::OPTIONAL_LIST_OPTINDEX_OPTIONAL_INT,
        ov::OPTIONAL_LIST_INDEX_INT,
    ] {
        r.add(id, Implementation::Binary(optional::optional_list_index));
    }
    for id in [
        ov::OPTIONAL_MAP_OPTINDEX_OPTIONAL_VALUE,
        ov::OPTIONAL_MAP_INDEX_VALUE,
    ] {
        r.add(id, Implementation::Binary(optional::optional_map_index));
    }
    r.add(ov::LIST_FIRST, Implementation::Unary(optional::first));
    r.add(ov::LIST_LAST, Implementation::Unary(optional::last));
    for id in [ov::OPTIONAL_UNWRAP, ov::OPTIONAL_UNWRAP_OPT] {
        r.add(id, Implementation::Unary(optional::unwrap));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Key;
    use std::collections::HashSet;

    /// Every standard overload, with those only older cel-go releases declare.
    fn declared_ids() -> Vec<String> {
        cel_types::stdlib::functions()
            .into_iter()
            .chain(cel_types::stdlib::optional_functions())
            .chain([cel_types::stdlib::int_to_duration()])
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
            err(call(ov::ADD_INT64, &[Value::Int(1), Value::Uint(1)])),
            "no such overload"
        );
        assert_eq!(
            err(call(ov::LESS_INT64, &[Value::Int(1), Value::Double(1.0)])),
            "no such overload"
        );
        assert_eq!(
            err(call(ov::SIZE_STRING, &[Value::bytes(vec![1u8])])),
            "no such overload"
        );
        assert_eq!(
            err(call("logical_not", &[Value::Int(1)])),
            "no such overload"
        );
        assert_eq!(
            err(call(ov::ADD_INT64, &[Value::Int(1)])),
            "no such overload"
        );
        assert!(matches!(
            call(ov::LESS_INT64_DOUBLE, &[Value::Int(1), Value::Double(1.5)]),
            Ok(Value::Bool(true))
        ));
        assert!(matches!(
            call(
                ov::GREATER_EQUALS_UINT64_INT64,
                &[Value::Uint(1), Value::Int(-1)]
            ),
            Ok(Value::Bool(true))
        ));
        assert_eq!(
            err(call(
                ov::LESS_DOUBLE,
                &[Value::Double(f64::NAN), Value::Double(1.0)]
            )),
            "NaN values cannot be ordered"
        );
        assert!(matches!(
            call(ov::OPTIONAL_NONE, &[]),
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
            call(ov::TIMESTAMP_TO_HOURS, std::slice::from_ref(&t)),
            Ok(Value::Int(2))
        ));
        assert!(matches!(
            call(
                ov::TIMESTAMP_TO_HOURS_WITH_TZ,
                &[t.clone(), Value::from("America/Los_Angeles")]
            ),
            Ok(Value::Int(18))
        ));
        assert_eq!(
            err(call(
                ov::TIMESTAMP_TO_HOURS_WITH_TZ,
                &[t, Value::from("Invalid/Zone")]
            )),
            "unknown time zone Invalid/Zone"
        );
        let d = Value::Duration(crate::Duration {
            nanos: 1_234_000_000,
        });
        assert!(matches!(
            call(ov::DURATION_TO_MILLISECONDS, &[d]),
            Ok(Value::Int(1234))
        ));
    }

    #[test]
    fn strings_and_regex_through_the_table() {
        assert!(matches!(
            call(ov::MATCHES_STRING, &[Value::from("abc"), Value::from("b")]),
            Ok(Value::Bool(true))
        ));
        assert_eq!(
            err(call("matches", &[Value::from("abc"), Value::from("[")])),
            "error parsing regexp: missing closing ]: `[`"
        );
        assert!(matches!(
            call(ov::CONTAINS_STRING, &[Value::from("abc"), Value::from("")]),
            Ok(Value::Bool(true))
        ));
        assert!(matches!(
            call(ov::STRING_SIZE, &[Value::from("héllo")]),
            Ok(Value::Int(5))
        ));
    }
}
