//! Tiered compilation for [`Backend::Auto`]: a program is interpreted until it has run
//! [`Backend::AUTO_JIT_AFTER`] times, then its compile is handed to an executor (by default
//! one background thread shared by the process) while every caller keeps interpreting; the
//! native program is published once, and from the next evaluation on, every caller runs it.
//!
//! The state of one program is a small machine, `Pending -> Compiling -> Compiled |
//! Declined | Failed`: an evaluation counter and a `submitted` flag (only the evaluation
//! that flips the flag submits, so a program is compiled at most once), and the outcome in a
//! `OnceLock`, whose `get` is all the evaluation hot path reads once the program is
//! compiled. Nothing on the evaluation path takes a lock or waits for a compile.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{self, SendError, Sender};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use cel_checker::CheckedAst;
use cel_interp::{Plan, PlanEnv};

use crate::Backend;
use crate::native::{JitError, JitOptions, JitProgram};
use crate::native_cache::Cached;
use crate::program::CacheSlot;

/// Where a program stands with native code (see [`Program::native_status`](crate::Program::native_status)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NativeStatus {
    /// The program is never compiled: it was made for [`Backend::Interpreter`], or from an
    /// unchecked expression (native code needs the checker's types).
    Interpreted,
    /// [`Backend::Auto`]: interpreted, and counting evaluations until
    /// [`Backend::AUTO_JIT_AFTER`].
    Pending,
    /// [`Backend::Auto`]: the compile was submitted and has not finished (it may still be
    /// queued); evaluations are interpreted meanwhile.
    Compiling,
    /// Native code runs the program.
    Compiled,
    /// Native code was not made, by design: the program is interpreted for good.
    Declined {
        /// Why.
        reason: DeclineReason,
    },
    /// Compiling failed (a bug in the compiler, or a compile task the executor dropped
    /// without running it): the program is interpreted for good, with the same answers.
    Failed {
        /// What went wrong.
        message: String,
    },
}

/// Why a program is not compiled to native code.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeclineReason {
    /// The expression lowers to more IR instructions than the native-code budget allows
    /// (`cel_ir::DEFAULT_BUDGET`), which keeps compile time bounded.
    TooLarge {
        /// The budget, in IR instructions.
        budget: usize,
    },
    /// The expression has more than [`Backend::AUTO_MAX_NODES`] AST nodes, so
    /// [`Backend::Auto`] did not try to compile it (it would exceed the budget anyway).
    TooManyNodes {
        /// Its number of nodes.
        nodes: usize,
    },
    /// This build has no native code (`celerity` without its `jit` feature, as for
    /// WebAssembly): the interpreter runs every program, with the same answers.
    NoNativeCode,
}

impl std::fmt::Display for DeclineReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeclineReason::TooLarge { budget } => {
                write!(f, "the expression needs more than {budget} IR instructions")
            }
            DeclineReason::TooManyNodes { nodes } => write!(
                f,
                "the expression has {nodes} nodes, more than {} are not compiled",
                Backend::AUTO_MAX_NODES
            ),
            DeclineReason::NoNativeCode => f.write_str("this build has no native code"),
        }
    }
}

/// The outcome of one native compile, given to the hook registered with
/// [`EnvBuilder::on_native_compile`](crate::EnvBuilder::on_native_compile).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CompileReport<'a> {
    /// The expression's text.
    pub expression: &'a str,
    /// The backend that asked for the compile: [`Backend::Jit`] (when the program was made,
    /// on the thread that made it) or [`Backend::Auto`] (tiered, on the executor).
    pub backend: Backend,
    /// [`NativeStatus::Compiled`], [`NativeStatus::Declined`] or [`NativeStatus::Failed`].
    pub outcome: NativeStatus,
    /// How long compiling took (zero for a task dropped without running).
    pub compile_time: Duration,
}

/// Runs compile tasks: see [`EnvBuilder::compile_executor`](crate::EnvBuilder::compile_executor).
pub(crate) type CompileExecutor = Arc<dyn Fn(CompileTask) + Send + Sync>;

/// Hears of compiles: see [`EnvBuilder::on_native_compile`](crate::EnvBuilder::on_native_compile).
pub(crate) type CompileHook = Arc<dyn Fn(&CompileReport<'_>) + Send + Sync>;

/// Where an environment's native compiles run and who hears how they went: the host's
/// executor (none: the background thread) and hook. Set on an [`EnvBuilder`]
/// ([`compile_executor`](crate::EnvBuilder::compile_executor),
/// [`on_native_compile`](crate::EnvBuilder::on_native_compile)), or as a whole
/// ([`EnvBuilder::compile_settings`](crate::EnvBuilder::compile_settings)) where
/// environments are built for the host, as for custom resources' rules
/// (`celerity_kubernetes::crd::RuleOptions`) and admission policies
/// (`celerity_kubernetes::admission::AdmissionEnv`).
///
/// [`EnvBuilder`]: crate::EnvBuilder
#[derive(Clone, Default)]
pub struct CompileSettings {
    pub(crate) executor: Option<CompileExecutor>,
    pub(crate) on_compile: Option<CompileHook>,
    /// The capacity of the environment's cache of native programs; `None`: the default.
    native_cache: Option<usize>,
}

impl CompileSettings {
    /// Whether these are the defaults (no executor, no hook, the default cache): what
    /// environments built with them may share.
    pub fn is_default(&self) -> bool {
        self.executor.is_none() && self.on_compile.is_none() && self.native_cache.is_none()
    }

    /// Runs compiles with `executor` (see
    /// [`EnvBuilder::compile_executor`](crate::EnvBuilder::compile_executor)).
    pub fn executor(mut self, executor: impl Fn(CompileTask) + Send + Sync + 'static) -> Self {
        self.executor = Some(Arc::new(executor));
        self
    }

    /// Calls `hook` after each compile (see
    /// [`EnvBuilder::on_native_compile`](crate::EnvBuilder::on_native_compile)).
    pub fn on_compile(mut self, hook: impl Fn(&CompileReport<'_>) + Send + Sync + 'static) -> Self {
        self.on_compile = Some(Arc::new(hook));
        self
    }

    /// Keeps up to `capacity` native programs per environment (see
    /// [`EnvBuilder::native_cache`](crate::EnvBuilder::native_cache)).
    pub fn native_cache(mut self, capacity: usize) -> Self {
        self.native_cache = Some(capacity);
        self
    }

    /// The capacity of an environment's cache of native programs.
    pub(crate) fn native_cache_capacity(&self) -> usize {
        self.native_cache
            .unwrap_or(crate::native_cache::DEFAULT_CAPACITY)
    }
}

impl std::fmt::Debug for CompileSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompileSettings")
            .field("host_executor", &self.executor.is_some())
            .field("on_compile", &self.on_compile.is_some())
            .field("native_cache", &self.native_cache_capacity())
            .finish()
    }
}

impl CompileSettings {
    /// Tells the hook, if any, how a compile went.
    pub(crate) fn report(
        &self,
        expression: &str,
        backend: Backend,
        outcome: NativeStatus,
        compile_time: Duration,
    ) {
        if let Some(hook) = &self.on_compile {
            hook(&CompileReport {
                expression,
                backend,
                outcome,
                compile_time,
            });
        }
    }
}

/// One program's compile, handed to the executor once, after the program's
/// [`Backend::AUTO_JIT_AFTER`]th evaluation. Call [`CompileTask::run`] on any thread: it
/// compiles and publishes the native program, which the program's evaluations use from then
/// on. The task holds only a weak reference to the program: if every clone of the program
/// was dropped before the task runs, it does nothing.
///
/// A task dropped without running marks its program [`NativeStatus::Failed`] (and the hook
/// hears of it), so an executor that sheds work does not leave programs `Compiling` forever.
#[must_use = "a compile task does nothing unless it is run"]
pub struct CompileTask {
    /// `None` once run.
    program: Option<Weak<AutoJit>>,
}

impl std::fmt::Debug for CompileTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let live = self.program.as_ref().is_some_and(|w| w.strong_count() > 0);
        f.debug_struct("CompileTask")
            .field("program_alive", &live)
            .finish()
    }
}

impl CompileTask {
    /// Compiles the program and publishes the outcome (CPU-bound: tens of microseconds to a
    /// few milliseconds, bounded by the native-code budget; it waits for nothing else). A
    /// panic in the compiler is caught and reported as [`NativeStatus::Failed`].
    pub fn run(mut self) {
        if let Some(program) = self.program.take().and_then(|p| p.upgrade()) {
            program.compile_and_publish();
        }
    }

    /// Gives the task up without compiling: its program is interpreted for good, and reports
    /// `why` as its failure.
    fn abandon(mut self, why: &str) {
        if let Some(program) = self.program.take().and_then(|p| p.upgrade()) {
            program.publish(Outcome::Failed(why.to_string()), Duration::ZERO);
        }
    }
}

impl Drop for CompileTask {
    fn drop(&mut self) {
        if let Some(program) = self.program.take().and_then(|p| p.upgrade()) {
            let why = "the compile task was dropped without running";
            program.publish(Outcome::Failed(why.to_string()), Duration::ZERO);
        }
    }
}

/// How a tiered compile ended.
#[derive(Debug)]
enum Outcome {
    /// Shared with the environment's cache of native programs.
    Compiled(Arc<JitProgram>),
    Declined(DeclineReason),
    Failed(String),
}

impl Outcome {
    fn program(&self) -> Option<&JitProgram> {
        match self {
            Outcome::Compiled(jit) => Some(jit),
            Outcome::Declined(_) | Outcome::Failed(_) => None,
        }
    }

    fn status(&self) -> NativeStatus {
        match self {
            Outcome::Compiled(_) => NativeStatus::Compiled,
            Outcome::Declined(reason) => NativeStatus::Declined {
                reason: reason.clone(),
            },
            Outcome::Failed(message) => NativeStatus::Failed {
                message: message.clone(),
            },
        }
    }
}

/// The state of a [`Backend::Auto`] program: what compiling needs, how often the program
/// ran, whether its compile was submitted, and how the compile ended.
#[derive(Debug)]
pub(crate) struct AutoJit {
    expression: Arc<str>,
    checked: CheckedAst,
    env: PlanEnv,
    plan: Arc<Plan>,
    options: JitOptions,
    tiering: CompileSettings,
    /// Where the native program goes once compiled, for programs made again.
    cache: CacheSlot,
    /// Evaluations counted before the compile was submitted (a few more may be counted by
    /// evaluations racing with the submitting one).
    evaluations: AtomicU32,
    /// Set by the one evaluation that submits the compile.
    submitted: AtomicBool,
    outcome: OnceLock<Outcome>,
}

impl AutoJit {
    pub(crate) fn new(
        expression: &str,
        checked: &CheckedAst,
        env: &PlanEnv,
        plan: Arc<Plan>,
        options: JitOptions,
        tiering: &CompileSettings,
        cache: CacheSlot,
    ) -> AutoJit {
        AutoJit {
            expression: expression.into(),
            checked: checked.clone(),
            env: env.clone(),
            plan,
            options,
            tiering: tiering.clone(),
            cache,
            evaluations: AtomicU32::new(0),
            submitted: AtomicBool::new(false),
            outcome: OnceLock::new(),
        }
    }

    /// The compiled program, if it is published (what [`AutoJit::native`] reads, without
    /// counting an evaluation).
    pub(crate) fn compiled(&self) -> Option<&JitProgram> {
        self.outcome.get().and_then(Outcome::program)
    }

    /// The native program to run this evaluation, or `None` to interpret it. Counts the
    /// evaluation until the compile is submitted, and submits it on the
    /// [`Backend::AUTO_JIT_AFTER`]th.
    #[inline]
    pub(crate) fn native(self: &Arc<Self>) -> Option<&JitProgram> {
        match self.outcome.get() {
            Some(outcome) => outcome.program(),
            None => self.count_evaluation(),
        }
    }

    fn count_evaluation(self: &Arc<Self>) -> Option<&JitProgram> {
        // Once submitted, a plain load: the evaluations that run while the compile does
        // contend on no counter.
        if self.submitted.load(Ordering::Relaxed) {
            return None;
        }
        let n = self.evaluations.fetch_add(1, Ordering::Relaxed) + 1;
        if n < Backend::AUTO_JIT_AFTER || self.submitted.swap(true, Ordering::Relaxed) {
            return None;
        }
        self.submit();
        // An executor that compiles on the spot has published by now: this evaluation runs
        // the native program, as synchronous tiering did.
        self.compiled()
    }

    fn submit(self: &Arc<Self>) {
        let task = CompileTask {
            program: Some(Arc::downgrade(self)),
        };
        match &self.tiering.executor {
            Some(executor) => executor(task),
            None => background::submit(task),
        }
    }

    /// Where the program stands.
    pub(crate) fn status(&self) -> NativeStatus {
        match self.outcome.get() {
            Some(outcome) => outcome.status(),
            None if self.submitted.load(Ordering::Relaxed) => NativeStatus::Compiling,
            None => NativeStatus::Pending,
        }
    }

    fn compile_and_publish(&self) {
        let started = Instant::now();
        let compiled = catch_unwind(AssertUnwindSafe(|| {
            JitProgram::compile(&self.checked, &self.env, self.plan.clone(), self.options)
        }));
        let outcome = match compiled {
            Ok(Ok(jit)) => {
                let jit = Arc::new(jit);
                self.remember(Cached::Compiled(jit.clone()));
                Outcome::Compiled(jit)
            }
            Ok(Err(JitError::TooLarge { budget })) => {
                self.remember(Cached::TooLarge { budget });
                Outcome::Declined(DeclineReason::TooLarge { budget })
            }
            Ok(Err(other)) => Outcome::Failed(other.to_string()),
            Err(panic) => Outcome::Failed(format!(
                "the compiler panicked: {}",
                panic_message(panic.as_ref())
            )),
        };
        self.publish(outcome, started.elapsed());
    }

    /// Puts what the compile gave into the environment's cache.
    fn remember(&self, cached: Cached) {
        if let Some((cache, key)) = &self.cache {
            cache.insert(key.clone(), cached);
        }
    }

    /// Publishes the outcome (once: a program has one compile task) and tells the hook.
    fn publish(&self, outcome: Outcome, compile_time: Duration) {
        let status = outcome.status();
        if self.outcome.set(outcome).is_ok() {
            self.tiering
                .report(&self.expression, Backend::Auto, status, compile_time);
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(no message)"
    }
}

/// The default executor: one thread for the whole process, started by the first compile,
/// taking tasks from a queue in order. Compiles are CPU-bound and rare (once per program),
/// so one thread keeps up, and it never takes a thread from the host's pools.
mod background {
    use super::*;

    /// Its stack: as large as a main thread's, for compiles of deeply nested expressions.
    const STACK_SIZE: usize = 8 << 20;

    fn queue() -> Result<&'static Sender<CompileTask>, &'static str> {
        static QUEUE: OnceLock<Result<Sender<CompileTask>, String>> = OnceLock::new();
        QUEUE
            .get_or_init(|| {
                let (sender, tasks) = mpsc::channel::<CompileTask>();
                std::thread::Builder::new()
                    .name("celerity-compile".to_string())
                    .stack_size(STACK_SIZE)
                    .spawn(move || {
                        for task in tasks {
                            // A panicking hook must not stop the thread that compiles
                            // every other program (the compiler's own panics are caught
                            // inside the task).
                            let _ = catch_unwind(AssertUnwindSafe(|| task.run()));
                        }
                    })
                    .map(|_| sender)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }

    pub(super) fn submit(task: CompileTask) {
        match queue() {
            Ok(sender) => {
                if let Err(SendError(task)) = sender.send(task) {
                    task.abandon("the background compile thread has stopped");
                }
            }
            Err(e) => task.abandon(&format!(
                "the background compile thread could not start: {e}"
            )),
        }
    }
}
