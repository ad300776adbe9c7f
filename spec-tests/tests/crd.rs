//! The CRD corpus runner: the committed corpus loads and is well formed, and each check
//! (errors, warnings, costs, compile results, values) can fail. The corpus itself runs in
//! `conformance.rs`, through the `spec-tests` binary, against the known-failures list.

use std::collections::HashSet;

use celerity::Backend;
use spec_tests::crd::{self, Case, Outcome};

fn case(json: &str) -> Case {
    Case {
        file: "t".into(),
        name: "t".into(),
        json: serde_json::from_str(json).unwrap(),
    }
}

fn run(json: &str) -> Outcome {
    let c = case(json);
    let interpreted = crd::run_case(&c, Backend::Interpreter);
    let native = crd::run_case(&c, Backend::Jit);
    assert_eq!(
        matches!(interpreted, Outcome::Pass),
        matches!(native, Outcome::Pass),
        "the backends disagree: {interpreted:?} / {native:?}"
    );
    interpreted
}

#[test]
fn committed_corpus_is_well_formed() {
    let cases = crd::load(&crd::cases_dir(), &[]).unwrap();
    assert!(cases.len() >= 2000, "only {} cases", cases.len());
    let ids: HashSet<String> = cases.iter().map(Case::id).collect();
    assert_eq!(ids.len(), cases.len(), "case ids are not unique");
    for c in &cases {
        assert_eq!(
            spec_tests::known_failures::file_of(&c.id()),
            format!("crd/{}", c.file)
        );
    }
}

const SCHEMA: &str = r#"{"type": "object", "properties": {"n": {"type": "integer"}, "l": {"type": "array", "items": {"type": "string"}, "maxItems": 3}}, "x-kubernetes-validations": [{"rule": "self.n < 10", "message": "n is small"}]}"#;

#[test]
fn each_check_can_fail() {
    let validate = |object: &str, expect: &str| {
        run(&format!(
            r#"{{"kind": "validate", "schema": {SCHEMA}, "object": {object}, "field_root": "root", {expect}}}"#
        ))
    };
    assert_eq!(
        validate(r#"{"n": 1}"#, r#""errors": [], "cost": 3"#),
        Outcome::Pass
    );
    assert!(matches!(
        validate(r#"{"n": 1}"#, r#""errors": [], "cost": 4"#),
        Outcome::Fail(_)
    ));
    let error =
        r#""errors": [{"type": "FieldValueInvalid", "field": "root", "detail": "n is small"}]"#;
    assert_eq!(validate(r#"{"n": 11}"#, error), Outcome::Pass);
    assert!(matches!(validate(r#"{"n": 1}"#, error), Outcome::Fail(_)));
    let wrong_detail = r#""errors": [{"detail": "n is large"}]"#;
    assert!(matches!(
        validate(r#"{"n": 11}"#, wrong_detail),
        Outcome::Fail(_)
    ));
    let warned = r#""errors": [], "warnings": ["something"]"#;
    assert!(matches!(validate(r#"{"n": 1}"#, warned), Outcome::Fail(_)));

    let compile = |rule: &str, expect: &str| {
        run(&format!(
            r#"{{"kind": "compile", "schema": {{"type": "object", "properties": {{"l": {{"type": "array", "items": {{"type": "string"}}, "maxItems": 3}}}}, "x-kubernetes-validations": [{{"rule": "{rule}"}}]}}, "rules": [{expect}]}}"#
        ))
    };
    assert_eq!(
        compile("self.l.all(x, x == 'a')", r#"{"error": null}"#),
        Outcome::Pass
    );
    assert!(matches!(
        compile("self.l.all(x, x == 'a')", r#"{"max_cost": 1}"#),
        Outcome::Fail(_)
    ));
    assert_eq!(
        compile(
            "self.x",
            r#"{"error": {"type": "RuleInvalid", "contains": "undefined field 'x'"}}"#
        ),
        Outcome::Pass
    );
    assert!(matches!(
        compile("self.x", r#"{"error": null}"#),
        Outcome::Fail(_)
    ));
    assert!(matches!(
        compile("self.l.size() > 0", r#"{"transition_rule": true}"#),
        Outcome::Fail(_)
    ));

    let eval = |expr: &str, value: &str| {
        run(&format!(
            r#"{{"kind": "eval", "schema": {SCHEMA}, "expr": "{expr}", "vars": {{"self": {{"n": 2, "l": ["a"]}}}}, "value": "{value}"}}"#
        ))
    };
    assert_eq!(eval("self.n + size(self.l)", "3"), Outcome::Pass);
    assert!(matches!(
        eval("self.n + size(self.l)", "4"),
        Outcome::Fail(_)
    ));
    assert!(matches!(
        run(r#"{"kind": "openapi_unknown_kind"}"#),
        Outcome::NotRun(_)
    ));
}
