//! `cel-runtime` holds CEL's values and the whole standard library as ordinary safe Rust.
//!
//! It owns [`Value`] (with heterogeneous numeric equality and ordering), errors as values
//! ([`Error`], carrying the id of the expression that raised them), checked arithmetic,
//! every conversion, string and bytes functions with code-point semantics, timestamps and
//! durations with time zones, regular expressions with RE2 semantics, and the table of
//! implementations keyed by cel-go's overload ids ([`FunctionRegistry`]), protobuf messages
//! over `prost-reflect` descriptors ([`proto`]), objects and lists typed by a schema
//! (Kubernetes' custom resources: [`object`]), the bounds on the size of values an
//! evaluation builds ([`limits`]), and the journal that keeps host calls to one per
//! evaluation ([`journal`]).
//!
//! The interpreter calls these functions directly; generated code calls the same functions
//! through thin shims. So the meaning of every operation is written here once.
//!
//! It must not depend on the front end (`cel-syntax`, `cel-checker`) or on any evaluator: it
//! knows nothing of syntax. It may use `cel-types` for type values and declarations.

#![forbid(unsafe_code)]

mod activation;
pub mod arith;
pub mod compare;
pub mod convert;
mod error;
pub mod format;
mod functions;
pub mod journal;
pub mod limits;
pub mod object;
pub mod optional;
pub mod proto;
pub mod regex;
pub mod stdlib;
pub mod strings;
pub mod time;
mod value;

pub use activation::{Activation, EmptyActivation, MapActivation};
pub use error::{Error, ErrorKind, Result};
pub use functions::{
    BinaryFn, FunctionRegistry, HostFn, Implementation, MapParams, NaryFn, ParamKinds, UnaryFn,
    value_matches,
};
pub use value::{
    Duration, Key, KeyRef, ListValue, MapHasher, MapValue, OpaqueMap, OpaqueValue, Timestamp, Value,
};
