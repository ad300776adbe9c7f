//! The API server's checks of the configuration files that hold CEL outside CRDs and
//! admission policies, with its field paths and messages (`cel check-config`):
//!
//! * AuthenticationConfiguration (`apiserver.config.k8s.io`): `ValidateAuthenticationConfiguration`
//!   in `k8s.io/apiserver` (v0.36.0) `pkg/apis/apiserver/validation/validation.go`, each
//!   `jwt[]` item by [`super::jwt_validation`];
//! * AuthorizationConfiguration: `ValidateAuthorizationConfiguration`,
//!   `ValidateWebhookConfiguration` and `compileMatchConditions` in the same file, with the
//!   authorizer types the kube-apiserver knows;
//! * ValidatingWebhookConfiguration and MutatingWebhookConfiguration
//!   (`admissionregistration.k8s.io/v1`): the parts of `validateValidatingWebhook` /
//!   `validateMutatingWebhook` and `validateMatchConditions` in `kubernetes/pkg/apis/
//!   admissionregistration/validation/validation.go` that concern the webhooks' names,
//!   policies and `matchConditions`, as on create.
//!
//! A document that is not one of these kinds, of an `apiVersion` the release does not serve,
//! or with a field of the wrong type, is unusable (`Err`, with the path): the API server's
//! decoder refuses it before any validation.

use cel_k8s::KubeVersion;
use cel_k8s_schema::field::{BadValue, ErrorType, FieldError};
use cel_k8s_schema::names;
use celerity::{Backend, Type};
use serde_json::{Map, Value as Json};

use super::jwt_validation::{
    array, duplicate, error, invalid, join, object, required, string_field, validate_jwt,
};
use super::{Place, PlaceEnv};
use crate::admission::environment::ReturnTypes;

/// The kinds `cel check-config` checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigKind {
    /// `apiserver.config.k8s.io` AuthenticationConfiguration.
    Authentication,
    /// `apiserver.config.k8s.io` AuthorizationConfiguration.
    Authorization,
    /// `admissionregistration.k8s.io/v1` ValidatingWebhookConfiguration.
    ValidatingWebhooks,
    /// `admissionregistration.k8s.io/v1` MutatingWebhookConfiguration.
    MutatingWebhooks,
}

impl ConfigKind {
    /// The kind's name.
    pub fn name(self) -> &'static str {
        match self {
            ConfigKind::Authentication => "AuthenticationConfiguration",
            ConfigKind::Authorization => "AuthorizationConfiguration",
            ConfigKind::ValidatingWebhooks => "ValidatingWebhookConfiguration",
            ConfigKind::MutatingWebhooks => "MutatingWebhookConfiguration",
        }
    }

    /// The API versions release `version` serves the kind in: the `apiserver.config.k8s.io`
    /// kinds' `register.go` by tag (AuthorizationConfiguration v1 from 1.32,
    /// AuthenticationConfiguration v1 from 1.34); webhooks' v1beta1 was removed in 1.22.
    fn api_versions(self, version: KubeVersion) -> Vec<&'static str> {
        let config = |v1_since: u32| {
            let mut v = vec![
                "apiserver.config.k8s.io/v1alpha1",
                "apiserver.config.k8s.io/v1beta1",
            ];
            if version >= KubeVersion::new(1, v1_since) {
                v.push("apiserver.config.k8s.io/v1");
            }
            v
        };
        match self {
            ConfigKind::Authentication => config(34),
            ConfigKind::Authorization => config(32),
            ConfigKind::ValidatingWebhooks | ConfigKind::MutatingWebhooks => {
                vec!["admissionregistration.k8s.io/v1"]
            }
        }
    }
}

/// What the checks of one document found.
#[derive(Debug)]
pub struct ConfigReport {
    /// The document's kind.
    pub kind: ConfigKind,
    /// `metadata.name`, for webhook configurations that have one.
    pub name: Option<String>,
    /// The field errors, in the API server's order; empty when the document is valid.
    pub errors: Vec<FieldError>,
}

/// The kinds checked, for messages.
const KINDS: &str = "AuthenticationConfiguration, AuthorizationConfiguration, ValidatingWebhookConfiguration, MutatingWebhookConfiguration";

/// What the API server knows besides the file.
#[derive(Clone, Debug, Default)]
pub struct ConfigOptions {
    /// Issuer URLs no `jwt[]` authenticator may have: the API server's
    /// `--service-account-issuer`s.
    pub disallowed_issuers: Vec<String>,
}

/// Checks one configuration document as the API server of release `version` does when it
/// loads it (authentication and authorization) or creates it (webhooks).
pub fn check_config(
    doc: &Json,
    version: KubeVersion,
    options: &ConfigOptions,
) -> Result<ConfigReport, String> {
    let kind = config_kind(doc, version)?;
    let obj = super::expect_object(doc, "the document")?;
    let mut errors = Vec::new();
    let mut name = None;
    match kind {
        ConfigKind::Authentication => authentication(obj, version, options, &mut errors)?,
        ConfigKind::Authorization => authorization(obj, version, &mut errors)?,
        ConfigKind::ValidatingWebhooks | ConfigKind::MutatingWebhooks => {
            let meta = object(obj, "metadata", "")?.cloned().unwrap_or_default();
            name = Some(string_field(&meta, "name", "metadata")?);
            webhooks(obj, kind, version, &mut errors)?;
        }
    }
    Ok(ConfigReport { kind, name, errors })
}

/// The kind of a configuration document, or why the API server of release `version` would
/// not decode it as one: another kind, or an API version it does not serve.
pub fn config_kind(doc: &Json, version: KubeVersion) -> Result<ConfigKind, String> {
    let obj = super::expect_object(doc, "the document")?;
    let kind = match obj.get("kind") {
        Some(Json::String(k)) => k.as_str(),
        None | Some(Json::Null) => return Err(format!("kind: missing (one of {KINDS})")),
        Some(v) => {
            return Err(format!(
                "kind: expected a string, got {}",
                super::json_kind(v)
            ));
        }
    };
    let kind = match kind {
        "AuthenticationConfiguration" => ConfigKind::Authentication,
        "AuthorizationConfiguration" => ConfigKind::Authorization,
        "ValidatingWebhookConfiguration" => ConfigKind::ValidatingWebhooks,
        "MutatingWebhookConfiguration" => ConfigKind::MutatingWebhooks,
        other => {
            return Err(format!(
                "kind {other:?} is not a configuration check-config knows (one of {KINDS})"
            ));
        }
    };
    let api = string_field(obj, "apiVersion", "")?;
    let served = kind.api_versions(version);
    if !served.contains(&api.as_str()) {
        return Err(format!(
            "apiVersion {api:?}: Kubernetes {version} serves {} as {}",
            kind.name(),
            served.join(", ")
        ));
    }
    Ok(kind)
}

/// `field.TooMany`.
fn too_many(path: &str, actual: usize, max: usize) -> FieldError {
    FieldError {
        error_type: ErrorType::TooMany,
        field: path.to_string(),
        bad_value: BadValue::Int(i64::try_from(actual).unwrap_or(i64::MAX)),
        detail: format!("must have at most {max} items"),
    }
}

/// `field.NotSupported` with a string value.
fn not_supported(path: &str, value: &str, supported: &[&str]) -> FieldError {
    let quoted: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    error(
        path,
        ErrorType::NotSupported,
        Some(value),
        &format!("supported values: {}", quoted.join(", ")),
    )
}

/// `ValidateAuthenticationConfiguration`, without disallowed issuers (the API server's own
/// service account issuers, which a file does not say).
fn authentication(
    obj: &Map<String, Json>,
    version: KubeVersion,
    options: &ConfigOptions,
    errors: &mut Vec<FieldError>,
) -> Result<(), String> {
    let jwt = array(obj, "jwt", "")?;
    if jwt.len() > 64 {
        errors.push(too_many("jwt", jwt.len(), 64));
        return Ok(());
    }
    let mut issuers: Vec<String> = Vec::new();
    let mut discovery_urls: Vec<String> = Vec::new();
    for (i, item) in jwt.iter().enumerate() {
        let path = format!("jwt[{i}]");
        errors.extend(validate_jwt(
            item,
            &path,
            version,
            &options.disallowed_issuers,
        )?);
        // `validate_jwt` read the item: it is an object and its issuer's fields strings.
        let issuer = item
            .get("issuer")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        let ipath = join(&path, "issuer");
        let url = string_field(&issuer, "url", &ipath)?;
        if issuers.contains(&url) {
            errors.push(duplicate(&join(&ipath, "url"), &url));
        }
        issuers.push(url);
        let discovery = string_field(&issuer, "discoveryURL", &ipath)?;
        if !discovery.is_empty() {
            if discovery_urls.contains(&discovery) {
                errors.push(duplicate(&join(&ipath, "discoveryURL"), &discovery));
            }
            discovery_urls.push(discovery);
        }
    }
    if let Some(anonymous) = object(obj, "anonymous", "")? {
        // `AnonymousAuthConfigurableEndpoints`: the field came in 1.31, off until 1.32.
        if version < KubeVersion::new(1, 31) {
            return Err("anonymous: unknown field (Kubernetes 1.31 added it)".to_string());
        }
        if version < KubeVersion::new(1, 32) {
            errors.push(error(
                "anonymous",
                ErrorType::Forbidden,
                None,
                "anonymous is not supported when AnonymousAuthConfigurableEndpoints feature gate is disabled",
            ));
        }
        let enabled = match anonymous.get("enabled") {
            None | Some(Json::Null) => false,
            Some(Json::Bool(b)) => *b,
            Some(v) => {
                return Err(format!(
                    "anonymous.enabled: expected a boolean, got {}",
                    super::json_kind(v)
                ));
            }
        };
        let conditions = array(anonymous, "conditions", "anonymous")?;
        if !enabled && !conditions.is_empty() {
            errors.push(FieldError {
                error_type: ErrorType::Invalid,
                field: "anonymous.conditions".to_string(),
                bad_value: BadValue::Json(Json::Array(conditions.to_vec())),
                detail: "enabled should be set to true when conditions are defined".to_string(),
            });
        }
    }
    Ok(())
}

/// The authorizer types the kube-apiserver knows (`modes.AuthorizationModeChoices`), sorted
/// as `sets.List` gives them; only `Webhook` may repeat.
const AUTHORIZER_TYPES: [&str; 6] = [
    "ABAC",
    "AlwaysAllow",
    "AlwaysDeny",
    "Node",
    "RBAC",
    "Webhook",
];

/// `ValidateAuthorizationConfiguration` (paths from the root, as the kube-apiserver passes
/// a nil path).
fn authorization(
    obj: &Map<String, Json>,
    version: KubeVersion,
    errors: &mut Vec<FieldError>,
) -> Result<(), String> {
    let authorizers = array(obj, "authorizers", "")?;
    if authorizers.is_empty() {
        errors.push(required(
            "authorizers",
            "at least one authorization mode must be defined",
        ));
    }
    let match_env = PlaceEnv::new(Place::AuthzMatch, version)?;
    let mut seen_types: Vec<String> = Vec::new();
    let mut seen_names: Vec<String> = Vec::new();
    for (i, a) in authorizers.iter().enumerate() {
        let path = format!("authorizers[{i}]");
        let a = super::expect_object(a, &path)?;
        let ty = string_field(a, "type", &path)?;
        let tpath = join(&path, "type");
        if ty.is_empty() {
            errors.push(required(&tpath, ""));
            continue;
        }
        if !AUTHORIZER_TYPES.contains(&ty.as_str()) {
            errors.push(not_supported(&tpath, &ty, &AUTHORIZER_TYPES));
            continue;
        }
        if seen_types.contains(&ty) && ty != "Webhook" {
            errors.push(duplicate(&tpath, &ty));
            continue;
        }
        seen_types.push(ty.clone());
        let name = string_field(a, "name", &path)?;
        let npath = join(&path, "name");
        if name.is_empty() {
            errors.push(required(&npath, ""));
        } else if seen_names.contains(&name) {
            errors.push(duplicate(&npath, &name));
        } else {
            let why = names::is_dns1123_subdomain(&name);
            if !why.is_empty() {
                errors.push(invalid(
                    &npath,
                    &name,
                    &format!("authorizer name is invalid: {}", why.join(", ")),
                ));
            }
        }
        seen_names.push(name);
        let webhook = object(a, "webhook", &path)?;
        match (ty.as_str(), webhook) {
            ("Webhook", None) => errors.push(required(
                &join(&path, "webhook"),
                "required when type=Webhook",
            )),
            ("Webhook", Some(w)) => {
                authz_webhook(w, &path, &match_env, errors)?;
            }
            (_, Some(_)) => errors.push(invalid(
                &join(&path, "webhook"),
                "non-null",
                "may only be specified when type=Webhook",
            )),
            (_, None) => {}
        }
    }
    Ok(())
}

/// A `metav1.Duration` field: Go's `time.ParseDuration` of a string (absent is 0), in
/// nanoseconds.
fn duration_field(w: &Map<String, Json>, key: &str, path: &str) -> Result<i64, String> {
    let text = string_field(w, key, path)?;
    if text.is_empty() {
        return Ok(0);
    }
    cel_runtime::time::parse_duration(&text)
        .map(|d| d.nanos)
        .map_err(|e| format!("{}: {e}", join(path, key)))
}

/// A duration as Go's `time.Duration.String` prints it (`1m30s`, `500ms`, `0s`).
fn go_duration(nanos: i64) -> String {
    fn fraction(v: u64, unit: u64, digits: usize) -> String {
        let (whole, part) = (v / unit, v % unit);
        if part == 0 {
            return whole.to_string();
        }
        let part = format!("{part:0digits$}");
        format!("{whole}.{}", part.trim_end_matches('0'))
    }
    if nanos == 0 {
        return "0s".to_string();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let u = nanos.unsigned_abs();
    let body = if u < 1_000 {
        format!("{u}ns")
    } else if u < 1_000_000 {
        format!("{}µs", fraction(u, 1_000, 3))
    } else if u < 1_000_000_000 {
        format!("{}ms", fraction(u, 1_000_000, 6))
    } else {
        let (h, rest) = (u / 3_600_000_000_000, u % 3_600_000_000_000);
        let (m, s) = (rest / 60_000_000_000, rest % 60_000_000_000);
        let secs = format!("{}s", fraction(s, 1_000_000_000, 9));
        match (h, m) {
            (0, 0) => secs,
            (0, m) => format!("{m}m{secs}"),
            (h, m) => format!("{h}h{m}m{secs}"),
        }
    };
    format!("{sign}{body}")
}

/// `ValidateWebhookConfiguration` of an authorizer at `path` (its errors are under the
/// authorizer's path, not `webhook`'s, as the API server gives them), after the versioned
/// defaults (`SetDefaults_WebhookConfiguration`: the TTLs 5m and 30s).
fn authz_webhook(
    w: &Map<String, Json>,
    path: &str,
    match_env: &PlaceEnv,
    errors: &mut Vec<FieldError>,
) -> Result<(), String> {
    let wpath = join(path, "webhook");
    let timeout = duration_field(w, "timeout", &wpath)?;
    if timeout == 0 {
        errors.push(required(&join(path, "timeout"), ""));
    } else if !(0..=30_000_000_000).contains(&timeout) {
        errors.push(invalid(
            &join(path, "timeout"),
            &go_duration(timeout),
            "must be > 0s and <= 30s",
        ));
    }
    for key in ["authorizedTTL", "unauthorizedTTL"] {
        let ttl = duration_field(w, key, &wpath)?;
        if ttl < 0 {
            errors.push(invalid(&join(path, key), &go_duration(ttl), "must be > 0s"));
        }
    }
    let sar = string_field(w, "subjectAccessReviewVersion", &wpath)?;
    match sar.as_str() {
        "" => errors.push(required(&join(path, "subjectAccessReviewVersion"), "")),
        "v1" | "v1beta1" => {}
        other => errors.push(not_supported(
            &join(path, "subjectAccessReviewVersion"),
            other,
            &["v1", "v1beta1"],
        )),
    }
    let conditions = array(w, "matchConditions", &wpath)?;
    let mc_sar = string_field(w, "matchConditionSubjectAccessReviewVersion", &wpath)?;
    let mc_path = join(path, "matchConditionSubjectAccessReviewVersion");
    match mc_sar.as_str() {
        "" if !conditions.is_empty() => errors.push(required(
            &mc_path,
            "required if match conditions are specified",
        )),
        "" | "v1" => {}
        other => errors.push(not_supported(&mc_path, other, &["v1"])),
    }
    let policy = string_field(w, "failurePolicy", &wpath)?;
    match policy.as_str() {
        "" => errors.push(required(&join(path, "failurePolicy"), "")),
        "NoOpinion" | "Deny" => {}
        other => errors.push(not_supported(
            &join(path, "failurePolicy"),
            other,
            &["NoOpinion", "Deny"],
        )),
    }
    connection_info(w, path, &wpath, errors)?;
    authz_match_conditions(conditions, path, &wpath, match_env, errors)
}

/// The `connectionInfo` checks of `ValidateWebhookConfiguration`, but whether the
/// kubeconfig file exists on the API server's machine.
fn connection_info(
    w: &Map<String, Json>,
    path: &str,
    wpath: &str,
    errors: &mut Vec<FieldError>,
) -> Result<(), String> {
    let ci = object(w, "connectionInfo", wpath)?
        .cloned()
        .unwrap_or_default();
    let cpath = join(wpath, "connectionInfo");
    let ty = string_field(&ci, "type", &cpath)?;
    let file = match ci.get("kubeConfigFile") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => Some(s.clone()),
        Some(v) => {
            return Err(format!(
                "{cpath}.kubeConfigFile: expected a string, got {}",
                super::json_kind(v)
            ));
        }
    };
    let fpath = join(path, "connectionInfo.kubeConfigFile");
    match (ty.as_str(), &file) {
        ("", _) => errors.push(required(&join(path, "connectionInfo.type"), "")),
        ("InClusterConfig", Some(f)) => errors.push(invalid(
            &fpath,
            f,
            "can only be set when type=KubeConfigFile",
        )),
        ("InClusterConfig", None) => {}
        ("KubeConfigFile", None) => errors.push(required(&fpath, "")),
        ("KubeConfigFile", Some(f)) if f.is_empty() => errors.push(required(&fpath, "")),
        ("KubeConfigFile", Some(f)) if !f.starts_with('/') => {
            errors.push(invalid(&fpath, f, "must be an absolute path"))
        }
        ("KubeConfigFile", Some(_)) => {}
        _ => {
            // The value shown is the whole `connectionInfo` struct.
            let mut value = Map::new();
            value.insert("type".into(), Json::String(ty.clone()));
            value.insert(
                "kubeConfigFile".into(),
                file.map_or(Json::Null, Json::String),
            );
            errors.push(FieldError {
                error_type: ErrorType::NotSupported,
                field: join(path, "connectionInfo.type"),
                bad_value: BadValue::GoStruct(Json::Object(value)),
                detail: r#"supported values: "InClusterConfig", "KubeConfigFile""#.to_string(),
            });
        }
    }
    Ok(())
}

/// `ValidateAndCompileMatchConditions`: an authorization webhook's `matchConditions` alone,
/// paths from `matchConditions` (as the authorizer reports them when it is built).
pub fn validate_authz_match_conditions(
    conditions: &Json,
    version: KubeVersion,
) -> Result<Vec<FieldError>, String> {
    let Json::Array(conditions) = conditions else {
        return Err("matchConditions: expected a list".to_string());
    };
    let env = PlaceEnv::new(Place::AuthzMatch, version)?;
    let mut errors = Vec::new();
    authz_match_conditions(conditions, "", "", &env, &mut errors)?;
    Ok(errors)
}

/// `compileMatchConditions` of an authorization webhook: at most 64, each expression
/// non-blank, unique, compiled in the `authz-match` environment.
fn authz_match_conditions(
    conditions: &[Json],
    path: &str,
    wpath: &str,
    env: &PlaceEnv,
    errors: &mut Vec<FieldError>,
) -> Result<(), String> {
    let mpath = join(path, "matchConditions");
    if conditions.len() > 64 {
        errors.push(too_many(&mpath, conditions.len(), 64));
        return Ok(());
    }
    let mut seen: Vec<String> = Vec::new();
    for (i, c) in conditions.iter().enumerate() {
        let cpath = format!("{}[{i}]", join(wpath, "matchConditions"));
        let expr = string_field(super::expect_object(c, &cpath)?, "expression", &cpath)?;
        let epath = format!("{mpath}[{i}].expression");
        if expr.trim().is_empty() {
            errors.push(required(&epath, ""));
            continue;
        }
        if seen.contains(&expr) {
            errors.push(duplicate(&epath, &expr));
            continue;
        }
        seen.push(expr.clone());
        if let Err(detail) = env.compile(&expr, Backend::Interpreter) {
            errors.push(compile_error(&epath, &expr, &detail));
        }
    }
    Ok(())
}

/// A compiler's error as `convertCELErrorToValidationError` makes it a field error: an
/// invalid value, or an internal error when the program did not instantiate.
fn compile_error(path: &str, expr: &str, detail: &str) -> FieldError {
    if detail.starts_with("program instantiation failed") {
        error(path, ErrorType::Internal, None, detail)
    } else {
        invalid(path, expr, detail)
    }
}

/// The webhook checks of `validateValidatingWebhookConfiguration` /
/// `validateMutatingWebhookConfiguration` that concern names, policies and match
/// conditions (not rules, selectors, client configs or `metadata`).
fn webhooks(
    obj: &Map<String, Json>,
    kind: ConfigKind,
    version: KubeVersion,
    errors: &mut Vec<FieldError>,
) -> Result<(), String> {
    let (admission, env) = super::webhook::validation_compiler(version);
    let mut names_seen: Vec<String> = Vec::new();
    for (i, hook) in array(obj, "webhooks", "")?.iter().enumerate() {
        let path = format!("webhooks[{i}]");
        let hook = super::expect_object(hook, &path)?;
        let name = string_field(hook, "name", &path)?;
        let npath = join(&path, "name");
        fully_qualified_name(&name, &npath, errors);
        enum_field(hook, "failurePolicy", &path, &["Fail", "Ignore"], errors)?;
        enum_field(hook, "matchPolicy", &path, &["Equivalent", "Exact"], errors)?;
        match hook.get("sideEffects") {
            None | Some(Json::Null) => errors.push(required(
                &join(&path, "sideEffects"),
                "must specify one of None, NoneOnDryRun",
            )),
            Some(_) => enum_field(
                hook,
                "sideEffects",
                &path,
                &["None", "NoneOnDryRun"],
                errors,
            )?,
        }
        match hook.get("timeoutSeconds") {
            None | Some(Json::Null) => {}
            Some(Json::Number(n)) if n.as_i64().is_some_and(|t| i32::try_from(t).is_ok()) => {
                let t = n.as_i64().unwrap_or_default();
                if !(1..=30).contains(&t) {
                    errors.push(FieldError {
                        error_type: ErrorType::Invalid,
                        field: join(&path, "timeoutSeconds"),
                        bad_value: BadValue::Int(t),
                        detail: "the timeout value must be between 1 and 30 seconds".into(),
                    });
                }
            }
            Some(v) => {
                return Err(format!(
                    "{path}.timeoutSeconds: expected a 32-bit integer, got {v}"
                ));
            }
        }
        if kind == ConfigKind::MutatingWebhooks {
            enum_field(
                hook,
                "reinvocationPolicy",
                &path,
                &["IfNeeded", "Never"],
                errors,
            )?;
        }
        let conditions = array(hook, "matchConditions", &path)?;
        webhook_match_conditions(conditions, &path, &admission, &env, errors)?;
        admission_review_versions(hook, &path, errors)?;
        if !name.is_empty() {
            if names_seen.contains(&name) {
                errors.push(duplicate(&npath, &name));
            } else {
                names_seen.push(name);
            }
        }
    }
    Ok(())
}

/// `IsFullyQualifiedName`.
fn fully_qualified_name(name: &str, path: &str, errors: &mut Vec<FieldError>) {
    if name.is_empty() {
        errors.push(required(path, ""));
        return;
    }
    let why = names::is_dns1123_subdomain(name);
    if !why.is_empty() {
        errors.push(invalid(path, name, &why.join(",")));
    } else if name.split('.').count() < 3 {
        errors.push(invalid(
            path,
            name,
            "should be a domain with at least three segments separated by dots",
        ));
    }
}

/// An optional string field among `supported` (sorted), else `field.NotSupported`.
fn enum_field(
    hook: &Map<String, Json>,
    key: &str,
    path: &str,
    supported: &[&str],
    errors: &mut Vec<FieldError>,
) -> Result<(), String> {
    if matches!(hook.get(key), None | Some(Json::Null)) {
        return Ok(());
    }
    let v = string_field(hook, key, path)?;
    if !supported.contains(&v.as_str()) {
        errors.push(not_supported(&join(path, key), &v, supported));
    }
    Ok(())
}

/// `validateAdmissionReviewVersions` (a recognised version required, as on create).
fn admission_review_versions(
    hook: &Map<String, Json>,
    path: &str,
    errors: &mut Vec<FieldError>,
) -> Result<(), String> {
    let versions = super::jwt_validation::strings(hook, "admissionReviewVersions", path)?;
    let vpath = join(path, "admissionReviewVersions");
    if versions.is_empty() {
        errors.push(required(&vpath, "must specify one of v1, v1beta1"));
        return Ok(());
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut accepted = false;
    for (i, v) in versions.iter().enumerate() {
        let p = format!("{vpath}[{i}]");
        if seen.contains(&v.as_str()) {
            errors.push(invalid(&p, v, "duplicate version"));
            continue;
        }
        seen.push(v);
        for e in names::is_dns1035_label(v) {
            errors.push(invalid(&p, v, &e));
        }
        accepted |= v == "v1" || v == "v1beta1";
    }
    if !accepted {
        errors.push(FieldError {
            error_type: ErrorType::Invalid,
            field: vpath,
            bad_value: BadValue::Json(Json::Array(
                versions.into_iter().map(Json::String).collect(),
            )),
            detail: "must include at least one of v1, v1beta1".into(),
        });
    }
    Ok(())
}

/// `validateMatchConditions` of an admission webhook: at most 64 (reported, then every
/// condition still checked), each with a non-blank expression compiled trimmed, a
/// qualified name, names unique.
fn webhook_match_conditions(
    conditions: &[Json],
    path: &str,
    admission: &crate::admission::AdmissionEnv,
    env: &celerity::Env,
    errors: &mut Vec<FieldError>,
) -> Result<(), String> {
    let mpath = join(path, "matchConditions");
    if conditions.len() > 64 {
        errors.push(too_many(&mpath, conditions.len(), 64));
    }
    let returns = ReturnTypes::OneOf(vec![Type::Bool]);
    let mut seen: Vec<String> = Vec::new();
    for (i, c) in conditions.iter().enumerate() {
        let cpath = format!("{mpath}[{i}]");
        let c = super::expect_object(c, &cpath)?;
        let expr = string_field(c, "expression", &cpath)?;
        let name = string_field(c, "name", &cpath)?;
        let epath = join(&cpath, "expression");
        let trimmed = expr.trim();
        if trimmed.is_empty() {
            errors.push(required(&epath, ""));
        } else if let Err(detail) = admission.compile(env, trimmed, &returns).program {
            errors.push(compile_error(&epath, trimmed, &detail));
        }
        let npath = join(&cpath, "name");
        if name.is_empty() {
            errors.push(required(&npath, ""));
        } else {
            for e in names::is_qualified_name(&name) {
                errors.push(invalid(&npath, &name, &e));
            }
            if seen.contains(&name) {
                errors.push(duplicate(&npath, &name));
            } else {
                seen.push(name);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_go_does() {
        let s = 1_000_000_000;
        assert_eq!(go_duration(0), "0s");
        assert_eq!(go_duration(45 * s), "45s");
        assert_eq!(go_duration(90 * s), "1m30s");
        assert_eq!(go_duration(3600 * s), "1h0m0s");
        assert_eq!(go_duration(1_500_000_000), "1.5s");
        assert_eq!(go_duration(-5 * s), "-5s");
        assert_eq!(go_duration(500_000_000), "500ms");
        assert_eq!(go_duration(1_500), "1.5µs");
    }
}
