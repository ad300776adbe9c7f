//! A Kubewarden-style admission policy built on Celerity's WebAssembly build
//! (`wasm32-wasip1`, without the `jit` feature): a WASI program that reads a validation
//! request on standard input and writes its answer on standard output.
//!
//! ```text
//! wasi-policy validate < request.json           # {"accepted": false, "message": ..., ...}
//! wasi-policy validate_settings < settings.json # {"valid": true}
//! ```
//!
//! The request is Kubewarden's: `{"request": <the AdmissionRequest>, "settings": {...}}`,
//! where the settings hold the ValidatingAdmissionPolicies and MutatingAdmissionPolicies to
//! apply, with their bindings, as the API server stores them (`"policies": [...]`), their
//! params (`"params": [...]`) and the Kubernetes version whose CEL they use (`"version"`).
//! The answer is Kubewarden's `ValidationResponse`: `accepted`, and when refused the
//! `message` and `code`, with `warnings`, `audit_annotations` and the `mutated_object` when
//! a mutating policy changed it. The verdicts, messages and costs are those of the API
//! server's admission plugins (`celerity_kubernetes::admission`), interpreted.
//!
//! See `README.md` beside this file for building and running it.

#![forbid(unsafe_code)]

use std::io::Read;
use std::process::ExitCode;

use celerity_kubernetes::admission::{
    Gvk, Gvr, Operation, PolicyInputs, PolicySet, Request, UserInfo,
};
use serde_json::{Map, Value as Json, json};

/// The largest request read: the API server's own limit on a request's body.
const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;

fn main() -> ExitCode {
    let command = std::env::args().nth(1).unwrap_or_default();
    let mut input = String::new();
    if let Err(e) = std::io::stdin()
        .take(MAX_REQUEST_BYTES + 1)
        .read_to_string(&mut input)
    {
        eprintln!("wasi-policy: reading standard input: {e}");
        return ExitCode::from(2);
    }
    if input.len() as u64 > MAX_REQUEST_BYTES {
        eprintln!("wasi-policy: the input is larger than 3 MiB");
        return ExitCode::from(2);
    }
    let answer = match command.as_str() {
        "validate" => validate(&input),
        "validate_settings" => validate_settings(&input),
        other => {
            eprintln!(
                "wasi-policy: unknown command {other:?}: expected validate or validate_settings"
            );
            return ExitCode::from(2);
        }
    };
    println!("{answer}");
    ExitCode::SUCCESS
}

/// `validate`: the request admitted against the settings' policies.
pub fn validate(input: &str) -> Json {
    let outcome = serde_json::from_str::<Json>(input)
        .map_err(|e| format!("the validation request is not JSON: {e}"))
        .and_then(|v| {
            let settings = policy_set(v.get("settings").unwrap_or(&Json::Null))?;
            let request = request(v.get("request").ok_or("no request")?)?;
            Ok(settings.admit(&request, None))
        });
    match outcome {
        Ok(r) => {
            let mut out = Map::new();
            out.insert("accepted".into(), json!(r.allowed));
            if !r.allowed {
                out.insert("message".into(), json!(r.status.message));
                out.insert("code".into(), json!(r.status.code));
            }
            if !r.warnings.is_empty() {
                out.insert("warnings".into(), json!(r.warnings));
            }
            if !r.audit_annotations.is_empty() {
                out.insert("audit_annotations".into(), json!(r.audit_annotations));
            }
            let original = serde_json::from_str::<Json>(input)
                .ok()
                .and_then(|v| v.pointer("/request/object").cloned());
            if let Some(o) = r.object.filter(|o| Some(o) != original.as_ref()) {
                out.insert("mutated_object".into(), o);
            }
            Json::Object(out)
        }
        // A request the policy cannot read is refused, with the reason.
        Err(message) => json!({"accepted": false, "message": message, "code": 400}),
    }
}

/// `validate_settings`: whether the settings' policies and bindings can be read (an
/// expression that does not compile is reported as the API server does, when a request
/// meets it, under the policy's `failurePolicy`).
pub fn validate_settings(input: &str) -> Json {
    let outcome = serde_json::from_str::<Json>(input)
        .map_err(|e| format!("the settings are not JSON: {e}"))
        .and_then(|s| policy_set(&s).map(|_| ()));
    match outcome {
        Ok(()) => json!({"valid": true}),
        Err(message) => json!({"valid": false, "message": message}),
    }
}

/// The settings' policies and bindings, compiled.
fn policy_set(settings: &Json) -> Result<PolicySet, String> {
    let list = |key: &str| -> Result<Vec<Json>, String> {
        match settings.get(key) {
            None | Some(Json::Null) => Ok(Vec::new()),
            Some(Json::Array(a)) => Ok(a.clone()),
            Some(_) => Err(format!("settings.{key}: expected a list")),
        }
    };
    let version = match settings.get("version").and_then(Json::as_str) {
        Some(v) => Some(celerity::kubernetes::parse_version(v)?),
        None => None,
    };
    let inputs = PolicyInputs {
        version,
        params: list("params")?,
        ..PolicyInputs::default()
    };
    PolicySet::from_json(&list("policies")?, &inputs).map_err(|e| e.join("; "))
}

/// The AdmissionRequest as the admission plugins see it.
fn request(r: &Json) -> Result<Request, String> {
    let text = |p: &str| {
        r.pointer(p)
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let object = r.get("object").filter(|o| !o.is_null()).cloned();
    let old_object = r.get("oldObject").filter(|o| !o.is_null()).cloned();
    let operation: Operation = text("/operation").parse()?;
    let namespaced = !text("/namespace").is_empty();
    let mut request = Request::for_object(operation, object, old_object, |_| Some(namespaced))?;
    if let Some(Json::Object(_)) = r.get("kind") {
        request.kind = Gvk {
            group: text("/kind/group"),
            version: text("/kind/version"),
            kind: text("/kind/kind"),
        };
    }
    if let Some(Json::Object(_)) = r.get("resource") {
        request.resource = Gvr {
            group: text("/resource/group"),
            version: text("/resource/version"),
            resource: text("/resource/resource"),
        };
    }
    request.sub_resource = text("/subResource");
    if !text("/name").is_empty() {
        request.name = text("/name");
    }
    if namespaced {
        request.namespace = text("/namespace");
    }
    request.dry_run = r.get("dryRun").and_then(Json::as_bool).unwrap_or(false);
    request.user = UserInfo {
        username: text("/userInfo/username"),
        uid: text("/userInfo/uid"),
        groups: r
            .pointer("/userInfo/groups")
            .and_then(Json::as_array)
            .map(|g| {
                g.iter()
                    .filter_map(Json::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        extra: Vec::new(),
    };
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQUEST: &str = include_str!("../request.json");

    #[test]
    fn the_example_request_is_refused_with_the_policys_message() {
        let answer = validate(REQUEST);
        assert_eq!(answer["accepted"], json!(false), "{answer}");
        assert_eq!(answer["code"], json!(422), "{answer}");
        let message = answer["message"].as_str().unwrap();
        assert!(
            message.contains("replicas must be at most 5, got 8"),
            "{message}"
        );
        assert_eq!(
            answer["warnings"].as_array().map(Vec::len),
            Some(1),
            "{answer}"
        );
    }

    #[test]
    fn the_example_settings_are_valid_and_bad_ones_are_not() {
        let request: Json = serde_json::from_str(REQUEST).unwrap();
        let settings = request["settings"].to_string();
        assert_eq!(validate_settings(&settings), json!({"valid": true}));
        let bad = settings.replace("ValidatingAdmissionPolicyBinding", "PolicyBinding");
        assert_eq!(validate_settings(&bad)["valid"], json!(false));
        assert_eq!(validate("not json")["accepted"], json!(false));
    }
}
