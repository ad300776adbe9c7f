//! Construction of the protobuf well-known types that CEL treats as plain values: the
//! wrappers (`google.protobuf.Int64Value{value: 1}` is the int 1), `Timestamp` and
//! `Duration`. Other message types are built from their descriptors by
//! `cel_runtime::proto`.

use cel_runtime::{Duration, Error, Result, Timestamp, Value};
use std::sync::Arc;

/// Whether [`construct`] builds this type (the wrappers, `Timestamp` and `Duration`); other
/// messages need their descriptors.
pub(crate) fn is_plain(type_name: &str) -> bool {
    matches!(
        type_name,
        "google.protobuf.BoolValue"
            | "google.protobuf.Int64Value"
            | "google.protobuf.Int32Value"
            | "google.protobuf.UInt64Value"
            | "google.protobuf.UInt32Value"
            | "google.protobuf.DoubleValue"
            | "google.protobuf.FloatValue"
            | "google.protobuf.StringValue"
            | "google.protobuf.BytesValue"
            | "google.protobuf.Timestamp"
            | "google.protobuf.Duration"
    )
}

/// Builds a value of a well-known type from its field initialisers.
pub(crate) fn construct(type_name: &str, fields: Vec<(Arc<str>, Value)>) -> Result<Value> {
    let field = |name: &str| fields.iter().find(|(n, _)| &**n == name).map(|(_, v)| v);
    let only_value = || -> Result<Option<&Value>> {
        for (n, _) in &fields {
            if &**n != "value" {
                return Err(Error::new(format!("no such field: {n}")));
            }
        }
        Ok(field("value"))
    };
    let wrapper = |zero: Value, check: fn(&Value) -> bool| -> Result<Value> {
        match only_value()? {
            None => Ok(zero),
            Some(v) if check(v) => Ok(v.clone()),
            Some(_) => Err(Error::no_such_overload()),
        }
    };
    match type_name {
        "google.protobuf.BoolValue" => wrapper(Value::Bool(false), |v| matches!(v, Value::Bool(_))),
        "google.protobuf.Int64Value" => wrapper(Value::Int(0), |v| matches!(v, Value::Int(_))),
        "google.protobuf.Int32Value" => match only_value()? {
            None => Ok(Value::Int(0)),
            Some(Value::Int(i)) if i32::try_from(*i).is_ok() => Ok(Value::Int(*i)),
            Some(Value::Int(_)) => Err(Error::new("integer overflow")),
            Some(_) => Err(Error::no_such_overload()),
        },
        "google.protobuf.UInt64Value" => wrapper(Value::Uint(0), |v| matches!(v, Value::Uint(_))),
        "google.protobuf.UInt32Value" => match only_value()? {
            None => Ok(Value::Uint(0)),
            Some(Value::Uint(u)) if u32::try_from(*u).is_ok() => Ok(Value::Uint(*u)),
            Some(Value::Uint(_)) => Err(Error::new("unsigned integer overflow")),
            Some(_) => Err(Error::no_such_overload()),
        },
        "google.protobuf.DoubleValue" => {
            wrapper(Value::Double(0.0), |v| matches!(v, Value::Double(_)))
        }
        "google.protobuf.FloatValue" => match only_value()? {
            None => Ok(Value::Double(0.0)),
            // A float field holds single precision.
            Some(Value::Double(d)) => Ok(Value::Double(*d as f32 as f64)),
            Some(_) => Err(Error::no_such_overload()),
        },
        "google.protobuf.StringValue" => {
            wrapper(Value::string(""), |v| matches!(v, Value::String(_)))
        }
        "google.protobuf.BytesValue" => {
            wrapper(Value::bytes(Vec::new()), |v| matches!(v, Value::Bytes(_)))
        }
        "google.protobuf.Timestamp" | "google.protobuf.Duration" => {
            let mut seconds = 0i64;
            let mut nanos = 0i64;
            for (n, v) in &fields {
                match (&**n, v) {
                    ("seconds", Value::Int(s)) => seconds = *s,
                    ("nanos", Value::Int(ns)) => nanos = *ns,
                    _ => return Err(Error::new(format!("no such field: {n}"))),
                }
            }
            if type_name == "google.protobuf.Duration" {
                seconds
                    .checked_mul(1_000_000_000)
                    .and_then(|s| s.checked_add(nanos))
                    .map(|n| Value::Duration(Duration { nanos: n }))
                    .ok_or_else(|| Error::new("integer overflow"))
            } else {
                let nanos = u32::try_from(nanos)
                    .ok()
                    .filter(|n| *n < 1_000_000_000)
                    .ok_or_else(|| Error::new("timestamp overflow"))?;
                // Range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
                if !(-62_135_596_800..=253_402_300_799).contains(&seconds) {
                    return Err(Error::new("timestamp overflow"));
                }
                Ok(Value::Timestamp(Timestamp::utc(seconds, nanos)))
            }
        }
        other => Err(Error::new(format!(
            "cannot construct message '{other}': protobuf messages are not supported yet"
        ))),
    }
}
