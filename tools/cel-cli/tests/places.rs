//! `cel eval --env NAME` and `cel functions --env NAME`: the batch line format of issue 34.

mod support;

/// Runs `cel` with `input` on standard input: success, standard output, standard error.
fn cel_stdin(args: &[&str], input: &str) -> (bool, String, String) {
    let o = support::cel_stdin(args, input);
    (o.status.success(), support::stdout(&o), support::stderr(&o))
}

#[test]
fn batch_lines_print_values_costs_and_estimates() {
    let input = concat!(
        r#"{"expr": "device.attributes['dra.example.com'].model == 'a100'", "vars": {"device": {"driver": "dra.example.com", "attributes": {"model": {"string": "a100"}}}}}"#,
        "\n",
        r#"{"expr": "device.driver", "vars": {}}"#,
        "\n",
        r#"{"expr": "device.attributes['x'].y", "vars": {"device": {"driver": "d"}}}"#,
        "\n",
    );
    for backend in ["interpreter", "jit"] {
        let (ok, out, err) = cel_stdin(
            &[
                "eval",
                "--env",
                "dra-selector",
                "--backend",
                backend,
                "--batch",
                "-",
            ],
            input,
        );
        assert!(!ok, "{err}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                r#"{"ok":true,"value":"true","type":"bool","cost":5,"est_min":5,"est_max":5}"#,
                r#"{"ok":false,"error":"must evaluate to bool or the unknown type, not string","phase":"compile","cost":0}"#,
                r#"{"ok":false,"error":"no such key: y","phase":"eval","cost":4}"#,
            ],
            "{backend}"
        );
    }
}

#[test]
fn env_needs_a_known_name_and_a_version_that_has_it() {
    let (ok, _, err) = cel_stdin(&["eval", "--env", "dra", "true"], "");
    assert!(!ok);
    assert!(err.contains("unknown environment 'dra'"), "{err}");
    let (ok, _, err) = cel_stdin(
        &[
            "eval",
            "--env",
            "dra-selector",
            "--profile",
            "kubernetes=1.30",
            "true",
        ],
        "",
    );
    assert!(!ok);
    assert!(err.contains("exist from 1.31"), "{err}");
    // Releases before 1.30 are refused by the profile itself (their cel-go is not modelled).
    let (ok, _, err) = cel_stdin(
        &[
            "eval",
            "--env",
            "authz-match",
            "--profile",
            "kubernetes=1.28",
            "true",
        ],
        "",
    );
    assert!(!ok);
    assert!(err.contains("supported versions are 1.30 to 1.37"), "{err}");
}

#[test]
fn functions_list_variables_first() {
    let (ok, out, err) = cel_stdin(&["functions", "--env", "authn-user"], "");
    assert!(ok, "{err}");
    assert!(
        out.starts_with("variable user: kubernetes.UserInfo\n"),
        "{out}"
    );
    assert!(out.contains("\nisSemver\n"), "the base libraries are there");
}

#[test]
fn absurd_inputs_are_errors_with_positions() {
    // 10,000 levels of nesting in the claims: refused where the JSON stops, at once.
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let line = format!(r#"{{"expr": "true", "vars": {{"claims": {{"sub": {deep}}}}}}}"#);
    let (ok, out, _) = cel_stdin(&["eval", "--env", "authn-claims", "--batch", "-"], &line);
    assert!(!ok);
    assert!(out.contains(r#""phase":"input""#), "{out}");
    assert!(out.contains("recursion limit exceeded at line 1"), "{out}");
    // A selector that reaches the cost limit stops there.
    let expr = "[0,1,2,3,4,5,6,7,8,9].all(a, [0,1,2,3,4,5,6,7,8,9].all(b, [0,1,2,3,4,5,6,7,8,9].all(c, [0,1,2,3,4,5,6,7,8,9].all(d, [0,1,2,3,4,5,6,7,8,9].all(e, [0,1,2,3,4,5,6,7,8,9].all(f, a+b+c+d+e+f >= 0))))))";
    let (ok, out, err) = cel_stdin(
        &["eval", "--env", "dra-selector", "--output", "json", expr],
        "",
    );
    assert!(!ok, "{out}{err}");
    assert!(out.contains("cost limit exceeded"), "{out}");
    // Attributes of the wrong type name their path.
    let line = r#"{"expr": "true", "vars": {"device": {"attributes": {"a": {"int": "7"}}}}}"#;
    let (ok, out, _) = cel_stdin(&["eval", "--env", "dra-selector", "--batch", "-"], line);
    assert!(!ok);
    assert!(
        out.contains(r#"device.attributes[\"a\"]: attribute a: int: wrong type"#),
        "{out}"
    );
}

fn repo(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn authn_example_gives_the_user_and_the_authenticators_errors() {
    let config = repo("examples/authn/config.yaml");
    let claims = repo("examples/authn/claims.json");
    let (ok, out, err) = cel_stdin(
        &[
            "authn",
            "--config",
            &config,
            "--claims",
            &claims,
            "--now",
            "1767225600",
        ],
        "",
    );
    assert!(ok, "{err}");
    assert_eq!(
        out,
        concat!(
            "username: oidc:jane@example.com\n",
            "uid: 1234-5678\n",
            "groups: [\"role:developer\",\"role:oncall\"]\n",
            "extra: {\"authentication.kubernetes.io/credential-id\":[\"JTI=a1b2c3\"],\"example.com/team\":[\"checkout\"]}\n",
        )
    );
    let unverified = repo("examples/authn/unverified.json");
    let (ok, _, err) = cel_stdin(
        &[
            "authn",
            "--config",
            &config,
            "--claims",
            &unverified,
            "--now",
            "1767225600",
        ],
        "",
    );
    assert!(!ok);
    assert_eq!(
        err,
        "oidc: empty username via CEL expression is not allowed\n"
    );
    let (ok, _, err) = cel_stdin(
        &[
            "authn",
            "--config",
            &config,
            "--claims",
            &claims,
            "--now",
            "1993456000",
        ],
        "",
    );
    assert!(!ok);
    assert_eq!(
        err,
        "oidc: verify token: oidc: token is expired (Token Expiry: 2030-01-01 00:00:00 +0000 UTC)\n"
    );
}

#[test]
fn authn_batch_lines_print_users_or_errors() {
    let jwt = r#"{"issuer": {"url": "https://auth.example.com", "audiences": ["my-client"]}, "claimMappings": {"username": {"expression": "claims.sub"}, "groups": {"claim": "groups", "prefix": "oidc:"}, "extra": [{"key": "example.org/foo", "valueExpression": "claims.foo"}]}}"#;
    let line = |claims: &str| format!("{{\"jwt\": {jwt}, \"claims\": {claims}}}\n");
    let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let input = [
        line(r#"{"iss": "https://auth.example.com", "aud": "my-client", "sub": "jane", "groups": "dev", "foo": ["a", ""], "exp": 1893456000}"#),
        line(r#"{"iss": "https://auth.example.com", "aud": "my-client", "sub": 7, "exp": 1893456000}"#),
        line(r#"{"iss": "https://auth.example.com", "aud": "other", "sub": "jane", "exp": 1893456000}"#),
        r#"{"jwt": {"issuer": {"url": "http://x", "audiences": ["a"]}, "claimMappings": {"extra": [{"key": "Foo", "valueExpression": "claims.x"}]}}, "claims": {}}"#.to_string() + "\n",
        format!("{{\"jwt\": {jwt}, \"claims\": {{\"deep\": {deep}}}}}\n"),
    ]
    .concat();
    let (ok, out, err) = cel_stdin(&["authn", "--batch", "-", "--now", "1767225600"], &input);
    assert!(!ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert_eq!(
        lines[0],
        r#"{"ok":true,"user":{"username":"jane","uid":"","groups":["oidc:dev"],"extra":{"example.org/foo":["a"]}}}"#
    );
    assert_eq!(
        lines[1],
        r#"{"ok":false,"error":"oidc: error evaluating username claim expression: username claim expression must return a string"}"#
    );
    assert_eq!(
        lines[2],
        r#"{"ok":false,"error":"oidc: verify token: oidc: expected audience \"my-client\" got [\"other\"]"}"#
    );
    assert!(
        lines[3].starts_with(r#"{"ok":false,"error":"["#),
        "{}",
        lines[3]
    );
    assert!(
        lines[3].contains(r#"issuer.url: Invalid value: \"http://x\": URL scheme must be https"#)
    );
    assert!(
        lines[3]
            .contains("claimMappings.username: Required value: claim or expression is required")
    );
    assert!(
        lines[3]
            .contains(r#"claimMappings.extra[0].key: Invalid value: \"Foo\": must be lowercase"#)
    );
    assert!(
        lines[4].starts_with(r#"{"ok":false,"error":"invalid JSON"#),
        "{}",
        lines[4]
    );
}
