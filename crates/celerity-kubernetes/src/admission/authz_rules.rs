//! An authorizer the user writes down, for testing policies that use `authorizer` offline:
//! a list of rules, the first that matches a check decides, and a check no rule matches is
//! allowed.
//!
//! ```yaml
//! - users: [alice]
//!   verbs: [delete]
//!   resources: [deployments]
//!   decision: deny
//!   reason: alice may not delete deployments
//! - groups: [system:masters]
//!   decision: allow
//! - paths: [/healthz, /metrics/*]
//!   decision: noOpinion
//! ```
//!
//! Every list is optional; an absent list matches anything, `*` in a list matches anything,
//! and a path ending in `*` matches by prefix. `paths` only match path checks
//! (`authorizer.path(...)`); `apiGroups`, `resources`, `subresources`, `namespaces` and
//! `names` only match resource checks. `decision` is `allow`, `deny` or `noOpinion`.

use cel_k8s::authz::{AuthorizationAttributes, Authorizer, Decision, DecisionKind};
use serde_json::Value as Json;

/// One rule.
#[derive(Clone, Debug, PartialEq)]
pub struct AuthzRule {
    /// `users`.
    pub users: Option<Vec<String>>,
    /// `groups`.
    pub groups: Option<Vec<String>>,
    /// `verbs`.
    pub verbs: Option<Vec<String>>,
    /// `apiGroups`.
    pub api_groups: Option<Vec<String>>,
    /// `resources`.
    pub resources: Option<Vec<String>>,
    /// `subresources`.
    pub subresources: Option<Vec<String>>,
    /// `namespaces`.
    pub namespaces: Option<Vec<String>>,
    /// `names`.
    pub names: Option<Vec<String>>,
    /// `paths`.
    pub paths: Option<Vec<String>>,
    /// `decision`.
    pub decision: DecisionKind,
    /// `reason`.
    pub reason: String,
}

/// The authorizer of a list of rules.
#[derive(Clone, Debug, Default)]
pub struct RulesAuthorizer {
    rules: Vec<AuthzRule>,
}

fn any(list: &Option<Vec<String>>, value: &str) -> bool {
    list.as_ref()
        .is_none_or(|l| l.iter().any(|x| x == "*" || x == value))
}

fn path_matches(list: &Option<Vec<String>>, path: &str) -> bool {
    list.as_ref().is_none_or(|l| {
        l.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => p == path,
        })
    })
}

impl AuthzRule {
    fn matches(&self, a: &AuthorizationAttributes) -> bool {
        let (name, groups) = match &a.user {
            Some(u) => (u.name.as_str(), u.groups.as_slice()),
            None => ("", &[][..]),
        };
        let user = any(&self.users, name);
        let group = self
            .groups
            .as_ref()
            .is_none_or(|l| l.iter().any(|g| g == "*" || groups.contains(g)));
        let target = if a.resource_request {
            self.paths.is_none()
                && any(&self.api_groups, &a.api_group)
                && any(&self.resources, &a.resource)
                && any(&self.subresources, &a.subresource)
                && any(&self.namespaces, &a.namespace)
                && any(&self.names, &a.name)
        } else {
            self.api_groups.is_none()
                && self.resources.is_none()
                && self.subresources.is_none()
                && self.namespaces.is_none()
                && self.names.is_none()
                && path_matches(&self.paths, &a.path)
        };
        user && group && any(&self.verbs, &a.verb) && target
    }
}

impl RulesAuthorizer {
    /// The authorizer of these rules.
    pub fn new(rules: Vec<AuthzRule>) -> RulesAuthorizer {
        RulesAuthorizer { rules }
    }

    /// Reads rules from JSON (a list of rule objects), reporting each problem at its
    /// position (`[2].decision: ...`).
    pub fn from_json(json: &Json) -> Result<RulesAuthorizer, Vec<String>> {
        let Some(items) = json.as_array() else {
            return Err(vec!["expected a list of rules".into()]);
        };
        let mut errors = Vec::new();
        let mut rules = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match read_rule(item) {
                Ok(r) => rules.push(r),
                Err(e) => errors.extend(e.into_iter().map(|e| format!("[{i}]{e}"))),
            }
        }
        if errors.is_empty() {
            Ok(RulesAuthorizer { rules })
        } else {
            Err(errors)
        }
    }

    /// The rules.
    pub fn rules(&self) -> &[AuthzRule] {
        &self.rules
    }
}

const FIELDS: &[&str] = &[
    "users",
    "groups",
    "verbs",
    "apiGroups",
    "resources",
    "subresources",
    "namespaces",
    "names",
    "paths",
    "decision",
    "reason",
];

fn read_rule(j: &Json) -> Result<AuthzRule, Vec<String>> {
    let Some(m) = j.as_object() else {
        return Err(vec![": expected an object".into()]);
    };
    let mut errors = Vec::new();
    for k in m.keys() {
        if !FIELDS.contains(&k.as_str()) {
            errors.push(format!(".{k}: unknown field"));
        }
    }
    let mut list = |k: &str| -> Option<Vec<String>> {
        let v = m.get(k)?;
        match v.as_array().map(|a| {
            a.iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
        }) {
            Some(Some(l)) => Some(l),
            _ => {
                errors.push(format!(".{k}: expected a list of strings"));
                None
            }
        }
    };
    let mut rule = AuthzRule {
        users: list("users"),
        groups: list("groups"),
        verbs: list("verbs"),
        api_groups: list("apiGroups"),
        resources: list("resources"),
        subresources: list("subresources"),
        namespaces: list("namespaces"),
        names: list("names"),
        paths: list("paths"),
        decision: DecisionKind::Allow,
        reason: String::new(),
    };
    rule.decision = match m.get("decision").and_then(Json::as_str) {
        Some("allow") => DecisionKind::Allow,
        Some("deny") => DecisionKind::Deny,
        Some("noOpinion") => DecisionKind::NoOpinion,
        _ => {
            errors.push(".decision: expected \"allow\", \"deny\" or \"noOpinion\"".into());
            DecisionKind::Allow
        }
    };
    match m.get("reason") {
        None => {}
        Some(Json::String(s)) => rule.reason = s.clone(),
        Some(_) => errors.push(".reason: expected a string".into()),
    }
    if errors.is_empty() {
        Ok(rule)
    } else {
        Err(errors)
    }
}

impl Authorizer for RulesAuthorizer {
    fn authorize(&self, a: &AuthorizationAttributes) -> Result<Decision, String> {
        Ok(match self.rules.iter().find(|r| r.matches(a)) {
            Some(r) => Decision {
                kind: r.decision,
                reason: r.reason.clone(),
                error: None,
            },
            None => Decision::allow(""),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cel_k8s::authz::UserInfo;
    use serde_json::json;

    fn check(user: &str, verb: &str, resource: &str) -> AuthorizationAttributes {
        AuthorizationAttributes {
            user: Some(UserInfo {
                name: user.into(),
                ..UserInfo::default()
            }),
            verb: verb.into(),
            resource_request: true,
            resource: resource.into(),
            ..AuthorizationAttributes::default()
        }
    }

    #[test]
    fn the_first_matching_rule_decides_and_no_match_allows() {
        let a = RulesAuthorizer::from_json(&json!([
            {"users": ["alice"], "verbs": ["delete"], "decision": "deny", "reason": "no"},
            {"users": ["alice"], "decision": "noOpinion"},
            {"paths": ["/metrics/*"], "decision": "deny"},
        ]))
        .unwrap();
        let d = a.authorize(&check("alice", "delete", "pods")).unwrap();
        assert_eq!((d.kind, d.reason.as_str()), (DecisionKind::Deny, "no"));
        let d = a.authorize(&check("alice", "get", "pods")).unwrap();
        assert_eq!(d.kind, DecisionKind::NoOpinion);
        let d = a.authorize(&check("bob", "delete", "pods")).unwrap();
        assert_eq!(d.kind, DecisionKind::Allow);
        let path = AuthorizationAttributes {
            path: "/metrics/x".into(),
            verb: "get".into(),
            ..AuthorizationAttributes::default()
        };
        assert_eq!(a.authorize(&path).unwrap().kind, DecisionKind::Deny);
    }

    #[test]
    fn bad_rules_are_reported_at_their_position() {
        let e =
            RulesAuthorizer::from_json(&json!([{"decision": "maybe", "verb": ["x"]}])).unwrap_err();
        assert_eq!(
            e,
            vec![
                "[0].verb: unknown field",
                "[0].decision: expected \"allow\", \"deny\" or \"noOpinion\""
            ]
        );
    }
}
