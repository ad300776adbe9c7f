//! The IR native code is generated from, for tests that check what an expression lowers to.
//! A test binary declares it with `#[path = "support/ir.rs"] mod ir;`.

use celerity::{Backend, Env, ProgramOptions};

/// The IR of `expr`, compiled for native code with its text kept.
pub fn ir_of(env: &Env, expr: &str) -> String {
    let ast = env.compile(expr).unwrap();
    let options = ProgramOptions::default()
        .backend(Backend::Jit)
        .keep_code_text(true);
    let program = env.program_with(&ast, options).unwrap();
    program.ir_text().expect("the IR kept").to_owned()
}
