//! `cel validate`: custom resources checked against their CustomResourceDefinitions, offline,
//! with the API server's verdicts and messages.
//!
//! ```text
//! cel validate --crd examples/crd/widgets.yaml examples/crd/manifests/
//! cel validate --crd crds/ --old before.yaml after.yaml --output json
//! cel validate --batch cases.jsonl
//! ```
//!
//! Each manifest document (multi-document YAML, JSON streams, `kind: List` and `*List`,
//! nested) is routed to the CRD of its `apiVersion` and `kind` and sent as a create, or as an
//! update when `--old` holds an object of the same kind, namespace and name: what kubectl
//! does first (the namespace of `--namespace` for namespaced objects without one), then the
//! API server's create or update path (`celerity_kubernetes::crd::CompiledCrd::create`).
//!
//! Manifests are a stream: documents are read, validated across the cores in batches and
//! printed in input order, then freed, so memory follows the batch, the CRDs and the
//! largest document, not the input. A CRD is compiled when the first object needs it;
//! rules are interpreted first and compiled to native code in the background once they have
//! run often enough (`--backend auto`). Status: 0 when every object is valid, 1 when one is
//! not, 2 on bad input (unreadable files, invalid CRDs, objects of unknown kinds).

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::mpsc::sync_channel;

use celerity::kubernetes::{self, KubeVersion};
use celerity_kubernetes::builtin::{self, UserSchemas};
use celerity_kubernetes::crd::{
    Answer, CompiledCrd, CrdOptions, CrdSet, DefinitionCache, FieldValidation, Outcome,
    RequestOptions, Skipped, invalid_message, status_json,
};
use rayon::prelude::*;
use serde_json::{Value as Json, json};

use crate::batch::error_json;
use crate::eval::BackendArg;
use crate::input::{Document, DocumentStream, RawDocument, read_documents, read_raw_documents};
use crate::output::Out;
use crate::{BAD_INPUT, Output, bad_input};

#[derive(clap::Args, Debug)]
pub(crate) struct ValidateArgs {
    /// Manifests to validate: files, directories (read recursively for .yaml, .yml and .json
    /// files), or `-` for standard input.
    manifests: Vec<String>,
    /// A file or directory of CustomResourceDefinitions (repeatable); other documents in it
    /// are skipped (said with --verbose). Built-in kinds need none: they are validated
    /// against the schemas the API server of the profile's version publishes.
    #[arg(long = "crd", value_name = "CRD.yaml")]
    crds: Vec<String>,
    /// Do not validate built-in kinds (Deployments, Services, ...): report them as not
    /// validated, as objects of unknown kinds are.
    #[arg(long)]
    no_builtins: bool,
    /// Validate built-in kinds as written, without the defaults the API server's decoder
    /// gives them (`imagePullPolicy`, `protocol: TCP`, a Deployment's strategy, ...).
    #[arg(long)]
    no_defaults: bool,
    /// OpenAPI v3 documents (files or directories) as `kubectl get --raw
    /// /openapi/v3/apis/<group>/<version>` prints them: their kinds are validated as
    /// built-in kinds are, overriding the shipped schemas (repeatable).
    #[arg(long = "schemas", value_name = "DIR")]
    schemas: Vec<String>,
    /// Check every CRD as the API server checks a new one, even one this build of `cel` has
    /// seen pass (by default a marker per passing CRD is kept in $CELERITY_CACHE_DIR, else
    /// $XDG_CACHE_HOME/celerity, else ~/.cache/celerity, and its checks are skipped).
    #[arg(long)]
    no_cache: bool,
    /// Previous versions of the objects: each manifest with the same apiVersion group,
    /// kind, namespace and name is validated as an update from it (transition rules,
    /// ratcheting, immutable metadata, the stored status).
    #[arg(long = "old", value_name = "OLD.yaml")]
    old: Vec<String>,
    /// The namespace of namespaced objects that have none, as kubectl's context gives it.
    #[arg(long, value_name = "NS", default_value = "default")]
    namespace: String,
    /// Output format: text as kubectl prints it, or one JSON object per manifest (with the
    /// Status the API server returns).
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
    /// The Kubernetes release whose API server validates, `kubernetes=1.33` (1.30 to 1.37;
    /// default: the newest released version): its cel-go, its texts, and for the CRDs the
    /// checks of that release, whose new rules compile with the previous minor's libraries.
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// What unknown fields (which the schema does not declare) and repeated keys do, as the
    /// API server's field validation: `strict` (kubectl's default) rejects the object,
    /// `warn` drops them with a warning, `ignore` drops them silently.
    #[arg(long, value_enum, default_value_t = FieldValidationArg::Strict)]
    field_validation: FieldValidationArg,
    /// How rules run (all give the same results): `auto` interprets them and compiles to
    /// native code in the background those that run often.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Also say which documents of the --crd inputs were skipped, and how many CRDs were
    /// compiled.
    #[arg(long)]
    verbose: bool,
    /// Validate one case per line of a JSONL file (`-` for stdin) instead:
    /// `{"schema": ..., "object": ..., "old_object": ..., "cost_budget": N,
    /// "per_call_limit": N, "field_root": "root", "is_root": bool}`, printing
    /// `{"ok":true,"errors":[...],"warnings":[...],"remaining_budget":N}` per line.
    #[arg(long, value_name = "FILE.jsonl")]
    batch: Option<String>,
}

/// The API server's field validation levels.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum FieldValidationArg {
    Strict,
    Warn,
    Ignore,
}

impl FieldValidationArg {
    fn level(self) -> FieldValidation {
        match self {
            FieldValidationArg::Strict => FieldValidation::Strict,
            FieldValidationArg::Warn => FieldValidation::Warn,
            FieldValidationArg::Ignore => FieldValidation::Ignore,
        }
    }
}

/// The release a `--profile` names (default: the newest released version).
pub(crate) fn profile_version(profile: Option<&str>) -> Result<KubeVersion, String> {
    match profile {
        None | Some("kubernetes") => Ok(celerity_kubernetes::crd::default_version()),
        Some(p) => match p.strip_prefix("kubernetes=") {
            Some(v) => kubernetes::parse_version(v),
            None => Err(format!(
                "unknown profile '{p}' (validate knows kubernetes and kubernetes=VERSION)"
            )),
        },
    }
}

/// How many documents, and how many bytes of them, one batch holds: enough to keep every
/// core busy, few enough that memory stays flat however long the stream.
const BATCH_DOCUMENTS: usize = 256;
const BATCH_BYTES: usize = 8 * 1024 * 1024;

/// Everything a manifest is checked against.
struct Context {
    crds: CrdSet,
    olds: HashMap<ObjectKey, Json>,
    request: RequestOptions,
    /// The API server's minor version (the release's), whose built-in schemas are used.
    server_minor: u32,
    /// Whether built-in kinds are validated (when their schemas are shipped).
    builtins: bool,
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
    if args.manifests.is_empty() {
        return bad_input("no manifests given (use - for standard input)");
    }
    let mut bad = false;
    let options = CrdOptions::default()
        .version(version)
        .backend(args.backend.backend());
    let mut crds = match load_crds(&args.crds, &options, args.verbose, &mut bad) {
        Ok(c) => c,
        Err(e) => return bad_input(e),
    };
    if !args.no_cache
        && let Some(cache) = definition_cache()
    {
        crds = crds.with_definition_cache(cache);
    }
    // The built-in kinds' schemas are those the API server of the release publishes.
    let server_minor = version.minor;
    if !args.no_builtins && builtin::has_version(server_minor) {
        crds = crds.with_builtins(server_minor);
    }
    match load_user_schemas(&args.schemas) {
        Ok(Some(user)) => crds = crds.with_user_schemas(user),
        Ok(None) => {}
        Err(e) => return bad_input(e),
    }
    let olds = match read_documents(&args.old) {
        Ok(docs) => index_olds(docs, &args.namespace, &mut bad),
        Err(e) => return bad_input(e),
    };
    let stream = match DocumentStream::open(&args.manifests) {
        Ok(s) => s,
        Err(e) => return bad_input(e),
    };
    let context = Context {
        crds,
        olds,
        request: RequestOptions::default()
            .namespace(args.namespace.clone())
            .field_validation(args.field_validation.level())
            .builtin_defaults(!args.no_defaults),
        server_minor,
        builtins: !args.no_builtins,
    };
    let tally = validate_stream(stream, &context, args.output);
    if args.verbose {
        eprintln!(
            "{} of {} CustomResourceDefinitions compiled (the others served no object)",
            context.crds.compiled(),
            context.crds.len()
        );
    }
    // The process ends with this command: taking the compiled CRDs apart (5% of a run that
    // validates one object against Gateway API's HTTPRoute CRD) would only give memory back
    // to a process about to exit.
    std::mem::forget(context);
    let mut out = Out::new();
    if args.output == Output::Text {
        let total = tally.valid + tally.invalid + tally.unchecked;
        let mut summary = format!(
            "{total} object{}: {} valid, {} invalid",
            plural(total),
            tally.valid,
            tally.invalid
        );
        if tally.unchecked > 0 {
            summary.push_str(&format!(", {} not validated", tally.unchecked));
        }
        out.line(summary);
    }
    if bad || tally.unchecked > 0 {
        ExitCode::from(BAD_INPUT)
    } else if tally.invalid > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// How many objects got each verdict.
#[derive(Default)]
struct Tally {
    valid: usize,
    invalid: usize,
    unchecked: usize,
}

/// What one document printed and counted.
#[derive(Default)]
struct Reported {
    text: String,
    tally: Tally,
}

/// Reads the stream on its own thread in batches, validates each batch across the cores,
/// prints it in order, and frees it before the next.
fn validate_stream(stream: DocumentStream, context: &Context, output: Output) -> Tally {
    let (batches, received) = sync_channel::<Vec<RawDocument>>(1);
    let reader = std::thread::spawn(move || {
        let mut batch = Vec::new();
        let mut bytes = 0;
        for doc in stream {
            bytes += doc.weight();
            batch.push(doc);
            if batch.len() >= BATCH_DOCUMENTS || bytes >= BATCH_BYTES {
                if batches.send(std::mem::take(&mut batch)).is_err() {
                    return;
                }
                bytes = 0;
            }
        }
        if !batch.is_empty() {
            let _ = batches.send(batch);
        }
    });
    let mut out = Out::new();
    let mut tally = Tally::default();
    for batch in received {
        let reports: Vec<Reported> = batch
            .into_par_iter()
            .map(|raw| report_document(raw, context, output))
            .collect();
        let mut text = String::new();
        for r in reports {
            text.push_str(&r.text);
            tally.valid += r.tally.valid;
            tally.invalid += r.tally.invalid;
            tally.unchecked += r.tally.unchecked;
        }
        out.text(&text);
    }
    let _ = reader.join();
    tally
}

/// Converts, expands and validates one document; its report.
fn report_document(raw: RawDocument, context: &Context, output: Output) -> Reported {
    let mut reported = Reported::default();
    let Some(doc) = raw.parse() else {
        return reported;
    };
    let location = doc.location();
    let duplicates = doc.duplicates;
    let objects = match doc.value {
        Ok(v) => expand_list(v),
        Err(e) => vec![Err(e)],
    };
    for object in objects {
        let verdict = verdict(object, &duplicates, context);
        match &verdict.outcome {
            Ok(a) if a.accepted() => reported.tally.valid += 1,
            Ok(_) => reported.tally.invalid += 1,
            Err(_) => reported.tally.unchecked += 1,
        }
        match output {
            Output::Json => {
                reported
                    .text
                    .push_str(&verdict.to_json(&doc.file, doc.index).to_string());
                reported.text.push('\n');
            }
            Output::Text => reported.text.push_str(&verdict.to_text(&location)),
        }
    }
    reported
}

/// The most nested `List`s expanded (kubectl expands them recursively).
const MAX_LIST_NESTING: usize = 16;

/// The objects of a document: the document itself, or, for a list (any document with
/// `items`, as apimachinery's unstructured decoder reads it), its items, recursively.
/// Items without `apiVersion` and `kind` take the list's (`WidgetList` items are `Widget`s).
fn expand_list(doc: Json) -> Vec<Result<Json, String>> {
    let mut out = Vec::new();
    let mut work = vec![(doc, 0usize)];
    while let Some((v, depth)) = work.pop() {
        let Json::Object(mut m) = v else {
            out.push(Err("a manifest must be a JSON or YAML object".into()));
            continue;
        };
        let items = match m.remove("items") {
            None => {
                out.push(Ok(Json::Object(m)));
                continue;
            }
            Some(Json::Null) => Vec::new(),
            Some(Json::Array(items)) => items,
            Some(_) => {
                out.push(Err("items: a list's items must be an array".into()));
                continue;
            }
        };
        if depth >= MAX_LIST_NESTING {
            out.push(Err(format!("lists nested deeper than {MAX_LIST_NESTING}")));
            continue;
        }
        let api_version = m.get("apiVersion").cloned();
        let item_kind = m
            .get("kind")
            .and_then(Json::as_str)
            .map(|k| k.strip_suffix("List").unwrap_or(k).to_string());
        // In reverse, so the work list gives them back in order.
        for mut item in items.into_iter().rev() {
            if let Json::Object(im) = &mut item
                && !im.contains_key("apiVersion")
                && !im.contains_key("kind")
            {
                if let Some(v) = &api_version {
                    im.insert("apiVersion".into(), v.clone());
                }
                if let Some(k) = &item_kind {
                    im.insert("kind".into(), Json::String(k.clone()));
                }
            }
            work.push((item, depth + 1));
        }
    }
    out
}

/// The objects of documents, lists expanded (for the commands that read them whole).
pub(crate) fn expand_lists(docs: Vec<Document>) -> Vec<(Document, Result<Json, String>)> {
    let mut out = Vec::new();
    for d in docs {
        let objects = match d.value {
            Ok(v) => expand_list(v),
            Err(e) => vec![Err(e)],
        };
        for object in objects {
            out.push((
                Document {
                    file: d.file.clone(),
                    index: d.index,
                    value: Ok(Json::Null),
                    duplicates: Vec::new(),
                },
                object,
            ));
        }
    }
    out
}

/// Compiles nothing yet: reads the CRD documents into a set that compiles each on first
/// use. Documents that are not CRDs are skipped (said with `verbose`); unreadable ones are
/// reported and make the run's status 2.
/// The OpenAPI v3 documents of `--schemas` (files or directories), as one set of user
/// schemas; `None` when none are given. A document that does not read, or is not OpenAPI v3,
/// is an error naming it.
pub(crate) fn load_user_schemas(paths: &[String]) -> Result<Option<UserSchemas>, String> {
    if paths.is_empty() {
        return Ok(None);
    }
    let mut documents = Vec::new();
    for d in read_documents(paths)? {
        let location = d.location();
        match d.value {
            Ok(j) => documents.push((location, j)),
            Err(e) => return Err(format!("{location}: {e}")),
        }
    }
    UserSchemas::from_documents(&documents).map(Some)
}

pub(crate) fn load_crds(
    paths: &[String],
    options: &CrdOptions,
    verbose: bool,
    bad: &mut bool,
) -> Result<CrdSet, String> {
    // Converted across the cores, in order: a project's CRDs are megabytes of YAML, and
    // converting them is most of a one-object run.
    let docs: Vec<Document> = read_raw_documents(paths)?
        .into_par_iter()
        .filter_map(RawDocument::parse)
        .collect();
    let mut jsons = Vec::new();
    let mut locations = Vec::new();
    for d in docs {
        let location = d.location();
        match d.value {
            Ok(j) => {
                locations.push(location);
                jsons.push(j);
            }
            Err(e) => {
                *bad = true;
                eprintln!("{location}: {e}");
            }
        }
    }
    let (set, skipped) = CrdSet::new(jsons, options);
    for (i, why) in skipped {
        match why {
            Skipped::NotACrd if verbose => {
                eprintln!("{}: skipped: not a CustomResourceDefinition", locations[i]);
            }
            Skipped::NotACrd => {}
            Skipped::Replaces(name) => eprintln!(
                "{}: warning: serves the same group and kind as CustomResourceDefinition {name:?}, which it replaces",
                locations[i]
            ),
        }
    }
    Ok(set)
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

/// [`key_of`] with kubectl's namespace for an object that has none (the CRD's scope is not
/// known yet: an old and a new object of a cluster-scoped kind pair the same way).
fn key_in(o: &Json, namespace: &str) -> ObjectKey {
    let mut k = key_of(o);
    if k.2.is_empty() {
        k.2 = namespace.to_string();
    }
    k
}

fn index_olds(docs: Vec<Document>, namespace: &str, bad: &mut bool) -> HashMap<ObjectKey, Json> {
    let mut olds = HashMap::new();
    for (doc, object) in expand_lists(docs) {
        match object {
            Ok(o) => {
                olds.insert(key_in(&o, namespace), o);
            }
            Err(e) => {
                *bad = true;
                eprintln!("{}: {e}", doc.location());
            }
        }
    }
    olds
}

/// One object's verdict.
struct Verdict {
    api_version: String,
    kind: String,
    group: String,
    /// The answer, or why the object could not be validated.
    outcome: Result<Answer, String>,
    update: bool,
}

fn verdict(object: Result<Json, String>, duplicates: &[String], context: &Context) -> Verdict {
    let object = match object {
        Ok(o) => o,
        Err(e) => {
            return Verdict {
                api_version: String::new(),
                kind: String::new(),
                group: String::new(),
                outcome: Err(e),
                update: false,
            };
        }
    };
    let field = |p: &[&str]| {
        p.iter()
            .try_fold(&object, |v, k| v.get(k))
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string()
    };
    let api_version = field(&["apiVersion"]);
    let kind = field(&["kind"]);
    let mut verdict = Verdict {
        group: api_version
            .rsplit_once('/')
            .map_or(String::new(), |(g, _)| g.to_string()),
        api_version,
        kind,
        outcome: Err(String::new()),
        update: false,
    };
    let routed = context.crds.route(&verdict.api_version, &verdict.kind);
    let crd: &CompiledCrd = match routed.as_deref() {
        None => {
            verdict.outcome = Err(unserved(&verdict, context));
            return verdict;
        }
        Some(Err(e)) => {
            verdict.outcome = Err(format!("its CustomResourceDefinition is refused: {e}"));
            return verdict;
        }
        Some(Ok(crd)) => crd,
    };
    let old = context
        .olds
        .get(&key_in(&object, &context.request.namespace));
    verdict.update = old.is_some();
    verdict.outcome = Ok(match old {
        Some(old) => crd.update(
            object,
            duplicates,
            old,
            &context.request,
            context.server_minor,
        ),
        None => crd.create(object, duplicates, &context.request, context.server_minor),
    });
    verdict
}

/// The cache of CRDs that passed the definition checks, for this build of `cel`: in
/// `$CELERITY_CACHE_DIR`, `$XDG_CACHE_HOME/celerity` or `~/.cache/celerity`; `None` when
/// none of them is set.
fn definition_cache() -> Option<DefinitionCache> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let dir = var("CELERITY_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| std::path::PathBuf::from(d).join("celerity")))
        .or_else(|| var("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/celerity")))?;
    // Every build of `cel` is another program: its size and time tell them apart.
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(exe).ok()?;
    let built = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let salt = format!("{} {} {built}", env!("CARGO_PKG_VERSION"), meta.len());
    Some(DefinitionCache::new(dir.join("crd-checks"), salt))
}

/// Why an object of a kind nothing serves is not validated.
fn unserved(verdict: &Verdict, context: &Context) -> String {
    let mut why = format!(
        "no CustomResourceDefinition serves {}, Kind={}",
        verdict.api_version, verdict.kind
    );
    let minor = context.server_minor;
    if context.builtins && !builtin::has_version(minor) {
        let (oldest, newest) = builtin::shipped_versions();
        why.push_str(&format!(
            " (built-in kinds are not validated: no schemas of Kubernetes 1.{minor} are shipped, only 1.{oldest} to 1.{newest})"
        ));
    }
    why
}

impl Verdict {
    fn to_text(&self, at: &str) -> String {
        let mut s = String::new();
        match &self.outcome {
            Err(e) => s.push_str(&format!("{at}: error: {e}\n")),
            Ok(a) => {
                for w in &a.warnings {
                    s.push_str(&format!("{at}: Warning: {w}\n"));
                }
                match &a.outcome {
                    Outcome::Accepted => {
                        s.push_str(&format!("{at}: {} {:?} is valid\n", self.kind, a.name()));
                    }
                    Outcome::BadRequest(message) => s.push_str(&format!(
                        "{at}: Error from server (BadRequest): {message}\n"
                    )),
                    Outcome::Invalid(errors) => s.push_str(&format!(
                        "{at}: {}\n",
                        invalid_message(&self.kind, a.name(), errors)
                    )),
                }
            }
        }
        s
    }

    fn to_json(&self, file: &str, index: usize) -> Json {
        let mut j = json!({
            "file": file,
            "document": index,
            "apiVersion": self.api_version,
            "kind": self.kind,
        });
        let m = j.as_object_mut().expect("an object");
        match &self.outcome {
            Err(e) => {
                m.insert("namespace".into(), json!(""));
                m.insert("name".into(), json!(""));
                m.insert("valid".into(), Json::Null);
                m.insert("error".into(), json!(e));
            }
            Ok(a) => {
                let meta = |k: &str| {
                    a.object
                        .get("metadata")
                        .and_then(|m| m.get(k))
                        .and_then(Json::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                m.insert("namespace".into(), json!(meta("namespace")));
                m.insert("name".into(), json!(a.name()));
                m.insert("valid".into(), json!(a.accepted()));
                let errors = match &a.outcome {
                    Outcome::Invalid(errors) => errors.iter().map(error_json).collect(),
                    _ => Vec::new(),
                };
                m.insert("errors".into(), Json::Array(errors));
                m.insert("warnings".into(), json!(a.warnings));
                // What the rules took from the per-object budget.
                let budget = celerity_kubernetes::crd::RUNTIME_COST_BUDGET;
                m.insert(
                    "runtime_cost".into(),
                    json!(budget.saturating_sub(a.remaining_budget)),
                );
                let status = status_json(a, &self.kind, &self.group).unwrap_or_else(|| {
                    json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                        "status": "Success", "code": if self.update { 200 } else { 201 }})
                });
                if let Some(message) = status.get("message") {
                    m.insert("message".into(), message.clone());
                }
                m.insert("status".into(), status);
            }
        }
        j
    }
}
