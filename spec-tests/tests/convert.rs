//! Conversions of representative `cel.expr.Value`, `cel.expr.Type` and `cel.expr.Decl`
//! messages, written as text protos and parsed with cel-spec's descriptor pool.
//! Skipped with a note when the data (which holds the protos) is missing.

mod common;

use cel_runtime::{Duration, Key, Timestamp, Value};
use cel_types::{FunctionDecl, OverloadDecl, Primitive, Type, VariableDecl};
use prost_reflect::{DescriptorPool, DynamicMessage};
use spec_tests::convert::{decl_from_proto, type_from_name, type_from_proto, value_from_proto};
use spec_tests::{Converted, Decl};

fn msg(pool: &DescriptorPool, name: &str, text: &str) -> DynamicMessage {
    let desc = pool.get_message_by_name(name).unwrap();
    DynamicMessage::parse_text_format(desc, text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn value(pool: &DescriptorPool, text: &str) -> Converted<Value> {
    value_from_proto(&msg(pool, "cel.expr.Value", text))
}

fn ty(pool: &DescriptorPool, text: &str) -> Converted<Type> {
    type_from_proto(&msg(pool, "cel.expr.Type", text))
}

fn reason<T: std::fmt::Debug>(c: Converted<T>) -> String {
    c.expect_err("expected an unsupported conversion").0
}

#[test]
fn scalar_values() {
    let Some(pool) = common::pool_or_skip("scalar_values") else {
        return;
    };
    assert!(matches!(
        value(&pool, "null_value: NULL_VALUE"),
        Ok(Value::Null)
    ));
    assert!(matches!(
        value(&pool, "bool_value: false"),
        Ok(Value::Bool(false))
    ));
    assert!(matches!(
        value(&pool, "int64_value: -7"),
        Ok(Value::Int(-7))
    ));
    assert!(matches!(
        value(&pool, "uint64_value: 18446744073709551615"),
        Ok(Value::Uint(u64::MAX))
    ));
    assert!(matches!(value(&pool, "double_value: -0.5"), Ok(Value::Double(d)) if d == -0.5));
    assert!(matches!(value(&pool, "double_value: nan"), Ok(Value::Double(d)) if d.is_nan()));
    assert!(matches!(&value(&pool, r#"string_value: "é""#), Ok(Value::String(s)) if &**s == "é"));
    assert!(
        matches!(&value(&pool, r#"bytes_value: "\xff\000""#), Ok(Value::Bytes(b)) if **b == [0xff, 0])
    );
    // Enums are ints, as cel-go treats legacy enums.
    assert!(matches!(
        value(&pool, r#"enum_value { type: "a.E" value: -2 }"#),
        Ok(Value::Int(-2))
    ));
    assert!(reason(value(&pool, "")).contains("no kind"));
}

#[test]
fn aggregate_values() {
    let Some(pool) = common::pool_or_skip("aggregate_values") else {
        return;
    };
    let Ok(Value::List(l)) = &value(
        &pool,
        "list_value { values { int64_value: 1 } values { list_value {} } }",
    ) else {
        panic!()
    };
    assert!(matches!(l.as_slice(), [Value::Int(1), Value::List(inner)] if inner.is_empty()));

    let Ok(Value::Map(m)) = &value(
        &pool,
        r#"map_value {
             entries { key { string_value: "k" } value { bool_value: true } }
             entries { key { uint64_value: 2 } value { null_value: NULL_VALUE } }
             entries { key { bool_value: true } value { int64_value: 3 } }
             entries { key { int64_value: -1 } value { string_value: "v" } }
           }"#,
    ) else {
        panic!()
    };
    let keys: Vec<Key> = m.keys().cloned().collect();
    assert_eq!(
        keys,
        vec![
            Key::String("k".into()),
            Key::Uint(2),
            Key::Bool(true),
            Key::Int(-1)
        ]
    );
    // Double (and other) keys are not CEL map keys.
    let r = reason(value(
        &pool,
        "map_value { entries { key { double_value: 1.5 } value { int64_value: 1 } } }",
    ));
    assert!(r.contains("map key"), "{r}");
}

#[test]
fn type_values() {
    for (name, t) in [
        ("int", Type::Int),
        ("uint", Type::Uint),
        ("double", Type::Double),
        ("bool", Type::Bool),
        ("string", Type::String),
        ("bytes", Type::Bytes),
        ("null_type", Type::Null),
        ("type", Type::Type(None)),
        ("list", Type::list(Type::Dyn)),
        ("map", Type::map(Type::Dyn, Type::Dyn)),
        ("optional_type", Type::optional(Type::Dyn)),
        ("google.protobuf.Timestamp", Type::Timestamp),
        ("google.protobuf.Duration", Type::Duration),
        ("google.protobuf.Int32Value", Type::Wrapper(Primitive::Int)),
        (
            "google.protobuf.BytesValue",
            Type::Wrapper(Primitive::Bytes),
        ),
        (
            "cel.expr.conformance.proto3.TestAllTypes",
            Type::message("cel.expr.conformance.proto3.TestAllTypes"),
        ),
        (
            "cel.expr.conformance.proto2.GlobalEnum",
            Type::message("cel.expr.conformance.proto2.GlobalEnum"),
        ),
    ] {
        assert_eq!(type_from_name(name), t, "{name}");
    }
    let Some(pool) = common::pool_or_skip("type_values") else {
        return;
    };
    assert!(
        matches!(&value(&pool, r#"type_value: "map""#), Ok(Value::Type(t)) if **t == Type::map(Type::Dyn, Type::Dyn))
    );
}

#[test]
fn well_known_objects() {
    let Some(pool) = common::pool_or_skip("well_known_objects") else {
        return;
    };
    let any = |body: &str| value(&pool, &format!("object_value {{ {body} }}"));

    assert!(matches!(
        any("[type.googleapis.com/google.protobuf.Timestamp] { seconds: 1 nanos: 2 }"),
        Ok(Value::Timestamp(t)) if t == Timestamp::utc(1, 2)
    ));
    assert!(matches!(
        any("[type.googleapis.com/google.protobuf.Duration] { seconds: -1 nanos: -500 }"),
        Ok(Value::Duration(Duration {
            nanos: -1_000_000_500
        }))
    ));
    assert!(
        reason(any(
            "[type.googleapis.com/google.protobuf.Timestamp] { seconds: 253402300800 }"
        ))
        .contains("timestamp overflow")
    );
    assert!(
        reason(any(
            "[type.googleapis.com/google.protobuf.Duration] { seconds: 9223372036854775807 }"
        ))
        .contains("out of range")
    );

    assert!(matches!(
        any("[type.googleapis.com/google.protobuf.Int32Value] { value: -3 }"),
        Ok(Value::Int(-3))
    ));
    assert!(matches!(
        any("[type.googleapis.com/google.protobuf.Int64Value] { value: 4 }"),
        Ok(Value::Int(4))
    ));
    assert!(matches!(
        any("[type.googleapis.com/google.protobuf.UInt32Value] { value: 5 }"),
        Ok(Value::Uint(5))
    ));
    assert!(matches!(
        any("[type.googleapis.com/google.protobuf.UInt64Value] { value: 6 }"),
        Ok(Value::Uint(6))
    ));
    assert!(
        matches!(any("[type.googleapis.com/google.protobuf.FloatValue] { value: 1.5 }"), Ok(Value::Double(d)) if d == 1.5)
    );
    assert!(
        matches!(any("[type.googleapis.com/google.protobuf.DoubleValue] { value: 2.5 }"), Ok(Value::Double(d)) if d == 2.5)
    );
    assert!(matches!(
        any("[type.googleapis.com/google.protobuf.BoolValue] { value: true }"),
        Ok(Value::Bool(true))
    ));
    assert!(
        matches!(&any(r#"[type.googleapis.com/google.protobuf.StringValue] { value: "s" }"#), Ok(Value::String(s)) if &**s == "s")
    );
    assert!(
        matches!(&any(r#"[type.googleapis.com/google.protobuf.BytesValue] { value: "b" }"#), Ok(Value::Bytes(b)) if **b == *b"b")
    );
    // A wrapper with its default value is still the primitive.
    assert!(matches!(
        any("[type.googleapis.com/google.protobuf.Int64Value] {}"),
        Ok(Value::Int(0))
    ));

    // JSON types.
    assert!(matches!(
        any("[type.googleapis.com/google.protobuf.Value] { null_value: NULL_VALUE }"),
        Ok(Value::Null)
    ));
    assert!(matches!(
        any("[type.googleapis.com/google.protobuf.Value] {}"),
        Ok(Value::Null)
    ));
    assert!(
        matches!(any("[type.googleapis.com/google.protobuf.Value] { number_value: 1 }"), Ok(Value::Double(d)) if d == 1.0)
    );
    let Ok(Value::Map(m)) = &any(r#"[type.googleapis.com/google.protobuf.Struct] {
             fields { key: "b" value { list_value { values { bool_value: true } } } }
             fields { key: "a" value { struct_value {} } }
           }"#)
    else {
        panic!()
    };
    let entries: Vec<(String, &Value)> = m.iter().map(|(k, v)| (k.to_string(), v)).collect();
    assert!(
        matches!(entries.as_slice(), [(a, Value::Map(_)), (b, Value::List(_))] if a == "a" && b == "b")
    );
    assert!(matches!(
        &any(r#"[type.googleapis.com/google.protobuf.ListValue] { values { string_value: "x" } }"#),
        Ok(Value::List(l)) if l.len() == 1
    ));

    // An Any inside an Any is unpacked again.
    assert!(matches!(
        any(r#"[type.googleapis.com/google.protobuf.Any] {
                 [type.googleapis.com/google.protobuf.BoolValue] { value: true } }"#),
        Ok(Value::Bool(true))
    ));

    // Other messages are message values, an Any inside an Any unpacked first.
    let message = |c: Converted<Value>| match &c {
        Ok(Value::Message(m)) => m.type_name().to_string(),
        other => format!("{other:?}"),
    };
    assert_eq!(
        message(any("[type.googleapis.com/google.protobuf.Empty] {}")),
        "google.protobuf.Empty"
    );
    let m =
        any("[type.googleapis.com/cel.expr.conformance.proto3.TestAllTypes] { single_int32: 1 }");
    assert!(
        matches!(&m, Ok(Value::Message(v))
            if cel_runtime::proto::select(v, "single_int32").is_ok_and(|x| matches!(x, Value::Int(1)))),
        "{m:?}"
    );
    assert_eq!(
        message(any(r#"[type.googleapis.com/google.protobuf.Any] {
                 type_url: "type.googleapis.com/cel.expr.conformance.proto2.TestAllTypes"
                 value: "\x08\x96\x01" }"#)),
        "cel.expr.conformance.proto2.TestAllTypes"
    );
    // Unknown type URLs and undecodable payloads are reported, not panicked on.
    let r = reason(value(
        &pool,
        r#"object_value { type_url: "type.googleapis.com/no.Such" value: "" }"#,
    ));
    assert!(r.contains("unknown type"), "{r}");
    let r = reason(value(
        &pool,
        r#"object_value { type_url: "type.googleapis.com/google.protobuf.Int64Value" value: "\xff" }"#,
    ));
    assert!(r.contains("invalid google.protobuf.Any"), "{r}");
}

#[test]
fn types() {
    let Some(pool) = common::pool_or_skip("types") else {
        return;
    };
    let ok = |text: &str| ty(&pool, text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(ok("dyn {}"), Type::Dyn);
    assert_eq!(ok("null: NULL_VALUE"), Type::Null);
    assert_eq!(ok("primitive: BOOL"), Type::Bool);
    assert_eq!(ok("primitive: INT64"), Type::Int);
    assert_eq!(ok("primitive: UINT64"), Type::Uint);
    assert_eq!(ok("primitive: DOUBLE"), Type::Double);
    assert_eq!(ok("primitive: STRING"), Type::String);
    assert_eq!(ok("primitive: BYTES"), Type::Bytes);
    assert_eq!(ok("wrapper: INT64"), Type::Wrapper(Primitive::Int));
    assert_eq!(ok("well_known: ANY"), Type::Any);
    assert_eq!(ok("well_known: TIMESTAMP"), Type::Timestamp);
    assert_eq!(ok("well_known: DURATION"), Type::Duration);
    assert_eq!(
        ok("list_type { elem_type { primitive: INT64 } }"),
        Type::list(Type::Int)
    );
    assert_eq!(
        ok("map_type { key_type { primitive: STRING } value_type { dyn {} } }"),
        Type::map(Type::String, Type::Dyn)
    );
    assert_eq!(
        ok(r#"message_type: "cel.expr.conformance.proto3.TestAllTypes""#),
        Type::message("cel.expr.conformance.proto3.TestAllTypes")
    );
    assert_eq!(
        ok(r#"message_type: "google.protobuf.Struct""#),
        Type::map(Type::String, Type::Dyn)
    );
    assert_eq!(
        ok(r#"message_type: "google.protobuf.Int32Value""#),
        Type::Wrapper(Primitive::Int)
    );
    assert_eq!(ok(r#"type_param: "T""#), Type::param("T"));
    assert_eq!(ok("type { primitive: INT64 }"), Type::type_of(Type::Int));
    assert_eq!(ok("type {}"), Type::Type(None));
    assert_eq!(ok("error {}"), Type::Error);
    assert_eq!(
        ok(r#"abstract_type { name: "optional_type" parameter_types { primitive: STRING } }"#),
        Type::optional(Type::String)
    );
    assert_eq!(
        ok(
            r#"abstract_type { name: "tuple" parameter_types { dyn {} } parameter_types { type_param: "U" } }"#
        ),
        Type::Opaque("tuple".into(), vec![Type::Dyn, Type::param("U")].into())
    );
    assert_eq!(
        ok(r#"abstract_type { name: "net.IP" }"#),
        Type::opaque("net.IP")
    );

    assert!(reason(ty(&pool, "function { result_type { dyn {} } }")).contains("function"));
    assert!(reason(ty(&pool, "")).contains("no kind"));
    assert!(reason(ty(&pool, "primitive: PRIMITIVE_TYPE_UNSPECIFIED")).contains("primitive"));
    assert!(reason(ty(&pool, "list_type {}")).contains("element"));
}

#[test]
fn declarations() {
    let Some(pool) = common::pool_or_skip("declarations") else {
        return;
    };
    let decl = |text: &str| decl_from_proto(&msg(&pool, "cel.expr.Decl", text));
    assert_eq!(
        decl(r#"name: "x" ident { type { primitive: INT64 } }"#),
        Decl::Variable(VariableDecl::new("x", Type::Int))
    );
    assert_eq!(
        decl(
            r#"name: "f" function {
                 overloads { overload_id: "f_list" params { list_type { elem_type { type_param: "T" } } }
                             type_params: "T" result_type { type_param: "T" } }
                 overloads { overload_id: "string_f" params { primitive: STRING }
                             result_type { primitive: BOOL } is_instance_function: true }
               }"#
        ),
        Decl::Function(FunctionDecl::new(
            "f",
            vec![
                OverloadDecl::global(
                    "f_list",
                    vec![Type::list(Type::param("T"))],
                    Type::param("T")
                ),
                OverloadDecl::member("string_f", vec![Type::String], Type::Bool),
            ]
        ))
    );
    let d = decl(
        r#"name: "g" function { overloads { overload_id: "g" params { function {} } result_type { dyn {} } } }"#,
    );
    assert!(
        matches!(&d, Decl::Unsupported { name, reason } if name == "g" && reason.0 == "function types")
    );
    assert_eq!(d.name(), "g");
    assert!(matches!(decl(r#"name: "h""#), Decl::Unsupported { .. }));
    assert!(matches!(
        decl(r#"name: "i" ident {}"#),
        Decl::Unsupported { .. }
    ));
}
