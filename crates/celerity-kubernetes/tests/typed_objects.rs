//! Fields of schema-typed objects read by native code in place (`select.object`,
//! `has.object`), and iterated over: the same
//! values, errors and costs as the interpreter for present, absent, `null` and invalid
//! fields, for objects of the layout a read site learned and of others, on every evaluation
//! (the first teaches the site, later ones read the slot), and from several threads at once.

use celerity::kubernetes::{ExpressionKind, KubeVersion};
use celerity::{Backend, Env, MapActivation, Program, ProgramOptions, Value};
use celerity_kubernetes::crd::schema::{Path, Schema, decl::DeclType, value::ValueModel};
use celerity_kubernetes::crd::{RuleEnv, RuleOptions};
use serde_json::{Value as Json, json};

fn schema() -> Schema {
    let json = json!({
        "type": "object",
        "properties": {
            "replicas": {"type": "integer"},
            "name": {"type": "string"},
            "ratio": {"type": "number"},
            "spec": {
                "type": "object",
                "properties": {
                    "min": {"type": "integer"},
                    "tags": {"type": "array", "items": {"type": "string"}}
                }
            },
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"key": {"type": "string"}, "n": {"type": "integer"}}
                }
            }
        }
    });
    Schema::from_json(&json, &Path::root()).expect("a valid schema")
}

fn env(schema: &Schema) -> Env {
    let decl = DeclType::from_schema(schema, false).expect("a CEL type");
    let options = RuleOptions::default()
        .version(KubeVersion::NEWEST)
        .expressions(ExpressionKind::NewExpressions);
    RuleEnv::new(&decl, &options).plain
}

const EXPRESSIONS: &[&str] = &[
    "self.replicas + 1",
    "self.replicas <= 5 && self.name == 'web'",
    "self.name + '-' + self.spec.tags[0]",
    "self.ratio * 2.0",
    "self.spec.min <= self.replicas",
    "self.spec.tags.size()",
    "self.items.exists(i, i.key == 'b' && i.n > 1)",
    "self.items.map(i, i.n).sum() == 3 || true",
    "self.items.filter(i, i.n > 0).size()",
    "has(self.replicas)",
    "has(self.spec.min) && self.spec.min > 0",
    "!has(self.name) || self.name != ''",
    "self.items.all(i, has(i.n))",
    "has(self.ratio) ? self.ratio : 1.0",
    // Iteration over an object's present fields (through `dyn`), nested over two objects.
    "dyn(self).map(k, k)",
    "dyn(self).filter(k, k != 'ratio').size()",
    "dyn(self.spec).all(k, dyn(self).exists(j, j != k))",
    "dyn(self).map(k, dyn(self.spec).map(j, k + j))",
    // Repeated reads, shared (`share_reads`): the repeat's error at its own place.
    "self.spec.min <= self.replicas && self.replicas <= self.spec.min + 10",
    "(self.replicas > 0 || true) && self.replicas < self.spec.min",
    "self.items.exists(i, i.n > 1 && i.n < self.replicas) || self.items.size() > self.replicas",
    "self.spec.tags.size() > 0 && self.spec.tags[0] == self.name && self.name != ''",
    // Reads and presence tests of `self` inside loops, hoisted before them
    // (`hoist_invariant_reads`).
    "self.items.all(i, i.n <= self.replicas && i.key != self.name)",
    "self.items.map(i, i.key + self.name + self.spec.tags[0])",
    "self.spec.tags.exists(t, self.items.exists(i, i.key == t && i.n < self.spec.min))",
    "self.items.all(i, !has(self.spec.min) || i.n >= self.spec.min)",
];

/// Data for the schema: complete, then with fields absent, `null` or of the wrong type
/// (invalid-data markers), in an order that lets sites learn the layout first.
fn data() -> Vec<Json> {
    let full = json!({
        "replicas": 3, "name": "web", "ratio": 0.5,
        "spec": {"min": 1, "tags": ["a", "b"]},
        "items": [{"key": "a", "n": 1}, {"key": "b", "n": 2}]
    });
    let mut out = vec![full.clone()];
    for field in ["replicas", "name", "ratio", "spec", "items"] {
        let mut absent = full.clone();
        absent.as_object_mut().unwrap().remove(field);
        out.push(absent);
        let mut null = full.clone();
        null[field] = Json::Null;
        out.push(null);
        let mut wrong = full.clone();
        wrong[field] = json!({"unexpected": true});
        out.push(wrong);
    }
    let mut nested = full.clone();
    nested["spec"].as_object_mut().unwrap().remove("min");
    out.push(nested);
    let mut item = full.clone();
    item["items"][1].as_object_mut().unwrap().remove("n");
    out.push(item);
    out.push(full);
    out
}

fn program(env: &Env, expr: &str, backend: Backend) -> Program {
    let ast = env.compile(expr).expect("the expression checks");
    env.program_with(&ast, ProgramOptions::default().backend(backend))
        .expect("the program builds")
}

fn outcome(program: &Program, value: &Value) -> String {
    let act = MapActivation::new().with("self", value.clone());
    let (result, details) = program.eval_details(&act);
    format!("{result:?} cost {}", details.actual_cost)
}

#[test]
fn typed_reads_agree_with_the_interpreter() {
    let schema = schema();
    let env = env(&schema);
    // Two models of one schema build objects of two layouts: sites learn the first.
    let first = ValueModel::new(&schema, false);
    let second = ValueModel::new(&schema, false);
    for expr in EXPRESSIONS {
        let interpreter = program(&env, expr, Backend::Interpreter);
        let native = program(&env, expr, Backend::Jit);
        for round in 0..3 {
            for (i, data) in data().iter().enumerate() {
                for model in [&first, &second] {
                    let value = model.to_value(data);
                    assert_eq!(
                        outcome(&interpreter, &value),
                        outcome(&native, &value),
                        "{expr} on data {i} (round {round}): {data}"
                    );
                }
            }
        }
    }
}

#[test]
fn typed_reads_from_many_threads() {
    let schema = schema();
    let env = env(&schema);
    let models = [
        ValueModel::new(&schema, false),
        ValueModel::new(&schema, false),
    ];
    let values: Vec<Value> = data()
        .iter()
        .flat_map(|d| models.iter().map(move |m| m.to_value(d)))
        .collect();
    for expr in EXPRESSIONS {
        let interpreter = program(&env, expr, Backend::Interpreter);
        let expected: Vec<String> = values.iter().map(|v| outcome(&interpreter, v)).collect();
        // A fresh program per expression: its sites learn while the threads race.
        let native = program(&env, expr, Backend::Jit);
        std::thread::scope(|s| {
            for t in 0..4 {
                let (native, values, expected) = (&native, &values, &expected);
                s.spawn(move || {
                    for round in 0..50 {
                        let i = (round * 7 + t * 13) % values.len();
                        assert_eq!(
                            outcome(native, &values[i]),
                            expected[i],
                            "{expr}: value {i}"
                        );
                    }
                });
            }
        });
    }
}
