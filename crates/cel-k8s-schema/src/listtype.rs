//! Uniqueness in `x-kubernetes-list-type: set` and `map` lists, as the API server checks it
//! after OpenAPI validation (apiextensions' `schema/listtype`): a set's repeated items and a
//! map list's items with repeated keys are `Duplicate value` errors at the repetition (once
//! per value, at its second occurrence), and a map list's items must be objects.
//!
//! Equality is Go's: scalars by value and Go type (`1` and `1.0` differ), objects and arrays
//! by their JSON text with sorted keys (where `1` and `1.0` are the same). Go visits an
//! object's keys in random order; here they are visited in document order,
//! `additionalProperties` first and then `properties`, as Go's two passes do.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::field::{BadValue, FieldError, Path};
use crate::gojson::{self, GoNumber};
use crate::schema::Schema;

/// The duplicate and shape errors of every set and map list in `value` (an object, else
/// nothing is checked), with `path` the object's field path.
pub fn validate_list_sets_and_maps(schema: &Schema, value: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Value::Object(map) = value {
        walk_object(schema, map, path, &mut errors);
    }
    errors
}

/// The checks on update: the API server reports a new object's duplicates only when the old
/// object had none (a list that was already invalid is not held against the update).
pub fn validate_list_sets_and_maps_update(
    schema: &Schema,
    new: &Value,
    old: &Value,
    path: &Path,
) -> Vec<FieldError> {
    if validate_list_sets_and_maps(schema, old, path).is_empty() {
        validate_list_sets_and_maps(schema, new, path)
    } else {
        Vec::new()
    }
}

fn walk_object(s: &Schema, map: &Map<String, Value>, path: &Path, errors: &mut Vec<FieldError>) {
    if let Some(additional) = s.additional_schema() {
        for (k, v) in map {
            walk(additional, v, &path.key(k), errors);
        }
    }
    for (k, v) in map {
        if let Some(prop) = s.properties.get(k) {
            walk(prop, v, &path.child(k), errors);
        }
    }
}

fn walk(s: &Schema, value: &Value, path: &Path, errors: &mut Vec<FieldError>) {
    match value {
        Value::Object(map) => walk_object(s, map, path, errors),
        Value::Array(items) => walk_array(s, items, path, errors),
        _ => {}
    }
}

fn walk_array(s: &Schema, items: &[Value], path: &Path, errors: &mut Vec<FieldError>) {
    match s.x_list_type.as_deref() {
        Some("set") => {
            for i in repeated(items.iter().map(|v| Some(identity(v)))) {
                errors.push(FieldError::duplicate(
                    &path.index(i),
                    BadValue::of_json(&items[i]),
                ));
            }
        }
        Some("map") => errors.extend(map_duplicates(s, items, path)),
        _ => {}
    }
    if let Some(item_schema) = s.items.as_deref() {
        for (i, item) in items.iter().enumerate() {
            walk(item_schema, item, &path.index(i), errors);
        }
    }
}

/// The indexes at which a value occurs the second time (`None` is a value of its own).
fn repeated(keys: impl Iterator<Item = Option<String>>) -> Vec<usize> {
    let mut seen: HashMap<Option<String>, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, k) in keys.enumerate() {
        let times = seen.entry(k).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

/// What makes two items the same in Go: scalars by Go type and value, compound values by
/// their JSON text.
fn identity(v: &Value) -> String {
    match v {
        Value::Null => "n".to_string(),
        Value::Bool(b) => format!("b{b}"),
        Value::String(s) => {
            let mut key = String::with_capacity(s.len() + 1);
            key.push('s');
            key.push_str(s);
            key
        }
        Value::Number(n) => match GoNumber::of(n) {
            GoNumber::Int(i) => format!("i{i}"),
            // Go compares float keys with ==, so -0 and 0 are one key.
            GoNumber::Float(f) => format!("f{}", (f + 0.0).to_bits()),
        },
        compound => format!("j{}", gojson::marshal(compound)),
    }
}

fn map_duplicates(s: &Schema, items: &[Value], path: &Path) -> Vec<FieldError> {
    if let Some((i, item)) = items
        .iter()
        .enumerate()
        .find(|(_, x)| !matches!(x, Value::Null | Value::Object(_)))
    {
        return vec![FieldError::invalid(
            &path.index(i),
            BadValue::of_json(item),
            "must be an object for an array of list-type map",
        )];
    }
    if items.len() <= 1 {
        return Vec::new();
    }
    let key_values = |item: &Value| -> Map<String, Value> {
        let mut key = Map::new();
        if let Value::Object(m) = item {
            for name in &s.x_list_map_keys {
                if let Some(v) = m.get(name) {
                    key.insert(name.clone(), v.clone());
                }
            }
        }
        key
    };
    if let [name] = s.x_list_map_keys.as_slice() {
        // One key field: compared by the key's value; a missing key is a value of its own.
        let dups = repeated(
            items
                .iter()
                .map(|x| x.as_object().and_then(|m| m.get(name)).map(identity)),
        );
        return dups
            .into_iter()
            .map(|i| {
                FieldError::duplicate(&path.index(i), BadValue::Json(key_values(&items[i]).into()))
            })
            .collect();
    }
    let keys: Vec<Value> = items.iter().map(|x| Value::Object(key_values(x))).collect();
    repeated(keys.iter().map(|k| Some(gojson::marshal(k))))
        .into_iter()
        .map(|i| FieldError::duplicate(&path.index(i), BadValue::Json(keys[i].clone())))
        .collect()
}

#[cfg(test)]
mod tests;
