//! The environment admission policies compile in (Kubernetes' `plugin/cel` compiler): the
//! Kubernetes environment of a version for stored expressions, plus `object`, `oldObject`,
//! `request` (typed as `kubernetes.AdmissionRequest`), `namespaceObject` (typed as
//! `kubernetes.Namespace`), `params` when the policy has a `paramKind`, `authorizer` and
//! `authorizer.requestResource` where the expression may use them, and `variables`: the
//! policy's composited variables, an object of type `kubernetes.variables` whose fields are
//! the variables declared before the expression, each with the type its expression has
//! (`variables.x` is a field selection, as in Kubernetes, where only `variables` is
//! declared: it costs the identifier and the qualifier).
//!
//! Variables are computed on demand ([`Bindings`] is the activation): `variables` is a lazy
//! map, and the first read of `variables.x` in one pass over a list of expressions (by
//! selection, presence test or index) evaluates `x`, whose cost is then charged to the
//! pass's budget; later reads reuse the value. Programs run with
//! [`ProgramOptions::lazy_variables`], so native code asks for `variables` where it reads
//! it, as the interpreter does.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::thread::ThreadId;

use cel_runtime::{OpaqueMap, OpaqueValue};

use cel_k8s::{ExpressionKind, KubeVersion};
use cel_k8s_schema::decl::{DeclKind, DeclType, SchemaTypes};
use cel_k8s_schema::{Path, Schema, ValueModel};
use cel_types::{FieldType, TypeProvider};
use serde_json::{Value as Json, json};

use celerity::kubernetes::KubernetesEnv;
use celerity::{Activation, Backend, CompileSettings, Env, Program, ProgramOptions, Type, Value};

/// The per-call cost limit of one admission expression (Kubernetes' `PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// The cost budget of one pass over a policy's expressions (Kubernetes'
/// `RuntimeCELCostBudget`).
pub const RUNTIME_COST_BUDGET: u64 = 10_000_000;
/// The type name of `request`.
pub const REQUEST_TYPE: &str = "kubernetes.AdmissionRequest";
/// The type name of `namespaceObject`.
pub const NAMESPACE_TYPE: &str = "kubernetes.Namespace";
/// The type name of `variables`.
pub const VARIABLES_TYPE: &str = "kubernetes.variables";

/// Which optional variables an expression's environment declares (Kubernetes'
/// `OptionalVariableDeclarations`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Declarations {
    /// `params` (the policy has a `paramKind`).
    pub params: bool,
    /// `authorizer` and `authorizer.requestResource`.
    pub authorizer: bool,
    /// `JSONPatch`, `Object` construction and `jsonpatch.escapeKey` (mutations).
    pub patch_types: bool,
}

/// Schema types for the inputs that evaluation leaves `dyn` (the type checker's view of a
/// policy matching one kind; see [`super::typecheck`]).
#[derive(Clone, Debug, Default)]
pub struct TypedInputs {
    /// The type of `object` and `oldObject`.
    pub object: Option<DeclType>,
    /// The type of `params`.
    pub params: Option<DeclType>,
}

/// What the compiled expression must evaluate to.
#[derive(Clone, Debug, PartialEq)]
pub enum ReturnTypes {
    /// Anything (variables).
    Any,
    /// One of these types.
    OneOf(Vec<Type>),
}

/// One compiled expression (Kubernetes' `CompilationResult`).
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The expression as written.
    pub expression: String,
    /// The program, or why there is none (`compilation failed: ERROR: ...`).
    pub program: Result<Program, String>,
    /// The expression's type (`dyn` when it does not compile).
    pub output: Type,
}

/// The static types of `request` and `namespaceObject`, and the types of a policy's
/// variables; the checker's view of them.
#[derive(Debug)]
struct AdmissionTypes {
    schema_types: SchemaTypes,
    variables: HashMap<String, Type>,
    /// `JSONPatch` and `Object` types (mutations).
    patch_types: bool,
}

impl TypeProvider for AdmissionTypes {
    fn find_type(&self, name: &str) -> Option<Type> {
        if name == VARIABLES_TYPE || (self.patch_types && super::mutating::is_patch_type(name)) {
            return Some(Type::message(name));
        }
        self.schema_types.find_type(name)
    }

    fn find_field(&self, message: &str, field: &str) -> Option<FieldType> {
        if message == VARIABLES_TYPE {
            return self
                .variables
                .get(field)
                .map(|t| FieldType { ty: t.clone() });
        }
        if self.patch_types && super::mutating::is_patch_type(message) {
            return super::mutating::patch_field_type(message, field).map(|ty| FieldType { ty });
        }
        if message == REQUEST_TYPE && field == "options" {
            return Some(FieldType { ty: Type::Dyn });
        }
        self.schema_types.find_field(message, field)
    }

    fn find_enum_value(&self, _name: &str) -> Option<i64> {
        None
    }

    fn builds_maps(&self, type_name: &str) -> bool {
        self.patch_types && super::mutating::is_patch_type(type_name)
    }
}

/// The schema `request` is typed by (Kubernetes' `BuildRequestType`).
fn request_schema() -> Json {
    let s = json!({"type": "string"});
    let gvk = json!({"type": "object", "properties": {"group": s, "version": s, "kind": s}});
    let gvr = json!({"type": "object", "properties": {"group": s, "version": s, "resource": s}});
    let strings = json!({"type": "array", "items": s});
    json!({"type": "object", "properties": {
        "kind": gvk, "resource": gvr, "subResource": s,
        "requestKind": gvk, "requestResource": gvr, "requestSubResource": s,
        "name": s, "namespace": s, "operation": s,
        "userInfo": {"type": "object", "properties": {
            "username": s, "uid": s, "groups": strings,
            "extra": {"type": "object", "additionalProperties": strings},
        }},
        "dryRun": {"type": "boolean"},
    }})
}

/// The schema `namespaceObject` is typed by (Kubernetes' `BuildNamespaceType`).
fn namespace_schema() -> Json {
    let s = json!({"type": "string"});
    let ts = json!({"type": "string", "format": "date-time"});
    let strings = json!({"type": "array", "items": s});
    let string_map = json!({"type": "object", "additionalProperties": s});
    json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {
            "name": s, "generateName": s, "namespace": s, "labels": string_map,
            "annotations": string_map, "UID": s, "creationTimestamp": ts,
            "deletionGracePeriodSeconds": {"type": "integer"}, "deletionTimestamp": ts,
            "generation": {"type": "integer"}, "resourceVersion": s, "finalizers": strings,
        }},
        "spec": {"type": "object", "properties": {"finalizers": strings}},
        "status": {"type": "object", "properties": {
            "conditions": {"type": "array", "items": {"type": "object", "properties": {
                "status": s, "type": s, "lastTransitionTime": ts, "message": s, "reason": s,
            }}},
            "phase": s,
        }},
    }})
}

/// The names Kubernetes gives the object types inside `request` and `namespaceObject`, by
/// field path (`status.conditions.@idx` is a list's element).
const TYPE_NAMES: &[(&str, &str)] = &[
    ("kind", "kubernetes.GroupVersionKind"),
    ("requestKind", "kubernetes.GroupVersionKind"),
    ("resource", "kubernetes.GroupVersionResource"),
    ("requestResource", "kubernetes.GroupVersionResource"),
    ("userInfo", "kubernetes.UserInfo"),
    ("metadata", "kubernetes.NamespaceMetadata"),
    ("spec", "kubernetes.NamespaceSpec"),
    ("status", "kubernetes.NamespaceStatus"),
    ("status.conditions.@idx", "kubernetes.NamespaceCondition"),
];

/// Names the object types of a fixed schema as `names` says (field path, type name).
fn name_types(t: &mut DeclType, path: &str, names: &[(&str, &str)]) {
    let join = |f: &str| {
        if path.is_empty() {
            f.to_string()
        } else {
            format!("{path}.{f}")
        }
    };
    match &mut t.kind {
        DeclKind::Object { name, fields } => {
            if let Some((_, n)) = names.iter().find(|(p, _)| *p == path) {
                *name = (*n).to_string();
            }
            for (f, field) in fields.iter_mut() {
                name_types(&mut field.ty, &join(f), names);
            }
        }
        DeclKind::List(e) => name_types(e, &join("@idx"), names),
        DeclKind::Map(v) => name_types(v, &join("@elem"), names),
        DeclKind::Scalar(_) => {}
    }
}

/// A fixed schema, read and typed; the schemas are ours, so failing to read one is a bug
/// caught by the tests, and gives an empty object type rather than a panic.
fn typed(schema: &Json, name: &str) -> (DeclType, ValueModel) {
    typed_with_names(schema, name, TYPE_NAMES)
}

/// A fixed schema, read and typed as `name`, its nested object types named by `names`
/// (field path, type name); shared with the other places that declare fixed types.
pub(crate) fn typed_with_names(
    schema: &Json,
    name: &str,
    names: &[(&str, &str)],
) -> (DeclType, ValueModel) {
    let schema = Schema::from_json(schema, &Path::root()).unwrap_or_default();
    let mut decl = DeclType::from_schema(&schema, false).unwrap_or(DeclType {
        kind: DeclKind::Object {
            name: "object".into(),
            fields: Default::default(),
        },
        max_elements: 0,
        min_serialized_size: 2,
    });
    name_types(&mut decl, "", names);
    (decl.with_type_name(name), ValueModel::new(&schema, false))
}

/// The parts of the admission environment shared by every policy of one version:
/// the declared types and the value models of `request` and `namespaceObject`.
#[derive(Debug)]
pub struct AdmissionEnv {
    version: KubeVersion,
    compatibility: Option<KubeVersion>,
    request: (DeclType, ValueModel),
    namespace: (DeclType, ValueModel),
    backend: Backend,
    kind: ExpressionKind,
    compile: CompileSettings,
}

impl AdmissionEnv {
    /// The environment of Kubernetes `version` (stored expressions, as the API server
    /// compiles policies), running programs on `backend`.
    pub fn new(version: KubeVersion, backend: Backend) -> AdmissionEnv {
        AdmissionEnv {
            version,
            compatibility: None,
            request: typed(&request_schema(), REQUEST_TYPE),
            namespace: typed(&namespace_schema(), NAMESPACE_TYPE),
            backend,
            kind: ExpressionKind::StoredExpressions,
            compile: CompileSettings::default(),
        }
    }

    /// The same environment with its programs' native compiles run and reported as
    /// `settings` say (see [`CompileSettings`]).
    pub fn with_compile_settings(mut self, settings: CompileSettings) -> AdmissionEnv {
        self.compile = settings;
        self
    }

    /// The same environment for new or stored expressions (the API server compiles
    /// policies as stored expressions; its tests also use new ones).
    pub fn with_expression_kind(mut self, kind: ExpressionKind) -> AdmissionEnv {
        self.kind = kind;
        self
    }

    /// The same environment with new expressions at another compatibility version than
    /// the release's default (one minor below it), as Kubernetes' tests pin one.
    pub fn with_compatibility(mut self, version: KubeVersion) -> AdmissionEnv {
        self.compatibility = Some(version);
        self
    }

    /// The release.
    pub fn version(&self) -> KubeVersion {
        self.version
    }

    /// The backend programs run on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// `request`'s JSON (built by [`super::request`]) as a typed value.
    pub fn request_value(&self, json: &Json) -> Value {
        self.request.1.to_value(json)
    }

    /// A Namespace's JSON as `namespaceObject` (only the fields Kubernetes copies).
    pub fn namespace_value(&self, namespace: Option<&Json>) -> Value {
        match namespace {
            None => Value::Null,
            Some(ns) => self.namespace.1.to_value(&namespace_fields(ns)),
        }
    }

    /// The values an invocation's expressions read: the request's objects (as untyped
    /// data, as Kubernetes converts unstructured objects), `params`, `request`,
    /// `namespaceObject` (see [`AdmissionEnv::namespace_value`]), and the authorizer
    /// variables bound to `authz` as the request's user (absent without an authorizer).
    pub fn bindings(
        &self,
        r: &super::request::Request,
        params: Value,
        namespace: Value,
        authz: Option<&Arc<dyn cel_k8s::authz::Authorizer>>,
    ) -> FixedBindings {
        let user = cel_k8s::authz::UserInfo {
            name: r.user.username.clone(),
            uid: r.user.uid.clone(),
            groups: r.user.groups.clone(),
        };
        let data = |j: Option<&Json>| j.map_or(Value::Null, cel_k8s_schema::value::untyped);
        FixedBindings {
            object: data(r.object.as_ref()),
            old_object: data(r.old_object.as_ref()),
            params,
            request: self.request_value(&r.to_json(&r.resource, &r.kind)),
            namespace,
            authorizer: authz
                .map(|a| cel_k8s::authz::authorizer_value(Some(user.clone()), a.clone())),
            request_resource: authz.map(|a| {
                cel_k8s::authz::request_resource_value(
                    Some(user.clone()),
                    a.clone(),
                    &r.resource.group,
                    &r.resource.resource,
                    &r.sub_resource,
                    &r.namespace,
                    &r.name,
                )
            }),
            interrupt: None,
        }
    }

    /// The environment an expression compiles in, given the variables declared before it.
    pub fn env(&self, decls: Declarations, variables: &[(String, Type)]) -> Env {
        self.env_typed(decls, variables, &TypedInputs::default())
    }

    /// [`AdmissionEnv::env`] with `object`, `oldObject` and `params` typed by schemas where
    /// `typed` has them (the type checker's environment; evaluation keeps them `dyn`).
    pub fn env_typed(
        &self,
        decls: Declarations,
        variables: &[(String, Type)],
        typed: &TypedInputs,
    ) -> Env {
        // Kubernetes declares these types' fields by name, unescaped: `request.namespace`
        // is a field even though `namespace` is a reserved word.
        let mut schema_types = SchemaTypes::new(&self.request.0).with_keyword_field_names(true);
        schema_types.add(&self.namespace.0);
        let mut input_type = |decl: &Option<DeclType>| match decl {
            Some(d) => {
                schema_types.add(d);
                d.cel_type()
            }
            None => Type::Dyn,
        };
        let object_type = input_type(&typed.object);
        let params_type = input_type(&typed.params);
        let types = AdmissionTypes {
            schema_types,
            variables: variables.iter().cloned().collect(),
            patch_types: decls.patch_types,
        };
        let mut k8s = KubernetesEnv::new(self.version).kind(self.kind);
        if let Some(c) = self.compatibility {
            k8s = k8s.compatibility(c);
        }
        let k8s = k8s
            .with_jsonpatch(decls.patch_types)
            .with_authorizer_variable(decls.authorizer);
        // The authorizer variables exist where the authz library does (Kubernetes 1.27+).
        let authorizer = decls.authorizer && k8s.profile().has("kubernetes.authz");
        let mut b = k8s
            .builder()
            .type_provider(Arc::new(types))
            .cost_limit(Some(PER_CALL_LIMIT))
            .compile_settings(self.compile.clone())
            .variable("object", object_type.clone())
            .variable("oldObject", object_type)
            .variable("namespaceObject", self.namespace.0.cel_type())
            .variable("request", self.request.0.cel_type())
            .variable("variables", Type::message(VARIABLES_TYPE));
        if decls.params {
            b = b.variable("params", params_type);
        }
        if authorizer {
            let rr = cel_k8s::authz::request_resource_variable();
            b = b.variable(&rr.name, rr.ty);
        }
        b.build()
    }

    /// Compiles one expression in `env`, checking its type against `returns`, with the API
    /// server's error texts.
    pub fn compile(&self, env: &Env, expression: &str, returns: &ReturnTypes) -> Compiled {
        let fail = |e: String| Compiled {
            expression: expression.to_string(),
            program: Err(e),
            output: Type::Dyn,
        };
        let ast = match env.compile(expression) {
            Ok(ast) => ast,
            Err(issues) => return fail(format!("compilation failed: {issues}")),
        };
        let output = ast.result_type().cloned().unwrap_or(Type::Dyn);
        if let ReturnTypes::OneOf(types) = returns
            && !types.contains(&output)
        {
            return fail(match types.as_slice() {
                [one] => format!("must evaluate to {one} but got {output}"),
                many => {
                    let names: Vec<String> = many.iter().map(|t| t.to_string()).collect();
                    format!(
                        "must evaluate to one of [{}] but got {output}",
                        names.join(" ")
                    )
                }
            });
        }
        let options = ProgramOptions::default()
            .backend(self.backend)
            .lazy_variables(true);
        match env.program_with(&ast, options) {
            Ok(p) => Compiled {
                expression: expression.to_string(),
                program: Ok(p),
                output,
            },
            Err(e) => fail(format!("program instantiation failed: {e}")),
        }
    }

    /// Compiles a policy's variables in order, each seeing those before it.
    pub fn compile_variables(
        &self,
        decls: Declarations,
        variables: &[(String, String)],
    ) -> (Vec<Compiled>, Vec<(String, Type)>) {
        self.compile_variables_typed(decls, variables, &TypedInputs::default())
    }

    /// [`AdmissionEnv::compile_variables`] in [`AdmissionEnv::env_typed`]'s environments.
    pub fn compile_variables_typed(
        &self,
        decls: Declarations,
        variables: &[(String, String)],
        typed: &TypedInputs,
    ) -> (Vec<Compiled>, Vec<(String, Type)>) {
        let mut declared: Vec<(String, Type)> = Vec::new();
        let mut compiled = Vec::with_capacity(variables.len());
        for (name, expression) in variables {
            let env = self.env_typed(decls, &declared, typed);
            let c = self.compile(&env, expression, &ReturnTypes::Any);
            // A later variable of the same name replaces the earlier one's type.
            declared.retain(|(n, _)| n != name);
            declared.push((name.clone(), c.output.clone()));
            compiled.push(c);
        }
        (compiled, declared)
    }
}

/// The fields of a Namespace that `namespaceObject` exposes (Kubernetes'
/// `CreateNamespaceObject`): status, spec and part of the metadata.
fn namespace_fields(ns: &Json) -> Json {
    const META: &[&str] = &[
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "finalizers",
    ];
    let mut meta = serde_json::Map::new();
    if let Some(m) = ns.get("metadata").and_then(Json::as_object) {
        for k in META {
            if let Some(v) = m.get(*k) {
                meta.insert((*k).to_string(), v.clone());
            }
        }
    }
    let mut out = serde_json::Map::new();
    out.insert("metadata".into(), Json::Object(meta));
    for k in ["spec", "status"] {
        if let Some(v) = ns.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    Json::Object(out)
}

/// The values an expression can read in one pass over a list of expressions, with the
/// policy's variables computed on demand (Kubernetes' `evaluationActivation` and its lazy
/// `variables` map, `pkg/admission/plugin/cel/activation.go` and `composition.go`).
///
/// A variable is computed where it is first read, by name (`variables.x`) or through the
/// `variables` map as a whole (`has(variables.x)`, `variables.?x`, `dyn(variables)['x']`):
/// `variables` is a lazy map ([`LazyVariables`]) whose entries are computed when found, so
/// a presence test computes the one variable it tests, as cel-go's `lazy.MapValue` does.
/// No lock is held while a variable's expression runs, and a variable read again while it
/// is being computed on the same thread (it depends on itself, which only `dyn` can
/// express) is an error rather than a wait; cel-go would recurse without end there.
pub struct Bindings {
    pass: Arc<Pass>,
}

/// The state of one pass, shared with the `variables` values handed out during it (which
/// hold it weakly: a variable's value may be the map itself).
struct Pass {
    fixed: FixedBindings,
    variables: Arc<[(Arc<str>, Compiled)]>,
    slots: Box<[VariableSlot]>,
    /// What computing variables has cost since the last [`Bindings::take_cost`].
    cost: AtomicU64,
    /// The map `variables` resolves to.
    lazy: Value,
}

/// One variable's value in a pass.
#[derive(Default)]
struct VariableSlot {
    /// The value once computed (or why it failed).
    value: OnceLock<Result<Value, String>>,
    /// The threads computing it now; the lock is held only to add or remove one.
    computing: Mutex<Vec<ThreadId>>,
}

/// The request-wide values of an activation.
#[derive(Clone, Debug)]
pub struct FixedBindings {
    /// `object`.
    pub object: Value,
    /// `oldObject`.
    pub old_object: Value,
    /// `params` (null when the binding has none).
    pub params: Value,
    /// `request`.
    pub request: Value,
    /// `namespaceObject`.
    pub namespace: Value,
    /// `authorizer`.
    pub authorizer: Option<Value>,
    /// `authorizer.requestResource`.
    pub request_resource: Option<Value>,
    /// Set when the request must stop (its deadline passed): every evaluation of the
    /// request then ends at its next comprehension step (see [`celerity::Deadline`]).
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl Bindings {
    /// A fresh pass: no variable computed yet.
    pub fn new(fixed: &FixedBindings, variables: &Arc<[(Arc<str>, Compiled)]>) -> Bindings {
        let pass = Arc::new_cyclic(|this: &Weak<Pass>| Pass {
            fixed: fixed.clone(),
            variables: variables.clone(),
            slots: (0..variables.len())
                .map(|_| VariableSlot::default())
                .collect(),
            cost: AtomicU64::new(0),
            lazy: Value::Opaque(Arc::new(LazyVariables { pass: this.clone() })),
        });
        Bindings { pass }
    }

    /// The cost of the variables computed since the last call, which the caller charges
    /// to its budget (Kubernetes' `GetAndResetCost`).
    pub fn take_cost(&self) -> u64 {
        self.pass.cost.swap(0, Ordering::Relaxed)
    }

    /// Evaluates `program` against this pass, stopping when the request's deadline passes.
    pub fn eval(
        &self,
        program: &Program,
    ) -> (Result<Value, celerity::EvalError>, celerity::EvalDetails) {
        self.pass.eval(program)
    }
}

/// The error of a variable read while it is being computed.
fn cycle_error(name: &str) -> String {
    format!(
        "composited variable {name:?} is read while it is being computed (it depends on itself)"
    )
}

impl Pass {
    /// The position of a variable (the last of that name wins, as in Kubernetes' map).
    fn index(&self, name: &str) -> Option<usize> {
        self.variables.iter().rposition(|(n, _)| &**n == name)
    }

    fn eval(
        &self,
        program: &Program,
    ) -> (Result<Value, celerity::EvalError>, celerity::EvalDetails) {
        match &self.fixed.interrupt {
            Some(flag) => program.eval_interruptible(self, flag),
            None => program.eval_details(self),
        }
    }

    /// Variable `i`'s value, computing it on its first read; `Err` with the API server's
    /// text when it fails to compile or evaluate, or with [`cycle_error`] when this thread
    /// is computing it already.
    fn variable(&self, i: usize) -> Result<&Value, Cow<'_, str>> {
        let slot = &self.slots[i];
        if let Some(done) = slot.value.get() {
            return done.as_ref().map_err(|e| Cow::Borrowed(e.as_str()));
        }
        let me = std::thread::current().id();
        {
            let mut computing = lock(&slot.computing);
            if computing.contains(&me) {
                return Err(Cow::Owned(cycle_error(&self.variables[i].0)));
            }
            computing.push(me);
        }
        let computed = self.compute(i);
        lock(&slot.computing).retain(|t| *t != me);
        // Another thread sharing this pass may have finished first: its value stands.
        let done = slot.value.get_or_init(|| computed);
        done.as_ref().map_err(|e| Cow::Borrowed(e.as_str()))
    }

    /// Evaluates variable `i` (Kubernetes' `variableAccessor.Callback`), charging its cost
    /// to the pass.
    fn compute(&self, i: usize) -> Result<Value, String> {
        let (name, compiled) = &self.variables[i];
        let program = match &compiled.program {
            Ok(p) => p,
            Err(e) => {
                return Err(format!(
                    "composited variable {name:?} fails to compile: {e}"
                ));
            }
        };
        let (value, details) = self.eval(program);
        self.cost.fetch_add(details.actual_cost, Ordering::Relaxed);
        value.map_err(|e| format!("composited variable {name:?} fails to evaluate: {e}"))
    }
}

/// A mutex whose poisoning (a panic elsewhere while it was held, for a push or a removal)
/// leaves its list usable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Activation for Pass {
    fn resolve(&self, name: &str) -> Option<Value> {
        self.resolve_ref(name).cloned()
    }

    fn resolve_ref(&self, name: &str) -> Option<&Value> {
        let f = &self.fixed;
        match name {
            "object" => Some(&f.object),
            "oldObject" => Some(&f.old_object),
            "params" => Some(&f.params),
            "request" => Some(&f.request),
            "namespaceObject" => Some(&f.namespace),
            "authorizer" => f.authorizer.as_ref(),
            "authorizer.requestResource" => f.request_resource.as_ref(),
            "variables" => Some(&self.lazy),
            _ => None,
        }
    }
}

impl Activation for Bindings {
    fn resolve(&self, name: &str) -> Option<Value> {
        self.pass.resolve(name)
    }

    fn resolve_ref(&self, name: &str) -> Option<&Value> {
        self.pass.resolve_ref(name)
    }
}

/// `variables` as a value: a map from each variable's name to its value, computed when an
/// entry is found (Kubernetes' `lazy.MapValue`, `pkg/cel/lazy/lazy.go`). Equal only to
/// itself. It holds its pass weakly, so a variable whose value is the map does not keep
/// the pass alive; read after its pass ended, an entry is an error.
#[derive(Debug)]
pub struct LazyVariables {
    pass: Weak<Pass>,
}

impl OpaqueValue for LazyVariables {
    fn type_name(&self) -> &str {
        VARIABLES_TYPE
    }

    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other
            .as_any()
            .downcast_ref::<LazyVariables>()
            .is_some_and(|o| Weak::ptr_eq(&self.pass, &o.pass))
    }

    fn as_map(&self) -> Option<&dyn OpaqueMap> {
        Some(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl OpaqueMap for LazyVariables {
    fn find(&self, key: &str) -> Option<cel_runtime::Result<Value>> {
        let Some(pass) = self.pass.upgrade() else {
            return Some(Err(cel_runtime::Error::new(
                "variables are read after the evaluation that made them ended",
            )));
        };
        // Field names arrive escaped, as Kubernetes' map unescapes them.
        let name = cel_k8s_schema::escape::unescape(key)?;
        let i = pass.index(&name)?;
        Some(
            pass.variable(i)
                .cloned()
                .map_err(|e| cel_runtime::Error::new(e.into_owned())),
        )
    }
}

/// The outcome of one expression in a pass (Kubernetes' `EvaluationResult`).
#[derive(Clone, Debug)]
pub enum Evaluation {
    /// The value.
    Value(Value),
    /// The expression failed to compile or to evaluate: the API server's text.
    Error(String),
}

/// Why a pass stopped (Kubernetes' out-of-budget error).
pub const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// Evaluates `expressions` in order within `budget`, as Kubernetes' `ForInput` does: one
/// result per expression (`None` where there is no expression), and the budget left; or
/// the error that stops the pass.
pub fn evaluate_all(
    bindings: &Bindings,
    expressions: &[Option<&Compiled>],
    budget: u64,
) -> Result<(Vec<Option<Evaluation>>, u64), String> {
    let mut remaining = budget;
    let mut out = Vec::with_capacity(expressions.len());
    for c in expressions {
        let Some(c) = c else {
            out.push(None);
            continue;
        };
        let program = match &c.program {
            Ok(p) => p,
            Err(e) => {
                out.push(Some(Evaluation::Error(format!("compilation error: {e}"))));
                continue;
            }
        };
        let (value, details) = bindings.eval(program);
        let composition = bindings.take_cost();
        if composition > remaining {
            return Err(OUT_OF_BUDGET.to_string());
        }
        remaining -= composition;
        if details.actual_cost > remaining {
            return Err(OUT_OF_BUDGET.to_string());
        }
        remaining -= details.actual_cost;
        out.push(Some(match value {
            Ok(v) => Evaluation::Value(v),
            Err(e) => Evaluation::Error(format!(
                "expression '{}' resulted in error: {}",
                c.expression, e.message
            )),
        }));
    }
    Ok((out, remaining))
}
