//! A readable dump of an [`Ast`] for tests and snapshots: one line per node with its kind,
//! id, anchor and span, children indented below, then the recorded macro calls.
//!
//! The format is meant for people reviewing snapshots, not for machines: it may change.

use std::fmt::Write as _;

use crate::ast::{Ast, Expr, ExprId, ExprKind, Literal, SourceInfo};

/// Dumps an AST, e.g. for `a + 1`:
///
/// ```text
/// Call _+_ #2 @2 [0,5)
///   Ident a #1 @0 [0,1)
///   Int 1 #3 @4 [4,5)
/// ```
///
/// `#` gives the id, `@` the anchor offset, `[start,end)` the span (both in bytes; `@?` when
/// the node has no recorded position). Macro calls follow under `macro_calls:`, keyed by the id
/// of their expansion; inside them, `MacroRef #n` stands for a nested macro call.
pub fn debug_string(ast: &Ast) -> String {
    let mut p = Printer {
        info: &ast.source_info,
        out: String::new(),
        in_macro_call: false,
    };
    p.expr(&ast.expr, 0, "");
    if !ast.source_info.macro_calls.is_empty() {
        p.out.push_str("macro_calls:\n");
        let mut ids: Vec<ExprId> = ast.source_info.macro_calls.keys().copied().collect();
        ids.sort_unstable();
        p.in_macro_call = true;
        for id in ids {
            let call = &ast.source_info.macro_calls[&id];
            let _ = writeln!(p.out, "  #{id}:");
            p.expr(call, 2, "");
        }
    }
    p.out
}

struct Printer<'a> {
    info: &'a SourceInfo,
    out: String,
    in_macro_call: bool,
}

impl Printer<'_> {
    fn line(&mut self, indent: usize, label: &str, what: &str, id: ExprId) {
        for _ in 0..indent {
            self.out.push_str("  ");
        }
        self.out.push_str(label);
        self.out.push_str(what);
        let _ = write!(self.out, " #{id}");
        match self.info.positions.get(&id) {
            Some(p) => {
                let _ = write!(self.out, " @{} [{},{})", p.anchor, p.span.start, p.span.end);
            }
            None if id == 0 => {}
            None => self.out.push_str(" @?"),
        }
        self.out.push('\n');
    }

    fn expr(&mut self, e: &Expr, indent: usize, label: &str) {
        crate::stack::guarded(|| self.expr_unguarded(e, indent, label))
    }

    fn expr_unguarded(&mut self, e: &Expr, indent: usize, label: &str) {
        let what = match &e.kind {
            ExprKind::Error if self.in_macro_call && self.info.macro_calls.contains_key(&e.id) => {
                "MacroRef".to_string()
            }
            ExprKind::Error => "Error".to_string(),
            ExprKind::Literal(l) => match l {
                Literal::Null => "Null".to_string(),
                Literal::Bool(b) => format!("Bool {b}"),
                Literal::Int(i) => format!("Int {i}"),
                Literal::Uint(u) => format!("Uint {u}u"),
                Literal::Double(d) => format!("Double {d:?}"),
                Literal::String(_) => format!("String {l}"),
                Literal::Bytes(_) => format!("Bytes {l}"),
            },
            ExprKind::Ident(name) => format!("Ident {name}"),
            ExprKind::Select(s) if s.test_only => format!("Select .{} (test-only)", s.field),
            ExprKind::Select(s) => format!("Select .{}", s.field),
            ExprKind::Call(c) if c.target.is_some() => format!("Call .{}", c.function),
            ExprKind::Call(c) => format!("Call {}", c.function),
            ExprKind::List(_) => "List".to_string(),
            ExprKind::Map(_) => "Map".to_string(),
            ExprKind::Struct(s) => format!("Struct {}", s.type_name),
            ExprKind::Comprehension(c) => {
                let mut s = format!("Comprehension iter_var={}", c.iter_var);
                if let Some(v2) = &c.iter_var2 {
                    let _ = write!(s, " iter_var2={v2}");
                }
                let _ = write!(s, " accu_var={}", c.accu_var);
                s
            }
        };
        self.line(indent, label, &what, e.id);
        let inner = indent + 1;
        match &e.kind {
            ExprKind::Error | ExprKind::Literal(_) | ExprKind::Ident(_) => {}
            ExprKind::Select(s) => self.expr(&s.operand, inner, ""),
            ExprKind::Call(c) => {
                if let Some(t) = &c.target {
                    self.expr(t, inner, "target: ");
                }
                for a in &c.args {
                    self.expr(a, inner, "");
                }
            }
            ExprKind::List(l) => {
                for (i, elem) in l.elements.iter().enumerate() {
                    let label = if l.optional_indices.contains(&i) {
                        "?"
                    } else {
                        ""
                    };
                    self.expr(elem, inner, label);
                }
            }
            ExprKind::Map(m) => {
                for entry in &m.entries {
                    let what = if entry.optional { "Entry ?" } else { "Entry" };
                    self.line(inner, "", what, entry.id);
                    self.expr(&entry.key, inner + 1, "key: ");
                    self.expr(&entry.value, inner + 1, "value: ");
                }
            }
            ExprKind::Struct(s) => {
                for field in &s.fields {
                    let opt = if field.optional { "?" } else { "" };
                    let what = format!("Field {opt}{}", field.name);
                    self.line(inner, "", &what, field.id);
                    self.expr(&field.value, inner + 1, "");
                }
            }
            ExprKind::Comprehension(c) => {
                self.expr(&c.iter_range, inner, "range: ");
                self.expr(&c.accu_init, inner, "init: ");
                self.expr(&c.loop_condition, inner, "condition: ");
                self.expr(&c.loop_step, inner, "step: ");
                self.expr(&c.result, inner, "result: ");
            }
        }
    }
}
