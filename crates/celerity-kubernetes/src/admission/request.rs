//! One admission request (Kubernetes' `admission.Attributes`): the operation, the object and
//! its old version, what kind and resource it is, who asks; and `request` as policies see
//! it (Kubernetes' `CreateAdmissionRequest`, serialized as the API server serializes it:
//! empty optional fields are absent).
//!
//! Offline there is no REST mapping. [`Request::for_object_with`] takes one from the host
//! (the `cel` command's: CRDs' plurals and scopes, the shipped built-in schemas' resources;
//! an unknown kind gets no resource). [`Request::for_object`], for the conformance cases,
//! resources and scopes built-in kinds from a table of Kubernetes' own types
//! ([`builtin_kind`]), and other kinds take a lower-cased plural as `kubectl` guesses it and
//! their scope from the host.

use serde_json::{Map, Value as Json, json};

/// An admission operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// `CREATE`.
    Create,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `CONNECT`.
    Connect,
}

impl Operation {
    /// The name Kubernetes gives it (`CREATE`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

impl std::str::FromStr for Operation {
    type Err = String;
    fn from_str(s: &str) -> Result<Operation, String> {
        match s {
            "CREATE" => Ok(Operation::Create),
            "UPDATE" => Ok(Operation::Update),
            "DELETE" => Ok(Operation::Delete),
            "CONNECT" => Ok(Operation::Connect),
            other => Err(format!(
                "unknown operation {other:?}: expected CREATE, UPDATE, DELETE or CONNECT"
            )),
        }
    }
}

/// A group, version and kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Gvk {
    /// API group (`""` for the core group).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl Gvk {
    /// The kind of an `apiVersion` (`apps/v1`, `v1`) and a kind.
    pub fn from_api_version(api_version: &str, kind: &str) -> Gvk {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        Gvk {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    /// `group/version` (`version` for the core group).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    fn to_json(&self) -> Json {
        json!({"group": self.group, "version": self.version, "kind": self.kind})
    }
}

/// A group, version and resource.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Gvr {
    /// API group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Resource (plural, lower case).
    pub resource: String,
}

impl Gvr {
    fn to_json(&self) -> Json {
        json!({"group": self.group, "version": self.version, "resource": self.resource})
    }

    /// `resource.group` (`resource` for the core group), as Kubernetes prints a group
    /// resource.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// Who makes the request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// User name.
    pub username: String,
    /// User id.
    pub uid: String,
    /// Groups.
    pub groups: Vec<String>,
    /// Extra attributes.
    pub extra: Vec<(String, Vec<String>)>,
}

/// One admission request.
#[derive(Clone, Debug)]
pub struct Request {
    /// The operation.
    pub operation: Operation,
    /// The object (absent for DELETE).
    pub object: Option<Json>,
    /// The old object (UPDATE and DELETE).
    pub old_object: Option<Json>,
    /// The kind.
    pub kind: Gvk,
    /// The resource.
    pub resource: Gvr,
    /// The subresource (`""` for the resource itself).
    pub sub_resource: String,
    /// The object's name.
    pub name: String,
    /// The object's namespace (`""` for cluster-scoped objects).
    pub namespace: String,
    /// Who asks.
    pub user: UserInfo,
    /// Whether this is a dry run.
    pub dry_run: bool,
    /// The operation's options (`CreateOptions`, ...), if any.
    pub options: Option<Json>,
}

impl Request {
    /// A request for `object` (or, for DELETE, `old`), with its kind, resource, name and
    /// namespace from the object; `namespaced` says whether its kind is namespaced when
    /// it is not built in (a namespaced object without a namespace is in `default`, as
    /// `kubectl` puts it).
    pub fn for_object(
        operation: Operation,
        object: Option<Json>,
        old_object: Option<Json>,
        namespaced: impl Fn(&Gvk) -> Option<bool>,
    ) -> Result<Request, String> {
        Request::for_object_with(operation, object, old_object, |kind| {
            Some(match builtin_kind(&kind.group, &kind.kind) {
                Some((r, n)) => (r.to_string(), n),
                None => (guess_resource(&kind.kind), namespaced(kind).unwrap_or(true)),
            })
        })
    }

    /// [`Request::for_object`] with the kind's resource and scope from `resolve` (a CRD's
    /// plural and scope, a built-in kind's from the shipped schemas). A kind it does not
    /// know gets an empty resource, which only rules for every resource (`*`) match: its
    /// name is not guessed.
    pub fn for_object_with(
        operation: Operation,
        object: Option<Json>,
        old_object: Option<Json>,
        resolve: impl Fn(&Gvk) -> Option<(String, bool)>,
    ) -> Result<Request, String> {
        let subject = object
            .as_ref()
            .or(old_object.as_ref())
            .ok_or("a request needs an object or an old object")?;
        for (j, what) in [(&object, "object"), (&old_object, "oldObject")] {
            if let Some(j) = j {
                check_depth(j, what)?;
            }
        }
        let s = |p: &[&str]| {
            p.iter()
                .try_fold(subject, |v, k| v.get(k))
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_string()
        };
        let api_version = s(&["apiVersion"]);
        let kind_name = s(&["kind"]);
        if api_version.is_empty() || kind_name.is_empty() {
            return Err("the object has no apiVersion or kind".into());
        }
        let kind = Gvk::from_api_version(&api_version, &kind_name);
        let (resource, is_namespaced) = resolve(&kind).unwrap_or((String::new(), true));
        let mut namespace = s(&["metadata", "namespace"]);
        if is_namespaced && namespace.is_empty() {
            namespace = "default".into();
        }
        if !is_namespaced {
            namespace.clear();
        }
        Ok(Request {
            operation,
            resource: Gvr {
                group: kind.group.clone(),
                version: kind.version.clone(),
                resource,
            },
            kind,
            sub_resource: String::new(),
            name: s(&["metadata", "name"]),
            namespace,
            user: UserInfo::default(),
            dry_run: false,
            options: None,
            object,
            old_object,
        })
    }

    /// `request` as policies read it, for a request matched as `resource` and `kind`.
    pub fn to_json(&self, resource: &Gvr, kind: &Gvk) -> Json {
        let mut m = Map::new();
        let mut put = |k: &str, v: Json| {
            m.insert(k.to_string(), v);
        };
        put("kind", kind.to_json());
        put("resource", resource.to_json());
        if !self.sub_resource.is_empty() {
            put("subResource", json!(self.sub_resource));
        }
        put("requestKind", self.kind.to_json());
        put("requestResource", self.resource.to_json());
        if !self.sub_resource.is_empty() {
            put("requestSubResource", json!(self.sub_resource));
        }
        if !self.name.is_empty() {
            put("name", json!(self.name));
        }
        if !self.namespace.is_empty() {
            put("namespace", json!(self.namespace));
        }
        put("operation", json!(self.operation.as_str()));
        let mut user = Map::new();
        if !self.user.username.is_empty() {
            user.insert("username".into(), json!(self.user.username));
        }
        if !self.user.uid.is_empty() {
            user.insert("uid".into(), json!(self.user.uid));
        }
        if !self.user.groups.is_empty() {
            user.insert("groups".into(), json!(self.user.groups));
        }
        if !self.user.extra.is_empty() {
            let extra: Map<String, Json> = self
                .user
                .extra
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            user.insert("extra".into(), Json::Object(extra));
        }
        put("userInfo", Json::Object(user));
        put("dryRun", json!(self.dry_run));
        if let Some(o) = &self.options {
            put("options", o.clone());
        }
        Json::Object(m)
    }

    /// The labels of the object (`None` when there is no object).
    pub fn labels_of(object: Option<&Json>) -> Option<Vec<(String, String)>> {
        let labels = object?.get("metadata").and_then(|m| m.get("labels"));
        Some(
            labels
                .and_then(Json::as_object)
                .map(|l| {
                    l.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                        .collect()
                })
                .unwrap_or_default(),
        )
    }

    /// The name used in "is forbidden" messages (Kubernetes' `extractResourceName`): the
    /// request's name, else the object's name or generateName, else `Unknown`.
    pub fn display_name(&self) -> String {
        if !self.name.is_empty() {
            return self.name.clone();
        }
        let meta = |k: &str| {
            self.object
                .as_ref()
                .and_then(|o| o.get("metadata"))
                .and_then(|m| m.get(k))
                .and_then(Json::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        meta("name")
            .or_else(|| meta("generateName"))
            .unwrap_or_else(|| "Unknown".into())
    }
}

/// Refuses JSON nested deeper than [`celerity::MAX_JSON_DEPTH`]: admission copies and drops
/// objects, which recurses over their depth. Iterative.
pub fn check_depth(json: &Json, what: &str) -> Result<(), String> {
    let mut stack = vec![(json, 1usize)];
    while let Some((j, depth)) = stack.pop() {
        if depth > celerity::MAX_JSON_DEPTH {
            return Err(format!(
                "{what}: nested deeper than {} levels",
                celerity::MAX_JSON_DEPTH
            ));
        }
        match j {
            Json::Array(a) => stack.extend(a.iter().map(|x| (x, depth + 1))),
            Json::Object(m) => stack.extend(m.values().map(|x| (x, depth + 1))),
            _ => {}
        }
    }
    Ok(())
}

/// The resource and scope (namespaced or not) of a built-in kind.
pub fn builtin_kind(group: &str, kind: &str) -> Option<(&'static str, bool)> {
    const KINDS: &[(&str, &str, &str, bool)] = &[
        ("", "Pod", "pods", true),
        ("", "Service", "services", true),
        ("", "ConfigMap", "configmaps", true),
        ("", "Secret", "secrets", true),
        ("", "ServiceAccount", "serviceaccounts", true),
        ("", "PersistentVolumeClaim", "persistentvolumeclaims", true),
        ("", "ReplicationController", "replicationcontrollers", true),
        ("", "Endpoints", "endpoints", true),
        ("", "Event", "events", true),
        ("", "LimitRange", "limitranges", true),
        ("", "ResourceQuota", "resourcequotas", true),
        ("", "PodTemplate", "podtemplates", true),
        ("", "Binding", "bindings", true),
        ("", "Namespace", "namespaces", false),
        ("", "Node", "nodes", false),
        ("", "PersistentVolume", "persistentvolumes", false),
        ("", "ComponentStatus", "componentstatuses", false),
        ("apps", "Deployment", "deployments", true),
        ("apps", "StatefulSet", "statefulsets", true),
        ("apps", "DaemonSet", "daemonsets", true),
        ("apps", "ReplicaSet", "replicasets", true),
        ("apps", "ControllerRevision", "controllerrevisions", true),
        ("batch", "Job", "jobs", true),
        ("batch", "CronJob", "cronjobs", true),
        (
            "autoscaling",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
        ),
        (
            "policy",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
        ),
        ("networking.k8s.io", "Ingress", "ingresses", true),
        (
            "networking.k8s.io",
            "NetworkPolicy",
            "networkpolicies",
            true,
        ),
        ("networking.k8s.io", "IngressClass", "ingressclasses", false),
        ("discovery.k8s.io", "EndpointSlice", "endpointslices", true),
        ("coordination.k8s.io", "Lease", "leases", true),
        ("events.k8s.io", "Event", "events", true),
        ("rbac.authorization.k8s.io", "Role", "roles", true),
        (
            "rbac.authorization.k8s.io",
            "RoleBinding",
            "rolebindings",
            true,
        ),
        (
            "rbac.authorization.k8s.io",
            "ClusterRole",
            "clusterroles",
            false,
        ),
        (
            "rbac.authorization.k8s.io",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
        ),
        ("storage.k8s.io", "StorageClass", "storageclasses", false),
        ("storage.k8s.io", "CSIDriver", "csidrivers", false),
        ("storage.k8s.io", "CSINode", "csinodes", false),
        (
            "storage.k8s.io",
            "VolumeAttachment",
            "volumeattachments",
            false,
        ),
        (
            "scheduling.k8s.io",
            "PriorityClass",
            "priorityclasses",
            false,
        ),
        ("node.k8s.io", "RuntimeClass", "runtimeclasses", false),
        (
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
        ),
        (
            "admissionregistration.k8s.io",
            "ValidatingAdmissionPolicy",
            "validatingadmissionpolicies",
            false,
        ),
        (
            "admissionregistration.k8s.io",
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
            false,
        ),
        (
            "admissionregistration.k8s.io",
            "MutatingAdmissionPolicy",
            "mutatingadmissionpolicies",
            false,
        ),
        (
            "admissionregistration.k8s.io",
            "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings",
            false,
        ),
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            false,
        ),
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            false,
        ),
        (
            "certificates.k8s.io",
            "CertificateSigningRequest",
            "certificatesigningrequests",
            false,
        ),
    ];
    KINDS
        .iter()
        .find(|(g, k, _, _)| *g == group && *k == kind)
        .map(|(_, _, r, n)| (*r, *n))
}

/// The resource of a kind that is not built in, as `kubectl` guesses it
/// (`UnsafeGuessKindToResource`): lower case, plural.
pub fn guess_resource(kind: &str) -> String {
    let k = kind.to_lowercase();
    if k.is_empty() {
        return k;
    }
    if k.ends_with("endpoints") {
        return k;
    }
    if k.ends_with('s') {
        return format!("{k}es");
    }
    if let Some(stem) = k.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    format!("{k}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_are_guessed_as_kubectl_does() {
        assert_eq!(guess_resource("Widget"), "widgets");
        assert_eq!(guess_resource("Policy"), "policies");
        assert_eq!(guess_resource("Gateway"), "gateways");
        assert_eq!(guess_resource("Class"), "classes");
    }

    #[test]
    fn request_json_omits_empty_fields() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
        let r = Request::for_object(Operation::Create, Some(pod), None, |_| None).unwrap();
        assert_eq!(r.namespace, "default");
        let j = r.to_json(&r.resource, &r.kind);
        assert!(j.get("subResource").is_none());
        assert_eq!(j["resource"]["resource"], "pods");
        assert_eq!(j["dryRun"], false);
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "namespace": "x"}});
        let r = Request::for_object(Operation::Create, Some(ns), None, |_| None).unwrap();
        assert_eq!(r.namespace, "");
    }
}
