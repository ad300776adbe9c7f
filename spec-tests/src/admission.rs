//! The admission corpus (`cases/admission/*.jsonl`): Kubernetes' own admission-policy tests
//! (`k8s.io/apiserver/pkg/admission/plugin/...`) turned into data, run against Celerity.
//!
//! Each line is one case: `name`, `source` (the Go file and test it comes from), `kind`,
//! the inputs and `expect`.
//!
//! * `"kind": "filter"` is one pass over a list of expressions, as Kubernetes' condition
//!   evaluator runs it (`cel/*_test.go`): `variables`, `conditions`, `declarations`
//!   (`params`, `authorizer`), `version`, `expressions` (`new` or `stored`), the inputs
//!   `object`, `old_object`, `params`, `namespace_object`, `request` (`operation`,
//!   `resource`, `kind`, `subresource`, `name`, `namespace`, `user`), `authz` rules,
//!   `per_call_limit` and `budget`. `expect`: `results` (one per condition, `{"value": V}`
//!   or `{"error_contains": "..."}`), or `error_contains` for an error that stops the pass,
//!   and optionally `remaining_budget`.
//! * `"kind": "compile"` compiles one `expression` (`returns`: `bool`, the default, or
//!   `string_or_null` as audit annotations) with `declarations`, `version` and
//!   `expressions`; `expect` is `{"ok": true}` or `{"error_contains": "..."}`.
//! * `"kind": "match"` matches a `request` (as a filter case's, with `object` and
//!   `old_object`) against `match_resources` (a policy's `matchConstraints`) with the
//!   `equivalents` a REST mapper would know (`[{"resource": {...}, "subresource": "",
//!   "kind": {...}, "identity": "..."}]`); `expect` is `{"matches": bool, "resource": {...},
//!   "kind": {...}}` (resource and kind optional) or `{"error_contains": "..."}`.
//! * `"kind": "admit"` is a whole request (the `cel admit --batch` line format, under
//!   `case`): `expect` holds the response fields to compare (`allowed`, `status` with any of
//!   `code`, `reason`, `message`, `message_contains`, `warnings`, `audit_annotations`,
//!   `object`).
//!
//! * `"kind": "webhook"` matches a `request` (as a filter case's, with `object`,
//!   `old_object` and `user`) against one `webhook` of a `configuration_kind`
//!   (ValidatingWebhookConfiguration by default, `api_version` v1 by default), with the
//!   `namespaces` that exist (Namespace objects) and `equivalents` as a match case's; no
//!   authorizer. `expect`: `called`, and optionally `failed_condition` (the name of the false
//!   match condition), `error_contains` (the request is rejected with this error),
//!   `reason_contains`, `resource` and `kind` (what it is called as).
//!
//! Known failures are listed in `known-failures.txt` as `admission/<file>/<name>`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use celerity::kubernetes::{ExpressionKind, parse_compatibility_version};
use celerity::{Backend, Type, value_to_json};
use celerity_kubernetes::admission::environment::{
    AdmissionEnv, Bindings, Compiled, Declarations, Evaluation, FixedBindings, ReturnTypes,
    evaluate_all,
};
use celerity_kubernetes::admission::matching::matches;
use celerity_kubernetes::admission::{
    AdmissionCase, EquivalentResource, Equivalents, Gvk, Gvr, Operation, PolicyInputs, PolicySet,
    Request, RulesAuthorizer, UserInfo, read_policy, response_json,
};
use serde_json::{Map, Value as Json, json};

/// The prefix of admission ids in the known-failures list.
pub const ID_PREFIX: &str = "admission";

/// One case.
#[derive(Clone, Debug)]
pub struct Case {
    /// The file (without `.jsonl`).
    pub file: String,
    /// The case's name.
    pub name: String,
    /// The case.
    pub json: Map<String, Json>,
}

impl Case {
    /// `admission/<file>/<name>`.
    pub fn id(&self) -> String {
        format!("{ID_PREFIX}/{}/{}", self.file, self.name)
    }

    /// The Go file the case comes from.
    pub fn source(&self) -> &str {
        self.json.get("source").and_then(Json::as_str).unwrap_or("")
    }
}

/// The directory of the committed cases.
pub fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/admission")
}

/// Every case of every `.jsonl` file in `dir`, in file order (read as the CRD corpus is).
pub fn load(dir: &Path) -> Result<Vec<Case>, String> {
    crate::crd::load(dir, &[])?
        .into_iter()
        .map(|c| match c.json {
            Json::Object(json) => Ok(Case {
                file: c.file,
                name: c.name,
                json,
            }),
            _ => Err(format!(
                "{}.jsonl: {}: a case must be an object",
                c.file, c.name
            )),
        })
        .collect()
}

/// Runs a case: `Ok(())` when Celerity gives what the case expects, else what differs.
pub fn run(case: &Case, backend: Backend) -> Result<(), String> {
    let c = &case.json;
    let expect = c.get("expect").cloned().unwrap_or(Json::Null);
    match c.get("kind").and_then(Json::as_str) {
        Some("filter") => run_filter(c, &expect, backend),
        Some("admit") => run_admit(c, &expect, backend),
        Some("compile") => run_compile(c, &expect, backend),
        Some("match") => run_match(c, &expect),
        Some("webhook") => run_webhook(c, &expect, backend),
        other => Err(format!("unknown case kind {other:?}")),
    }
}

fn run_admit(c: &Map<String, Json>, expect: &Json, backend: Backend) -> Result<(), String> {
    let mut case = c
        .get("case")
        .and_then(Json::as_object)
        .ok_or("an admit case needs a case")?
        .clone();
    // Kubernetes' tests run master's code: the newest release, unless a case names one.
    case.entry("version")
        .or_insert_with(|| Json::String(celerity::kubernetes::NEWEST_VERSION.to_string()));
    // Kubernetes' unit tests hand the plugins objects as written, never defaulted or
    // re-encoded: a case takes them so unless it says otherwise.
    case.entry("defaults").or_insert(Json::Bool(false));
    let got = match AdmissionCase::from_json(&case, backend) {
        Ok(a) => response_json(&a.run()),
        Err(e) => json!({"ok": false, "error": e}),
    };
    let Some(expect) = expect.as_object() else {
        return Err("expect must be an object".into());
    };
    for (k, want) in expect {
        if k == "status" {
            for (sk, sv) in want.as_object().into_iter().flatten() {
                if sk == "message_contains" {
                    let m = got["status"]["message"].as_str().unwrap_or("");
                    if !m.contains(sv.as_str().unwrap_or("")) {
                        return Err(format!("status.message {m:?} does not contain {sv}"));
                    }
                } else if got["status"][sk] != *sv {
                    return Err(format!("status.{sk}: got {}, want {sv}", got["status"][sk]));
                }
            }
        } else if got.get(k) != Some(want) {
            return Err(format!(
                "{k}: got {}, want {want}",
                got.get(k).unwrap_or(&Json::Null)
            ));
        }
    }
    Ok(())
}

fn string_field(v: Option<&Json>) -> String {
    v.and_then(Json::as_str).unwrap_or("").to_string()
}

fn triple(v: Option<&Json>, last: &str) -> [String; 3] {
    [
        string_field(v.and_then(|v| v.get("group"))),
        string_field(v.and_then(|v| v.get("version"))),
        string_field(v.and_then(|v| v.get(last))),
    ]
}

/// The request of a filter case, as the Go test builds its attributes.
fn filter_request(c: &Map<String, Json>) -> Result<Request, String> {
    let r = c.get("request").cloned().unwrap_or(json!({}));
    let [group, version, kind] = triple(r.get("kind"), "kind");
    let [rg, rv, resource] = triple(r.get("resource"), "resource");
    let user = r.get("user");
    Ok(Request {
        operation: r
            .get("operation")
            .and_then(Json::as_str)
            .unwrap_or("CREATE")
            .parse::<Operation>()?,
        object: c.get("object").filter(|v| !v.is_null()).cloned(),
        old_object: c.get("old_object").filter(|v| !v.is_null()).cloned(),
        kind: Gvk {
            group,
            version,
            kind,
        },
        resource: Gvr {
            group: rg,
            version: rv,
            resource,
        },
        sub_resource: string_field(r.get("subresource")),
        name: string_field(r.get("name")),
        namespace: string_field(r.get("namespace")),
        user: UserInfo {
            username: string_field(user.and_then(|u| u.get("username"))),
            groups: user
                .and_then(|u| u.get("groups"))
                .and_then(Json::as_array)
                .map(|g| {
                    g.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            ..UserInfo::default()
        },
        dry_run: false,
        options: None,
    })
}

/// The environment and declarations a filter or compile case asks for.
fn case_env(
    c: &Map<String, Json>,
    backend: Backend,
) -> Result<(AdmissionEnv, Declarations), String> {
    // Kubernetes' tests run master's code (the newest release); `version` is the
    // compatibility version a test pins (default: the release's, one below it).
    let mut env = AdmissionEnv::new(celerity::kubernetes::NEWEST_VERSION, backend);
    if let Some(v) = c.get("version").and_then(Json::as_str) {
        env = env.with_compatibility(parse_compatibility_version(v)?);
    }
    let kind = match c.get("expressions").and_then(Json::as_str) {
        Some("stored") => ExpressionKind::StoredExpressions,
        _ => ExpressionKind::NewExpressions,
    };
    let env = env.with_expression_kind(kind);
    let d = c.get("declarations");
    let flag = |k: &str| {
        d.and_then(|d| d.get(k))
            .and_then(Json::as_bool)
            .unwrap_or(false)
    };
    let decls = Declarations {
        params: flag("params"),
        authorizer: flag("authorizer"),
        patch_types: false,
    };
    Ok((env, decls))
}

fn run_compile(c: &Map<String, Json>, expect: &Json, backend: Backend) -> Result<(), String> {
    let (env, decls) = case_env(c, backend)?;
    let returns = match c.get("returns").and_then(Json::as_str) {
        Some("string_or_null") => ReturnTypes::OneOf(vec![Type::String, Type::Null]),
        _ => ReturnTypes::OneOf(vec![Type::Bool]),
    };
    let e = env.env(decls, &[]);
    let compiled = env.compile(&e, &string_field(c.get("expression")), &returns);
    match (
        compiled.program,
        expect.get("error_contains").and_then(Json::as_str),
    ) {
        (Ok(_), None) => Ok(()),
        (Err(e), Some(want)) if e.contains(want) => Ok(()),
        (Err(e), None) => Err(format!("unexpected error: {e}")),
        (Err(e), Some(want)) => Err(format!("error {e:?} does not contain {want:?}")),
        (Ok(_), Some(want)) => Err(format!("compiled; want an error containing {want:?}")),
    }
}

fn gvr_json(g: &Gvr) -> Json {
    json!({"group": g.group, "version": g.version, "resource": g.resource})
}

fn gvk_json(g: &Gvk) -> Json {
    json!({"group": g.group, "version": g.version, "kind": g.kind})
}

fn run_match(c: &Map<String, Json>, expect: &Json) -> Result<(), String> {
    let policy = json!({"kind": "ValidatingAdmissionPolicy", "metadata": {"name": "p"},
        "spec": {"matchConstraints": c.get("match_resources").cloned().unwrap_or(json!({}))}});
    let m = read_policy(&policy)
        .map_err(|e| e.join("; "))?
        .match_constraints
        .unwrap_or_default();
    let equivalents = equivalents(c);
    let request = filter_request(c)?;
    let got = matches(&m, &request, None, &equivalents);
    compare_match(got, expect, &request)
}

/// The equivalent resources a case registers.
fn equivalents(c: &Map<String, Json>) -> Equivalents {
    Equivalents {
        resources: c
            .get("equivalents")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .map(|e| {
                let [group, version, resource] = triple(e.get("resource"), "resource");
                let [kg, kv, kind] = triple(e.get("kind"), "kind");
                let resource = Gvr {
                    group,
                    version,
                    resource,
                };
                let identity = e.get("identity").and_then(Json::as_str).map_or_else(
                    || format!("{}/{}", resource.group, resource.resource),
                    str::to_string,
                );
                EquivalentResource {
                    resource,
                    subresource: string_field(e.get("subresource")),
                    kind: Gvk {
                        group: kg,
                        version: kv,
                        kind,
                    },
                    identity,
                }
            })
            .collect(),
    }
}

fn compare_match(
    got: Result<Option<(Gvr, Gvk)>, String>,
    expect: &Json,
    request: &Request,
) -> Result<(), String> {
    match (got, expect.get("error_contains").and_then(Json::as_str)) {
        (Err(e), Some(want)) if e.contains(want) => Ok(()),
        (Err(e), _) => Err(format!("error {e:?}; want {expect}")),
        (Ok(_), Some(want)) => Err(format!("no error; want one containing {want:?}")),
        (Ok(got), None) => {
            let want = expect
                .get("matches")
                .and_then(Json::as_bool)
                .unwrap_or(false);
            match got {
                None if !want => Ok(()),
                None => Err("no match; want one".into()),
                Some(_) if !want => Err("a match; want none".into()),
                Some((gvr, gvk)) => {
                    let resource = expect
                        .get("resource")
                        .cloned()
                        .unwrap_or_else(|| gvr_json(&request.resource));
                    if gvr_json(&gvr) != resource {
                        return Err(format!("matched as {}, want {resource}", gvr_json(&gvr)));
                    }
                    match expect.get("kind") {
                        Some(k) if *k != gvk_json(&gvk) => {
                            Err(format!("kind {}, want {k}", gvk_json(&gvk)))
                        }
                        _ => Ok(()),
                    }
                }
            }
        }
    }
}

fn run_webhook(c: &Map<String, Json>, expect: &Json, backend: Backend) -> Result<(), String> {
    let config = json!({
        "apiVersion": c.get("api_version").cloned()
            .unwrap_or_else(|| json!("admissionregistration.k8s.io/v1")),
        "kind": c.get("configuration_kind").cloned()
            .unwrap_or_else(|| json!("ValidatingWebhookConfiguration")),
        "metadata": {"name": "cfg"},
        "webhooks": [c.get("webhook").cloned().unwrap_or(json!({}))],
    });
    let inputs = PolicyInputs {
        version: Some(celerity::kubernetes::NEWEST_VERSION),
        backend,
        namespaces: c
            .get("namespaces")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default(),
        equivalents: equivalents(c),
        ..PolicyInputs::default()
    };
    let set = PolicySet::from_json(&[config], &inputs).map_err(|e| e.join("; "))?;
    let problems = set.webhook_problems();
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let request = filter_request(c)?;
    let response = set.admit(&request, None);
    let got = response
        .webhooks
        .first()
        .ok_or("the webhook has no result")?;
    let want_called = expect.get("called").and_then(Json::as_bool);
    if want_called != Some(got.called) {
        return Err(format!("called: got {got:?}, want {want_called:?}"));
    }
    let reason = got.reason.clone().unwrap_or_default();
    if let Some(name) = expect.get("failed_condition").and_then(Json::as_str)
        && reason != format!("matchCondition {name:?} is false")
    {
        return Err(format!("reason {reason:?}; want condition {name:?} false"));
    }
    if let Some(want) = expect.get("reason_contains").and_then(Json::as_str)
        && !reason.contains(want)
    {
        return Err(format!("reason {reason:?} does not contain {want:?}"));
    }
    let error = got.error.clone();
    match (error, expect.get("error_contains").and_then(Json::as_str)) {
        (None, None) => {}
        (Some(e), Some(want)) if e.contains(want) && !response.allowed => {}
        (e, want) => {
            return Err(format!(
                "error {e:?} (allowed: {}); want {want:?}",
                response.allowed
            ));
        }
    }
    if got.called {
        let (gvr, gvk) = got
            .matched_as
            .clone()
            .ok_or("called, but not as anything")?;
        for (k, have) in [("resource", gvr_json(&gvr)), ("kind", gvk_json(&gvk))] {
            if let Some(want) = expect.get(k)
                && *want != have
            {
                return Err(format!("called as {k} {have}, want {want}"));
            }
        }
    }
    Ok(())
}

fn run_filter(c: &Map<String, Json>, expect: &Json, backend: Backend) -> Result<(), String> {
    let (env, decls) = case_env(c, backend)?;
    let named: Vec<(String, String)> = c
        .get("variables")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|v| {
            (
                string_field(v.get("name")),
                string_field(v.get("expression")),
            )
        })
        .collect();
    let (vars, declared) = env.compile_variables(decls, &named);
    let variables: Arc<[(Arc<str>, Compiled)]> = vars
        .into_iter()
        .zip(&named)
        .map(|(c, (n, _))| (Arc::from(n.as_str()), c))
        .collect();
    let expr_env = env.env(decls, &declared);
    let limit = c.get("per_call_limit").and_then(Json::as_u64);
    let compiled: Vec<Compiled> = c
        .get("conditions")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|x| {
            let mut k = env.compile(
                &expr_env,
                x.as_str().unwrap_or(""),
                &ReturnTypes::OneOf(vec![Type::Bool]),
            );
            if let (Some(l), Ok(p)) = (limit, &k.program) {
                k.program = Ok(p.clone().with_cost_limit(Some(l)));
            }
            k
        })
        .collect();
    let request = filter_request(c)?;
    let authz: Option<Arc<dyn celerity::kubernetes::Authorizer>> = match c.get("authz") {
        None | Some(Json::Null) => None,
        Some(rules) => Some(Arc::new(
            RulesAuthorizer::from_json(rules).map_err(|e| e.join("; "))?,
        )),
    };
    let params = c.get("params").filter(|v| !v.is_null()).map_or(
        celerity::Value::Null,
        celerity_kubernetes::crd::schema::value::untyped,
    );
    let namespace = env.namespace_value(c.get("namespace_object").filter(|v| !v.is_null()));
    let fixed: FixedBindings = env.bindings(&request, params, namespace, authz.as_ref());
    let bindings = Bindings::new(&fixed, &variables);
    let exprs: Vec<Option<&Compiled>> = compiled.iter().map(Some).collect();
    let budget = c
        .get("budget")
        .and_then(Json::as_u64)
        .unwrap_or(celerity_kubernetes::admission::RUNTIME_COST_BUDGET);
    let outcome = evaluate_all(&bindings, &exprs, budget);
    compare_filter(outcome, expect)
}

fn compare_filter(
    outcome: Result<(Vec<Option<Evaluation>>, u64), String>,
    expect: &Json,
) -> Result<(), String> {
    if let Some(want) = expect.get("error_contains").and_then(Json::as_str) {
        return match outcome {
            Err(e) if e.contains(want) => Ok(()),
            Err(e) => Err(format!("error {e:?} does not contain {want:?}")),
            Ok(_) => Err(format!("no error; want one containing {want:?}")),
        };
    }
    let (results, remaining) = outcome.map_err(|e| format!("unexpected error: {e}"))?;
    if let Some(want) = expect.get("remaining_budget").and_then(Json::as_u64)
        && want != remaining
    {
        return Err(format!("remaining budget {remaining}, want {want}"));
    }
    let wants = expect
        .get("results")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    if !wants.is_empty() && wants.len() != results.len() {
        return Err(format!("{} results, want {}", results.len(), wants.len()));
    }
    for (i, (got, want)) in results.iter().zip(&wants).enumerate() {
        match (
            got,
            want.get("value"),
            want.get("error_contains").and_then(Json::as_str),
        ) {
            (Some(Evaluation::Value(v)), Some(w), _) => {
                let v = value_to_json(v).map_err(|e| e.to_string())?;
                if v != *w {
                    return Err(format!("result {i}: {v}, want {w}"));
                }
            }
            (Some(Evaluation::Error(e)), _, Some(w)) if e.contains(w) => {}
            (got, _, _) => return Err(format!("result {i}: {got:?}, want {want}")),
        }
    }
    Ok(())
}
