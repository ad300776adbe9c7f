//! `cel-ir` is Celerity's intermediate representation for compiled CEL.
//!
//! A [`Function`] is a set of basic blocks with parameters holding typed SSA values:
//! unboxed `int`, `uint`, `double` and `bool` where the checker proved them, references to
//! runtime values otherwise, and explicit error handles. Instructions are named by what
//! they do; library calls carry cel-go's overload ids. [`lower`] builds a function from a
//! checked AST and the shared cost plan, [`verify`] checks it, [`passes`] fold constants,
//! simplify the control flow, hoist loop-invariant reads, share repeated reads and aggregate
//! costs, and the text form
//! ([`print()`](fn@print)) is stable for snapshots.
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
/// below a few tens of milliseconds (measured by `benches/src/bin/compile-curve.rs`), and
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
/// what a backend compiles. (`compile_with` with nothing assumed of the backend.)
pub fn compile(
    checked: &cel_checker::CheckedAst,
    costs: &cel_cost::CostPlan,
    budget: usize,
) -> Result<Function, CompileError> {
    compile_with(
        checked,
        costs,
        CompileOptions {
            budget,
            variables_checked_on_entry: false,
            older: cel_types::OlderCelGo::NONE,
        },
    )
}

/// How to compile, and what the backend guarantees that the passes may rely on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// The most instructions the lowering may produce (see [`DEFAULT_BUDGET`]).
    pub budget: usize,
    /// The backend resolves every variable the function reads before running it, and
    /// hands an evaluation to the interpreter instead when one is unbound or a variable
    /// declared with a scalar type ([`declared_scalar`]) holds a value of another type. Then
    /// no `load.var` fails, nor an `unbox` of a variable to its declared scalar type, and
    /// the passes remove their error paths.
    pub variables_checked_on_entry: bool,
    /// The behaviours of an older cel-go the interpreter's plan reproduces (the planner's
    /// `PlanEnv::older`), which the lowering must reproduce too.
    pub older: cel_types::OlderCelGo,
}

/// [`compile`] with options.
pub fn compile_with(
    checked: &cel_checker::CheckedAst,
    costs: &cel_cost::CostPlan,
    options: CompileOptions,
) -> Result<Function, CompileError> {
    let mut f =
        lower(checked, costs, options.budget, options.older).map_err(CompileError::Lower)?;
    verify(&f).map_err(CompileError::Verify)?;
    passes::fold_constants(&mut f);
    let never_errors = if options.variables_checked_on_entry {
        variable_handles(&f, checked)
    } else {
        Vec::new()
    };
    passes::simplify_control_flow(&mut f, &never_errors);
    passes::hoist_invariant_reads(&mut f, options.variables_checked_on_entry);
    passes::share_reads(&mut f, options.variables_checked_on_entry);
    passes::aggregate_costs(&mut f);
    verify(&f).map_err(CompileError::Verify)?;
    Ok(f)
}

/// The IR type of a variable declared with a scalar type (`int`, `uint`, `double`,
/// `bool`), whose values a backend may check on entry (see
/// [`CompileOptions::variables_checked_on_entry`]).
pub fn declared_scalar(declared: &cel_types::Type) -> Option<Ty> {
    match declared {
        cel_types::Type::Int => Some(Ty::Int),
        cel_types::Type::Uint => Some(Ty::Uint),
        cel_types::Type::Double => Some(Ty::Double),
        cel_types::Type::Bool => Some(Ty::Bool),
        _ => None,
    }
}

/// The error handles of reading variables checked on entry: every `load.var`'s, and those
/// of `unbox`ing a variable to its declared scalar type.
fn variable_handles(func: &Function, checked: &cel_checker::CheckedAst) -> Vec<Value> {
    let insts = || func.blocks.iter().flat_map(|b| &b.insts);
    let mut declared = std::collections::HashMap::new();
    let mut handles = Vec::new();
    for inst in insts() {
        if let (Op::LoadVar(_), [value, err]) = (&inst.op, inst.results.as_slice()) {
            handles.push(*err);
            if let Some(ty) = declared_scalar(checked.type_of(inst.expr)) {
                declared.insert(*value, ty);
            }
        }
    }
    for inst in insts() {
        if let (Op::Unbox(ty), [var], [_, err]) =
            (&inst.op, inst.args.as_slice(), inst.results.as_slice())
            && declared.get(var) == Some(ty)
        {
            handles.push(*err);
        }
    }
    handles
}
