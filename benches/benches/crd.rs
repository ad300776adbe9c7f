//! Validating custom resources: the example CRD (`examples/crd/webapps.yaml`, 21 rules on
//! nested objects, lists and maps) against 10,000 generated objects, as the API server
//! validates them (pruning, defaults, OpenAPI validation, then the rules) and the rules
//! alone; single-threaded and on every core; on the interpreter and native code; and,
//! for comparison, the same rules evaluated with `self` as `map(string, dyn)` on data
//! converted without the schema (what an engine without schema types does).
//!
//! Throughput is per object: criterion reports objects per second.
//! `cargo bench -p benches --bench crd`.

use std::hint::black_box;
use std::time::Duration;

use celerity::kubernetes::{ExpressionKind, KubernetesEnv};
use celerity::{Backend, MapActivation, Program, Type};
use celerity_kubernetes::crd::schema::Schema;
use celerity_kubernetes::crd::{CompiledCrd, CrdOptions, SchemaValidator, ValidateOptions};
use celerity_kubernetes::crd::{RuleOptions, default_version};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use serde_json::{Value as Json, json};

const OBJECTS: usize = 10_000;

fn crd_json() -> Json {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/crd/webapps.yaml"
    ))
    .expect("the example CRD");
    // The example is YAML; convert it with the same parser the command uses, through JSON.
    benches::yaml_to_json(&text)
}

/// Objects like the example's valid ones, varied; about one in ten breaks a rule.
fn objects() -> Vec<Json> {
    (0..OBJECTS)
        .map(|i| {
            let replicas = 1 + (i % 8) as i64;
            let mut ports = vec![json!({"name": "http", "port": 8080})];
            if i % 3 == 0 {
                ports.push(json!({"name": "metrics", "port": 9090 + (i % 7) as i64}));
            }
            let tag = if i % 10 == 9 { "latest" } else { "1.4.2" };
            json!({
                "apiVersion": "apps.example.com/v1",
                "kind": "WebApp",
                "metadata": {"name": format!("app-{i}"), "namespace": "shop"},
                "spec": {
                    "image": format!("registry.example.com/app-{}:{tag}", i % 50),
                    "replicas": replicas,
                    "maxReplicas": 8,
                    "ports": ports,
                    "env": {"LOG_LEVEL": "info", "REGION": format!("r{}", i % 5)},
                    "resources": {"cpu": 2, "memory": "4Gi"},
                    "tags": ["web", format!("team-{}", i % 12)],
                    "canary": {"weight": 10, "until": "2026-12-31T00:00:00Z"},
                    "ingress": {"host": "shop.example.com", "tls": true, "paths": ["/", "/api"]},
                }
            })
        })
        .collect()
}

fn compiled(backend: Backend) -> CompiledCrd {
    CompiledCrd::new(&crd_json(), &CrdOptions::default().backend(backend))
        .expect("the example CRD is valid")
}

/// The rules of the example, each compiled with `self: dyn`, with where its node is.
struct DynRules {
    rules: Vec<(Vec<Step>, Program)>,
}

#[derive(Clone)]
enum Step {
    Field(String),
    Each,
}

impl DynRules {
    fn new(schema: &Schema, backend: Backend) -> DynRules {
        let env = KubernetesEnv::new(default_version())
            .stored()
            .with_authorizer_variable(false)
            .builder()
            .variable("self", Type::Dyn)
            .variable("oldSelf", Type::Dyn)
            .build();
        let mut rules = Vec::new();
        let mut work = vec![(Vec::new(), schema)];
        while let Some((path, s)) = work.pop() {
            for r in &s.x_validations {
                let ast = env
                    .compile(&r.rule)
                    .expect("the rule compiles with self: dyn");
                let program = env
                    .program_with(&ast, celerity::ProgramOptions::default().backend(backend))
                    .unwrap();
                // Transition rules need an old object; creates skip them.
                if !r.rule.contains("oldSelf") {
                    rules.push((path.clone(), program));
                }
            }
            for (k, p) in &s.properties {
                let mut next = path.clone();
                next.push(Step::Field(k.clone()));
                work.push((next, p));
            }
            for child in s.items.as_deref().into_iter().chain(s.additional_schema()) {
                let mut next = path.clone();
                next.push(Step::Each);
                work.push((next, child));
            }
        }
        DynRules { rules }
    }

    /// Evaluates every rule on every node its path reaches; the number that failed.
    fn validate(&self, object: &Json) -> usize {
        let mut failed = 0;
        for (path, program) in &self.rules {
            let mut nodes = vec![object];
            for step in path {
                nodes = nodes
                    .into_iter()
                    .flat_map(|n| -> Vec<&Json> {
                        match (step, n) {
                            (Step::Field(k), Json::Object(m)) => m.get(k).into_iter().collect(),
                            (Step::Each, Json::Array(a)) => a.iter().collect(),
                            (Step::Each, Json::Object(m)) => m.values().collect(),
                            _ => Vec::new(),
                        }
                    })
                    .collect();
            }
            for n in nodes {
                let value = celerity::value_from_json(n).unwrap();
                let act = MapActivation::new().with("self", value);
                if !matches!(program.eval(&act), Ok(celerity::Value::Bool(true))) {
                    failed += 1;
                }
            }
        }
        failed
    }
}

fn validation(c: &mut Criterion) {
    let objects = objects();
    let crd_schema = compiled(Backend::Interpreter).versions[0].schema.clone();
    let mut group = c.benchmark_group("crd");
    group.throughput(Throughput::Elements(OBJECTS as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    for (label, backend) in [("interpreter", Backend::Interpreter), ("jit", Backend::Jit)] {
        let crd = compiled(backend);
        group.bench_function(format!("validate/{label}"), |b| {
            b.iter(|| {
                objects
                    .iter()
                    .filter(|o| !crd.validate(black_box(o), None).errors.is_empty())
                    .count()
            })
        });
        group.bench_function(format!("validate_all_cores/{label}"), |b| {
            b.iter(|| {
                objects
                    .par_iter()
                    .filter(|o| !crd.validate(black_box(o), None).errors.is_empty())
                    .count()
            })
        });
        let rules = SchemaValidator::new(
            &crd_schema,
            true,
            &RuleOptions::default()
                .expressions(ExpressionKind::StoredExpressions)
                .backend(backend),
        );
        group.bench_function(format!("rules_typed/{label}"), |b| {
            b.iter(|| {
                objects
                    .iter()
                    .filter(|o| {
                        !rules
                            .validate(black_box(o), None, &ValidateOptions::default())
                            .errors
                            .is_empty()
                    })
                    .count()
            })
        });
        let dyn_rules = DynRules::new(&crd_schema, backend);
        group.bench_function(format!("rules_map_dyn/{label}"), |b| {
            b.iter(|| {
                objects
                    .iter()
                    .map(|o| dyn_rules.validate(black_box(o)))
                    .sum::<usize>()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, validation);
criterion_main!(benches);
