//! `cel-ir` is Celerity's intermediate representation for compiled CEL.
//!
//! A [`Function`] is a set of basic blocks with parameters holding typed SSA values:
//! unboxed `int`, `uint`, `double` and `bool` where the checker proved them, references to
//! runtime values otherwise, and explicit error handles. Instructions are named by what
//! they do; library calls carry cel-go's overload ids. [`lower`] builds a function from a
//! checked AST and the shared cost plan, [`verify`] checks it, [`passes`] fold constants and
//! aggregate costs, and the text form ([`print()`](fn@print)) is stable for snapshots.
//!
//! It depends on the front end (`cel-syntax`, `cel-types`, `cel-checker`) and the cost model
//! (`cel-cost`); it must not depend on runtime values, the interpreter or Cranelift, so that
//! lowering and its tests build without code generation. Its tests also take the extension
//! libraries' declarations and macros from `cel-ext` (which brings `cel-runtime`), but never
//! an evaluator, the facade or Cranelift.

#![forbid(unsafe_code)]

mod ir;
mod lower;
pub mod passes;
mod print;
mod verify;

pub use ir::{
    ArithOp, Block, BlockData, Builder, CmpOp, ConstId, Constant, Function, Inst, Op, Term, Ty,
    Value,
};
pub use lower::{LowerError, lower};
pub use print::print;
pub use verify::{VerifyError, verify};

/// The most IR instructions [`compile`] lowers an expression to by default. Cranelift's
/// compile time grows faster than linearly with a function's size; under this bound it stays
/// below a few tens of milliseconds (measured by `benches/benches/compile_curve.rs`), and
/// larger expressions are left to the interpreter, whose planning is linear.
pub const DEFAULT_BUDGET: usize = 3_000;

/// Why an expression was not compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompileError {
    /// It was not lowered (over budget).
    Lower(LowerError),
    /// The lowered function broke a rule (a bug).
    Verify(VerifyError),
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompileError::Lower(e) => e.fmt(f),
            CompileError::Verify(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CompileError {}

/// Lowers, verifies and optimises a checked expression within a budget of IR instructions:
/// what a backend compiles.
pub fn compile(
    checked: &cel_checker::CheckedAst,
    costs: &cel_cost::CostPlan,
    budget: usize,
) -> Result<Function, CompileError> {
    let mut f = lower(checked, costs, budget).map_err(CompileError::Lower)?;
    verify(&f).map_err(CompileError::Verify)?;
    passes::fold_constants(&mut f);
    passes::aggregate_costs(&mut f);
    verify(&f).map_err(CompileError::Verify)?;
    Ok(f)
}
