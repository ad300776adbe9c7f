//! Kubernetes' authorization libraries (`kubernetes.authz`, Kubernetes 1.27+, and
//! `kubernetes.authzSelectors`, 1.31+; `authz.go`).
//!
//! They are usable where the host declares the variable `authorizer` of type
//! `kubernetes.authorization.Authorizer` (admission policies, match conditions; not CRD
//! rules) and binds it with [`authorizer_value`] to its own [`Authorizer`].
//!
//! | function | signature | example |
//! | --- | --- | --- |
//! | `path` | `Authorizer.path(string) -> PathCheck` | `authorizer.path('/healthz')` |
//! | `group` | `Authorizer.group(string) -> GroupCheck` | `authorizer.group('apps')` |
//! | `serviceAccount` | `Authorizer.serviceAccount(string ns, string name) -> Authorizer` | `authorizer.serviceAccount('default', 'sa')` |
//! | `resource` | `GroupCheck.resource(string) -> ResourceCheck` | `authorizer.group('').resource('pods')` |
//! | `subresource`, `namespace`, `name` | `ResourceCheck.f(string) -> ResourceCheck` | `....namespace('default').name('p')` |
//! | `fieldSelector`, `labelSelector` (authzSelectors) | `ResourceCheck.f(string) -> ResourceCheck` | `....labelSelector('app=x')` |
//! | `check` | `PathCheck.check(string) -> Decision`, `ResourceCheck.check(string) -> Decision` | `....check('get')` |
//! | `allowed`, `errored` | `Decision.f() -> bool` | `....check('get').allowed()` |
//! | `reason`, `error` | `Decision.f() -> string` | `....check('get').reason()` |
//!
//! Errors: `path must not be empty`, `resource must not be empty` (blank after trimming
//! spaces), `Invalid service account name`, `Invalid service account namespace`. A check
//! that the host's authorizer fails (returns an error, or panics) is an errored decision,
//! never an evaluation error. Resource checks carry API version `*`; selectors are passed to
//! the authorizer as written (a host that needs requirements parses them).
//!
//! Costs: `check` 350,000 (two checks fit in the per-call limit); every builder and accessor
//! 1; `fieldSelector`/`labelSelector` `10 + ceil(0.1 × n) + ceil(0.5 × n) × 50` for a selector
//! of `n` characters.

use std::any::Any;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use cel_ext::{Library, LibraryContents};
use cel_runtime::{Error, Implementation, OpaqueValue, Result, Value};
use cel_types::{FunctionDecl, OverloadDecl, Type, VariableDecl};

use crate::{opaque, string_arg};

/// `kubernetes.authorization.Authorizer`.
pub const AUTHORIZER_TYPE: &str = "kubernetes.authorization.Authorizer";
/// `kubernetes.authorization.PathCheck`.
pub const PATH_CHECK_TYPE: &str = "kubernetes.authorization.PathCheck";
/// `kubernetes.authorization.GroupCheck`.
pub const GROUP_CHECK_TYPE: &str = "kubernetes.authorization.GroupCheck";
/// `kubernetes.authorization.ResourceCheck`.
pub const RESOURCE_CHECK_TYPE: &str = "kubernetes.authorization.ResourceCheck";
/// `kubernetes.authorization.Decision`.
pub const DECISION_TYPE: &str = "kubernetes.authorization.Decision";

/// The variable admission environments declare.
pub const AUTHORIZER_VARIABLE: &str = "authorizer";

/// The declaration of the `authorizer` variable.
pub fn authorizer_variable() -> VariableDecl {
    VariableDecl::new(AUTHORIZER_VARIABLE, Type::opaque(AUTHORIZER_TYPE))
}

/// The declaration of `authorizer.requestResource` (a `ResourceCheck` preset with the
/// request's resource), as validating admission policies declare it.
pub fn request_resource_variable() -> VariableDecl {
    VariableDecl::new(
        "authorizer.requestResource",
        Type::opaque(RESOURCE_CHECK_TYPE),
    )
}

/// Who is asking.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// User name.
    pub name: String,
    /// User id.
    pub uid: String,
    /// Groups.
    pub groups: Vec<String>,
}

/// What an authorization check asks (Kubernetes' `authorizer.AttributesRecord`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthorizationAttributes {
    /// The user, if the host supplied one (or the service account chosen with
    /// `serviceAccount`).
    pub user: Option<UserInfo>,
    /// The verb (`get`, or an HTTP verb for path checks).
    pub verb: String,
    /// Whether this is a resource check (else a non-resource path check).
    pub resource_request: bool,
    /// The path of a non-resource check.
    pub path: String,
    /// API group (`''` is the core group).
    pub api_group: String,
    /// API version (`*` for checks made from CEL).
    pub api_version: String,
    /// Resource.
    pub resource: String,
    /// Subresource (`''` when unset).
    pub subresource: String,
    /// Namespace (`''` for cluster scope).
    pub namespace: String,
    /// Name (`''` when unset).
    pub name: String,
    /// The field selector, as written (`None` when not set or empty).
    pub field_selector: Option<String>,
    /// The label selector, as written.
    pub label_selector: Option<String>,
}

/// An authorizer's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecisionKind {
    /// Explicitly denied.
    Deny,
    /// Explicitly allowed.
    Allow,
    /// No opinion (not allowed).
    NoOpinion,
}

/// A decision as the CEL `Decision` value exposes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The verdict.
    pub kind: DecisionKind,
    /// The authorizer's reason.
    pub reason: String,
    /// The authorizer's error, if any.
    pub error: Option<String>,
}

impl Decision {
    /// An allow decision.
    pub fn allow(reason: &str) -> Decision {
        Decision {
            kind: DecisionKind::Allow,
            reason: reason.into(),
            error: None,
        }
    }

    /// A deny decision.
    pub fn deny(reason: &str) -> Decision {
        Decision {
            kind: DecisionKind::Deny,
            reason: reason.into(),
            error: None,
        }
    }
}

/// The host's authorizer. An `Err` is reported as an errored decision with no opinion; so
/// is a panic.
pub trait Authorizer: Send + Sync {
    /// Decides a request.
    fn authorize(
        &self,
        attributes: &AuthorizationAttributes,
    ) -> std::result::Result<Decision, String>;
}

#[derive(Clone)]
struct AuthorizerVal {
    user: Option<UserInfo>,
    authorizer: Arc<dyn Authorizer>,
}

impl fmt::Debug for AuthorizerVal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorizer")
            .field("user", &self.user)
            .finish()
    }
}

#[derive(Clone, Debug)]
struct PathCheck {
    authorizer: AuthorizerVal,
    path: String,
}

#[derive(Clone, Debug)]
struct GroupCheck {
    authorizer: AuthorizerVal,
    group: String,
}

#[derive(Clone, Debug)]
struct ResourceCheck {
    authorizer: AuthorizerVal,
    group: String,
    resource: String,
    subresource: String,
    namespace: String,
    name: String,
    field_selector: String,
    label_selector: String,
}

macro_rules! opaque_type {
    ($t:ty, $name:expr) => {
        impl OpaqueValue for $t {
            fn type_name(&self) -> &str {
                $name
            }
            fn write_cel(&self, out: &mut String) {
                self.write_expr(out);
            }
            fn equals(&self, other: &dyn OpaqueValue) -> bool {
                // Receiver-only values: equal only to themselves.
                std::ptr::eq(
                    self as *const Self as *const u8,
                    other.as_any() as *const dyn Any as *const u8,
                )
            }
            fn as_any(&self) -> &dyn Any {
                self
            }
        }
    };
}

opaque_type!(AuthorizerVal, AUTHORIZER_TYPE);
opaque_type!(PathCheck, PATH_CHECK_TYPE);
opaque_type!(GroupCheck, GROUP_CHECK_TYPE);
opaque_type!(ResourceCheck, RESOURCE_CHECK_TYPE);
opaque_type!(DecisionVal, DECISION_TYPE);

/// A decision with the check that made it (so that it prints as that check).
#[derive(Clone, Debug)]
struct DecisionVal {
    decision: Decision,
    /// The check's expression, `authorizer.path("/healthz").check("get")`.
    check: String,
}

fn push_call(out: &mut String, name: &str, args: &[&str]) {
    out.push('.');
    out.push_str(name);
    out.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        cel_runtime::format::push_string_literal(out, a);
    }
    out.push(')');
}

impl AuthorizerVal {
    /// `authorizer`, or `authorizer.serviceAccount("ns", "name")` for a service account's.
    fn write_expr(&self, out: &mut String) {
        out.push_str(AUTHORIZER_VARIABLE);
        let sa = self.user.as_ref().and_then(|u| {
            u.name
                .strip_prefix("system:serviceaccount:")
                .and_then(|rest| rest.split_once(':'))
        });
        if let Some((ns, name)) = sa {
            push_call(out, "serviceAccount", &[ns, name]);
        }
    }
}

impl PathCheck {
    fn write_expr(&self, out: &mut String) {
        self.authorizer.write_expr(out);
        push_call(out, "path", &[&self.path]);
    }
}

impl GroupCheck {
    fn write_expr(&self, out: &mut String) {
        self.authorizer.write_expr(out);
        push_call(out, "group", &[&self.group]);
    }
}

impl ResourceCheck {
    /// The builder calls that make this check, the empty parts left out.
    fn write_expr(&self, out: &mut String) {
        self.authorizer.write_expr(out);
        push_call(out, "group", &[&self.group]);
        push_call(out, "resource", &[&self.resource]);
        for (name, v) in [
            ("subresource", &self.subresource),
            ("namespace", &self.namespace),
            ("name", &self.name),
            ("fieldSelector", &self.field_selector),
            ("labelSelector", &self.label_selector),
        ] {
            if !v.is_empty() {
                push_call(out, name, &[v]);
            }
        }
    }
}

impl DecisionVal {
    fn write_expr(&self, out: &mut String) {
        out.push_str(&self.check);
    }
}

/// A two-argument function that asks the host, as an [`Implementation::External`].
fn external2(f: fn(&Value, &Value) -> Result<Value>) -> Implementation {
    Implementation::External(Arc::new(move |args: &[Value]| match args {
        [a, b] => f(a, b),
        _ => Err(Error::no_such_overload()),
    }))
}

/// The value of the `authorizer` variable: checks are made as `user` through `authorizer`.
pub fn authorizer_value(user: Option<UserInfo>, authorizer: Arc<dyn Authorizer>) -> Value {
    Value::Opaque(Arc::new(AuthorizerVal { user, authorizer }))
}

/// The value of `authorizer.requestResource`: a resource check preset with the request's
/// group, resource, subresource, namespace and name.
pub fn request_resource_value(
    user: Option<UserInfo>,
    authorizer: Arc<dyn Authorizer>,
    group: &str,
    resource: &str,
    subresource: &str,
    namespace: &str,
    name: &str,
) -> Value {
    Value::Opaque(Arc::new(ResourceCheck {
        authorizer: AuthorizerVal { user, authorizer },
        group: group.into(),
        resource: resource.into(),
        subresource: subresource.into(),
        namespace: namespace.into(),
        name: name.into(),
        field_selector: String::new(),
        label_selector: String::new(),
    }))
}

/// Calls the host's authorizer; errors and panics become errored decisions.
fn authorize(a: &AuthorizerVal, attrs: &AuthorizationAttributes) -> Decision {
    match catch_unwind(AssertUnwindSafe(|| a.authorizer.authorize(attrs))) {
        Ok(Ok(d)) => d,
        Ok(Err(e)) => Decision {
            kind: DecisionKind::NoOpinion,
            reason: String::new(),
            error: Some(e),
        },
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Decision {
                kind: DecisionKind::NoOpinion,
                reason: String::new(),
                error: Some(format!("authorizer panicked: {msg}")),
            }
        }
    }
}

fn is_dns1123_subdomain(s: &str) -> bool {
    crate::format::dns1123_subdomain(s).is_empty()
}

fn is_dns1123_label(s: &str) -> bool {
    crate::format::dns1123_label(s).is_empty()
}

fn arg<T: OpaqueValue>(v: &Value) -> Result<&T> {
    opaque::<T>(v).ok_or_else(Error::no_such_overload)
}

fn str_arg(v: &Value) -> Result<&str> {
    string_arg(v).ok_or_else(Error::no_such_overload)
}

fn wrap<T: OpaqueValue>(v: T) -> Result<Value> {
    Ok(Value::Opaque(Arc::new(v)))
}

fn path(a: &Value, p: &Value) -> Result<Value> {
    let a = arg::<AuthorizerVal>(a)?;
    let p = str_arg(p)?;
    if p.trim_matches(go_space).is_empty() {
        return Err(Error::new("path must not be empty"));
    }
    wrap(PathCheck {
        authorizer: a.clone(),
        path: p.into(),
    })
}

/// Go's `strings.TrimSpace` set (Unicode white space).
fn go_space(c: char) -> bool {
    c.is_whitespace()
}

fn group(a: &Value, g: &Value) -> Result<Value> {
    let a = arg::<AuthorizerVal>(a)?;
    wrap(GroupCheck {
        authorizer: a.clone(),
        group: str_arg(g)?.into(),
    })
}

fn service_account(args: &[Value]) -> Result<Value> {
    let [a, ns, name] = args else {
        return Err(Error::no_such_overload());
    };
    let a = arg::<AuthorizerVal>(a)?;
    let (ns, name) = (str_arg(ns)?, str_arg(name)?);
    if !is_dns1123_subdomain(name) {
        return Err(Error::new("Invalid service account name"));
    }
    if !is_dns1123_label(ns) {
        return Err(Error::new("Invalid service account namespace"));
    }
    wrap(AuthorizerVal {
        user: Some(UserInfo {
            name: format!("system:serviceaccount:{ns}:{name}"),
            uid: String::new(),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{ns}"),
            ],
        }),
        authorizer: a.authorizer.clone(),
    })
}

fn resource(g: &Value, r: &Value) -> Result<Value> {
    let g = arg::<GroupCheck>(g)?;
    let r = str_arg(r)?;
    if r.trim_matches(go_space).is_empty() {
        return Err(Error::new("resource must not be empty"));
    }
    wrap(ResourceCheck {
        authorizer: g.authorizer.clone(),
        group: g.group.clone(),
        resource: r.into(),
        subresource: String::new(),
        namespace: String::new(),
        name: String::new(),
        field_selector: String::new(),
        label_selector: String::new(),
    })
}

fn with_resource(r: &Value, s: &Value, set: fn(&mut ResourceCheck, String)) -> Result<Value> {
    let mut r = arg::<ResourceCheck>(r)?.clone();
    set(&mut r, str_arg(s)?.into());
    wrap(r)
}

fn path_check(p: &Value, verb: &Value) -> Result<Value> {
    let p = arg::<PathCheck>(p)?;
    let attrs = AuthorizationAttributes {
        user: p.authorizer.user.clone(),
        verb: str_arg(verb)?.into(),
        path: p.path.clone(),
        ..AuthorizationAttributes::default()
    };
    let mut check = String::new();
    p.write_expr(&mut check);
    push_call(&mut check, "check", &[&attrs.verb]);
    wrap(DecisionVal {
        decision: authorize(&p.authorizer, &attrs),
        check,
    })
}

fn resource_check(r: &Value, verb: &Value) -> Result<Value> {
    let r = arg::<ResourceCheck>(r)?;
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_string());
    let attrs = AuthorizationAttributes {
        user: r.authorizer.user.clone(),
        verb: str_arg(verb)?.into(),
        resource_request: true,
        api_group: r.group.clone(),
        api_version: "*".into(),
        resource: r.resource.clone(),
        subresource: r.subresource.clone(),
        namespace: r.namespace.clone(),
        name: r.name.clone(),
        field_selector: non_empty(&r.field_selector),
        label_selector: non_empty(&r.label_selector),
        ..AuthorizationAttributes::default()
    };
    let mut check = String::new();
    r.write_expr(&mut check);
    push_call(&mut check, "check", &[&attrs.verb]);
    wrap(DecisionVal {
        decision: authorize(&r.authorizer, &attrs),
        check,
    })
}

fn decision(v: &Value) -> Result<&Decision> {
    arg::<DecisionVal>(v).map(|d| &d.decision)
}

fn authz_types() -> [Type; 5] {
    [
        Type::opaque(AUTHORIZER_TYPE),
        Type::opaque(PATH_CHECK_TYPE),
        Type::opaque(GROUP_CHECK_TYPE),
        Type::opaque(RESOURCE_CHECK_TYPE),
        Type::opaque(DECISION_TYPE),
    ]
}

/// Kubernetes' authorization library.
#[derive(Clone, Copy, Debug, Default)]
pub struct Authz;

impl Library for Authz {
    fn name(&self) -> &str {
        "kubernetes.authz"
    }

    fn contents(&self) -> LibraryContents {
        let [a, p, g, r, d] = authz_types();
        let m = |name: &str, id: &str, params: Vec<Type>, result: Type| {
            FunctionDecl::new(name, vec![OverloadDecl::member(id, params, result)])
        };
        let s = || Type::String;
        let mut check = m("check", "pathcheck_check", vec![p.clone(), s()], d.clone());
        check.overloads.push(OverloadDecl::member(
            "resourcecheck_check",
            vec![r.clone(), s()],
            d.clone(),
        ));
        LibraryContents {
            functions: vec![
                m("path", "authorizer_path", vec![a.clone(), s()], p.clone()),
                m("group", "authorizer_group", vec![a.clone(), s()], g.clone()),
                m(
                    "serviceAccount",
                    "authorizer_serviceaccount",
                    vec![a.clone(), s(), s()],
                    a.clone(),
                ),
                m("resource", "groupcheck_resource", vec![g, s()], r.clone()),
                m(
                    "subresource",
                    "resourcecheck_subresource",
                    vec![r.clone(), s()],
                    r.clone(),
                ),
                m(
                    "namespace",
                    "resourcecheck_namespace",
                    vec![r.clone(), s()],
                    r.clone(),
                ),
                m("name", "resourcecheck_name", vec![r.clone(), s()], r),
                check,
                m("errored", "decision_errored", vec![d.clone()], Type::Bool),
                m("error", "decision_error", vec![d.clone()], Type::String),
                m("allowed", "decision_allowed", vec![d.clone()], Type::Bool),
                m("reason", "decision_reason", vec![d], Type::String),
            ],
            implementations: vec![
                ("authorizer_path".into(), Implementation::Binary(path)),
                ("authorizer_group".into(), Implementation::Binary(group)),
                (
                    "authorizer_serviceaccount".into(),
                    Implementation::Nary(service_account),
                ),
                (
                    "groupcheck_resource".into(),
                    Implementation::Binary(resource),
                ),
                (
                    "resourcecheck_subresource".into(),
                    Implementation::Binary(|r, s| with_resource(r, s, |r, v| r.subresource = v)),
                ),
                (
                    "resourcecheck_namespace".into(),
                    Implementation::Binary(|r, s| with_resource(r, s, |r, v| r.namespace = v)),
                ),
                (
                    "resourcecheck_name".into(),
                    Implementation::Binary(|r, s| with_resource(r, s, |r, v| r.name = v)),
                ),
                // The two calls that ask the host's authorizer: at most once per evaluation.
                ("pathcheck_check".into(), external2(path_check)),
                ("resourcecheck_check".into(), external2(resource_check)),
                (
                    "decision_errored".into(),
                    Implementation::Unary(|v| Ok(Value::Bool(decision(v)?.error.is_some()))),
                ),
                (
                    "decision_error".into(),
                    Implementation::Unary(|v| {
                        Ok(Value::from(decision(v)?.error.clone().unwrap_or_default()))
                    }),
                ),
                (
                    "decision_allowed".into(),
                    Implementation::Unary(|v| {
                        Ok(Value::Bool(decision(v)?.kind == DecisionKind::Allow))
                    }),
                ),
                (
                    "decision_reason".into(),
                    Implementation::Unary(|v| Ok(Value::from(decision(v)?.reason.as_str()))),
                ),
            ],
            types: authz_types().to_vec(),
            ..LibraryContents::default()
        }
    }
}

/// Kubernetes' selector additions to the authorization library (1.31+).
#[derive(Clone, Copy, Debug, Default)]
pub struct AuthzSelectors;

impl Library for AuthzSelectors {
    fn name(&self) -> &str {
        "kubernetes.authzSelectors"
    }

    fn contents(&self) -> LibraryContents {
        let r = || Type::opaque(RESOURCE_CHECK_TYPE);
        LibraryContents {
            functions: vec![
                FunctionDecl::new(
                    "fieldSelector",
                    vec![OverloadDecl::member(
                        "authorizer_fieldselector",
                        vec![r(), Type::String],
                        r(),
                    )],
                ),
                FunctionDecl::new(
                    "labelSelector",
                    vec![OverloadDecl::member(
                        "authorizer_labelselector",
                        vec![r(), Type::String],
                        r(),
                    )],
                ),
            ],
            implementations: vec![
                (
                    "authorizer_fieldselector".into(),
                    Implementation::Binary(|r, s| with_resource(r, s, |r, v| r.field_selector = v)),
                ),
                (
                    "authorizer_labelselector".into(),
                    Implementation::Binary(|r, s| with_resource(r, s, |r, v| r.label_selector = v)),
                ),
            ],
            ..LibraryContents::default()
        }
    }
}

type Rule =
    Box<dyn Fn(&AuthorizationAttributes) -> std::result::Result<Decision, String> + Send + Sync>;

/// An authorizer for tests: it records every request and answers with a function of the
/// attributes ([`FakeAuthorizer::standard`] has fixed, documented rules).
pub struct FakeAuthorizer {
    rule: Rule,
    calls: Mutex<Vec<AuthorizationAttributes>>,
}

impl fmt::Debug for FakeAuthorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeAuthorizer").finish_non_exhaustive()
    }
}

impl FakeAuthorizer {
    /// An authorizer answering with `rule`.
    pub fn new(
        rule: impl Fn(&AuthorizationAttributes) -> std::result::Result<Decision, String>
        + Send
        + Sync
        + 'static,
    ) -> FakeAuthorizer {
        FakeAuthorizer {
            rule: Box::new(rule),
            calls: Mutex::new(Vec::new()),
        }
    }

    /// Allows everything.
    pub fn allow_all() -> FakeAuthorizer {
        FakeAuthorizer::new(|_| Ok(Decision::allow("")))
    }

    /// The corpus's authorizer:
    /// * path `/healthz` (any verb) and `/readyz` with `get`: allowed, reason `path allowed`;
    ///   other paths: denied, reason `path denied`;
    /// * resource `error`: the authorizer fails with `fake authorizer error`;
    /// * resource `panic`: the authorizer panics with `fake authorizer panic`;
    /// * a service account (user name `system:serviceaccount:...`) is allowed on `secrets`
    ///   with reason `service account`, and nothing else (no opinion);
    /// * resource `pods` (any group) with `get`, `list` or `watch`: allowed, reason
    ///   `pods are readable`; with a label selector `app=x` it also allows `delete`;
    /// * resource `deployments` in group `apps`: allowed when the namespace is `default`;
    /// * anything else: no opinion, reason `no rule`.
    pub fn standard() -> FakeAuthorizer {
        FakeAuthorizer::new(|a| {
            if !a.resource_request {
                return Ok(match (a.path.as_str(), a.verb.as_str()) {
                    ("/healthz", _) | ("/readyz", "get") => Decision::allow("path allowed"),
                    _ => Decision::deny("path denied"),
                });
            }
            match a.resource.as_str() {
                "error" => return Err("fake authorizer error".into()),
                "panic" => panic!("fake authorizer panic"),
                _ => {}
            }
            if let Some(u) = &a.user
                && u.name.starts_with("system:serviceaccount:")
            {
                return Ok(if a.resource == "secrets" {
                    Decision::allow("service account")
                } else {
                    Decision {
                        kind: DecisionKind::NoOpinion,
                        reason: "no rule".into(),
                        error: None,
                    }
                });
            }
            let readable = matches!(a.verb.as_str(), "get" | "list" | "watch");
            if a.resource == "pods"
                && (readable
                    || (a.verb == "delete" && a.label_selector.as_deref() == Some("app=x")))
            {
                return Ok(Decision::allow("pods are readable"));
            }
            if a.resource == "deployments" && a.api_group == "apps" && a.namespace == "default" {
                return Ok(Decision::allow("default deployments"));
            }
            Ok(Decision {
                kind: DecisionKind::NoOpinion,
                reason: "no rule".into(),
                error: None,
            })
        })
    }

    /// The requests seen so far.
    pub fn calls(&self) -> Vec<AuthorizationAttributes> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

impl Authorizer for FakeAuthorizer {
    fn authorize(
        &self,
        attributes: &AuthorizationAttributes,
    ) -> std::result::Result<Decision, String> {
        if let Ok(mut c) = self.calls.lock() {
            c.push(attributes.clone());
        }
        (self.rule)(attributes)
    }
}
