//! `cel-jit` compiles checked CEL expressions to native code with Cranelift.
//!
//! [`JitProgram::compile`] lowers a checked AST to the IR (`cel-ir`), emits one Cranelift
//! function for it (`emit`), and links it into a module of its own, freed when the program
//! drops. Generated code keeps statically typed scalars unboxed and calls the `extern "C"`
//! shims of `shims` (thin wrappers over `cel-runtime` and `cel_interp::ops`, the very
//! functions the interpreter uses) for everything else. Subtrees the lowering leaves to the
//! interpreter (residuals) are evaluated by `cel-interp` with the same activation and the same
//! cost counter, and an evaluation that goes over its cost limit is redone by the interpreter,
//! so results, errors and costs are the interpreter's in every case. The host calls native
//! code made are recorded and given back to the interpreter when it redoes them
//! (`cel_runtime::journal`), so a host function runs once per call either way.
//!
//! This is the only crate that depends on Cranelift, and with the helper ABI, the only one
//! whose `unsafe` runs generated code. It must not define what an operation means: that is
//! `cel-runtime`'s and the interpreter's. Its tests are in `tests/` (differential tests
//! against the interpreter, memory and thread-safety tests) and in the modules.

mod abi;
mod arena;
mod emit;
mod program;
mod shims;

pub use program::{JitOptions, JitProgram};

/// Why an expression could not be compiled (the caller interprets it instead).
#[derive(Clone, Debug)]
pub enum JitError {
    /// Code generation failed (a bug, reported rather than hidden).
    Codegen(String),
    /// The expression uses something generated code does not handle.
    Unsupported(String),
    /// The expression lowers to more IR instructions than the budget
    /// ([`JitOptions::budget`]): it is left to the interpreter.
    TooLarge {
        /// The budget it exceeded.
        budget: usize,
    },
    /// A constant folded ahead of evaluation failed, as it does for the interpreter.
    Eval(cel_runtime::Error),
}

impl std::fmt::Display for JitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JitError::Codegen(m) => write!(f, "code generation failed: {m}"),
            JitError::Unsupported(m) => write!(f, "not compiled: {m}"),
            JitError::TooLarge { budget } => write!(
                f,
                "not compiled: the expression needs more than {budget} IR instructions"
            ),
            JitError::Eval(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for JitError {}
