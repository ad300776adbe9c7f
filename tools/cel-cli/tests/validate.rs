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
    // kubectl's layout: the head keeps its trailing space before the list.
    assert!(out.contains("The WebApp \"analytics\" is invalid: \n* spec: Invalid value: replicas must be between minReplicas and maxReplicas\n"), "{out}");
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
    // The message is the API server's Status message; the Status is the API server's.
    assert!(
        lines[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("WebApp.apps.example.com \"analytics\" is invalid: [spec: Invalid value: replicas must be between minReplicas and maxReplicas, spec.image: ")
    );
    let status = &lines[0]["status"];
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["code"], 422);
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["message"], lines[0]["message"]);
    assert_eq!(
        status["details"]["causes"][0],
        serde_json::json!({"reason": "FieldValueInvalid", "message": "Invalid value: replicas must be between minReplicas and maxReplicas", "field": "spec"})
    );
    assert_eq!(
        (
            &status["details"]["name"],
            &status["details"]["group"],
            &status["details"]["kind"]
        ),
        (
            &serde_json::json!("analytics"),
            &serde_json::json!("apps.example.com"),
            &serde_json::json!("WebApp")
        )
    );
    assert_eq!(lines[5]["valid"], true);
    assert_eq!(lines[5]["errors"], serde_json::json!([]));
    assert_eq!(lines[5]["status"]["status"], "Success");
    // What the rules cost, out of the per-object budget (the default release, 1.36: its cel-go's costs).
    assert_eq!(lines[0]["runtime_cost"], 150);
}

#[test]
fn bad_input_is_reported_and_the_rest_still_validated() {
    let manifests = "apiVersion: apps.example.com/v1\nkind: WebApp\nmetadata: {name: ok, namespace: ns}\nspec: {image: 'a:1', replicas: 1}\n---\napiVersion: other.example.com/v1\nkind: Gadget\nmetadata: {name: g}\n---\n: [unbalanced\n";
    let o = cel_stdin(&["validate", "--crd", CRD, "-"], manifests);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("-#2: error: error converting YAML to JSON: yaml: line "),
        "{out}"
    );
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
    // The CRD serves no manifest here, so it is never compiled: nothing to report.
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stdout(&o).contains("not validated"), "{}", stdout(&o));
    // Routed to, it is refused with the API server's words.
    let crd_file = support::temp_file(
        "bad-crd.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x.y.z}\nspec: {group: y.z, names: {kind: X, plural: x}, scope: Namespaced, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-validations: [{rule: 'self.nope'}]}}}]}\n",
    );
    let o = cel_stdin(
        &["validate", "--crd", crd_file.to_str().unwrap(), "-"],
        "apiVersion: y.z/v1\nkind: X\nmetadata: {name: a}\n",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("-: error: its CustomResourceDefinition is refused: The CustomResourceDefinition \"x.y.z\" is invalid: spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value:"), "{}", stdout(&o));
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
    assert!(stdout(&o).contains("excessive aliasing"), "{}", stdout(&o));
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
        .env("CELERITY_CACHE_DIR", support::cache_dir())
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
        "-: Error from server (BadRequest): WebApp in version \"v1\" cannot be handled as a WebApp: strict decoding error: unknown field \"spec.colour\"\n1 object: 0 valid, 1 invalid\n"
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

/// A namespaced CRD with status and scale subresources, a rule on the name, a rule on the
/// status, and its cluster-scoped twin (`Gadget`).
fn widgets_crd() -> std::path::PathBuf {
    let version = |kind: &str, scope: &str, plural: &str| {
        format!(
            r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {plural}.example.com}}
spec:
  group: example.com
  scope: {scope}
  names: {{plural: {plural}, singular: x, kind: {kind}, listKind: {kind}List}}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {{}}
      scale: {{specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations:
        - {{rule: "self.metadata.name.startsWith('w')", message: "name must start with w"}}
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - {{rule: "self.size >= 0", message: "size must be non-negative"}}
            properties:
              size: {{type: integer}}
              replicas: {{type: integer}}
              mode: {{type: string}}
          status:
            type: object
            x-kubernetes-validations:
            - rule: "!has(self.replicas) || self.replicas < 100"
            properties:
              replicas: {{type: integer}}
              selector: {{type: string}}
"#
        )
    };
    support::temp_file(
        "widgets.yaml",
        &format!(
            "{}---\n{}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: not-a-crd}}\n",
            version("Widget", "Namespaced", "widgets"),
            version("Gadget", "Cluster", "gadgets")
        ),
    )
}

fn validate_stdin(extra: &[&str], input: &str) -> (Option<i32>, String, String) {
    let crd = widgets_crd();
    let mut args = vec!["validate", "--crd", crd.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.push("-");
    let o = cel_stdin(&args, input);
    (o.status.code(), stdout(&o), stderr(&o))
}

#[test]
fn namespaces_are_given_and_taken_as_kubectl_does() {
    // A namespaced object without a namespace that breaks a rule: the rule's message, not
    // a namespace error.
    let (code, out, _) = validate_stdin(
        &[],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: -1}\n",
    );
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        out,
        "-: The Widget \"w1\" is invalid: spec: Invalid value: size must be non-negative\n1 object: 0 valid, 1 invalid\n"
    );
    let (_, out, _) = validate_stdin(
        &["--namespace", "team-a", "--output", "json"],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 1}\n",
    );
    assert!(out.contains("\"namespace\":\"team-a\""), "{out}");
    // A cluster-scoped object with a namespace: kubectl drops it.
    let (code, out, _) = validate_stdin(
        &[],
        "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: w2, namespace: default}\nspec: {size: 1}\n",
    );
    assert_eq!(
        (code, out.as_str()),
        (
            Some(0),
            "-: Gadget \"w2\" is valid\n1 object: 1 valid, 0 invalid\n"
        )
    );
    // A namespace that is not a valid name is the metadata error, at its path.
    let (code, out, _) = validate_stdin(
        &[],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w3, namespace: Bad_NS}\nspec: {size: 1}\n",
    );
    assert_eq!(code, Some(1));
    assert!(
        out.contains("metadata.namespace: Invalid value: \"Bad_NS\""),
        "{out}"
    );
}

#[test]
fn the_create_path_is_the_api_servers() {
    // Unknown metadata fields are strict-decoding errors, before pruned fields.
    let (_, out, _) = validate_stdin(
        &[],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, label: {a: b}}\nspec: {size: 1, bogus: 2}\n",
    );
    assert!(out.contains("-: Error from server (BadRequest): Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"metadata.label\", unknown field \"spec.bogus\"\n"), "{out}");
    // generateName: the name is generated before the rules run.
    let (code, out, _) = validate_stdin(
        &[],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {generateName: web-}\nspec: {size: 1}\n",
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("-: Widget \"web-"), "{out}");
    // Finalizer names get the API server's warnings, in sorted order.
    let (_, out, _) = validate_stdin(
        &[],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, finalizers: [foo, example.com, example.com/f, kubernetes]}\nspec: {size: 1}\n",
    );
    assert!(out.starts_with("-: Warning: metadata.finalizers: \"example.com\": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers\n-: Warning: metadata.finalizers: \"foo\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers\n"), "{out}");
    // Malformed metadata refuses the request before validation.
    let (_, out, _) = validate_stdin(
        &[],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, labels: notamap}\nspec: {size: 1}\n",
    );
    assert!(out.contains("-: Error from server (BadRequest): Widget in version \"v1\" cannot be handled as a Widget: json: cannot unmarshal string into Go struct field ObjectMeta.labels of type map[string]string\n"), "{out}");
    // The status subresource: a create drops the status, so its rule cannot fail.
    let (code, _, _) = validate_stdin(
        &[],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 1}\nstatus: {replicas: 500}\n",
    );
    assert_eq!(code, Some(0));
    // The scale subresource's checks.
    let (_, out, _) = validate_stdin(
        &[],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 1, replicas: -1}\n",
    );
    assert!(
        out.contains(": .spec.replicas: Invalid value: -1: should be a non-negative integer"),
        "{out}"
    );
}

#[test]
fn the_update_path_is_the_api_servers() {
    let old = support::temp_file(
        "old-widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, uid: '1111'}\nspec: {size: 1}\nstatus: {replicas: 5}\n",
    );
    // The stored status replaces the manifest's: its rule passes.
    let (code, out, _) = validate_stdin(
        &["--old", old.to_str().unwrap()],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 2}\nstatus: {replicas: 500}\n",
    );
    assert_eq!(
        (code, out.as_str()),
        (
            Some(0),
            "-: Widget \"w1\" is valid\n1 object: 1 valid, 0 invalid\n"
        )
    );
    // The uid may not change.
    let (code, out, _) = validate_stdin(
        &["--old", old.to_str().unwrap()],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, uid: '2222'}\nspec: {size: 2}\n",
    );
    assert_eq!(code, Some(1));
    assert!(
        out.contains("metadata.uid: Invalid value: \"2222\": field is immutable"),
        "{out}"
    );
}

#[test]
fn inputs_are_read_as_kubernetes_reads_them() {
    // Lists, nested and typed: items take the list's kind.
    let (code, out, _) = validate_stdin(
        &[],
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - {apiVersion: example.com/v1, kind: Widget, metadata: {name: w-inner}, spec: {size: 1}}\n---\napiVersion: example.com/v1\nkind: WidgetList\nitems:\n- metadata: {name: w-typed}\n  spec: {size: 1}\n",
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out,
        "-: Widget \"w-inner\" is valid\n-#1: Widget \"w-typed\" is valid\n2 objects: 2 valid, 0 invalid\n"
    );
    // Repeated keys are a strict-decoding error (the last value is kept otherwise); YAML
    // 1.1 values as kubectl converts them.
    let (_, out, _) = validate_stdin(
        &[],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 1, size: 2}\n",
    );
    assert!(
        out.contains("strict decoding error: duplicate field \"spec.size\""),
        "{out}"
    );
    let (code, out, _) = validate_stdin(
        &["--output", "json"],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 0755, mode: on}\n",
    );
    // `on` is a boolean to kubectl, so a string field refuses it.
    assert_eq!(code, Some(1));
    assert!(
        out.contains("spec.mode: Invalid value: \\\"boolean\\\""),
        "{out}"
    );
    // Documents that are not CRDs in --crd are skipped, and said with --verbose.
    let (code, _, err) = validate_stdin(
        &["--verbose"],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 1}\n",
    );
    assert_eq!(code, Some(0));
    assert!(
        err.contains("#2: skipped: not a CustomResourceDefinition"),
        "{err}"
    );
    assert!(
        err.contains("1 of 2 CustomResourceDefinitions compiled"),
        "{err}"
    );
}

#[test]
fn built_in_kinds_are_validated_against_the_published_schemas() {
    let o = cel(&["validate", "examples/builtin/app.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).ends_with("5 objects: 5 valid, 0 invalid\n"),
        "{}",
        stdout(&o)
    );
    let o = cel(&["validate", "examples/builtin/invalid.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    for expected in [
        // The kind's own name rule: DNS-1123 subdomains for Deployments ...
        "* metadata.name: Invalid value: \"Storefront\": a lowercase RFC 1123 subdomain",
        // ... list-map keys are required ...
        "* spec.template.spec.containers[0].name: Required value",
        // ... DNS-1035 labels for Services.
        "The Service \"2fast\" is invalid: metadata.name: Invalid value: \"2fast\": a DNS-1035 label",
        // A value of the wrong Go type: the decoder's 400, before any validation.
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
        "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"spec.containers[0].restartPolicyy\"",
        "4 objects: 0 valid, 4 invalid",
    ] {
        assert!(out.contains(expected), "{expected}\n---\n{out}");
    }
}

/// Built-in kinds are validated with the defaults the API server's decoder gives them: a
/// port without a protocol is TCP, so a second port 80 that says TCP repeats it.
#[test]
fn built_in_kinds_are_validated_with_their_defaults() {
    let service = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports:\n  \
                   - {name: a, port: 80}\n  - {name: b, port: 80, protocol: TCP}\n";
    let o = cel_stdin(&["validate", "-"], service);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains(
            "The Service \"s\" is invalid: spec.ports[1]: Duplicate value: {\"port\":80,\"protocol\":\"TCP\"}"
        ),
        "{}",
        stdout(&o)
    );
    let o = cel_stdin(&["validate", "--no-defaults", "-"], service);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("Service \"s\" is valid"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn built_in_kinds_and_custom_resources_mix() {
    let o = cel(&[
        "validate",
        "--crd",
        CRD,
        "examples/crd/manifests/valid.yaml",
        "examples/builtin/app.yaml",
        // The CRD itself is a built-in kind.
        CRD,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("CustomResourceDefinition \"webapps.apps.example.com\" is valid"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).ends_with("8 objects: 8 valid, 0 invalid\n"),
        "{}",
        stdout(&o)
    );
    // Without built-ins they are not validated, as objects of unknown kinds.
    let o = cel(&["validate", "--no-builtins", "examples/builtin/app.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains("error: no CustomResourceDefinition serves apps/v1, Kind=Deployment"),
        "{}",
        stdout(&o)
    );
    // Every release a profile can name has its schemas shipped (1.25 to 1.37); older ones
    // are refused by the profile.
    let o = cel(&[
        "validate",
        "--profile",
        "kubernetes=1.30",
        "examples/builtin/app.yaml",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let o = cel(&[
        "validate",
        "--profile",
        "kubernetes=1.23",
        "examples/builtin/app.yaml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("supported versions are 1.30 to 1.37"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn crds_that_passed_their_checks_are_remembered_per_build() {
    let dir = std::env::temp_dir().join(format!("cel-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cel"))
            .args(args)
            .current_dir(support::repo())
            .env("CELERITY_CACHE_DIR", &dir)
            .output()
            .unwrap()
    };
    let args = [
        "validate",
        "--crd",
        CRD,
        "examples/crd/manifests/invalid.yaml",
    ];
    let first = run(&args);
    let markers = || std::fs::read_dir(dir.join("crd-checks")).map_or(0, |d| d.count());
    assert_eq!(markers(), 1, "the passing CRD is remembered");
    // The second run skips the CRD's checks and says the same.
    let second = run(&args);
    assert_eq!(stdout(&first), stdout(&second));
    assert_eq!(first.status.code(), second.status.code());
    // A CRD the checks refuse is never remembered: it is refused every time.
    let refused = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
        metadata: {name: bads.example.com}\nspec:\n  group: example.com\n  names: {kind: Bad, plural: bads}\n  \
        scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      \
        openAPIV3Schema:\n        type: object\n        x-kubernetes-validations: [{rule: 'self.nope == 1'}]\n";
    let crd = dir.join("bad.yaml");
    std::fs::write(&crd, refused).unwrap();
    let object = dir.join("bad-object.yaml");
    std::fs::write(
        &object,
        "apiVersion: example.com/v1\nkind: Bad\nmetadata: {name: b}\n",
    )
    .unwrap();
    for _ in 0..2 {
        let o = run(&[
            "validate",
            "--crd",
            crd.to_str().unwrap(),
            object.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
        assert!(
            stdout(&o).contains("its CustomResourceDefinition is refused"),
            "{}",
            stdout(&o)
        );
    }
    assert_eq!(markers(), 1);
    // --no-cache checks anyway and writes nothing new.
    let o = run(&[
        "validate",
        "--no-cache",
        "--crd",
        CRD,
        "examples/crd/manifests/valid.yaml",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn user_schemas_override_the_shipped_ones() {
    let dir = std::env::temp_dir().join(format!("cel-schemas-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A cluster whose Deployments allow at most 2 replicas, as its own /openapi/v3 says.
    let gvk = r#"{"group": "apps", "version": "v1", "kind": "Deployment"}"#;
    let doc = format!(
        r##"{{
          "paths": {{"/apis/apps/v1/namespaces/{{namespace}}/deployments": {{"post": {{"x-kubernetes-group-version-kind": {gvk}}}}}}},
          "components": {{"schemas": {{
            "io.k8s.api.apps.v1.Deployment": {{
              "type": "object",
              "x-kubernetes-group-version-kind": [{gvk}],
              "properties": {{
                "apiVersion": {{"type": "string"}}, "kind": {{"type": "string"}},
                "metadata": {{"type": "object"}},
                "spec": {{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}}
              }}
            }},
            "io.k8s.api.apps.v1.DeploymentSpec": {{
              "type": "object",
              "properties": {{"replicas": {{"type": "integer", "maximum": 2}}}},
              "x-kubernetes-preserve-unknown-fields": true
            }}
          }}}}
        }}"##
    );
    std::fs::write(dir.join("apps-v1.json"), doc).unwrap();
    let schemas = dir.to_str().unwrap();
    let o = cel(&[
        "validate",
        "--schemas",
        schemas,
        "examples/builtin/app.yaml",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains(
            "spec.replicas: Invalid value: 3: spec.replicas in body should be less than or equal to 2"
        ),
        "{}",
        stdout(&o)
    );
    // The other kinds are still the shipped ones'.
    assert!(
        stdout(&o).contains("Service \"storefront\" is valid"),
        "{}",
        stdout(&o)
    );
    // A document that is not OpenAPI v3 is refused with its name.
    std::fs::write(dir.join("bad.json"), r#"{"kind": "ConfigMap"}"#).unwrap();
    let o = cel(&[
        "validate",
        "--schemas",
        schemas,
        "examples/builtin/app.yaml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.json: not an OpenAPI v3 document (no components.schemas)"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
