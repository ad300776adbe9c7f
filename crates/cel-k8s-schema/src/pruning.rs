//! Pruning: removing from an object the fields its structural schema does not declare, as the
//! API server does when it decodes a custom resource (apiextensions-apiserver
//! `pkg/apiserver/schema/pruning`).
//!
//! The rules, node by node:
//!
//! * a node with `x-kubernetes-preserve-unknown-fields: true` keeps unknown fields, but the
//!   fields it declares (and its `additionalProperties` values) are pruned by their own schemas;
//!   list items below such a node keep their unknown fields too;
//! * an object node keeps the fields in `properties`; when it has `additionalProperties` (a
//!   schema, `true` or even `false`) it keeps every field and prunes the values by that schema
//!   (by nothing for a boolean, which empties nested objects);
//! * `apiVersion`, `kind` and `metadata` of an embedded resource
//!   (`x-kubernetes-embedded-resource`), and of the resource root, are left alone: ObjectMeta
//!   has its own coercion, which is not this module's business;
//! * a value without a schema loses every field of its objects.
//!
//! The pruned fields' paths are returned sorted, written as the API server writes them in its
//! strict-decoding warnings (`spec.foo`, `spec.list[1].bar`); [`unknown_field_warning`] gives
//! the warning's text. The walk follows the schema, so it allocates only for the paths it
//! reports and for the one path buffer it reuses.

use serde_json::{Map, Value as Json};

use crate::schema::Schema;

/// Data nested deeper than this below a node without a schema is left as it is (only lists
/// of lists can get that deep: objects without a schema are emptied without descending).
const MAX_DATA_DEPTH: usize = 1000;

/// The fields every resource has besides those its schema declares.
const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

fn is_meta_field(name: &str) -> bool {
    META_FIELDS.contains(&name)
}

/// Removes the fields of `value` that `schema` does not declare and returns their paths,
/// sorted. `is_resource_root` says that `value` is a whole resource, whose `apiVersion`,
/// `kind` and `metadata` are kept whatever the schema says (as for an embedded resource).
pub fn prune(value: &mut Json, schema: &Schema, is_resource_root: bool) -> Vec<String> {
    prune_opt(value, Some(schema), is_resource_root)
}

/// [`prune`] where the schema may be missing (then every object field is pruned).
pub(crate) fn prune_opt(
    value: &mut Json,
    schema: Option<&Schema>,
    is_resource_root: bool,
) -> Vec<String> {
    let mut pruner = Pruner::default();
    // The resource root is treated as an embedded resource, whatever its schema says.
    let embedded = is_resource_root || schema.is_some_and(|s| s.x_embedded_resource);
    pruner.prune(value, schema, embedded, 0);
    pruner.pruned.sort();
    pruner.pruned
}

/// The warning the API server gives for a pruned field when the client asked for field
/// validation `Warn` (and the error detail for `Strict`): `unknown field "spec.foo"`.
pub fn unknown_field_warning(path: &str) -> String {
    format!("unknown field \"{path}\"")
}

#[derive(Default)]
struct Pruner {
    /// The path of the value being pruned, as the warning prints it.
    path: String,
    pruned: Vec<String>,
}

impl Pruner {
    /// Records the pruned field `key` of the current value.
    fn record(&mut self, key: &str) {
        let mut p = String::with_capacity(self.path.len() + 1 + key.len());
        p.push_str(&self.path);
        if !p.is_empty() {
            p.push('.');
        }
        p.push_str(key);
        self.pruned.push(p);
    }

    fn push_key(&mut self, key: &str) -> usize {
        let len = self.path.len();
        if len > 0 {
            self.path.push('.');
        }
        self.path.push_str(key);
        len
    }

    fn push_index(&mut self, i: usize) -> usize {
        use std::fmt::Write as _;
        let len = self.path.len();
        let _ = write!(self.path, "[{i}]");
        len
    }

    /// `embedded` is whether `schema` is (or stands for) an embedded resource.
    fn prune(&mut self, x: &mut Json, schema: Option<&Schema>, embedded: bool, depth: usize) {
        if depth > MAX_DATA_DEPTH {
            return;
        }
        if let Some(s) = schema
            && s.preserves_unknown_fields()
        {
            return self.skip_prune(x, s, embedded, depth);
        }
        match x {
            Json::Object(map) => match schema {
                None => {
                    for key in map.keys() {
                        self.record(key);
                    }
                    map.clear();
                }
                Some(s) => self.prune_object(map, s, embedded, depth),
            },
            Json::Array(items) => {
                let item_schema = schema.and_then(|s| s.items.as_deref());
                let item_embedded = item_schema.is_some_and(|s| s.x_embedded_resource);
                for (i, v) in items.iter_mut().enumerate() {
                    let len = self.push_index(i);
                    self.prune(v, item_schema, item_embedded, depth + 1);
                    self.path.truncate(len);
                }
            }
            _ => {}
        }
    }

    fn prune_object(
        &mut self,
        map: &mut Map<String, Json>,
        s: &Schema,
        embedded: bool,
        depth: usize,
    ) {
        map.retain(|key, v| {
            if embedded && is_meta_field(key) {
                return true;
            }
            let child = if let Some(prop) = s.properties.get(key) {
                Some(prop)
            } else if s.additional_properties.is_some() {
                s.additional_schema()
            } else {
                // Meta fields dropped at the top of a non-resource value are not reported:
                // the API server restores them from the decoded object anyway.
                if !is_meta_field(key) || !self.path.is_empty() {
                    self.record(key);
                }
                return false;
            };
            let len = self.push_key(key);
            let child_embedded = child.is_some_and(|c| c.x_embedded_resource);
            self.prune(v, child, child_embedded, depth + 1);
            self.path.truncate(len);
            true
        });
    }

    /// Below `x-kubernetes-preserve-unknown-fields`: unknown fields stay, declared ones are
    /// pruned by their schemas.
    fn skip_prune(&mut self, x: &mut Json, s: &Schema, embedded: bool, depth: usize) {
        match x {
            Json::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if embedded && is_meta_field(key) {
                        continue;
                    }
                    let child = if let Some(prop) = s.properties.get(key) {
                        Some(prop)
                    } else if s.additional_properties.is_some() {
                        s.additional_schema()
                    } else {
                        continue;
                    };
                    let len = self.push_key(key);
                    let child_embedded = child.is_some_and(|c| c.x_embedded_resource);
                    self.prune(v, child, child_embedded, depth + 1);
                    self.path.truncate(len);
                }
            }
            Json::Array(items) => {
                // Items of a preserving list are themselves only skip-pruned.
                let Some(item_schema) = s.items.as_deref() else {
                    return;
                };
                for (i, v) in items.iter_mut().enumerate() {
                    let len = self.push_index(i);
                    let emb = item_schema.x_embedded_resource;
                    self.skip_prune(v, item_schema, emb, depth + 1);
                    self.path.truncate(len);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    //! The cases of apiextensions-apiserver `pruning/algorithm_test.go` (`TestPrune`).

    use super::*;
    use crate::field::Path;
    use serde_json::json;

    fn schema(j: Json) -> Schema {
        Schema::from_json(&j, &Path::root()).expect("test schema reads")
    }

    fn check(object: Json, s: Option<Json>, root: bool, expected: Json, pruned: &[&str]) {
        let s = s.map(schema);
        let mut obj = object.clone();
        let got = prune_opt(&mut obj, s.as_ref(), root);
        assert_eq!(obj, expected);
        assert_eq!(got, pruned);
        // Pruning again finds nothing more.
        let again = prune_opt(&mut obj, s.as_ref(), root);
        assert_eq!(obj, expected);
        assert!(again.is_empty(), "{again:?}");
    }

    #[test]
    fn scalars_and_lists() {
        check(json!(null), None, false, json!(null), &[]);
        check(json!(4), Some(json!({})), false, json!(4), &[]);
        check(
            json!([1, 2]),
            Some(json!({"items": {}})),
            false,
            json!([1, 2]),
            &[],
        );
    }

    #[test]
    fn object_array() {
        check(
            json!([{"a":1},{"b":1},{"a":1,"b":2,"c":3}]),
            Some(json!({"items": {"properties": {"a": {}, "c": {}}}})),
            false,
            json!([{"a":1},{},{"a":1,"c":3}]),
            &["[1].b", "[2].b"],
        );
        check(
            json!([{"a":1},{"b":1},{"a":1,"b":2,"c":3}]),
            None,
            false,
            json!([{}, {}, {}]),
            &["[0].a", "[1].b", "[2].a", "[2].b", "[2].c"],
        );
    }

    #[test]
    fn object_array_object() {
        check(
            json!({"array":[{"a":1},{"b":1},{"a":1,"b":2,"c":3}],"unspecified":{"a":1},"specified":{"a":1,"b":2,"c":3}}),
            Some(json!({"properties": {
                "array": {"items": {"properties": {"a": {}, "c": {}}}},
                "specified": {"properties": {"a": {}, "c": {}}}
            }})),
            false,
            json!({"array":[{"a":1},{},{"a":1,"c":3}],"specified":{"a":1,"c":3}}),
            &["array[1].b", "array[2].b", "specified.b", "unspecified"],
        );
    }

    #[test]
    fn nested_preserve_unknown_fields() {
        let object = json!({
            "unspecified": "bar",
            "alpha": "abc",
            "beta": 42.0,
            "unspecifiedObject": {"unspecified": "bar"},
            "pruning": {
                "unspecified": "bar",
                "unspecifiedObject": {"unspecified": "bar"},
                "pruning": {"unspecified": "bar"},
                "apiVersion": "unknown",
                "preserving": {"unspecified": "bar"}
            },
            "preserving": {
                "unspecified": "bar",
                "unspecifiedObject": {"unspecified": "bar"},
                "pruning": {"unspecified": "bar"},
                "preserving": {"unspecified": "bar"},
                "preservingUnknownType": [{"foo": true}, {"bar": true}]
            },
            "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
                "foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}
            },
            "preservingAdditionalPropertiesKeyPruneValues": {
                "foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}
            }
        });
        let s = json!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
            "properties": {
                "alpha": {"type": "string"},
                "beta": {"type": "number"},
                "pruning": {"type": "object", "properties": {
                    "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "pruning": {"type": "object"}
                }},
                "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                    "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "preservingUnknownType": {"x-kubernetes-preserve-unknown-fields": true},
                    "pruning": {"type": "object"}
                }},
                "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": true,
                    "additionalProperties": {"type": "object", "properties": {"specified": {"type": "object"}}}
                },
                "preservingAdditionalPropertiesKeyPruneValues": {
                    "type": "object",
                    "additionalProperties": {"type": "object", "properties": {"specified": {"type": "object"}}}
                }
            }
        });
        let expected = json!({
            "unspecified": "bar",
            "alpha": "abc",
            "beta": 42.0,
            "unspecifiedObject": {"unspecified": "bar"},
            "pruning": {"pruning": {}, "preserving": {"unspecified": "bar"}},
            "preserving": {
                "unspecified": "bar",
                "unspecifiedObject": {"unspecified": "bar"},
                "pruning": {},
                "preserving": {"unspecified": "bar"},
                "preservingUnknownType": [{"foo": true}, {"bar": true}]
            },
            "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {"foo": {"specified": {}}},
            "preservingAdditionalPropertiesKeyPruneValues": {"foo": {"specified": {}}}
        });
        check(
            object,
            Some(s),
            false,
            expected,
            &[
                "preserving.pruning.unspecified",
                "preservingAdditionalPropertiesKeyPruneValues.foo.specified.unspecified",
                "preservingAdditionalPropertiesKeyPruneValues.foo.unspecified",
                "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.specified.unspecified",
                "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.unspecified",
                "pruning.apiVersion",
                "pruning.pruning.unspecified",
                "pruning.unspecified",
                "pruning.unspecifiedObject",
            ],
        );
    }

    #[test]
    fn additional_properties() {
        check(
            json!({"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1}}}),
            Some(
                json!({"properties": {"a": {}, "c": {"additionalProperties": {"type": "integer"}}}}),
            ),
            false,
            json!({"a":1,"c":{"a":1,"b":2,"c":{}}}),
            &["b", "c.c.a"],
        );
        // `additionalProperties: false` keeps the keys and prunes their values by no schema.
        check(
            json!({"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1, "apiVersion": "unknown"}}}),
            Some(json!({"properties": {"a": {}, "c": {"additionalProperties": false}}})),
            false,
            json!({"a":1,"c":{"a":1,"b":2,"c":{}}}),
            &["b", "c.c.a", "c.c.apiVersion"],
        );
    }

    fn embedded_object(labels: bool) -> Json {
        let mut meta = json!({"name": "instance", "unspecified": "bar"});
        if labels {
            meta["namespace"] = json!("myns");
            meta["labels"] = json!({"foo": "bar"});
        }
        let resource = |spec: Json| {
            json!({"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
                   "metadata": meta.clone(), "spec": spec})
        };
        let mut nested = resource(json!({"unspecified": "bar"}));
        nested["spec"]["embedded"] = resource(json!({"unspecified": "bar"}));
        json!({
            "apiVersion": "foo/v1",
            "kind": "Foo",
            "metadata": meta.clone(),
            "unspecified": "bar",
            "pruned": resource(json!({"unspecified": "bar"})),
            "preserving": resource(json!({"unspecified": "bar"})),
            "nested": nested
        })
    }

    fn embedded_expected(labels: bool, root_meta: bool) -> Json {
        let mut meta = json!({"name": "instance", "unspecified": "bar"});
        if labels {
            meta["namespace"] = json!("myns");
            meta["labels"] = json!({"foo": "bar"});
        }
        let resource = |spec: Json| json!({"apiVersion": "foo/v1", "kind": "Foo", "metadata": meta.clone(), "spec": spec});
        let mut preserving = resource(json!({"unspecified": "bar"}));
        preserving["unspecified"] = json!("bar");
        let mut out = json!({
            "pruned": resource(json!({})),
            "preserving": preserving,
            "nested": resource(json!({"embedded": resource(json!({}))}))
        });
        if root_meta {
            out["apiVersion"] = json!("foo/v1");
            out["kind"] = json!("Foo");
            out["metadata"] = meta.clone();
        }
        out
    }

    const EMBEDDED_PRUNED: [&str; 7] = [
        "nested.spec.embedded.spec.unspecified",
        "nested.spec.embedded.unspecified",
        "nested.spec.unspecified",
        "nested.unspecified",
        "pruned.spec.unspecified",
        "pruned.unspecified",
        "unspecified",
    ];

    #[test]
    fn embedded_resources() {
        let s = json!({"type": "object", "properties": {
            "pruned": {"type": "object", "x-kubernetes-embedded-resource": true,
                       "properties": {"spec": {"type": "object"}}},
            "preserving": {"type": "object", "x-kubernetes-embedded-resource": true,
                           "x-kubernetes-preserve-unknown-fields": true},
            "nested": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
                "spec": {"type": "object", "properties": {
                    "embedded": {"type": "object", "x-kubernetes-embedded-resource": true,
                                 "properties": {"spec": {"type": "object"}}}
                }}
            }}
        }});
        // Not a resource root: the root's own apiVersion, kind and metadata go, silently.
        check(
            embedded_object(false),
            Some(s),
            false,
            embedded_expected(false, false),
            &EMBEDDED_PRUNED,
        );
    }

    #[test]
    fn embedded_resources_at_the_root() {
        let s = json!({"type": "object", "properties": {
            "metadata": {"type": "object"},
            "pruned": {"type": "object", "x-kubernetes-embedded-resource": true,
                       "properties": {"metadata": {"type": "object"}, "spec": {"type": "object"}}},
            "preserving": {"type": "object", "x-kubernetes-embedded-resource": true,
                           "x-kubernetes-preserve-unknown-fields": true},
            "nested": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
                "spec": {"type": "object", "properties": {
                    "embedded": {"type": "object", "x-kubernetes-embedded-resource": true,
                                 "properties": {"metadata": {"type": "object"}, "spec": {"type": "object"}}}
                }}
            }}
        }});
        check(
            embedded_object(true),
            Some(s),
            true,
            embedded_expected(true, true),
            &EMBEDDED_PRUNED,
        );
    }

    #[test]
    fn warning_text() {
        assert_eq!(
            unknown_field_warning("spec.foo"),
            "unknown field \"spec.foo\""
        );
    }

    #[test]
    fn deep_lists_without_schema_do_not_overflow() {
        let mut v = json!({"a": 1});
        for _ in 0..5000 {
            v = Json::Array(vec![v]);
        }
        let pruned = prune_opt(&mut v, None, false);
        assert!(pruned.is_empty());
    }
}
