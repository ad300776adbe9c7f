//! The properties the fuzz targets check, one function per target, shared with the
//! regression test that replays the committed corpus and crash inputs on stable Rust
//! (`spec-tests/tests/fuzz_regressions.rs`). Each panics when its property fails.
//!
//! Includers declare the `cel` command's document reader as the crate-root module `input`
//! (`#[path = ".../tools/cel-cli/src/input.rs"] mod input;`).

use std::sync::OnceLock;

use cel_syntax::{AST_DEPTH_ALLOWANCE, ParserOptions, Source, parse, unparse};
use celerity::kubernetes::KubernetesEnv;
use celerity::kubernetes::crd::{CompiledCrd, CrdOptions};
use celerity::{Backend, Env, ErrorKind, MapActivation, NoSizes, Program, Type, Value};
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
