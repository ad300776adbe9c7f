//! `cel-interp` evaluates CEL expressions by walking a planned tree.
//!
//! A [`Plan`] is built once from a checked AST (names and overloads already resolved by the
//! checker) or from an unchecked one (names resolved in the container and calls dispatched on
//! the runtime types of their arguments), then evaluated any number of times, from any
//! number of threads, against an [`Activation`](cel_runtime::Activation).
//!
//! This crate is the semantic reference: every operation it performs is a call into
//! `cel-runtime`, and the JIT must agree with it on every value, error and cost. It must not
//! depend on the IR, the JIT or Cranelift.

#![forbid(unsafe_code)]

pub mod concat;
mod eval;
mod functions;
pub mod ops;
mod plan;
mod wellknown;

pub use eval::Evaluation;
pub use functions::{FunctionTable, OverloadEntry};
pub use plan::{
    CallCost, CallTarget, CostHooks, Plan, PlanEnv, cost_plan, literal_value, type_value_in,
};
