//! Conversions between CEL values and JSON (`serde_json`).
//!
//! JSON in: integers that fit in `int64` become `int`, every other number `double`; objects
//! become `map(string, dyn)`, arrays `list(dyn)`. JSON out follows protobuf's JSON mapping
//! where CEL has no JSON counterpart: bytes as base64, timestamps as RFC 3339 strings,
//! durations as `"1.5s"`, non-finite doubles as `"NaN"`, `"Infinity"`, `"-Infinity"`.
//! Nesting deeper than [`MAX_JSON_DEPTH`] is an error rather than a risk to the stack.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use cel_runtime::{Key, MapActivation, MapValue, Value};

/// The deepest nesting converted in either direction.
pub const MAX_JSON_DEPTH: usize = 1000;

/// Why a conversion failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError(pub String);

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JsonError {}

/// Converts JSON to a CEL value.
pub fn value_from_json(json: &serde_json::Value) -> Result<Value, JsonError> {
    from_json(json, 0)
}

fn from_json(json: &serde_json::Value, depth: usize) -> Result<Value, JsonError> {
    if depth > MAX_JSON_DEPTH {
        return Err(JsonError(format!(
            "JSON nesting deeper than {MAX_JSON_DEPTH} levels"
        )));
    }
    Ok(match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::string(s.as_str()),
        serde_json::Value::Array(items) => Value::list(
            items
                .iter()
                .map(|v| from_json(v, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        serde_json::Value::Object(obj) => {
            let mut m = MapValue::with_capacity(obj.len());
            for (k, v) in obj {
                m.insert(Key::String(k.as_str().into()), from_json(v, depth + 1)?);
            }
            Value::Map(Arc::new(m))
        }
    })
}

/// Converts a CEL value to JSON. Values without a JSON form become strings: timestamps and
/// durations their text, types their name, library values the CEL expression that rebuilds
/// them (`"quantity(\"70k\")"`).
pub fn value_to_json(v: &Value) -> Result<serde_json::Value, JsonError> {
    to_json(v, 0)
}

fn to_json(v: &Value, depth: usize) -> Result<serde_json::Value, JsonError> {
    use serde_json::Value as J;
    if depth > MAX_JSON_DEPTH {
        return Err(JsonError(format!(
            "value nested deeper than {MAX_JSON_DEPTH} levels"
        )));
    }
    Ok(match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::Uint(u) => J::from(*u),
        Value::Double(d) => match serde_json::Number::from_f64(*d) {
            Some(n) => J::Number(n),
            None if d.is_nan() => J::String("NaN".into()),
            None if *d > 0.0 => J::String("Infinity".into()),
            None => J::String("-Infinity".into()),
        },
        Value::String(s) => J::String(s.to_string()),
        Value::Bytes(b) => J::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Value::List(items) => J::Array(
            items
                .iter()
                .map(|x| to_json(x, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(m) => {
            let mut obj = serde_json::Map::with_capacity(m.len());
            for (k, x) in m.iter() {
                obj.insert(k.to_string(), to_json(x, depth + 1)?);
            }
            J::Object(obj)
        }
        Value::Timestamp(_) | Value::Duration(_) => {
            J::String(match &cel_runtime::convert::to_string(v) {
                Ok(Value::String(s)) => s.to_string(),
                _ => String::new(),
            })
        }
        // The data, by property name as in the data.
        Value::Object(o) => {
            let mut obj = serde_json::Map::with_capacity(o.len());
            for (k, x) in o.data_entries() {
                obj.insert(k.to_string(), to_json(x, depth + 1)?);
            }
            J::Object(obj)
        }
        Value::Type(t) => J::String(t.runtime_name().to_string()),
        Value::Optional(None) => J::Null,
        Value::Optional(Some(x)) => to_json(x, depth + 1)?,
        // Library values: the CEL expression that rebuilds them (`quantity("70k")`).
        Value::Opaque(_) => J::String(cel_runtime::format::to_cel_literal(v)),
        // The fields that are set, by name, as CEL reads them.
        Value::Message(m) => {
            let mut obj = serde_json::Map::new();
            for (f, _) in m.message().fields() {
                let x = cel_runtime::proto::select(m, f.name())
                    .map_err(|e| JsonError(e.to_string()))?;
                obj.insert(f.name().to_string(), to_json(&x, depth + 1)?);
            }
            J::Object(obj)
        }
    })
}

/// Builds an activation from a JSON object: each member is a variable.
pub fn activation_from_json(json: &serde_json::Value) -> Result<MapActivation, JsonError> {
    let serde_json::Value::Object(obj) = json else {
        return Err(JsonError("variables must be a JSON object".into()));
    };
    let mut act = MapActivation::new();
    for (k, v) in obj {
        act.bind(k.as_str(), value_from_json(v)?);
    }
    Ok(act)
}
