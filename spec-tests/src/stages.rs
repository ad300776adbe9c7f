//! The check and evaluation stages, through the `celerity` facade.
//!
//! [`CheckStage`] builds the case's environment (container, declarations, macros) and
//! type-checks the expression (unless the case disables checking); when the case says which
//! type the checker must deduce, it compares. [`EvalStage`] evaluates with the case's
//! bindings and compares the result with the expectation, type-tagged: `1`, `1u` and `1.0`
//! are different results, maps compare regardless of order, and NaN matches NaN.

use celerity::{Backend, Env, MapActivation, Program, ProgramOptions, Value};

use crate::convert::Decl;
use crate::corpus::{Case, Expectation};
use crate::runner::{CaseState, Outcome, Stage};

/// Builds the environment a case describes.
pub fn case_env(case: &Case) -> Result<Env, String> {
    // cel-go's conformance environment knows the test messages, enables every extension
    // library, and the test-only `cel.block` macros with their `@indexN` variables.
    let mut b = Env::builder()
        .macros(!case.disable_macros)
        .descriptor_pool(case.pool.clone())
        .all_extension_libraries()
        .library(cel_ext::BlockTestMacros);
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

/// Evaluates and compares with the expectation. With the JIT backend, the case is also
/// evaluated by the interpreter, and the two must agree on the type-tagged value, the
/// error and the cost ([`differential`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct EvalStage {
    /// The backend that produces the result compared with the expectation.
    pub backend: EvalBackend,
}

/// The backends [`EvalStage`] runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EvalBackend {
    /// The interpreter alone.
    #[default]
    Interpreter,
    /// Native code, compared with the interpreter on every case.
    Jit,
    /// Native code with a deliberate fault (one cost unit too many), to prove that the
    /// comparison with the interpreter reports disagreements.
    FaultyJit,
}

/// One evaluation as the differential comparison sees it: the type-tagged value or the
/// error (kind, expression id, message), and the cost.
pub fn outcome_text(result: &Result<Value, celerity::EvalError>, cost: u64) -> String {
    let r = match result {
        Ok(v) => format!("{} ({})", celerity::to_cel_literal(v), v.type_name()),
        Err(e) => format!("error {:?} at #{}: {}", e.kind, e.expr_id, e.message),
    };
    format!("{r}, cost {cost}")
}

/// Compares two backends' evaluations of a program; `None` when they agree.
pub fn differential(
    reference: (&Result<Value, celerity::EvalError>, u64),
    other: (&Result<Value, celerity::EvalError>, u64),
) -> Option<String> {
    let same_value = match (reference.0, other.0) {
        // Values of library types without an equality of their own (an authorizer's
        // checks) compare by their rendering.
        (Ok(a @ Value::Opaque(_)), Ok(b @ Value::Opaque(_))) => {
            strict_equal(a, b)
                || (a.type_name() == b.type_name()
                    && celerity::to_cel_literal(a) == celerity::to_cel_literal(b))
        }
        (Ok(a), Ok(b)) => strict_equal(a, b),
        (Err(a), Err(b)) => a.kind == b.kind && a.expr_id == b.expr_id && a.message == b.message,
        _ => false,
    };
    if same_value && reference.1 == other.1 {
        return None;
    }
    Some(format!(
        "backends disagree: interpreter {}; jit {}",
        outcome_text(reference.0, reference.1),
        outcome_text(other.0, other.1)
    ))
}

/// Makes a program for a backend.
fn program_for(
    env: &Env,
    ast: &celerity::Ast,
    backend: Backend,
    fault: bool,
) -> Result<Program, String> {
    let options = ProgramOptions::default()
        .backend(backend)
        .inject_fault(fault);
    env.program_with(ast, options).map_err(|i| i.to_string())
}

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
        let interpreter = match program_for(env, ast, Backend::Interpreter, false) {
            Ok(p) => p,
            Err(issues) => return Outcome::Fail(issues),
        };
        let (reference, details) = interpreter.eval_details(&act);
        let result = match self.backend {
            EvalBackend::Interpreter => reference,
            EvalBackend::Jit | EvalBackend::FaultyJit => {
                let fault = self.backend == EvalBackend::FaultyJit;
                // An unchecked expression is interpreted by every backend.
                let backend = if ast.is_checked() {
                    Backend::Jit
                } else {
                    Backend::Interpreter
                };
                let jit = match program_for(env, ast, backend, fault) {
                    Ok(p) => p,
                    Err(issues) => return Outcome::Fail(format!("jit: {issues}")),
                };
                let (r, d) = jit.eval_details(&act);
                if let Some(diff) =
                    differential((&reference, details.actual_cost), (&r, d.actual_cost))
                {
                    return Outcome::Fail(diff);
                }
                r
            }
        };
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
