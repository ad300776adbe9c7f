//! The declarations of CEL's standard library and of the optional-types library, with
//! cel-go's overload ids.
//!
//! The ids are the contract between this crate, the runtime's implementations, the JIT's
//! helpers and the cost table: grep an id to find all four.

use crate::overloads as ov;
use crate::{FunctionDecl, OverloadDecl as O, Type, VariableDecl};

/// Overload ids of the mixed-type numeric comparisons (`1 < 1.5`), which the checker only
/// offers when cross-type numeric comparisons are enabled. At run time they always work.
pub const CROSS_TYPE_NUMERIC_COMPARISONS: &[&str] = &[
    ov::LESS_INT64_DOUBLE,
    ov::LESS_INT64_UINT64,
    ov::LESS_UINT64_DOUBLE,
    ov::LESS_UINT64_INT64,
    ov::LESS_DOUBLE_INT64,
    ov::LESS_DOUBLE_UINT64,
    ov::LESS_EQUALS_INT64_DOUBLE,
    ov::LESS_EQUALS_INT64_UINT64,
    ov::LESS_EQUALS_UINT64_DOUBLE,
    ov::LESS_EQUALS_UINT64_INT64,
    ov::LESS_EQUALS_DOUBLE_INT64,
    ov::LESS_EQUALS_DOUBLE_UINT64,
    ov::GREATER_INT64_DOUBLE,
    ov::GREATER_INT64_UINT64,
    ov::GREATER_UINT64_DOUBLE,
    ov::GREATER_UINT64_INT64,
    ov::GREATER_DOUBLE_INT64,
    ov::GREATER_DOUBLE_UINT64,
    ov::GREATER_EQUALS_INT64_DOUBLE,
    ov::GREATER_EQUALS_INT64_UINT64,
    ov::GREATER_EQUALS_UINT64_DOUBLE,
    ov::GREATER_EQUALS_UINT64_INT64,
    ov::GREATER_EQUALS_DOUBLE_INT64,
    ov::GREATER_EQUALS_DOUBLE_UINT64,
];

fn a() -> Type {
    Type::param("A")
}
fn b() -> Type {
    Type::param("B")
}
fn list_a() -> Type {
    Type::list(a())
}
fn map_ab() -> Type {
    Type::map(a(), b())
}

/// The identifiers that name the standard types as values (`int`, `list`, `type`, ...), each
/// declared with type `type(T)`.
pub fn type_identifiers() -> Vec<VariableDecl> {
    [
        ("bool", Type::Bool),
        ("bytes", Type::Bytes),
        ("double", Type::Double),
        ("google.protobuf.Duration", Type::Duration),
        ("int", Type::Int),
        ("list", list_a()),
        ("map", map_ab()),
        ("null_type", Type::Null),
        ("string", Type::String),
        ("google.protobuf.Timestamp", Type::Timestamp),
        ("type", Type::Type(None)),
        ("uint", Type::Uint),
    ]
    .into_iter()
    .map(|(name, t)| VariableDecl::new(name, Type::type_of(t)))
    .collect()
}

/// The relational overloads of one operator: (name, id prefix).
const RELATIONS: &[(&str, &str)] = &[
    ("_<_", "less"),
    ("_<=_", "less_equals"),
    ("_>_", "greater"),
    ("_>=_", "greater_equals"),
];

/// `duration(int)`, which cel-go declared until v0.28.1 (#1300 deleted it; it never
/// converted anything): for environments that reproduce an older cel-go.
pub fn int_to_duration() -> FunctionDecl {
    FunctionDecl::new(
        "duration",
        vec![O::global(
            ov::INT64_TO_DURATION,
            vec![Type::Int],
            Type::Duration,
        )],
    )
}

/// The standard library's functions.
pub fn functions() -> Vec<FunctionDecl> {
    use Type::{Bool, Bytes, Double, Duration, Dyn, Int, String, Timestamp, Uint};
    let mut fns = vec![
        FunctionDecl::new(
            "_?_:_",
            vec![O::global(ov::CONDITIONAL, vec![Bool, a(), a()], a()).non_strict()],
        ),
        FunctionDecl::new(
            "_&&_",
            vec![O::global(ov::LOGICAL_AND, vec![Bool, Bool], Bool).non_strict()],
        ),
        FunctionDecl::new(
            "_||_",
            vec![O::global(ov::LOGICAL_OR, vec![Bool, Bool], Bool).non_strict()],
        ),
        FunctionDecl::new("!_", vec![O::global(ov::LOGICAL_NOT, vec![Bool], Bool)]),
        FunctionDecl::new(
            "@not_strictly_false",
            vec![O::global(ov::NOT_STRICTLY_FALSE, vec![Bool], Bool).non_strict()],
        ),
        FunctionDecl::new("_==_", vec![O::global(ov::EQUALS, vec![a(), a()], Bool)]),
        FunctionDecl::new(
            "_!=_",
            vec![O::global(ov::NOT_EQUALS, vec![a(), a()], Bool)],
        ),
        FunctionDecl::new(
            "_+_",
            vec![
                O::global(ov::ADD_BYTES, vec![Bytes, Bytes], Bytes),
                O::global(ov::ADD_DOUBLE, vec![Double, Double], Double),
                O::global(
                    ov::ADD_DURATION_DURATION,
                    vec![Duration, Duration],
                    Duration,
                ),
                O::global(
                    ov::ADD_DURATION_TIMESTAMP,
                    vec![Duration, Timestamp],
                    Timestamp,
                ),
                O::global(
                    ov::ADD_TIMESTAMP_DURATION,
                    vec![Timestamp, Duration],
                    Timestamp,
                ),
                O::global(ov::ADD_INT64, vec![Int, Int], Int),
                O::global(ov::ADD_LIST, vec![list_a(), list_a()], list_a()),
                O::global(ov::ADD_STRING, vec![String, String], String),
                O::global(ov::ADD_UINT64, vec![Uint, Uint], Uint),
            ],
        ),
        FunctionDecl::new(
            "_/_",
            vec![
                O::global(ov::DIVIDE_DOUBLE, vec![Double, Double], Double),
                O::global(ov::DIVIDE_INT64, vec![Int, Int], Int),
                O::global(ov::DIVIDE_UINT64, vec![Uint, Uint], Uint),
            ],
        ),
        FunctionDecl::new(
            "_%_",
            vec![
                O::global(ov::MODULO_INT64, vec![Int, Int], Int),
                O::global(ov::MODULO_UINT64, vec![Uint, Uint], Uint),
            ],
        ),
        FunctionDecl::new(
            "_*_",
            vec![
                O::global(ov::MULTIPLY_DOUBLE, vec![Double, Double], Double),
                O::global(ov::MULTIPLY_INT64, vec![Int, Int], Int),
                O::global(ov::MULTIPLY_UINT64, vec![Uint, Uint], Uint),
            ],
        ),
        FunctionDecl::new(
            "-_",
            vec![
                O::global(ov::NEGATE_DOUBLE, vec![Double], Double),
                O::global(ov::NEGATE_INT64, vec![Int], Int),
            ],
        ),
        FunctionDecl::new(
            "_-_",
            vec![
                O::global(ov::SUBTRACT_DOUBLE, vec![Double, Double], Double),
                O::global(
                    ov::SUBTRACT_DURATION_DURATION,
                    vec![Duration, Duration],
                    Duration,
                ),
                O::global(ov::SUBTRACT_INT64, vec![Int, Int], Int),
                O::global(
                    ov::SUBTRACT_TIMESTAMP_DURATION,
                    vec![Timestamp, Duration],
                    Timestamp,
                ),
                O::global(
                    ov::SUBTRACT_TIMESTAMP_TIMESTAMP,
                    vec![Timestamp, Timestamp],
                    Duration,
                ),
                O::global(ov::SUBTRACT_UINT64, vec![Uint, Uint], Uint),
            ],
        ),
    ];

    for (name, prefix) in RELATIONS {
        let pairs: &[(&str, Type, Type)] = &[
            ("bool", Bool, Bool),
            ("int64", Int, Int),
            ("int64_double", Int, Double),
            ("int64_uint64", Int, Uint),
            ("uint64", Uint, Uint),
            ("uint64_double", Uint, Double),
            ("uint64_int64", Uint, Int),
            ("double", Double, Double),
            ("double_int64", Double, Int),
            ("double_uint64", Double, Uint),
            ("string", String, String),
            ("bytes", Bytes, Bytes),
            ("timestamp", Timestamp, Timestamp),
            ("duration", Duration, Duration),
        ];
        let overloads = pairs
            .iter()
            .map(|(suffix, l, r)| {
                O::global(
                    &format!("{prefix}_{suffix}"),
                    vec![l.clone(), r.clone()],
                    Bool,
                )
            })
            .collect();
        fns.push(FunctionDecl::new(*name, overloads));
    }

    fns.extend([
        FunctionDecl::new(
            "_[_]",
            vec![
                O::global(ov::INDEX_LIST, vec![list_a(), Int], a()),
                O::global(ov::INDEX_MAP, vec![map_ab(), a()], b()),
            ],
        ),
        FunctionDecl::new(
            "@in",
            vec![
                O::global(ov::IN_LIST, vec![a(), list_a()], Bool),
                O::global(ov::IN_MAP, vec![a(), map_ab()], Bool),
            ],
        ),
        FunctionDecl::new(
            "size",
            vec![
                O::global(ov::SIZE_BYTES, vec![Bytes], Int),
                O::member(ov::BYTES_SIZE, vec![Bytes], Int),
                O::global(ov::SIZE_LIST, vec![list_a()], Int),
                O::member(ov::LIST_SIZE, vec![list_a()], Int),
                O::global(ov::SIZE_MAP, vec![map_ab()], Int),
                O::member(ov::MAP_SIZE, vec![map_ab()], Int),
                O::global(ov::SIZE_STRING, vec![String], Int),
                O::member(ov::STRING_SIZE, vec![String], Int),
            ],
        ),
        FunctionDecl::new(
            "type",
            vec![O::global(ov::TYPE, vec![a()], Type::type_of(a()))],
        ),
        FunctionDecl::new(
            "bool",
            vec![
                O::global(ov::BOOL_TO_BOOL, vec![Bool], Bool),
                O::global(ov::STRING_TO_BOOL, vec![String], Bool),
            ],
        ),
        FunctionDecl::new(
            "bytes",
            vec![
                O::global(ov::BYTES_TO_BYTES, vec![Bytes], Bytes),
                O::global(ov::STRING_TO_BYTES, vec![String], Bytes),
            ],
        ),
        FunctionDecl::new(
            "double",
            vec![
                O::global(ov::DOUBLE_TO_DOUBLE, vec![Double], Double),
                O::global(ov::INT64_TO_DOUBLE, vec![Int], Double),
                O::global(ov::STRING_TO_DOUBLE, vec![String], Double),
                O::global(ov::UINT64_TO_DOUBLE, vec![Uint], Double),
            ],
        ),
        FunctionDecl::new(
            "duration",
            vec![
                O::global(ov::DURATION_TO_DURATION, vec![Duration], Duration),
                O::global(ov::STRING_TO_DURATION, vec![String], Duration),
            ],
        ),
        FunctionDecl::new("dyn", vec![O::global(ov::TO_DYN, vec![a()], Dyn)]),
        FunctionDecl::new(
            "int",
            vec![
                O::global(ov::INT64_TO_INT64, vec![Int], Int),
                O::global(ov::DOUBLE_TO_INT64, vec![Double], Int),
                O::global(ov::DURATION_TO_INT64, vec![Duration], Int),
                O::global(ov::STRING_TO_INT64, vec![String], Int),
                O::global(ov::TIMESTAMP_TO_INT64, vec![Timestamp], Int),
                O::global(ov::UINT64_TO_INT64, vec![Uint], Int),
            ],
        ),
        FunctionDecl::new(
            "string",
            vec![
                O::global(ov::STRING_TO_STRING, vec![String], String),
                O::global(ov::BOOL_TO_STRING, vec![Bool], String),
                O::global(ov::BYTES_TO_STRING, vec![Bytes], String),
                O::global(ov::DOUBLE_TO_STRING, vec![Double], String),
                O::global(ov::DURATION_TO_STRING, vec![Duration], String),
                O::global(ov::INT64_TO_STRING, vec![Int], String),
                O::global(ov::TIMESTAMP_TO_STRING, vec![Timestamp], String),
                O::global(ov::UINT64_TO_STRING, vec![Uint], String),
            ],
        ),
        FunctionDecl::new(
            "timestamp",
            vec![
                O::global(ov::TIMESTAMP_TO_TIMESTAMP, vec![Timestamp], Timestamp),
                O::global(ov::INT64_TO_TIMESTAMP, vec![Int], Timestamp),
                O::global(ov::STRING_TO_TIMESTAMP, vec![String], Timestamp),
            ],
        ),
        FunctionDecl::new(
            "uint",
            vec![
                O::global(ov::UINT64_TO_UINT64, vec![Uint], Uint),
                O::global(ov::DOUBLE_TO_UINT64, vec![Double], Uint),
                O::global(ov::INT64_TO_UINT64, vec![Int], Uint),
                O::global(ov::STRING_TO_UINT64, vec![String], Uint),
            ],
        ),
        FunctionDecl::new(
            "contains",
            vec![O::member(ov::CONTAINS_STRING, vec![String, String], Bool)],
        ),
        FunctionDecl::new(
            "endsWith",
            vec![O::member(ov::ENDS_WITH_STRING, vec![String, String], Bool)],
        ),
        FunctionDecl::new(
            "startsWith",
            vec![O::member(
                ov::STARTS_WITH_STRING,
                vec![String, String],
                Bool,
            )],
        ),
        FunctionDecl::new(
            "matches",
            vec![
                O::global(ov::MATCHES, vec![String, String], Bool),
                O::member(ov::MATCHES_STRING, vec![String, String], Bool),
            ],
        ),
    ]);

    // Timestamp and duration accessors: (function, timestamp id, duration id).
    let accessors: &[(&str, &str, Option<&str>)] = &[
        ("getFullYear", ov::TIMESTAMP_TO_YEAR, None),
        ("getMonth", ov::TIMESTAMP_TO_MONTH, None),
        ("getDayOfYear", ov::TIMESTAMP_TO_DAY_OF_YEAR, None),
        ("getDayOfMonth", ov::TIMESTAMP_TO_DAY_OF_MONTH, None),
        ("getDate", ov::TIMESTAMP_TO_DAY_OF_MONTH_1_BASED, None),
        ("getDayOfWeek", ov::TIMESTAMP_TO_DAY_OF_WEEK, None),
        (
            "getHours",
            ov::TIMESTAMP_TO_HOURS,
            Some(ov::DURATION_TO_HOURS),
        ),
        (
            "getMinutes",
            ov::TIMESTAMP_TO_MINUTES,
            Some(ov::DURATION_TO_MINUTES),
        ),
        (
            "getSeconds",
            ov::TIMESTAMP_TO_SECONDS,
            Some(ov::DURATION_TO_SECONDS),
        ),
        (
            "getMilliseconds",
            ov::TIMESTAMP_TO_MILLISECONDS,
            Some(ov::DURATION_TO_MILLISECONDS),
        ),
    ];
    for (name, ts_id, dur_id) in accessors {
        // cel-go spells one of the time-zone ids without "_with": keep its spelling.
        let tz_id = if *ts_id == ov::TIMESTAMP_TO_SECONDS {
            ov::TIMESTAMP_TO_SECONDS_TZ.to_string()
        } else {
            format!("{ts_id}_with_tz")
        };
        let mut overloads = vec![
            O::member(ts_id, vec![Timestamp], Int),
            O::member(&tz_id, vec![Timestamp, String], Int),
        ];
        if let Some(d) = dur_id {
            overloads.push(O::member(d, vec![Duration], Int));
        }
        fns.push(FunctionDecl::new(*name, overloads));
    }
    fns
}

/// The newest version of the optional-types library (cel-go v0.29.2's; `cel.OptionalTypes()`
/// without a version argument means this one).
pub const OPTIONAL_TYPES_VERSION: u32 = 2;

/// The optional-types library (`cel.OptionalTypes()`) at its newest version.
pub fn optional_functions() -> Vec<FunctionDecl> {
    optional_functions_at(OPTIONAL_TYPES_VERSION)
}

/// The functions of the optional-types library at a version, as cel-go's
/// `cel.OptionalTypesVersion` gates them (`cel/library.go`): version 0 has `optional.of`,
/// `optional.ofNonZeroValue`, `optional.none`, `value`, `hasValue`, `or`, `orValue` and optional
/// selection and indexing; version 1 adds only the `optFlatMap` macro; version 2 adds
/// `list.first()`, `list.last()`, `optional.unwrap(list)` and `list.unwrapOpt()`. Versions
/// above the newest are the newest.
pub fn optional_functions_at(version: u32) -> Vec<FunctionDecl> {
    let mut fns = optional_functions_v0();
    if version >= 2 {
        let v = || Type::param("V");
        let opt_v = || Type::optional(v());
        fns.extend([
            FunctionDecl::new(
                "last",
                vec![O::member(ov::LIST_LAST, vec![Type::list(v())], opt_v())],
            ),
            FunctionDecl::new(
                "first",
                vec![O::member(ov::LIST_FIRST, vec![Type::list(v())], opt_v())],
            ),
            FunctionDecl::new(
                "optional.unwrap",
                vec![O::global(
                    ov::OPTIONAL_UNWRAP,
                    vec![Type::list(opt_v())],
                    Type::list(v()),
                )],
            ),
            FunctionDecl::new(
                "unwrapOpt",
                vec![O::member(
                    ov::OPTIONAL_UNWRAP_OPT,
                    vec![Type::list(opt_v())],
                    Type::list(v()),
                )],
            ),
        ]);
    }
    fns
}

fn optional_functions_v0() -> Vec<FunctionDecl> {
    let v = || Type::param("V");
    let k = || Type::param("K");
    let opt_v = || Type::optional(v());
    vec![
        FunctionDecl::new(
            "optional.of",
            vec![O::global(ov::OPTIONAL_OF, vec![v()], opt_v())],
        ),
        FunctionDecl::new(
            "optional.ofNonZeroValue",
            vec![O::global(
                ov::OPTIONAL_OF_NON_ZERO_VALUE,
                vec![v()],
                opt_v(),
            )],
        ),
        FunctionDecl::new(
            "optional.none",
            vec![O::global(ov::OPTIONAL_NONE, vec![], opt_v())],
        ),
        FunctionDecl::new(
            "value",
            vec![O::member(ov::OPTIONAL_VALUE, vec![opt_v()], v())],
        ),
        FunctionDecl::new(
            "hasValue",
            vec![O::member(ov::OPTIONAL_HAS_VALUE, vec![opt_v()], Type::Bool)],
        ),
        FunctionDecl::new(
            "or",
            vec![O::member(ov::OPTIONAL_OR_OPTIONAL, vec![opt_v(), opt_v()], opt_v()).non_strict()],
        ),
        FunctionDecl::new(
            "orValue",
            vec![O::member(ov::OPTIONAL_OR_VALUE_VALUE, vec![opt_v(), v()], v()).non_strict()],
        ),
        FunctionDecl::new(
            "_?._",
            vec![O::global(
                ov::SELECT_OPTIONAL_FIELD,
                vec![Type::Dyn, Type::String],
                opt_v(),
            )],
        ),
        FunctionDecl::new(
            "_[?_]",
            vec![
                O::global(
                    ov::LIST_OPTINDEX_OPTIONAL_INT,
                    vec![Type::list(v()), Type::Int],
                    opt_v(),
                ),
                O::global(
                    ov::OPTIONAL_LIST_OPTINDEX_OPTIONAL_INT,
                    vec![Type::optional(Type::list(v())), Type::Int],
                    opt_v(),
                ),
                O::global(
                    ov::MAP_OPTINDEX_OPTIONAL_VALUE,
                    vec![Type::map(k(), v()), k()],
                    opt_v(),
                ),
                O::global(
                    ov::OPTIONAL_MAP_OPTINDEX_OPTIONAL_VALUE,
                    vec![Type::optional(Type::map(k(), v())), k()],
                    opt_v(),
                ),
            ],
        ),
        FunctionDecl::new(
            "_[_]",
            vec![
                O::global(
                    ov::OPTIONAL_LIST_INDEX_INT,
                    vec![Type::optional(Type::list(v())), Type::Int],
                    opt_v(),
                ),
                O::global(
                    ov::OPTIONAL_MAP_INDEX_VALUE,
                    vec![Type::optional(Type::map(k(), v())), k()],
                    opt_v(),
                ),
            ],
        ),
    ]
}

/// The identifier `optional_type`, declared with the optional library.
pub fn optional_type_identifier() -> VariableDecl {
    VariableDecl::new(
        "optional_type",
        Type::type_of(Type::optional(Type::param("V"))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn overload_ids_are_unique() {
        let mut seen = HashSet::new();
        for f in functions().into_iter().chain(optional_functions()) {
            for o in f.overloads {
                // `_[_]` is declared by both libraries with distinct ids.
                assert!(seen.insert(o.id.clone()), "duplicate overload id {}", o.id);
            }
        }
    }

    #[test]
    fn cross_type_ids_are_declared() {
        let ids: HashSet<String> = functions()
            .into_iter()
            .flat_map(|f| f.overloads.into_iter().map(|o| o.id))
            .collect();
        for id in CROSS_TYPE_NUMERIC_COMPARISONS {
            assert!(ids.contains(*id), "{id}");
        }
    }
}
