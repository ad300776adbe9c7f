//! The conformance gate: the whole cel-spec corpus against the committed known-failures list,
//! and the README's conformance table kept equal to what the run measures.
//!
//! Set `UPDATE_README=1` to rewrite the table after an intended change.

mod common;

use std::path::Path;
use std::process::Command;

const START: &str = "<!-- conformance-table:start -->";
const END: &str = "<!-- conformance-table:end -->";

#[test]
fn corpus_agrees_with_known_failures_and_readme() {
    if common::spec_dir_or_skip("corpus_agrees_with_known_failures_and_readme").is_none() {
        return;
    }
    let summary =
        std::env::temp_dir().join(format!("spec-tests-summary-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_spec-tests"))
        .arg("--summary")
        .arg(&summary)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let _ = std::fs::remove_file(&summary);
    let table = markdown_table(&json);

    let readme_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let (Some(s), Some(e)) = (readme.find(START), readme.find(END)) else {
        panic!("README.md lacks the conformance-table markers");
    };
    let current = &readme[s + START.len()..e];
    let wanted = format!("\n{table}");
    if current != wanted {
        if std::env::var("UPDATE_README").is_ok_and(|v| v == "1") {
            let updated = format!("{}{wanted}{}", &readme[..s + START.len()], &readme[e..]);
            std::fs::write(&readme_path, updated).unwrap();
        } else {
            panic!(
                "README.md's conformance table is out of date; rerun with UPDATE_README=1.\nMeasured:\n{table}"
            );
        }
    }
}

fn markdown_table(json: &serde_json::Value) -> String {
    let backend = json["backend"].as_str().unwrap_or("?");
    let mut out = format!(
        "Measured by `cargo run --release -p spec-tests` (backend: {backend}); a failure is either on\n\
         `spec-tests/known-failures.txt` with its reason or fails the run.\n\n\
         | file | passed | failed | skipped | total |\n|---|---:|---:|---:|---:|\n"
    );
    let files = json["files"].as_object().unwrap();
    let mut names: Vec<&String> = files.keys().collect();
    names.sort();
    for name in names {
        let f = &files[name];
        let (p, fl, s) = (
            f["passed"].as_u64().unwrap_or(0),
            f["failed"].as_u64().unwrap_or(0),
            f["skipped"].as_u64().unwrap_or(0),
        );
        out.push_str(&format!("| {name} | {p} | {fl} | {s} | {} |\n", p + fl + s));
    }
    let t = &json["totals"];
    let (p, fl, s) = (
        t["passed"].as_u64().unwrap_or(0),
        t["failed"].as_u64().unwrap_or(0),
        t["skipped"].as_u64().unwrap_or(0),
    );
    out.push_str(&format!(
        "| **total** | **{p}** | **{fl}** | **{s}** | **{}** |\n",
        p + fl + s
    ));
    if let Some(k) = json.get("kubernetes") {
        out.push_str(
            "\nCelerity's own Kubernetes corpus (`spec-tests/cases/kubernetes`), through the facade in the\n\
             Kubernetes environment of each case's version, on both backends (which must agree on the value,\n\
             the error and the cost); a case also fails on a wrong cost or estimate.\n\n\
             | file | passed | failed | skipped | total |\n|---|---:|---:|---:|---:|\n",
        );
        let files = k["files"].as_object().unwrap();
        let mut names: Vec<&String> = files.keys().collect();
        names.sort();
        let count = |v: &serde_json::Value, key: &str| v[key].as_u64().unwrap_or(0);
        for name in names {
            let f = &files[name];
            let (p, fl, s) = (count(f, "passed"), count(f, "failed"), count(f, "skipped"));
            out.push_str(&format!("| {name} | {p} | {fl} | {s} | {} |\n", p + fl + s));
        }
        let t = &k["totals"];
        let (p, fl, s) = (count(t, "passed"), count(t, "failed"), count(t, "skipped"));
        out.push_str(&format!(
            "| **total** | **{p}** | **{fl}** | **{s}** | **{}** |\n",
            p + fl + s
        ));
        let c = &k["costs"];
        out.push_str(&format!(
            "\nRecorded costs: {} of {} run-time costs and {} of {} static estimates match exactly.\n",
            count(c, "cost_matches"),
            count(c, "with_cost"),
            count(c, "estimate_matches"),
            count(c, "with_estimate"),
        ));
    }
    if let Some(k) = json.get("crd") {
        out.push_str(
            "\nKubernetes' own tests of CRD validation (`spec-tests/cases/crd`, transcribed from\n\
             apiextensions-apiserver: the rule validator, compilation, estimated and run-time costs, values,\n\
             CRD and schema checks, OpenAPI validation), through `celerity_kubernetes::crd`; skipped cases\n\
             need Kubernetes' test-only library.\n\n\
             | file | passed | failed | skipped | total |\n|---|---:|---:|---:|---:|\n",
        );
        let files = k["files"].as_object().unwrap();
        let mut names: Vec<&String> = files.keys().collect();
        names.sort();
        let count = |v: &serde_json::Value, key: &str| v[key].as_u64().unwrap_or(0);
        for name in names {
            let f = &files[name];
            let (p, fl, s) = (count(f, "passed"), count(f, "failed"), count(f, "skipped"));
            out.push_str(&format!(
                "| crd:{name} | {p} | {fl} | {s} | {} |\n",
                p + fl + s
            ));
        }
        let t = &k["totals"];
        let (p, fl, s) = (count(t, "passed"), count(t, "failed"), count(t, "skipped"));
        out.push_str(&format!(
            "| **total** | **{p}** | **{fl}** | **{s}** | **{}** |\n",
            p + fl + s
        ));
    }
    out
}

/// The JIT backend on the whole corpus: every case that is evaluated runs through both
/// backends, and a disagreement on the value, the error or the cost fails the case, which
/// is not on the known-failures list, so the run fails.
#[test]
fn jit_backend_agrees_with_the_interpreter_on_every_case() {
    if common::spec_dir_or_skip("jit_backend_agrees_with_the_interpreter_on_every_case").is_none() {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_spec-tests"))
        .args(["--backend", "jit"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("backends disagree"), "{stdout}");
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}

/// The comparison can fail: with a fault compiled into native code (one cost unit too many),
/// every evaluated case disagrees and the run fails.
#[test]
fn an_injected_jit_fault_is_reported() {
    if common::spec_dir_or_skip("an_injected_jit_fault_is_reported").is_none() {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_spec-tests"))
        .args(["--backend", "faulty-jit", "--file", "basic"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_ne!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("backends disagree"), "{stdout}");
}

const RESIDUALS_START: &str = "<!-- residuals:start -->";
const RESIDUALS_END: &str = "<!-- residuals:end -->";

/// How many checked conformance expressions compile to native code with no subtree left to
/// the interpreter; the README states it (`UPDATE_README=1` rewrites it).
#[test]
fn residual_count_in_readme() {
    use celerity::{Backend, ProgramOptions};
    let Some(dir) = common::spec_dir_or_skip("residual_count_in_readme") else {
        return;
    };
    let corpus = spec_tests::Corpus::load(&dir).unwrap();
    let (mut compiled, mut without, mut residual_exprs) = (0usize, 0usize, Vec::new());
    for case in corpus.cases() {
        if case.disable_check {
            continue;
        }
        let Ok(env) = spec_tests::stages::case_env(case) else {
            continue;
        };
        let Ok(ast) = env.compile(&case.expr) else {
            continue;
        };
        let options = ProgramOptions::default().backend(Backend::Jit);
        let Ok(program) = env.program_with(&ast, options) else {
            continue;
        };
        compiled += 1;
        match program.residuals() {
            Some(0) => without += 1,
            _ => residual_exprs.push(case.expr.clone()),
        }
    }
    let blocks = residual_exprs
        .iter()
        .filter(|e| e.contains("cel.block"))
        .count();
    let text = format!(
        "\n{without} of the {compiled} conformance expressions that type-check compile to native code with no \
         subtree left to the interpreter; the interpreter evaluates parts of the other {}, all of them \
         `cel.block` expressions ({blocks}).\n",
        compiled - without
    );
    // Every residual is a block.
    for e in &residual_exprs {
        assert!(e.contains("cel.block"), "unexpected residual in {e}");
    }
    let readme_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let (Some(s), Some(e)) = (readme.find(RESIDUALS_START), readme.find(RESIDUALS_END)) else {
        panic!("README.md lacks the residuals markers");
    };
    if readme[s + RESIDUALS_START.len()..e] != text {
        if std::env::var("UPDATE_README").is_ok_and(|v| v == "1") {
            let updated = format!(
                "{}{text}{}",
                &readme[..s + RESIDUALS_START.len()],
                &readme[e..]
            );
            std::fs::write(&readme_path, updated).unwrap();
        } else {
            panic!(
                "README.md's residual count is out of date; rerun with UPDATE_README=1.\nMeasured:{text}"
            );
        }
    }
}
