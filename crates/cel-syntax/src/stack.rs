//! Recursion that cannot overflow the stack.
//!
//! The front end, the checker, the planner and the evaluators walk the AST recursively. The
//! parser bounds the depth of an AST (see [`crate::ParserOptions`]), but the bound can be
//! raised through the API, and a thread's stack may be small (async runtimes' worker threads,
//! 128 KiB test threads). So every recursive walk of an AST, a type or a value goes through
//! [`guarded`]: when less than [`RED_ZONE`] bytes of stack remain, the closure runs on a new
//! heap-allocated stack segment of [`NEW_SEGMENT`] bytes (with the `stacker` crate), and the
//! recursion goes on there. On a stack with room to spare the cost is a comparison of the
//! stack pointer with a thread-local limit.

/// How much stack must remain before a guarded call runs on the current stack. It must
/// exceed the largest stack use of any code between two guarded calls (one level of a walk:
/// a parser production, the checker's visit of a node, an evaluator's `eval`, with their
/// locals and the library functions they call); 64 KiB is several times the largest frame
/// measured in release and debug builds.
pub const RED_ZONE: usize = 64 * 1024;

/// The size of each stack segment allocated when the red zone is reached: 1 MiB holds
/// hundreds of levels of any walk, so segments are allocated rarely (one per few hundred
/// levels of a deep input) and freed as the recursion unwinds.
pub const NEW_SEGMENT: usize = 1024 * 1024;

/// Runs `f`, on a new stack segment if the current stack is nearly exhausted. Wrap the body
/// of every function that recurses over input-shaped data (ASTs, types, values) in it.
#[inline]
pub fn guarded<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, NEW_SEGMENT, f)
}

/// Drops `value` where the stack allows: at once, or on a new stack segment when the current
/// stack is within the red zone. For the `Drop` of a recursive type whose drop glue recurses
/// (a planned tree): call it with the node's contents moved out when
/// [`near_limit`] says so, and the glue goes on on the new segment.
pub fn drop_on_new_segment<T>(value: T) {
    stacker::grow(NEW_SEGMENT, move || drop(value));
}

/// Whether less than [`RED_ZONE`] bytes of stack remain on this thread (false where the
/// stack's extent is unknown).
#[inline]
pub fn near_limit() -> bool {
    stacker::remaining_stack().is_some_and(|left| left < RED_ZONE)
}
