//! Cases from apiextensions-apiserver's `pkg/apiserver/validation/validation_test.go`
//! (`TestValidateCustomResource`, `TestItemsProperty`) and `ratcheting_test.go`, with the
//! same schemas, objects and expected errors. Go compares the errors as sets; these tests
//! also fix their order (document order where Go's is random).

use serde_json::{Value, json};

use super::*;

fn validator(schema: Value) -> Validator {
    Validator::new(&Schema::from_json(&schema, &Path::root()).expect("schema"))
}

fn errors_of(v: &Validator, obj: &Value) -> Vec<String> {
    v.validate(obj, &Path::root())
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// One `TestValidateCustomResource` case: objects that pass and objects with their errors.
fn case(schema: Value, valid: &[Value], failing: &[(Value, &[&str])]) {
    let v = validator(schema);
    for obj in valid {
        assert_eq!(errors_of(&v, obj), Vec::<String>::new(), "object {obj}");
    }
    for (obj, want) in failing {
        assert_eq!(errors_of(&v, obj), *want, "object {obj}");
    }
}

fn field_schema(field: Value) -> Value {
    json!({"type": "object", "properties": {"field": field}})
}

#[test]
fn not_nullable() {
    case(
        field_schema(json!({"type": "object"})),
        &[json!({}), json!({"field": {}})],
        &[
            (
                json!({"field": "foo"}),
                &[
                    r#"field: Invalid value: "string": field in body must be of type object: "string""#,
                ],
            ),
            (
                json!({"field": 42}),
                &[
                    r#"field: Invalid value: "integer": field in body must be of type object: "integer""#,
                ],
            ),
            (
                json!({"field": true}),
                &[
                    r#"field: Invalid value: "boolean": field in body must be of type object: "boolean""#,
                ],
            ),
            (
                json!({"field": 1.2}),
                &[
                    r#"field: Invalid value: "number": field in body must be of type object: "number""#,
                ],
            ),
            (
                json!({"field": []}),
                &[
                    r#"field: Invalid value: "array": field in body must be of type object: "array""#,
                ],
            ),
            (
                json!({"field": null}),
                &[r#"field: Invalid value: "null": field in body must be of type object: "null""#],
            ),
        ],
    );
}

#[test]
fn nullable() {
    case(
        field_schema(json!({"type": "object", "nullable": true})),
        &[json!({}), json!({"field": {}}), json!({"field": null})],
        &[
            (
                json!({"field": "foo"}),
                &[
                    r#"field: Invalid value: "string": field in body must be of type object: "string""#,
                ],
            ),
            (
                json!({"field": 42}),
                &[
                    r#"field: Invalid value: "integer": field in body must be of type object: "integer""#,
                ],
            ),
            (
                json!({"field": true}),
                &[
                    r#"field: Invalid value: "boolean": field in body must be of type object: "boolean""#,
                ],
            ),
            (
                json!({"field": 1.2}),
                &[
                    r#"field: Invalid value: "number": field in body must be of type object: "number""#,
                ],
            ),
            (
                json!({"field": []}),
                &[
                    r#"field: Invalid value: "array": field in body must be of type object: "array""#,
                ],
            ),
        ],
    );
}

#[test]
fn nullable_and_no_type() {
    case(
        field_schema(json!({"nullable": true})),
        &[
            json!({}),
            json!({"field": {}}),
            json!({"field": null}),
            json!({"field": "foo"}),
            json!({"field": 42}),
            json!({"field": true}),
            json!({"field": 1.2}),
            json!({"field": []}),
        ],
        &[],
    );
}

#[test]
fn int_or_string() {
    case(
        field_schema(json!({"x-kubernetes-int-or-string": true})),
        &[json!({}), json!({"field": 42}), json!({"field": "foo"})],
        &[
            (
                json!({"field": null}),
                &[
                    r#"field: Invalid value: "null": field in body must be of type integer,string: "null""#,
                ],
            ),
            (
                json!({"field": true}),
                &[
                    r#"field: Invalid value: "boolean": field in body must be of type integer,string: "boolean""#,
                ],
            ),
            (
                json!({"field": 1.2}),
                &[
                    r#"field: Invalid value: "number": field in body must be of type integer,string: "number""#,
                ],
            ),
            (
                json!({"field": {}}),
                &[
                    r#"field: Invalid value: "object": field in body must be of type integer,string: "object""#,
                ],
            ),
            (
                json!({"field": []}),
                &[
                    r#"field: Invalid value: "array": field in body must be of type integer,string: "array""#,
                ],
            ),
        ],
    );
}

#[test]
fn nullable_int_or_string() {
    case(
        field_schema(json!({"nullable": true, "x-kubernetes-int-or-string": true})),
        &[
            json!({}),
            json!({"field": 42}),
            json!({"field": "foo"}),
            json!({"field": null}),
        ],
        &[
            (
                json!({"field": true}),
                &[
                    r#"field: Invalid value: "boolean": field in body must be of type integer,string: "boolean""#,
                ],
            ),
            (
                json!({"field": 1.2}),
                &[
                    r#"field: Invalid value: "number": field in body must be of type integer,string: "number""#,
                ],
            ),
            (
                json!({"field": {}}),
                &[
                    r#"field: Invalid value: "object": field in body must be of type integer,string: "object""#,
                ],
            ),
            (
                json!({"field": []}),
                &[
                    r#"field: Invalid value: "array": field in body must be of type integer,string: "array""#,
                ],
            ),
        ],
    );
}

#[test]
fn nullable_int_or_string_with_any_of() {
    case(
        field_schema(json!({
            "nullable": true,
            "x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "integer"}, {"type": "string"}]
        })),
        &[
            json!({}),
            json!({"field": null}),
            json!({"field": 42}),
            json!({"field": "foo"}),
        ],
        &[
            (
                json!({"field": true}),
                &[
                    r#"field: Invalid value: "boolean": field in body must be of type integer,string: "boolean""#,
                    r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
                    r#"field: Invalid value: "boolean": field in body must be of type integer: "boolean""#,
                ],
            ),
            (
                json!({"field": 1.2}),
                &[
                    r#"field: Invalid value: "number": field in body must be of type integer,string: "number""#,
                    r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
                    r#"field: Invalid value: "number": field in body must be of type integer: "number""#,
                    r#"<nil>: Invalid value: "": Checked value must be of type integer (default format) in field"#,
                ],
            ),
            (
                json!({"field": {}}),
                &[
                    r#"field: Invalid value: "object": field in body must be of type integer,string: "object""#,
                    r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
                    r#"field: Invalid value: "object": field in body must be of type integer: "object""#,
                ],
            ),
            (
                json!({"field": []}),
                &[
                    r#"field: Invalid value: "array": field in body must be of type integer,string: "array""#,
                    r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
                    r#"field: Invalid value: "array": field in body must be of type integer: "array""#,
                ],
            ),
        ],
    );
}

#[test]
fn nullable_int_or_string_with_all_of() {
    let all_none = r#"<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated"#;
    let any = r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#;
    case(
        field_schema(json!({
            "nullable": true,
            "x-kubernetes-int-or-string": true,
            "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]
        })),
        &[
            json!({}),
            json!({"field": null}),
            json!({"field": 42}),
            json!({"field": "foo"}),
        ],
        &[
            (
                json!({"field": true}),
                &[
                    r#"field: Invalid value: "boolean": field in body must be of type integer,string: "boolean""#,
                    any,
                    r#"field: Invalid value: "boolean": field in body must be of type integer: "boolean""#,
                    all_none,
                ],
            ),
            (
                json!({"field": 1.2}),
                &[
                    r#"field: Invalid value: "number": field in body must be of type integer,string: "number""#,
                    any,
                    r#"field: Invalid value: "number": field in body must be of type integer: "number""#,
                    r#"<nil>: Invalid value: "": Checked value must be of type integer (default format) in field"#,
                    all_none,
                ],
            ),
            (
                json!({"field": {}}),
                &[
                    r#"field: Invalid value: "object": field in body must be of type integer,string: "object""#,
                    any,
                    r#"field: Invalid value: "object": field in body must be of type integer: "object""#,
                    all_none,
                ],
            ),
            (
                json!({"field": []}),
                &[
                    r#"field: Invalid value: "array": field in body must be of type integer,string: "array""#,
                    any,
                    r#"field: Invalid value: "array": field in body must be of type integer: "array""#,
                    all_none,
                ],
            ),
        ],
    );
}

#[test]
fn invalid_regex() {
    case(
        field_schema(json!({"type": "string", "pattern": "+"})),
        &[],
        &[(
            json!({"field": "foo"}),
            &[
                "field: Invalid value: \"foo\": field in body should match '+, but pattern is invalid: error parsing regexp: missing argument to repetition operator: `+`'",
            ],
        )],
    );
}

#[test]
fn a_schemas_patterns_share_one_compiled_size_allowance() {
    // Each pattern compiles to about 4 MiB from 40 characters: the schema's allowance
    // (`cel_runtime::regex::PROGRAM_SIZE_LIMIT`) holds the first few, and the later ones are
    // reported as too large, rather than twenty of them taking 80 MiB and a second.
    let large = "^((abcdefghijklmnopqrstuvwxyz|u){100}){30}$";
    let properties: serde_json::Map<String, Value> = (0..20)
        .map(|i| {
            (
                format!("f{i:02}"),
                json!({"type": "string", "pattern": large}),
            )
        })
        .collect();
    let v = validator(json!({"type": "object", "properties": properties}));
    let ok = "u".repeat(3000);
    assert_eq!(errors_of(&v, &json!({"f00": ok})), Vec::<String>::new());
    assert_eq!(
        errors_of(&v, &json!({"f19": ok})),
        [format!(
            "f19: Invalid value: \"{ok}\": f19 in body should match '{large}, but pattern is \
             invalid: error parsing regexp: expression too large: `{large}`'"
        )]
    );
}

#[test]
fn required_field() {
    case(
        json!({
            "type": "object",
            "required": ["field"],
            "properties": {"field": {
                "type": "object",
                "required": ["nested"],
                "properties": {"nested": {}}
            }}
        }),
        &[],
        &[
            (json!({"test": "a"}), &["field: Required value"]),
            (json!({"field": {}}), &["field.nested: Required value"]),
        ],
    );
}

#[test]
fn enum_() {
    case(
        field_schema(json!({
            "type": "object",
            "required": ["nestedint", "nestedstring"],
            "properties": {
                "nestedint": {"type": "integer", "enum": [1, 2]},
                "nestedstring": {"type": "string", "enum": ["a", "b"]}
            }
        })),
        &[],
        &[
            (
                json!({"field": {}}),
                &[
                    "field.nestedint: Required value",
                    "field.nestedstring: Required value",
                ],
            ),
            (
                json!({"field": {"nestedint": "x", "nestedstring": true}}),
                &[
                    r#"field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string""#,
                    r#"field.nestedint: Unsupported value: "x": supported values: "1", "2""#,
                    r#"field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean""#,
                    r#"field.nestedstring: Unsupported value: true: supported values: "a", "b""#,
                ],
            ),
        ],
    );
}

/// The three rule cases of `TestValidateCustomResource` expect only CEL errors: the OpenAPI
/// part of validation passes every object (the rules are the CEL validator's to check).
#[test]
fn objects_of_the_rule_cases_pass_openapi_validation() {
    let immutable = field_schema(json!({
        "type": "string",
        "x-kubernetes-validations": [{"rule": "self == oldSelf"}]
    }));
    case(
        immutable,
        &[json!({"field": "x"}), json!({"field": "y"})],
        &[],
    );
    let list_map = field_schema(json!({
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["k1", "k2"],
        "items": {"type": "object", "properties": {
            "k1": {"type": "string"},
            "k2": {"type": "string"},
            "v1": {"type": "number", "x-kubernetes-validations": [{"rule": "self >= oldSelf"}]}
        }}
    }));
    case(
        list_map,
        &[
            json!({"field": [{"k1": "a", "k2": "b", "v1": 1.2}]}),
            json!({"field": [{"k1": "a", "k2": "b", "v1": 0.9}]}),
        ],
        &[],
    );
    let nested = field_schema(json!({
        "type": "array",
        "items": {"type": "object", "properties": {
            "x": {"type": "string", "x-kubernetes-validations": [{"rule": "self == 'x'"}]}
        }}
    }));
    case(
        nested,
        &[
            json!({"field": [{"x": "x"}]}),
            json!({"field": [{"x": "y"}]}),
        ],
        &[],
    );
}

#[test]
fn max_properties_items_length() {
    case(
        json!({"type": "object", "properties": {"fieldX": {"type": "object", "maxProperties": 2}}}),
        &[],
        &[(
            json!({"fieldX": {"a": true, "b": true, "c": true}}),
            &["fieldX: Too many: 3: must have at most 2 items"],
        )],
    );
    case(
        json!({"type": "object", "properties": {"fieldX": {"type": "array", "maxItems": 2}}}),
        &[],
        &[(
            json!({"fieldX": ["a", "b", "c"]}),
            &["fieldX: Too many: 3: must have at most 2 items"],
        )],
    );
    case(
        json!({"type": "object", "properties": {"fieldX": {"type": "string", "maxLength": 2}}}),
        &[],
        &[(
            json!({"fieldX": "abc"}),
            &["fieldX: Too long: may not be more than 2 bytes"],
        )],
    );
}

#[test]
fn k8s_names() {
    let long = json!({"type": "object", "properties": {"fieldX": {"type": "string", "format": "k8s-long-name"}}});
    let short = json!({"type": "object", "properties": {"fieldX": {"type": "string", "format": "k8s-short-name"}}});
    let at_134 =
        |s: Value| Validator::for_version(&Schema::from_json(&s, &Path::root()).unwrap(), 34);
    assert_eq!(
        errors_of(&at_134(long.clone()), &json!({"fieldX": "a.-"})),
        [r#"fieldX: Invalid value: "a.-": fieldX in body must be of type k8s-long-name: "a.-""#]
    );
    assert_eq!(
        errors_of(&at_134(short), &json!({"fieldX": "a-"})),
        [r#"fieldX: Invalid value: "a-": fieldX in body must be of type k8s-short-name: "a-""#]
    );
    // Before 1.34 the format is unknown and dropped.
    let at_133 = Validator::for_version(&Schema::from_json(&long, &Path::root()).unwrap(), 33);
    assert!(errors_of(&at_133, &json!({"fieldX": "a.-"})).is_empty());
}

fn numeric_formats() -> Value {
    json!({"type": "object", "properties": {
        "intThirtyTwo": {"type": "integer", "format": "int32"},
        "intSixtyFour": {"type": "integer", "format": "int64"},
        "floatThreeTwo": {"type": "number", "format": "float"},
        "floatSixFour": {"type": "number", "format": "double"}
    }})
}

#[test]
fn numeric_formats_valid() {
    case(
        numeric_formats(),
        &[
            json!({"intThirtyTwo": i32::MIN, "intSixtyFour": i64::MIN,
                   "floatThreeTwo": -(f32::MAX as f64), "floatSixFour": -f64::MAX}),
            json!({"intThirtyTwo": 0, "intSixtyFour": 0, "floatThreeTwo": 0.0, "floatSixFour": 0.0}),
            json!({"intThirtyTwo": i32::MAX, "intSixtyFour": i64::MAX,
                   "floatThreeTwo": f32::MAX as f64, "floatSixFour": f64::MAX}),
        ],
        &[],
    );
}

#[test]
fn numeric_formats_invalid() {
    let int64_type = r#"intSixtyFour: Invalid value: "float64": intSixtyFour in body must be of type int64: "float64""#;
    let int64_range = r#"<nil>: Invalid value: "": Checked value must be of type integer with format int64 in intSixtyFour"#;
    let int32_range = r#"<nil>: Invalid value: "": Checked value must be of type integer with format int32 in intThirtyTwo"#;
    let float_range = r#"<nil>: Invalid value: "": Checked value must be of type number with format float in floatThreeTwo"#;
    case(
        numeric_formats(),
        &[],
        &[
            (json!({"intThirtyTwo": i32::MAX as i64 + 1}), &[int32_range]),
            (json!({"intThirtyTwo": i32::MIN as i64 - 1}), &[int32_range]),
            (
                json!({"intSixtyFour": i64::MAX as f64 * 1.1}),
                &[int64_type, int64_range],
            ),
            (
                json!({"intSixtyFour": i64::MIN as f64 * 1.1}),
                &[int64_type, int64_range],
            ),
            (
                json!({"floatThreeTwo": f32::MAX as f64 * 1.1}),
                &[float_range],
            ),
            (
                json!({"floatThreeTwo": -(f32::MAX as f64) * 1.1}),
                &[float_range],
            ),
        ],
    );
}

#[test]
fn items_property() {
    // TestItemsProperty: "items" as a property name, and items of an array.
    case(
        json!({"properties": {"spec": {"properties": {"replicas": {"type": "integer"}}}}}),
        &[json!({"spec": {"replicas": 1, "items": ["1", "2"]}})],
        &[],
    );
    case(
        json!({"properties": {"secrets": {"type": "array", "items": {"type": "string"}}}}),
        &[json!({"secrets": ["1", "2"]})],
        &[],
    );
}

// ratcheting_test.go

fn number_schema(min: Option<f64>, max: Option<f64>) -> Value {
    let mut s = json!({"type": "number"});
    if let Some(m) = min {
        s["minimum"] = json!(m);
    }
    if let Some(m) = max {
        s["maximum"] = json!(m);
    }
    s
}

fn object_schema() -> Value {
    json!({"type": "object", "properties": {
        "zero": number_schema(Some(0.0), Some(0.0)),
        "small": number_schema(None, Some(50.0)),
        "medium": number_schema(Some(50.0), Some(10000.0)),
        "large": number_schema(Some(10000.0), None)
    }})
}

fn update_ok(v: &Validator, new: Value, old: Value) -> bool {
    v.validate_update(&new, &old, &Path::root()).0.is_empty()
}

#[test]
fn scalar_ratcheting() {
    let v = validator(number_schema(Some(50.0), Some(10000.0)));
    assert!(update_ok(&v, json!(1), json!(1)));
    assert!(!update_ok(&v, json!(1), json!(2)));
}

#[test]
fn object_scalar_fields_ratcheting() {
    let v = validator(object_schema());
    assert!(update_ok(&v, json!({"small": 500}), json!({"small": 500})));
    assert!(update_ok(
        &v,
        json!({"small": 501}),
        json!({"small": 501, "medium": 500})
    ));
    assert!(!update_ok(&v, json!({"small": 500}), json!({"small": 501})));
}

#[test]
fn object_object_fields_ratcheting() {
    let v = validator(json!({"type": "object", "properties": {"nested": object_schema()}}));
    assert!(update_ok(
        &v,
        json!({"nested": {"small": 500}}),
        json!({"nested": {"small": 500}})
    ));
    assert!(update_ok(
        &v,
        json!({"nested": {"small": 501}}),
        json!({"nested": {"small": 501, "medium": 500}})
    ));
    assert!(!update_ok(
        &v,
        json!({"nested": {"small": 500}}),
        json!({"nested": {"small": 501}})
    ));
}

#[test]
fn numeric_format_ratcheting() {
    let v = validator(json!({"type": "object", "properties": {
        "intThirtyTwo": {"type": "integer", "format": "int32"},
        "unrelated": {"type": "string"}
    }}));
    let big = i32::MAX as i64 + 1;
    assert!(update_ok(
        &v,
        json!({"intThirtyTwo": big}),
        json!({"intThirtyTwo": big})
    ));
    assert!(update_ok(
        &v,
        json!({"intThirtyTwo": big, "unrelated": "changed"}),
        json!({"intThirtyTwo": big, "unrelated": "original"})
    ));
    assert!(!update_ok(
        &v,
        json!({"intThirtyTwo": big + 1}),
        json!({"intThirtyTwo": big})
    ));
}

// Further cases: behaviour read from kube-openapi and apiextensions.

#[test]
fn ratcheted_errors_are_returned_separately() {
    let v = validator(object_schema());
    let (errors, ratcheted) = v.validate_update(
        &json!({"small": 500, "large": 1}),
        &json!({"small": 500}),
        &Path::root(),
    );
    let text = |l: &[FieldError]| l.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert_eq!(
        text(&errors),
        ["large: Invalid value: 1: large in body should be greater than or equal to 10000"]
    );
    assert_eq!(
        text(&ratcheted),
        ["small: Invalid value: 500: small in body should be less than or equal to 50"]
    );
}

#[test]
fn list_map_items_ratchet_by_key_and_other_lists_do_not() {
    let item = json!({"type": "object", "properties": {
        "name": {"type": "string"}, "port": {"type": "integer", "maximum": 10}
    }});
    let v = validator(json!({"type": "object", "properties": {
        "m": {"type": "array", "x-kubernetes-list-type": "map",
              "x-kubernetes-list-map-keys": ["name"], "items": item.clone()},
        "a": {"type": "array", "items": item}
    }}));
    let old = json!({"m": [{"name": "x", "port": 99}], "a": [{"name": "x", "port": 99}]});
    // The map list's item moved but is correlated by its key; the atomic list's is not.
    let new = json!({
        "m": [{"name": "y", "port": 1}, {"name": "x", "port": 99}],
        "a": [{"name": "x", "port": 99}, {"name": "y", "port": 1}]
    });
    let (errors, ratcheted) = v.validate_update(&new, &old, &Path::root());
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].field, "a[0].port");
    assert_eq!(ratcheted.len(), 1);
    assert_eq!(ratcheted[0].field, "m[1].port");
    // kind and apiVersion at the root are not ratcheted on their own (an unchanged object is
    // ratcheted as a whole).
    let v = validator(json!({"type": "object", "properties": {
        "kind": {"type": "string", "maxLength": 1},
        "other": {"type": "string", "maxLength": 1}
    }}));
    let old = json!({"kind": "ab", "other": "ab"});
    let (errors, ratcheted) = v.validate_update(
        &json!({"kind": "ab", "other": "ab", "x": 1}),
        &old,
        &Path::root(),
    );
    assert_eq!((errors.len(), ratcheted.len()), (1, 1));
    assert_eq!(errors[0].field, "kind");
    let (errors, ratcheted) = v.validate_update(&old, &old, &Path::root());
    assert_eq!((errors.len(), ratcheted.len()), (0, 2));
}

#[test]
fn paths_of_additional_properties_and_a_base_path() {
    let v = validator(json!({"type": "object", "properties": {"labels": {
        "type": "object", "additionalProperties": {"type": "string", "minLength": 2}
    }}}));
    let errs = v.validate(&json!({"labels": {"a": "x"}}), &Path::new("status"));
    assert_eq!(
        errs[0].to_string(),
        r#"status.labels.a: Invalid value: "x": labels.a in body should be at least 2 chars long"#
    );
    let errs = v.validate(&json!({"labels": {"a": "x", "b": 1}}), &Path::root());
    assert_eq!(errs.len(), 2);
    assert_eq!(
        errs[1].to_string(),
        r#"labels.b: Invalid value: "integer": labels.b in body must be of type string: "integer""#
    );
}

#[test]
fn numbers() {
    let v = validator(field_schema(
        json!({"type": "integer", "minimum": 1, "maximum": 10,
                                           "exclusiveMaximum": true, "multipleOf": 2}),
    ));
    assert_eq!(
        errors_of(&v, &json!({"field": 10})),
        ["field: Invalid value: 10: field in body should be less than 10"]
    );
    assert_eq!(
        errors_of(&v, &json!({"field": 3})),
        ["field: Invalid value: 3: field in body should be a multiple of 2"]
    );
    assert_eq!(
        errors_of(&v, &json!({"field": 0})),
        ["field: Invalid value: 0: field in body should be greater than or equal to 1"]
    );
    // An integral float is an integer; its type check passes.
    assert!(errors_of(&v, &json!({"field": 4.0})).is_empty());
    let v = validator(field_schema(json!({"type": "number", "maximum": 1.5})));
    assert_eq!(
        errors_of(&v, &json!({"field": 2.5})),
        ["field: Invalid value: 2.5: field in body should be less than or equal to 1.5"]
    );
    // An integer against a fractional bound compares with the bound truncated.
    assert!(errors_of(&v, &json!({"field": 1})).is_empty());
    let v = validator(field_schema(json!({"type": "number", "multipleOf": 0.5})));
    assert!(errors_of(&v, &json!({"field": 1.5})).is_empty());
    assert_eq!(
        errors_of(&v, &json!({"field": 1})),
        ["field: Invalid value: 0: factor MultipleOf declared for field must be positive: 0"]
    );
}

#[test]
fn strings_arrays_objects() {
    let v = validator(json!({"type": "object", "minProperties": 2, "properties": {
        "s": {"type": "string", "minLength": 3, "pattern": "^a", "format": "date"},
        "l": {"type": "array", "minItems": 2, "uniqueItems": true, "items": {"type": "integer"}},
        "e": {"type": "string", "enum": ["a", 1]}
    }, "additionalProperties": false}));
    assert_eq!(
        errors_of(&v, &json!({"s": "ab"})),
        [
            r#"<nil>: Invalid value: 1:  in body should have at least 2 properties"#,
            r#"s: Invalid value: "ab": s in body should be at least 3 chars long"#,
            r#"s: Invalid value: "ab": s in body must be of type date: "ab""#,
        ]
    );
    assert_eq!(
        errors_of(&v, &json!({"s": "abc", "x": 1, "l": [1, 1]})),
        [
            r#"<nil>: Invalid value: "x": .x in body is a forbidden property"#,
            r#"s: Invalid value: "abc": s in body must be of type date: "abc""#,
            r#"l: Invalid value: "": l in body shouldn't contain duplicates"#,
        ]
    );
    assert_eq!(
        errors_of(&v, &json!({"e": "b", "l": [1]})),
        [
            r#"e: Unsupported value: "b": supported values: "a", "1""#,
            r#"l: Invalid value: 1: l in body should have at least 2 items"#,
        ]
    );
    // Go converts an integer to a string as a code point before comparing with a string.
    assert!(errors_of(&v, &json!({"e": 97, "l": [1, 2]})).len() == 1);
}

#[test]
fn one_of_and_not() {
    let v = validator(field_schema(json!({
        "oneOf": [{"type": "string"}, {"maxLength": 3}],
        "not": {"type": "string", "pattern": "^x"}
    })));
    assert_eq!(
        errors_of(&v, &json!({"field": "ab"})),
        [
            r#"<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
        ]
    );
    assert_eq!(
        errors_of(&v, &json!({"field": "xabc"})),
        [r#"<nil>: Invalid value: "": "field" must not validate the schema (not)"#]
    );
    assert!(errors_of(&v, &json!({"field": "abcd"})).is_empty());
}

#[test]
fn root_errors_and_null_enum() {
    let v = validator(json!({"type": "object", "properties": {
        "n": {"type": "string", "nullable": true, "enum": ["a"]}
    }}));
    assert_eq!(
        errors_of(&v, &json!("x")),
        [r#"<nil>: Invalid value: "string":  in body must be of type object: "string""#]
    );
    // kube-openapi never matches null against an enum, nullable or not.
    assert_eq!(
        errors_of(&v, &json!({"n": null})),
        [r#"n: Unsupported value: null: supported values: "a""#]
    );
}

#[test]
fn validator_is_shareable_across_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Validator>();
}

/// A small deterministic generator of awkward JSON values.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }

    fn value(&mut self, depth: usize) -> Value {
        let scalars = [
            json!(null),
            json!(true),
            json!(0),
            json!(-1),
            json!(i64::MAX),
            json!(i64::MIN),
            json!(u64::MAX),
            json!(1.5),
            json!(-0.0),
            json!(1e300),
            json!(""),
            json!("a"),
            json!("ünï\u{0}"),
            json!("2024-02-30T25:61:00Z"),
            json!("::ffff:1.2.3.4"),
            json!("x".repeat(300)),
        ];
        match self.next() % if depth > 3 { 1 } else { 4 } {
            0 => self.pick(&scalars).clone(),
            1 => Value::Array(
                (0..self.next() % 4)
                    .map(|_| self.value(depth + 1))
                    .collect(),
            ),
            _ => {
                let keys = ["a", "b", "name", "kind", "apiVersion", "metadata", "k", "v"];
                Value::Object(
                    (0..self.next() % 5)
                        .map(|_| (self.pick(&keys).to_string(), self.value(depth + 1)))
                        .collect(),
                )
            }
        }
    }
}

/// Nothing panics, whatever the data, on a schema using every keyword.
#[test]
fn arbitrary_data_never_panics() {
    let item = json!({"type": "object", "required": ["k"], "properties": {
        "k": {"x-kubernetes-int-or-string": true, "pattern": "^(a|\\d+)$", "maxLength": 3},
        "v": {"type": "number", "multipleOf": 0.1, "minimum": -1, "exclusiveMaximum": true, "maximum": 1e10}
    }});
    let any = json!({"x-kubernetes-preserve-unknown-fields": true});
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
              "items": item, "maxItems": 2, "minItems": 1},
        "b": {"type": "array", "x-kubernetes-list-type": "set", "uniqueItems": true,
              "items": {"type": "string", "format": "ipv4"}},
        "name": {"type": "string", "enum": ["a", 1, null], "format": "date-time", "nullable": true},
        "kind": {"type": "integer", "format": "int32", "multipleOf": 3, "minimum": 1.5},
        "metadata": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "x-kubernetes-preserve-unknown-fields": true, "maxProperties": 1,
                     "additionalProperties": any},
        "v": {"anyOf": [{"type": "string", "format": "duration"}, {"type": "integer"}],
              "oneOf": [{"minLength": 1}, {"type": "boolean"}], "allOf": [{"not": {"type": "object"}}]}
    }, "additionalProperties": false});
    let s = Schema::from_json(&schema, &Path::root()).expect("schema");
    let v = Validator::new(&s);
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let (mut errors, mut ratcheted) = (0, 0);
    for _ in 0..3000 {
        let new = g.value(0);
        let old = g.value(0);
        let plain = v.validate(&new, &Path::root());
        errors += plain.len();
        let _ = v.validate_update(&new, &old, &Path::new("status"));
        // Ratcheting only sorts the errors of an update into kept and excused ones. (An
        // unchanged object keeps errors when it has fields without a schema: Kubernetes
        // never deems those unchanged.)
        let (kept, excused) = v.validate_update(&new, &new, &Path::root());
        assert!(
            kept.iter().chain(&excused).all(|e| plain.contains(e)),
            "{new}"
        );
        assert!(
            plain
                .iter()
                .all(|e| kept.contains(e) || excused.contains(e)),
            "{new}"
        );
        ratcheted += excused.len();
        let _ = crate::listtype::validate_list_sets_and_maps(&s, &new, &Path::root());
        let _ = crate::objectmeta::validate_embedded(&s, &new, &Path::root());
        let _ = crate::objectmeta::validate_root_metadata(&new, &Path::root(), true);
    }
    assert!(errors > 1000 && ratcheted > 1000, "{errors} {ratcheted}");
}
