//! A create or an update of a custom resource, from the manifest a user has to the answer
//! the API server gives, in the API server's order:
//!
//! 1. what `kubectl` does before it sends the object (cli-runtime `visitor.go`): a
//!    namespaced object without a namespace gets the context's ([`RequestOptions::namespace`],
//!    `default` as kubectl's), and a cluster-scoped one loses its namespace;
//! 2. decoding (apiextensions-apiserver `customresource_handler.go`,
//!    `schemaCoercingDecoder`): `metadata` that does not decode into `ObjectMeta` is a
//!    `400`; under strict field validation, repeated keys, unknown `metadata` fields, fields
//!    the schema prunes and unknown embedded `metadata` fields are a `400` too (warnings
//!    under `Warn`, nothing under `Ignore`); then defaults;
//! 3. on create, `rest.BeforeCreate` (apiserver `pkg/registry/rest/create.go`) and the store
//!    before it: system fields wiped, a name generated from `generateName`, then
//!    `PrepareForCreate` (the status dropped when the status subresource is on, the
//!    generation 1); on update, `rest.BeforeUpdate` (`update.go`): the generation, `uid` and
//!    timestamps taken from the stored object, `PrepareForUpdate` (the status replaced by
//!    the stored one when the status subresource is on), then the common metadata checks
//!    (`ValidateObjectMetaAccessor` and `ValidateObjectMetaAccessorUpdate`);
//! 4. the strategy's validation ([`super::CrdVersion`]'s checks: metadata, schema, scale,
//!    embedded resources, list types, CEL rules); any error is a `422 Invalid`;
//! 5. the strategy's warnings: finalizer names without a domain and path.

use cel_k8s_schema::field::{FieldError, Path};
use cel_k8s_schema::objectmeta;
use cel_k8s_schema::pruning::{self, unknown_field_warning};
use serde_json::{Map, Value as Json, json};

use super::definition::{CompiledCrd, CrdVersion};
use super::texts::field_error_as_of;
use crate::builtin::server_object::apply_server_defaults;

/// What the API server does with fields a request has but the schema does not declare, and
/// with repeated fields (the request's `fieldValidation`; kubectl sends `Strict`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// The request fails (`400 BadRequest`, "strict decoding error").
    #[default]
    Strict,
    /// The fields are dropped, each with a warning.
    Warn,
    /// The fields are dropped silently.
    Ignore,
}

/// How a manifest becomes a request.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RequestOptions {
    /// The namespace kubectl gives namespaced objects that have none (its context's;
    /// `default` by default).
    pub namespace: String,
    /// What unknown and repeated fields do.
    pub field_validation: FieldValidation,
    /// Whether a built-in kind gets its release's defaults when it is decoded, as the API
    /// server's codec gives them ([`crate::builtin::server_object`]); `false` validates the
    /// manifest as written (`cel validate --no-defaults`). A custom resource's schema
    /// defaults are always applied.
    pub builtin_defaults: bool,
}

impl Default for RequestOptions {
    fn default() -> RequestOptions {
        RequestOptions {
            namespace: "default".into(),
            field_validation: FieldValidation::Strict,
            builtin_defaults: true,
        }
    }
}

celerity::option_setters!(RequestOptions {
    namespace: String,
    field_validation: FieldValidation,
    builtin_defaults: bool,
});

/// What one request's decoding needs besides the object.
#[derive(Clone, Copy)]
struct Decoding<'a> {
    /// The paths of the keys the manifest repeats.
    duplicates: &'a [String],
    options: &'a RequestOptions,
    /// The API server's minor version.
    minor: u32,
}

/// What the API server answers to one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// Created or updated, or why not.
    pub outcome: Outcome,
    /// The warnings the client is sent (sent also when the request fails).
    pub warnings: Vec<String>,
    /// The object as the API server validated it: namespace, generated name, defaults,
    /// prepared status.
    pub object: Json,
    /// The CEL rules' budget left.
    pub remaining_budget: i64,
}

/// The verdict of a request.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Accepted (`201 Created`, `200 OK`).
    Accepted,
    /// Refused before validation (`400 BadRequest`): the message.
    BadRequest(String),
    /// Refused by validation (`422 Invalid`): the field errors, in the order found.
    Invalid(Vec<FieldError>),
}

impl Answer {
    fn bad_request(message: String, object: Json, warnings: Vec<String>) -> Answer {
        Answer {
            outcome: Outcome::BadRequest(message),
            warnings,
            object,
            remaining_budget: super::validator::RUNTIME_COST_BUDGET,
        }
    }

    /// Whether the request was accepted.
    pub fn accepted(&self) -> bool {
        self.outcome == Outcome::Accepted
    }

    /// The object's name as the API server reports it (the generated one for
    /// `generateName`).
    pub fn name(&self) -> &str {
        self.object
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Json::as_str)
            .unwrap_or("")
    }
}

/// The text of a `422` Status's `message` (apimachinery `errors.NewInvalid`):
/// `Widget.example.com "w1" is invalid: <error>`, or `[a, b]` for several, repeated texts
/// once.
pub fn invalid_status_message(
    kind: &str,
    group: &str,
    name: &str,
    errors: &[FieldError],
) -> String {
    let head = format!(
        "{} {} is invalid",
        qualified_kind(kind, group),
        cel_k8s_schema::field::go_quote(name)
    );
    let texts = distinct_texts(errors);
    match texts.as_slice() {
        [] => head,
        [one] => format!("{head}: {one}"),
        many => format!("{head}: [{}]", many.join(", ")),
    }
}

/// `Kind.group`, or the kind alone for the core group.
fn qualified_kind(kind: &str, group: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    }
}

/// The errors' texts, each once, in order (apimachinery's `ToAggregate`).
pub(crate) fn distinct_texts(errors: &[FieldError]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in errors {
        let t = e.to_string();
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The `metav1.Status` the API server returns for a refused request (apimachinery
/// `errors.NewInvalid`, `errors.NewBadRequest`); `None` when it was accepted.
pub fn status_json(answer: &Answer, kind: &str, group: &str) -> Option<Json> {
    match &answer.outcome {
        Outcome::Accepted => None,
        Outcome::BadRequest(message) => Some(json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": "BadRequest", "code": 400,
        })),
        Outcome::Invalid(errors) => {
            let causes: Vec<Json> = errors
                .iter()
                .map(|e| {
                    json!({"reason": e.error_type.as_str(), "message": e.body(),
                        "field": e.field.as_str()})
                })
                .collect();
            let mut details = Map::new();
            details.insert("name".into(), json!(answer.name()));
            if !group.is_empty() {
                details.insert("group".into(), json!(group));
            }
            details.insert("kind".into(), json!(kind));
            details.insert("causes".into(), Json::Array(causes));
            Some(json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": invalid_status_message(kind, group, answer.name(), errors),
                "reason": "Invalid", "details": details, "code": 422,
            }))
        }
    }
}

/// The characters the API server's name generator draws from
/// (apimachinery `util/rand.String`).
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A name for `generateName` as the API server's `SimpleNameGenerator` makes one: the
/// prefix cut to 58 bytes, then five characters of its alphabet. The API server draws them
/// at random; here they come from a hash of the object, so a run is repeatable.
fn generated_name(prefix: &str, object: &Json) -> String {
    let mut cut = prefix.len().min(58);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    // FNV-1a over the object's JSON text.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in object.to_string().bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut name = prefix[..cut].to_string();
    for _ in 0..5 {
        name.push(NAME_ALPHABET[(h % NAME_ALPHABET.len() as u64) as usize] as char);
        h /= NAME_ALPHABET.len() as u64;
    }
    name
}

fn metadata_mut(object: &mut Json) -> Option<&mut Map<String, Json>> {
    let m = object.as_object_mut()?;
    match m
        .entry("metadata")
        .or_insert_with(|| Json::Object(Map::new()))
    {
        Json::Object(meta) => Some(meta),
        _ => None,
    }
}

fn meta_str<'j>(object: &'j Json, key: &str) -> Option<&'j str> {
    object.get("metadata")?.get(key)?.as_str()
}

impl CompiledCrd {
    /// What kubectl does before sending: a namespace for namespaced objects without one,
    /// none for cluster-scoped ones.
    fn kubectl_namespace(&self, object: &mut Json, options: &RequestOptions) {
        if !object.get("metadata").is_none_or(Json::is_object) {
            return;
        }
        let namespaced = self.namespaced;
        let Some(meta) = metadata_mut(object) else {
            return;
        };
        let has = meta
            .get("namespace")
            .and_then(Json::as_str)
            .is_some_and(|s| !s.is_empty());
        if namespaced && !has {
            meta.insert("namespace".into(), Json::String(options.namespace.clone()));
        } else if !namespaced {
            meta.remove("namespace");
        }
    }

    /// What a create and an update begin with: the served version `object` names, kubectl's
    /// namespace, and decoding with the request's field validation. The version, the
    /// decoded object and the warnings, or the answer that ends the request (`400`).
    fn received(
        &self,
        mut object: Json,
        duplicates: &[String],
        options: &RequestOptions,
        minor: u32,
    ) -> Result<(&CrdVersion, Json, Vec<String>), Box<Answer>> {
        let version = self.version_of(&object)?;
        let mut warnings = Vec::new();
        self.kubectl_namespace(&mut object, options);
        let decoding = Decoding {
            duplicates,
            options,
            minor,
        };
        match self.decode(version, &mut object, &decoding, &mut warnings) {
            Ok(()) => Ok((version, object, warnings)),
            Err(e) => Err(Box::new(Answer::bad_request(e, object, warnings))),
        }
    }

    /// Whether objects get a built-in kind's defaults, which its Go codec applies as it
    /// decodes. They are applied before pruning, which then drops the `null`s Go's encoding
    /// would write for fields without `omitempty`: validation reads absent and `null` alike.
    fn gets_builtin_defaults(&self, options: &RequestOptions) -> bool {
        options.builtin_defaults && self.decoded_as.is_some()
    }

    /// The message of the `400` the API server answers a body it cannot decode
    /// (`transformDecodeError`, k8s.io/apiserver pkg/endpoints/handlers/rest.go).
    fn cannot_be_handled(&self, version: &str, error: &str) -> String {
        let kind = &self.kind;
        format!("{kind} in version {version:?} cannot be handled as a {kind}: {error}")
    }

    /// For a built-in kind, whose requests are decoded into its Go type before anything else,
    /// the message of the `400` a value of the wrong type gets (`cannot be handled as a
    /// Deployment: json: cannot unmarshal string into Go struct field ...`); `None` when the
    /// object decodes, and always for custom resources (decoded as unstructured JSON).
    pub fn decode_refusal(&self, object: &Json) -> Option<String> {
        let error = self.decoded_as.as_ref()?.decode_error(object)?;
        let api_version = object
            .get("apiVersion")
            .and_then(Json::as_str)
            .unwrap_or("");
        let version = api_version.rsplit('/').next().unwrap_or(api_version);
        Some(self.cannot_be_handled(version, &error))
    }

    /// For a built-in kind, what strict decoding into its Go type says of `object` (a type
    /// error, else its unknown fields: `strict decoding error: unknown field "spec.foo"`), as
    /// the API server decodes the result of a mutating policy's JSON patch; `None` when it
    /// decodes, and always for custom resources.
    pub fn strict_decode_error(&self, object: &Json) -> Option<String> {
        self.decoded_as.as_ref()?.strict_decode_error(object)
    }

    /// Decoding with the request's field validation: the `400` or the warnings.
    fn decode(
        &self,
        version: &CrdVersion,
        object: &mut Json,
        decoding: &Decoding,
        warnings: &mut Vec<String>,
    ) -> Result<(), String> {
        let Decoding {
            duplicates,
            options,
            minor,
        } = *decoding;
        let cannot = |e: &str| self.cannot_be_handled(&version.name, e);
        if let Some(refusal) = self.decode_refusal(object) {
            return Err(refusal);
        }
        if let Some(e) = objectmeta::decode_error(object) {
            return Err(cannot(&e));
        }
        let mut strict: Vec<String> = duplicates
            .iter()
            .map(|p| format!("duplicate field {p:?}"))
            .collect();
        if let Some(meta) = object.get("metadata") {
            strict.extend(
                objectmeta::unknown_fields(meta)
                    .iter()
                    .map(|f| unknown_field_warning(&format!("metadata.{f}"))),
            );
        }
        let pruned = if self.gets_builtin_defaults(options) {
            // The unknown fields are the manifest's: a default the schema does not declare
            // (a user's schema may be narrower than the release's types) is dropped quietly.
            let pruned = pruning::prune(object, &version.schema, true);
            apply_server_defaults(minor, object);
            version
                .defaulter
                .prune_and_default(object, &version.schema, true);
            pruned
        } else {
            version
                .defaulter
                .prune_and_default(object, &version.schema, true)
        };
        strict.extend(pruned.iter().map(|p| unknown_field_warning(p)));
        if version.embedded_resources {
            strict.extend(
                objectmeta::unknown_embedded_fields(&version.schema, object, &Path::root())
                    .iter()
                    .map(|p| unknown_field_warning(p)),
            );
        }
        // Unknown fields are dropped whatever the validation; what differs is whether the
        // request fails, warns, or goes on silently.
        if let Some(meta) = object.get_mut("metadata").and_then(Json::as_object_mut) {
            let unknown = objectmeta::unknown_fields(&Json::Object(meta.clone()));
            for f in unknown.iter().filter(|f| !f.contains('[')) {
                meta.remove(f);
            }
        }
        match options.field_validation {
            FieldValidation::Strict if !strict.is_empty() => Err(cannot(&format!(
                "strict decoding error: {}",
                strict.join(", ")
            ))),
            FieldValidation::Warn => {
                warnings.extend(strict);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The served version an object names, or the answer for an object of no served version.
    fn version_of(&self, object: &Json) -> Result<&CrdVersion, Box<Answer>> {
        let api_version = object
            .get("apiVersion")
            .and_then(Json::as_str)
            .unwrap_or("");
        self.version(api_version).ok_or_else(|| {
            Box::new(Answer::bad_request(
                format!(
                    "the API version in the data ({api_version}) does not match the expected API version ({}/<a served version>)",
                    self.group
                ),
                object.clone(),
                Vec::new(),
            ))
        })
    }

    /// Creates `object` (a manifest, with the keys its YAML repeated), as `kubectl create`
    /// sends it and the API server handles it. `minor` is the API server's minor version
    /// (for its texts).
    pub fn create(
        &self,
        object: Json,
        duplicates: &[String],
        options: &RequestOptions,
        minor: u32,
    ) -> Answer {
        let (version, mut object, mut warnings) =
            match self.received(object, duplicates, options, minor) {
                Ok(received) => received,
                Err(answer) => return *answer,
            };
        if let Some(meta) = metadata_mut(&mut object) {
            for wiped in [
                "creationTimestamp",
                "uid",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "selfLink",
            ] {
                meta.remove(wiped);
            }
        }
        let name_missing = meta_str(&object, "name").is_none_or(str::is_empty);
        if name_missing
            && let Some(prefix) = meta_str(&object, "generateName").filter(|p| !p.is_empty())
        {
            let name = generated_name(prefix, &object);
            if let Some(meta) = metadata_mut(&mut object) {
                meta.insert("name".into(), Json::String(name));
            }
        }
        if version.status_subresource
            && let Some(m) = object.as_object_mut()
        {
            m.remove("status");
        }
        if let Some(meta) = metadata_mut(&mut object) {
            meta.insert("generation".into(), json!(1));
        }
        let meta = objectmeta::validate_root_metadata_named(
            &object,
            &Path::root(),
            self.namespaced,
            self.name_check,
        );
        let checked = version.check(&object, None, meta, Vec::new());
        warnings.extend(checked.warnings);
        self.finish(
            object,
            None,
            checked.errors,
            warnings,
            checked.remaining_budget,
            minor,
        )
    }

    /// Updates `old` (the stored object, as a manifest) to `object`, as `kubectl replace`
    /// sends it and the API server handles it.
    pub fn update(
        &self,
        object: Json,
        duplicates: &[String],
        old: &Json,
        options: &RequestOptions,
        minor: u32,
    ) -> Answer {
        let (version, mut object, mut warnings) =
            match self.received(object, duplicates, options, minor) {
                Ok(received) => received,
                Err(answer) => return *answer,
            };
        // The stored object: as it was decoded when it was stored.
        let mut old = old.clone();
        self.kubectl_namespace(&mut old, options);
        if self.gets_builtin_defaults(options) {
            apply_server_defaults(minor, &mut old);
        }
        version
            .defaulter
            .prune_and_default(&mut old, &version.schema, true);
        prepare_for_update(version, &mut object, &old);
        let root = Path::root();
        // `validateCommonFields`: outside the strategy, so never blocking its rules.
        let mut outside = objectmeta::validate_root_metadata_named(
            &object,
            &root,
            self.namespaced,
            self.name_check,
        );
        outside.extend(objectmeta::validate_root_metadata_update(
            &object, &old, &root,
        ));
        let meta = objectmeta::validate_root_metadata_update(&object, &old, &root);
        let checked = version.check(&object, Some(&old), meta, outside);
        warnings.extend(checked.warnings);
        self.finish(
            object,
            Some(&old),
            checked.errors,
            warnings,
            checked.remaining_budget,
            minor,
        )
    }

    fn finish(
        &self,
        object: Json,
        old: Option<&Json>,
        errors: Vec<FieldError>,
        mut warnings: Vec<String>,
        remaining_budget: i64,
        minor: u32,
    ) -> Answer {
        let outcome = if errors.is_empty() {
            warnings.extend(objectmeta::finalizer_warnings(&object, old, minor));
            Outcome::Accepted
        } else {
            Outcome::Invalid(
                errors
                    .into_iter()
                    .map(|e| field_error_as_of(minor, e))
                    .collect(),
            )
        };
        Answer {
            outcome,
            warnings,
            object,
            remaining_budget,
        }
    }
}

/// `rest.BeforeUpdate` and `PrepareForUpdate`: what the stored object decides.
fn prepare_for_update(version: &CrdVersion, object: &mut Json, old: &Json) {
    let old_meta = old.get("metadata").cloned().unwrap_or(Json::Null);
    if version.status_subresource
        && let Some(m) = object.as_object_mut()
    {
        match old.get("status") {
            Some(s) => {
                m.insert("status".into(), s.clone());
            }
            None => {
                m.remove("status");
            }
        }
    }
    let Some(meta) = metadata_mut(object) else {
        return;
    };
    let from_old = |k: &str| old_meta.get(k).filter(|v| !v.is_null()).cloned();
    match from_old("generation") {
        Some(g) => meta.insert("generation".into(), g),
        None => meta.remove("generation"),
    };
    let missing = |meta: &Map<String, Json>, k: &str| {
        meta.get(k)
            .is_none_or(|v| v.is_null() || v.as_str() == Some(""))
    };
    if missing(meta, "uid")
        && let Some(uid) = from_old("uid")
    {
        meta.insert("uid".into(), uid);
    }
    if let Some(t) = from_old("creationTimestamp") {
        meta.insert("creationTimestamp".into(), t);
    }
    if let Some(t) = from_old("deletionTimestamp") {
        meta.insert("deletionTimestamp".into(), t);
    }
    if missing(meta, "deletionGracePeriodSeconds")
        && let Some(s) = from_old("deletionGracePeriodSeconds")
    {
        meta.insert("deletionGracePeriodSeconds".into(), s);
    }
}
