//! The examples of `docs/semantics.md` (cel-go v0.29.2 behaviour), evaluated through the
//! standard overload table by overload id, as the interpreter calls it.

use cel_runtime::{FunctionRegistry, Key, Result, Value};

fn call(id: &str, args: &[Value]) -> Result<Value> {
    thread_local! {
        static TABLE: FunctionRegistry = FunctionRegistry::standard();
    }
    TABLE.with(|t| match t.get(id) {
        Some(f) => f.call(args),
        None => panic!("{id} is not registered"),
    })
}

fn ok(id: &str, args: &[Value]) -> Value {
    call(id, args).unwrap_or_else(|e| panic!("{id}: {e}"))
}

fn err(id: &str, args: &[Value]) -> String {
    match call(id, args) {
        Ok(v) => panic!(
            "{id}: expected an error, got {}",
            cel_runtime::format::display(&v)
        ),
        Err(e) => e.message,
    }
}

fn s(x: &str) -> Value {
    Value::from(x)
}

fn text(v: Value) -> String {
    match &v {
        Value::String(s) => s.to_string(),
        other => panic!("not a string: {}", cel_runtime::format::display(other)),
    }
}

fn int(v: Value) -> i64 {
    match v {
        Value::Int(i) => i,
        other => panic!("not an int: {}", cel_runtime::format::display(&other)),
    }
}

fn boolean(v: Value) -> bool {
    match v {
        Value::Bool(b) => b,
        other => panic!("not a bool: {}", cel_runtime::format::display(&other)),
    }
}

fn ts(x: &str) -> Value {
    ok("string_to_timestamp", &[s(x)])
}

fn dur(x: &str) -> Value {
    ok("string_to_duration", &[s(x)])
}

#[test]
fn integers() {
    let max = Value::Int(i64::MAX);
    let min = Value::Int(i64::MIN);
    assert_eq!(
        err("add_int64", &[max.clone(), Value::Int(1)]),
        "integer overflow"
    );
    assert_eq!(
        err("subtract_int64", &[min.clone(), Value::Int(1)]),
        "integer overflow"
    );
    assert_eq!(
        err("multiply_int64", &[max, Value::Int(2)]),
        "integer overflow"
    );
    assert_eq!(
        err("negate_int64", std::slice::from_ref(&min)),
        "integer overflow"
    );
    assert_eq!(
        err("divide_int64", &[min.clone(), Value::Int(-1)]),
        "integer overflow"
    );
    assert_eq!(
        err("modulo_int64", &[min, Value::Int(-1)]),
        "integer overflow"
    );
    assert_eq!(
        int(ok("divide_int64", &[Value::Int(-5), Value::Int(3)])),
        -1
    );
    assert_eq!(
        int(ok("modulo_int64", &[Value::Int(-5), Value::Int(3)])),
        -2
    );
    assert_eq!(int(ok("modulo_int64", &[Value::Int(5), Value::Int(-3)])), 2);
    assert_eq!(
        err("divide_int64", &[Value::Int(1), Value::Int(0)]),
        "division by zero"
    );
    assert_eq!(
        err("modulo_int64", &[Value::Int(1), Value::Int(0)]),
        "modulus by zero"
    );
    assert_eq!(
        err("subtract_uint64", &[Value::Uint(0), Value::Uint(1)]),
        "unsigned integer overflow"
    );
    assert_eq!(
        err("add_uint64", &[Value::Uint(u64::MAX), Value::Uint(1)]),
        "unsigned integer overflow"
    );
    assert_eq!(
        err("divide_uint64", &[Value::Uint(5), Value::Uint(0)]),
        "division by zero"
    );
    assert_eq!(
        err("add_int64", &[Value::Int(1), Value::Uint(1)]),
        "no such overload"
    );
}

#[test]
fn doubles() {
    let nan = Value::Double(f64::NAN);
    assert!(!boolean(ok("equals", &[nan.clone(), nan.clone()])));
    assert!(boolean(ok("not_equals", &[nan.clone(), nan.clone()])));
    assert_eq!(
        err("less_double", &[nan.clone(), Value::Double(1.0)]),
        "NaN values cannot be ordered"
    );
    let inf = ok(
        "multiply_double",
        &[ok("string_to_double", &[s("1e308")]), Value::Double(10.0)],
    );
    assert_eq!(text(ok("double_to_string", &[inf])), "+Inf");
    for (x, want) in [
        (1.0, "1"),
        (1.5, "1.5"),
        (100.0, "100"),
        (999_999.0, "999999"),
        (1_000_000.0, "1e+06"),
        (123_456.7, "123456.7"),
        (123_456_789.0, "1.23456789e+08"),
        (1e20, "1e+20"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (1e-7, "1e-07"),
        (0.1 + 0.2, "0.30000000000000004"),
        (-0.0, "-0"),
        (f64::NEG_INFINITY, "-Inf"),
        (f64::NAN, "NaN"),
    ] {
        assert_eq!(text(ok("double_to_string", &[Value::Double(x)])), want);
    }
    let big = ok("int64_to_double", &[Value::Int(9_007_199_254_740_993)]);
    assert_eq!(
        text(ok("double_to_string", &[big])),
        "9.007199254740992e+15"
    );
}

#[test]
fn conversions() {
    let overflow = |id: &str, v: Value| err(id, &[v]);
    assert_eq!(
        overflow(
            "double_to_int64",
            Value::Double(-9_223_372_036_854_775_808.0)
        ),
        "integer overflow"
    );
    assert_eq!(
        int(ok(
            "double_to_int64",
            &[Value::Double(9.223_372_036_854_775e18)]
        )),
        9_223_372_036_854_774_784
    );
    assert_eq!(
        overflow("double_to_int64", Value::Double(1e19)),
        "integer overflow"
    );
    assert_eq!(
        overflow("double_to_uint64", Value::Double(-0.5)),
        "unsigned integer overflow"
    );
    assert_eq!(
        overflow("uint64_to_int64", Value::Uint(u64::MAX)),
        "integer overflow"
    );
    assert_eq!(
        overflow("int64_to_uint64", Value::Int(-1)),
        "unsigned integer overflow"
    );
    for bad in ["0x10", " 1", "1e3", "١٢", "9223372036854775808"] {
        assert_eq!(
            err("string_to_int64", &[s(bad)]),
            "type conversion error from 'string' to 'int'"
        );
    }
    assert_eq!(int(ok("string_to_int64", &[s("+1")])), 1);
    assert_eq!(
        int(ok("string_to_int64", &[s("-9223372036854775808")])),
        i64::MIN
    );
    assert_eq!(
        err("string_to_uint64", &[s("-0")]),
        "type conversion error from 'string' to 'uint'"
    );
    assert!(matches!(ok("string_to_double", &[s("1_000")]), Value::Double(d) if d == 1000.0));
    assert!(
        matches!(ok("string_to_double", &[s("-Infinity")]), Value::Double(d) if d == f64::NEG_INFINITY)
    );
    assert_eq!(
        err("string_to_double", &[s("1e400")]),
        "type conversion error from 'string' to 'double'"
    );
    assert!(boolean(ok("string_to_bool", &[s("t")])));
    assert_eq!(
        err("string_to_bool", &[s("tRuE")]),
        "type conversion error from 'string' to 'bool'"
    );
    assert_eq!(text(ok("uint64_to_string", &[Value::Uint(1)])), "1");
    assert_eq!(
        err("bytes_to_string", &[Value::bytes(vec![0xffu8])]),
        "invalid UTF-8 in bytes, cannot convert to string"
    );
    for (d, want) in [
        ("1.5s", "1.5s"),
        ("1h", "3600s"),
        ("-1m30s", "-90s"),
        ("0s", "0s"),
        ("1ns", "0.000000001s"),
    ] {
        assert_eq!(text(ok("duration_to_string", &[dur(d)])), want);
    }
    assert_eq!(
        text(ok(
            "timestamp_to_string",
            &[ts("2023-01-01T02:00:00+05:30")]
        )),
        "2023-01-01T02:00:00+05:30"
    );
    assert_eq!(
        text(ok(
            "timestamp_to_string",
            &[ts("2011-08-18T19:03:37.01+01:00")]
        )),
        "2011-08-18T19:03:37.01+01:00"
    );
    assert!(boolean(ok(
        "equals",
        &[ts("2023-01-01T02:00:00+05:30"), ts("2022-12-31T20:30:00Z")]
    )));
    assert_eq!(int(ok("duration_to_int64", &[dur("1s")])), 1_000_000_000);
    assert_eq!(
        int(ok("timestamp_to_int64", &[ts("1970-01-01T00:01:00Z")])),
        60
    );
    assert!(matches!(ok("to_dyn", &[Value::Int(1)]), Value::Int(1)));
}

#[test]
fn timestamps_and_durations() {
    assert_eq!(
        err("string_to_timestamp", &[s("0000-01-01T00:00:00Z")]),
        "timestamp overflow"
    );
    assert_eq!(
        err("int64_to_timestamp", &[Value::Int(253_402_300_800)]),
        "timestamp overflow"
    );
    assert_eq!(
        err("int64_to_timestamp", &[Value::Int(-62_135_596_801)]),
        "timestamp overflow"
    );
    assert_eq!(
        err(
            "add_timestamp_duration",
            &[ts("9999-12-31T23:59:59Z"), dur("1s")]
        ),
        "timestamp overflow"
    );
    assert_eq!(
        err(
            "subtract_timestamp_duration",
            &[ts("0001-01-01T00:00:00Z"), dur("1ns")]
        ),
        "timestamp overflow"
    );
    assert_eq!(
        err("string_to_timestamp", &[s("10000-01-01T00:00:00Z")]),
        "type conversion error from 'string' to 'google.protobuf.Timestamp'"
    );
    for bad in [
        "2023-01-01T00:00:00z",
        "2023-01-01t00:00:00Z",
        "2023-01-01",
        "2023-01-01T00:00:60Z",
    ] {
        assert!(call("string_to_timestamp", &[s(bad)]).is_err(), "{bad}");
    }
    assert!(call("string_to_duration", &[s("2562047h")]).is_ok());
    for bad in ["2562048h", "315576000000s", "1d", "1", ""] {
        assert_eq!(
            err("string_to_duration", &[s(bad)]),
            "type conversion error from 'string' to 'google.protobuf.Duration'",
            "{bad}"
        );
    }
    assert!(call("string_to_duration", &[s("0")]).is_ok());
    assert_eq!(
        err(
            "subtract_timestamp_timestamp",
            &[ts("9999-12-31T23:59:59Z"), ts("0001-01-01T00:00:00Z")]
        ),
        "integer overflow"
    );
    let t = ts("2023-01-01T02:00:00+05:30");
    assert_eq!(int(ok("timestamp_to_hours", std::slice::from_ref(&t))), 20);
    let t2 = ts("2023-01-01T02:00:00Z");
    assert_eq!(
        int(ok(
            "timestamp_to_hours_with_tz",
            &[t2.clone(), s("America/Los_Angeles")]
        )),
        18
    );
    assert_eq!(
        int(ok("timestamp_to_hours_with_tz", &[t2.clone(), s("+25:00")])),
        3
    );
    assert_eq!(
        err("timestamp_to_hours_with_tz", &[t2, s("Invalid/Zone")]),
        "unknown time zone Invalid/Zone"
    );
    assert_eq!(
        int(ok(
            "timestamp_to_day_of_year_with_tz",
            &[ts("2024-12-31T23:00:00Z"), s("+02:00")]
        )),
        0
    );
    assert_eq!(int(ok("duration_to_minutes", &[dur("3h25m")])), 205);
    assert_eq!(int(ok("duration_to_hours", &[dur("90m")])), 1);
    assert_eq!(int(ok("duration_to_hours", &[dur("-90m")])), -1);
    assert_eq!(int(ok("duration_to_milliseconds", &[dur("1.234s")])), 1234);
}

#[test]
fn strings_and_regex() {
    assert_eq!(int(ok("size_string", &[s("héllo")])), 5);
    assert_eq!(
        int(ok("size_bytes", &[ok("string_to_bytes", &[s("héllo")])])),
        6
    );
    assert!(!boolean(ok("less_string", &[s("é"), s("z")])));
    assert!(boolean(ok("less_string", &[s("Z"), s("a")])));
    assert!(boolean(ok("less_string", &[s("ab"), s("abc")])));
    assert!(boolean(ok("contains_string", &[s("abc"), s("")])));
    assert!(boolean(ok("starts_with_string", &[s("abc"), s("")])));
    assert!(boolean(ok("matches_string", &[s("abc"), s("b")])));
    assert!(boolean(ok("matches", &[s("ABC"), s("(?i)b")])));
    assert_eq!(
        err("matches_string", &[s("abc"), s("[")]),
        "error parsing regexp: missing closing ]: `[`"
    );
}

#[test]
fn equality_and_ordering() {
    let eq = |a: Value, b: Value| boolean(ok("equals", &[a, b]));
    assert!(eq(Value::Int(1), Value::Double(1.0)));
    assert!(eq(Value::Int(1), Value::Uint(1)));
    assert!(!eq(Value::Int(-1), Value::Uint(u64::MAX)));
    assert!(eq(
        Value::Int(9_007_199_254_740_993),
        Value::Double(9_007_199_254_740_992.0)
    ));
    assert!(eq(
        Value::Int(i64::MAX),
        Value::Double(9_223_372_036_854_775_808.0)
    ));
    assert!(eq(
        Value::Uint(u64::MAX),
        Value::Double(18_446_744_073_709_551_616.0)
    ));
    assert!(!eq(Value::Int(1), s("a")));
    assert!(!eq(Value::Bool(true), Value::Int(1)));
    assert!(!eq(Value::Null, Value::Int(0)));
    assert!(eq(Value::Null, Value::Null));
    assert!(eq(
        Value::list(vec![Value::Int(1)]),
        Value::list(vec![Value::Uint(1)])
    ));
    assert!(eq(
        Value::map([(Key::String("a".into()), Value::Int(1))]),
        Value::map([(Key::String("a".into()), Value::Double(1.0))])
    ));
    assert!(boolean(ok(
        "less_int64_double",
        &[Value::Int(1), Value::Double(1.5)]
    )));
    assert!(!boolean(ok(
        "less_uint64_int64",
        &[Value::Uint(1), Value::Int(-1)]
    )));
    assert!(boolean(ok(
        "less_int64_uint64",
        &[Value::Int(-1), Value::Uint(1)]
    )));
    assert!(!boolean(ok(
        "less_int64_double",
        &[
            Value::Int(i64::MAX),
            Value::Double(9_223_372_036_854_775_808.0)
        ]
    )));
    assert!(boolean(ok(
        "less_bool",
        &[Value::Bool(false), Value::Bool(true)]
    )));
    assert!(boolean(ok("less_duration", &[dur("2h"), dur("3h")])));
}

#[test]
fn membership_and_indexing() {
    let in_list = |e: Value, l: Vec<Value>| boolean(ok("in_list", &[e, Value::list(l)]));
    assert!(in_list(Value::Int(1), vec![Value::Double(1.0)]));
    assert!(in_list(
        Value::Double(2.0),
        vec![Value::Int(1), Value::Int(2)]
    ));
    assert!(!in_list(
        Value::Double(1.5),
        vec![Value::Int(1), Value::Int(2)]
    ));
    assert!(boolean(ok(
        "in_map",
        &[Value::Int(1), Value::map([(Key::Uint(1), s("a"))])]
    )));
    assert!(boolean(ok(
        "in_map",
        &[
            s("a"),
            Value::map([(Key::String("a".into()), Value::Int(1))])
        ]
    )));
    let m = Value::map([(Key::Int(1), s("a"))]);
    assert_eq!(text(ok("index_map", &[m.clone(), Value::Double(1.0)])), "a");
    assert_eq!(text(ok("index_map", &[m.clone(), Value::Uint(1)])), "a");
    assert_eq!(
        err("index_map", &[m, Value::Double(1.5)]),
        "no such key: 1.5"
    );
    assert_eq!(
        err(
            "index_map",
            &[
                Value::map([(Key::String("a".into()), Value::Int(1))]),
                s("b")
            ]
        ),
        "no such key: b"
    );
    let l = Value::list(vec![Value::Int(1), Value::Int(2)]);
    assert_eq!(int(ok("index_list", &[l.clone(), Value::Double(1.0)])), 2);
    assert_eq!(
        err("index_list", &[l.clone(), Value::Int(2)]),
        "index out of bounds: 2"
    );
    assert_eq!(
        err("index_list", &[l, Value::Int(-1)]),
        "index out of bounds: -1"
    );
    assert_eq!(int(ok("size_map", &[Value::map([])])), 0);
    assert_eq!(int(ok("list_size", &[Value::list(vec![Value::Null])])), 1);
}

#[test]
fn optionals_and_types() {
    assert!(matches!(
        ok("optional_ofNonZeroValue", &[Value::Int(0)]),
        Value::Optional(None)
    ));
    assert!(matches!(
        ok("optional_ofNonZeroValue", &[s("")]),
        Value::Optional(None)
    ));
    assert!(matches!(
        ok("optional_ofNonZeroValue", &[Value::list(vec![])]),
        Value::Optional(None)
    ));
    assert!(matches!(
        ok("optional_ofNonZeroValue", &[Value::map([])]),
        Value::Optional(None)
    ));
    assert_eq!(
        err("optional_value", &[ok("optional_none", &[])]),
        "optional.none() dereference"
    );
    assert!(boolean(ok(
        "equals",
        &[ok("optional_none", &[]), ok("optional_none", &[])]
    )));
    assert!(boolean(ok(
        "equals",
        &[
            ok("optional_of", &[Value::Int(1)]),
            ok("optional_of", &[Value::Int(1)])
        ]
    )));
    let nested = ok("optional_of", &[ok("optional_none", &[])]);
    assert!(boolean(ok("optional_hasValue", &[nested])));
    let ty = |v: Value| ok("type", &[v]);
    assert!(boolean(ok(
        "equals",
        &[ty(ty(Value::Int(1))), ty(ty(Value::Null))]
    )));
    assert!(boolean(ok(
        "equals",
        &[
            ty(Value::list(vec![Value::Int(1)])),
            Value::type_value(cel_types::Type::list(cel_types::Type::param("A")))
        ]
    )));
    assert!(boolean(ok(
        "equals",
        &[ty(Value::Null), Value::type_value(cel_types::Type::Null)]
    )));
    assert_eq!(
        cel_runtime::format::to_cel_literal(&ty(ok("optional_of", &[Value::Int(1)]))),
        "optional_type"
    );
}

/// The time-zone cases of the conformance suite (`timestamps.textproto`).
#[test]
fn conformance_time_zones() {
    let t = ts("2009-02-13T23:31:30Z");
    let t2 = ts("2009-02-13T02:00:00Z");
    let cases: &[(&str, &Value, &str, i64)] = &[
        (
            "timestamp_to_day_of_month_1_based_with_tz",
            &t,
            "Australia/Sydney",
            14,
        ),
        ("timestamp_to_day_of_month_with_tz", &t, "US/Central", 12),
        ("timestamp_to_day_of_month_with_tz", &t, "+11:00", 13),
        ("timestamp_to_day_of_month_with_tz", &t2, "-02:30", 11),
        (
            "timestamp_to_day_of_month_with_tz",
            &t2,
            "America/St_Johns",
            11,
        ),
        ("timestamp_to_day_of_week_with_tz", &t, "UTC", 5),
        ("timestamp_to_day_of_year_with_tz", &t, "US/Central", 43),
        ("timestamp_to_year_with_tz", &t, "-09:30", 2009),
        ("timestamp_to_hours_with_tz", &t, "02:00", 1),
        ("timestamp_to_minutes_with_tz", &t, "Asia/Kathmandu", 16),
        ("timestamp_to_month_with_tz", &t, "UTC", 1),
        ("timestamp_to_seconds_tz", &t, "-00:00", 30),
    ];
    for (id, ts, tz, want) in cases {
        assert_eq!(int(ok(id, &[(*ts).clone(), s(tz)])), *want, "{id} {tz}");
    }
    assert_eq!(
        int(ok("timestamp_to_int64", std::slice::from_ref(&t))),
        1_234_567_890
    );
    assert_eq!(
        text(ok("timestamp_to_string", &[t])),
        "2009-02-13T23:31:30Z"
    );
    assert_eq!(
        text(ok(
            "timestamp_to_string",
            &[ts("9999-12-31T23:59:59.999999999Z")]
        )),
        "9999-12-31T23:59:59.999999999Z"
    );
    assert_eq!(
        text(ok("duration_to_string", &[dur("1000000s")])),
        "1000000s"
    );
    assert_eq!(int(ok("duration_to_hours", &[dur("10000s")])), 2);
    assert_eq!(int(ok("duration_to_minutes", &[dur("3730s")])), 62);
    assert_eq!(int(ok("duration_to_seconds", &[dur("3730s")])), 3730);
    assert!(boolean(ok(
        "equals",
        &[
            ok(
                "add_timestamp_duration",
                &[ts("0001-01-01T00:00:01.000000001Z"), dur("-999999999ns")]
            ),
            ts("0001-01-01T00:00:00.000000002Z")
        ]
    )));
    assert!(boolean(ok(
        "equals",
        &[
            ok(
                "add_timestamp_duration",
                &[ts("0001-01-01T00:00:01.999999999Z"), dur("999999999ns")]
            ),
            ts("0001-01-01T00:00:02.999999998Z")
        ]
    )));
    assert_eq!(
        err(
            "add_timestamp_duration",
            &[ts("9999-12-31T23:59:59.999999999Z"), dur("1ns")]
        ),
        "timestamp overflow"
    );
    assert_eq!(
        err(
            "subtract_timestamp_timestamp",
            &[ts("0001-01-01T00:00:00Z"), ts("9999-12-31T23:59:59Z")]
        ),
        "integer overflow"
    );
    // cel-go's int64-nanosecond durations cannot even hold 200000000000s.
    assert_eq!(
        err("string_to_duration", &[s("200000000000s")]),
        "type conversion error from 'string' to 'google.protobuf.Duration'"
    );
    assert_eq!(
        err("add_duration_duration", &[dur("2562047h"), dur("2562047h")]),
        "integer overflow"
    );
}

#[test]
fn dispatch_accepts_values_by_declared_type() {
    use cel_runtime::{ParamKinds, value_matches};
    use cel_types::{Primitive, Type};
    let values = [
        Value::Null,
        Value::Bool(true),
        Value::Int(1),
        Value::Uint(1),
        Value::Double(1.0),
        s("a"),
        Value::Bytes(b"a".to_vec().into()),
        Value::list(vec![Value::Int(1)]),
        Value::map(vec![(Key::Int(1), Value::Int(1))]),
        ts("2024-01-01T00:00:00Z"),
        dur("1s"),
        Value::Type(Type::Int.into()),
        Value::Optional(None),
    ];
    // For each type, the values (by position above) it accepts.
    let table: [(Type, &[usize]); 13] = [
        (Type::Dyn, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
        (
            Type::TypeParam("A".into()),
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        ),
        (Type::Null, &[0]),
        (Type::Bool, &[1]),
        (Type::Int, &[2]),
        (Type::Uint, &[3]),
        (Type::String, &[5]),
        (Type::list(Type::Dyn), &[7]),
        (Type::map(Type::String, Type::Dyn), &[8]),
        (Type::Timestamp, &[9]),
        (Type::Wrapper(Primitive::Double), &[0, 4]),
        (Type::Wrapper(Primitive::Bytes), &[0, 6]),
        (Type::optional(Type::Int), &[12]),
    ];
    for (t, accepted) in &table {
        let kinds = ParamKinds::of(t);
        for (i, v) in values.iter().enumerate() {
            let want = accepted.contains(&i);
            assert_eq!(value_matches(v, t), want, "{t:?} and {v:?}");
            assert_eq!(kinds.accept(v, t), want, "{t:?} and {v:?}, by kinds");
        }
    }
    assert_eq!(
        ParamKinds::of(&Type::optional(Type::Int)),
        ParamKinds::Named
    );
    assert_ne!(ParamKinds::of(&Type::Bytes), ParamKinds::Named);
}
