//! `--batch FILE`: one JSON case per input line, one JSON result per line, in order.
//!
//! Every input line gets exactly one output line, so the two stay aligned: a blank or
//! malformed line, an unknown field or a line that cannot run prints
//! `{"ok":false,"phase":"input","error":"..."}`. The command exits with status 0 when
//! every line printed `"ok":true`, 1 otherwise, and 2 when the file cannot be read.
//!
//! | mode | input fields | output |
//! | --- | --- | --- |
//! | `eval` | `expr`, `vars`, `decls`, `container`, `schema`, `is_root`, `optional_old_self` | `{"ok":true,"type":T,"value":V}` (`"cost"` with `--cost`); `{"ok":true,"skipped":true}` for a transition rule without `oldSelf` |
//! | `check` | as `eval` | `{"ok":true,"type":T}` |
//! | `cost` | as `eval`, and `sizes` (`{"self.items": 10}` or `[min, max]`) | `{"ok":true,"min":N,"max":N}` |
//! | `validate` | `schema`, `object`, `old_object`, `cost_budget`, `per_call_limit`, `field_root`, `is_root` | `{"ok":true,"errors":[...],"warnings":[...],"remaining_budget":N}` |
//!
//! A line with a `schema` (an OpenAPI v3 schema, as in a CRD) types `self` (and `oldSelf`,
//! from `vars`) by it and converts their JSON as the API server does, in the environment of
//! a CRD's rules (the Kubernetes profile's version; the newest without one).

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;

use celerity::kubernetes::KubernetesEnv;
use celerity::{Env, MapActivation, PathSizes, SizeRange, Value};
use celerity_kubernetes::crd::schema::{DeclType, FieldError, Path, Schema, ValueModel};
use celerity_kubernetes::crd::{
    OLD_SELF_VARIABLE, RuleEnv, RuleOptions, SELF_VARIABLE, SchemaValidator, ValidateOptions,
};
use serde_json::{Map, Value as Json, json};

use crate::env::{EnvArgs, Profile, build_env, json_variable, parse_decls};
use crate::eval::{EvalArgs, Outcome, RunOptions, evaluate};
use crate::input::{BatchLine, BatchLines};
use crate::output::Out;
use crate::{BAD_INPUT, bad_input};

/// What a batch computes for each line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Eval,
    Check,
    Cost,
}

impl Mode {
    fn fields(self) -> &'static [&'static str] {
        match self {
            Mode::Eval | Mode::Check => &[
                "expr",
                "vars",
                "decls",
                "container",
                "schema",
                "is_root",
                "optional_old_self",
            ],
            Mode::Cost => &[
                "expr",
                "vars",
                "decls",
                "container",
                "schema",
                "is_root",
                "optional_old_self",
                "sizes",
            ],
        }
    }
}

/// The fields of a `validate` line.
const VALIDATE_FIELDS: &[&str] = &[
    "schema",
    "object",
    "old_object",
    "cost_budget",
    "per_call_limit",
    "field_root",
    "is_root",
];

/// A line's error, in the output's form.
fn input_error(error: impl Into<String>) -> Json {
    json!({"ok": false, "phase": "input", "error": error.into()})
}

/// Runs a batch file through `line`, printing one result per line; the status says whether
/// every line was `"ok": true`.
fn run_lines(path: &str, line: impl FnMut(&Map<String, Json>) -> Json) -> ExitCode {
    run_lines_as(
        path,
        input_error,
        |r| r.get("ok") == Some(&Json::Bool(true)),
        line,
    )
}

/// Runs a batch file through `line`, printing one result per line, or the line's `error`
/// when it is not a JSON object; the status says whether every line `passed`.
pub(crate) fn run_lines_as(
    path: &str,
    error: impl Fn(String) -> Json,
    passed: impl Fn(&Json) -> bool,
    mut line: impl FnMut(&Map<String, Json>) -> Json,
) -> ExitCode {
    let lines = match BatchLines::open(path) {
        Ok(l) => l,
        Err(e) => return bad_input(e),
    };
    let mut out = Out::new();
    let mut all_ok = true;
    for text in lines {
        let result = match text {
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(BAD_INPUT);
            }
            Ok(BatchLine::Bad(why)) => error(why),
            Ok(BatchLine::Text(t)) if t.trim().is_empty() => error("blank line".into()),
            Ok(BatchLine::Text(t)) => match serde_json::from_str::<Json>(&t) {
                Ok(Json::Object(case)) => line(&case),
                Ok(_) => error("a line must be a JSON object".into()),
                Err(e) => error(format!("invalid JSON: {e}")),
            },
        };
        all_ok &= passed(&result);
        out.line(result);
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The first field of `case` not in `allowed`.
fn unknown_field(case: &Map<String, Json>, allowed: &[&str]) -> Option<Json> {
    case.keys()
        .find(|k| !allowed.contains(&k.as_str()))
        .map(|k| input_error(format!("unknown field \"{k}\"")))
}

/// `cel eval --batch`.
pub(crate) fn run_eval_batch(path: &str, args: &EvalArgs) -> ExitCode {
    let mut profile = match Profile::parse(args.env.profile.as_deref(), args.env.stored) {
        Ok(p) => p,
        Err(e) => return bad_input(e),
    };
    if args.cost_limit.is_some() {
        profile.set_cost_limit(args.cost_limit);
    }
    let ctx = match Context::new(&args.env, profile) {
        Ok(c) => c,
        Err(e) => return bad_input(e),
    };
    // Dumps would interleave with the JSON lines: batches only choose the backend.
    let run = RunOptions {
        backend: Some(args.backend.backend()),
        dump: Vec::new(),
    };
    run_lines(path, |case| {
        if let Some(e) = unknown_field(case, Mode::Eval.fields()) {
            return e;
        }
        match ctx.eval_line(case, &run, args.cost_limit) {
            Ok(LineResult::Outcome(o)) => o.to_json(args.cost),
            Ok(LineResult::Skipped) => json!({"ok": true, "skipped": true}),
            Err(e) => e,
        }
    })
}

/// `cel check --batch` and `cel cost --batch`.
pub(crate) fn run_static_batch(path: &str, env: &EnvArgs, mode: Mode) -> ExitCode {
    let profile = match Profile::parse(env.profile.as_deref(), env.stored) {
        Ok(p) => p,
        Err(e) => return bad_input(e),
    };
    let ctx = match Context::new(env, profile) {
        Ok(c) => c,
        Err(e) => return bad_input(e),
    };
    run_lines(path, |case| {
        if let Some(e) = unknown_field(case, mode.fields()) {
            return e;
        }
        ctx.static_line(case, mode).unwrap_or_else(|e| e)
    })
}

/// What every line of a batch shares.
struct Context<'a> {
    env: &'a EnvArgs,
    profile: Profile,
    pool: Option<celerity::DescriptorPool>,
}

/// A line's result: an outcome to print as `eval` prints it, or JSON as it is.
enum LineResult {
    Outcome(Outcome),
    Skipped,
}

/// An environment for one line, and the values of its variables.
struct LineEnv {
    env: Env,
    vars: MapActivation,
    /// With a schema: the sizes its nodes may have, for estimates.
    sizes: Option<celerity_kubernetes::crd::schema::DeclSizes>,
    /// With a schema and no `optional_old_self`: `oldSelf` is absent or `null`.
    old_self_missing: bool,
}

impl<'a> Context<'a> {
    fn new(env: &'a EnvArgs, profile: Profile) -> Result<Context<'a>, String> {
        let pool = env.descriptor_pool()?;
        Ok(Context { env, profile, pool })
    }

    fn eval_line(
        &self,
        case: &Map<String, Json>,
        run: &RunOptions,
        cost_limit: Option<u64>,
    ) -> Result<LineResult, Json> {
        let expr = expr_of(case)?;
        let line = self.line_env(case, cost_limit)?;
        if line.old_self_missing {
            // A transition rule without an old value is not run (and costs nothing).
            if let Ok(ast) = line.env.compile(expr)
                && ast
                    .checked()
                    .is_some_and(|c| c.references.values().any(|r| r.name == OLD_SELF_VARIABLE))
            {
                return Ok(LineResult::Skipped);
            }
        }
        Ok(LineResult::Outcome(evaluate(
            &line.env, expr, &line.vars, run,
        )))
    }

    fn static_line(&self, case: &Map<String, Json>, mode: Mode) -> Result<Json, Json> {
        let expr = expr_of(case)?;
        let line = self.line_env(case, None)?;
        let ast = match line.env.compile(expr) {
            Ok(a) => a,
            Err(issues) => {
                return Ok(json!({"ok": false, "phase": "compile", "error": issues.to_string()}));
            }
        };
        Ok(match mode {
            Mode::Check | Mode::Eval => {
                let ty = ast.result_type().map(|t| t.to_string()).unwrap_or_default();
                json!({"ok": true, "type": ty})
            }
            Mode::Cost => {
                let est = match &line.sizes {
                    Some(s) => line.env.estimate_cost(&ast, s),
                    None => line.env.estimate_cost(&ast, &sizes_of(case)?),
                }
                .unwrap_or_default();
                json!({"ok": true, "min": est.min, "max": est.max})
            }
        })
    }

    /// The line's environment: typed by its schema if it has one, else from its
    /// declarations and the command's.
    fn line_env(&self, case: &Map<String, Json>, cost_limit: Option<u64>) -> Result<LineEnv, Json> {
        match case.get("schema") {
            Some(schema) => self.schema_env(case, schema, cost_limit),
            None => self.declared_env(case),
        }
    }

    fn declared_env(&self, case: &Map<String, Json>) -> Result<LineEnv, Json> {
        let mut decl_texts = self.env.decls.clone();
        match case.get("decls") {
            None | Some(Json::Null) => {}
            Some(Json::Object(obj)) => {
                for (name, ty) in obj {
                    let t = ty.as_str().ok_or_else(|| {
                        input_error(format!("decls.{name}: expected a type string"))
                    })?;
                    decl_texts.push(format!("{name}:{t}"));
                }
            }
            Some(_) => return Err(input_error("decls must be a JSON object")),
        }
        let decls = parse_decls(&decl_texts).map_err(input_error)?;
        let mut user = MapActivation::new();
        for (name, j) in vars_of(case)? {
            let v = json_variable(name, j, &decls, self.pool.as_ref()).map_err(input_error)?;
            user.bind(name.as_str(), v);
        }
        let names: Vec<String> = user.iter().map(|(n, _)| n.to_string()).collect();
        let container = case
            .get("container")
            .and_then(Json::as_str)
            .or(self.env.container.as_deref());
        let env = build_env(&decls, names, container, &self.profile, self.pool.as_ref());
        let mut vars = MapActivation::new();
        self.profile.bind_defaults(&env, &mut vars);
        for (name, v) in user.iter() {
            vars.bind(name, v.clone());
        }
        Ok(LineEnv {
            env,
            vars,
            sizes: None,
            old_self_missing: false,
        })
    }

    fn schema_env(
        &self,
        case: &Map<String, Json>,
        schema: &Json,
        cost_limit: Option<u64>,
    ) -> Result<LineEnv, Json> {
        if case.contains_key("decls") || case.contains_key("container") {
            return Err(input_error(
                "a line with a schema declares self and oldSelf from it: decls and container do not apply",
            ));
        }
        let schema = parse_schema(schema)?;
        let is_root = flag(case, "is_root")?;
        let optional = flag(case, "optional_old_self")?;
        let kube = self
            .profile
            .kubernetes()
            .cloned()
            .unwrap_or_else(KubernetesEnv::newest);
        let decl = DeclType::from_schema(&schema, is_root)
            .ok_or_else(|| input_error("schema: the schema has no CEL type"))?;
        let options = RuleOptions::default()
            .version(kube.version())
            .expressions(kube.expression_kind())
            .per_call_limit(cost_limit.unwrap_or(kube.profile().options.per_call_cost_limit))
            .backend(celerity::Backend::Auto);
        let envs = RuleEnv::new(&decl, &options);
        let model = ValueModel::new(&schema, is_root);
        let mut vars = MapActivation::new();
        let mut old = None;
        for (name, j) in vars_of(case)? {
            match name.as_str() {
                SELF_VARIABLE => {
                    vars.bind(SELF_VARIABLE, model.to_value(j));
                }
                OLD_SELF_VARIABLE if !j.is_null() => old = Some(model.to_value(j)),
                OLD_SELF_VARIABLE => {}
                other => {
                    return Err(input_error(format!(
                        "vars.{other}: with a schema, only self and oldSelf are variables"
                    )));
                }
            }
        }
        let old_self_missing = !optional && old.is_none();
        match (optional, old) {
            (true, Some(v)) => vars.bind(OLD_SELF_VARIABLE, Value::optional_of(v)),
            (true, None) => vars.bind(OLD_SELF_VARIABLE, Value::optional_none()),
            (false, Some(v)) => vars.bind(OLD_SELF_VARIABLE, v),
            (false, None) => &mut vars,
        };
        Ok(LineEnv {
            env: if optional { envs.optional } else { envs.plain },
            vars,
            sizes: Some(envs.sizes),
            old_self_missing,
        })
    }
}

fn expr_of(case: &Map<String, Json>) -> Result<&str, Json> {
    match case.get("expr") {
        Some(Json::String(e)) => Ok(e),
        Some(_) => Err(input_error("expr must be a string")),
        None => Err(input_error("missing \"expr\"")),
    }
}

fn vars_of(case: &Map<String, Json>) -> Result<Vec<(&String, &Json)>, Json> {
    match case.get("vars") {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Object(m)) => Ok(m.iter().collect()),
        Some(_) => Err(input_error("vars must be a JSON object")),
    }
}

fn flag(case: &Map<String, Json>, key: &str) -> Result<bool, Json> {
    match case.get(key) {
        None | Some(Json::Null) => Ok(false),
        Some(Json::Bool(b)) => Ok(*b),
        Some(_) => Err(input_error(format!("{key} must be a boolean"))),
    }
}

fn parse_schema(schema: &Json) -> Result<Schema, Json> {
    Schema::from_json(schema, &Path::new("schema")).map_err(|errs| {
        let texts: Vec<String> = errs.iter().map(FieldError::to_string).collect();
        input_error(texts.join("; "))
    })
}

fn sizes_of(case: &Map<String, Json>) -> Result<PathSizes, Json> {
    let mut sizes = PathSizes::default();
    match case.get("sizes") {
        None | Some(Json::Null) => {}
        Some(Json::Object(m)) => {
            for (path, s) in m {
                let range = match s {
                    Json::Number(n) => n.as_u64().map(|max| SizeRange { min: 0, max }),
                    Json::Array(a) if a.len() == 2 => match (a[0].as_u64(), a[1].as_u64()) {
                        (Some(min), Some(max)) => Some(SizeRange { min, max }),
                        _ => None,
                    },
                    _ => None,
                }
                .ok_or_else(|| input_error(format!("sizes.{path}: expected N or [MIN, MAX]")))?;
                sizes.0.insert(path.clone(), range);
            }
        }
        Some(_) => return Err(input_error("sizes must be a JSON object")),
    }
    Ok(sizes)
}

/// `cel validate --batch`: the rules of each line's schema run against its object.
pub(crate) fn run_validate_batch(
    path: &str,
    version: celerity::kubernetes::KubeVersion,
) -> ExitCode {
    let mut cache = ValidatorCache::default();
    run_lines(path, |case| {
        if let Some(e) = unknown_field(case, VALIDATE_FIELDS) {
            return e;
        }
        validate_line(case, version, &mut cache).unwrap_or_else(|e| e)
    })
}

/// Compiled validators of recent lines, by schema text and settings (batches often repeat
/// one schema).
#[derive(Default)]
struct ValidatorCache {
    entries: HashMap<(String, bool, u64), Arc<SchemaValidator>>,
}

impl ValidatorCache {
    const CAPACITY: usize = 64;

    fn get(
        &mut self,
        schema: &Json,
        is_root: bool,
        options: &RuleOptions,
    ) -> Result<Arc<SchemaValidator>, Json> {
        let key = (schema.to_string(), is_root, options.per_call_limit);
        if let Some(v) = self.entries.get(&key) {
            return Ok(v.clone());
        }
        let parsed = parse_schema(schema)?;
        let decl = DeclType::from_schema(&parsed, is_root);
        let v = Arc::new(SchemaValidator::with_decl_type(
            &parsed,
            is_root,
            decl.as_ref(),
            options,
        ));
        if self.entries.len() >= Self::CAPACITY {
            self.entries.clear();
        }
        self.entries.insert(key, v.clone());
        Ok(v)
    }
}

fn validate_line(
    case: &Map<String, Json>,
    version: celerity::kubernetes::KubeVersion,
    cache: &mut ValidatorCache,
) -> Result<Json, Json> {
    let schema = case
        .get("schema")
        .ok_or_else(|| input_error("missing \"schema\""))?;
    let object = case
        .get("object")
        .ok_or_else(|| input_error("missing \"object\""))?;
    let number = |key: &str, default: i64| -> Result<i64, Json> {
        match case.get(key) {
            None | Some(Json::Null) => Ok(default),
            Some(n) => n
                .as_i64()
                .filter(|n| *n >= 0)
                .ok_or_else(|| input_error(format!("{key} must be a non-negative integer"))),
        }
    };
    let options = RuleOptions::default()
        .version(version)
        .per_call_limit(number("per_call_limit", 1_000_000)? as u64);
    let validator = cache.get(schema, flag(case, "is_root")?, &options)?;
    let field_root = match case.get("field_root") {
        None | Some(Json::Null) => Path::root(),
        Some(Json::String(r)) => Path::new(r),
        Some(_) => return Err(input_error("field_root must be a string")),
    };
    let result = validator.validate(
        object,
        case.get("old_object"),
        &ValidateOptions::default()
            .field_root(field_root)
            .cost_budget(number("cost_budget", 10_000_000)?)
            .correlate(true),
    );
    Ok(json!({
        "ok": true,
        "errors": result.errors.iter().map(error_json).collect::<Vec<_>>(),
        "warnings": result.warnings,
        "remaining_budget": result.remaining_budget,
    }))
}

/// A field error as batch output shows it.
pub(crate) fn error_json(e: &FieldError) -> Json {
    json!({
        "type": e.error_type.as_str(),
        "field": e.field,
        "detail": e.detail,
        "message": e.to_string(),
    })
}
