//! The properties the fuzz targets check, one function per target, shared with the
//! regression test that replays the committed corpus and crash inputs on stable Rust
//! (`spec-tests/tests/fuzz_regressions.rs`). Each panics when its property fails.
//!
//! Includers declare the `cel` command's document reader as the crate-root module `input`
//! (`#[path = ".../tools/cel-cli/src/input.rs"] mod input;`).

use std::sync::OnceLock;

use cel_syntax::{AST_DEPTH_ALLOWANCE, ParserOptions, Source, parse, unparse};
use celerity::kubernetes::KubernetesEnv;
use celerity::{Backend, Env, ErrorKind, MapActivation, NoSizes, Program, Type, Value};
use celerity_kubernetes::crd::{CompiledCrd, CrdOptions};
use spec_tests::generate::{Differ, Generator, RunOptions, Verdict};

/// `parse`: the parser does not panic, keeps the tree within its depth bound, and a clean
/// parse survives the unparse round trip (`parse(unparse(parse(s))) == parse(s)`, ids aside).
pub fn parse_round_trip(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let options = ParserOptions::default();
    let parsed = parse(&Source::new(text.as_ref()), &options);
    assert!(parsed.ast.expr.depth() <= options.max_recursion_depth + AST_DEPTH_ALLOWANCE);
    if !parsed.diagnostics.is_empty() {
        return;
    }
    let unparsed = unparse(&parsed.ast).expect("a clean parse must unparse");
    // The canonical text may be longer than the input, so only the size limit is lifted.
    let relaxed = ParserOptions {
        expression_size_limit: usize::MAX,
        ..ParserOptions::default()
    };
    let again = parse(&Source::new(unparsed.as_str()), &relaxed);
    assert!(
        again.diagnostics.is_empty(),
        "{text:?} unparsed to {unparsed:?}, which does not parse: {:?}",
        again.diagnostics
    );
    assert!(
        parsed.ast.expr.structurally_eq(&again.ast.expr),
        "{text:?} unparsed to {unparsed:?}, which parses differently"
    );
}

/// The newest Kubernetes environment on `backend` (as `cel eval --profile kubernetes` builds
/// it), with variables of every kind of type, bound by [`kube_activation`].
pub fn kube_env(backend: Backend) -> Env {
    let kube = KubernetesEnv::newest();
    let options = kube.options().backend(backend);
    // No cache of native programs: every input is compiled (the `resources` target times
    // each compile against a reference compile, which a cache hit would make meaningless).
    kube.builder()
        .options(options)
        .native_cache(0)
        .variable("self", Type::map(Type::String, Type::Dyn))
        .variable("i", Type::Int)
        .variable("s", Type::String)
        .variable("l", Type::list(Type::Int))
        .variable("d", Type::Dyn)
        .build()
}

/// Values for the variables of [`kube_env`].
pub fn kube_activation() -> MapActivation {
    let object = serde_json::json!({"spec": {"replicas": 3, "name": "x", "items": [1, 2]}});
    MapActivation::new()
        .with("self", celerity::value_from_json(&object).expect("JSON"))
        .with("i", Value::Int(7))
        .with("s", Value::from("str"))
        .with("l", Value::list(vec![Value::Int(1), Value::Int(2)]))
        .with("d", Value::from("dyn"))
}

fn interpreter_env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| kube_env(Backend::Interpreter))
}

fn jit_env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| kube_env(Backend::Jit))
}

/// Asserts that an evaluation's error, if any, is not an internal one (a bug).
fn assert_not_internal(result: &Result<Value, celerity::EvalError>, text: &str, who: &str) {
    if let Err(e) = result {
        assert!(e.kind != ErrorKind::Internal, "{who}: {text:?}: {e}");
    }
}

/// `check`: in [`kube_env`], checking, the cost estimate, planning and an interpreted
/// evaluation under the per-call cost limit do not panic, and a checked program evaluates
/// to a value or an ordinary error.
pub fn check_and_evaluate(data: &[u8]) {
    let env = interpreter_env();
    let text = String::from_utf8_lossy(data);
    let Ok(ast) = env.compile(&text) else {
        return;
    };
    let _ = env.estimate_cost(&ast, &NoSizes);
    // Making the program may report errors too (a constant that cannot be computed).
    let Ok(program) = env.program(&ast) else {
        return;
    };
    assert_not_internal(&program.eval(&kube_activation()), &text, "interpreter");
}

/// Parses, checks, estimates and compiles `text` in [`kube_env`] on native code; `None`
/// when it does not check or making the program reports errors.
pub fn compile_native(text: &str) -> Option<Program> {
    let env = jit_env();
    let ast = env.compile(text).ok()?;
    let _ = env.estimate_cost(&ast, &NoSizes);
    env.program(&ast).ok()
}

/// Plans `text` for the interpreter in [`kube_env`]; `None` when it does not check or making
/// the program reports errors.
pub fn compile_interpreted(text: &str) -> Option<Program> {
    let env = interpreter_env();
    let ast = env.compile(text).ok()?;
    env.program(&ast).ok()
}

/// Evaluates `program` under the per-call cost limit: no panic, no internal error.
pub fn evaluate(program: &Program, text: &str, who: &str) {
    assert_not_internal(&program.eval(&kube_activation()), text, who);
}

/// `differential`: the input seeds `spec_tests::generate` (the first 8 bytes, little-endian,
/// zero-padded; the 9th, if any, the maximum depth), which makes one random well-typed
/// expression; both backends must agree on its value, error and cost, also under a cost
/// limit, with no internal errors.
pub fn backends_agree(data: &[u8]) {
    static DIFFER: OnceLock<Differ> = OnceLock::new();
    let differ = DIFFER.get_or_init(|| Differ::new(false));
    let mut seed = [0u8; 8];
    for (slot, byte) in seed.iter_mut().zip(data) {
        *slot = *byte;
    }
    let seed = u64::from_le_bytes(seed);
    let max_depth = data.get(8).map_or(5, |b| 1 + u32::from(b % 7));
    let options = RunOptions {
        max_depth,
        ..RunOptions::default()
    };
    let (expr, limit_seed) = Generator::new(seed).case(options);
    // Expressions the checker rejects are generator bugs, counted by
    // `spec-tests/tests/generated.rs`, not backend bugs.
    if let Verdict::Compared(c) = differ.check(&expr, limit_seed) {
        let show = |items: Vec<String>| items.join("\n");
        assert!(
            c.disagreements.is_empty(),
            "seed {seed}, max depth {max_depth}: {}",
            show(c.disagreements.iter().map(|d| d.to_string()).collect())
        );
        assert!(
            c.internal_errors.is_empty(),
            "seed {seed}, max depth {max_depth}: {}",
            show(c.internal_errors.clone())
        );
    }
}

/// `crd_schema`: documents read as the `cel` command reads them (JSON, JSON lines, YAML)
/// compiled as CustomResourceDefinitions (schema parsing, structural checks, rule compilation,
/// cost checks) do not panic, and neither does validating two fixed objects, with and
/// without an old object, against a CRD that compiled.
pub fn crd_compiles_and_validates(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let options = CrdOptions::default();
    let objects = [
        serde_json::json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}}),
        serde_json::json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"},
               "spec": {"a": 1, "b": "s", "c": [1, 2], "d": {"e": true}}}),
    ];
    for doc in crate::input::parse_documents(&text).into_iter().flatten() {
        let Ok(crd) = CompiledCrd::new(&doc, &options) else {
            continue;
        };
        for object in &objects {
            let _ = crd.validate(object, None);
            let _ = crd.validate(object, Some(object));
        }
    }
}

/// `yaml_input`: the `cel` command's document reader (JSON, JSON lines, multi-document YAML
/// with its size, nesting and alias bounds) does not panic, and whatever it accepts converts
/// to a CEL value.
pub fn documents_convert(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for doc in crate::input::parse_documents(&text).into_iter().flatten() {
        let _ = celerity::value_from_json(&doc);
    }
}

/// `policy_set`: a ValidatingAdmissionPolicy whose variables reach each other in the ways
/// expressions can (by name, `has()`, `.?`, `dyn(variables)` by field and by index,
/// comprehensions, conditionals; earlier and later variables, themselves, and variables
/// that fail), read from validations, message expressions, match conditions and audit
/// annotations, built from the input bytes. Admitting a Deployment must finish within
/// [`POLICY_SET_WALL_LIMIT`] on each backend (a hang fails the property instead of the
/// run), and the interpreter and native code must give the same response.
pub fn policy_sets_answer(data: &[u8]) {
    let policy = PolicyBytes { data, at: 0 }.policy();
    let mut responses = Vec::new();
    for backend in [Backend::Interpreter, Backend::Jit] {
        let sent = policy.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(admit_generated(&sent, backend));
        });
        match rx.recv_timeout(POLICY_SET_WALL_LIMIT) {
            Ok(r) => responses.push(r),
            Err(_) => panic!(
                "admission did not finish within {POLICY_SET_WALL_LIMIT:?} on {backend:?}: {policy}"
            ),
        }
    }
    assert_eq!(
        responses[0], responses[1],
        "the backends disagree on {policy}"
    );
}

/// How long one generated request may take on one backend.
pub const POLICY_SET_WALL_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

fn admit_generated(policy: &serde_json::Value, backend: Backend) -> serde_json::Value {
    use celerity_kubernetes::admission::{
        Operation, PolicyInputs, PolicySet, Request, response_json,
    };
    let binding = serde_json::json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "b"},
        "spec": {"policyName": "p", "validationActions": ["Deny", "Audit"]}});
    let inputs = PolicyInputs {
        backend,
        ..PolicyInputs::default()
    };
    let set = match PolicySet::from_json(&[policy.clone(), binding], &inputs) {
        Ok(s) => s,
        Err(e) => return serde_json::json!({"unreadable": e}),
    };
    let object = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "prod"},
        "spec": {"replicas": 3, "names": ["a", "b"]}});
    let request = Request::for_object(Operation::Create, Some(object), None, |_| Some(true))
        .expect("a fixed request");
    response_json(&set.admit(&request, None))
}

/// Reads a policy out of fuzz input: each choice takes a byte (zero once the input ends).
struct PolicyBytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl PolicyBytes<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn pick(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n
    }

    /// A variable name: one of six, so reads reach earlier, later and missing variables
    /// and the variable itself.
    fn name(&mut self) -> String {
        format!("v{}", self.pick(6))
    }

    /// An expression of any type, `depth` levels deep at most.
    fn expr(&mut self, depth: u32) -> String {
        let leaves = 9;
        let choice = if depth == 0 {
            self.pick(leaves)
        } else {
            self.pick(leaves + 7)
        };
        match choice {
            0 => "1".into(),
            1 => "'s'".into(),
            2 => "object.spec.replicas".into(),
            3 => "object.spec.missing".into(),
            4 => format!("variables.{}", self.name()),
            5 => format!("has(variables.{})", self.name()),
            6 => format!("variables.?{}.orValue(0)", self.name()),
            7 => format!("dyn(variables).{}", self.name()),
            8 => format!("dyn(variables)['{}']", self.name()),
            9 => format!("has(dyn(variables).{})", self.name()),
            10 => format!(
                "dyn({}) == dyn({})",
                self.expr(depth - 1),
                self.expr(depth - 1)
            ),
            11 => format!(
                "object.spec.names.exists(n, dyn({}) == dyn(n))",
                self.expr(depth - 1)
            ),
            12 => format!("[1, 2].all(i, dyn({}) != null)", self.expr(depth - 1)),
            13 => format!(
                "dyn({}) == true ? dyn({}) : dyn({})",
                self.expr(depth - 1),
                self.expr(depth - 1),
                self.expr(depth - 1)
            ),
            14 => format!(
                "[dyn({}), dyn({})]",
                self.expr(depth - 1),
                self.expr(depth - 1)
            ),
            _ => format!(
                "!has(variables.{}) || dyn({}) == 1",
                self.name(),
                self.expr(depth - 1)
            ),
        }
    }

    fn boolean(&mut self) -> String {
        format!("dyn({}) == true", self.expr(3))
    }

    fn policy(&mut self) -> serde_json::Value {
        let variables: Vec<serde_json::Value> = (0..1 + self.pick(6))
            .map(|i| serde_json::json!({"name": format!("v{i}"), "expression": self.expr(3)}))
            .collect();
        let validations: Vec<serde_json::Value> = (0..1 + self.pick(3))
            .map(|_| {
                serde_json::json!({"expression": self.boolean(),
                    "messageExpression": format!("string(dyn({}))", self.expr(2))})
            })
            .collect();
        let mut spec = serde_json::json!({
            "matchConstraints": {"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"],
                "operations": ["*"], "resources": ["*"]}]},
            "failurePolicy": if self.byte().is_multiple_of(2) { "Fail" } else { "Ignore" },
            "variables": variables,
            "validations": validations,
            "auditAnnotations": [{"key": "a", "valueExpression": format!("string(dyn({}))", self.expr(2))}],
        });
        if self.byte().is_multiple_of(2) {
            spec["matchConditions"] =
                serde_json::json!([{"name": "m", "expression": self.boolean()}]);
        }
        serde_json::json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "p"}, "spec": spec})
    }
}
