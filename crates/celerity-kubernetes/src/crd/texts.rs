//! The texts of the API server's CRD code that changed between Kubernetes releases, each a
//! function of the release, called where the text is made (`docs/cel-go-versions.md` lists
//! them with their commits and reproducers).

use cel_k8s::KubeVersion;
use cel_k8s_schema::field::BadValue;
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
}
