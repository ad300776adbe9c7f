//! End-to-end tests of `cel admit` with webhook configurations: the example (exactly the
//! README's command), the `"webhooks"` JSON contract, the batch line, a failing match
//! condition under `failurePolicy: Fail`, and a match condition that does not compile.

mod support;

use serde_json::{Value as Json, json};
use support::{cel, cel_stdin, stderr, stdout};

/// The README's command.
const EXAMPLE: &[&str] = &[
    "admit",
    "--policy",
    "examples/webhooks/webhooks.yaml",
    "--namespace",
    "examples/webhooks/namespaces.yaml",
    "--user",
    "alice",
    "examples/webhooks/manifests.yaml",
];

#[test]
fn the_example_says_which_webhooks_are_called() {
    let o = cel(EXAMPLE);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn json_lines_carry_the_webhooks_array() {
    let mut args = EXAMPLE.to_vec();
    args.extend_from_slice(&["--output", "json"]);
    let o = cel(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines: Vec<Json> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    let called = |line: &Json| -> Vec<(String, bool, Json)> {
        line["webhooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    w["name"].as_str().unwrap().to_string(),
                    w["called"].as_bool().unwrap(),
                    w["reason"].clone(),
                )
            })
            .collect()
    };
    // The storefront pod: the sidecar injector (mutating, first) and the team check.
    assert_eq!(
        called(&lines[0]),
        vec![
            ("inject.sidecar.example.com".into(), true, Json::Null),
            (
                "replicas.policy.example.com".into(),
                false,
                json!("no rule matches CREATE v1, Resource=pods")
            ),
            ("team.policy.example.com".into(), true, Json::Null),
        ]
    );
    assert_eq!(
        lines[2]["webhooks"][2]["reason"],
        "matchCondition \"not-infra\" is false"
    );
    assert_eq!(
        lines[2]["webhooks"][0]["reason"],
        "namespaceSelector does not match the labels of namespace \"batch\""
    );
    let first = &lines[0]["webhooks"][0];
    assert_eq!(first["configuration"], "sidecar-injector");
    assert_eq!(first["kind"], "MutatingWebhookConfiguration");
}

fn configuration(failure_policy: &str, expression: &str) -> Json {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "checks"},
        "webhooks": [
            {"name": "first.example.com", "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                "apiVersions": ["v1"], "resources": ["pods"]}]},
            {"name": "second.example.com", "failurePolicy": failure_policy,
                "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}],
                "matchConditions": [{"name": "team", "expression": expression}]},
            {"name": "third.example.com",
                "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]}]})
}

fn batch(config: Json) -> Json {
    let line = json!({"webhooks": [config], "object": {"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "shop"}}});
    let o = cel_stdin(&["admit", "--batch", "-"], &format!("{line}\n"));
    serde_json::from_str(stdout(&o).trim()).unwrap()
}

#[test]
fn a_failing_match_condition_rejects_under_fail_and_skips_under_ignore() {
    let expression = "object.metadata.labels['team'] == 'web'";
    let got = batch(configuration("Fail", expression));
    assert_eq!(got["allowed"], false, "{got}");
    assert_eq!(got["status"]["code"], 403);
    assert_eq!(
        got["status"]["message"],
        "pods \"web\" is forbidden: expression 'object.metadata.labels['team'] == 'web'' resulted in error: no such key: labels"
    );
    let hooks = got["webhooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 3);
    // Validating webhooks are called once all are matched: none is.
    assert_eq!(hooks[0]["called"], false);
    assert!(hooks.iter().all(|h| h["called"] == false));
    assert_eq!(hooks[1]["error"], got["status"]["message"]);
    assert!(
        hooks[2]["reason"]
            .as_str()
            .unwrap()
            .starts_with("not reached")
    );

    let got = batch(configuration("Ignore", expression));
    assert_eq!(got["allowed"], true, "{got}");
    let called: Vec<&Json> = got["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| &h["called"])
        .collect();
    assert_eq!(called, vec![&json!(true), &json!(false), &json!(true)]);
}

#[test]
fn a_match_condition_that_does_not_compile_is_an_error_at_its_path() {
    let got = batch(configuration("Fail", "object.metadata.name +"));
    assert_eq!(got["ok"], false);
    let error = got["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "ValidatingWebhookConfiguration \"checks\": webhooks[1].matchConditions[0].expression: compilation failed: ERROR: <input>:1:23: Syntax error"
        ),
        "{error}"
    );
}
