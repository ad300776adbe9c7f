//! The Kubernetes CEL environment, by Kubernetes release: what the API server of that
//! release compiles and evaluates validation rules, admission policies and match conditions
//! with.
//!
//! [`KubernetesEnv`] builds an [`Env`] from exactly what [`cel_k8s::KubernetesProfile`] says
//! a release does (`environment/base.go`): the libraries at their versions (Kubernetes'
//! own and cel-go's extensions as Kubernetes configures them), the language options,
//! Kubernetes' cost estimator (costs by function name), the per-call cost limit, and the
//! behaviours of the cel-go the release pins (1.30 runs cel-go v0.17.8, 1.34 to 1.36
//! v0.26.0, 1.37 v0.29.2: see [`cel_k8s::CelGoVersion`]).
//!
//! A version names the **release** (the API server binary). The API server has two
//! environments (see [`ExpressionKind`]):
//!
//! * **new expressions** (the default): what a *new or changed* expression may use. The
//!   server compiles them with its compatibility version, one minor below the release
//!   unless [`KubernetesEnv::compatibility`] says otherwise: a 1.34 server does not let a
//!   new rule call what 1.34 introduced;
//! * **stored expressions**: everything the release knows, so that an object stored by a
//!   newer server still compiles after a downgrade.
//!
//! ```
//! use celerity::{Env, MapActivation, Value};
//! use celerity::kubernetes::{ExpressionKind, KubeVersion, KubernetesEnv};
//!
//! // The newest released version, new expressions.
//! let env = KubernetesEnv::default().build();
//! let ast = env.compile("quantity('1Gi').isGreaterThan(quantity('1G'))").unwrap();
//! let program = env.program(&ast).unwrap();
//! let (value, details) = program.eval_details(&MapActivation::new());
//! assert_eq!(value.unwrap(), Value::Bool(true));
//! assert_eq!(details.actual_cost, 3);
//!
//! // `semver` came with 1.33: a 1.33 API server does not accept it in a new expression...
//! let v133: KubeVersion = "1.33".parse().unwrap();
//! assert!(Env::kubernetes(v133, ExpressionKind::NewExpressions).compile("isSemver('1.0.0')").is_err());
//! // ...but reads it in a stored one, and a 1.34 server accepts it.
//! assert!(Env::kubernetes(v133, ExpressionKind::StoredExpressions).compile("isSemver('1.0.0')").is_ok());
//! let v134: KubeVersion = "1.34".parse().unwrap();
//! assert!(Env::kubernetes(v134, ExpressionKind::NewExpressions).compile("isSemver('1.0.0')").is_ok());
//! ```
//!
//! Hosts add their own variables through [`KubernetesEnv::builder`]:
//!
//! ```
//! use celerity::{Type, kubernetes::KubernetesEnv};
//!
//! let env = KubernetesEnv::parse("1.34")
//!     .unwrap()
//!     .builder()
//!     .variable("self", Type::map(Type::String, Type::Dyn))
//!     .build();
//! assert!(env.compile("self.replicas <= 10").is_ok());
//! ```
//!
//! Types print as Kubernetes prints them: `net.IP`, `net.CIDR`, `kubernetes.Quantity`,
//! `kubernetes.URL`, `kubernetes.Semver`, `kubernetes.NamedFormat`,
//! `kubernetes.authorization.Authorizer`, ...
//!
//! What the profile describes that has no counterpart here: the default UTC time zone and
//! eager declaration validation are how this engine always behaves. Keyword field names
//! (1.31), the per-object budget and the static estimate limits of custom resources are
//! applied by the `celerity-kubernetes` crate's CRD validation, the budgets of admission
//! policies by its admission module (they are in [`KubernetesProfile::options`]).

use std::sync::Arc;

pub use cel_k8s::authz::{
    AUTHORIZER_TYPE, AUTHORIZER_VARIABLE, AuthorizationAttributes, Authorizer, Decision,
    DecisionKind, FakeAuthorizer, authorizer_value,
};
pub use cel_k8s::cost::ElementSizeFn;
pub use cel_k8s::{
    CelGoVersion, ExpressionKind, KubeVersion, KubernetesProfile, LibraryRef, ProfileOptions,
};

use cel_ext::Library;

use crate::{Env, EnvBuilder, EnvOptions};

/// The oldest Kubernetes release described ([`KubeVersion::OLDEST`]).
pub const OLDEST_VERSION: KubeVersion = KubeVersion::OLDEST;

/// The newest Kubernetes release described ([`KubeVersion::NEWEST`]).
pub const NEWEST_VERSION: KubeVersion = KubeVersion::NEWEST;

/// The newest released version ([`KubeVersion::DEFAULT`]); the default.
pub const DEFAULT_VERSION: KubeVersion = KubeVersion::DEFAULT;

/// The oldest compatibility version (CEL arrived in Kubernetes 1.23).
pub const OLDEST_COMPATIBILITY_VERSION: KubeVersion = KubeVersion::new(1, 23);

/// Builds the [`Env`] of one Kubernetes release, for new or for stored expressions.
///
/// Cheap to clone. The defaults: new expressions at the release's default compatibility
/// version, no JSON Patch library, the `authorizer` variable declared (when the authz
/// library is present), Kubernetes' cost estimator without element sizes.
#[derive(Clone)]
pub struct KubernetesEnv {
    version: KubeVersion,
    compatibility: Option<KubeVersion>,
    kind: ExpressionKind,
    jsonpatch: bool,
    bindings: Option<u32>,
    authorizer: bool,
    element_sizes: Option<ElementSizeFn>,
}

impl std::fmt::Debug for KubernetesEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubernetesEnv")
            .field("version", &self.version)
            .field("compatibility", &self.compatibility_version())
            .field("kind", &self.kind)
            .field("jsonpatch", &self.jsonpatch)
            .field("bindings", &self.bindings)
            .field("authorizer", &self.authorizer)
            .field("element_sizes", &self.element_sizes.is_some())
            .finish()
    }
}

impl Default for KubernetesEnv {
    /// The newest released version's environment ([`DEFAULT_VERSION`]) for new expressions.
    fn default() -> Self {
        KubernetesEnv::new(DEFAULT_VERSION)
    }
}

impl KubernetesEnv {
    /// The environment of the API server of `release`, for new expressions.
    pub fn new(release: KubeVersion) -> KubernetesEnv {
        KubernetesEnv {
            version: release,
            compatibility: None,
            kind: ExpressionKind::NewExpressions,
            jsonpatch: false,
            bindings: None,
            authorizer: true,
            element_sizes: None,
        }
    }

    /// The environment of the newest release described ([`NEWEST_VERSION`]) for new
    /// expressions.
    pub fn newest() -> KubernetesEnv {
        KubernetesEnv::new(NEWEST_VERSION)
    }

    /// The environment of a release written `1.34` (see [`parse_version`]).
    pub fn parse(version: &str) -> Result<KubernetesEnv, String> {
        parse_version(version).map(KubernetesEnv::new)
    }

    /// The compatibility version new expressions compile with, instead of the release's
    /// default (one minor below it), as `--emulated-version` or Kubernetes' own tests set
    /// it. Stored expressions are not affected.
    pub fn compatibility(mut self, version: KubeVersion) -> KubernetesEnv {
        self.compatibility = Some(version);
        self
    }

    /// New or stored expressions.
    pub fn kind(mut self, kind: ExpressionKind) -> KubernetesEnv {
        self.kind = kind;
        self
    }

    /// The stored-expressions environment of this version.
    pub fn stored(self) -> KubernetesEnv {
        self.kind(ExpressionKind::StoredExpressions)
    }

    /// Adds the JSON Patch library (`jsonpatch.escapeKey`), as mutating admission policies
    /// do. Not part of the base environment.
    pub fn with_jsonpatch(mut self, on: bool) -> KubernetesEnv {
        self.jsonpatch = on;
        self
    }

    /// Adds cel-go's bindings extension (`cel.bind`) at `version`, as device selectors do.
    /// Not part of the base environment.
    pub fn with_bindings(mut self, version: Option<u32>) -> KubernetesEnv {
        self.bindings = version;
        self
    }

    /// Whether to declare the `authorizer` variable (of type
    /// `kubernetes.authorization.Authorizer`) when the authz library is present, as
    /// admission policies do. On by default; bind it with [`authorizer_value`].
    pub fn with_authorizer_variable(mut self, on: bool) -> KubernetesEnv {
        self.authorizer = on;
        self
    }

    /// Gives Kubernetes' cost estimator the sizes of list elements by type (Kubernetes'
    /// `SizeEstimator`; custom resources get them from their schemas).
    pub fn with_element_sizes(mut self, sizes: ElementSizeFn) -> KubernetesEnv {
        self.element_sizes = Some(sizes);
        self
    }

    /// The release.
    pub fn version(&self) -> KubeVersion {
        self.version
    }

    /// The compatibility version new expressions compile with.
    pub fn compatibility_version(&self) -> KubeVersion {
        self.compatibility.unwrap_or(self.version.previous())
    }

    /// New or stored expressions.
    pub fn expression_kind(&self) -> ExpressionKind {
        self.kind
    }

    /// What this release enables, as data.
    pub fn profile(&self) -> KubernetesProfile {
        let mut p = KubernetesProfile::with_compatibility(
            self.version,
            self.compatibility_version(),
            self.kind,
        );
        if self.jsonpatch {
            p = p.with_jsonpatch();
        }
        match self.bindings {
            Some(v) => p.with_bindings(v),
            None => p,
        }
    }

    /// The environment options the profile implies.
    pub fn options(&self) -> EnvOptions {
        options_for(&self.profile())
    }

    /// A builder holding the whole environment, to which a host adds its variables (and
    /// anything else) before building.
    pub fn builder(&self) -> EnvBuilder {
        let profile = self.profile();
        let mut b = Env::builder().options(options_for(&profile));
        for lib in profile.libraries() {
            if lib.name() == "kubernetes.costs"
                && let Some(sizes) = &self.element_sizes
            {
                b = b.library(cel_k8s::KubernetesCosts::with_element_sizes(sizes.clone()));
                continue;
            }
            b = b.library(Boxed(lib));
        }
        if self.authorizer && profile.has("kubernetes.authz") {
            let a = cel_k8s::authz::authorizer_variable();
            b = b.variable(&a.name, a.ty);
        }
        b
    }

    /// Builds the environment.
    pub fn build(&self) -> Env {
        self.builder().build()
    }
}

impl Env {
    /// The environment the API server of `release` compiles `kind` expressions with (see
    /// [`KubernetesEnv`] for the variations).
    pub fn kubernetes(release: KubeVersion, kind: ExpressionKind) -> Env {
        KubernetesEnv::new(release).kind(kind).build()
    }
}

/// The environment options a profile implies: Kubernetes' language options (homogeneous
/// aggregate literals, cross-type numeric comparisons and optional types from 1.28, the
/// literal validators from 1.29), `OptOptimize`, free presence tests, the parser's nesting
/// limit, the per-call cost limit and the behaviours of the release's cel-go.
pub fn options_for(profile: &KubernetesProfile) -> EnvOptions {
    let o = &profile.options;
    EnvOptions {
        optional_types: o.optional_types,
        optional_types_version: o.optional_types_version,
        homogeneous_aggregate_literals: o.homogeneous_aggregate_literals
            || o.validate_homogeneous_aggregate_literals,
        cross_type_numeric_comparisons: o.cross_type_numeric_comparisons,
        macros: true,
        max_recursion_depth: o.max_recursion_depth,
        presence_test_has_cost: o.presence_test_has_cost,
        optimize: o.optimize,
        cost_limit: Some(o.per_call_cost_limit),
        validate_duration_literals: o.validate_duration_literals,
        validate_timestamp_literals: o.validate_timestamp_literals,
        validate_regex_literals: o.validate_regex_literals,
        older_cel_go: o.older_cel_go,
        ..EnvOptions::default()
    }
}

/// Parses a Kubernetes release written `1.34` (a leading `v` and a patch component, as in
/// `v1.34.2`, are accepted and ignored), refusing releases outside [`OLDEST_VERSION`] to
/// [`NEWEST_VERSION`].
pub fn parse_version(s: &str) -> Result<KubeVersion, String> {
    let v: KubeVersion = s.trim().parse()?;
    if v < OLDEST_VERSION || v > NEWEST_VERSION {
        return Err(format!(
            "unsupported Kubernetes version {v}: supported versions are {OLDEST_VERSION} to {NEWEST_VERSION}"
        ));
    }
    Ok(v)
}

/// Parses a compatibility version written `1.30`, refusing versions outside
/// [`OLDEST_COMPATIBILITY_VERSION`] to [`NEWEST_VERSION`].
pub fn parse_compatibility_version(s: &str) -> Result<KubeVersion, String> {
    let v: KubeVersion = s.trim().parse()?;
    if v < OLDEST_COMPATIBILITY_VERSION || v > NEWEST_VERSION {
        return Err(format!(
            "unsupported compatibility version {v}: supported versions are {OLDEST_COMPATIBILITY_VERSION} to {NEWEST_VERSION}"
        ));
    }
    Ok(v)
}

/// Adapts a boxed library to the `impl Library` the builder takes.
#[derive(Debug)]
struct Boxed(Box<dyn Library>);

impl Library for Boxed {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn contents(&self) -> cel_ext::LibraryContents {
        self.0.contents()
    }
}

/// An authorizer value allowing everything, for trying expressions out.
pub fn allow_all_authorizer() -> crate::Value {
    authorizer_value(None, Arc::new(FakeAuthorizer::allow_all()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse() {
        assert_eq!(parse_version("1.34"), Ok(KubeVersion::new(1, 34)));
        assert_eq!(parse_version("v1.30.2"), Ok(KubeVersion::new(1, 30)));
        assert_eq!(
            parse_version("1.29"),
            Err("unsupported Kubernetes version 1.29: supported versions are 1.30 to 1.37".into())
        );
        assert!(parse_version("1.99").is_err());
        assert!(parse_version("2.0").is_err());
        assert!(parse_version("one").is_err());
        assert_eq!(
            parse_compatibility_version("1.23"),
            Ok(KubeVersion::new(1, 23))
        );
        assert!(parse_compatibility_version("1.22").is_err());
        assert_eq!(KubernetesEnv::default().version(), DEFAULT_VERSION);
        assert_eq!(
            KubernetesEnv::default().compatibility_version(),
            KubeVersion::new(1, 35)
        );
    }

    #[test]
    fn options_follow_the_profile() {
        let old = KubernetesEnv::newest().compatibility(KubeVersion::new(1, 27));
        let o = old.options();
        assert!(!o.optional_types && !o.cross_type_numeric_comparisons);
        assert!(o.homogeneous_aggregate_literals && o.optimize && !o.presence_test_has_cost);
        assert!(!o.validate_duration_literals);
        assert_eq!(o.cost_limit, Some(1_000_000));
        let o = old.stored().options();
        assert!(o.optional_types && o.cross_type_numeric_comparisons);
        assert!(o.validate_regex_literals);
        assert!(
            KubernetesEnv::parse("1.36")
                .unwrap()
                .options()
                .older_cel_go
                .global_matches_costs_one
        );
        assert_eq!(
            KubernetesEnv::newest().options().older_cel_go,
            crate::OlderCelGo::NONE
        );
    }
}
