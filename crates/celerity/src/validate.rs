//! Validations run after type-checking, as cel-go's AST validators (Kubernetes enables all
//! four from 1.29): constant `duration(...)` and `timestamp(...)` arguments must convert,
//! constant `matches` patterns must compile, and list and map literals must not mix element
//! types (except inside `format` calls, whose argument lists mix types by design, and the list
//! of a `cel.@block`).

use cel_checker::CheckedAst;
use cel_interp::{Plan, PlanEnv};
use cel_syntax::{Ast, Diagnostic, Expr, ExprKind, Literal};
use cel_types::Type;

use crate::EnvOptions;

/// Runs the validators `options` enables and returns their diagnostics.
pub(crate) fn validate(
    checked: &CheckedAst,
    options: &EnvOptions,
    plan_env: &PlanEnv,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let info = &checked.ast.source_info;
    let report = |out: &mut Vec<Diagnostic>, id: i64, message: String| {
        out.push(Diagnostic {
            offset: info.anchor(id).unwrap_or(0),
            expr_id: id,
            message,
        });
    };
    checked.ast.expr.walk(&mut |e| {
        let ExprKind::Call(call) = &e.kind else {
            return;
        };
        let Some(arg) = call.args.first() else {
            return;
        };
        let ExprKind::Literal(lit) = &arg.kind else {
            return;
        };
        let f = call.function.as_str();
        let check_conversion = (f == "duration" && options.validate_duration_literals)
            || (f == "timestamp" && options.validate_timestamp_literals);
        if check_conversion && call.target.is_none() {
            // Evaluate the call on its own, as cel-go does.
            let ast = Ast {
                expr: e.clone(),
                source_info: Default::default(),
            };
            let ok = Plan::unchecked(&ast, plan_env)
                .map(|p| p.eval(&cel_runtime::EmptyActivation).is_ok())
                .unwrap_or(false);
            if !ok {
                report(&mut out, arg.id, format!("invalid {f} argument"));
            }
        }
        // cel-go checks the first argument of any `matches` call, the receiver's pattern for
        // `s.matches(re)` and (a quirk kept for compatibility) the subject of `matches(s, re)`.
        if f == "matches"
            && options.validate_regex_literals
            && let Literal::String(pattern) = lit
            && cel_runtime::regex::compile(pattern).is_err()
        {
            report(&mut out, arg.id, "invalid matches argument".to_string());
        }
    });
    if options.homogeneous_aggregate_literals {
        homogeneous(&checked.ast.expr, checked, false, &mut |id, msg| {
            report(&mut out, id, msg)
        });
    }
    out
}

/// Reports list and map literals with mixed element, key or value types.
fn homogeneous(e: &Expr, checked: &CheckedAst, exempt: bool, report: &mut dyn FnMut(i64, String)) {
    let ty = |x: &Expr| checked.types.get(&x.id).cloned().unwrap_or(Type::Dyn);
    let unwrap = |t: Type, optional: bool| {
        if optional {
            t.optional_elem().cloned().unwrap_or(t)
        } else {
            t
        }
    };
    let mismatch = |report: &mut dyn FnMut(i64, String), id: i64, a: &Type, b: &Type| {
        report(id, format!("expected type '{a}' but found '{b}'"));
    };
    match &e.kind {
        ExprKind::List(l) => {
            if !exempt {
                let mut first: Option<Type> = None;
                for (i, el) in l.elements.iter().enumerate() {
                    let t = unwrap(ty(el), l.optional_indices.contains(&i));
                    match &first {
                        None => first = Some(t),
                        Some(f) if *f != t => {
                            mismatch(report, el.id, f, &t);
                            break;
                        }
                        _ => {}
                    }
                }
            }
            for el in &l.elements {
                homogeneous(el, checked, exempt, report);
            }
        }
        ExprKind::Map(m) => {
            if !exempt {
                let mut first: Option<(Type, Type)> = None;
                for entry in &m.entries {
                    let kt = ty(&entry.key);
                    let vt = unwrap(ty(&entry.value), entry.optional);
                    match &first {
                        None => first = Some((kt, vt)),
                        Some((fk, fv)) => {
                            if *fk != kt {
                                mismatch(report, entry.key.id, fk, &kt);
                            }
                            if *fv != vt {
                                mismatch(report, entry.value.id, fv, &vt);
                            }
                        }
                    }
                }
            }
            for entry in &m.entries {
                homogeneous(&entry.key, checked, exempt, report);
                homogeneous(&entry.value, checked, exempt, report);
            }
        }
        ExprKind::Call(c) => {
            // Literals directly inside `format(...)` (at any depth of literals) are exempt, and
            // so is `cel.@block`'s list of subexpressions, as in cel-go.
            let exempt_args = c.function == "format" || c.function == "cel.@block";
            if let Some(t) = &c.target {
                homogeneous(t, checked, false, report);
            }
            for a in &c.args {
                homogeneous(a, checked, exempt_args, report);
            }
        }
        _ => e.for_each_child(&mut |c| homogeneous(c, checked, false, report)),
    }
}
