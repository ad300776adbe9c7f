//! A compiled set of policies and bindings, and what it answers to one request (Kubernetes'
//! policy dispatchers): mutating policies first, then validating ones; for each policy
//! that matches, each of its bindings that matches, each param the binding selects; the
//! decisions folded into the API server's response.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cel_k8s::KubeVersion;
use cel_k8s::authz::Authorizer;
use serde_json::{Value as Json, json};

use cel_k8s_schema::Schema;
use cel_k8s_schema::value::untyped;

use super::authz_rules::RulesAuthorizer;
use super::environment::{AdmissionEnv, FixedBindings};
use super::matching::{Equivalents, matches, selector_matches};
use super::policy::{
    Binding, FailurePolicy, MUTATING_BINDING, MUTATING_POLICY, MatchResources, ParamKind, Policy,
    PolicyKind, VALIDATING_BINDING, VALIDATING_POLICY, read_binding, read_policy,
};
use super::request::{Gvk, Gvr, Operation, Request, builtin_kind};
use super::validating::{AnnotationResult, CompiledPolicy, Decision, match_conditions, validate};
use super::webhooks::{
    CompiledWebhook, MUTATING_WEBHOOK_CONFIGURATION, ShouldCall, VALIDATING_WEBHOOK_CONFIGURATION,
    WebhookConfiguration, WebhookResult, is_exempt, labels_by_own_name, read_webhook_configuration,
};
use crate::builtin::server_object::server_object;
use celerity::{Backend, Deadline, Value};

/// What a policy set is compiled with, besides its policies and bindings.
#[derive(Clone, Debug)]
pub struct PolicyInputs {
    /// The Kubernetes release whose API server admits the requests (default: the newest
    /// released version, [`KubeVersion::DEFAULT`]).
    pub version: Option<KubeVersion>,
    /// How expressions run (default: native code).
    pub backend: Backend,
    /// The param objects bindings may select.
    pub params: Vec<Json>,
    /// The namespaces requests may be in (a namespace not given is taken to exist, with no
    /// labels).
    pub namespaces: Vec<Json>,
    /// Whether kinds that are not built in are namespaced, by `apiVersion/Kind`
    /// (`example.com/v1/Limits`), as a REST mapping would say.
    pub scopes: HashMap<String, bool>,
    /// The resources served as equivalent, for `matchPolicy: Equivalent` (none by default).
    pub equivalents: Equivalents,
    /// How long one request may take before its evaluations are stopped and it is refused
    /// ([`REQUEST_TIME_LIMIT`] by default): a bound that holds against a bug, beside the
    /// cost budgets that bound what expressions do.
    pub time_limit: Duration,
    /// The schemas of the kinds admitted (CRDs and built-ins): an `ApplyConfiguration`
    /// merges by them and is refused where it sets undeclared fields or atomic values, as
    /// the API server's structured merge does ([`super::apply`]). Without them (or for a
    /// kind they do not serve) the schema-less subset applies.
    pub schemas: Option<Arc<crate::crd::CrdSet>>,
    /// Whether namespaces and params are taken as the API server stores them: built-in kinds
    /// with their release's defaults and Go's encoding
    /// ([`crate::builtin::server_object::server_object`]), and a namespace not given with the
    /// `kubernetes.io/metadata.name` label every Namespace carries (off by default).
    pub server_objects: bool,
}

/// The default [`PolicyInputs::time_limit`]: generous, since cost budgets already bound
/// every expression (a full budget of the interpreter's slowest operations takes about a
/// second on a laptop core).
pub const REQUEST_TIME_LIMIT: Duration = Duration::from_secs(30);

impl Default for PolicyInputs {
    fn default() -> PolicyInputs {
        PolicyInputs {
            version: None,
            backend: Backend::Jit,
            params: Vec::new(),
            namespaces: Vec::new(),
            scopes: HashMap::new(),
            equivalents: Equivalents::default(),
            time_limit: REQUEST_TIME_LIMIT,
            schemas: None,
            server_objects: false,
        }
    }
}

/// The status of a response (`metav1.Status`, the parts the API server fills).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// HTTP code (200 when allowed).
    pub code: u16,
    /// Reason (`Invalid`, `Forbidden`; empty when allowed).
    pub reason: String,
    /// Message (empty when allowed).
    pub message: String,
}

/// A policy and binding that applied to the request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matched {
    /// The policy's kind (`ValidatingAdmissionPolicy`).
    pub kind: &'static str,
    /// The policy.
    pub policy: String,
    /// The binding (`None` when only the policy matched, not any of its bindings).
    pub binding: Option<String>,
}

/// What the API server answers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Response {
    /// Whether the request is admitted.
    pub allowed: bool,
    /// Why not.
    pub status: Status,
    /// Warnings returned to the client.
    pub warnings: Vec<String>,
    /// Audit annotations, by key (`policy/key`, and the API server's own such as
    /// `validation.policy.admission.k8s.io/validation_failure`).
    pub audit_annotations: BTreeMap<String, String>,
    /// The object after the mutating policies (the request's object when none mutated it).
    pub object: Option<Json>,
    /// The policies and bindings that applied, in order.
    pub matched: Vec<Matched>,
    /// Each webhook of the set's configurations, in the API server's order (mutating ones
    /// first): whether it would be called, and why not.
    pub webhooks: Vec<WebhookResult>,
}

impl Response {
    /// A request refused before admission (`400 BadRequest`): a body the API server cannot
    /// decode.
    pub fn bad_request(message: String) -> Response {
        Response {
            allowed: false,
            status: Status {
                code: 400,
                reason: "BadRequest".into(),
                message,
            },
            ..Response::default()
        }
    }

    /// The answer to a request stopped at its time limit: refused, as the API server
    /// answers a request whose handler ran out of time (`504 Timeout`).
    pub fn timed_out(limit: Duration) -> Response {
        Response {
            allowed: false,
            status: Status {
                code: 504,
                reason: "Timeout".into(),
                message: format!(
                    "admission did not finish within {limit:?}: its evaluations were stopped"
                ),
            },
            ..Response::default()
        }
    }
}

/// A policy set compiled once; `Send + Sync`, so one set admits requests from many threads.
#[derive(Debug)]
pub struct PolicySet {
    env: AdmissionEnv,
    policies: Vec<CompiledPolicy>,
    bindings: Vec<Binding>,
    /// The params, with their values as expressions read them.
    params: Vec<(Json, Value)>,
    /// The namespaces given: their labels and `namespaceObject`.
    namespaces: HashMap<String, Namespace>,
    scopes: HashMap<String, bool>,
    equivalents: Equivalents,
    problems: Vec<String>,
    allow_all: Arc<RulesAuthorizer>,
    time_limit: Duration,
    schemas: Option<Arc<crate::crd::CrdSet>>,
    /// The schemas read so far, by `apiVersion` and kind (inlining a built-in kind's schema
    /// is done once per set).
    schema_cache: Mutex<HashMap<ApiKind, Option<Arc<Schema>>>>,
    /// The release whose stored objects namespaces and params are, when
    /// [`PolicyInputs::server_objects`].
    server_minor: Option<u32>,
    /// The webhooks of the configurations, mutating ones first, each kind's configurations
    /// by name.
    webhooks: Vec<CompiledWebhook>,
}

/// An object's `apiVersion` and kind.
type ApiKind = (String, String);

/// A namespace as matching and expressions see it.
#[derive(Clone, Debug)]
struct Namespace {
    labels: Arc<Vec<(String, String)>>,
    value: Value,
}

/// What one request looks like to every policy: the values expressions read (with
/// `params` null) and its namespace's labels. Built once per request, and again when a
/// mutation changes the object.
pub(crate) struct View {
    pub(crate) fixed: FixedBindings,
    labels: Arc<Vec<(String, String)>>,
}

impl View {
    /// The same request with its object changed (by a mutation): only `object` differs.
    pub(crate) fn set_object(&mut self, object: &Json) {
        self.fixed.object = untyped(object);
    }
}

/// The default release: the newest released version.
fn default_version() -> KubeVersion {
    KubeVersion::DEFAULT
}

impl PolicySet {
    /// Compiles policies and bindings.
    pub fn new(policies: Vec<Policy>, bindings: Vec<Binding>, inputs: &PolicyInputs) -> PolicySet {
        let env = AdmissionEnv::new(
            inputs.version.unwrap_or_else(default_version),
            inputs.backend,
        );
        let policies: Vec<CompiledPolicy> = policies
            .into_iter()
            .map(|p| CompiledPolicy::compile(&env, p))
            .collect();
        let mut problems = Vec::new();
        for b in &bindings {
            let found = policies
                .iter()
                .any(|p| p.policy.name == b.policy_name && is_mutating(&p.policy) == b.mutating);
            if !found {
                problems.push(format!(
                    "binding {:?} refers to policy {:?}, which does not exist: it has no effect",
                    b.name, b.policy_name
                ));
            }
        }
        let server_minor = inputs
            .server_objects
            .then(|| inputs.version.unwrap_or(KubeVersion::DEFAULT).minor);
        let stored = |o: &Json| match server_minor {
            Some(minor) => server_object(minor, o),
            None => o.clone(),
        };
        let namespaces = inputs
            .namespaces
            .iter()
            .map(stored)
            .filter_map(|n| {
                let n = &n;
                let ns = Namespace {
                    labels: Arc::new(Request::labels_of(Some(n)).unwrap_or_default()),
                    value: env.namespace_value(Some(n)),
                };
                Some((meta(n, "name")?.to_string(), ns))
            })
            .collect();
        let params = inputs
            .params
            .iter()
            .map(stored)
            .map(|p| {
                let value = untyped(&p);
                (p, value)
            })
            .collect();
        PolicySet {
            env,
            policies,
            bindings,
            params,
            namespaces,
            scopes: inputs.scopes.clone(),
            equivalents: inputs.equivalents.clone(),
            problems,
            allow_all: Arc::new(RulesAuthorizer::default()),
            time_limit: inputs.time_limit,
            schemas: inputs.schemas.clone(),
            schema_cache: Mutex::default(),
            server_minor,
            webhooks: Vec::new(),
        }
    }

    /// What strict decoding into `object`'s built-in kind says of it, when the set was
    /// given schemas ([`crate::crd::CrdSet::strict_decode_error`]).
    pub(crate) fn strict_decode_error(&self, object: &Json) -> Option<String> {
        self.schemas.as_ref()?.strict_decode_error(object)
    }

    /// The same set with webhook configurations, whose webhooks each request is matched
    /// against (see [`super::webhooks`]); configurations are ordered as the API server
    /// orders them.
    pub fn with_webhooks(mut self, mut configurations: Vec<WebhookConfiguration>) -> PolicySet {
        // Mutating configurations first; each kind by name, stably
        // (`configuration/*_webhook_manager.go`).
        configurations.sort_by(|a, b| {
            let mutating = |c: &WebhookConfiguration| c.kind != MUTATING_WEBHOOK_CONFIGURATION;
            (mutating(a), &a.metadata.name).cmp(&(mutating(b), &b.metadata.name))
        });
        if configurations.is_empty() {
            return self;
        }
        let conditions_env = self.env.env(super::webhooks::DECLARATIONS, &[]);
        for c in &configurations {
            self.webhooks
                .extend(CompiledWebhook::compile_all(&self.env, &conditions_env, c));
        }
        self
    }

    /// Every webhook match condition that does not compile, with its configuration and
    /// path (`ValidatingWebhookConfiguration "c": webhooks[0].matchConditions[1].expression:
    /// compilation failed: ...`): the API server refuses such configurations.
    pub fn webhook_problems(&self) -> Vec<String> {
        self.webhooks
            .iter()
            .flat_map(|w| {
                w.compile_errors()
                    .into_iter()
                    .map(|e| format!("{} {:?}: {e}", w.kind, w.configuration))
            })
            .collect()
    }

    /// Whether the set has webhooks.
    pub fn has_webhooks(&self) -> bool {
        !self.webhooks.is_empty()
    }

    /// The schema of `object`'s kind, when the set was given schemas that serve it.
    pub(crate) fn schema_of(&self, object: &Json) -> Option<Arc<Schema>> {
        let schemas = self.schemas.as_ref()?;
        let (api_version, kind) = crate::type_meta(object);
        let key = (api_version.to_string(), kind.to_string());
        let mut cache = self
            .schema_cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        cache
            .entry(key)
            .or_insert_with_key(|(api_version, kind)| {
                schemas.typed_schema(api_version, kind).map(Arc::new)
            })
            .clone()
    }

    /// Reads and compiles policies and bindings given as Kubernetes objects (in any order);
    /// every object that cannot be read is reported, by position and field.
    pub fn from_json(objects: &[Json], inputs: &PolicyInputs) -> Result<PolicySet, Vec<String>> {
        let (mut policies, mut bindings, mut errors) = (Vec::new(), Vec::new(), Vec::new());
        let mut configurations = Vec::new();
        for (i, o) in objects.iter().enumerate() {
            if let Err(e) = super::request::check_depth(o, "") {
                errors.push(format!("[{i}]{e}"));
                continue;
            }
            let kind = o.get("kind").and_then(Json::as_str).unwrap_or("");
            let r = match kind {
                VALIDATING_POLICY | MUTATING_POLICY => read_policy(o).map(|p| policies.push(p)),
                VALIDATING_BINDING | MUTATING_BINDING => read_binding(o).map(|b| bindings.push(b)),
                VALIDATING_WEBHOOK_CONFIGURATION | MUTATING_WEBHOOK_CONFIGURATION => {
                    read_webhook_configuration(o).map(|c| configurations.push(c))
                }
                other => Err(vec![format!("kind: Unsupported value: {other:?}")]),
            };
            if let Err(e) = r {
                errors.extend(e.into_iter().map(|e| format!("[{i}]: {e}")));
            }
        }
        if errors.is_empty() {
            Ok(PolicySet::new(policies, bindings, inputs).with_webhooks(configurations))
        } else {
            Err(errors)
        }
    }

    /// The policies, compiled.
    pub fn policies(&self) -> &[CompiledPolicy] {
        &self.policies
    }

    /// What is wrong with the set that the API server accepts silently (bindings of
    /// policies that do not exist) and every expression that does not compile, with its
    /// policy and field.
    pub fn problems(&self) -> Vec<String> {
        let mut out = self.problems.clone();
        for p in &self.policies {
            for e in p.compile_errors() {
                out.push(format!("policy {:?}: {e}", p.policy.name));
            }
        }
        out
    }

    /// The release whose API server admits (its compatibility version is the environment's).
    pub fn version(&self) -> KubeVersion {
        self.env.version()
    }

    /// Admits one request, as `authorizer` decides `authorizer` checks (everything allowed
    /// when `None`). A request that runs past [`PolicyInputs::time_limit`] is stopped and
    /// refused ([`Response::timed_out`]).
    pub fn admit(&self, request: &Request, authorizer: Option<Arc<dyn Authorizer>>) -> Response {
        self.admit_with_deadline(request, authorizer, &Deadline::after(self.time_limit))
    }

    /// Sets how long each request may take (see [`PolicyInputs::time_limit`]).
    pub fn set_time_limit(&mut self, limit: Duration) {
        self.time_limit = limit;
    }

    /// [`PolicySet::admit`] under a deadline of the caller's: once it passes, the request's
    /// evaluations stop at their next comprehension step and the request is refused
    /// ([`Response::timed_out`]).
    pub fn admit_with_deadline(
        &self,
        request: &Request,
        authorizer: Option<Arc<dyn Authorizer>>,
        deadline: &Deadline,
    ) -> Response {
        let response = self.admit_until(request, authorizer, deadline);
        if deadline.passed() {
            return Response {
                matched: response.matched,
                webhooks: response.webhooks,
                ..Response::timed_out(deadline.limit())
            };
        }
        response
    }

    /// The API server decodes a create's or an update's body into a built-in kind's Go type
    /// before admission: a value of the wrong type is refused there (`400`), and no policy
    /// runs ([`crate::crd::CrdSet::decode_refusal`]; needs [`PolicyInputs::schemas`]).
    fn decode_refusal(&self, request: &Request) -> Option<String> {
        if request.operation == Operation::Delete {
            return None;
        }
        self.schemas
            .as_ref()?
            .decode_refusal(request.object.as_ref()?)
    }

    fn admit_until(
        &self,
        request: &Request,
        authorizer: Option<Arc<dyn Authorizer>>,
        deadline: &Deadline,
    ) -> Response {
        if let Some(message) = self.decode_refusal(request) {
            return Response::bad_request(message);
        }
        let authz: Arc<dyn Authorizer> =
            authorizer.unwrap_or_else(|| self.allow_all.clone() as Arc<dyn Authorizer>);
        let mut response = Response {
            allowed: true,
            status: Status {
                code: 200,
                ..Status::default()
            },
            ..Response::default()
        };
        // One view of the request serves every policy; mutations update its object.
        let mut view = self.view(request, &authz);
        view.fixed.interrupt = Some(deadline.flag().clone());
        let mutated = match super::mutating::dispatch(self, request, &mut view, &mut response) {
            Ok(m) => m,
            Err(status) => {
                response.allowed = false;
                response.status = status;
                self.webhooks_not_reached(&mut response, "a mutating admission policy");
                return response;
            }
        };
        let request = mutated.as_ref().unwrap_or(request);
        if let Err(status) = self.dispatch_webhooks(true, request, &view, &mut response) {
            response.allowed = false;
            response.status = status;
            self.webhooks_not_reached(&mut response, "a mutating webhook's matching");
            return response;
        }
        let mut v = Validating::default();
        for p in self.policies.iter().filter(|p| !is_mutating(&p.policy)) {
            self.validate_policy(p, request, &view, &mut v, &mut response);
        }
        v.finish(request, self.version(), &mut response);
        if !response.allowed {
            self.webhooks_not_reached(&mut response, "a validating admission policy");
        } else if let Err(status) = self.dispatch_webhooks(false, request, &view, &mut response) {
            response.allowed = false;
            response.status = status;
        }
        response.object = match mutated {
            Some(m) => m.object,
            None => request.object.clone(),
        };
        response
    }

    /// Matches the request against the mutating or the validating webhooks, in order, as
    /// their admission plugin's dispatcher does (`webhook/mutating/dispatcher.go`,
    /// `webhook/validating/dispatcher.go`): the first webhook whose matching fails
    /// rejects the request, and the webhooks after it are not reached; validating webhooks
    /// are called only once all are matched, so then none is.
    fn dispatch_webhooks(
        &self,
        mutating: bool,
        r: &Request,
        view: &View,
        response: &mut Response,
    ) -> Result<(), Status> {
        let hooks: Vec<&CompiledWebhook> = self
            .webhooks
            .iter()
            .filter(|w| w.mutating() == mutating)
            .collect();
        if hooks.is_empty() {
            return Ok(());
        }
        if is_exempt(&r.kind) {
            let reason = format!(
                "requests for {} objects are never sent to webhooks",
                r.kind.kind
            );
            for w in hooks {
                response.webhooks.push(WebhookResult::of(w, reason.clone()));
            }
            return Ok(());
        }
        let labels = if labels_by_own_name(r) {
            self.namespace_labels_named(&r.name, r)
        } else {
            view.labels.clone()
        };
        let start = response.webhooks.len();
        let request_value = |gvr: &Gvr, gvk: &Gvk| self.env.request_value(&r.to_json(gvr, gvk));
        for (k, w) in hooks.iter().enumerate() {
            match w.should_call(r, &labels, &self.equivalents, &view.fixed, request_value) {
                ShouldCall::Call(matched) => response.webhooks.push(WebhookResult {
                    called: true,
                    reason: None,
                    matched_as: Some(matched),
                    ..WebhookResult::of(w, String::new())
                }),
                ShouldCall::Skip(reason) => response.webhooks.push(WebhookResult::of(w, reason)),
                ShouldCall::Reject(status) => {
                    if !mutating {
                        for earlier in &mut response.webhooks[start..] {
                            if earlier.called {
                                earlier.called = false;
                                earlier.reason = Some(format!(
                                    "it matches, but matching webhook {:?} rejected the request before the validating webhooks were called",
                                    w.name
                                ));
                            }
                        }
                    }
                    let reason = if status.code == 403 {
                        "its matchConditions failed under failurePolicy Fail: the request is rejected"
                    } else {
                        "matching it failed: the request is rejected"
                    };
                    response.webhooks.push(WebhookResult {
                        error: Some(status.message.clone()),
                        ..WebhookResult::of(w, reason.into())
                    });
                    for later in &hooks[k + 1..] {
                        response.webhooks.push(WebhookResult::of(
                            later,
                            format!(
                                "not reached: matching webhook {:?} rejected the request",
                                w.name
                            ),
                        ));
                    }
                    return Err(status);
                }
            }
        }
        Ok(())
    }

    /// Records every webhook without a result yet as not reached, the request having been
    /// refused by `what`.
    fn webhooks_not_reached(&self, response: &mut Response, what: &str) {
        let done = response.webhooks.len();
        for w in self.webhooks.iter().skip(done) {
            response.webhooks.push(WebhookResult::of(
                w,
                format!("not reached: {what} refused the request first"),
            ));
        }
    }

    /// The labels of the namespace named `name` (a Namespace deleted, or one of its
    /// subresources, is matched by the stored namespace's labels): as given, else the old
    /// object's, else none.
    fn namespace_labels_named(&self, name: &str, r: &Request) -> Arc<Vec<(String, String)>> {
        match self.namespaces.get(name) {
            Some(n) => n.labels.clone(),
            None => Arc::new(Request::labels_of(r.old_object.as_ref()).unwrap_or_default()),
        }
    }

    /// The request's namespace (none for cluster-scoped objects and Namespaces
    /// themselves); a namespace not given is taken to exist, with no labels.
    fn namespace_of(&self, r: &Request) -> Option<Namespace> {
        if r.namespace.is_empty() || (r.kind.group.is_empty() && r.kind.kind == "Namespace") {
            return None;
        }
        Some(self.namespaces.get(&r.namespace).cloned().unwrap_or_else(|| {
            let mut ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": r.namespace}});
            if let Some(minor) = self.server_minor {
                ns = server_object(minor, &ns);
            }
            Namespace {
                labels: Arc::new(Request::labels_of(Some(&ns)).unwrap_or_default()),
                value: self.env.namespace_value(Some(&ns)),
            }
        }))
    }

    /// How the request looks to every policy.
    pub(crate) fn view(&self, r: &Request, authz: &Arc<dyn Authorizer>) -> View {
        let ns = self.namespace_of(r);
        let (labels, value) = match ns {
            Some(n) => (n.labels, n.value),
            None => (Arc::new(Vec::new()), Value::Null),
        };
        View {
            fixed: self.env.bindings(r, Value::Null, value, Some(authz)),
            labels,
        }
    }

    /// Whether a policy or binding's match resources select the request.
    pub(crate) fn selects(
        &self,
        m: Option<&MatchResources>,
        r: &Request,
        view: &View,
    ) -> Result<bool, String> {
        self.matched_as(m, r, view).map(|m| m.is_some())
    }

    /// The resource and kind a policy's match constraints select the request as (its own,
    /// or an equivalent one), or `None`.
    pub(crate) fn matched_as(
        &self,
        m: Option<&MatchResources>,
        r: &Request,
        view: &View,
    ) -> Result<Option<(Gvr, Gvk)>, String> {
        match m {
            None => Ok(Some((r.resource.clone(), r.kind.clone()))),
            Some(m) => matches(m, r, Some(&view.labels), &self.equivalents),
        }
    }

    /// The values an invocation's expressions read, for a policy that matched the request
    /// as `matched`: `request.resource` and `request.kind` are what it matched.
    pub(crate) fn policy_bindings(
        &self,
        view: &View,
        param: Option<usize>,
        r: &Request,
        matched: &(Gvr, Gvk),
    ) -> FixedBindings {
        let mut f = self.fixed_bindings(view, param);
        if matched.0 != r.resource || matched.1 != r.kind {
            f.request = self.env.request_value(&r.to_json(&matched.0, &matched.1));
        }
        f
    }

    /// The values an invocation's expressions read, with its param.
    pub(crate) fn fixed_bindings(&self, view: &View, param: Option<usize>) -> FixedBindings {
        FixedBindings {
            params: param.map_or(Value::Null, |i| self.params[i].1.clone()),
            ..view.fixed.clone()
        }
    }

    /// The bindings of a policy.
    pub(crate) fn bindings_of<'a>(&'a self, p: &'a Policy) -> impl Iterator<Item = &'a Binding> {
        let mutating = is_mutating(p);
        self.bindings
            .iter()
            .filter(move |b| b.policy_name == p.name && b.mutating == mutating)
    }

    /// Whether a param kind is namespaced: built-in kinds as Kubernetes scopes them, others
    /// as the host's scopes say, else as the params given of that kind are; a kind none of
    /// these knows has no REST mapping, which makes the policy fail to configure.
    pub(crate) fn param_scope(&self, kind: &ParamKind) -> Result<bool, String> {
        let gvk = Gvk::from_api_version(&kind.api_version, &kind.kind);
        if let Some((_, namespaced)) = builtin_kind(&gvk.group, &gvk.kind) {
            return Ok(namespaced);
        }
        if let Some(n) = self
            .scopes
            .get(&format!("{}/{}", kind.api_version, kind.kind))
        {
            return Ok(*n);
        }
        let mut of_kind = self.params.iter().map(|(p, _)| p).filter(|p| {
            p.get("apiVersion").and_then(Json::as_str) == Some(kind.api_version.as_str())
                && p.get("kind").and_then(Json::as_str) == Some(kind.kind.as_str())
        });
        match of_kind.next() {
            Some(first) => Ok(meta(first, "namespace").is_some()),
            None => Err(format!(
                "failed to find resource referenced by paramKind: '{}/{}, Kind={}'",
                gvk.group, gvk.version, gvk.kind
            )),
        }
    }

    /// The params a binding selects for a request (Kubernetes' `CollectParams`), by
    /// position: `[None]`
    /// when the policy or the binding has none.
    pub(crate) fn collect_params(
        &self,
        kind: Option<&ParamKind>,
        binding: &Binding,
        namespace: &str,
    ) -> Result<Vec<Option<usize>>, String> {
        let (Some(kind), Some(pref)) = (kind, binding.param_ref.as_ref()) else {
            return Ok(vec![None]);
        };
        let gvk = Gvk::from_api_version(&kind.api_version, &kind.kind);
        let of_kind: Vec<(usize, &Json)> = self
            .params
            .iter()
            .map(|(p, _)| p)
            .enumerate()
            .filter(|(_, p)| {
                let pk = Gvk::from_api_version(
                    p.get("apiVersion").and_then(Json::as_str).unwrap_or(""),
                    p.get("kind").and_then(Json::as_str).unwrap_or(""),
                );
                pk.group == gvk.group && pk.kind == gvk.kind
            })
            .collect();
        let namespaced = self.param_scope(kind)?;
        let in_namespace = if namespaced {
            let ns = if pref.namespace.is_empty() {
                namespace
            } else {
                &pref.namespace
            };
            if ns.is_empty() {
                return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into());
            }
            Some(ns.to_string())
        } else {
            if !pref.namespace.is_empty() {
                return Err(
                    "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
                        .into(),
                );
            }
            None
        };
        let candidates = of_kind.into_iter().filter(|(_, p)| {
            in_namespace
                .as_deref()
                .is_none_or(|ns| meta(p, "namespace") == Some(ns))
        });
        let found: Vec<Option<usize>> = if !pref.name.is_empty() {
            if pref.selector.is_some() {
                return Err("paramRef.name and paramRef.selector are mutually exclusive".into());
            }
            candidates
                .filter(|(_, p)| meta(p, "name") == Some(pref.name.as_str()))
                .take(1)
                .map(|(i, _)| Some(i))
                .collect()
        } else if let Some(s) = &pref.selector {
            let mut out = Vec::new();
            for (i, p) in candidates {
                let labels = Request::labels_of(Some(p)).unwrap_or_default();
                if selector_matches(s, &labels)? {
                    out.push(Some(i));
                }
            }
            out
        } else {
            return Err("one of name or selector must be provided".into());
        };
        if found.is_empty() && pref.deny_when_not_found {
            return Err(
                "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
            );
        }
        Ok(found)
    }

    fn validate_policy(
        &self,
        p: &CompiledPolicy,
        r: &Request,
        view: &View,
        v: &mut Validating,
        response: &mut Response,
    ) {
        let name = &p.policy.name;
        let matched = match self.matched_as(p.policy.match_constraints.as_ref(), r, view) {
            Err(e) => return v.config_error(p, None, e),
            Ok(None) => return,
            Ok(Some(m)) => m,
        };
        if let Some(Err(e)) = p.policy.param_kind.as_ref().map(|k| self.param_scope(k)) {
            return v.config_error(p, None, e);
        }
        let mut annotations: Vec<(String, Vec<String>)> = Vec::new();
        let mut any_binding = false;
        for b in self.bindings_of(&p.policy) {
            match self.selects(b.match_resources.as_ref(), r, view) {
                Err(e) => {
                    v.config_error(p, Some(b), e);
                    continue;
                }
                Ok(false) => continue,
                Ok(true) => {}
            }
            any_binding = true;
            response.matched.push(Matched {
                kind: VALIDATING_POLICY,
                policy: name.clone(),
                binding: Some(b.name.clone()),
            });
            let params = match self.collect_params(p.policy.param_kind.as_ref(), b, &r.namespace) {
                Ok(ps) => ps,
                Err(e) => {
                    v.config_error(p, Some(b), e);
                    continue;
                }
            };
            for param in params {
                let fixed = self.policy_bindings(view, param, r, &matched);
                let result = match self.match_conditions_of(p, &fixed) {
                    Ok(false) => continue,
                    Ok(true) => validate(p, &fixed),
                    Err(e) => super::validating::ValidateResult {
                        decisions: vec![Decision {
                            deny: p.fails_closed(),
                            error: true,
                            message: e,
                            reason: String::new(),
                        }],
                        annotations: Vec::new(),
                    },
                };
                v.record(p, b, result, &mut annotations);
            }
        }
        if !any_binding && self.bindings_of(&p.policy).next().is_none() {
            response.matched.push(Matched {
                kind: VALIDATING_POLICY,
                policy: name.clone(),
                binding: None,
            });
        }
        for (key, values) in annotations {
            response
                .audit_annotations
                .insert(format!("{name}/{key}"), values.join(", "));
        }
    }

    /// Match conditions see the request's own resource and no namespace object.
    pub(crate) fn match_conditions_of(
        &self,
        p: &CompiledPolicy,
        fixed: &FixedBindings,
    ) -> Result<bool, String> {
        let view = FixedBindings {
            namespace: Value::Null,
            ..fixed.clone()
        };
        match_conditions(p, &view)
    }
}

fn meta<'j>(o: &'j Json, key: &str) -> Option<&'j str> {
    o.get("metadata")?
        .get(key)?
        .as_str()
        .filter(|s| !s.is_empty())
}

/// Whether a policy is a mutating one.
pub(crate) fn is_mutating(p: &Policy) -> bool {
    matches!(p.kind, PolicyKind::Mutating { .. })
}

/// The longest audit annotation value published.
const MAX_AUDIT_ANNOTATION_VALUE_BYTES: usize = 10 * 1024;
/// The most validation failures recorded in the audit annotation.
const MAX_VALIDATION_FAILURES: usize = 50;

/// How many validation failures the audit annotation holds (B-VAP-1): up to 1.36 each
/// failure was added as an annotation of its own under the same key, and only the first one
/// was kept (k8s.io/apiserver v0.36.0 `pkg/admission/plugin/policy/validating/dispatcher.go`,
/// `publishValidationFailureAnnotation`); from 1.37 (`e5e88b80`) one list holds them all, up
/// to [`MAX_VALIDATION_FAILURES`].
fn recorded_validation_failures(release: KubeVersion) -> usize {
    if release < KubeVersion::new(1, 37) {
        1
    } else {
        MAX_VALIDATION_FAILURES
    }
}

/// What validating policies decided so far for one request.
#[derive(Default)]
struct Validating {
    /// Denials: policy, binding, decision.
    denied: Vec<(String, Option<String>, Decision)>,
    warnings: Vec<String>,
    failures: Vec<Json>,
}

impl Validating {
    fn config_error(&mut self, p: &CompiledPolicy, b: Option<&Binding>, e: String) {
        let message = match &p.policy.failure_policy {
            FailurePolicy::Ignore => return,
            FailurePolicy::Fail if b.is_none() => format!("failed to configure policy: {e}"),
            FailurePolicy::Fail => format!("failed to configure binding: {e}"),
            FailurePolicy::Other(f) => format!("unrecognized failure policy: '{f}'"),
        };
        self.denied.push((
            p.policy.name.clone(),
            b.map(|b| b.name.clone()),
            Decision {
                deny: true,
                error: true,
                message,
                reason: String::new(),
            },
        ));
    }

    fn record(
        &mut self,
        p: &CompiledPolicy,
        b: &Binding,
        result: super::validating::ValidateResult,
        annotations: &mut Vec<(String, Vec<String>)>,
    ) {
        let (policy, binding) = (&p.policy.name, &b.name);
        for (i, d) in result.decisions.into_iter().enumerate() {
            if !d.deny {
                continue;
            }
            for action in &b.validation_actions {
                match action.as_str() {
                    "Deny" => self.denied.push((policy.clone(), Some(binding.clone()), d.clone())),
                    "Audit" => self.failures.push(json!({
                        "message": d.message,
                        "policy": b.policy_name,
                        "binding": binding,
                        "expressionIndex": i,
                        "validationActions": b.validation_actions,
                    })),
                    "Warn" => self.warnings.push(format!(
                        "Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{binding}': {}",
                        d.message
                    )),
                    _ => {}
                }
            }
        }
        for a in result.annotations {
            match a {
                AnnotationResult::Publish(key, mut value) => {
                    truncate_at_char(&mut value, MAX_AUDIT_ANNOTATION_VALUE_BYTES);
                    match annotations.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, vs)) if !vs.contains(&value) => vs.push(value),
                        Some(_) => {}
                        None => annotations.push((key, vec![value])),
                    }
                }
                AnnotationResult::Error(message) => self.denied.push((
                    policy.clone(),
                    Some(binding.clone()),
                    Decision {
                        deny: true,
                        error: true,
                        message,
                        reason: String::new(),
                    },
                )),
            }
        }
    }

    fn finish(mut self, r: &Request, release: KubeVersion, response: &mut Response) {
        response.warnings.append(&mut self.warnings);
        if !self.failures.is_empty() {
            self.failures
                .truncate(recorded_validation_failures(release));
            response.audit_annotations.insert(
                "validation.policy.admission.k8s.io/validation_failure".into(),
                Json::Array(self.failures).to_string(),
            );
        }
        let Some((policy, binding, d)) = self.denied.into_iter().next() else {
            return;
        };
        let why = match binding {
            Some(b) => format!(
                "ValidatingAdmissionPolicy '{policy}' with binding '{b}' denied request: {}",
                d.message
            ),
            None => format!(
                "ValidatingAdmissionPolicy '{policy}' denied request: {}",
                d.message
            ),
        };
        let reason = if d.reason.is_empty() {
            "Invalid".to_string()
        } else {
            d.reason
        };
        response.allowed = false;
        response.status = Status {
            code: reason_code(&reason),
            reason,
            message: forbidden_message(r, &why),
        };
    }
}

/// Cuts a string to at most `max` bytes, at a character boundary.
fn truncate_at_char(s: &mut String, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}

/// The HTTP code of a denial's reason (Kubernetes' `reasonToCode`).
fn reason_code(reason: &str) -> u16 {
    match reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    }
}

/// `<resource> "<name>" is forbidden: <why>` (Kubernetes' `admission.NewForbidden`).
pub(crate) fn forbidden_message(r: &Request, why: &str) -> String {
    let resource = r.resource.group_resource();
    if resource.is_empty() {
        return format!("forbidden: {why}");
    }
    format!(
        "{resource} {} is forbidden: {why}",
        go_quote(&r.display_name())
    )
}

/// A string quoted as Go's `%q` quotes it (for names, which are plain ASCII, JSON's
/// quoting agrees).
fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}
