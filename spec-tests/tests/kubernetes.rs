//! The Kubernetes corpus runner: the committed corpus loads and is well formed, and each
//! check (value, type, error, compile error, cost, estimate) can fail.

use std::collections::HashSet;

use spec_tests::known_failures::{self, KnownFailures, Verdict};
use spec_tests::kubernetes::{self, CaseEnv, Corpus};
use spec_tests::report;
use spec_tests::runner::Status;

fn run_one(line: &str) -> Status {
    let file = kubernetes::parse_file("t", line).unwrap();
    kubernetes::run_case(&file.cases[0]).status
}

fn failed_at(status: &Status) -> Option<&str> {
    match status {
        Status::Failed { stage, .. } => Some(stage),
        _ => None,
    }
}

#[test]
fn committed_corpus_is_well_formed() {
    let corpus = Corpus::load(&kubernetes::cases_dir(), &[]).unwrap();
    let cases: Vec<_> = corpus.cases().collect();
    // (The CRD cases moved to the CRD corpus, spec-tests/cases/crd.)
    assert!(cases.len() >= 800, "only {} cases", cases.len());
    let ids: HashSet<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), cases.len(), "case ids are not unique");
    for c in &cases {
        assert!(!c.id.contains("  ") && !c.id.contains('\t'), "{}", c.id);
        assert_eq!(
            known_failures::file_of(&c.id),
            format!("kubernetes/{}", c.file)
        );
    }
    let with_cost = cases.iter().filter(|c| c.cost.is_some()).count();
    let with_estimate = cases.iter().filter(|c| c.estimate.is_some()).count();
    assert!(with_cost >= 100, "{with_cost} cases record a cost");
    assert!(
        with_estimate >= 100,
        "{with_estimate} cases record an estimate"
    );
    // Kubernetes' own environments are the norm; cost_test.go's environment is for its
    // figures only. The production figures of CRD rules are the CRD corpus's (its
    // `cost_stability.jsonl`, costs through the validator as the API server runs it).
    let production = cases
        .iter()
        .filter(|c| c.env != CaseEnv::CostTest && c.cost.is_some())
        .count();
    let crd_costs = spec_tests::crd::load(&spec_tests::crd::cases_dir(), &[])
        .unwrap()
        .iter()
        .filter(|c| c.json.get("cost").is_some())
        .count();
    assert!(
        production + crd_costs >= 300,
        "{production} + {crd_costs} production-environment costs"
    );
}

#[test]
fn each_check_can_fail() {
    let ok = r#"{"expr": "[1, 2, 3, 4, 5].sum()", "value": "15", "cost": 5, "estimate": [15, 15]}"#;
    assert_eq!(run_one(ok), Status::Passed);
    let wrong_value = r#"{"expr": "[1, 2, 3, 4, 5].sum()", "value": "16"}"#;
    assert_eq!(failed_at(&run_one(wrong_value)), Some("eval"));
    // OptOptimize: the constant list costs nothing at run time in Kubernetes' environment...
    let wrong_cost = r#"{"expr": "[1, 2, 3, 4, 5].sum()", "value": "15", "cost": 15}"#;
    assert_eq!(failed_at(&run_one(wrong_cost)), Some("cost"));
    // ...but 10 in cost_test.go's, which has no OptOptimize.
    let cost_test =
        r#"{"expr": "[1, 2, 3, 4, 5].sum()", "env": "cost_test", "value": "15", "cost": 15}"#;
    assert_eq!(run_one(cost_test), Status::Passed);
    let wrong_estimate =
        r#"{"expr": "[1, 2, 3, 4, 5].sum()", "value": "15", "estimate": [15, 16]}"#;
    assert_eq!(failed_at(&run_one(wrong_estimate)), Some("estimate"));
    // Homogeneous literals: a compile error in Kubernetes' environment, not in cost_test.go's.
    let mixed = r#"{"expr": "sets.contains([1], [1.0, 1])", "compile_error": "expected type 'double' but found 'int'"}"#;
    assert_eq!(run_one(mixed), Status::Passed);
    let mixed = r#"{"expr": "sets.contains([1], [1.0, 1])", "env": "cost_test", "value": "true", "cost": 23}"#;
    assert_eq!(run_one(mixed), Status::Passed);
    let not_an_error = r#"{"expr": "1", "compile_error": "x"}"#;
    assert_eq!(failed_at(&run_one(not_an_error)), Some("check"));
    let error = r#"{"expr": "[1][2]", "error": "index out of bounds"}"#;
    assert_eq!(run_one(error), Status::Passed);
    let wrong_error = r#"{"expr": "[1][2]", "error": "no such key"}"#;
    assert_eq!(failed_at(&run_one(wrong_error)), Some("eval"));
    let typed =
        r#"{"expr": "authorizer.path('/a')", "type": "kubernetes.authorization.PathCheck"}"#;
    assert_eq!(run_one(typed), Status::Passed);
    let mistyped =
        r#"{"expr": "authorizer.path('/a')", "type": "kubernetes.authorization.Decision"}"#;
    assert_eq!(failed_at(&run_one(mistyped)), Some("eval"));
    // Versions and environments.
    let old =
        r#"{"expr": "1.5 > 1", "compatibility": "1.27", "compile_error": "no matching overload"}"#;
    assert_eq!(run_one(old), Status::Passed);
    let stored =
        r#"{"expr": "1.5 > 1", "compatibility": "1.27", "env": "stored", "value": "true"}"#;
    assert_eq!(run_one(stored), Status::Passed);
    let release = r#"{"expr": "isSemver('1.0.0')", "version": "1.33", "compatibility": "1.32", "compile_error": "isSemver"}"#;
    assert_eq!(run_one(release), Status::Passed);
    let no_patch = r#"{"expr": "jsonpatch.escapeKey('a/b')", "value": "'a~1b'"}"#;
    assert_eq!(failed_at(&run_one(no_patch)), Some("check"));
    let patch = r#"{"expr": "jsonpatch.escapeKey('a/b')", "jsonpatch": true, "value": "'a~1b'", "cost": 1}"#;
    assert_eq!(run_one(patch), Status::Passed);
    // Variables and size hints.
    let sized = r#"{"expr": "l.sum()", "decls": {"l": "list(int)"}, "vars": {"l": [1, 2]}, "value": "3", "cost": 3, "estimate": [1, 11], "sizes": {"l": 10}}"#;
    assert_eq!(run_one(sized), Status::Passed);
}

#[test]
fn kubernetes_rows_and_known_failures() {
    let file = kubernetes::parse_file(
        "lists",
        r#"{"name": "good", "expr": "1", "value": "1"}
{"name": "bad", "expr": "1", "value": "2"}
"#,
    )
    .unwrap();
    let corpus = Corpus { files: vec![file] };
    let results = kubernetes::run_corpus(&corpus);
    let rows = kubernetes::counts(&corpus, &results);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, "k8s:lists");
    assert_eq!((rows[0].1.passed, rows[0].1.failed), (1, 1));
    let empty = spec_tests::Corpus {
        dir: std::path::PathBuf::new(),
        files: Vec::new(),
        broken: Vec::new(),
    };
    let table = report::table_with(&empty, &[], &rows);
    let lines: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| !l.starts_with('-'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[1], ["k8s:lists", "1", "1", "0", "2"]);
    assert_eq!(lines.last().unwrap(), &["TOTAL", "1", "1", "0", "2"]);

    // The list names Kubernetes cases by file; a run of one file judges only its entries.
    let list = KnownFailures::parse(
        "kubernetes/lists/bad  wrong on purpose\nkubernetes/urls/other  another file\n",
    )
    .unwrap();
    let run_files: HashSet<String> = ["kubernetes/lists".to_string()].into();
    let verdicts: Vec<(&str, Verdict)> = kubernetes::verdicts(&results).collect();
    let c = known_failures::compare(&list, verdicts.iter().copied(), &run_files);
    assert!(c.is_clean(), "{c:?}");
    assert_eq!(c.known_failures, 1);
    // Fixing the case makes the listed entry an unexpected pass.
    let fixed: Vec<(&str, Verdict)> = verdicts
        .iter()
        .map(|(id, _)| (*id, Verdict::Pass))
        .collect();
    let c = known_failures::compare(&list, fixed, &run_files);
    assert_eq!(c.unexpected_passes, ["kubernetes/lists/bad"]);
}
