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
//! lowering and its tests build without code generation.

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
pub use lower::lower;
pub use print::print;
pub use verify::{VerifyError, verify};

/// Lowers, verifies and optimises a checked expression: what a backend compiles.
pub fn compile(
    checked: &cel_checker::CheckedAst,
    costs: &cel_cost::CostPlan,
) -> Result<Function, VerifyError> {
    let mut f = lower(checked, costs);
    verify(&f)?;
    passes::fold_constants(&mut f);
    passes::aggregate_costs(&mut f);
    verify(&f)?;
    Ok(f)
}
