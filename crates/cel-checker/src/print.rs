//! A readable rendering of a checked AST for snapshots and `cel eval --dump checked`: each
//! node followed by `~type`, and by `^reference` where it has one (cel-go's checker tests use
//! the same marks).

use std::fmt::Write as _;

use cel_syntax::{Expr, ExprKind, Literal};

use crate::CheckedAst;

/// Renders a checked AST, one node per line for aggregates and calls.
pub fn format_checked(c: &CheckedAst) -> String {
    let mut out = String::new();
    write_expr(&mut out, c, &c.ast.expr, 0);
    out
}

fn annotations(out: &mut String, c: &CheckedAst, e: &Expr) {
    if let Some(t) = c.types.get(&e.id) {
        let _ = write!(out, "~{t}");
    }
    if let Some(r) = c.references.get(&e.id) {
        if !r.overload_ids.is_empty() {
            let _ = write!(out, "^{}", r.overload_ids.join("|"));
        } else if !r.name.is_empty() {
            let _ = write!(out, "^{}", r.name);
        }
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_children(out: &mut String, c: &CheckedAst, children: &[&Expr], depth: usize) {
    for (i, child) in children.iter().enumerate() {
        indent(out, depth + 1);
        write_expr(out, c, child, depth + 1);
        if i + 1 < children.len() {
            out.push(',');
        }
        out.push('\n');
    }
    indent(out, depth);
}

fn write_expr(out: &mut String, c: &CheckedAst, e: &Expr, depth: usize) {
    cel_syntax::stack::guarded(|| write_expr_unguarded(out, c, e, depth))
}

fn write_expr_unguarded(out: &mut String, c: &CheckedAst, e: &Expr, depth: usize) {
    match &e.kind {
        ExprKind::Error => out.push_str("<error>"),
        ExprKind::Literal(lit) => match lit {
            Literal::Double(d) => {
                let _ = write!(out, "{d:?}");
            }
            other => {
                let _ = write!(out, "{other}");
            }
        },
        ExprKind::Ident(name) => out.push_str(name),
        ExprKind::Select(s) => {
            if s.test_only {
                out.push_str("has(");
                write_expr(out, c, &s.operand, depth);
                let _ = write!(out, ".{})", s.field);
            } else {
                write_expr(out, c, &s.operand, depth);
                let _ = write!(out, ".{}", s.field);
            }
        }
        ExprKind::Call(call) => {
            if let Some(t) = &call.target {
                write_expr(out, c, t, depth);
                out.push('.');
            }
            let _ = write!(out, "{}(", call.function);
            if !call.args.is_empty() {
                out.push('\n');
                let args: Vec<&Expr> = call.args.iter().collect();
                write_children(out, c, &args, depth);
            }
            out.push(')');
        }
        ExprKind::List(l) => {
            out.push('[');
            if !l.elements.is_empty() {
                out.push('\n');
                let els: Vec<&Expr> = l.elements.iter().collect();
                write_children(out, c, &els, depth);
            }
            out.push(']');
        }
        ExprKind::Map(m) => {
            out.push('{');
            if !m.entries.is_empty() {
                out.push('\n');
                for (i, entry) in m.entries.iter().enumerate() {
                    indent(out, depth + 1);
                    if entry.optional {
                        out.push('?');
                    }
                    write_expr(out, c, &entry.key, depth + 1);
                    out.push_str(": ");
                    write_expr(out, c, &entry.value, depth + 1);
                    if i + 1 < m.entries.len() {
                        out.push(',');
                    }
                    out.push('\n');
                }
                indent(out, depth);
            }
            out.push('}');
        }
        ExprKind::Struct(s) => {
            let _ = write!(out, "{}{{", s.type_name);
            if !s.fields.is_empty() {
                out.push('\n');
                for (i, f) in s.fields.iter().enumerate() {
                    indent(out, depth + 1);
                    if f.optional {
                        out.push('?');
                    }
                    let _ = write!(out, "{}: ", f.name);
                    write_expr(out, c, &f.value, depth + 1);
                    if i + 1 < s.fields.len() {
                        out.push(',');
                    }
                    out.push('\n');
                }
                indent(out, depth);
            }
            out.push('}');
        }
        ExprKind::Comprehension(comp) => {
            out.push_str("__comprehension__(\n");
            let vars = match &comp.iter_var2 {
                Some(v2) => format!("{}, {}", comp.iter_var, v2),
                None => comp.iter_var.clone(),
            };
            let parts: [(&str, &Expr); 5] = [
                ("range", &comp.iter_range),
                ("init", &comp.accu_init),
                ("condition", &comp.loop_condition),
                ("step", &comp.loop_step),
                ("result", &comp.result),
            ];
            indent(out, depth + 1);
            let _ = writeln!(out, "// variables: {vars}; accumulator: {}", comp.accu_var);
            for (i, (label, part)) in parts.iter().enumerate() {
                indent(out, depth + 1);
                let _ = writeln!(out, "// {label}");
                indent(out, depth + 1);
                write_expr(out, c, part, depth + 1);
                if i + 1 < parts.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(out, depth);
            out.push(')');
        }
    }
    annotations(out, c, e);
}
