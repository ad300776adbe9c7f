//! `cel eval --env NAME` and `cel functions --env NAME`: the batch line format of issue 34.

use std::io::Write;
use std::process::{Command, Stdio};

fn cel_stdin(args: &[&str], input: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cel"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cel");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let o = child.wait_with_output().expect("wait");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
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
