//! The device-allocation mode: ResourceClaims (or ResourceClaimTemplates), DeviceClasses and
//! ResourceSlices in; per request, which devices its class's and its own selectors accept,
//! or the first selector that is false, or the error in the allocator's words, and the
//! attribute names selectors read that no device has. What `cel dra` prints for the same
//! files: the request is the line `cel dra --batch` reads and the reports are the lines it
//! prints (`celerity_kubernetes::places::dra_allocation`), with each device's selector
//! path and allocator error added for the page.
//!
//! Request: `{"mode": "dra", "claims": "YAML", "classes": "YAML", "slices": "YAML",
//! "version": "1.36"}` (without classes, the classes' selectors are not applied, as
//! `cel dra` without `--class`). The result adds the case it ran (`"case"`), so that the
//! same request can be given to `cel dra --batch`.

use celerity::Backend;
use celerity::kubernetes;
use celerity_kubernetes::places::dra_allocation::{self, RequestReport, Verdict};
use serde_json::{Map, Value as Json, json};

/// Runs one request of the mode.
pub fn run(request: &Map<String, Json>) -> Result<Json, String> {
    let version = match crate::string(request, "version") {
        Some(v) => kubernetes::parse_version(v.trim())?,
        None => celerity_kubernetes::crd::default_version(),
    };
    let case = case(request)?;
    let mut out = match dra_allocation::run_case(&case, version, Backend::Auto) {
        Ok((reports, devices)) => {
            let requests: Vec<Json> = reports
                .iter()
                .map(|r| with_paths(r, r.to_json(&devices)))
                .collect();
            json!({"ok": true, "requests": requests})
        }
        Err(e) => json!({"ok": false, "phase": "objects", "error": e}),
    };
    if let Some(m) = out.as_object_mut() {
        m.insert("case".into(), Json::Object(case));
    }
    Ok(out)
}

/// The `cel dra --batch` line for a request: each field's objects (lists expanded); no
/// `classes` when that field is empty.
pub fn case(request: &Map<String, Json>) -> Result<Map<String, Json>, String> {
    let mut case = Map::new();
    for key in ["slices", "classes", "claims"] {
        let docs = crate::documents(request, key)?;
        if key != "classes" || !crate::text(request, key)?.trim().is_empty() {
            case.insert(key.into(), Json::Array(docs));
        }
    }
    Ok(case)
}

/// A report's JSON with, on each device a selector rejects, the selector's path
/// (`resourceclaims/NAME spec.devices.requests[0].exactly.selectors[1]`) and, on each it
/// fails on, the allocator's error (`claim NS/NAME: selector #1: CEL runtime error: ...`).
fn with_paths(report: &RequestReport, mut json: Json) -> Json {
    let Some(devices) = json.get_mut("devices").and_then(Json::as_array_mut) else {
        return json;
    };
    for (device, verdict) in devices.iter_mut().zip(&report.verdicts) {
        let (source, index) = match verdict {
            Verdict::Matched => continue,
            Verdict::Rejected { source, index } | Verdict::Failed { source, index, .. } => {
                (*source, *index)
            }
        };
        device["path"] = json!(report.selector_path(source, index));
        if let Some(e) = report.allocator_error(verdict) {
            device["allocator_error"] = json!(e);
        }
    }
    json
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/../examples/dra/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn run_example(classes: &str) -> Json {
        crate::handle(
            &json!({
                "mode": "dra", "version": "1.34",
                "claims": example("claims.yaml"), "classes": classes,
                "slices": example("slices.yaml"),
            })
            .to_string(),
        )
    }

    #[test]
    fn the_example_claims_get_devices_paths_and_warnings() {
        let r = run_example(&example("classes.yaml"));
        assert_eq!(r["ok"], json!(true), "{r}");
        let requests = r["requests"].as_array().unwrap();
        // training, mig-slices, and inference's two alternatives.
        assert_eq!(requests.len(), 4, "{r}");
        let training = &requests[0];
        let matched: Vec<&Json> = training["devices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["matched"] == json!(true))
            .collect();
        assert_eq!(matched.len(), 1, "{training}");
        assert_eq!(matched[0]["device"], json!("gpu-0"));
        let rejected = training["devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["matched"] == json!(false))
            .unwrap();
        assert!(
            rejected["path"].as_str().unwrap().contains("selectors["),
            "{rejected}"
        );
        // The misspelled attribute of mig-slices is a warning with a suggestion.
        let unknown = &requests[1]["unknown_attributes"][0];
        assert_eq!(unknown["suggestion"], json!("gpu.example.com/mig"), "{r}");
        assert_eq!(r["case"]["classes"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn without_classes_they_are_not_applied() {
        let r = run_example("");
        assert_eq!(r["ok"], json!(true), "{r}");
        assert!(r["case"].get("classes").is_none(), "{r}");
        assert_eq!(r["requests"][0]["class_applied"], json!(false), "{r}");
    }

    #[test]
    fn errors_are_the_allocators_and_bad_objects_name_their_path() {
        let claim = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n\
            spec:\n  devices:\n    requests:\n    - name: r\n      exactly:\n        deviceClassName: gpu.example.com\n        \
            selectors:\n        - cel: {expression: 'device.attributes[\"gpu.example.com\"].nope.startsWith(\"x\")'}\n";
        let r = crate::handle(
            &json!({"mode": "dra", "version": "1.34", "claims": claim, "slices": example("slices.yaml")})
                .to_string(),
        );
        let device = &r["requests"][0]["devices"][0];
        assert_eq!(
            device["allocator_error"],
            json!("claim ns/c: selector #0: CEL runtime error: no such key: nope"),
            "{r}"
        );
        let r = crate::handle(
            &json!({"mode": "dra", "version": "1.34", "claims": "kind: Pod\napiVersion: v1\n", "slices": ""})
                .to_string(),
        );
        assert_eq!(r["ok"], json!(false), "{r}");
        assert!(r["error"].as_str().unwrap().starts_with("claims[0]"), "{r}");
    }
}
