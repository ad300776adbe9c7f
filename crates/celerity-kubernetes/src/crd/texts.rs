//! The texts of the API server's CRD code that changed between Kubernetes releases, each a
//! function of the release, called where the text is made (`docs/cel-go-versions.md` lists
//! them with their commits and reproducers).

use cel_k8s::KubeVersion;
use cel_k8s_schema::field::{BadValue, ErrorType, FieldError};
use serde_json::Value as Json;

/// The value the field error of a rule that evaluated to false shows (B-CRD-1,
/// apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go`,
/// `validateExpressions`): up to 1.34 the node's schema type (`"object"`, `"integer"`, `""`
/// for int-or-string); from 1.35 (commits c558c520, 5a4f8578 and 51853851, first in
/// v0.35.0) the value itself for a scalar and none for an object or an array.
pub(crate) fn failed_rule_value(release: KubeVersion, schema_type: &str, value: &Json) -> BadValue {
    if release < KubeVersion::new(1, 35) {
        return BadValue::String(schema_type.to_string());
    }
    match schema_type {
        "object" | "array" => BadValue::Omit,
        _ => BadValue::of_json(value),
    }
}

/// A field error as the API server of `1.<release_minor>` prints its value (B-FIELD-1,
/// apimachinery `pkg/util/validation/field/errors.go`, `ErrorBody`): up to v0.33.0
/// (Kubernetes 1.33) a nil value is the string `"null"` and a list or an object is Go's
/// `%#v` of the decoded data (`map[string]interface {}{"a":1}`); from v0.34.0 both are JSON.
pub(crate) fn field_error_as_of(release_minor: u32, mut error: FieldError) -> FieldError {
    if release_minor <= 33 {
        error.bad_value = match error.bad_value {
            BadValue::Json(Json::Null) => BadValue::String("null".to_string()),
            BadValue::Json(j @ (Json::Array(_) | Json::Object(_))) => BadValue::GoSyntax(j),
            other => other,
        };
    }
    error
}

/// A CRD's own error as the API server of `1.<release_minor>` words it: B-CRD-2
/// (apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`, `890aa9b3`
/// and `f0841a75`, first in v0.34.0: up to 1.33 the details of the `message`, `fieldPath`
/// and `selectableFields` checks name their field, and a missing `openAPIV3Schema` says
/// `schemas are required`), then B-FIELD-1 ([`field_error_as_of`]).
pub(crate) fn crd_error_as_of(release_minor: u32, mut error: FieldError) -> FieldError {
    if release_minor <= 33 {
        let field = error.field.rsplit('.').next().unwrap_or("");
        let detail = error.detail.as_str();
        let older = match (field, detail) {
            ("message", "must be non-empty if specified" | "must not contain line breaks")
            | (
                "fieldPath",
                "must be non-empty if specified"
                | "must not contain line breaks"
                | "must be a valid path",
            ) => Some(format!("{field} {detail}")),
            ("selectableFields", _) if detail.starts_with("may only be set when") => {
                Some(format!("selectableFields {}", detail.replace('`', "")))
            }
            ("openAPIV3Schema", "") if error.error_type == ErrorType::Required => {
                Some("schemas are required".to_string())
            }
            _ => None,
        };
        if let Some(older) = older {
            error.detail = older;
        }
    }
    field_error_as_of(release_minor, error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_value_of_a_failed_rule_by_release() {
        let v = |minor| KubeVersion::new(1, minor);
        let obj = json!({"a": 1});
        assert_eq!(
            failed_rule_value(v(34), "object", &obj),
            BadValue::String("object".into())
        );
        assert_eq!(failed_rule_value(v(35), "object", &obj), BadValue::Omit);
        assert_eq!(
            failed_rule_value(v(33), "integer", &json!(7)),
            BadValue::String("integer".into())
        );
        assert_eq!(
            failed_rule_value(v(35), "integer", &json!(7)),
            BadValue::Int(7)
        );
        assert_eq!(
            failed_rule_value(v(34), "", &json!("x")),
            BadValue::String(String::new())
        );
    }

    #[test]
    fn field_error_values_by_release() {
        use cel_k8s_schema::field::Path;
        let path = Path::new("spec").child("items");
        let dup = |minor| {
            field_error_as_of(
                minor,
                FieldError::duplicate(&path, BadValue::Json(json!({"b": [1, 2.5], "a": null}))),
            )
            .to_string()
        };
        assert_eq!(
            dup(33),
            r#"spec.items: Duplicate value: map[string]interface {}{"a":interface {}(nil), "b":[]interface {}{1, 2.5}}"#
        );
        assert_eq!(
            dup(34),
            r#"spec.items: Duplicate value: {"a":null,"b":[1,2.5]}"#
        );
        let null = |minor| {
            field_error_as_of(
                minor,
                FieldError::invalid(&Path::root(), BadValue::Json(Json::Null), "x"),
            )
            .to_string()
        };
        assert_eq!(null(32), r#"<nil>: Invalid value: "null": x"#);
        assert_eq!(null(34), "<nil>: Invalid value: null: x");
    }

    #[test]
    fn crd_check_texts_by_release() {
        use cel_k8s_schema::field::Path;
        let rule = Path::new("spec.validation.openAPIV3Schema")
            .child("x-kubernetes-validations")
            .index(0);
        let text = |minor, e: &FieldError| crd_error_as_of(minor, e.clone()).to_string();
        let blank = FieldError::invalid(
            &rule.child("message"),
            BadValue::String(" ".into()),
            "must be non-empty if specified",
        );
        assert!(
            text(33, &blank).ends_with(
                r#"message: Invalid value: " ": message must be non-empty if specified"#
            )
        );
        assert!(
            text(34, &blank)
                .ends_with(r#"message: Invalid value: " ": must be non-empty if specified"#)
        );
        let path = FieldError::invalid(
            &rule.child("fieldPath"),
            BadValue::String(".x".into()),
            "must be a valid path",
        );
        assert!(text(30, &path).ends_with("fieldPath must be a valid path"));
        let selectable = FieldError::invalid(
            &Path::new("spec.versions[0].selectableFields"),
            BadValue::String(String::new()),
            "may only be set when `version.schema.openAPIV3Schema` is not included",
        );
        assert!(text(33, &selectable).ends_with(
            ": selectableFields may only be set when version.schema.openAPIV3Schema is not included"
        ));
        let missing =
            FieldError::required(&Path::new("spec.versions[0].schema.openAPIV3Schema"), "");
        assert_eq!(
            text(33, &missing),
            "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"
        );
        assert_eq!(
            text(34, &missing),
            "spec.versions[0].schema.openAPIV3Schema: Required value"
        );
    }
}
