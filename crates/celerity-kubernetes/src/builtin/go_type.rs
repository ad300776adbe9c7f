//! A built-in kind's Go type, as far as decoding JSON into it goes ([`GoType`]), read from
//! its published schema: a `$ref` to a definition with properties is a struct named by the
//! definition (`io.k8s.api.apps.v1.DeploymentSpec` is `v1.DeploymentSpec`), `integer` with
//! `int32`/`int64` an integer of that size, `byte` strings `[]byte`, `additionalProperties` a
//! map. Types that decode themselves check what their `UnmarshalJSON` checks: `metav1.Time`
//! and `MicroTime` want a string, `resource.Quantity` a quantity's syntax (its parser's error
//! ends the decoding: `quantities must match the regular expression ...`),
//! `intstr.IntOrString` a string or an `int32`; raw JSON is anything.
//!
//! Named scalar, slice and map types (`v1.PullPolicy`, `[]v1.Capability`, `v1.ResourceList`)
//! are not in the schemas: their names come from `schemas/go-names.json`, which
//! `tools/k8s-schemas/go_names.py` writes from the `types.go` files of k8s.io/api and
//! k8s.io/apimachinery at v0.36.0 (one table for every release: these names do not change
//! between releases; a field a release lacks is simply never looked up).
//!
//! The tree is bounded as the inlined schemas are: a definition that refers back to itself
//! (JSONSchemaProps) is cut to any value, and the whole tree to [`super::MAX_SCHEMA_NODES`].

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use cel_k8s_schema::godecode::{self, GoStruct, GoType};
use serde_json::Value as Json;

use super::{Definitions, MAX_SCHEMA_NODES};

/// The definitions of `metav1.Time` and `metav1.MicroTime`, which decode themselves from
/// strings (k8s.io/apimachinery pkg/apis/meta/v1/time.go, micro_time.go).
const TIMES: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
];

/// The definitions of the types with their own `UnmarshalJSON` besides times.
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";

/// `resource.Quantity`'s `UnmarshalJSON` (k8s.io/apimachinery pkg/api/resource/quantity.go):
/// the value's JSON text, without the quotes of a string, trimmed and parsed; the parser's
/// error is the decoding's. Quantities too large for this program's exact arithmetic are
/// accepted, as Go accepts them.
fn quantity_error(v: &Json) -> Option<String> {
    let text = match v {
        Json::Null => return None,
        Json::String(s) => s.trim().to_string(),
        other => other.to_string(),
    };
    match cel_k8s::quantity::Quantity::parse(&text) {
        Err(e) if e != cel_k8s::quantity::ERR_TOO_LARGE => Some(e.to_string()),
        _ => None,
    }
}

/// Definition → JSON field → the Go name of the field's named type.
type GoNames = HashMap<String, HashMap<String, String>>;

/// The table of named field types (parsed once per process).
fn go_names() -> &'static GoNames {
    static NAMES: OnceLock<GoNames> = OnceLock::new();
    NAMES.get_or_init(|| {
        // The table is ours and checked by the tests: a parse failure is a build bug.
        serde_json::from_str(include_str!("../../schemas/go-names.json")).unwrap_or_default()
    })
}

/// `ty` named `name` (`[]v1.Capability` names the slice and, `v1.Capability`, its elements).
fn named(name: &str, ty: GoType) -> GoType {
    let ty = match (name.strip_prefix("[]"), ty) {
        (Some(element), GoType::Slice(inner)) => GoType::Slice(Box::new(named(element, *inner))),
        (_, ty) => ty,
    };
    GoType::Named(name.into(), Box::new(ty))
}

/// Builds [`GoType`]s from definitions.
pub(super) struct GoTypeBuilder<'a> {
    pub(super) definitions: Definitions<'a>,
    /// The definitions being built (a reference to one of them is a cycle).
    stack: Vec<String>,
    nodes: usize,
}

impl<'a> GoTypeBuilder<'a> {
    pub(super) fn new(definitions: Definitions<'a>) -> GoTypeBuilder<'a> {
        GoTypeBuilder {
            definitions,
            stack: Vec::new(),
            nodes: 0,
        }
    }

    /// The Go type of the definition `name`.
    pub(super) fn definition(&mut self, name: &str) -> Result<GoType, String> {
        if TIMES.contains(&name) {
            return Ok(GoType::Time);
        }
        if name == QUANTITY {
            return Ok(GoType::SelfDecoding {
                name: "resource.Quantity",
                decode: quantity_error,
            });
        }
        if name == INT_OR_STRING {
            return Ok(godecode::INT_OR_STRING);
        }
        if self.stack.iter().any(|s| s == name)
            || self.stack.len() > cel_k8s_schema::schema::MAX_SCHEMA_DEPTH / 2
        {
            return Ok(GoType::Any);
        }
        let body = self.definitions.body(name)?;
        let Some(properties) = body.get("properties").and_then(Json::as_object) else {
            // No fields: a type that decodes itself (quantity, int-or-string, raw JSON), or
            // a scalar definition.
            return self.node(&body);
        };
        let (package_path, type_name) = name.rsplit_once('.').unwrap_or(("", name));
        let package = package_path.rsplit('.').next().unwrap_or(package_path);
        let names = go_names().get(name);
        self.stack.push(name.to_string());
        let mut fields = HashMap::with_capacity(properties.len());
        let mut result = Ok(());
        for (field, schema) in properties {
            match self.node(schema) {
                Ok(t) => {
                    let t = match names.and_then(|n| n.get(field)) {
                        Some(go_name) => named(go_name, t),
                        None => t,
                    };
                    fields.insert(field.clone(), t);
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.stack.pop();
        result?;
        Ok(GoType::Struct(Arc::new(GoStruct {
            name: type_name.to_string(),
            package: package.to_string(),
            fields,
        })))
    }

    fn node(&mut self, node: &Json) -> Result<GoType, String> {
        self.nodes += 1;
        if self.nodes > MAX_SCHEMA_NODES {
            return Err(format!(
                "the kind's Go type has more than {MAX_SCHEMA_NODES} nodes"
            ));
        }
        let Some(obj) = node.as_object() else {
            return Ok(GoType::Any);
        };
        let reference = obj.get("$ref").and_then(Json::as_str).or_else(|| {
            match obj.get("allOf").and_then(Json::as_array).map(Vec::as_slice) {
                Some([only]) => only.get("$ref").and_then(Json::as_str),
                _ => None,
            }
        });
        if let Some(r) = reference {
            return self.definition(r.strip_prefix("#/components/schemas/").unwrap_or(r));
        }
        let format = obj.get("format").and_then(Json::as_str);
        Ok(match obj.get("type").and_then(Json::as_str) {
            _ if obj.contains_key("oneOf") || obj.contains_key("anyOf") => GoType::Any,
            Some("integer") => match format {
                Some("int32") => GoType::Int(32),
                Some("int64") => GoType::Int(64),
                _ => GoType::Int(0),
            },
            Some("number") => GoType::Float(if format == Some("float") { 32 } else { 64 }),
            Some("boolean") => GoType::Bool,
            Some("string") => match format {
                Some("byte") => GoType::Bytes,
                Some("int-or-string") => godecode::INT_OR_STRING,
                _ => GoType::String,
            },
            Some("array") => match obj.get("items") {
                Some(items) => GoType::Slice(Box::new(self.node(items)?)),
                None => GoType::Any,
            },
            Some("object") => match obj.get("additionalProperties") {
                Some(elem @ Json::Object(_)) => GoType::Map(Box::new(self.node(elem)?)),
                _ => GoType::Any,
            },
            _ => GoType::Any,
        })
    }
}
