//! Runs the Kubernetes corpus (`spec-tests/cases/kubernetes/*.jsonl`) through the facade with
//! this crate's libraries, checking each case's value, error or compile error. Costs are kept
//! in the data for the cost runner; they are not checked here.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use cel_k8s::authz::{authorizer_value, authorizer_variable};
use cel_k8s::{ExpressionKind, FakeAuthorizer, KubeVersion, KubernetesProfile};
use celerity::{Env, EnvOptions, MapActivation, NoSizes, Type, Value, value_from_json};

#[derive(Debug)]
struct Case {
    file: String,
    name: String,
    expr: String,
    version: KubeVersion,
    kind: ExpressionKind,
    vars: serde_json::Map<String, serde_json::Value>,
    decls: BTreeMap<String, String>,
    expect: Expect,
    cost: Option<u64>,
    estimate: Option<(u64, u64)>,
}

#[derive(Debug)]
enum Expect {
    Value(String),
    Error(String),
    CompileError(String),
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec-tests/cases/kubernetes")
}

fn load() -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let file = f.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let j: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{file}:{}: bad JSON: {e}", i + 1));
            let s = |k: &str| j.get(k).and_then(|v| v.as_str()).map(str::to_string);
            let expect = if let Some(v) = s("value") {
                Expect::Value(v)
            } else if let Some(e) = s("error") {
                Expect::Error(e)
            } else if let Some(e) = s("compile_error") {
                Expect::CompileError(e)
            } else {
                panic!("{file}:{}: no expectation", i + 1)
            };
            let version = s("version")
                .map(|v| v.parse().unwrap())
                .unwrap_or(KubeVersion::NEWEST);
            let kind = match s("env").as_deref() {
                Some("stored") => ExpressionKind::StoredExpressions,
                _ => ExpressionKind::NewExpressions,
            };
            out.push(Case {
                file: file.clone(),
                name: s("name").unwrap_or_else(|| format!("line {}", i + 1)),
                expr: s("expr").expect("expr"),
                version,
                kind,
                vars: j
                    .get("vars")
                    .and_then(|v| v.as_object().cloned())
                    .unwrap_or_default(),
                decls: j
                    .get("decls")
                    .and_then(|v| v.as_object())
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                            .collect()
                    })
                    .unwrap_or_default(),
                expect,
                cost: j.get("cost").and_then(|v| v.as_u64()),
                estimate: j.get("estimate").and_then(|v| {
                    let a = v.as_array()?;
                    Some((a.first()?.as_u64()?, a.get(1)?.as_u64()?))
                }),
            });
        }
    }
    out
}

fn env_for(c: &Case) -> Env {
    let profile = KubernetesProfile::new(c.version, c.kind).with_jsonpatch();
    let o = &profile.options;
    let mut b = Env::builder().options(EnvOptions {
        homogeneous_aggregate_literals: o.homogeneous_aggregate_literals,
        cross_type_numeric_comparisons: o.cross_type_numeric_comparisons,
        optional_types: true,
        presence_test_has_cost: o.presence_test_has_cost,
        optimize: o.optimize,
        cost_limit: Some(o.per_call_cost_limit),
        validate_duration_literals: o.validate_duration_literals,
        validate_timestamp_literals: o.validate_timestamp_literals,
        validate_regex_literals: o.validate_regex_literals,
        ..EnvOptions::kubernetes()
    });
    for lib in profile.libraries() {
        b = b.library(Boxed(lib));
    }
    if profile.has("kubernetes.authz") {
        let a = authorizer_variable();
        b = b.variable(&a.name, a.ty);
    }
    for (name, ty) in &c.decls {
        b = b.variable(name, Type::parse(ty).unwrap());
    }
    b.build()
}

#[derive(Debug)]
struct Boxed(Box<dyn celerity::Library>);

impl celerity::Library for Boxed {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn contents(&self) -> celerity::LibraryContents {
        self.0.contents()
    }
}

/// Compares a case's recorded costs with what the facade reports; `None` when the case
/// records none. Informational only: the cost runner is written elsewhere.
fn check_costs(c: &Case) -> Option<Result<(), String>> {
    if c.cost.is_none() && c.estimate.is_none() {
        return None;
    }
    let env = env_for(c);
    let ast = env.compile(&c.expr).ok()?;
    let mut act = MapActivation::new();
    act.bind(
        "authorizer",
        authorizer_value(None, Arc::new(FakeAuthorizer::standard())),
    );
    let mut problems = Vec::new();
    if let Some(want) = c.cost {
        let program = env.program(&ast).ok()?;
        let (_, details) = program.eval_details(&act);
        if details.actual_cost != want {
            problems.push(format!("cost {} (want {want})", details.actual_cost));
        }
    }
    if let Some((lo, hi)) = c.estimate {
        match env.estimate_cost(&ast, &NoSizes) {
            Some(r) if (r.min, r.max) == (lo, hi) => {}
            other => problems.push(format!("estimate {other:?} (want [{lo}, {hi}])")),
        }
    }
    Some(if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    })
}

fn run(c: &Case) -> Result<(), String> {
    let env = env_for(c);
    let mut act = MapActivation::new();
    act.bind(
        "authorizer",
        authorizer_value(None, Arc::new(FakeAuthorizer::standard())),
    );
    for (k, v) in &c.vars {
        act.bind(
            k.as_str(),
            value_from_json(v).map_err(|e| format!("{e:?}"))?,
        );
    }
    let compiled = env.compile(&c.expr);
    match (&c.expect, compiled) {
        (Expect::CompileError(want), Err(issues)) => {
            let got = issues.to_string();
            if got.contains(want.as_str()) {
                Ok(())
            } else {
                Err(format!("compile error {got:?} does not contain {want:?}"))
            }
        }
        (Expect::CompileError(want), Ok(_)) => {
            Err(format!("expected compile error {want:?}, compiled"))
        }
        (_, Err(issues)) => Err(format!("unexpected compile error: {issues}")),
        (expect, Ok(ast)) => {
            let program = env.program(&ast).map_err(|e| e.to_string())?;
            let got = program.eval(&act);
            match (expect, got) {
                (Expect::Error(want), Err(e)) => {
                    if e.message.contains(want.as_str()) {
                        Ok(())
                    } else {
                        Err(format!("error {:?} does not contain {want:?}", e.message))
                    }
                }
                (Expect::Error(want), Ok(v)) => Err(format!("expected error {want:?}, got {v:?}")),
                (Expect::Value(_), Err(e)) => Err(format!("unexpected error: {}", e.message)),
                (Expect::Value(want), Ok(v)) => {
                    let want_ast = env
                        .compile(want)
                        .map_err(|e| format!("bad expected value {want:?}: {e}"))?;
                    let want_v = env
                        .program(&want_ast)
                        .map_err(|e| e.to_string())?
                        .eval(&act)
                        .map_err(|e| format!("expected value {want:?} fails: {}", e.message))?;
                    if same(&v, &want_v) {
                        Ok(())
                    } else {
                        Err(format!("got {v:?}, want {want_v:?}"))
                    }
                }
                (Expect::CompileError(_), _) => unreachable!(),
            }
        }
    }
}

/// Type-tagged identity, except that doubles compare bit for bit (so `-0.0` and NaN are
/// checked exactly).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits() || x == y,
        _ => a.identical(b),
    }
}

#[test]
fn kubernetes_corpus() {
    let cases = load();
    assert!(cases.len() >= 400, "only {} cases", cases.len());
    let mut per_file: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for c in &cases {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(c)))
            .unwrap_or_else(|_| Err("panicked".into()));
        let e = per_file.entry(c.file.clone()).or_default();
        e.0 += 1;
        match r {
            Ok(()) => e.1 += 1,
            Err(msg) => failures.push(format!(
                "{} / {}: {}\n    expr: {}",
                c.file, c.name, msg, c.expr
            )),
        }
    }
    let (mut with_cost, mut cost_ok) = (0, 0);
    for c in &cases {
        if let Some(r) = check_costs(c) {
            with_cost += 1;
            match r {
                Ok(()) => cost_ok += 1,
                Err(m) => println!("cost: {} / {}: {m}", c.file, c.name),
            }
        }
    }
    println!("costs: {cost_ok}/{with_cost} cases with recorded costs match");
    for (f, (n, ok)) in &per_file {
        println!("{f}: {ok}/{n}");
    }
    let total: usize = per_file.values().map(|v| v.0).sum();
    let passed: usize = per_file.values().map(|v| v.1).sum();
    println!("total: {passed}/{total}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
