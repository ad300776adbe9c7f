//! [`Program`]: a planned expression, evaluated many times, by the interpreter or as native
//! code.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use cel_interp::{Evaluation, Plan, PlanEnv};
use cel_runtime::{Activation, Error, Value};
use cel_syntax::Diagnostic;

use crate::native::{self, JitError, JitOptions, JitProgram};
use crate::native_cache::{CacheKey, Cached, KeyRef, NativeCache};
use crate::tiering::{AutoJit, CompileSettings, DeclineReason, NativeStatus};
use crate::{Ast, Issues};

/// Facts about one evaluation.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EvalDetails {
    /// The run-time cost in cel-go's cost units. For an evaluation that failed, the cost
    /// reached when it failed (for one stopped by the cost limit, including the step that
    /// crossed it), as cel-go reports it.
    pub actual_cost: u64,
    /// What ran the evaluation: [`Backend::Jit`] (the native program, which hands an
    /// evaluation that goes over the cost limit, and any subtree it does not compile, to
    /// the interpreter) or [`Backend::Interpreter`]; never [`Backend::Auto`], which is a
    /// policy for choosing between them. Under [`Backend::Auto`] it says when the program
    /// switched to native code.
    pub backend: Backend,
}

impl Default for EvalDetails {
    fn default() -> EvalDetails {
        EvalDetails {
            actual_cost: 0,
            backend: Backend::Interpreter,
        }
    }
}

/// How a program is executed. Every backend gives the same values, errors and costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
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
    ///
    /// The compile runs off the request path: the [`Backend::AUTO_JIT_AFTER`]th evaluation
    /// only submits it (exactly once per program, whatever the number of threads), to a
    /// background thread shared by the process or to the host's executor
    /// ([`EnvBuilder::compile_executor`](crate::EnvBuilder::compile_executor)). That
    /// evaluation and every other one are interpreted until the native program is
    /// published; from then on they run it. No evaluation waits for a compile.
    /// [`Program::native_status`] tells where a program stands, and
    /// [`EnvBuilder::on_native_compile`](crate::EnvBuilder::on_native_compile) hears of
    /// each compile's outcome, a failure included (the program is then interpreted for
    /// good, with the same answers).
    #[default]
    Auto,
}

impl Backend {
    /// How many evaluations [`Backend::Auto`] interprets before it submits the compile:
    /// compiling costs about as much as a hundred interpreted evaluations of a typical
    /// expression.
    pub const AUTO_JIT_AFTER: u32 = 100;

    /// The largest expression (in AST nodes) [`Backend::Auto`] tries to compile; larger ones
    /// would exceed the native-code budget anyway, and are interpreted without trying.
    pub const AUTO_MAX_NODES: usize = 20_000;
}

/// Options of one program. Where tiered compiles run and who hears of them are options of
/// the environment ([`EnvBuilder::compile_executor`](crate::EnvBuilder::compile_executor),
/// [`EnvBuilder::on_native_compile`](crate::EnvBuilder::on_native_compile)).
///
/// Built from [`ProgramOptions::default`] with its setters (more options will come, so the
/// struct cannot be written as a literal outside this crate):
///
/// ```
/// use celerity::{Backend, ProgramOptions};
/// let options = ProgramOptions::default().backend(Backend::Jit).track_cost(false);
/// assert!(!options.track_cost);
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ProgramOptions {
    /// The backend: [`Backend::Jit`] compiles when the program is made, on the calling
    /// thread; [`Backend::Auto`] (the default) compiles in the background once the program
    /// has run [`Backend::AUTO_JIT_AFTER`] times.
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
    /// prove the comparison of backends can fail: set only with the `fault-injection`
    /// feature.
    pub(crate) inject_fault: bool,
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

crate::option_setters!(ProgramOptions {
    backend: Backend,
    track_cost: bool,
    keep_code_text: bool,
    fast_compile: bool,
    lazy_variables: bool,
});

impl ProgramOptions {
    /// Compiles native code with a deliberate fault (one cost unit too many), so that a
    /// test comparing backends can show it catches a disagreement. Only with the
    /// `fault-injection` feature; never for production use.
    #[cfg(feature = "fault-injection")]
    pub fn inject_fault(mut self, on: bool) -> Self {
        self.inject_fault = on;
        self
    }
}

/// What runs the program.
#[derive(Clone, Debug)]
enum Engine {
    /// The interpreter, for good; `declined` says why native code was not made, when it
    /// was asked for.
    Interpreter {
        declined: Option<DeclineReason>,
    },
    Jit(Arc<JitProgram>),
    Auto(Arc<AutoJit>),
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
}

/// The environment's cache of native programs and this program's key in it, when the
/// expression may use it (see `native_cache`).
pub(crate) type CacheSlot = Option<(Arc<NativeCache>, CacheKey)>;

/// [`Backend::Jit`]: compiles on the calling thread, when the program is made. An
/// expression over the native-code budget is interpreted; any other failure is an error of
/// the program.
fn compile_now(
    ast: &Ast,
    checked: &cel_checker::CheckedAst,
    env: &PlanEnv,
    plan: Arc<Plan>,
    options: JitOptions,
    tiering: &CompileSettings,
    cache: CacheSlot,
) -> Result<Engine, Issues> {
    let started = std::time::Instant::now();
    let compiled = JitProgram::compile(checked, env, plan, options).map(Arc::new);
    if let Some((cache, key)) = cache {
        match &compiled {
            Ok(jit) => cache.insert(key, Cached::Compiled(jit.clone())),
            Err(JitError::TooLarge { budget }) => {
                cache.insert(key, Cached::TooLarge { budget: *budget })
            }
            Err(_) => {}
        }
    }
    let outcome = match &compiled {
        Ok(_) => NativeStatus::Compiled,
        Err(JitError::TooLarge { budget }) => NativeStatus::Declined {
            reason: DeclineReason::TooLarge { budget: *budget },
        },
        Err(e) => NativeStatus::Failed {
            message: e.to_string(),
        },
    };
    tiering.report(ast.source.text(), Backend::Jit, outcome, started.elapsed());
    match compiled {
        Ok(jit) => Ok(Engine::Jit(jit)),
        Err(JitError::TooLarge { budget }) => Ok(Engine::Interpreter {
            declined: Some(DeclineReason::TooLarge { budget }),
        }),
        Err(JitError::Eval(err)) => Err(issues_of(ast, err)),
        Err(other) => Err(issues_of(ast, Error::internal(other.to_string()))),
    }
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
        tiering: &CompileSettings,
        cache: Option<&Arc<NativeCache>>,
    ) -> Result<Program, Issues> {
        #[cfg_attr(
            not(feature = "jit"),
            allow(
                clippy::needless_update,
                reason = "the stand-in for cel-jit's options has only the fields set here"
            )
        )]
        let jit_options = JitOptions {
            keep_clif: options.keep_code_text,
            track_cost: options.track_cost,
            fast_compile: options.fast_compile,
            inject_fault: options.inject_fault,
            lazy_variables: options.lazy_variables,
            ..JitOptions::default()
        };
        let native_wanted = ast.checked.is_some() && options.backend != Backend::Interpreter;
        if let Some(checked) = ast
            .checked
            .as_ref()
            .filter(|_| native_wanted && !native::AVAILABLE)
        {
            // This build has no compiler: the interpreter runs the program, with the same
            // answers, and nothing is ever submitted or timed.
            let plan = Plan::checked(checked, env);
            return Ok(Program {
                plan: Arc::new(plan.map_err(|e| issues_of(ast, e))?),
                engine: Engine::Interpreter {
                    declined: Some(DeclineReason::NoNativeCode),
                },
                cost_limit,
                track_cost: options.track_cost,
            });
        }
        let cache = cache
            .filter(|_| native_wanted)
            .and_then(|cache| Some((cache, KeyRef::new(ast.source.text(), jit_options)?)));
        let declined_before = match cache.and_then(|(cache, key)| cache.get(key)) {
            Some(Cached::Compiled(jit)) => {
                // Planning is deterministic too: the native program's plan is this one's.
                return Ok(Program {
                    plan: jit.plan().clone(),
                    engine: Engine::Jit(jit),
                    cost_limit,
                    track_cost: options.track_cost,
                });
            }
            Some(Cached::TooLarge { budget }) => Some(DeclineReason::TooLarge { budget }),
            None => None,
        };
        let plan = match &ast.checked {
            Some(checked) => Plan::checked(checked, env),
            None => Plan::unchecked(&ast.parsed, env),
        };
        let plan = Arc::new(plan.map_err(|e| issues_of(ast, e))?);
        // A miss: a compile's outcome is kept under its own copy of the key.
        let slot = || -> CacheSlot { cache.map(|(cache, key)| (cache.clone(), key.owned())) };
        let engine = match (&ast.checked, options.backend, declined_before) {
            (None, _, _) | (_, Backend::Interpreter, _) => Engine::Interpreter { declined: None },
            (Some(_), _, Some(reason)) => Engine::Interpreter {
                declined: Some(reason),
            },
            (Some(checked), Backend::Jit, None) => compile_now(
                ast,
                checked,
                env,
                plan.clone(),
                jit_options,
                tiering,
                slot(),
            )?,
            (Some(checked), Backend::Auto, None) => {
                let mut nodes = 0usize;
                checked.ast.expr.walk(&mut |_| nodes += 1);
                if nodes > Backend::AUTO_MAX_NODES {
                    Engine::Interpreter {
                        declined: Some(DeclineReason::TooManyNodes { nodes }),
                    }
                } else {
                    Engine::Auto(Arc::new(AutoJit::new(
                        ast.source.text(),
                        checked,
                        env,
                        plan.clone(),
                        jit_options,
                        tiering,
                        slot(),
                    )))
                }
            }
        };
        Ok(Program {
            plan,
            engine,
            cost_limit,
            track_cost: options.track_cost,
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
        match self.compiled() {
            Some(_) => Backend::Jit,
            None => Backend::Interpreter,
        }
    }

    /// Where the program stands with native code: never compiled, waiting for
    /// [`Backend::AUTO_JIT_AFTER`] evaluations, compiling, compiled, declined (over the
    /// native-code budget) or failed. A snapshot: under [`Backend::Auto`] it moves forward
    /// as other threads evaluate and the compile ends.
    ///
    /// ```
    /// use celerity::{Env, MapActivation, NativeStatus};
    ///
    /// // An executor that runs each compile on the spot: the 100th evaluation compiles.
    /// let env = Env::builder().compile_executor(celerity::CompileTask::run).build();
    /// let program = env.program(&env.compile("1 + 2 == 3").unwrap()).unwrap();
    /// assert_eq!(program.native_status(), NativeStatus::Pending);
    /// for _ in 0..celerity::Backend::AUTO_JIT_AFTER {
    ///     program.eval(&MapActivation::new()).unwrap();
    /// }
    /// assert_eq!(program.native_status(), NativeStatus::Compiled);
    /// ```
    pub fn native_status(&self) -> NativeStatus {
        match &self.engine {
            Engine::Interpreter { declined: None } => NativeStatus::Interpreted,
            Engine::Interpreter {
                declined: Some(reason),
            } => NativeStatus::Declined {
                reason: reason.clone(),
            },
            Engine::Jit(_) => NativeStatus::Compiled,
            Engine::Auto(auto) => auto.status(),
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

    /// Whether this program and `other` run the same native code: one was made from the
    /// other (a clone), or both from the same expression of one environment, the second
    /// found in the environment's cache of native programs
    /// ([`EnvBuilder::native_cache`](crate::EnvBuilder::native_cache)). `false` when either
    /// is not compiled.
    pub fn shares_native_code(&self, other: &Program) -> bool {
        match (self.compiled(), other.compiled()) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            _ => false,
        }
    }

    fn compiled(&self) -> Option<&JitProgram> {
        match &self.engine {
            Engine::Jit(j) => Some(j),
            Engine::Auto(auto) => auto.compiled(),
            Engine::Interpreter { .. } => None,
        }
    }

    /// The compiled program to run this evaluation, if any (under [`Backend::Auto`], counting
    /// the evaluation and submitting the compile when it is time).
    #[inline]
    fn native(&self) -> Option<&JitProgram> {
        match &self.engine {
            Engine::Jit(j) => Some(j),
            Engine::Interpreter { .. } => None,
            Engine::Auto(auto) => auto.native(),
        }
    }

    #[inline]
    fn run(
        &self,
        activation: &dyn Activation,
        interrupt: Option<&AtomicBool>,
    ) -> (Evaluation, Backend) {
        let limit = self.effective_limit();
        let (mut e, backend) = match self.native() {
            Some(j) => (
                j.eval_interruptible(activation, limit, interrupt),
                Backend::Jit,
            ),
            None => (
                self.interpret(activation, limit, interrupt),
                Backend::Interpreter,
            ),
        };
        if !self.track_cost {
            e.cost = 0;
        }
        (e, backend)
    }

    /// The cost limit an evaluation runs under: none when cost is not tracked.
    #[inline]
    fn effective_limit(&self) -> Option<u64> {
        self.cost_limit.filter(|_| self.track_cost)
    }

    /// Evaluates with the interpreter.
    fn interpret(
        &self,
        activation: &dyn Activation,
        limit: Option<u64>,
        interrupt: Option<&AtomicBool>,
    ) -> Evaluation {
        // An evaluation inside another one's (an activation computing a variable) keeps its
        // host calls out of the outer one's journal.
        let _own_calls = self
            .plan
            .calls_external()
            .then(cel_runtime::journal::Scope::isolate);
        self.plan.eval_interruptible(activation, limit, interrupt)
    }

    /// Evaluates the expression against the variables of an activation.
    #[inline]
    pub fn eval(&self, activation: &dyn Activation) -> Result<Value, Error> {
        // The result alone, not moved through `run`'s tuple (each move of a freshly written
        // value is read back in wider loads than it was written with, and stalls).
        let limit = self.effective_limit();
        match self.native() {
            Some(j) => j.eval_interruptible(activation, limit, None).result,
            None => self.interpret(activation, limit, None).result,
        }
    }

    /// Evaluates, also returning the evaluation's details (its cost), which are reported
    /// for failed evaluations too.
    #[inline]
    pub fn eval_details(&self, activation: &dyn Activation) -> (Result<Value, Error>, EvalDetails) {
        let (e, backend) = self.run(activation, None);
        (
            e.result,
            EvalDetails {
                actual_cost: e.cost,
                backend,
            },
        )
    }

    /// [`Program::eval_details`] that writes the value into a slot the caller provides and
    /// keeps between evaluations, instead of returning it. On a hot path of small
    /// expressions this is the fastest way to evaluate: native code writes its result in
    /// place, sparing the copies of a returned `Result<Value, Error>` (a quarter of the
    /// time of `true`, a sixth of `self.a < self.b`'s). When the evaluation fails, the slot
    /// keeps what it held.
    ///
    /// ```
    /// use celerity::{Env, MapActivation, Type, Value};
    ///
    /// let env = Env::builder().variable("x", Type::Int).build();
    /// let program = env.program(&env.compile("x * 2 < 10").unwrap()).unwrap();
    /// let mut slot = Value::Null;
    /// for x in 0..8_i64 {
    ///     let (outcome, details) = program.eval_into(&MapActivation::new().with("x", x), &mut slot);
    ///     outcome.unwrap();
    ///     assert_eq!(slot, Value::Bool(x * 2 < 10));
    ///     assert_eq!(details.actual_cost, 3);
    /// }
    /// ```
    #[inline]
    pub fn eval_into(
        &self,
        activation: &dyn Activation,
        slot: &mut Value,
    ) -> (Result<(), Error>, EvalDetails) {
        let limit = self.effective_limit();
        let (result, cost, backend) = match self.native() {
            Some(j) => {
                let (result, cost) = j.eval_into(activation, limit, None, slot);
                (result.map_err(|e| *e), cost, Backend::Jit)
            }
            None => {
                let e = self.interpret(activation, limit, None);
                (e.result.map(|v| *slot = v), e.cost, Backend::Interpreter)
            }
        };
        let actual_cost = if self.track_cost { cost } else { 0 };
        (
            result,
            EvalDetails {
                actual_cost,
                backend,
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
        let (e, backend) = self.run(activation, Some(interrupt));
        (
            e.result,
            EvalDetails {
                actual_cost: e.cost,
                backend,
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

    /// Without the `jit` feature every backend interprets, with the interpreter's values,
    /// errors and costs, and says why there is no native code.
    #[cfg(not(feature = "jit"))]
    #[test]
    fn without_native_code_every_backend_interprets() {
        use crate::{Env, MapActivation, Type};
        let env = Env::builder().variable("x", Type::Int).build();
        let vars = MapActivation::new().with("x", 4i64);
        let run = |expr: &str, backend: Backend| {
            let options = ProgramOptions::default().backend(backend);
            let program = env
                .program_with(&env.compile(expr).unwrap(), options)
                .unwrap();
            let status = program.native_status();
            let mut outcomes = Vec::new();
            // Past the evaluations after which `Auto` would compile.
            for _ in 0..=Backend::AUTO_JIT_AFTER {
                let (result, details) = program.eval_details(&vars);
                outcomes.push((result.map_err(|e| e.to_string()), details.actual_cost));
                assert_eq!(details.backend, Backend::Interpreter);
            }
            assert_eq!(program.backend(), Backend::Interpreter);
            (status, outcomes)
        };
        for expr in ["[1, 2, x].map(y, y * x).filter(y, y > 4)", "x / (x - 4)"] {
            let (status, interpreted) = run(expr, Backend::Interpreter);
            assert_eq!(status, NativeStatus::Interpreted);
            for backend in [Backend::Jit, Backend::Auto] {
                let (status, outcomes) = run(expr, backend);
                assert_eq!(
                    status,
                    NativeStatus::Declined {
                        reason: DeclineReason::NoNativeCode
                    }
                );
                assert_eq!(outcomes, interpreted, "{expr} on {backend:?}");
            }
        }
    }

    /// A constant program is evaluated once when it is made and gets no native code (which
    /// would never run); one that reads a variable, or is made for its code's text, does.
    #[cfg(feature = "jit")]
    #[test]
    fn constant_programs_make_no_native_code() {
        use crate::{Env, MapActivation, Type};
        let env = Env::builder().variable("x", Type::Int).build();
        let make = |expr: &str, keep_code_text: bool| {
            let options = ProgramOptions::default()
                .backend(Backend::Jit)
                .keep_code_text(keep_code_text);
            env.program_with(&env.compile(expr).unwrap(), options)
                .unwrap()
        };
        let has_code = |p: &Program| p.compiled().expect("compiled").has_generated_code();
        let constant = make("[1, 2].size() + 1 == 3", false);
        assert!(!has_code(&constant));
        assert_eq!(
            constant.eval(&MapActivation::new()).unwrap(),
            Value::Bool(true)
        );
        assert!(has_code(&make("[1, 2].size() + 1 == 3", true)));
        assert!(has_code(&make("x + 1 == 3", false)));
    }
}
