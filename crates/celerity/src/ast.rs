//! [`Ast`] and [`Issues`]: compiled expressions and compile-time diagnostics.

use std::fmt;

use cel_checker::CheckedAst;
use cel_syntax::{Diagnostic, Source};
use cel_types::Type;

/// A parsed, and possibly type-checked, expression.
#[derive(Clone, Debug)]
pub struct Ast {
    pub(crate) source: Source,
    pub(crate) parsed: cel_syntax::Ast,
    pub(crate) checked: Option<CheckedAst>,
    /// The environment that made this tree (its id): parsed it and, if it is checked,
    /// checked it too. `None` when two environments shared the work. Only an environment's
    /// own trees may use its cache of native programs (`native_cache`).
    pub(crate) origin: Option<u64>,
}

impl Ast {
    /// The expression text.
    pub fn source(&self) -> &str {
        self.source.text()
    }

    /// Whether the expression has been type-checked.
    pub fn is_checked(&self) -> bool {
        self.checked.is_some()
    }

    /// The type the checker deduced for the whole expression (`None` if unchecked).
    pub fn result_type(&self) -> Option<&Type> {
        self.checked.as_ref().map(|c| c.result_type())
    }

    /// The parsed syntax tree (before checking): one of the compiler's own representations
    /// ([`internals`](crate::internals)).
    pub fn syntax(&self) -> &crate::internals::ast::Ast {
        &self.parsed
    }

    /// The checked tree with types and references, if checked: one of the compiler's own
    /// representations ([`internals`](crate::internals)).
    pub fn checked(&self) -> Option<&crate::internals::CheckedAst> {
        self.checked.as_ref()
    }

    /// The expression written back as CEL text.
    pub fn unparse(&self) -> Option<String> {
        cel_syntax::unparse(&self.parsed).ok()
    }

    /// The parsed tree in the parser's debug form (expression ids, macros expanded).
    pub fn syntax_text(&self) -> String {
        cel_syntax::debug_string(&self.parsed)
    }

    /// The checked tree with each node's type and reference, if checked.
    pub fn checked_text(&self) -> Option<String> {
        self.checked.as_ref().map(cel_checker::format_checked)
    }
}

/// Diagnostics from parsing or checking, rendered in cel-go's form by `Display`:
///
/// ```text
/// ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'
///  | 1 + 'a'
///  | ..^
/// ```
#[derive(Clone, Debug)]
pub struct Issues {
    diagnostics: Vec<Diagnostic>,
    source: Source,
}

impl Issues {
    pub(crate) fn new(diagnostics: Vec<Diagnostic>, source: Source) -> Issues {
        Issues {
            diagnostics,
            source,
        }
    }

    /// The individual diagnostics.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The source they refer to.
    pub fn source(&self) -> &Source {
        &self.source
    }
}

impl fmt::Display for Issues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&cel_syntax::render_diagnostics(
            &self.diagnostics,
            &self.source,
        ))
    }
}

impl std::error::Error for Issues {}
