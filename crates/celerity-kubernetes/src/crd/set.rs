//! A set of CustomResourceDefinitions, each compiled when an object first needs it: objects
//! are routed by `apiVersion` and `kind`, and the CRDs no object is routed to cost only
//! their reading. Built-in kinds, when the set has a Kubernetes version's schemas
//! ([`CrdSet::with_builtins`]), are routed the same way after the CRDs, and compiled on first
//! use too. Shared by threads: a CRD is compiled once, by the first thread that needs it (the
//! others wait for that compile, which runs no user code).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use cel_k8s_schema::Schema;
use serde_json::Value as Json;

use super::definition::{CompiledCrd, CrdError, CrdOptions};
use crate::builtin::{self, BuiltinKind};

/// CRDs by the group and kind they serve, compiled on first use.
#[derive(Debug)]
pub struct CrdSet {
    entries: Vec<Entry>,
    /// (group, kind) to the entry serving it (the last CRD given for a pair wins).
    by_kind: HashMap<(String, String), usize>,
    options: CrdOptions,
    /// The API server minor whose built-in schemas serve the kinds no CRD serves.
    builtin_minor: Option<u32>,
    user_schemas: Option<Arc<builtin::UserSchemas>>,
    /// CRDs seen to pass the definition checks before (see [`DefinitionCache`]).
    cache: Option<DefinitionCache>,
    /// Built-in kinds by (apiVersion, kind), once asked for: `None` when not one.
    builtins: Mutex<HashMap<ApiKind, Option<Arc<BuiltinSlot>>>>,
}

/// An object's `apiVersion` and `kind`.
type ApiKind = (String, String);

/// A built-in kind and its compile.
#[derive(Debug)]
struct BuiltinSlot {
    kind: BuiltinKind,
    /// Whether the kind is the user's ([`CrdSet::with_user_schemas`]) rather than shipped.
    user: bool,
    compiled: Compiled,
}

/// A compile, done once by the first thread that needs it.
type Compiled = OnceLock<Arc<Result<CompiledCrd, CrdError>>>;

#[derive(Debug)]
struct Entry {
    crd: Json,
    compiled: Compiled,
}

/// What a document given as a CRD is not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skipped {
    /// Not a CustomResourceDefinition (a repository's other manifests).
    NotACrd,
    /// A CRD for a group and kind an earlier CRD also serves: the later one is used.
    Replaces(String),
}

impl CrdSet {
    /// The set of the CRDs among `documents` (documents that are not CRDs are skipped and
    /// said so, by position).
    pub fn new(documents: Vec<Json>, options: &CrdOptions) -> (CrdSet, Vec<(usize, Skipped)>) {
        let mut set = CrdSet {
            entries: Vec::new(),
            by_kind: HashMap::new(),
            options: options.clone(),
            builtin_minor: None,
            user_schemas: None,
            cache: None,
            builtins: Mutex::new(HashMap::new()),
        };
        let mut skipped = Vec::new();
        for (i, doc) in documents.into_iter().enumerate() {
            if doc.get("kind").and_then(Json::as_str) != Some("CustomResourceDefinition") {
                skipped.push((i, Skipped::NotACrd));
                continue;
            }
            let text = |p: &[&str]| {
                p.iter()
                    .try_fold(&doc, |v, k| v.get(k))
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let key = (text(&["spec", "group"]), text(&["spec", "names", "kind"]));
            let index = set.entries.len();
            if let Some(earlier) = set.by_kind.insert(key, index) {
                let name = set.entries[earlier]
                    .crd
                    .get("metadata")
                    .and_then(|m| m.get("name"))
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .to_string();
                skipped.push((i, Skipped::Replaces(name)));
            }
            set.entries.push(Entry {
                crd: doc,
                compiled: OnceLock::new(),
            });
        }
        (set, skipped)
    }

    /// How many CRDs the set holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the set holds no CRD.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Remembers, in `cache`, the CRDs that pass the API server's definition checks, and
    /// skips those checks for them from then on (they are most of a one-object run's time).
    pub fn with_definition_cache(mut self, cache: DefinitionCache) -> CrdSet {
        self.cache = Some(cache);
        self
    }

    /// Compiles a CRD of the set, through the definition cache when there is one.
    fn compile(&self, crd: &Json) -> Result<CompiledCrd, CrdError> {
        let Some(cache) = &self.cache else {
            return CompiledCrd::new(crd, &self.options);
        };
        let key = cache.key(crd, &self.options);
        if cache.passed(&key) {
            let trusted = self.options.clone().check_definition(false);
            return CompiledCrd::new(crd, &trusted);
        }
        let compiled = CompiledCrd::new(crd, &self.options);
        if compiled.is_ok() && self.options.check_definition {
            cache.remember(&key);
        }
        compiled
    }

    /// Built-in kinds validated with the schemas of Kubernetes `1.<minor>` (the API
    /// server's minor; see [`crate::builtin`]) when no CRD of the set serves them.
    pub fn with_builtins(mut self, minor: u32) -> CrdSet {
        self.builtin_minor = Some(minor);
        self
    }

    /// Kinds of OpenAPI v3 documents a user gave, validated as built-in kinds are: after
    /// the CRDs, before (and instead of) the shipped built-ins.
    pub fn with_user_schemas(mut self, schemas: builtin::UserSchemas) -> CrdSet {
        self.user_schemas = Some(Arc::new(schemas));
        self
    }

    /// The built-in kind `kind` of `api_version`: the user's, else the shipped one of the
    /// set's version; with whether it is the user's.
    fn builtin_kind(&self, api_version: &str, kind: &str) -> Option<(BuiltinKind, bool)> {
        if let Some(found) = self
            .user_schemas
            .as_ref()
            .and_then(|u| u.kind(api_version, kind))
        {
            return Some((found, true));
        }
        builtin::kind(self.builtin_minor?, api_version, kind).map(|k| (k, false))
    }

    /// The CRD serving objects of `api_version` and `kind`, compiled (or why it does not
    /// compile); else the built-in kind, when the set has built-ins; `None` when neither
    /// serves the kind. A CRD's version is not checked here: an object of a version the CRD
    /// does not serve is the CRD's to refuse.
    pub fn route(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Option<Arc<Result<CompiledCrd, CrdError>>> {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        if let Some(&i) = self.by_kind.get(&(group.to_string(), kind.to_string())) {
            let entry = &self.entries[i];
            return Some(
                entry
                    .compiled
                    .get_or_init(|| Arc::new(self.compile(&entry.crd)))
                    .clone(),
            );
        }
        let slot = {
            let mut builtins = self.builtins.lock().unwrap_or_else(|e| e.into_inner());
            builtins
                .entry((api_version.to_string(), kind.to_string()))
                .or_insert_with(|| {
                    self.builtin_kind(api_version, kind).map(|(kind, user)| {
                        Arc::new(BuiltinSlot {
                            kind,
                            user,
                            compiled: OnceLock::new(),
                        })
                    })
                })
                .clone()?
        };
        // Compiled outside the lock: other kinds do not wait for this one.
        Some(
            slot.compiled
                .get_or_init(|| {
                    Arc::new(match (&self.user_schemas, slot.user) {
                        (Some(user), true) => {
                            CompiledCrd::user_kind(&slot.kind, user, &self.options)
                        }
                        _ => CompiledCrd::builtin(
                            &slot.kind,
                            self.builtin_minor.unwrap_or_default(),
                            &self.options,
                        ),
                    })
                })
                .clone(),
        )
    }

    /// The `400` the API server answers an object of a built-in kind that does not decode
    /// into the kind's Go type ([`CompiledCrd::decode_refusal`]); `None` when it decodes or
    /// its kind is no built-in kind of the set.
    pub fn decode_refusal(&self, object: &Json) -> Option<String> {
        let routed = self.builtin_of(object)?;
        routed.as_ref().as_ref().ok()?.decode_refusal(object)
    }

    /// What strict decoding into a built-in kind's Go type says of `object`
    /// ([`CompiledCrd::strict_decode_error`]); `None` when it decodes or its kind is no
    /// built-in kind of the set.
    pub fn strict_decode_error(&self, object: &Json) -> Option<String> {
        let routed = self.builtin_of(object)?;
        routed.as_ref().as_ref().ok()?.strict_decode_error(object)
    }

    /// The compiled built-in kind `object` is of, when no CRD of the set serves its kind.
    fn builtin_of(&self, object: &Json) -> Option<Arc<Result<CompiledCrd, CrdError>>> {
        let (api_version, kind) = crate::type_meta(object);
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        if self
            .by_kind
            .contains_key(&(group.to_string(), kind.to_string()))
        {
            return None;
        }
        self.route(api_version, kind)
    }

    /// The kinds served as `resource` of `group`/`version` (a REST mapper's `KindsFor`): a
    /// CRD's, else the built-ins' when the set has them.
    pub fn kinds_for(&self, group: &str, version: &str, resource: &str) -> Vec<String> {
        let text = |doc: &Json, p: &[&str]| {
            p.iter()
                .try_fold(doc, |v, k| v.get(k))
                .and_then(Json::as_str)
                .map(str::to_string)
        };
        for entry in &self.entries {
            let crd = &entry.crd;
            let serves_version = crd
                .get("spec")
                .and_then(|s| s.get("versions"))
                .and_then(Json::as_array)
                .is_some_and(|vs| {
                    vs.iter().any(|v| {
                        v.get("name").and_then(Json::as_str) == Some(version)
                            && v.get("served").and_then(Json::as_bool) == Some(true)
                    })
                });
            if text(crd, &["spec", "group"]).as_deref() == Some(group)
                && text(crd, &["spec", "names", "plural"]).as_deref() == Some(resource)
                && serves_version
                && let Some(kind) = text(crd, &["spec", "names", "kind"])
            {
                return vec![kind];
            }
        }
        let api_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        if let Some(user) = &self.user_schemas {
            let kinds = user.kinds_for(&api_version, resource);
            if !kinds.is_empty() {
                return kinds;
            }
        }
        let Some(minor) = self.builtin_minor else {
            return Vec::new();
        };
        builtin::kinds_for(minor, &api_version, resource)
    }

    /// The resource (plural) and scope of objects of `api_version` and `kind`: a CRD's,
    /// else the built-in kind's when the set has built-ins; `None` when neither serves it.
    pub fn resource_of(&self, api_version: &str, kind: &str) -> Option<(String, bool)> {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        if let Some(&i) = self.by_kind.get(&(group.to_string(), kind.to_string())) {
            let spec = self.entries[i].crd.get("spec")?;
            let plural = spec.get("names")?.get("plural")?.as_str()?.to_string();
            let namespaced = spec.get("scope").and_then(Json::as_str) != Some("Cluster");
            return Some((plural, namespaced));
        }
        let (found, _) = self.builtin_kind(api_version, kind)?;
        Some((found.resource, found.namespaced))
    }

    /// The schema objects of `api_version` and `kind` have, as the admission type checker
    /// reads it: the CRD version's, else the built-in kind's (with its full ObjectMeta);
    /// `None` when neither serves the kind or its schema does not read.
    pub fn typed_schema(&self, api_version: &str, kind: &str) -> Option<Schema> {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        if self
            .by_kind
            .contains_key(&(group.to_string(), kind.to_string()))
        {
            let routed = self.route(api_version, kind)?;
            let crd = routed.as_ref().as_ref().ok()?;
            return crd.version(api_version).map(|v| (*v.schema).clone());
        }
        let json = match self.builtin_kind(api_version, kind)? {
            (found, true) => self.user_schemas.as_ref()?.typed_schema(&found).ok()?,
            (found, false) => builtin::typed_schema(self.builtin_minor?, &found).ok()?,
        };
        Schema::from_json(&json, &cel_k8s_schema::Path::new("openAPIV3Schema")).ok()
    }

    /// How many CRDs (not built-in kinds) have been compiled so far.
    pub fn compiled(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.compiled.get().is_some())
            .count()
    }
}

/// A directory of markers, one per CRD that passed the definition checks: its name is a
/// hash of the CRD's JSON, the options that shape the checks (the Kubernetes version and
/// the per-call cost limit) and
/// `salt`, which the host makes different for every build of itself (the executable's size
/// and time, say), so a marker never outlives the code that checked. Markers are empty
/// files; a missing or unwritable directory only means the checks run.
#[derive(Clone, Debug)]
pub struct DefinitionCache {
    dir: PathBuf,
    salt: String,
}

impl DefinitionCache {
    /// A cache in `dir` (created when first written), for the program `salt` names.
    pub fn new(dir: impl Into<PathBuf>, salt: impl Into<String>) -> DefinitionCache {
        DefinitionCache {
            dir: dir.into(),
            salt: salt.into(),
        }
    }

    fn key(&self, crd: &Json, options: &CrdOptions) -> String {
        // Two independent 64-bit hashes: a false hit would need both to collide.
        let text = crd.to_string();
        let hash = |seed: u64| {
            let mut h = DefaultHasher::new();
            seed.hash(&mut h);
            self.salt.hash(&mut h);
            options.version.to_string().hash(&mut h);
            options.per_call_limit.hash(&mut h);
            text.hash(&mut h);
            h.finish()
        };
        format!("{:016x}{:016x}", hash(1), hash(2))
    }

    fn passed(&self, key: &str) -> bool {
        self.dir.join(key).is_file()
    }

    fn remember(&self, key: &str) {
        if std::fs::create_dir_all(&self.dir).is_ok() {
            let _ = std::fs::write(self.dir.join(key), b"");
        }
    }
}
