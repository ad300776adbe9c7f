//! The checks of a CRD's scale subresource on every create and update of its objects
//! (apiextensions-apiserver `pkg/registry/customresource/validator.go`, `ValidateScaleSpec`
//! and `ValidateScaleStatus`): the replica counts at `specReplicasPath` and
//! `statusReplicasPath` are integers from 0 to 2147483647 when present, and the value at
//! `labelSelectorPath` is a string when present. Paths are read as apimachinery's
//! `NestedInt64` and `NestedString` read them, and errors name the path as the CRD writes it
//! (with its leading dot).

use cel_k8s_schema::field::{BadValue, FieldError, Path};
use serde_json::Value as Json;

/// A version's `subresources.scale`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScaleSubresource {
    /// `specReplicasPath` (`.spec.replicas`).
    pub spec_replicas_path: String,
    /// `statusReplicasPath`.
    pub status_replicas_path: String,
    /// `labelSelectorPath`, if any.
    pub label_selector_path: Option<String>,
}

impl ScaleSubresource {
    /// Reads `subresources.scale` of a CRD version, if it has one.
    pub fn of_version(version: &Json) -> Option<ScaleSubresource> {
        let scale = version.get("subresources")?.get("scale")?;
        let text = |k: &str| scale.get(k).and_then(Json::as_str).map(str::to_string);
        Some(ScaleSubresource {
            spec_replicas_path: text("specReplicasPath").unwrap_or_default(),
            status_replicas_path: text("statusReplicasPath").unwrap_or_default(),
            label_selector_path: text("labelSelectorPath").filter(|p| !p.is_empty()),
        })
    }

    /// The errors of an object (`ValidateScaleSpec`, then `ValidateScaleStatus`).
    pub fn validate(&self, object: &Json) -> Vec<FieldError> {
        let mut errors = Vec::new();
        for path in [&self.spec_replicas_path, &self.status_replicas_path] {
            if !path.is_empty() {
                errors.extend(replicas(object, path));
            }
        }
        if let Some(path) = &self.label_selector_path
            && let Err(e) = nested(object, path).and_then(|v| match v {
                None | Some(Json::String(_)) => Ok(()),
                Some(other) => Err(format!(
                    "{} accessor error: {} is of the type {}, expected string",
                    json_path(path),
                    go_v(other, 0),
                    go_type(other)
                )),
            })
        {
            errors.push(FieldError::invalid(
                &Path::new(path),
                BadValue::String(String::new()),
                e,
            ));
        }
        errors
    }
}

fn replicas(object: &Json, path: &str) -> Option<FieldError> {
    let field = Path::new(path);
    let value = match nested(object, path) {
        Err(e) => return Some(FieldError::invalid(&field, BadValue::Int(0), e)),
        Ok(None) => return None,
        Ok(Some(v)) => v,
    };
    let Some(n) = value.as_i64().filter(|_| !value.is_f64()) else {
        return Some(FieldError::invalid(
            &field,
            BadValue::Int(0),
            format!(
                "{} accessor error: {} is of the type {}, expected int64",
                json_path(path),
                go_v(value, 0),
                go_type(value)
            ),
        ));
    };
    if n < 0 {
        Some(FieldError::invalid(
            &field,
            BadValue::Int(n),
            "should be a non-negative integer",
        ))
    } else if n > i64::from(i32::MAX) {
        Some(FieldError::invalid(
            &field,
            BadValue::Int(n),
            format!("should be less than or equal to {}", i32::MAX),
        ))
    } else {
        None
    }
}

/// The fields of a path: one leading dot removed, then split on dots.
fn fields(path: &str) -> Vec<&str> {
    path.strip_prefix('.').unwrap_or(path).split('.').collect()
}

/// apimachinery's `jsonPath`: the fields joined, with a leading dot.
fn json_path(path: &str) -> String {
    format!(".{}", fields(path).join("."))
}

/// apimachinery's `NestedFieldNoCopy`: the value at `path`, `None` when a step is absent or
/// null, or the error when a step is taken in something that is not a map.
fn nested<'j>(object: &'j Json, path: &str) -> Result<Option<&'j Json>, String> {
    let steps = fields(path);
    let mut value = object;
    for (i, field) in steps.iter().enumerate() {
        if value.is_null() {
            return Ok(None);
        }
        match value {
            Json::Object(m) => match m.get(*field) {
                Some(v) => value = v,
                None => return Ok(None),
            },
            other => {
                return Err(format!(
                    ".{} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                    steps[..=i].join("."),
                    go_v(other, 0),
                    go_type(other)
                ));
            }
        }
    }
    Ok((!value.is_null()).then_some(value))
}

/// Go's `%T` of a decoded JSON value.
fn go_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "<nil>",
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_f64() => "float64",
        Json::Number(_) => "int64",
        Json::String(_) => "string",
        Json::Array(_) => "[]interface {}",
        Json::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of a decoded JSON value (maps with sorted keys), shortened past a few levels.
fn go_v(v: &Json, depth: usize) -> String {
    if depth > 8 {
        return "...".into();
    }
    match v {
        Json::Null => "<nil>".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => go_float_v(f),
            _ => n.to_string(),
        },
        Json::String(s) => s.clone(),
        Json::Array(items) => {
            let parts: Vec<String> = items.iter().map(|x| go_v(x, depth + 1)).collect();
            format!("[{}]", parts.join(" "))
        }
        Json::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_unstable();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_v(&m[k], depth + 1)))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): exponent form below
/// 1e-4 and from 1e21.
fn go_float_v(f: f64) -> String {
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..21).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scale() -> ScaleSubresource {
        ScaleSubresource {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some(".status.selector".into()),
        }
    }

    fn texts(o: Json) -> Vec<String> {
        scale().validate(&o).iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn replicas_and_selectors_are_checked_as_the_api_server_does() {
        assert!(texts(json!({"spec": {}})).is_empty());
        assert!(texts(json!({"spec": {"replicas": 3}, "status": {"selector": "a=b"}})).is_empty());
        assert_eq!(
            texts(json!({"spec": {"replicas": -1}})),
            [".spec.replicas: Invalid value: -1: should be a non-negative integer"]
        );
        assert_eq!(
            texts(json!({"spec": {"replicas": 3000000000i64}})),
            [
                ".spec.replicas: Invalid value: 3000000000: should be less than or equal to 2147483647"
            ]
        );
        assert_eq!(
            texts(json!({"spec": {"replicas": 1.5}})),
            [
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 1.5 is of the type float64, expected int64"
            ]
        );
        assert_eq!(
            texts(json!({"spec": "x"})),
            [
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: x is of the type string, expected map[string]interface{}"
            ]
        );
        assert_eq!(
            texts(json!({"status": {"selector": 5}})),
            [
                ".status.selector: Invalid value: \"\": .status.selector accessor error: 5 is of the type int64, expected string"
            ]
        );
    }
}
