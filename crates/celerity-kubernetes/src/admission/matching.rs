//! Which requests a policy or binding applies to (Kubernetes' `policy/matching` and the
//! webhook predicates it uses): namespace and object label selectors, resource rules with
//! operations, groups, versions, resources, subresources, scope and names, and the rules
//! that exclude.
//!
//! `matchPolicy: Equivalent` also matches the resources the API server serves as the same
//! thing under other groups or versions; offline those are what the host says
//! ([`Equivalents`], a REST mapper's equivalence registry), none by default, where
//! `Equivalent` matches as `Exact` does.

use super::policy::{LabelSelector, MatchResources, ResourceRule};
use cel_k8s_schema::names::{is_label_value, is_qualified_name};

use super::request::{Gvk, Gvr, Request};

/// One resource of an equivalence registry: a resource (and subresource), its kind, and
/// what identifies it across groups and versions (by default `group/resource`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EquivalentResource {
    /// The resource.
    pub resource: Gvr,
    /// The subresource (`""` for the resource itself).
    pub subresource: String,
    /// Its kind.
    pub kind: Gvk,
    /// Resources with the same identity are equivalent.
    pub identity: String,
}

/// The resources served as the same thing (Kubernetes' `EquivalentResourceMapper`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Equivalents {
    /// The registered resources, in order.
    pub resources: Vec<EquivalentResource>,
}

impl Equivalents {
    fn identity(&self, r: &Gvr) -> String {
        self.resources
            .iter()
            .find(|e| e.resource.group == r.group && e.resource.resource == r.resource)
            .map_or_else(
                || format!("{}/{}", r.group, r.resource),
                |e| e.identity.clone(),
            )
    }

    /// The resources equivalent to `r` that serve `subresource`, in registration order.
    pub fn resources_for(&self, r: &Gvr, subresource: &str) -> Vec<Gvr> {
        let id = self.identity(r);
        let mut out: Vec<Gvr> = Vec::new();
        for e in &self.resources {
            if e.identity == id && e.subresource == subresource && !out.contains(&e.resource) {
                out.push(e.resource.clone());
            }
        }
        out
    }

    /// The kind of a resource's subresource, if registered.
    pub fn kind_for(&self, r: &Gvr, subresource: &str) -> Option<Gvk> {
        self.resources
            .iter()
            .find(|e| e.resource == *r && e.subresource == subresource)
            .map(|e| e.kind.clone())
    }
}

/// A label selector's requirements could not be understood (the API server reports this
/// as an internal error).
fn selector_error(why: &str) -> String {
    format!("Internal error occurred: {why}")
}

/// Why a selector is invalid (Kubernetes' `LabelSelectorAsSelector`): keys must be
/// qualified names, values label values, operators known, and `In`/`NotIn` need values
/// that `Exists`/`DoesNotExist` must not have.
fn check_selector(s: &LabelSelector) -> Result<(), String> {
    let key = |k: &str, at: &str| match is_qualified_name(k).first() {
        Some(why) => Err(selector_error(&format!(
            "{at}: Invalid value: {k:?}: {why}"
        ))),
        None => Ok(()),
    };
    let value = |v: &str, at: &str| match is_label_value(v).first() {
        Some(why) => Err(selector_error(&format!(
            "{at}: Invalid value: {v:?}: {why}"
        ))),
        None => Ok(()),
    };
    for (k, v) in &s.match_labels {
        key(k, "key")?;
        value(v, &format!("values[0][{k}]"))?;
    }
    for (k, op, values) in &s.match_expressions {
        key(k, "key")?;
        match op.as_str() {
            "In" | "NotIn" if values.is_empty() => {
                return Err(selector_error(
                    "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
                ));
            }
            "In" | "NotIn" => {}
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                return Err(selector_error(
                    "values: Invalid value: values set must be empty for exists and does not exist",
                ));
            }
            "Exists" | "DoesNotExist" => {}
            other => {
                return Err(selector_error(&format!(
                    "{other:?} is not a valid label selector operator"
                )));
            }
        }
        for (i, v) in values.iter().enumerate() {
            value(v, &format!("values[{i}][{k}]"))?;
        }
    }
    Ok(())
}

/// Whether `labels` satisfy a selector, or why the selector is invalid.
pub fn selector_matches(s: &LabelSelector, labels: &[(String, String)]) -> Result<bool, String> {
    check_selector(s)?;
    let get = |k: &str| labels.iter().find(|(l, _)| l == k).map(|(_, v)| v.as_str());
    let labels_match = s
        .match_labels
        .iter()
        .all(|(k, v)| get(k) == Some(v.as_str()));
    let expressions_match = s
        .match_expressions
        .iter()
        .all(|(key, op, values)| match op.as_str() {
            "In" => get(key).is_some_and(|v| values.iter().any(|x| x == v)),
            "NotIn" => get(key).is_none_or(|v| !values.iter().any(|x| x == v)),
            "Exists" => get(key).is_some(),
            _ => get(key).is_none(),
        });
    Ok(labels_match && expressions_match)
}

fn exact_or_wildcard(items: &[String], requested: &str) -> bool {
    items.iter().any(|i| i == "*" || i == requested)
}

/// Whether one rule (without its names) matches the request as its own resource.
fn rule_matches(rule: &ResourceRule, r: &Request) -> bool {
    rule_matches_as(rule, r, &r.resource)
}

/// Whether one rule (without its names) matches the request as `resource` (Kubernetes'
/// `rules.Matcher`).
fn rule_matches_as(rule: &ResourceRule, r: &Request, resource: &Gvr) -> bool {
    let is_namespace =
        resource.group.is_empty() && resource.version == "v1" && resource.resource == "namespaces";
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
    let resource_matches = rule.resources.iter().any(|res| {
        let (res, sub) = res.split_once('/').unwrap_or((res, ""));
        (res == "*" || res == resource.resource) && (sub == "*" || sub == r.sub_resource)
    });
    scope
        && operation
        && exact_or_wildcard(&rule.api_groups, &resource.group)
        && exact_or_wildcard(&rule.api_versions, &resource.version)
        && resource_matches
}

/// Whether a rule's names allow the request.
fn name_matches(rule: &ResourceRule, r: &Request) -> bool {
    rule.resource_names.is_empty() || rule.resource_names.contains(&r.name)
}

/// The resource and kind the rules match the request as (Kubernetes'
/// `matchesResourceRules`): as requested, else (`Equivalent`) as an equivalent resource.
/// Admission webhooks match their `rules` the same way (`webhook/generic/webhook.go`
/// `ShouldCallHook`: each rule by `rules.Matcher`, then the equivalent resources), with
/// no names; the error is theirs to wrap.
pub(crate) fn rules_match(
    rules: &[ResourceRule],
    match_policy: &str,
    r: &Request,
    eq: &Equivalents,
) -> Result<Option<(Gvr, Gvk)>, String> {
    if rules
        .iter()
        .any(|rule| rule_matches(rule, r) && name_matches(rule, r))
    {
        return Ok(Some((r.resource.clone(), r.kind.clone())));
    }
    if match_policy == "Exact" {
        return Ok(None);
    }
    let equivalents = eq.resources_for(&r.resource, &r.sub_resource);
    for rule in rules {
        for e in &equivalents {
            if *e == r.resource || !rule_matches_as(rule, r, e) {
                continue;
            }
            let kind = eq
                .kind_for(e, &r.sub_resource)
                .filter(|k| !k.kind.is_empty() || !k.version.is_empty())
                .ok_or_else(|| {
                    format!(
                        "unable to convert to {}/{}, Resource={}: unknown kind",
                        e.group, e.version, e.resource
                    )
                })?;
            if name_matches(rule, r) {
                return Ok(Some((e.clone(), kind)));
            }
        }
    }
    Ok(None)
}

/// Whether `m` applies to the request, given the labels of the request's namespace
/// (`None` when it has none) and the resources served as equivalent: the resource and kind
/// it matches as, `None`, or the error the API server reports.
pub fn matches(
    m: &MatchResources,
    r: &Request,
    namespace_labels: Option<&[(String, String)]>,
    eq: &Equivalents,
) -> Result<Option<(Gvr, Gvk)>, String> {
    let ns = namespace_selector_matches(&m.namespace_selector, r, namespace_labels);
    if let Ok(false) = ns {
        return Ok(None);
    }
    let obj = object_selector_matches(&m.object_selector, r);
    if let Ok(false) = obj {
        return Ok(None);
    }
    if rules_match(&m.exclude_resource_rules, &m.match_policy, r, eq)?.is_some() {
        return Ok(None);
    }
    let matched = if m.resource_rules.is_empty() {
        Some((r.resource.clone(), r.kind.clone()))
    } else {
        rules_match(&m.resource_rules, &m.match_policy, r, eq)?
    };
    if matched.is_some() {
        ns?;
        obj?;
    }
    Ok(matched)
}

/// Whether the request's namespace has the labels a selector asks for (Kubernetes'
/// `predicates/namespace` `MatchNamespaceSelector`, which webhooks and policies share):
/// cluster-scoped requests other than for Namespaces always match; a Namespace created or
/// updated is matched by its own labels.
pub(crate) fn namespace_selector_matches(
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

/// Whether the object or the old object has the labels a selector asks for (Kubernetes'
/// `predicates/object` `MatchObjectSelector`, which webhooks and policies share). An object
/// without `metadata` (the options object of a CONNECT, `PodExecOptions`) has no labels
/// to read: Kubernetes' `meta.Accessor` fails on it and the selector does not match it.
pub(crate) fn object_selector_matches(s: &LabelSelector, r: &Request) -> Result<bool, String> {
    if s.is_empty() {
        return Ok(true);
    }
    let matches = |o: Option<&serde_json::Value>| match o {
        Some(o) if o.get("metadata").is_some_and(serde_json::Value::is_object) => {
            selector_matches(s, &Request::labels_of(Some(o)).unwrap_or_default())
        }
        _ => Ok(false),
    };
    Ok(matches(r.object.as_ref())? || matches(r.old_object.as_ref())?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::request::Operation;
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
        assert_eq!(matches(&m, &pod(), None, &Equivalents::default()), Ok(None));
    }
}
