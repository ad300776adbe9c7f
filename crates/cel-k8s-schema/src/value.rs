//! Data as CEL values, typed by its schema (Kubernetes' `UnstructuredToVal`).
//!
//! A [`ValueModel`] is built once per schema node: object nodes get their
//! [`ObjectLayout`], lists their set or map semantics. Converting an object then walks the
//! data once. What the data holds where the schema says otherwise becomes an
//! [`invalid_data`] marker with Kubernetes' message, so that reading it fails as it does in
//! the API server ("invalid data, expected a map for the provided schema with type=object"),
//! and everything else still converts.
//!
//! | schema | value |
//! | --- | --- |
//! | `integer` | `int` (a JSON number with a fraction is invalid) |
//! | `number` | `double` (JSON integers too) |
//! | `string`, `format: byte` | `bytes`, from base64 with the URL alphabet |
//! | `string`, `format: duration` | `duration` (Go syntax, or `3 days`, `1 week`) |
//! | `string`, `format: date` / `date-time` | `timestamp` |
//! | `x-kubernetes-int-or-string` | `int` or `string` |
//! | object with properties | an [`ObjectValue`]: `null` properties read as absent |
//! | object with an `additionalProperties` schema | a map |
//! | `array` | a list, with set or map semantics per `x-kubernetes-list-type` |
//! | no type, `x-kubernetes-preserve-unknown-fields` | the JSON as plain values |

use std::sync::Arc;

use base64::Engine as _;
use cel_runtime::object::{ListSemantics, ObjectField, ObjectLayout, ObjectValue, invalid_data};
use cel_runtime::{Key, ListValue, MapValue, Value};
use serde_json::Value as Json;

use crate::decl::with_type_and_object_meta;
use crate::escape::escape;
use crate::schema::Schema;

/// How data under one schema node becomes a value.
#[derive(Clone, Debug)]
pub struct ValueModel {
    nullable: bool,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    IntOrString,
    /// An object with declared properties (or none): fields in slot order.
    Object {
        layout: Arc<ObjectLayout>,
        fields: Vec<ValueModel>,
    },
    Map(Box<ValueModel>),
    List {
        items: Box<ValueModel>,
        semantics: Option<Arc<ListSemantics>>,
    },
    String(StringFormat),
    Number,
    Integer,
    Boolean,
    /// Data the schema keeps without typing it.
    Untyped,
    /// A schema that gives no way to read the data: every value is this error.
    Invalid(String),
}

#[derive(Clone, Copy, Debug)]
enum StringFormat {
    Plain,
    Byte,
    Duration,
    Date,
    DateTime,
}

/// Schemas nest at most [`crate::schema::MAX_SCHEMA_DEPTH`] deep, so building recurses at
/// most that far; data is walked to the depth of the schema only (below, it is untyped and
/// converted iteratively).
impl ValueModel {
    /// The model of a schema node; `is_root` adds the implicit `apiVersion`, `kind` and
    /// `metadata` of a resource root.
    pub fn new(schema: &Schema, is_root: bool) -> ValueModel {
        let s = if is_root || schema.x_embedded_resource {
            with_type_and_object_meta(schema)
        } else {
            std::borrow::Cow::Borrowed(schema)
        };
        let kind = Self::kind(&s);
        ValueModel {
            nullable: s.nullable,
            kind,
        }
    }

    fn kind(s: &Schema) -> Kind {
        if s.x_int_or_string {
            return Kind::IntOrString;
        }
        match s.type_.as_str() {
            "object" => match s.additional_schema() {
                Some(values) if s.properties.is_empty() && !s.x_embedded_resource => {
                    Kind::Map(Box::new(ValueModel::new(values, false)))
                }
                _ => Self::object(s),
            },
            "array" => match s.items.as_deref() {
                None => Kind::Invalid(
                    "invalid array type, expected Items with a non-empty Schema".into(),
                ),
                Some(items) => {
                    let semantics = match s.x_list_type.as_deref() {
                        None | Some("atomic") => None,
                        Some("set") => Some(Arc::new(ListSemantics::Set)),
                        Some("map") => Some(Arc::new(ListSemantics::Map {
                            keys: s
                                .x_list_map_keys
                                .iter()
                                .map(|k| Arc::from(escape(k).unwrap_or_else(|| k.clone())))
                                .collect(),
                        })),
                        Some(other) => {
                            return Kind::Invalid(format!(
                                "invalid x-kubernetes-list-type, expected 'map', 'set' or 'atomic' but got {other}"
                            ));
                        }
                    };
                    Kind::List {
                        items: Box::new(ValueModel::new(items, false)),
                        semantics,
                    }
                }
            },
            "string" => Kind::String(match s.format.as_str() {
                "byte" => StringFormat::Byte,
                "duration" => StringFormat::Duration,
                "date" => StringFormat::Date,
                "date-time" => StringFormat::DateTime,
                _ => StringFormat::Plain,
            }),
            "number" => Kind::Number,
            "integer" => Kind::Integer,
            "boolean" => Kind::Boolean,
            _ if s.preserves_unknown_fields() => Kind::Untyped,
            other => Kind::Invalid(format!(
                "invalid type, expected object, array, number, integer, boolean or string, or no type with x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields is true, got {other}"
            )),
        }
    }

    fn object(s: &Schema) -> Kind {
        let mut fields = Vec::with_capacity(s.properties.len());
        let mut models = Vec::with_capacity(s.properties.len());
        for (name, prop) in &s.properties {
            fields.push(ObjectField {
                name: escape(name).unwrap_or_else(|| name.clone()).into(),
                data_name: name.as_str().into(),
            });
            models.push(ValueModel::new(prop, false));
        }
        Kind::Object {
            layout: ObjectLayout::new("object", fields),
            fields: models,
        }
    }

    /// The layout objects of this node have, if it is an object node.
    pub fn layout(&self) -> Option<&Arc<ObjectLayout>> {
        match &self.kind {
            Kind::Object { layout, .. } => Some(layout),
            _ => None,
        }
    }

    /// The value of `data` under this node.
    pub fn to_value(&self, data: &Json) -> Value {
        if data.is_null() {
            return if self.nullable {
                Value::Null
            } else {
                invalid_data("invalid data, got null for schema with nullable=false")
            };
        }
        match &self.kind {
            Kind::IntOrString => match data {
                Json::String(s) => Value::string(s.as_str()),
                Json::Number(n) if n.as_i64().is_some() => Value::Int(n.as_i64().unwrap_or(0)),
                _ => invalid_data(
                    "invalid data, expected XIntOrString value to be either a string or integer",
                ),
            },
            Kind::Object { layout, fields } => match data {
                Json::Object(members) => object_value(layout, fields, members),
                _ => invalid_data(
                    "invalid data, expected a map for the provided schema with type=object",
                ),
            },
            Kind::Map(values) => match data {
                Json::Object(members) => {
                    let mut m = MapValue::with_capacity(members.len());
                    for (k, v) in members {
                        m.insert(Key::String(k.as_str().into()), values.to_value(v));
                    }
                    Value::Map(Arc::new(m))
                }
                _ => invalid_data(
                    "invalid data, expected a map for the provided schema with type=object",
                ),
            },
            Kind::List { items, semantics } => match data {
                Json::Array(elements) => Value::List(Arc::new(ListValue {
                    items: elements.iter().map(|e| items.to_value(e)).collect(),
                    semantics: semantics.clone(),
                })),
                _ => invalid_data(
                    "invalid data, expected an array for the provided schema with type=array",
                ),
            },
            Kind::String(format) => match data {
                Json::String(s) => string_value(s, *format),
                other => invalid_data(format!(
                    "invalid data, expected string, got {}",
                    go_type(other)
                )),
            },
            Kind::Number => match data.as_f64() {
                Some(d) if data.is_number() => Value::Double(d),
                _ => invalid_data(format!(
                    "invalid data, expected float, got {}",
                    go_type(data)
                )),
            },
            Kind::Integer => match data.as_i64() {
                Some(i) => Value::Int(i),
                None => invalid_data(format!("invalid data, expected int, got {}", go_type(data))),
            },
            Kind::Boolean => match data {
                Json::Bool(b) => Value::Bool(*b),
                other => invalid_data(format!(
                    "invalid data, expected bool, got {}",
                    go_type(other)
                )),
            },
            Kind::Untyped => untyped(data),
            Kind::Invalid(message) => invalid_data(message.as_str()),
        }
    }
}

fn object_value(
    layout: &Arc<ObjectLayout>,
    fields: &[ValueModel],
    members: &serde_json::Map<String, Json>,
) -> Value {
    let mut slots: Vec<Option<Value>> = vec![None; fields.len()];
    let mut undeclared = Vec::new();
    for (k, v) in members {
        match layout.slot_of_data_name(k) {
            // A null property reads as absent, whatever its schema says.
            Some(i) if v.is_null() => slots[i] = Some(Value::Null),
            Some(i) => slots[i] = Some(fields[i].to_value(v)),
            None => undeclared.push((Arc::from(k.as_str()), untyped(v))),
        }
    }
    Value::Object(Arc::new(ObjectValue::new(
        layout.clone(),
        slots,
        undeclared,
    )))
}

/// The Go type name Kubernetes' messages use for decoded JSON.
fn go_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "<nil>",
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_i64() => "int64",
        Json::Number(_) => "float64",
        Json::String(_) => "string",
        Json::Array(_) => "[]interface {}",
        Json::Object(_) => "map[string]interface {}",
    }
}

fn string_value(s: &str, format: StringFormat) -> Value {
    match format {
        StringFormat::Plain => Value::string(s),
        StringFormat::Byte => match base64::engine::general_purpose::URL_SAFE.decode(s) {
            Ok(b) => Value::bytes(b),
            Err(e) => invalid_data(format!("Invalid byte formatted string {s}: {e}")),
        },
        StringFormat::Duration => match crate::formats::parse_duration(s) {
            Ok(d) => Value::Duration(d),
            Err(e) => invalid_data(format!("Invalid duration {s}: {e}")),
        },
        StringFormat::Date => match crate::formats::parse_date(s) {
            Some(t) => Value::Timestamp(t),
            None => invalid_data(format!(
                "Invalid date formatted string {s}: {}",
                crate::formats::date_error(s)
            )),
        },
        StringFormat::DateTime => match crate::formats::parse_date_time(s) {
            Some(t) => Value::Timestamp(t),
            None => invalid_data(format!(
                "Invalid date-time formatted string {s}: {}",
                crate::formats::date_time_error(s)
            )),
        },
    }
}

/// JSON as plain CEL values (for data the schema does not type): integers as `int` (or
/// `double` beyond 64 bits), other numbers as `double`, objects as maps. Iterative.
pub fn untyped(data: &Json) -> Value {
    enum Frame<'a> {
        List(std::slice::Iter<'a, Json>, Vec<Value>),
        Map(serde_json::map::Iter<'a>, MapValue, Option<Arc<str>>),
    }
    fn scalar(j: &Json) -> Option<Value> {
        Some(match j {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
            },
            Json::String(s) => Value::string(s.as_str()),
            _ => return None,
        })
    }
    fn open(j: &Json) -> Frame<'_> {
        match j {
            Json::Array(a) => Frame::List(a.iter(), Vec::with_capacity(a.len())),
            Json::Object(o) => Frame::Map(o.iter(), MapValue::with_capacity(o.len()), None),
            _ => unreachable!("only aggregates are opened"),
        }
    }
    if let Some(v) = scalar(data) {
        return v;
    }
    let mut stack = vec![open(data)];
    loop {
        let top = stack.last_mut().expect("the stack is not empty here");
        let next = match top {
            Frame::List(it, _) => it.next().map(|j| (None, j)),
            Frame::Map(it, _, pending) => it.next().map(|(k, j)| {
                *pending = Some(Arc::from(k.as_str()));
                (None::<()>, j)
            }),
        };
        let finished = match next {
            Some((_, j)) => match scalar(j) {
                Some(v) => Some(v),
                None => {
                    stack.push(open(j));
                    continue;
                }
            },
            None => None,
        };
        match finished {
            Some(v) => push_into(stack.last_mut().expect("a frame"), v),
            None => {
                let done = match stack.pop().expect("a frame") {
                    Frame::List(_, items) => Value::list(items),
                    Frame::Map(_, m, _) => Value::Map(Arc::new(m)),
                };
                match stack.last_mut() {
                    Some(parent) => push_into(parent, done),
                    None => return done,
                }
            }
        }
    }

    fn push_into(frame: &mut Frame<'_>, v: Value) {
        match frame {
            Frame::List(_, items) => items.push(v),
            Frame::Map(_, m, pending) => {
                let k = pending.take().expect("a key precedes its value");
                m.insert(Key::String(k), v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Path;
    use cel_runtime::object::check_data;
    use serde_json::json;

    fn model(j: Json) -> ValueModel {
        ValueModel::new(&Schema::from_json(&j, &Path::root()).unwrap(), false)
    }

    #[test]
    fn converts_by_schema() {
        let m = model(json!({"type": "object", "properties": {
            "n": {"type": "number"}, "i": {"type": "integer"},
            "b": {"type": "string", "format": "byte"},
            "d": {"type": "string", "format": "duration"},
            "t": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "s": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "nul": {"type": "string", "nullable": true},
            "foo-bar": {"type": "string"}
        }}));
        let v = m.to_value(&json!({
            "n": 1, "i": 2, "b": "aGk=", "d": "1h", "t": "2021-01-01T00:00:00Z",
            "day": "2021-01-02", "s": ["a", "b"], "nul": null, "foo-bar": "x", "extra": 1
        }));
        let Value::Object(o) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(o.get("n"), Some(&Value::Double(1.0)));
        assert_eq!(o.get("i"), Some(&Value::Int(2)));
        assert_eq!(o.get("b"), Some(&Value::bytes(&b"hi"[..])));
        assert_eq!(
            o.get("d"),
            Some(&Value::Duration(cel_runtime::Duration {
                nanos: 3_600_000_000_000
            }))
        );
        assert!(matches!(o.get("t"), Some(Value::Timestamp(t)) if t.seconds == 1_609_459_200));
        assert!(matches!(o.get("day"), Some(Value::Timestamp(t)) if t.seconds == 1_609_545_600));
        let Some(Value::List(s)) = o.get("s") else {
            panic!()
        };
        assert_eq!(s.semantics.as_deref(), Some(&ListSemantics::Set));
        assert_eq!(o.get("nul"), None);
        assert_eq!(o.get("foo__dash__bar"), Some(&Value::from("x")));
        assert_eq!(o.get("extra"), None);
        assert_eq!(o.len(), 10);
    }

    #[test]
    fn mismatched_data_fails_when_read() {
        let m = model(json!({"type": "object", "properties": {
            "o": {"type": "object", "properties": {"f": {"type": "string"}}},
            "l": {"type": "array", "items": {"type": "string"}},
            "ios": {"x-kubernetes-int-or-string": true},
            "nn": {"type": "array", "items": {"type": "string"}}
        }}));
        let v = m.to_value(&json!({"o": [], "l": {}, "ios": true, "nn": [null]}));
        let Value::Object(o) = &v else { panic!() };
        let err = |f: &str| check_data(o.get(f).unwrap()).unwrap_err().message;
        assert_eq!(
            err("o"),
            "invalid data, expected a map for the provided schema with type=object"
        );
        assert_eq!(
            err("l"),
            "invalid data, expected an array for the provided schema with type=array"
        );
        assert_eq!(
            err("ios"),
            "invalid data, expected XIntOrString value to be either a string or integer"
        );
        let Some(Value::List(nn)) = o.get("nn") else {
            panic!()
        };
        assert_eq!(
            check_data(&nn[0]).unwrap_err().message,
            "invalid data, got null for schema with nullable=false"
        );
    }

    #[test]
    fn untyped_data_converts_deeply_without_recursion() {
        let mut j = json!(1);
        for _ in 0..100 {
            j = json!([j]);
        }
        let v = untyped(&json!({"a": [1, 2.5, "s", null, {"b": true}], "deep": j}));
        let Value::Map(m) = &v else { panic!() };
        assert_eq!(
            m.get_str("a"),
            Some(&Value::list(vec![
                Value::Int(1),
                Value::Double(2.5),
                Value::from("s"),
                Value::Null,
                Value::map([(Key::String("b".into()), Value::Bool(true))]),
            ]))
        );
    }
}
