//! Admission policies end to end: verdicts, messages, warnings, audit annotations, params,
//! variables, authorizer checks and mutations, on both backends.

use celerity::Backend;
use celerity_kubernetes::admission::{AdmissionCase, Response, response_json};
use serde_json::{Value as Json, json};

fn vap(name: &str, spec: Json) -> Json {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name}, "spec": spec})
}

fn binding(name: &str, policy: &str, actions: &[&str], extra: Json) -> Json {
    let mut spec = json!({"policyName": policy, "validationActions": actions});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name}, "spec": spec})
}

fn deployment(replicas: i64) -> Json {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "prod", "labels": {"app": "web"}},
        "spec": {"replicas": replicas}})
}

/// Runs a case on both backends, which must agree, and gives the response.
fn admit(case: Json) -> Response {
    let case = case.as_object().unwrap().clone();
    let native = AdmissionCase::from_json(&case, Backend::Jit).unwrap().run();
    let interpreted = AdmissionCase::from_json(&case, Backend::Interpreter)
        .unwrap()
        .run();
    assert_eq!(native, interpreted, "the backends disagree");
    native
}

const RULES: &str = r#"{"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]}"#;

fn rules() -> Json {
    serde_json::from_str(RULES).unwrap()
}

#[test]
fn a_false_validation_denies_with_the_api_servers_message() {
    let r = admit(json!({
        "policies": [vap("max-replicas", json!({"matchConstraints": rules(),
            "validations": [{"expression": "object.spec.replicas <= 5",
                "messageExpression": "'replicas ' + string(object.spec.replicas) + ' > 5'",
                "reason": "Forbidden"}]}))],
        "bindings": [binding("max-replicas-b", "max-replicas", &["Deny"], json!({}))],
        "object": deployment(10),
    }));
    assert!(!r.allowed);
    assert_eq!(r.status.code, 403);
    assert_eq!(r.status.reason, "Forbidden");
    assert_eq!(
        r.status.message,
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-b' denied request: replicas 10 > 5"
    );
    let ok = admit(json!({
        "policies": [vap("max-replicas", json!({"matchConstraints": rules(),
            "validations": [{"expression": "object.spec.replicas <= 5"}]}))],
        "bindings": [binding("b", "max-replicas", &["Deny"], json!({}))],
        "object": deployment(3),
    }));
    assert!(ok.allowed);
    assert_eq!(ok.status.code, 200);
}

#[test]
fn warn_and_audit_actions_do_not_deny() {
    let r = admit(json!({
        "policies": [vap("p", json!({"matchConstraints": rules(),
            "validations": [{"expression": "object.spec.replicas <= 5", "message": "too many"}],
            "auditAnnotations": [{"key": "replicas", "valueExpression": "string(object.spec.replicas)"}]}))],
        "bindings": [binding("b", "p", &["Warn", "Audit"], json!({}))],
        "object": deployment(10),
    }));
    assert!(r.allowed);
    assert_eq!(
        r.warnings,
        vec!["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': too many"]
    );
    let j = response_json(&r);
    assert_eq!(j["audit_annotations"]["p/replicas"], "10");
    assert_eq!(
        j["audit_annotations"]["validation.policy.admission.k8s.io/validation_failure"],
        r#"[{"message":"too many","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Warn","Audit"]}]"#
    );
}

#[test]
fn params_are_selected_by_reference_and_missing_ones_deny_when_asked() {
    let policy = vap(
        "p",
        json!({"matchConstraints": rules(),
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "validations": [{"expression": "object.spec.replicas <= int(params.data.max)"}]}),
    );
    let params = json!([{"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "limits", "namespace": "prod"}, "data": {"max": "3"}}]);
    let with_ref = |pref: Json| {
        admit(
            json!({"policies": [policy.clone()], "params": params.clone(),
            "bindings": [binding("b", "p", &["Deny"], json!({"paramRef": pref}))],
            "object": deployment(4)}),
        )
    };
    assert!(!with_ref(json!({"name": "limits"})).allowed);
    assert!(with_ref(json!({"name": "other", "parameterNotFoundAction": "Allow"})).allowed);
    let denied = with_ref(json!({"name": "other", "parameterNotFoundAction": "Deny"}));
    assert_eq!(
        denied.status.message,
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
    );
    assert!(!with_ref(json!({"selector": {"matchLabels": {}}})).allowed);
}

#[test]
fn variables_are_computed_once_and_only_when_read() {
    let policy = |validation: &str| {
        vap(
            "p",
            json!({"matchConstraints": rules(),
            "variables": [{"name": "bad", "expression": "1 / 0 == 1"},
                {"name": "big", "expression": "object.spec.replicas > 5"}],
            "validations": [{"expression": validation}]}),
        )
    };
    let run = |v: &str| {
        admit(json!({"policies": [policy(v)],
            "bindings": [binding("b", "p", &["Deny"], json!({}))], "object": deployment(10)}))
    };
    // Never read: no error.
    assert!(run("!variables.big || true").allowed);
    assert!(run("true || variables.bad").allowed);
    let r = run("variables.bad");
    assert_eq!(
        r.status.message,
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'variables.bad' resulted in error: composited variable \"bad\" fails to evaluate: division by zero"
    );
    let typo = run("variables.bigg");
    assert!(
        typo.status.message.contains("undefined field 'bigg'"),
        "{}",
        typo.status.message
    );
}

#[test]
fn request_is_typed_so_typos_are_compile_errors() {
    let r = admit(json!({
        "policies": [vap("p", json!({"matchConstraints": rules(),
            "validations": [{"expression": "request.namex == 'x'"}]}))],
        "bindings": [binding("b", "p", &["Deny"], json!({}))],
        "object": deployment(1),
    }));
    assert_eq!(
        r.status.message,
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: compilation error: compilation failed: ERROR: <input>:1:8: undefined field 'namex'\n | request.namex == 'x'\n | .......^"
    );
    let typed = admit(json!({
        "policies": [vap("p", json!({"matchConstraints": rules(),
            "validations": [{"expression": "request.kind + 1 == 2"}]}))],
        "bindings": [binding("b", "p", &["Deny"], json!({}))],
        "object": deployment(1),
    }));
    assert!(
        typed.status.message.contains(
            "found no matching overload for '_+_' applied to '(kubernetes.GroupVersionKind, int)'"
        ),
        "{}",
        typed.status.message
    );
    let ok = admit(json!({
        "policies": [vap("p", json!({"matchConstraints": rules(),
            "validations": [{"expression": "request.operation == 'CREATE' && request.namespace == 'prod' && request.userInfo.username == 'alice' && namespaceObject.metadata.labels.env == 'prod'"}]}))],
        "bindings": [binding("b", "p", &["Deny"], json!({}))],
        "namespaces": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}}],
        "user": {"username": "alice"},
        "object": deployment(1),
    }));
    assert!(ok.allowed && ok.warnings.is_empty());
}

#[test]
fn the_authorizer_follows_the_rules() {
    let case = |user: &str| {
        admit(json!({
            "policies": [vap("p", json!({"matchConstraints": rules(),
                "validations": [{"expression": "authorizer.group('apps').resource('deployments').namespace('prod').check('delete').allowed()",
                    "message": "must be able to delete"}]}))],
            "bindings": [binding("b", "p", &["Deny"], json!({}))],
            "authz": [{"users": ["mallory"], "verbs": ["delete"], "decision": "deny"}],
            "user": {"username": user},
            "object": deployment(1),
        }))
    };
    assert!(case("alice").allowed);
    assert!(!case("mallory").allowed);
}

#[test]
fn mutations_patch_the_object() {
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": "m"}, "spec": {"matchConstraints": rules(), "mutations": [
            {"patchType": "JSONPatch", "jsonPatch": {"expression":
                "[JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('team.io/owner'), value: 'web'}]"}},
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                "Object{spec: Object.spec{paused: true}}"}}]}});
    let b = json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": "mb"}, "spec": {"policyName": "m"}});
    let r = admit(json!({"policies": [policy], "bindings": [b], "object": deployment(1)}));
    assert!(r.allowed, "{:?}", r.status);
    let o = r.object.unwrap();
    assert_eq!(o["metadata"]["labels"]["team.io/owner"], "web");
    assert_eq!(o["spec"]["paused"], true);
    assert_eq!(o["spec"]["replicas"], 1);
}

#[test]
fn hostile_input_is_bounded() {
    // A deep object: read within the depth limit, refused beyond it.
    let nested = |depth: usize| {
        let mut deep = json!(1);
        for _ in 0..depth {
            deep = json!({"a": deep});
        }
        let mut object = deployment(1);
        object["spec"]["deep"] = deep;
        json!({
            "policies": [vap("p", json!({"matchConstraints": rules(),
                "validations": [{"expression": "object.spec.deep.a.a.a != 0"}]}))],
            "bindings": [binding("b", "p", &["Deny"], json!({}))],
            "object": object,
        })
    };
    assert!(admit(nested(900)).allowed);
    let too_deep = nested(1200);
    let e = AdmissionCase::from_json(too_deep.as_object().unwrap(), Backend::Jit).unwrap_err();
    assert_eq!(e, "object: nested deeper than 1000 levels");
    // Many variables, each reading the one before: compiled in time linear enough to
    // be used, and evaluated once each.
    let variables: Vec<Json> = (0..200)
        .map(|i| {
            let e = if i == 0 {
                "1".to_string()
            } else {
                format!("variables.v{} + 1", i - 1)
            };
            json!({"name": format!("v{i}"), "expression": e})
        })
        .collect();
    let start = std::time::Instant::now();
    let r = admit(json!({
        "policies": [vap("p", json!({"matchConstraints": rules(), "variables": variables,
            "validations": [{"expression": "variables.v199 == 200"}]}))],
        "bindings": [binding("b", "p", &["Deny"], json!({}))],
        "object": deployment(1),
    }));
    assert!(r.allowed, "{:?}", r.status);
    assert!(start.elapsed().as_secs() < 60, "took {:?}", start.elapsed());
}

#[test]
fn cost_limits_stop_expensive_expressions() {
    let r = admit(json!({
        "policies": [vap("p", json!({"matchConstraints": rules(),
            "validations": [{"expression": "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, true))))))"}]}))],
        "bindings": [binding("b", "p", &["Deny"], json!({}))],
        "object": deployment(1),
    }));
    assert!(!r.allowed);
    assert!(
        r.status
            .message
            .ends_with("resulted in error: operation cancelled: actual cost limit exceeded"),
        "{}",
        r.status.message
    );
}

/// A policy whose variables reach each other in every way an expression can: by name,
/// with `has()`, through an optional, through `dyn(variables)`, inside comprehensions;
/// one fails, and one reads itself.
fn policy_with_reaching_variables() -> Json {
    vap(
        "reach",
        json!({"matchConstraints": rules(),
        "variables": [
            {"name": "replicas", "expression": "object.spec.replicas"},
            {"name": "present", "expression": "has(variables.replicas)"},
            {"name": "missing", "expression": "object.spec.missing"},
            {"name": "failed", "expression": "has(variables.missing)"},
            {"name": "viaOptional", "expression": "variables.?replicas.orValue(0)"},
            {"name": "viaDyn", "expression": "dyn(variables).replicas + dyn(variables)['viaOptional']"},
            {"name": "inLoop", "expression": "[1, 2, 3].all(i, has(variables.present) && variables.replicas >= 0)"},
            {"name": "itself", "expression": "dyn(variables).itself"},
        ],
        "validations": [
            {"expression": "variables.present && variables.inLoop && variables.viaDyn == 2 * variables.replicas",
             "messageExpression": "'replicas: ' + string(variables.replicas)"},
            {"expression": "variables.replicas <= 5", "messageExpression": "'too many: ' + string(has(variables.viaDyn))"},
        ],
        "auditAnnotations": [{"key": "present", "valueExpression": "has(variables.present) ? 'yes' : 'no'"}]}),
    )
}

#[test]
fn variables_reaching_variables_answer_as_the_api_server_does() {
    let case = |replicas: i64| {
        json!({"policies": [policy_with_reaching_variables()],
            "bindings": [binding("b", "reach", &["Deny"], json!({}))],
            "object": deployment(replicas)})
    };
    assert!(admit(case(3)).allowed);
    let denied = admit(case(7));
    assert!(!denied.allowed);
    assert!(
        denied
            .status
            .message
            .ends_with("denied request: too many: true"),
        "{}",
        denied.status.message
    );
    // A validation reading the variable that fails, and one reading the variable that
    // reads itself (the API server reports the first failure only).
    let fails = |validation: &str| {
        let r = admit(
            json!({"policies": [vap("e", json!({"matchConstraints": rules(),
                "variables": policy_with_reaching_variables()["spec"]["variables"].clone(),
                "validations": [{"expression": validation}]}))],
            "bindings": [binding("b", "e", &["Deny"], json!({}))],
            "object": deployment(3)}),
        );
        assert!(!r.allowed);
        r.status.message
    };
    let m = fails("variables.failed");
    assert!(
        m.ends_with("composited variable \"failed\" fails to evaluate: composited variable \"missing\" fails to evaluate: no such key: missing"),
        "{m}"
    );
    let m = fails("variables.itself == 1");
    assert!(
        m.ends_with("composited variable \"itself\" fails to evaluate: composited variable \"itself\" is read while it is being computed (it depends on itself)"),
        "{m}"
    );
}

#[test]
fn one_policy_set_admits_from_many_threads() {
    use celerity_kubernetes::admission::{PolicyInputs, PolicySet, Request};
    use std::sync::Arc;
    for backend in [Backend::Interpreter, Backend::Jit, Backend::Auto] {
        let inputs = PolicyInputs {
            backend,
            ..PolicyInputs::default()
        };
        let set = Arc::new(
            PolicySet::from_json(
                &[
                    policy_with_reaching_variables(),
                    binding("b", "reach", &["Deny"], json!({})),
                ],
                &inputs,
            )
            .unwrap(),
        );
        let request = |replicas: i64| {
            Request::for_object(
                celerity_kubernetes::admission::Operation::Create,
                Some(deployment(replicas)),
                None,
                |_| Some(true),
            )
            .unwrap()
        };
        let expected: Vec<Response> = (0..10).map(|r| set.admit(&request(r), None)).collect();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let set = set.clone();
                let expected = expected.clone();
                std::thread::spawn(move || {
                    // 150 requests each: past the 100 evaluations after which Auto compiles.
                    for i in 0..150 {
                        let r = (i + t) % 10;
                        assert_eq!(set.admit(&request(r as i64), None), expected[r]);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
}

#[test]
fn a_request_past_its_deadline_is_refused() {
    use celerity::Deadline;
    use celerity_kubernetes::admission::{Operation, PolicyInputs, PolicySet, Request};
    use std::time::Duration;
    let deadline = Deadline::after(Duration::ZERO);
    while !deadline.passed() {
        std::thread::sleep(Duration::from_millis(1));
    }
    for backend in [Backend::Interpreter, Backend::Jit] {
        let inputs = PolicyInputs {
            backend,
            ..PolicyInputs::default()
        };
        let set = PolicySet::from_json(
            &[
                policy_with_reaching_variables(),
                binding("b", "reach", &["Deny"], json!({})),
            ],
            &inputs,
        )
        .unwrap();
        let request =
            Request::for_object(Operation::Create, Some(deployment(3)), None, |_| Some(true))
                .unwrap();
        let r = set.admit_with_deadline(&request, None, &deadline);
        assert!(!r.allowed);
        assert_eq!((r.status.code, r.status.reason.as_str()), (504, "Timeout"));
        assert_eq!(r.matched.len(), 1, "what matched is still reported");
        assert!(set.admit(&request, None).allowed, "a fresh deadline admits");
    }
}
