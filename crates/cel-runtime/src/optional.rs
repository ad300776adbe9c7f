//! The optional-types library's strict functions: `optional.of`, `optional.ofNonZeroValue`,
//! `optional.none`, `hasValue`, `value`, optional indexing (`l[?i]`, `m[?k]`, and indexing
//! into an optional list or map), and version 2's list functions (`first`, `last`,
//! `optional.unwrap`, `unwrapOpt`). `or` and `orValue` short-circuit, so the interpreter
//! evaluates them itself.

use crate::stdlib::list_index_position;
use crate::{Error, Result, Value};

/// Whether a value is its type's zero value, as cel-go's `IsZeroValue`: `0`, `0u`, `0.0`
/// (and `-0.0`), `false`, `""`, `b""`, `[]`, `{}`, `null`, a zero duration, and the timestamp
/// `0001-01-01T00:00:00Z` (Go's zero time, not the Unix epoch), a message with no field set.
/// Optionals, types and opaque values are never zero.
pub fn is_zero_value(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Double(d) => *d == 0.0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::Duration(d) => d.nanos == 0,
        Value::Timestamp(t) => t.seconds == crate::time::MIN_UNIX_SECONDS && t.nanos == 0,
        Value::Message(m) => m.message().fields().next().is_none(),
        // Kubernetes' objects are not cel-go `Zeroer`s, so never zero.
        Value::Type(_) | Value::Optional(_) | Value::Opaque(_) | Value::Object(_) => false,
    }
}

/// `optional.of(v)`.
pub fn of(v: &Value) -> Result<Value> {
    Ok(Value::optional_of(v.clone()))
}

/// `optional.ofNonZeroValue(v)`: none for zero values (see [`is_zero_value`]).
pub fn of_non_zero_value(v: &Value) -> Result<Value> {
    Ok(if is_zero_value(v) {
        Value::optional_none()
    } else {
        Value::optional_of(v.clone())
    })
}

/// `optional.none()`.
pub fn none(args: &[Value]) -> Result<Value> {
    if args.is_empty() {
        Ok(Value::optional_none())
    } else {
        Err(Error::no_such_overload())
    }
}

/// `opt.hasValue()`.
pub fn has_value(v: &Value) -> Result<Value> {
    match v {
        Value::Optional(o) => Ok(Value::Bool(o.is_some())),
        _ => Err(Error::no_such_overload()),
    }
}

/// `opt.value()`: "optional.none() dereference" when empty.
pub fn value(v: &Value) -> Result<Value> {
    match v {
        Value::Optional(Some(inner)) => Ok((**inner).clone()),
        Value::Optional(None) => Err(Error::new("optional.none() dereference")),
        _ => Err(Error::no_such_overload()),
    }
}

/// `list[?index]`: the element as an optional, none when the index is out of range.
pub fn list_opt_index(list: &Value, index: &Value) -> Result<Value> {
    let Value::List(l) = list else {
        return Err(Error::no_such_overload());
    };
    match list_index_position(l, index)? {
        Some(i) => Ok(Value::optional_of(l.items[i].clone())),
        None => Ok(Value::optional_none()),
    }
}

/// `map[?key]`: the entry's value as an optional, none when the key is absent.
pub fn map_opt_index(map: &Value, key: &Value) -> Result<Value> {
    let Value::Map(m) = map else {
        return Err(Error::no_such_overload());
    };
    Ok(match m.get(key) {
        Ok(Some(v)) => Value::optional_of(v.clone()),
        _ => Value::optional_none(),
    })
}

/// `opt_list[?index]` and `opt_list[index]`: none when the optional is empty or the index is
/// out of range.
pub fn optional_list_index(opt: &Value, index: &Value) -> Result<Value> {
    match opt {
        Value::Optional(None) => Ok(Value::optional_none()),
        Value::Optional(Some(inner)) => list_opt_index(inner, index),
        _ => Err(Error::no_such_overload()),
    }
}

/// `opt_map[?key]` and `opt_map[key]`: none when the optional is empty or the key absent.
pub fn optional_map_index(opt: &Value, key: &Value) -> Result<Value> {
    match opt {
        Value::Optional(None) => Ok(Value::optional_none()),
        Value::Optional(Some(inner)) => map_opt_index(inner, key),
        _ => Err(Error::no_such_overload()),
    }
}

/// `list.first()`: the first element as an optional, none for an empty list.
pub fn first(list: &Value) -> Result<Value> {
    match list {
        Value::List(l) => Ok(l
            .items
            .first()
            .map_or(Value::optional_none(), |x| Value::optional_of(x.clone()))),
        _ => Err(Error::no_such_overload()),
    }
}

/// `list.last()`: the last element as an optional, none for an empty list.
pub fn last(list: &Value) -> Result<Value> {
    match list {
        Value::List(l) => Ok(l
            .items
            .last()
            .map_or(Value::optional_none(), |x| Value::optional_of(x.clone()))),
        _ => Err(Error::no_such_overload()),
    }
}

/// `optional.unwrap(list)` and `list.unwrapOpt()`: the values of the present optionals, in
/// order. An element that is not an optional is an error, `value 1 is not optional` (cel-go
/// prints the element as Go's `%v` does).
pub fn unwrap(list: &Value) -> Result<Value> {
    let Value::List(l) = list else {
        return Err(Error::no_such_overload());
    };
    let mut out = Vec::with_capacity(l.items.len());
    for item in l.items.iter() {
        match item {
            Value::Optional(Some(v)) => out.push((**v).clone()),
            Value::Optional(None) => {}
            other => {
                return Err(Error::new(format!(
                    "value {} is not optional",
                    crate::format::error_text(other)
                )));
            }
        }
    }
    Ok(Value::list(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Duration, Key, Timestamp};

    #[test]
    fn zero_values() {
        for z in [
            Value::Int(0),
            Value::Uint(0),
            Value::Double(0.0),
            Value::Double(-0.0),
            Value::Bool(false),
            Value::from(""),
            Value::bytes(Vec::<u8>::new()),
            Value::list(vec![]),
            Value::map([]),
            Value::Null,
            Value::Duration(Duration { nanos: 0 }),
            Value::Timestamp(Timestamp::utc(crate::time::MIN_UNIX_SECONDS, 0)),
        ] {
            assert!(
                matches!(of_non_zero_value(&z), Ok(Value::Optional(None))),
                "{z:?}"
            );
        }
        for nz in [
            Value::Int(1),
            Value::Timestamp(Timestamp::utc(0, 0)),
            Value::optional_none(),
            Value::map([(Key::Int(1), Value::Null)]),
        ] {
            assert!(
                matches!(of_non_zero_value(&nz), Ok(Value::Optional(Some(_)))),
                "{nz:?}"
            );
        }
    }

    #[test]
    fn list_functions() {
        let l = Value::list(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
        assert_eq!(first(&l).unwrap(), Value::optional_of(Value::Int(1)));
        assert_eq!(last(&l).unwrap(), Value::optional_of(Value::Int(3)));
        let empty = Value::list(vec![]);
        assert_eq!(first(&empty).unwrap(), Value::optional_none());
        assert_eq!(last(&empty).unwrap(), Value::optional_none());
        let opts = Value::list(vec![
            Value::optional_of(Value::Int(42)),
            Value::optional_none(),
            Value::optional_of(Value::optional_none()),
        ]);
        assert_eq!(
            unwrap(&opts).unwrap(),
            Value::list(vec![Value::Int(42), Value::optional_none()])
        );
        let mixed = Value::list(vec![Value::optional_none(), Value::Int(1)]);
        assert_eq!(
            unwrap(&mixed).unwrap_err().message,
            "value 1 is not optional"
        );
        assert!(first(&Value::Int(1)).is_err());
    }

    #[test]
    fn access() {
        assert_eq!(
            value(&Value::optional_none()).err(),
            Some(Error::new("optional.none() dereference"))
        );
        assert!(matches!(
            value(&Value::optional_of(Value::Int(1))),
            Ok(Value::Int(1))
        ));
        assert!(matches!(
            has_value(&Value::optional_of(Value::optional_none())),
            Ok(Value::Bool(true))
        ));
        let l = Value::list(vec![Value::Int(7)]);
        assert!(matches!(
            list_opt_index(&l, &Value::Int(0)),
            Ok(Value::Optional(Some(_)))
        ));
        assert!(matches!(
            list_opt_index(&l, &Value::Int(3)),
            Ok(Value::Optional(None))
        ));
        let m = Value::map([(Key::String("a".into()), Value::Int(1))]);
        assert!(matches!(
            map_opt_index(&m, &Value::from("b")),
            Ok(Value::Optional(None))
        ));
        assert!(matches!(
            optional_map_index(&Value::optional_of(m), &Value::from("a")),
            Ok(Value::Optional(Some(_)))
        ));
        assert!(matches!(
            optional_list_index(&Value::optional_none(), &Value::Int(0)),
            Ok(Value::Optional(None))
        ));
    }
}
