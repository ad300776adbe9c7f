//! The bindings extension (cel-go's `ext.Bindings()`, library `cel.lib.ext.cel.bindings`),
//! versions 0 and 1, and the `cel.block` test macros of cel-go's conformance environment.
//!
//! | function | signature | example | since |
//! |---|---|---|---|
//! | `cel.bind` | macro: `cel.bind(var, init, body)` | `cel.bind(a, 'hello', a + a)` → `'hellohello'` | 0 |
//! | `cel.@block` | `cel.@block(list(dyn), T) -> T` (`cel_block_list`), internal | — | 1 |
//!
//! `cel.bind(v, init, body)` expands to a comprehension over an empty list whose accumulator
//! is `v`, initialised to `init`, with the condition `false` and the result `body`. The
//! evaluator computes `init` lazily, the first time `v` is read, so an unused binding costs
//! nothing. `v` shadows any variable of the same name; `.v` still reaches the global. The
//! variable must be a simple name: `cel.bind() variable names must be simple identifiers`.
//!
//! Version 1 declares `cel.@block([e0, e1, ...], result)`, the block of common subexpressions
//! that optimisers write: within `result` (and within each `ei`) the identifier `@indexN`
//! stands for the value of `eN`, computed at most once, when it is first read (a forward
//! reference works; a subexpression that needs its own value fails with "no such
//! attribute(s)"). The checker treats it as an ordinary call whose type is the result's; the
//! first argument must be a list literal, which is never built. The evaluator plans the call
//! itself (as cel-go's bindings library does with a program decorator), so its registered
//! implementation only reports misuse. One departure from cel-go: subexpressions whose first
//! reads nest deeper than the parser's largest AST depth (each counted by its own AST depth)
//! fail with "cel.@block subexpressions nested too deeply", where cel-go, on Go's growable
//! stacks, would carry on; otherwise a chain of deep subexpressions could exhaust the stack.
//!
//! [`BlockTestMacros`] is what cel-go's conformance test adds to its environment for the
//! `block_ext` tests: the test-only macros `cel.block`, `cel.index`, `cel.iterVar` and
//! `cel.accuVar` ([`cel_syntax::macros::block_test_macros`]) and the variables `@index0` to
//! `@index29`, declared `dyn` (standing in for the types an optimiser would declare).
//!
//! # Costs
//!
//! No cost hooks. A binding costs what its comprehension costs (the empty list 10, then
//! `init` once if read, then `body`). A block costs what cel-go's cost tracker charges for
//! it: each subexpression once, when first read, plus 1 for every read of an `@indexN`
//! identifier, plus the result; the block call and its list literal cost nothing.

use cel_runtime::{Error, Implementation, Value};
use cel_syntax::macros::{
    BLOCK_FUNCTION, BLOCK_INDEX_PREFIX, ExprFactory, Macro, MacroError, block_test_macros,
    ident_name,
};
use cel_syntax::{Expr, ExprKind, Literal};
use cel_types::{FunctionDecl, OverloadDecl, Type, VariableDecl};

use crate::{Library, LibraryContents};

/// The newest version of the bindings library.
pub const LATEST_VERSION: u32 = 1;

/// The overload id of [`BLOCK_FUNCTION`].
pub const BLOCK_OVERLOAD: &str = "cel_block_list";

/// How many `@indexN` variables [`BlockTestMacros`] declares (`@index0` to `@index29`), as in
/// cel-go's conformance test.
pub const MAX_BLOCK_TEST_INDICES: usize = 30;

/// The iteration variable of the comprehensions `cel.bind` builds (never bound to anything).
pub const UNUSED_ITER_VAR: &str = "#unused";

/// The bindings extension library at a version (0 or 1; `Default` is the newest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bindings {
    version: u32,
}

impl Default for Bindings {
    fn default() -> Self {
        Bindings::version(LATEST_VERSION)
    }
}

impl Bindings {
    /// The library at `version` (cel-go's `ext.BindingsVersion`).
    pub fn version(version: u32) -> Bindings {
        Bindings { version }
    }
}

impl Library for Bindings {
    fn name(&self) -> &str {
        "cel.lib.ext.cel.bindings"
    }

    fn contents(&self) -> LibraryContents {
        let mut c = LibraryContents {
            macros: vec![Macro::receiver("bind", 3, expand_bind)],
            ..LibraryContents::default()
        };
        if self.version >= 1 {
            let t = Type::param("T");
            c.functions.push(FunctionDecl::new(
                BLOCK_FUNCTION,
                vec![OverloadDecl::global(
                    BLOCK_OVERLOAD,
                    vec![Type::list(Type::Dyn), t.clone()],
                    t,
                )],
            ));
            c.implement(BLOCK_OVERLOAD, Implementation::Nary(unplanned_block));
        }
        c
    }
}

/// What a `cel.@block` call does if it reaches a function call rather than the evaluator's
/// block (it never does in `cel-interp`): an error, as its indices would have no values.
fn unplanned_block(_: &[Value]) -> Result<Value, Error> {
    Err(Error::new(format!(
        "{BLOCK_FUNCTION} must be planned as a block, not called"
    )))
}

/// cel-go's conformance-test library `cel.lib.ext.cel.block.conformance`: the `cel.block`,
/// `cel.index`, `cel.iterVar` and `cel.accuVar` macros and the variables `@index0` to
/// `@index29` of type `dyn`. It is meant for conformance environments (it is part of
/// [`crate::all_libraries`], which the conformance runner uses); `cel.@block` itself comes from
/// [`Bindings`] version 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockTestMacros;

impl Library for BlockTestMacros {
    fn name(&self) -> &str {
        "cel.lib.ext.cel.block.conformance"
    }

    fn contents(&self) -> LibraryContents {
        LibraryContents {
            variables: (0..MAX_BLOCK_TEST_INDICES)
                .map(|i| VariableDecl::new(format!("{BLOCK_INDEX_PREFIX}{i}"), Type::Dyn))
                .collect(),
            macros: block_test_macros(),
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
