//! The bindings extension (cel-go's `ext.Bindings()`, library `cel.lib.ext.cel.bindings`),
//! version 0.
//!
//! | function | signature | example | since |
//! |---|---|---|---|
//! | `cel.bind` | macro: `cel.bind(var, init, body)` | `cel.bind(a, 'hello', a + a)` → `'hellohello'` | 0 |
//!
//! `cel.bind(v, init, body)` expands to a comprehension over an empty list whose accumulator
//! is `v`, initialised to `init`, with the condition `false` and the result `body`. The
//! evaluator computes `init` lazily, the first time `v` is read, so an unused binding costs
//! nothing. `v` shadows any variable of the same name; `.v` still reaches the global. The
//! variable must be a simple name: `cel.bind() variable names must be simple identifiers`.
//!
//! cel-go's bindings version 1 adds the internal `cel.@block` used by the common
//! subexpression optimiser; it needs evaluator support and is not part of this library.
//!
//! # Costs
//!
//! No cost hooks: the expansion costs what its comprehension costs (the empty list 10, then
//! `init` once if read, then `body`).

use cel_syntax::macros::{ExprFactory, Macro, MacroError, ident_name};
use cel_syntax::{Expr, ExprKind, Literal};

use crate::{Library, LibraryContents};

/// The iteration variable of the comprehensions `cel.bind` builds (never bound to anything).
pub const UNUSED_ITER_VAR: &str = "#unused";

/// The bindings extension library.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bindings;

impl Library for Bindings {
    fn name(&self) -> &str {
        "cel.lib.ext.cel.bindings"
    }

    fn contents(&self) -> LibraryContents {
        LibraryContents {
            macros: vec![Macro::receiver("bind", 3, expand_bind)],
            ..LibraryContents::default()
        }
    }
}

/// Builds the comprehension of a binding: over `[]`, accumulator `var` = `init`, condition
/// `false`, result `body` (nodes created in cel-go's order).
pub fn bind_comprehension(f: &mut ExprFactory<'_>, var: &str, init: Expr, body: Expr) -> Expr {
    let range = f.list(Vec::new());
    let cond = f.literal(Literal::Bool(false));
    let step = f.ident(var);
    f.comprehension(range, UNUSED_ITER_VAR, None, var, init, cond, step, body)
}

fn expand_bind(
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
) -> Result<Option<Expr>, MacroError> {
    let Some(target) = target else {
        return Ok(None);
    };
    if !matches!(&target.kind, ExprKind::Ident(n) if n == "cel") {
        return Ok(None);
    }
    let Ok([var, init, body]) = <[Expr; 3]>::try_from(args) else {
        return Ok(None);
    };
    let Some(name) = ident_name(&var).map(str::to_string) else {
        return Err(f.error(
            var.id,
            "cel.bind() variable names must be simple identifiers",
        ));
    };
    Ok(Some(bind_comprehension(f, &name, init, body)))
}
