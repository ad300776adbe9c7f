//! Kubernetes' own tests of the other places it evaluates CEL (issue 34), transcribed in
//! `spec-tests/cases/places/*.jsonl`, run on the interpreter and on native code.
//!
//! A case is `{"name", "env", "expr", "vars", "source"}` (with `version`, the Kubernetes
//! version, when not the newest) with what Kubernetes' test expects:
//! `rule` (a validation rule, which must be a bool where the place's other expressions may
//! be anything), `compile_only` (it compiles), `match` (the selector's or condition's bool), `value` (the result as CEL text),
//! `compile_error` or `eval_error` (text the error contains), `cost` (the run-time
//! cost Kubernetes' test records) and `est_max` (the static estimate's maximum it records,
//! which the run-time cost must not pass, as the DRA library's test checks). A case Celerity does not pass yet says why in
//! `known_failure`; the test checks that it still fails, so the list only shrinks.

use std::path::PathBuf;

use celerity::{Backend, MapActivation};
use celerity_kubernetes::places::{Place, PlaceEnv};
use serde_json::Value as Json;

fn cases() -> Vec<(String, Json)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases/places");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("cases/places")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        for (i, line) in text.lines().enumerate() {
            let case: Json = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", f.display(), i + 1));
            out.push((format!("{stem}/{}", case["name"].as_str().unwrap()), case));
        }
    }
    out
}

/// Runs a case on one backend: `Err(why)` when it does not give what Kubernetes expects.
fn run(case: &Json, backend: Backend) -> Result<(), String> {
    let place: Place = case["env"].as_str().unwrap().parse()?;
    let version = match case["version"].as_str() {
        Some(v) => celerity::kubernetes::parse_version(v)?,
        None => celerity::kubernetes::NEWEST_VERSION,
    };
    let env = PlaceEnv::new(place, version)?;
    let expr = case["expr"].as_str().unwrap();
    let compiled = if case["rule"] == Json::Bool(true) {
        env.compile_rule(expr, backend)
    } else {
        env.compile(expr, backend)
    };
    let compiled = match compiled {
        Ok(c) => c,
        Err(e) => {
            return match case["compile_error"].as_str() {
                Some(want) if e.contains(want) => Ok(()),
                _ => Err(format!("compile error {e:?}")),
            };
        }
    };
    if case.get("compile_error").is_some() {
        return Err("compiled".into());
    }
    if let Some(want) = case["est_max"].as_u64() {
        let est = env.estimate_cost(&compiled.ast).map(|e| e.max);
        if est != Some(want) {
            return Err(format!("estimated cost {est:?} (Kubernetes: {want})"));
        }
    }
    if case["compile_only"] == Json::Bool(true) {
        return Ok(());
    }
    let mut act = MapActivation::new();
    for (n, v) in env.defaults() {
        act.bind(n.as_str(), v.clone());
    }
    for (n, j) in case["vars"].as_object().unwrap() {
        match (env.value(n, j), case["eval_error"].as_str()) {
            (Ok(v), _) => {
                act.bind(n.as_str(), v);
            }
            // The DRA library reads a device's attributes when it matches the device
            // (`DeviceMatches`): what it cannot read is the match's error.
            (Err(e), Some(want)) if e.contains(want) => return Ok(()),
            (Err(e), _) => return Err(e),
        }
    }
    let (result, details) = compiled.program.eval_details(&act);
    let result = result
        .map_err(|e| e.to_string())
        .and_then(|v| env.check_result(&v).map(|()| v));
    match (&result, case["eval_error"].as_str()) {
        (Err(e), Some(want)) if e.contains(want) => {}
        (Err(e), _) => return Err(format!("eval error {e:?}")),
        (Ok(v), Some(_)) => return Err(format!("no error, got {v:?}")),
        (Ok(v), None) => {
            if let Some(m) = case["match"].as_bool()
                && *v != celerity::Value::Bool(m)
            {
                return Err(format!("expected match {m}, got {v:?}"));
            }
            if let Some(want) = case["value"].as_str()
                && celerity::to_cel_literal(v) != want
            {
                return Err(format!(
                    "expected {want}, got {}",
                    celerity::to_cel_literal(v)
                ));
            }
        }
    }
    if let Some(cost) = case["cost"].as_u64()
        && details.actual_cost != cost
    {
        return Err(format!("cost {} (Kubernetes: {cost})", details.actual_cost));
    }
    if let Some(est) = case["est_max"].as_u64()
        && details.actual_cost > est
    {
        return Err(format!(
            "cost {} is more than the estimate, {est}",
            details.actual_cost
        ));
    }
    Ok(())
}

#[test]
fn kubernetes_place_cases_pass_on_both_backends() {
    let cases = cases();
    assert!(cases.len() >= 53, "only {} cases", cases.len());
    let mut failures = Vec::new();
    let mut passed = 0;
    for (id, case) in &cases {
        let known = case.get("known_failure").is_some();
        for backend in [Backend::Interpreter, Backend::Jit] {
            match (run(case, backend), known) {
                (Ok(()), false) => passed += 1,
                (Err(_), true) => {}
                (Err(why), false) => failures.push(format!("{id} ({backend:?}): {why}")),
                (Ok(()), true) => failures.push(format!(
                    "{id} ({backend:?}) passes now: remove its known_failure"
                )),
            }
        }
    }
    eprintln!("{passed} case runs pass of {}", cases.len() * 2);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Kubernetes' tests of the JWT authenticator (`spec-tests/cases/places/jwt/*.jsonl`):
/// `{"name", "jwt": {a jwt[] item}, "claims", "now": seconds, "source"}` with what the test
/// expects: `user` (username, uid, groups, extra), `error` (the authenticator's error,
/// exactly), `init_error` (the configuration's, exactly) or `skip` (the authenticator does
/// not take the token: its issuer is another). `known_failure` says why a case does not
/// pass yet; the test checks that it still fails.
fn run_jwt(case: &Json, backend: Backend) -> Result<(), String> {
    use celerity_kubernetes::places::jwt::JwtAuthenticator;
    let authenticator = match JwtAuthenticator::new(
        &case["jwt"],
        "",
        celerity::kubernetes::NEWEST_VERSION,
        backend,
    ) {
        Ok(a) => a,
        Err(e) => {
            return match case["init_error"].as_str() {
                Some(want) if e == want => Ok(()),
                _ => Err(format!("init error {e:?}")),
            };
        }
    };
    if case.get("init_error").is_some() {
        return Err("initialised".into());
    }
    let claims = &case["claims"];
    if case["skip"] == Json::Bool(true) {
        return match authenticator.accepts_issuer(claims) {
            false => Ok(()),
            true => Err("took the token".into()),
        };
    }
    let now = case["now"].as_i64().unwrap();
    match (
        authenticator.authenticate(claims, now),
        case["error"].as_str(),
    ) {
        (Err(e), Some(want)) if e == want => Ok(()),
        (Err(e), _) => Err(format!("error {e:?}")),
        (Ok(u), Some(_)) => Err(format!("no error, got {u:?}")),
        (Ok(u), None) if u.to_json() == case["user"] => Ok(()),
        (Ok(u), None) => Err(format!("user {}", u.to_json())),
    }
}

/// Every case of the JSON-lines files of `cases/places/<dir>`.
fn cases_in(dir: &str) -> Vec<Json> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("cases/places")
        .join(dir);
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        for (i, line) in text.lines().enumerate() {
            let case: Json = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1));
            cases.push(case);
        }
    }
    cases
}

#[test]
fn kubernetes_jwt_authenticator_cases_pass_on_both_backends() {
    let cases = cases_in("jwt");
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let (mut passed, mut failures) = (0, Vec::new());
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let known = case.get("known_failure").is_some();
        for backend in [Backend::Interpreter, Backend::Jit] {
            match (run_jwt(case, backend), known) {
                (Ok(()), false) => passed += 1,
                (Err(_), true) => {}
                (Err(why), false) => failures.push(format!("{name} ({backend:?}): {why}")),
                (Ok(()), true) => failures.push(format!(
                    "{name} ({backend:?}) passes now: remove its known_failure"
                )),
            }
        }
    }
    eprintln!("{passed} JWT case runs pass of {}", cases.len() * 2);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Kubernetes' tests of the configuration checks (`spec-tests/cases/places/config/*.jsonl`,
/// from `pkg/apis/apiserver/validation/validation_test.go`): `{"name", "part", "path",
/// "in", "want", "source"}`, where `part` names the function the test calls
/// (`claimValidationRules`, `claimMappings`, `userValidationRules` at `path`; `config` for a
/// whole AuthenticationConfiguration, with `disallowed_issuers`; `authzMatchConditions`)
/// and `want` is the aggregate of its field errors, exactly ("" when valid), or
/// `want_contains` text the aggregate contains ("": no errors), as the admission webhook
/// configurations' tests (`pkg/apis/admissionregistration/validation/validation_test.go`)
/// compare. The checks
/// compile expressions and never run them, so one backend tells all. Cases of a feature
/// gate turned off (every release from 1.30 has it on) are not transcribed.
fn run_config(case: &Json) -> Result<(), String> {
    use celerity_kubernetes::places::config_check::{
        ConfigOptions, check_config, validate_authz_match_conditions,
    };
    use celerity_kubernetes::places::jwt_validation::{aggregate, validate_part};
    let version = celerity::kubernetes::NEWEST_VERSION;
    let input = &case["in"];
    let errors = match case["part"].as_str().unwrap() {
        "config" => {
            let options = ConfigOptions {
                disallowed_issuers: serde_json::from_value(case["disallowed_issuers"].clone())
                    .unwrap_or_default(),
            };
            check_config(input, version, &options)?.errors
        }
        "authzMatchConditions" => validate_authz_match_conditions(input, version)?,
        part => validate_part(
            part.parse()?,
            input,
            case["path"].as_str().unwrap(),
            version,
            case["uses_email_verified"] == Json::Bool(true),
        )?,
    };
    let got = if errors.is_empty() {
        String::new()
    } else {
        aggregate(&errors)
    };
    let passes = match (case["want"].as_str(), case["want_contains"].as_str()) {
        (Some(want), _) => want == got,
        (None, Some("")) => got.is_empty(),
        (None, Some(part)) => got.contains(part),
        (None, None) => false,
    };
    if passes {
        Ok(())
    } else {
        Err(format!("got {got:?}"))
    }
}

#[test]
fn kubernetes_config_validation_cases_pass() {
    let cases = cases_in("config");
    assert!(cases.len() >= 89, "only {} cases", cases.len());
    let (mut passed, mut failures) = (0, Vec::new());
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let known = case.get("known_failure").is_some();
        match (run_config(case), known) {
            (Ok(()), false) => passed += 1,
            (Err(_), true) => {}
            (Err(why), false) => failures.push(format!("{name}: {why}")),
            (Ok(()), true) => failures.push(format!("{name} passes now: remove its known_failure")),
        }
    }
    eprintln!("{passed} configuration cases pass of {}", cases.len());
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
