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

use cel_k8s_schema::godecode::GoType;
use cel_k8s_schema::names::{self, NameCheck};
use serde::Deserialize;
use serde_json::{Map, Value as Json, json};

mod go_type;
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
    typed_schema(minor, kind).map(metadata_left_to_checks)
}

/// The root's metadata is the ObjectMeta checks' (as for custom resources).
fn metadata_left_to_checks(mut schema: Json) -> Json {
    if let Some(props) = schema.get_mut("properties").and_then(Json::as_object_mut)
        && props.contains_key("metadata")
    {
        props.insert("metadata".into(), json!({"type": "object"}));
    }
    schema
}

/// The schema of a built-in kind as the type checker of admission policies sees it: as
/// [`structural_schema`], with the root's `metadata` the full ObjectMeta the API server
/// publishes.
pub fn typed_schema(minor: u32, kind: &BuiltinKind) -> Result<Json, String> {
    let index =
        index(minor).ok_or_else(|| format!("no built-in schemas for Kubernetes 1.{minor}"))?;
    let mut inliner = Inliner {
        definitions: Definitions::Shipped(index),
        stack: Vec::new(),
        nodes: 0,
    };
    inliner.definition(&kind.definition)
}

/// The Go type objects of a built-in kind of Kubernetes `1.<minor>` are decoded into, as its
/// published schema describes it: what the API server's
/// decoder refuses before anything else ([`GoType::decode_error`]).
pub fn go_type(minor: u32, kind: &BuiltinKind) -> Result<GoType, String> {
    let index =
        index(minor).ok_or_else(|| format!("no built-in schemas for Kubernetes 1.{minor}"))?;
    go_type::GoTypeBuilder::new(Definitions::Shipped(index)).definition(&kind.definition)
}

/// Schemas a user gave (`cel validate --schemas DIR`): OpenAPI v3 documents as the API
/// server serves them (`kubectl get --raw /openapi/v3/apis/<group>/<version>`), for kinds
/// the shipped data lacks or describes differently (a cluster's aggregated APIs, a newer
/// or patched release). Their kinds override the shipped ones.
///
/// A kind is a definition with `x-kubernetes-group-version-kind` that some path of a
/// document creates (`post`, as `x-kubernetes-group-version-kind` on the operation says);
/// its resource is that path's last segment, and it is namespaced when the path is under
/// `namespaces/{namespace}/`. Definitions are shared across the documents by name, as the
/// API server's documents share them.
#[derive(Debug, Default)]
pub struct UserSchemas {
    definitions: HashMap<String, Json>,
    kinds: HashMap<(String, String), BuiltinKind>,
}

/// An operation's `x-kubernetes-group-version-kind`, as `apiVersion` and kind.
fn gvk_of(value: &Json) -> Option<(String, String, String)> {
    let text = |k: &str| value.get(k).and_then(Json::as_str).map(str::to_string);
    Some((text("group")?, text("version")?, text("kind")?))
}

impl UserSchemas {
    /// Reads `documents` (each with the name of its file, for errors). A document that is not
    /// an OpenAPI v3 document, or a kind two definitions claim, is an error naming the file.
    pub fn from_documents(documents: &[(String, Json)]) -> Result<UserSchemas, String> {
        let mut out = UserSchemas::default();
        // (apiVersion, kind) → the definition claiming it and its file.
        let mut claimed: HashMap<(String, String), (String, String)> = HashMap::new();
        let mut created: Vec<(String, String, String, String, bool)> = Vec::new();
        for (file, doc) in documents {
            let schemas = doc
                .get("components")
                .and_then(|c| c.get("schemas"))
                .and_then(Json::as_object)
                .ok_or_else(|| {
                    format!("{file}: not an OpenAPI v3 document (no components.schemas)")
                })?;
            for (name, body) in schemas {
                for (group, version, kind) in body
                    .get("x-kubernetes-group-version-kind")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(gvk_of)
                {
                    let key = (api_version(&group, &version), kind.clone());
                    match claimed.get(&key) {
                        Some((other, other_file)) if other != name => {
                            return Err(format!(
                                "{file}: {}, Kind={kind} is claimed by two definitions: {other} ({other_file}) and {name}",
                                key.0
                            ));
                        }
                        _ => {
                            claimed.insert(key, (name.clone(), file.clone()));
                        }
                    }
                }
                out.definitions
                    .entry(name.clone())
                    .or_insert_with(|| body.clone());
            }
            for (path, item) in doc
                .get("paths")
                .and_then(Json::as_object)
                .into_iter()
                .flatten()
            {
                let Some((group, version, kind)) = item
                    .get("post")
                    .and_then(|op| op.get("x-kubernetes-group-version-kind"))
                    .and_then(gvk_of)
                else {
                    continue;
                };
                let Some((resource, namespaced)) = created_resource(path) else {
                    continue;
                };
                created.push((group, version, kind, resource, namespaced));
            }
        }
        for (group, version, kind, resource, namespaced) in created {
            let api_version = api_version(&group, &version);
            let Some((definition, _)) = claimed.get(&(api_version.clone(), kind.clone())) else {
                continue;
            };
            out.kinds.insert(
                (api_version, kind.clone()),
                BuiltinKind {
                    group,
                    version,
                    kind,
                    resource,
                    namespaced,
                    definition: definition.clone(),
                },
            );
        }
        Ok(out)
    }

    /// How many kinds the documents serve.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether the documents serve no kind.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The kind `kind` of `api_version`, if the documents serve it.
    pub fn kind(&self, api_version: &str, kind: &str) -> Option<BuiltinKind> {
        self.kinds
            .get(&(api_version.to_string(), kind.to_string()))
            .cloned()
    }

    /// The kinds served as `resource` of `api_version`, sorted.
    pub fn kinds_for(&self, api_version: &str, resource: &str) -> Vec<String> {
        let mut kinds: Vec<String> = self
            .kinds
            .iter()
            .filter(|((gv, _), k)| gv == api_version && k.resource == resource)
            .map(|((_, kind), _)| kind.clone())
            .collect();
        kinds.sort();
        kinds
    }

    /// As [`structural_schema`], from these documents.
    pub fn structural_schema(&self, kind: &BuiltinKind) -> Result<Json, String> {
        self.typed_schema(kind).map(metadata_left_to_checks)
    }

    /// As [`go_type()`], from these documents.
    pub fn go_type(&self, kind: &BuiltinKind) -> Result<GoType, String> {
        go_type::GoTypeBuilder::new(Definitions::User(&self.definitions))
            .definition(&kind.definition)
    }

    /// As [`typed_schema`], from these documents.
    pub fn typed_schema(&self, kind: &BuiltinKind) -> Result<Json, String> {
        let mut inliner = Inliner {
            definitions: Definitions::User(&self.definitions),
            stack: Vec::new(),
            nodes: 0,
        };
        inliner.definition(&kind.definition)
    }
}

/// `apps/v1`, or `v1` for the core group.
fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// The resource a create path makes, and whether it is namespaced:
/// `/apis/apps/v1/namespaces/{namespace}/deployments` → (`deployments`, true),
/// `/api/v1/namespaces` → (`namespaces`, false). Paths of one object or a subresource are
/// not create paths of a resource.
fn created_resource(path: &str) -> Option<(String, bool)> {
    let rest = match path.strip_prefix("/api/") {
        Some(core) => core.split_once('/')?.1,
        None => {
            let rest = path.strip_prefix("/apis/")?;
            let (_group, rest) = rest.split_once('/')?;
            rest.split_once('/')?.1
        }
    };
    let (namespaced, resource) = match rest.strip_prefix("namespaces/{namespace}/") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    if resource.is_empty() || resource.contains('/') || resource.contains('{') {
        return None;
    }
    Some((resource.to_string(), namespaced))
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

/// Where an inliner finds definitions: a shipped version's index, or the documents a user
/// gave ([`UserSchemas`]).
enum Definitions<'a> {
    Shipped(&'static VersionIndex),
    User(&'a HashMap<String, Json>),
}

impl Definitions<'_> {
    /// The body of the definition `name` (`io.k8s.api.apps.v1.Deployment`).
    fn body(&self, name: &str) -> Result<Json, String> {
        match self {
            Definitions::User(definitions) => definitions
                .get(name)
                .cloned()
                .ok_or_else(|| format!("definition {name} is not in the --schemas documents")),
            Definitions::Shipped(index) => {
                let (package, type_name) = name
                    .rsplit_once('.')
                    .ok_or_else(|| format!("malformed definition name {name:?}"))?;
                let variant = *index
                    .schemas
                    .get(package)
                    .and_then(|p| p.get(type_name))
                    .ok_or_else(|| format!("definition {name} is not in the index"))?;
                let store =
                    store(package).ok_or_else(|| format!("no store for package {package}"))?;
                store
                    .get(type_name)
                    .and_then(|v| v.get(variant))
                    .cloned()
                    .ok_or_else(|| format!("definition {name} has no body {variant}"))
            }
        }
    }
}

/// Inlines references, converting as it goes.
struct Inliner<'a> {
    definitions: Definitions<'a>,
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
    // Not in the built-in groups' documents, but in those the API server publishes for
    // custom resources and aggregated APIs, which `--schemas` may hold.
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
];

impl Inliner<'_> {
    fn definition(&mut self, name: &str) -> Result<Json, String> {
        if self.stack.iter().any(|s| s == name)
            || self.stack.len() > cel_k8s_schema::schema::MAX_SCHEMA_DEPTH / 2
        {
            return Ok(any_value());
        }
        let body = self.definitions.body(name)?;
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
                    let go = go_type(minor, &found)
                        .unwrap_or_else(|e| panic!("1.{minor} {gv} {k}: {e}"));
                    assert!(
                        matches!(go, GoType::Struct(_)),
                        "1.{minor} {gv} {k}: {go:?}"
                    );
                    kinds += 1;
                }
            }
        }
        assert!(kinds > 13 * 50, "only {kinds} kinds");
    }

    #[test]
    fn the_go_type_names_structs_by_their_definitions() {
        let deployment = kind(36, "apps/v1", "Deployment").unwrap();
        let go = go_type(36, &deployment).unwrap();
        assert_eq!(go.go_name(), "v1.Deployment");
        let wrong = |o: Json| go.decode_error(&o);
        assert_eq!(
            wrong(json!({"spec": {"replicas": "3"}})).as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
            )
        );
        assert_eq!(
            wrong(json!({"spec": {"template": {"spec": {"containers": [{"ports": [{"containerPort": true}]}]}}}})).as_deref(),
            Some(
                "json: cannot unmarshal bool into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32"
            )
        );
        assert_eq!(
            wrong(json!({"spec": {"strategy": []}})).as_deref(),
            Some(
                "json: cannot unmarshal array into Go struct field DeploymentSpec.spec.strategy of type v1.DeploymentStrategy"
            )
        );
        // Types that decode themselves: int-or-string, quantities, times as strings.
        let fine = json!({
            "metadata": {"creationTimestamp": "2024-01-01T00:00:00Z", "labels": {"a": "b"}},
            "spec": {"strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                "template": {"spec": {"containers": [{"name": "c",
                    "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}]}}}
        });
        assert_eq!(wrong(fine), None);
        // Named types take their names from the table of k8s.io/api's types.
        let pod = go_type(36, &kind(36, "v1", "Pod").unwrap()).unwrap();
        let container = |c: Json| json!({"spec": {"containers": [c]}});
        // A quantity's parser and int-or-string's own `encoding/json` decoder end the
        // decoding with their own texts, whatever type error came before (`ports` is
        // decoded before `resources`).
        let port_error = "json: cannot unmarshal string into Go struct field \
                          ContainerPort.spec.containers.ports.containerPort of type int32";
        let quantity_format = "quantities must match the regular expression \
                               '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
        for (limits, error) in [
            (json!({"cpu": "lots"}), Some(quantity_format)),
            (json!({"cpu": true}), Some(quantity_format)),
            (json!({"cpu": ""}), Some(quantity_format)),
            (
                json!({"memory": "192i"}),
                Some("unable to parse quantity's suffix"),
            ),
            (json!({"cpu": " 500m ", "memory": 1.5e9}), Some(port_error)),
        ] {
            let c = container(
                json!({"resources": {"limits": limits}, "ports": [{"containerPort": "80"}]}),
            );
            assert_eq!(pod.decode_error(&c).as_deref(), error, "{c}");
        }
        let probe = |port: Json| container(json!({"livenessProbe": {"httpGet": {"port": port}}}));
        for (port, error) in [
            (json!("http"), None),
            (json!(8080), None),
            (
                json!(true),
                Some("json: cannot unmarshal bool into Go value of type int32"),
            ),
            (
                json!(1.5),
                Some("json: cannot unmarshal number 1.5 into Go value of type int32"),
            ),
            (
                json!(3_000_000_000_u64),
                Some("json: cannot unmarshal number 3000000000 into Go value of type int32"),
            ),
        ] {
            assert_eq!(
                pod.decode_error(&probe(port.clone())).as_deref(),
                error,
                "{port}"
            );
        }
        assert_eq!(
            pod.decode_error(&container(json!({"imagePullPolicy": 1})))
                .as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field Container.spec.containers.imagePullPolicy of type v1.PullPolicy"
            )
        );
        assert_eq!(
            pod.decode_error(&container(
                json!({"securityContext": {"capabilities": {"drop": [true]}}})
            ))
            .as_deref(),
            Some(
                "json: cannot unmarshal bool into Go struct field Capabilities.spec.containers.securityContext.capabilities.drop of type v1.Capability"
            )
        );
        assert_eq!(
            pod.decode_error(&container(json!({"resources": {"limits": []}})))
                .as_deref(),
            Some(
                "json: cannot unmarshal array into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList"
            )
        );
        assert_eq!(
            pod.decode_error(&json!({"metadata": {"uid": 5}}))
                .as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID"
            )
        );
        let secret = kind(36, "v1", "Secret").unwrap();
        let go = go_type(36, &secret).unwrap();
        assert_eq!(go.decode_error(&json!({"data": {"k": "aGk="}})), None);
        assert_eq!(
            go.decode_error(&json!({"data": {"k": 1}})).as_deref(),
            Some("json: cannot unmarshal number into Go struct field Secret.data of type []uint8")
        );
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
    fn user_documents_serve_their_kinds_and_say_what_is_wrong() {
        let doc = json!({
            "paths": {
                "/apis/example.com/v1/namespaces/{namespace}/widgets": {
                    "post": {"x-kubernetes-group-version-kind": {"group": "example.com", "version": "v1", "kind": "Widget"}}
                },
                "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}": {
                    "put": {"x-kubernetes-group-version-kind": {"group": "example.com", "version": "v1", "kind": "Widget"}}
                }
            },
            "components": {"schemas": {
                "com.example.v1.Widget": {
                    "type": "object",
                    "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}],
                    "properties": {"spec": {"$ref": "#/components/schemas/com.example.v1.Spec"}}
                },
                "com.example.v1.Spec": {
                    "type": "object",
                    "properties": {"size": {"type": "integer"}, "self": {"$ref": "#/components/schemas/com.example.v1.Spec"}}
                }
            }}
        });
        let user = UserSchemas::from_documents(&[("w.json".into(), doc.clone())]).unwrap();
        assert_eq!(user.len(), 1);
        let widget = user.kind("example.com/v1", "Widget").unwrap();
        assert_eq!(
            (widget.resource.as_str(), widget.namespaced),
            ("widgets", true)
        );
        assert_eq!(user.kinds_for("example.com/v1", "widgets"), ["Widget"]);
        let schema = user.structural_schema(&widget).unwrap();
        let spec = &schema["properties"]["spec"]["properties"];
        assert_eq!(spec["size"]["type"], "integer");
        // A cycle is cut to any value.
        assert_eq!(spec["self"], any_value());
        // Two definitions claiming one kind; a document that is not OpenAPI v3.
        let mut twice = doc.clone();
        twice["components"]["schemas"]["com.example.v1.Other"] =
            twice["components"]["schemas"]["com.example.v1.Widget"].clone();
        let e = UserSchemas::from_documents(&[("w.json".into(), twice)]).unwrap_err();
        assert!(
            e.contains("example.com/v1, Kind=Widget is claimed by two definitions"),
            "{e}"
        );
        let e = UserSchemas::from_documents(&[("x.json".into(), json!({"a": 1}))]).unwrap_err();
        assert_eq!(
            e,
            "x.json: not an OpenAPI v3 document (no components.schemas)"
        );
        assert_eq!(
            created_resource("/api/v1/namespaces"),
            Some(("namespaces".into(), false))
        );
        assert_eq!(
            created_resource("/api/v1/namespaces/{namespace}/pods/{name}/log"),
            None
        );
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
