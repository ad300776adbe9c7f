//! `cel admit`: admission policies applied to manifests offline, as the API server's
//! admission plugins apply them (mutating policies first, then validating ones).
//!
//! ```text
//! cel admit --policy examples/admission/policies/ --params examples/admission/params.yaml \
//!     --namespace examples/admission/namespaces.yaml --authz examples/admission/authz.yaml \
//!     --user alice --group dev examples/admission/manifests/
//! cel admit --policy policy.yaml --old before.yaml --operation UPDATE after.yaml --output json
//! cel admit --batch requests.jsonl
//! ```
//!
//! Policies and bindings (ValidatingAdmissionPolicy, MutatingAdmissionPolicy and their
//! bindings) and webhook configurations (ValidatingWebhookConfiguration,
//! MutatingWebhookConfiguration) are read from `--policy` and `--binding` files, and from the
//! manifests too: a file may hold all of them. For each object, each webhook is reported as
//! called or not called with the reason (rules, selectors, matchConditions), in the API
//! server's order; no webhook is called. Each other manifest document (multi-document YAML, JSON,
//! `kind: List`) is admitted as the `--operation` (CREATE by default; UPDATE when `--old`
//! holds an object of the same kind, namespace and name; DELETE admits the manifests as the
//! old objects). Output: per object, the policies and bindings that matched, the verdict
//! with the API server's status, warnings, audit annotations and, when mutating policies
//! changed it, the object after them (`--output yaml` prints only those objects, as a YAML
//! stream). Status: 0 when everything is admitted, 1 when something is denied, 2 on bad
//! input (each bad document is reported with its file, position and field; the others
//! still run).
//!
//! `--batch FILE` reads one JSON request per line (see
//! `celerity_kubernetes::admission::case` for the fields) and prints one line per input
//! line, in order: `{"ok":true,"allowed":...,"status":{...},"warnings":[...],
//! "audit_annotations":{...},"object":...}` or `{"ok":false,"error":"..."}`; status 1 when
//! a line is denied or not ok. A line's `"webhooks": [...]` holds webhook configurations;
//! its answer then has `"webhooks": [{"name":...,"called":bool,"reason":...}, ...]` as
//! `--output json` prints it (`reason` null when called). A match condition that does not
//! compile makes the line `{"ok":false,"error":"<kind> \"<name>\": webhooks[i].
//! matchConditions[j].expression: compilation failed: ..."}`.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use celerity_kubernetes::admission::policy::{
    MUTATING_BINDING, MUTATING_POLICY, VALIDATING_BINDING, VALIDATING_POLICY,
};
use celerity_kubernetes::admission::{
    AdmissionCase, Binding, Gvk, MUTATING_WEBHOOK_CONFIGURATION, Operation, Policy, PolicyInputs,
    PolicySet, Request, Response, RulesAuthorizer, UserInfo, VALIDATING_WEBHOOK_CONFIGURATION,
    WebhookConfiguration, check_policy, read_binding, read_policy, read_webhook_configuration,
    response_json,
};
use rayon::prelude::*;
use serde_json::{Map, Value as Json, json};

use celerity_kubernetes::builtin::server_object::server_object;
use celerity_kubernetes::crd::CrdSet;

use crate::eval::BackendArg;
use crate::input::{Document, read_documents};
use crate::output::Out;
use crate::validate::{ObjectKey, expand_lists, key_of, profile_version};
use crate::watchdog::{GRACE, Watchdog};
use crate::{BAD_INPUT, bad_input};

#[derive(clap::Args, Debug)]
pub(crate) struct AdmitArgs {
    /// Manifests to admit: files, directories (read recursively for .yaml, .yml and .json
    /// files), or `-` for standard input. Policies and bindings among them join the set.
    manifests: Vec<String>,
    /// A file or directory of policies, bindings and webhook configurations
    /// (ValidatingWebhookConfiguration, MutatingWebhookConfiguration) (repeatable).
    #[arg(long = "policy", value_name = "POLICY.yaml")]
    policies: Vec<String>,
    /// A file or directory of bindings (repeatable).
    #[arg(long = "binding", value_name = "B.yaml")]
    bindings: Vec<String>,
    /// A file or directory of param objects bindings may select (repeatable).
    #[arg(long = "params", value_name = "P.yaml")]
    params: Vec<String>,
    /// A file or directory of Namespace objects (repeatable); a namespace not given is
    /// taken to exist, with no labels.
    #[arg(long = "namespace", value_name = "NS.yaml")]
    namespaces: Vec<String>,
    /// The operation: CREATE, UPDATE, DELETE or CONNECT (default: CREATE, or UPDATE for
    /// manifests with an --old version).
    #[arg(long)]
    operation: Option<String>,
    /// Previous versions of the objects (matched by group, kind, namespace and name).
    #[arg(long = "old", value_name = "OLD.yaml")]
    old: Vec<String>,
    /// The requesting user's name.
    #[arg(long)]
    user: Option<String>,
    /// A group of the requesting user (repeatable).
    #[arg(long = "group")]
    groups: Vec<String>,
    /// Authorizer rules (YAML or JSON list; see `celerity_kubernetes::admission::authz_rules`);
    /// without them every check is allowed.
    #[arg(long, value_name = "RULES.yaml")]
    authz: Option<String>,
    /// Output: text (the default), json (one line per object) or yaml (the objects after
    /// the mutating policies, as a YAML stream; verdicts go to standard error). With webhook
    /// configurations, each JSON line has "webhooks": [{"name", "called", "reason" (null
    /// when called), "configuration", "kind", "error" (when matching it rejected the
    /// request), "resource" and "requestKind" (when called)}], mutating webhooks first.
    #[arg(long, value_enum, default_value_t = AdmitOutput::Text)]
    output: AdmitOutput,
    /// Also type-check the ValidatingAdmissionPolicies against the schemas of the kinds they
    /// match, as the API server does for `status.typeChecking`, and print the warnings.
    #[arg(long)]
    typecheck: bool,
    /// CustomResourceDefinitions of the custom kinds admitted or taken as params: their
    /// resource names and scopes (never guessed), and their schemas for --typecheck.
    #[arg(long = "crd", value_name = "CRD.yaml")]
    crds: Vec<String>,
    /// The Kubernetes release whose API server admits, `kubernetes=1.35` (1.30 to 1.37;
    /// default: the newest released version): its cel-go and its texts.
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// How expressions run (all give the same results).
    #[arg(long, value_enum, default_value_t = BackendArg::Jit)]
    backend: BackendArg,
    /// Admit one JSON request per line of a file (`-` for stdin) instead.
    #[arg(long, value_name = "FILE.jsonl")]
    batch: Option<String>,
    /// How long one request may take, in seconds: its evaluations are then stopped and it
    /// is denied with `504 Timeout`. Cost budgets bound what expressions do; this bounds a
    /// bug. Work still running 10 seconds later ends the command with status 3.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = seconds)]
    time_limit: f64,
    /// Hand policies the manifests as written, instead of as the API server builds them
    /// (built-in kinds with the release's defaults, encoded as Go encodes them).
    #[arg(long)]
    no_defaults: bool,
    /// Also print the object (and old object) each request's policies received, after
    /// decoding and defaults.
    #[arg(long)]
    show_object: bool,
}

/// A time limit in seconds: positive and finite.
fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() && x <= 1e9 => Ok(x),
        _ => Err(format!("{s:?} is not a number of seconds above 0")),
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum AdmitOutput {
    Text,
    Json,
    Yaml,
}

/// Runs `cel admit`.
pub(crate) fn run(args: &AdmitArgs) -> ExitCode {
    if let Some(path) = &args.batch {
        if !args.manifests.is_empty() || !args.policies.is_empty() {
            return bad_input(
                "--batch reads everything from its file: give no --policy or manifests",
            );
        }
        return run_batch(path, args.backend.backend(), args.limit(), args.no_defaults);
    }
    if args.manifests.is_empty() {
        return bad_input("no manifests given (use - for standard input)");
    }
    let version = match profile_version(args.profile.as_deref()) {
        Ok(v) => v,
        Err(e) => return bad_input(e),
    };
    let operation: Option<Operation> = match args.operation.as_deref().map(str::parse).transpose() {
        Ok(o) => o,
        Err(e) => return bad_input(e),
    };
    let mut bad = false;
    let loaded = match load(args, version, &mut bad) {
        Ok(l) => l,
        Err(e) => return bad_input(e),
    };
    if !loaded.configured {
        return bad_input(
            "at least one policy, binding or webhook configuration is required (--policy)",
        );
    }
    let watchdog = Watchdog::start(args.limit() + GRACE);
    let results: Vec<Admitted> = loaded
        .objects
        .par_iter()
        .map(|(doc, object)| {
            let _watched = watchdog.watch(doc.location());
            admit_one(object.as_ref(), &loaded, operation, args)
        })
        .collect();
    report(args, &loaded.objects, &results, bad, loaded.policies)
}

impl AdmitArgs {
    fn limit(&self) -> Duration {
        Duration::from_secs_f64(self.time_limit)
    }
}

/// Everything read from the files.
struct Loaded {
    set: PolicySet,
    /// CRDs and built-in kinds: resource names, scopes, schemas for type checking.
    schemas: Arc<CrdSet>,
    objects: Vec<(Document, Result<Json, String>)>,
    olds: HashMap<ObjectKey, Json>,
    authorizer: Arc<RulesAuthorizer>,
    /// The release whose API server builds the request's objects (none: as written).
    server_minor: Option<u32>,
    /// Whether policies or bindings were given (else only webhooks are reported).
    policies: bool,
    /// Whether anything was given to admit against.
    configured: bool,
}

/// Reads and compiles what the flags name; bad documents are reported and set `bad`.
fn load(
    args: &AdmitArgs,
    version: celerity::kubernetes::KubeVersion,
    bad: &mut bool,
) -> Result<Loaded, String> {
    let mut policies: Vec<Policy> = Vec::new();
    let mut bindings: Vec<Binding> = Vec::new();
    let mut configurations: Vec<WebhookConfiguration> = Vec::new();
    // Where each configuration was read, for its compile errors.
    let mut configuration_at: HashMap<(String, String), String> = HashMap::new();
    let mut report = |doc: &Document, e: String| {
        *bad = true;
        eprintln!("{}: {e}", doc.location());
    };
    let mut objects = Vec::new();
    let config_docs = read_documents(&args.policies)?
        .into_iter()
        .chain(read_documents(&args.bindings)?)
        .map(|d| (d, true));
    let manifest_docs = read_documents(&args.manifests)?
        .into_iter()
        .map(|d| (d, false));
    for (doc, is_config) in config_docs.chain(manifest_docs) {
        let kind = doc
            .value
            .as_ref()
            .ok()
            .and_then(|j| j.get("kind"))
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        match (&doc.value, kind.as_str()) {
            (Err(e), _) if is_config => report(&doc, e.clone()),
            (Ok(j), VALIDATING_POLICY | MUTATING_POLICY) => match read_policy(j) {
                Ok(p) => policies.push(p),
                Err(es) => es.into_iter().for_each(|e| report(&doc, e)),
            },
            (Ok(j), VALIDATING_BINDING | MUTATING_BINDING) => match read_binding(j) {
                Ok(b) => bindings.push(b),
                Err(es) => es.into_iter().for_each(|e| report(&doc, e)),
            },
            (Ok(j), VALIDATING_WEBHOOK_CONFIGURATION | MUTATING_WEBHOOK_CONFIGURATION) => {
                match read_webhook_configuration(j) {
                    Ok(c) => {
                        configuration_at
                            .insert((c.kind.clone(), c.metadata.name.clone()), doc.location());
                        configurations.push(c);
                    }
                    Err(es) => es.into_iter().for_each(|e| report(&doc, e)),
                }
            }
            (_, _) if is_config => report(
                &doc,
                format!(
                    "kind: Unsupported value: {kind:?}: expected a policy, a binding or a webhook configuration"
                ),
            ),
            _ => objects.push(doc),
        }
    }
    let params = json_documents(&args.params, &mut report)?;
    let namespaces = json_documents(&args.namespaces, &mut report)?;
    let mut olds = HashMap::new();
    for (doc, o) in expand_lists(read_documents(&args.old)?) {
        match o {
            Ok(o) => {
                olds.insert(key_of(&o), o);
            }
            Err(e) => report(&doc, e),
        }
    }
    let authorizer = read_authorizer(args.authz.as_deref())?;
    let (schemas, crds_bad) = crate::check_policy::schemas(&args.crds, &[], version)?;
    let schemas = Arc::new(schemas);
    *bad |= crds_bad;
    let inputs = PolicyInputs {
        version: Some(version),
        backend: args.backend.backend(),
        params,
        namespaces,
        time_limit: args.limit(),
        // ApplyConfigurations merge by the kinds' schemas, as the API server's do.
        schemas: Some(schemas.clone()),
        server_objects: !args.no_defaults,
        ..PolicyInputs::default()
    };
    if args.typecheck {
        typecheck(&policies, version, &schemas);
    }
    let policies_given = !policies.is_empty() || !bindings.is_empty();
    let configured = policies_given || !configurations.is_empty();
    let set = PolicySet::new(policies, bindings, &inputs).with_webhooks(configurations);
    for p in set.problems() {
        eprintln!("warning: {p}");
    }
    *bad |= report_webhook_problems(&set, &configuration_at);
    let objects = expand_lists(objects);
    warn_unknown_kinds(&objects, &schemas);
    Ok(Loaded {
        set,
        schemas,
        objects,
        olds,
        authorizer: Arc::new(authorizer),
        server_minor: (!args.no_defaults).then_some(version.minor),
        policies: policies_given,
        configured,
    })
}

/// The rules of `--authz` (none: everything allowed).
fn read_authorizer(path: Option<&str>) -> Result<RulesAuthorizer, String> {
    let Some(path) = path else {
        return Ok(RulesAuthorizer::default());
    };
    let docs = read_documents(&[path.to_string()])?;
    let rules = match docs.into_iter().next().map(|d| d.value) {
        Some(Ok(j)) => j,
        Some(Err(e)) => return Err(format!("{path}: {e}")),
        None => Json::Array(Vec::new()),
    };
    RulesAuthorizer::from_json(&rules).map_err(|e| format!("{path}: {}", e.join("; ")))
}

/// `--typecheck`: each policy's warnings against the schemas of what it matches.
fn typecheck(policies: &[Policy], version: celerity::kubernetes::KubeVersion, schemas: &CrdSet) {
    for p in policies {
        let warnings = check_policy(p, version, schemas);
        eprint!(
            "{}",
            crate::check_policy::warning_lines(&p.name, &warnings)
                .lines()
                .map(|l| format!("warning: {l}\n"))
                .collect::<String>()
        );
    }
}

/// A match condition that does not compile makes the API server refuse the configuration:
/// bad input, reported where the configuration was read. Whether there was any.
fn report_webhook_problems(
    set: &PolicySet,
    configuration_at: &HashMap<(String, String), String>,
) -> bool {
    let problems = set.webhook_problems();
    for p in &problems {
        let at = configuration_at
            .iter()
            .find(|((kind, name), _)| p.starts_with(&format!("{kind} {name:?}:")))
            .map(|(_, at)| format!("{at}: "))
            .unwrap_or_default();
        eprintln!("{at}error: {p}");
    }
    !problems.is_empty()
}

/// Warns once per kind of the manifests that neither a `--crd` nor the built-ins serve: its
/// resource name is unknown, so only rules for every resource (`*`) match it.
fn warn_unknown_kinds(objects: &[(Document, Result<Json, String>)], schemas: &CrdSet) {
    let mut seen = std::collections::BTreeSet::new();
    for (_, o) in objects {
        let Ok(o) = o else { continue };
        let (api_version, kind) = celerity_kubernetes::type_meta(o);
        if !api_version.is_empty()
            && !kind.is_empty()
            && schemas.resource_of(api_version, kind).is_none()
            && seen.insert((api_version, kind))
        {
            eprintln!(
                "warning: no CustomResourceDefinition (--crd) or built-in schema serves {api_version}, Kind={kind}: its resource name is unknown, so only rules for all resources (\"*\") match it"
            );
        }
    }
}

/// The JSON documents of files; bad ones are reported.
fn json_documents(
    paths: &[String],
    report: &mut impl FnMut(&Document, String),
) -> Result<Vec<Json>, String> {
    let mut out = Vec::new();
    for (doc, v) in expand_lists(read_documents(paths)?) {
        match v {
            Ok(j) => out.push(j),
            Err(e) => report(&doc, e),
        }
    }
    Ok(out)
}

/// One object's outcome: its request and response, or why it could not be admitted.
struct Admitted {
    request: Option<Request>,
    outcome: Result<Response, String>,
}

fn admit_one(
    object: Result<&Json, &String>,
    loaded: &Loaded,
    operation: Option<Operation>,
    args: &AdmitArgs,
) -> Admitted {
    let object = match object {
        Ok(o) => o,
        Err(e) => {
            return Admitted {
                request: None,
                outcome: Err(e.clone()),
            };
        }
    };
    let old = loaded.olds.get(&key_of(object)).cloned();
    let op = operation.unwrap_or(if old.is_some() {
        Operation::Update
    } else {
        Operation::Create
    });
    let (new, old) = match op {
        Operation::Delete => (None, Some(object.clone())),
        _ => (Some(object.clone()), old),
    };
    let stored = |o: Json| match loaded.server_minor {
        Some(minor) => server_object(minor, &o),
        None => o,
    };
    let (new, old) = (new.map(stored), old.map(stored));
    let has_namespace = object
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .is_some();
    let resolve = |k: &Gvk| {
        // A kind neither a CRD nor the built-ins serve: no resource name (only `*` rules
        // match it; said once by `warn_unknown_kinds`), namespaced if it carries one.
        Some(
            loaded
                .schemas
                .resource_of(&k.api_version(), &k.kind)
                .unwrap_or((String::new(), has_namespace)),
        )
    };
    let mut request = match Request::for_object_with(op, new, old, resolve) {
        Ok(r) => r,
        Err(e) => {
            return Admitted {
                request: None,
                outcome: Err(e),
            };
        }
    };
    request.user = UserInfo {
        username: args.user.clone().unwrap_or_default(),
        groups: args.groups.clone(),
        ..UserInfo::default()
    };
    let response = loaded.set.admit(&request, Some(loaded.authorizer.clone()));
    Admitted {
        request: Some(request),
        outcome: Ok(response),
    }
}

fn report(
    args: &AdmitArgs,
    objects: &[(Document, Result<Json, String>)],
    results: &[Admitted],
    mut bad: bool,
    policies: bool,
) -> ExitCode {
    let mut out = Out::new();
    let (mut allowed, mut denied, mut failed) = (0, 0, 0);
    for ((doc, _), a) in objects.iter().zip(results) {
        match &a.outcome {
            Ok(r) if r.allowed => allowed += 1,
            Ok(_) => denied += 1,
            Err(_) => {
                failed += 1;
                bad = true;
            }
        }
        match args.output {
            AdmitOutput::Json => {
                let mut line = object_json(doc, a);
                if args.show_object
                    && let (Json::Object(m), Some(req)) = (&mut line, &a.request)
                {
                    m.insert(
                        "received".into(),
                        json!({"object": req.object, "oldObject": req.old_object}),
                    );
                }
                out.line(line)
            }
            AdmitOutput::Text => {
                out.text(&object_text(doc, a, policies));
                if args.show_object {
                    out.text(&received_text(a));
                }
            }
            AdmitOutput::Yaml => {
                eprint!(
                    "{}",
                    object_text(doc, a, policies)
                        .lines()
                        .next()
                        .map(|l| format!("{l}\n"))
                        .unwrap_or_default()
                );
                if let Ok(r) = &a.outcome
                    && r.allowed
                    && let Some(o) = &r.object
                {
                    out.text(&format!("---\n{}", to_yaml(o)));
                }
            }
        }
    }
    let total = allowed + denied + failed;
    let mut summary = format!(
        "{total} object{}: {allowed} admitted, {denied} denied",
        if total == 1 { "" } else { "s" }
    );
    if failed > 0 {
        summary.push_str(&format!(", {failed} not admitted"));
    }
    match args.output {
        AdmitOutput::Text => out.line(summary),
        AdmitOutput::Yaml => eprintln!("{summary}"),
        AdmitOutput::Json => {}
    }
    if bad {
        ExitCode::from(BAD_INPUT)
    } else if denied > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn describe(r: &Request) -> String {
    let ns = if r.namespace.is_empty() {
        String::new()
    } else {
        format!("{}/", r.namespace)
    };
    format!("{} {ns}{}", r.kind.kind, r.display_name())
}

fn object_text(doc: &Document, a: &Admitted, policies: bool) -> String {
    let at = doc.location();
    let (r, req) = match (&a.outcome, &a.request) {
        (Err(e), _) => return format!("{at}: error: {e}\n"),
        (Ok(r), Some(req)) => (r, req),
        (Ok(_), None) => return format!("{at}: error: no request\n"),
    };
    let verdict = if r.allowed {
        "admitted".to_string()
    } else {
        format!("denied ({} {})", r.status.code, r.status.reason)
    };
    let mut s = format!("{at}: {} {verdict}\n", describe(req));
    // A body refused before admission (400) met no policy at all.
    if r.matched.is_empty() && r.status.code != 400 && (policies || r.webhooks.is_empty()) {
        s.push_str("  no policy matched\n");
    }
    for m in &r.matched {
        match &m.binding {
            Some(b) => s.push_str(&format!(
                "  matched {} {:?} with binding {b:?}\n",
                m.kind, m.policy
            )),
            None => s.push_str(&format!(
                "  matched {} {:?} (no binding)\n",
                m.kind, m.policy
            )),
        }
    }
    for w in &r.webhooks {
        let verdict = match &w.reason {
            None => "called".to_string(),
            Some(why) => format!("not called: {why}"),
        };
        s.push_str(&format!(
            "  webhook {} ({} {}): {verdict}\n",
            w.name, w.kind, w.configuration
        ));
    }
    if !r.allowed {
        s.push_str(&format!("  {}\n", r.status.message));
    }
    for w in &r.warnings {
        s.push_str(&format!("  Warning: {w}\n"));
    }
    for (k, v) in &r.audit_annotations {
        s.push_str(&format!("  audit annotation {k}: {v}\n"));
    }
    if r.allowed && r.object != req.object {
        s.push_str("  mutated object:\n");
        if let Some(o) = &r.object {
            for line in to_yaml(o).lines() {
                s.push_str(&format!("    {line}\n"));
            }
        }
    }
    s
}

/// `--show-object`: the objects the request carried to the policies.
fn received_text(a: &Admitted) -> String {
    let Some(req) = &a.request else {
        return String::new();
    };
    let mut s = String::new();
    for (name, o) in [("object", &req.object), ("oldObject", &req.old_object)] {
        if let Some(o) = o {
            s.push_str(&format!("  {name} received:\n"));
            for line in to_yaml(o).lines() {
                s.push_str(&format!("    {line}\n"));
            }
        }
    }
    s
}

fn object_json(doc: &Document, a: &Admitted) -> Json {
    let mut m = Map::new();
    m.insert("file".into(), json!(&*doc.file));
    m.insert("document".into(), json!(doc.index));
    if let Some(req) = &a.request {
        m.insert("kind".into(), json!(req.kind.kind));
        m.insert("namespace".into(), json!(req.namespace));
        m.insert("name".into(), json!(req.display_name()));
    }
    match &a.outcome {
        Err(e) => {
            m.insert("ok".into(), json!(false));
            m.insert("error".into(), json!(e));
        }
        Ok(r) => {
            if let Json::Object(resp) = response_json(r) {
                m.extend(resp);
            }
            let matched: Vec<Json> = r
                .matched
                .iter()
                .map(|x| json!({"kind": x.kind, "policy": x.policy, "binding": x.binding}))
                .collect();
            m.insert("matched".into(), Json::Array(matched));
        }
    }
    Json::Object(m)
}

fn to_yaml(o: &Json) -> String {
    serde_saphyr::to_string(o).unwrap_or_else(|e| format!("# cannot print as YAML: {e}\n"))
}

/// `--batch`: one request per line; status 1 unless every line is admitted.
/// `--no-defaults` makes every line's `defaults` false unless the line says otherwise.
fn run_batch(
    path: &str,
    backend: celerity::Backend,
    limit: Duration,
    no_defaults: bool,
) -> ExitCode {
    let watchdog = Watchdog::start(limit + GRACE);
    let mut line = 0usize;
    crate::batch::run_lines_as(
        path,
        batch_error,
        |r| r.get("allowed") == Some(&Json::Bool(true)),
        |case| {
            line += 1;
            let _watched = watchdog.watch(format!("{path}: line {line}"));
            if no_defaults && !case.contains_key("defaults") {
                let mut case = case.clone();
                case.insert("defaults".into(), Json::Bool(false));
                return batch_line(&case, backend, limit);
            }
            batch_line(case, backend, limit)
        },
    )
}

fn batch_error(e: String) -> Json {
    json!({"ok": false, "error": e})
}

fn batch_line(case: &Map<String, Json>, backend: celerity::Backend, limit: Duration) -> Json {
    match AdmissionCase::from_json(case, backend) {
        Ok(c) => response_json(&c.with_time_limit(limit).run()),
        Err(e) => batch_error(e),
    }
}
