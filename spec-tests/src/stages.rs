//! The check and evaluation stages, through the `celerity` facade.
//!
//! [`CheckStage`] builds the case's environment (container, declarations, macros) and
//! type-checks the expression (unless the case disables checking); when the case says which
//! type the checker must deduce, it compares. [`EvalStage`] evaluates with the case's
//! bindings and compares the result with the expectation, type-tagged: `1`, `1u` and `1.0`
//! are different results, maps compare regardless of order, and NaN matches NaN.

use celerity::{Env, MapActivation, Value};

use crate::convert::Decl;
use crate::corpus::{Case, Expectation};
use crate::runner::{CaseState, Outcome, Stage};

/// Builds the environment a case describes.
pub fn case_env(case: &Case) -> Result<Env, String> {
    // cel-go's conformance environment enables every extension library.
    let mut b = Env::builder()
        .macros(!case.disable_macros)
        .all_extension_libraries();
    if !case.container.is_empty() {
        b = b.container(&case.container);
    }
    for decl in &case.type_env {
        match decl {
            Decl::Variable(v) => b = b.variable(&v.name, v.ty.clone()),
            Decl::Function(f) => b = b.declare_function(f.clone()),
            Decl::Unsupported { name, reason } => {
                return Err(format!("declaration of {name}: {reason}"));
            }
        }
    }
    Ok(b.build())
}

/// Parses (through the facade) and type-checks.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckStage;

impl Stage for CheckStage {
    fn name(&self) -> &str {
        "check"
    }

    fn run(&self, case: &Case, state: &mut CaseState) -> Outcome {
        let env = match case_env(case) {
            Ok(e) => e,
            Err(reason) => return Outcome::Skip(reason),
        };
        let ast = match env.parse(&case.expr) {
            Ok(a) => a,
            Err(issues) => return Outcome::Fail(issues.to_string()),
        };
        if case.disable_check {
            state.env = Some(env);
            state.ast = Some(ast);
            return Outcome::Pass;
        }
        let checked = match env.check(&ast) {
            Ok(c) => c,
            // cel-go checks every conformance case that does not disable checking, and the
            // suite's expected errors are evaluation errors: a check error is a failure,
            // unless the case names that very diagnostic as the error it expects.
            Err(issues) => {
                let text = issues.to_string();
                let named = expected_messages(&case.expected)
                    .iter()
                    .any(|m| !m.is_empty() && issues.diagnostics().iter().any(|d| d.message == *m));
                return if named {
                    Outcome::ExpectedError(text)
                } else {
                    Outcome::Fail(text)
                };
            }
        };
        if let Expectation::Typed { deduced_type, .. } = &case.expected {
            match deduced_type {
                Err(u) => return Outcome::Skip(u.to_string()),
                Ok(expected) => {
                    let actual = checked
                        .result_type()
                        .cloned()
                        .unwrap_or(celerity::Type::Error);
                    if actual != *expected {
                        return Outcome::Fail(format!(
                            "deduced type {actual}, expected {expected}"
                        ));
                    }
                }
            }
        }
        state.env = Some(env);
        state.ast = Some(checked);
        Outcome::Pass
    }
}

/// Evaluates and compares with the expectation.
#[derive(Clone, Copy, Debug, Default)]
pub struct EvalStage;

impl Stage for EvalStage {
    fn name(&self) -> &str {
        "eval"
    }

    fn applies(&self, case: &Case) -> bool {
        !case.check_only
    }

    fn run(&self, case: &Case, state: &mut CaseState) -> Outcome {
        let (Some(env), Some(ast)) = (&state.env, &state.ast) else {
            return Outcome::Fail("no checked expression from the check stage".into());
        };
        let expected = match &case.expected {
            Expectation::Value(v) => Some(v),
            Expectation::Typed { value: Some(v), .. } => Some(v),
            Expectation::Typed { value: None, .. } => return Outcome::Pass,
            Expectation::EvalError(_) | Expectation::AnyEvalErrors(_) => None,
            Expectation::Unknown(_) | Expectation::AnyUnknowns(_) => {
                return Outcome::Skip("unknown values".into());
            }
        };
        if let Some(Err(u)) = expected {
            return Outcome::Skip(u.to_string());
        }
        let mut act = MapActivation::new();
        for (name, binding) in &case.bindings {
            match binding {
                Ok(v) => {
                    act.bind(name.as_str(), v.clone());
                }
                Err(u) => return Outcome::Skip(u.to_string()),
            }
        }
        let program = match env.program(ast) {
            Ok(p) => p,
            Err(issues) => return Outcome::Fail(issues.to_string()),
        };
        let result = program.eval(&act);
        match (expected, result) {
            (Some(Ok(want)), Ok(got)) => {
                if strict_equal(&got, want) {
                    Outcome::Pass
                } else {
                    Outcome::Fail(format!(
                        "got {}, expected {}",
                        celerity::to_cel_literal(&got),
                        celerity::to_cel_literal(want)
                    ))
                }
            }
            (Some(Ok(want)), Err(e)) => Outcome::Fail(format!(
                "error '{e}', expected {}",
                celerity::to_cel_literal(want)
            )),
            // An error because a function does not exist at all proves nothing about the
            // error the case expects, unless it expects exactly that.
            (None, Err(e))
                if e.kind == celerity::ErrorKind::UnboundFunction
                    && !expected_messages(&case.expected)
                        .iter()
                        .any(|m| m.contains("unbound")) =>
            {
                Outcome::Fail(format!("{e} (not implemented), expected a different error"))
            }
            (None, Err(_)) => Outcome::Pass,
            (None, Ok(got)) => Outcome::Fail(format!(
                "got {}, expected an error",
                celerity::to_cel_literal(&got)
            )),
            (Some(Err(_)), _) => unreachable!("skipped above"),
        }
    }
}

/// The error messages a case expects, if it expects errors.
fn expected_messages(e: &Expectation) -> Vec<&str> {
    match e {
        Expectation::EvalError(ms) => ms.iter().map(|s| s.as_str()).collect(),
        Expectation::AnyEvalErrors(sets) => sets.iter().flatten().map(|s| s.as_str()).collect(),
        _ => Vec::new(),
    }
}

/// Type-tagged equality of results: same kind, same contents; maps regardless of order;
/// NaN equals NaN.
pub fn strict_equal(a: &Value, b: &Value) -> bool {
    a.identical(b)
}
