//! A MutatingAdmissionPolicy's `ApplyConfiguration` applied by the object's schema, as
//! k8s.io/apiserver `pkg/admission/plugin/policy/mutating/patch/smd.go`
//! (`ApplyStructuredMergeDiff`) applies it with structured-merge-diff:
//!
//! 1. the configuration is typed by the schema: a field the schema does not declare is an
//!    error (`failed to convert patch object to typed object: .spec.x: field not declared
//!    in schema`);
//! 2. it may hold no atomic list, map or struct (`validatePatch`: setting part of an atomic
//!    value would silently drop the rest of it): lists without a `x-kubernetes-list-type`
//!    (structured-merge-diff's default for OpenAPI lists) or with `atomic`, and objects with
//!    `x-kubernetes-map-type: atomic`;
//! 3. it merges field by field, `map` lists entry by entry by their keys, `set` lists by
//!    value.
//!
//! Values under `x-kubernetes-preserve-unknown-fields` or an embedded resource are merged as
//! given, unchecked. Without a schema (a kind no CRD or built-in serves), the dispatcher uses
//! the schema-less subset in [`super::mutating::apply_configuration`].

use std::collections::{HashMap, HashSet};

use cel_k8s_schema::schema::{AdditionalProperties, Schema};
use serde_json::{Map, Value as Json};

/// Applies `patch` to `target` by `schema` (see the module header); the error is the API
/// server's text after `error applying patch: `.
pub fn apply_typed(
    target: &mut Json,
    patch: Map<String, Json>,
    schema: &Schema,
) -> Result<(), String> {
    let patch = Json::Object(patch);
    let mut undeclared = Vec::new();
    cel_syntax::stack::guarded(|| {
        undeclared_fields(&patch, schema, &mut String::new(), &mut undeclared)
    });
    if !undeclared.is_empty() {
        return Err(format!(
            "failed to convert patch object to typed object: {}",
            undeclared.join("\n")
        ));
    }
    let mut atomics = Vec::new();
    cel_syntax::stack::guarded(|| find_atomics(&patch, schema, &mut String::new(), &mut atomics));
    if !atomics.is_empty() {
        return Err(format!(
            "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: {}",
            atomics.join(", ")
        ));
    }
    let Json::Object(patch) = patch else {
        return Ok(());
    };
    cel_syntax::stack::guarded(|| merge_object(target, patch, Some(schema)));
    Ok(())
}

/// Whether values under `schema` are the user's to shape (no field is checked there).
fn untyped(schema: &Schema) -> bool {
    schema.preserves_unknown_fields() || schema.x_embedded_resource
}

/// The schema of `key` of an object of `schema`: a declared property, else the values of a
/// map (`additionalProperties`); `Err(())` when the key is not allowed.
fn field_schema<'s>(schema: &'s Schema, key: &str) -> Result<Option<&'s Schema>, ()> {
    if let Some(p) = schema.properties.get(key) {
        return Ok(Some(p));
    }
    match &schema.additional_properties {
        Some(AdditionalProperties::Schema(s)) => Ok(Some(s)),
        Some(AdditionalProperties::Bool(true)) => Ok(None),
        _ => Err(()),
    }
}

/// structured-merge-diff's path text: `.field`, `[i]`.
fn with_segment<R>(path: &mut String, segment: &str, f: impl FnOnce(&mut String) -> R) -> R {
    let len = path.len();
    path.push_str(segment);
    let out = f(path);
    path.truncate(len);
    out
}

fn undeclared_fields(value: &Json, schema: &Schema, path: &mut String, out: &mut Vec<String>) {
    if untyped(schema) {
        return;
    }
    match value {
        Json::Object(map) => {
            for (k, v) in map {
                with_segment(path, &format!(".{k}"), |path| {
                    match field_schema(schema, k) {
                        Err(()) => out.push(format!("{path}: field not declared in schema")),
                        Ok(Some(s)) => {
                            cel_syntax::stack::guarded(|| undeclared_fields(v, s, path, out))
                        }
                        Ok(None) => {}
                    }
                });
            }
        }
        Json::Array(items) => {
            if let Some(s) = schema.items.as_deref() {
                for (i, v) in items.iter().enumerate() {
                    with_segment(path, &format!("[{i}]"), |path| {
                        cel_syntax::stack::guarded(|| undeclared_fields(v, s, path, out))
                    });
                }
            }
        }
        _ => {}
    }
}

/// `findAtomics`: the atomic lists, maps and structs the configuration sets (the fields of a
/// map's values are not looked into, as structured-merge-diff finds only struct fields).
fn find_atomics(value: &Json, schema: &Schema, path: &mut String, out: &mut Vec<String>) {
    if untyped(schema) {
        return;
    }
    match value {
        Json::Object(map) => {
            if schema.x_map_type.as_deref() == Some("atomic") {
                out.push(path.clone());
            }
            for (k, v) in map {
                if let Some(s) = schema.properties.get(k) {
                    with_segment(path, &format!(".{k}"), |path| {
                        cel_syntax::stack::guarded(|| find_atomics(v, s, path, out))
                    });
                }
            }
        }
        Json::Array(items) => {
            if matches!(schema.x_list_type.as_deref(), None | Some("atomic")) {
                out.push(path.clone());
            }
            if let Some(s) = schema.items.as_deref() {
                for (i, v) in items.iter().enumerate() {
                    with_segment(path, &format!("[{i}]"), |path| {
                        cel_syntax::stack::guarded(|| find_atomics(v, s, path, out))
                    });
                }
            }
        }
        _ => {}
    }
}

fn merge_object(target: &mut Json, patch: Map<String, Json>, schema: Option<&Schema>) {
    if !target.is_object() {
        *target = Json::Object(Map::new());
    }
    let Json::Object(t) = target else { return };
    for (k, v) in patch {
        let child = schema
            .filter(|s| !untyped(s))
            .and_then(|s| field_schema(s, &k).ok().flatten());
        match v {
            Json::Null => {
                t.shift_remove(&k);
            }
            Json::Object(p) => {
                let slot = t.entry(k).or_insert(Json::Null);
                cel_syntax::stack::guarded(|| merge_object(slot, p, child));
            }
            Json::Array(items) => {
                let slot = t.entry(k).or_insert(Json::Null);
                merge_list(slot, items, child);
            }
            other => {
                t.insert(k, other);
            }
        }
    }
}

fn merge_list(target: &mut Json, items: Vec<Json>, schema: Option<&Schema>) {
    let Json::Array(existing) = target else {
        *target = Json::Array(items);
        return;
    };
    match schema.and_then(|s| s.x_list_type.as_deref()) {
        Some("map") => {
            let keys = schema.map_or(&[][..], |s| s.x_list_map_keys.as_slice());
            let item_schema = schema.and_then(|s| s.items.as_deref());
            // An entry's key as text, so that entries are found by hashing, in linear time.
            let key_of = |v: &Json| -> String {
                let key: Vec<&Json> = keys
                    .iter()
                    .map(|k| v.get(k).unwrap_or(&Json::Null))
                    .collect();
                serde_json::to_string(&key).unwrap_or_default()
            };
            // The live object may repeat a key (structured-merge-diff reads it with
            // `AllowDuplicates`): the entries of a key the configuration applies become one,
            // the first.
            let applied: HashSet<String> = items.iter().map(key_of).collect();
            let mut seen = HashSet::new();
            existing.retain(|e| {
                let k = key_of(e);
                !applied.contains(&k) || seen.insert(k)
            });
            let mut index: HashMap<String, usize> = existing
                .iter()
                .enumerate()
                .map(|(i, e)| (key_of(e), i))
                .collect();
            for item in items {
                let key = key_of(&item);
                match index.get(&key) {
                    Some(&i) => {
                        if let (Some(slot), Json::Object(p)) = (existing.get_mut(i), item) {
                            cel_syntax::stack::guarded(|| merge_object(slot, p, item_schema));
                        }
                    }
                    None => {
                        index.insert(key, existing.len());
                        existing.push(item);
                    }
                }
            }
        }
        Some("set") => {
            let mut present: HashSet<String> = existing.iter().map(Json::to_string).collect();
            for item in items {
                if present.insert(item.to_string()) {
                    existing.push(item);
                }
            }
        }
        _ => *existing = items,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cel_k8s_schema::Path;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::from_json(
            &json!({
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {
                        "replicas": {"type": "integer"},
                        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                            "properties": {"matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}},
                        "args": {"type": "array", "items": {"type": "string"}},
                        "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                        "containers": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "properties": {"name": {"type": "string"}, "image": {"type": "string"}}}},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }}
                }
            }),
            &Path::new("s"),
        )
        .unwrap()
    }

    fn apply(target: Json, patch: Json) -> Result<Json, String> {
        let mut t = target;
        let Json::Object(p) = patch else { panic!() };
        apply_typed(&mut t, p, &schema()).map(|()| t)
    }

    #[test]
    fn undeclared_fields_and_atomics_are_refused_as_the_api_server_words_it() {
        let base = json!({"spec": {"replicas": 1}});
        assert_eq!(
            apply(
                base.clone(),
                json!({"spec": {"replicasx": 1, "containers": [{"name": "a", "imagex": "b"}]}})
            )
            .unwrap_err(),
            "failed to convert patch object to typed object: .spec.replicasx: field not declared in schema\n.spec.containers[0].imagex: field not declared in schema"
        );
        assert_eq!(
            apply(
                base.clone(),
                json!({"spec": {"selector": {"matchLabels": {"l": "v"}}, "args": ["x"]}})
            )
            .unwrap_err(),
            "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector, .spec.args"
        );
        // Maps take any key; preserved fields are not checked.
        assert!(
            apply(
                base,
                json!({"spec": {"labels": {"any": "x"}, "raw": {"deep": {"x": [1]}}}})
            )
            .is_ok()
        );
    }

    #[test]
    fn lists_merge_by_their_keys_and_values() {
        let base = json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}], "finalizers": ["x"]}});
        let out = apply(
            base,
            json!({"spec": {"containers": [{"name": "b", "image": "3"}, {"name": "c"}], "finalizers": ["x", "y"]}}),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "3"}, {"name": "c"}], "finalizers": ["x", "y"]}})
        );
    }
}
