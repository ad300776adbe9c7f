//! The expression mode: an expression in an environment (cel-go's with every extension
//! library, or a Kubernetes version's, for new or stored expressions), variables as JSON or
//! YAML with optional declarations; out come the value and its type, the run-time cost, the
//! static estimate, or diagnostics with their positions. What `cel eval --output json
//! --cost` and `cel cost` print for the same inputs.
//!
//! The environment is also one of the other places the API server evaluates CEL (device
//! selectors, authentication, authorization and admission webhooks' match conditions;
//! `celerity_kubernetes::places`): then the place declares the variables and converts their
//! JSON as the API server does, checks the result type and applies its cost limit, as
//! `cel eval --env NAME --profile kubernetes=V` does (places compile as stored expressions:
//! `stored` does not apply, and declarations are refused).
//!
//! Request: `{"mode": "expression", "expression": "...", "environment": "kubernetes" |
//! "default" | "dra-selector" | ..., "version": "1.34", "stored": false, "declarations":
//! "x: int\n...", "variables": "x: 3\n...", "cost_limit": N}`.

use celerity::kubernetes::{self, KubernetesEnv};
use celerity::{Backend, Env, EnvOptions, MapActivation, PathSizes, Type, Value};
use celerity_kubernetes::places::{Place, PlaceEnv};
use serde_json::{Map, Value as Json, json};

/// What the page calls a place, with the variables it declares.
pub fn place_title(place: Place) -> &'static str {
    match place {
        Place::DraSelector => "Device selectors (DRA): device",
        Place::AuthnClaims => "JWT claim rules and mappings: claims",
        Place::AuthnUser => "JWT user validation rules: user",
        Place::AuthzMatch => "Authorization webhook match conditions: request",
        Place::AdmissionWebhookMatch => {
            "Admission webhook match conditions: object, oldObject, request, ..."
        }
    }
}

/// Runs one request of the mode.
pub fn run(request: &Map<String, Json>) -> Result<Json, String> {
    let expression = crate::text(request, "expression")?;
    let declarations = declarations(crate::text(request, "declarations")?)?;
    let variables = match crate::one_document(request, "variables")? {
        None => Map::new(),
        Some(Json::Object(m)) => m,
        Some(_) => return Err("variables: expected an object of variables".into()),
    };
    let cost_limit = match request.get("cost_limit") {
        None | Some(Json::Null) => None,
        Some(n) => Some(n.as_u64().ok_or("cost_limit: expected a whole number")?),
    };
    let kubernetes = match crate::string(request, "environment").unwrap_or("kubernetes") {
        "default" => None,
        "kubernetes" => {
            let version = crate::string(request, "version");
            let k = match version {
                Some(v) => KubernetesEnv::parse(v)?,
                None => KubernetesEnv::default(),
            };
            let stored = request.get("stored").and_then(Json::as_bool) == Some(true);
            Some(if stored { k.stored() } else { k })
        }
        other => {
            let place = other
                .parse::<Place>()
                .map_err(|_| format!("unknown environment {other:?}"))?;
            if !declarations.is_empty() {
                return Err(format!(
                    "declarations: the {place} environment declares its own variables"
                ));
            }
            let version = match crate::string(request, "version") {
                Some(v) => kubernetes::parse_version(v.trim())?,
                None => kubernetes::NEWEST_VERSION,
            };
            let env = PlaceEnv::new(place, version)?;
            return in_place(&env, expression, &variables, cost_limit);
        }
    };
    let mut builder = match &kubernetes {
        None => {
            let mut options = EnvOptions::default();
            if cost_limit.is_some() {
                options.cost_limit = cost_limit;
            }
            Env::builder().options(options).all_extension_libraries()
        }
        Some(k) if cost_limit.is_some() => k.builder().cost_limit(cost_limit),
        Some(k) => k.builder(),
    };
    for (name, ty) in &declarations {
        builder = builder.variable(name, ty.clone());
    }
    for name in variables.keys() {
        if !declarations.iter().any(|(n, _)| n == name) {
            builder = builder.variable(name, Type::Dyn);
        }
    }
    let env = builder.build();
    let mut activation = MapActivation::new();
    if kubernetes.is_some()
        && env
            .variables()
            .iter()
            .any(|v| v.name == kubernetes::AUTHORIZER_VARIABLE)
    {
        activation.bind(
            kubernetes::AUTHORIZER_VARIABLE,
            kubernetes::allow_all_authorizer(),
        );
    }
    for (name, json) in &variables {
        let value = match declarations.iter().find(|(n, _)| n == name) {
            Some((_, ty)) => {
                celerity::variable_from_json(name, json, ty).map_err(|e| e.to_string())?
            }
            None => {
                celerity::value_from_json(json).map_err(|e| format!("variable '{name}': {e}"))?
            }
        };
        activation.bind(name.as_str(), value);
    }
    Ok(evaluate(&env, expression, &activation))
}

/// `name: type` per line (blank lines and `#` comments skipped), types as cel-go writes
/// them.
fn declarations(text: &str) -> Result<Vec<(String, Type)>, String> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let (name, ty) = l
                .split_once(':')
                .ok_or_else(|| format!("declarations, line {}: expected NAME: TYPE", i + 1))?;
            let ty =
                Type::parse(ty.trim()).map_err(|e| format!("declarations, line {}: {e}", i + 1))?;
            Ok((name.trim().to_string(), ty))
        })
        .collect()
}

/// Compiles, estimates and evaluates, as `cel eval` and `cel cost` do.
fn evaluate(env: &Env, expression: &str, activation: &MapActivation) -> Json {
    let ast = match env.compile(expression) {
        Ok(ast) => ast,
        Err(issues) => return compile_error(&issues),
    };
    let estimate = env
        .estimate_cost(&ast, &PathSizes::default())
        .map(|e| json!({"min": e.min, "max": e.max}));
    let program = match env.program(&ast) {
        Ok(p) => p,
        Err(issues) => return compile_error(&issues),
    };
    let (result, details) = program.eval_details(activation);
    let mut out = match result {
        Ok(v) => json!({
            "ok": true,
            "value": celerity::to_cel_literal(&v),
            "type": type_name(ast.result_type(), &v),
        }),
        Err(e) => json!({"ok": false, "phase": "eval", "error": e.to_string()}),
    };
    if let Some(m) = out.as_object_mut() {
        m.insert("cost".into(), json!(details.actual_cost));
        m.insert("estimate".into(), estimate.unwrap_or(Json::Null));
        m.insert("cost_limit".into(), json!(program.cost_limit()));
    }
    out
}

/// An expression in a place, as `cel eval --env` evaluates it: the place's compiler and its
/// messages, its variables' conversions, its result check and its cost limit (unless the
/// request gives one).
fn in_place(
    env: &PlaceEnv,
    expression: &str,
    variables: &Map<String, Json>,
    cost_limit: Option<u64>,
) -> Result<Json, String> {
    let compiled = match env.compile(expression, Backend::Auto) {
        Ok(c) => c,
        Err(error) => {
            // The positions for the editor, when the expression itself does not compile.
            let diagnostics = env
                .env()
                .compile(expression)
                .err()
                .map(|issues| diagnostics(&issues))
                .unwrap_or_default();
            return Ok(
                json!({"ok": false, "phase": "compile", "error": error, "diagnostics": diagnostics}),
            );
        }
    };
    let mut activation = MapActivation::new();
    for (name, value) in env.defaults() {
        activation.bind(name.as_str(), value.clone());
    }
    for (name, json) in variables {
        activation.bind(name.as_str(), env.value(name, json)?);
    }
    let estimate = env
        .env()
        .estimate_cost(&compiled.ast, &PathSizes::default())
        .map(|e| json!({"min": e.min, "max": e.max}));
    let program = match cost_limit {
        Some(l) => compiled.program.with_cost_limit(Some(l)),
        None => compiled.program,
    };
    let (result, details) = program.eval_details(&activation);
    let result = result
        .map_err(|e| e.to_string())
        .and_then(|v| env.check_result(&v).map(|()| v));
    let mut out = match result {
        Ok(v) => json!({
            "ok": true,
            "value": celerity::to_cel_literal(&v),
            "type": type_name(Some(&compiled.output), &v),
        }),
        Err(e) => json!({"ok": false, "phase": "eval", "error": e}),
    };
    if let Some(m) = out.as_object_mut() {
        m.insert("cost".into(), json!(details.actual_cost));
        m.insert("estimate".into(), estimate.unwrap_or(Json::Null));
        m.insert("cost_limit".into(), json!(program.cost_limit()));
        m.insert("place".into(), json!(env.place().name()));
    }
    Ok(out)
}

/// The type to show: the checked type when it says something, else the value's (as
/// `cel eval` does).
fn type_name(checked: Option<&Type>, v: &Value) -> String {
    match checked {
        Some(t) if *t != Type::Dyn => t.to_string(),
        _ => v.type_of().to_string(),
    }
}

/// Diagnostics as cel-go prints them, and each one's position for the editor.
fn compile_error(issues: &celerity::Issues) -> Json {
    json!({"ok": false, "phase": "compile", "error": issues.to_string(), "diagnostics": diagnostics(issues)})
}

/// Each diagnostic's message and position.
fn diagnostics(issues: &celerity::Issues) -> Vec<Json> {
    let source = issues.source();
    issues
        .diagnostics()
        .iter()
        .map(|d| {
            let at = d.has_location().then(|| source.location(d.offset));
            json!({
                "message": d.message,
                "offset": d.has_location().then_some(d.offset),
                "line": at.map(|l| l.line),
                "column": at.map(|l| l.column),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_json(request: Json) -> Json {
        crate::handle(&request.to_string())
    }

    #[test]
    fn values_types_and_costs() {
        let r = run_json(json!({
            "mode": "expression", "environment": "kubernetes", "version": "1.34",
            "expression": "self.replicas <= self.max && quantity('1Gi').isGreaterThan(quantity('1G'))",
            "variables": "self:\n  replicas: 3\n  max: 5\n",
        }));
        assert_eq!(r["ok"], json!(true), "{r}");
        assert_eq!(r["value"], json!("true"));
        assert_eq!(r["type"], json!("bool"));
        assert!(r["cost"].as_u64().unwrap() > 0);
        assert!(r["estimate"]["max"].as_u64().unwrap() >= r["cost"].as_u64().unwrap());
    }

    #[test]
    fn diagnostics_carry_positions() {
        let r = run_json(
            json!({"mode": "expression", "expression": "1 +\n  'a' + ", "environment": "default"}),
        );
        assert_eq!(r["phase"], json!("compile"), "{r}");
        assert_eq!(r["diagnostics"][0]["line"], json!(2));
        assert!(
            r["error"].as_str().unwrap().contains("ERROR: <input>:2:"),
            "{r}"
        );
    }

    #[test]
    fn declared_variables_take_their_types() {
        let r = run_json(json!({
            "mode": "expression", "environment": "default", "expression": "t + d",
            "declarations": "t: timestamp\nd: duration",
            "variables": "{\"t\": \"2024-01-02T03:04:05Z\", \"d\": \"1h30m\"}",
        }));
        assert_eq!(
            r["value"],
            json!("timestamp(\"2024-01-02T04:34:05Z\")"),
            "{r}"
        );
    }

    /// The places' variables, result checks and cost limits, as `cel eval --env` gives them.
    #[test]
    fn place_environments() {
        let device = "{\"device\": {\"driver\": \"gpu.example.com\", \"attributes\": {\"model\": {\"string\": \"a100\"}}}}";
        let selector = |expression: &str| {
            run_json(json!({
                "mode": "expression", "environment": "dra-selector", "version": "1.34",
                "expression": expression, "variables": device,
            }))
        };
        let r = selector("device.attributes['gpu.example.com'].model == 'a100'");
        assert_eq!(r["value"], json!("true"), "{r}");
        assert_eq!(r["cost_limit"], json!(1_000_000), "{r}");
        let r = selector("device.attributes['gpu.example.com'].model");
        assert_eq!(r["phase"], json!("eval"), "{r}");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .starts_with("CEL result of type string could not be converted to bool"),
            "{r}"
        );
        let r = selector("device.attributes['gpu.example.com'].model ==");
        assert_eq!(r["phase"], json!("compile"), "{r}");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .starts_with("compilation failed: ERROR: <input>:1:")
        );
        assert_eq!(r["diagnostics"][0]["line"], json!(1), "{r}");
        let r = run_json(json!({
            "mode": "expression", "environment": "admission-webhook-match", "version": "1.34",
            "expression": "object.metadata.name", "variables": "object: {metadata: {name: web}}",
        }));
        assert_eq!(
            r["error"],
            json!("must evaluate to bool but got dyn"),
            "{r}"
        );
        // The webhook environment's authorizer is bound, allowing everything.
        let r = run_json(json!({
            "mode": "expression", "environment": "admission-webhook-match", "version": "1.34",
            "expression": "authorizer.group('apps').resource('deployments').namespace('x').check('create').allowed()",
        }));
        assert_eq!(r["value"], json!("true"), "{r}");
        for (request, why) in [
            (
                json!({"environment": "dra-selector", "version": "1.30"}),
                "no such expressions",
            ),
            (
                json!({"environment": "authn-user", "declarations": "x: int"}),
                "declares its own",
            ),
            (
                json!({"environment": "authz-match", "variables": "nope: 1"}),
                "no such variable",
            ),
            (
                json!({"environment": "authn-claims", "variables": "claims: [1]"}),
                "claims",
            ),
        ] {
            let mut request = request.as_object().unwrap().clone();
            request.insert("mode".into(), json!("expression"));
            request.insert("expression".into(), json!("true"));
            let r = crate::handle(&Json::Object(request).to_string());
            assert_eq!(r["phase"], json!("input"), "{r}");
            assert!(r["error"].as_str().unwrap().contains(why), "{r}");
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        for request in [
            json!({"mode": "expression", "expression": "x", "variables": "[1, 2]"}),
            json!({"mode": "expression", "expression": "x", "declarations": "x int"}),
            json!({"mode": "expression", "expression": "1", "version": "0.9"}),
            json!({"mode": "nonsense"}),
        ] {
            let r = run_json(request.clone());
            assert_eq!(r["phase"], json!("input"), "{request} gave {r}");
        }
        let r = crate::handle("not json");
        assert_eq!(r["phase"], json!("input"));
    }

    #[test]
    fn hostile_input_ends_with_an_error() {
        let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
        let r = run_json(json!({"mode": "expression", "expression": deep}));
        assert_eq!(r["phase"], json!("compile"), "{r}");
        let deep_yaml = format!("x: {}1{}", "[".repeat(10_000), "]".repeat(10_000));
        let r = run_json(json!({"mode": "expression", "expression": "x", "variables": deep_yaml}));
        assert_eq!(r["phase"], json!("input"), "{r}");
        let big = "a".repeat(5 * 1024 * 1024);
        let r = run_json(json!({"mode": "expression", "expression": big}));
        assert_eq!(r["phase"], json!("input"), "{r}");
        let bomb = "'a'.repeat(30).matches('(a|a)*(a{1,1000}){1,1000}b')";
        let r = run_json(
            json!({"mode": "expression", "expression": bomb, "environment": "kubernetes"}),
        );
        assert_eq!(r["ok"], json!(false), "{r}");
    }
}
