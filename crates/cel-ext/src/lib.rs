//! `cel-ext` holds cel-go's extension libraries, each one thing made of declarations (for the
//! checker), implementations (for both evaluators), macros (for the parser) and, as the cost
//! model lands, cost formulas, behind one [`Library`] trait.
//!
//! Libraries are versioned as cel-go versions them, so an environment can ask for exactly
//! what Kubernetes enables (strings version 2, lists version 3, ...).
//!
//! It depends on `cel-syntax` (macros), `cel-types` (declarations) and `cel-runtime`
//! (values); it must not depend on the checker, the interpreter, the JIT or the facade. The
//! meaning of each function is written here, or in `cel-runtime` when the core needs it too.

mod comprehensions;

pub use comprehensions::TwoVarComprehensions;

use cel_cost::{ActualCostFn, CostKey, EstimateFn};
use cel_runtime::{Implementation, Value};
use cel_syntax::macros::Macro;
use cel_types::{FunctionDecl, VariableDecl};

/// What a library adds to an environment.
#[derive(Clone, Default)]
pub struct LibraryContents {
    /// Variables and constants it declares.
    pub variables: Vec<VariableDecl>,
    /// Functions it declares, with cel-go's overload ids.
    pub functions: Vec<FunctionDecl>,
    /// Implementations by overload id.
    pub implementations: Vec<(String, Implementation)>,
    /// Macros it adds to the parser.
    pub macros: Vec<Macro>,
    /// Run-time costs of its calls, replacing the built-in rules (cel-go's
    /// `CostTrackerOptions` / `ActualCostEstimator`), as described in `cost-model.md` §2.6.
    pub actual_costs: Vec<(CostKey, ActualCostFn<Value>)>,
    /// Static estimates of its calls (cel-go's `CostEstimatorOptions` / `CostEstimator`).
    pub estimated_costs: Vec<(CostKey, EstimateFn)>,
}

impl std::fmt::Debug for LibraryContents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibraryContents")
            .field("variables", &self.variables)
            .field("functions", &self.functions)
            .field("implementations", &self.implementations.len())
            .field("macros", &self.macros.len())
            .field("actual_costs", &self.actual_costs.len())
            .field("estimated_costs", &self.estimated_costs.len())
            .finish()
    }
}

/// A library of CEL functions, macros and declarations.
pub trait Library: Send + Sync + std::fmt::Debug {
    /// cel-go's name for the library (`cel.lib.ext.strings`), used to avoid adding one twice.
    fn name(&self) -> &str;

    /// What the library adds.
    fn contents(&self) -> LibraryContents;
}

/// Every extension library at its newest version, as the conformance suite expects them.
pub fn all_libraries() -> Vec<Box<dyn Library>> {
    vec![Box::new(TwoVarComprehensions)]
}
