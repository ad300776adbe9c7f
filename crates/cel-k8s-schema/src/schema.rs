//! The OpenAPI v3 schema of a CustomResourceDefinition (`openAPIV3Schema`, Kubernetes'
//! `JSONSchemaProps`), read from JSON with every problem reported at its path.

use cel_runtime::MapHasher;
use indexmap::IndexMap;
use serde_json::Value as Json;

use crate::field::{BadValue, FieldError, Path};

/// A schema node, with the keywords Kubernetes accepts in a CRD.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schema {
    /// `type`: `object`, `array`, `string`, `integer`, `number`, `boolean` (empty if absent).
    pub type_: String,
    /// `format`.
    pub format: String,
    /// `title`.
    pub title: String,
    /// `description`.
    pub description: String,
    /// `default`.
    pub default: Option<Json>,
    /// `nullable`.
    pub nullable: bool,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `maxLength`.
    pub max_length: Option<i64>,
    /// `minLength`.
    pub min_length: Option<i64>,
    /// `pattern`.
    pub pattern: String,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `enum`.
    pub enum_: Option<Vec<Json>>,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `required`.
    pub required: Vec<String>,
    /// `items` (a single schema; an array of schemas is kept in [`Schema::items_array`]).
    pub items: Option<Box<Schema>>,
    /// `items` given as an array of schemas (not allowed in structural schemas).
    pub items_array: Option<Vec<Schema>>,
    /// `allOf`.
    pub all_of: Vec<Schema>,
    /// `oneOf`.
    pub one_of: Vec<Schema>,
    /// `anyOf`.
    pub any_of: Vec<Schema>,
    /// `not`.
    pub not: Option<Box<Schema>>,
    /// `properties`, in the order written. Hashed with [`MapHasher`] (not SipHash): every key
    /// of every object validated is looked up here, by pruning, defaulting and validation.
    pub properties: IndexMap<String, Schema, MapHasher>,
    /// `additionalProperties`.
    pub additional_properties: Option<AdditionalProperties>,
    /// Keywords Kubernetes knows but structural schemas forbid (`$ref`, `patternProperties`,
    /// `dependencies`, `additionalItems`, `definitions`, `id`, `$schema`, ...), by name.
    pub forbidden: IndexMap<String, Json>,
    /// `externalDocs`, `example`: accepted, ignored.
    pub ignored: IndexMap<String, Json>,
    /// `x-kubernetes-preserve-unknown-fields` (`None` when absent).
    pub x_preserve_unknown_fields: Option<bool>,
    /// `x-kubernetes-embedded-resource`.
    pub x_embedded_resource: bool,
    /// `x-kubernetes-int-or-string`.
    pub x_int_or_string: bool,
    /// `x-kubernetes-list-map-keys`.
    pub x_list_map_keys: Vec<String>,
    /// `x-kubernetes-list-type`.
    pub x_list_type: Option<String>,
    /// `x-kubernetes-map-type`.
    pub x_map_type: Option<String>,
    /// `x-kubernetes-validations`.
    pub x_validations: Vec<ValidationRule>,
}

/// `additionalProperties`: a boolean or a schema.
#[derive(Clone, Debug, PartialEq)]
pub enum AdditionalProperties {
    /// `true` or `false`.
    Bool(bool),
    /// A schema for the values.
    Schema(Box<Schema>),
}

/// One `x-kubernetes-validations` entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValidationRule {
    /// `rule`: the CEL expression.
    pub rule: String,
    /// `message`.
    pub message: String,
    /// `messageExpression`.
    pub message_expression: String,
    /// `reason` (`FieldValueInvalid`, `FieldValueForbidden`, `FieldValueRequired`,
    /// `FieldValueDuplicate`), if given.
    pub reason: Option<String>,
    /// `fieldPath`.
    pub field_path: String,
    /// `optionalOldSelf`.
    pub optional_old_self: Option<bool>,
}

impl Schema {
    /// Whether `x-kubernetes-preserve-unknown-fields` is true.
    pub fn preserves_unknown_fields(&self) -> bool {
        self.x_preserve_unknown_fields == Some(true)
    }

    /// The schema of `additionalProperties`, if it is a schema.
    pub fn additional_schema(&self) -> Option<&Schema> {
        match &self.additional_properties {
            Some(AdditionalProperties::Schema(s)) => Some(s),
            _ => None,
        }
    }

    /// Whether this node or any node below it (properties, items, additionalProperties;
    /// not the logical junctors) has validation rules.
    pub fn has_validations(&self) -> bool {
        !self.x_validations.is_empty()
            || self.items.as_deref().is_some_and(Schema::has_validations)
            || self
                .additional_schema()
                .is_some_and(Schema::has_validations)
            || self.properties.values().any(Schema::has_validations)
    }

    /// Reads a schema from JSON (as found under a CRD version's `schema.openAPIV3Schema`).
    /// `path` names where it is, for errors (`spec.versions[0].schema.openAPIV3Schema`).
    pub fn from_json(json: &Json, path: &Path) -> Result<Schema, Vec<FieldError>> {
        let mut errors = Vec::new();
        let schema = read_schema(json, path, &mut errors, 0);
        if errors.is_empty() {
            Ok(schema)
        } else {
            Err(errors)
        }
    }
}

/// Schemas nest at most this deep (a schema is data a user sends; the API server's decoder
/// has a similar bound).
pub const MAX_SCHEMA_DEPTH: usize = 100;

fn type_error(path: &Path, v: &Json, want: &str) -> FieldError {
    FieldError::invalid(path, BadValue::of_json(v), format!("must be {want}"))
}

fn read_string(v: &Json, path: &Path, errors: &mut Vec<FieldError>) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => String::new(),
        other => {
            errors.push(type_error(path, other, "a string"));
            String::new()
        }
    }
}

fn read_bool(v: &Json, path: &Path, errors: &mut Vec<FieldError>) -> bool {
    match v {
        Json::Bool(b) => *b,
        Json::Null => false,
        other => {
            errors.push(type_error(path, other, "a boolean"));
            false
        }
    }
}

fn read_int(v: &Json, path: &Path, errors: &mut Vec<FieldError>) -> Option<i64> {
    match v {
        Json::Null => None,
        Json::Number(n) => match n.as_i64() {
            Some(i) => Some(i),
            None => {
                errors.push(type_error(path, v, "an integer"));
                None
            }
        },
        other => {
            errors.push(type_error(path, other, "an integer"));
            None
        }
    }
}

fn read_float(v: &Json, path: &Path, errors: &mut Vec<FieldError>) -> Option<f64> {
    match v {
        Json::Null => None,
        Json::Number(n) => n.as_f64(),
        other => {
            errors.push(type_error(path, other, "a number"));
            None
        }
    }
}

fn read_strings(v: &Json, path: &Path, errors: &mut Vec<FieldError>) -> Vec<String> {
    match v {
        Json::Null => Vec::new(),
        Json::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, s)| read_string(s, &path.index(i), errors))
            .collect(),
        other => {
            errors.push(type_error(path, other, "a list of strings"));
            Vec::new()
        }
    }
}

fn read_schemas(v: &Json, path: &Path, errors: &mut Vec<FieldError>, depth: usize) -> Vec<Schema> {
    match v {
        Json::Null => Vec::new(),
        Json::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, s)| read_schema(s, &path.index(i), errors, depth + 1))
            .collect(),
        other => {
            errors.push(type_error(path, other, "a list of schemas"));
            Vec::new()
        }
    }
}

fn read_schema(json: &Json, path: &Path, errors: &mut Vec<FieldError>, depth: usize) -> Schema {
    let mut s = Schema::default();
    if depth > MAX_SCHEMA_DEPTH {
        errors.push(FieldError::invalid(
            path,
            BadValue::Omit,
            format!("schema nested deeper than {MAX_SCHEMA_DEPTH} levels"),
        ));
        return s;
    }
    let obj = match json {
        Json::Object(o) => o,
        Json::Null => return s,
        other => {
            errors.push(type_error(path, other, "an object"));
            return s;
        }
    };
    for (key, v) in obj {
        let p = path.child(key);
        match key.as_str() {
            "type" => s.type_ = read_string(v, &p, errors),
            "format" => s.format = read_string(v, &p, errors),
            "title" => s.title = read_string(v, &p, errors),
            "description" => s.description = read_string(v, &p, errors),
            "default" => s.default = Some(v.clone()),
            "nullable" => s.nullable = read_bool(v, &p, errors),
            "maximum" => s.maximum = read_float(v, &p, errors),
            "exclusiveMaximum" => s.exclusive_maximum = read_bool(v, &p, errors),
            "minimum" => s.minimum = read_float(v, &p, errors),
            "exclusiveMinimum" => s.exclusive_minimum = read_bool(v, &p, errors),
            "maxLength" => s.max_length = read_int(v, &p, errors),
            "minLength" => s.min_length = read_int(v, &p, errors),
            "pattern" => s.pattern = read_string(v, &p, errors),
            "maxItems" => s.max_items = read_int(v, &p, errors),
            "minItems" => s.min_items = read_int(v, &p, errors),
            "uniqueItems" => s.unique_items = read_bool(v, &p, errors),
            "multipleOf" => s.multiple_of = read_float(v, &p, errors),
            "enum" => match v {
                Json::Array(items) => s.enum_ = Some(items.clone()),
                Json::Null => {}
                other => errors.push(type_error(&p, other, "a list")),
            },
            "maxProperties" => s.max_properties = read_int(v, &p, errors),
            "minProperties" => s.min_properties = read_int(v, &p, errors),
            "required" => s.required = read_strings(v, &p, errors),
            "items" => match v {
                Json::Array(_) => s.items_array = Some(read_schemas(v, &p, errors, depth)),
                Json::Null => {}
                other => s.items = Some(Box::new(read_schema(other, &p, errors, depth + 1))),
            },
            "allOf" => s.all_of = read_schemas(v, &p, errors, depth),
            "oneOf" => s.one_of = read_schemas(v, &p, errors, depth),
            "anyOf" => s.any_of = read_schemas(v, &p, errors, depth),
            "not" => {
                if !v.is_null() {
                    s.not = Some(Box::new(read_schema(v, &p, errors, depth + 1)));
                }
            }
            "properties" => match v {
                Json::Object(props) => {
                    for (name, ps) in props {
                        let prop = read_schema(ps, &p.key(name), errors, depth + 1);
                        s.properties.insert(name.clone(), prop);
                    }
                }
                Json::Null => {}
                other => errors.push(type_error(&p, other, "an object")),
            },
            "additionalProperties" => match v {
                Json::Bool(b) => s.additional_properties = Some(AdditionalProperties::Bool(*b)),
                Json::Null => {}
                other => {
                    s.additional_properties = Some(AdditionalProperties::Schema(Box::new(
                        read_schema(other, &p, errors, depth + 1),
                    )))
                }
            },
            "x-kubernetes-preserve-unknown-fields" => {
                if !v.is_null() {
                    s.x_preserve_unknown_fields = Some(read_bool(v, &p, errors));
                }
            }
            "x-kubernetes-embedded-resource" => s.x_embedded_resource = read_bool(v, &p, errors),
            "x-kubernetes-int-or-string" => s.x_int_or_string = read_bool(v, &p, errors),
            "x-kubernetes-list-map-keys" => s.x_list_map_keys = read_strings(v, &p, errors),
            "x-kubernetes-list-type" => {
                if !v.is_null() {
                    s.x_list_type = Some(read_string(v, &p, errors));
                }
            }
            "x-kubernetes-map-type" => {
                if !v.is_null() {
                    s.x_map_type = Some(read_string(v, &p, errors));
                }
            }
            "x-kubernetes-validations" => s.x_validations = read_rules(v, &p, errors),
            "externalDocs" | "example" => {
                s.ignored.insert(key.clone(), v.clone());
            }
            "id" | "$schema" | "$ref" | "patternProperties" | "dependencies"
            | "additionalItems" | "definitions" => {
                s.forbidden.insert(key.clone(), v.clone());
            }
            _ => errors.push(FieldError::new(
                crate::field::ErrorType::NotSupported,
                &p,
                BadValue::Omit,
                format!("unknown field \"{key}\""),
            )),
        }
    }
    s
}

fn read_rules(v: &Json, path: &Path, errors: &mut Vec<FieldError>) -> Vec<ValidationRule> {
    let items = match v {
        Json::Null => return Vec::new(),
        Json::Array(items) => items,
        other => {
            errors.push(type_error(path, other, "a list of validation rules"));
            return Vec::new();
        }
    };
    let mut rules = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p = path.index(i);
        let Json::Object(obj) = item else {
            errors.push(type_error(&p, item, "an object"));
            continue;
        };
        let mut r = ValidationRule::default();
        for (key, v) in obj {
            let q = p.child(key);
            match key.as_str() {
                "rule" => r.rule = read_string(v, &q, errors),
                "message" => r.message = read_string(v, &q, errors),
                "messageExpression" => r.message_expression = read_string(v, &q, errors),
                "reason" => {
                    if !v.is_null() {
                        r.reason = Some(read_string(v, &q, errors));
                    }
                }
                "fieldPath" => r.field_path = read_string(v, &q, errors),
                "optionalOldSelf" => {
                    if !v.is_null() {
                        r.optional_old_self = Some(read_bool(v, &q, errors));
                    }
                }
                _ => errors.push(FieldError::new(
                    crate::field::ErrorType::NotSupported,
                    &q,
                    BadValue::Omit,
                    format!("unknown field \"{key}\""),
                )),
            }
        }
        rules.push(r);
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_crd_schema() {
        let s = Schema::from_json(
            &json!({
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "required": ["replicas"],
                        "x-kubernetes-validations": [
                            {"rule": "self.replicas <= 10", "message": "too many"}
                        ],
                        "properties": {
                            "replicas": {"type": "integer", "minimum": 0},
                            "tags": {"type": "array", "items": {"type": "string"},
                                     "x-kubernetes-list-type": "set", "maxItems": 5},
                            "labels": {"type": "object",
                                       "additionalProperties": {"type": "string"}}
                        }
                    }
                }
            }),
            &Path::new("openAPIV3Schema"),
        )
        .unwrap();
        let spec = &s.properties["spec"];
        assert_eq!(spec.required, vec!["replicas"]);
        assert_eq!(spec.x_validations[0].message, "too many");
        assert_eq!(spec.properties["replicas"].minimum, Some(0.0));
        assert_eq!(spec.properties["tags"].x_list_type.as_deref(), Some("set"));
        assert!(spec.properties["labels"].additional_schema().is_some());
        assert!(s.has_validations());
    }

    #[test]
    fn reports_problems_at_their_paths() {
        let errs = Schema::from_json(
            &json!({"type": 3, "properties": {"a": {"maxLength": "x", "bogus": 1}}}),
            &Path::new("s"),
        )
        .unwrap_err();
        let texts: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            texts,
            vec![
                "s.type: Invalid value: 3: must be a string",
                "s.properties[a].maxLength: Invalid value: \"x\": must be an integer",
                "s.properties[a].bogus: Unsupported value: unknown field \"bogus\"",
            ]
        );
    }

    #[test]
    fn depth_is_bounded() {
        let mut j = json!({"type": "string"});
        for _ in 0..200 {
            j = json!({"type": "array", "items": j});
        }
        let errs = Schema::from_json(&j, &Path::root()).unwrap_err();
        assert!(errs[0].detail.contains("deeper than"));
    }
}
