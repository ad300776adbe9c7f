//! The admission corpus: Kubernetes' admission-policy tests as data. Every case runs on both
//! backends, which must agree; a case that fails must be listed in `known-failures.txt`
//! (as `admission/<file>/<name>`) and a listed case must fail. Prints the count of cases
//! converted and passing per Go source file.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use celerity::Backend;
use spec_tests::KnownFailures;
use spec_tests::admission::{self, Case};

fn known() -> HashSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("known-failures.txt");
    KnownFailures::read(&path)
        .unwrap()
        .unwrap_or_default()
        .entries
        .into_iter()
        .filter(|e| e.id.starts_with("admission/"))
        .map(|e| e.id)
        .collect()
}

#[test]
fn kubernetes_admission_cases_pass_or_are_known_failures() {
    let cases = admission::load(&admission::cases_dir()).unwrap();
    assert!(cases.len() >= 50, "only {} cases", cases.len());
    let ids: HashSet<String> = cases.iter().map(Case::id).collect();
    assert_eq!(ids.len(), cases.len(), "case ids are not unique");
    let known = known();
    for k in &known {
        assert!(ids.contains(k), "known failure {k} names no case");
    }
    let mut by_source: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut problems = Vec::new();
    for c in &cases {
        let native = admission::run(c, Backend::Jit);
        let interpreted = admission::run(c, Backend::Interpreter);
        if native.is_ok() != interpreted.is_ok() {
            problems.push(format!(
                "{}: the backends disagree: {native:?} / {interpreted:?}",
                c.id()
            ));
        }
        let source = c.source().split(' ').next().unwrap_or("").to_string();
        let entry = by_source.entry(source).or_default();
        entry.0 += 1;
        match (&interpreted, known.contains(&c.id())) {
            (Ok(()), false) => entry.1 += 1,
            (Ok(()), true) => problems.push(format!("{}: listed as failing but passes", c.id())),
            (Err(e), false) => problems.push(format!("{}: {e}", c.id())),
            (Err(_), true) => {}
        }
    }
    for (source, (n, pass)) in &by_source {
        println!("{source}: {pass}/{n} pass");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn each_check_can_fail() {
    let case = |json: serde_json::Value| Case {
        file: "t".into(),
        name: "t".into(),
        json: json.as_object().unwrap().clone(),
    };
    let filter = |conditions: serde_json::Value, expect: serde_json::Value| {
        admission::run(
            &case(
                serde_json::json!({"kind": "filter", "conditions": conditions, "object": {"a": 1}, "expect": expect}),
            ),
            Backend::Interpreter,
        )
    };
    assert!(
        filter(
            serde_json::json!(["object.a == 1"]),
            serde_json::json!({"results": [{"value": true}]})
        )
        .is_ok()
    );
    assert!(
        filter(
            serde_json::json!(["object.a == 2"]),
            serde_json::json!({"results": [{"value": true}]})
        )
        .is_err()
    );
    assert!(
        filter(
            serde_json::json!(["object.b == 2"]),
            serde_json::json!({"results": [{"error_contains": "no such key: b"}]})
        )
        .is_ok()
    );
    assert!(
        filter(
            serde_json::json!(["object.b == 2"]),
            serde_json::json!({"results": [{"error_contains": "other"}]})
        )
        .is_err()
    );
    assert!(
        filter(
            serde_json::json!(["object.a == 1"]),
            serde_json::json!({"remaining_budget": 2})
        )
        .is_err()
    );
    assert!(
        filter(
            serde_json::json!(["object.a == 1"]),
            serde_json::json!({"error_contains": "budget"})
        )
        .is_err()
    );
    let webhook = |conditions: serde_json::Value, expect: serde_json::Value| {
        admission::run(
            &case(serde_json::json!({"kind": "webhook",
                "webhook": {"name": "w", "rules": [{"operations": ["*"], "apiGroups": ["*"],
                    "apiVersions": ["*"], "resources": ["*"]}], "matchConditions": conditions},
                "request": {"operation": "CREATE", "name": "n", "namespace": "ns"},
                "object": {"metadata": {}}, "expect": expect})),
            Backend::Interpreter,
        )
    };
    let no = serde_json::json!([{"name": "no", "expression": "false"}]);
    assert!(
        webhook(
            no.clone(),
            serde_json::json!({"called": false, "failed_condition": "no"})
        )
        .is_ok()
    );
    assert!(webhook(no.clone(), serde_json::json!({"called": true})).is_err());
    assert!(
        webhook(
            no,
            serde_json::json!({"called": false, "failed_condition": "yes"})
        )
        .is_err()
    );
    let broken = serde_json::json!([{"name": "e", "expression": "object.x == 1"}]);
    assert!(
        webhook(
            broken.clone(),
            serde_json::json!({"called": false, "error_contains": "no such key: x"})
        )
        .is_ok()
    );
    assert!(webhook(broken, serde_json::json!({"called": false})).is_err());
}
