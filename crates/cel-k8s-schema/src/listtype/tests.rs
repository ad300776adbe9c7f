//! The cases of apiextensions-apiserver's `schema/listtype/validation_test.go`
//! (`TestValidateListSetsAndMaps`): same objects, list types and keys; Go matches each
//! error's type and path, these tests match the type and path in document order, and a few
//! whole texts.

use serde_json::{Value, json};

use super::*;
use crate::field::ErrorType;

fn schema(json: Value) -> Schema {
    Schema::from_json(&json, &Path::root()).expect("schema")
}

fn object(props: Value) -> Schema {
    schema(json!({"type": "object", "properties": props}))
}

fn set(items: Value) -> Value {
    json!({"type": "array", "x-kubernetes-list-type": "set", "items": items})
}

fn map_list(keys: &[&str], items: Value) -> Value {
    json!({"type": "array", "x-kubernetes-list-type": "map",
           "x-kubernetes-list-map-keys": keys, "items": items})
}

fn found(s: &Schema, obj: Value) -> Vec<(ErrorType, String)> {
    validate_list_sets_and_maps(s, &obj, &Path::new("root"))
        .into_iter()
        .map(|e| (e.error_type, e.field))
        .collect()
}

fn dup(p: &str) -> (ErrorType, String) {
    (ErrorType::Duplicate, p.to_string())
}

fn inv(p: &str) -> (ErrorType, String) {
    (ErrorType::Invalid, p.to_string())
}

#[test]
fn without_schema_or_object() {
    assert!(found(&Schema::default(), json!({"array": ["a", "b", "a"]})).is_empty());
    assert!(found(&object(json!({})), json!(null)).is_empty());
    let plain = object(json!({"array": {"type": "array"}}));
    assert!(found(&plain, json!({"array": ["a", "b", "a"]})).is_empty());
    let with_items = object(json!({"array": {"type": "array", "items": {"type": "string"}}}));
    assert!(found(&with_items, json!({"array": ["a", "b", "a"]})).is_empty());
}

#[test]
fn set_lists() {
    let s = object(json!({"array": {"type": "array", "x-kubernetes-list-type": "set"}}));
    assert!(found(&s, json!({"array": ["a"]})).is_empty());
    assert_eq!(
        found(&s, json!({"array": ["a", "a"]})),
        [dup("root.array[1]")]
    );
    assert!(found(&s, json!({"array": ["a", "b"]})).is_empty());
    assert_eq!(
        found(&s, json!({"array": ["a", "a", "b", "c", "d", "c"]})),
        [dup("root.array[1]"), dup("root.array[5]")]
    );
    let s = object(json!({"array": set(json!({"type": "string"}))}));
    assert_eq!(
        found(&s, json!({"array": ["a", "b", "a"]})),
        [dup("root.array[2]")]
    );
}

#[test]
fn set_under_additional_properties_and_items() {
    let s = schema(json!({"type": "object",
        "additionalProperties": set(json!({"type": "string"}))}));
    assert_eq!(
        found(&s, json!({"array": ["a", "b", "a"]})),
        [dup("root[array][2]")]
    );
    let s = object(json!({"array": {"type": "array", "items": set(json!({"type": "string"}))}}));
    assert_eq!(
        found(&s, json!({"array": [["a", "b", "a"], ["b", "b", "a"]]})),
        [dup("root.array[0][2]"), dup("root.array[1][1]")]
    );
    let s = object(json!({"array": set(set(json!({"type": "string"})))}));
    assert_eq!(
        found(&s, json!({"array": ["a", "b", "a", ["b", "b", "a"]]})),
        [dup("root.array[2]"), dup("root.array[3][1]")]
    );
}

#[test]
fn set_items_of_every_kind() {
    let names = [
        "strings",
        "integers",
        "booleans",
        "float64",
        "nil",
        "empty maps",
        "map values",
        "nil values",
        "array",
        "nil array",
        "multiple duplicates",
    ];
    let props: serde_json::Map<String, Value> = names
        .iter()
        .map(|n| (n.to_string(), set(json!({}))))
        .collect();
    let s = object(Value::Object(props));
    let obj = json!({
        "strings": ["a", "b", "a"],
        "integers": [1, 2, 1],
        "booleans": [false, true, true],
        "float64": [1.0, 2.0, 2.0],
        "nil": ["a", null, null],
        "empty maps": [{"a": "b"}, {}, {}],
        "map values": [{"a": "b"}, {"a": "c"}, {"a": "b"}],
        "nil values": [{"a": null}, {"b": "c", "a": null}],
        "array": [[], ["a"], ["b"], ["a"]],
        "nil array": [[], [null], [null, null], [null], ["a"]],
        "multiple duplicates": [{"a": "b"}, {"a": "c"}, {"a": "b"}, {"a": "c"}, {"a": "c"}]
    });
    assert_eq!(
        found(&s, obj),
        [
            dup("root.strings[2]"),
            dup("root.integers[2]"),
            dup("root.booleans[2]"),
            dup("root.float64[2]"),
            dup("root.nil[2]"),
            dup("root.empty maps[2]"),
            dup("root.map values[2]"),
            dup("root.array[3]"),
            dup("root.nil array[3]"),
            dup("root.multiple duplicates[2]"),
            dup("root.multiple duplicates[3]"),
        ]
    );
    let s = object(json!({"array": set(json!({"type": "array"}))}));
    assert_eq!(
        found(&s, json!({"array": [[], ["a"], ["a"]]})),
        [dup("root.array[2]")]
    );
}

#[test]
fn map_lists() {
    let one = |k: &[&str]| map_list(k, json!({"type": "object"}));
    let s = object(json!({
        "strings": one(&["a"]),
        "integers": one(&["a"]),
        "booleans": one(&["a"]),
        "float64": one(&["a"]),
        "nil": one(&["a"]),
        "array": one(&["a"]),
        "one key": one(&["a"]),
        "two keys": one(&["a", "b"]),
        "undefined key": one(&["a", "b"]),
        "compound key": one(&["a"]),
        "nil key": one(&["a"]),
        "nil item": one(&["a"]),
        "nil item multiple keys": one(&["a", "b"]),
        "multiple duplicates": one(&["a"])
    }));
    let obj = json!({
        "strings": ["a"],
        "integers": [1],
        "booleans": [false],
        "float64": [1.0],
        "nil": [null],
        "array": [["a"]],
        "one key": [{"a": "0", "c": "2"}, {"a": "1", "c": "1"}, {"a": "1", "c": "2"}, {}],
        "two keys": [{"a": "1", "b": "1", "c": "1"}, {"a": "1", "b": "2", "c": "2"},
                     {"a": "1", "b": "2", "c": "3"}, {}],
        "undefined key": [{"a": "1", "b": "1", "c": "1"}, {"a": "1", "c": "2"},
                          {"a": "1", "c": "3"}, {}],
        "compound key": [{"a": [], "c": "1"}, {"a": null, "c": "1"}, {"a": ["a"], "c": "1"},
                         {"a": ["a", 42], "c": "2"}, {"a": ["a", 42], "c": ["3"]}],
        "nil key": [{"a": [], "c": "1"}, {"a": null, "c": "1"}, {"c": "1"}, {"a": null}],
        "nil item": [null, {"a": "0", "c": "1"}, {"a": null}, {"c": "1"}],
        "nil item multiple keys": [null, {"b": "0", "c": "1"}, {"a": null}, {"c": "1"}],
        "multiple duplicates": [{"a": [], "c": "1"}, {"a": null, "c": "1"}, {"a": ["a"], "c": "1"},
                                {"a": ["a", 42], "c": "2"}, {"a": ["a", 42], "c": ["3"]},
                                {"a": ["a"], "c": "1", "d": "1"}, {"a": ["a"], "c": "1", "d": "2"}]
    });
    assert_eq!(
        found(&s, obj),
        [
            inv("root.strings[0]"),
            inv("root.integers[0]"),
            inv("root.booleans[0]"),
            inv("root.float64[0]"),
            inv("root.array[0]"),
            dup("root.one key[2]"),
            dup("root.two keys[2]"),
            dup("root.undefined key[2]"),
            dup("root.compound key[4]"),
            dup("root.nil key[3]"),
            dup("root.nil item[3]"),
            dup("root.nil item multiple keys[3]"),
            dup("root.multiple duplicates[4]"),
            dup("root.multiple duplicates[5]"),
        ]
    );
}

#[test]
fn texts() {
    let s = object(json!({
        "s": set(json!({})),
        "m": map_list(&["b", "a"], json!({"type": "object"})),
        "k": map_list(&["a"], json!({"type": "object"}))
    }));
    let errs: Vec<String> = validate_list_sets_and_maps(
        &s,
        &json!({
            "s": [1, 1.0, {"y": 1, "x": 2}, {"x": 2, "y": 1.0}, 1],
            "m": [{"a": 1, "b": "x"}, {"b": "x", "a": 1, "c": 0}],
            "k": [{"a": "z"}, 3]
        }),
        &Path::root(),
    )
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        errs,
        [
            r#"s[3]: Duplicate value: {"x":2,"y":1}"#,
            r#"s[4]: Duplicate value: 1"#,
            r#"m[1]: Duplicate value: {"a":1,"b":"x"}"#,
            r#"k[1]: Invalid value: 3: must be an object for an array of list-type map"#,
        ]
    );
}

#[test]
fn updates_are_checked_only_when_the_old_object_was_valid() {
    let s = object(json!({"array": set(json!({}))}));
    let bad = json!({"array": ["a", "a"]});
    let good = json!({"array": ["a"]});
    assert_eq!(
        validate_list_sets_and_maps_update(&s, &bad, &good, &Path::root()).len(),
        1
    );
    assert!(validate_list_sets_and_maps_update(&s, &bad, &bad, &Path::root()).is_empty());
}
