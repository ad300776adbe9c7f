//! Run-time costs of built-in calls, from the sizes of their arguments (cel-go's
//! `CostTracker.costCall` built-in switch, v0.29.2).
//!
//! A size here is cel-go's `actualSize`: code points of a string, bytes of bytes, entries of a
//! list or map, the wrapped value's size for a present optional, and 1 for anything else.

use crate::{REGEX_STRING_LENGTH_COST_FACTOR, STRING_TRAVERSAL_COST_FACTOR, ceil_factor};
use cel_types::OlderCelGo;
use cel_types::overloads as ov;

/// A built-in overload's run-time cost formula (cel-go's `CostTracker.costCall` switch),
/// resolved once from the overload id so that evaluators do not match strings per call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CostFormula {
    /// 1, whatever the sizes (most calls).
    Unit,
    /// ⌈0.1 × size(i)⌉: a traversal of one argument (`startsWith` charges its prefix,
    /// argument 1, since v0.29; conversions between strings and bytes, `quote`, `format`
    /// charge argument 0).
    Traversal(usize),
    /// size(1): `in` on a list.
    ListSize,
    /// ⌈0.1 × min(size(0), size(1))⌉: equality and ordering of strings and bytes.
    TraversalMin,
    /// ⌈0.1 × (size(0) + size(1))⌉: concatenation of strings and bytes.
    TraversalSum,
    /// ⌈0.1 × (size(0) + 1)⌉ × ⌈0.25 × size(1)⌉: `matches` (the global form costs as the
    /// member form since v0.29).
    Regex,
    /// ⌈0.1 × size(0)⌉ × ⌈0.1 × size(1)⌉: `contains`.
    Contains,
}

/// The overloads whose cost depends on their arguments' sizes (cel-go's
/// `CostTracker.costCall` switch), by id; every other overload costs 1.
pub const SIZED_OVERLOADS: &[(&str, CostFormula)] = &[
    (ov::STARTS_WITH_STRING, CostFormula::Traversal(1)),
    (ov::ENDS_WITH_STRING, CostFormula::Traversal(1)),
    (ov::STRING_TO_BYTES, CostFormula::Traversal(0)),
    (ov::BYTES_TO_STRING, CostFormula::Traversal(0)),
    ("strings_quote", CostFormula::Traversal(0)),
    ("string_format", CostFormula::Traversal(0)),
    (ov::IN_LIST, CostFormula::ListSize),
    (ov::LESS_STRING, CostFormula::TraversalMin),
    (ov::GREATER_STRING, CostFormula::TraversalMin),
    (ov::LESS_EQUALS_STRING, CostFormula::TraversalMin),
    (ov::GREATER_EQUALS_STRING, CostFormula::TraversalMin),
    (ov::LESS_BYTES, CostFormula::TraversalMin),
    (ov::GREATER_BYTES, CostFormula::TraversalMin),
    (ov::LESS_EQUALS_BYTES, CostFormula::TraversalMin),
    (ov::GREATER_EQUALS_BYTES, CostFormula::TraversalMin),
    ("equals", CostFormula::TraversalMin),
    ("not_equals", CostFormula::TraversalMin),
    (ov::ADD_STRING, CostFormula::TraversalSum),
    (ov::ADD_BYTES, CostFormula::TraversalSum),
    (ov::MATCHES_STRING, CostFormula::Regex),
    ("matches", CostFormula::Regex),
    (ov::CONTAINS_STRING, CostFormula::Contains),
];

impl CostFormula {
    /// The formula of an overload id ("" for unresolved calls, which cost 1 as in cel-go).
    pub fn of(overload: &str) -> CostFormula {
        SIZED_OVERLOADS
            .iter()
            .find(|(id, _)| *id == overload)
            .map_or(CostFormula::Unit, |(_, f)| *f)
    }

    /// The formula of an overload id in an older cel-go: before v0.29, `startsWith` and
    /// `endsWith` charged their receiver and the global `matches` cost 1.
    pub fn of_older(overload: &str, older: OlderCelGo) -> CostFormula {
        match overload {
            ov::STARTS_WITH_STRING | ov::ENDS_WITH_STRING if older.starts_with_charges_receiver => {
                CostFormula::Traversal(0)
            }
            ov::MATCHES if older.global_matches_costs_one => CostFormula::Unit,
            _ => CostFormula::of(overload),
        }
    }

    /// The cost when it does not depend on sizes.
    pub fn fixed(self) -> Option<u64> {
        match self {
            CostFormula::Unit => Some(1),
            _ => None,
        }
    }

    /// The cost, given the arguments' sizes on demand (`size(i)` is argument `i`'s size;
    /// only the sizes the formula needs are asked for).
    #[inline]
    pub fn eval(self, size: impl Fn(usize) -> u64) -> u64 {
        let f = STRING_TRAVERSAL_COST_FACTOR;
        match self {
            CostFormula::Unit => 1,
            CostFormula::Traversal(i) => ceil_factor(size(i), f),
            CostFormula::ListSize => size(1),
            CostFormula::TraversalMin => ceil_factor(size(0).min(size(1)), f),
            CostFormula::TraversalSum => ceil_factor(size(0).saturating_add(size(1)), f),
            CostFormula::Regex => {
                let str_cost = ceil_factor(size(0).saturating_add(1), f);
                let regex_cost = ceil_factor(size(1), REGEX_STRING_LENGTH_COST_FACTOR);
                str_cost.saturating_mul(regex_cost)
            }
            CostFormula::Contains => {
                ceil_factor(size(0), f).saturating_mul(ceil_factor(size(1), f))
            }
        }
    }
}

/// The cost of a call to a built-in overload, given the sizes of its arguments (receiver
/// first). `overload` is the overload id the checker resolved, or "" when there is none
/// (unchecked expressions, calls with several candidate overloads): such calls cost 1, as in
/// cel-go.
pub fn builtin_call_cost(overload: &str, sizes: &[u64]) -> u64 {
    builtin_call_cost_with(overload, &|i| sizes.get(i).copied().unwrap_or(1))
}

/// Whether a built-in overload's cost depends on its arguments' sizes; `Some(cost)` when it
/// does not (most calls cost 1), so that evaluators need not measure anything.
pub fn builtin_fixed_cost(overload: &str) -> Option<u64> {
    CostFormula::of(overload).fixed()
}

/// [`builtin_call_cost`] with sizes computed on demand (`size(i)` is the size of argument
/// `i`), so that a call whose cost does not depend on a size never measures it.
pub fn builtin_call_cost_with(overload: &str, size: &dyn Fn(usize) -> u64) -> u64 {
    CostFormula::of(overload).eval(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_from_cel_go() {
        // `input.matches('[0-9]')` over 500 characters: 51 × 2.
        assert_eq!(builtin_call_cost(ov::MATCHES_STRING, &[500, 5]), 102);
        // `input.contains(arg1)`, 500 and 500: 50 × 50.
        assert_eq!(builtin_call_cost(ov::CONTAINS_STRING, &[500, 500]), 2500);
        // Two empty strings compare for free; scalars cost 1.
        assert_eq!(builtin_call_cost("equals", &[0, 0]), 0);
        assert_eq!(builtin_call_cost("equals", &[1, 1]), 1);
        assert_eq!(builtin_call_cost("equals", &[20, 30]), 2);
        assert_eq!(builtin_call_cost(ov::STARTS_WITH_STRING, &[3, 500]), 50);
        assert_eq!(builtin_call_cost(ov::IN_LIST, &[1, 3]), 3);
        assert_eq!(builtin_call_cost(ov::ADD_STRING, &[16, 10]), 3);
        assert_eq!(builtin_call_cost("", &[100, 100]), 1);
        assert_eq!(builtin_call_cost(ov::SIZE_STRING, &[100]), 1);
    }
}
