//! Which requests a policy or binding applies to (Kubernetes' `policy/matching` and the
//! webhook predicates it uses): namespace and object label selectors, resource rules with
//! operations, groups, versions, resources, subresources, scope and names, and the rules
//! that exclude.
//!
//! Offline there is no REST mapping of equivalent resources, so `matchPolicy: Equivalent`
//! matches as `Exact` does (only the request's own group, version and resource).

use super::policy::{LabelSelector, MatchResources, ResourceRule};
use super::request::Request;

/// A label selector's requirements could not be understood (the API server reports this
/// as an internal error).
fn selector_error(why: &str) -> String {
    format!("Internal error occurred: {why}")
}

/// Whether `labels` satisfy a selector, or why the selector is invalid.
pub fn selector_matches(s: &LabelSelector, labels: &[(String, String)]) -> Result<bool, String> {
    let get = |k: &str| labels.iter().find(|(l, _)| l == k).map(|(_, v)| v.as_str());
    for (k, v) in &s.match_labels {
        if get(k) != Some(v.as_str()) {
            return Ok(false);
        }
    }
    for (key, op, values) in &s.match_expressions {
        let ok = match op.as_str() {
            "In" | "NotIn" if values.is_empty() => {
                return Err(selector_error(
                    "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
                ));
            }
            "In" => get(key).is_some_and(|v| values.iter().any(|x| x == v)),
            "NotIn" => get(key).is_none_or(|v| !values.iter().any(|x| x == v)),
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                return Err(selector_error(
                    "values: Invalid value: values set must be empty for exists and does not exist",
                ));
            }
            "Exists" => get(key).is_some(),
            "DoesNotExist" => get(key).is_none(),
            other => {
                return Err(selector_error(&format!(
                    "{other:?} is not a valid label selector operator"
                )));
            }
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

fn exact_or_wildcard(items: &[String], requested: &str) -> bool {
    items.iter().any(|i| i == "*" || i == requested)
}

/// Whether one rule (without its names) matches the request (Kubernetes' `rules.Matcher`).
fn rule_matches(rule: &ResourceRule, r: &Request) -> bool {
    let is_namespace = r.resource.group.is_empty()
        && r.resource.version == "v1"
        && r.resource.resource == "namespaces";
    let scope = match rule.scope.as_deref() {
        None | Some("*") => true,
        Some("Namespaced") => !is_namespace && !r.namespace.is_empty(),
        Some("Cluster") => is_namespace || r.namespace.is_empty(),
        Some(_) => false,
    };
    let operation = rule
        .operations
        .iter()
        .any(|o| o == "*" || o == r.operation.as_str());
    let resource = rule.resources.iter().any(|res| {
        let (res, sub) = res.split_once('/').unwrap_or((res, ""));
        (res == "*" || res == r.resource.resource) && (sub == "*" || sub == r.sub_resource)
    });
    scope
        && operation
        && exact_or_wildcard(&rule.api_groups, &r.resource.group)
        && exact_or_wildcard(&rule.api_versions, &r.resource.version)
        && resource
}

/// Whether any of the rules matches, names included.
fn rules_match(rules: &[ResourceRule], r: &Request) -> bool {
    rules.iter().any(|rule| {
        rule_matches(rule, r)
            && (rule.resource_names.is_empty() || rule.resource_names.contains(&r.name))
    })
}

/// Whether `m` applies to the request, given the labels of the request's namespace
/// (`None` when it has none), or the error the API server reports.
pub fn matches(
    m: &MatchResources,
    r: &Request,
    namespace_labels: Option<&[(String, String)]>,
) -> Result<bool, String> {
    let ns = namespace_selector_matches(&m.namespace_selector, r, namespace_labels);
    if let Ok(false) = ns {
        return Ok(false);
    }
    let obj = object_selector_matches(&m.object_selector, r);
    if let Ok(false) = obj {
        return Ok(false);
    }
    if rules_match(&m.exclude_resource_rules, r) {
        return Ok(false);
    }
    if !m.resource_rules.is_empty() && !rules_match(&m.resource_rules, r) {
        return Ok(false);
    }
    ns?;
    obj?;
    Ok(true)
}

fn namespace_selector_matches(
    s: &LabelSelector,
    r: &Request,
    namespace_labels: Option<&[(String, String)]>,
) -> Result<bool, String> {
    if r.namespace.is_empty() && r.resource.resource != "namespaces" {
        return Ok(true);
    }
    if s.is_empty() {
        return Ok(true);
    }
    // A namespace being created or updated is matched by its own labels.
    let own = r.resource.resource == "namespaces"
        && r.sub_resource.is_empty()
        && matches!(
            r.operation,
            super::request::Operation::Create | super::request::Operation::Update
        );
    let labels = if own {
        Request::labels_of(r.object.as_ref()).unwrap_or_default()
    } else {
        namespace_labels.map(<[_]>::to_vec).unwrap_or_default()
    };
    selector_matches(s, &labels)
}

fn object_selector_matches(s: &LabelSelector, r: &Request) -> Result<bool, String> {
    if s.is_empty() {
        return Ok(true);
    }
    let matches = |o: Option<&serde_json::Value>| match Request::labels_of(o) {
        Some(labels) => selector_matches(s, &labels),
        None => Ok(false),
    };
    Ok(matches(r.object.as_ref())? || matches(r.old_object.as_ref())?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubernetes::admission::request::Operation;
    use serde_json::json;

    fn rule(resources: &[&str], scope: Option<&str>) -> ResourceRule {
        ResourceRule {
            operations: vec!["*".into()],
            api_groups: vec!["*".into()],
            api_versions: vec!["*".into()],
            resources: resources.iter().map(|s| s.to_string()).collect(),
            scope: scope.map(str::to_string),
            ..ResourceRule::default()
        }
    }

    fn pod() -> Request {
        let p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web"}}});
        Request::for_object(Operation::Create, Some(p), None, |_| None).unwrap()
    }

    #[test]
    fn rules_match_resources_subresources_and_scope() {
        let mut r = pod();
        assert!(rule_matches(&rule(&["pods"], None), &r));
        assert!(rule_matches(&rule(&["*"], Some("Namespaced")), &r));
        assert!(!rule_matches(&rule(&["*"], Some("Cluster")), &r));
        assert!(!rule_matches(&rule(&["pods"], None), &{
            r.sub_resource = "status".into();
            r.clone()
        }));
        assert!(rule_matches(&rule(&["pods/*"], None), &r));
        assert!(rule_matches(&rule(&["*/status"], None), &r));
    }

    #[test]
    fn selectors() {
        let labels = vec![("app".to_string(), "web".to_string())];
        let s = LabelSelector {
            match_expressions: vec![("app".into(), "In".into(), vec!["web".into(), "db".into()])],
            ..LabelSelector::default()
        };
        assert_eq!(selector_matches(&s, &labels), Ok(true));
        let s = LabelSelector {
            match_expressions: vec![("tier".into(), "NotIn".into(), vec!["x".into()])],
            ..LabelSelector::default()
        };
        assert_eq!(selector_matches(&s, &labels), Ok(true));
        let s = LabelSelector {
            match_expressions: vec![("tier".into(), "Exists".into(), vec![])],
            ..LabelSelector::default()
        };
        assert_eq!(selector_matches(&s, &labels), Ok(false));
        let m = MatchResources {
            object_selector: LabelSelector {
                match_labels: vec![("app".into(), "db".into())],
                ..LabelSelector::default()
            },
            ..MatchResources::default()
        };
        assert_eq!(matches(&m, &pod(), None), Ok(false));
    }
}
