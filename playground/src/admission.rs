//! The admission mode: ValidatingAdmissionPolicies and MutatingAdmissionPolicies with their
//! bindings, params, namespaces, authorizer rules and one object in; the API server's
//! response out (allowed, status, warnings, audit annotations, the object after the
//! mutating policies). The request is the line `cel admit --batch` reads
//! (`celerity_kubernetes::admission::AdmissionCase`), and the result the line it prints.
//!
//! Request: `{"mode": "admission", "policies": "YAML", "params": "YAML", "namespaces":
//! "YAML", "authz": "YAML", "object": "YAML", "old_object": "YAML", "operation": "CREATE",
//! "user": "alice", "groups": "devs, admins", "version": "1.36"}`. The result adds the case
//! it ran (`"case"`), so that the same request can be given to `cel admit --batch`.

use celerity::Backend;
use celerity_kubernetes::admission::{AdmissionCase, response_json};
use serde_json::{Map, Value as Json, json};

/// Runs one request of the mode.
pub fn run(request: &Map<String, Json>) -> Result<Json, String> {
    let case = case(request)?;
    let Json::Object(fields) = &case else {
        return Err("the case is not an object".into());
    };
    let mut out = match AdmissionCase::from_json(fields, Backend::Auto) {
        Ok(c) => response_json(&c.run()),
        Err(e) => json!({"ok": false, "phase": "policies", "error": e}),
    };
    if let Some(m) = out.as_object_mut() {
        m.insert("case".into(), case);
    }
    Ok(out)
}

/// The `cel admit --batch` line for a request.
pub fn case(request: &Map<String, Json>) -> Result<Json, String> {
    let mut case = Map::new();
    case.insert(
        "policies".into(),
        Json::Array(crate::documents(request, "policies")?),
    );
    for key in ["params", "namespaces"] {
        let docs = crate::documents(request, key)?;
        if !docs.is_empty() {
            case.insert(key.into(), Json::Array(docs));
        }
    }
    for key in ["object", "old_object"] {
        if let Some(o) = crate::one_document(request, key)? {
            case.insert(key.into(), o);
        }
    }
    let authz = crate::text(request, "authz")?;
    if let Some(doc) = crate::input::parse_documents(authz).into_iter().next() {
        case.insert("authz".into(), doc.map_err(|e| format!("authz: {e}"))?);
    }
    if let Some(op) = crate::string(request, "operation") {
        case.insert("operation".into(), json!(op.trim()));
    }
    let user = crate::string(request, "user");
    let groups: Vec<&str> = crate::string(request, "groups")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .collect();
    if user.is_some() || !groups.is_empty() {
        case.insert(
            "user".into(),
            json!({"username": user.unwrap_or_default().trim(), "groups": groups}),
        );
    }
    if let Some(v) = crate::string(request, "version") {
        case.insert("version".into(), json!(v.trim()));
    }
    Ok(Json::Object(case))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(path: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/../examples/admission/{path}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn the_example_policies_deny_the_bad_deployment() {
        let r = crate::handle(
            &json!({
                "mode": "admission",
                "policies": example("policies.yaml"),
                "params": example("params.yaml"),
                "namespaces": example("namespaces.yaml"),
                "authz": example("authz.yaml"),
                "object": example("manifests/bad.yaml").split("\n---").next().unwrap(),
                "user": "alice",
                "groups": "shop-devs",
            })
            .to_string(),
        );
        assert_eq!(r["ok"], json!(true), "{r}");
        assert_eq!(r["allowed"], json!(false), "{r}");
        assert_eq!(r["status"]["code"], json!(422), "{r}");
        assert_eq!(r["case"]["user"]["groups"], json!(["shop-devs"]));
    }
}
