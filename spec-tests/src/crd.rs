//! The CRD corpus (`spec-tests/cases/crd/*.jsonl`): Kubernetes' own tests of custom
//! resource validation rules, transcribed as data (see the corpus's `README.md` for the
//! format), run through `celerity_kubernetes::crd` on both backends.
//!
//! Each case is one JSON object with a `kind`: `validate` (the rule validator on an object),
//! `compile` (the rules of one schema node: errors, transition rules, estimated costs),
//! `eval` (one expression with `self` typed by a schema), `field_path` (a rule's
//! `fieldPath`). Kinds this runner does not run yet are reported as such.

use std::path::{Path as FsPath, PathBuf};

use celerity::kubernetes::{ExpressionKind, KubeVersion, KubernetesEnv};
use celerity::{Backend, MapActivation, Value};
use celerity_kubernetes::crd::schema::fieldpath::{FieldPathOptions, valid_field_path};
use celerity_kubernetes::crd::schema::{DeclType, FieldError, Path, Schema, ValueModel};
use celerity_kubernetes::crd::{
    CompiledCrd, CrdHooks, RuleEnv, RuleOptions, SchemaValidator, ValidateOptions,
    check_schema_with_rules, compile_rules,
};
use serde_json::Value as Json;

use crate::report::Counts;
use crate::runner::Status;

/// The first component of every CRD case id.
pub const ID_PREFIX: &str = "crd";

/// The prefix of CRD corpus files in the table and on the command line (`crd:limits`).
pub const TABLE_PREFIX: &str = "crd:";

/// The directory of the corpus.
pub fn cases_dir() -> PathBuf {
    FsPath::new(env!("CARGO_MANIFEST_DIR")).join("cases/crd")
}

/// One case.
#[derive(Clone, Debug)]
pub struct Case {
    /// The file's name without `.jsonl`.
    pub file: String,
    /// The case's name.
    pub name: String,
    /// The whole case.
    pub json: Json,
}

impl Case {
    /// `crd/<file>/<name>`.
    pub fn id(&self) -> String {
        format!("{ID_PREFIX}/{}/{}", self.file, self.name)
    }

    fn kind(&self) -> &str {
        self.json.get("kind").and_then(Json::as_str).unwrap_or("")
    }
}

/// What running a case gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It behaved as the case says.
    Pass,
    /// It did not; why.
    Fail(String),
    /// The runner cannot run this kind of case yet.
    NotRun(String),
}

/// Loads every file of the corpus (or those named in `only`).
pub fn load(dir: &FsPath, only: &[String]) -> Result<Vec<Case>, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    paths.sort();
    let mut cases = Vec::new();
    for path in paths {
        let file = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !only.is_empty() && !only.contains(&file) {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let json: Json = serde_json::from_str(line)
                .map_err(|e| format!("{file}.jsonl:{}: bad JSON: {e}", i + 1))?;
            let name = json
                .get("name")
                .and_then(Json::as_str)
                .ok_or_else(|| format!("{file}.jsonl:{}: no name", i + 1))?
                .to_string();
            cases.push(Case {
                file: file.clone(),
                name,
                json,
            });
        }
    }
    Ok(cases)
}

/// Runs one case on one backend.
pub fn run_case(case: &Case, backend: Backend) -> Outcome {
    let run: fn(&Json, Backend) -> Check = match case.kind() {
        "validate" => run_validate,
        "compile" => run_compile,
        "eval" => run_eval,
        "field_path" => |j, _| run_field_path(j),
        "cardinality" => |j, _| run_cardinality(j),
        "crd" if case.json.get("env_extension").is_some() => {
            return Outcome::NotRun("needs Kubernetes' test-only `test()` library".into());
        }
        "crd" => run_crd,
        "crd_schema" => run_crd_schema,
        "openapi" => run_openapi,
        "total_cost" => |j, _| run_total_cost(j),
        other => return Outcome::NotRun(format!("kind {other:?} is not run yet")),
    };
    let result = std::panic::catch_unwind(|| run(&case.json, backend));
    match result {
        Ok(Ok(())) => Outcome::Pass,
        Ok(Err(why)) => Outcome::Fail(why),
        Err(_) => Outcome::Fail("panicked".into()),
    }
}

type Check = Result<(), String>;

fn schema_of(j: &Json, key: &str) -> Result<Schema, String> {
    let s = j.get(key).ok_or_else(|| format!("no {key}"))?;
    Schema::from_json(s, &Path::new(key)).map_err(|e| {
        let texts: Vec<String> = e.iter().map(|e| e.to_string()).collect();
        format!("bad schema: {}", texts.join("; "))
    })
}

fn flag(j: &Json, key: &str) -> bool {
    j.get(key).and_then(Json::as_bool).unwrap_or(false)
}

/// The release whose code runs a case: `"release"`, or the newest (the Go tests are
/// master's).
fn release(j: &Json) -> Result<KubeVersion, String> {
    match j.get("release").and_then(Json::as_str) {
        Some(v) => celerity::kubernetes::parse_version(v),
        None => Ok(KubeVersion::NEWEST),
    }
}

/// The compatibility version a case pins (`"version"`), if it pins one.
fn compatibility(j: &Json) -> Result<Option<KubeVersion>, String> {
    j.get("version")
        .and_then(Json::as_str)
        .map(str::parse)
        .transpose()
}

/// The compatibility version a case runs at: its own, or its release's default.
fn version(j: &Json) -> Result<KubeVersion, String> {
    Ok(compatibility(j)?.unwrap_or(release(j)?.previous()))
}

fn rule_options(j: &Json, backend: Backend, kind: ExpressionKind) -> Result<RuleOptions, String> {
    Ok(RuleOptions::default()
        .version(release(j)?)
        .compatibility(compatibility(j)?)
        .expressions(kind)
        .per_call_limit(
            j.get("per_call_limit")
                .and_then(Json::as_u64)
                .unwrap_or(1_000_000),
        )
        .backend(backend))
}

fn run_validate(j: &Json, backend: Backend) -> Check {
    let schema = schema_of(j, "schema")?;
    let is_root = flag(j, "is_root");
    let decl_root = j
        .get("decl_type_is_root")
        .and_then(Json::as_bool)
        .unwrap_or(is_root);
    let options = rule_options(j, backend, ExpressionKind::StoredExpressions)?;
    let decl = DeclType::from_schema(&schema, decl_root);
    let validator = SchemaValidator::with_decl_type(&schema, is_root, decl.as_ref(), &options);
    let object = j.get("object").cloned().unwrap_or(Json::Null);
    let old = j.get("old_object");
    let budget = j
        .get("cost_budget")
        .and_then(Json::as_i64)
        .unwrap_or(10_000_000);
    let validate = ValidateOptions::default()
        .field_root(match j.get("field_root").and_then(Json::as_str) {
            Some(r) => Path::new(r),
            None => Path::root(),
        })
        .cost_budget(budget)
        .ratcheting(j.get("ratcheting").and_then(Json::as_bool).unwrap_or(true))
        .correlate(flag(j, "with_ratcheting"));
    let got = validator.validate(&object, old, &validate);
    check_errors(j, &got.errors)?;
    check_warnings(j, &got.warnings)?;
    let cost = budget - got.remaining_budget;
    if let Some(want) = j.get("cost").and_then(Json::as_i64)
        && cost != want
    {
        return Err(format!("cost {cost}, want {want}"));
    }
    if let Some(want) = j.get("remaining_budget").and_then(Json::as_i64)
        && got.remaining_budget != want
    {
        return Err(format!(
            "remaining budget {}, want {want}",
            got.remaining_budget
        ));
    }
    if flag(j, "skipped") && got.remaining_budget != budget {
        return Err(format!("not skipped: cost {cost}"));
    }
    Ok(())
}

fn matches(m: &Json, e: &FieldError) -> bool {
    let text = e.to_string();
    let field = |k: &str| m.get(k).and_then(Json::as_str);
    field("type").is_none_or(|t| t == e.error_type.as_str())
        && field("field").is_none_or(|f| f == e.field)
        && field("detail").is_none_or(|d| d == e.detail)
        && field("contains").is_none_or(|c| text.contains(c))
        && field("text").is_none_or(|t| t == text)
}

fn check_errors(j: &Json, errors: &[FieldError]) -> Check {
    let Some(want) = j.get("errors").and_then(Json::as_array) else {
        return Ok(());
    };
    let shown = || {
        errors
            .iter()
            .map(|e| format!("[{}] {e}", e.error_type.as_str()))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let fail = |why: &str| Err(format!("{why}; got: {}", shown()));
    if flag(j, "errors_any_count") {
        if errors.is_empty() {
            return fail("expected errors, got none");
        }
        if !errors.iter().all(|e| want.iter().any(|m| matches(m, e))) {
            return fail("an error does not match");
        }
        return Ok(());
    }
    if flag(j, "errors_as_set") {
        let got: std::collections::BTreeSet<String> =
            errors.iter().map(|e| e.to_string()).collect();
        let expected: std::collections::BTreeSet<String> = want
            .iter()
            .filter_map(|m| m.get("text").and_then(Json::as_str).map(String::from))
            .collect();
        return if got == expected {
            Ok(())
        } else {
            fail(&format!("want the set {expected:?}"))
        };
    }
    let subset = flag(j, "errors_subset");
    if !subset && errors.len() != want.len() {
        return fail(&format!("{} errors, want {}", errors.len(), want.len()));
    }
    if flag(j, "errors_unordered") || subset {
        let mut used = vec![false; errors.len()];
        for m in want {
            match (0..errors.len()).find(|&i| !used[i] && matches(m, &errors[i])) {
                Some(i) => used[i] = true,
                None => return fail(&format!("nothing matches {m}")),
            }
        }
        return Ok(());
    }
    for (i, (m, e)) in want.iter().zip(errors).enumerate() {
        if !matches(m, e) {
            return fail(&format!("error {i} does not match {m}"));
        }
    }
    Ok(())
}

fn check_warnings(j: &Json, warnings: &[String]) -> Check {
    let Some(want) = j.get("warnings").and_then(Json::as_array) else {
        return Ok(());
    };
    let want: Vec<&str> = want.iter().filter_map(Json::as_str).collect();
    if want.len() != warnings.len() {
        return Err(format!("warnings {warnings:?}, want {want:?}"));
    }
    let exact = flag(j, "warnings_exact");
    let mut used = vec![false; warnings.len()];
    for w in &want {
        let found = (0..warnings.len()).find(|&i| {
            !used[i]
                && if exact {
                    warnings[i] == *w
                } else {
                    warnings[i].contains(w)
                }
        });
        match found {
            Some(i) => used[i] = true,
            None => return Err(format!("warnings {warnings:?}, want {want:?}")),
        }
    }
    Ok(())
}

fn run_compile(j: &Json, backend: Backend) -> Check {
    let schema = schema_of(j, "schema")?;
    let kind = match j.get("env").and_then(Json::as_str) {
        Some("stored") => ExpressionKind::StoredExpressions,
        _ => ExpressionKind::NewExpressions,
    };
    let options = rule_options(j, backend, kind)?;
    let decl = DeclType::from_schema(&schema, flag(j, "is_root"));
    let results = compile_rules(&schema, decl.as_ref(), &options)?;
    let want = j.get("rules").and_then(Json::as_array).ok_or("no rules")?;
    if want.len() != results.len() {
        return Err(format!("{} results, want {}", results.len(), want.len()));
    }
    for (i, (w, r)) in want.iter().zip(&results).enumerate() {
        let at = |m: String| format!("rule {i} ({:?}): {m}", r.rule.rule);
        if let Some(e) = w.get("error") {
            match (e, &r.error) {
                (Json::Null, None) => {}
                (Json::Null, Some(got)) => return Err(at(format!("unexpected error {got}"))),
                (_, None) => return Err(at(format!("no error, want {e}"))),
                (_, Some(got)) => {
                    let ty = e.get("type").and_then(Json::as_str);
                    let contains = e.get("contains").and_then(Json::as_str).unwrap_or("");
                    if ty.is_some_and(|t| t != got.error_type.as_str())
                        || !got.detail.contains(contains)
                    {
                        return Err(at(format!(
                            "error [{}] {got}, want {e}",
                            got.error_type.as_str()
                        )));
                    }
                }
            }
        }
        if let Some(want) = w.get("message_expression_error").and_then(Json::as_str) {
            match &r.message_expression_error {
                Some(got) if got.detail.contains(want) => {}
                other => {
                    return Err(at(format!(
                        "message expression error {other:?}, want {want:?}"
                    )));
                }
            }
        }
        if let Some(t) = w.get("transition_rule").and_then(Json::as_bool)
            && t != r.uses_old_self
        {
            return Err(at(format!("transition rule {}, want {t}", r.uses_old_self)));
        }
        if let Some(c) = w.get("max_cost").and_then(Json::as_u64)
            && c != r.max_cost
        {
            return Err(at(format!("max cost {}, want {c}", r.max_cost)));
        }
        if let Some(c) = w.get("max_cost_at_least").and_then(Json::as_u64)
            && r.max_cost < c
        {
            return Err(at(format!("max cost {}, want at least {c}", r.max_cost)));
        }
        if let Some(c) = w.get("max_cost_at_most").and_then(Json::as_u64)
            && r.max_cost > c
        {
            return Err(at(format!("max cost {}, want at most {c}", r.max_cost)));
        }
        if let Some(c) = w.get("max_cardinality").and_then(Json::as_u64)
            && c != r.max_cardinality
        {
            return Err(at(format!(
                "max cardinality {}, want {c}",
                r.max_cardinality
            )));
        }
        if flag(w, "program_nil") && r.program.is_some() {
            return Err(at("a program, want none".into()));
        }
    }
    Ok(())
}

fn run_eval(j: &Json, backend: Backend) -> Check {
    let schema = schema_of(j, "schema")?;
    let is_root = flag(j, "is_root");
    let options = rule_options(j, backend, ExpressionKind::StoredExpressions)?;
    let decl = DeclType::from_schema(&schema, is_root).ok_or("the schema has no CEL type")?;
    let envs = RuleEnv::new(&decl, &options);
    let env = if flag(j, "optional_old_self") {
        &envs.optional
    } else {
        &envs.plain
    };
    let expr = j.get("expr").and_then(Json::as_str).ok_or("no expr")?;
    let model = ValueModel::new(&schema, is_root);
    let mut vars = MapActivation::new();
    if let Some(Json::Object(members)) = j.get("vars") {
        for (k, v) in members {
            let value = model.to_value(v);
            let value = if k == "oldSelf" && flag(j, "optional_old_self") {
                Value::optional_of(value)
            } else {
                value
            };
            vars.bind(k.as_str(), value);
        }
    }
    let ast = match env.compile(expr) {
        Ok(a) => a,
        Err(issues) => {
            return match j.get("compile_error").and_then(Json::as_str) {
                Some(want) if issues.to_string().contains(want) => Ok(()),
                _ => Err(format!("compile error: {issues}")),
            };
        }
    };
    if let Some(want) = j.get("compile_error") {
        return Err(format!("compiled, want compile error {want}"));
    }
    let program = env
        .program_with(&ast, celerity::ProgramOptions::default().backend(backend))
        .map_err(|e| format!("program: {e}"))?;
    let (result, details) = program.eval_details(&vars);
    if let Some(want) = j.get("cost").and_then(Json::as_u64)
        && details.actual_cost != want
    {
        return Err(format!("cost {}, want {want}", details.actual_cost));
    }
    if let Some(want) = j.get("estimate").and_then(Json::as_array) {
        let est = env.estimate_cost(&ast, &envs.sizes).ok_or("no estimate")?;
        let want: Vec<u64> = want.iter().filter_map(Json::as_u64).collect();
        if want != [est.min, est.max] {
            return Err(format!(
                "estimate [{}, {}], want {want:?}",
                est.min, est.max
            ));
        }
    }
    match (result, j.get("value"), j.get("error")) {
        (Ok(v), Some(Json::String(want)), _) => {
            let expected = KubernetesEnv::newest().stored().build();
            let wv = expected
                .compile(want)
                .ok()
                .and_then(|a| expected.program(&a).ok())
                .and_then(|p| p.eval(&MapActivation::new()).ok())
                .ok_or_else(|| format!("bad expected value {want}"))?;
            if v.identical(&wv) || v == wv {
                Ok(())
            } else {
                Err(format!(
                    "value {}, want {want}",
                    celerity::to_cel_literal(&v)
                ))
            }
        }
        (Err(e), _, Some(Json::String(want))) if e.to_string().contains(want.as_str()) => Ok(()),
        (Err(e), _, _) => Err(format!("error {e}")),
        (Ok(v), _, _) => Err(format!(
            "value {}, want an error",
            celerity::to_cel_literal(&v)
        )),
    }
}

fn run_crd(j: &Json, backend: Backend) -> Check {
    let crd = j.get("crd").ok_or("no crd")?;
    let options = celerity_kubernetes::crd::CrdOptions::default()
        .version(release(j)?)
        .compatibility(compatibility(j)?)
        .backend(backend);
    let errors = match CompiledCrd::new_or_update(crd, j.get("old_crd"), &options) {
        Ok(_) => Vec::new(),
        Err(e) => e.errors,
    };
    check_errors(j, &errors)
}

fn run_crd_schema(j: &Json, backend: Backend) -> Check {
    use celerity_kubernetes::crd::schema::structural::SchemaCheckOptions;
    let path = Path::new("spec")
        .child("validation")
        .child("openAPIV3Schema");
    let opt = |k: &str| {
        j.get("options")
            .and_then(|o| o.get(k))
            .and_then(Json::as_bool)
            .unwrap_or(false)
    };
    let check_options = SchemaCheckOptions {
        status_enabled: flag(j, "status_enabled"),
        allow_defaults: opt("allowDefaults"),
        disallow_defaults_reason: String::new(),
        require_valid_property_type: opt("requireValidPropertyType"),
        require_structural_schema: opt("requireStructuralSchema"),
        require_pruned_defaults: opt("requirePrunedDefaults"),
        require_atomic_set_type: opt("requireAtomicSetType"),
        require_map_list_keys_map_set_validation: opt("requireMapListKeysMapSetValidation"),
    };
    let errors = match j.get("schema") {
        None | Some(Json::Null) => Vec::new(),
        Some(s) => {
            let schema = match Schema::from_json(s, &path) {
                Ok(s) => s,
                Err(e) => return check_errors(j, &e),
            };
            let options = RuleOptions::default()
                .version(release(j)?)
                .compatibility(compatibility(j)?)
                .expressions(ExpressionKind::NewExpressions)
                .per_call_limit(1_000_000)
                .backend(backend);
            let mut hooks = CrdHooks::new(&options, Default::default(), false);
            check_schema_with_rules(&schema, &path, &check_options, &mut hooks)
        }
    };
    check_errors(j, &errors)
}

fn run_openapi(j: &Json, backend: Backend) -> Check {
    use celerity_kubernetes::crd::schema::openapi::Validator;
    let schema = schema_of(j, "schema")?;
    let object = j.get("object").cloned().unwrap_or(Json::Null);
    let minor = version(j)?.minor;
    let validator = Validator::for_version(&schema, minor);
    let root = Path::root();
    let mut errors = match (flag(j, "ratcheting"), j.get("old_object")) {
        (true, Some(old)) => validator.validate_update(&object, old, &root).0,
        _ => validator.validate(&object, &root),
    };
    if flag(j, "with_cel") {
        let options = rule_options(j, backend, ExpressionKind::StoredExpressions)?;
        let cel = SchemaValidator::new(&schema, false, &options);
        errors.extend(
            cel.validate(&object, j.get("old_object"), &ValidateOptions::default())
                .errors,
        );
    }
    if let Some(valid) = j.get("valid").and_then(Json::as_bool)
        && valid != errors.is_empty()
    {
        let shown: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(format!(
            "valid {}, want {valid}: {shown:?}",
            errors.is_empty()
        ));
    }
    check_errors(j, &errors)
}

fn run_cardinality(j: &Json) -> Check {
    use celerity_kubernetes::crd::{max_elements, multiply_with_overflow_guard};
    let chain = j.get("chain").and_then(Json::as_array).ok_or("no chain")?;
    let mut cardinality = Some(1u64);
    for pair in chain.windows(2) {
        let parent = Schema::from_json(&pair[0], &Path::new("chain")).map_err(|_| "bad schema")?;
        cardinality = cardinality
            .zip(max_elements(&parent))
            .map(|(c, n)| multiply_with_overflow_guard(c, n));
    }
    let want = j.get("max_cardinality").and_then(Json::as_u64);
    if cardinality == want {
        Ok(())
    } else {
        Err(format!("cardinality {cardinality:?}, want {want:?}"))
    }
}

fn run_total_cost(j: &Json) -> Check {
    let mut total = celerity_kubernetes::crd::TotalCost::default();
    for c in j.get("costs").and_then(Json::as_array).ok_or("no costs")? {
        let path = c.get("path").and_then(Json::as_str).unwrap_or("");
        let cost = c
            .as_u64()
            .or_else(|| c.get("cost").and_then(Json::as_u64))
            .ok_or("a cost")?;
        total.observe(path, cost);
    }
    let want_total = j.get("expected_total").and_then(Json::as_u64);
    if want_total != Some(total.total) {
        return Err(format!("total {}, want {want_total:?}", total.total));
    }
    let want: Vec<u64> = j
        .get("expected_expensive")
        .and_then(Json::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|e| e.as_u64().or_else(|| e.get("cost").and_then(Json::as_u64)))
                .collect()
        })
        .unwrap_or_default();
    let got: Vec<u64> = total.most_expensive.iter().map(|(_, c)| *c).collect();
    if got == want {
        Ok(())
    } else {
        Err(format!("most expensive {got:?}, want {want:?}"))
    }
}

fn run_field_path(j: &Json) -> Check {
    let schema = schema_of(j, "schema")?;
    let path = j
        .get("field_path")
        .and_then(Json::as_str)
        .ok_or("no field_path")?;
    let got = valid_field_path(path, &schema, FieldPathOptions::default());
    match (got, j.get("error")) {
        (Ok(_), Some(Json::String(want))) => Err(format!("valid, want error {want:?}")),
        (Ok((p, _)), _) => match j.get("path").and_then(Json::as_str) {
            Some(want) if p.to_string() != want => Err(format!("path {p}, want {want}")),
            _ => Ok(()),
        },
        (Err(e), Some(Json::String(want))) if e.contains(want.as_str()) => Ok(()),
        (Err(e), _) => Err(format!("error {e:?}")),
    }
}

/// One case's result.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// `crd/<file>/<name>`.
    pub id: String,
    /// The file.
    pub file: String,
    /// How it went.
    pub status: Status,
}

/// Runs every case on one backend.
pub fn run_corpus(cases: &[Case], backend: Backend) -> Vec<CaseResult> {
    let stage = format!("{backend:?}").to_lowercase();
    cases
        .iter()
        .map(|c| CaseResult {
            id: c.id(),
            file: c.file.clone(),
            status: match run_case(c, backend) {
                Outcome::Pass => Status::Passed,
                Outcome::Fail(reason) => Status::Failed {
                    stage: stage.clone(),
                    reason,
                },
                Outcome::NotRun(reason) => Status::Skipped {
                    stage: "crd".into(),
                    reason,
                },
            },
        })
        .collect()
}

/// The table's rows: one per file, `crd:<file>`.
pub fn counts(results: &[CaseResult]) -> Vec<(String, Counts)> {
    let mut rows: Vec<(String, Counts)> = Vec::new();
    for r in results {
        let name = format!("{TABLE_PREFIX}{}", r.file);
        if rows.last().is_none_or(|(n, _)| *n != name) {
            rows.push((name, Counts::default()));
        }
        if let Some((_, c)) = rows.last_mut() {
            c.add(&r.status);
        }
    }
    rows
}

/// The summary's `crd` member: counts per file and in total.
pub fn summary_json(results: &[CaseResult]) -> Json {
    let rows = counts(results);
    let mut files = serde_json::Map::new();
    let mut total = Counts::default();
    for (name, c) in &rows {
        let short = name.strip_prefix(TABLE_PREFIX).unwrap_or(name);
        files.insert(
            short.to_string(),
            serde_json::json!({"passed": c.passed, "failed": c.failed, "skipped": c.skipped}),
        );
        total.passed += c.passed;
        total.failed += c.failed;
        total.skipped += c.skipped;
    }
    serde_json::json!({
        "files": files,
        "totals": {"passed": total.passed, "failed": total.failed, "skipped": total.skipped},
    })
}
