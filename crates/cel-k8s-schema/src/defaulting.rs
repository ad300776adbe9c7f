//! Defaulting: filling in the `default`s a structural schema declares, as the API server does
//! when it decodes a custom resource on create, update and read (apiextensions-apiserver
//! `pkg/apiserver/schema/defaulting`: `algorithm.go`, `prunenulls.go`, and the pruning of the
//! default values themselves, `prune.go` with `surroundingobject.go`).
//!
//! A [`Defaulter`] is prepared once per schema: it keeps only what defaulting reads (defaults,
//! `nullable`, the shape of properties, items and `additionalProperties`), with each default
//! already pruned as the API server prunes it before serving, and it marks the subtrees that
//! hold no default so that [`Defaulter::apply`] never walks them. Applying it to an object
//! allocates only the default values it inserts.
//!
//! The API server, decoding an object, prunes unknown fields ([`crate::pruning`]), then drops
//! `null`s that are neither nullable nor defaulted ([`Defaulter::prune_nulls`]), then applies
//! the defaults ([`Defaulter::apply`]); [`Defaulter::prune_and_default`] does the three in
//! that order.

use cel_runtime::MapHasher;
use indexmap::IndexMap;
use serde_json::{Map, Value as Json};

use crate::pruning;
use crate::schema::{MAX_SCHEMA_DEPTH, Schema};

/// A schema prepared for defaulting.
#[derive(Clone, Debug)]
pub struct Defaulter {
    root: Node,
}

/// What defaulting needs of one schema node.
#[derive(Clone, Debug, Default)]
struct Node {
    /// The (pruned) default; `None` for none or `null`.
    default: Option<Json>,
    nullable: bool,
    properties: IndexMap<String, Node, MapHasher>,
    /// Indexes into `properties` of the children whose subtree has a default.
    defaulted_properties: Vec<usize>,
    /// The `additionalProperties` schema.
    additional: Option<Box<Node>>,
    items: Option<Box<Node>>,
    /// Whether this node or a node below it has a default.
    has_defaults: bool,
}

impl Node {
    fn build(s: &Schema, depth: usize) -> Node {
        let mut node = Node {
            default: s.default.clone().filter(|d| !d.is_null()),
            nullable: s.nullable,
            ..Node::default()
        };
        if depth >= MAX_SCHEMA_DEPTH {
            node.has_defaults = node.default.is_some();
            return node;
        }
        for (name, prop) in &s.properties {
            node.properties
                .insert(name.clone(), Node::build(prop, depth + 1));
        }
        node.additional = s
            .additional_schema()
            .map(|a| Box::new(Node::build(a, depth + 1)));
        node.items = s
            .items
            .as_deref()
            .map(|i| Box::new(Node::build(i, depth + 1)));
        node.defaulted_properties = node
            .properties
            .values()
            .enumerate()
            .filter(|(_, p)| p.has_defaults)
            .map(|(i, _)| i)
            .collect();
        node.has_defaults = node.default.is_some()
            || !node.defaulted_properties.is_empty()
            || node.additional.as_ref().is_some_and(|a| a.has_defaults)
            || node.items.as_ref().is_some_and(|i| i.has_defaults);
        node
    }

    /// The default that replaces a `null` here, if `null` is not allowed.
    fn default_for_null(&self) -> Option<&Json> {
        if self.nullable {
            None
        } else {
            self.default.as_ref()
        }
    }
}

impl Defaulter {
    /// Prepares `schema` (a structural schema, as checked by [`crate::structural`]); its
    /// defaults are pruned first, as [`prune_defaults`] does.
    pub fn new(schema: &Schema) -> Defaulter {
        let pruned = prune_defaults(schema);
        Defaulter {
            root: Node::build(&pruned, 0),
        }
    }

    /// Whether the schema declares any default (if not, [`Defaulter::apply`] does nothing).
    pub fn has_defaults(&self) -> bool {
        self.root.has_defaults
    }

    /// Fills in defaults: a property that is missing, or `null` where the schema does not
    /// allow `null`, gets its default; so do `null` list items and map values. Defaults are
    /// then defaulted further, like data.
    pub fn apply(&self, value: &mut Json) {
        apply(value, &self.root);
    }

    /// Removes map entries that are `null` where the schema allows no `null` and gives no
    /// default (`PruneNonNullableNullsWithoutDefaults`); non-nullable `null`s with a default
    /// are left for [`Defaulter::apply`].
    pub fn prune_nulls(&self, value: &mut Json) {
        prune_nulls(value, &self.root);
    }

    /// What the API server does to a decoded object: prunes unknown fields (returning their
    /// paths, see [`crate::pruning::prune`]), removes non-nullable nulls without defaults,
    /// and applies the defaults. `schema` must be the schema this defaulter was made from.
    pub fn prune_and_default(
        &self,
        value: &mut Json,
        schema: &Schema,
        is_resource_root: bool,
    ) -> Vec<String> {
        let pruned = pruning::prune(value, schema, is_resource_root);
        self.prune_nulls(value);
        self.apply(value);
        pruned
    }
}

fn apply(x: &mut Json, node: &Node) {
    if !node.has_defaults {
        return;
    }
    match x {
        Json::Object(map) => apply_object(map, node),
        Json::Array(items) => {
            let Some(item) = node.items.as_deref() else {
                return;
            };
            for v in items.iter_mut() {
                if let (true, Some(d)) = (v.is_null(), item.default_for_null()) {
                    *v = d.clone();
                }
                apply(v, item);
            }
        }
        _ => {}
    }
}

fn apply_object(map: &mut Map<String, Json>, node: &Node) {
    for &i in &node.defaulted_properties {
        let Some((name, prop)) = node.properties.get_index(i) else {
            continue;
        };
        match map.get_mut(name.as_str()) {
            Some(v) => {
                if let (true, Some(d)) = (v.is_null(), prop.default_for_null()) {
                    *v = d.clone();
                }
                apply(v, prop);
            }
            None => {
                if let Some(d) = &prop.default {
                    let mut v = d.clone();
                    apply(&mut v, prop);
                    map.insert(name.clone(), v);
                }
            }
        }
    }
    let Some(additional) = node.additional.as_deref() else {
        return;
    };
    if !additional.has_defaults {
        return;
    }
    for (key, v) in map.iter_mut() {
        if node.properties.contains_key(key.as_str()) {
            continue;
        }
        if let (true, Some(d)) = (v.is_null(), additional.default_for_null()) {
            *v = d.clone();
        }
        apply(v, additional);
    }
}

/// The schema of a field: its property, else the `additionalProperties` schema.
fn field_node<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    match node.properties.get(key) {
        Some(p) => Some(p),
        None => node.additional.as_deref(),
    }
}

fn prune_nulls(x: &mut Json, node: &Node) {
    match x {
        Json::Object(map) => map.retain(|key, v| match field_node(node, key) {
            Some(child) => {
                if v.is_null() && !child.nullable && child.default.is_none() {
                    return false;
                }
                prune_nulls(v, child);
                true
            }
            None => true,
        }),
        Json::Array(items) => {
            if let Some(item) = node.items.as_deref() {
                for v in items.iter_mut() {
                    prune_nulls(v, item);
                }
            }
        }
        _ => {}
    }
}

/// One step from a resource root down to a schema node, to build the object that surrounds
/// a default value placed there.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// A property, or (`*`) an `additionalProperties` value.
    Child(String),
    /// A list item.
    Index,
}

/// Places `value` at `steps` below an otherwise empty object, as the API server builds the
/// object surrounding a default. `None` when the first step is not a property (the root of
/// a resource must be an object).
pub(crate) fn surround(steps: &[Step], value: Json) -> Option<Map<String, Json>> {
    let mut x = value;
    for step in steps.iter().rev() {
        x = match step {
            Step::Child(k) => {
                let mut m = Map::new();
                m.insert(k.clone(), x);
                Json::Object(m)
            }
            Step::Index => Json::Array(vec![x]),
        };
    }
    match x {
        Json::Object(m) => Some(m),
        _ => None,
    }
}

/// The value at `steps` in `root` (the inverse of [`surround`]); `None` when it is gone.
pub(crate) fn extract(root: Json, steps: &[Step]) -> Option<Json> {
    let mut x = root;
    for step in steps {
        x = match (step, x) {
            (Step::Child(k), Json::Object(mut m)) => m.remove(k.as_str())?,
            (Step::Index, Json::Array(items)) => items.into_iter().next()?,
            _ => return None,
        };
    }
    Some(x)
}

/// `schema` with each default pruned as the API server prunes defaults before it serves a
/// CRD (`PruneDefaults`): the default is placed where it applies in an otherwise empty
/// resource, the resource is pruned by the whole schema, and what is left at that place is
/// the default (none if nothing is left). A default at the root that is not an object is kept
/// as it is (the API server refuses to serve such a schema; CRD validation rejects it).
///
/// Known difference: the API server also coerces ObjectMeta of that surrounding resource
/// (dropping malformed metadata fields of defaults under `metadata`); that is not done here.
pub fn prune_defaults(schema: &Schema) -> Schema {
    let mut out = schema.clone();
    let mut steps = Vec::new();
    prune_defaults_at(&mut out, schema, &mut steps, 0);
    out
}

fn prune_defaults_at(node: &mut Schema, root: &Schema, steps: &mut Vec<Step>, depth: usize) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let default = node.default.as_ref().filter(|d| !d.is_null());
    if let Some(obj) = default.and_then(|d| surround(steps, d.clone())) {
        let mut obj = Json::Object(obj);
        pruning::prune(&mut obj, root, true);
        node.default = extract(obj, steps);
    }
    if let Some(crate::schema::AdditionalProperties::Schema(a)) = &mut node.additional_properties {
        steps.push(Step::Child("*".to_string()));
        prune_defaults_at(a, root, steps, depth + 1);
        steps.pop();
    }
    if let Some(items) = &mut node.items {
        steps.push(Step::Index);
        prune_defaults_at(items, root, steps, depth + 1);
        steps.pop();
    }
    for (name, prop) in node.properties.iter_mut() {
        steps.push(Step::Child(name.clone()));
        prune_defaults_at(prop, root, steps, depth + 1);
        steps.pop();
    }
}

#[cfg(test)]
mod tests {
    //! The cases of apiextensions-apiserver `defaulting/algorithm_test.go` (`TestDefault`) and
    //! `defaulting/prunenulls_test.go` (`TestPruneNonNullableNullsWithoutDefaults`), plus the
    //! pruning of defaults.

    use super::*;
    use crate::field::Path;
    use serde_json::json;

    fn schema(j: Json) -> Schema {
        Schema::from_json(&j, &Path::root()).expect("test schema reads")
    }

    fn defaulted(object: Json, s: Json) -> Json {
        let mut obj = object;
        Defaulter::new(&schema(s)).apply(&mut obj);
        obj
    }

    fn nulls_pruned(object: Json, s: Json) -> Json {
        let mut obj = object;
        Defaulter::new(&schema(s)).prune_nulls(&mut obj);
        obj
    }

    #[test]
    fn default_scalars_and_arrays() {
        assert_eq!(defaulted(json!(null), json!({})), json!(null));
        assert_eq!(defaulted(json!(4), json!({"default": "foo"})), json!(4));
        assert_eq!(
            defaulted(json!([1, 2]), json!({"items": {"default": "foo"}})),
            json!([1, 2])
        );
        assert_eq!(
            defaulted(
                json!([{"a":1},{"b":1},{"c":1}]),
                json!({"items": {"properties": {
                    "a": {"default": "A"}, "b": {"default": "B"}, "c": {"default": "C"}
                }}})
            ),
            json!([{"a":1,"b":"B","c":"C"},{"a":"A","b":1,"c":"C"},{"a":"A","b":"B","c":1}])
        );
    }

    #[test]
    fn default_object_array_object() {
        let s = json!({"properties": {
            "array": {"items": {"properties": {"a": {"default": "A"}, "b": {"default": "B"}}}},
            "object": {"properties": {"a": {"default": "N"}, "b": {"default": "O"}}},
            "additionalProperties": {"additionalProperties": {"properties": {
                "a": {"default": "alpha"}, "b": {"default": "beta"}
            }}},
            "foo": {"default": "bar"}
        }});
        assert_eq!(
            defaulted(
                json!({"array":[{"a":1},{"b":2}],"object":{"a":1},"additionalProperties":{"x":{"a":1},"y":{"b":2}}}),
                s
            ),
            json!({"array":[{"a":1,"b":"B"},{"a":"A","b":2}],"object":{"a":1,"b":"O"},
                   "additionalProperties":{"x":{"a":1,"b":"beta"},"y":{"a":"alpha","b":2}},"foo":"bar"})
        );
    }

    #[test]
    fn default_empty_and_null() {
        assert_eq!(
            defaulted(
                json!([{},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":null},{"a":[]},{"a":{}}]),
                json!({"items": {"properties": {"a": {"default": "A"}}}})
            ),
            json!([{"a":"A"},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":"A"},{"a":[]},{"a":{}}])
        );
    }

    #[test]
    fn default_nulls() {
        let items = json!({"properties": {"a": {"default": "A"}}});
        assert_eq!(
            defaulted(json!([null]), json!({"nullable": true, "items": items})),
            json!([null])
        );
        assert_eq!(
            defaulted(json!([null]), json!({"items": {"default": "A"}})),
            json!(["A"])
        );
        assert_eq!(
            defaulted(
                json!({"a": null}),
                json!({"properties": {"a": {"nullable": true, "default": "A"}}})
            ),
            json!({"a": null})
        );
        assert_eq!(
            defaulted(
                json!({"a": null}),
                json!({"properties": {"a": {"default": "A"}}})
            ),
            json!({"a": "A"})
        );
        assert_eq!(
            defaulted(
                json!({"a": null}),
                json!({"additionalProperties": {"nullable": true, "default": "A"}})
            ),
            json!({"a": null})
        );
        assert_eq!(
            defaulted(
                json!({"a": null}),
                json!({"additionalProperties": {"default": "A"}})
            ),
            json!({"a": "A"})
        );
        assert_eq!(
            defaulted(json!({"a": null}), json!({"additionalProperties": true})),
            json!({"a": null})
        );
    }

    #[test]
    fn defaults_are_defaulted_further() {
        let s = json!({"type": "object", "properties": {"spec": {
            "type": "object", "default": {},
            "properties": {"replicas": {"type": "integer", "default": 1}}
        }}});
        assert_eq!(defaulted(json!({}), s), json!({"spec": {"replicas": 1}}));
    }

    #[test]
    fn prune_non_nullable_nulls_without_defaults() {
        assert_eq!(nulls_pruned(json!(null), json!({})), json!(null));
        assert_eq!(nulls_pruned(json!(4), json!({"default": "foo"})), json!(4));
        assert_eq!(nulls_pruned(json!([1, null]), json!({})), json!([1, null]));
        assert_eq!(
            nulls_pruned(
                json!([{"a":null},{"b":null},{"c":null},{"d":null},{"e":null}]),
                json!({"items": {"properties": {
                    "a": {"default": "A"},
                    "b": {"nullable": true},
                    "c": {"default": "C", "nullable": true},
                    "d": {}
                }}})
            ),
            json!([{"a":null},{"b":null},{"c":null},{},{"e":null}])
        );
    }

    #[test]
    fn defaults_are_pruned_before_use() {
        let s = json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "default": {"a": 1, "unknown": 2},
            "properties": {"a": {"type": "integer"}}
        }}});
        assert_eq!(defaulted(json!({}), s.clone()), json!({"spec": {"a": 1}}));
        let pruned = prune_defaults(&schema(s));
        assert_eq!(pruned.properties["spec"].default, Some(json!({"a": 1})));
    }

    #[test]
    fn defaults_under_embedded_metadata_are_not_pruned() {
        // Pruning keeps apiVersion, kind and metadata of embedded resources.
        let s = schema(json!({"type": "object", "properties": {"e": {
            "type": "object",
            "x-kubernetes-embedded-resource": true,
            "properties": {"metadata": {"type": "object", "default": {"labels": {"a": "b"}}}}
        }}}));
        let pruned = prune_defaults(&s);
        assert_eq!(
            pruned.properties["e"].properties["metadata"].default,
            Some(json!({"labels": {"a": "b"}}))
        );
    }

    #[test]
    fn prune_and_default_in_order() {
        let s = schema(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "a": {"type": "string", "default": "x"},
                "b": {"type": "string"}
            }}
        }}));
        let d = Defaulter::new(&s);
        assert!(d.has_defaults());
        let mut obj =
            json!({"apiVersion": "v1", "kind": "K", "spec": {"a": null, "b": null, "c": 1}});
        let pruned = d.prune_and_default(&mut obj, &s, true);
        assert_eq!(pruned, vec!["spec.c"]);
        assert_eq!(
            obj,
            json!({"apiVersion": "v1", "kind": "K", "spec": {"a": "x"}})
        );
    }
}
