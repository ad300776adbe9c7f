//! Celerity: a Common Expression Language engine that gives the same answers as cel-go.
//!
//! Users depend on this crate alone. The pipeline is: build an [`Env`] (variables, functions,
//! container, options), [`compile`](Env::compile) an expression (parse and type-check,
//! returning every diagnostic as [`Issues`]), turn the [`Ast`] into a [`Program`], and
//! [`eval`](Program::eval) it against an [`Activation`] as many times as you like, from as
//! many threads as you like.
//!
//! ```
//! use celerity::{Env, MapActivation, Type, Value};
//!
//! let env = Env::builder()
//!     .variable("replicas", Type::Int)
//!     .variable("limits", Type::map(Type::String, Type::Int))
//!     .build();
//! let ast = env.compile("replicas <= limits['max'] && replicas > 0").unwrap();
//! assert_eq!(ast.result_type(), Some(&Type::Bool));
//!
//! let program = env.program(&ast).unwrap();
//! let vars = MapActivation::new()
//!     .with("replicas", 3i64)
//!     .with("limits", celerity::value_from_json(&serde_json::json!({"max": 5})).unwrap());
//! assert_eq!(program.eval(&vars).unwrap(), Value::Bool(true));
//!
//! // Diagnostics come in cel-go's form.
//! let err = env.compile("replicas + 'x'").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "ERROR: <input>:1:10: found no matching overload for '_+_' applied to '(int, string)'\n | replicas + 'x'\n | .........^"
//! );
//! ```
//!
//! The Kubernetes environment of each Kubernetes version (its libraries, options and costs)
//! is [`KubernetesEnv`], in [`kubernetes`].
//!
//! Protobuf messages come from a descriptor pool ([`EnvBuilder::descriptor_pool`]); values
//! are converted with [`proto::from_message`] (see [`proto`] for what reads, presence,
//! literals and equality mean).
//!
//! Programs run on the interpreter or as native code compiled with Cranelift ([`Backend`]);
//! both give the same values, errors and costs. Under [`Backend::Auto`], the default, a
//! program is interpreted at first and compiled off the request path once it has run
//! [`Backend::AUTO_JIT_AFTER`] times (on a background thread, or the host's executor:
//! [`EnvBuilder::compile_executor`]); [`Program::native_status`] and
//! [`EnvBuilder::on_native_compile`] report how its compile went.
//!
//! This crate only assembles the others (`cel-syntax`, `cel-types`, `cel-checker`,
//! `cel-runtime`, `cel-interp`, `cel-jit`, `cel-ext`, `cel-cost`, `cel-k8s`); nothing in
//! `crates/` depends on it.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// Builder-style setters for the public fields of an options struct that is
/// `#[non_exhaustive]` (so it can grow without breaking hosts, which build it from its
/// `default()` and these setters). Exported for `celerity-kubernetes`'s options.
#[doc(hidden)]
#[macro_export]
macro_rules! option_setters {
    ($ty:ident { $($field:ident: $t:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("Sets [`", stringify!($ty), "::", stringify!($field), "`].")]
                pub fn $field(mut self, value: $t) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

mod ast;
mod deadline;
mod env;
pub mod host_fn;
mod json;
pub mod kubernetes;
mod native;
mod native_cache;
mod program;
mod rust_values;
mod tiering;
mod validate;

pub use ast::{Ast, Issues};
pub use cel_cost::{
    ActualCostFn, CallEstimate, CostKey, CostRange, EstimateArg, EstimateFn, EstimateNode,
    HookScope, NoSizes, PathSizes, ResultSizeFn, SizeEstimator, SizeRange,
};
pub use cel_ext::{Library, LibraryContents};
pub use cel_runtime::proto::{
    self, DescriptorPool, DynamicMessage, MessageDescriptor, MessageValue,
};
pub use cel_runtime::{
    Activation, Duration, EmptyActivation, Error as EvalError, ErrorKind, Implementation, Key,
    ListValue, MapActivation, MapValue, OpaqueValue, Timestamp, Value,
};
pub use cel_syntax::{Diagnostic, Source};
pub use cel_types::{FunctionDecl, OlderCelGo, OverloadDecl, Primitive, Type, VariableDecl};
pub use deadline::Deadline;
pub use env::{BuildError, Env, EnvBuilder, EnvOptions};
pub use json::{
    JsonError, MAX_JSON_DEPTH, activation_from_json, activation_from_json_typed, value_from_json,
    value_from_json_typed, value_to_json, variable_from_json,
};
pub use kubernetes::KubernetesEnv;
pub use program::{Backend, EvalDetails, Program, ProgramOptions};
pub use rust_values::{SerdeError, from_value, to_value};
pub use tiering::{CompileReport, CompileSettings, CompileTask, DeclineReason, NativeStatus};

pub mod internals {
    //! The compiler's own representations behind the facade's types, for tools that need
    //! them: the parsed and checked trees ([`Ast::syntax`](crate::Ast::syntax),
    //! [`Ast::checked`](crate::Ast::checked)), the checker's environment
    //! ([`Env::checker_env`](crate::Env::checker_env)) and macros
    //! ([`EnvBuilder::add_macro`](crate::EnvBuilder::add_macro)). They follow the compiler
    //! and change with it; the rest of the facade does not depend on them.

    pub use cel_checker::{CheckedAst, CheckerEnv, Reference};
    pub use cel_syntax::ast;
    pub use cel_syntax::macros::{self, Macro};
}

/// Formats a value as a CEL literal that parses back to the same value (`5u`, `2.0`,
/// `b"\x00"`, `{"a": 1}` with keys sorted, `timestamp("...")`).
pub fn to_cel_literal(v: &Value) -> String {
    cel_runtime::format::to_cel_literal(v)
}
