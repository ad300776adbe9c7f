//! The unparser: writes an [`Ast`] back as CEL source text.
//!
//! The text is canonical rather than faithful (double-quoted strings, single spaces around
//! binary operators, no comments), but it is built so that parsing it again gives the same tree:
//! `parse(unparse(parse(s)))` equals `parse(s)` up to ids. That takes care in a few places:
//!
//! * parentheses are added only where precedence or associativity needs them, and around the
//!   operands of `&&`/`||` whenever the parser's balancing of a flat chain would not rebuild the
//!   tree as it is;
//! * the operand of `!` and `-` is parenthesised when it is itself unary, or starts with a number
//!   (so `-(5)` does not turn into the literal `-5`, and `!(!a)` does not collapse);
//! * macro expansions are written as the call recorded in [`SourceInfo::macro_calls`];
//! * string and bytes literals are escaped so they read back exactly, and doubles use the
//!   shortest text that reads back to the same bits.
//!
//! Trees the grammar cannot express (comprehensions without a recorded macro call, error nodes,
//! identifiers that are not names) are refused with an [`UnparseError`].

use std::fmt;
use std::fmt::Write as _;

use crate::ast::{Ast, Call, Expr, ExprId, ExprKind, Literal, SourceInfo};
use crate::lexer::{is_escaped_ident_byte, is_reserved};
use crate::operators;

/// Why an AST could not be unparsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnparseError(pub String);

impl fmt::Display for UnparseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnparseError {}

/// Trees deeper than this are refused rather than risk the stack; the parser never produces
/// one.
const MAX_DEPTH: usize = 1_000;

/// Writes an AST back as CEL text.
pub fn unparse(ast: &Ast) -> Result<String, UnparseError> {
    let mut u = Unparser {
        info: &ast.source_info,
        out: String::new(),
        active: Vec::new(),
        depth: 0,
    };
    u.expr(&ast.expr)?;
    Ok(u.out)
}

// Binding strength of what an expression prints as; higher binds tighter.
const CONDITIONAL: u8 = 1;
const OR: u8 = 2;
const AND: u8 = 3;
const RELATION: u8 = 4;
const ADDITIVE: u8 = 5;
const MULTIPLICATIVE: u8 = 6;
const UNARY: u8 = 7;
const PRIMARY: u8 = 8;

fn binary_level(function: &str) -> Option<(u8, &'static str)> {
    Some(match function {
        operators::LOGICAL_OR => (OR, "||"),
        operators::LOGICAL_AND => (AND, "&&"),
        operators::EQUALS => (RELATION, "=="),
        operators::NOT_EQUALS => (RELATION, "!="),
        operators::LESS => (RELATION, "<"),
        operators::LESS_EQUALS => (RELATION, "<="),
        operators::GREATER => (RELATION, ">"),
        operators::GREATER_EQUALS => (RELATION, ">="),
        operators::IN | operators::OLD_IN => (RELATION, "in"),
        operators::ADD => (ADDITIVE, "+"),
        operators::SUBTRACT => (ADDITIVE, "-"),
        operators::MULTIPLY => (MULTIPLICATIVE, "*"),
        operators::DIVIDE => (MULTIPLICATIVE, "/"),
        operators::MODULO => (MULTIPLICATIVE, "%"),
        _ => return None,
    })
}

fn is_simple_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

fn is_keyword(s: &str) -> bool {
    matches!(s, "true" | "false" | "null" | "in")
}

/// A field name as written after `.` or in a message literal: plain when it is a name, in
/// backticks when it needs them and can have them.
fn write_field(out: &mut String, name: &str) -> Result<(), UnparseError> {
    if is_simple_name(name) && !is_keyword(name) {
        out.push_str(name);
        Ok(())
    } else if !name.is_empty() && name.bytes().all(is_escaped_ident_byte) {
        out.push('`');
        out.push_str(name);
        out.push('`');
        Ok(())
    } else {
        Err(UnparseError(format!(
            "field name {name:?} cannot be written in CEL"
        )))
    }
}

/// Whether `name` (optionally with a leading dot, optionally dotted) can be written as an
/// identifier or function name.
fn is_name_path(name: &str, allow_reserved: bool) -> bool {
    let name = name.strip_prefix('.').unwrap_or(name);
    !name.is_empty()
        && name.split('.').all(|segment| {
            is_simple_name(segment)
                && !is_keyword(segment)
                && (allow_reserved || !is_reserved(segment))
        })
}

struct Unparser<'a> {
    info: &'a SourceInfo,
    out: String,
    /// Macro expansions being written as their calls; a node that refers back to one of them
    /// is written as it is, so a malformed record cannot loop.
    active: Vec<ExprId>,
    depth: usize,
}

impl<'a> Unparser<'a> {
    /// What `e` prints as: the recorded macro call for an expansion, else `e` itself.
    fn printed<'e>(&self, e: &'e Expr) -> &'e Expr
    where
        'a: 'e,
    {
        match self.info.macro_calls.get(&e.id) {
            Some(call) if !self.active.contains(&e.id) => call,
            _ => e,
        }
    }

    fn level(&self, e: &Expr) -> u8 {
        let e = self.printed(e);
        let ExprKind::Call(c) = &e.kind else {
            return PRIMARY;
        };
        if c.target.is_some() {
            return PRIMARY;
        }
        match (c.function.as_str(), c.args.len()) {
            (operators::CONDITIONAL, 3) => CONDITIONAL,
            (operators::LOGICAL_NOT | operators::NEGATE, 1) => UNARY,
            (f, 2) => binary_level(f).map_or(PRIMARY, |(l, _)| l),
            _ => PRIMARY,
        }
    }

    /// Whether the text of `e` starts with a number literal (through any chain of selections,
    /// calls and indexes), which a `-` right before it would turn into a negative literal.
    fn starts_with_number(&self, e: &Expr) -> bool {
        let mut e = self.printed(e);
        for _ in 0..MAX_DEPTH {
            match &e.kind {
                ExprKind::Literal(Literal::Int(_) | Literal::Double(_)) => return true,
                ExprKind::Select(s) if !s.test_only => e = self.printed(&s.operand),
                ExprKind::Call(c) => match (&c.target, c.function.as_str(), c.args.first()) {
                    (Some(t), _, _) => e = self.printed(t),
                    (
                        None,
                        operators::INDEX | operators::OPT_INDEX | operators::OPT_SELECT,
                        Some(a),
                    ) if c.args.len() == 2 => e = self.printed(a),
                    _ => return false,
                },
                _ => return false,
            }
        }
        false
    }

    fn is_negative_number(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Literal(Literal::Int(i)) => *i < 0,
            ExprKind::Literal(Literal::Double(d)) => d.is_sign_negative(),
            _ => false,
        }
    }

    fn nested(&mut self, e: &Expr, parens: bool) -> Result<(), UnparseError> {
        if parens {
            self.out.push('(');
        }
        self.expr(e)?;
        if parens {
            self.out.push(')');
        }
        Ok(())
    }

    /// The receiver of `.`, `[` or a member call.
    fn target(&mut self, e: &Expr) -> Result<(), UnparseError> {
        let parens = self.level(e) < PRIMARY || Self::is_negative_number(self.printed(e));
        self.nested(e, parens)
    }

    fn expr(&mut self, e: &Expr) -> Result<(), UnparseError> {
        crate::stack::guarded(|| self.expr_unguarded(e))
    }

    fn expr_unguarded(&mut self, e: &Expr) -> Result<(), UnparseError> {
        if self.depth >= MAX_DEPTH {
            return Err(UnparseError("expression too deep to unparse".to_string()));
        }
        self.depth += 1;
        let result = match self.info.macro_calls.get(&e.id) {
            Some(call) if !self.active.contains(&e.id) => {
                self.active.push(e.id);
                let r = self.node(call);
                self.active.pop();
                r
            }
            _ => self.node(e),
        };
        self.depth -= 1;
        result
    }

    fn node(&mut self, e: &Expr) -> Result<(), UnparseError> {
        match &e.kind {
            ExprKind::Error => Err(UnparseError(format!(
                "expression {} is an error placeholder",
                e.id
            ))),
            ExprKind::Literal(l) => {
                let _ = write!(self.out, "{l}");
                Ok(())
            }
            ExprKind::Ident(name) => {
                if !is_name_path(name, false)
                    || name[name.starts_with('.') as usize..].contains('.')
                {
                    return Err(UnparseError(format!(
                        "identifier {name:?} cannot be written in CEL"
                    )));
                }
                self.out.push_str(name);
                Ok(())
            }
            ExprKind::Select(s) => {
                if s.test_only {
                    self.out.push_str("has(");
                }
                self.target(&s.operand)?;
                self.out.push('.');
                write_field(&mut self.out, &s.field)?;
                if s.test_only {
                    self.out.push(')');
                }
                Ok(())
            }
            ExprKind::Call(c) => self.call(c),
            ExprKind::List(l) => {
                self.out.push('[');
                for (i, elem) in l.elements.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    if l.optional_indices.contains(&i) {
                        self.out.push('?');
                    }
                    self.expr(elem)?;
                }
                self.out.push(']');
                Ok(())
            }
            ExprKind::Map(m) => {
                self.out.push('{');
                for (i, entry) in m.entries.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    if entry.optional {
                        self.out.push('?');
                    }
                    self.expr(&entry.key)?;
                    self.out.push_str(": ");
                    self.expr(&entry.value)?;
                }
                self.out.push('}');
                Ok(())
            }
            ExprKind::Struct(s) => {
                if !is_name_path(&s.type_name, true) {
                    return Err(UnparseError(format!(
                        "type name {:?} cannot be written in CEL",
                        s.type_name
                    )));
                }
                self.out.push_str(&s.type_name);
                self.out.push('{');
                for (i, field) in s.fields.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    if field.optional {
                        self.out.push('?');
                    }
                    write_field(&mut self.out, &field.name)?;
                    self.out.push_str(": ");
                    self.expr(&field.value)?;
                }
                self.out.push('}');
                Ok(())
            }
            ExprKind::Comprehension(_) => Err(UnparseError(format!(
                "comprehension {} has no recorded macro call",
                e.id
            ))),
        }
    }

    fn call(&mut self, c: &Call) -> Result<(), UnparseError> {
        let f = c.function.as_str();
        if c.target.is_none() {
            match (f, c.args.as_slice()) {
                (operators::CONDITIONAL, [cond, then, els]) => {
                    let parens = self.level(cond) <= CONDITIONAL;
                    self.nested(cond, parens)?;
                    self.out.push_str(" ? ");
                    let parens = self.level(then) <= CONDITIONAL;
                    self.nested(then, parens)?;
                    self.out.push_str(" : ");
                    return self.expr(els);
                }
                (operators::LOGICAL_NOT | operators::NEGATE, [operand]) => {
                    self.out
                        .push(if f == operators::NEGATE { '-' } else { '!' });
                    let parens = self.level(operand) < PRIMARY || self.starts_with_number(operand);
                    return self.nested(operand, parens);
                }
                (operators::INDEX | operators::OPT_INDEX, [operand, index]) => {
                    self.target(operand)?;
                    self.out
                        .push_str(if f == operators::INDEX { "[" } else { "[?" });
                    self.expr(index)?;
                    self.out.push(']');
                    return Ok(());
                }
                (operators::OPT_SELECT, [operand, field]) => {
                    let ExprKind::Literal(Literal::String(name)) = &field.kind else {
                        return Err(UnparseError(
                            "optional selection of a field that is not a string literal"
                                .to_string(),
                        ));
                    };
                    self.target(operand)?;
                    self.out.push_str(".?");
                    return write_field(&mut self.out, name);
                }
                (operators::LOGICAL_OR | operators::LOGICAL_AND, [_, _]) => {
                    return self.logic(c);
                }
                (_, [lhs, rhs]) => {
                    if let Some((level, text)) = binary_level(f) {
                        let parens = self.level(lhs) < level;
                        self.nested(lhs, parens)?;
                        let _ = write!(self.out, " {text} ");
                        let parens = self.level(rhs) <= level;
                        return self.nested(rhs, parens);
                    }
                }
                _ => {}
            }
            // Operators with the wrong number of arguments end up here too: their names are
            // not names.
            if !is_name_path(f, false) {
                return Err(UnparseError(format!(
                    "function name {f:?} cannot be written in CEL"
                )));
            }
            self.out.push_str(f);
        } else {
            if let Some(t) = &c.target {
                self.target(t)?;
            }
            if !is_simple_name(f) || is_keyword(f) {
                return Err(UnparseError(format!(
                    "member function name {f:?} cannot be written in CEL"
                )));
            }
            self.out.push('.');
            self.out.push_str(f);
        }
        self.out.push('(');
        for (i, arg) in c.args.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(arg)?;
        }
        self.out.push(')');
        Ok(())
    }

    /// Whether `e` is part of the `&&`/`||` chain of `function` being written.
    fn in_chain(&self, e: &Expr, function: &str) -> bool {
        let e = self.printed(e);
        matches!(&e.kind, ExprKind::Call(c)
            if c.target.is_none() && c.args.len() == 2 && c.function == function)
    }

    fn chain_terms<'e>(&self, e: &'e Expr, function: &str, terms: &mut Vec<&'e Expr>)
    where
        'a: 'e,
    {
        let p = self.printed(e);
        match &p.kind {
            ExprKind::Call(c) if self.in_chain(e, function) => {
                self.chain_terms(&c.args[0], function, terms);
                self.chain_terms(&c.args[1], function, terms);
            }
            _ => terms.push(e),
        }
    }

    fn count_terms(&self, e: &Expr, function: &str) -> usize {
        crate::stack::guarded(|| self.count_terms_unguarded(e, function))
    }

    fn count_terms_unguarded(&self, e: &Expr, function: &str) -> usize {
        match &self.printed(e).kind {
            ExprKind::Call(c) if self.in_chain(e, function) => {
                self.count_terms(&c.args[0], function) + self.count_terms(&c.args[1], function)
            }
            _ => 1,
        }
    }

    /// Whether the chain rooted at `e`, joining terms `lo..=hi + 1`, has exactly the shape the
    /// parser gives a flat chain of that many terms.
    fn is_balanced(&self, e: &Expr, function: &str, lo: usize, hi: usize) -> bool {
        crate::stack::guarded(|| self.is_balanced_unguarded(e, function, lo, hi))
    }

    fn is_balanced_unguarded(&self, e: &Expr, function: &str, lo: usize, hi: usize) -> bool {
        let ExprKind::Call(c) = &self.printed(e).kind else {
            return false;
        };
        let mid = (lo + hi).div_ceil(2);
        let (left, right) = (&c.args[0], &c.args[1]);
        if self.count_terms(left, function) != mid - lo + 1
            || self.count_terms(right, function) != hi - mid + 1
        {
            return false;
        }
        (mid == lo || self.is_balanced(left, function, lo, mid - 1))
            && (mid == hi || self.is_balanced(right, function, mid + 1, hi))
    }

    fn logic(&mut self, c: &Call) -> Result<(), UnparseError> {
        let (level, text) = binary_level(&c.function).unwrap_or((OR, "||"));
        let f = c.function.as_str();
        let left_terms = self.count_terms(&c.args[0], f);
        let right_terms = self.count_terms(&c.args[1], f);
        let ops = left_terms + right_terms - 1;
        // The root of a flat chain of `ops` operators is operator `ops / 2` (cel-go's choice);
        // the sides must then be balanced in turn.
        let mid = ops / 2;
        let balanced = left_terms == mid + 1
            && (mid == 0 || self.is_balanced(&c.args[0], f, 0, mid - 1))
            && (mid == ops - 1 || self.is_balanced(&c.args[1], f, mid + 1, ops - 1));
        if balanced {
            let mut terms = Vec::new();
            self.chain_terms(&c.args[0], f, &mut terms);
            self.chain_terms(&c.args[1], f, &mut terms);
            for (i, term) in terms.into_iter().enumerate() {
                if i > 0 {
                    let _ = write!(self.out, " {text} ");
                }
                let parens = self.level(term) <= level;
                self.nested(term, parens)?;
            }
            return Ok(());
        }
        for (i, side) in c.args.iter().enumerate() {
            if i > 0 {
                let _ = write!(self.out, " {text} ");
            }
            let parens = self.level(side) <= level;
            self.nested(side, parens)?;
        }
        Ok(())
    }
}
