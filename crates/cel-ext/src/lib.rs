//! `cel-ext` holds cel-go's extension libraries, each one thing made of declarations (for the
//! checker), implementations (for both evaluators), macros (for the parser) and, as the cost
//! model lands, cost formulas, behind one [`Library`] trait.
//!
//! Libraries are versioned as cel-go versions them, so an environment can ask for exactly
//! what Kubernetes enables (strings version 2, lists version 3, ...).
//!
//! It depends on `cel-syntax` (macros), `cel-types` (declarations) and `cel-runtime`
//! (values); it must not depend on the checker, the interpreter, the JIT or the facade. The
//! meaning of each function is written here, or in `cel-runtime` when the core needs it too.

mod comprehensions;

pub use comprehensions::TwoVarComprehensions;

use cel_runtime::Implementation;
use cel_syntax::macros::Macro;
use cel_types::{FunctionDecl, VariableDecl};

/// What a library adds to an environment.
#[derive(Clone, Debug, Default)]
pub struct LibraryContents {
    /// Variables and constants it declares.
    pub variables: Vec<VariableDecl>,
    /// Functions it declares, with cel-go's overload ids.
    pub functions: Vec<FunctionDecl>,
    /// Implementations by overload id.
    pub implementations: Vec<(String, Implementation)>,
    /// Macros it adds to the parser.
    pub macros: Vec<Macro>,
}

/// A library of CEL functions, macros and declarations.
pub trait Library: Send + Sync + std::fmt::Debug {
    /// cel-go's name for the library (`cel.lib.ext.strings`), used to avoid adding one twice.
    fn name(&self) -> &str;

    /// What the library adds.
    fn contents(&self) -> LibraryContents;
}

/// Every extension library at its newest version, as the conformance suite expects them.
pub fn all_libraries() -> Vec<Box<dyn Library>> {
    vec![Box::new(TwoVarComprehensions)]
}
