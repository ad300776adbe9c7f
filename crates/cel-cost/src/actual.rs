//! Run-time costs of built-in calls, from the sizes of their arguments (cel-go's
//! `CostTracker.costCall` built-in switch, v0.29.2).
//!
//! A size here is cel-go's `actualSize`: code points of a string, bytes of bytes, entries of a
//! list or map, the wrapped value's size for a present optional, and 1 for anything else.

use crate::{REGEX_STRING_LENGTH_COST_FACTOR, STRING_TRAVERSAL_COST_FACTOR, ceil_factor};

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
    match overload {
        "starts_with_string"
        | "ends_with_string"
        | "string_to_bytes"
        | "bytes_to_string"
        | "strings_quote"
        | "string_format"
        | "in_list"
        | "less_string"
        | "greater_string"
        | "less_equals_string"
        | "greater_equals_string"
        | "less_bytes"
        | "greater_bytes"
        | "less_equals_bytes"
        | "greater_equals_bytes"
        | "equals"
        | "not_equals"
        | "add_string"
        | "add_bytes"
        | "matches_string"
        | "matches"
        | "contains_string" => None,
        _ => Some(1),
    }
}

/// [`builtin_call_cost`] with sizes computed on demand (`size(i)` is the size of argument
/// `i`), so that a call whose cost does not depend on a size never measures it.
pub fn builtin_call_cost_with(overload: &str, size: &dyn Fn(usize) -> u64) -> u64 {
    let f = STRING_TRAVERSAL_COST_FACTOR;
    match overload {
        // v0.29+: the prefix or suffix, not the receiver.
        "starts_with_string" | "ends_with_string" => ceil_factor(size(1), f),
        "string_to_bytes" | "bytes_to_string" | "strings_quote" | "string_format" => {
            ceil_factor(size(0), f)
        }
        "in_list" => size(1),
        "less_string"
        | "greater_string"
        | "less_equals_string"
        | "greater_equals_string"
        | "less_bytes"
        | "greater_bytes"
        | "less_equals_bytes"
        | "greater_equals_bytes"
        | "equals"
        | "not_equals" => ceil_factor(size(0).min(size(1)), f),
        "add_string" | "add_bytes" => ceil_factor(size(0).saturating_add(size(1)), f),
        // v0.29+: the global form costs as the member form.
        "matches_string" | "matches" => {
            let str_cost = ceil_factor(size(0).saturating_add(1), f);
            let regex_cost = ceil_factor(size(1), REGEX_STRING_LENGTH_COST_FACTOR);
            str_cost.saturating_mul(regex_cost)
        }
        "contains_string" => ceil_factor(size(0), f).saturating_mul(ceil_factor(size(1), f)),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_from_cel_go() {
        // `input.matches('[0-9]')` over 500 characters: 51 × 2.
        assert_eq!(builtin_call_cost("matches_string", &[500, 5]), 102);
        // `input.contains(arg1)`, 500 and 500: 50 × 50.
        assert_eq!(builtin_call_cost("contains_string", &[500, 500]), 2500);
        // Two empty strings compare for free; scalars cost 1.
        assert_eq!(builtin_call_cost("equals", &[0, 0]), 0);
        assert_eq!(builtin_call_cost("equals", &[1, 1]), 1);
        assert_eq!(builtin_call_cost("equals", &[20, 30]), 2);
        assert_eq!(builtin_call_cost("starts_with_string", &[3, 500]), 50);
        assert_eq!(builtin_call_cost("in_list", &[1, 3]), 3);
        assert_eq!(builtin_call_cost("add_string", &[16, 10]), 3);
        assert_eq!(builtin_call_cost("", &[100, 100]), 1);
        assert_eq!(builtin_call_cost("size_string", &[100]), 1);
    }
}
