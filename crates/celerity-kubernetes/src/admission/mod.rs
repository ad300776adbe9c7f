//! Admission policies offline: ValidatingAdmissionPolicy and MutatingAdmissionPolicy with
//! their bindings and params, evaluated against admission requests as the API server's
//! admission plugins do (`k8s.io/apiserver/pkg/admission/plugin/policy/...` and
//! `.../plugin/cel`), with the same verdicts, messages, warnings, audit annotations and
//! costs.
//!
//! * [`PolicySet`]: policies, bindings, params and namespaces compiled once (native code by
//!   default); then [`PolicySet::admit`] requests, from as many threads as you like.
//! * [`environment`]: the variables and types expressions see, per Kubernetes version, the
//!   lazily computed `variables`, the per-expression and per-pass cost limits.
//! * [`policy`]: the policy and binding objects, read from JSON with errors at their fields.
//! * [`matching`]: match constraints (resource rules, selectors); [`request`]: the request.
//! * [`validating`] and [`mutating`]: what one policy does for one binding and param.
//! * [`authz_rules`]: an authorizer written as rules, for `authorizer` checks offline.
//! * [`webhooks`]: ValidatingWebhookConfiguration and MutatingWebhookConfiguration, and
//!   which of their webhooks the API server would call for a request (none is called).
//! * [`typecheck`]: the API server's type checking of a ValidatingAdmissionPolicy against
//!   the schemas of the kinds it matches (`status.typeChecking`).
//!
//! What the API server does that this module does not (yet):
//!
//! * **Server-side apply** is a subset: maps merge, lists whose elements all have a `name`
//!   merge by name, other lists are replaced; without OpenAPI schemas there are no list-map
//!   keys other than `name`, no refusal to change atomic lists or undeclared fields, and no
//!   built-in defaulting after a mutation (Deployment's `strategy`). `Object.spec{...}` type
//!   names are checked against field names where written, even in a branch not taken.
//! * **Objects are not converted between versions**: a policy matched through an
//!   equivalent resource (`matchPolicy: Equivalent`, with [`Equivalents`] from the host)
//!   sees `request.resource` and `request.kind` as matched, but the object as sent.
//! * **`request.options`** is declared (`dyn`) but not bound; **namespaces not given** are
//!   taken to exist with no labels (the API server would fail the request).
//! * **`dyn(variables)` as a collection**: the lazy `variables` map answers field reads,
//!   presence tests and string indexes (what Kubernetes policies write), but not `size()`,
//!   `in` or iteration, which Kubernetes' `lazy.MapValue` also answers (its iteration order
//!   is Go's map order, not stable). A variable that reads itself through `dyn(variables)`
//!   is an error here; the API server would recurse until its stack is exhausted.
//! * **Reinvocation** (`reinvocationPolicy: IfNeeded`): when any mutation changed the object,
//!   every invoked `IfNeeded` policy runs once more; other admission plugins do not exist
//!   here.
//!
//! This module owns admission; it builds on [`celerity::kubernetes::KubernetesEnv`], the
//! schema object model (`cel-k8s-schema`) and the authz library (`cel-k8s`), and must not
//! depend on the CRD validation module or on any command-line concern.
//!
//! ```
//! use celerity_kubernetes::admission::{PolicySet, PolicyInputs, Operation, Request};
//! use serde_json::json;
//!
//! let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1",
//!     "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "replicas"},
//!     "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"],
//!         "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]},
//!       "validations": [{"expression": "object.spec.replicas <= 5"}]}});
//! let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1",
//!     "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "replicas"},
//!     "spec": {"policyName": "replicas", "validationActions": ["Deny"]}});
//! let set = PolicySet::from_json(&[policy, binding], &PolicyInputs::default()).unwrap();
//! let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
//!     "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 10}});
//! let request = Request::for_object(Operation::Create, Some(deployment), None, |_| None).unwrap();
//! let response = set.admit(&request, None);
//! assert!(!response.allowed);
//! assert_eq!(response.status.message,
//!     "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding \
//!      'replicas' denied request: failed expression: object.spec.replicas <= 5");
//! ```

pub mod apply;
pub mod authz_rules;
pub mod case;
mod dispatch;
pub mod environment;
pub mod matching;
pub mod mutating;
pub mod policy;
pub mod request;
pub mod typecheck;
pub mod validating;
pub mod webhooks;

pub use authz_rules::{AuthzRule, RulesAuthorizer};
pub use case::{AdmissionCase, response_json};
pub use dispatch::{Matched, PolicyInputs, PolicySet, REQUEST_TIME_LIMIT, Response, Status};
pub use environment::{AdmissionEnv, PER_CALL_LIMIT, RUNTIME_COST_BUDGET};
pub use matching::{EquivalentResource, Equivalents};
pub use policy::{Binding, Policy, read_binding, read_policy};
pub use request::{Gvk, Gvr, Operation, Request, UserInfo};
pub use typecheck::{ExpressionWarning, check_policy, type_checking_json};
pub use webhooks::{
    MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION, WebhookConfiguration,
    WebhookResult, read_webhook_configuration,
};
