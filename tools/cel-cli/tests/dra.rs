//! `cel dra`: the example as the README runs it, the batch line, bad input and 100,000
//! devices.

mod support;

use support::{cel, cel_stdin, stderr, stdout, temp_file};

#[test]
fn the_example_reports_verdicts_errors_and_the_typo() {
    let o = cel(&[
        "dra",
        "--slices",
        "examples/dra/slices.yaml",
        "--class",
        "examples/dra/classes.yaml",
        "examples/dra/claims.yaml",
    ]);
    // A selector fails on two devices and one reads a misspelled attribute: status 1.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn the_example_in_json_has_the_batch_lines_form() {
    let o = cel(&[
        "dra",
        "--slices",
        "examples/dra/slices.yaml",
        "--class",
        "examples/dra/classes.yaml",
        "examples/dra/claims.yaml",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["ok"], true);
    let requests = v["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        requests[1]["devices"][0],
        serde_json::json!({"driver": "gpu.example.com", "pool": "node-a", "device": "gpu-0",
            "matched": false, "selector": 1, "from": "request", "error": "no such key: migg"})
    );
    assert_eq!(
        requests[1]["unknown_attributes"],
        serde_json::json!([{
            "selector": "resourceclaims/mig-slices spec.devices.requests[0].exactly.selectors[1]",
            "attribute": "gpu.example.com/migg",
            "suggestion": "gpu.example.com/mig"
        }])
    );
}

/// A `resource.k8s.io/v1` ResourceClaim (JSON, which is YAML too) with one request, `r`,
/// for exactly one device of `class` that passes `selectors`.
fn claim(name: &str, namespace: Option<&str>, class: &str, selectors: &[&str]) -> String {
    let mut exactly = serde_json::json!({"deviceClassName": class});
    if !selectors.is_empty() {
        let selectors: Vec<_> = selectors
            .iter()
            .map(|e| serde_json::json!({"cel": {"expression": e}}))
            .collect();
        exactly["selectors"] = selectors.into();
    }
    let mut metadata = serde_json::json!({"name": name});
    if let Some(ns) = namespace {
        metadata["namespace"] = ns.into();
    }
    serde_json::json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": metadata,
        "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}
    })
    .to_string()
}

/// A slice of `devices` (a JSON object) from driver `d.example.com`.
fn slice(name: &str, devices: &str) -> String {
    format!(
        r#"{{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {{"name": "{name}"}},
            "spec": {{"driver": "d.example.com", "pool": {{"name": "{name}"}}, "devices": {devices}}}}}"#
    )
}

#[test]
fn batch_lines_answer_each_case() {
    let slices = slice(
        "p",
        r#"[{"name": "a", "attributes": {"n": {"int": 1}}, "capacity": {"mem": {"value": "1Gi"}}},
            {"name": "b", "attributes": {"n": {"int": 2}}},
            {"name": "c", "attributes": {"n": {"string": "x"}}}]"#,
    );
    let class = r#"{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "k"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'd.example.com'"}}]}}"#;
    let claim = r#"{"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {"requests": [{"name": "r", "deviceClassName": "k",
            "selectors": [{"cel": {"expression": "device.attributes['d.example.com'].n == 1 || device.capacity['d.example.com'].memory.isGreaterThan(quantity('0'))"}}]}]}}}"#;
    let line = format!(r#"{{"slices": [{slices}], "classes": [{class}], "claims": [{claim}]}}"#)
        .replace('\n', " ");
    let input = format!(
        "{line}\n{}\n{}\n",
        r#"{"slices": [{"kind": "ResourceSlice"}]}"#, r#"{"claims": [], "extra": 1}"#
    );
    let o = cel_stdin(
        &["dra", "--profile", "kubernetes=1.34", "--batch", "-"],
        &input,
    );
    // "memory" is three edits from "mem": no suggestion.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let lines_owned: Vec<&str> = out.lines().collect();
    assert_eq!(lines_owned.len(), 3);
    assert_eq!(
        lines_owned[0],
        concat!(
            r#"{"ok":true,"requests":[{"claim":"ns/c","kind":"ResourceClaim","request":"r","class":"k","devices":["#,
            r#"{"driver":"d.example.com","pool":"p","device":"a","matched":true},"#,
            r#"{"driver":"d.example.com","pool":"p","device":"b","matched":false,"selector":0,"from":"request","error":"no such key: memory"},"#,
            r#"{"driver":"d.example.com","pool":"p","device":"c","matched":false,"selector":0,"from":"request","error":"no such key: memory"}],"#,
            r#""unknown_attributes":[{"selector":"resourceclaims/c spec.devices.requests[0].selectors[0]","capacity":"d.example.com/memory"}]}]}"#
        )
    );
    assert_eq!(
        lines_owned[1],
        r#"{"ok":false,"error":"slices[0]: apiVersion \"\" is not resource.k8s.io/v1, v1beta2, v1beta1 or v1alpha3"}"#
    );
    assert_eq!(
        lines_owned[2],
        r#"{"ok":false,"error":"unknown field \"extra\" (known: slices, classes, claims)"}"#
    );
}

#[test]
fn bad_input_is_reported_with_its_path_and_the_rest_still_runs() {
    let slices = temp_file(
        "bad-slices.yaml",
        &format!(
            "# YAML documents\n{}\n---\n{}\n---\n{}\n",
            slice(
                "good",
                r#"[{"name": "ok", "attributes": {"model": {"string": "a"}}},
                    {"name": "typed", "attributes": {"model": {"int": "seven"}}},
                    {"name": "two", "attributes": {"model": {"int": 1, "string": "a"}}}]"#
            ),
            r#"{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "x"}}"#,
            r#"{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "nopool"}, "spec": {"driver": "d"}}"#,
        ),
    );
    let claims = temp_file(
        "bad-claims.yaml",
        &format!(
            r#"# YAML documents
{{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {{"name": "both"}},
  "spec": {{"devices": {{"requests": [{{"name": "r", "exactly": {{"deviceClassName": "k"}}, "firstAvailable": [{{"name": "s", "deviceClassName": "k"}}]}}]}}}}}}
---
{}
"#,
            claim(
                "fine",
                None,
                "k",
                &["device.attributes['d.example.com'].model == 'a'"]
            )
        ),
    );
    let o = cel(&[
        "dra",
        "--slices",
        slices.to_str().unwrap(),
        claims.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    for want in [
        r#"ResourceSlice "good": spec.devices[1].attributes["model"]: attribute model: int: wrong type, got a string"#,
        r#"ResourceSlice "good": spec.devices[2].attributes["model"]: attribute model: more than one value is set"#,
        r#"#1: kind "DeviceClass" is not ResourceSlice"#,
        r#"#2: ResourceSlice "nopool": spec.pool: Required value"#,
        r#"ResourceClaim "both": spec.devices.requests[0]: Invalid value: exactly one of exactly or firstAvailable is required"#,
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
    // The readable device and claim still ran.
    let out = stdout(&o);
    assert!(
        out.contains("ResourceClaim fine, request r (class k): 1 of 1 devices match"),
        "{out}"
    );
    assert!(out.contains("d.example.com/good/ok: matched"), "{out}");
}

#[test]
fn selectors_that_reach_the_cost_limit_fail_on_the_device() {
    let slices = temp_file(
        "one-slice.json",
        &slice("p", r#"[{"name": "a", "attributes": {"n": {"int": 1}}}]"#),
    );
    let ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
    let costly = format!(
        "{ten}.all(x, {ten}.all(y, {ten}.all(z, {ten}.all(z2, {ten}.all(z3, {ten}.all(z4, \
         int('1'.find('[0-9]*')) < 100))))))"
    );
    let claims = temp_file("costly.yaml", &claim("costly", None, "k", &[&costly]));
    let o = cel(&[
        "dra",
        "--slices",
        slices.to_str().unwrap(),
        claims.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "d.example.com/p/a: error: claim costly: selector #0: CEL runtime error: operation cancelled: actual cost limit exceeded"
        ),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_hundred_thousand_devices_are_all_answered() {
    // 800 slices of 125 devices (a slice holds at most 128), one List document.
    let mut items = Vec::with_capacity(800);
    for s in 0..800 {
        let devices: Vec<String> = (0..125)
            .map(|d| {
                let i = s * 125 + d;
                format!(
                    r#"{{"name": "gpu-{i}", "attributes": {{"index": {{"int": {i}}}, "model": {{"string": "{}"}}}}, "capacity": {{"memory": {{"value": "{}Gi"}}}}}}"#,
                    if i % 2 == 0 { "a100" } else { "t4" },
                    i % 100
                )
            })
            .collect();
        items.push(slice(&format!("s{s}"), &format!("[{}]", devices.join(","))));
    }
    let slices = temp_file(
        "many-slices.json",
        &format!(
            r#"{{"apiVersion": "v1", "kind": "List", "items": [{}]}}"#,
            items.join(",")
        ),
    );
    let claims = temp_file(
        "many-claims.yaml",
        &claim(
            "big",
            None,
            "k",
            &[
                r#"device.attributes["d.example.com"].model == "a100""#,
                r#"device.capacity["d.example.com"].memory.compareTo(quantity("50Gi")) >= 0"#,
            ],
        ),
    );
    let o = cel(&[
        "dra",
        "--slices",
        slices.to_str().unwrap(),
        "--output",
        "json",
        claims.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let devices = v["requests"][0]["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 100_000);
    let matched = devices.iter().filter(|d| d["matched"] == true).count();
    // Even indexes are a100s; memory i % 100 >= 50: half of those.
    assert_eq!(matched, 25_000);
    let by_second = devices.iter().filter(|d| d["selector"] == 1).count();
    assert_eq!(by_second, 25_000);
}

#[test]
fn a_missing_class_fails_its_request_and_no_classes_applies_none() {
    let claims = temp_file("missing-class.yaml", &claim("x", Some("ns"), "nope", &[]));
    let claims = claims.to_str().unwrap();
    let o = cel(&[
        "dra",
        "--slices",
        "examples/dra/slices.yaml",
        "--class",
        "examples/dra/classes.yaml",
        claims,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        concat!(
            "ResourceClaim ns/x, request r (class nope): error: claim ns/x, request r: could not retrieve device class nope: deviceclass.resource.k8s.io \"nope\" not found\n",
            "1 request, 3 devices: 1 with errors, 0 warnings\n"
        )
    );
    let o = cel(&["dra", "--slices", "examples/dra/slices.yaml", claims]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("(class nope): 3 of 3 devices match"), "{out}");
    assert!(
        out.contains(
            "note: no --class given: the selectors of DeviceClass \"nope\" are not applied"
        ),
        "{out}"
    );
    // A release that does not serve the objects' API version: unusable input.
    let o = cel(&[
        "dra",
        "--profile",
        "kubernetes=1.33",
        "--slices",
        "examples/dra/slices.yaml",
        claims,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "examples/dra/slices.yaml: apiVersion \"resource.k8s.io/v1\" is not served by Kubernetes 1.33"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn list_attributes_and_multiple_allocations_from_1_36() {
    let slices = temp_file(
        "list-slice.json",
        &slice(
            "p",
            r#"[{"name": "a", "allowMultipleAllocations": true, "attributes": {"models": {"strings": ["a100", "h100"]}}},
                {"name": "b", "attributes": {"models": {"strings": ["t4"]}}}]"#,
        ),
    );
    let claims = temp_file(
        "list-claim.yaml",
        &claim(
            "l",
            None,
            "k",
            &[
                r#"device.allowMultipleAllocations && device.attributes["d.example.com"].models.includes("h100")"#,
            ],
        ),
    );
    let run = |profile: &str| {
        cel(&[
            "dra",
            "--profile",
            profile,
            "--slices",
            slices.to_str().unwrap(),
            claims.to_str().unwrap(),
        ])
    };
    let o = run("kubernetes=1.36");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 of 2 devices match"),
        "{}",
        stdout(&o)
    );
    // Before 1.36 a list attribute is one the library cannot read.
    let o = run("kubernetes=1.35");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .contains(r#"attributes["models"]: attribute models: unsupported attribute value"#),
        "{}",
        stderr(&o)
    );
}
