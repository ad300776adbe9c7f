//! Runs the Kubernetes corpus (`spec-tests/cases/kubernetes/*.jsonl`) through the facade with
//! this crate's libraries, checking each case's value, error or compile error. Costs are kept
//! in the data for the cost runner; they are not checked here.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use cel_k8s::authz::{authorizer_value, authorizer_variable};
use cel_k8s::{ExpressionKind, FakeAuthorizer, KubeVersion, KubernetesProfile};
use celerity::{Env, MapActivation, Type, Value, value_from_json};

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
            });
        }
    }
    out
}

fn env_for(c: &Case) -> Env {
    let profile = KubernetesProfile::new(c.version, c.kind).with_jsonpatch();
    let mut b = Env::builder()
        .homogeneous_aggregate_literals(profile.options.homogeneous_aggregate_literals)
        .cross_type_numeric_comparisons(profile.options.cross_type_numeric_comparisons)
        .optional_types(true);
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
