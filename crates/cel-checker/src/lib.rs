//! `cel-checker` type-checks a parsed CEL expression against declarations.
//!
//! It resolves identifiers and function names in a container, unifies type parameters,
//! chooses the overloads each call may use (keyed by cel-go's overload ids), and gives every
//! node a type, producing a [`CheckedAst`]. Gradual typing: `dyn` agrees with everything, and
//! calls whose argument types are only known at run time keep every overload that may apply.
//! Diagnostics use cel-go's words ("found no matching overload for '_+_' applied to
//! '(int, string)'", "undeclared reference to 'x' (in container '')").
//!
//! It depends on `cel-syntax` (the AST) and `cel-types` (types and declarations) only: it must
//! not depend on the runtime or any evaluator.

#![forbid(unsafe_code)]

mod check;
mod env;
mod print;
mod unify;

pub use check::{CheckedAst, Reference, check};
pub use env::{CheckerEnv, CheckerOptions};
pub use print::format_checked;
