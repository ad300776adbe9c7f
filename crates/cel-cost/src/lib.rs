//! `cel-cost` is cel-go v0.29.2's cost model, written once for the checker's estimator and
//! both evaluators, so that a budget means the same thing everywhere (and the same thing as
//! in Kubernetes).
//!
//! It owns cel-go's constants, the cost of each built-in overload (statically, from size
//! ranges; at run time, from actual sizes), and the hook types through which a library or a
//! host replaces a call's cost, as cel-go's `OverloadCostEstimate`, `CostEstimator` and
//! `ActualCostEstimator` do.
//!
//! It knows types and the checked AST, never runtime values: run-time formulas take sizes,
//! and hooks that need to look at values are generic over the value type. So it depends on
//! `cel-syntax`, `cel-types` and `cel-checker` only: not on `cel-runtime`, an evaluator, the
//! libraries or the facade, all of which use it.

#![forbid(unsafe_code)]

mod actual;
mod estimate;
mod model;
mod plan;

pub use actual::{
    CostFormula, SIZED_OVERLOADS, builtin_call_cost, builtin_call_cost_with, builtin_fixed_cost,
};
pub use estimate::{EstimateNode, EstimateOptions, NoSizes, PathSizes, SizeEstimator, estimate};
pub use model::*;
pub use plan::{Charge, CostOptions, CostPlan};

/// The literal value an [`EstimateArg`] carries for a constant argument.
pub use cel_syntax::Literal;
