//! Recursion that cannot overflow the stack, for types and for the crates below the front end.
//!
//! The same guard as `cel_syntax::stack` (this crate may not depend on the front end, and the
//! runtime may depend on neither): when less than [`RED_ZONE`] bytes of stack remain, the
//! closure runs on a new heap-allocated segment of [`NEW_SEGMENT`] bytes (`stacker`), so a
//! recursive walk of a deep type or value goes on instead of overflowing. On a stack with room
//! to spare the cost is one comparison of the stack pointer with a thread-local limit.

/// How much stack must remain before a guarded call runs on the current stack: several times
/// the largest stack use between two guarded calls of any walk.
pub const RED_ZONE: usize = 64 * 1024;

/// The size of each new stack segment: hundreds of levels of any walk.
pub const NEW_SEGMENT: usize = 1024 * 1024;

/// Runs `f`, on a new stack segment if the current stack is nearly exhausted.
#[inline]
pub fn guarded<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, NEW_SEGMENT, f)
}
