//! A set of CustomResourceDefinitions, each compiled when an object first needs it: objects
//! are routed by `apiVersion` and `kind`, and the CRDs no object is routed to cost only
//! their reading. Shared by threads: a CRD is compiled once, by the first thread that needs
//! it (the others wait for that compile, which runs no user code).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value as Json;

use super::definition::{CompiledCrd, CrdError, CrdOptions};

/// CRDs by the group and kind they serve, compiled on first use.
#[derive(Debug)]
pub struct CrdSet {
    entries: Vec<Entry>,
    /// (group, kind) to the entry serving it (the last CRD given for a pair wins).
    by_kind: HashMap<(String, String), usize>,
    options: CrdOptions,
}

#[derive(Debug)]
struct Entry {
    crd: Json,
    compiled: OnceLock<Result<CompiledCrd, CrdError>>,
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

    /// The CRD serving objects of `api_version` and `kind`, compiled (or why it does not
    /// compile); `None` when no CRD of the set serves the group and kind. The version is
    /// not checked here: an object of a version the CRD does not serve is the CRD's to
    /// refuse.
    pub fn route(&self, api_version: &str, kind: &str) -> Option<&Result<CompiledCrd, CrdError>> {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        let i = *self.by_kind.get(&(group.to_string(), kind.to_string()))?;
        let entry = &self.entries[i];
        Some(
            entry
                .compiled
                .get_or_init(|| CompiledCrd::new(&entry.crd, &self.options)),
        )
    }

    /// How many CRDs have been compiled so far.
    pub fn compiled(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.compiled.get().is_some())
            .count()
    }
}
