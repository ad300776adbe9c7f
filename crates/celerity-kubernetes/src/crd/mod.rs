//! Custom resources: a CustomResourceDefinition's schema typed for CEL, its
//! `x-kubernetes-validations` compiled once and run against many objects with the API
//! server's verdicts, error texts and costs.
//!
//! * [`SchemaValidator`]: the rules of one schema (every node, at any depth), compiled; then
//!   [`SchemaValidator::validate`] an object, optionally against its old version, within
//!   the per-object cost budget. This is Kubernetes' `cel.Validator`.
//! * [`compile_rules`]: the rules of one schema node, with their errors and estimated
//!   costs (Kubernetes' `cel.Compile`).
//! * [`check_rules`]: the checks the API server makes of a CRD's rules when the CRD is
//!   created (they compile as new expressions, their estimated costs fit the limits).
//! * [`CompiledCrd`]: a whole CustomResourceDefinition, compiled once; then
//!   [`CompiledCrd::create`] or [`CompiledCrd::update`] objects of its kind as the API
//!   server handles those requests (kubectl's namespace, strict decoding, name
//!   generation, the status subresource, metadata and scale checks, the strategy's
//!   validation, warnings), with the API server's [`status_json`]; or
//!   [`CompiledCrd::validate`] an object as the strategy alone does.
//! * [`CrdSet`]: many CRDs, each compiled when an object is first routed to it.
//!
//! The schema side (types, values, sizes, escaping, OpenAPI) is `cel-k8s-schema`'s,
//! re-exported as [`schema`].

mod checks;
mod definition;
mod request;
mod rules;
mod scale;
mod set;
mod texts;
mod validator;

pub use cel_k8s_schema as schema;
pub use checks::{
    CrdHooks, STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT, TotalCost, check_rules,
    check_schema_with_rules, cost_error_message, max_elements, multiply_with_overflow_guard,
};
pub use definition::{
    CompiledCrd, CrdError, CrdOptions, CrdVersion, ObjectValidation, invalid_message,
    strict_decoding_error,
};
pub use request::{
    Answer, FieldValidation, Outcome, RequestOptions, invalid_status_message, status_json,
};
pub use rules::{
    CompiledRule, MAX_REQUEST_SIZE_BYTES, OLD_SELF_VARIABLE, RuleEnv, RuleError, RuleErrorType,
    RuleOptions, SELF_VARIABLE, compile_rules, default_version,
};
pub use scale::ScaleSubresource;
pub use set::{CrdSet, DefinitionCache, Skipped};
pub use validator::{
    MAX_MESSAGE_EXPRESSION_BYTES, RUNTIME_COST_BUDGET, SchemaValidator, ValidateOptions, Validation,
};
