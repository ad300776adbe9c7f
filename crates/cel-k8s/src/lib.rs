//! `cel-k8s` holds Kubernetes' CEL libraries, written to give the same answers, error texts
//! and cost figures as the Kubernetes API server (which runs cel-go v0.29.2), and the
//! Kubernetes CEL environment by version, as data a host or the facade can consume.
//!
//! | library | type | Kubernetes | functions |
//! | --- | --- | --- | --- |
//! | [`lists`] | [`Lists`] | 1.23 (v0), 1.37 (v1) | `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`; v1 adds `includes` |
//! | [`regex`] | [`Regex`] | 1.23 | `find`, `findAll` |
//! | [`urls`] | [`Urls`] | 1.23 | `url`, `isURL`, `getScheme`, `getHost`, `getHostname`, `getPort`, `getEscapedPath`, `getQuery` |
//! | [`authz`] | [`Authz`], [`AuthzSelectors`] | 1.27, 1.31 | `path`, `group`, `serviceAccount`, `resource`, `subresource`, `namespace`, `name`, `check`, `allowed`, `reason`, `errored`, `error`; `fieldSelector`, `labelSelector` |
//! | [`quantity`] | [`QuantityLib`] | 1.28 | `quantity`, `isQuantity`, `sign`, `add`, `sub`, `compareTo`, `isLessThan`, `isGreaterThan`, `isInteger`, `asInteger`, `asApproximateFloat` |
//! | [`format`](mod@format) | [`Format`] | 1.31 | `format.named`, `format.<name>()`, `validate` (messages of the release's apimachinery) |
//! | [`semver`] | [`SemverLib`] | 1.31 (v0), 1.33 (v1) | `semver`, `isSemver` (v1: with `normalize`), `major`, `minor`, `patch`, `compareTo`, `isLessThan`, `isGreaterThan` |
//! | [`jsonpatch`] | [`JsonPatch`] | mutating admission policies | `jsonpatch.escapeKey` |
//!
//! Kubernetes' cost estimator, which overrides costs **by function name** (its own functions
//! and several cel-go string-extension functions), is the [`KubernetesCosts`] library: see
//! [`cost`]. The environment each Kubernetes version enables is [`KubernetesProfile`]: see
//! [`profile`].
//!
//! The IP and CIDR libraries (`net.IP`, `net.CIDR`) live in `cel-ext` (cel-go's network
//! extension); the profile refers to them there. Where a release's own code differs from the
//! newest (the optional library of the cel-go it pins, apimachinery's validation messages), the
//! profile builds the libraries as that release has them. Library values print as the CEL that
//! rebuilds them (`quantity("70k")`, `authorizer.path("/healthz")`).
//!
//! Like `cel-ext`'s, these libraries plug into any evaluator: the crate depends on
//! `cel-syntax`, `cel-types`, `cel-runtime`, `cel-cost` and `cel-ext`, and must not depend on
//! an evaluator (`cel-interp`, `cel-ir`, `cel-jit`), on the schema side of custom resources
//! (`cel-k8s-schema`) or on the facade, which brings them together. Its tests use the facade.
//!
//! Nothing here panics on any input; parsers bound their work by the input's length, and the
//! arbitrary-precision quantity arithmetic refuses results that would need more than
//! [`quantity::MAX_DIGITS`] digits instead of allocating without bound.

#![forbid(unsafe_code)]

pub mod authz;
pub mod cost;
pub mod format;
pub mod jsonpatch;
pub mod lists;
pub mod profile;
pub mod quantity;
pub mod regex;
pub mod semver;
pub mod urls;

pub use authz::{
    AuthorizationAttributes, Authorizer, Authz, AuthzSelectors, Decision, DecisionKind,
    FakeAuthorizer, authorizer_value,
};
pub use cost::KubernetesCosts;
pub use format::Format;
pub use jsonpatch::JsonPatch;
pub use lists::Lists;
pub use profile::{
    CelGoVersion, ExpressionKind, KubeVersion, KubernetesProfile, LibraryRef, ProfileOptions,
};
pub use quantity::QuantityLib;
pub use regex::Regex;
pub use semver::SemverLib;
pub use urls::Urls;

use cel_runtime::{OpaqueValue, Value};

/// The opaque value of type `T` inside a value, if it is one.
pub(crate) fn opaque<T: OpaqueValue>(v: &Value) -> Option<&T> {
    match v {
        Value::Opaque(o) => o.as_any().downcast_ref::<T>(),
        _ => None,
    }
}

/// The string inside a value, if it is one.
pub(crate) fn string_arg(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        _ => None,
    }
}
