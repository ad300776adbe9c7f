//! Metadata checks the API server applies to custom resources beyond their schema:
//!
//! * [`validate_embedded`]: resources embedded in a custom resource
//!   (`x-kubernetes-embedded-resource`) need a string `apiVersion` and `kind` and valid
//!   `metadata` (apiextensions' `schema/objectmeta`);
//! * [`validate_root_metadata`]: the custom resource's own `metadata` (apimachinery's
//!   `ValidateObjectMetaAccessor` as the custom resource strategy calls it: the name a DNS-1123
//!   subdomain, the namespace required for namespaced kinds and forbidden otherwise, label and
//!   annotation syntax, the 256 KiB annotation budget, owner references and finalizers).
//!
//! The texts are apimachinery's. Go visits label and annotation maps in random order; here
//! they are visited in document order. Not covered: `managedFields` entries, and the
//! declarative `ObjectMeta` validation, which repeats the hand-written checks.

use serde_json::{Map, Value};

use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::godecode::{self, json_kind, not_a_string_error};
use crate::gojson::{GoNumber, type_name};
use crate::names::{self, NameCheck};
use crate::schema::Schema;

/// Whether any node of `schema` is an `x-kubernetes-embedded-resource`: when none is, the
/// walks over a value for embedded resources ([`validate_embedded`],
/// [`unknown_embedded_fields`]) find nothing, and a caller holding the schema for many
/// objects can skip them.
pub fn has_embedded_resources(schema: &Schema) -> bool {
    let mut work = vec![(schema, 0usize)];
    while let Some((s, depth)) = work.pop() {
        if s.x_embedded_resource {
            return true;
        }
        if depth > crate::schema::MAX_SCHEMA_DEPTH {
            continue;
        }
        work.extend(s.properties.values().map(|p| (p, depth + 1)));
        work.extend(s.items.as_deref().map(|i| (i, depth + 1)));
        work.extend(s.additional_schema().map(|a| (a, depth + 1)));
    }
    false
}

/// The errors of every embedded resource in `value` (a custom resource or part of it at
/// `path`), found by walking `schema` to its `x-kubernetes-embedded-resource` nodes.
pub fn validate_embedded(schema: &Schema, value: &Value, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    walk(schema, value, path, &mut errors, 0);
    errors
}

fn walk(s: &Schema, value: &Value, path: &Path, errors: &mut Vec<FieldError>, depth: usize) {
    if depth > crate::schema::MAX_SCHEMA_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            if s.x_embedded_resource {
                errors.extend(embedded_resource(map, path));
            }
            for (k, v) in map {
                if let Some(prop) = s.properties.get(k) {
                    walk(prop, v, &path.child(k), errors, depth + 1);
                } else if let Some(additional) = s.additional_schema() {
                    walk(additional, v, &path.key(k), errors, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.items.as_deref() {
                for (i, v) in items.iter().enumerate() {
                    walk(item_schema, v, &path.index(i), errors, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn embedded_resource(map: &Map<String, Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for required in ["apiVersion", "kind"] {
        if !map.contains_key(required) {
            errors.push(FieldError::required(&path.child(required), ""));
        }
    }
    for (k, v) in map {
        let p = path.child(k);
        match (k.as_str(), v) {
            ("apiVersion" | "kind", v) if !v.is_string() => {
                errors.push(FieldError::invalid(
                    &p,
                    BadValue::of_json(v),
                    "must be a string",
                ));
            }
            ("apiVersion" | "kind", Value::String(s)) if s.is_empty() => {
                errors.push(FieldError::invalid(
                    &p,
                    BadValue::String(String::new()),
                    "must not be empty",
                ));
            }
            ("apiVersion", Value::String(s)) => {
                if let Err(e) = parse_group_version(s) {
                    errors.push(FieldError::invalid(&p, BadValue::String(s.clone()), e));
                }
            }
            ("kind", Value::String(s)) => {
                let msgs = names::is_dns1035_label(&s.to_lowercase());
                if !msgs.is_empty() {
                    errors.push(FieldError::invalid(
                        &p,
                        BadValue::String(s.clone()),
                        format!(
                            "may have mixed case, but should otherwise match: {}",
                            msgs.join(",")
                        ),
                    ));
                }
            }
            ("metadata", v) => match decode_meta(v) {
                Err(e) => errors.push(FieldError::invalid(&p, BadValue::of_json(v), e)),
                Ok(mut meta) => {
                    if meta.name.is_empty() {
                        // The API server sets a stand-in so that only the rest is checked.
                        meta.name = "fakename".to_string();
                    }
                    let namespaced = !meta.namespace.is_empty();
                    errors.extend(validate_meta(
                        &meta,
                        namespaced,
                        names::name_is_path_segment,
                        &p,
                    ));
                }
            },
            _ => {}
        }
    }
    errors
}

/// apimachinery's `ParseGroupVersion`: at most one `/`.
fn parse_group_version(gv: &str) -> Result<(&str, &str), String> {
    if gv.is_empty() || gv == "/" {
        return Ok(("", ""));
    }
    match gv.matches('/').count() {
        0 => Ok(("", gv)),
        1 => Ok(gv.split_once('/').unwrap_or(("", gv))),
        _ => Err(format!("unexpected GroupVersion string: {gv}")),
    }
}

/// Validates a custom resource's own `metadata` on create (`value` is the whole object at
/// `path`); `namespaced` is the CRD's scope. A name generated from `generateName` is not
/// known offline: then only `generateName` is checked, as a prefix.
pub fn validate_root_metadata(value: &Value, path: &Path, namespaced: bool) -> Vec<FieldError> {
    validate_root_metadata_named(value, path, namespaced, names::name_is_dns_subdomain)
}

/// [`validate_root_metadata`] with the kind's own name rule (a built-in kind's
/// `ValidateNameFunc`: DNS labels for Namespaces, DNS-1035 labels for Services, ...).
pub fn validate_root_metadata_named(
    value: &Value,
    path: &Path,
    namespaced: bool,
    name_fn: NameCheck,
) -> Vec<FieldError> {
    let p = path.child("metadata");
    let raw = value.get("metadata").unwrap_or(&Value::Null);
    let meta = match raw {
        Value::Null => ObjectMeta::default(),
        Value::Object(_) => match decode_meta(raw) {
            Ok(m) => m,
            Err(e) => return vec![FieldError::invalid(&p, BadValue::of_json(raw), e)],
        },
        other => {
            return vec![FieldError::invalid(
                &p,
                BadValue::of_json(other),
                format!(
                    "expected map[string]interface{{}}, got {}",
                    type_name(other)
                ),
            )];
        }
    };
    validate_meta(&meta, namespaced, name_fn, &p)
}

/// The error the API server's decoder gives for a custom resource's `metadata` that does
/// not decode into `ObjectMeta` (a request refused with 400 before any validation), as Go's
/// JSON decoder words it; `None` when it decodes.
pub fn decode_error(object: &Value) -> Option<String> {
    match object.get("metadata") {
        None | Some(Value::Null) => None,
        Some(raw @ Value::Object(_)) => decode_meta(raw).err(),
        Some(other) => Some(format!(
            "json: cannot unmarshal {} into Go struct field {{TypeMeta ObjectMeta}}.metadata of type v1.ObjectMeta",
            json_kind(other)
        )),
    }
}

/// The fields of `ObjectMeta` (as `json` names them), for strict decoding.
const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

const OWNER_REFERENCE_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];

const MANAGED_FIELDS_ENTRY_FIELDS: &[&str] = &[
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
];

/// The fields of a `metadata` value that `ObjectMeta` does not have, as strict decoding
/// reports them (case-sensitive; sorted, as the decoder meets them in the re-encoded
/// metadata): `foo`, `ownerReferences[0].bar`. Paths are relative to `metadata`.
pub fn unknown_fields(metadata: &Value) -> Vec<String> {
    let Value::Object(m) = metadata else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort_unstable();
    for k in keys {
        if !OBJECT_META_FIELDS.contains(&k.as_str()) {
            out.push(k.clone());
            continue;
        }
        let nested = match k.as_str() {
            "ownerReferences" => OWNER_REFERENCE_FIELDS,
            "managedFields" => MANAGED_FIELDS_ENTRY_FIELDS,
            _ => continue,
        };
        for (i, item) in m[k].as_array().into_iter().flatten().enumerate() {
            let Value::Object(entry) = item else { continue };
            let mut fields: Vec<&String> = entry.keys().collect();
            fields.sort_unstable();
            out.extend(
                fields
                    .into_iter()
                    .filter(|f| !nested.contains(&f.as_str()))
                    .map(|f| format!("{k}[{i}].{f}")),
            );
        }
    }
    out
}

/// The unknown `metadata` fields of every resource embedded in `value`
/// (`x-kubernetes-embedded-resource`), as full paths (`spec.template.metadata.foo`).
pub fn unknown_embedded_fields(schema: &Schema, value: &Value, path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut work = vec![(schema, value, path.clone(), 0usize)];
    while let Some((s, v, p, depth)) = work.pop() {
        if depth > crate::schema::MAX_SCHEMA_DEPTH {
            continue;
        }
        match v {
            Value::Object(map) => {
                if s.x_embedded_resource
                    && let Some(meta) = map.get("metadata")
                {
                    let at = p.child("metadata");
                    out.extend(
                        unknown_fields(meta)
                            .into_iter()
                            .map(|f| format!("{at}.{f}")),
                    );
                }
                for (k, child) in map {
                    if let Some(prop) = s.properties.get(k) {
                        work.push((prop, child, p.child(k), depth + 1));
                    } else if let Some(additional) = s.additional_schema() {
                        work.push((additional, child, p.key(k), depth + 1));
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item_schema) = s.items.as_deref() {
                    for (i, child) in items.iter().enumerate() {
                        work.push((item_schema, child, p.index(i), depth + 1));
                    }
                }
            }
            _ => {}
        }
    }
    out.sort();
    out
}

/// apimachinery's `ValidateObjectMetaAccessorUpdate` for a custom resource's `metadata`,
/// new against old (`value` and `old` are the whole objects at `path`): no finalizers added
/// to an object being deleted, and the fields that may not change (`uid`,
/// `deletionTimestamp` set on a live object, `deletionGracePeriodSeconds` set), each
/// `field is immutable`. The name, namespace, generation and creation time cannot differ
/// here: the API server takes them from the URL and the stored object before this check.
pub fn validate_root_metadata_update(new: &Value, old: &Value, path: &Path) -> Vec<FieldError> {
    let p = path.child("metadata");
    let get = |o: &Value, k: &str| o.get("metadata").and_then(|m| m.get(k)).cloned();
    let mut errors = Vec::new();
    let strings = |v: Option<Value>| -> Vec<String> {
        v.and_then(|v| v.as_array().cloned())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect()
    };
    let old_deleting = get(old, "deletionTimestamp").is_some_and(|t| !t.is_null());
    if old_deleting {
        let before = strings(get(old, "finalizers"));
        let added: Vec<String> = strings(get(new, "finalizers"))
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        if !added.is_empty() {
            let list: Vec<String> = added.iter().map(|f| go_quote_string(f)).collect();
            errors.push(FieldError::forbidden(
                &p.child("finalizers"),
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    list.join(", ")
                ),
            ));
        }
    }
    let immutable = |field: &str, errors: &mut Vec<FieldError>| {
        let (n, o) = (get(new, field), get(old, field));
        let set = |v: &Option<Value>| v.as_ref().is_some_and(|v| !v.is_null());
        let changed = match field {
            // Set on a live object, or changed.
            "deletionTimestamp" | "deletionGracePeriodSeconds" => set(&n) && n != o,
            _ => n.unwrap_or(Value::Null) != o.unwrap_or(Value::Null),
        };
        if changed {
            errors.push(FieldError::invalid(
                &p.child(field),
                BadValue::of_json(&get(new, field).unwrap_or(Value::Null)),
                "field is immutable",
            ));
        }
    };
    for field in ["uid", "deletionTimestamp", "deletionGracePeriodSeconds"] {
        immutable(field, &mut errors);
    }
    errors
}

/// Go's `%q` of a string inside a `[]string` literal.
fn go_quote_string(s: &str) -> String {
    crate::field::go_quote(s)
}

/// The warnings the custom resource strategy gives for finalizer names
/// (apiextensions' `validateKubeFinalizerName`), for the finalizers of `new` that `old` does
/// not have (all of them on create), in sorted order. `minor` is the API server's minor
/// version: from 1.32 a name with a dot and no path gets its own text.
pub fn finalizer_warnings(new: &Value, old: Option<&Value>, minor: u32) -> Vec<String> {
    let names = |o: &Value| -> Vec<String> {
        o.get("metadata")
            .and_then(|m| m.get("finalizers"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_string))
            .collect()
    };
    let before = old.map(names).unwrap_or_default();
    let mut added: Vec<String> = names(new)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    added.sort();
    added.dedup();
    let mut out = Vec::new();
    for f in added {
        if f.contains('/') || matches!(f.as_str(), "orphan" | "foregroundDeletion" | "kubernetes") {
            continue;
        }
        if !names::is_qualified_name(&f).is_empty() {
            continue;
        }
        let text = if minor >= 32 && f.contains('.') {
            "prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"
        } else {
            "prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
        };
        out.push(format!(
            "metadata.finalizers: {}: {text}",
            crate::field::go_quote(&f)
        ));
    }
    out
}

/// The `ObjectMeta` fields validation looks at.
#[derive(Default)]
struct ObjectMeta {
    name: String,
    generate_name: String,
    namespace: String,
    generation: i64,
    labels: Vec<(String, String)>,
    annotations: Vec<(String, String)>,
    finalizers: Vec<String>,
    owner_references: Vec<OwnerReference>,
}

#[derive(Default)]
struct OwnerReference {
    api_version: String,
    kind: String,
    name: String,
    uid: String,
    controller: bool,
    raw: Value,
}

/// apimachinery's `ValidateObjectMetaAccessor` (without managed fields).
fn validate_meta(
    meta: &ObjectMeta,
    namespaced: bool,
    name_fn: NameCheck,
    p: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let generated = meta.name.is_empty() && !meta.generate_name.is_empty();
    if !meta.generate_name.is_empty() {
        for m in name_fn(&meta.generate_name, true) {
            errors.push(FieldError::invalid(
                &p.child("generateName"),
                BadValue::String(meta.generate_name.clone()),
                m,
            ));
        }
    }
    if meta.name.is_empty() && !generated {
        errors.push(FieldError::required(
            &p.child("name"),
            "name or generateName is required",
        ));
    } else if !generated {
        for m in name_fn(&meta.name, false) {
            errors.push(FieldError::invalid(
                &p.child("name"),
                BadValue::String(meta.name.clone()),
                m,
            ));
        }
    }
    let ns = p.child("namespace");
    if namespaced {
        if meta.namespace.is_empty() {
            errors.push(FieldError::required(&ns, ""));
        } else {
            for m in names::name_is_dns_label(&meta.namespace, false) {
                errors.push(FieldError::invalid(
                    &ns,
                    BadValue::String(meta.namespace.clone()),
                    m,
                ));
            }
        }
    } else if !meta.namespace.is_empty() {
        errors.push(FieldError::forbidden(&ns, "not allowed on this type"));
    }
    if meta.generation < 0 {
        errors.push(FieldError::invalid(
            &p.child("generation"),
            BadValue::Int(meta.generation),
            "must be greater than or equal to 0",
        ));
    }
    errors.extend(labels(&meta.labels, &p.child("labels")));
    errors.extend(annotations(&meta.annotations, &p.child("annotations")));
    errors.extend(owner_references(
        &meta.owner_references,
        &p.child("ownerReferences"),
    ));
    errors.extend(finalizers(&meta.finalizers, &p.child("finalizers")));
    errors
}

fn labels(labels: &[(String, String)], p: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (k, v) in labels {
        for m in names::is_qualified_name(k) {
            errors.push(FieldError::invalid(p, BadValue::String(k.clone()), m));
        }
        for m in names::is_label_value(v) {
            errors.push(FieldError::invalid(p, BadValue::String(v.clone()), m));
        }
    }
    errors
}

/// The total size (keys and values, in bytes) annotations may have.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

fn annotations(annotations: &[(String, String)], p: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (k, _) in annotations {
        // Keys are qualified names, except that case does not matter.
        for m in names::is_qualified_name(&k.to_lowercase()) {
            errors.push(FieldError::invalid(p, BadValue::String(k.clone()), m));
        }
    }
    let total: usize = annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errors.push(FieldError::new(
            ErrorType::TooLong,
            p,
            BadValue::String("<value omitted>".into()),
            format!("may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
        ));
    }
    errors
}

fn owner_references(refs: &[OwnerReference], p: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut first_controller: Option<String> = None;
    for (i, r) in refs.iter().enumerate() {
        let q = p.index(i);
        let version = parse_group_version(&r.api_version);
        if r.api_version.is_empty() {
            errors.push(FieldError::required(
                &q.child("apiVersion"),
                "must not be empty",
            ));
        } else if version.as_ref().map_or(true, |(_, v)| v.is_empty()) {
            errors.push(FieldError::invalid(
                &q.child("apiVersion"),
                BadValue::String(r.api_version.clone()),
                "must be <group>/<version> or <version>",
            ));
        }
        for (field, value) in [("kind", &r.kind), ("name", &r.name), ("uid", &r.uid)] {
            if value.is_empty() {
                errors.push(FieldError::required(&q.child(field), "must not be empty"));
            }
        }
        let (group, version) = version.unwrap_or(("", ""));
        if group.is_empty() && version == "v1" && r.kind == "Event" {
            errors.push(FieldError::invalid(
                &q,
                BadValue::Json(r.raw.clone()),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.controller {
            let current = format!("{}/{}", r.kind, r.name);
            match &first_controller {
                Some(first) => errors.push(FieldError::invalid(
                    p,
                    BadValue::Json(Value::Array(refs.iter().map(|r| r.raw.clone()).collect())),
                    format!("Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"),
                )),
                None => first_controller = Some(current),
            }
        }
    }
    errors
}

fn finalizers(finalizers: &[String], p: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for f in finalizers {
        for m in names::is_qualified_name(f) {
            errors.push(FieldError::invalid(p, BadValue::String(f.clone()), m));
        }
    }
    let has = |name: &str| finalizers.iter().any(|f| f == name);
    if has("orphan") && has("foregroundDeletion") {
        errors.push(FieldError::invalid(
            p,
            BadValue::Json(Value::Array(
                finalizers.iter().cloned().map(Value::String).collect(),
            )),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errors
}

/// Decodes `metadata` as Go's JSON decoding into `ObjectMeta` does; the error is Go's text
/// for the first field (in sorted key order) of the wrong type.
fn decode_meta(raw: &Value) -> Result<ObjectMeta, String> {
    let map = match raw {
        Value::Null => return Ok(ObjectMeta::default()),
        Value::Object(m) => m,
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
                json_kind(other)
            ));
        }
    };
    let mut meta = ObjectMeta::default();
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_unstable();
    let mut first_error: Option<String> = None;
    let mut note = |e: String| {
        first_error.get_or_insert(e);
    };
    for key in keys {
        let v = &map[key];
        if v.is_null() {
            continue;
        }
        let mismatch = |go_type: &str| struct_field_error("ObjectMeta", key, v, go_type);
        match key.as_str() {
            "name" | "generateName" | "namespace" | "selfLink" | "uid" | "resourceVersion" => {
                match v.as_str() {
                    Some(s) => match key.as_str() {
                        "name" => meta.name = s.to_string(),
                        "generateName" => meta.generate_name = s.to_string(),
                        "namespace" => meta.namespace = s.to_string(),
                        _ => {}
                    },
                    None => note(mismatch("string")),
                }
            }
            "generation" | "deletionGracePeriodSeconds" => match as_int64(v) {
                Some(i) if key == "generation" => meta.generation = i,
                Some(_) => {}
                None => note(mismatch("int64")),
            },
            // metav1.Time decodes itself and fails at once.
            "creationTimestamp" | "deletionTimestamp" if !v.is_string() => {
                return Err(not_a_string_error(v));
            }
            "labels" | "annotations" => match string_map(key, v) {
                Ok(pairs) if key == "labels" => meta.labels = pairs,
                Ok(pairs) => meta.annotations = pairs,
                Err(e) => note(e),
            },
            "finalizers" => match v {
                Value::Array(items) => {
                    for item in items {
                        match item {
                            Value::String(s) => meta.finalizers.push(s.clone()),
                            Value::Null => meta.finalizers.push(String::new()),
                            other => note(struct_field_error("ObjectMeta", key, other, "string")),
                        }
                    }
                }
                _ => note(mismatch("[]string")),
            },
            "ownerReferences" => match v {
                Value::Array(items) => {
                    for item in items {
                        match decode_owner_reference(item) {
                            Ok(r) => meta.owner_references.push(r),
                            Err(e) => note(e),
                        }
                    }
                }
                _ => note(mismatch("[]v1.OwnerReference")),
            },
            "managedFields" if !v.is_array() => note(mismatch("[]v1.ManagedFieldsEntry")),
            _ => {}
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(meta),
    }
}

fn decode_owner_reference(item: &Value) -> Result<OwnerReference, String> {
    let mut r = OwnerReference {
        raw: item.clone(),
        ..OwnerReference::default()
    };
    let Value::Object(map) = item else {
        if item.is_null() {
            return Ok(r);
        }
        return Err(struct_field_error(
            "ObjectMeta",
            "ownerReferences",
            item,
            "v1.OwnerReference",
        ));
    };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_unstable();
    for key in keys {
        let v = &map[key];
        if v.is_null() {
            continue;
        }
        let field = format!("ownerReferences.{key}");
        match key.as_str() {
            "apiVersion" | "kind" | "name" | "uid" => {
                let Some(s) = v.as_str() else {
                    return Err(struct_field_error("OwnerReference", &field, v, "string"));
                };
                let slot = match key.as_str() {
                    "apiVersion" => &mut r.api_version,
                    "kind" => &mut r.kind,
                    "name" => &mut r.name,
                    _ => &mut r.uid,
                };
                *slot = s.to_string();
            }
            "controller" | "blockOwnerDeletion" => match v {
                Value::Bool(b) => {
                    if key == "controller" {
                        r.controller = *b;
                    }
                }
                _ => return Err(struct_field_error("OwnerReference", &field, v, "bool")),
            },
            _ => {}
        }
    }
    Ok(r)
}

/// The key-value pairs of a `map[string]string`, or Go's error for the first value (in
/// sorted key order) that is no string.
fn string_map(field: &str, v: &Value) -> Result<Vec<(String, String)>, String> {
    let Value::Object(m) = v else {
        return Err(struct_field_error(
            "ObjectMeta",
            field,
            v,
            "map[string]string",
        ));
    };
    if let Some(bad) = sorted_values(m).find(|x| !x.is_string() && !x.is_null()) {
        return Err(struct_field_error("ObjectMeta", field, bad, "string"));
    }
    Ok(m.iter()
        .map(|(k, x)| (k.clone(), x.as_str().unwrap_or_default().to_string()))
        .collect())
}

fn sorted_values(m: &Map<String, Value>) -> impl Iterator<Item = &Value> {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort_unstable();
    keys.into_iter().map(|k| &m[k])
}

fn as_int64(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => match GoNumber::of(n) {
            GoNumber::Int(i) => Some(i),
            GoNumber::Float(_) => None,
        },
        _ => None,
    }
}

/// Go's `UnmarshalTypeError` text for a struct field.
fn struct_field_error(strukt: &str, field: &str, v: &Value, go_type: &str) -> String {
    let value = match v {
        // Go names a number that does not fit an integer by its text.
        Value::Number(n) if go_type == "int64" => format!("number {n}"),
        other => json_kind(other).to_string(),
    };
    godecode::struct_field_error(strukt, field, &value, go_type)
}

#[cfg(test)]
mod tests;
