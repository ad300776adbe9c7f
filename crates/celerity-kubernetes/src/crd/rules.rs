//! Compiling the `x-kubernetes-validations` of one schema node (Kubernetes' `cel.Compile`):
//! the environment with `self` and `oldSelf` typed by the node's schema, each rule and its
//! `messageExpression` checked and planned, their cost estimated with the schema's sizes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cel_k8s::{ExpressionKind, KubeVersion, KubernetesProfile};
use cel_k8s_schema::decl::{DeclSizes, DeclType, SchemaTypes, unique_self_type_name};
use cel_k8s_schema::fieldpath::{FieldPathOptions, valid_field_path};
use cel_k8s_schema::{Schema, ValidationRule};

use cel_types::TypeProvider;
use celerity::kubernetes::KubernetesEnv;
use celerity::{Ast, Backend, CompileSettings, Env, Program, ProgramOptions, Type, VariableDecl};

/// The variable a rule's subject is bound to.
pub const SELF_VARIABLE: &str = "self";
/// The variable the subject's previous value is bound to (transition rules).
pub const OLD_SELF_VARIABLE: &str = "oldSelf";

/// The largest request the API server accepts; it bounds how many instances of a node an
/// object can hold.
pub const MAX_REQUEST_SIZE_BYTES: u64 = 3 * 1024 * 1024;

/// How rules are compiled.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RuleOptions {
    /// The Kubernetes release (API server) whose code compiles and runs the rules.
    pub version: KubeVersion,
    /// The compatibility version new expressions compile with (`None`: one minor below
    /// the release, the API server's default).
    pub compatibility: Option<KubeVersion>,
    /// New expressions (what a CRD being created or changed may use) or stored ones (what the
    /// API server compiles to validate objects: everything not removed).
    pub expressions: ExpressionKind,
    /// The cost limit of one evaluation.
    pub per_call_limit: u64,
    /// How rules run.
    pub backend: Backend,
    /// Where native compiles run and who hears of them (see [`CompileSettings`]).
    pub compile: CompileSettings,
    /// Whether each rule's cost is estimated ([`CompiledRule::max_cost`]): the CRD checks
    /// need it, validating objects does not (on by default).
    pub estimate_costs: bool,
}

impl Default for RuleOptions {
    fn default() -> RuleOptions {
        RuleOptions {
            version: default_version(),
            compatibility: None,
            expressions: ExpressionKind::StoredExpressions,
            per_call_limit: 1_000_000,
            backend: Backend::Jit,
            compile: CompileSettings::default(),
            estimate_costs: true,
        }
    }
}

celerity::option_setters!(RuleOptions {
    version: KubeVersion,
    compatibility: Option<KubeVersion>,
    expressions: ExpressionKind,
    per_call_limit: u64,
    backend: Backend,
    compile: CompileSettings,
    estimate_costs: bool,
});

impl RuleOptions {
    /// The compatibility version new expressions compile with: the one set, else one minor
    /// below the release (the API server's default).
    pub fn compatibility_version(&self) -> KubeVersion {
        self.compatibility.unwrap_or(self.version.previous())
    }
}

/// The release CRDs are compiled for by default: the newest released version
/// ([`KubeVersion::DEFAULT`]).
pub fn default_version() -> KubeVersion {
    KubeVersion::DEFAULT
}

/// The kind of a rule's compile error (Kubernetes' `cel.ErrorType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleErrorType {
    /// `RuleInvalid`.
    Invalid,
    /// `RuleRequired`.
    Required,
    /// `InternalError`.
    Internal,
}

impl RuleErrorType {
    /// Kubernetes' name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleErrorType::Invalid => "RuleInvalid",
            RuleErrorType::Required => "RuleRequired",
            RuleErrorType::Internal => "InternalError",
        }
    }
}

/// Why a rule or its message expression cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    /// The kind.
    pub error_type: RuleErrorType,
    /// The explanation (`compilation failed: ERROR: <input>:1:6: ...`).
    pub detail: String,
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)
    }
}

fn invalid(detail: impl Into<String>) -> RuleError {
    RuleError {
        error_type: RuleErrorType::Invalid,
        detail: detail.into(),
    }
}

/// One compiled rule (Kubernetes' `CompilationResult`).
#[derive(Clone, Debug, Default)]
pub struct CompiledRule {
    /// The rule as written.
    pub rule: ValidationRule,
    /// Why the rule cannot be used, if it cannot.
    pub error: Option<RuleError>,
    /// Whether the rule reads `oldSelf` (a transition rule).
    pub uses_old_self: bool,
    /// The estimated cost of one evaluation.
    pub max_cost: u64,
    /// How many instances of the node an object can hold, from its smallest serialized size.
    pub max_cardinality: u64,
    /// The planned rule; `None` for a blank rule or one that does not compile.
    pub program: Option<Program>,
    /// The planned message expression.
    pub message_program: Option<Program>,
    /// Why the message expression cannot be used, if it cannot.
    pub message_expression_error: Option<RuleError>,
    /// The estimated cost of the message expression.
    pub message_expression_max_cost: u64,
    /// The rule's `fieldPath` as a path (`spec.replicas`, `labels[app]`), when valid.
    pub normalized_field_path: Option<String>,
}

/// The environments a schema node's rules compile in, with `self` of the node's type and
/// `oldSelf` of the same type or, for rules with `optionalOldSelf`, optional; and the sizes
/// the cost estimator reads from the schema.
#[derive(Clone, Debug)]
pub struct RuleEnv {
    /// `oldSelf` has the node's type.
    pub plain: Env,
    /// `oldSelf` is `optional_type(T)`.
    pub optional: Env,
    /// The schema's sizes, by path from `self` (or `oldSelf`).
    pub sizes: DeclSizes,
}

impl RuleEnv {
    /// The environments of a node of type `decl` (its object types get fresh names): the
    /// version's environment, built once per process, with `self` and
    /// `oldSelf` added.
    pub fn new(decl: &DeclType, options: &RuleOptions) -> RuleEnv {
        let named = decl.clone().with_type_name(&unique_self_type_name());
        let self_type = named.cel_type();
        let profile = KubernetesProfile::with_compatibility(
            options.version,
            options.compatibility_version(),
            options.expressions,
        );
        let types: Arc<dyn TypeProvider> = Arc::new(
            SchemaTypes::new(&named).with_keyword_field_names(profile.options.keyword_field_names),
        );
        let base = base_env(options);
        // `oldSelf` arrived in Kubernetes 1.24.
        let has_old_self = options.version >= KubeVersion::new(1, 24);
        let with_old = |old: Type| {
            let mut vars = vec![VariableDecl::new(SELF_VARIABLE, self_type.clone())];
            if has_old_self {
                vars.push(VariableDecl::new(OLD_SELF_VARIABLE, old));
            }
            base.with_variables(Some(types.clone()), vars)
        };
        RuleEnv {
            plain: with_old(self_type.clone()),
            optional: with_old(Type::optional(self_type.clone())),
            sizes: DeclSizes::new(Arc::new(named)),
        }
    }
}

/// The environment rules compile in before `self` is declared: the version's Kubernetes
/// environment with the per-call limit. It is the same for every schema node of every CRD,
/// so it is built once per process for each version, expression kind and limit (with the
/// default compile settings; a host's own settings get an environment of their own).
fn base_env(options: &RuleOptions) -> Env {
    let build = || {
        KubernetesEnv::new(options.version)
            .compatibility(options.compatibility_version())
            .kind(options.expressions)
            .with_authorizer_variable(false)
            .builder()
            .cost_limit(Some(options.per_call_limit))
            .compile_settings(options.compile.clone())
            .build()
    };
    if !options.compile.is_default() {
        return build();
    }
    type Key = (KubeVersion, KubeVersion, ExpressionKind, u64);
    static BUILT: OnceLock<Mutex<HashMap<Key, Env>>> = OnceLock::new();
    let key = (
        options.version,
        options.compatibility_version(),
        options.expressions,
        options.per_call_limit,
    );
    let built = BUILT.get_or_init(Mutex::default);
    if let Some(env) = built
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return env.clone();
    }
    // Built outside the lock, so threads compiling different versions do not wait for each
    // other; two threads building the same one keep the first.
    let env = build();
    built
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(key)
        .or_insert(env)
        .clone()
}

/// Compiles the rules of `schema`'s node, whose type is `decl` (`None` if the node has no CEL
/// type, which is an error when it has rules). One result per rule, in order.
pub fn compile_rules(
    schema: &Schema,
    decl: Option<&DeclType>,
    options: &RuleOptions,
) -> Result<Vec<CompiledRule>, String> {
    compile_node_rules(schema, &schema.x_validations, decl, options)
}

/// [`compile_rules`] for `rules` given apart from the node they are on (the validator takes
/// them from the schema as written, the node from the schema with defaults applied).
pub(crate) fn compile_node_rules(
    schema: &Schema,
    rules: &[ValidationRule],
    decl: Option<&DeclType>,
    options: &RuleOptions,
) -> Result<Vec<CompiledRule>, String> {
    if rules.is_empty() {
        return Ok(Vec::new());
    }
    let decl =
        decl.ok_or_else(|| "failed to convert to declType for CEL validation rules".to_string())?;
    let envs = RuleEnv::new(decl, options);
    let max_cardinality = MAX_REQUEST_SIZE_BYTES / (decl.min_serialized_size.max(0) as u64 + 1);
    Ok(rules
        .iter()
        .map(|rule| {
            let env = if rule.optional_old_self == Some(true) {
                &envs.optional
            } else {
                &envs.plain
            };
            let mut compiled = compile_rule(rule, env, &envs.sizes, options);
            if compiled.error.is_none() && compiled.program.is_some() {
                compiled.max_cardinality = max_cardinality;
            }
            // Kubernetes sets the path last, after a message expression compiled.
            let compiled_fully = compiled.program.is_some()
                && compiled.error.is_none()
                && compiled.message_expression_error.is_none();
            if !rule.field_path.is_empty() && compiled_fully {
                compiled.normalized_field_path =
                    valid_field_path(&rule.field_path, schema, FieldPathOptions::default())
                        .ok()
                        .map(|(p, _)| p.to_string());
            }
            compiled
        })
        .collect())
}

fn compile_rule(
    rule: &ValidationRule,
    env: &Env,
    sizes: &DeclSizes,
    options: &RuleOptions,
) -> CompiledRule {
    let mut out = CompiledRule {
        rule: rule.clone(),
        ..CompiledRule::default()
    };
    if rule.rule.trim().is_empty() {
        return out;
    }
    let ast = match env.compile(&rule.rule) {
        Ok(ast) => ast,
        Err(issues) => {
            out.error = Some(invalid(format!("compilation failed: {issues}")));
            return out;
        }
    };
    if ast.result_type() != Some(&Type::Bool) {
        out.error = Some(invalid("cel expression must evaluate to a bool"));
        return out;
    }
    out.uses_old_self = references(&ast, OLD_SELF_VARIABLE);
    let program = match plan(env, &ast, options) {
        Ok(p) => p,
        Err(e) => {
            // cel-go's error making a program is a plain message, without a source excerpt.
            let messages: Vec<&str> = e.diagnostics().iter().map(|d| d.message.as_str()).collect();
            out.error = Some(invalid(format!(
                "program instantiation failed: {}",
                messages.join("; ")
            )));
            return out;
        }
    };
    if options.estimate_costs {
        out.max_cost = env.estimate_cost(&ast, sizes).map_or(0, |c| c.max);
    }
    out.program = Some(program);
    if !rule.message_expression.is_empty() {
        compile_message_expression(&mut out, env, sizes, options);
    }
    out
}

fn compile_message_expression(
    out: &mut CompiledRule,
    env: &Env,
    sizes: &DeclSizes,
    options: &RuleOptions,
) {
    let ast = match env.compile(&out.rule.message_expression) {
        Ok(ast) => ast,
        Err(issues) => {
            out.message_expression_error = Some(invalid(format!(
                "messageExpression compilation failed: {issues}"
            )));
            return;
        }
    };
    if ast.result_type() != Some(&Type::String) {
        out.message_expression_error = Some(invalid("messageExpression must evaluate to a string"));
        return;
    }
    match plan(env, &ast, options) {
        Ok(p) => {
            if options.estimate_costs {
                out.message_expression_max_cost =
                    env.estimate_cost(&ast, sizes).map_or(0, |c| c.max);
            }
            out.message_program = Some(p);
        }
        Err(e) => {
            out.message_expression_error = Some(invalid(format!(
                "messageExpression instantiation failed: {e}"
            )));
        }
    }
}

fn plan(env: &Env, ast: &Ast, options: &RuleOptions) -> Result<Program, celerity::Issues> {
    env.program_with(ast, ProgramOptions::default().backend(options.backend))
}

/// Whether a checked expression refers to a variable.
fn references(ast: &Ast, variable: &str) -> bool {
    ast.checked()
        .is_some_and(|c| c.references.values().any(|r| r.name == variable))
}
