//! The declarations of CEL's standard library and of the optional-types library, with
//! cel-go's overload ids.
//!
//! The ids are the contract between this crate, the runtime's implementations, the JIT's
//! helpers and the cost table: grep an id to find all four.

use crate::{FunctionDecl, OverloadDecl as O, Type, VariableDecl};

/// Overload ids of the mixed-type numeric comparisons (`1 < 1.5`), which the checker only
/// offers when cross-type numeric comparisons are enabled. At run time they always work.
pub const CROSS_TYPE_NUMERIC_COMPARISONS: &[&str] = &[
    "less_int64_double",
    "less_int64_uint64",
    "less_uint64_double",
    "less_uint64_int64",
    "less_double_int64",
    "less_double_uint64",
    "less_equals_int64_double",
    "less_equals_int64_uint64",
    "less_equals_uint64_double",
    "less_equals_uint64_int64",
    "less_equals_double_int64",
    "less_equals_double_uint64",
    "greater_int64_double",
    "greater_int64_uint64",
    "greater_uint64_double",
    "greater_uint64_int64",
    "greater_double_int64",
    "greater_double_uint64",
    "greater_equals_int64_double",
    "greater_equals_int64_uint64",
    "greater_equals_uint64_double",
    "greater_equals_uint64_int64",
    "greater_equals_double_int64",
    "greater_equals_double_uint64",
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

/// The standard library's functions.
pub fn functions() -> Vec<FunctionDecl> {
    use Type::{Bool, Bytes, Double, Duration, Dyn, Int, String, Timestamp, Uint};
    let mut fns = vec![
        FunctionDecl::new(
            "_?_:_",
            vec![O::global("conditional", vec![Bool, a(), a()], a()).non_strict()],
        ),
        FunctionDecl::new(
            "_&&_",
            vec![O::global("logical_and", vec![Bool, Bool], Bool).non_strict()],
        ),
        FunctionDecl::new(
            "_||_",
            vec![O::global("logical_or", vec![Bool, Bool], Bool).non_strict()],
        ),
        FunctionDecl::new("!_", vec![O::global("logical_not", vec![Bool], Bool)]),
        FunctionDecl::new(
            "@not_strictly_false",
            vec![O::global("not_strictly_false", vec![Bool], Bool).non_strict()],
        ),
        FunctionDecl::new("_==_", vec![O::global("equals", vec![a(), a()], Bool)]),
        FunctionDecl::new("_!=_", vec![O::global("not_equals", vec![a(), a()], Bool)]),
        FunctionDecl::new(
            "_+_",
            vec![
                O::global("add_bytes", vec![Bytes, Bytes], Bytes),
                O::global("add_double", vec![Double, Double], Double),
                O::global("add_duration_duration", vec![Duration, Duration], Duration),
                O::global(
                    "add_duration_timestamp",
                    vec![Duration, Timestamp],
                    Timestamp,
                ),
                O::global(
                    "add_timestamp_duration",
                    vec![Timestamp, Duration],
                    Timestamp,
                ),
                O::global("add_int64", vec![Int, Int], Int),
                O::global("add_list", vec![list_a(), list_a()], list_a()),
                O::global("add_string", vec![String, String], String),
                O::global("add_uint64", vec![Uint, Uint], Uint),
            ],
        ),
        FunctionDecl::new(
            "_/_",
            vec![
                O::global("divide_double", vec![Double, Double], Double),
                O::global("divide_int64", vec![Int, Int], Int),
                O::global("divide_uint64", vec![Uint, Uint], Uint),
            ],
        ),
        FunctionDecl::new(
            "_%_",
            vec![
                O::global("modulo_int64", vec![Int, Int], Int),
                O::global("modulo_uint64", vec![Uint, Uint], Uint),
            ],
        ),
        FunctionDecl::new(
            "_*_",
            vec![
                O::global("multiply_double", vec![Double, Double], Double),
                O::global("multiply_int64", vec![Int, Int], Int),
                O::global("multiply_uint64", vec![Uint, Uint], Uint),
            ],
        ),
        FunctionDecl::new(
            "-_",
            vec![
                O::global("negate_double", vec![Double], Double),
                O::global("negate_int64", vec![Int], Int),
            ],
        ),
        FunctionDecl::new(
            "_-_",
            vec![
                O::global("subtract_double", vec![Double, Double], Double),
                O::global(
                    "subtract_duration_duration",
                    vec![Duration, Duration],
                    Duration,
                ),
                O::global("subtract_int64", vec![Int, Int], Int),
                O::global(
                    "subtract_timestamp_duration",
                    vec![Timestamp, Duration],
                    Timestamp,
                ),
                O::global(
                    "subtract_timestamp_timestamp",
                    vec![Timestamp, Timestamp],
                    Duration,
                ),
                O::global("subtract_uint64", vec![Uint, Uint], Uint),
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
                O::global("index_list", vec![list_a(), Int], a()),
                O::global("index_map", vec![map_ab(), a()], b()),
            ],
        ),
        FunctionDecl::new(
            "@in",
            vec![
                O::global("in_list", vec![a(), list_a()], Bool),
                O::global("in_map", vec![a(), map_ab()], Bool),
            ],
        ),
        FunctionDecl::new(
            "size",
            vec![
                O::global("size_bytes", vec![Bytes], Int),
                O::member("bytes_size", vec![Bytes], Int),
                O::global("size_list", vec![list_a()], Int),
                O::member("list_size", vec![list_a()], Int),
                O::global("size_map", vec![map_ab()], Int),
                O::member("map_size", vec![map_ab()], Int),
                O::global("size_string", vec![String], Int),
                O::member("string_size", vec![String], Int),
            ],
        ),
        FunctionDecl::new(
            "type",
            vec![O::global("type", vec![a()], Type::type_of(a()))],
        ),
        FunctionDecl::new(
            "bool",
            vec![
                O::global("bool_to_bool", vec![Bool], Bool),
                O::global("string_to_bool", vec![String], Bool),
            ],
        ),
        FunctionDecl::new(
            "bytes",
            vec![
                O::global("bytes_to_bytes", vec![Bytes], Bytes),
                O::global("string_to_bytes", vec![String], Bytes),
            ],
        ),
        FunctionDecl::new(
            "double",
            vec![
                O::global("double_to_double", vec![Double], Double),
                O::global("int64_to_double", vec![Int], Double),
                O::global("string_to_double", vec![String], Double),
                O::global("uint64_to_double", vec![Uint], Double),
            ],
        ),
        FunctionDecl::new(
            "duration",
            vec![
                O::global("duration_to_duration", vec![Duration], Duration),
                O::global("int64_to_duration", vec![Int], Duration),
                O::global("string_to_duration", vec![String], Duration),
            ],
        ),
        FunctionDecl::new("dyn", vec![O::global("to_dyn", vec![a()], Dyn)]),
        FunctionDecl::new(
            "int",
            vec![
                O::global("int64_to_int64", vec![Int], Int),
                O::global("double_to_int64", vec![Double], Int),
                O::global("duration_to_int64", vec![Duration], Int),
                O::global("string_to_int64", vec![String], Int),
                O::global("timestamp_to_int64", vec![Timestamp], Int),
                O::global("uint64_to_int64", vec![Uint], Int),
            ],
        ),
        FunctionDecl::new(
            "string",
            vec![
                O::global("string_to_string", vec![String], String),
                O::global("bool_to_string", vec![Bool], String),
                O::global("bytes_to_string", vec![Bytes], String),
                O::global("double_to_string", vec![Double], String),
                O::global("duration_to_string", vec![Duration], String),
                O::global("int64_to_string", vec![Int], String),
                O::global("timestamp_to_string", vec![Timestamp], String),
                O::global("uint64_to_string", vec![Uint], String),
            ],
        ),
        FunctionDecl::new(
            "timestamp",
            vec![
                O::global("timestamp_to_timestamp", vec![Timestamp], Timestamp),
                O::global("int64_to_timestamp", vec![Int], Timestamp),
                O::global("string_to_timestamp", vec![String], Timestamp),
            ],
        ),
        FunctionDecl::new(
            "uint",
            vec![
                O::global("uint64_to_uint64", vec![Uint], Uint),
                O::global("double_to_uint64", vec![Double], Uint),
                O::global("int64_to_uint64", vec![Int], Uint),
                O::global("string_to_uint64", vec![String], Uint),
            ],
        ),
        FunctionDecl::new(
            "contains",
            vec![O::member("contains_string", vec![String, String], Bool)],
        ),
        FunctionDecl::new(
            "endsWith",
            vec![O::member("ends_with_string", vec![String, String], Bool)],
        ),
        FunctionDecl::new(
            "startsWith",
            vec![O::member("starts_with_string", vec![String, String], Bool)],
        ),
        FunctionDecl::new(
            "matches",
            vec![
                O::global("matches", vec![String, String], Bool),
                O::member("matches_string", vec![String, String], Bool),
            ],
        ),
    ]);

    // Timestamp and duration accessors: (function, timestamp id, duration id).
    let accessors: &[(&str, &str, Option<&str>)] = &[
        ("getFullYear", "timestamp_to_year", None),
        ("getMonth", "timestamp_to_month", None),
        ("getDayOfYear", "timestamp_to_day_of_year", None),
        ("getDayOfMonth", "timestamp_to_day_of_month", None),
        ("getDate", "timestamp_to_day_of_month_1_based", None),
        ("getDayOfWeek", "timestamp_to_day_of_week", None),
        ("getHours", "timestamp_to_hours", Some("duration_to_hours")),
        (
            "getMinutes",
            "timestamp_to_minutes",
            Some("duration_to_minutes"),
        ),
        (
            "getSeconds",
            "timestamp_to_seconds",
            Some("duration_to_seconds"),
        ),
        (
            "getMilliseconds",
            "timestamp_to_milliseconds",
            Some("duration_to_milliseconds"),
        ),
    ];
    for (name, ts_id, dur_id) in accessors {
        // cel-go spells one of the time-zone ids without "_with": keep its spelling.
        let tz_id = if *ts_id == "timestamp_to_seconds" {
            "timestamp_to_seconds_tz".to_string()
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
                vec![O::member("list_last", vec![Type::list(v())], opt_v())],
            ),
            FunctionDecl::new(
                "first",
                vec![O::member("list_first", vec![Type::list(v())], opt_v())],
            ),
            FunctionDecl::new(
                "optional.unwrap",
                vec![O::global(
                    "optional_unwrap",
                    vec![Type::list(opt_v())],
                    Type::list(v()),
                )],
            ),
            FunctionDecl::new(
                "unwrapOpt",
                vec![O::member(
                    "optional_unwrapOpt",
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
            vec![O::global("optional_of", vec![v()], opt_v())],
        ),
        FunctionDecl::new(
            "optional.ofNonZeroValue",
            vec![O::global("optional_ofNonZeroValue", vec![v()], opt_v())],
        ),
        FunctionDecl::new(
            "optional.none",
            vec![O::global("optional_none", vec![], opt_v())],
        ),
        FunctionDecl::new(
            "value",
            vec![O::member("optional_value", vec![opt_v()], v())],
        ),
        FunctionDecl::new(
            "hasValue",
            vec![O::member("optional_hasValue", vec![opt_v()], Type::Bool)],
        ),
        FunctionDecl::new(
            "or",
            vec![O::member("optional_or_optional", vec![opt_v(), opt_v()], opt_v()).non_strict()],
        ),
        FunctionDecl::new(
            "orValue",
            vec![O::member("optional_orValue_value", vec![opt_v(), v()], v()).non_strict()],
        ),
        FunctionDecl::new(
            "_?._",
            vec![O::global(
                "select_optional_field",
                vec![Type::Dyn, Type::String],
                opt_v(),
            )],
        ),
        FunctionDecl::new(
            "_[?_]",
            vec![
                O::global(
                    "list_optindex_optional_int",
                    vec![Type::list(v()), Type::Int],
                    opt_v(),
                ),
                O::global(
                    "optional_list_optindex_optional_int",
                    vec![Type::optional(Type::list(v())), Type::Int],
                    opt_v(),
                ),
                O::global(
                    "map_optindex_optional_value",
                    vec![Type::map(k(), v()), k()],
                    opt_v(),
                ),
                O::global(
                    "optional_map_optindex_optional_value",
                    vec![Type::optional(Type::map(k(), v())), k()],
                    opt_v(),
                ),
            ],
        ),
        FunctionDecl::new(
            "_[_]",
            vec![
                O::global(
                    "optional_list_index_int",
                    vec![Type::optional(Type::list(v())), Type::Int],
                    opt_v(),
                ),
                O::global(
                    "optional_map_index_value",
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
