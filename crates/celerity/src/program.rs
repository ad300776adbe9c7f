//! [`Program`]: a planned expression, evaluated many times, by the interpreter or as native
//! code.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use cel_checker::CheckedAst;
use cel_interp::{Evaluation, Plan, PlanEnv};
use cel_jit::{JitOptions, JitProgram};
use cel_runtime::{Activation, Error, Value};
use cel_syntax::Diagnostic;

use crate::{Ast, Issues};

/// Facts about one evaluation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvalDetails {
    /// The run-time cost in cel-go's cost units. For an evaluation that failed, the cost
    /// reached when it failed (for one stopped by the cost limit, including the step that
    /// crossed it), as cel-go reports it.
    pub actual_cost: u64,
}

/// How a program is executed. Every backend gives the same values, errors and costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Walk the planned expression (no compilation; the semantic reference).
    Interpreter,
    /// Compile to native code with Cranelift when the program is created (checked
    /// expressions; an unchecked one is interpreted, and so is one whose native code would
    /// exceed the native-code budget (`cel_ir::DEFAULT_BUDGET` IR instructions), which keeps compile
    /// time bounded: see [`Program::backend`]).
    Jit,
    /// Interpret at first, and compile a checked expression once it has been evaluated
    /// [`Backend::AUTO_JIT_AFTER`] times, unless it is too large to be worth compiling.
    #[default]
    Auto,
}

impl Backend {
    /// How many evaluations [`Backend::Auto`] interprets before it compiles: compiling costs
    /// about as much as a hundred interpreted evaluations of a typical expression.
    pub const AUTO_JIT_AFTER: u32 = 100;

    /// The largest expression (in AST nodes) [`Backend::Auto`] tries to compile; larger ones
    /// would exceed the native-code budget anyway, and are interpreted without trying.
    pub const AUTO_MAX_NODES: usize = 20_000;
}

/// Options of one program.
#[derive(Clone, Copy, Debug)]
pub struct ProgramOptions {
    /// The backend.
    pub backend: Backend,
    /// Count each evaluation's cost and enforce the cost limit (on by default). Off, the
    /// cost is not tracked: [`EvalDetails::actual_cost`] is 0 and no limit stops an
    /// evaluation (native code then carries no cost counter at all).
    pub track_cost: bool,
    /// Keep the text of the IR and of the Cranelift function (for `cel eval --dump`).
    pub keep_code_text: bool,
    /// Native code: compile about twice as fast, for code that runs 10–30% slower (no
    /// Cranelift mid-end optimisations, single-pass register allocation). Off by default.
    pub fast_compile: bool,
    /// Compile a deliberate fault into native code (one cost unit too many), for tests that
    /// prove the comparison of backends can fail.
    #[doc(hidden)]
    pub inject_fault: bool,
    /// Ask the activation for each variable where the evaluation reads it, as the
    /// interpreter does, rather than once when native code starts; for hosts whose
    /// activation computes values on demand (admission policies' `variables`). Off by
    /// default.
    pub lazy_variables: bool,
}

impl Default for ProgramOptions {
    fn default() -> ProgramOptions {
        ProgramOptions {
            backend: Backend::Auto,
            track_cost: true,
            keep_code_text: false,
            fast_compile: false,
            inject_fault: false,
            lazy_variables: false,
        }
    }
}

/// What runs the program.
#[derive(Clone, Debug)]
enum Engine {
    Interpreter,
    Jit(Arc<JitProgram>),
    Auto(Arc<AutoJit>),
}

/// The state of [`Backend::Auto`]: what compiling needs, how often the program ran, and the
/// compiled program once there is one (`None` inside if compiling failed).
#[derive(Debug)]
struct AutoJit {
    checked: CheckedAst,
    env: PlanEnv,
    evaluations: AtomicU32,
    compiled: OnceLock<Option<Arc<JitProgram>>>,
}

/// A compiled expression, ready to evaluate.
///
/// `Send + Sync`: one program may be evaluated from many threads at once.
#[derive(Clone, Debug)]
pub struct Program {
    plan: Arc<Plan>,
    engine: Engine,
    cost_limit: Option<u64>,
    track_cost: bool,
    fast_compile: bool,
    lazy_variables: bool,
}

fn issues_of(ast: &Ast, e: Error) -> Issues {
    let offset = ast.parsed.source_info.anchor(e.expr_id).unwrap_or(0);
    let d = Diagnostic {
        offset,
        expr_id: e.expr_id,
        message: e.message,
    };
    Issues::new(vec![d], ast.source.clone())
}

impl Program {
    pub(crate) fn new(
        ast: &Ast,
        env: &PlanEnv,
        cost_limit: Option<u64>,
        options: ProgramOptions,
    ) -> Result<Program, Issues> {
        let plan = match &ast.checked {
            Some(checked) => Plan::checked(checked, env),
            None => Plan::unchecked(&ast.parsed, env),
        };
        let plan = Arc::new(plan.map_err(|e| issues_of(ast, e))?);
        let engine = match (&ast.checked, options.backend) {
            (None, _) | (_, Backend::Interpreter) => Engine::Interpreter,
            (Some(checked), Backend::Jit) => {
                let jit_options = JitOptions {
                    keep_clif: options.keep_code_text,
                    track_cost: options.track_cost,
                    fast_compile: options.fast_compile,
                    inject_fault: options.inject_fault,
                    lazy_variables: options.lazy_variables,
                    ..JitOptions::default()
                };
                match JitProgram::compile(checked, env, plan.clone(), jit_options) {
                    Ok(jit) => Engine::Jit(Arc::new(jit)),
                    // Over the native-code budget: interpreted, as documented.
                    Err(cel_jit::JitError::TooLarge { .. }) => Engine::Interpreter,
                    Err(cel_jit::JitError::Eval(err)) => return Err(issues_of(ast, err)),
                    Err(other) => {
                        return Err(issues_of(ast, Error::internal(other.to_string())));
                    }
                }
            }
            (Some(checked), Backend::Auto) => {
                let mut nodes = 0usize;
                checked.ast.expr.walk(&mut |_| nodes += 1);
                if nodes > Backend::AUTO_MAX_NODES {
                    Engine::Interpreter
                } else {
                    Engine::Auto(Arc::new(AutoJit {
                        checked: checked.clone(),
                        env: env.clone(),
                        evaluations: AtomicU32::new(0),
                        compiled: OnceLock::new(),
                    }))
                }
            }
        };
        Ok(Program {
            plan,
            engine,
            cost_limit,
            track_cost: options.track_cost,
            fast_compile: options.fast_compile,
            lazy_variables: options.lazy_variables,
        })
    }

    /// The same program with another cost limit (`None`: unlimited). An evaluation whose
    /// cost exceeds it stops with "operation cancelled: actual cost limit exceeded".
    pub fn with_cost_limit(mut self, limit: Option<u64>) -> Program {
        self.cost_limit = limit;
        self
    }

    /// The cost limit.
    pub fn cost_limit(&self) -> Option<u64> {
        self.cost_limit
    }

    /// The backend that runs the next evaluation: [`Backend::Jit`] once the program is
    /// compiled, [`Backend::Interpreter`] otherwise.
    pub fn backend(&self) -> Backend {
        match &self.engine {
            Engine::Jit(_) => Backend::Jit,
            Engine::Interpreter => Backend::Interpreter,
            Engine::Auto(a) => match a.compiled.get() {
                Some(Some(_)) => Backend::Jit,
                _ => Backend::Interpreter,
            },
        }
    }

    /// How many subtrees of a compiled program are evaluated by the interpreter (`None` if
    /// the program is not compiled).
    pub fn residuals(&self) -> Option<usize> {
        self.compiled().map(|j| j.residuals())
    }

    /// The IR of a compiled program, if it was made with
    /// [`ProgramOptions::keep_code_text`].
    pub fn ir_text(&self) -> Option<&str> {
        self.compiled().and_then(|j| j.ir_text())
    }

    /// The Cranelift function of a compiled program, if it was made with
    /// [`ProgramOptions::keep_code_text`].
    pub fn clif_text(&self) -> Option<&str> {
        self.compiled().and_then(|j| j.clif_text())
    }

    fn compiled(&self) -> Option<&JitProgram> {
        match &self.engine {
            Engine::Jit(j) => Some(j),
            Engine::Auto(a) => a.compiled.get().and_then(|c| c.as_deref()),
            Engine::Interpreter => None,
        }
    }

    /// The compiled program to run, compiling it when [`Backend::Auto`] decides to.
    #[inline]
    fn native(&self) -> Option<&JitProgram> {
        match &self.engine {
            Engine::Jit(j) => Some(j),
            Engine::Interpreter => None,
            Engine::Auto(a) => {
                if let Some(c) = a.compiled.get() {
                    return c.as_deref();
                }
                let n = a.evaluations.fetch_add(1, Ordering::Relaxed);
                if n + 1 < Backend::AUTO_JIT_AFTER {
                    return None;
                }
                a.compiled
                    .get_or_init(|| {
                        let options = JitOptions {
                            track_cost: self.track_cost,
                            fast_compile: self.fast_compile,
                            lazy_variables: self.lazy_variables,
                            ..JitOptions::default()
                        };
                        JitProgram::compile(&a.checked, &a.env, self.plan.clone(), options)
                            .ok()
                            .map(Arc::new)
                    })
                    .as_deref()
            }
        }
    }

    #[inline]
    fn run(&self, activation: &dyn Activation, interrupt: Option<&AtomicBool>) -> Evaluation {
        let limit = if self.track_cost {
            self.cost_limit
        } else {
            None
        };
        let mut e = match self.native() {
            Some(j) => j.eval_interruptible(activation, limit, interrupt),
            None => {
                // An evaluation inside another one's (an activation computing a variable)
                // keeps its host calls out of the outer one's journal.
                let _own_calls = self
                    .plan
                    .calls_external()
                    .then(cel_runtime::journal::Scope::isolate);
                self.plan.eval_interruptible(activation, limit, interrupt)
            }
        };
        if !self.track_cost {
            e.cost = 0;
        }
        e
    }

    /// Evaluates the expression against the variables of an activation.
    #[inline]
    pub fn eval(&self, activation: &dyn Activation) -> Result<Value, Error> {
        self.run(activation, None).result
    }

    /// Evaluates, also returning the evaluation's details (its cost), which are reported
    /// for failed evaluations too.
    #[inline]
    pub fn eval_details(&self, activation: &dyn Activation) -> (Result<Value, Error>, EvalDetails) {
        let e = self.run(activation, None);
        (
            e.result,
            EvalDetails {
                actual_cost: e.cost,
            },
        )
    }

    /// [`Program::eval_details`] that the host can stop: once `interrupt` is set (from
    /// another thread, by a deadline or a cancelled request), the evaluation ends at its
    /// next comprehension iteration with the error "operation interrupted"
    /// ([`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled)), on either backend.
    /// Expressions without comprehensions finish regardless: their time is bounded by their
    /// size.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use celerity::{Env, ErrorKind, MapActivation};
    ///
    /// let env = Env::builder().all_extension_libraries().build();
    /// let program = env.program(&env.compile("lists.range(1000).all(i, i >= 0)").unwrap()).unwrap();
    /// let stop = AtomicBool::new(true); // set before, for the example; normally set later
    /// let (result, _) = program.eval_interruptible(&MapActivation::new(), &stop);
    /// assert_eq!(result.unwrap_err().kind, ErrorKind::Cancelled);
    /// stop.store(false, Ordering::Relaxed);
    /// assert!(program.eval_interruptible(&MapActivation::new(), &stop).0.is_ok());
    /// ```
    pub fn eval_interruptible(
        &self,
        activation: &dyn Activation,
        interrupt: &AtomicBool,
    ) -> (Result<Value, Error>, EvalDetails) {
        let e = self.run(activation, Some(interrupt));
        (
            e.result,
            EvalDetails {
                actual_cost: e.cost,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn programs_are_send_and_sync() {
        assert_send_sync::<Program>();
    }
}
