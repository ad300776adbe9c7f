//! Upper bounds on the size of values built during evaluation.
//!
//! Expressions come from untrusted users, and a few operations can build values far larger
//! than their inputs at little cost: `l + l` costs 1 in cel-go whatever the lists' sizes, so
//! twenty-six nested `cel.bind` doublings of a one-element list would ask for 2²⁶ elements;
//! `replace` with an empty pattern multiplies a string's length. Every such operation computes
//! (or bounds) its result's size first and fails with an ordinary CEL error instead of
//! attempting an allocation beyond these limits.
//!
//! The limits are far above what an evaluation under Kubernetes' largest cost budget (10⁷
//! units, where each costed byte or element costs at least 0.1) builds from strings, and far
//! below what exhausts memory, so they only turn what would be an aborted process into an
//! error. They are not a substitute for a cost limit, which bounds time as well.

use crate::{Error, Result};

/// The largest string or bytes value (in bytes) an operation builds: 1 GiB.
pub const MAX_RESULT_BYTES: usize = 1 << 30;

/// The largest list (in elements) an operation builds: 2²⁶ (67,108,864), about 1.5 GiB of
/// values.
pub const MAX_LIST_ELEMENTS: usize = 1 << 26;

/// Fails when `what` would build a string or bytes value of `bytes` bytes, more than
/// [`MAX_RESULT_BYTES`].
pub fn check_bytes(what: &str, bytes: u128) -> Result<()> {
    if bytes > MAX_RESULT_BYTES as u128 {
        return Err(Error::new(format!(
            "{what}: result size exceeds maximum allowed ({MAX_RESULT_BYTES} bytes)"
        )));
    }
    Ok(())
}

/// Fails when `what` would build a list of `elements` elements, more than
/// [`MAX_LIST_ELEMENTS`].
pub fn check_elements(what: &str, elements: u128) -> Result<()> {
    if elements > MAX_LIST_ELEMENTS as u128 {
        return Err(Error::new(format!(
            "{what}: result size exceeds maximum allowed ({MAX_LIST_ELEMENTS} elements)"
        )));
    }
    Ok(())
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
            "replace: result size exceeds maximum allowed (1073741824 bytes)"
        );
        assert!(check_elements("x", MAX_LIST_ELEMENTS as u128).is_ok());
        assert_eq!(
            check_elements("_+_", u128::MAX).unwrap_err().message,
            "_+_: result size exceeds maximum allowed (67108864 elements)"
        );
    }
}
