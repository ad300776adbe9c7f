//! Random schemas, rules and data through CRD compilation and validation: whatever the input,
//! nothing panics, both backends give the same verdicts, and hostile sizes are bounded.

#[path = "support/crd.rs"]
mod crd;

use celerity::Backend;
use celerity_kubernetes::crd::schema::{Path, Schema};
use celerity_kubernetes::crd::{
    CompiledCrd, CrdOptions, RuleOptions, SchemaValidator, ValidateOptions,
};
use serde_json::{Value as Json, json};

/// A small deterministic generator (xorshift), so failures reproduce from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

const RULES: &[&str] = &[
    "true",
    "self == self",
    "has(self.a) || !has(self.a)",
    "self.size() >= 0",
    "self.all(x, true)",
    "self.exists(x, x == self[0])",
    "self == oldSelf",
    "self.a.b > 0",
    "type(self) == type(self)",
    "self + self == self",
    "'x' in self",
    "self.map(x, x).size() < 100",
    "size(dyn(self)) >= 0",
    "self.matches('^a')",
    "self > 1",
    "quantity(string(self)).isInteger()",
    "oldSelf.hasValue()",
];

fn schema(rng: &mut Rng, depth: u32) -> Json {
    let kinds = [
        "object", "map", "array", "string", "integer", "number", "boolean", "ios", "any",
    ];
    let kind = if depth > 3 {
        *rng.pick(&kinds[3..])
    } else {
        *rng.pick(&kinds)
    };
    let mut s = match kind {
        "object" => {
            let mut props = serde_json::Map::new();
            for name in ["a", "b", "c-d", "if", "1x"]
                .iter()
                .take(1 + rng.below(4) as usize)
            {
                props.insert((*name).into(), schema(rng, depth + 1));
            }
            json!({"type": "object", "properties": props})
        }
        "map" => {
            json!({"type": "object", "additionalProperties": schema(rng, depth + 1), "maxProperties": rng.below(20)})
        }
        "array" => {
            let mut a = json!({"type": "array", "items": schema(rng, depth + 1)});
            match rng.below(3) {
                0 => a["x-kubernetes-list-type"] = json!("set"),
                1 => {
                    a["x-kubernetes-list-type"] = json!("map");
                    a["x-kubernetes-list-map-keys"] = json!(["a"]);
                }
                _ => {}
            }
            if rng.below(2) == 0 {
                a["maxItems"] = json!(rng.below(10));
            }
            a
        }
        "ios" => json!({"x-kubernetes-int-or-string": true}),
        "any" => json!({"x-kubernetes-preserve-unknown-fields": true}),
        "string" => match rng.below(4) {
            0 => {
                json!({"type": "string", "format": *rng.pick(&["byte", "date", "date-time", "duration"])})
            }
            1 => json!({"type": "string", "maxLength": rng.below(50), "pattern": "^[a-z]*$"}),
            _ => json!({"type": "string"}),
        },
        other => json!({"type": other}),
    };
    if rng.below(3) == 0 {
        s["nullable"] = json!(true);
    }
    if rng.below(2) == 0 {
        let mut rule = json!({"rule": *rng.pick(RULES)});
        if rng.below(4) == 0 {
            rule["messageExpression"] = json!("'bad: ' + string(self)");
        }
        if rng.below(5) == 0 {
            rule["optionalOldSelf"] = json!(true);
        }
        s["x-kubernetes-validations"] = json!([rule]);
    }
    s
}

fn data(rng: &mut Rng, depth: u32) -> Json {
    match rng.below(if depth > 4 { 6 } else { 9 }) {
        0 => Json::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(rng.next() as i64),
        3 => json!(rng.below(1000) as f64 / 7.0),
        4 => json!(*rng.pick(&["a", "", "2021-01-01", "1h", "aGk=", "1Gi", "x:y"])),
        5 => json!(rng.below(5)),
        6 => Json::Array((0..rng.below(4)).map(|_| data(rng, depth + 1)).collect()),
        _ => {
            let mut m = serde_json::Map::new();
            for name in ["a", "b", "c-d", "if", "1x", "z"]
                .iter()
                .take(rng.below(6) as usize)
            {
                m.insert((*name).into(), data(rng, depth + 1));
            }
            Json::Object(m)
        }
    }
}

/// The text with the unstable numbers of type names (`selfType13`) removed.
fn unnamed(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("selfType") {
        out.push_str(&rest[..i + "selfType".len()]);
        rest = rest[i + "selfType".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

#[test]
fn random_schemas_and_data_never_panic_and_backends_agree() {
    let seeds: u64 = std::env::var("CRD_ROBUSTNESS_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    for seed in 1..=seeds {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let schema_json = schema(&mut rng, 0);
        let Ok(schema) = Schema::from_json(&schema_json, &Path::root()) else {
            continue;
        };
        let object = data(&mut rng, 0);
        let old = (rng.below(2) == 0).then(|| data(&mut rng, 0));
        let run = |backend| {
            let v = SchemaValidator::new(&schema, false, &RuleOptions::default().backend(backend));
            let r = v.validate(
                &object,
                old.as_ref(),
                &ValidateOptions::default().correlate(true),
            );
            let texts: Vec<String> = r.errors.iter().map(|e| unnamed(&e.to_string())).collect();
            (texts, r.warnings, r.remaining_budget)
        };
        let interpreted = run(Backend::Interpreter);
        let native = run(Backend::Jit);
        assert_eq!(
            interpreted, native,
            "seed {seed}: {schema_json} on {object}"
        );

        let crd = crd::with_spec(schema_json);
        if let Ok(c) = CompiledCrd::new(&crd, &CrdOptions::default()) {
            let obj = json!({"apiVersion": "example.com/v1", "kind": "X", "metadata": {"name": "x"}, "spec": object});
            let _ = c.validate(&obj, None);
        }
    }
}

#[test]
fn hostile_sizes_are_bounded() {
    // A schema nested far deeper than any real one is an error, not a stack overflow.
    let mut deep = json!({"type": "string"});
    for _ in 0..500 {
        deep = json!({"type": "array", "items": deep});
    }
    assert!(Schema::from_json(&deep, &Path::root()).is_err());
    // Many rules on one node compile within the budget of a test.
    let rules: Vec<Json> = (0..200)
        .map(|i| json!({"rule": format!("self.size() >= {i}")}))
        .collect();
    let s = Schema::from_json(
        &json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": rules}),
        &Path::root(),
    )
    .unwrap();
    let v = SchemaValidator::new(&s, false, &RuleOptions::default());
    let r = v.validate(&json!(["a"]), None, &ValidateOptions::default());
    assert_eq!(r.errors.len(), 198);
}

#[test]
fn compiled_crds_are_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<CompiledCrd>();
    shared::<SchemaValidator>();
}
