//! Rust values in and out through serde ([`celerity::to_value`], [`celerity::from_value`]):
//! every form of serde's data model, round trips, values only CEL has, and the errors.

use std::collections::BTreeMap;

use celerity::{Env, Key, MapActivation, Type, Value, from_value, to_value};
use serde::{Deserialize, Serialize, Serializer};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
enum Phase {
    Pending,
    Running(u32),
    Failed { code: i64, reason: String },
    Moved(String, u16),
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Replica {
    name: String,
    ready: bool,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Deployment {
    name: String,
    replicas: i32,
    generation: u64,
    ratio: f64,
    labels: BTreeMap<String, String>,
    ports: BTreeMap<u16, String>,
    owner: Option<String>,
    paused: Option<bool>,
    pods: Vec<Replica>,
    phase: Phase,
    history: Vec<Phase>,
    pair: (i8, char),
    unit: (),
}

fn deployment() -> Deployment {
    Deployment {
        name: "web".into(),
        replicas: 3,
        generation: u64::MAX,
        ratio: 0.5,
        labels: BTreeMap::from([("app".into(), "web".into())]),
        ports: BTreeMap::from([(8080, "http".into())]),
        owner: None,
        paused: Some(false),
        pods: vec![Replica {
            name: "web-0".into(),
            ready: true,
        }],
        phase: Phase::Failed {
            code: -2,
            reason: "OOMKilled".into(),
        },
        history: vec![
            Phase::Pending,
            Phase::Running(7),
            Phase::Moved("b".into(), 9),
        ],
        pair: (-1, 'x'),
        unit: (),
    }
}

/// A value evaluated against `d` bound as `d`.
fn eval(d: &Value, expr: &str) -> Value {
    let env = Env::builder().variable("d", Type::Dyn).build();
    let ast = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let program = env.program(&ast).expect("program");
    program
        .eval(&MapActivation::new().with("d", d.clone()))
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
}

#[test]
fn every_form_of_the_data_model_becomes_its_cel_value() {
    let d = to_value(&deployment()).expect("serializes");
    for (expr, want) in [
        ("d.name", Value::from("web")),
        ("d.replicas", Value::Int(3)),
        // A `u64` stays a `uint`, all 64 bits of it.
        ("d.generation", Value::Uint(u64::MAX)),
        ("type(d.generation) == uint", Value::Bool(true)),
        ("d.ratio", Value::Double(0.5)),
        ("d.labels.app", Value::from("web")),
        // Integer keys stay integers (`uint` for a `u16`).
        ("d.ports[8080u]", Value::from("http")),
        ("d.owner == null", Value::Bool(true)),
        ("d.paused", Value::Bool(false)),
        ("d.pods[0].ready", Value::Bool(true)),
        ("d.phase.Failed.code", Value::Int(-2)),
        ("d.history[0]", Value::from("Pending")),
        ("d.history[1].Running", Value::Uint(7)),
        ("d.history[2].Moved[1]", Value::Uint(9)),
        ("d.pair[0] == -1 && d.pair[1] == 'x'", Value::Bool(true)),
        ("d.unit == null", Value::Bool(true)),
    ] {
        assert_eq!(eval(&d, expr), want, "{expr}");
    }
}

#[test]
fn values_round_trip() {
    let d = deployment();
    let v = to_value(&d).expect("serializes");
    let back: Deployment = from_value(&v).expect("deserializes");
    assert_eq!(back, d);
}

/// Serializes its content with `serialize_bytes` (as `serde_bytes` does).
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

#[test]
fn bytes_stay_bytes_and_borrow_back() {
    let v = to_value(&Bytes(b"\x00\xff")).expect("serializes");
    assert_eq!(v, Value::Bytes(vec![0u8, 255].into()));
    let back: &[u8] = from_value(&v).expect("deserializes");
    assert_eq!(back, b"\x00\xff");
    let s = Value::from("borrowed");
    let back: &str = from_value(&s).expect("deserializes");
    assert_eq!(back, "borrowed");
}

#[test]
fn values_only_cel_has_deserialize() {
    let env = Env::builder().build();
    let eval = |expr: &str| {
        let ast = env.compile(expr).expect("compiles");
        env.program(&ast)
            .expect("program")
            .eval(&MapActivation::new())
            .expect("evaluates")
    };
    let t: String = from_value(&eval("timestamp('2024-01-02T03:04:05Z')")).expect("timestamp");
    assert_eq!(t, "2024-01-02T03:04:05Z");
    let d: String = from_value(&eval("duration('90s')")).expect("duration");
    assert_eq!(d, "90s");
    let none: Option<i64> = from_value(&eval("optional.none()")).expect("none");
    assert_eq!(none, None);
    let some: Option<i64> = from_value(&eval("optional.of(4)")).expect("some");
    assert_eq!(some, Some(4));
    let list: Vec<u64> = from_value(&eval("[1u, 2u]")).expect("list");
    assert_eq!(list, vec![1, 2]);
}

#[test]
fn errors_say_what_does_not_fit() {
    let err = to_value(&u128::MAX).unwrap_err();
    assert!(err.to_string().contains("does not fit a uint"), "{err}");
    let list_keys = BTreeMap::from([(vec![1u8], 1)]);
    let err = to_value(&list_keys).unwrap_err();
    assert_eq!(
        err.to_string(),
        "map keys must be bool, int, uint or string, not list"
    );
    let err = from_value::<Replica>(&Value::Int(1)).unwrap_err();
    assert!(
        err.to_string().contains("invalid type: integer `1`"),
        "{err}"
    );
    let err = from_value::<Phase>(&Value::list(vec![])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "an enum is a string or a one-entry map, not list"
    );
    let missing = Value::map([(Key::String("name".into()), Value::from("x"))]);
    let err = from_value::<Replica>(&missing).unwrap_err();
    assert_eq!(err.to_string(), "missing field `ready`");
}

/// A list nested `n` deep.
#[derive(Serialize)]
struct Nested(Option<Box<Nested>>);

#[test]
fn nesting_past_the_limit_is_an_error_not_a_crash() {
    let mut n = Nested(None);
    for _ in 0..celerity::MAX_JSON_DEPTH + 10 {
        n = Nested(Some(Box::new(n)));
    }
    // `Some(x)` and newtypes are transparent: wrap each level in a list to nest values.
    #[derive(Serialize)]
    struct Level(Vec<Level>);
    let mut deep = Level(vec![]);
    for _ in 0..celerity::MAX_JSON_DEPTH + 10 {
        deep = Level(vec![deep]);
    }
    let err = to_value(&deep).unwrap_err();
    assert!(err.to_string().contains("nested deeper than"), "{err}");
    // Transparent wrappers add no level.
    assert!(to_value(&n).is_ok());
    let mut v = Value::list(vec![]);
    for _ in 0..celerity::MAX_JSON_DEPTH + 10 {
        v = Value::list(vec![v]);
    }
    let err = from_value::<serde_json::Value>(&v).unwrap_err();
    assert!(err.to_string().contains("nested deeper than"), "{err}");
}
