//! Admission policies and bindings as Kubernetes declares them
//! (`admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy and its binding,
//! `v1beta1`/`v1` MutatingAdmissionPolicy and its binding), read from JSON with each
//! problem reported at its field (`spec.validations[0].expression: Required value`).
//!
//! Only the shape is checked here; what the API server's validation of these objects would
//! refuse beyond that (name syntax, duplicate variable names) is not.

use serde_json::{Map, Value as Json};

/// A label selector (`matchLabels` and `matchExpressions`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelSelector {
    /// `matchLabels`.
    pub match_labels: Vec<(String, String)>,
    /// `matchExpressions`: key, operator, values.
    pub match_expressions: Vec<(String, String, Vec<String>)>,
}

impl LabelSelector {
    /// Whether it selects everything (no requirement).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }
}

/// A resource rule (`NamedRuleWithOperations`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceRule {
    /// `resourceNames`.
    pub resource_names: Vec<String>,
    /// `operations` (`*` for all).
    pub operations: Vec<String>,
    /// `apiGroups`.
    pub api_groups: Vec<String>,
    /// `apiVersions`.
    pub api_versions: Vec<String>,
    /// `resources` (`pods`, `pods/status`, `*/*`).
    pub resources: Vec<String>,
    /// `scope`: `Namespaced`, `Cluster` or `*` (the default).
    pub scope: Option<String>,
}

/// What requests a policy or binding applies to (`MatchResources`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchResources {
    /// `namespaceSelector`.
    pub namespace_selector: LabelSelector,
    /// `objectSelector`.
    pub object_selector: LabelSelector,
    /// `resourceRules`.
    pub resource_rules: Vec<ResourceRule>,
    /// `excludeResourceRules`.
    pub exclude_resource_rules: Vec<ResourceRule>,
    /// `matchPolicy`: `Equivalent` (the default) or `Exact`.
    pub match_policy: String,
}

/// A named expression (`matchConditions`, `variables`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NamedExpression {
    /// `name`.
    pub name: String,
    /// `expression`.
    pub expression: String,
}

/// One of a validating policy's `validations`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Validation {
    /// `expression`.
    pub expression: String,
    /// `message`.
    pub message: String,
    /// `messageExpression`.
    pub message_expression: String,
    /// `reason` (`Invalid` when absent).
    pub reason: Option<String>,
}

/// One of a validating policy's `auditAnnotations`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuditAnnotation {
    /// `key`.
    pub key: String,
    /// `valueExpression`.
    pub value_expression: String,
}

/// `failurePolicy`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailurePolicy {
    /// `Fail` (the default): an error denies the request.
    Fail,
    /// `Ignore`: an error is ignored.
    Ignore,
    /// Anything else, which the API server reports as unrecognized.
    Other(String),
}

/// `paramKind`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParamKind {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
}

impl std::fmt::Display for ParamKind {
    /// As Go's generated `String()` writes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "&ParamKind{{APIVersion:{},Kind:{},}}",
            self.api_version, self.kind
        )
    }
}

/// A mutation (`mutations[i]`).
#[derive(Clone, Debug, PartialEq)]
pub enum Mutation {
    /// `patchType: ApplyConfiguration` with its expression.
    ApplyConfiguration(String),
    /// `patchType: JSONPatch` with its expression.
    JsonPatch(String),
}

/// What kind of policy.
#[derive(Clone, Debug, PartialEq)]
pub enum PolicyKind {
    /// A ValidatingAdmissionPolicy: `validations`, `auditAnnotations`.
    Validating {
        /// `validations`.
        validations: Vec<Validation>,
        /// `auditAnnotations`.
        audit_annotations: Vec<AuditAnnotation>,
    },
    /// A MutatingAdmissionPolicy: `mutations`, `reinvocationPolicy`.
    Mutating {
        /// `mutations`.
        mutations: Vec<Mutation>,
        /// `reinvocationPolicy` is `IfNeeded`.
        reinvoke: bool,
    },
}

/// A policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// `metadata.name`.
    pub name: String,
    /// `spec.paramKind`.
    pub param_kind: Option<ParamKind>,
    /// `spec.matchConstraints`.
    pub match_constraints: Option<MatchResources>,
    /// `spec.matchConditions`.
    pub match_conditions: Vec<NamedExpression>,
    /// `spec.variables`.
    pub variables: Vec<NamedExpression>,
    /// `spec.failurePolicy`.
    pub failure_policy: FailurePolicy,
    /// What it does.
    pub kind: PolicyKind,
}

/// `paramRef`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamRef {
    /// `name`.
    pub name: String,
    /// `namespace`.
    pub namespace: String,
    /// `selector`.
    pub selector: Option<LabelSelector>,
    /// `parameterNotFoundAction` is `Deny`.
    pub deny_when_not_found: bool,
}

/// A binding of a policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    /// `metadata.name`.
    pub name: String,
    /// Whether it binds a mutating policy.
    pub mutating: bool,
    /// `spec.policyName`.
    pub policy_name: String,
    /// `spec.paramRef`.
    pub param_ref: Option<ParamRef>,
    /// `spec.matchResources`.
    pub match_resources: Option<MatchResources>,
    /// `spec.validationActions` (`Deny`, `Warn`, `Audit`).
    pub validation_actions: Vec<String>,
}

/// A field of a JSON object being read, with its path for errors.
struct Reader<'j> {
    path: String,
    json: &'j Json,
    errors: &'j mut Vec<String>,
}

impl Reader<'_> {
    fn at(&self, field: &str) -> String {
        if self.path.is_empty() {
            field.to_string()
        } else {
            format!("{}.{field}", self.path)
        }
    }

    fn object(&self) -> Option<&Map<String, Json>> {
        self.json.as_object()
    }

    fn get(&self, field: &str) -> Option<&Json> {
        self.object()?.get(field).filter(|v| !v.is_null())
    }

    fn string(&mut self, field: &str) -> String {
        match self.get(field) {
            None => String::new(),
            Some(Json::String(s)) => s.clone(),
            Some(_) => {
                let at = self.at(field);
                self.errors
                    .push(format!("{at}: Invalid value: expected a string"));
                String::new()
            }
        }
    }

    fn required_string(&mut self, field: &str) -> String {
        let s = self.string(field);
        if s.is_empty() && self.get(field).is_none() {
            let at = self.at(field);
            self.errors.push(format!("{at}: Required value"));
        }
        s
    }

    fn strings(&mut self, field: &str) -> Vec<String> {
        self.list(field, |r| match r.json {
            Json::String(s) => Some(s.clone()),
            _ => {
                let at = r.path.clone();
                r.errors
                    .push(format!("{at}: Invalid value: expected a string"));
                None
            }
        })
    }

    fn list<T>(
        &mut self,
        field: &str,
        mut item: impl FnMut(&mut Reader<'_>) -> Option<T>,
    ) -> Vec<T> {
        let at = self.at(field);
        match self.get(field) {
            None => Vec::new(),
            Some(Json::Array(items)) => {
                let items = items.clone();
                let mut out = Vec::new();
                for (i, j) in items.iter().enumerate() {
                    let mut r = Reader {
                        path: format!("{at}[{i}]"),
                        json: j,
                        errors: self.errors,
                    };
                    if let Some(v) = item(&mut r) {
                        out.push(v);
                    }
                }
                out
            }
            Some(_) => {
                self.errors
                    .push(format!("{at}: Invalid value: expected a list"));
                Vec::new()
            }
        }
    }

    fn child<T>(&mut self, field: &str, read: impl FnOnce(&mut Reader<'_>) -> T) -> Option<T> {
        let at = self.at(field);
        let j = self.get(field)?.clone();
        if !j.is_object() {
            self.errors
                .push(format!("{at}: Invalid value: expected an object"));
            return None;
        }
        let mut r = Reader {
            path: at,
            json: &j,
            errors: self.errors,
        };
        Some(read(&mut r))
    }
}

fn label_selector(r: &mut Reader<'_>) -> LabelSelector {
    let mut s = LabelSelector::default();
    if let Some(m) = r.get("matchLabels").cloned() {
        match m.as_object() {
            Some(m) => {
                for (k, v) in m {
                    match v.as_str() {
                        Some(v) => s.match_labels.push((k.clone(), v.to_string())),
                        None => {
                            let at = r.at("matchLabels");
                            r.errors
                                .push(format!("{at}[{k}]: Invalid value: expected a string"));
                        }
                    }
                }
            }
            None => {
                let at = r.at("matchLabels");
                r.errors
                    .push(format!("{at}: Invalid value: expected an object"));
            }
        }
    }
    s.match_expressions = r.list("matchExpressions", |e| {
        let key = e.required_string("key");
        let op = e.required_string("operator");
        let values = e.strings("values");
        Some((key, op, values))
    });
    s
}

fn resource_rule(r: &mut Reader<'_>) -> Option<ResourceRule> {
    Some(ResourceRule {
        resource_names: r.strings("resourceNames"),
        operations: r.strings("operations"),
        api_groups: r.strings("apiGroups"),
        api_versions: r.strings("apiVersions"),
        resources: r.strings("resources"),
        scope: r.get("scope").and_then(Json::as_str).map(str::to_string),
    })
}

fn match_resources(r: &mut Reader<'_>) -> MatchResources {
    MatchResources {
        namespace_selector: r
            .child("namespaceSelector", label_selector)
            .unwrap_or_default(),
        object_selector: r
            .child("objectSelector", label_selector)
            .unwrap_or_default(),
        resource_rules: r.list("resourceRules", resource_rule),
        exclude_resource_rules: r.list("excludeResourceRules", resource_rule),
        match_policy: {
            let p = r.string("matchPolicy");
            if p.is_empty() { "Equivalent".into() } else { p }
        },
    }
}

fn named(r: &mut Reader<'_>) -> Option<NamedExpression> {
    Some(NamedExpression {
        name: r.required_string("name"),
        expression: r.required_string("expression"),
    })
}

/// The kinds of admission configuration objects this module reads.
pub const VALIDATING_POLICY: &str = "ValidatingAdmissionPolicy";
/// The binding of a validating policy.
pub const VALIDATING_BINDING: &str = "ValidatingAdmissionPolicyBinding";
/// A mutating policy.
pub const MUTATING_POLICY: &str = "MutatingAdmissionPolicy";
/// The binding of a mutating policy.
pub const MUTATING_BINDING: &str = "MutatingAdmissionPolicyBinding";

fn kind_of(json: &Json) -> &str {
    json.get("kind").and_then(Json::as_str).unwrap_or("")
}

fn name_of(r: &mut Reader<'_>) -> String {
    r.child("metadata", |m| m.required_string("name"))
        .unwrap_or_else(|| {
            r.errors.push("metadata.name: Required value".into());
            String::new()
        })
}

/// Reads a ValidatingAdmissionPolicy or MutatingAdmissionPolicy; every problem, at its
/// field.
pub fn read_policy(json: &Json) -> Result<Policy, Vec<String>> {
    let mut errors = Vec::new();
    let kind = kind_of(json).to_string();
    if kind != VALIDATING_POLICY && kind != MUTATING_POLICY {
        return Err(vec![format!(
            "kind: Unsupported value: {kind:?}: supported values: \"{VALIDATING_POLICY}\", \"{MUTATING_POLICY}\""
        )]);
    }
    let mut r = Reader {
        path: String::new(),
        json,
        errors: &mut errors,
    };
    let name = name_of(&mut r);
    let policy = r.child("spec", |s| {
        let param_kind = s.child("paramKind", |p| ParamKind {
            api_version: p.required_string("apiVersion"),
            kind: p.required_string("kind"),
        });
        let match_constraints = s.child("matchConstraints", match_resources);
        let match_conditions = s.list("matchConditions", named);
        let variables = s.list("variables", named);
        let failure_policy = match s.string("failurePolicy").as_str() {
            "" | "Fail" => FailurePolicy::Fail,
            "Ignore" => FailurePolicy::Ignore,
            other => FailurePolicy::Other(other.to_string()),
        };
        let kind = if kind == VALIDATING_POLICY {
            PolicyKind::Validating {
                validations: s.list("validations", |v| {
                    Some(Validation {
                        expression: v.required_string("expression"),
                        message: v.string("message"),
                        message_expression: v.string("messageExpression"),
                        reason: v.get("reason").and_then(Json::as_str).map(str::to_string),
                    })
                }),
                audit_annotations: s.list("auditAnnotations", |a| {
                    Some(AuditAnnotation {
                        key: a.required_string("key"),
                        value_expression: a.required_string("valueExpression"),
                    })
                }),
            }
        } else {
            PolicyKind::Mutating {
                mutations: s.list("mutations", mutation),
                reinvoke: s.string("reinvocationPolicy") == "IfNeeded",
            }
        };
        Policy {
            name: name.clone(),
            param_kind,
            match_constraints,
            match_conditions,
            variables,
            failure_policy,
            kind,
        }
    });
    read_result(policy, errors)
}

/// What reading an object's `spec` gave: the value, or every problem found (a missing
/// `spec` among them).
fn read_result<T>(spec: Option<T>, mut errors: Vec<String>) -> Result<T, Vec<String>> {
    match spec {
        Some(v) if errors.is_empty() => Ok(v),
        Some(_) => Err(errors),
        None => {
            errors.push("spec: Required value".into());
            Err(errors)
        }
    }
}

fn mutation(m: &mut Reader<'_>) -> Option<Mutation> {
    let patch_type = m.required_string("patchType");
    let expr = |m: &mut Reader<'_>, field: &str| {
        m.child(field, |c| c.required_string("expression"))
            .unwrap_or_else(|| {
                let at = m.at(field);
                m.errors.push(format!("{at}: Required value"));
                String::new()
            })
    };
    match patch_type.as_str() {
        "ApplyConfiguration" => Some(Mutation::ApplyConfiguration(expr(m, "applyConfiguration"))),
        "JSONPatch" => Some(Mutation::JsonPatch(expr(m, "jsonPatch"))),
        "" => None,
        other => {
            let at = m.at("patchType");
            m.errors.push(format!(
                "{at}: Unsupported value: {other:?}: supported values: \"ApplyConfiguration\", \"JSONPatch\""
            ));
            None
        }
    }
}

/// Reads a ValidatingAdmissionPolicyBinding or MutatingAdmissionPolicyBinding.
pub fn read_binding(json: &Json) -> Result<Binding, Vec<String>> {
    let mut errors = Vec::new();
    let kind = kind_of(json).to_string();
    if kind != VALIDATING_BINDING && kind != MUTATING_BINDING {
        return Err(vec![format!(
            "kind: Unsupported value: {kind:?}: supported values: \"{VALIDATING_BINDING}\", \"{MUTATING_BINDING}\""
        )]);
    }
    let mutating = kind == MUTATING_BINDING;
    let mut r = Reader {
        path: String::new(),
        json,
        errors: &mut errors,
    };
    let name = name_of(&mut r);
    let binding = r.child("spec", |s| {
        let policy_name = s.required_string("policyName");
        let param_ref = s.child("paramRef", |p| ParamRef {
            name: p.string("name"),
            namespace: p.string("namespace"),
            selector: p.child("selector", label_selector),
            deny_when_not_found: p.string("parameterNotFoundAction") == "Deny",
        });
        let match_resources = s.child("matchResources", match_resources);
        let validation_actions = if mutating {
            Vec::new()
        } else {
            let actions = s.strings("validationActions");
            if actions.is_empty() {
                let at = s.at("validationActions");
                s.errors.push(format!("{at}: Required value: at least one validation action is required"));
            }
            for a in &actions {
                if !matches!(a.as_str(), "Deny" | "Warn" | "Audit") {
                    let at = s.at("validationActions");
                    s.errors.push(format!(
                        "{at}: Unsupported value: {a:?}: supported values: \"Audit\", \"Deny\", \"Warn\""
                    ));
                }
            }
            actions
        };
        Binding {
            name: name.clone(),
            mutating,
            policy_name,
            param_ref,
            match_resources,
            validation_actions,
        }
    });
    read_result(binding, errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn problems_are_reported_at_their_fields() {
        let p = json!({"kind": "ValidatingAdmissionPolicy", "metadata": {"name": "p"},
            "spec": {"validations": [{"message": "m"}, {"expression": 3}]}});
        let errors = read_policy(&p).unwrap_err();
        assert_eq!(
            errors,
            vec![
                "spec.validations[0].expression: Required value",
                "spec.validations[1].expression: Invalid value: expected a string",
            ]
        );
        let b = json!({"kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "b"},
            "spec": {"policyName": "p", "validationActions": ["Block"]}});
        assert_eq!(
            read_binding(&b).unwrap_err(),
            vec![
                "spec.validationActions: Unsupported value: \"Block\": supported values: \"Audit\", \"Deny\", \"Warn\""
            ]
        );
    }
}
