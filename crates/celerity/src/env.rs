//! [`Env`]: declarations, functions, container and options, and the compile pipeline.

use std::collections::HashMap;
use std::sync::Arc;

use cel_checker::{CheckerEnv, CheckerOptions};
use cel_cost::{
    ActualCostFn, CostKey, CostOptions, CostRange, EstimateFn, EstimateOptions, HookScope,
    ResultSizeFn, ResultSizeHook, SizeEstimator,
};
use cel_ext::Library;
use cel_interp::{CostHooks, FunctionTable, PlanEnv};
use cel_runtime::proto::{DescriptorPool, ProtoTypes};
use cel_runtime::{Error, FunctionRegistry, Implementation, Value};
use cel_syntax::macros::{Macro, MacroTable};
use cel_syntax::{Diagnostic, ParserOptions, Source};
use cel_types::{
    Container, FunctionDecl, OlderCelGo, OverloadDecl, Type, TypeProvider, VariableDecl,
};

use crate::native_cache::NativeCache;
use crate::tiering::CompileSettings;
use crate::{Ast, Backend, CompileReport, CompileTask, Issues, Program, ProgramOptions};

/// Options that change what an environment accepts or how it evaluates.
///
/// Built from [`EnvOptions::default`] or [`EnvOptions::kubernetes`] with its setters (more
/// options will come, so the struct cannot be written as a literal outside this crate):
///
/// ```
/// use celerity::EnvOptions;
/// let options = EnvOptions::default().optimize(true).cost_limit(Some(1_000));
/// assert_eq!(options.cost_limit, Some(1_000));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct EnvOptions {
    /// Enable the optional-types library: `x.?f`, `m[?k]`, `optional.of`, `orValue`, ...
    /// (cel-go's `cel.OptionalTypes()`). On by default.
    pub optional_types: bool,
    /// The version of the optional-types library (cel-go's `cel.OptionalTypesVersion`):
    /// version 1 adds `optFlatMap`, version 2 `first`, `last`, `optional.unwrap` and
    /// `unwrapOpt`. The default, `u32::MAX`, is the newest, as cel-go's default.
    pub optional_types_version: u32,
    /// Reject list and map literals whose elements (keys, values) have different types,
    /// `dyn` included, after checking (Kubernetes sets this). As in cel-go v0.29, literals
    /// anywhere under a `format(...)` or `cel.@block` call are exempt. Off by default: mixed
    /// literals are `list(dyn)`.
    pub homogeneous_aggregate_literals: bool,
    /// Allow `1 < 1.5` and other mixed numeric comparisons at check time (Kubernetes sets
    /// this from 1.28). Off by default.
    pub cross_type_numeric_comparisons: bool,
    /// Expand macros (`has`, `all`, `exists`, `map`, ...). On by default.
    pub macros: bool,
    /// Maximum nesting depth of an expression (cel-go: 250).
    pub max_recursion_depth: usize,
    /// Maximum expression size in code points (cel-go: 100,000).
    pub expression_size_limit: usize,
    /// Whether `has()` costs 1 (cel-go's default) or nothing (Kubernetes).
    pub presence_test_has_cost: bool,
    /// cel-go's `OptOptimize` (Kubernetes sets it): constant list and map literals,
    /// conversions of constants and `in` over constant lists are folded when the program is
    /// created, which changes run-time costs, and a failing constant conversion
    /// (`duration('x')`) is an error of the program rather than of its evaluation.
    pub optimize: bool,
    /// The cost limit of each evaluation (`None`: unlimited), cel-go's `CostLimit`.
    pub cost_limit: Option<u64>,
    /// Reject `duration('...')` with a constant argument that does not convert, at compile
    /// time ("invalid duration argument").
    pub validate_duration_literals: bool,
    /// Reject `timestamp('...')` with a constant argument that does not convert.
    pub validate_timestamp_literals: bool,
    /// Reject `matches` with a constant pattern that does not compile.
    pub validate_regex_literals: bool,
    /// How programs are executed (see [`Backend`]). [`Backend::Auto`] by default.
    pub backend: Backend,
    /// The behaviours of an older cel-go to reproduce (a Kubernetes release's; none by
    /// default: cel-go v0.29.2).
    pub older_cel_go: OlderCelGo,
}

impl EnvOptions {
    /// What the Kubernetes API server sets (for the newest version, without its libraries):
    /// homogeneous aggregate literals, cross-type numeric comparisons, optional types, the
    /// four literal validators, `OptOptimize`, free presence tests, and the per-call cost
    /// limit of 1,000,000.
    pub fn kubernetes() -> EnvOptions {
        EnvOptions {
            homogeneous_aggregate_literals: true,
            cross_type_numeric_comparisons: true,
            optional_types: true,
            presence_test_has_cost: false,
            optimize: true,
            cost_limit: Some(1_000_000),
            validate_duration_literals: true,
            validate_timestamp_literals: true,
            validate_regex_literals: true,
            ..EnvOptions::default()
        }
    }
}

impl Default for EnvOptions {
    fn default() -> Self {
        EnvOptions {
            optional_types: true,
            optional_types_version: u32::MAX,
            homogeneous_aggregate_literals: false,
            cross_type_numeric_comparisons: false,
            macros: true,
            max_recursion_depth: 250,
            expression_size_limit: 100_000,
            presence_test_has_cost: true,
            optimize: false,
            cost_limit: None,
            validate_duration_literals: false,
            validate_timestamp_literals: false,
            validate_regex_literals: false,
            backend: Backend::Auto,
            older_cel_go: OlderCelGo::NONE,
        }
    }
}

crate::option_setters!(EnvOptions {
    optional_types: bool,
    optional_types_version: u32,
    homogeneous_aggregate_literals: bool,
    cross_type_numeric_comparisons: bool,
    macros: bool,
    max_recursion_depth: usize,
    expression_size_limit: usize,
    presence_test_has_cost: bool,
    optimize: bool,
    cost_limit: Option<u64>,
    validate_duration_literals: bool,
    validate_timestamp_literals: bool,
    validate_regex_literals: bool,
    backend: Backend,
});

/// A compilation environment: what expressions may refer to, and how they are parsed,
/// checked and planned.
///
/// Cheap to clone; `Send + Sync`. Build one with [`Env::builder`], then
/// [`compile`](Env::compile) expressions and turn them into [`Program`]s.
#[derive(Clone, Debug)]
pub struct Env {
    pub(crate) inner: Arc<EnvInner>,
}

pub(crate) struct EnvInner {
    pub(crate) parser_options: Arc<ParserOptions>,
    pub(crate) checker: CheckerEnv,
    pub(crate) plan_env: PlanEnv,
    pub(crate) options: EnvOptions,
    pub(crate) estimate_hooks: Vec<(CostKey, EstimateFn)>,
    pub(crate) validators: Vec<cel_ext::Validator>,
    pub(crate) program_checks: Vec<cel_ext::Validator>,
    pub(crate) tiering: CompileSettings,
    /// This environment's identity, which the trees it makes carry (`Ast::origin`).
    pub(crate) id: u64,
    /// Native programs compiled from this environment's trees, shared by programs made
    /// again from the same expression.
    pub(crate) native_cache: Arc<NativeCache>,
    /// What it was built from, for [`Env::extend`]: the builder, then what each
    /// [`Env::with_variables`] on the way to this environment added.
    pub(crate) source: Arc<EnvBuilder>,
    pub(crate) additions: Vec<Addition>,
    /// The host's type provider as the checker asks it (the builder's, with each addition's
    /// in front), and the types libraries define, which together make the checker's.
    host_types: Option<Arc<dyn TypeProvider>>,
    library_types: Arc<Vec<Type>>,
}

/// What [`Env::with_variables`] adds to an environment.
#[derive(Clone)]
pub(crate) struct Addition {
    provider: Option<Arc<dyn TypeProvider>>,
    variables: Vec<VariableDecl>,
}

/// Two type providers, the first asked first (an environment's added types in front of its
/// parent's).
#[derive(Debug)]
struct ChainedTypes {
    first: Arc<dyn TypeProvider>,
    then: Option<Arc<dyn TypeProvider>>,
}

impl TypeProvider for ChainedTypes {
    fn find_type(&self, name: &str) -> Option<Type> {
        self.first
            .find_type(name)
            .or_else(|| self.then.as_ref()?.find_type(name))
    }

    fn find_field(&self, message: &str, field: &str) -> Option<cel_types::FieldType> {
        self.first
            .find_field(message, field)
            .or_else(|| self.then.as_ref()?.find_field(message, field))
    }

    fn find_enum_value(&self, name: &str) -> Option<i64> {
        self.first
            .find_enum_value(name)
            .or_else(|| self.then.as_ref()?.find_enum_value(name))
    }

    fn builds_maps(&self, type_name: &str) -> bool {
        self.first.builds_maps(type_name)
            || self.then.as_ref().is_some_and(|t| t.builds_maps(type_name))
    }
}

/// `first` in front of `then`.
fn chain_types(
    first: Arc<dyn TypeProvider>,
    then: Option<Arc<dyn TypeProvider>>,
) -> Arc<dyn TypeProvider> {
    Arc::new(ChainedTypes { first, then })
}

/// Why [`EnvBuilder::try_build`] refused to build: declarations that contradict each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    /// One line per conflict.
    pub conflicts: Vec<String>,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.conflicts.join("\n"))
    }
}

impl std::error::Error for BuildError {}

/// Builds an [`Env`].
#[derive(Clone)]
pub struct EnvBuilder {
    options: EnvOptions,
    container: Container,
    variables: Vec<VariableDecl>,
    functions: Vec<FunctionDecl>,
    registry: FunctionRegistry,
    macros: Vec<Macro>,
    provider: Option<Arc<dyn TypeProvider>>,
    messages: Option<Arc<ProtoTypes>>,
    libraries: Vec<String>,
    types: Vec<Type>,
    cost_hooks: CostHooks,
    estimate_hooks: Vec<(CostKey, EstimateFn)>,
    validators: Vec<cel_ext::Validator>,
    program_checks: Vec<cel_ext::Validator>,
    tiering: CompileSettings,
}

impl std::fmt::Debug for EnvInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvInner")
            .field("options", &self.options)
            .field("estimate_hooks", &self.estimate_hooks.len())
            .field("tiering", &self.tiering)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for EnvBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvBuilder")
            .field("options", &self.options)
            .field("libraries", &self.libraries)
            .field("tiering", &self.tiering)
            .finish_non_exhaustive()
    }
}

/// The host's type provider, extended with the types libraries define (`net.IP`).
#[derive(Debug)]
struct LibraryTypes {
    host: Option<Arc<dyn TypeProvider>>,
    types: Vec<Type>,
}

impl TypeProvider for LibraryTypes {
    fn find_type(&self, name: &str) -> Option<Type> {
        self.host
            .as_ref()
            .and_then(|h| h.find_type(name))
            .or_else(|| {
                self.types
                    .iter()
                    .find(|t| t.runtime_name() == name)
                    .cloned()
            })
    }

    fn find_field(&self, message: &str, field: &str) -> Option<cel_types::FieldType> {
        self.host.as_ref()?.find_field(message, field)
    }

    fn find_enum_value(&self, name: &str) -> Option<i64> {
        self.host.as_ref()?.find_enum_value(name)
    }

    fn builds_maps(&self, type_name: &str) -> bool {
        self.host.as_ref().is_some_and(|h| h.builds_maps(type_name))
    }
}

/// Adapts a boxed library to the `impl Library` the builder takes.
#[derive(Debug)]
struct BoxedLibrary(Box<dyn Library>);

impl Library for BoxedLibrary {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn contents(&self) -> cel_ext::LibraryContents {
        self.0.contents()
    }
}

impl Default for EnvBuilder {
    fn default() -> Self {
        EnvBuilder {
            options: EnvOptions::default(),
            container: Container::default(),
            variables: Vec::new(),
            functions: Vec::new(),
            registry: FunctionRegistry::standard(),
            macros: Vec::new(),
            provider: None,
            messages: None,
            libraries: Vec::new(),
            types: Vec::new(),
            cost_hooks: CostHooks::default(),
            estimate_hooks: Vec::new(),
            validators: Vec::new(),
            program_checks: Vec::new(),
            tiering: CompileSettings::default(),
        }
    }
}

impl EnvBuilder {
    /// Declares a variable of the given type.
    pub fn variable(mut self, name: &str, ty: Type) -> Self {
        self.variables.push(VariableDecl::new(name, ty));
        self
    }

    /// Declares a function overload implemented by a Rust closure. The closure receives the
    /// arguments (the receiver first, for member overloads) and returns a value or an error.
    /// It may have effects: each call the expression makes runs it once, on either backend,
    /// even when native code hands an evaluation over its cost limit to the interpreter
    /// ([`Implementation::External`]).
    ///
    /// ```
    /// use celerity::{Env, OverloadDecl, Type, Value};
    /// let env = Env::builder()
    ///     .function(
    ///         "shout",
    ///         OverloadDecl::member("string_shout", vec![Type::String], Type::String),
    ///         |args: &[Value]| match args {
    ///             [Value::String(s)] => Ok(Value::from(s.to_uppercase())),
    ///             _ => Err(celerity::EvalError::no_such_overload()),
    ///         },
    ///     )
    ///     .build();
    /// let program = env.program(&env.compile("'hi'.shout()").unwrap()).unwrap();
    /// assert_eq!(program.eval(&celerity::MapActivation::new()).unwrap(), Value::from("HI"));
    /// ```
    pub fn function(
        mut self,
        name: &str,
        overload: OverloadDecl,
        implementation: impl Fn(&[Value]) -> Result<Value, Error> + Send + Sync + 'static,
    ) -> Self {
        self.registry.add(
            &overload.id,
            Implementation::External(Arc::new(implementation)),
        );
        self.functions.push(FunctionDecl::new(name, vec![overload]));
        self
    }

    /// Declares functions whose implementations are registered separately (with
    /// [`implementation`](Self::implementation)) or built in.
    pub fn declare_function(mut self, decl: FunctionDecl) -> Self {
        self.functions.push(decl);
        self
    }

    /// Registers the implementation of an overload id. A closure with effects, or whose
    /// answer can change, belongs in [`Implementation::External`] (each call runs once);
    /// [`Implementation::Host`] is for closures whose answer depends only on their arguments.
    pub fn implementation(mut self, overload_id: &str, implementation: Implementation) -> Self {
        self.registry.add(overload_id, implementation);
        self
    }

    /// Adds a library: its declarations, implementations and macros. Adding the same
    /// library (by name) twice has no further effect.
    pub fn library(mut self, library: impl Library + 'static) -> Self {
        if self.libraries.iter().any(|l| l == library.name()) {
            return self;
        }
        self.libraries.push(library.name().to_string());
        let contents = library.contents();
        self.variables.extend(contents.variables);
        self.functions.extend(contents.functions);
        for (id, imp) in contents.implementations {
            self.registry.add(&id, imp);
        }
        self.macros.extend(contents.macros);
        self.types.extend(contents.types);
        for (key, hook) in contents.actual_costs {
            let scope = contents
                .cost_hook_scopes
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, scope)| scope.clone())
                .unwrap_or_default();
            self.cost_hooks.add_scoped(key, hook, scope);
        }
        for (id, hook) in contents.result_sizes {
            self.cost_hooks.add_result_size(&id, hook);
        }
        self.estimate_hooks.extend(contents.estimated_costs);
        self.validators.extend(contents.validators);
        self.program_checks.extend(contents.program_checks);
        self
    }

    /// Adds a run-time cost hook (cel-go's `ActualCostEstimator.CallCost`): for calls it
    /// answers, its cost replaces the built-in one.
    pub fn actual_cost(mut self, key: CostKey, hook: ActualCostFn<Value>) -> Self {
        self.cost_hooks.add(key, hook);
        self
    }

    /// Adds a run-time cost hook that answers only the calls `scope` describes (and answers
    /// `None` for every other call, as it promises): a call whose checked types the scope
    /// excludes never runs it, and one whose types are dynamic runs it only when the value
    /// could be in scope.
    pub fn actual_cost_scoped(
        mut self,
        key: CostKey,
        hook: ActualCostFn<Value>,
        scope: HookScope,
    ) -> Self {
        self.cost_hooks.add_scoped(key, hook, scope);
        self
    }

    /// Adds the result-size hook of an overload that can build a large value: from the
    /// arguments, the size its result will have if the call succeeds. Under a cost limit,
    /// such a call is charged before it runs and stops there if it would cross the limit
    /// (see [`ResultSizeFn`](cel_cost::ResultSizeFn)).
    pub fn result_size(mut self, overload_id: &str, hook: ResultSizeFn<Value>) -> Self {
        self.cost_hooks
            .add_result_size(overload_id, ResultSizeHook::exact(hook));
        self
    }

    /// Adds a static cost hook (cel-go's `CostEstimator.EstimateCallCost`).
    pub fn estimated_cost(mut self, key: CostKey, hook: EstimateFn) -> Self {
        self.estimate_hooks.push((key, hook));
        self
    }

    /// Sets the cost limit of each evaluation.
    pub fn cost_limit(mut self, limit: Option<u64>) -> Self {
        self.options.cost_limit = limit;
        self
    }

    /// Adds every extension library at its newest version.
    pub fn all_extension_libraries(mut self) -> Self {
        for lib in cel_ext::all_libraries() {
            self = self.library(BoxedLibrary(lib));
        }
        self
    }

    /// Adds a macro ([`internals::Macro`](crate::internals::Macro): macros expand to the
    /// compiler's own syntax tree).
    pub fn add_macro(mut self, m: crate::internals::Macro) -> Self {
        self.macros.push(m);
        self
    }

    /// Sets the container in which names are resolved (cel-go's `cel.Container`).
    pub fn container(mut self, name: &str) -> Self {
        self.container = Container::new(name);
        self
    }

    /// Makes the message and enum types of a protobuf descriptor pool known: the checker
    /// types their fields, and expressions read, test, build and compare their messages
    /// (see [`cel_runtime::proto`]). It replaces any [`EnvBuilder::type_provider`].
    pub fn descriptor_pool(mut self, pool: DescriptorPool) -> Self {
        let types = Arc::new(ProtoTypes::new(pool));
        self.provider = Some(types.clone());
        self.messages = Some(types);
        self
    }

    /// Sets the provider of message and enum types.
    pub fn type_provider(mut self, provider: Arc<dyn TypeProvider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Replaces the options.
    pub fn options(mut self, options: EnvOptions) -> Self {
        self.options = options;
        self
    }

    /// Enables or disables the optional-types library.
    pub fn optional_types(mut self, on: bool) -> Self {
        self.options.optional_types = on;
        self
    }

    /// Sets the version of the optional-types library (see
    /// [`EnvOptions::optional_types_version`]).
    pub fn optional_types_version(mut self, version: u32) -> Self {
        self.options.optional_types_version = version;
        self
    }

    /// Rejects mixed-type list and map literals after checking.
    pub fn homogeneous_aggregate_literals(mut self, on: bool) -> Self {
        self.options.homogeneous_aggregate_literals = on;
        self
    }

    /// Allows mixed numeric comparisons at check time.
    pub fn cross_type_numeric_comparisons(mut self, on: bool) -> Self {
        self.options.cross_type_numeric_comparisons = on;
        self
    }

    /// Enables or disables macro expansion.
    pub fn macros(mut self, on: bool) -> Self {
        self.options.macros = on;
        self
    }

    /// Runs the tiered compiles of [`Backend::Auto`] programs on the host's executor
    /// instead of the background thread Celerity starts by default: on a program's
    /// [`Backend::AUTO_JIT_AFTER`]th evaluation, the evaluating thread calls `executor` with
    /// the program's [`CompileTask`] (once per program) and goes on interpreting; the host
    /// runs the task ([`CompileTask::run`]) when and where it likes, on a thread pool or an
    /// async runtime's blocking pool, say. The task is `Send + 'static` and CPU-bound; until
    /// it has run, the program is interpreted.
    ///
    /// `executor` should only hand the task over: it runs on the evaluating thread, inside
    /// an evaluation. To compile on the spot, as a synchronous tier would (that evaluation
    /// then waits for the compile, and runs native code), pass [`CompileTask::run`] itself:
    ///
    /// ```
    /// let env = celerity::Env::builder().compile_executor(celerity::CompileTask::run).build();
    /// ```
    ///
    /// [`Backend::Jit`] programs are compiled when they are made, on the thread that makes
    /// them, whatever the executor.
    ///
    /// The default thread runs at the ordinary priority. On a host with an idle core it
    /// compiles beside the evaluating threads; on one whose cores are all busy it competes
    /// with them, and the scheduler may run it at once on the core of the thread that
    /// submitted the compile, which then waits about as long as a synchronous compile
    /// would. A host that wants compiles at a lower priority, or on cores of its choosing,
    /// runs them on its own thread with this executor.
    pub fn compile_executor(
        mut self,
        executor: impl Fn(CompileTask) + Send + Sync + 'static,
    ) -> Self {
        self.tiering.executor = Some(Arc::new(executor));
        self
    }

    /// Calls `hook` once for each native compile of this environment's programs, with its
    /// outcome (compiled, declined as over the native-code budget, or failed) and how long
    /// it took: for [`Backend::Auto`] on the thread that ran the compile, after the outcome
    /// is published; for [`Backend::Jit`] on the thread that made the program. A failed or
    /// declined compile leaves the program interpreted, with the same answers; the hook is
    /// where a host logs or counts it. Programs [`Backend::Auto`] does not try to compile
    /// (too many nodes) report no compile: see [`Program::native_status`].
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use celerity::{Backend, Env, NativeStatus, ProgramOptions};
    ///
    /// let outcomes = Arc::new(Mutex::new(Vec::new()));
    /// let seen = outcomes.clone();
    /// let env = Env::builder()
    ///     .on_native_compile(move |report| seen.lock().unwrap().push(report.outcome.clone()))
    ///     .build();
    /// let options = ProgramOptions::default().backend(Backend::Jit);
    /// env.program_with(&env.compile("1 < 2").unwrap(), options).unwrap();
    /// assert_eq!(*outcomes.lock().unwrap(), [NativeStatus::Compiled]);
    /// ```
    pub fn on_native_compile(
        mut self,
        hook: impl Fn(&CompileReport<'_>) + Send + Sync + 'static,
    ) -> Self {
        self.tiering.on_compile = Some(Arc::new(hook));
        self
    }

    /// Keeps up to `capacity` native programs of this environment (128 by default; 0 keeps
    /// none): a program made again from an expression this environment compiled before,
    /// with the same [`ProgramOptions`], reuses its native code instead of compiling it
    /// again, and starts native at once under [`Backend::Auto`]. The least recently used
    /// program is evicted first. Only expressions this environment parsed and checked itself
    /// (with [`Env::compile`], or [`Env::parse`] then [`Env::check`]), of at most 16 KiB, are
    /// kept; a program found in the cache is not compiled, so
    /// [`on_native_compile`](Self::on_native_compile) does not hear of it.
    ///
    /// ```
    /// use celerity::{Backend, Env, ProgramOptions};
    ///
    /// let env = Env::builder().build();
    /// let options = ProgramOptions::default().backend(Backend::Jit);
    /// let first = env.program_with(&env.compile("1 + 2 == 3").unwrap(), options).unwrap();
    /// // Made again (a request handler that compiles per request, say): no native compile.
    /// let again = env.program_with(&env.compile("1 + 2 == 3").unwrap(), options).unwrap();
    /// assert!(again.shares_native_code(&first));
    /// ```
    pub fn native_cache(mut self, capacity: usize) -> Self {
        self.tiering = self.tiering.native_cache(capacity);
        self
    }

    /// Sets where native compiles run and who hears of them, as a whole (replacing
    /// [`compile_executor`](Self::compile_executor) and
    /// [`on_native_compile`](Self::on_native_compile)).
    pub fn compile_settings(mut self, settings: CompileSettings) -> Self {
        self.tiering = settings;
        self
    }

    /// Builds the environment.
    ///
    /// # Panics
    ///
    /// When declarations contradict each other (see [`EnvBuilder::try_build`]): a host's
    /// configuration error, found when the environment is made rather than left to decide
    /// silently which declaration wins.
    pub fn build(self) -> Env {
        match self.try_build() {
            Ok(env) => env,
            Err(e) => panic!("conflicting declarations: {e}"),
        }
    }

    /// Builds the environment, or says which declarations contradict each other: an overload
    /// id declared again with another signature, or under another function's name (the
    /// same declaration made twice, by two libraries say, is no conflict).
    pub fn try_build(self) -> Result<Env, BuildError> {
        let source = Arc::new(self.clone());
        let mut checker = CheckerEnv::standard();
        let conflicts = overload_conflicts(&checker, &self.functions);
        if !conflicts.is_empty() {
            return Err(BuildError { conflicts });
        }
        if self.options.optional_types {
            checker.add_optional_library_version(self.options.optional_types_version);
        }
        let older = self.options.older_cel_go;
        if older.duration_from_int {
            checker.add_function(cel_types::stdlib::int_to_duration());
        }
        checker.set_container(self.container.clone());
        let provider: Arc<dyn TypeProvider> = Arc::new(LibraryTypes {
            host: self.provider.clone(),
            types: self.types.clone(),
        });
        checker.set_provider(provider);
        checker.set_options(CheckerOptions {
            // cel-go v0.29 implements homogeneous literals as a validator after checking
            // (which exempts `format` arguments), not in the checker.
            homogeneous_aggregate_literals: false,
            cross_type_numeric_comparisons: self.options.cross_type_numeric_comparisons,
        });
        for v in self.variables {
            checker.add_variable(v);
        }
        for f in self.functions {
            checker.add_function(f);
        }

        let mut macros = MacroTable::new();
        if self.options.macros {
            macros.extend(cel_syntax::macros::standard_macros());
            if self.options.optional_types {
                macros.extend(cel_syntax::macros::optional_macros_at(
                    self.options.optional_types_version,
                ));
            }
            macros.extend(self.macros);
        }
        let parser_options = Arc::new(ParserOptions {
            max_recursion_depth: self.options.max_recursion_depth,
            expression_size_limit: self.options.expression_size_limit,
            enable_optional_syntax: self.options.optional_types,
            macros,
            ..ParserOptions::default()
        });

        let registry = if older == OlderCelGo::NONE {
            self.registry
        } else {
            self.registry.with_older(older)
        };
        let table = FunctionTable::new(checker.functions(), &registry);
        let plan_env = PlanEnv {
            functions: Arc::new(table),
            container: self.container,
            provider: checker.provider().clone(),
            cost_options: CostOptions {
                presence_test_has_cost: self.options.presence_test_has_cost,
                optimize: self.options.optimize,
            },
            cost_hooks: Arc::new(self.cost_hooks),
            messages: self.messages,
            older: self.options.older_cel_go,
        };
        Ok(Env {
            inner: Arc::new(EnvInner {
                parser_options,
                checker,
                plan_env,
                options: self.options,
                estimate_hooks: self.estimate_hooks,
                validators: self.validators,
                program_checks: self.program_checks,
                native_cache: Arc::new(NativeCache::new(self.tiering.native_cache_capacity())),
                tiering: self.tiering,
                id: crate::native_cache::next_env_id(),
                source,
                additions: Vec::new(),
                host_types: self.provider,
                library_types: Arc::new(self.types),
            }),
        })
    }

    /// Applies what [`Env::with_variables`] added.
    fn add(mut self, a: &Addition) -> EnvBuilder {
        self.variables.extend(a.variables.iter().cloned());
        if let Some(p) = &a.provider {
            self.provider = Some(chain_types(p.clone(), self.provider.take()));
        }
        self
    }
}

/// The overload ids `functions` declare in contradiction with each other or with the standard
/// declarations of `standard`, one line each.
fn overload_conflicts(standard: &CheckerEnv, functions: &[FunctionDecl]) -> Vec<String> {
    let mut seen: HashMap<&str, (&str, &OverloadDecl)> = HashMap::new();
    for f in standard.functions() {
        for o in &f.overloads {
            seen.insert(&o.id, (&f.name, o));
        }
    }
    let mut conflicts = Vec::new();
    for f in functions {
        for o in &f.overloads {
            match seen.get(o.id.as_str()) {
                Some((name, first)) if *name != f.name => conflicts.push(format!(
                    "overload '{}' is declared for '{name}' and for '{}'",
                    o.id, f.name
                )),
                Some((_, first)) if *first != o => conflicts.push(format!(
                    "overload '{}' of '{}' is declared with two signatures",
                    o.id, f.name
                )),
                Some(_) => {}
                None => {
                    seen.insert(&o.id, (&f.name, o));
                }
            }
        }
    }
    conflicts
}

impl Default for Env {
    fn default() -> Self {
        Env::builder().build()
    }
}

impl Env {
    /// A builder holding everything this environment was built from, to make a child
    /// environment with more declarations (variables, functions, libraries, options); this
    /// environment is left as it is.
    ///
    /// ```
    /// use celerity::{Env, Type};
    /// let base = Env::builder().variable("x", Type::Int).build();
    /// let child = base.extend().variable("y", Type::Int).build();
    /// assert!(child.compile("x + y").is_ok());
    /// assert!(base.compile("x + y").is_err());
    /// ```
    pub fn extend(&self) -> EnvBuilder {
        let builder = (*self.inner.source).clone();
        self.inner.additions.iter().fold(builder, EnvBuilder::add)
    }

    /// A child environment: this one with more variables, and a type provider asked first
    /// for the types they use (a CRD schema node's `self`), sharing everything else with
    /// this one (libraries, functions and their implementations, options, cost hooks) instead
    /// of building it again, as cel-go's `Env.Extend` does. Cheap: a few allocations, where
    /// [`Env::extend`] and a build cost as much as the first environment. A variable already
    /// declared is redeclared. Programs made from the child's trees are cached apart from
    /// the parent's (the same text may mean another program there).
    ///
    /// ```
    /// use celerity::{Env, Type, VariableDecl};
    /// let base = Env::builder().variable("x", Type::Int).build();
    /// let child = base.with_variables(None, [VariableDecl::new("y", Type::Int)]);
    /// assert!(child.compile("x + y").is_ok());
    /// assert!(base.compile("x + y").is_err());
    /// ```
    pub fn with_variables(
        &self,
        provider: Option<Arc<dyn TypeProvider>>,
        variables: impl IntoIterator<Item = VariableDecl>,
    ) -> Env {
        let inner = &self.inner;
        let addition = Addition {
            provider,
            variables: variables.into_iter().collect(),
        };
        let mut checker = inner.checker.clone();
        let mut plan_env = inner.plan_env.clone();
        let mut host_types = inner.host_types.clone();
        if let Some(p) = &addition.provider {
            host_types = Some(chain_types(p.clone(), host_types));
            let types: Arc<dyn TypeProvider> = Arc::new(LibraryTypes {
                host: host_types.clone(),
                types: (*inner.library_types).clone(),
            });
            checker.set_provider(types.clone());
            plan_env.provider = types;
        }
        for v in &addition.variables {
            checker.add_variable(v.clone());
        }
        let mut additions = inner.additions.clone();
        additions.push(addition);
        Env {
            inner: Arc::new(EnvInner {
                parser_options: inner.parser_options.clone(),
                checker,
                plan_env,
                options: inner.options.clone(),
                estimate_hooks: inner.estimate_hooks.clone(),
                validators: inner.validators.clone(),
                program_checks: inner.program_checks.clone(),
                native_cache: Arc::new(NativeCache::new(inner.tiering.native_cache_capacity())),
                tiering: inner.tiering.clone(),
                id: crate::native_cache::next_env_id(),
                source: inner.source.clone(),
                additions,
                host_types,
                library_types: inner.library_types.clone(),
            }),
        }
    }

    /// A builder starting from the standard library (and optional types).
    pub fn builder() -> EnvBuilder {
        EnvBuilder::default()
    }

    /// The options the environment was built with.
    pub fn options(&self) -> &EnvOptions {
        &self.inner.options
    }

    /// Parses an expression without checking it.
    pub fn parse(&self, expr: &str) -> Result<Ast, Issues> {
        let source = Source::new(expr);
        let parsed = cel_syntax::parse(&source, &self.inner.parser_options);
        if !parsed.diagnostics.is_empty() {
            return Err(Issues::new(parsed.diagnostics, source));
        }
        Ok(Ast {
            source,
            parsed: parsed.ast,
            checked: None,
            origin: Some(self.inner.id),
        })
    }

    /// Type-checks a parsed expression.
    pub fn check(&self, ast: &Ast) -> Result<Ast, Issues> {
        let checked = self.checked(&ast.parsed, &ast.source)?;
        Ok(Ast {
            source: ast.source.clone(),
            parsed: ast.parsed.clone(),
            checked: Some(checked),
            origin: ast.origin.filter(|&id| id == self.inner.id),
        })
    }

    /// The checked form of a parsed expression, or every diagnostic of the check and the
    /// validators.
    fn checked(
        &self,
        parsed: &cel_syntax::Ast,
        source: &Source,
    ) -> Result<cel_checker::CheckedAst, Issues> {
        let (checked, mut diagnostics) = cel_checker::check(&self.inner.checker, parsed);
        if diagnostics.is_empty() {
            diagnostics = crate::validate::validate(
                &checked,
                &self.inner.options,
                &self.inner.plan_env,
                &self.inner.validators,
            );
        }
        if !diagnostics.is_empty() {
            return Err(Issues::new(diagnostics, source.clone()));
        }
        Ok(checked)
    }

    /// Parses and checks an expression, returning every diagnostic on failure.
    pub fn compile(&self, expr: &str) -> Result<Ast, Issues> {
        let mut ast = self.parse(expr)?;
        // Checked in place: the parsed tree is kept, not copied as `check` must (the copy and
        // its drop cost about a tenth of a CRD rule's check).
        ast.checked = Some(self.checked(&ast.parsed, &ast.source)?);
        Ok(ast)
    }

    /// Plans an expression for evaluation. A checked AST uses the checker's resolved names
    /// and overloads; an unchecked one dispatches at run time. With
    /// [`EnvOptions::optimize`], a constant conversion that fails is reported here.
    pub fn program(&self, ast: &Ast) -> Result<Program, Issues> {
        self.program_with(
            ast,
            ProgramOptions {
                backend: self.inner.options.backend,
                ..ProgramOptions::default()
            },
        )
    }

    /// Plans an expression with explicit program options (the backend, keeping the
    /// generated code's text for inspection).
    pub fn program_with(&self, ast: &Ast, options: ProgramOptions) -> Result<Program, Issues> {
        if let Some(checked) = &ast.checked {
            let found = crate::validate::run_library_checks(checked, &self.inner.program_checks);
            if !found.is_empty() {
                let info = &ast.parsed.source_info;
                let diagnostics = found
                    .into_iter()
                    .map(|issue| Diagnostic {
                        offset: info.anchor(issue.expr_id).unwrap_or(0),
                        expr_id: issue.expr_id,
                        message: issue.message,
                    })
                    .collect();
                return Err(Issues::new(diagnostics, ast.source.clone()));
            }
        }
        let own_tree = ast.origin == Some(self.inner.id);
        Program::new(
            ast,
            &self.inner.plan_env,
            self.inner.options.cost_limit,
            options,
            &self.inner.tiering,
            own_tree.then_some(&self.inner.native_cache),
        )
    }

    /// The static cost estimate of a checked expression: the cheapest and the most
    /// expensive run-time cost, given what `sizes` knows of the variables' sizes (cel-go's
    /// `Env.EstimateCost`). `None` for an unchecked expression.
    pub fn estimate_cost(&self, ast: &Ast, sizes: &dyn SizeEstimator) -> Option<CostRange> {
        let checked = ast.checked.as_ref()?;
        let options = EstimateOptions {
            presence_test_has_cost: self.inner.options.presence_test_has_cost,
            hooks: &self.inner.estimate_hooks,
            older: self.inner.options.older_cel_go,
        };
        Some(cel_cost::estimate(checked, sizes, &options))
    }

    /// The checker's declarations, for tools ([`internals`](crate::internals)).
    pub fn checker_env(&self) -> &crate::internals::CheckerEnv {
        &self.inner.checker
    }

    /// The functions expressions may call, sorted by name, each with the overloads the
    /// checker may choose (those an option disables, such as cross-type comparisons, are
    /// left out). Operators appear under their internal names (`_+_`). Functions only macro
    /// expansions can reach, whose names cannot be written (`math.@max`, `cel.@block`,
    /// `cel.@mapInsert`, `@not_strictly_false`: names with `@`), are left out.
    pub fn functions(&self) -> Vec<FunctionDecl> {
        let checker = &self.inner.checker;
        let mut out: Vec<FunctionDecl> = checker
            .functions()
            .filter(|f| !f.name.contains('@'))
            .map(|f| FunctionDecl {
                name: f.name.clone(),
                overloads: f
                    .overloads
                    .iter()
                    .filter(|o| checker.overload_enabled(&o.id))
                    .cloned()
                    .collect(),
            })
            .filter(|f| !f.overloads.is_empty())
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The declared variables, sorted by name.
    pub fn variables(&self) -> Vec<VariableDecl> {
        let mut out: Vec<VariableDecl> = self.inner.checker.variables().cloned().collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}
