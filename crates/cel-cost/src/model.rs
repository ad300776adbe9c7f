//! Cost units, ranges and hooks.

use std::sync::Arc;

use cel_types::Type;

/// Each identifier resolution and each field or index qualification.
pub const SELECT_AND_IDENT_COST: u64 = 1;
/// Literals and type names used as values.
pub const CONST_COST: u64 = 0;
/// Each list literal evaluated (elements are charged separately).
pub const LIST_CREATE_BASE_COST: u64 = 10;
/// Each map literal evaluated.
pub const MAP_CREATE_BASE_COST: u64 = 30;
/// Each message literal evaluated.
pub const STRUCT_CREATE_BASE_COST: u64 = 40;
/// Multiplied by a string, bytes or list size for one traversal.
pub const STRING_TRAVERSAL_COST_FACTOR: f64 = 0.1;
/// Multiplied by the length of a regular expression.
pub const REGEX_STRING_LENGTH_COST_FACTOR: f64 = 0.25;
/// The cost of a call with no rule of its own.
pub const CALL_COST: u64 = 1;
/// The largest value a size or cost can take (cel-go's `math.MaxUint64`).
pub const UNKNOWN: u64 = u64::MAX;

/// A range of sizes: code points of a string, bytes of bytes, entries of a list or map
/// (cel-go's `SizeEstimate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SizeRange {
    /// The smallest size.
    pub min: u64,
    /// The largest size.
    pub max: u64,
}

/// A range of costs (cel-go's `CostEstimate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CostRange {
    /// The cheapest evaluation.
    pub min: u64,
    /// The most expensive evaluation.
    pub max: u64,
}

impl SizeRange {
    /// An exact size.
    pub const fn exact(n: u64) -> SizeRange {
        SizeRange { min: n, max: n }
    }

    /// A size about which nothing is known: `[0, u64::MAX]`.
    pub const fn unknown() -> SizeRange {
        SizeRange {
            min: 0,
            max: UNKNOWN,
        }
    }

    /// Sum of two sizes, saturating.
    #[allow(
        clippy::should_implement_trait,
        reason = "saturating, unlike `Add` on integers; a named method keeps that visible"
    )]
    pub fn add(self, o: SizeRange) -> SizeRange {
        SizeRange {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    /// Product of two sizes, saturating.
    pub fn multiply(self, o: SizeRange) -> SizeRange {
        SizeRange {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }

    /// The smallest range covering both.
    pub fn union(self, o: SizeRange) -> SizeRange {
        SizeRange {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }

    /// The cost of traversing something of this size once, with a factor, each bound rounded
    /// up (cel-go's `MultiplyByCostFactor`).
    pub fn multiply_by_factor(self, f: f64) -> CostRange {
        CostRange {
            min: ceil_factor(self.min, f),
            max: ceil_factor(self.max, f),
        }
    }

    /// The size as a cost range.
    pub fn as_cost(self) -> CostRange {
        CostRange {
            min: self.min,
            max: self.max,
        }
    }
}

impl CostRange {
    /// An exact cost.
    pub const fn exact(n: u64) -> CostRange {
        CostRange { min: n, max: n }
    }

    /// Sum, saturating.
    #[allow(
        clippy::should_implement_trait,
        reason = "saturating, unlike `Add` on integers; a named method keeps that visible"
    )]
    pub fn add(self, o: CostRange) -> CostRange {
        CostRange {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    /// Product with a size range, saturating (cel-go's `MultiplyByCost` for comprehensions).
    pub fn multiply_by_size(self, size: SizeRange) -> CostRange {
        CostRange {
            min: self.min.saturating_mul(size.min),
            max: self.max.saturating_mul(size.max),
        }
    }

    /// Product of two cost ranges, saturating.
    pub fn multiply(self, o: CostRange) -> CostRange {
        CostRange {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }

    /// The smallest range covering both.
    pub fn union(self, o: CostRange) -> CostRange {
        CostRange {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

/// `ceil(n * f)`, saturating at `u64::MAX` as cel-go does.
#[inline]
pub fn ceil_factor(n: u64, f: f64) -> u64 {
    // The factors of every run-time string charge, in integers, which equal the float
    // ceiling below 2⁵⁰ and skip the float conversions' latency on the charging path. 0.25
    // is exact in binary. The double nearest 0.1 is 0.1 × (1 + 2⁻⁵⁴): for n = 10m the product
    // m × (1 + 2⁻⁵⁴) is within half an ulp of m and rounds to it; any other n/10 is at least
    // 0.1 from a whole number, and the product's rounding error is under 0.03.
    if n < 1 << 50 {
        if f.to_bits() == STRING_TRAVERSAL_COST_FACTOR.to_bits() {
            return n.div_ceil(10);
        }
        if f.to_bits() == REGEX_STRING_LENGTH_COST_FACTOR.to_bits() {
            return n.div_ceil(4);
        }
    }
    let v = n as f64 * f;
    if v >= u64::MAX as f64 {
        return UNKNOWN;
    }
    // `v.ceil()` without the libm call it is on x86-64's baseline (no SSE4.1), which every
    // size-dependent charge makes at run time: `v` is finite and not negative, its
    // truncation is exact, and below 2⁵³ so is the comparison (above, `v` is whole).
    let whole = v as u64;
    if (whole as f64) < v { whole + 1 } else { whole }
}

/// The static estimate of one call: its own cost (argument costs excluded) and, for
/// strings, bytes, lists and maps, the size of its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallEstimate {
    /// The call's own cost.
    pub cost: CostRange,
    /// The size of the result, if the estimator knows it.
    pub result_size: Option<SizeRange>,
}

/// What a static cost hook learns about one argument (the receiver first).
#[derive(Clone, Debug)]
pub struct EstimateArg {
    /// The argument's checked type.
    pub ty: Type,
    /// Its size range, if known.
    pub size: Option<SizeRange>,
    /// The argument's value when it is a literal constant (`lists.range(4)`, `'a,b'.split(',', 2)`),
    /// as cel-go's estimators read it from the AST node (`nodeAsUintValue`).
    pub literal: Option<cel_syntax::Literal>,
    /// For a list argument, the size of its elements as the host's size estimator gives it
    /// for the element node (the list's path plus `@items`, as Kubernetes' `listElementNode`
    /// builds it), if the host knows it.
    pub elem_size: Option<SizeRange>,
}

impl EstimateArg {
    /// cel-go's `nodeAsUintValue`: the value of an int literal argument, 0 for a negative one,
    /// and `default` when the argument is not an int literal.
    pub fn uint_literal_or(&self, default: u64) -> u64 {
        match self.literal {
            Some(cel_syntax::Literal::Int(i)) => u64::try_from(i).unwrap_or(0),
            _ => default,
        }
    }

    /// The value of an int literal argument (negative ones as 0, as cel-go reads them), or
    /// `None` when the argument is not an int literal.
    pub fn uint_literal(&self) -> Option<u64> {
        self.int_literal().map(|i| u64::try_from(i).unwrap_or(0))
    }

    /// The value of an int literal argument, or `None` when the argument is not one.
    pub fn int_literal(&self) -> Option<i64> {
        match self.literal {
            Some(cel_syntax::Literal::Int(i)) => Some(i),
            _ => None,
        }
    }
}

/// A static cost hook: given the arguments (receiver first), the call's estimate, or `None`
/// to fall through to the next rule.
pub type EstimateFn = Arc<dyn Fn(&[EstimateArg]) -> Option<CallEstimate> + Send + Sync>;

/// A run-time cost hook over values of type `V`: given the arguments (receiver first) and
/// the result, the call's own cost, or `None` to fall through to the next rule. It replaces
/// the function's cost entirely; argument costs are charged by the arguments themselves.
pub type ActualCostFn<V> = Arc<dyn Fn(&[V], &V) -> Option<u64> + Send + Sync>;

/// A result-size hook over values of type `V`: from a call's arguments (receiver first), the
/// `actualSize` its result will have if the call succeeds, found without building the result
/// (`lists.range(n)` has `n` elements). `None` when the call may fail or the size is not cheap
/// to know. An evaluator with a cost limit computes the call's cost from it *before* calling,
/// so that a call which would build a value too costly to pay for stops without building it.
/// The cost charged afterwards is the ordinary one, so totals are unchanged.
pub type ResultSizeFn<V> = Arc<dyn Fn(&[V]) -> Option<u64> + Send + Sync>;

/// What an evaluator can learn of a call's result size before making the call.
#[derive(Clone)]
pub struct ResultSizeHook<V> {
    /// A cheap upper bound (from the arguments' lengths, say), consulted first: when a
    /// result that large would still fit the budget, the exact size is not computed.
    pub at_most: Option<ResultSizeFn<V>>,
    /// The exact size (see [`ResultSizeFn`]).
    pub exact: ResultSizeFn<V>,
}

impl<V> ResultSizeHook<V> {
    /// A hook with only the exact size.
    pub fn exact(exact: ResultSizeFn<V>) -> ResultSizeHook<V> {
        ResultSizeHook {
            at_most: None,
            exact,
        }
    }
}

/// Which calls a run-time cost hook can answer, as far as checked types tell: an evaluator
/// leaves out, when it plans a call, a hook that cannot answer it, so the call pays for no
/// hook at run time (Kubernetes prices `_==_` by name, but only for its own opaque types).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum HookScope {
    /// Any call.
    #[default]
    Any,
    /// Only calls whose first argument (a member call's receiver) is an opaque value of one
    /// of these type names: the hook promises to answer `None` for every other call.
    OpaqueFirstArgument(Vec<String>),
}

/// What the checked type of a call's first argument says about a scoped hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookReach {
    /// The hook cannot answer: leave it out.
    Never,
    /// The hook may answer: call it.
    Maybe,
    /// The type is not known until run time: call the hook only when the first argument's
    /// value is opaque (a tag test).
    IfOpaque,
}

impl HookScope {
    /// Whether a hook of this scope can answer a call whose first argument was checked as
    /// `first` (`None`: unchecked, or no argument).
    pub fn reach(&self, first: Option<&Type>) -> HookReach {
        let HookScope::OpaqueFirstArgument(names) = self else {
            return HookReach::Maybe;
        };
        match first {
            None | Some(Type::Dyn | Type::Error | Type::Any | Type::TypeParam(_)) => {
                HookReach::IfOpaque
            }
            // `optional_type` is opaque to the checker but not an opaque value.
            Some(t @ Type::Opaque(name, _))
                if t.optional_elem().is_none() && names.iter().any(|n| **n == **name) =>
            {
                HookReach::Maybe
            }
            Some(_) => HookReach::Never,
        }
    }
}

/// What a cost hook applies to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CostKey {
    /// One overload, by id (cel-go's per-overload trackers and estimators, used by the
    /// extension libraries). Consulted first.
    Overload(String),
    /// Every overload of a function, by name (Kubernetes' `CostEstimator` overrides by
    /// name). Consulted after overload hooks, before the built-in table.
    Function(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_factor_is_the_float_ceiling() {
        // Against `f64::ceil` itself (cel-go's `math.Ceil`), float rounding included, up to
        // the saturation.
        let mut ns: Vec<u64> = (0..1 << 20).collect();
        for shift in 40..64 {
            let p = 1u64 << shift;
            ns.extend([p - 1, p, p + 1, p + 7, p.wrapping_mul(3) / 2]);
            ns.extend((p - 100..p + 100).filter(|n| n % 10 == 0));
        }
        ns.extend([u64::MAX - 1, u64::MAX]);
        for f in [
            STRING_TRAVERSAL_COST_FACTOR,
            REGEX_STRING_LENGTH_COST_FACTOR,
            1.0,
            2.5,
            511.75,
        ] {
            for &n in &ns {
                let v = (n as f64 * f).ceil();
                let want = if v >= u64::MAX as f64 {
                    UNKNOWN
                } else {
                    v as u64
                };
                assert_eq!(ceil_factor(n, f), want, "{n} × {f}");
            }
        }
        assert_eq!(ceil_factor(30, STRING_TRAVERSAL_COST_FACTOR), 3);
        assert_eq!(ceil_factor(31, STRING_TRAVERSAL_COST_FACTOR), 4);
    }

    #[test]
    fn literal_arguments_read_as_cel_go_reads_them() {
        let arg = |literal: Option<cel_syntax::Literal>| EstimateArg {
            ty: Type::Int,
            size: Some(SizeRange::exact(1)),
            literal,
            elem_size: None,
        };
        use cel_syntax::Literal::{Int, String as Str, Uint};
        assert_eq!(arg(Some(Int(4))).uint_literal(), Some(4));
        assert_eq!(arg(Some(Int(4))).uint_literal_or(9), 4);
        // cel-go's nodeAsUintValue: a negative int literal is 0; anything else the default.
        assert_eq!(arg(Some(Int(-3))).uint_literal(), Some(0));
        assert_eq!(arg(Some(Int(-3))).int_literal(), Some(-3));
        assert_eq!(arg(Some(Uint(4))).uint_literal_or(9), 9);
        assert_eq!(arg(Some(Str("4".into()))).uint_literal(), None);
        assert_eq!(arg(None).uint_literal_or(9), 9);
    }
}
