//! The benchmark cases (`cases.json`, vendored from the project's shared benchmark data) and
//! how each is set up: the newest Kubernetes environment with its libraries and cost
//! estimator (cost tracking on, `OptOptimize`, cross-type comparisons, the per-call limit of
//! 1,000,000), variables declared from their JSON values (objects are `map(string, dyn)`,
//! arrays `list(dyn)`), bound once.
//!
//! The criterion benchmarks are in `benches/engines.rs`; `benches/tiering.rs` times the first
//! evaluations of fresh `Backend::Auto` programs (latency percentiles, without criterion);
//! `tests/cases.rs` checks that every case gives the expected value and cel-go's cost on both
//! backends; the `bench-table` binary turns criterion's results into the README's tables,
//! `tracking-overhead` compares native code with and without cost tracking in one process, and
//! `compile-curve` times compiles against expression size.
//! Nothing here is a timed test.

#![forbid(unsafe_code)]

use celerity::{
    Backend, Env, EnvBuilder, KubernetesEnv, MapActivation, Program, ProgramOptions, Type, Value,
};

/// The vendored case file.
pub const CASES_JSON: &str = include_str!("../cases.json");

/// One benchmark case.
#[derive(Clone, Debug)]
pub struct BenchCase {
    /// The case's name (`replicas_range`).
    pub name: String,
    /// The CEL expression.
    pub expr: String,
    /// The variables, as JSON.
    pub vars: serde_json::Map<String, serde_json::Value>,
    /// The expected result (every case is `true`).
    pub expected: serde_json::Value,
}

/// The baseline and the cases, in the file's order.
pub fn cases() -> Vec<BenchCase> {
    let json: serde_json::Value = serde_json::from_str(CASES_JSON).expect("cases.json is JSON");
    let one = |c: &serde_json::Value| BenchCase {
        name: c["name"].as_str().unwrap_or_default().to_string(),
        expr: c["expr"].as_str().unwrap_or_default().to_string(),
        vars: c["vars"].as_object().cloned().unwrap_or_default(),
        expected: c["expected"].clone(),
    };
    let mut out = vec![one(&json["baseline"])];
    if let Some(cases) = json["cases"].as_array() {
        out.extend(cases.iter().map(one));
    }
    out
}

/// The run-time cost of each case under cel-go v0.29.2's Kubernetes settings, from
/// `performance-targets.md` (the baseline costs nothing).
pub fn cel_go_cost(name: &str) -> Option<u64> {
    Some(match name {
        "baseline_true" => 0,
        "replicas_range" => 10,
        "map_key_in" => 3,
        "xor_list_empty" => 9,
        "envars_filter_all_matches" => 55,
        "starts_with" => 3,
        "widgets_exists" => 146,
        "field_eq" => 4,
        "sets_disjoint_50x50" => 403,
        "names_match_details_100" => 710,
        "map_keys_all_matches_100" => 703,
        "list_map_filter_literal" => 133,
        "int_arith" => 8,
        "string_concat_eq" => 7,
        _ => return None,
    })
}

/// The CEL type a JSON value gets.
fn type_of(v: &serde_json::Value) -> Type {
    match v {
        serde_json::Value::Bool(_) => Type::Bool,
        serde_json::Value::Number(n) if n.is_i64() => Type::Int,
        serde_json::Value::Number(_) => Type::Double,
        serde_json::Value::String(_) => Type::String,
        serde_json::Value::Array(_) => Type::list(Type::Dyn),
        serde_json::Value::Object(_) => Type::map(Type::String, Type::Dyn),
        serde_json::Value::Null => Type::Null,
    }
}

/// The environment of a case as a Kubernetes user configures it: the newest Kubernetes
/// environment, libraries included (what `cel eval --profile kubernetes` builds), with the
/// case's variables.
pub fn env(case: &BenchCase) -> Env {
    builder(case).build()
}

/// The builder of [`env()`], for variations (no cache of native programs, to time compiles).
pub fn builder(case: &BenchCase) -> EnvBuilder {
    let mut b = KubernetesEnv::newest().builder();
    for (name, v) in &case.vars {
        b = b.variable(name, type_of(v));
    }
    b
}

/// The objects under `self` that the cases use as maps (`in`, iteration over keys): their
/// schemas have `additionalProperties`; every other object has `properties`.
const MAP_FIELDS: &[&str] = &["stateCounts", "details"];

/// An OpenAPI schema for a JSON value, as a CRD author would write it for the cases' data:
/// objects with properties (or maps, for [`MAP_FIELDS`]), arrays of their first element's
/// schema, integers, numbers, strings and booleans.
fn schema_of(value: &serde_json::Value, field: &str) -> serde_json::Value {
    use serde_json::{Value as J, json};
    match value {
        J::Bool(_) => json!({"type": "boolean"}),
        J::Number(n) if n.is_i64() => json!({"type": "integer"}),
        J::Number(_) => json!({"type": "number"}),
        J::String(_) | J::Null => json!({"type": "string"}),
        J::Array(items) => {
            let first = items.first().cloned().unwrap_or(J::String(String::new()));
            json!({"type": "array", "items": schema_of(&first, "")})
        }
        J::Object(map) if MAP_FIELDS.contains(&field) => {
            let first = map.values().next().cloned().unwrap_or(J::Null);
            json!({"type": "object", "additionalProperties": schema_of(&first, "")})
        }
        J::Object(map) => {
            let properties: serde_json::Map<String, J> = map
                .iter()
                .map(|(k, v)| (k.clone(), schema_of(v, k)))
                .collect();
            json!({"type": "object", "properties": properties})
        }
    }
}

/// A case whose only variable is `self`, with `self` typed by a schema (as a CRD rule sees
/// it) instead of `map(string, dyn)`.
pub struct TypedCase {
    /// The newest Kubernetes environment with `self` of the schema's type (a CRD rule's).
    pub env: Env,
    /// `self` converted into the schema's typed object once.
    pub activation: MapActivation,
}

/// The typed form of a case, for cases whose only variable is `self` (`None` otherwise).
pub fn typed(case: &BenchCase) -> Option<TypedCase> {
    use celerity::kubernetes::{ExpressionKind, KubeVersion};
    use celerity_kubernetes::crd::schema::{Path, Schema, decl::DeclType, value::ValueModel};
    use celerity_kubernetes::crd::{RuleEnv, RuleOptions};
    let [(name, data)] = <[_; 1]>::try_from(case.vars.iter().collect::<Vec<_>>()).ok()?;
    if name != "self" {
        return None;
    }
    let schema = Schema::from_json(&schema_of(data, ""), &Path::root()).expect("a valid schema");
    let decl = DeclType::from_schema(&schema, false).expect("a schema with a CEL type");
    let options = RuleOptions::default()
        .version(KubeVersion::NEWEST)
        .expressions(ExpressionKind::NewExpressions);
    let env = RuleEnv::new(&decl, &options).plain;
    let value = ValueModel::new(&schema, false).to_value(data);
    Some(TypedCase {
        env,
        activation: MapActivation::new().with("self", value),
    })
}

/// The case's variables, bound once.
pub fn activation(case: &BenchCase) -> MapActivation {
    let mut act = MapActivation::new();
    for (name, v) in &case.vars {
        let value = celerity::value_from_json(v).expect("case variables convert");
        act.bind(name.as_str(), value);
    }
    act
}

/// Parses, checks and makes the program of a case for a backend.
pub fn program(env: &Env, case: &BenchCase, backend: Backend, track_cost: bool) -> Program {
    let options = ProgramOptions::default()
        .backend(backend)
        .track_cost(track_cost);
    program_with(env, case, options)
}

/// Parses, checks and makes the program of a case with explicit options.
pub fn program_with(env: &Env, case: &BenchCase, options: ProgramOptions) -> Program {
    let ast = env
        .compile(&case.expr)
        .expect("benchmark expressions compile");
    env.program_with(&ast, options)
        .expect("benchmark programs build")
}

/// The expected value as a CEL value.
pub fn expected(case: &BenchCase) -> Value {
    celerity::value_from_json(&case.expected).expect("expected values convert")
}

/// A YAML document as JSON (for the example CRD).
///
/// # Panics
///
/// If the text is not one YAML document (the benchmarks' own inputs).
pub fn yaml_to_json(text: &str) -> serde_json::Value {
    serde_saphyr::from_str(text).expect("valid YAML")
}
