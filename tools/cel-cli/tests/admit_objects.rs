//! End-to-end tests of the objects `cel admit` hands policies: built-in kinds as the API
//! server builds them (defaults, fields Go always encodes, zero values it drops), on create,
//! update and delete, with the namespace as the server stores it; `--no-defaults`;
//! `--show-object`.

mod support;

use serde_json::Value as Json;
use support::{cel, cel_stdin, stderr, stdout};

const POLICIES: &str = "examples/admission/defaults/policies.yaml";
const MANIFESTS: &str = "examples/admission/defaults/manifests.yaml";

fn json_lines(args: &[&str]) -> (Option<i32>, Vec<Json>) {
    let o = cel(args);
    let lines = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{}", stderr(&o))))
        .collect();
    (o.status.code(), lines)
}

#[test]
fn policies_see_defaults_and_gos_encoding() {
    let o = cel(&["admit", "--policy", POLICIES, MANIFESTS]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let out = stdout(&o);
    // `nginx` is pulled Always; its `hostPort: 0` is not encoded; the namespace `shop`,
    // given nowhere, carries `kubernetes.io/metadata.name` as every Namespace does.
    assert!(out.contains("Deployment shop/untagged admitted"), "{out}");
    // `nginx:1.27` is pulled IfNotPresent.
    assert!(
        out.contains("Deployment shop/tagged denied (422 Invalid)")
            && out.contains("denied request: every container must pull its image always"),
        "{out}"
    );
    // `rules: null`, not a missing key.
    assert!(out.contains("Role shop/empty admitted"), "{out}");
    assert!(out.ends_with("3 objects: 2 admitted, 1 denied\n"), "{out}");
}

#[test]
fn no_defaults_hands_policies_the_manifest_as_written() {
    let (code, lines) = json_lines(&[
        "admit",
        "--no-defaults",
        "--output",
        "json",
        "--policy",
        POLICIES,
        MANIFESTS,
    ]);
    assert_eq!(code, Some(1));
    // No namespace label: the binding's namespace selector does not match the Deployments.
    assert_eq!(lines[0]["allowed"], true, "{}", lines[0]);
    assert_eq!(lines[0]["matched"], serde_json::json!([]));
    assert_eq!(lines[2]["allowed"], false);
    let message = lines[2]["status"]["message"].as_str().unwrap();
    assert!(
        message.ends_with("resulted in error: no such key: rules"),
        "{message}"
    );
}

#[test]
fn show_object_prints_what_each_policy_received() {
    let (_, lines) = json_lines(&[
        "admit",
        "--show-object",
        "--output",
        "json",
        "--policy",
        POLICIES,
        MANIFESTS,
    ]);
    let deployment = &lines[0]["received"]["object"];
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["imagePullPolicy"], "Always");
    assert_eq!(
        container["ports"],
        serde_json::json!([{"containerPort": 80, "protocol": "TCP"}])
    );
    assert_eq!(container["resources"], serde_json::json!({}));
    assert_eq!(deployment["metadata"]["creationTimestamp"], Json::Null);
    assert_eq!(deployment["spec"]["replicas"], 1);
    assert_eq!(deployment["status"], serde_json::json!({}));
    assert_eq!(lines[0]["received"]["oldObject"], Json::Null);
    let role = &lines[2]["received"]["object"];
    assert!(role.as_object().unwrap().contains_key("rules"));
    assert_eq!(role["rules"], Json::Null);
    // The text form prints the same object as YAML.
    let o = cel(&["admit", "--show-object", "--policy", POLICIES, MANIFESTS]);
    assert!(
        stdout(&o).contains("  object received:\n    apiVersion: apps/v1\n"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("\n    rules: null\n"), "{}", stdout(&o));
}

#[test]
fn old_objects_are_built_the_same_way_on_update_and_delete() {
    let dir = std::env::temp_dir().join(format!("cel-admit-objects-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let old = dir.join("old.yaml");
    std::fs::write(
        &old,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: empty, namespace: shop}\n",
    )
    .unwrap();
    let old = old.to_string_lossy().into_owned();
    // An update: the old Role, written without rules, arrives as `rules: null`.
    let (code, lines) = json_lines(&[
        "admit",
        "--show-object",
        "--output",
        "json",
        "--policy",
        POLICIES,
        "--old",
        &old,
        MANIFESTS,
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(lines[2]["allowed"], true, "{}", lines[2]);
    assert_eq!(lines[2]["received"]["oldObject"]["rules"], Json::Null);
    // A delete: the manifest is the old object.
    let (code, lines) = json_lines(&[
        "admit",
        "--show-object",
        "--output",
        "json",
        "--operation",
        "DELETE",
        "--policy",
        POLICIES,
        MANIFESTS,
    ]);
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(lines[2]["allowed"], true, "{}", lines[2]);
    assert_eq!(lines[2]["received"]["object"], Json::Null);
    assert_eq!(
        lines[2]["received"]["oldObject"]["metadata"]["creationTimestamp"],
        Json::Null
    );
    assert!(
        lines[2]["received"]["oldObject"]
            .as_object()
            .unwrap()
            .contains_key("rules")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_value_of_the_wrong_go_type_is_refused_before_admission() {
    let policy = serde_json::json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "p"},
        "spec": {"validations": [{"expression": "true"}]}});
    let binding = serde_json::json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "b"},
        "spec": {"policyName": "p", "validationActions": ["Deny"]}});
    let line = |replicas: Json| {
        serde_json::json!({"policies": [policy], "bindings": [binding], "object": {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "ns"}, "spec": {"replicas": replicas}}})
        .to_string()
    };
    let input = format!("{}\n{}\n", line(Json::from("3")), line(Json::from(3)));
    let o = cel_stdin(&["admit", "--batch", "-"], &input);
    let lines: Vec<Json> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{}", stderr(&o));
    // Never admitted with a guessed value: the decoder's 400, and no policy ran.
    assert_eq!(lines[0]["allowed"], false);
    assert_eq!(
        lines[0]["status"],
        serde_json::json!({"code": 400, "reason": "BadRequest", "message":
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"})
    );
    assert_eq!(lines[1]["allowed"], true, "{}", lines[1]);
}
