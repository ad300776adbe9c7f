//! Runs the Kubernetes corpus (`spec-tests/cases/kubernetes/*.jsonl`) through the facade with
//! this crate's libraries, in the Kubernetes environment of each case's version, checking
//! each case's value, value type, error or compile error. The recorded costs and estimates
//! are checked by the conformance runner (`cargo run -p spec-tests`), which also documents
//! the format (`spec-tests/src/kubernetes.rs`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use cel_k8s::authz::authorizer_value;
use cel_k8s::{ExpressionKind, FakeAuthorizer, KubeVersion};
use celerity::kubernetes::KubernetesEnv;
use celerity::{Env, EnvOptions, MapActivation, Type, Value, value_from_json};

#[derive(Debug)]
struct Case {
    file: String,
    name: String,
    /// The id the conformance runner and its known-failures list use:
    /// `kubernetes/<file>/<name>`, `#<position>` appended to a name that repeats in its file.
    id: String,
    expr: String,
    version: KubeVersion,
    /// The compatibility version of new expressions (default: the release itself).
    compatibility: KubeVersion,
    kind: ExpressionKind,
    /// The environment of Kubernetes' `cost_test.go` rather than a version's.
    cost_test: bool,
    jsonpatch: bool,
    vars: serde_json::Map<String, serde_json::Value>,
    decls: BTreeMap<String, String>,
    expect: Expect,
}

#[derive(Debug)]
enum Expect {
    Value(String),
    Type(String),
    Error(String),
    CompileError(String),
    /// An error making the program after a clean compile.
    ProgramError(String),
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
        let first = out.len();
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
            } else if let Some(e) = s("program_error") {
                Expect::ProgramError(e)
            } else if let Some(t) = s("type") {
                Expect::Type(t)
            } else {
                panic!("{file}:{}: no expectation", i + 1)
            };
            let version = s("version")
                .map(|v| v.parse().unwrap())
                .unwrap_or(KubeVersion::NEWEST);
            let compatibility = s("compatibility")
                .map(|v| v.parse().unwrap())
                .unwrap_or(version);
            let kind = match s("env").as_deref() {
                Some("stored") => ExpressionKind::StoredExpressions,
                _ => ExpressionKind::NewExpressions,
            };
            out.push(Case {
                file: file.clone(),
                id: String::new(),
                name: s("name").unwrap_or_else(|| format!("line {}", i + 1)),
                expr: s("expr").expect("expr"),
                version,
                compatibility,
                kind,
                cost_test: s("env").as_deref() == Some("cost_test"),
                jsonpatch: j.get("jsonpatch").and_then(|v| v.as_bool()) == Some(true),
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
        set_ids(&mut out[first..]);
    }
    out
}

/// Sets the ids of one file's cases, `out[first..]`.
fn set_ids(cases: &mut [Case]) {
    let norm = |n: &str| n.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for c in cases.iter() {
        *seen.entry(norm(&c.name)).or_default() += 1;
    }
    for (pos, c) in cases.iter_mut().enumerate() {
        let stem = c.file.strip_suffix(".jsonl").unwrap_or(&c.file);
        let n = norm(&c.name);
        c.id = if seen[&n] > 1 {
            format!("kubernetes/{stem}/{n}#{pos}")
        } else {
            format!("kubernetes/{stem}/{n}")
        };
    }
}

/// The Kubernetes cases the conformance runner's known-failures list names (which it
/// enforces, reasons included).
fn known_failures() -> Vec<String> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec-tests/known-failures.txt");
    let text = std::fs::read_to_string(path).expect("known-failures list");
    text.lines()
        .filter(|l| l.starts_with("kubernetes/"))
        .map(|l| {
            let cut = [l.find('\t'), l.find("  ")].into_iter().flatten().min();
            cut.map_or(l, |i| &l[..i]).trim_end().to_string()
        })
        .collect()
}

fn env_for(c: &Case) -> Env {
    let k = if c.cost_test {
        KubernetesEnv::newest().with_jsonpatch(true)
    } else {
        KubernetesEnv::new(c.version)
            .compatibility(c.compatibility)
            .kind(c.kind)
            .with_jsonpatch(c.jsonpatch)
    };
    let mut b = k.builder();
    if c.cost_test {
        // cost_test.go's environment: cel-go's defaults but for free presence tests.
        b = b.options(EnvOptions::default().presence_test_has_cost(false));
    }
    for (name, ty) in &c.decls {
        b = b.variable(name, Type::parse(ty).unwrap());
    }
    b.build()
}

fn run(c: &Case) -> Result<(), String> {
    let env = env_for(c);
    let mut act = MapActivation::new();
    let authorizer = if c.cost_test {
        FakeAuthorizer::allow_all()
    } else {
        FakeAuthorizer::standard()
    };
    act.bind("authorizer", authorizer_value(None, Arc::new(authorizer)));
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
        (Expect::ProgramError(want), Ok(ast)) => match env.program(&ast) {
            Err(issues) if issues.to_string().contains(want.as_str()) => Ok(()),
            Err(issues) => Err(format!("program error {issues} does not contain {want:?}")),
            Ok(_) => Err(format!("expected program error {want:?}, made the program")),
        },
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
                (Expect::Value(_) | Expect::Type(_), Err(e)) => {
                    Err(format!("unexpected error: {}", e.message))
                }
                (Expect::Type(want), Ok(v)) => {
                    let ty = v.type_of().to_string();
                    if ty == *want {
                        Ok(())
                    } else {
                        Err(format!("got a value of type {ty}, want {want}"))
                    }
                }
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
                (Expect::CompileError(_) | Expect::ProgramError(_), _) => unreachable!(),
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
    let known = known_failures();
    let mut per_file: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for c in &cases {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(c)))
            .unwrap_or_else(|_| Err("panicked".into()));
        let e = per_file.entry(c.file.clone()).or_default();
        e.0 += 1;
        match r {
            Ok(()) => e.1 += 1,
            Err(msg) if known.contains(&c.id) => println!("known failure {}: {msg}", c.id),
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
