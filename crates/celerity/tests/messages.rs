//! Protobuf messages through the facade: an environment given a descriptor pool checks field
//! types, and both backends read, test, build and compare messages, the activation's and
//! literals alike.

use celerity::{
    Backend, DescriptorPool, DynamicMessage, Env, MapActivation, ProgramOptions, Type, Value, proto,
};

const PROTO: &str = r#"
syntax = "proto3";
package shop;

import "google/protobuf/wrappers.proto";
import "google/protobuf/timestamp.proto";

message Item {
  string name = 1;
  int32 count = 2;
  repeated string tags = 3;
  map<string, int64> prices = 4;
  Item parent = 5;
  google.protobuf.Int64Value limit = 6;
  google.protobuf.Timestamp created = 7;
  Kind kind = 8;
  optional string note = 9;
  enum Kind { KIND_UNSPECIFIED = 0; BOOK = 1; }
}
"#;

/// The pool of `PROTO`, compiled once for all the tests.
fn pool() -> DescriptorPool {
    static POOL: std::sync::OnceLock<DescriptorPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("celerity-messages-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("shop.proto"), PROTO).unwrap();
        let mut compiler = protox::Compiler::new([&dir]).unwrap();
        compiler.include_imports(true);
        compiler.open_file("shop.proto").unwrap();
        let pool = compiler.descriptor_pool();
        let _ = std::fs::remove_dir_all(&dir);
        pool
    })
    .clone()
}

fn env(pool: &DescriptorPool) -> Env {
    Env::builder()
        .descriptor_pool(pool.clone())
        .container("shop")
        .variable("item", Type::message("shop.Item"))
        .build()
}

fn item(pool: &DescriptorPool) -> Value {
    let d = pool.get_message_by_name("shop.Item").unwrap();
    let m = DynamicMessage::parse_text_format(
        d,
        r#"name: "pen" count: 3 tags: ["a", "b"] prices { key: "eu" value: 7 }
           parent { name: "box" } kind: BOOK"#,
    )
    .unwrap();
    proto::from_message(m).unwrap()
}

fn eval_both(env: &Env, expr: &str, vars: &MapActivation) -> Result<Value, String> {
    let ast = env.compile(expr).map_err(|i| i.to_string())?;
    let mut results = Vec::new();
    for backend in [Backend::Interpreter, Backend::Jit] {
        let options = ProgramOptions::default().backend(backend);
        let p = env.program_with(&ast, options).unwrap();
        results.push(p.eval(vars).map_err(|e| e.message));
    }
    let jit = results.pop().unwrap();
    let interp = results.pop().unwrap();
    match (&interp, &jit) {
        (Ok(a), Ok(b)) => assert!(a.identical(b), "{expr}: {a:?} vs {b:?}"),
        (Err(a), Err(b)) => assert_eq!(a, b, "{expr}"),
        _ => panic!("{expr}: the backends disagree: {interp:?} vs {jit:?}"),
    }
    interp
}

#[test]
fn fields_read_and_test_as_protobuf_defines() {
    let pool = pool();
    let env = env(&pool);
    let vars = MapActivation::new().with("item", item(&pool));
    for (expr, want) in [
        ("item.name == 'pen' && item.count == 3", true),
        ("item.tags == ['a', 'b'] && item.prices['eu'] == 7", true),
        ("item.parent.name == 'box' && item.parent.count == 0", true),
        // Unset: proto3 scalars are their defaults and absent; wrappers are null; a
        // message field reads as its empty message.
        (
            "!has(item.parent.tags) && item.parent.parent == Item{}",
            true,
        ),
        ("item.limit == null && !has(item.limit)", true),
        ("has(item.note)", false),
        ("item.kind == Item.Kind.BOOK && item.kind == 1", true),
        ("item.created == timestamp(0)", true),
        ("type(item) == shop.Item", true),
    ] {
        assert!(
            matches!(eval_both(&env, expr, &vars), Ok(Value::Bool(b)) if b == want),
            "{expr}"
        );
    }
}

#[test]
fn literals_build_messages_and_compare_by_content() {
    let pool = pool();
    let env = env(&pool);
    let vars = MapActivation::new().with("item", item(&pool));
    for expr in [
        "Item{name: 'pen', count: 3, tags: ['a', 'b'], prices: {'eu': 7}, \
         parent: Item{name: 'box'}, kind: Item.Kind.BOOK} == item",
        "Item{limit: 5}.limit == 5 && Item{limit: null} == Item{}",
        "Item{count: 0} == Item{}",
        "Item{?note: optional.none()} == Item{} && Item{?note: optional.of('x')}.note == 'x'",
        "Item{created: timestamp('2024-01-01T00:00:00Z')}.created.getFullYear() == 2024",
    ] {
        assert!(
            matches!(eval_both(&env, expr, &vars), Ok(Value::Bool(true))),
            "{expr}"
        );
    }
}

#[test]
fn bad_fields_are_diagnostics_or_errors() {
    let pool = pool();
    let env = env(&pool);
    let vars = MapActivation::new().with("item", item(&pool));
    // Checked: an unknown field and a value of the wrong type are diagnostics.
    let unknown = env.compile("item.nope").unwrap_err().to_string();
    assert!(unknown.contains("undefined field 'nope'"), "{unknown}");
    let wrong = env.compile("Item{count: 'x'}").unwrap_err().to_string();
    assert!(wrong.contains("expected type of field 'count'"), "{wrong}");
    // At run time: a value out of a 32-bit field's range.
    assert_eq!(
        eval_both(&env, "Item{count: 3000000000}", &vars).unwrap_err(),
        "range error"
    );
    // Through `dyn`, an unknown field is an error, not a panic.
    assert_eq!(
        eval_both(&env, "dyn(item).nope", &vars).unwrap_err(),
        "no such field 'nope'"
    );
}
