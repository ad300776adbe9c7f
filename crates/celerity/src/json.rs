//! Conversions between CEL values and JSON (`serde_json`).
//!
//! JSON in: integers that fit in `int64` become `int`, every other number `double`; objects
//! become `map(string, dyn)`, arrays `list(dyn)`. JSON out follows protobuf's JSON mapping
//! where CEL has no JSON counterpart: bytes as base64, timestamps as RFC 3339 strings,
//! durations as `"1.5s"`, non-finite doubles as `"NaN"`, `"Infinity"`, `"-Infinity"`.
//! Nesting deeper than [`MAX_JSON_DEPTH`] is an error rather than a risk to the stack.
//!
//! Typed JSON in ([`value_from_json_typed`], [`variable_from_json`],
//! [`activation_from_json_typed`]): where a variable's type is declared, its JSON takes the
//! form users write, as protobuf's JSON mapping has it: RFC 3339 strings for timestamps,
//! duration strings (`"1h30m"`, `"1.5s"`) for durations, base64 for bytes, integers (or their
//! decimal strings) for `int` and `uint`, any number for `double` (and `"NaN"`, `"Infinity"`,
//! `"-Infinity"`), object keys read as the map's key type. JSON that does not fit its
//! declaration is an error naming where it is (`variable 'y': expected int, got string "str"`,
//! `variable 'xs' at [2]: expected uint, got number -1`). `dyn` (and any type this mapping does
//! not cover, such as messages) takes the untyped conversion.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use cel_runtime::{Key, MapActivation, MapValue, Value};
use cel_types::{Type, VariableDecl};

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
    cel_syntax::stack::guarded(|| from_json_unguarded(json, depth))
}

fn from_json_unguarded(json: &serde_json::Value, depth: usize) -> Result<Value, JsonError> {
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
    cel_syntax::stack::guarded(|| to_json_unguarded(v, depth))
}

fn to_json_unguarded(v: &Value, depth: usize) -> Result<serde_json::Value, JsonError> {
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

/// Converts JSON to a value of the declared type `ty` (see the module documentation). The
/// error says where in the JSON the value does not fit (`at [2].a: expected int, got string
/// "x"`).
pub fn value_from_json_typed(json: &serde_json::Value, ty: &Type) -> Result<Value, JsonError> {
    typed(json, ty, 0).map_err(|e| JsonError(e.to_string()))
}

/// Converts the JSON value of a variable declared with type `ty`; the error names the
/// variable (`variable 'y': expected int, got string "str"`).
pub fn variable_from_json(
    name: &str,
    json: &serde_json::Value,
    ty: &Type,
) -> Result<Value, JsonError> {
    typed(json, ty, 0).map_err(|e| {
        JsonError(if e.path.is_empty() {
            format!("variable '{name}': {}", e.message)
        } else {
            format!("variable '{name}' at {}: {}", e.path, e.message)
        })
    })
}

/// Builds an activation from a JSON object whose members are variables: each declared one
/// (by name, in `decls`) converted to its type, the others as [`value_from_json`] converts
/// them.
pub fn activation_from_json_typed(
    json: &serde_json::Value,
    decls: &[VariableDecl],
) -> Result<MapActivation, JsonError> {
    let serde_json::Value::Object(obj) = json else {
        return Err(JsonError("variables must be a JSON object".into()));
    };
    let mut act = MapActivation::new();
    for (k, v) in obj {
        let ty = decls
            .iter()
            .find(|d| d.name == *k)
            .map_or(&Type::Dyn, |d| &d.ty);
        act.bind(k.as_str(), variable_from_json(k, v, ty)?);
    }
    Ok(act)
}

/// Where a typed conversion failed: the path to the value (`[2].a`, empty at the root) and
/// what was wrong.
struct TypedError {
    path: String,
    message: String,
}

impl fmt::Display for TypedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at {}: {}", self.path, self.message)
        }
    }
}

impl TypedError {
    fn new(message: String) -> TypedError {
        TypedError {
            path: String::new(),
            message,
        }
    }

    /// The same error one level further out: `segment` is prepended to the path.
    fn within(mut self, segment: &str) -> TypedError {
        self.path.insert_str(0, segment);
        self
    }
}

/// A short description of a JSON value for messages: `string "str"`, `number 1.5`, `object`.
fn describe(json: &serde_json::Value) -> String {
    use serde_json::Value as J;
    match json {
        J::Null => "null".to_string(),
        J::Bool(b) => format!("bool {b}"),
        J::Number(n) => format!("number {n}"),
        J::String(s) => {
            let shown: String = s.chars().take(64).collect();
            let more = if shown.len() < s.len() { "..." } else { "" };
            format!("string {:?}{more}", shown)
        }
        J::Array(_) => "array".to_string(),
        J::Object(_) => "object".to_string(),
    }
}

fn mismatch(expected: &Type, json: &serde_json::Value) -> TypedError {
    TypedError::new(format!("expected {expected}, got {}", describe(json)))
}

/// The path segment of an object member: `.name` for a simple name, `["..."]` otherwise.
fn member_segment(key: &str) -> String {
    let simple = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if simple {
        format!(".{key}")
    } else {
        format!("[{key:?}]")
    }
}

fn typed(json: &serde_json::Value, ty: &Type, depth: usize) -> Result<Value, TypedError> {
    cel_syntax::stack::guarded(|| typed_unguarded(json, ty, depth))
}

fn typed_unguarded(json: &serde_json::Value, ty: &Type, depth: usize) -> Result<Value, TypedError> {
    use serde_json::Value as J;
    if depth > MAX_JSON_DEPTH {
        return Err(TypedError::new(format!(
            "JSON nesting deeper than {MAX_JSON_DEPTH} levels"
        )));
    }
    let untyped = |j: &J| from_json(j, depth).map_err(|e| TypedError::new(e.0));
    match (ty, json) {
        (Type::Null, J::Null) => Ok(Value::Null),
        (Type::Bool, J::Bool(b)) => Ok(Value::Bool(*b)),
        (Type::Int, _) => int_of(json)
            .map(Value::Int)
            .ok_or_else(|| mismatch(ty, json)),
        (Type::Uint, _) => uint_of(json)
            .map(Value::Uint)
            .ok_or_else(|| mismatch(ty, json)),
        (Type::Double, _) => double_of(json)
            .map(Value::Double)
            .ok_or_else(|| mismatch(ty, json)),
        (Type::String, J::String(s)) => Ok(Value::string(s.as_str())),
        (Type::Bytes, J::String(s)) => bytes_of(s).map(Value::bytes).ok_or_else(|| {
            TypedError::new(format!("expected bytes (base64), got {}", describe(json)))
        }),
        (Type::Timestamp, J::String(s)) => cel_runtime::convert::timestamp_from_string(s)
            .map(Value::Timestamp)
            .map_err(|_| {
                TypedError::new(format!(
                    "expected timestamp (RFC 3339, like \"2024-01-02T03:04:05Z\"), got {}",
                    describe(json)
                ))
            }),
        (Type::Duration, J::String(s)) => cel_runtime::convert::duration_from_string(s)
            .map(Value::Duration)
            .map_err(|_| {
                TypedError::new(format!(
                    "expected duration (like \"1h30m\" or \"1.5s\"), got {}",
                    describe(json)
                ))
            }),
        (Type::Wrapper(_), J::Null) => Ok(Value::Null),
        (Type::Wrapper(p), _) => typed(json, &p.as_type(), depth),
        (Type::List(elem), J::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(typed(item, elem, depth + 1).map_err(|e| e.within(&format!("[{i}]")))?);
            }
            Ok(Value::list(out))
        }
        (Type::Map(k, v), J::Object(obj)) => {
            let mut m = MapValue::with_capacity(obj.len());
            for (key, item) in obj {
                let segment = member_segment(key);
                let key = map_key(key, k).map_err(|e| e.within(&segment))?;
                let item = typed(item, v, depth + 1).map_err(|e| e.within(&segment))?;
                m.insert(key, item);
            }
            Ok(Value::Map(Arc::new(m)))
        }
        (Type::Opaque(..), J::Null) if ty.optional_elem().is_some() => Ok(Value::optional_none()),
        (Type::Opaque(..), _) if ty.optional_elem().is_some() => {
            let elem = ty.optional_elem().unwrap_or(&Type::Dyn);
            typed(json, elem, depth + 1).map(Value::optional_of)
        }
        // Types this mapping does not cover: dyn, any, type parameters, messages (read through
        // their descriptors by the callers that have them), library types.
        (
            Type::Dyn
            | Type::Any
            | Type::Error
            | Type::TypeParam(_)
            | Type::Message(_)
            | Type::Opaque(..)
            | Type::Type(_),
            _,
        ) => untyped(json),
        _ => Err(mismatch(ty, json)),
    }
}

/// An `int` from a JSON integer, an integral number in range, or a decimal string (protobuf's
/// JSON mapping of `int64`).
fn int_of(json: &serde_json::Value) -> Option<i64> {
    match json {
        serde_json::Value::Number(n) => n.as_i64().or_else(|| {
            let d = n.as_f64()?;
            // Integral and within range: -2^63 <= d < 2^63.
            (d.fract() == 0.0
                && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&d))
            .then_some(d as i64)
        }),
        serde_json::Value::String(s) => s.parse::<i64>().ok(),
        _ => None,
    }
}

/// A `uint` from a non-negative JSON integer, an integral number in range, or a decimal
/// string.
fn uint_of(json: &serde_json::Value) -> Option<u64> {
    match json {
        serde_json::Value::Number(n) => n.as_u64().or_else(|| {
            let d = n.as_f64()?;
            (d.fract() == 0.0
                && (0.0..18_446_744_073_709_551_616.0).contains(&d)
                && n.as_i64().is_none())
            .then_some(d as u64)
        }),
        serde_json::Value::String(s) if !s.starts_with('+') => s.parse::<u64>().ok(),
        _ => None,
    }
}

/// A `double` from any JSON number, `"NaN"`, `"Infinity"`, `"-Infinity"` or a numeric string.
fn double_of(json: &serde_json::Value) -> Option<f64> {
    match json {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            other => cel_runtime::convert::double_from_string(other).ok(),
        },
        _ => None,
    }
}

/// Bytes from base64, standard or URL-safe alphabet, padded or not (as protobuf reads them).
fn bytes_of(s: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(s).ok())
}

/// A map key of type `key_type` from an object member's name (JSON object keys are strings;
/// protobuf's JSON mapping writes integer and bool keys as their text).
fn map_key(name: &str, key_type: &Type) -> Result<Key, TypedError> {
    let bad = || TypedError::new(format!("expected a key of type {key_type}, got {:?}", name));
    match key_type {
        Type::Int => name.parse::<i64>().map(Key::Int).map_err(|_| bad()),
        Type::Uint if !name.starts_with('+') => {
            name.parse::<u64>().map(Key::Uint).map_err(|_| bad())
        }
        Type::Bool => match name {
            "true" => Ok(Key::Bool(true)),
            "false" => Ok(Key::Bool(false)),
            _ => Err(bad()),
        },
        Type::String | Type::Dyn | Type::Any | Type::TypeParam(_) | Type::Error => {
            Ok(Key::String(name.into()))
        }
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod typed_tests {
    use super::*;
    use serde_json::json;

    fn conv(j: serde_json::Value, ty: &str) -> Result<Value, String> {
        let ty = Type::parse(ty).expect("type");
        variable_from_json("v", &j, &ty).map_err(|e| e.0)
    }

    #[test]
    fn scalars_in_the_forms_users_write() {
        assert!(conv(json!(3), "int").unwrap().identical(&Value::Int(3)));
        assert!(conv(json!("-3"), "int").unwrap().identical(&Value::Int(-3)));
        assert!(conv(json!(3.0), "int").unwrap().identical(&Value::Int(3)));
        assert!(conv(json!(3), "uint").unwrap().identical(&Value::Uint(3)));
        assert!(
            conv(json!("18446744073709551615"), "uint")
                .unwrap()
                .identical(&Value::Uint(u64::MAX))
        );
        assert!(
            conv(json!(18446744073709551615u64), "uint")
                .unwrap()
                .identical(&Value::Uint(u64::MAX))
        );
        assert!(
            conv(json!(2), "double")
                .unwrap()
                .identical(&Value::Double(2.0))
        );
        assert!(
            conv(json!("NaN"), "double")
                .unwrap()
                .identical(&Value::Double(f64::NAN))
        );
        assert!(
            conv(json!("aGk="), "bytes")
                .unwrap()
                .identical(&Value::bytes(b"hi".to_vec()))
        );
        assert!(
            conv(json!("aGk"), "bytes")
                .unwrap()
                .identical(&Value::bytes(b"hi".to_vec()))
        );
        assert!(
            conv(json!(null), "null_type")
                .unwrap()
                .identical(&Value::Null)
        );
        assert!(
            conv(json!(true), "bool")
                .unwrap()
                .identical(&Value::Bool(true))
        );
        assert!(
            conv(json!("s"), "string")
                .unwrap()
                .identical(&Value::from("s"))
        );
        let ts = conv(json!("2024-01-02T03:04:05.5Z"), "google.protobuf.Timestamp").unwrap();
        assert!(
            matches!(ts, Value::Timestamp(t) if t.seconds == 1_704_164_645 && t.nanos == 500_000_000)
        );
        let d = conv(json!("1h30m"), "google.protobuf.Duration").unwrap();
        assert!(matches!(d, Value::Duration(d) if d.nanos == 5_400_000_000_000));
        let d = conv(json!("1.5s"), "google.protobuf.Duration").unwrap();
        assert!(matches!(d, Value::Duration(d) if d.nanos == 1_500_000_000));
        // `dyn` is the untyped conversion.
        assert!(conv(json!(2), "dyn").unwrap().identical(&Value::Int(2)));
        assert!(
            conv(json!("x"), "dyn")
                .unwrap()
                .identical(&Value::from("x"))
        );
    }

    #[test]
    fn aggregates_convert_their_parts() {
        let l = conv(json!(["1s", "2m"]), "list(google.protobuf.Duration)").unwrap();
        let Value::List(items) = &l else {
            panic!("not a list")
        };
        assert!(matches!(items[1], Value::Duration(d) if d.nanos == 120_000_000_000));
        let m = conv(json!({"1": 2.5, "7": 1}), "map(int, double)").unwrap();
        let Value::Map(m) = &m else {
            panic!("not a map")
        };
        assert!(
            m.get(&Value::Int(7))
                .unwrap()
                .unwrap()
                .identical(&Value::Double(1.0))
        );
        let nested = conv(json!({"a": [true]}), "map(string, list(bool))").unwrap();
        assert!(nested.identical(&Value::map([(
            Key::String("a".into()),
            Value::list(vec![Value::Bool(true)])
        )])));
    }

    #[test]
    fn mismatches_name_the_variable_and_the_path() {
        assert_eq!(
            conv(json!("str"), "int").unwrap_err(),
            "variable 'v': expected int, got string \"str\""
        );
        assert_eq!(
            conv(json!(1.5), "int").unwrap_err(),
            "variable 'v': expected int, got number 1.5"
        );
        assert_eq!(
            conv(json!(-1), "uint").unwrap_err(),
            "variable 'v': expected uint, got number -1"
        );
        assert_eq!(
            conv(json!([1, 2, "x"]), "list(int)").unwrap_err(),
            "variable 'v' at [2]: expected int, got string \"x\""
        );
        assert_eq!(
            conv(
                json!({"a": {"b c": [1]}}),
                "map(string, map(string, list(string)))"
            )
            .unwrap_err(),
            "variable 'v' at .a[\"b c\"][0]: expected string, got number 1"
        );
        assert_eq!(
            conv(json!({"x": 1}), "map(int, int)").unwrap_err(),
            "variable 'v' at .x: expected a key of type int, got \"x\""
        );
        assert!(
            conv(json!("yesterday"), "google.protobuf.Timestamp")
                .unwrap_err()
                .starts_with("variable 'v': expected timestamp (RFC 3339")
        );
        assert!(
            conv(json!("forever"), "google.protobuf.Duration")
                .unwrap_err()
                .starts_with("variable 'v': expected duration")
        );
        assert!(conv(json!("***"), "bytes").unwrap_err().contains("base64"));
        assert_eq!(
            conv(json!(1), "string").unwrap_err(),
            "variable 'v': expected string, got number 1"
        );
        assert_eq!(
            conv(json!([]), "map(string, int)").unwrap_err(),
            "variable 'v': expected map(string, int), got array"
        );
    }

    #[test]
    fn activations_convert_declared_variables() {
        let decls = [VariableDecl::new("n", Type::Uint)];
        let act = activation_from_json_typed(&json!({"n": 5, "other": 5}), &decls).unwrap();
        let got: Vec<_> = act
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        assert!(
            got.iter()
                .any(|(k, v)| k == "n" && v.identical(&Value::Uint(5)))
        );
        assert!(
            got.iter()
                .any(|(k, v)| k == "other" && v.identical(&Value::Int(5)))
        );
        let err = activation_from_json_typed(&json!({"n": "x"}), &decls).unwrap_err();
        assert_eq!(err.0, "variable 'n': expected uint, got string \"x\"");
    }
}
