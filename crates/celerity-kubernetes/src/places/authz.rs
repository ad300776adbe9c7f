//! Structured authorization's environment (`k8s.io/apiserver/pkg/authorization/cel`,
//! `compile.go`): webhook authorizers' `matchConditions` over `request`, a
//! `kubernetes.SubjectAccessReviewSpec`, compiled as stored expressions, each of which must
//! be a `bool` ("must evaluate to bool but got T").
//!
//! `request.resourceAttributes` has `fieldSelector` and `labelSelector` where the
//! `AuthorizeWithSelectors` feature is on by default (beta from 1.32).
//!
//! The value is built as `convertObjectToUnstructured` builds it: `user`, `groups`, `uid`
//! and `extra` are always present (empty when unset); `resourceAttributes` and
//! `nonResourceAttributes` are present when the review has them, with every string field;
//! a selector is present when it has requirements or a raw selector (the raw one wins).

use std::sync::Arc;

use cel_k8s::KubeVersion;
use cel_k8s_schema::ValueModel;
use cel_k8s_schema::decl::SchemaTypes;
use celerity::kubernetes::KubernetesEnv;
use celerity::{Env, Value};
use serde_json::{Map, Value as Json, json};

use super::authn::check_strings;
use super::{expect_object, json_kind};
use crate::admission::PER_CALL_LIMIT;
use crate::admission::environment::typed_with_names;

/// The type name of `request`.
pub const REQUEST_TYPE: &str = "kubernetes.SubjectAccessReviewSpec";

/// The nested object types' names, by field path.
const TYPE_NAMES: &[(&str, &str)] = &[
    ("resourceAttributes", "kubernetes.ResourceAttributes"),
    ("nonResourceAttributes", "kubernetes.NonResourceAttributes"),
    (
        "resourceAttributes.fieldSelector",
        "kubernetes.FieldSelectorAttributes",
    ),
    (
        "resourceAttributes.labelSelector",
        "kubernetes.LabelSelectorAttributes",
    ),
    (
        "resourceAttributes.fieldSelector.requirements.@idx",
        "kubernetes.SelectorRequirement",
    ),
    (
        "resourceAttributes.labelSelector.requirements.@idx",
        "kubernetes.SelectorRequirement",
    ),
];

/// The string fields of `resourceAttributes`.
const RESOURCE_FIELDS: [&str; 7] = [
    "namespace",
    "verb",
    "group",
    "version",
    "resource",
    "subresource",
    "name",
];

/// Whether `resourceAttributes` has its selectors in `version` (`AuthorizeWithSelectors`).
pub fn has_selectors(version: KubeVersion) -> bool {
    version >= KubeVersion::new(1, 32)
}

/// The schema `request` is typed by (`buildRequestType`).
fn request_schema(selectors: bool) -> Json {
    let s = json!({"type": "string"});
    let strings = json!({"type": "array", "items": s});
    let mut resource: Map<String, Json> = RESOURCE_FIELDS
        .iter()
        .map(|f| (f.to_string(), s.clone()))
        .collect();
    if selectors {
        let requirement = json!({"type": "object", "properties": {
            "key": s, "operator": s, "values": strings,
        }});
        let selector = json!({"type": "object", "properties": {
            "rawSelector": s, "requirements": {"type": "array", "items": requirement},
        }});
        resource.insert("fieldSelector".into(), selector.clone());
        resource.insert("labelSelector".into(), selector);
    }
    json!({"type": "object", "properties": {
        "resourceAttributes": {"type": "object", "properties": resource},
        "nonResourceAttributes": {"type": "object", "properties": {"path": s, "verb": s}},
        "user": s, "groups": strings, "uid": s,
        "extra": {"type": "object", "additionalProperties": strings},
    }})
}

/// How `request` is built from a SubjectAccessReview spec.
#[derive(Debug)]
pub struct AuthzTypes {
    model: ValueModel,
    selectors: bool,
}

/// The environment of authorization webhooks' match conditions.
pub fn env(version: KubeVersion) -> (Env, AuthzTypes) {
    let selectors = has_selectors(version);
    let (decl, model) = typed_with_names(&request_schema(selectors), REQUEST_TYPE, TYPE_NAMES);
    // Field names are declared as written: `resourceAttributes.namespace` is a field even
    // though `namespace` is a reserved word.
    let types = SchemaTypes::new(&decl).with_keyword_field_names(true);
    let env = KubernetesEnv::new(version)
        .stored()
        .with_authorizer_variable(false)
        .builder()
        .type_provider(Arc::new(types))
        .cost_limit(Some(PER_CALL_LIMIT))
        .variable("request", decl.cel_type())
        .build();
    (env, AuthzTypes { model, selectors })
}

impl AuthzTypes {
    /// `request` from a SubjectAccessReview's `spec` (or the whole review: its `spec` is
    /// used).
    pub fn value(&self, json: &Json) -> Result<Value, String> {
        let (spec, path) = match json.get("spec") {
            Some(spec) if json.get("kind").is_some() => (spec, "request.spec"),
            _ => (json, "request"),
        };
        Ok(self.model.to_value(&self.spec_fields(spec, path)?))
    }

    /// The spec as `convertObjectToUnstructured` gives it to CEL.
    fn spec_fields(&self, spec: &Json, path: &str) -> Result<Json, String> {
        let spec = expect_object(spec, path)?;
        let string = |k: &str| -> Result<Json, String> {
            match spec.get(k) {
                None | Some(Json::Null) => Ok(json!("")),
                Some(Json::String(s)) => Ok(json!(s)),
                Some(v) => Err(format!(
                    "{path}.{k}: expected a string, got {}",
                    json_kind(v)
                )),
            }
        };
        let mut out = Map::new();
        out.insert("user".into(), string("user")?);
        out.insert("uid".into(), string("uid")?);
        let groups = spec.get("groups").cloned().unwrap_or(json!([]));
        let groups = if groups.is_null() { json!([]) } else { groups };
        check_strings(&groups, &format!("{path}.groups"))?;
        out.insert("groups".into(), groups);
        let extra = match spec.get("extra") {
            None | Some(Json::Null) => json!({}),
            Some(e) => {
                for (k, v) in expect_object(e, &format!("{path}.extra"))? {
                    check_strings(v, &format!("{path}.extra[{k:?}]"))?;
                }
                e.clone()
            }
        };
        out.insert("extra".into(), extra);
        if let Some(ra) = spec.get("resourceAttributes").filter(|v| !v.is_null()) {
            let p = format!("{path}.resourceAttributes");
            out.insert("resourceAttributes".into(), self.resource_fields(ra, &p)?);
        }
        if let Some(nra) = spec.get("nonResourceAttributes").filter(|v| !v.is_null()) {
            let p = format!("{path}.nonResourceAttributes");
            let nra = expect_object(nra, &p)?;
            let mut m = Map::new();
            for k in ["verb", "path"] {
                m.insert(k.into(), string_field(nra, k, &p)?);
            }
            out.insert("nonResourceAttributes".into(), Json::Object(m));
        }
        Ok(Json::Object(out))
    }

    fn resource_fields(&self, ra: &Json, path: &str) -> Result<Json, String> {
        let ra = expect_object(ra, path)?;
        let mut m = Map::new();
        for k in RESOURCE_FIELDS {
            m.insert(k.into(), string_field(ra, k, path)?);
        }
        if self.selectors {
            for k in ["fieldSelector", "labelSelector"] {
                let Some(sel) = ra.get(k).filter(|v| !v.is_null()) else {
                    continue;
                };
                let p = format!("{path}.{k}");
                if let Some(sel) = selector(expect_object(sel, &p)?, &p)? {
                    m.insert(k.into(), sel);
                }
            }
        }
        Ok(Json::Object(m))
    }
}

/// A string field, `""` when absent.
fn string_field(m: &Map<String, Json>, k: &str, path: &str) -> Result<Json, String> {
    match m.get(k) {
        None | Some(Json::Null) => Ok(json!("")),
        Some(Json::String(s)) => Ok(json!(s)),
        Some(v) => Err(format!(
            "{path}.{k}: expected a string, got {}",
            json_kind(v)
        )),
    }
}

/// A selector as CEL sees it: its raw selector when it has one, else its requirements when
/// it has any, else nothing.
fn selector(sel: &Map<String, Json>, path: &str) -> Result<Option<Json>, String> {
    if let Some(raw) = sel.get("rawSelector").filter(|v| !v.is_null()) {
        let Json::String(raw) = raw else {
            return Err(format!(
                "{path}.rawSelector: expected a string, got {}",
                json_kind(raw)
            ));
        };
        if !raw.is_empty() {
            return Ok(Some(json!({"rawSelector": raw})));
        }
    }
    let reqs = match sel.get("requirements") {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::Array(a)) if a.is_empty() => return Ok(None),
        Some(Json::Array(a)) => a,
        Some(v) => {
            return Err(format!(
                "{path}.requirements: expected a list, got {}",
                json_kind(v)
            ));
        }
    };
    let mut out = Vec::with_capacity(reqs.len());
    for (i, r) in reqs.iter().enumerate() {
        let p = format!("{path}.requirements[{i}]");
        let r = expect_object(r, &p)?;
        let values = r.get("values").cloned().unwrap_or(json!([]));
        let values = if values.is_null() { json!([]) } else { values };
        check_strings(&values, &format!("{p}.values"))?;
        out.push(json!({
            "key": string_field(r, "key", &p)?,
            "operator": string_field(r, "operator", &p)?,
            "values": values,
        }));
    }
    Ok(Some(json!({"requirements": out})))
}
