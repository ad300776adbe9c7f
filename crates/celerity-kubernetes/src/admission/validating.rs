//! A ValidatingAdmissionPolicy compiled once (Kubernetes' `compilePolicy`) and evaluated
//! for one binding and one param (Kubernetes' `validator.Validate`): match conditions, then
//! validations, their message expressions, then audit annotations, each list a pass with
//! its own budget and its own lazily computed variables, and the decisions that follow
//! under the policy's failure policy.

use std::sync::Arc;

use celerity::{Type, Value};

use super::environment::{
    AdmissionEnv, Bindings, Compiled, Declarations, Evaluation, FixedBindings, RUNTIME_COST_BUDGET,
    ReturnTypes, evaluate_all,
};
use super::policy::{AuditAnnotation, FailurePolicy, Policy, PolicyKind, Validation};

/// The budget of a policy's match conditions (Kubernetes'
/// `RuntimeCELCostBudgetMatchConditions`).
pub const MATCH_CONDITIONS_COST_BUDGET: u64 = 2_500_000;
/// The longest message a `messageExpression` may produce, in bytes.
pub const MAX_MESSAGE_EXPRESSION_BYTES: usize = 5 * 1024;

/// The expressions of one policy, compiled.
#[derive(Debug)]
pub struct CompiledPolicy {
    /// The policy.
    pub policy: Policy,
    /// `spec.variables`, with their names.
    pub variables: Arc<[(Arc<str>, Compiled)]>,
    /// `spec.matchConditions`.
    pub match_conditions: Vec<Compiled>,
    /// `spec.validations[*].expression`.
    pub validations: Vec<Compiled>,
    /// `spec.validations[*].messageExpression` (where given).
    pub messages: Vec<Option<Compiled>>,
    /// `spec.auditAnnotations[*].valueExpression`.
    pub audit_annotations: Vec<Compiled>,
    /// `spec.mutations[*]` (mutating policies).
    pub mutations: Vec<Compiled>,
    /// For each mutation, the `Object` literal type-name mismatch it reports when it runs.
    pub mutation_type_errors: Vec<Option<String>>,
}

impl CompiledPolicy {
    /// Compiles every expression of a policy in the environment Kubernetes gives each.
    pub fn compile(env: &AdmissionEnv, policy: Policy) -> CompiledPolicy {
        let params = policy.param_kind.is_some();
        let full = Declarations {
            params,
            authorizer: true,
            patch_types: false,
        };
        let no_authz = Declarations {
            authorizer: false,
            ..full
        };
        let named: Vec<(String, String)> = policy
            .variables
            .iter()
            .map(|v| (v.name.clone(), v.expression.clone()))
            .collect();
        let (variables, declared) = env.compile_variables(full, &named);
        let with_authz = env.env(full, &declared);
        let without_authz = env.env(no_authz, &declared);
        let boolean = ReturnTypes::OneOf(vec![Type::Bool]);
        let compile = |e: &celerity::Env, x: &str, r: &ReturnTypes| env.compile(e, x, r);
        let match_conditions = policy
            .match_conditions
            .iter()
            .map(|m| compile(&with_authz, &m.expression, &boolean))
            .collect();
        let (mut validations, mut messages, mut audit_annotations, mut mutations) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut mutation_type_errors = Vec::new();
        match &policy.kind {
            PolicyKind::Validating {
                validations: vs,
                audit_annotations: aas,
            } => {
                let string = ReturnTypes::OneOf(vec![Type::String]);
                let string_or_null = ReturnTypes::OneOf(vec![Type::String, Type::Null]);
                for v in vs {
                    validations.push(compile(&with_authz, &v.expression, &boolean));
                    messages.push(
                        (!v.message_expression.is_empty())
                            .then(|| compile(&without_authz, &v.message_expression, &string)),
                    );
                }
                for a in aas {
                    audit_annotations.push(compile(
                        &with_authz,
                        &a.value_expression,
                        &string_or_null,
                    ));
                }
            }
            PolicyKind::Mutating { mutations: ms, .. } => {
                let patch_env = env.env(
                    Declarations {
                        patch_types: true,
                        ..full
                    },
                    &declared,
                );
                for m in ms {
                    mutations.push(super::mutating::compile_mutation(env, &patch_env, m));
                    let (super::policy::Mutation::ApplyConfiguration(x)
                    | super::policy::Mutation::JsonPatch(x)) = m;
                    mutation_type_errors.push(super::mutating::type_name_mismatch(&patch_env, x));
                }
            }
        }
        CompiledPolicy {
            variables: variables
                .into_iter()
                .zip(named)
                .map(|(c, (n, _))| (Arc::from(n.as_str()), c))
                .collect(),
            policy,
            match_conditions,
            validations,
            messages,
            audit_annotations,
            mutations,
            mutation_type_errors,
        }
    }

    /// Every compile error, with the field it is at (`spec.validations[0].expression:
    /// compilation failed: ...`); the API server reports these as warnings when the
    /// policy is written, and as errors when a request evaluates the expression.
    pub fn compile_errors(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut add = |at: String, c: &Compiled| {
            if let Err(e) = &c.program {
                out.push(format!("{at}: {e}"));
            }
        };
        for (i, (_, c)) in self.variables.iter().enumerate() {
            add(format!("spec.variables[{i}].expression"), c);
        }
        for (i, c) in self.match_conditions.iter().enumerate() {
            add(format!("spec.matchConditions[{i}].expression"), c);
        }
        for (i, c) in self.validations.iter().enumerate() {
            add(format!("spec.validations[{i}].expression"), c);
        }
        for (i, c) in self.messages.iter().enumerate() {
            if let Some(c) = c {
                add(format!("spec.validations[{i}].messageExpression"), c);
            }
        }
        for (i, c) in self.audit_annotations.iter().enumerate() {
            add(format!("spec.auditAnnotations[{i}].valueExpression"), c);
        }
        for (i, c) in self.mutations.iter().enumerate() {
            add(format!("spec.mutations[{i}]"), c);
        }
        out
    }

    /// Whether an error denies the request (`Fail`, or an unrecognized policy).
    pub fn fails_closed(&self) -> bool {
        self.policy.failure_policy != FailurePolicy::Ignore
    }
}

/// What a validation decided (Kubernetes' `PolicyDecision`).
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// Whether it denies.
    pub deny: bool,
    /// Whether it comes from an error (rather than a false validation).
    pub error: bool,
    /// The message.
    pub message: String,
    /// The reason (`Invalid` unless the validation says otherwise; empty for errors).
    pub reason: String,
}

/// What an audit annotation came to.
#[derive(Clone, Debug, PartialEq)]
pub enum AnnotationResult {
    /// Publish `key` with this value.
    Publish(String, String),
    /// An error that denies the request.
    Error(String),
}

/// The outcome of one policy for one binding and param (Kubernetes' `ValidateResult`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValidateResult {
    /// One decision per validation (or one for an error that stopped them all). Admitting
    /// decisions are included, so indexes are the validations' indexes.
    pub decisions: Vec<Decision>,
    /// The audit annotations to publish and the errors they gave.
    pub annotations: Vec<AnnotationResult>,
}

impl ValidateResult {
    fn error(deny: bool, message: String) -> ValidateResult {
        ValidateResult {
            decisions: vec![Decision {
                deny,
                error: true,
                message,
                reason: String::new(),
            }],
            annotations: Vec::new(),
        }
    }
}

/// Joins errors as Kubernetes' aggregate error prints them (one: itself; several:
/// `[a, b]`, duplicates removed).
pub fn aggregate(errors: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for e in errors {
        if !seen.contains(&e.as_str()) {
            seen.push(e);
        }
    }
    match seen.as_slice() {
        [one] => one.to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// Whether a policy's match conditions select the request: `Ok(true)`, `Ok(false)`, or the
/// error to report under the failure policy (Kubernetes' `matchconditions.Matcher`).
/// `fixed` is the match conditions' view: the request's own resource, no namespace.
pub fn match_conditions(p: &CompiledPolicy, fixed: &FixedBindings) -> Result<bool, String> {
    if p.match_conditions.is_empty() {
        return Ok(true);
    }
    // A policy's unrecognized failure policy fails closed here, as its decisions do.
    let on_error = if p.fails_closed() {
        OnError::Fail
    } else {
        OnError::Ignore
    };
    let result = evaluate_match_conditions(&p.match_conditions, &p.variables, fixed, on_error);
    match result.error {
        Some(e) => Err(e),
        None => Ok(result.matches),
    }
}

/// What a failure policy makes of match conditions that fail (Kubernetes'
/// `matchconditions.matcher`'s `failPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// `Fail`: the error is the result.
    Fail,
    /// `Ignore`: the conditions do not match.
    Ignore,
    /// Neither (a value the API server's validation refuses): the matcher falls through
    /// to a match, as Kubernetes' does.
    Unrecognized,
}

/// What match conditions decided (Kubernetes' `matchconditions.MatchResult`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchResult {
    /// Whether they all hold.
    pub matches: bool,
    /// The first condition that is false, by index.
    pub failed_condition: Option<usize>,
    /// The error the failure policy `Fail` makes the result.
    pub error: Option<String>,
    /// The error the failure policy `Ignore` turned into "no match" (for reporting).
    pub ignored_error: Option<String>,
}

/// Evaluates match conditions in order within their budget, as Kubernetes'
/// `matchconditions.matcher.Match` does (`k8s.io/apiserver/pkg/admission/plugin/webhook/
/// matchconditions/matcher.go`), for policies and webhooks alike: the first condition that
/// is false decides (even after errors); otherwise errors, aggregated, go to the failure
/// policy; an error that stops the pass (the budget) too.
pub fn evaluate_match_conditions(
    conditions: &[Compiled],
    variables: &Arc<[(Arc<str>, Compiled)]>,
    fixed: &FixedBindings,
    on_error: OnError,
) -> MatchResult {
    let fail = |e: String| match on_error {
        OnError::Fail => MatchResult {
            error: Some(e),
            ..MatchResult::default()
        },
        OnError::Ignore => MatchResult {
            ignored_error: Some(e),
            ..MatchResult::default()
        },
        OnError::Unrecognized => MatchResult {
            matches: true,
            ..MatchResult::default()
        },
    };
    if conditions.is_empty() {
        return MatchResult {
            matches: true,
            ..MatchResult::default()
        };
    }
    let bindings = Bindings::new(fixed, variables);
    let exprs: Vec<Option<&Compiled>> = conditions.iter().map(Some).collect();
    let results = match evaluate_all(&bindings, &exprs, MATCH_CONDITIONS_COST_BUDGET) {
        Ok((r, _)) => r,
        Err(e) => return fail(e),
    };
    let mut errors = Vec::new();
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Some(Evaluation::Error(e)) => errors.push(e),
            Some(Evaluation::Value(Value::Bool(false))) => {
                return MatchResult {
                    failed_condition: Some(i),
                    ..MatchResult::default()
                };
            }
            _ => {}
        }
    }
    if errors.is_empty() {
        MatchResult {
            matches: true,
            ..MatchResult::default()
        }
    } else {
        fail(aggregate(&errors))
    }
}

/// Evaluates a validating policy's validations, messages and audit annotations (the
/// match conditions have passed). `fixed` has the authorizer; messages and annotations
/// run without it, as in Kubernetes.
pub fn validate(p: &CompiledPolicy, fixed: &FixedBindings) -> ValidateResult {
    let PolicyKind::Validating {
        validations,
        audit_annotations,
    } = &p.policy.kind
    else {
        return ValidateResult::default();
    };
    let fail = p.fails_closed();
    let bindings = Bindings::new(fixed, &p.variables);
    let exprs: Vec<Option<&Compiled>> = p.validations.iter().map(Some).collect();
    let (results, remaining) = match evaluate_all(&bindings, &exprs, RUNTIME_COST_BUDGET) {
        Ok(r) => r,
        Err(e) => return ValidateResult::error(fail, e),
    };
    let without_authz = FixedBindings {
        authorizer: None,
        request_resource: None,
        ..fixed.clone()
    };
    let message_bindings = Bindings::new(&without_authz, &p.variables);
    let message_exprs: Vec<Option<&Compiled>> = p.messages.iter().map(Option::as_ref).collect();
    let messages = evaluate_all(&message_bindings, &message_exprs, remaining);
    let decisions = results
        .into_iter()
        .zip(validations)
        .enumerate()
        .map(|(i, (r, v))| {
            let message = match &messages {
                Ok((m, _)) => m.get(i).cloned().flatten(),
                Err(_) => None,
            };
            decide(r, v, message, messages.as_ref().err(), fail)
        })
        .collect();
    // An annotation pass that runs out of budget replaces every decision, as in Kubernetes.
    let annotations = match annotate(p, audit_annotations, &without_authz, fail) {
        Ok(a) => a,
        Err(e) => return ValidateResult::error(fail, e),
    };
    ValidateResult {
        decisions,
        annotations,
    }
}

/// The decision of one validation.
fn decide(
    result: Option<Evaluation>,
    v: &Validation,
    message: Option<Evaluation>,
    message_pass_error: Option<&String>,
    fail: bool,
) -> Decision {
    let error = |message: String| Decision {
        deny: fail,
        error: true,
        message,
        reason: String::new(),
    };
    match result {
        Some(Evaluation::Error(e)) => error(e),
        _ if message_pass_error.is_some() => error(format!(
            "failed messageExpression: {}",
            message_pass_error.map_or("", |s| s.as_str())
        )),
        Some(Evaluation::Value(Value::Bool(true))) => Decision {
            deny: false,
            error: false,
            message: String::new(),
            reason: String::new(),
        },
        _ => Decision {
            deny: true,
            error: false,
            message: deny_message(v, message),
            reason: v.reason.clone().unwrap_or_else(|| "Invalid".into()),
        },
    }
}

/// The message of a failed validation: its message expression's value when usable (not
/// empty after trimming, at most 5 KiB, one line), else `message`, else the expression.
fn deny_message(v: &Validation, message: Option<Evaluation>) -> String {
    let from_expression = match &message {
        Some(Evaluation::Value(Value::String(s))) => {
            let s = s.trim();
            if s.len() > MAX_MESSAGE_EXPRESSION_BYTES || s.contains('\n') {
                String::new()
            } else {
                s.to_string()
            }
        }
        _ => String::new(),
    };
    if !from_expression.is_empty() {
        return from_expression;
    }
    let m = v.message.trim();
    if !m.is_empty() {
        return m.to_string();
    }
    format!("failed expression: {}", v.expression.trim())
}

/// Evaluates the audit annotations.
fn annotate(
    p: &CompiledPolicy,
    annotations: &[AuditAnnotation],
    fixed: &FixedBindings,
    fail: bool,
) -> Result<Vec<AnnotationResult>, String> {
    let bindings = Bindings::new(fixed, &p.variables);
    let exprs: Vec<Option<&Compiled>> = p.audit_annotations.iter().map(Some).collect();
    let (results, _) = evaluate_all(&bindings, &exprs, RUNTIME_COST_BUDGET)?;
    let mut out = Vec::new();
    for (r, a) in results.into_iter().zip(annotations) {
        match &r {
            Some(Evaluation::Error(e)) if fail => out.push(AnnotationResult::Error(e.clone())),
            Some(Evaluation::Value(Value::String(s))) if !s.trim().is_empty() => {
                out.push(AnnotationResult::Publish(a.key.clone(), s.trim().to_string()));
            }
            Some(Evaluation::Value(Value::String(_) | Value::Null)) | Some(Evaluation::Error(_)) | None => {}
            Some(Evaluation::Value(v)) => out.push(AnnotationResult::Error(format!(
                "valueExpression '{}' resulted in unsupported return type: {}. Return type must be either string or null.",
                a.value_expression,
                v.type_name()
            ))),
        }
    }
    Ok(out)
}
