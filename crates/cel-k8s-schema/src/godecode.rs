//! What Go's JSON decoder says when a request's body does not fit the Go type it is decoded
//! into: the API server's first step for a built-in kind, which refuses the request (400)
//! before any validation.
//!
//! The decoder is Kubernetes' fork of `encoding/json` (sigs.k8s.io/json,
//! `internal/golang/encoding/json/decode.go`). It walks the body in order (kubectl sends
//! objects with their keys sorted), remembers the first `UnmarshalTypeError` and goes on,
//! and names the error by the innermost struct holding the field and the JSON names of the
//! fields that led there (no list indexes, no map keys):
//! `json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`.
//! A type that decodes itself and fails (`metav1.Time`, `resource.Quantity`,
//! `intstr.IntOrString`) ends the decoding at once with its own
//! error, whatever came before.
//!
//! A [`GoType`] is what this module knows of a Go type: built from a kind's published schema
//! (by `celerity_kubernetes::builtin`), it knows structs, slices, maps and scalars. Named
//! scalar, slice and map types (`v1.PullPolicy`, `v1.ResourceList`) are not in the published
//! schemas: an error on one names its underlying type (`string`, `map[string]...`).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::gojson::{self, GoNumber};

/// A Go type, as far as decoding JSON into it goes.
#[derive(Clone, Debug)]
pub enum GoType {
    /// A struct.
    Struct(Arc<GoStruct>),
    /// A slice of the element type (`[]v1.Container`).
    Slice(Box<GoType>),
    /// A map with string keys (`map[string]string`).
    Map(Box<GoType>),
    /// `[]byte`: a base64 string (its decoding is not checked).
    Bytes,
    /// A signed integer of this many bits (`0`: Go's `int`).
    Int(u8),
    /// A float of this many bits.
    Float(u8),
    /// `bool`.
    Bool,
    /// `string` (or a named type over it).
    String,
    /// `metav1.Time` and `metav1.MicroTime`, which decode themselves from a string and fail at
    /// once on anything else.
    Time,
    /// A type that decodes itself in ways not modelled here (raw JSON, a schema `oneOf`): any
    /// value passes.
    Any,
    /// A type with its own `UnmarshalJSON` (`resource.Quantity`, `intstr.IntOrString`):
    /// `decode` gives the error that ends the decoding, or `None` when the value decodes
    /// (`null` always does).
    SelfDecoding {
        /// The Go type's name (`resource.Quantity`).
        name: &'static str,
        /// What its `UnmarshalJSON` says of a value.
        decode: fn(&Value) -> Option<String>,
    },
    /// A named type over another (`type PullPolicy string` is `v1.PullPolicy`): decoded as
    /// the type under it, named by its own name in errors.
    Named(Arc<str>, Box<GoType>),
}

/// A struct type: its name, its package's name and its fields by JSON name.
#[derive(Debug)]
pub struct GoStruct {
    /// The type's name (`DeploymentSpec`).
    pub name: String,
    /// The Go package's name (`v1`).
    pub package: String,
    /// The fields, by the name their `json` tag gives.
    pub fields: HashMap<String, GoType>,
}

impl GoType {
    /// The type as Go's `reflect.Type.String()` writes it (`v1.PodSpec`, `[]string`, `int32`).
    pub fn go_name(&self) -> String {
        match self {
            GoType::Struct(s) => format!("{}.{}", s.package, s.name),
            GoType::Slice(elem) => format!("[]{}", elem.go_name()),
            GoType::Map(elem) => format!("map[string]{}", elem.go_name()),
            GoType::Bytes => "[]uint8".into(),
            GoType::Int(0) => "int".into(),
            GoType::Int(bits) => format!("int{bits}"),
            GoType::Float(bits) => format!("float{bits}"),
            GoType::Bool => "bool".into(),
            GoType::String => "string".into(),
            GoType::Time => "v1.Time".into(),
            GoType::Any => "interface {}".into(),
            GoType::SelfDecoding { name, .. } => (*name).into(),
            GoType::Named(name, _) => name.to_string(),
        }
    }

    /// The type under any names given to it.
    fn underlying(&self) -> &GoType {
        match self {
            GoType::Named(_, inner) => inner.underlying(),
            other => other,
        }
    }

    /// The error decoding `value` into this type gives, or `None` when it decodes (unknown
    /// fields are not this module's concern: strict decoding reports them after a type
    /// error, if there is none).
    pub fn decode_error(&self, value: &Value) -> Option<String> {
        let mut decoder = Decoder::default();
        match decoder.value(self, value) {
            Err(fatal) => Some(fatal),
            Ok(()) => decoder.first,
        }
    }
}

impl GoType {
    /// What a strict decoder (`DisallowUnknownFields`) says of `value` after decoding it, when
    /// decoding succeeded: the paths of the fields no struct declares, in body order, as
    /// sigs.k8s.io/json words them (`spec.containers[0].foo`, map keys as fields), at most
    /// 100 (its limit).
    pub fn unknown_fields(&self, value: &Value) -> Vec<String> {
        let mut out = Vec::new();
        let mut path = String::new();
        unknown_fields_in(self, value, &mut path, &mut out);
        out
    }

    /// The error the API server's strict decoding gives `value`: a type error first, else
    /// `strict decoding error: unknown field "..."` for every unknown field; `None` when it
    /// decodes strictly.
    pub fn strict_decode_error(&self, value: &Value) -> Option<String> {
        if let Some(e) = self.decode_error(value) {
            return Some(e);
        }
        let unknown = self.unknown_fields(value);
        if unknown.is_empty() {
            return None;
        }
        let listed: Vec<String> = unknown
            .iter()
            .map(|p| format!("unknown field {p:?}"))
            .collect();
        Some(format!("strict decoding error: {}", listed.join(", ")))
    }
}

/// The most unknown fields a strict decoder reports.
const MAX_STRICT_ERRORS: usize = 100;

fn unknown_fields_in(ty: &GoType, v: &Value, path: &mut String, out: &mut Vec<String>) {
    if out.len() >= MAX_STRICT_ERRORS {
        return;
    }
    let len = path.len();
    match (ty.underlying(), v) {
        (GoType::Struct(s), Value::Object(map)) => {
            for key in sorted_keys(map) {
                push_key(path, key);
                match s.fields.get(key.as_str()) {
                    Some(field) => unknown_fields_in(field, &map[key], path, out),
                    None if out.len() < MAX_STRICT_ERRORS => out.push(path.clone()),
                    None => {}
                }
                path.truncate(len);
            }
        }
        (GoType::Map(elem), Value::Object(map)) => {
            for key in sorted_keys(map) {
                push_key(path, key);
                unknown_fields_in(elem, &map[key], path, out);
                path.truncate(len);
            }
        }
        (GoType::Slice(elem), Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                path.push('[');
                path.push_str(&i.to_string());
                path.push(']');
                unknown_fields_in(elem, item, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

/// The kind of JSON value, as Go's errors name it.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's `UnmarshalTypeError` text for a field of a struct (`field` is the path of JSON names
/// from the decoded value's root), for a value named `value` (`string`, `number 1.5`).
pub fn struct_field_error(strukt: &str, field: &str, value: &str, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {value} into Go struct field {strukt}.{field} of type {go_type}"
    )
}

/// The error a type decoding itself gives when it wanted a string (`metav1.Time`): Go's
/// `UnmarshalTypeError` without a struct, ending the decoding.
pub fn not_a_string_error(v: &Value) -> String {
    format!(
        "json: cannot unmarshal {} into Go value of type string",
        json_kind(v)
    )
}

/// `intstr.IntOrString`, which decodes a string as a string and anything else with a new
/// `encoding/json` decoder into an `int32`. That decoder's `UnmarshalTypeError` is the
/// standard library's type, which sigs.k8s.io/json does not give a struct context, so it
/// names no field: `json: cannot unmarshal bool into Go value of type int32`.
pub const INT_OR_STRING: GoType = GoType::SelfDecoding {
    name: "intstr.IntOrString",
    decode: int_or_string_error,
};

fn int_or_string_error(v: &Value) -> Option<String> {
    let found = match v {
        Value::Null | Value::String(_) => return None,
        Value::Number(n) => {
            let text = number_text(n);
            if int_fits(&text, 32) {
                return None;
            }
            format!("number {text}")
        }
        other => json_kind(other).to_string(),
    };
    Some(format!(
        "json: cannot unmarshal {found} into Go value of type int32"
    ))
}

/// The decoder's error context and its first error.
#[derive(Default)]
struct Decoder<'a> {
    /// The JSON names of the struct fields leading to the value being decoded.
    fields: Vec<&'a str>,
    /// The innermost struct holding such a field.
    strukt: Option<&'a str>,
    /// The first type error (decoding goes on after it).
    first: Option<String>,
}

impl<'a> Decoder<'a> {
    fn mismatch(&mut self, value: String, ty: &GoType) {
        if self.first.is_some() {
            return;
        }
        // Named by the outermost name (`v1.PullPolicy`, not `string`).
        let go_type = ty.go_name();
        self.first = Some(match self.strukt {
            Some(strukt) => struct_field_error(strukt, &self.fields.join("."), &value, &go_type),
            None => format!("json: cannot unmarshal {value} into Go value of type {go_type}"),
        });
    }

    /// Decodes `v` into `ty`; `Err` is an error that ends the decoding.
    fn value(&mut self, ty: &'a GoType, v: &'a Value) -> Result<(), String> {
        // `null` leaves any Go value as it is; types that decode themselves accept it too.
        if v.is_null() {
            return Ok(());
        }
        let named = ty;
        let ty = ty.underlying();
        match (ty, v) {
            (GoType::Any, _)
            | (GoType::Bool, Value::Bool(_))
            | (GoType::String, Value::String(_))
            | (GoType::Time, Value::String(_))
            | (GoType::Bytes, Value::String(_) | Value::Array(_)) => Ok(()),
            (GoType::Time, other) => Err(not_a_string_error(other)),
            (GoType::SelfDecoding { decode, .. }, v) => decode(v).map_or(Ok(()), Err),
            (GoType::Int(bits), Value::Number(n)) => {
                let text = number_text(n);
                if !int_fits(&text, *bits) {
                    self.mismatch(format!("number {text}"), named);
                }
                Ok(())
            }
            (GoType::Float(_), Value::Number(_)) => Ok(()),
            (GoType::Struct(s), Value::Object(map)) => self.object(s, map),
            (GoType::Slice(elem), Value::Array(items)) => {
                for item in items {
                    self.value(elem, item)?;
                }
                Ok(())
            }
            (GoType::Map(elem), Value::Object(map)) => {
                for key in sorted_keys(map) {
                    self.value(elem, &map[key])?;
                }
                Ok(())
            }
            (_, other) => {
                self.mismatch(json_kind(other).to_string(), named);
                Ok(())
            }
        }
    }

    fn object(&mut self, s: &'a GoStruct, map: &'a Map<String, Value>) -> Result<(), String> {
        let (depth, outer) = (self.fields.len(), self.strukt);
        for key in sorted_keys(map) {
            // Field names match exactly (Kubernetes decodes case-sensitively); unknown fields
            // are strict decoding's.
            let Some(field_type) = s.fields.get(key.as_str()) else {
                continue;
            };
            self.fields.push(key);
            self.strukt = Some(&s.name);
            let result = self.value(field_type, &map[key]);
            self.fields.truncate(depth);
            self.strukt = outer;
            result?;
        }
        Ok(())
    }
}

/// The keys in the order kubectl sends them (sorted, as Go's encoder writes maps).
fn sorted_keys(map: &Map<String, Value>) -> Vec<&String> {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_unstable();
    keys
}

/// The number's text as the request carries it (Go's encoder writes `3.0` as `3`).
fn number_text(n: &serde_json::Number) -> String {
    let mut out = String::new();
    gojson::write_number(&mut out, GoNumber::of(n));
    out
}

/// Whether `strconv.ParseInt(text, 10, 64)` succeeds and the value fits `bits` (`0`: 64).
fn int_fits(text: &str, bits: u8) -> bool {
    match text.parse::<i64>() {
        Ok(i) => match bits {
            8 => i8::try_from(i).is_ok(),
            16 => i16::try_from(i).is_ok(),
            32 => i32::try_from(i).is_ok(),
            _ => true,
        },
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strukt(name: &str, fields: Vec<(&str, GoType)>) -> GoType {
        GoType::Struct(Arc::new(GoStruct {
            name: name.into(),
            package: "v1".into(),
            fields: fields
                .into_iter()
                .map(|(k, t)| (k.to_string(), t))
                .collect(),
        }))
    }

    fn deployment() -> GoType {
        let container = strukt(
            "Container",
            vec![
                ("args", GoType::Slice(Box::new(GoType::String))),
                ("ports", {
                    let port = strukt("ContainerPort", vec![("containerPort", GoType::Int(32))]);
                    GoType::Slice(Box::new(port))
                }),
            ],
        );
        let pod_spec = strukt(
            "PodSpec",
            vec![("containers", GoType::Slice(Box::new(container)))],
        );
        let template = strukt("PodTemplateSpec", vec![("spec", pod_spec)]);
        let spec = strukt(
            "DeploymentSpec",
            vec![
                ("replicas", GoType::Int(32)),
                ("paused", GoType::Bool),
                ("template", template),
            ],
        );
        let meta = strukt(
            "ObjectMeta",
            vec![
                ("labels", GoType::Map(Box::new(GoType::String))),
                ("creationTimestamp", GoType::Time),
            ],
        );
        strukt(
            "Deployment",
            vec![
                ("apiVersion", GoType::String),
                ("metadata", meta),
                ("spec", spec),
            ],
        )
    }

    #[test]
    fn errors_name_the_innermost_struct_and_the_field_path() {
        let d = deployment();
        let cases = [
            (
                json!({"spec": {"replicas": "3"}}),
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
            ),
            (
                json!({"spec": {"replicas": 1.5}}),
                "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32",
            ),
            (
                json!({"spec": {"replicas": 3_000_000_000_i64}}),
                "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32",
            ),
            (
                json!({"spec": "x"}),
                "json: cannot unmarshal string into Go struct field Deployment.spec of type v1.DeploymentSpec",
            ),
            (
                json!({"metadata": {"labels": {"a": "x", "b": 1}}}),
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"ports": [{"containerPort": "80"}]}]}}}}),
                "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": {"name": "x"}}}}}),
                "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"args": ["--port", 80]}]}}}}),
                "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.args of type string",
            ),
        ];
        for (object, want) in cases {
            assert_eq!(d.decode_error(&object).as_deref(), Some(want), "{object}");
        }
    }

    #[test]
    fn the_first_error_in_key_order_wins_and_a_time_ends_decoding() {
        let d = deployment();
        // `metadata` sorts before `spec`: its error is first.
        let both = json!({"spec": {"paused": "yes"}, "metadata": {"labels": {"a": true}}});
        assert_eq!(
            d.decode_error(&both).as_deref(),
            Some(
                "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"
            )
        );
        // A Time that is no string fails at once, even after an earlier type error.
        let time = json!({"apiVersion": 1, "metadata": {"creationTimestamp": 5}});
        assert_eq!(
            d.decode_error(&time).as_deref(),
            Some("json: cannot unmarshal number into Go value of type string")
        );
    }

    #[test]
    fn strict_decoding_lists_unknown_fields_after_type_errors() {
        let d = deployment();
        let unknown = json!({"spec": {"template": {"spec": {"containers": [
            {"args": ["a"]}, {"argz": ["b"], "ports": [{"containerPort": 1, "hostPortt": 2}]}
        ]}}, "replicaz": 1}, "metadata": {"labels": {"a": "b"}, "nam": "x"}});
        assert_eq!(
            d.strict_decode_error(&unknown).as_deref(),
            Some(
                "strict decoding error: unknown field \"metadata.nam\", unknown field \"spec.replicaz\", unknown field \"spec.template.spec.containers[1].argz\", unknown field \"spec.template.spec.containers[1].ports[0].hostPortt\""
            )
        );
        // A type error is reported instead of the unknown fields.
        let both = json!({"spec": {"replicas": "1", "replicaz": 1}});
        assert_eq!(
            d.strict_decode_error(&both).as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
            )
        );
        assert_eq!(
            d.strict_decode_error(&json!({"spec": {"replicas": 1}})),
            None
        );
        let many: Map<String, Value> = (0..150).map(|i| (format!("f{i:03}"), json!(1))).collect();
        assert_eq!(d.unknown_fields(&Value::Object(many)).len(), 100);
    }

    #[test]
    fn named_types_are_named_by_their_own_names() {
        let named = |name: &str, t: GoType| GoType::Named(name.into(), Box::new(t));
        let capability = named("v1.Capability", GoType::String);
        let caps = strukt(
            "Capabilities",
            vec![(
                "add",
                named("[]v1.Capability", GoType::Slice(Box::new(capability))),
            )],
        );
        let container = strukt(
            "Container",
            vec![
                ("imagePullPolicy", named("v1.PullPolicy", GoType::String)),
                ("capabilities", caps),
            ],
        );
        assert_eq!(
            container
                .decode_error(&json!({"imagePullPolicy": true}))
                .as_deref(),
            Some(
                "json: cannot unmarshal bool into Go struct field Container.imagePullPolicy of type v1.PullPolicy"
            )
        );
        assert_eq!(
            container
                .decode_error(&json!({"capabilities": {"add": "NET_ADMIN"}}))
                .as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field Capabilities.capabilities.add of type []v1.Capability"
            )
        );
        assert_eq!(
            container
                .decode_error(&json!({"capabilities": {"add": [1]}}))
                .as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field Capabilities.capabilities.add of type v1.Capability"
            )
        );
        assert_eq!(
            container.decode_error(&json!({"imagePullPolicy": "Always"})),
            None
        );
    }

    #[test]
    fn what_decodes_gives_no_error() {
        let d = deployment();
        let ok = json!({
            "metadata": {"labels": {"a": "b"}, "creationTimestamp": null, "unknown": 1},
            "spec": {"replicas": 3.0, "paused": null, "template": {"spec": {"containers": [
                {"args": ["a"], "ports": [{"containerPort": 80}]}
            ]}}},
            "status": 5
        });
        assert_eq!(d.decode_error(&ok), None);
        assert_eq!(d.decode_error(&Value::Null), None);
        assert_eq!(
            d.decode_error(&json!([])).as_deref(),
            Some("json: cannot unmarshal array into Go value of type v1.Deployment")
        );
    }
}
