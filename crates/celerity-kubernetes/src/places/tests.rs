//! Each place's environment on both backends: values, compile messages, run-time errors.

use celerity::{Backend, MapActivation};
use serde_json::{Value as Json, json};

use super::*;

const BACKENDS: [Backend; 2] = [Backend::Interpreter, Backend::Jit];

/// Compiles and runs `expr` in `place` at the newest version with `vars`, giving the value
/// as CEL text or the error text.
fn run(place: Place, expr: &str, vars: Json) -> Vec<Result<String, String>> {
    let env = PlaceEnv::new(place, KubeVersion::NEWEST).expect("a place of the newest version");
    BACKENDS
        .iter()
        .map(|&b| {
            let p = env.compile(expr, b)?;
            let mut act = MapActivation::new();
            for (n, v) in env.defaults() {
                act.bind(n.as_str(), v.clone());
            }
            for (n, j) in vars.as_object().expect("an object") {
                act.bind(n.as_str(), env.value(n, j)?);
            }
            let v = p.program.eval(&act).map_err(|e| e.to_string())?;
            env.check_result(&v)?;
            Ok(celerity::to_cel_literal(&v))
        })
        .collect()
}

fn ok(place: Place, expr: &str, vars: Json, want: &str) {
    for r in run(place, expr, vars.clone()) {
        assert_eq!(r, Ok(want.to_string()), "{place}: {expr}");
    }
}

fn err(place: Place, expr: &str, vars: Json, want: &str) {
    for r in run(place, expr, vars.clone()) {
        match r {
            Err(e) => assert!(e.contains(want), "{place}: {expr}: {e:?} lacks {want:?}"),
            Ok(v) => panic!("{place}: {expr}: expected an error, got {v}"),
        }
    }
}

#[test]
fn places_have_names_and_versions() {
    for p in Place::ALL {
        assert_eq!(p.name().parse::<Place>(), Ok(p));
    }
    assert!(
        "dra"
            .parse::<Place>()
            .unwrap_err()
            .contains("known: dra-selector")
    );
    let e = PlaceEnv::new(Place::DraSelector, KubeVersion::new(1, 30)).unwrap_err();
    assert!(e.contains("from 1.31"), "{e}");
    assert!(PlaceEnv::new(Place::AuthnClaims, KubeVersion::new(1, 29)).is_ok());
}

#[test]
fn authn_claims() {
    let claims = json!({"claims": {"sub": "alice", "email": "a@example.com",
        "email_verified": true, "groups": ["x", "y"], "nested": {"k": 1}}});
    ok(
        Place::AuthnClaims,
        "claims.sub",
        claims.clone(),
        "\"alice\"",
    );
    ok(
        Place::AuthnClaims,
        "claims.groups.size()",
        claims.clone(),
        "2",
    );
    ok(
        Place::AuthnClaims,
        "claims.email_verified == true",
        claims.clone(),
        "true",
    );
    ok(
        Place::AuthnClaims,
        "has(claims.missing)",
        claims.clone(),
        "false",
    );
    err(
        Place::AuthnClaims,
        "claims.missing",
        claims.clone(),
        "no such key: missing",
    );
    err(
        Place::AuthnClaims,
        "user.username",
        claims.clone(),
        "undeclared reference to 'user'",
    );
    err(
        Place::AuthnClaims,
        "claims.sub",
        json!({"claims": [1]}),
        "claims: expected an object",
    );
}

#[test]
fn authn_user() {
    let user = json!({"user": {"username": "system:alice", "uid": "", "groups": []}});
    ok(
        Place::AuthnUser,
        "user.username.startsWith('system:')",
        user.clone(),
        "true",
    );
    ok(
        Place::AuthnUser,
        "!has(user.groups) && !has(user.uid)",
        user.clone(),
        "true",
    );
    err(
        Place::AuthnUser,
        "user.username",
        user.clone(),
        "must evaluate to bool",
    );
    err(
        Place::AuthnUser,
        "user.name == ''",
        user.clone(),
        "undefined field 'name'",
    );
    err(
        Place::AuthnUser,
        "true",
        json!({"user": {"groups": "a"}}),
        "user.groups: expected a list of strings",
    );
}

#[test]
fn authz_match() {
    let req = json!({"request": {"user": "bob", "resourceAttributes": {
        "namespace": "kube-system", "verb": "get", "resource": "pods",
        "labelSelector": {"requirements": [{"key": "app", "operator": "In", "values": ["a"]}]}}}});
    ok(
        Place::AuthzMatch,
        "request.resourceAttributes.namespace == 'kube-system'",
        req.clone(),
        "true",
    );
    ok(
        Place::AuthzMatch,
        "request.groups.size() == 0 && request.uid == ''",
        req.clone(),
        "true",
    );
    ok(
        Place::AuthzMatch,
        "!has(request.nonResourceAttributes)",
        req.clone(),
        "true",
    );
    ok(
        Place::AuthzMatch,
        "request.resourceAttributes.labelSelector.requirements[0].values == ['a']",
        req.clone(),
        "true",
    );
    ok(
        Place::AuthzMatch,
        "!has(request.resourceAttributes.fieldSelector)",
        req.clone(),
        "true",
    );
    err(
        Place::AuthzMatch,
        "request.user",
        req.clone(),
        "must evaluate to bool but got string",
    );
    let old = PlaceEnv::new(Place::AuthzMatch, KubeVersion::new(1, 31)).unwrap();
    let e = old
        .compile(
            "has(request.resourceAttributes.labelSelector)",
            Backend::Interpreter,
        )
        .unwrap_err();
    assert!(e.contains("undefined field 'labelSelector'"), "{e}");
}

#[test]
fn admission_webhook_match() {
    let vars = json!({"object": {"metadata": {"name": "p"}}, "oldObject": null,
        "request": {"operation": "CREATE", "userInfo": {"username": "u"}}});
    ok(
        Place::AdmissionWebhookMatch,
        "request.operation == 'CREATE' && oldObject == null",
        vars.clone(),
        "true",
    );
    ok(
        Place::AdmissionWebhookMatch,
        "object.metadata.name == 'p'",
        vars.clone(),
        "true",
    );
    ok(
        Place::AdmissionWebhookMatch,
        "authorizer.path('/healthz').check('get').allowed()",
        vars.clone(),
        "true",
    );
    err(
        Place::AdmissionWebhookMatch,
        "params == null",
        vars.clone(),
        "undeclared reference to 'params'",
    );
    err(
        Place::AdmissionWebhookMatch,
        "object",
        vars.clone(),
        "must evaluate to bool but got dyn",
    );
}

fn device() -> Json {
    json!({"device": {"driver": "dra.example.com", "name": "gpu-0",
        "attributes": {"model": {"string": "a100"}, "cores": {"int": 8},
            "fast": {"bool": true}, "driverVersion": {"version": "1.2.3"},
            "other.example.com/zone": {"string": "a"}},
        "capacity": {"memory": {"value": "80Gi"}}}})
}

#[test]
fn dra_selector_values() {
    let d = device();
    ok(
        Place::DraSelector,
        "device.driver == 'dra.example.com'",
        d.clone(),
        "true",
    );
    ok(
        Place::DraSelector,
        "device.attributes['dra.example.com'].model == 'a100'",
        d.clone(),
        "true",
    );
    ok(
        Place::DraSelector,
        "device.attributes['dra.example.com'].cores > 4",
        d.clone(),
        "true",
    );
    ok(
        Place::DraSelector,
        "device.attributes['other.example.com'].zone == 'a'",
        d.clone(),
        "true",
    );
    ok(
        Place::DraSelector,
        "device.attributes['dra.example.com'].driverVersion.isGreaterThan(semver('1.0.0'))",
        d.clone(),
        "true",
    );
    ok(
        Place::DraSelector,
        "device.capacity['dra.example.com'].memory.compareTo(quantity('1Gi')) > 0",
        d.clone(),
        "true",
    );
    ok(
        Place::DraSelector,
        "cel.bind(dra, device.attributes['dra.example.com'], dra.fast && dra.cores == 8)",
        d.clone(),
        "true",
    );
    ok(
        Place::DraSelector,
        "!has(device.attributes['nowhere.example.com'].x)",
        d.clone(),
        "true",
    );
}

#[test]
fn dra_selector_errors() {
    let d = device();
    err(
        Place::DraSelector,
        "device.attributes['nowhere.example.com'].x",
        d.clone(),
        "no such key: x",
    );
    err(
        Place::DraSelector,
        "device.driver",
        d.clone(),
        "must evaluate to bool or the unknown type, not string",
    );
    err(
        Place::DraSelector,
        "device.attributes['dra.example.com'].model",
        d.clone(),
        "CEL result of type string could not be converted to bool",
    );
    err(
        Place::DraSelector,
        "true",
        json!({"device": {"attributes": {"a": {"int": "1"}}}}),
        "device.attributes[\"a\"]: attribute a: int: wrong type, got a string",
    );
    err(
        Place::DraSelector,
        "true",
        json!({"device": {"attributes": {"a": {"version": "x"}}}}),
        "parse semantic version",
    );
    err(
        Place::DraSelector,
        "true",
        json!({"device": {"capacity": {"m": {"value": "lots"}}}}),
        "device.capacity[\"m\"].value",
    );
}

#[test]
fn dra_selector_cost_limit() {
    // 1000 × 1000 iterations cost well over the selector's limit of 1,000,000.
    let expr = "[0,1,2,3,4,5,6,7,8,9].map(a, [0,1,2,3,4,5,6,7,8,9].map(b, [0,1,2,3,4,5,6,7,8,9].map(c, [0,1,2,3,4,5,6,7,8,9].map(d, [0,1,2,3,4,5,6,7,8,9].map(e, [0,1,2,3,4,5,6,7,8,9].map(f, a+b+c+d+e+f)))))).size() == 10";
    err(Place::DraSelector, expr, device(), "cost limit exceeded");
}
