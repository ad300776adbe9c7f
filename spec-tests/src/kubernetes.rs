//! Celerity's own Kubernetes corpus (`spec-tests/cases/kubernetes/*.jsonl`), run through the
//! facade with the Kubernetes environment of each case's version, checking the value, the
//! error or the compile error and, where the case records them, the run-time cost and the
//! static estimate, exactly.
//!
//! One case per line, a JSON object:
//!
//! | field | meaning |
//! | --- | --- |
//! | `name` | the case's name, unique within its file (the id is `kubernetes/<file>/<name>`) |
//! | `expr` | the expression |
//! | `value` | the expected value, written as a CEL expression evaluated in the same environment |
//! | `error` | text the evaluation error must contain |
//! | `compile_error` | text the compile (parse, check or validation) error must contain |
//! | `program_error` | text the error making the program must contain (on both backends) |
//! | `type` | the type of the expected value (for values with no literal form) |
//! | `version` | the Kubernetes release whose API server runs the case (`"1.30"`, 1.30 to 1.37; default: the newest) |
//! | `compatibility` | the compatibility version new expressions compile with (`"1.27"`; default: the release itself, so that a case sees everything its release introduced; an API server's own default is one minor below) |
//! | `env` | `"new"` (default: new expressions), `"stored"` (stored expressions), or `"cost_test"` (see below) |
//! | `jsonpatch` | `true` to add the JSON Patch library, as mutating admission policies do |
//! | `decls` | variable declarations, `{"name": "type"}` with types written as cel-go writes them |
//! | `vars` | variable values as JSON |
//! | `cost` | the exact run-time cost |
//! | `estimate` | the exact static estimate, `[min, max]` |
//! | `sizes` | size hints for the estimate, `{"path": max}` or `{"path": [min, max]}` |
//! | `source` | where the case comes from |
//!
//! Exactly one of `value`, `type`, `error`, `compile_error` and `program_error` is present. The `authorizer` variable
//! is declared wherever the authz library is, and bound to [`FakeAuthorizer::standard`].
//!
//! `"env": "cost_test"` is the environment of Kubernetes' own cost tests
//! (`staging/src/k8s.io/apiserver/pkg/cel/library/cost_test.go`, `testCost`), so that their
//! figures can be recorded as they are: the libraries of the newest version plus JSON Patch,
//! free presence tests, but cel-go's defaults otherwise (no `OptOptimize`, no homogeneous
//! literals, no cross-type comparisons, no literal validators, no cost limit), strings and
//! bytes of unknown size estimated at 0 to 12 (its `testCostEstimator`), and an authorizer
//! that allows everything.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use celerity::kubernetes::{
    AUTHORIZER_VARIABLE, ElementSizeFn, FakeAuthorizer, KubeVersion, KubernetesEnv,
    authorizer_value,
};
use celerity::{
    Env, EnvOptions, EstimateNode, MapActivation, SizeEstimator, SizeRange, Type, Value,
    value_from_json,
};

use crate::known_failures::Verdict;
use crate::report::Counts;
use crate::runner::Status;

/// The first component of every Kubernetes case id, and the "file" the known-failures list
/// files them under.
pub const ID_PREFIX: &str = "kubernetes";

/// The prefix of Kubernetes corpus files in the table and on the command line (`k8s:lists`).
pub const TABLE_PREFIX: &str = "k8s:";

/// The directory of the corpus.
pub fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/kubernetes")
}

/// Which environment a case runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseEnv {
    /// Kubernetes' environment for new expressions at the case's version.
    New,
    /// Kubernetes' environment for stored expressions at the case's version.
    Stored,
    /// The environment of Kubernetes' `cost_test.go` (see the module documentation).
    CostTest,
}

/// What a case expects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// This value (a CEL expression).
    Value(String),
    /// An evaluation error containing this text.
    Error(String),
    /// A compile error containing this text.
    CompileError(String),
    /// An error making the program (after a clean compile) containing this text.
    ProgramError(String),
    /// A value of this type (for values without a literal form, such as authorization
    /// checks).
    Type(String),
}

/// One case.
#[derive(Clone, Debug)]
pub struct Case {
    /// The file's name without `.jsonl`.
    pub file: String,
    /// The case's name.
    pub name: String,
    /// `kubernetes/<file>/<name>`, with `#<position>` appended when the name repeats in the
    /// file.
    pub id: String,
    /// The expression.
    pub expr: String,
    /// The Kubernetes release.
    pub version: KubeVersion,
    /// The compatibility version of new expressions.
    pub compatibility: KubeVersion,
    /// The environment.
    pub env: CaseEnv,
    /// Whether the JSON Patch library is added.
    pub jsonpatch: bool,
    /// Declarations.
    pub decls: Vec<(String, Type)>,
    /// Variable values.
    pub vars: serde_json::Map<String, serde_json::Value>,
    /// The expectation.
    pub expect: Expect,
    /// The exact run-time cost, if recorded.
    pub cost: Option<u64>,
    /// The exact estimate, if recorded.
    pub estimate: Option<(u64, u64)>,
    /// Size hints for the estimate.
    pub sizes: Vec<(String, SizeRange)>,
}

/// One file of the corpus.
#[derive(Clone, Debug)]
pub struct File {
    /// The name without `.jsonl`.
    pub name: String,
    /// Its cases, in order.
    pub cases: Vec<Case>,
}

/// The corpus.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    /// The files, in name order.
    pub files: Vec<File>,
}

impl Corpus {
    /// Every case, in file order.
    pub fn cases(&self) -> impl Iterator<Item = &Case> {
        self.files.iter().flat_map(|f| f.cases.iter())
    }

    /// Loads the files named in `only` (without `.jsonl`), or all of them when `only` is
    /// empty. A malformed line is an error naming the file and line.
    pub fn load(dir: &Path, only: &[String]) -> Result<Corpus, String> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        paths.sort();
        let available: Vec<String> = paths.iter().map(|p| stem(p)).collect();
        let unknown: Vec<&String> = only.iter().filter(|n| !available.contains(n)).collect();
        if !unknown.is_empty() {
            return Err(format!(
                "unknown Kubernetes corpus file(s) {unknown:?}; available: {}",
                available.join(", ")
            ));
        }
        let mut corpus = Corpus::default();
        for path in paths {
            let name = stem(&path);
            if !only.is_empty() && !only.contains(&name) {
                continue;
            }
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            corpus.files.push(parse_file(&name, &text)?);
        }
        Ok(corpus)
    }
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Parses one file's text.
pub fn parse_file(name: &str, text: &str) -> Result<File, String> {
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |m: String| format!("{name}.jsonl:{}: {m}", i + 1);
        let j: serde_json::Value =
            serde_json::from_str(line).map_err(|e| at(format!("bad JSON: {e}")))?;
        cases.push(parse_case(name, &j).map_err(at)?);
    }
    // Ids: the name, with the position appended where the name repeats.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for c in &cases {
        *seen.entry(c.name_for_id()).or_default() += 1;
    }
    for (pos, c) in cases.iter_mut().enumerate() {
        let n = c.name_for_id();
        c.id = if seen[&n] > 1 {
            format!("{ID_PREFIX}/{}/{n}#{pos}", c.file)
        } else {
            format!("{ID_PREFIX}/{}/{n}", c.file)
        };
    }
    Ok(File {
        name: name.to_string(),
        cases,
    })
}

impl Case {
    /// The name with runs of whitespace collapsed (two spaces separate an id from its
    /// reason in the known-failures list).
    fn name_for_id(&self) -> String {
        self.name.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

fn parse_case(file: &str, j: &serde_json::Value) -> Result<Case, String> {
    let obj = j.as_object().ok_or("not an object")?;
    let s = |k: &str| -> Result<Option<String>, String> {
        match obj.get(k) {
            None => Ok(None),
            Some(serde_json::Value::String(v)) => Ok(Some(v.clone())),
            Some(_) => Err(format!("\"{k}\" must be a string")),
        }
    };
    let expr = s("expr")?.ok_or("no \"expr\"")?;
    let name = s("name")?.unwrap_or_else(|| expr.clone());
    let expects: Vec<Expect> = [
        s("value")?.map(Expect::Value),
        s("error")?.map(Expect::Error),
        s("compile_error")?.map(Expect::CompileError),
        s("program_error")?.map(Expect::ProgramError),
        s("type")?.map(Expect::Type),
    ]
    .into_iter()
    .flatten()
    .collect();
    let [expect] = <[Expect; 1]>::try_from(expects).map_err(|_| {
        "exactly one of \"value\", \"type\", \"error\", \"compile_error\" and \"program_error\" is needed"
            .to_string()
    })?;
    let version = match s("version")? {
        Some(v) => celerity::kubernetes::parse_version(&v)?,
        None => KubeVersion::NEWEST,
    };
    let compatibility = match s("compatibility")? {
        Some(v) => celerity::kubernetes::parse_compatibility_version(&v)?,
        None => version,
    };
    let env = match s("env")?.as_deref() {
        None | Some("new") => CaseEnv::New,
        Some("stored") => CaseEnv::Stored,
        Some("cost_test") => CaseEnv::CostTest,
        Some(other) => return Err(format!("unknown env {other:?}")),
    };
    let jsonpatch = match obj.get("jsonpatch") {
        None => false,
        Some(serde_json::Value::Bool(b)) => *b,
        Some(_) => return Err("\"jsonpatch\" must be a boolean".into()),
    };
    let mut decls = Vec::new();
    if let Some(d) = obj.get("decls") {
        let d = d.as_object().ok_or("\"decls\" must be an object")?;
        for (k, v) in d {
            let t = v.as_str().ok_or("declared types are strings")?;
            let ty = Type::parse(t).map_err(|e| format!("decls.{k}: {e}"))?;
            decls.push((k.clone(), ty));
        }
    }
    let vars = match obj.get("vars") {
        None => serde_json::Map::new(),
        Some(v) => v.as_object().ok_or("\"vars\" must be an object")?.clone(),
    };
    let cost = match obj.get("cost") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or("\"cost\" must be a non-negative integer")?,
        ),
    };
    let range = |v: &serde_json::Value| -> Option<(u64, u64)> {
        match v {
            serde_json::Value::Array(a) if a.len() == 2 => Some((a[0].as_u64()?, a[1].as_u64()?)),
            _ => None,
        }
    };
    let estimate = match obj.get("estimate") {
        None => None,
        Some(v) => Some(range(v).ok_or("\"estimate\" must be [min, max]")?),
    };
    let mut sizes = Vec::new();
    if let Some(h) = obj.get("sizes") {
        let h = h.as_object().ok_or("\"sizes\" must be an object")?;
        for (path, v) in h {
            let (min, max) = match v.as_u64() {
                Some(max) => (0, max),
                None => range(v).ok_or("sizes are N or [min, max]")?,
            };
            sizes.push((path.clone(), SizeRange { min, max }));
        }
    }
    if matches!(expect, Expect::CompileError(_) | Expect::ProgramError(_))
        && (cost.is_some() || estimate.is_some())
    {
        return Err("a case expecting a compile or program error has no cost".into());
    }
    Ok(Case {
        file: file.to_string(),
        name,
        id: String::new(),
        expr,
        version,
        compatibility,
        env,
        jsonpatch,
        decls,
        vars,
        expect,
        cost,
        estimate,
        sizes,
    })
}

/// The size `cost_test.go`'s `testCostEstimator` gives strings and bytes whose size is not
/// otherwise known.
pub const COST_TEST_STRING_SIZE: SizeRange = SizeRange { min: 0, max: 12 };

/// The estimator of a case: its hints by path, and for `cost_test` cases strings and bytes
/// of 0 to 12.
struct CaseSizes {
    paths: HashMap<String, SizeRange>,
    strings: Option<SizeRange>,
}

impl SizeEstimator for CaseSizes {
    fn estimate_size(&self, node: &EstimateNode<'_>) -> Option<SizeRange> {
        if let Some(path) = node.path
            && let Some(s) = self.paths.get(&path.join("."))
        {
            return Some(*s);
        }
        match node.ty {
            Type::String | Type::Bytes => self.strings,
            _ => None,
        }
    }
}

/// The environment a case runs in.
pub fn case_env(c: &Case) -> Env {
    let k = match c.env {
        CaseEnv::New => KubernetesEnv::new(c.version).compatibility(c.compatibility),
        CaseEnv::Stored => KubernetesEnv::new(c.version).stored(),
        CaseEnv::CostTest => {
            let sizes: ElementSizeFn = Arc::new(|t: &Type| match t {
                Type::String | Type::Bytes => Some(COST_TEST_STRING_SIZE),
                _ => None,
            });
            KubernetesEnv::newest()
                .with_jsonpatch(true)
                .with_element_sizes(sizes)
        }
    };
    let k = if c.jsonpatch {
        k.with_jsonpatch(true)
    } else {
        k
    };
    let mut b = k.builder();
    if c.env == CaseEnv::CostTest {
        b = b.options(EnvOptions::default().presence_test_has_cost(false));
    }
    for (name, ty) in &c.decls {
        b = b.variable(name, ty.clone());
    }
    b.build()
}

/// How the costs of one case went (for cases that record any).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CostCheck {
    /// Whether the case records a run-time cost, and whether it matched.
    pub cost: Option<bool>,
    /// Whether the case records an estimate, and whether it matched.
    pub estimate: Option<bool>,
}

/// One case and how it went.
#[derive(Clone, Debug)]
pub struct CaseResult<'c> {
    /// The case.
    pub case: &'c Case,
    /// How it went: value, error or compile error, then cost, then estimate; the first
    /// failure decides.
    pub status: Status,
    /// The cost checks, when the case records costs.
    pub costs: CostCheck,
}

/// Runs every case.
pub fn run_corpus(corpus: &Corpus) -> Vec<CaseResult<'_>> {
    corpus.cases().map(run_case).collect()
}

/// The resource the fake authorizer panics for.
const PANICKING_RESOURCE: &str = "resource('panic')";

/// Runs one case; a panic fails it.
pub fn run_case(c: &Case) -> CaseResult<'_> {
    // Where a panic aborts (WebAssembly builds), a host function that panics on purpose
    // (the fake authorizer's `panic` resource) ends the process instead of becoming the
    // errored decision the native build catches it as: such cases cannot run there.
    if cfg!(panic = "abort") && c.expr.contains(PANICKING_RESOURCE) {
        return CaseResult {
            case: c,
            status: Status::Skipped {
                stage: "eval".into(),
                reason: "the authorizer panics on purpose, and a panic aborts this build".into(),
            },
            costs: CostCheck::default(),
        };
    }
    match catch_unwind(AssertUnwindSafe(|| run(c))) {
        Ok((status, costs)) => CaseResult {
            case: c,
            status,
            costs,
        },
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            CaseResult {
                case: c,
                status: Status::Failed {
                    stage: "eval".into(),
                    reason: format!("panicked: {msg}"),
                },
                costs: CostCheck::default(),
            }
        }
    }
}

/// Both backends must fail to make the program, with an error containing `want`.
fn expect_program_error(
    want: &str,
    program_for: impl Fn(celerity::Backend) -> Result<celerity::Program, celerity::Issues>,
) -> Status {
    for (stage, backend) in [
        ("program", celerity::Backend::Interpreter),
        ("jit", celerity::Backend::Jit),
    ] {
        match program_for(backend) {
            Ok(_) => {
                return fail(
                    stage,
                    format!("made the program; expected an error containing {want:?}"),
                );
            }
            Err(issues) if !issues.to_string().contains(want) => {
                return fail(
                    stage,
                    format!("program error does not contain {want:?}:\n{issues}"),
                );
            }
            Err(_) => {}
        }
    }
    Status::Passed
}

fn fail(stage: &str, reason: String) -> Status {
    Status::Failed {
        stage: stage.into(),
        reason,
    }
}

fn run(c: &Case) -> (Status, CostCheck) {
    let env = case_env(c);
    let mut costs = CostCheck::default();
    let mut act = MapActivation::new();
    if env
        .variables()
        .iter()
        .any(|v| v.name == AUTHORIZER_VARIABLE)
    {
        let authorizer = if c.env == CaseEnv::CostTest {
            FakeAuthorizer::allow_all()
        } else {
            FakeAuthorizer::standard()
        };
        act.bind(
            AUTHORIZER_VARIABLE,
            authorizer_value(None, Arc::new(authorizer)),
        );
    }
    for (k, v) in &c.vars {
        match value_from_json(v) {
            Ok(v) => {
                act.bind(k.as_str(), v);
            }
            Err(e) => return (fail("input", format!("vars.{k}: {e}")), costs),
        }
    }
    let ast = match (env.compile(&c.expr), &c.expect) {
        (Err(issues), Expect::CompileError(want)) => {
            let got = issues.to_string();
            let status = if got.contains(want.as_str()) {
                Status::Passed
            } else {
                fail(
                    "check",
                    format!("compile error does not contain {want:?}:\n{got}"),
                )
            };
            return (status, costs);
        }
        (Err(issues), _) => return (fail("check", issues.to_string()), costs),
        (Ok(_), Expect::CompileError(want)) => {
            return (
                fail(
                    "check",
                    format!("compiled; expected a compile error {want:?}"),
                ),
                costs,
            );
        }
        (Ok(ast), _) => ast,
    };
    // Every case runs on both backends, which must agree on the value, the error and the
    // cost; the interpreter's result is then compared with the expectation.
    let program_for =
        |backend| env.program_with(&ast, celerity::ProgramOptions::default().backend(backend));
    if let Expect::ProgramError(want) = &c.expect {
        return (expect_program_error(want, program_for), costs);
    }
    let program = match program_for(celerity::Backend::Interpreter) {
        Ok(p) => p,
        Err(issues) => return (fail("program", issues.to_string()), costs),
    };
    let (result, details) = program.eval_details(&act);
    let jit = match program_for(celerity::Backend::Jit) {
        Ok(p) => p,
        Err(issues) => return (fail("jit", issues.to_string()), costs),
    };
    let (jit_result, jit_details) = jit.eval_details(&act);
    if let Some(diff) = crate::stages::differential(
        (&result, details.actual_cost),
        (&jit_result, jit_details.actual_cost),
    ) {
        return (fail("jit", diff), costs);
    }
    let outcome = match (&c.expect, result) {
        (Expect::Error(want), Err(e)) if e.message.contains(want.as_str()) => Ok(()),
        (Expect::Error(want), Err(e)) => {
            Err(format!("error {:?} does not contain {want:?}", e.message))
        }
        (Expect::Error(want), Ok(v)) => Err(format!(
            "got {}, expected an error containing {want:?}",
            celerity::to_cel_literal(&v)
        )),
        (Expect::Value(_), Err(e)) => Err(format!("unexpected error: {}", e.message)),
        (Expect::Value(want), Ok(got)) => compare_value(&env, &act, want, &got),
        (Expect::Type(want), Ok(got)) => {
            let ty = got.type_of().to_string();
            if ty == *want {
                Ok(())
            } else {
                Err(format!("got a value of type {ty}, expected {want}"))
            }
        }
        (Expect::Type(_), Err(e)) => Err(format!("unexpected error: {}", e.message)),
        (Expect::CompileError(_) | Expect::ProgramError(_), _) => unreachable!("handled above"),
    };
    let mut problems = Vec::new();
    let mut stage = "eval";
    if let Err(m) = outcome {
        problems.push(m);
    }
    if let Some(want) = c.cost {
        let ok = details.actual_cost == want;
        costs.cost = Some(ok);
        if !ok {
            if problems.is_empty() {
                stage = "cost";
            }
            problems.push(format!("cost {}, expected {want}", details.actual_cost));
        }
    }
    if let Some((lo, hi)) = c.estimate {
        let sizes = CaseSizes {
            paths: c.sizes.iter().cloned().collect(),
            strings: (c.env == CaseEnv::CostTest).then_some(COST_TEST_STRING_SIZE),
        };
        let got = env.estimate_cost(&ast, &sizes).unwrap_or_default();
        let ok = (got.min, got.max) == (lo, hi);
        costs.estimate = Some(ok);
        if !ok {
            if problems.is_empty() {
                stage = "estimate";
            }
            problems.push(format!(
                "estimate [{}, {}], expected [{lo}, {hi}]",
                got.min, got.max
            ));
        }
    }
    let status = if problems.is_empty() {
        Status::Passed
    } else {
        fail(stage, problems.join("; "))
    };
    (status, costs)
}

/// Compares a result with the expected value, written as a CEL expression.
fn compare_value(env: &Env, act: &MapActivation, want: &str, got: &Value) -> Result<(), String> {
    let want_ast = env
        .compile(want)
        .map_err(|e| format!("the expected value {want:?} does not compile: {e}"))?;
    let want_v = env
        .program(&want_ast)
        .map_err(|e| e.to_string())?
        .eval(act)
        .map_err(|e| format!("the expected value {want:?} fails: {}", e.message))?;
    // Type-tagged identity; doubles bit for bit (so -0.0 and NaN are checked exactly), or
    // equal.
    let same = match (got, &want_v) {
        (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits() || x == y,
        _ => got.identical(&want_v),
    };
    if same {
        Ok(())
    } else {
        Err(format!(
            "got {}, expected {}",
            celerity::to_cel_literal(got),
            celerity::to_cel_literal(&want_v)
        ))
    }
}

/// The counts per file (as `k8s:<file>`) in corpus order.
pub fn counts(corpus: &Corpus, results: &[CaseResult<'_>]) -> Vec<(String, Counts)> {
    corpus
        .files
        .iter()
        .map(|f| {
            let mut c = Counts::default();
            for r in results.iter().filter(|r| r.case.file == f.name) {
                c.add(&r.status);
            }
            (format!("{TABLE_PREFIX}{}", f.name), c)
        })
        .collect()
}

/// The cost figures: cases recording a cost and how many match, the same for estimates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CostCounts {
    /// Cases recording a run-time cost.
    pub with_cost: usize,
    /// Of those, matching.
    pub cost_matches: usize,
    /// Cases recording an estimate.
    pub with_estimate: usize,
    /// Of those, matching.
    pub estimate_matches: usize,
}

/// Counts the cost checks.
pub fn cost_counts(results: &[CaseResult<'_>]) -> CostCounts {
    let mut out = CostCounts::default();
    for r in results {
        if let Some(ok) = r.costs.cost {
            out.with_cost += 1;
            out.cost_matches += usize::from(ok);
        }
        if let Some(ok) = r.costs.estimate {
            out.with_estimate += 1;
            out.estimate_matches += usize::from(ok);
        }
    }
    out
}

/// The line printed under the table.
pub fn cost_line(c: &CostCounts) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kubernetes costs: {} of {} recorded run-time costs match, {} of {} estimates",
        c.cost_matches, c.with_cost, c.estimate_matches, c.with_estimate
    );
    out
}

/// The summary's `kubernetes` section: counts per file (`k8s:<file>`), totals, and the cost
/// figures.
pub fn summary_json(corpus: &Corpus, results: &[CaseResult<'_>]) -> serde_json::Value {
    let mut files = serde_json::Map::new();
    let mut totals = Counts::default();
    for (name, c) in counts(corpus, results) {
        totals.passed += c.passed;
        totals.failed += c.failed;
        totals.skipped += c.skipped;
        files.insert(
            name,
            serde_json::json!({"passed": c.passed, "failed": c.failed, "skipped": c.skipped}),
        );
    }
    let c = cost_counts(results);
    serde_json::json!({
        "files": files,
        "totals": {"passed": totals.passed, "failed": totals.failed, "skipped": totals.skipped},
        "costs": {
            "with_cost": c.with_cost,
            "cost_matches": c.cost_matches,
            "with_estimate": c.with_estimate,
            "estimate_matches": c.estimate_matches,
        },
    })
}

/// The verdicts for the known-failures comparison.
pub fn verdicts<'r>(
    results: &'r [CaseResult<'_>],
) -> impl Iterator<Item = (&'r str, Verdict)> + 'r {
    results
        .iter()
        .map(|r| (r.case.id.as_str(), r.status.verdict()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_fields() {
        let f = parse_file(
            "lists",
            r#"{"name": "a  b", "expr": "1", "value": "1", "cost": 0, "estimate": [0, 0]}
{"name": "dup", "expr": "1", "value": "1", "env": "stored", "version": "1.30"}
{"name": "dup", "expr": "1 +", "compile_error": "Syntax error", "jsonpatch": true}
"#,
        )
        .unwrap();
        let ids: Vec<&str> = f.cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "kubernetes/lists/a b",
                "kubernetes/lists/dup#1",
                "kubernetes/lists/dup#2"
            ]
        );
        assert_eq!(f.cases[0].cost, Some(0));
        assert_eq!(f.cases[1].env, CaseEnv::Stored);
        assert_eq!(f.cases[1].version, KubeVersion::new(1, 30));
        assert!(f.cases[2].jsonpatch);
    }

    #[test]
    fn malformed_lines_are_errors() {
        for line in [
            r#"{"expr": "1"}"#,
            r#"{"expr": "1", "value": "1", "error": "x"}"#,
            r#"{"expr": "1", "value": "1", "env": "old"}"#,
            r#"{"expr": "1", "value": "1", "version": "1.5"}"#,
            r#"{"expr": "1", "value": "1", "version": "1.29"}"#,
            r#"{"expr": "1", "value": "1", "compatibility": "1.22"}"#,
            r#"{"expr": "1", "compile_error": "x", "cost": 1}"#,
            r#"{"expr": "1", "value": "1", "estimate": [1]}"#,
            "not json",
        ] {
            assert!(parse_file("f", line).is_err(), "{line}");
        }
    }
}
