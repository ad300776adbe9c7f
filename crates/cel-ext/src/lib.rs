//! `cel-ext` holds cel-go's extension libraries, each one thing made of declarations (for the
//! checker), implementations (for both evaluators), macros (for the parser) and cost formulas,
//! behind one [`Library`] trait.
//!
//! Libraries are versioned as cel-go versions them, so an environment can ask for exactly
//! what Kubernetes enables (strings version 2, lists version 3, ...): each library type has a
//! `version(n)` constructor, and its `Default` is the newest version.
//!
//! It depends on `cel-syntax` (macros), `cel-types` (declarations), `cel-runtime` (values) and
//! `cel-cost` (cost hook types); it must not depend on the interpreter, the JIT or the facade.
//! The meaning of each function is written here, or in `cel-runtime` when the core needs it
//! too.
//!
//! # The libraries
//!
//! | library | cel-go | name | versions | module |
//! |---|---|---|---|---|
//! | [`Strings`] | `ext.Strings()` | `cel.lib.ext.strings` | 0–5 | [`strings`] |
//! | [`Math`] | `ext.Math()` | `cel.lib.ext.math` | 0–2 | [`math`] |
//! | [`Encoders`] | `ext.Encoders()` | `cel.lib.ext.encoders` | 0 | [`encoders`] |
//! | [`Bindings`] | `ext.Bindings()` | `cel.lib.ext.cel.bindings` | 0–1 | [`bindings`] |
//! | [`BlockTestMacros`] | cel-go's conformance test | `cel.lib.ext.cel.block.conformance` | — | [`bindings`] |
//! | [`Lists`] | `ext.Lists()` | `cel.lib.ext.lists` | 0–3 | [`lists`] |
//! | [`Sets`] | `ext.Sets()` | `cel.lib.ext.sets` | 0 | [`sets`] |
//! | [`Regex`] | `ext.Regex()` | `cel.lib.ext.regex` | 0 | [`regex`] |
//! | [`Network`] | `ext.Network()` | `cel.lib.ext.network` | 0 | [`network`] |
//! | [`TwoVarComprehensions`] | `ext.TwoVarComprehensions()` | `cel.lib.ext.comprev2` | 0 | — |
//!
//! Each module documents its functions: signature, an example, the cost, and the library
//! version that introduced it.
//!
//! # Costs
//!
//! Libraries supply two kinds of cost hook, keyed by overload id
//! ([`cel_cost::CostKey::Overload`]):
//!
//! * run-time costs ([`LibraryContents::actual_costs`]), cel-go's per-overload cost trackers,
//!   computed from the argument and result values (`cost-model.md` §2.6);
//! * static estimates ([`LibraryContents::estimated_costs`]), cel-go's
//!   `OverloadCostEstimate`s, computed from size ranges (§3.4).
//!
//! Every formula is a small named function over sizes (in the library's module), tested
//! against cel-go's published (expression, cost) pairs; the hooks only extract sizes. A
//! function without a hook costs what the built-in rules say (1 per call, or the core's rule
//! for `string_format` and `strings_quote`).
//!
//! # Bounded allocation
//!
//! A few functions can return values far larger than their inputs (`lists.range(n)`,
//! `replace`, `join`, `split`, `format` with a large precision, `flatten`,
//! `regex.replace`). Two things keep them in check:
//!
//! * **Charged before they run.** `lists.range`, `replace`, `join` and `regex.replace`
//!   register a result-size hook ([`LibraryContents::result_sizes`]): from the arguments, the
//!   size the result will have, found without building it (`replace` counts its matches).
//!   Under a cost limit the evaluator (either backend) computes the call's cost from that size
//!   with the same hooks that charge it afterwards, and if the cost would cross the limit it
//!   stops there, with the cost and error it would have reached after the call. So
//!   `lists.range(10000000)` under a limit of 1,000 stops without allocating its 240 MB, and
//!   nothing else changes: costs and results are cel-go's.
//! * **Size limits.** Each computes (or bounds) the size of its result and fails with an
//!   error instead of attempting an allocation above [`MAX_RESULT_BYTES`] bytes of text or
//!   [`MAX_LIST_ELEMENTS`] list elements (the limits of [`cel_runtime::limits`], which the
//!   core's `+` also respects). These hold without a cost limit, and where the cost does not
//!   grow with the result: Kubernetes charges `replace` by its receiver alone. Both limits
//!   are far above anything an evaluation under Kubernetes' largest cost budget (10⁷ units,
//!   where every costed byte or element costs at least 0.1) can produce, and far below what
//!   would exhaust memory, so they never change an answer cel-go gives within a budget and
//!   only turn a process abort into an ordinary CEL error.

//! # Where this crate departs from cel-go v0.29.2
//!
//! * Below version 5 the `format` precision is capped at
//!   [`strings::format::SAFETY_MAX_PRECISION`] (cel-go has no cap there); the legacy
//!   formatter of versions 1 to 3 writes numbers as cel-go's `en_US` printer does, the only
//!   locale it is used with here.
//! * `sort` and `sortBy` are stable; cel-go's sort is not for more than 12 elements, so equal
//!   keys may come out in another order there.
//! * The size limits above ([`MAX_RESULT_BYTES`], [`MAX_LIST_ELEMENTS`]) turn absurd
//!   allocations into errors.
//! * `cel.@block` subexpressions that need each other more deeply than the parser's AST depth
//!   limit are an error rather than a risk to the stack (see [`bindings`]).

#![forbid(unsafe_code)]

mod comprehensions;
pub mod costs;

pub mod bindings;
pub mod encoders;
pub mod lists;
pub mod math;
pub mod network;
pub mod protos;
pub mod regex;
pub mod sets;
pub mod strings;

pub use crate::regex::Regex;
pub use bindings::{Bindings, BlockTestMacros};
pub use comprehensions::TwoVarComprehensions;
pub use encoders::Encoders;
pub use lists::Lists;
pub use math::Math;
pub use network::Network;
pub use protos::Protos;
pub use sets::Sets;
pub use strings::Strings;

use std::sync::Arc;

use cel_cost::{ActualCostFn, CostKey, EstimateFn, HookScope, ResultSizeHook};
use cel_runtime::{Implementation, Value};
use cel_syntax::macros::Macro;
use cel_syntax::{Expr, ExprId};
use cel_types::{FunctionDecl, Type, VariableDecl};

pub use cel_runtime::limits::{MAX_LIST_ELEMENTS, MAX_RESULT_BYTES};

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
    /// The calls some of those hooks can answer, where narrower than any call: an
    /// evaluator leaves a hook out of calls its scope excludes (see [`HookScope`]).
    pub cost_hook_scopes: Vec<(CostKey, HookScope)>,
    /// Static estimates of its calls (cel-go's `CostEstimatorOptions` / `CostEstimator`).
    pub estimated_costs: Vec<(CostKey, EstimateFn)>,
    /// Result sizes known from the arguments, by overload id, for functions that can build
    /// large values: an evaluator under a cost limit charges such a call before running it
    /// (see [`cel_cost::ResultSizeFn`]).
    pub result_sizes: Vec<(String, ResultSizeHook<Value>)>,
    /// Types the library defines (cel-go's `cel.Types(...)`), such as the opaque `net.IP`:
    /// an environment should resolve each one's name (`net.IP`) as a type identifier, as it
    /// does `int` or `google.protobuf.Timestamp`, in the checker and in the planner.
    pub types: Vec<Type>,
    /// Checks of type-checked expressions (cel-go's `ASTValidator`s), whose issues make the
    /// expression fail to compile: the strings library checks literal `format` calls.
    pub validators: Vec<Validator>,
    /// Checks run when a program is made (cel-go's program options that prepare constant
    /// arguments, such as Kubernetes' compiling of constant `find` patterns), whose issues
    /// make making the program fail.
    pub program_checks: Vec<Validator>,
}

/// What a validator sees of a type-checked expression.
pub struct CheckedExpr<'a> {
    /// The expression, macros expanded.
    pub expr: &'a Expr,
    /// The checked type of a node (`dyn` where the checker recorded none).
    pub type_of: &'a dyn Fn(ExprId) -> Type,
    /// The overload ids the checker resolved for a call (none for other nodes).
    pub overloads_of: &'a dyn Fn(ExprId) -> Vec<String>,
}

/// A problem a validator found: the node it is about and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationIssue {
    /// The node the message is reported at.
    pub expr_id: ExprId,
    /// The message, in cel-go's words.
    pub message: String,
}

/// A check of type-checked expressions.
pub type Validator = Arc<dyn Fn(&CheckedExpr<'_>) -> Vec<ValidationIssue> + Send + Sync>;

impl std::fmt::Debug for LibraryContents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibraryContents")
            .field("variables", &self.variables)
            .field("functions", &self.functions)
            .field("implementations", &self.implementations.len())
            .field("macros", &self.macros.len())
            .field("actual_costs", &self.actual_costs.len())
            .field("estimated_costs", &self.estimated_costs.len())
            .field("result_sizes", &self.result_sizes.len())
            .field("types", &self.types)
            .field("validators", &self.validators.len())
            .field("program_checks", &self.program_checks.len())
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

/// Every extension library at its newest version, as the conformance suite expects them (the
/// conformance runner adds the `cel.block` test macros, [`BlockTestMacros`], itself).
pub fn all_libraries() -> Vec<Box<dyn Library>> {
    vec![
        Box::new(TwoVarComprehensions),
        Box::new(Strings::default()),
        Box::new(Math::default()),
        Box::new(Encoders::default()),
        Box::new(Bindings::default()),
        Box::new(Lists::default()),
        Box::new(Sets),
        Box::new(Regex),
        Box::new(Network::default()),
        Box::new(Protos),
    ]
}

/// Helpers the library modules share to build their contents.
pub(crate) mod build {
    use std::sync::Arc;

    use cel_cost::{CallEstimate, CostKey, EstimateArg, ResultSizeHook};
    use cel_runtime::{Implementation, Value};

    use crate::LibraryContents;

    /// A cheap upper bound on a call's result size, from its arguments.
    pub(crate) type SizeBound = fn(&[Value]) -> Option<u64>;

    impl LibraryContents {
        /// Registers an implementation.
        pub(crate) fn implement(&mut self, id: &str, imp: Implementation) {
            self.implementations.push((id.to_string(), imp));
        }

        /// Registers a run-time cost hook for an overload.
        pub(crate) fn track(
            &mut self,
            id: &str,
            f: impl Fn(&[Value], &Value) -> Option<u64> + Send + Sync + 'static,
        ) {
            self.actual_costs
                .push((CostKey::Overload(id.to_string()), Arc::new(f)));
        }

        /// Registers the result-size hook of an overload that can build a large value: a
        /// cheap upper bound, if there is one, and the exact size.
        pub(crate) fn result_size(
            &mut self,
            id: &str,
            at_most: Option<SizeBound>,
            exact: impl Fn(&[Value]) -> Option<u64> + Send + Sync + 'static,
        ) {
            let hook = ResultSizeHook {
                at_most: at_most.map(|f| Arc::new(f) as cel_cost::ResultSizeFn<Value>),
                exact: Arc::new(exact),
            };
            self.result_sizes.push((id.to_string(), hook));
        }

        /// Registers a static cost estimate for an overload.
        pub(crate) fn estimate(
            &mut self,
            id: &str,
            f: impl Fn(&[EstimateArg]) -> Option<CallEstimate> + Send + Sync + 'static,
        ) {
            self.estimated_costs
                .push((CostKey::Overload(id.to_string()), Arc::new(f)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(c: &LibraryContents) -> Vec<String> {
        c.actual_costs
            .iter()
            .map(|(k, _)| match k {
                CostKey::Overload(id) | CostKey::Function(id) => id.clone(),
            })
            .collect()
    }

    #[test]
    fn every_library_once_with_implemented_overloads() {
        let libs = all_libraries();
        let mut names: Vec<&str> = libs.iter().map(|l| l.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), libs.len());
        for lib in &libs {
            let c = lib.contents();
            for f in &c.functions {
                for o in &f.overloads {
                    assert!(
                        c.implementations.iter().any(|(id, _)| *id == o.id),
                        "{}: {} has no implementation",
                        lib.name(),
                        o.id
                    );
                }
            }
            for (id, _) in &c.implementations {
                assert!(
                    c.functions
                        .iter()
                        .any(|f| f.overloads.iter().any(|o| o.id == *id)),
                    "{}: {id} is not declared",
                    lib.name()
                );
            }
        }
    }

    #[test]
    fn cost_hooks_by_version() {
        assert!(keys(&Lists::version(2).contents()).is_empty());
        let v3 = keys(&Lists::version(3).contents());
        for id in [
            "list_slice",
            "lists_range",
            "list_reverse",
            "list_distinct",
            "list_flatten",
            "list_flatten_int",
            "list_string_sort",
            "list_google.protobuf.Duration_sortByAssociatedKeys",
        ] {
            assert!(v3.iter().any(|k| k == id), "{id}");
        }
        assert_eq!(keys(&Sets.contents()).len(), 3);
        assert_eq!(keys(&Regex.contents()).len(), 4);
        assert!(keys(&Math::default().contents()).is_empty());
        assert!(keys(&Encoders::default().contents()).is_empty());
        assert!(keys(&Network::default().contents()).is_empty());
        assert_eq!(keys(&Strings::version(5).contents()).len(), 17);
    }
}
