//! The cases of apiextensions-apiserver's `schema/objectmeta/validation_test.go`
//! (`TestValidateEmbeddedResource`, `TestValidate`): same objects and schemas; Go matches
//! each error's type and path, so do these tests (in document order), plus whole texts of
//! the root metadata checks from apimachinery's messages.

use serde_json::{Value, json};

use super::*;

fn schema(json: Value) -> Schema {
    Schema::from_json(&json, &Path::root()).expect("schema")
}

fn found(errors: Vec<FieldError>) -> Vec<(ErrorType, String)> {
    errors
        .into_iter()
        .map(|e| (e.error_type, e.field))
        .collect()
}

fn req(p: &str) -> (ErrorType, String) {
    (ErrorType::Required, p.to_string())
}

fn inv(p: &str) -> (ErrorType, String) {
    (ErrorType::Invalid, p.to_string())
}

fn embedded(obj: Value) -> Vec<(ErrorType, String)> {
    let s = schema(
        json!({"type": "object", "x-kubernetes-embedded-resource": true,
                          "x-kubernetes-preserve-unknown-fields": true}),
    );
    found(validate_embedded(&s, &obj, &Path::root()))
}

#[test]
fn embedded_resource() {
    assert_eq!(embedded(json!({})), [req("apiVersion"), req("kind")]);
    assert!(embedded(json!({"apiVersion": "foo/v1", "kind": "Foo"})).is_empty());
    assert_eq!(
        embedded(json!({"apiVersion": "foo/v1", "kind": "foo.bar-com"})),
        [inv("kind")]
    );
    assert!(
        embedded(json!({"apiVersion": "foo/v1", "kind": "Foo",
                            "metadata": {"namespace": "kube-system"}}))
        .is_empty()
    );
    assert!(
        embedded(json!({"apiVersion": "foo/v1", "kind": "Foo",
                            "metadata": {"name": "foo"}}))
        .is_empty()
    );
    assert_eq!(
        embedded(json!({"apiVersion": "foo/v1", "kind": "Foo", "metadata": {
            "name": "..", "namespace": "$$$", "labels": {"#": "#"}, "annotations": {"#": "#"}
        }})),
        [
            inv("metadata.name"),
            inv("metadata.namespace"),
            inv("metadata.labels"),
            inv("metadata.labels"),
            inv("metadata.annotations"),
        ]
    );
}

#[test]
fn embedded_resources_anywhere() {
    let e = json!({"x-kubernetes-embedded-resource": true, "type": "object",
                   "x-kubernetes-preserve-unknown-fields": true});
    let s = schema(json!({"type": "object", "properties": {
        "embedded": e.clone(),
        "nested": {"type": "object", "x-kubernetes-embedded-resource": true,
                   "x-kubernetes-preserve-unknown-fields": true,
                   "properties": {"embedded": e.clone()}},
        "items": {"type": "array", "items": e.clone()},
        "additionalProperties": {"type": "object", "additionalProperties": e}
    }}));
    let run = |obj: Value| found(validate_embedded(&s, &obj, &Path::root()));
    assert!(run(json!({})).is_empty());
    assert_eq!(
        run(json!({"embedded": {}})),
        [req("embedded.apiVersion"), req("embedded.kind")]
    );
    assert_eq!(
        run(json!({"nested": {"embedded": {}}})),
        [
            req("nested.apiVersion"),
            req("nested.kind"),
            req("nested.embedded.apiVersion"),
            req("nested.embedded.kind"),
        ]
    );
    assert_eq!(
        run(json!({"items": [{}]})),
        [req("items[0].apiVersion"), req("items[0].kind")]
    );
    assert_eq!(
        run(json!({"additionalProperties": {"foo": {}}})),
        [
            req("additionalProperties[foo].apiVersion"),
            req("additionalProperties[foo].kind")
        ]
    );
}

#[test]
fn embedded_texts() {
    let s = schema(
        json!({"type": "object", "x-kubernetes-embedded-resource": true,
                          "x-kubernetes-preserve-unknown-fields": true}),
    );
    let texts = |obj: Value| -> Vec<String> {
        validate_embedded(&s, &obj, &Path::new("spec").child("template"))
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(
        texts(json!({"apiVersion": 1, "kind": "", "metadata": {"name": 3}})),
        [
            "spec.template.apiVersion: Invalid value: 1: must be a string",
            r#"spec.template.kind: Invalid value: "": must not be empty"#,
            r#"spec.template.metadata: Invalid value: {"name":3}: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string"#,
        ]
    );
    assert_eq!(
        texts(json!({"apiVersion": "a/b/c", "kind": "Foo"})),
        [
            r#"spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#
        ]
    );
}

#[test]
fn root_metadata() {
    let texts = |obj: Value, namespaced: bool| -> Vec<String> {
        validate_root_metadata(&obj, &Path::root(), namespaced)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert!(
        texts(
            json!({"metadata": {"name": "a.b", "namespace": "ns"}}),
            true
        )
        .is_empty()
    );
    assert_eq!(
        texts(json!({"metadata": {}}), true),
        [
            "metadata.name: Required value: name or generateName is required",
            "metadata.namespace: Required value",
        ]
    );
    assert_eq!(
        texts(json!({"metadata": {"name": "a", "namespace": "ns"}}), false),
        ["metadata.namespace: Forbidden: not allowed on this type"]
    );
    assert_eq!(
        texts(json!({"metadata": {"name": "Foo"}}), false),
        [
            r#"metadata.name: Invalid value: "Foo": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#
        ]
    );
    // A generated name is not known offline; the prefix is checked with its dash masked.
    assert!(texts(json!({"metadata": {"generateName": "web-"}}), false).is_empty());
    assert_eq!(
        texts(
            json!({"metadata": {"name": "a", "labels": {"ok": "x y"}, "generation": -1}}),
            false
        ),
        [
            "metadata.generation: Invalid value: -1: must be greater than or equal to 0",
            r#"metadata.labels: Invalid value: "x y": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#,
        ]
    );
    let big = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT);
    assert_eq!(
        texts(
            json!({"metadata": {"name": "a", "annotations": {"k": big}}}),
            false
        ),
        ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    );
    assert_eq!(
        texts(
            json!({"metadata": {"name": "a", "finalizers": ["orphan", "foregroundDeletion"],
                                  "ownerReferences": [{"apiVersion": "v1", "kind": "Event",
                                                       "name": "e", "uid": "1"}]}}),
            false
        ),
        [
            r#"metadata.ownerReferences[0]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"1"}: /v1, Kind=Event is disallowed from being an owner"#,
            r#"metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set"#,
        ]
    );
    assert_eq!(
        texts(json!({"metadata": "x"}), false),
        [r#"metadata: Invalid value: "x": expected map[string]interface{}, got string"#]
    );
}

// apimachinery's `pkg/api/validation/objectmeta_test.go`, through the custom resource's
// metadata checks (name "test", namespaced unless the case says otherwise).

fn meta_errors(meta: Value, namespaced: bool) -> Vec<FieldError> {
    validate_root_metadata(&json!({ "metadata": meta }), &Path::root(), namespaced)
}

#[test]
fn namespaces() {
    let errs = meta_errors(json!({"name": "test", "namespace": "foo.bar"}), true);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].to_string().contains(r#"Invalid value: "foo.bar""#));
    let long = "aB3".repeat(21) + "x";
    let errs = meta_errors(json!({"name": "test", "namespace": long}), true);
    assert_eq!(errs.len(), 2);
    assert!(errs.iter().all(|e| e.to_string().contains("Invalid value")));
}

#[test]
fn owner_references_cases() {
    let r = |api: &str, kind: &str, uid: &str, controller: Option<bool>| {
        let mut v = json!({"apiVersion": api, "kind": kind, "name": "name", "uid": uid});
        if let Some(c) = controller {
            v["controller"] = json!(c);
        }
        v
    };
    let cases: Vec<(Vec<Value>, Option<&str>)> = vec![
        (
            vec![r("customresourceVersion", "customresourceKind", "1", None)],
            None,
        ),
        (
            vec![r("v1", "Event", "1", None)],
            Some("is disallowed from being an owner"),
        ),
        (
            vec![r("a/b/c", "Pod", "1", None)],
            Some("must be <group>/<version> or <version>"),
        ),
        (
            vec![r("foo/", "Pod", "1", None)],
            Some("must be <group>/<version> or <version>"),
        ),
        (vec![r("v1", "Pod", "1", None)], None),
        (
            vec![
                r(
                    "customresourceVersion",
                    "customresourceKind",
                    "1",
                    Some(false),
                ),
                r(
                    "customresourceVersion",
                    "customresourceKind",
                    "2",
                    Some(true),
                ),
                r(
                    "customresourceVersion",
                    "customresourceKind",
                    "3",
                    Some(false),
                ),
                r("customresourceVersion", "customresourceKind", "4", None),
            ],
            None,
        ),
        (
            vec![
                r(
                    "customresourceVersion",
                    "customresourceKind1",
                    "1",
                    Some(false),
                ),
                r(
                    "customresourceVersion",
                    "customresourceKind2",
                    "2",
                    Some(true),
                ),
                r(
                    "customresourceVersion",
                    "customresourceKind3",
                    "3",
                    Some(true),
                ),
                r("customresourceVersion", "customresourceKind4", "4", None),
            ],
            Some(
                "Only one reference can have Controller set to true. Found \"true\" in references for customresourceKind2/name and customresourceKind3/name",
            ),
        ),
    ];
    for (refs, want) in cases {
        let errs = meta_errors(
            json!({"name": "test", "namespace": "test", "ownerReferences": refs}),
            true,
        );
        match want {
            None => assert!(errs.is_empty(), "{errs:?}"),
            Some(text) => assert!(errs[0].to_string().contains(text), "{errs:?}"),
        }
    }
}

#[test]
fn conflicting_finalizers_and_trailing_dash() {
    let errs = meta_errors(
        json!({"name": "test", "finalizers": ["orphan", "foregroundDeletion"]}),
        false,
    );
    assert!(errs[0].to_string().contains("cannot be both set"));
    assert!(meta_errors(json!({"name": "test", "generateName": "foo-"}), false).is_empty());
}

#[test]
fn annotation_cases() {
    let limit = TOTAL_ANNOTATION_SIZE_LIMIT;
    let valid = [
        json!({"simple": "bar"}),
        json!({"now-with-dashes": "bar"}),
        json!({"1-starts-with-num": "bar"}),
        json!({"1234": "bar"}),
        json!({"simple/simple": "bar"}),
        json!({"now-with-dashes/simple": "bar"}),
        json!({"now-with-dashes/now-with-dashes": "bar"}),
        json!({"now.with.dots/simple": "bar"}),
        json!({"now-with.dashes-and.dots/simple": "bar"}),
        json!({"1-num.2-num/3-num": "bar"}),
        json!({"1234/5678": "bar"}),
        json!({"1.2.3.4/5678": "bar"}),
        json!({"UpperCase123": "bar"}),
        json!({"a": "b".repeat(limit - 1)}),
        json!({"a": "b".repeat(limit / 2 - 1), "c": "d".repeat(limit / 2 - 1)}),
    ];
    for a in valid {
        assert!(meta_errors(json!({"name": "test", "annotations": a}), false).is_empty());
    }
    let invalid = [
        (
            json!({"nospecialchars^=@": "bar"}),
            "name part must consist of",
        ),
        (
            json!({"cantendwithadash-": "bar"}),
            "name part must consist of",
        ),
        (
            json!({"only/one/slash": "bar"}),
            "a valid label key must consist of",
        ),
        (json!({"a".repeat(254): "bar"}), "must be no more than"),
    ];
    for (a, want) in invalid {
        let errs = meta_errors(json!({"name": "test", "annotations": a}), false);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].detail.contains(want), "{errs:?}");
    }
    let too_big = [
        json!({"a": "b".repeat(limit)}),
        json!({"a": "b".repeat(limit / 2), "c": "d".repeat(limit / 2)}),
    ];
    for a in too_big {
        assert_eq!(
            meta_errors(json!({"name": "test", "annotations": a}), false).len(),
            1
        );
    }
}
