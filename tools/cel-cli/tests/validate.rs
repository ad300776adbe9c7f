//! End-to-end tests of `cel validate`, the schema-typed batch modes, and the command's
//! handling of bad and hostile input.

mod support;

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use support::{cel, cel_stdin, stderr, stdout};

const CRD: &str = "examples/crd/webapps.yaml";

#[test]
fn the_example_validates_as_the_api_server_would() {
    let o = cel(&[
        "validate",
        "--crd",
        CRD,
        "examples/crd/manifests/valid.yaml",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        stdout(&o),
        "examples/crd/manifests/valid.yaml: WebApp \"storefront\" is valid\n\
         examples/crd/manifests/valid.yaml#1: WebApp \"checkout\" is valid\n\
         2 objects: 2 valid, 0 invalid\n"
    );
    let o = cel(&[
        "validate",
        "--crd",
        CRD,
        "examples/crd/manifests/invalid.yaml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    // A rule with a message expression and a defaulted field (maxReplicas: 10).
    assert!(out.contains("The WebApp \"analytics\" is invalid:\n* spec: Invalid value: replicas must be between minReplicas and maxReplicas\n"), "{out}");
    assert!(out.contains("* spec.image: Invalid value: \"registry.example.com/analytics:latest\": image registry.example.com/analytics:latest must be pinned to a tag other than latest\n"), "{out}");
    // A reason and a field path.
    assert!(
        out.contains("* spec.ingress.host: Required value: TLS needs a host\n"),
        "{out}"
    );
    // A rule on the resource itself reports at <nil>, as the API server does.
    assert!(
        out.contains("* <nil>: Invalid value: the name of a WebApp is at most 40 characters"),
        "{out}"
    );
    // OpenAPI validation first; the rules do not run on a broken object.
    assert!(out.contains("* spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"\n"), "{out}");
    assert!(
        out.contains("some validation rules were not checked because the object was invalid"),
        "{out}"
    );
    assert!(out.ends_with("3 objects: 0 valid, 3 invalid\n"), "{out}");
}

#[test]
fn updates_run_transition_rules() {
    let o = cel(&[
        "validate",
        "--crd",
        CRD,
        "--old",
        "examples/crd/manifests/old.yaml",
        "examples/crd/manifests/valid.yaml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("* spec.replicas: Forbidden: replicas may only go down with allowScaleDown\n"),
        "{out}"
    );
    assert!(out.contains("* spec.strategy: Invalid value: \"RollingUpdate\": a Recreate strategy cannot be changed once set\n"), "{out}");
    // The second object has no old version: a create.
    assert!(out.contains("WebApp \"checkout\" is valid"), "{out}");
}

#[test]
fn json_output_has_one_object_per_manifest() {
    let o = cel(&[
        "validate",
        "--crd",
        CRD,
        "--output",
        "json",
        "examples/crd/manifests/",
    ]);
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // invalid.yaml (3), old.yaml (1), valid.yaml (2), in file name order.
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["name"], "analytics");
    assert_eq!(lines[0]["valid"], false);
    let first = &lines[0]["errors"][0];
    assert_eq!(first["type"], "FieldValueInvalid");
    assert_eq!(first["field"], "spec");
    assert!(
        lines[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("The WebApp \"analytics\" is invalid:")
    );
    assert_eq!(lines[5]["valid"], true);
    assert_eq!(lines[5]["errors"], serde_json::json!([]));
    // What the rules cost, out of the per-object budget.
    assert_eq!(lines[0]["runtime_cost"], 146);
}

#[test]
fn bad_input_is_reported_and_the_rest_still_validated() {
    let manifests = "apiVersion: apps.example.com/v1\nkind: WebApp\nmetadata: {name: ok, namespace: ns}\nspec: {image: 'a:1', replicas: 1}\n---\napiVersion: other.example.com/v1\nkind: Gadget\nmetadata: {name: g}\n---\n: [unbalanced\n";
    let o = cel_stdin(&["validate", "--crd", CRD, "-"], manifests);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("-#2: error: invalid YAML"), "{out}");
    assert!(out.contains("-: WebApp \"ok\" is valid"), "{out}");
    assert!(
        out.contains(
            "-#1: error: no CustomResourceDefinition serves other.example.com/v1, Kind=Gadget"
        ),
        "{out}"
    );
    assert_eq!(o.status.code(), Some(2));
    let o = cel_stdin(
        &[
            "validate",
            "--crd",
            "-",
            "examples/crd/manifests/valid.yaml",
        ],
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x.y.z}\nspec: {group: y.z, names: {kind: X, plural: x}, scope: Namespaced, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-validations: [{rule: 'self.nope'}]}}}]}\n",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("The CustomResourceDefinition \"x.y.z\" is invalid: spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value:"), "{}", stderr(&o));
}

#[test]
fn yaml_bombs_and_deep_documents_are_refused() {
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let (p, n) = ((b'a' + i - 1) as char, (b'a' + i) as char);
        bomb.push_str(&format!(
            "{n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        ));
    }
    let o = cel_stdin(&["validate", "--crd", CRD, "-"], &bomb);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("error: invalid YAML"), "{}", stdout(&o));
    let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    let o = cel_stdin(&["validate", "--crd", CRD, "-"], &deep);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn eval_batch_types_self_by_a_schema() {
    let schema = r#"{"type": "object", "properties": {"n": {"type": "number"}, "s": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}}}"#;
    let lines = [
        format!(
            r#"{{"expr": "self.n == 1.0 && type(self.n) == double", "schema": {schema}, "vars": {{"self": {{"n": 1}}}}}}"#
        ),
        format!(
            r#"{{"expr": "self.s == ['b', 'a']", "schema": {schema}, "vars": {{"self": {{"s": ["a", "b"]}}}}}}"#
        ),
        format!(
            r#"{{"expr": "self.n > oldSelf.n", "schema": {schema}, "vars": {{"self": {{"n": 1}}}}}}"#
        ),
        format!(
            r#"{{"expr": "self.n > oldSelf.n", "schema": {schema}, "vars": {{"self": {{"n": 2}}, "oldSelf": {{"n": 1}}}}}}"#
        ),
        format!(
            r#"{{"expr": "oldSelf.hasValue()", "schema": {schema}, "optional_old_self": true, "vars": {{"self": {{"n": 2}}}}}}"#
        ),
        format!(r#"{{"expr": "self.m", "schema": {schema}, "vars": {{"self": {{}}}}}}"#),
    ];
    let o = cel_stdin(
        &["eval", "--profile", "kubernetes", "--cost", "--batch", "-"],
        &(lines.join("\n") + "\n"),
    );
    let out: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(out.len(), 6, "{}", stdout(&o));
    assert_eq!(out[0]["value"], "true");
    assert_eq!(out[1]["value"], "true", "a set ignores order");
    assert_eq!(out[2], serde_json::json!({"ok": true, "skipped": true}));
    assert_eq!(out[3]["value"], "true");
    assert_eq!(out[4]["value"], "false");
    assert_eq!(out[5]["ok"], false);
    assert!(
        out[5]["error"]
            .as_str()
            .unwrap()
            .contains("undefined field 'm'")
    );
    // One line failed to compile: the status says so.
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn check_cost_and_validate_batches() {
    let schema = r#"{"type": "array", "items": {"type": "string"}}"#;
    let line = format!(r#"{{"expr": "self.all(x, true)", "schema": {schema}}}"#);
    let o = cel_stdin(&["check", "--profile", "kubernetes", "--batch", "-"], &line);
    assert_eq!(stdout(&o), "{\"ok\":true,\"type\":\"bool\"}\n");
    // Kubernetes' own estimate for an unbounded list of strings (compilation_test.go).
    let o = cel_stdin(&["cost", "--profile", "kubernetes", "--batch", "-"], &line);
    assert_eq!(stdout(&o), "{\"ok\":true,\"min\":2,\"max\":3145727}\n");
    let v = r#"{"schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "x-kubernetes-validations": [{"rule": "self.n < 3", "message": "small"}]}, "object": {"n": 5}, "field_root": "root"}"#;
    let o = cel_stdin(&["validate", "--batch", "-"], v);
    let out: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        out,
        serde_json::json!({"ok": true, "errors": [{"type": "FieldValueInvalid", "field": "root", "detail": "small", "message": "root: Invalid value: small"}], "warnings": [], "remaining_budget": 9_999_997})
    );
}

#[test]
fn batch_lines_stay_aligned_and_strict() {
    let input = "{\"expr\": \"1 + 1\"}\n\n{\"expr\": \"1\", \"bogus\": 1}\nnot json\n[1]\n{\"expr\": \"2\"}\n";
    let o = cel_stdin(&["eval", "--batch", "-"], input);
    let out: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(out.len(), 6);
    assert_eq!(out[0]["value"], "2");
    assert_eq!(out[1]["error"], "blank line");
    assert_eq!(out[2]["error"], "unknown field \"bogus\"");
    assert!(
        out[3]["error"]
            .as_str()
            .unwrap()
            .starts_with("invalid JSON")
    );
    assert_eq!(out[4]["error"], "a line must be a JSON object");
    assert_eq!(out[5]["value"], "2");
    assert_eq!(o.status.code(), Some(1));
    let o = cel(&["eval", "1", "--batch", "-"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let input: String = (0..20_000)
        .map(|i| format!("{{\"expr\": \"{i}\"}}\n"))
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cel"))
        .args(["eval", "--batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // stdout is dropped (closed) here.
    let status = child.wait().unwrap();
    let _ = writer.join();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(141));
}

#[test]
fn special_files_are_refused() {
    let o = cel(&["eval", "--proto", "/dev/zero", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o), "error: --proto /dev/zero: not a regular file\n");
    let o = cel(&["eval", "--vars", "/dev/zero", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("larger than 64 MiB") || stderr(&o).contains("not UTF-8"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn oversized_lines_and_files_are_errors() {
    let o = cel(&["eval", "--batch", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("\"error\":\"line longer than 16 MiB\""),
        "{}",
        stdout(&o)
    );
}

#[test]
fn unknown_fields_follow_field_validation() {
    let m = "apiVersion: apps.example.com/v1\nkind: WebApp\nmetadata: {name: w, namespace: ns}\nspec: {image: 'a:1', replicas: 1, colour: blue}\n";
    let o = cel_stdin(&["validate", "--crd", CRD, "-"], m);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "-: WebApp in version \"v1\" cannot be handled as a WebApp: strict decoding error: unknown field \"spec.colour\"\n1 object: 0 valid, 1 invalid\n"
    );
    let o = cel_stdin(
        &["validate", "--crd", CRD, "--field-validation", "warn", "-"],
        m,
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "-: Warning: unknown field \"spec.colour\"\n-: WebApp \"w\" is valid\n1 object: 1 valid, 0 invalid\n"
    );
    let o = cel_stdin(
        &[
            "validate",
            "--crd",
            CRD,
            "--field-validation",
            "ignore",
            "-",
        ],
        m,
    );
    assert_eq!(
        stdout(&o),
        "-: WebApp \"w\" is valid\n1 object: 1 valid, 0 invalid\n"
    );
}
