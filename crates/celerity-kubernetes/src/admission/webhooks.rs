//! Admission webhooks: ValidatingWebhookConfiguration and MutatingWebhookConfiguration
//! (`admissionregistration.k8s.io/v1`, and `v1beta1` with its defaults), and which of their
//! webhooks the API server would call for a request. Nothing is called: this decides what
//! Kubernetes' `ShouldCallHook` decides (`k8s.io/apiserver/pkg/admission/plugin/webhook/
//! generic/webhook.go`, v0.37.0-beta.0), in its order:
//!
//! 1. the `namespaceSelector` against the labels of the request's namespace
//!    (`predicates/namespace/matcher.go`): cluster-scoped requests other than for
//!    Namespaces always match, a Namespace created or updated is matched by its own labels,
//!    one deleted by the namespace's;
//! 2. the `objectSelector` against the object's labels or the old object's
//!    (`predicates/object/matcher.go`);
//! 3. the `rules`, in order (`predicates/rules/rules.go`): operations, groups, versions,
//!    resources with subresources (`*`, `pods/*`, `*/status`) and scope; then, under
//!    `matchPolicy: Equivalent`, the equivalent resources the host registered. These are
//!    the rules of admission policies without `resourceNames` and without exclusions, so
//!    [`super::matching`] decides them; the one difference is that a webhook without rules
//!    matches nothing, where a policy without `resourceRules` matches everything;
//! 4. a selector that could not be parsed is an internal error, once the rules matched;
//! 5. the `matchConditions`, with Kubernetes' generic matcher
//!    ([`super::validating::evaluate_match_conditions`]), compiled as stored expressions
//!    with `authorizer` and without `params` (`webhook/accessors.go`
//!    `GetCompiledMatcher`), within their budget of 2,500,000: all true calls the webhook;
//!    one false skips it (with the condition's name); an error rejects the request under
//!    `failurePolicy: Fail` (403, `<resource> "<name>" is forbidden: <error>`) and skips
//!    the webhook under `Ignore`.
//!
//! Configurations are ordered by name and webhooks within one as written
//! (`configuration/mutating_webhook_manager.go`, `validating_webhook_manager.go`); the
//! mutating ones run after the mutating admission policies, the validating ones after the
//! validating policies (the API server's plugin order). The first webhook whose matching
//! fails rejects the request: later webhooks are not reached, and (validating webhooks are
//! called together once all are matched) no validating webhook is called. Requests for the
//! admission configuration kinds themselves are never sent to webhooks
//! (`rules.IsExemptAdmissionConfigurationResource`).
//!
//! What is not the API server's: objects are not converted to the version a webhook is
//! matched as (see [`super`]); webhooks' answers (mutations, denials) are unknown, so a
//! called mutating webhook changes nothing here; static (manifest-based) webhooks and
//! the exclusion of virtual resources (1.37's feature gates) are not modelled.
//!
//! The configuration types are plain serde types, reusable by other readers; only what
//! matching needs is checked here (`cel check-config` validates the fields).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value as Json;

use super::dispatch::Status;
use super::environment::{AdmissionEnv, Compiled, Declarations, FixedBindings, ReturnTypes};
use super::matching::{
    Equivalents, namespace_selector_matches, object_selector_matches, rules_match,
};
use super::policy::{LabelSelector, ResourceRule};
use super::request::{Gvk, Gvr, Operation, Request};
use super::validating::{OnError, evaluate_match_conditions};
use celerity::{Type, Value};

/// The kind of a validating webhook configuration.
pub const VALIDATING_WEBHOOK_CONFIGURATION: &str = "ValidatingWebhookConfiguration";
/// The kind of a mutating webhook configuration.
pub const MUTATING_WEBHOOK_CONFIGURATION: &str = "MutatingWebhookConfiguration";
/// The API versions read: `v1`, and `v1beta1` (whose defaults differ).
pub const API_VERSIONS: [&str; 2] = [
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1beta1",
];

/// Null reads as absent, as Kubernetes' JSON decoding takes it.
fn nullable<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A ValidatingWebhookConfiguration or MutatingWebhookConfiguration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookConfiguration {
    /// `apiVersion`.
    #[serde(default, deserialize_with = "nullable")]
    pub api_version: String,
    /// `kind`.
    #[serde(default, deserialize_with = "nullable")]
    pub kind: String,
    /// `metadata` (its name).
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: Metadata,
    /// `webhooks`.
    #[serde(default, deserialize_with = "nullable")]
    pub webhooks: Vec<Webhook>,
}

/// The part of `metadata` matching reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    /// `name`.
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
}

/// One webhook of a configuration (`ValidatingWebhook` or `MutatingWebhook`; the latter
/// adds `reinvocationPolicy`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    /// `name`.
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// `clientConfig` (not read: nothing is called).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_config: Option<Json>,
    /// `rules`.
    #[serde(default, deserialize_with = "nullable")]
    pub rules: Vec<RuleWithOperations>,
    /// `failurePolicy` (`Fail` by default in v1, `Ignore` in v1beta1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<String>,
    /// `matchPolicy` (`Equivalent` by default in v1, `Exact` in v1beta1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_policy: Option<String>,
    /// `namespaceSelector` (absent: everything).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelectorSpec>,
    /// `objectSelector` (absent: everything).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_selector: Option<LabelSelectorSpec>,
    /// `sideEffects`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<String>,
    /// `timeoutSeconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i64>,
    /// `admissionReviewVersions`.
    #[serde(default, deserialize_with = "nullable")]
    pub admission_review_versions: Vec<String>,
    /// `reinvocationPolicy` (mutating webhooks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reinvocation_policy: Option<String>,
    /// `matchConditions`.
    #[serde(default, deserialize_with = "nullable")]
    pub match_conditions: Vec<MatchCondition>,
}

/// A rule (`RuleWithOperations`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleWithOperations {
    /// `operations` (`*` for all).
    #[serde(default, deserialize_with = "nullable")]
    pub operations: Vec<String>,
    /// `apiGroups`.
    #[serde(default, deserialize_with = "nullable")]
    pub api_groups: Vec<String>,
    /// `apiVersions`.
    #[serde(default, deserialize_with = "nullable")]
    pub api_versions: Vec<String>,
    /// `resources` (`pods`, `pods/status`, `*`, `*/*`).
    #[serde(default, deserialize_with = "nullable")]
    pub resources: Vec<String>,
    /// `scope` (`*` by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// A label selector as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorSpec {
    /// `matchLabels`.
    #[serde(default, deserialize_with = "nullable")]
    pub match_labels: BTreeMap<String, String>,
    /// `matchExpressions`.
    #[serde(default, deserialize_with = "nullable")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// One of a selector's `matchExpressions`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LabelSelectorRequirement {
    /// `key`.
    #[serde(default, deserialize_with = "nullable")]
    pub key: String,
    /// `operator`.
    #[serde(default, deserialize_with = "nullable")]
    pub operator: String,
    /// `values`.
    #[serde(default, deserialize_with = "nullable")]
    pub values: Vec<String>,
}

/// A named match condition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MatchCondition {
    /// `name`.
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// `expression`.
    #[serde(default, deserialize_with = "nullable")]
    pub expression: String,
}

impl From<&LabelSelectorSpec> for LabelSelector {
    fn from(s: &LabelSelectorSpec) -> LabelSelector {
        LabelSelector {
            match_labels: s
                .match_labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            match_expressions: s
                .match_expressions
                .iter()
                .map(|r| (r.key.clone(), r.operator.clone(), r.values.clone()))
                .collect(),
        }
    }
}

impl From<&RuleWithOperations> for ResourceRule {
    fn from(r: &RuleWithOperations) -> ResourceRule {
        ResourceRule {
            resource_names: Vec::new(),
            operations: r.operations.clone(),
            api_groups: r.api_groups.clone(),
            api_versions: r.api_versions.clone(),
            resources: r.resources.clone(),
            scope: r.scope.clone(),
        }
    }
}

/// Whether a kind is one of the two webhook configuration kinds.
pub fn is_webhook_configuration(kind: &str) -> bool {
    kind == VALIDATING_WEBHOOK_CONFIGURATION || kind == MUTATING_WEBHOOK_CONFIGURATION
}

/// Reads a webhook configuration; every problem, at its path (`webhooks[1].rules:
/// invalid type: ...`).
pub fn read_webhook_configuration(json: &Json) -> Result<WebhookConfiguration, Vec<String>> {
    let Some(object) = json.as_object() else {
        return Err(vec!["expected an object".into()]);
    };
    let text = |k: &str| object.get(k).and_then(Json::as_str).unwrap_or("");
    let mut errors = Vec::new();
    if !is_webhook_configuration(text("kind")) {
        errors.push(format!(
            "kind: Unsupported value: {:?}: supported values: \"{MUTATING_WEBHOOK_CONFIGURATION}\", \"{VALIDATING_WEBHOOK_CONFIGURATION}\"",
            text("kind")
        ));
    }
    if !API_VERSIONS.contains(&text("apiVersion")) {
        errors.push(format!(
            "apiVersion: Unsupported value: {:?}: supported values: \"{}\", \"{}\"",
            text("apiVersion"),
            API_VERSIONS[0],
            API_VERSIONS[1]
        ));
    }
    let mut shell = object.clone();
    let webhooks = shell.remove("webhooks").unwrap_or(Json::Null);
    let mut config: WebhookConfiguration = match serde_json::from_value(Json::Object(shell)) {
        Ok(c) => c,
        Err(e) => {
            errors.push(locate(object, &e.to_string(), |o| {
                serde_json::from_value::<WebhookConfiguration>(o).err()
            }));
            WebhookConfiguration::default()
        }
    };
    if config.metadata.name.is_empty() {
        errors.push("metadata.name: Required value".into());
    }
    match webhooks {
        Json::Null => {}
        Json::Array(items) => {
            for (i, item) in items.into_iter().enumerate() {
                match serde_json::from_value::<Webhook>(item.clone()) {
                    Ok(w) => config.webhooks.push(w),
                    Err(e) => {
                        let at = match item.as_object() {
                            Some(o) => locate(o, &e.to_string(), |o| {
                                serde_json::from_value::<Webhook>(o).err()
                            }),
                            None => format!(": {e}"),
                        };
                        errors.push(format!("webhooks[{i}]{at}"));
                    }
                }
            }
        }
        other => errors.push(format!(
            "webhooks: Invalid value: expected a list, got {other}"
        )),
    }
    if errors.is_empty() {
        Ok(config)
    } else {
        Err(errors)
    }
}

/// `.field: message` for the first field of `object` that does not read on its own, or
/// `: message` when none does alone.
fn locate(
    object: &serde_json::Map<String, Json>,
    message: &str,
    fails: impl Fn(Json) -> Option<serde_json::Error>,
) -> String {
    for (k, v) in object {
        let mut alone = serde_json::Map::new();
        alone.insert(k.clone(), v.clone());
        if let Some(e) = fails(Json::Object(alone)) {
            return format!(".{k}: {e}");
        }
    }
    format!(": {message}")
}

/// One webhook compiled: what matching reads, with its match conditions compiled.
#[derive(Debug)]
pub struct CompiledWebhook {
    /// The configuration's kind.
    pub kind: &'static str,
    /// The configuration's name.
    pub configuration: String,
    /// The webhook's index in the configuration.
    pub index: usize,
    /// The webhook's name.
    pub name: String,
    rules: Vec<ResourceRule>,
    namespace_selector: LabelSelector,
    object_selector: LabelSelector,
    match_policy: String,
    on_error: OnError,
    condition_names: Vec<String>,
    conditions: Vec<Compiled>,
}

/// The declarations of webhooks' match conditions: `authorizer`, no `params`
/// (`webhook/accessors.go` `GetCompiledMatcher`).
pub const DECLARATIONS: Declarations = Declarations {
    params: false,
    authorizer: true,
    patch_types: false,
};

impl CompiledWebhook {
    /// Compiles the webhooks of a configuration in `env` (the set's admission environment);
    /// `conditions_env` is the environment their match conditions compile in (see
    /// [`DECLARATIONS`]).
    pub fn compile_all(
        env: &AdmissionEnv,
        conditions_env: &celerity::Env,
        config: &WebhookConfiguration,
    ) -> Vec<CompiledWebhook> {
        let kind = if config.kind == MUTATING_WEBHOOK_CONFIGURATION {
            MUTATING_WEBHOOK_CONFIGURATION
        } else {
            VALIDATING_WEBHOOK_CONFIGURATION
        };
        // v1beta1's defaults (`admissionregistration/v1beta1/defaults.go`): Ignore, Exact.
        let beta = config.api_version.ends_with("/v1beta1");
        let boolean = ReturnTypes::OneOf(vec![Type::Bool]);
        config
            .webhooks
            .iter()
            .enumerate()
            .map(|(index, w)| {
                let failure =
                    w.failure_policy
                        .as_deref()
                        .unwrap_or(if beta { "Ignore" } else { "Fail" });
                CompiledWebhook {
                    kind,
                    configuration: config.metadata.name.clone(),
                    index,
                    name: w.name.clone(),
                    rules: w.rules.iter().map(ResourceRule::from).collect(),
                    namespace_selector: w
                        .namespace_selector
                        .as_ref()
                        .map(LabelSelector::from)
                        .unwrap_or_default(),
                    object_selector: w
                        .object_selector
                        .as_ref()
                        .map(LabelSelector::from)
                        .unwrap_or_default(),
                    match_policy: w
                        .match_policy
                        .clone()
                        .unwrap_or_else(|| if beta { "Exact" } else { "Equivalent" }.into()),
                    on_error: match failure {
                        "Fail" => OnError::Fail,
                        "Ignore" => OnError::Ignore,
                        _ => OnError::Unrecognized,
                    },
                    condition_names: w.match_conditions.iter().map(|c| c.name.clone()).collect(),
                    conditions: w
                        .match_conditions
                        .iter()
                        .map(|c| env.compile(conditions_env, &c.expression, &boolean))
                        .collect(),
                }
            })
            .collect()
    }

    /// Whether it is a mutating webhook.
    pub fn mutating(&self) -> bool {
        self.kind == MUTATING_WEBHOOK_CONFIGURATION
    }

    /// Every match condition that does not compile, at its path
    /// (`webhooks[0].matchConditions[1].expression: compilation failed: ...`): the API
    /// server refuses such a configuration; a request meets the error as the failure
    /// policy says.
    pub fn compile_errors(&self) -> Vec<String> {
        self.conditions
            .iter()
            .enumerate()
            .filter_map(|(j, c)| {
                c.program.as_ref().err().map(|e| {
                    format!(
                        "webhooks[{}].matchConditions[{j}].expression: {e}",
                        self.index
                    )
                })
            })
            .collect()
    }

    /// What `ShouldCallHook` decides for a request, given the labels of its namespace, the
    /// equivalent resources and the values match conditions read (`request` is rebuilt
    /// when the webhook matched an equivalent resource).
    pub(crate) fn should_call(
        &self,
        r: &Request,
        namespace_labels: &[(String, String)],
        equivalents: &Equivalents,
        fixed: &FixedBindings,
        request_value: impl Fn(&Gvr, &Gvk) -> Value,
    ) -> ShouldCall {
        let ns = namespace_selector_matches(&self.namespace_selector, r, Some(namespace_labels));
        if let Ok(false) = ns {
            return ShouldCall::Skip(format!(
                "namespaceSelector does not match the labels of namespace {:?}",
                namespace_name(r)
            ));
        }
        let obj = object_selector_matches(&self.object_selector, r);
        if let Ok(false) = obj {
            return ShouldCall::Skip(
                "objectSelector matches neither the object's labels nor the old object's".into(),
            );
        }
        let matched = match rules_match(&self.rules, &self.match_policy, r, equivalents) {
            Err(e) => return ShouldCall::Reject(internal_error(&e)),
            Ok(None) => return ShouldCall::Skip(format!("no rule matches {}", describe(r))),
            Ok(Some(m)) => m,
        };
        // The selectors' parse errors count once the rules matched.
        if let Some(e) = ns.err().or(obj.err()) {
            return ShouldCall::Reject(Status {
                code: 500,
                reason: "InternalError".into(),
                message: e,
            });
        }
        if self.conditions.is_empty() {
            return ShouldCall::Call(matched);
        }
        let mut view = FixedBindings {
            params: Value::Null,
            namespace: Value::Null,
            ..fixed.clone()
        };
        if matched.0 != r.resource || matched.1 != r.kind {
            view.request = request_value(&matched.0, &matched.1);
        }
        let no_variables: Arc<[(Arc<str>, Compiled)]> = Arc::from(Vec::new());
        let result =
            evaluate_match_conditions(&self.conditions, &no_variables, &view, self.on_error);
        if let Some(e) = result.error {
            return ShouldCall::Reject(forbidden(r, &e));
        }
        if result.matches {
            return ShouldCall::Call(matched);
        }
        match (result.failed_condition, result.ignored_error) {
            (Some(i), _) => ShouldCall::Skip(format!(
                "matchCondition {:?} is false",
                self.condition_names.get(i).map_or("", String::as_str)
            )),
            (None, Some(e)) => ShouldCall::Skip(format!(
                "matchConditions failed and failurePolicy is Ignore: {e}"
            )),
            (None, None) => ShouldCall::Skip("matchConditions do not match".into()),
        }
    }
}

/// What `ShouldCallHook` decides.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ShouldCall {
    /// Call it, with the request as this resource and kind.
    Call((Gvr, Gvk)),
    /// Do not call it, for this reason.
    Skip(String),
    /// Reject the request with this status.
    Reject(Status),
}

/// What became of one webhook for one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookResult {
    /// The webhook's name.
    pub name: String,
    /// Its configuration's name.
    pub configuration: String,
    /// Its configuration's kind.
    pub kind: &'static str,
    /// Whether the API server would call it.
    pub called: bool,
    /// Why not (`None` when called).
    pub reason: Option<String>,
    /// The API server's error when matching this webhook rejected the request.
    pub error: Option<String>,
    /// The resource and kind the request is sent as (when called).
    pub matched_as: Option<(Gvr, Gvk)>,
}

impl WebhookResult {
    /// The result of a webhook, without a decision yet.
    pub(crate) fn of(w: &CompiledWebhook, reason: String) -> WebhookResult {
        WebhookResult {
            name: w.name.clone(),
            configuration: w.configuration.clone(),
            kind: w.kind,
            called: false,
            reason: Some(reason),
            error: None,
            matched_as: None,
        }
    }

    /// As JSON: `name`, `called`, `reason` (null when called), `configuration`, `kind`,
    /// and `error` (when it rejected the request), `resource` and `requestKind` (when
    /// called).
    pub fn to_json(&self) -> Json {
        let mut m = serde_json::Map::new();
        m.insert("name".into(), Json::from(self.name.clone()));
        m.insert("called".into(), Json::Bool(self.called));
        m.insert(
            "reason".into(),
            self.reason.clone().map_or(Json::Null, Json::from),
        );
        m.insert(
            "configuration".into(),
            Json::from(self.configuration.clone()),
        );
        m.insert("kind".into(), Json::from(self.kind));
        if let Some(e) = &self.error {
            m.insert("error".into(), Json::from(e.clone()));
        }
        if let Some((gvr, gvk)) = &self.matched_as {
            m.insert(
                "resource".into(),
                serde_json::json!({"group": gvr.group, "version": gvr.version, "resource": gvr.resource}),
            );
            m.insert(
                "requestKind".into(),
                serde_json::json!({"group": gvk.group, "version": gvk.version, "kind": gvk.kind}),
            );
        }
        Json::Object(m)
    }
}

/// The namespace whose labels a selector is matched against: the request's, or the
/// Namespace's own name for requests about a Namespace.
fn namespace_name(r: &Request) -> &str {
    if r.namespace.is_empty() && r.resource.resource == "namespaces" {
        &r.name
    } else {
        &r.namespace
    }
}

/// `CREATE apps/v1, Resource=deployments` (with `/subresource`), as matching sees it.
fn describe(r: &Request) -> String {
    let sub = if r.sub_resource.is_empty() {
        String::new()
    } else {
        format!("/{}", r.sub_resource)
    };
    let gv = if r.resource.group.is_empty() {
        r.resource.version.clone()
    } else {
        format!("{}/{}", r.resource.group, r.resource.version)
    };
    format!(
        "{} {gv}, Resource={}{sub}",
        r.operation.as_str(),
        r.resource.resource
    )
}

/// `apierrors.NewInternalError`.
fn internal_error(e: &str) -> Status {
    Status {
        code: 500,
        reason: "InternalError".into(),
        message: format!("Internal error occurred: {e}"),
    }
}

/// `apierrors.NewForbidden(resource.GroupResource(), name, err)`, as `ShouldCallHook`
/// reports failed match conditions (the request's name as is, not the object's).
fn forbidden(r: &Request, e: &str) -> Status {
    let resource = r.resource.group_resource();
    let message = if resource.is_empty() {
        format!("forbidden: {e}")
    } else if r.name.is_empty() {
        format!("{resource} is forbidden: {e}")
    } else {
        format!(
            "{resource} {} is forbidden: {e}",
            serde_json::to_string(&r.name).unwrap_or_default()
        )
    };
    Status {
        code: 403,
        reason: "Forbidden".into(),
        message,
    }
}

/// Whether requests for this kind never reach webhooks (the admission configuration
/// kinds, `rules.IsExemptAdmissionConfigurationResource`).
pub fn is_exempt(kind: &Gvk) -> bool {
    kind.group == "admissionregistration.k8s.io"
        && matches!(
            kind.kind.as_str(),
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}

/// Whether a request is one whose namespace is looked up by the Namespace's own name
/// (a Namespace deleted, or one of its subresources).
pub(crate) fn labels_by_own_name(r: &Request) -> bool {
    r.namespace.is_empty()
        && r.resource.resource == "namespaces"
        && !(r.sub_resource.is_empty()
            && matches!(r.operation, Operation::Create | Operation::Update))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn configurations_are_read_with_paths() {
        let c = json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "c"},
            "webhooks": [{"name": "a", "rules": null}, {"name": "b", "rules": "pods"}]});
        assert_eq!(
            read_webhook_configuration(&c).unwrap_err(),
            vec![
                "webhooks[1].rules: invalid type: string \"pods\", expected a sequence".to_string()
            ]
        );
        let c = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
        assert_eq!(read_webhook_configuration(&c).unwrap_err().len(), 3);
    }

    #[test]
    fn configuration_kinds_are_exempt() {
        assert!(is_exempt(&Gvk::from_api_version(
            "admissionregistration.k8s.io/v1",
            "MutatingWebhookConfiguration"
        )));
        assert!(!is_exempt(&Gvk::from_api_version("v1", "Pod")));
    }
}
