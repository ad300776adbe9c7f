//! The texts of the API server's CRD code that changed between Kubernetes releases, each a
//! function of the release, called where the text is made (`docs/cel-go-versions.md` lists
//! them with their commits and reproducers).

use cel_k8s::KubeVersion;
use cel_k8s_schema::field::{BadValue, FieldError};
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
}
