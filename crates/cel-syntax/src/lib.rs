//! `cel-syntax` turns CEL source text into an [`Ast`].
//!
//! It owns the lexer, the recursive-descent parser for the whole grammar of cel-spec's
//! `langdef.md`, macro expansion (through a [`macros::MacroTable`] that libraries extend),
//! source positions, diagnostics rendered in cel-go's text form, and the unparser.
//!
//! It must not depend on anything else in the workspace: it knows nothing of types, values or
//! evaluation. Parsing never fails and never panics: [`parse`] returns an AST (with
//! [`ExprKind::Error`] placeholders where the input was unreadable) plus diagnostics.
//!
//! The parser follows cel-go (the reference implementation) rather than the letter of the
//! spec where the two differ: same ids, same positions, same macro expansions, same messages.

#![forbid(unsafe_code)]

pub mod ast;
mod debug;
mod lexer;
mod literal;
pub mod macros;
pub mod operators;
mod parser;
pub mod source;
pub mod stack;
mod unparse;

pub use ast::*;
pub use debug::debug_string;
pub use parser::{AST_DEPTH_ALLOWANCE, Parsed, ParserOptions, parse};
pub use source::{Diagnostic, Location, Source, render_diagnostics};
pub use unparse::{UnparseError, unparse};
