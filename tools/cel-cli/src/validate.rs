//! `cel validate`: custom resources checked against their CustomResourceDefinitions, offline,
//! with the API server's verdicts and messages.
//!
//! ```text
//! cel validate --crd examples/crd/widgets.yaml examples/crd/manifests/
//! cel validate --crd crds/ --old before.yaml after.yaml --output json
//! cel validate --batch cases.jsonl
//! ```
//!
//! Each manifest document (multi-document YAML, JSON, JSON lines, `kind: List`) is routed
//! to the CRD of its `apiVersion` and `kind` and validated as a create, or as an update
//! when `--old` holds an object of the same kind, namespace and name. Objects are validated
//! in parallel; results print in input order. Status: 0 when every object is valid, 1 when
//! one is not, 2 on bad input (unreadable files, invalid CRDs, objects of unknown kinds).

use std::collections::HashMap;
use std::process::ExitCode;

use celerity::kubernetes::{self, KubeVersion};
use celerity_kubernetes::crd::{
    CompiledCrd, CrdOptions, ObjectValidation, invalid_message, strict_decoding_error,
};
use rayon::prelude::*;
use serde_json::{Value as Json, json};

use crate::batch::error_json;
use crate::eval::BackendArg;
use crate::input::{Document, read_documents};
use crate::output::Out;
use crate::{BAD_INPUT, Output, bad_input};

#[derive(clap::Args, Debug)]
pub(crate) struct ValidateArgs {
    /// Manifests to validate: files, directories (read recursively for .yaml, .yml and .json
    /// files), or `-` for standard input.
    manifests: Vec<String>,
    /// A file or directory of CustomResourceDefinitions (repeatable).
    #[arg(long = "crd", value_name = "CRD.yaml")]
    crds: Vec<String>,
    /// Previous versions of the objects: each manifest with the same apiVersion group,
    /// kind, namespace and name is validated as an update from it (transition rules,
    /// ratcheting).
    #[arg(long = "old", value_name = "OLD.yaml")]
    old: Vec<String>,
    /// Output format: text as kubectl prints it, or one JSON object per manifest.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
    /// The Kubernetes compatibility version, `kubernetes=1.36` (an API server of version N
    /// uses N−1; default: that of the newest API server described).
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// What unknown fields (which the schema does not declare) do, as the API server's field
    /// validation: `strict` (kubectl's default) rejects the object, `warn` prunes them with a
    /// warning, `ignore` prunes them silently.
    #[arg(long, value_enum, default_value_t = FieldValidation::Strict)]
    field_validation: FieldValidation,
    /// How rules run (all give the same results).
    #[arg(long, value_enum, default_value_t = BackendArg::Jit)]
    backend: BackendArg,
    /// Validate one case per line of a JSONL file (`-` for stdin) instead:
    /// `{"schema": ..., "object": ..., "old_object": ..., "cost_budget": N,
    /// "per_call_limit": N, "field_root": "root", "is_root": bool}`, printing
    /// `{"ok":true,"errors":[...],"warnings":[...],"remaining_budget":N}` per line.
    #[arg(long, value_name = "FILE.jsonl")]
    batch: Option<String>,
}

/// The API server's field validation levels.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum FieldValidation {
    Strict,
    Warn,
    Ignore,
}

/// The compatibility version a `--profile` names (default: that of the newest API server
/// described).
pub(crate) fn profile_version(profile: Option<&str>) -> Result<KubeVersion, String> {
    match profile {
        None | Some("kubernetes") => Ok(celerity_kubernetes::crd::default_compatibility_version()),
        Some(p) => match p.strip_prefix("kubernetes=") {
            Some(v) => kubernetes::parse_version(v),
            None => Err(format!(
                "unknown profile '{p}' (validate knows kubernetes and kubernetes=VERSION)"
            )),
        },
    }
}

/// Runs `cel validate`.
pub(crate) fn run(args: &ValidateArgs) -> ExitCode {
    let version = match profile_version(args.profile.as_deref()) {
        Ok(v) => v,
        Err(e) => return bad_input(e),
    };
    if let Some(path) = &args.batch {
        if !args.manifests.is_empty() || !args.crds.is_empty() {
            return bad_input("--batch reads everything from its file: give no --crd or manifests");
        }
        return crate::batch::run_validate_batch(path, version);
    }
    if args.crds.is_empty() {
        return bad_input("at least one --crd is required");
    }
    if args.manifests.is_empty() {
        return bad_input("no manifests given (use - for standard input)");
    }
    let options = CrdOptions::default()
        .version(version)
        .backend(args.backend.backend());
    let mut bad = false;
    let crds = match load_crds(&args.crds, &options) {
        Ok((crds, ok)) => {
            bad |= !ok;
            crds
        }
        Err(e) => return bad_input(e),
    };
    let olds = match read_documents(&args.old) {
        Ok(docs) => index_olds(docs, &mut bad),
        Err(e) => return bad_input(e),
    };
    let docs = match read_documents(&args.manifests) {
        Ok(d) => d,
        Err(e) => return bad_input(e),
    };
    let objects = expand_lists(docs);
    let results: Vec<Verdict> = objects
        .par_iter()
        .map(|(_, object)| verdict(object.as_ref(), &crds, &olds, args.field_validation))
        .collect();
    let mut out = Out::new();
    let (mut valid, mut invalid, mut unchecked) = (0, 0, 0);
    for (r, (doc, _)) in results.iter().zip(&objects) {
        match &r.outcome {
            Ok(v) if v.errors.is_empty() && r.rejected.is_none() => valid += 1,
            Ok(_) => invalid += 1,
            Err(_) => {
                unchecked += 1;
                bad = true;
            }
        }
        match args.output {
            Output::Json => out.line(r.to_json(doc)),
            Output::Text => out.text(&r.to_text(doc)),
        }
    }
    if args.output == Output::Text {
        let total = valid + invalid + unchecked;
        let mut summary = format!(
            "{total} object{}: {valid} valid, {invalid} invalid",
            plural(total)
        );
        if unchecked > 0 {
            summary.push_str(&format!(", {unchecked} not validated"));
        }
        out.line(summary);
    }
    if bad {
        ExitCode::from(BAD_INPUT)
    } else if invalid > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Compiles every CRD in the files; reports the invalid ones and whether all were valid.
fn load_crds(paths: &[String], options: &CrdOptions) -> Result<(Vec<CompiledCrd>, bool), String> {
    let docs = read_documents(paths)?;
    let compiled: Vec<(String, Result<CompiledCrd, String>)> = docs
        .par_iter()
        .map(|d| {
            let crd = match &d.value {
                Err(e) => Err(e.clone()),
                Ok(j)
                    if j.get("kind").and_then(Json::as_str) != Some("CustomResourceDefinition") =>
                {
                    Err("not a CustomResourceDefinition".to_string())
                }
                Ok(j) => CompiledCrd::new(j, options).map_err(|e| e.to_string()),
            };
            (d.location(), crd)
        })
        .collect();
    let mut ok = true;
    let mut crds = Vec::new();
    for (location, c) in compiled {
        match c {
            Ok(c) => crds.push(c),
            Err(e) => {
                ok = false;
                eprintln!("{location}: {e}");
            }
        }
    }
    Ok((crds, ok))
}

/// Objects' identity for pairing new and old versions.
pub(crate) type ObjectKey = (String, String, String, String);

pub(crate) fn key_of(o: &Json) -> ObjectKey {
    let s = |p: &[&str]| {
        p.iter()
            .try_fold(o, |v, k| v.get(k))
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string()
    };
    let group = s(&["apiVersion"])
        .rsplit_once('/')
        .map(|(g, _)| g.to_string())
        .unwrap_or_default();
    (
        group,
        s(&["kind"]),
        s(&["metadata", "namespace"]),
        s(&["metadata", "name"]),
    )
}

fn index_olds(docs: Vec<Document>, bad: &mut bool) -> HashMap<ObjectKey, Json> {
    let mut olds = HashMap::new();
    for (doc, object) in expand_lists(docs) {
        match object {
            Ok(o) => {
                olds.insert(key_of(&o), o);
            }
            Err(e) => {
                *bad = true;
                eprintln!("{}: {e}", doc.location());
            }
        }
    }
    olds
}

/// The objects of the documents: each document, or the items of a `kind: List`.
pub(crate) fn expand_lists(docs: Vec<Document>) -> Vec<(Document, Result<Json, String>)> {
    let mut out = Vec::new();
    for d in docs {
        match &d.value {
            Ok(Json::Object(m))
                if m.get("kind")
                    .and_then(Json::as_str)
                    .is_some_and(|k| k.ends_with("List"))
                    && m.get("items").is_some_and(Json::is_array) =>
            {
                let items = m
                    .get("items")
                    .and_then(Json::as_array)
                    .cloned()
                    .unwrap_or_default();
                for item in items {
                    let doc = Document {
                        file: d.file.clone(),
                        index: d.index,
                        value: Ok(Json::Null),
                    };
                    out.push((doc, Ok(item)));
                }
            }
            Ok(Json::Object(_)) => {
                let v = d.value.clone();
                out.push((d, v));
            }
            Ok(_) => out.push((
                Document {
                    file: d.file.clone(),
                    index: d.index,
                    value: Ok(Json::Null),
                },
                Err("a manifest must be a JSON or YAML object".into()),
            )),
            Err(e) => {
                let e = e.clone();
                out.push((d, Err(e)));
            }
        }
    }
    out
}

/// One object's verdict.
struct Verdict {
    api_version: String,
    kind: String,
    namespace: String,
    name: String,
    /// The validation, or why the object could not be validated.
    outcome: Result<ObjectValidation, String>,
    /// The request failed before validation (strict field validation): why.
    rejected: Option<String>,
}

fn verdict(
    object: Result<&Json, &String>,
    crds: &[CompiledCrd],
    olds: &HashMap<ObjectKey, Json>,
    fields: FieldValidation,
) -> Verdict {
    let field = |o: &Json, p: &[&str]| {
        p.iter()
            .try_fold(o, |v, k| v.get(k))
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string()
    };
    let object = match object {
        Ok(o) => o,
        Err(e) => {
            return Verdict {
                api_version: String::new(),
                kind: String::new(),
                namespace: String::new(),
                name: String::new(),
                outcome: Err(e.clone()),
                rejected: None,
            };
        }
    };
    let api_version = field(object, &["apiVersion"]);
    let kind = field(object, &["kind"]);
    let mut rejected = None;
    let outcome = match crds.iter().find(|c| c.owns(&api_version, &kind)) {
        Some(crd) => {
            let mut v = crd.validate(object, olds.get(&key_of(object)));
            match fields {
                FieldValidation::Strict if !v.unknown_fields.is_empty() => {
                    let version = api_version.rsplit('/').next().unwrap_or("");
                    rejected = Some(strict_decoding_error(&kind, version, &v.unknown_fields));
                    v.warnings.retain(|w| !w.starts_with("unknown field "));
                    Ok(v)
                }
                FieldValidation::Ignore => {
                    v.warnings.retain(|w| !w.starts_with("unknown field "));
                    Ok(v)
                }
                _ => Ok(v),
            }
        }
        None => Err(format!(
            "no CustomResourceDefinition serves {api_version}, Kind={kind}"
        )),
    };
    Verdict {
        namespace: field(object, &["metadata", "namespace"]),
        name: field(object, &["metadata", "name"]),
        api_version,
        kind,
        outcome,
        rejected,
    }
}

impl Verdict {
    fn to_text(&self, doc: &Document) -> String {
        let at = doc.location();
        let mut s = String::new();
        match &self.outcome {
            Err(e) => s.push_str(&format!("{at}: error: {e}\n")),
            Ok(v) => {
                for w in &v.warnings {
                    s.push_str(&format!("{at}: Warning: {w}\n"));
                }
                if let Some(why) = &self.rejected {
                    s.push_str(&format!("{at}: {why}\n"));
                } else if v.errors.is_empty() {
                    s.push_str(&format!("{at}: {} {:?} is valid\n", self.kind, self.name));
                } else {
                    s.push_str(&format!(
                        "{at}: {}\n",
                        invalid_message(&self.kind, &self.name, &v.errors)
                    ));
                }
            }
        }
        s
    }

    fn to_json(&self, doc: &Document) -> Json {
        let mut j = json!({
            "file": doc.file,
            "document": doc.index,
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        });
        let m = j.as_object_mut().expect("an object");
        match &self.outcome {
            Err(e) => {
                m.insert("valid".into(), Json::Null);
                m.insert("error".into(), json!(e));
            }
            Ok(v) => {
                m.insert(
                    "valid".into(),
                    json!(v.errors.is_empty() && self.rejected.is_none()),
                );
                if let Some(why) = &self.rejected {
                    m.insert("rejected".into(), json!(why));
                }
                m.insert(
                    "errors".into(),
                    Json::Array(v.errors.iter().map(error_json).collect()),
                );
                m.insert("warnings".into(), json!(v.warnings));
                // What the rules took from the per-object budget.
                let budget = celerity_kubernetes::crd::RUNTIME_COST_BUDGET;
                m.insert(
                    "runtime_cost".into(),
                    json!(budget.saturating_sub(v.remaining_budget)),
                );
                if !v.errors.is_empty() {
                    m.insert(
                        "message".into(),
                        json!(invalid_message(&self.kind, &self.name, &v.errors)),
                    );
                }
            }
        }
        j
    }
}
