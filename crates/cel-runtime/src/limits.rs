//! Upper bounds on the size of values built during evaluation.
//!
//! Expressions come from untrusted users, and a few operations can build values far larger
//! than their inputs at little cost: `l + l` costs 1 in cel-go whatever the lists' sizes, so
//! twenty-six nested `cel.bind` doublings of a one-element list would ask for 2²⁶ elements;
//! `replace` with an empty pattern multiplies a string's length. Every such operation computes
//! (or bounds) its result's size first and fails with an ordinary CEL error instead of
//! attempting an allocation beyond these limits.
//!
//! A bound on each value is not enough: `l.map(a, a + a)` over a list of a thousand 32 MiB
//! strings builds 64 GiB at a cost of a few thousand. So an evaluation also has an
//! allowance of [`MAX_BUILT_BYTES`] for everything these operations build (a list element
//! counts as the size of a [`Value`]), opened by each backend's entry point with
//! [`BuildAllowance::enter`]; an operation past it fails the same way. Regular expressions
//! compiled while evaluating (patterns that are not constants, or too large to cache) draw on
//! it too ([`check_pattern_compile`]): an expression could otherwise compile a large pattern
//! at each of a million cheap calls.
//!
//! The limits are above what any Kubernetes object holds (a request body is at most 3 MiB)
//! and what an evaluation under Kubernetes' per-call cost limit (10⁶ units, at least 0.1 per
//! costed byte) builds from strings, and low enough that the worst an expression can do with
//! cost-free doublings (`[x].map(a, a + a)[0]`, nested, each level doubling `x`) stays a
//! few hundred MiB rather than exhausting memory. They are not a substitute for a cost limit,
//! which bounds time as well.

use std::cell::Cell;

use crate::{Error, Result, Value};

/// The largest string or bytes value (in bytes) an operation builds: 64 MiB.
pub const MAX_RESULT_BYTES: usize = 1 << 26;

/// The largest list (in elements) an operation builds: 2²² (4,194,304), 96 MiB of values.
/// `lists.range` keeps cel-go's own bound (10,000,000, at a cost of as much), so a list that
/// long can be made but not concatenated.
pub const MAX_LIST_ELEMENTS: usize = 1 << 22;

/// The most an evaluation may build with the operations checked here (in bytes, list
/// elements counted at the size of a [`Value`]): 256 MiB, four times the largest string.
pub const MAX_BUILT_BYTES: u128 = 1 << 28;

/// [`ALLOWANCE`] outside any evaluation.
const NO_EVALUATION: u64 = u64::MAX;

thread_local! {
    /// What the evaluation running on this thread may still build, or [`NO_EVALUATION`]
    /// (a library function called directly is bounded per value only). A plain `u64` cell:
    /// every evaluation opens and closes it, so it must cost next to nothing.
    static ALLOWANCE: Cell<u64> = const { Cell::new(NO_EVALUATION) };
}

/// The allowance of the evaluation running on this thread, open while this guard lives.
/// Evaluations nest (a host function may evaluate another program; native code hands over
/// to the interpreter), each with its own allowance, and the outer one's resumes when the
/// inner one's guard drops.
#[must_use = "the allowance closes when the guard drops"]
pub struct BuildAllowance {
    outer: u64,
}

impl BuildAllowance {
    /// Opens a fresh allowance of [`MAX_BUILT_BYTES`] for an evaluation on this thread.
    #[inline]
    pub fn enter() -> BuildAllowance {
        BuildAllowance {
            outer: ALLOWANCE.replace(MAX_BUILT_BYTES as u64),
        }
    }
}

impl Drop for BuildAllowance {
    #[inline]
    fn drop(&mut self) {
        ALLOWANCE.set(self.outer);
    }
}

/// Takes `bytes` from the running evaluation's allowance, or fails `what` when they do not
/// fit.
#[inline]
fn spend(what: &str, bytes: u128) -> Result<()> {
    let left = ALLOWANCE.get();
    if left == NO_EVALUATION {
        return Ok(());
    }
    match u64::try_from(bytes) {
        Ok(bytes) if bytes <= left => {
            ALLOWANCE.set(left - bytes);
            Ok(())
        }
        _ => Err(over_allowance(what)),
    }
}

/// The error of [`spend`], out of line: the checks are inlined where values are built.
#[cold]
fn over_allowance(what: &str) -> Error {
    Error::new(format!(
        "{what}: evaluation exceeds its allowance for built values ({MAX_BUILT_BYTES} bytes)"
    ))
}

/// The error of [`check_bytes`] for a result past [`MAX_RESULT_BYTES`].
#[cold]
fn too_many_bytes(what: &str) -> Error {
    Error::new(format!(
        "{what}: result size exceeds maximum allowed ({MAX_RESULT_BYTES} bytes)"
    ))
}

/// Fails when `what` would build a string or bytes value of `bytes` bytes, more than
/// [`MAX_RESULT_BYTES`] or more than the evaluation's allowance has left.
#[inline]
pub fn check_bytes(what: &str, bytes: u128) -> Result<()> {
    if bytes > MAX_RESULT_BYTES as u128 {
        return Err(too_many_bytes(what));
    }
    spend(what, bytes)
}

/// [`check_bytes`] for several values built one after the other, all or nothing: `largest`
/// is the largest one's size and `total` their sizes added up. When each fits
/// [`MAX_RESULT_BYTES`] and together they fit what the running evaluation's allowance has
/// left, takes `total` from it and answers `true`; otherwise takes nothing and answers
/// `false` (the caller then builds them one by one, and [`check_bytes`] gives the error of
/// the one that does not fit).
#[inline]
pub fn try_spend_bytes(largest: u128, total: u128) -> bool {
    if largest > MAX_RESULT_BYTES as u128 {
        return false;
    }
    let left = ALLOWANCE.get();
    if left == NO_EVALUATION {
        return true;
    }
    match u64::try_from(total) {
        Ok(total) if total <= left => {
            ALLOWANCE.set(left - total);
            true
        }
        _ => false,
    }
}

/// Fails when `what` would build a list of `elements` elements, more than
/// [`MAX_LIST_ELEMENTS`] or more than the evaluation's allowance has left.
pub fn check_elements(what: &str, elements: u128) -> Result<()> {
    if elements > MAX_LIST_ELEMENTS as u128 {
        return Err(Error::new(format!(
            "{what}: result size exceeds maximum allowed ({MAX_LIST_ELEMENTS} elements)"
        )));
    }
    spend(what, elements * std::mem::size_of::<Value>() as u128)
}

/// How many times its size a regular expression compiled during an evaluation counts
/// against the allowance: compiling is slow (about 10 ms per MiB), so an evaluation may
/// compile [`MAX_BUILT_BYTES`] / 8, 32 MiB, of patterns.
const PATTERN_WEIGHT: u128 = 8;

/// Takes from the running evaluation's allowance the work of compiling a regular expression
/// within `size_limit` bytes (see `regex::compile_cached`), or fails when it does not fit.
pub fn check_pattern_compile(size_limit: usize) -> Result<()> {
    spend(
        "compiling a regular expression",
        size_limit as u128 * PATTERN_WEIGHT,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_inclusive() {
        assert!(check_bytes("x", MAX_RESULT_BYTES as u128).is_ok());
        assert_eq!(
            check_bytes("replace", MAX_RESULT_BYTES as u128 + 1)
                .unwrap_err()
                .message,
            "replace: result size exceeds maximum allowed (67108864 bytes)"
        );
        assert!(check_elements("x", MAX_LIST_ELEMENTS as u128).is_ok());
        assert_eq!(
            check_elements("_+_", u128::MAX).unwrap_err().message,
            "_+_: result size exceeds maximum allowed (4194304 elements)"
        );
    }

    #[test]
    fn an_evaluation_builds_at_most_its_allowance() {
        let chunk = MAX_RESULT_BYTES as u128;
        let rounds = MAX_BUILT_BYTES / chunk;
        // Outside an evaluation only each value is bounded.
        for _ in 0..=rounds {
            assert!(check_bytes("_+_", chunk).is_ok());
        }
        let outer = BuildAllowance::enter();
        for _ in 0..rounds - 1 {
            assert!(check_bytes("_+_", chunk).is_ok());
        }
        {
            // A nested evaluation has its own allowance; the outer one's resumes after it.
            let _inner = BuildAllowance::enter();
            for _ in 0..rounds {
                assert!(check_bytes("_+_", chunk).is_ok());
            }
            assert!(check_bytes("_+_", 1).is_err());
        }
        assert!(check_bytes("_+_", chunk).is_ok());
        assert_eq!(
            check_elements("_+_", 1).unwrap_err().message,
            "_+_: evaluation exceeds its allowance for built values (268435456 bytes)"
        );
        drop(outer);
        assert!(check_bytes("_+_", chunk).is_ok());
    }
}
