//! (in progress)
pub(crate) fn register(_r: &mut crate::FunctionRegistry) {}
