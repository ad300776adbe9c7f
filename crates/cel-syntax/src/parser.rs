//! Placeholder until the parser lands.
use crate::macros::MacroTable;
use crate::{Ast, Diagnostic, Expr, ExprKind, Source, SourceInfo};

/// Parser settings.
#[derive(Clone, Debug)]
pub struct ParserOptions {
    /// Maximum nesting depth (cel-go: 250).
    pub max_recursion_depth: usize,
    /// Maximum expression size in code points (cel-go: 100,000).
    pub expression_size_limit: usize,
    /// Whether `.?`, `[?`, `?e` and `?k:` are accepted.
    pub enable_optional_syntax: bool,
    /// The macros to expand.
    pub macros: MacroTable,
}

impl Default for ParserOptions {
    fn default() -> Self {
        ParserOptions {
            max_recursion_depth: 250,
            expression_size_limit: 100_000,
            enable_optional_syntax: true,
            macros: MacroTable::standard(),
        }
    }
}

/// The result of parsing.
#[derive(Clone, Debug)]
pub struct Parsed {
    /// The tree (with error placeholders when there are diagnostics).
    pub ast: Ast,
    /// Syntax errors.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses an expression.
pub fn parse(_source: &Source, _options: &ParserOptions) -> Parsed {
    Parsed {
        ast: Ast { expr: Expr::new(1, ExprKind::Error), source_info: SourceInfo::default() },
        diagnostics: vec![Diagnostic::new(0, "parser not implemented")],
    }
}
