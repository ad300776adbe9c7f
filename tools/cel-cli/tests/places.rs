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
            "authz-match",
            "--profile",
            "kubernetes=1.28",
            "true",
        ],
        "",
    );
    assert!(!ok);
    assert!(err.contains("exist from 1.29"), "{err}");
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
