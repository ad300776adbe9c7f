//! Arithmetic: checked `int` and `uint` operations with cel-go's error texts, IEEE doubles,
//! timestamp and duration arithmetic with range checks, and concatenation of strings, bytes
//! and lists.
//!
//! The typed functions (`add_int`, `add_timestamp_duration`, ...) are what generated code
//! calls; the `Value` functions ([`add`], [`subtract`], ...) dispatch on the runtime types of
//! their operands the way cel-go's `_+_`, `_-_`, ... do, and answer "no such overload" for
//! operands no overload accepts.
//!
//! Error texts: "integer overflow", "unsigned integer overflow", "division by zero",
//! "modulus by zero", "timestamp overflow".

use std::sync::Arc;

use crate::limits;
use crate::time::checked_timestamp;
use crate::{Duration, Error, ListValue, Result, Timestamp, Value};

/// "integer overflow".
#[cold]
pub fn int_overflow() -> Error {
    Error::new("integer overflow")
}

/// "unsigned integer overflow".
#[cold]
pub fn uint_overflow() -> Error {
    Error::new("unsigned integer overflow")
}

/// "division by zero".
#[cold]
pub fn division_by_zero() -> Error {
    Error::new("division by zero")
}

/// "modulus by zero".
#[cold]
pub fn modulus_by_zero() -> Error {
    Error::new("modulus by zero")
}

/// `int + int`.
#[inline]
pub fn add_int(a: i64, b: i64) -> Result<i64> {
    a.checked_add(b).ok_or_else(int_overflow)
}

/// `int - int`.
#[inline]
pub fn sub_int(a: i64, b: i64) -> Result<i64> {
    a.checked_sub(b).ok_or_else(int_overflow)
}

/// `int * int`.
#[inline]
pub fn mul_int(a: i64, b: i64) -> Result<i64> {
    a.checked_mul(b).ok_or_else(int_overflow)
}

/// `int / int`, truncating toward zero. `i64::MIN / -1` is an overflow.
#[inline]
pub fn div_int(a: i64, b: i64) -> Result<i64> {
    if b == 0 {
        return Err(division_by_zero());
    }
    a.checked_div(b).ok_or_else(int_overflow)
}

/// `int % int`, with the sign of the dividend. `i64::MIN % -1` is an overflow, as in cel-go.
#[inline]
pub fn rem_int(a: i64, b: i64) -> Result<i64> {
    if b == 0 {
        return Err(modulus_by_zero());
    }
    a.checked_rem(b).ok_or_else(int_overflow)
}

/// `-int`.
#[inline]
pub fn neg_int(a: i64) -> Result<i64> {
    a.checked_neg().ok_or_else(int_overflow)
}

/// `uint + uint`.
#[inline]
pub fn add_uint(a: u64, b: u64) -> Result<u64> {
    a.checked_add(b).ok_or_else(uint_overflow)
}

/// `uint - uint`.
#[inline]
pub fn sub_uint(a: u64, b: u64) -> Result<u64> {
    a.checked_sub(b).ok_or_else(uint_overflow)
}

/// `uint * uint`.
#[inline]
pub fn mul_uint(a: u64, b: u64) -> Result<u64> {
    a.checked_mul(b).ok_or_else(uint_overflow)
}

/// `uint / uint`.
#[inline]
pub fn div_uint(a: u64, b: u64) -> Result<u64> {
    a.checked_div(b).ok_or_else(division_by_zero)
}

/// `uint % uint`.
#[inline]
pub fn rem_uint(a: u64, b: u64) -> Result<u64> {
    a.checked_rem(b).ok_or_else(modulus_by_zero)
}

/// `duration + duration`.
#[inline]
pub fn add_durations(a: Duration, b: Duration) -> Result<Duration> {
    Ok(Duration {
        nanos: add_int(a.nanos, b.nanos)?,
    })
}

/// `duration - duration`.
#[inline]
pub fn sub_durations(a: Duration, b: Duration) -> Result<Duration> {
    Ok(Duration {
        nanos: sub_int(a.nanos, b.nanos)?,
    })
}

/// `timestamp + duration` (and `duration + timestamp`). The result keeps the timestamp's UTC
/// offset; outside the valid range → "timestamp overflow".
pub fn add_timestamp_duration(ts: Timestamp, d: Duration) -> Result<Timestamp> {
    let mut seconds = add_int(ts.seconds, d.nanos / 1_000_000_000)?;
    let mut nanos = i64::from(ts.nanos) + d.nanos % 1_000_000_000;
    if nanos < 0 {
        seconds = add_int(seconds, -1)?;
        nanos += 1_000_000_000;
    } else if nanos >= 1_000_000_000 {
        seconds = add_int(seconds, 1)?;
        nanos -= 1_000_000_000;
    }
    // `nanos` is in 0..1e9 for well-formed inputs; anything else is rejected as out of range.
    let nanos = u32::try_from(nanos).unwrap_or(u32::MAX);
    checked_timestamp(seconds, nanos, ts.offset_seconds)
}

/// `timestamp - duration`: adds the negated duration (negating `i64::MIN` nanoseconds is an
/// "integer overflow", as in cel-go).
pub fn sub_timestamp_duration(ts: Timestamp, d: Duration) -> Result<Timestamp> {
    add_timestamp_duration(
        ts,
        Duration {
            nanos: neg_int(d.nanos)?,
        },
    )
}

/// `timestamp - timestamp`: the duration between two instants; "integer overflow" when it does
/// not fit int64 nanoseconds.
pub fn sub_timestamps(a: Timestamp, b: Timestamp) -> Result<Duration> {
    let seconds = sub_int(a.seconds, b.seconds)?;
    let nanos = i64::from(a.nanos) - i64::from(b.nanos);
    let total = add_int(mul_int(seconds, 1_000_000_000)?, nanos)?;
    Ok(Duration { nanos: total })
}

/// `string + string`; an error rather than a result over [`limits::MAX_RESULT_BYTES`].
pub fn concat_strings(a: &Arc<str>, b: &Arc<str>) -> Result<Arc<str>> {
    if b.is_empty() {
        return Ok(a.clone());
    }
    if a.is_empty() {
        return Ok(b.clone());
    }
    limits::check_bytes("_+_", a.len() as u128 + b.len() as u128)?;
    Ok(joined_str([&**a, &**b], a.len() + b.len()))
}

/// Results up to this many bytes are joined in [`joined_str`]'s reused buffer; a larger one
/// is built in a `String` of its own (its copy outweighs an allocation), so that the buffer
/// a thread keeps stays small.
const SCRATCH_BYTES: usize = 4096;

thread_local! {
    /// Where [`joined_str`] joins small results before they are copied into their `Arc`.
    static SCRATCH: std::cell::RefCell<String> =
        const { std::cell::RefCell::new(String::new()) };
}

/// The pieces, `bytes` long together (the caller has measured them), joined into one shared
/// string, in one allocation when the result is small: `String::into` an `Arc<str>`
/// allocates again and copies, which made a concatenation in a comprehension's loop twice
/// the allocator's work it needs to be.
pub fn joined_str<'a>(pieces: impl IntoIterator<Item = &'a str>, bytes: usize) -> Arc<str> {
    if bytes > SCRATCH_BYTES {
        return Arc::from(pieces.into_iter().collect::<String>());
    }
    SCRATCH.with_borrow_mut(|scratch| {
        scratch.clear();
        scratch.extend(pieces);
        Arc::from(scratch.as_str())
    })
}

/// `bytes + bytes`; an error rather than a result over [`limits::MAX_RESULT_BYTES`].
pub fn concat_bytes(a: &Arc<[u8]>, b: &Arc<[u8]>) -> Result<Arc<[u8]>> {
    if b.is_empty() {
        return Ok(a.clone());
    }
    if a.is_empty() {
        return Ok(b.clone());
    }
    limits::check_bytes("_+_", a.len() as u128 + b.len() as u128)?;
    // A chain of two slices' elements has a known length: the `Arc` is allocated once.
    Ok(a.iter().chain(b.iter()).copied().collect())
}

/// `list + list`. An empty operand returns the other list without copying; a result over
/// [`limits::MAX_LIST_ELEMENTS`] is an error (cel-go charges 1 for any concatenation, so
/// the cost limit does not bound it).
pub fn concat_lists(a: &Arc<ListValue>, b: &Arc<ListValue>) -> Result<Arc<ListValue>> {
    // A set or map list on the left makes `+` a union or a merge (Kubernetes' list types).
    match a.semantics.as_deref() {
        None => {}
        Some(crate::object::ListSemantics::Set) => {
            return crate::object::set_union(a, b).map(Arc::new);
        }
        Some(crate::object::ListSemantics::Map { keys }) => {
            return crate::object::map_list_merge(a, keys, b).map(Arc::new);
        }
    }
    if b.is_empty() {
        return Ok(a.clone());
    }
    if a.is_empty() {
        return Ok(b.clone());
    }
    limits::check_elements("_+_", a.len() as u128 + b.len() as u128)?;
    let mut items = Vec::with_capacity(a.len() + b.len());
    items.extend(a.iter().cloned());
    items.extend(b.iter().cloned());
    Ok(Arc::new(ListValue::new(items)))
}

/// `_+_` on any operands.
pub fn add(a: &Value, b: &Value) -> Result<Value> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Value::Int(add_int(*x, *y)?),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(add_uint(*x, *y)?),
        (Value::Double(x), Value::Double(y)) => Value::Double(x + y),
        (Value::String(x), Value::String(y)) => Value::String(concat_strings(x, y)?),
        (Value::Bytes(x), Value::Bytes(y)) => Value::Bytes(concat_bytes(x, y)?),
        (Value::List(x), Value::List(y)) => Value::List(concat_lists(x, y)?),
        (Value::Duration(x), Value::Duration(y)) => Value::Duration(add_durations(*x, *y)?),
        (Value::Timestamp(t), Value::Duration(d)) | (Value::Duration(d), Value::Timestamp(t)) => {
            Value::Timestamp(add_timestamp_duration(*t, *d)?)
        }
        _ => return Err(Error::no_such_overload()),
    })
}

/// `_-_` on any operands.
pub fn subtract(a: &Value, b: &Value) -> Result<Value> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Value::Int(sub_int(*x, *y)?),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(sub_uint(*x, *y)?),
        (Value::Double(x), Value::Double(y)) => Value::Double(x - y),
        (Value::Duration(x), Value::Duration(y)) => Value::Duration(sub_durations(*x, *y)?),
        (Value::Timestamp(t), Value::Duration(d)) => {
            Value::Timestamp(sub_timestamp_duration(*t, *d)?)
        }
        (Value::Timestamp(x), Value::Timestamp(y)) => Value::Duration(sub_timestamps(*x, *y)?),
        _ => return Err(Error::no_such_overload()),
    })
}

/// `_*_` on any operands.
pub fn multiply(a: &Value, b: &Value) -> Result<Value> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Value::Int(mul_int(*x, *y)?),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(mul_uint(*x, *y)?),
        (Value::Double(x), Value::Double(y)) => Value::Double(x * y),
        _ => return Err(Error::no_such_overload()),
    })
}

/// `_/_` on any operands.
pub fn divide(a: &Value, b: &Value) -> Result<Value> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Value::Int(div_int(*x, *y)?),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(div_uint(*x, *y)?),
        (Value::Double(x), Value::Double(y)) => Value::Double(x / y),
        _ => return Err(Error::no_such_overload()),
    })
}

/// `_%_` on any operands (there is no `%` on doubles).
pub fn modulo(a: &Value, b: &Value) -> Result<Value> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Value::Int(rem_int(*x, *y)?),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(rem_uint(*x, *y)?),
        _ => return Err(Error::no_such_overload()),
    })
}

/// `-_` on any operand (ints and doubles only: there is no negation of uints or durations).
pub fn negate(a: &Value) -> Result<Value> {
    Ok(match a {
        Value::Int(x) => Value::Int(neg_int(*x)?),
        Value::Double(x) => Value::Double(-x),
        _ => return Err(Error::no_such_overload()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::parse_timestamp;

    fn msg<T: std::fmt::Debug>(r: Result<T>) -> String {
        r.err().map(|e| e.message).unwrap_or_default()
    }

    #[test]
    fn int_overflow_and_division() {
        assert_eq!(msg(add_int(i64::MAX, 1)), "integer overflow");
        assert_eq!(msg(sub_int(i64::MIN, 1)), "integer overflow");
        assert_eq!(msg(mul_int(i64::MAX, 2)), "integer overflow");
        assert_eq!(msg(neg_int(i64::MIN)), "integer overflow");
        assert_eq!(msg(div_int(i64::MIN, -1)), "integer overflow");
        assert_eq!(msg(rem_int(i64::MIN, -1)), "integer overflow");
        assert_eq!(div_int(-5, 3), Ok(-1));
        assert_eq!(rem_int(-5, 3), Ok(-2));
        assert_eq!(rem_int(5, -3), Ok(2));
        assert_eq!(msg(div_int(1, 0)), "division by zero");
        assert_eq!(msg(rem_int(1, 0)), "modulus by zero");
    }

    #[test]
    fn uint_overflow_and_division() {
        assert_eq!(msg(sub_uint(0, 1)), "unsigned integer overflow");
        assert_eq!(msg(sub_uint(1, 2)), "unsigned integer overflow");
        assert_eq!(msg(add_uint(u64::MAX, 1)), "unsigned integer overflow");
        assert_eq!(msg(mul_uint(u64::MAX, 2)), "unsigned integer overflow");
        assert_eq!(msg(div_uint(5, 0)), "division by zero");
        assert_eq!(msg(rem_uint(5, 0)), "modulus by zero");
    }

    #[test]
    fn doubles_are_ieee() {
        assert_eq!(
            divide(&Value::Double(1.0), &Value::Double(0.0))
                .ok()
                .map(|v| matches!(v, Value::Double(d) if d == f64::INFINITY)),
            Some(true)
        );
        assert!(matches!(
            divide(&Value::Double(0.0), &Value::Double(0.0)),
            Ok(Value::Double(d)) if d.is_nan()
        ));
        assert!(matches!(
            multiply(&Value::Double(1e308), &Value::Double(10.0)),
            Ok(Value::Double(d)) if d == f64::INFINITY
        ));
    }

    #[test]
    fn mixed_types_are_no_such_overload() {
        assert_eq!(
            msg(add(&Value::Int(1), &Value::Uint(1))),
            "no such overload"
        );
        assert_eq!(
            msg(add(&Value::from("a"), &Value::Int(1))),
            "no such overload"
        );
        assert_eq!(
            msg(modulo(&Value::Double(1.0), &Value::Double(2.0))),
            "no such overload"
        );
        assert_eq!(msg(negate(&Value::Uint(1))), "no such overload");
        assert_eq!(msg(negate(&Value::Bool(true))), "no such overload");
        assert_eq!(
            msg(negate(&Value::Duration(Duration { nanos: 1 }))),
            "no such overload"
        );
    }

    #[test]
    fn time_arithmetic() {
        let ts = |s: &str| parse_timestamp(s).unwrap_or(Timestamp::utc(0, 0));
        let sec = Duration {
            nanos: 1_000_000_000,
        };
        assert_eq!(
            msg(add_timestamp_duration(ts("9999-12-31T23:59:59Z"), sec)),
            "timestamp overflow"
        );
        assert_eq!(
            msg(sub_timestamp_duration(
                ts("0001-01-01T00:00:00Z"),
                Duration { nanos: 1 }
            )),
            "timestamp overflow"
        );
        assert_eq!(
            msg(sub_timestamps(
                ts("9999-12-31T23:59:59Z"),
                ts("0001-01-01T00:00:00Z")
            )),
            "integer overflow"
        );
        let t = ts("2023-01-01T02:00:00+05:30");
        let later = add_timestamp_duration(t, Duration { nanos: -1 }).unwrap_or(t);
        assert_eq!(later.offset_seconds, 19_800);
        assert_eq!(
            crate::time::format_timestamp(later),
            "2023-01-01T01:59:59.999999999+05:30"
        );
        assert_eq!(
            sub_timestamps(ts("2023-01-10T12:00:00Z"), ts("2023-01-10T00:00:00Z")).map(|d| d.nanos),
            Ok(43_200_000_000_000)
        );
        assert_eq!(
            msg(add_durations(
                Duration { nanos: i64::MAX },
                Duration { nanos: 1 }
            )),
            "integer overflow"
        );
        assert_eq!(
            msg(sub_timestamp_duration(t, Duration { nanos: i64::MIN })),
            "integer overflow"
        );
    }

    #[test]
    fn concatenation() {
        let r = add(&Value::from("ab"), &Value::from("c"));
        assert!(matches!(&r, Ok(Value::String(s)) if &**s == "abc"));
        let l = add(
            &Value::list(vec![Value::Int(1)]),
            &Value::list(vec![Value::Int(2)]),
        );
        assert!(matches!(&l, Ok(Value::List(l)) if l.len() == 2));
        let b = add(&Value::bytes(vec![1u8]), &Value::bytes(vec![2u8]));
        assert!(matches!(&b, Ok(Value::Bytes(b)) if **b == [1u8, 2]));
    }
}
