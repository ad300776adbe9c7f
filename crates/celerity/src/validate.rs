//! Validations run after type-checking, as cel-go's AST validators (Kubernetes enables all
//! four from 1.29): constant `duration(...)` and `timestamp(...)` arguments must convert,
//! constant `matches` patterns must compile, and list and map literals must not mix element
//! types (except anywhere under a `format` or `cel.@block` call, as cel-go exempts them); then the libraries' own validators (the strings library's check of
//! literal `format` calls).

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
    validators: &[cel_ext::Validator],
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
    // The literal patterns are compiled to check them, sharing one allowance as the
    // program's constant patterns do.
    let mut patterns = cel_runtime::regex::PatternBudget::default();
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
            && patterns.compile(pattern).is_err()
        {
            report(&mut out, arg.id, "invalid matches argument".to_string());
        }
    });
    if options.homogeneous_aggregate_literals {
        homogeneous(&checked.ast.expr, checked, false, &mut |id, msg| {
            report(&mut out, id, msg)
        });
    }
    for issue in run_library_checks(checked, validators) {
        report(&mut out, issue.expr_id, issue.message);
    }
    out
}

/// Runs libraries' checks of a checked expression (their validators, or the checks made
/// when a program is made) and returns what they found.
pub(crate) fn run_library_checks(
    checked: &CheckedAst,
    checks: &[cel_ext::Validator],
) -> Vec<cel_ext::ValidationIssue> {
    if checks.is_empty() {
        return Vec::new();
    }
    let type_of = |id: i64| checked.types.get(&id).cloned().unwrap_or(Type::Dyn);
    let overloads_of = |id: i64| {
        checked
            .references
            .get(&id)
            .map(|r| r.overload_ids.clone())
            .unwrap_or_default()
    };
    let view = cel_ext::CheckedExpr {
        expr: &checked.ast.expr,
        type_of: &type_of,
        overloads_of: &overloads_of,
    };
    checks.iter().flat_map(|check| check(&view)).collect()
}

/// Reports list and map literals with mixed element, key or value types.
fn homogeneous(e: &Expr, checked: &CheckedAst, exempt: bool, report: &mut dyn FnMut(i64, String)) {
    cel_syntax::stack::guarded(|| homogeneous_unguarded(e, checked, exempt, report))
}

fn homogeneous_unguarded(
    e: &Expr,
    checked: &CheckedAst,
    exempt: bool,
    report: &mut dyn FnMut(i64, String),
) {
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
            // Everything under a call of `format` (its receiver too) or `cel.@block` is exempt,
            // at any depth, as in cel-go (`inExemptFunction` looks for such a call among all
            // of a literal's ancestors).
            let exempt = exempt || c.function == "format" || c.function == "cel.@block";
            if let Some(t) = &c.target {
                homogeneous(t, checked, exempt, report);
            }
            for a in &c.args {
                homogeneous(a, checked, exempt, report);
            }
        }
        _ => e.for_each_child(&mut |c| homogeneous(c, checked, exempt, report)),
    }
}
