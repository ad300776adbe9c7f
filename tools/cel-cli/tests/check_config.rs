//! `cel check-config`: the API server's checks of authentication, authorization and
//! webhook configuration files, on the README's example and on bad input.

mod support;

use std::time::{Duration, Instant};

use support::{cel, cel_stdin, stderr, stdout};

#[test]
fn the_invalid_example_gets_the_api_servers_errors() {
    let o = cel(&["check-config", "examples/authn/invalid-config.yaml"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn the_valid_example_is_valid() {
    let o = cel(&["check-config", "examples/authn/config.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "examples/authn/config.yaml: AuthenticationConfiguration is valid\n1 configuration checked: 0 invalid\n"
    );
}

#[test]
fn json_output_has_a_line_per_document() {
    let o = cel(&[
        "check-config",
        "--output",
        "json",
        "examples/authn/invalid-config.yaml",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["kind"], "AuthorizationConfiguration");
    assert_eq!(lines[1]["document"], 1);
    assert_eq!(
        lines[1]["errors"],
        serde_json::json!([{
            "field": "authorizers[0].matchConditions[0].expression",
            "type": "FieldValueInvalid",
            "detail": "must evaluate to bool but got string",
            "message": "authorizers[0].matchConditions[0].expression: Invalid value: \"request.resourceAttributes.namespace\": must evaluate to bool but got string",
        }])
    );
}

#[test]
fn batch_lines_give_errors_or_say_why_the_input_is_unusable() {
    let input = concat!(
        r#"{"config": {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration", "webhooks": [{"name": "a.b.c", "sideEffects": "None", "admissionReviewVersions": ["v1"], "matchConditions": [{"name": "x", "expression": "object.kind"}, {"name": "x", "expression": "true"}]}]}}"#,
        "\n",
        r#"{"config": {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthorizationConfiguration", "authorizers": [{"type": "RBAC", "name": "rbac"}]}}"#,
        "\n",
        r#"{"config": {"apiVersion": "v1", "kind": "ConfigMap"}}"#,
        "\n",
        r#"{"config": {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthenticationConfiguration", "jwt": [{"issuer": {"url": 7}}]}}"#,
        "\n",
    );
    let o = cel_stdin(&["check-config", "--batch", "-"], input);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            r#"{"ok":true,"errors":[{"field":"webhooks[0].matchConditions[0].expression","type":"FieldValueInvalid","detail":"must evaluate to bool but got dyn","message":"webhooks[0].matchConditions[0].expression: Invalid value: \"object.kind\": must evaluate to bool but got dyn"},{"field":"webhooks[0].matchConditions[1].name","type":"FieldValueDuplicate","detail":"","message":"webhooks[0].matchConditions[1].name: Duplicate value: \"x\""}]}"#,
            r#"{"ok":true,"errors":[]}"#,
            r#"{"ok":false,"error":"kind \"ConfigMap\" is not a configuration check-config knows (one of AuthenticationConfiguration, AuthorizationConfiguration, ValidatingWebhookConfiguration, MutatingWebhookConfiguration)"}"#,
            r#"{"ok":false,"error":"jwt[0].issuer.url: expected a string, got a number"}"#,
        ]
    );
}

#[test]
fn unknown_kinds_and_unserved_versions_are_unusable_with_their_document() {
    let input = "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n";
    let o = cel_stdin(
        &["check-config", "--profile", "kubernetes=1.33", "-"],
        input,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.starts_with("- (document 0): kind \"ConfigMap\" is not a configuration"),
        "{err}"
    );
    assert!(
        err.contains("-#1 (document 1): apiVersion \"apiserver.config.k8s.io/v1\": Kubernetes 1.33 serves AuthenticationConfiguration as apiserver.config.k8s.io/v1alpha1, apiserver.config.k8s.io/v1beta1"),
        "{err}"
    );
}

/// Runs `cel` on `input`, failing if it takes a minute or more (the output may be large, so
/// it is read as it comes rather than polled for).
fn timed(args: &[&str], input: &str) -> std::process::Output {
    let start = Instant::now();
    let o = cel_stdin(args, input);
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
    o
}

#[test]
fn absurd_configurations_are_errors_in_bounded_time() {
    // A 10 MB expression: the parser's size limit, reported at its path.
    let big = format!(
        "{{\"config\": {{\"apiVersion\": \"apiserver.config.k8s.io/v1\", \"kind\": \"AuthorizationConfiguration\", \"authorizers\": [{{\"type\": \"Webhook\", \"name\": \"w\", \"webhook\": {{\"timeout\": \"3s\", \"subjectAccessReviewVersion\": \"v1\", \"matchConditionSubjectAccessReviewVersion\": \"v1\", \"failurePolicy\": \"Deny\", \"connectionInfo\": {{\"type\": \"InClusterConfig\"}}, \"matchConditions\": [{{\"expression\": \"{}\"}}]}}}}]}}}}\n",
        "1 + ".repeat(2_500_000) + "1"
    );
    let o = timed(&["check-config", "--batch", "-"], &big);
    let out = stdout(&o);
    assert!(
        out.starts_with(r#"{"ok":true,"errors":[{"field":"authorizers[0].matchConditions[0].expression","type":"FieldValueInvalid","detail":"compilation failed: ERROR: <input>:-1:0: expression code point size exceeds limit: size: 10000001, limit 100000""#),
        "{}",
        &out[..out.len().min(300)]
    );
    // 10,000 nested parentheses: the parser's nesting limit.
    let deep = format!(
        "{{\"config\": {{\"apiVersion\": \"apiserver.config.k8s.io/v1\", \"kind\": \"AuthenticationConfiguration\", \"jwt\": [{{\"issuer\": {{\"url\": \"https://i\", \"audiences\": [\"a\"]}}, \"claimMappings\": {{\"username\": {{\"expression\": \"{}claims.sub{}\"}}}}}}]}}}}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let o = timed(&["check-config", "--batch", "-"], &deep);
    let out = stdout(&o);
    assert!(
        out.contains("jwt[0].claimMappings.username.expression: Invalid value"),
        "{}",
        &out[..out.len().min(300)]
    );
    // A document nested 10,000 levels deep: refused by the reader, with its place.
    let nested = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let o = timed(&["check-config", "-"], &nested);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("(document 0)"), "{}", stderr(&o));
}
