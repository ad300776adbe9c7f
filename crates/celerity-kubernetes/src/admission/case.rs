//! One self-contained admission request as JSON: the policies, bindings, params and
//! namespaces it is admitted against, the request, the authorizer's rules; and the response
//! as JSON. This is the line format of `cel admit --batch` and of the conformance cases.
//!
//! ```json
//! {"policies": [...], "bindings": [...], "webhooks": [...], "params": [...], "namespaces": [...],
//!  "object": {...}, "old_object": {...}, "operation": "CREATE",
//!  "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
//!  "subresource": "", "name": "...", "namespace": "...",
//!  "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
//!  "user": {"username": "...", "groups": [...]}, "dry_run": false, "authz": [...],
//!  "scopes": {"example.com/v1/Limits": "Namespaced"}, "version": "1.36", "defaults": true}
//! ```
//!
//! `defaults` (true unless given): the object, the old object, params and namespaces are
//! taken as the API server builds them for built-in kinds
//! ([`crate::builtin::server_object`]); `false` takes them as written.
//!
//! `webhooks` holds ValidatingWebhookConfigurations and MutatingWebhookConfigurations (they
//! may also be among `policies`); the response then says, under `webhooks`, which of their
//! webhooks the API server would call.
//!
//! Everything but `policies` (or `webhooks`) and `object` is optional (a DELETE has an `old_object`
//! instead of an object). Kind, resource, name and namespace default to the object's.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value as Json, json};

use super::authz_rules::RulesAuthorizer;
use super::dispatch::{PolicyInputs, PolicySet, Response};
use super::request::{Gvk, Gvr, Operation, Request, UserInfo};
use crate::builtin::server_object::server_object;
use crate::crd::{CrdOptions, CrdSet};
use celerity::Backend;
use celerity::kubernetes::KubeVersion;
use celerity::kubernetes::parse_version;

/// The fields a case may have.
pub const CASE_FIELDS: &[&str] = &[
    "policies",
    "bindings",
    "webhooks",
    "params",
    "namespaces",
    "object",
    "old_object",
    "operation",
    "resource",
    "subresource",
    "name",
    "namespace",
    "kind",
    "user",
    "dry_run",
    "authz",
    "scopes",
    "version",
    "defaults",
];

/// A case, read and compiled.
#[derive(Debug)]
pub struct AdmissionCase {
    /// The compiled policies and bindings.
    pub set: PolicySet,
    /// The request.
    pub request: Request,
    /// The authorizer.
    pub authorizer: Arc<RulesAuthorizer>,
}

fn list(case: &Map<String, Json>, k: &str) -> Result<Vec<Json>, String> {
    match case.get(k) {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(a)) => Ok(a.clone()),
        Some(_) => Err(format!("{k}: expected a list")),
    }
}

fn string(case: &Map<String, Json>, k: &str) -> Result<Option<String>, String> {
    match case.get(k) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{k}: expected a string")),
    }
}

fn strings_of(v: Option<&Json>, at: &str) -> Result<Vec<String>, String> {
    match v {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("{at}: expected a list of strings")),
        Some(_) => Err(format!("{at}: expected a list of strings")),
    }
}

fn triple(case: &Map<String, Json>, k: &str, last: &str) -> Result<Option<[String; 3]>, String> {
    let Some(v) = case.get(k).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let get = |f: &str| -> Result<String, String> {
        match v.get(f) {
            None | Some(Json::Null) => Ok(String::new()),
            Some(Json::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("{k}.{f}: expected a string")),
        }
    };
    if !v.is_object() {
        return Err(format!("{k}: expected an object"));
    }
    Ok(Some([get("group")?, get("version")?, get(last)?]))
}

fn user(case: &Map<String, Json>) -> Result<UserInfo, String> {
    let Some(u) = case.get("user").filter(|v| !v.is_null()) else {
        return Ok(UserInfo::default());
    };
    let s = |k: &str| -> Result<String, String> {
        match u.get(k) {
            None | Some(Json::Null) => Ok(String::new()),
            Some(Json::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("user.{k}: expected a string")),
        }
    };
    let mut extra = Vec::new();
    if let Some(e) = u.get("extra").and_then(Json::as_object) {
        for (k, v) in e {
            extra.push((k.clone(), strings_of(Some(v), &format!("user.extra.{k}"))?));
        }
    }
    Ok(UserInfo {
        username: s("username")?,
        uid: s("uid")?,
        groups: strings_of(u.get("groups"), "user.groups")?,
        extra,
    })
}

fn scopes(case: &Map<String, Json>) -> Result<HashMap<String, bool>, String> {
    let mut out = HashMap::new();
    if let Some(s) = case.get("scopes").filter(|v| !v.is_null()) {
        let m = s.as_object().ok_or("scopes: expected an object")?;
        for (k, v) in m {
            let namespaced = match v.as_str() {
                Some("Namespaced") => true,
                Some("Cluster") => false,
                _ => {
                    return Err(format!(
                        "scopes.{k}: expected \"Namespaced\" or \"Cluster\""
                    ));
                }
            };
            out.insert(k.clone(), namespaced);
        }
    }
    Ok(out)
}

/// The built-in kinds' schemas of the release a case names (the default release's when it
/// names none), for `ApplyConfiguration`s to merge by.
fn builtin_schemas(version: Option<KubeVersion>) -> CrdSet {
    let release = version.unwrap_or(KubeVersion::DEFAULT);
    let (set, _) = CrdSet::new(Vec::new(), &CrdOptions::default().version(release));
    if crate::builtin::has_version(release.minor) {
        set.with_builtins(release.minor)
    } else {
        set
    }
}

impl AdmissionCase {
    /// Reads and compiles a case; the error says what is malformed.
    pub fn from_json(case: &Map<String, Json>, backend: Backend) -> Result<AdmissionCase, String> {
        if let Some(k) = case.keys().find(|k| !CASE_FIELDS.contains(&k.as_str())) {
            return Err(format!("unknown field {k:?}"));
        }
        if !case.contains_key("policies") && !case.contains_key("webhooks") {
            return Err("policies: required".into());
        }
        for (k, v) in case {
            super::request::check_depth(v, k)?;
        }
        let version = string(case, "version")?
            .map(|v| parse_version(&v))
            .transpose()?;
        let defaults = match case.get("defaults") {
            None | Some(Json::Null) => true,
            Some(Json::Bool(b)) => *b,
            Some(_) => return Err("defaults: expected a boolean".into()),
        };
        let inputs = PolicyInputs {
            version,
            backend,
            server_objects: defaults,
            params: list(case, "params")?,
            namespaces: list(case, "namespaces")?,
            scopes: scopes(case)?,
            schemas: Some(Arc::new(builtin_schemas(version))),
            ..PolicyInputs::default()
        };
        let mut objects = list(case, "policies")?;
        objects.extend(list(case, "bindings")?);
        objects.extend(list(case, "webhooks")?);
        let set = PolicySet::from_json(&objects, &inputs).map_err(|e| e.join("; "))?;
        // The API server refuses a webhook configuration whose match conditions do not
        // compile: such a case describes no cluster.
        let problems = set.webhook_problems();
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        let authorizer = match case.get("authz").filter(|v| !v.is_null()) {
            None => RulesAuthorizer::default(),
            Some(rules) => RulesAuthorizer::from_json(rules)
                .map_err(|e| format!("authz{}", e.join("; authz")))?,
        };
        let mut request = request(case, &inputs.scopes)?;
        if defaults {
            let minor = version.unwrap_or(KubeVersion::DEFAULT).minor;
            for o in [&mut request.object, &mut request.old_object]
                .into_iter()
                .flatten()
            {
                *o = server_object(minor, o);
            }
        }
        Ok(AdmissionCase {
            set,
            request,
            authorizer: Arc::new(authorizer),
        })
    }

    /// Admits the request.
    pub fn run(&self) -> Response {
        self.set.admit(&self.request, Some(self.authorizer.clone()))
    }

    /// The same case with its request stopped after `limit` (see
    /// [`PolicyInputs::time_limit`](super::PolicyInputs::time_limit)).
    pub fn with_time_limit(mut self, limit: std::time::Duration) -> AdmissionCase {
        self.set.set_time_limit(limit);
        self
    }
}

/// The request a case describes.
fn request(case: &Map<String, Json>, scopes: &HashMap<String, bool>) -> Result<Request, String> {
    let operation: Operation = string(case, "operation")?
        .as_deref()
        .unwrap_or("CREATE")
        .parse()?;
    let object = case.get("object").filter(|v| !v.is_null()).cloned();
    let old_object = case.get("old_object").filter(|v| !v.is_null()).cloned();
    if object.as_ref().is_some_and(|o| !o.is_object()) {
        return Err("object: expected an object".into());
    }
    if old_object.as_ref().is_some_and(|o| !o.is_object()) {
        return Err("old_object: expected an object".into());
    }
    if object.is_none() && old_object.is_none() {
        return Err("object: required".into());
    }
    let namespaced = |k: &Gvk| {
        scopes
            .get(&format!("{}/{}", k.api_version(), k.kind))
            .copied()
    };
    let mut r = Request::for_object(operation, object, old_object, namespaced)
        .or_else(|e| explicit_kind(case, e))?;
    if let Some([group, version, kind]) = triple(case, "kind", "kind")? {
        r.kind = Gvk {
            group,
            version,
            kind,
        };
    }
    if let Some([group, version, resource]) = triple(case, "resource", "resource")? {
        r.resource = Gvr {
            group,
            version,
            resource,
        };
    }
    if let Some(s) = string(case, "subresource")? {
        r.sub_resource = s;
    }
    if let Some(n) = string(case, "name")? {
        r.name = n;
    }
    if let Some(n) = string(case, "namespace")? {
        r.namespace = n;
    }
    r.user = user(case)?;
    r.dry_run = match case.get("dry_run") {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(_) => return Err("dry_run: expected a boolean".into()),
    };
    Ok(r)
}

/// A request for an object without apiVersion or kind, when the case gives them.
fn explicit_kind(case: &Map<String, Json>, why: String) -> Result<Request, String> {
    let (Some(_), Some(_)) = (case.get("kind"), case.get("resource")) else {
        return Err(why);
    };
    Ok(Request {
        operation: Operation::Create,
        object: case.get("object").filter(|v| !v.is_null()).cloned(),
        old_object: case.get("old_object").filter(|v| !v.is_null()).cloned(),
        kind: Gvk::default(),
        resource: Gvr::default(),
        sub_resource: String::new(),
        name: String::new(),
        namespace: String::new(),
        user: UserInfo::default(),
        dry_run: false,
        options: None,
    })
    .map(|mut r| {
        r.operation = string(case, "operation")
            .ok()
            .flatten()
            .and_then(|o| o.parse().ok())
            .unwrap_or(Operation::Create);
        r
    })
}

/// A response as the batch line prints it; with `webhooks` (see
/// [`super::WebhookResult::to_json`]) when the set has webhook configurations.
pub fn response_json(r: &Response) -> Json {
    let mut j = json!({
        "ok": true,
        "allowed": r.allowed,
        "status": {"code": r.status.code, "reason": r.status.reason, "message": r.status.message},
        "warnings": r.warnings,
        "audit_annotations": r.audit_annotations,
        "object": r.object,
    });
    if !r.webhooks.is_empty()
        && let Json::Object(m) = &mut j
    {
        let hooks = r
            .webhooks
            .iter()
            .map(super::WebhookResult::to_json)
            .collect();
        m.insert("webhooks".into(), Json::Array(hooks));
    }
    j
}
