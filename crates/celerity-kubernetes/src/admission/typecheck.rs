//! The API server's type checking of ValidatingAdmissionPolicies (k8s.io/apiserver
//! `pkg/admission/plugin/policy/validating/typechecking.go`): each validation's
//! `expression` and `messageExpression` compiled once per kind the policy's match
//! constraints select, with `object` and `oldObject` typed by that kind's schema and `params`
//! by the paramKind's, after the policy's variables. What does not compile is a warning, as
//! the API server writes them to `status.typeChecking.expressionWarnings`. Evaluation is not
//! changed by it: there `object` stays `dyn`.
//!
//! The kinds come as the API server finds them: every group, version and resource of each
//! resource rule (a rule with a wildcard group or version is skipped; wildcard resources and
//! subresources are skipped), mapped to kinds, at most [`MAX_TYPES_TO_CHECK`] of them, sorted
//! by group, version and kind. A kind whose schema is not known is skipped, as is `params`
//! then (it is not declared at all, so expressions reading it warn, as on the server).

use cel_k8s::KubeVersion;
use cel_k8s_schema::Schema;
use cel_k8s_schema::decl::{DeclType, unique_self_type_name};
use serde_json::{Value as Json, json};

use super::environment::{AdmissionEnv, Declarations, TypedInputs};
use super::policy::{Policy, PolicyKind};
use crate::crd::CrdSet;
use celerity::Backend;

/// The most kinds one policy is checked against (Kubernetes' `maxTypesToCheck`): a policy
/// matching `*` or many resources costs at most this many compiles per expression.
pub const MAX_TYPES_TO_CHECK: usize = 10;

/// One warning (Kubernetes' `ExpressionWarning`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpressionWarning {
    /// Where the expression is (`spec.validations[0].expression`).
    pub field_ref: String,
    /// What the checker said, kind by kind (`apps/v1, Kind=Deployment: ERROR: ...`).
    pub warning: String,
}

/// A group, version and kind.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Gvk {
    group: String,
    version: String,
    kind: String,
}

impl Gvk {
    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

impl std::fmt::Display for Gvk {
    /// As apimachinery's `GroupVersionKind.String()` writes it (`/v1, Kind=Pod` for the
    /// core group).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// Type-checks `policy` (a ValidatingAdmissionPolicy; a mutating one gives no warning) in
/// the environment of the API server of release `version`, resolving kinds and schemas with
/// `schemas` (CRDs, and the built-ins when the set has them).
pub fn check_policy(
    policy: &Policy,
    version: KubeVersion,
    schemas: &CrdSet,
) -> Vec<ExpressionWarning> {
    let PolicyKind::Validating { validations, .. } = &policy.kind else {
        return Vec::new();
    };
    let kinds: Vec<(Gvk, DeclType)> = types_to_check(policy, schemas)
        .into_iter()
        .filter_map(|gvk| {
            let schema = schemas.typed_schema(&gvk.api_version(), &gvk.kind)?;
            Some((gvk.clone(), decl_type(&schema, &gvk.kind)?))
        })
        .collect();
    let params = policy.param_kind.as_ref().and_then(|p| {
        let schema = schemas.typed_schema(&p.api_version, &p.kind)?;
        decl_type(&schema, &p.kind)
    });
    let env = AdmissionEnv::new(version, Backend::Interpreter);
    let decls = Declarations {
        params: params.is_some(),
        authorizer: true,
        patch_types: false,
    };
    let variables: Vec<(String, String)> = policy
        .variables
        .iter()
        .map(|v| (v.name.clone(), v.expression.clone()))
        .collect();
    let check = |expression: &str| -> Option<String> {
        let mut found = Vec::new();
        for (gvk, object) in &kinds {
            let typed = TypedInputs {
                object: Some(object.clone()),
                params: params.clone(),
            };
            let (_, declared) = env.compile_variables_typed(decls, &variables, &typed);
            let compiled = env.env_typed(decls, &declared, &typed);
            if let Err(issues) = compiled.compile(expression) {
                found.push(format!("{gvk}: {issues}\n"));
            }
        }
        (!found.is_empty()).then(|| found.join("\n"))
    };
    let mut warnings = Vec::new();
    for (i, v) in validations.iter().enumerate() {
        let at = format!("spec.validations[{i}]");
        if let Some(w) = check(&v.expression) {
            warnings.push(ExpressionWarning {
                field_ref: format!("{at}.expression"),
                warning: w,
            });
        }
        if !v.message_expression.is_empty()
            && let Some(w) = check(&v.message_expression)
        {
            warnings.push(ExpressionWarning {
                field_ref: format!("{at}.messageExpression"),
                warning: w,
            });
        }
    }
    warnings
}

/// `status.typeChecking` as the API server writes it.
pub fn type_checking_json(warnings: &[ExpressionWarning]) -> Json {
    let items: Vec<Json> = warnings
        .iter()
        .map(|w| json!({"fieldRef": w.field_ref, "warning": w.warning}))
        .collect();
    if items.is_empty() {
        json!({})
    } else {
        json!({"expressionWarnings": items})
    }
}

/// A schema's type with a fresh name (the API server names it after the kind and the
/// clock's nanoseconds; only uniqueness matters).
fn decl_type(schema: &Schema, kind: &str) -> Option<DeclType> {
    let name = format!(
        "{kind}{}",
        unique_self_type_name().trim_start_matches("selfType")
    );
    Some(DeclType::from_schema(schema, true)?.with_type_name(&name))
}

/// The kinds the policy's match constraints select, as `typesToCheck` finds them.
fn types_to_check(policy: &Policy, schemas: &CrdSet) -> Vec<Gvk> {
    let Some(constraints) = &policy.match_constraints else {
        return Vec::new();
    };
    let mut found: Vec<Gvk> = Vec::new();
    for rule in &constraints.resource_rules {
        let no_wildcard = |xs: &[String]| -> Option<Vec<String>> {
            if xs.iter().any(|x| x.contains('*')) {
                return None;
            }
            let mut v = xs.to_vec();
            v.sort();
            Some(v)
        };
        let (Some(groups), Some(versions)) = (
            no_wildcard(&rule.api_groups),
            no_wildcard(&rule.api_versions),
        ) else {
            continue;
        };
        let mut resources: Vec<String> = rule
            .resources
            .iter()
            .filter(|r| !r.contains('*') && !r.contains('/'))
            .cloned()
            .collect();
        resources.sort();
        let mut count = 0;
        for group in &groups {
            for version in &versions {
                for resource in &resources {
                    for kind in schemas.kinds_for(group, version, resource) {
                        let gvk = Gvk {
                            group: group.clone(),
                            version: version.clone(),
                            kind,
                        };
                        if !found.contains(&gvk) {
                            found.push(gvk);
                        }
                        count += 1;
                        if count == MAX_TYPES_TO_CHECK {
                            found.sort();
                            return found;
                        }
                    }
                }
            }
        }
    }
    found.sort();
    found
}
