//! Cost helpers shared by the libraries: the size of a value as cel-go's extension trackers
//! see it, saturating arithmetic, and the small estimate builders cel-go's `ext` package
//! uses (`estimateSize`, `atLeastOne`, list allocation).
//!
//! Sizes follow cel-go's `actualSize` in `ext`: code points of a string, bytes of bytes,
//! entries of a list or map, and 1 for anything else (an optional counts 1 here, unlike the
//! core's rule, which unwraps it).

use cel_cost::{
    CALL_COST, CallEstimate, CostRange, EstimateArg, LIST_CREATE_BASE_COST, SizeRange, UNKNOWN,
    ceil_factor,
};
use cel_runtime::Value;

/// The string traversal factor, 0.1.
pub const STRING_FACTOR: f64 = cel_cost::STRING_TRAVERSAL_COST_FACTOR;

/// The regular-expression length factor, 0.25.
pub const REGEX_FACTOR: f64 = cel_cost::REGEX_STRING_LENGTH_COST_FACTOR;

/// The size of a value for the extension trackers: what [`Value::sizer_size`] reports (code
/// points of a string, bytes of bytes, entries of a list or map, a library type's size), 1
/// otherwise. Unlike the core tracker's, an optional counts as 1.
pub fn actual_size(v: &Value) -> u64 {
    v.sizer_size().unwrap_or(1)
}

/// The size range of an estimate argument; unknown when the estimator has none.
pub fn arg_size(a: &EstimateArg) -> SizeRange {
    a.size.unwrap_or(SizeRange::unknown())
}

/// The size of the `i`th estimate argument (receiver first), unknown when absent.
pub fn nth_size(args: &[EstimateArg], i: usize) -> SizeRange {
    args.get(i).map(arg_size).unwrap_or(SizeRange::unknown())
}

/// A size range with both bounds raised to at least 1 (cel-go's `atLeastOne`).
pub fn at_least_one(s: SizeRange) -> SizeRange {
    SizeRange {
        min: s.min.max(1),
        max: s.max.max(1),
    }
}

/// Saturating sum of several costs.
pub fn sum(parts: &[u64]) -> u64 {
    parts.iter().fold(0u64, |a, &b| a.saturating_add(b))
}

/// `uint64(float64(n) * f)`: Go's truncating conversion, saturating at `u64::MAX` (and 0 for
/// negative or NaN products).
pub fn trunc_factor(n: u64, f: f64) -> u64 {
    let v = n as f64 * f;
    if v.is_nan() || v <= 0.0 {
        0
    } else if v >= u64::MAX as f64 {
        UNKNOWN
    } else {
        v as u64
    }
}

/// Truncation of a non-negative float cost to an integer, saturating.
pub fn trunc_cost(v: f64) -> u64 {
    trunc_factor(1, v)
}

/// Ceiling of a non-negative float cost, saturating.
pub fn ceil_cost(v: f64) -> u64 {
    ceil_factor(1, v)
}

/// The call cost as a range.
pub const fn call_estimate() -> CostRange {
    CostRange::exact(CALL_COST)
}

/// An estimate with a result size.
pub fn estimate(cost: CostRange, size: Option<SizeRange>) -> CallEstimate {
    CallEstimate {
        cost,
        result_size: size,
    }
}

/// cel-go's `estimateAllocatingListCall`: `ceil(size · factor) + 1 + 10` per bound, the result
/// being a list of `result` elements.
pub fn allocating_list_estimate(
    factor: f64,
    cost_size: SizeRange,
    result: SizeRange,
) -> CallEstimate {
    let cost = cost_size
        .multiply_by_factor(factor)
        .add(call_estimate())
        .add(CostRange::exact(LIST_CREATE_BASE_COST));
    estimate(cost, Some(result))
}

/// cel-go's `trackAllocatingListCall`: `trunc(size · factor) + 1 + 10`, with a negative
/// factor counted as 1 (cel-go v0.29.2).
pub fn allocating_list_cost(factor: f64, size: u64) -> u64 {
    let factor = if factor < 0.0 { 1.0 } else { factor };
    sum(&[trunc_factor(size, factor), CALL_COST, LIST_CREATE_BASE_COST])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(actual_size(&Value::from("héllo")), 5);
        assert_eq!(actual_size(&Value::bytes(vec![1u8, 2])), 2);
        assert_eq!(actual_size(&Value::Int(7)), 1);
        assert_eq!(actual_size(&Value::optional_of(Value::from("abc"))), 1);
    }

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(sum(&[u64::MAX, 1]), u64::MAX);
        assert_eq!(trunc_factor(u64::MAX, 2.0), u64::MAX);
        assert_eq!(trunc_factor(36, 2.1), 75);
        assert_eq!(trunc_factor(5, -1.0), 0);
        assert_eq!(allocating_list_cost(-1.0, 22), 33);
        assert_eq!(at_least_one(SizeRange::exact(0)), SizeRange::exact(1));
    }
}
