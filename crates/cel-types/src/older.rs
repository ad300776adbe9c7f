//! The behaviours of older cel-go releases an environment can reproduce.
//!
//! Celerity's core is cel-go v0.29.2. Kubernetes releases pin older cel-go versions (1.30
//! runs v0.17.8, 1.34 to 1.36 run v0.26.0), and some of what changed since is observable by
//! an expression: a value, an error, a cost. [`OlderCelGo`] holds one switch per such change;
//! each is `true` when the environment reproduces the *older* behaviour. All off (the
//! default) is cel-go v0.29.2.
//!
//! Which cel-go version turns which switch on is decided in one place, next to the table of
//! Kubernetes releases and the cel-go each pins (`cel_k8s::profile`); the crates that own a
//! behaviour read its switch. `docs/cel-go-versions.md` lists every change with its commit.

/// Switches for the behaviours of cel-go releases older than v0.29.2 (see the module
/// documentation). `Default` is none of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct OlderCelGo {
    /// C1–C8 (before v0.23.0, #1104): the static estimator tracks no entry sizes (literal
    /// lists and maps, `map()`/`filter()` results, conditionals and concatenations give
    /// their elements no size), sizes no comprehension variable but by its path, treats
    /// `dyn(x)` as an ordinary call, and sizes an optional as unknown.
    pub size_estimates_without_entries: bool,
    /// C9 (before v0.23.0, #1104): the run-time size of an optional value is 1, not the
    /// size of what it holds.
    pub optional_size_is_one: bool,
    /// C10 (before v0.29.0, #1351): `startsWith` and `endsWith` charge a traversal of their
    /// receiver at run time, not of their argument.
    pub starts_with_charges_receiver: bool,
    /// C11 (before v0.29.0, #1350): the global form `matches(s, re)` costs 1, statically and
    /// at run time; only `s.matches(re)` is charged for the regular expression.
    pub global_matches_costs_one: bool,
    /// A16 (before v0.28.0, #1276): `x.or(y)` and `x.orValue(y)` on a receiver that is not
    /// an optional (through `dyn`) return the receiver instead of `no such overload`.
    pub optional_or_takes_any_receiver: bool,
    /// A17 (before v0.28.1, #1300): `duration(int)` is declared (it converts nothing: a
    /// constant argument fails the literal validator, any other one fails at run time).
    pub duration_from_int: bool,
    /// A20 (before v0.29.0, #1336): a time-zone offset's minutes are not range-checked
    /// (`'+00:99'` is 99 minutes).
    pub time_zone_minutes_unchecked: bool,
    /// A5 (before v0.22.0, #1052): `indexOf` and `lastIndexOf` with an offset at or past the
    /// end of the receiver are `index out of range` errors, not -1.
    pub index_of_offset_past_end_errors: bool,
    /// A13 (before v0.25.1, #1173): `lastIndexOf` of a non-empty string on a receiver shorter
    /// than it (the empty receiver) is `index out of range: -1`, not -1.
    pub last_index_of_short_receiver_errors: bool,
    /// A21 (before v0.29.0, #1335): `indexOf` and `lastIndexOf` of the empty string return
    /// their offset as it is (negative, or past the end).
    pub index_of_empty_returns_offset: bool,
}

impl OlderCelGo {
    /// cel-go v0.29.2 itself: no older behaviour.
    pub const NONE: OlderCelGo = OlderCelGo {
        size_estimates_without_entries: false,
        optional_size_is_one: false,
        starts_with_charges_receiver: false,
        global_matches_costs_one: false,
        optional_or_takes_any_receiver: false,
        duration_from_int: false,
        time_zone_minutes_unchecked: false,
        index_of_offset_past_end_errors: false,
        last_index_of_short_receiver_errors: false,
        index_of_empty_returns_offset: false,
    };
}
