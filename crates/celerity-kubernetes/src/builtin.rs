//! Built-in kinds (Deployments, Services, ConfigMaps, RBAC, ...): the schemas the API server
//! publishes for its own groups, for Kubernetes 1.25 to 1.37, shipped with the program and
//! turned into what [`crate::crd`] validates with, the way kubectl-validate validates
//! built-in kinds (it too reads the published schemas as structural schemas).
//!
//! The data (`schemas/`, written by `tools/k8s-schemas/generate.py`, whose README states its
//! source and conversion) is a store of definitions, each body kept once however many
//! versions share it, and one index per Kubernetes version naming each definition's body and
//! each group-version's kinds with their resource names and scope. Nothing is parsed until
//! an object needs it: the index of a version on its first built-in object, a store file
//! when a kind reaches its package. Both are kept for the process.
//!
//! A kind's schema is its definition with every `$ref` inlined, written as a CRD's
//! structural schema: int-or-string as `x-kubernetes-int-or-string`; a quantity, free-form
//! JSON (`RawExtension`, `JSON`) and a reference back into itself (JSONSchemaProps) as any
//! value; `metadata` at the root left to the ObjectMeta checks, as for custom resources.
//! Facts that do not validate (group-version-kind lists, patch strategies, unions) are
//! dropped, and so is the `byte` format (Go decodes base64 skipping line breaks). Inlining is bounded ([`MAX_SCHEMA_NODES`]), so no data can make it grow without
//! limit.
//!
//! What the API server checks in Go and no schema states (a Deployment's selector matching
//! its template's labels, a Service's ports being unique) is not checked here; see the README.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cel_k8s_schema::names::{self, NameCheck};
use serde::Deserialize;
use serde_json::{Map, Value as Json, json};

pub mod server_object;

mod data {
    include!(concat!(env!("OUT_DIR"), "/builtin_data.rs"));
}

/// The most schema nodes one kind's inlined schema may hold. Pod-bearing kinds, the largest,
/// take about 20,000.
pub const MAX_SCHEMA_NODES: usize = 200_000;

/// The Kubernetes minors the shipped data describes (the oldest and the newest).
pub fn shipped_versions() -> (u32, u32) {
    let minors: Vec<u32> = data::VERSIONS
        .iter()
        .filter_map(|(v, _)| v.strip_prefix("1.")?.parse().ok())
        .collect();
    (
        minors.iter().copied().min().unwrap_or(0),
        minors.iter().copied().max().unwrap_or(0),
    )
}

/// A version's index, as the generator writes it.
#[derive(Debug, Deserialize)]
struct VersionIndex {
    /// Package → type → the number of the body this version has.
    schemas: HashMap<String, HashMap<String, usize>>,
    #[serde(rename = "groupVersions")]
    group_versions: HashMap<String, GroupVersion>,
}

#[derive(Debug, Deserialize)]
struct GroupVersion {
    kinds: HashMap<String, KindEntry>,
}

#[derive(Debug, Deserialize)]
struct KindEntry {
    schema: String,
    resource: Option<String>,
    namespaced: Option<bool>,
}

/// One built-in kind that is a REST resource of its group-version.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltinKind {
    /// The group (`apps`; empty for the core group).
    pub group: String,
    /// The version (`v1`).
    pub version: String,
    /// The kind (`Deployment`).
    pub kind: String,
    /// The resource (`deployments`).
    pub resource: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// The definition's name (`io.k8s.api.apps.v1.Deployment`).
    pub definition: String,
}

/// The parsed index of `1.<minor>`, if shipped (parsed once per process).
fn index(minor: u32) -> Option<&'static VersionIndex> {
    static INDEXES: OnceLock<Mutex<HashMap<u32, &'static VersionIndex>>> = OnceLock::new();
    let cache = INDEXES.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(index) = cache.get(&minor) {
        return Some(index);
    }
    let name = format!("1.{minor}");
    let text = data::VERSIONS.iter().find(|(v, _)| *v == name)?.1;
    // The shipped data is ours and checked by the tests: a parse failure is a build bug.
    let parsed: VersionIndex = serde_json::from_str(text).ok()?;
    let leaked: &'static VersionIndex = Box::leak(Box::new(parsed));
    cache.insert(minor, leaked);
    Some(leaked)
}

/// A package's store: type → its bodies (parsed once per process, shared by versions).
type Store = HashMap<String, Vec<Json>>;

fn store(package: &str) -> Option<Arc<Store>> {
    static STORES: OnceLock<Mutex<HashMap<String, Arc<Store>>>> = OnceLock::new();
    let cache = STORES.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = cache.get(package) {
        return Some(s.clone());
    }
    let text = data::DEFS.iter().find(|(p, _)| *p == package)?.1;
    let parsed: Arc<Store> = Arc::new(serde_json::from_str(text).ok()?);
    cache.insert(package.to_string(), parsed.clone());
    Some(parsed)
}

/// The built-in kind `kind` of `api_version` (`apps/v1`, `v1`) in Kubernetes `1.<minor>`, when
/// it is a REST resource there.
pub fn kind(minor: u32, api_version: &str, kind: &str) -> Option<BuiltinKind> {
    let gv = index(minor)?.group_versions.get(api_version)?;
    let entry = gv.kinds.get(kind)?;
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    Some(BuiltinKind {
        group: group.to_string(),
        version: version.to_string(),
        kind: kind.to_string(),
        resource: entry.resource.clone()?,
        namespaced: entry.namespaced?,
        definition: entry.schema.clone(),
    })
}

/// Whether `1.<minor>` has built-in schemas shipped.
pub fn has_version(minor: u32) -> bool {
    index(minor).is_some()
}

/// The name rule the API server applies to objects of a built-in kind (its `ValidateNameFunc`
/// in k8s.io/kubernetes pkg/apis/*/validation): DNS-1123 subdomains unless said otherwise.
pub fn name_check(group: &str, kind: &str) -> NameCheck {
    match (group, kind) {
        ("", "Namespace") => names::name_is_dns_label,
        ("", "Service") => names::name_is_dns1035_label,
        (
            "rbac.authorization.k8s.io",
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding",
        ) => names::name_is_path_segment,
        _ => names::name_is_dns_subdomain,
    }
}

/// The structural schema of a built-in kind in Kubernetes `1.<minor>`: its definition with
/// every reference inlined (see the module's header).
pub fn structural_schema(minor: u32, kind: &BuiltinKind) -> Result<Json, String> {
    let mut schema = typed_schema(minor, kind)?;
    // The root's metadata is the ObjectMeta checks' (as for custom resources).
    if let Some(props) = schema.get_mut("properties").and_then(Json::as_object_mut)
        && props.contains_key("metadata")
    {
        props.insert("metadata".into(), json!({"type": "object"}));
    }
    Ok(schema)
}

/// The schema of a built-in kind as the type checker of admission policies sees it: as
/// [`structural_schema`], with the root's `metadata` the full ObjectMeta the API server
/// publishes.
pub fn typed_schema(minor: u32, kind: &BuiltinKind) -> Result<Json, String> {
    let index =
        index(minor).ok_or_else(|| format!("no built-in schemas for Kubernetes 1.{minor}"))?;
    let mut inliner = Inliner {
        index,
        stack: Vec::new(),
        nodes: 0,
    };
    inliner.definition(&kind.definition)
}

/// The kinds served as `resource` of `api_version` (a REST mapper's `KindsFor`), sorted.
pub fn kinds_for(minor: u32, api_version: &str, resource: &str) -> Vec<String> {
    let Some(gv) = index(minor).and_then(|i| i.group_versions.get(api_version)) else {
        return Vec::new();
    };
    let mut kinds: Vec<String> = gv
        .kinds
        .iter()
        .filter(|(_, k)| k.resource.as_deref() == Some(resource))
        .map(|(name, _)| name.clone())
        .collect();
    kinds.sort();
    kinds
}

/// Inlines references, converting as it goes.
struct Inliner {
    index: &'static VersionIndex,
    /// The definitions being inlined (a reference to one of them is a cycle).
    stack: Vec<String>,
    nodes: usize,
}

/// Any value (a quantity, free-form JSON, a cycle cut).
fn any_value() -> Json {
    json!({"x-kubernetes-preserve-unknown-fields": true})
}

/// Keys kept as they are: the facts that validate.
const KEPT: &[&str] = &[
    "type",
    "format",
    "required",
    "enum",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
    "pattern",
    "uniqueItems",
    "multipleOf",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
];

impl Inliner {
    fn definition(&mut self, name: &str) -> Result<Json, String> {
        if self.stack.iter().any(|s| s == name)
            || self.stack.len() > cel_k8s_schema::schema::MAX_SCHEMA_DEPTH / 2
        {
            return Ok(any_value());
        }
        let (package, type_name) = name
            .rsplit_once('.')
            .ok_or_else(|| format!("malformed definition name {name:?}"))?;
        let variant = *self
            .index
            .schemas
            .get(package)
            .and_then(|p| p.get(type_name))
            .ok_or_else(|| format!("definition {name} is not in the index"))?;
        let store = store(package).ok_or_else(|| format!("no store for package {package}"))?;
        let body = store
            .get(type_name)
            .and_then(|v| v.get(variant))
            .ok_or_else(|| format!("definition {name} has no body {variant}"))?
            .clone();
        self.stack.push(name.to_string());
        let converted = self.node(&body);
        self.stack.pop();
        converted
    }

    fn node(&mut self, node: &Json) -> Result<Json, String> {
        self.nodes += 1;
        if self.nodes > MAX_SCHEMA_NODES {
            return Err(format!(
                "the inlined schema has more than {MAX_SCHEMA_NODES} nodes"
            ));
        }
        let Some(obj) = node.as_object() else {
            return Ok(any_value());
        };
        // A reference, bare or as `allOf: [{$ref}]` with facts beside it.
        let reference = obj.get("$ref").and_then(Json::as_str).or_else(|| {
            match obj.get("allOf").and_then(Json::as_array).map(Vec::as_slice) {
                Some([only]) => only.get("$ref").and_then(Json::as_str),
                _ => None,
            }
        });
        if let Some(r) = reference {
            let name = r.strip_prefix("#/components/schemas/").unwrap_or(r);
            let mut target = self.definition(name)?;
            if let Some(t) = target.as_object_mut() {
                for key in KEPT {
                    if let Some(v) = obj.get(*key) {
                        t.insert((*key).to_string(), v.clone());
                    }
                }
            }
            return Ok(target);
        }
        if obj.get("format").and_then(Json::as_str) == Some("int-or-string") {
            return Ok(json!({"x-kubernetes-int-or-string": true}));
        }
        // Quantity (string or number) and any other union: any value.
        if obj.contains_key("oneOf") || obj.contains_key("anyOf") || obj.is_empty() {
            return Ok(any_value());
        }
        let mut out = Map::new();
        for key in KEPT {
            if let Some(v) = obj.get(*key) {
                out.insert((*key).to_string(), v.clone());
            }
        }
        // `[]byte` fields (Secret data, ConfigMap binaryData) are decoded by Go's base64
        // decoder, which skips line breaks; the OpenAPI `byte` format does not. Dropped, so
        // that wrapped base64 is not refused; malformed base64 goes unnoticed (the API
        // server's decode error is not reproduced).
        if out.get("format").and_then(Json::as_str) == Some("byte") {
            out.remove("format");
        }
        let mut has_fields = false;
        if let Some(props) = obj.get("properties").and_then(Json::as_object) {
            let mut converted = Map::new();
            for (k, v) in props {
                converted.insert(k.clone(), self.node(v)?);
            }
            out.insert("properties".into(), Json::Object(converted));
            has_fields = true;
        }
        if let Some(items) = obj.get("items") {
            out.insert("items".into(), self.node(items)?);
        }
        match obj.get("additionalProperties") {
            Some(Json::Bool(b)) => {
                out.insert("additionalProperties".into(), Json::Bool(*b));
                has_fields = true;
            }
            Some(schema @ Json::Object(_)) => {
                out.insert("additionalProperties".into(), self.node(schema)?);
                has_fields = true;
            }
            _ => {}
        }
        // An object with nothing declared (RawExtension, FieldsV1) holds anything.
        if out.get("type").and_then(Json::as_str) == Some("object") && !has_fields {
            out.insert(
                "x-kubernetes-preserve-unknown-fields".into(),
                Json::Bool(true),
            );
        }
        if !out.contains_key("type") && !out.contains_key("x-kubernetes-preserve-unknown-fields") {
            out.insert(
                "x-kubernetes-preserve-unknown-fields".into(),
                Json::Bool(true),
            );
        }
        Ok(Json::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_kind_of_every_version_inlines_within_the_bound() {
        let (oldest, newest) = shipped_versions();
        assert_eq!((oldest, newest), (25, 37));
        let mut kinds = 0;
        for minor in oldest..=newest {
            let index = index(minor).expect("the index parses");
            for (gv, entry) in &index.group_versions {
                for k in entry.kinds.keys() {
                    let Some(found) = kind(minor, gv, k) else {
                        continue;
                    };
                    let schema = structural_schema(minor, &found)
                        .unwrap_or_else(|e| panic!("1.{minor} {gv} {k}: {e}"));
                    assert_eq!(schema["type"], "object", "1.{minor} {gv} {k}");
                    kinds += 1;
                }
            }
        }
        assert!(kinds > 13 * 50, "only {kinds} kinds");
    }

    #[test]
    fn references_are_inlined_and_converted() {
        let deployment = kind(35, "apps/v1", "Deployment").expect("apps/v1 Deployment");
        assert_eq!(deployment.resource, "deployments");
        assert!(deployment.namespaced);
        let schema = structural_schema(35, &deployment).unwrap();
        assert_eq!(schema["properties"]["metadata"], json!({"type": "object"}));
        let spec = &schema["properties"]["spec"];
        assert_eq!(spec["properties"]["replicas"]["type"], "integer");
        assert_eq!(
            spec["properties"]["strategy"]["properties"]["rollingUpdate"]["properties"]["maxSurge"],
            json!({"x-kubernetes-int-or-string": true})
        );
        let containers =
            &spec["properties"]["template"]["properties"]["spec"]["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-list-type"], "map");
        assert_eq!(containers["items"]["required"], json!(["name"]));
        let limits = &containers["items"]["properties"]["resources"]["properties"]["limits"];
        assert_eq!(limits["additionalProperties"], any_value());
        assert!(kind(35, "apps/v1", "DeploymentList").is_none());
        assert!(kind(35, "v1", "Namespace").is_some_and(|n| !n.namespaced));
        assert!(kind(24, "apps/v1", "Deployment").is_none());
    }

    #[test]
    fn a_reference_back_into_itself_is_cut() {
        let crd = kind(35, "apiextensions.k8s.io/v1", "CustomResourceDefinition").unwrap();
        let schema = structural_schema(35, &crd).unwrap();
        let props = &schema["properties"]["spec"]["properties"]["versions"]["items"]["properties"]
            ["schema"]["properties"]["openAPIV3Schema"]["properties"];
        assert_eq!(props["properties"]["additionalProperties"], any_value());
    }
}
