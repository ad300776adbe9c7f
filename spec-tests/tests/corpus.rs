//! The loader against the real conformance data: sizes, ids, and a sample of converted cases.
//! Skipped with a note when the data is missing (failed under `CI=true`).

mod common;

use std::collections::{BTreeMap, HashSet};

use cel_runtime::{Duration, Key, Value};
use cel_types::{OverloadDecl, Primitive, Type};
use spec_tests::corpus::{Corpus, LoadError, TEST_FILE_MESSAGE, parse_test_file};
use spec_tests::{Case, Decl, Expectation};

fn load() -> Option<Corpus> {
    let dir = common::spec_dir_or_skip("corpus")?;
    Some(Corpus::load(&dir).expect("the corpus loads"))
}

fn case<'c>(corpus: &'c Corpus, id: &str) -> &'c Case {
    corpus
        .cases()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no case {id}"))
}

fn expected_value(case: &Case) -> &Value {
    match &case.expected {
        Expectation::Value(Ok(v)) => v,
        other => panic!("{}: expected a value, found {other:?}", case.id),
    }
}

fn map_entries(v: &Value) -> Vec<(Key, Value)> {
    match v {
        Value::Map(m) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        other => panic!("not a map: {other:?}"),
    }
}

#[test]
fn loads_30_files_197_sections_2456_cases() {
    let Some(corpus) = load() else { return };
    assert!(
        corpus.broken.is_empty(),
        "broken files: {:?}",
        corpus.broken
    );
    assert_eq!(corpus.files.len(), 30);
    assert_eq!(corpus.section_count(), 197);
    assert_eq!(corpus.cases().count(), 2456);

    let unknowns = corpus.files.iter().find(|f| f.name == "unknowns").unwrap();
    assert!(unknowns.sections.is_empty());
    let deduction = corpus
        .files
        .iter()
        .find(|f| f.name == "type_deduction")
        .unwrap();
    assert_eq!(deduction.declared_name, "type_deductions");

    // Ids are unique, and carry an index exactly where names repeat within a section.
    let mut ids = HashSet::new();
    for c in corpus.cases() {
        assert!(ids.insert(c.id.as_str()), "duplicate id {}", c.id);
        assert!(!c.expr.is_empty(), "{} has no expression", c.id);
    }
    let indexed: Vec<&str> = corpus
        .cases()
        .filter(|c| c.id.contains('#'))
        .map(|c| c.id.as_str())
        .collect();
    assert!(indexed.contains(&"dynamic/float/field_assign_proto2_subnorm#7"));
    assert!(indexed.contains(&"string_ext/index_of/empty_index#0"));
    assert!(indexed.contains(&"string_ext/index_of/empty_index#3"));
    assert_eq!(indexed.len(), 8, "{indexed:?}");
    let dup = case(&corpus, "string_ext/index_of/empty_index#3");
    assert_eq!((dup.name.as_str(), dup.index), ("empty_index", 3));
}

#[test]
fn only_proto_messages_are_unsupported() {
    let Some(corpus) = load() else { return };
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for c in corpus.cases() {
        let kind = match &c.expected {
            Expectation::Value(_) => "value",
            Expectation::Typed { .. } => "typed",
            Expectation::EvalError(_) => "eval_error",
            Expectation::AnyEvalErrors(_) => "any_eval_errors",
            Expectation::Unknown(_) => "unknown",
            Expectation::AnyUnknowns(_) => "any_unknowns",
        };
        *kinds.entry(kind).or_default() += 1;
        if let Some(u) = c.expected.unsupported() {
            *reasons.entry(format!("expected: {u}")).or_default() += 1;
        }
        if let Some((what, u)) = c.unsupported_input() {
            let what = what.split(' ').next().unwrap_or_default().to_string();
            *reasons.entry(format!("{what}: {u}")).or_default() += 1;
        }
    }
    assert_eq!(kinds["value"], 2167);
    assert_eq!(kinds["typed"], 47);
    assert_eq!(kinds["eval_error"], 242);
    // Everything converts, protobuf messages included.
    assert_eq!(reasons, BTreeMap::new());
}

#[test]
fn sample_cases_convert() {
    let Some(corpus) = load() else { return };

    let c = case(&corpus, "basic/self_eval_zeroish/self_eval_int_zero");
    assert_eq!(c.expr, "0");
    assert!(matches!(expected_value(c), Value::Int(0)));

    let c = case(&corpus, "basic/variables/self_eval_bound_lookup");
    assert_eq!(
        c.type_env,
        vec![Decl::Variable(cel_types::VariableDecl::new("x", Type::Int))]
    );
    assert!(matches!(c.bindings.as_slice(), [(n, Ok(Value::Int(123)))] if n == "x"));

    let c = case(&corpus, "basic/functions/unbound");
    assert!(c.disable_check);
    assert!(matches!(&c.expected, Expectation::EvalError(m) if m == &["unbound function"]));

    // Type values.
    let c = case(&corpus, "conversions/type/type_type");
    assert!(matches!(expected_value(c), Value::Type(t) if **t == Type::Type(None)));
    let c = case(&corpus, "timestamps/timestamp_conversions/toType_timestamp");
    assert!(matches!(expected_value(c), Value::Type(t) if **t == Type::Timestamp));

    // A google.protobuf.Duration inside an Any, as a binding.
    let c = corpus
        .cases()
        .find(|c| c.id == "timestamps/duration_converters/get_milliseconds")
        .unwrap();
    let Some((_, Ok(Value::Duration(d)))) = c.bindings.first() else {
        panic!("{:?}", c.bindings)
    };
    assert_eq!(
        *d,
        Duration {
            nanos: 123_321_456_789
        }
    );

    // google.protobuf.Struct and ListValue bindings become a map and a list.
    let structs: Vec<&Case> = corpus
        .cases()
        .filter(|c| {
            c.id.starts_with("dynamic/")
                && c.type_env.iter().any(|d| {
                    matches!(d, Decl::Variable(v) if v.ty == Type::map(Type::String, Type::Dyn))
                })
        })
        .collect();
    assert!(!structs.is_empty());
    let Some((_, Ok(v))) = structs[0].bindings.first() else {
        panic!("{:?}", structs[0].bindings)
    };
    assert_eq!(
        map_entries(v)
            .into_iter()
            .map(|(k, _)| k.to_string())
            .collect::<Vec<_>>(),
        vec!["first", "last"]
    );

    // Typed results, check-only cases and function declarations.
    let c = case(&corpus, "type_deduction/functions/function_result_type");
    assert!(c.check_only);
    assert!(matches!(
        &c.expected,
        Expectation::Typed {
            value: None,
            deduced_type: Ok(Type::String)
        }
    ));
    let Some(Decl::Function(f)) = c.type_env.first() else {
        panic!("{:?}", c.type_env)
    };
    assert_eq!(f.name, "fn");
    assert_eq!(
        f.overloads,
        vec![OverloadDecl::global(
            "fn_string_int",
            vec![Type::String, Type::Int],
            Type::String
        )]
    );
    let c = case(&corpus, "type_deduction/wrappers/wrapper_promotion");
    assert!(matches!(
        &c.expected,
        Expectation::Typed { deduced_type: Ok(t), .. } if *t == Type::list(Type::Wrapper(Primitive::Int))
    ));
    let c = case(
        &corpus,
        "type_deduction/legacy_nullable_types/null_assignable_to_abstract_parameter_candidate",
    );
    assert!(matches!(
        &c.expected,
        Expectation::Typed { deduced_type: Ok(t), .. } if *t == Type::optional(Type::Int)
    ));

    // Containers.
    assert!(
        corpus
            .cases()
            .any(|c| c.container == "cel.expr.conformance.proto2")
    );
}

#[test]
fn file_selection() {
    let Some(dir) = common::spec_dir_or_skip("file_selection") else {
        return;
    };
    let corpus = Corpus::load_selected(&dir, &["lists".into(), "basic".into()]).unwrap();
    let names: Vec<&str> = corpus.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, vec!["basic", "lists"]);
    match Corpus::load_selected(&dir, &["no_such_file".into()]) {
        Err(LoadError::UnknownFiles { unknown, available }) => {
            assert_eq!(unknown, vec!["no_such_file"]);
            assert_eq!(available.len(), 30);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_data_says_what_to_set() {
    let dir = std::env::temp_dir().join("spec-tests-no-such-cel-spec");
    let err = Corpus::load(&dir).unwrap_err();
    assert!(matches!(err, LoadError::DataNotFound { .. }));
    let text = err.to_string();
    assert!(text.contains("set CEL_SPEC_DIR"), "{text}");
    assert!(text.contains("tests/simple/testdata"), "{text}");
}

#[test]
fn malformed_and_minimal_files() {
    let Some(pool) = common::pool_or_skip("malformed_and_minimal_files") else {
        return;
    };
    let desc = pool.get_message_by_name(TEST_FILE_MESSAGE).unwrap();

    // A syntax error is an error naming its line, not a panic.
    let err = parse_test_file(
        &desc,
        "bad",
        "name: \"bad\"\nsection {\n  test { expr: }\n}\n",
    )
    .unwrap_err();
    assert!(err.contains("line 3"), "{err}");
    let err = parse_test_file(&desc, "bad", "no_such_field: 1").unwrap_err();
    assert!(!err.is_empty());

    // A test without a result matcher expects true; names may repeat.
    let file = parse_test_file(
        &desc,
        "mini",
        r#"name: "mini"
           section { name: "s"
             test { name: "t" expr: "1 == 1" }
             test { name: "t" expr: "x" disable_macros: true container: "a.b"
                    bindings { key: "x" value { unknown { exprs: 1 } } } }
           }"#,
    )
    .unwrap();
    let cases = &file.sections[0].cases;
    assert!(matches!(
        cases[0].expected,
        Expectation::Value(Ok(Value::Bool(true)))
    ));
    assert_eq!(cases[0].id, "mini/s/t#0");
    assert_eq!(cases[1].id, "mini/s/t#1");
    assert!(cases[1].disable_macros);
    assert_eq!(cases[1].container, "a.b");
    assert!(matches!(
        cases[1].bindings.as_slice(),
        [(n, Err(u))] if n == "x" && u.reason() == "unknown bindings"
    ));
}
