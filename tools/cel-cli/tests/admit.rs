//! End-to-end tests of `cel admit`: the example policy set, JSON and YAML output, the batch
//! contract, and bad input reported by file, document and field.

mod support;

use std::process::Output;

use serde_json::{Value as Json, json};
use support::{cel, cel_stdin, stderr, stdout};

const EXAMPLE: &[&str] = &[
    "admit",
    "--policy",
    "examples/admission/policies.yaml",
    "--params",
    "examples/admission/params.yaml",
    "--namespace",
    "examples/admission/namespaces.yaml",
    "--authz",
    "examples/admission/authz.yaml",
    "--user",
    "alice",
    "--group",
    "shop-devs",
];

fn example(extra: &[&str]) -> Output {
    let mut args = EXAMPLE.to_vec();
    args.extend_from_slice(extra);
    cel(&args)
}

#[test]
fn the_example_is_admitted_as_the_api_server_would() {
    let o = example(&["examples/admission/manifests/"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn an_admin_may_run_the_privileged_pod() {
    let mut args = EXAMPLE.to_vec();
    args.retain(|a| *a != "shop-devs");
    args.extend_from_slice(&[
        "shop-admins",
        "--output",
        "json",
        "examples/admission/manifests/bad.yaml",
    ]);
    let o = cel(&args);
    let lines: Vec<Json> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2]["name"], "node-debugger");
    assert_eq!(lines[2]["allowed"], true, "{}", lines[2]);
    assert_eq!(lines[0]["allowed"], false);
    assert_eq!(lines[0]["status"]["code"], 422);
    assert_eq!(
        lines[0]["matched"][1],
        json!({"kind": "ValidatingAdmissionPolicy", "policy": "replica-limit", "binding": "replica-limit-by-namespace"})
    );
}

#[test]
fn yaml_output_is_the_mutated_objects() {
    let o = example(&["--output", "yaml", "examples/admission/manifests/good.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("---\napiVersion: apps/v1\n"), "{out}");
    assert!(
        out.contains("example.com/managed-by: shop-platform"),
        "{out}"
    );
    assert!(out.contains("revisionHistoryLimit: 3"), "{out}");
    assert!(
        stderr(&o).contains("2 objects: 2 admitted, 0 denied"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn batch_lines_answer_in_order() {
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "p"}, "spec": {"validations": [{"expression": "object.spec.replicas < 3"}]}});
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "b"}, "spec": {"policyName": "p", "validationActions": ["Deny"]}});
    let object = |n: i64| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ns"}, "spec": {"replicas": n}})
    };
    let line = |n: i64| {
        json!({"policies": [policy], "bindings": [binding], "object": object(n)}).to_string()
    };
    let input = format!("{}\n{}\nnot json\n{{\"object\": {{}}}}\n", line(1), line(5));
    let o = cel_stdin(&["admit", "--batch", "-"], &input);
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<Json> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines[0],
        json!({"ok": true, "allowed": true, "status": {"code": 200, "reason": "", "message": ""},
            "warnings": [], "audit_annotations": {}, "object": object(1)})
    );
    assert_eq!(lines[1]["allowed"], false);
    assert_eq!(
        lines[1]["status"]["message"],
        "deployments.apps \"d\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: object.spec.replicas < 3"
    );
    assert_eq!(lines[2]["ok"], false);
    assert!(
        lines[2]["error"]
            .as_str()
            .unwrap()
            .starts_with("invalid JSON")
    );
    assert_eq!(
        lines[3],
        json!({"ok": false, "error": "policies: required"})
    );
}

#[test]
fn bad_documents_are_reported_and_the_rest_still_runs() {
    let dir = std::env::temp_dir().join(format!("cel-admit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policies = dir.join("policies.yaml");
    std::fs::write(
        &policies,
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: broken}\nspec:\n  validations:\n    - message: no expression\n---\n[unclosed\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: ok}\nspec:\n  validations:\n    - expression: \"object.metadata.name != 'x'\"\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: ok}\nspec: {policyName: ok, validationActions: [Deny]}\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: orphan}\nspec: {policyName: missing, validationActions: [Deny]}\n",
    )
    .unwrap();
    let p = policies.to_str().unwrap();
    let o = cel(&[
        "admit",
        "--policy",
        p,
        "examples/admission/manifests/good.yaml",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{p}: spec.validations[0].expression: Required value"
        )),
        "{err}"
    );
    assert!(err.contains(&format!("{p}#1: ")), "{err}");
    assert!(
        err.contains("binding \"orphan\" refers to policy \"missing\""),
        "{err}"
    );
    assert!(
        stdout(&o).contains("2 objects: 2 admitted, 0 denied"),
        "{}",
        stdout(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn updates_deletes_and_bad_manifests() {
    let dir = std::env::temp_dir().join(format!("cel-admit-ops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policy = dir.join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: no-shrink}\nspec:\n  matchConstraints:\n    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [deployments]}]\n  validations:\n    - expression: \"request.operation == 'DELETE' ? oldObject.metadata.name != 'keep' : object.spec.replicas >= oldObject.spec.replicas\"\n      messageExpression: \"request.operation + ' not allowed'\"\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: no-shrink}\nspec: {policyName: no-shrink, validationActions: [Deny]}\n",
    )
    .unwrap();
    let deployment = |name: &str, replicas: i64| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: prod}}\nspec: {{replicas: {replicas}}}\n"
        )
    };
    let old = dir.join("old.yaml");
    std::fs::write(&old, deployment("web", 3)).unwrap();
    let new = dir.join("new.yaml");
    let mut deep = String::from("1");
    for _ in 0..300 {
        deep = format!("[{deep}]");
    }
    std::fs::write(
        &new,
        format!(
            "{}---\n{}---\nkind: [unclosed\n---\n{{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {{\"name\": \"deep\"}}, \"data\": {deep}}}\n",
            deployment("web", 2),
            deployment("keep", 1)
        ),
    )
    .unwrap();
    let (p, o, n) = (
        policy.to_str().unwrap(),
        old.to_str().unwrap(),
        new.to_str().unwrap(),
    );
    // web shrinks (an update from --old): denied; keep is a create: not matched; the bad
    // documents are reported by file and position, and the rest still ran.
    let out = cel(&["admit", "--policy", p, "--old", o, n]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{text}{}", stderr(&out));
    assert!(
        text.contains(&format!("{n}: Deployment prod/web denied (422 Invalid)")),
        "{text}"
    );
    assert!(text.contains("UPDATE not allowed"), "{text}");
    assert!(
        text.contains(&format!("{n}#1: Deployment prod/keep admitted")),
        "{text}"
    );
    assert!(text.contains(&format!("{n}#2: error: ")), "{text}");
    assert!(text.contains(&format!("{n}#3: error: ")), "{text}");
    // Deleting: the manifests are the old objects.
    let out = cel(&["admit", "--policy", p, "--operation", "DELETE", n]);
    let text = stdout(&out);
    assert!(
        text.contains(&format!("{n}: Deployment prod/web admitted")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{n}#1: Deployment prod/keep denied")),
        "{text}"
    );
    assert!(text.contains("DELETE not allowed"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The policy of the hang report: a variable that tests another with `has()`. On every
/// backend the command answers, as the API server does (`true`: admitted).
#[test]
fn a_variable_testing_another_with_has_answers() {
    let policy = support::temp_file(
        "has-variable.yaml",
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: t}
spec:
  matchConstraints:
    resourceRules:
    - {operations: [CREATE], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}
  validations:
  - expression: 'variables.a'
  variables:
  - {name: q, expression: "1"}
  - {name: a, expression: "has(variables.q)"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: t}
spec: {policyName: t, validationActions: [Deny]}
"#,
    );
    let pod = support::temp_file(
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: c, image: busybox}]\n",
    );
    for backend in ["interpreter", "jit", "auto"] {
        let o = support::cel_within(
            &[
                "admit",
                "--policy",
                policy.to_str().unwrap(),
                "--backend",
                backend,
                pod.to_str().unwrap(),
            ],
            std::time::Duration::from_secs(60),
        );
        assert_eq!(o.status.code(), Some(0), "{backend}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("Pod default/p admitted"),
            "{}",
            stdout(&o)
        );
    }
}

/// A request past `--time-limit` is denied with the API server's timeout status, not left
/// running.
#[test]
fn a_request_past_its_time_limit_is_denied() {
    let o = example(&[
        "--time-limit",
        "0.000000001",
        "--output",
        "json",
        "examples/admission/manifests/good.yaml",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let first: Json = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    assert_eq!(first["allowed"], false);
    assert_eq!(first["status"]["code"], 504, "{first}");
    assert_eq!(first["status"]["reason"], "Timeout");
    let bad = example(&[
        "--time-limit",
        "0",
        "examples/admission/manifests/good.yaml",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("is not a number of seconds above 0"));
}

#[test]
fn policies_are_type_checked_against_the_schemas_of_what_they_match() {
    let policy = "examples/admission/typecheck/policy.yaml";
    let o = cel(&["check-policy", policy]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    for expected in [
        "policy.yaml: ValidatingAdmissionPolicy \"replica-cap\": spec.validations[0].expression:\n    apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n",
        "    apps/v1, Kind=StatefulSet: ERROR: <input>:1:12: undefined field 'replicaz'\n",
        // params typed by the built-in ConfigMap's schema, variables by their expressions.
        "spec.validations[1].messageExpression:\n    apps/v1, Kind=Deployment: ERROR: <input>:1:50: found no matching overload for '_+_' applied to '(string, int)'\n",
        "spec.validations[2].expression:\n    apps/v1, Kind=Deployment: ERROR: <input>:1:5: undefined field 'spec'\n",
        "policy.yaml#1: ValidatingAdmissionPolicy \"labels-present\" type-checks cleanly\n",
        "2 policies checked: 1 with warnings\n",
    ] {
        assert!(out.contains(expected), "{expected}\n---\n{out}");
    }
    // status.typeChecking as the API server writes it: one result per kind, joined.
    let o = cel(&["check-policy", "--output", "json", policy]);
    let first: serde_json::Value =
        serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    let warning = &first["status"]["typeChecking"]["expressionWarnings"][0];
    assert_eq!(warning["fieldRef"], "spec.validations[0].expression");
    assert_eq!(
        warning["warning"],
        "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz <= int(params.data.max)\n | ...........^\n\napps/v1, Kind=StatefulSet: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz <= int(params.data.max)\n | ...........^\n"
    );
    // The example policies are clean; `cel admit --typecheck` prints the same warnings.
    let o = cel(&["check-policy", "examples/admission/policies.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = cel(&[
        "admit",
        "--typecheck",
        "--policy",
        policy,
        "examples/builtin/app.yaml",
    ]);
    assert!(
        stderr(&o).contains(
            "warning: ValidatingAdmissionPolicy \"replica-cap\": spec.validations[0].expression:\n"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn type_checking_stays_bounded_on_wide_policies() {
    // Wildcards are skipped and at most ten kinds are checked, as on the API server.
    let wide = r#"{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
      "metadata": {"name": "wide"},
      "spec": {"matchConstraints": {"resourceRules": [
        {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]},
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"],
         "resources": ["pods", "services", "configmaps", "secrets", "namespaces", "nodes",
                       "endpoints", "events", "limitranges", "persistentvolumes",
                       "persistentvolumeclaims", "replicationcontrollers", "pods/status"]}]},
        "validations": [{"expression": "object.nope"}]}}"#;
    let o = cel_stdin(&["check-policy", "--output", "json", "-"], wide);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let warning = line["status"]["typeChecking"]["expressionWarnings"][0]["warning"]
        .as_str()
        .unwrap();
    assert_eq!(
        warning.matches("undefined field 'nope'").count(),
        10,
        "{warning}"
    );
    assert!(warning.starts_with("/v1, Kind=ConfigMap: "), "{warning}");
}

#[test]
fn custom_resources_are_matched_by_their_crds_resource_never_a_guess() {
    let dir = std::env::temp_dir().join(format!("cel-admit-crd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    // `Mesh` would be guessed `meshs`; the CRD says `meshes`, and cluster-scoped.
    let crd = write(
        "crd.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: meshes.net.example.com}\n\
         spec:\n  group: net.example.com\n  names: {kind: Mesh, plural: meshes}\n  scope: Cluster\n  versions:\n  \
         - name: v1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n",
    );
    let policy = write(
        "policy.yaml",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: mesh-size}\n\
         spec:\n  matchConstraints:\n    resourceRules:\n    - {apiGroups: [net.example.com], apiVersions: [v1], operations: [CREATE], resources: [meshes]}\n  \
         validations:\n  - {expression: 'object.spec.size <= 3', message: at most 3}\n---\n\
         apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: mesh-size}\n\
         spec: {policyName: mesh-size, validationActions: [Deny]}\n",
    );
    let mesh = write(
        "mesh.yaml",
        "apiVersion: net.example.com/v1\nkind: Mesh\nmetadata: {name: big, namespace: ignored}\nspec: {size: 5}\n",
    );
    let o = cel(&["admit", "--crd", &crd, "--policy", &policy, &mesh]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    // Cluster-scoped: the namespace is dropped, as the API server drops it.
    assert!(
        stdout(&o).contains("Mesh big denied (422 Invalid)"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("meshes.net.example.com \"big\" is forbidden"),
        "{}",
        stdout(&o)
    );
    // Without the CRD the name is not guessed: the policy does not match, and we say why.
    let o = cel(&["admit", "--policy", &policy, &mesh]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("warning: no CustomResourceDefinition (--crd) or built-in schema serves net.example.com/v1, Kind=Mesh"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
