//! The Kubernetes CEL environment by release (`environment/base.go`), as data.
//!
//! A profile is **what the API server of one Kubernetes release does**: the release decides
//! the code that runs (the cel-go it pins, see [`CelGoVersion`], and Kubernetes' own
//! libraries and texts), and within it two environments:
//!
//! * **new or changed** expressions (`NewExpressions`) compile with the libraries and
//!   options of the server's *compatibility version*, by default one minor below the release
//!   (`DefaultCompatibilityVersion`): a 1.34 API server refuses a new rule that calls a
//!   function introduced in 1.34, so that a rollback to 1.33 can still read it;
//! * **stored** expressions (`StoredExpressions`) compile with everything the release
//!   knows that has not been removed, so that an upgrade never invalidates stored objects.
//!
//! | since | added (removed) |
//! | --- | --- |
//! | 1.0 | homogeneous aggregate literals, eager declaration validation, UTC default time zone, `urls`, `regex`, `lists` v0 (until 1.37), `ext.Strings` v0 (until 1.29), presence tests free, `OptOptimize`, per-call limit 1,000,000, Kubernetes' cost estimator |
//! | 1.27 | `authz` |
//! | 1.28 | cross-type numeric comparisons, optional types, `quantity` |
//! | 1.29 | literal validators (duration, timestamp, regex, homogeneous aggregates), `ext.Strings` v2, `ext.Sets` |
//! | 1.30 | `ip`, `cidr` (cel-go network extension as Kubernetes configures it) |
//! | 1.31 | `format`, `authzSelectors` (behind a gate that is off in 1.31), keyword field names |
//! | 1.32 | `ext.TwoVarComprehensions` |
//! | 1.33 | `semver` v1 |
//! | 1.34 | `ext.Lists` v3 |
//! | 1.37 | `lists` v1 (`includes`) |
//!
//! Kubernetes enables the optional-types library without a version (`cel.OptionalTypes()`),
//! which is the newest version the release's cel-go knows, in both environments
//! ([`CelGoVersion::optional_types_version`]).
//!
//! The table of releases and the cel-go each pins is [`CelGoVersion::of_release`]; each
//! behaviour of an older cel-go that an expression can observe is a switch set next to it
//! ([`CelGoVersion::older`]), read by the crate that owns the behaviour.
//!
//! `jsonpatch` is not part of the base environment (only of mutating admission policies);
//! [`KubernetesProfile::with_jsonpatch`] adds it.

use std::fmt;
use std::str::FromStr;

use cel_ext::Library;
use cel_types::{FunctionDecl, OlderCelGo};

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

    /// The newest release this crate describes (`master` of July 2026, which pins cel-go
    /// v0.29.2).
    pub const NEWEST: KubeVersion = KubeVersion::new(1, 37);

    /// The newest *released* version: what a profile without a version means.
    pub const DEFAULT: KubeVersion = KubeVersion::new(1, 36);

    /// The oldest release this crate describes (the oldest whose cel-go's differences from
    /// v0.29.2 are known, see [`CelGoVersion`]).
    pub const OLDEST: KubeVersion = KubeVersion::new(1, 30);

    /// The version one minor below (`1.34` → `1.33`): the compatibility version an API
    /// server compiles new expressions with (`DefaultCompatibilityVersion`).
    pub const fn previous(self) -> KubeVersion {
        KubeVersion::new(self.major, self.minor.saturating_sub(1))
    }
}

impl Default for KubeVersion {
    fn default() -> Self {
        KubeVersion::DEFAULT
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

/// The cel-go releases Kubernetes releases pin (`go.mod` of `k8s.io/apiserver`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CelGoVersion {
    /// v0.17.8 (Kubernetes 1.30).
    V0_17_8,
    /// v0.20.1 (1.31).
    V0_20_1,
    /// v0.22.0 (1.32).
    V0_22_0,
    /// v0.23.2 (1.33).
    V0_23_2,
    /// v0.26.0 (1.34 to 1.36).
    V0_26_0,
    /// v0.29.2 (1.37): Celerity's own core.
    V0_29_2,
}

/// The cel-go each Kubernetes release pins, checked at every patch tag of `k8s.io/apiserver`
/// (a minor never changes its cel-go): the one table from release to cel-go.
const CEL_GO_BY_RELEASE: [(u32, CelGoVersion); 8] = [
    (30, CelGoVersion::V0_17_8),
    (31, CelGoVersion::V0_20_1),
    (32, CelGoVersion::V0_22_0),
    (33, CelGoVersion::V0_23_2),
    (34, CelGoVersion::V0_26_0),
    (35, CelGoVersion::V0_26_0),
    (36, CelGoVersion::V0_26_0),
    (37, CelGoVersion::V0_29_2),
];

impl CelGoVersion {
    /// The cel-go Kubernetes `release` runs (releases outside the table get the nearest
    /// end's).
    pub fn of_release(release: KubeVersion) -> CelGoVersion {
        let minor = release.minor;
        CEL_GO_BY_RELEASE
            .iter()
            .rev()
            .find(|(m, _)| *m <= minor)
            .map_or(CEL_GO_BY_RELEASE[0].1, |(_, v)| *v)
    }

    /// The behaviours of this cel-go that differ from v0.29.2's, one switch per change
    /// (`docs/cel-go-versions.md` has each item's reproducer).
    pub fn older(self) -> OlderCelGo {
        use CelGoVersion::*;
        let mut o = OlderCelGo::NONE;
        // C1-C8: cel-go v0.23.0 2f7606a8 "Cost tracking for two-variable comprehensions and
        // bindings (#1104)" (with d8351dfc #1113, 1bf2472a #1119) rewrote size tracking.
        o.size_estimates_without_entries = self < V0_23_2;
        // C9: same commit: an optional's run-time size is its value's.
        o.optional_size_is_one = self < V0_23_2;
        // C10: v0.29.0 a4d0d643 "startsWith / endsWith runtime cost agreement with checked
        // cost (#1351)".
        o.starts_with_charges_receiver = self < V0_29_2;
        // C11: v0.29.0 d4efa771 "Ensure receiver and global matches cost estimates agree
        // (#1350)".
        o.global_matches_costs_one = self < V0_29_2;
        // A16: v0.28.0 b62dcafe "Check arg kinds in optional.or and .orValue impl (#1276)"
        // (Kubernetes went from v0.27.0 on master straight to v0.29.2).
        o.optional_or_takes_any_receiver = self < V0_29_2;
        // A17: v0.28.1 339269b4 "fix: deleted `IntToDuration` overload (#1300)".
        o.duration_from_int = self < V0_29_2;
        // A20: v0.29.0 783267d0 "reject out-of-range minutes in timezone offset parsing
        // (#1336)".
        o.time_zone_minutes_unchecked = self < V0_29_2;
        // A5: v0.22.0 ba36ff84 "Fix out of range error for non-negative string indexing
        // offsets (#1052)".
        o.index_of_offset_past_end_errors = self < V0_22_0;
        // A13: v0.25.1 845f2a8e "Fix lastIndexOf behavior against an empty string in
        // strings extension (#1173)".
        o.last_index_of_short_receiver_errors = self < V0_26_0;
        // A21: v0.29.0 14f6746a "validate offset on empty-string path in indexOf and
        // lastIndexOf (#1335)".
        o.index_of_empty_returns_offset = self < V0_29_2;
        o
    }

    /// The version of the optional-types library Kubernetes gets from `cel.OptionalTypes()`
    /// (no version: the newest this cel-go knows): v0.17 added `optFlatMap` (version 1),
    /// v0.23 `first`, `last`, `optional.unwrap` and `unwrapOpt` (version 2).
    pub fn optional_types_version(self) -> u32 {
        if self < CelGoVersion::V0_23_2 { 1 } else { 2 }
    }
}

impl fmt::Display for CelGoVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CelGoVersion::V0_17_8 => "v0.17.8",
            CelGoVersion::V0_20_1 => "v0.20.1",
            CelGoVersion::V0_22_0 => "v0.22.0",
            CelGoVersion::V0_23_2 => "v0.23.2",
            CelGoVersion::V0_26_0 => "v0.26.0",
            CelGoVersion::V0_29_2 => "v0.29.2",
        })
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
    /// The optional-types library's version (see [`CelGoVersion::optional_types_version`]).
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
    /// The behaviours of the release's cel-go that differ from v0.29.2's.
    pub older_cel_go: OlderCelGo,
}

/// What the API server of one Kubernetes release compiles and evaluates expressions with,
/// for new or for stored expressions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubernetesProfile {
    /// The release whose code runs: its cel-go, its libraries' code, its own texts.
    pub release: KubeVersion,
    /// The compatibility version: which libraries and options *new* expressions may use
    /// (an API server of release 1.N uses 1.N−1 unless told otherwise).
    pub compatibility: KubeVersion,
    /// New or stored expressions.
    pub kind: ExpressionKind,
    /// The cel-go the release pins.
    pub cel_go: CelGoVersion,
    /// The libraries, in the order Kubernetes adds them.
    pub libraries: Vec<LibraryRef>,
    /// The options.
    pub options: ProfileOptions,
}

/// Libraries behind a feature gate that is off by default in `release`: Kubernetes leaves
/// them out of new expressions whatever the compatibility version (`filterAndBuildOpts`
/// honours the gate for new expressions only). `AuthorizeWithSelectors` was alpha in 1.31.
fn gated_off_for_new_expressions(what: &What, release: KubeVersion) -> bool {
    matches!(
        what,
        What::Lib(LibraryRef::Kubernetes {
            name: "kubernetes.authzSelectors",
            ..
        })
    ) && release.minor == 31
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
    /// What the API server of `release` uses for `kind` expressions: new expressions with
    /// its default compatibility version (one minor below the release,
    /// `DefaultCompatibilityVersion`), stored expressions with everything the release knows.
    pub fn new(release: KubeVersion, kind: ExpressionKind) -> KubernetesProfile {
        KubernetesProfile::with_compatibility(release, release.previous(), kind)
    }

    /// The same with another compatibility version (`--emulated-version` and
    /// `--min-compatibility-version` set it; Kubernetes' tests pin one).
    pub fn with_compatibility(
        release: KubeVersion,
        compatibility: KubeVersion,
        kind: ExpressionKind,
    ) -> KubernetesProfile {
        let cel_go = CelGoVersion::of_release(release);
        let mut options = ProfileOptions {
            homogeneous_aggregate_literals: true,
            cross_type_numeric_comparisons: false,
            optional_types: false,
            optional_types_version: cel_go.optional_types_version(),
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
            older_cel_go: cel_go.older(),
        };
        let mut libraries = Vec::new();
        for e in &BASE {
            // The release's own table holds what was introduced up to it; a removal is a
            // `RemovedVersion` on an entry, from the release that decided it on. New
            // expressions take what their compatibility version has (an old library stays
            // there until its removal version), stored ones everything not removed.
            let on = e.introduced <= release
                && match kind {
                    ExpressionKind::NewExpressions => {
                        e.introduced <= compatibility
                            && e.removed.is_none_or(|r| compatibility < r)
                            && !gated_off_for_new_expressions(&e.what, release)
                    }
                    ExpressionKind::StoredExpressions => e.removed.is_none_or(|r| release < r),
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
            release,
            compatibility,
            kind,
            cel_go,
            libraries,
            options,
        }
    }

    /// The stored-expressions environment of the default release.
    pub fn stored() -> KubernetesProfile {
        KubernetesProfile::new(KubeVersion::DEFAULT, ExpressionKind::StoredExpressions)
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

    /// The release whose code (cel-go, apimachinery) the environment runs.
    pub fn release(&self) -> KubeVersion {
        self.release
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
            "strings" => Box::new(
                cel_ext::Strings::version(version)
                    .legacy_exponent(if release >= KubeVersion::new(1, 33) {
                        cel_ext::strings::legacy::ExponentStyle::Tight
                    } else {
                        cel_ext::strings::legacy::ExponentStyle::Spaced
                    })
                    .older(CelGoVersion::of_release(release).older()),
            ),
            "sets" => Box::new(cel_ext::Sets),
            "bindings" => Box::new(cel_ext::Bindings::version(version)),
            "lists" => Box::new(cel_ext::Lists::version(version)),
            // cel-ext has one network library for both of Kubernetes' `ip` and `cidr`; an
            // environment adds it once (libraries are deduplicated by name).
            // B-LIB-1: `containsCIDR` compared network addresses before 1.33.
            "network.ip" | "network.cidr" => Box::new(if release < KubeVersion::new(1, 33) {
                cel_ext::Network::contains_cidr_by_network_address()
            } else {
                cel_ext::Network::default()
            }),
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
    use ExpressionKind::*;

    /// The API server of release 1.`minor`.
    fn p(minor: u32, kind: ExpressionKind) -> KubernetesProfile {
        KubernetesProfile::new(v(minor), kind)
    }

    /// New expressions at compatibility version 1.`minor` on the newest release.
    fn compat(minor: u32) -> KubernetesProfile {
        KubernetesProfile::with_compatibility(KubeVersion::NEWEST, v(minor), NewExpressions)
    }

    fn lists(p: &KubernetesProfile) -> Option<u32> {
        p.libraries.iter().find_map(|l| match l {
            LibraryRef::Kubernetes {
                name: "kubernetes.lists",
                version,
            } => Some(*version),
            _ => None,
        })
    }

    #[test]
    fn libraries_follow_the_compatibility_version() {
        assert!(!compat(26).has("kubernetes.authz"));
        assert!(compat(27).has("kubernetes.authz"));
        assert!(!compat(27).options.cross_type_numeric_comparisons);
        assert!(compat(28).options.cross_type_numeric_comparisons);
        assert_eq!(lists(&compat(36)), Some(0));
        assert_eq!(lists(&compat(37)), Some(1));
        assert!(!compat(30).options.keyword_field_names);
        assert!(compat(31).options.keyword_field_names);
        assert!(compat(23).has("strings") && compat(23).has("k8s.urls"));
        let names: Vec<String> = functions_for(&compat(33))
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert!(names.contains(&"semver".to_string()));
        assert!(!names.contains(&"includes".to_string()));
    }

    #[test]
    fn a_release_compiles_new_expressions_one_minor_below() {
        // B-ENV-1: a 1.33 API server has no `semver` for new rules, a 1.34 one has.
        assert_eq!(p(33, NewExpressions).compatibility, v(32));
        assert!(!p(33, NewExpressions).has("kubernetes.Semver"));
        assert!(p(34, NewExpressions).has("kubernetes.Semver"));
        // Stored expressions get everything the release knows...
        assert!(p(33, StoredExpressions).has("kubernetes.Semver"));
        // ...but nothing a later release introduced.
        assert!(!p(32, StoredExpressions).has("kubernetes.Semver"));
        assert_eq!(lists(&p(36, StoredExpressions)), Some(0));
        assert_eq!(lists(&p(37, StoredExpressions)), Some(1));
        assert_eq!(lists(&p(37, NewExpressions)), Some(0));
        // Keyword field names arrived with 1.31's binary.
        assert!(!p(30, StoredExpressions).options.keyword_field_names);
        assert!(p(31, StoredExpressions).options.keyword_field_names);
        // The selectors' gate was off in 1.31, for new expressions only.
        let selectors = "kubernetes.authzSelectors";
        let emulating_31 =
            KubernetesProfile::with_compatibility(v(31), v(31), ExpressionKind::NewExpressions);
        assert!(!emulating_31.has(selectors) && emulating_31.has("format"));
        assert!(p(31, StoredExpressions).has(selectors));
        assert!(p(32, NewExpressions).has(selectors));
    }

    #[test]
    fn each_release_runs_its_cel_go() {
        assert_eq!(p(30, NewExpressions).cel_go, CelGoVersion::V0_17_8);
        assert_eq!(p(33, NewExpressions).cel_go, CelGoVersion::V0_23_2);
        for minor in 34..=36 {
            assert_eq!(p(minor, StoredExpressions).cel_go, CelGoVersion::V0_26_0);
        }
        assert_eq!(p(37, NewExpressions).cel_go, CelGoVersion::V0_29_2);
        assert_eq!(p(37, NewExpressions).options.older_cel_go, OlderCelGo::NONE);
        let opt = |p: &KubernetesProfile| p.options.optional_types_version;
        assert_eq!(opt(&p(32, NewExpressions)), 1);
        assert_eq!(opt(&p(32, StoredExpressions)), 1);
        assert_eq!(opt(&p(33, NewExpressions)), 2);
        assert!(
            p(36, NewExpressions)
                .options
                .older_cel_go
                .global_matches_costs_one
        );
        assert!(
            !p(33, NewExpressions)
                .options
                .older_cel_go
                .size_estimates_without_entries
        );
        assert!(
            p(32, NewExpressions)
                .options
                .older_cel_go
                .size_estimates_without_entries
        );
        assert_eq!("1.34".parse::<KubeVersion>(), Ok(v(34)));
        assert_eq!(CelGoVersion::V0_26_0.to_string(), "v0.26.0");
    }
}
