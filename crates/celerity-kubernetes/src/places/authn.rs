//! Structured authentication's environments (`k8s.io/apiserver/pkg/authentication/cel`,
//! `compile.go`): one per variable, both extending the base environment from 1.0 and
//! compiled as stored expressions.
//!
//! * `claims`, a `map(string, any)` (`google.protobuf.Any`, which the checker treats as `dyn`): the JWT's claims, for `claimValidationRules` and
//!   `claimMappings` (username, groups, uid, extra);
//! * `user`, a `kubernetes.UserInfo` object (`username`, `uid`: strings; `groups`: a list
//!   of strings; `extra`: a map of lists of strings), for `userValidationRules`.
//!
//! Claims are JSON: the JWT payload decoded (`serde_json` bounds nesting to 128 levels and
//! reports where it stopped). The API server passes claims as untyped data, so every value
//! under `claims` is `any`.

use std::sync::Arc;

use cel_k8s::KubeVersion;
use cel_k8s_schema::ValueModel;
use cel_k8s_schema::decl::SchemaTypes;
use celerity::kubernetes::KubernetesEnv;
use celerity::{Env, Type, Value};
use serde_json::{Value as Json, json};

use super::{expect_object, json_kind};
use crate::admission::PER_CALL_LIMIT;
use crate::admission::environment::typed_with_names;

/// The type name of `user`.
pub const USER_TYPE: &str = "kubernetes.UserInfo";

/// How values of the authentication environments are built.
#[derive(Debug)]
pub struct AuthnTypes {
    user: Option<ValueModel>,
}

/// The schema `user` is typed by (`buildUserType`).
fn user_schema() -> Json {
    let s = json!({"type": "string"});
    let strings = json!({"type": "array", "items": s});
    json!({"type": "object", "properties": {
        "username": s, "uid": s, "groups": strings,
        "extra": {"type": "object", "additionalProperties": strings},
    }})
}

/// The environment of `claimValidationRules` and `claimMappings`.
pub fn claims_env(version: KubeVersion) -> (Env, AuthnTypes) {
    let env = KubernetesEnv::new(version)
        .stored()
        .with_authorizer_variable(false)
        .builder()
        .cost_limit(Some(PER_CALL_LIMIT))
        .variable("claims", Type::map(Type::String, Type::Any))
        .build();
    (env, AuthnTypes { user: None })
}

/// The environment of `userValidationRules`.
pub fn user_env(version: KubeVersion) -> (Env, AuthnTypes) {
    let (decl, model) = typed_with_names(&user_schema(), USER_TYPE, &[]);
    let env = KubernetesEnv::new(version)
        .stored()
        .with_authorizer_variable(false)
        .builder()
        .type_provider(Arc::new(SchemaTypes::new(&decl)))
        .cost_limit(Some(PER_CALL_LIMIT))
        .variable("user", decl.cel_type())
        .build();
    (env, AuthnTypes { user: Some(model) })
}

impl AuthnTypes {
    /// `claims` from a JSON object, or `user` from a UserInfo's JSON.
    pub fn value(&self, name: &str, json: &Json) -> Result<Value, String> {
        match (&self.user, name) {
            (Some(model), "user") => {
                check_user(json, name)?;
                Ok(model.to_value(&user_fields(json)))
            }
            (_, _) => {
                expect_object(json, name)?;
                Ok(cel_k8s_schema::value::untyped(json))
            }
        }
    }
}

/// A UserInfo's JSON must have the types `kubernetes.UserInfo` declares.
pub(crate) fn check_user(json: &Json, path: &str) -> Result<(), String> {
    let user = expect_object(json, path)?;
    for (k, v) in user {
        let p = format!("{path}.{k}");
        match (k.as_str(), v) {
            (_, Json::Null) => {}
            ("username" | "uid", Json::String(_)) => {}
            ("groups", v) => check_strings(v, &p)?,
            ("extra", v) => {
                for (key, values) in expect_object(v, &p)? {
                    check_strings(values, &format!("{p}[{key:?}]"))?;
                }
            }
            ("username" | "uid", v) => {
                return Err(format!("{p}: expected a string, got {}", json_kind(v)));
            }
            (_, _) => return Err(format!("{p}: unknown field")),
        }
    }
    Ok(())
}

/// A list of strings, or an error with its path.
pub(crate) fn check_strings(v: &Json, path: &str) -> Result<(), String> {
    let Json::Array(items) = v else {
        return Err(format!(
            "{path}: expected a list of strings, got {}",
            json_kind(v)
        ));
    };
    match items.iter().position(|i| !i.is_string()) {
        Some(i) => Err(format!(
            "{path}[{i}]: expected a string, got {}",
            json_kind(&items[i])
        )),
        None => Ok(()),
    }
}

/// The user the API server gives the rules: the authenticator converts its
/// `authenticationv1.UserInfo` to unstructured data (`plugin/pkg/authenticator/token/oidc`),
/// which leaves out the `omitempty` fields that are empty: an empty uid, no groups, no
/// extra are absent, and `has()` says so.
fn user_fields(json: &Json) -> Json {
    let mut out = serde_json::Map::new();
    if let Some(user) = json.as_object() {
        for k in ["username", "uid", "groups", "extra"] {
            let empty = match user.get(k) {
                None | Some(Json::Null) => true,
                Some(Json::String(s)) => s.is_empty(),
                Some(Json::Array(a)) => a.is_empty(),
                Some(Json::Object(o)) => o.is_empty(),
                Some(_) => false,
            };
            if !empty {
                out.insert(k.to_string(), user[k].clone());
            }
        }
    }
    Json::Object(out)
}
