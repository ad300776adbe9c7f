//! `cel-types` is CEL's type system and its declarations.
//!
//! It owns [`Type`], the declarations of variables and functions ([`VariableDecl`],
//! [`FunctionDecl`], [`OverloadDecl`] keyed by cel-go's overload ids), name resolution in a
//! [`Container`], the [`TypeProvider`] trait through which message types arrive, and the
//! declarations of the standard library ([`stdlib`]).
//!
//! It must not depend on anything else in the workspace: it knows nothing of syntax, values
//! or evaluation, so that both the checker (front end) and the runtime can use it.

#![forbid(unsafe_code)]

mod decls;
mod older;
pub mod overloads;
mod parse;
pub mod stack;
pub mod stdlib;
mod types;

pub use decls::{
    Container, FieldType, FunctionDecl, NoTypes, OverloadDecl, TypeProvider, VariableDecl,
};
pub use older::OlderCelGo;
pub use types::{OPTIONAL_TYPE_NAME, Primitive, Type};
