//! `cel eval --env NAME`: expressions in one of the places Kubernetes evaluates CEL besides
//! CRDs and admission policies (`dra-selector`, `authn-claims`, `authn-user`, `authz-match`,
//! `admission-webhook-match`), with the place's variables, types, cost limit and messages
//! (see `celerity_kubernetes::places`).

use std::process::ExitCode;

use celerity::MapActivation;
use celerity::kubernetes::{KubeVersion, NEWEST_VERSION, parse_version};
use celerity_kubernetes::places::{Place, PlaceEnv};
use serde_json::{Map, Value as Json, json};

use crate::eval::{EvalArgs, type_name};
use crate::output::Out;
use crate::{Output, bad_input};

/// The Kubernetes version a `--profile` names for `--env` (only `kubernetes[=V]`).
pub(crate) fn version_of(profile: Option<&str>) -> Result<KubeVersion, String> {
    match profile {
        None | Some("kubernetes") => Ok(NEWEST_VERSION),
        Some(p) if p.starts_with("kubernetes=") => parse_version(&p["kubernetes=".len()..]),
        Some(other) => Err(format!(
            "--env takes --profile kubernetes[=VERSION], not '{other}'"
        )),
    }
}

/// The environment `--env` and `--profile` name.
pub(crate) fn place_env(name: &str, profile: Option<&str>) -> Result<PlaceEnv, String> {
    let place: Place = name.parse()?;
    PlaceEnv::new(place, version_of(profile)?)
}

/// One evaluation's result, as a batch line prints it.
fn eval_json(env: &PlaceEnv, expr: &str, vars: &Map<String, Json>, args: &EvalArgs) -> Json {
    let compiled = match env.compile(expr, args.backend.backend()) {
        Ok(c) => c,
        Err(e) => return json!({"ok": false, "error": e, "phase": "compile", "cost": 0}),
    };
    let mut act = MapActivation::new();
    for (name, v) in env.defaults() {
        act.bind(name.as_str(), v.clone());
    }
    for (name, j) in vars {
        match env.value(name, j) {
            Ok(v) => {
                act.bind(name.as_str(), v);
            }
            Err(e) => return json!({"ok": false, "error": e, "phase": "input", "cost": 0}),
        }
    }
    let program = match args.cost_limit {
        Some(l) => compiled.program.with_cost_limit(Some(l)),
        None => compiled.program,
    };
    let (result, details) = program.eval_details(&act);
    let cost = details.actual_cost;
    let value = match result.map_err(|e| e.to_string()).and_then(|v| {
        env.check_result(&v)?;
        Ok(v)
    }) {
        Ok(v) => v,
        Err(e) => return json!({"ok": false, "error": e, "phase": "eval", "cost": cost}),
    };
    let est = env.estimate_cost(&compiled.ast).unwrap_or_default();
    json!({
        "ok": true,
        "value": celerity::to_cel_literal(&value),
        "type": type_name(Some(&compiled.output), &value),
        "cost": cost,
        "est_min": est.min,
        "est_max": est.max,
    })
}

/// `cel eval --env NAME EXPR` and `cel eval --env NAME --batch FILE`.
pub(crate) fn run(args: &EvalArgs, name: &str) -> ExitCode {
    let env = match place_env(name, args.env.profile.as_deref()) {
        Ok(e) => e,
        Err(e) => return bad_input(e),
    };
    if !args.env.decls.is_empty() || args.env.container.is_some() || !args.env.protos.is_empty() {
        return bad_input(
            "--env declares its own variables: --decl, --container and --proto do not apply",
        );
    }
    match (&args.batch, &args.expr) {
        (Some(_), Some(_)) => bad_input("give either an expression or --batch FILE, not both"),
        (None, None) => bad_input("an expression (or --batch FILE) is required"),
        (Some(path), None) => crate::batch::run_lines_as(
            path,
            |e| json!({"ok": false, "error": e, "phase": "input", "cost": 0}),
            |r| r.get("ok") == Some(&Json::Bool(true)),
            |case| line(&env, case, args),
        ),
        (None, Some(expr)) => run_one(&env, expr, args),
    }
}

/// One batch line: `{"expr": ..., "vars": {...}}`.
fn line(env: &PlaceEnv, case: &Map<String, Json>, args: &EvalArgs) -> Json {
    let input = |e: String| json!({"ok": false, "error": e, "phase": "input", "cost": 0});
    if let Some(k) = case.keys().find(|k| !matches!(k.as_str(), "expr" | "vars")) {
        return input(format!("unknown field '{k}' (known: expr, vars)"));
    }
    let Some(Json::String(expr)) = case.get("expr") else {
        return input("expr must be a string".into());
    };
    let empty = Map::new();
    let vars = match case.get("vars") {
        None | Some(Json::Null) => &empty,
        Some(Json::Object(m)) => m,
        Some(_) => return input("vars must be a JSON object".into()),
    };
    eval_json(env, expr, vars, args)
}

fn run_one(env: &PlaceEnv, expr: &str, args: &EvalArgs) -> ExitCode {
    let mut vars = Map::new();
    if let Some(path) = &args.vars_file {
        let members = crate::input::read_text(path)
            .map_err(|e| format!("reading {e}"))
            .and_then(|t| crate::input::parse_json(&t).map_err(|e| format!("{path}: {e}")));
        match members {
            Ok(Json::Object(m)) => vars.extend(m),
            Ok(_) => return bad_input(format!("{path}: variables must be a JSON object")),
            Err(e) => return bad_input(e),
        }
    }
    for var in &args.vars {
        let Some((name, text)) = var.split_once('=') else {
            return bad_input(format!("--var '{var}': expected NAME=JSON"));
        };
        match serde_json::from_str::<Json>(text) {
            Ok(j) => {
                vars.insert(name.to_string(), j);
            }
            Err(e) => return bad_input(format!("--var '{name}': {e}")),
        }
    }
    let result = eval_json(env, expr, &vars, args);
    let ok = result.get("ok") == Some(&Json::Bool(true));
    let mut out = Out::new();
    match args.output {
        Output::Json => out.line(result),
        Output::Text => {
            if ok {
                out.line(format!(
                    "{} : {}",
                    result["value"].as_str().unwrap_or_default(),
                    result["type"].as_str().unwrap_or_default()
                ));
            } else {
                eprintln!("{}", result["error"].as_str().unwrap_or_default());
            }
            if args.cost {
                out.line(format!("cost: {}", result["cost"]));
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
