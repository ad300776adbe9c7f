//! The CRD mode: a CustomResourceDefinition and an object (and optionally the old object,
//! for an update). Out come the CRD's rules with their estimated costs against the
//! per-rule and per-CRD limits, each rule's verdict on the object, and the object's
//! validation as `cel validate --crd ... --output json` prints it (the field errors as the
//! API server prints them, warnings) with the run-time cost against the budget. A CRD the
//! API server would refuse gives its error, as `cel validate` prints it.
//!
//! Request: `{"mode": "crd", "crd": "YAML", "object": "YAML", "old_object": "YAML",
//! "version": "1.36"}` (`version`: the API server's release, as `cel validate --profile
//! kubernetes=1.36` names it; default: the newest released version).

use celerity::kubernetes;
use celerity_kubernetes::crd::schema::field::FieldError;
use celerity_kubernetes::crd::{
    CompiledCrd, CompiledRule, CrdOptions, Outcome, RUNTIME_COST_BUDGET, RequestOptions,
    STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT, status_json,
};
use serde_json::{Map, Value as Json, json};

/// The error the API server adds when other errors kept the rules from running.
const RULES_NOT_CHECKED: &str = "some validation rules were not checked";

/// Runs one request of the mode.
pub fn run(request: &Map<String, Json>) -> Result<Json, String> {
    let version = match crate::string(request, "version") {
        Some(v) => kubernetes::parse_version(v)?,
        None => celerity_kubernetes::crd::default_version(),
    };
    let crd = crate::one_document(request, "crd")?.ok_or("crd: required")?;
    if crd.get("kind").and_then(Json::as_str) != Some("CustomResourceDefinition") {
        return Err("crd: not a CustomResourceDefinition".into());
    }
    let object = crate::one_object(request, "object")?;
    let old = crate::one_document(request, "old_object")?;
    let options = CrdOptions::default()
        .version(version)
        .estimate_rule_costs(true);
    let compiled = match CompiledCrd::new(&crd, &options) {
        Ok(c) => c,
        Err(e) => {
            return Ok(json!({
                "ok": false,
                "phase": "crd",
                "error": e.to_string(),
                "errors": e.errors.iter().map(error_json).collect::<Vec<_>>(),
            }));
        }
    };
    let api_version = object
        .as_ref()
        .and_then(|(o, _)| o.get("apiVersion"))
        .and_then(Json::as_str)
        .unwrap_or_default();
    // The version the object names, else the storage version, else the first.
    let index = compiled
        .versions
        .iter()
        .position(|v| {
            compiled
                .version(api_version)
                .is_some_and(|w| w.name == v.name)
        })
        .or_else(|| compiled.versions.iter().position(|v| v.storage))
        .unwrap_or(0);
    let have_object = object.is_some();
    // The API server's release, whose texts the answer is given in, as for `cel validate`.
    let server_minor = version.minor;
    let validation = object
        .map(|(o, duplicates)| validate(&compiled, o, &duplicates, old.as_ref(), server_minor));
    let errors: Vec<&Json> = validation
        .as_ref()
        .and_then(|v| v["errors"].as_array())
        .map(|e| e.iter().collect())
        .unwrap_or_default();
    let rules = compiled
        .versions
        .get(index)
        .map(|v| {
            let verdicts = Verdicts {
                errors: &errors,
                update: old.is_some(),
                have_object,
                reached_rules: reached_rules(validation.as_ref()),
            };
            rules_json(&v.validator.rules(), &verdicts)
        })
        .unwrap_or_default();
    let total = compiled.total_costs.get(index).cloned().unwrap_or_default();
    Ok(json!({
        "ok": true,
        "crd": {
            "name": compiled.name,
            "kind": compiled.kind,
            "group": compiled.group,
            "version": compiled.versions.get(index).map(|v| v.name.clone()),
        },
        "rules": rules,
        "rule_cost_limit": STATIC_ESTIMATED_COST_LIMIT,
        "total_cost": total.total,
        "most_expensive": total.most_expensive,
        "crd_cost_limit": STATIC_ESTIMATED_CRD_COST_LIMIT,
        "budget": RUNTIME_COST_BUDGET,
        "validation": validation,
    }))
}

/// The object's validation as `cel validate --output json` gives it: the API server's
/// create (or, with an old object, update) of it as `kubectl` sends it (strict field
/// validation and the `default` namespace, kubectl's defaults), its Status, and the
/// run-time cost the rules took from the budget.
fn validate(
    crd: &CompiledCrd,
    object: Json,
    duplicates: &[String],
    old: Option<&Json>,
    server_minor: u32,
) -> Json {
    let (api_version, kind) = celerity_kubernetes::type_meta(&object);
    let (api_version, kind) = (api_version.to_string(), kind.to_string());
    if !crd.owns(&api_version, &kind) {
        return json!({
            "apiVersion": api_version, "kind": kind, "namespace": "", "name": "", "valid": null,
            "error": format!("no CustomResourceDefinition serves {api_version}, Kind={kind}"),
        });
    }
    let group = api_version
        .rsplit_once('/')
        .map_or(String::new(), |(g, _)| g.to_string());
    let options = RequestOptions::default();
    let answer = match old {
        Some(old) => crd.update(object, duplicates, old, &options, server_minor),
        None => crd.create(object, duplicates, &options, server_minor),
    };
    let meta = |k: &str| {
        answer
            .object
            .get("metadata")
            .and_then(|m| m.get(k))
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string()
    };
    let errors: Vec<Json> = match &answer.outcome {
        Outcome::Invalid(errors) => errors.iter().map(error_json).collect(),
        Outcome::Accepted | Outcome::BadRequest(_) => Vec::new(),
    };
    let status = status_json(&answer, &kind, &group).unwrap_or_else(|| {
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Success", "code": if old.is_some() { 200 } else { 201 }})
    });
    let mut out = json!({
        "apiVersion": api_version,
        "kind": kind,
        "namespace": meta("namespace"),
        "name": answer.name(),
        "valid": answer.accepted(),
        "errors": errors,
        "warnings": answer.warnings,
        "runtime_cost": RUNTIME_COST_BUDGET.saturating_sub(answer.remaining_budget),
        "remaining_budget": answer.remaining_budget,
    });
    if let Some(m) = out.as_object_mut() {
        if let Some(message) = status.get("message") {
            m.insert("message".into(), message.clone());
        }
        m.insert("status".into(), status);
    }
    out
}

/// A field error as `cel validate --output json` shows it.
fn error_json(e: &FieldError) -> Json {
    json!({
        "type": e.error_type.as_str(),
        "field": e.field,
        "detail": e.detail,
        "message": e.to_string(),
    })
}

/// What the rules' verdicts are read from.
struct Verdicts<'a> {
    /// The object's field errors.
    errors: &'a [&'a Json],
    /// Whether the request is an update.
    update: bool,
    /// Whether there is an object.
    have_object: bool,
    /// Whether the request got as far as validation (not refused by decoding, not for
    /// another kind).
    reached_rules: bool,
}

/// Whether the object's request got as far as validation: not refused before it (a
/// `BadRequest`, such as strict decoding's unknown fields) nor sent to another kind.
fn reached_rules(validation: Option<&Json>) -> bool {
    validation.is_some_and(|v| v["status"]["code"] != json!(400) && v.get("error").is_none())
}

/// Each rule with its costs and its verdict on the object: `failed` when a field error at
/// the rule's field carries its message (or, for a message expression, is an error no other
/// rule there accounts for), `not run` when other errors kept the rules from running or
/// when a transition rule has no old object, `error` when it does not compile, `passed`
/// otherwise; without an object, no verdict.
fn rules_json(rules: &[(String, &CompiledRule)], v: &Verdicts<'_>) -> Vec<Json> {
    let Verdicts {
        errors,
        update,
        have_object,
        reached_rules,
    } = *v;
    let blocked = !reached_rules
        || errors.iter().any(|e| {
            e["detail"]
                .as_str()
                .is_some_and(|d| d.starts_with(RULES_NOT_CHECKED))
        });
    let static_message = |r: &CompiledRule| {
        if r.rule.message.is_empty() {
            format!("failed rule: {}", r.rule.rule.trim())
        } else {
            r.rule.message.clone()
        }
    };
    rules
        .iter()
        .map(|(path, r)| {
            let at = field_pattern(path, &r.rule.field_path);
            let here: Vec<&&Json> = errors
                .iter()
                .filter(|e| e["field"].as_str().is_some_and(|f| matches_field(&at, f)))
                .collect();
            let failed = if r.rule.message_expression.is_empty() {
                let want = static_message(r);
                here.iter()
                    .any(|e| e["detail"].as_str() == Some(want.as_str()))
            } else {
                // Errors at this field that no rule with a static message explains.
                here.iter().any(|e| {
                    !rules.iter().any(|(p, o)| {
                        o.rule.message_expression.is_empty()
                            && field_pattern(p, &o.rule.field_path) == at
                            && e["detail"].as_str() == Some(static_message(o).as_str())
                    })
                })
            };
            let verdict = match () {
                _ if r.error.is_some() => "error",
                _ if !have_object => "",
                _ if blocked || (r.uses_old_self && !update) => "not run",
                _ if failed => "failed",
                _ => "passed",
            };
            json!({
                "path": if at.is_empty() { "<root>".to_string() } else { at.clone() },
                "rule": r.rule.rule,
                "message": r.rule.message,
                "message_expression": r.rule.message_expression,
                "reason": r.rule.reason,
                "transition": r.uses_old_self,
                "estimated_cost": r.max_cost,
                "error": r.error.as_ref().map(|e| e.detail.clone()),
                "verdict": verdict,
            })
        })
        .collect()
}

/// The field path a rule's errors carry, from its schema path
/// (`.properties[spec].properties[items].items`) and its `fieldPath`: `spec.items[*]`.
fn field_pattern(schema_path: &str, field_path: &str) -> String {
    let mut out = String::new();
    let mut rest = schema_path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix(".properties[") {
            let end = r.find(']').unwrap_or(r.len());
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&r[..end]);
            rest = r.get(end + 1..).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix(".items") {
            out.push_str("[*]");
            rest = r;
        } else if let Some(r) = rest.strip_prefix(".additionalProperties") {
            out.push_str("[*]");
            rest = r;
        } else if let Some(r) = rest.strip_prefix(".allOf[") {
            rest = r.split_once(']').map(|(_, r)| r).unwrap_or("");
        } else {
            break;
        }
    }
    let field_path = field_path.trim_start_matches('.');
    if !field_path.is_empty() {
        if !out.is_empty() && !field_path.starts_with('[') {
            out.push('.');
        }
        out.push_str(field_path);
    }
    out
}

/// Whether an error's field (`spec.items[0].name`, `spec.m[key]`) is at a pattern where
/// `[*]` stands for any index or key.
fn matches_field(pattern: &str, field: &str) -> bool {
    let mut p = pattern;
    let mut f = field;
    loop {
        match p.find("[*]") {
            None => return p == f,
            Some(i) => {
                if f.get(..i) != Some(&p[..i]) {
                    return false;
                }
                let Some(rest) = f[i..].strip_prefix('[') else {
                    return false;
                };
                let Some(close) = rest.find(']') else {
                    return false;
                };
                f = &rest[close + 1..];
                p = &p[i + 3..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_patterns() {
        assert_eq!(field_pattern("", ""), "");
        assert_eq!(
            field_pattern(".properties[spec].properties[items].items", ""),
            "spec.items[*]"
        );
        assert_eq!(field_pattern(".properties[spec]", ".image"), "spec.image");
        assert!(matches_field("spec.items[*].name", "spec.items[3].name"));
        assert!(!matches_field("spec.items[*].name", "spec.items[3].other"));
        assert!(matches_field("spec", "spec"));
    }

    /// The example CRD, and the first object of its invalid manifests.
    fn example_crd_and_object() -> (String, String) {
        let read = |path: &str| {
            std::fs::read_to_string(format!(
                "{}/../examples/crd/{path}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()
        };
        let manifests = read("manifests/invalid.yaml");
        let object = manifests.split("\n---").next().unwrap().to_string();
        (read("webapps.yaml"), object)
    }

    #[test]
    fn the_example_crd_gives_verdicts_and_costs() {
        let (crd, object) = example_crd_and_object();
        let r = crate::handle(&json!({"mode": "crd", "crd": crd, "object": object}).to_string());
        assert_eq!(r["ok"], json!(true), "{r}");
        assert_eq!(r["validation"]["valid"], json!(false), "{r}");
        let verdicts: Vec<&str> = r["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["verdict"].as_str().unwrap())
            .collect();
        assert!(verdicts.contains(&"failed"), "{r}");
        assert!(verdicts.contains(&"passed"), "{r}");
        assert!(r["validation"]["runtime_cost"].as_i64().unwrap() > 0);
        // Every rule shows its static estimate (the object's rules carry them on request).
        let rules = r["rules"].as_array().unwrap();
        assert!(
            rules.iter().all(|x| x["estimated_cost"].as_u64() > Some(0)),
            "{r}"
        );
    }

    /// Strict field validation refuses unknown and repeated fields before any rule runs,
    /// with the API server's `400 BadRequest` Status; the rules then have no verdict.
    #[test]
    fn unknown_and_repeated_fields_are_a_bad_request() {
        let (crd, object) = example_crd_and_object();
        let object = format!("{object}\nbogus: 1\nbogus: 2\n");
        let r = crate::handle(&json!({"mode": "crd", "crd": crd, "object": object}).to_string());
        assert_eq!(r["ok"], json!(true), "{r}");
        let v = &r["validation"];
        assert_eq!(v["valid"], json!(false), "{r}");
        assert_eq!(v["status"]["code"], json!(400), "{r}");
        assert_eq!(v["status"]["reason"], json!("BadRequest"), "{r}");
        let message = v["message"].as_str().unwrap();
        assert!(message.contains("unknown field \"bogus\""), "{message}");
        assert!(message.contains("duplicate field \"bogus\""), "{message}");
        assert!(
            r["rules"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["verdict"] == json!("not run") || r["verdict"] == json!("error")),
            "{r}"
        );
    }
}
