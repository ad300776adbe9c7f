//! The Kubernetes CEL environment by version (`environment/base.go`), as data.
//!
//! Kubernetes compiles **new or changed** expressions with the libraries and options of its
//! compatibility version (`NewExpressions`) and expressions **already stored** with
//! everything that has not been removed (`StoredExpressions`, the newest of each library), so
//! that an upgrade never invalidates stored objects and a downgrade never meets an expression
//! it cannot read.
//!
//! | since | added (removed) |
//! | --- | --- |
//! | 1.0 | homogeneous aggregate literals, eager declaration validation, UTC default time zone, `urls`, `regex`, `lists` v0 (until 1.37), `ext.Strings` v0 (until 1.29), presence tests free, `OptOptimize`, per-call limit 1,000,000, Kubernetes' cost estimator |
//! | 1.27 | `authz` |
//! | 1.28 | cross-type numeric comparisons, optional types, `quantity` |
//! | 1.29 | literal validators (duration, timestamp, regex, homogeneous aggregates), `ext.Strings` v2, `ext.Sets` |
//! | 1.30 | `ip`, `cidr` (cel-go network extension as Kubernetes configures it) |
//! | 1.31 | `format`, `authzSelectors`, keyword field names |
//! | 1.32 | `ext.TwoVarComprehensions` |
//! | 1.33 | `semver` v1 |
//! | 1.34 | `ext.Lists` v3 |
//! | 1.37 | `lists` v1 (`includes`) |
//!
//! Kubernetes enables the optional-types library without a version (`cel.OptionalTypes()`),
//! which is the newest version the cel-go it was built with knows
//! ([`optional_types_version`]): version 0 (no `optFlatMap`) with cel-go v0.16 (1.28),
//! version 1 with v0.17 to v0.22 (1.29 to 1.32), version 2 (`first`, `last`,
//! `optional.unwrap`, `unwrapOpt`) from v0.23.2 (1.33 on). Stored expressions get the newest.
//!
//! `jsonpatch` is not part of the base environment (only of mutating admission policies);
//! [`KubernetesProfile::with_jsonpatch`] adds it.

use std::fmt;
use std::str::FromStr;

use cel_ext::Library;
use cel_types::FunctionDecl;

use crate::{
    Authz, AuthzSelectors, Format, JsonPatch, KubernetesCosts, Lists, QuantityLib, Regex,
    SemverLib, Urls,
};

/// A Kubernetes minor version (`1.34`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    /// Major version (1).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

impl KubeVersion {
    /// `major.minor`.
    pub const fn new(major: u32, minor: u32) -> KubeVersion {
        KubeVersion { major, minor }
    }

    /// The newest version this crate describes.
    pub const NEWEST: KubeVersion = KubeVersion::new(1, 37);
}

impl Default for KubeVersion {
    fn default() -> Self {
        KubeVersion::NEWEST
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for KubeVersion {
    type Err = String;
    /// Parses `1.34` (an optional `v` and a patch component are accepted and ignored).
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.strip_prefix('v').unwrap_or(s);
        let mut parts = t.split('.');
        let major = parts.next().and_then(|p| p.parse().ok());
        let minor = parts.next().and_then(|p| p.parse().ok());
        match (major, minor) {
            (Some(major), Some(minor)) => Ok(KubeVersion { major, minor }),
            _ => Err(format!(
                "invalid Kubernetes version {s:?}: expected MAJOR.MINOR"
            )),
        }
    }
}

/// Which of Kubernetes' two environments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExpressionKind {
    /// New or changed expressions: what the version introduced, minus what it removed.
    NewExpressions,
    /// Stored expressions: everything not removed, at the newest versions.
    StoredExpressions,
}

/// A library an environment includes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LibraryRef {
    /// A Kubernetes library from this crate, by Kubernetes' library name.
    Kubernetes {
        /// `kubernetes.lists`, `k8s.urls`, ...
        name: &'static str,
        /// The library version (0 for unversioned libraries).
        version: u32,
    },
    /// A cel-go extension library, which lives in `cel-ext`.
    CelExt {
        /// `strings`, `sets`, `lists`, `two-var-comprehensions`, `network`.
        name: &'static str,
        /// The library version (0 for unversioned libraries).
        version: u32,
    },
}

/// Language and evaluation options of an environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProfileOptions {
    /// List and map literals must have one element type (always).
    pub homogeneous_aggregate_literals: bool,
    /// `1 < 1.5` type-checks (1.28+).
    pub cross_type_numeric_comparisons: bool,
    /// Optional types and syntax (1.28+).
    pub optional_types: bool,
    /// The optional-types library's version (see [`optional_types_version`]).
    pub optional_types_version: u32,
    /// Timestamp accessors without a time zone use UTC (always).
    pub default_utc_time_zone: bool,
    /// Declarations are validated when the environment is built (always).
    pub eagerly_validate_declarations: bool,
    /// Constant `duration('...')` arguments are validated at check time (1.29+).
    pub validate_duration_literals: bool,
    /// Constant `timestamp('...')` arguments are validated at check time (1.29+).
    pub validate_timestamp_literals: bool,
    /// Constant `matches` patterns are validated at check time (1.29+).
    pub validate_regex_literals: bool,
    /// Mixed literals are rejected by a validator too (1.29+).
    pub validate_homogeneous_aggregate_literals: bool,
    /// cel-go's `OptOptimize` (constant folding of literals, regex precompilation) (always).
    pub optimize: bool,
    /// Whether `has()` costs 1 (Kubernetes: never).
    pub presence_test_has_cost: bool,
    /// A field declared `__namespace__` is found by `x.namespace` (1.31+).
    pub keyword_field_names: bool,
    /// The run-time cost limit of one evaluation.
    pub per_call_cost_limit: u64,
    /// The run-time budget per object or binding.
    pub runtime_cost_budget: u64,
    /// The run-time budget of match conditions.
    pub match_conditions_cost_budget: u64,
    /// The static estimate limit per expression.
    pub static_estimated_cost_limit: u64,
    /// The static estimate limit per CRD.
    pub static_estimated_crd_cost_limit: u64,
    /// Parser nesting limit.
    pub max_recursion_depth: usize,
}

/// What one Kubernetes version enables, for new or for stored expressions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubernetesProfile {
    /// The compatibility version.
    pub version: KubeVersion,
    /// New or stored expressions.
    pub kind: ExpressionKind,
    /// The libraries, in the order Kubernetes adds them.
    pub libraries: Vec<LibraryRef>,
    /// The options.
    pub options: ProfileOptions,
}

/// The optional-types library Kubernetes `version` gets from `cel.OptionalTypes()`: the
/// newest version the cel-go it pins knows (`go.mod` of `k8s.io/apiserver` at each release:
/// 1.28 v0.16, 1.29 v0.17.7, 1.30 v0.17.8, 1.31 v0.20.1, 1.32 v0.22.0, 1.33 v0.23.2, 1.34 to
/// 1.36 v0.26.0, 1.37 v0.29.2). cel-go v0.16 had no versions (its library is version 0: no
/// `optFlatMap`); v0.17 added `optFlatMap` as version 1; v0.23 added `first`, `last`,
/// `optional.unwrap` and `unwrapOpt` as version 2 (`cel/library.go`).
pub fn optional_types_version(version: KubeVersion) -> u32 {
    match version.minor {
        ..=28 => 0,
        29..=32 => 1,
        _ => 2,
    }
}

/// One entry of Kubernetes' base environment table.
struct Entry {
    introduced: KubeVersion,
    removed: Option<KubeVersion>,
    what: What,
}

enum What {
    Lib(LibraryRef),
    CrossTypeNumeric,
    Optional,
    Validators,
    KeywordFields,
}

const fn v(minor: u32) -> KubeVersion {
    KubeVersion::new(1, minor)
}

const fn k8s(name: &'static str, version: u32) -> What {
    What::Lib(LibraryRef::Kubernetes { name, version })
}

const fn ext(name: &'static str, version: u32) -> What {
    What::Lib(LibraryRef::CelExt { name, version })
}

const fn since(minor: u32, what: What) -> Entry {
    Entry {
        introduced: v(minor),
        removed: None,
        what,
    }
}

const BASE: [Entry; 21] = [
    since(0, k8s("k8s.urls", 0)),
    since(0, k8s("kubernetes.regex", 0)),
    Entry {
        introduced: v(0),
        removed: Some(v(37)),
        what: k8s("kubernetes.lists", 0),
    },
    since(37, k8s("kubernetes.lists", 1)),
    Entry {
        introduced: v(0),
        removed: Some(v(29)),
        what: ext("strings", 0),
    },
    since(27, k8s("kubernetes.authz", 0)),
    since(28, What::CrossTypeNumeric),
    since(28, What::Optional),
    since(28, k8s("kubernetes.quantity", 0)),
    since(29, What::Validators),
    since(29, ext("strings", 2)),
    since(29, ext("sets", 0)),
    since(30, ext("network.ip", 0)),
    since(30, ext("network.cidr", 0)),
    since(31, k8s("format", 0)),
    since(31, k8s("kubernetes.authzSelectors", 0)),
    since(31, What::KeywordFields),
    since(32, ext("two-var-comprehensions", 0)),
    since(33, k8s("kubernetes.Semver", 1)),
    since(34, ext("lists", 3)),
    since(0, k8s("kubernetes.costs", 0)),
];

impl KubernetesProfile {
    /// The environment Kubernetes `version` uses for `kind` expressions.
    pub fn new(version: KubeVersion, kind: ExpressionKind) -> KubernetesProfile {
        let mut options = ProfileOptions {
            homogeneous_aggregate_literals: true,
            cross_type_numeric_comparisons: false,
            optional_types: false,
            optional_types_version: optional_types_version(match kind {
                ExpressionKind::NewExpressions => version,
                ExpressionKind::StoredExpressions => KubeVersion::NEWEST,
            }),
            default_utc_time_zone: true,
            eagerly_validate_declarations: true,
            validate_duration_literals: false,
            validate_timestamp_literals: false,
            validate_regex_literals: false,
            validate_homogeneous_aggregate_literals: false,
            optimize: true,
            presence_test_has_cost: false,
            keyword_field_names: false,
            per_call_cost_limit: crate::cost::PER_CALL_LIMIT,
            runtime_cost_budget: crate::cost::RUNTIME_CEL_COST_BUDGET,
            match_conditions_cost_budget: crate::cost::RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS,
            static_estimated_cost_limit: crate::cost::STATIC_ESTIMATED_COST_LIMIT,
            static_estimated_crd_cost_limit: crate::cost::STATIC_ESTIMATED_CRD_COST_LIMIT,
            max_recursion_depth: 250,
        };
        let mut libraries = Vec::new();
        for e in &BASE {
            let on = match kind {
                ExpressionKind::NewExpressions => {
                    e.introduced <= version && e.removed.is_none_or(|r| version < r)
                }
                ExpressionKind::StoredExpressions => e.removed.is_none(),
            };
            if !on {
                continue;
            }
            match &e.what {
                What::Lib(l) => libraries.push(*l),
                What::CrossTypeNumeric => options.cross_type_numeric_comparisons = true,
                What::Optional => options.optional_types = true,
                What::Validators => {
                    options.validate_duration_literals = true;
                    options.validate_timestamp_literals = true;
                    options.validate_regex_literals = true;
                    options.validate_homogeneous_aggregate_literals = true;
                }
                What::KeywordFields => options.keyword_field_names = true,
            }
        }
        KubernetesProfile {
            version,
            kind,
            libraries,
            options,
        }
    }

    /// The newest environment for stored expressions.
    pub fn stored() -> KubernetesProfile {
        KubernetesProfile::new(KubeVersion::NEWEST, ExpressionKind::StoredExpressions)
    }

    /// Adds the JSON Patch library (mutating admission policies).
    pub fn with_jsonpatch(mut self) -> KubernetesProfile {
        self.libraries.push(LibraryRef::Kubernetes {
            name: "kubernetes.jsonpatch",
            version: 0,
        });
        self
    }

    /// Adds cel-go's bindings extension (`cel.bind`) at `version`, as device selectors do
    /// (`ext.Bindings(ext.BindingsVersion(0))` in k8s.io/dynamic-resource-allocation's
    /// `cel/compile.go`). Not part of the base environment.
    pub fn with_bindings(mut self, version: u32) -> KubernetesProfile {
        self.libraries.push(LibraryRef::CelExt {
            name: "bindings",
            version,
        });
        self
    }

    /// The release whose code (cel-go, apimachinery) the environment runs: the version itself
    /// for new expressions, the newest for stored expressions (which use the newest of
    /// everything).
    pub fn release(&self) -> KubeVersion {
        match self.kind {
            ExpressionKind::NewExpressions => self.version,
            ExpressionKind::StoredExpressions => KubeVersion::NEWEST,
        }
    }

    /// Whether the profile includes a library (by name, any version).
    pub fn has(&self, name: &str) -> bool {
        self.libraries.iter().any(|l| match l {
            LibraryRef::Kubernetes { name: n, .. } | LibraryRef::CelExt { name: n, .. } => {
                *n == name
            }
        })
    }

    /// The libraries, ready to add to an environment (Kubernetes' own libraries and cost
    /// estimator, and cel-go's extension libraries from `cel-ext`), each once.
    pub fn libraries(&self) -> Vec<Box<dyn Library>> {
        let mut out: Vec<Box<dyn Library>> = Vec::new();
        for l in &self.libraries {
            if let Some(lib) = instantiate(l, self.release())
                && !out.iter().any(|o| o.name() == lib.name())
            {
                out.push(lib);
            }
        }
        out
    }

    /// The libraries the profile names that have no implementation (none today; kept so a
    /// host can check).
    pub fn missing_libraries(&self) -> Vec<LibraryRef> {
        self.libraries
            .iter()
            .filter(|l| instantiate(l, self.release()).is_none())
            .copied()
            .collect()
    }
}

/// Instantiates a library as Kubernetes `release` builds it: the `format` library reports the
/// validation messages of the apimachinery that release vendors.
fn instantiate(l: &LibraryRef, release: KubeVersion) -> Option<Box<dyn Library>> {
    Some(match *l {
        LibraryRef::Kubernetes { name, version } => match name {
            "k8s.urls" => Box::new(Urls),
            "kubernetes.regex" => Box::new(Regex),
            "kubernetes.lists" => Box::new(Lists::version(version)),
            "kubernetes.authz" => Box::new(Authz),
            "kubernetes.authzSelectors" => Box::new(AuthzSelectors),
            "kubernetes.quantity" => Box::new(QuantityLib),
            "format" => Box::new(Format::for_kubernetes(release)),
            "kubernetes.Semver" => Box::new(SemverLib::version(version)),
            "kubernetes.jsonpatch" => Box::new(JsonPatch),
            "kubernetes.costs" => Box::new(KubernetesCosts::default()),
            _ => return None,
        },
        LibraryRef::CelExt { name, version } => match name {
            "two-var-comprehensions" => Box::new(cel_ext::TwoVarComprehensions),
            // Kubernetes 1.33 moved to golang.org/x/text v0.23.0, whose CLDR data writes `%e`
            // without spaces around `×` (validation_test.go's rule changed with it).
            "strings" => Box::new(cel_ext::Strings::version(version).legacy_exponent(
                if release >= KubeVersion::new(1, 33) {
                    cel_ext::strings::legacy::ExponentStyle::Tight
                } else {
                    cel_ext::strings::legacy::ExponentStyle::Spaced
                },
            )),
            "sets" => Box::new(cel_ext::Sets),
            "bindings" => Box::new(cel_ext::Bindings::version(version)),
            "lists" => Box::new(cel_ext::Lists::version(version)),
            // cel-ext has one network library for both of Kubernetes' `ip` and `cidr`; an
            // environment adds it once (libraries are deduplicated by name).
            "network.ip" | "network.cidr" => Box::new(cel_ext::Network),
            _ => return None,
        },
    })
}

/// The functions a profile provides (from the libraries available today), for listing.
pub fn functions_for(profile: &KubernetesProfile) -> Vec<FunctionDecl> {
    let mut out: Vec<FunctionDecl> = Vec::new();
    for lib in profile.libraries() {
        for f in lib.contents().functions {
            match out.iter_mut().find(|g| g.name == f.name) {
                Some(g) => g.merge(f),
                None => out.push(f),
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(minor: u32, kind: ExpressionKind) -> KubernetesProfile {
        KubernetesProfile::new(v(minor), kind)
    }

    #[test]
    fn versions() {
        use ExpressionKind::*;
        assert!(!p(26, NewExpressions).has("kubernetes.authz"));
        assert!(p(27, NewExpressions).has("kubernetes.authz"));
        assert!(p(26, StoredExpressions).has("kubernetes.authz"));
        assert!(!p(27, NewExpressions).options.cross_type_numeric_comparisons);
        assert!(p(28, NewExpressions).options.cross_type_numeric_comparisons);
        assert!(
            p(27, StoredExpressions)
                .options
                .cross_type_numeric_comparisons
        );
        let lists = |p: &KubernetesProfile| {
            p.libraries.iter().find_map(|l| match l {
                LibraryRef::Kubernetes {
                    name: "kubernetes.lists",
                    version,
                } => Some(*version),
                _ => None,
            })
        };
        assert_eq!(lists(&p(36, NewExpressions)), Some(0));
        assert_eq!(lists(&p(37, NewExpressions)), Some(1));
        assert_eq!(lists(&p(36, StoredExpressions)), Some(1));
        let opt = |p: &KubernetesProfile| p.options.optional_types_version;
        assert_eq!(opt(&p(28, NewExpressions)), 0);
        assert_eq!(opt(&p(29, NewExpressions)), 1);
        assert_eq!(opt(&p(32, NewExpressions)), 1);
        assert_eq!(opt(&p(33, NewExpressions)), 2);
        assert_eq!(opt(&p(28, StoredExpressions)), 2);
        assert!(!p(30, NewExpressions).options.keyword_field_names);
        assert!(p(31, NewExpressions).options.keyword_field_names);
        assert!(p(23, NewExpressions).has("strings"));
        assert!(p(23, NewExpressions).has("k8s.urls"));
        let names: Vec<String> = functions_for(&p(33, NewExpressions))
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert!(names.contains(&"semver".to_string()));
        assert!(!names.contains(&"includes".to_string()));
        assert_eq!("1.34".parse::<KubeVersion>(), Ok(v(34)));
    }
}
