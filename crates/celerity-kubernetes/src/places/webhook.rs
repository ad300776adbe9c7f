//! Admission webhooks' `matchConditions` (`k8s.io/apiserver/pkg/admission/plugin/webhook/
//! matchconditions`, `matcher.go`): compiled by the admission plugins' CEL compiler as stored
//! expressions without `params` and with the authorizer, each a `bool`; evaluated per
//! webhook within a budget of 2,500,000 (`RuntimeCELCostBudgetMatchConditions`, in
//! `k8s.io/apiserver/pkg/apis/cel/config.go`) besides the per-call limit.
//!
//! The variables are admission's: `object` and `oldObject` (the request's objects, untyped),
//! `request` (a `kubernetes.AdmissionRequest`), `namespaceObject` (a `kubernetes.Namespace`)
//! and `authorizer` (bound here to an authorizer that allows everything).

use cel_k8s::{ExpressionKind, KubeVersion};
use celerity::kubernetes::{self, AUTHORIZER_VARIABLE};
use celerity::{Backend, Env, Value};
use serde_json::Value as Json;

use super::expect_object;
use crate::admission::AdmissionEnv;

/// The cost budget of one webhook's match conditions.
pub const MATCH_CONDITIONS_BUDGET: u64 = crate::admission::validating::MATCH_CONDITIONS_COST_BUDGET;

/// How the admission variables are built.
#[derive(Debug)]
pub struct WebhookTypes {
    admission: AdmissionEnv,
}

/// The environment of admission webhooks' match conditions.
pub fn env(version: KubeVersion) -> (Env, WebhookTypes) {
    let admission = AdmissionEnv::new(version, Backend::Auto);
    let env = admission.env(crate::admission::webhooks::DECLARATIONS, &[]);
    (env, WebhookTypes { admission })
}

/// The match conditions' compiler as the API server's validation of a new webhook
/// configuration uses it (`validateMatchConditionsExpression` in
/// `kubernetes/pkg/apis/admissionregistration/validation/validation.go`): new expressions
/// (the release's compatibility version), no `params`, the authorizer declared.
pub fn validation_compiler(version: KubeVersion) -> (AdmissionEnv, Env) {
    let admission = AdmissionEnv::new(version, Backend::Interpreter)
        .with_expression_kind(ExpressionKind::NewExpressions);
    let env = admission.env(crate::admission::webhooks::DECLARATIONS, &[]);
    (admission, env)
}

/// `authorizer`, allowing everything, where the version declares it.
pub fn default_bindings(env: &Env) -> Vec<(String, Value)> {
    let declared = env
        .variables()
        .iter()
        .any(|v| v.name == AUTHORIZER_VARIABLE);
    if declared {
        vec![(
            AUTHORIZER_VARIABLE.to_string(),
            kubernetes::allow_all_authorizer(),
        )]
    } else {
        Vec::new()
    }
}

impl WebhookTypes {
    /// A variable's value from its JSON.
    pub fn value(&self, name: &str, json: &Json) -> Result<Value, String> {
        match name {
            "object" | "oldObject" => Ok(if json.is_null() {
                Value::Null
            } else {
                expect_object(json, name)?;
                cel_k8s_schema::value::untyped(json)
            }),
            "request" => {
                expect_object(json, name)?;
                Ok(self.admission.request_value(json))
            }
            "namespaceObject" => {
                if json.is_null() {
                    return Ok(Value::Null);
                }
                expect_object(json, name)?;
                Ok(self.admission.namespace_value(Some(json)))
            }
            other => Err(format!(
                "variable '{other}': admission webhook match conditions bind it themselves"
            )),
        }
    }
}
