//! `cel eval`: one expression, printed as a value and its type (or, with `--batch`, a JSON
//! line per case).

use std::process::ExitCode;

use celerity::{Env, MapActivation, ProgramOptions, Type, Value};
use clap::ValueEnum;

use crate::env::{EnvArgs, Profile, build_env, json_variable, parse_decls};
use crate::output::Out;
use crate::{Output, bad_input};

#[derive(clap::Args, Debug)]
pub(crate) struct EvalArgs {
    /// The expression (omit with --batch).
    pub(crate) expr: Option<String>,
    /// Bind a variable to a JSON value: `name=JSON`. A variable declared with `--decl` takes
    /// its JSON as its type (`timestamp`: RFC 3339, `duration`: "1h30m", `bytes`: base64,
    /// `uint`/`int`: integers or their decimal strings, `double`: any number; lists and maps of
    /// them), and JSON that does not fit is an error; undeclared variables are `dyn`.
    #[arg(long = "var", value_name = "NAME=JSON")]
    pub(crate) vars: Vec<String>,
    /// Bind the members of a JSON object file as variables.
    #[arg(long = "vars", value_name = "FILE.json")]
    pub(crate) vars_file: Option<String>,
    /// Evaluate in the environment of another place Kubernetes evaluates CEL:
    /// `dra-selector` (`device`), `authn-claims` (`claims`), `authn-user` (`user`),
    /// `authz-match` (`request`: a SubjectAccessReview spec) or `admission-webhook-match`
    /// (`object`, `oldObject`, `request`, `namespaceObject`; `authorizer` allows
    /// everything), of the version `--profile kubernetes=V` names (default: the newest),
    /// with its variables, cost limit and messages. Variables take the JSON the API server
    /// receives. With `--batch`, each line `{"expr": ..., "vars": {...}}` prints
    /// `{"ok":true,"value":...,"type":...,"cost":N,"est_min":N,"est_max":N}` or
    /// `{"ok":false,"error":...,"phase":...,"cost":N}`.
    #[arg(long = "env", value_name = "NAME")]
    pub(crate) place: Option<String>,
    #[command(flatten)]
    pub(crate) env: EnvArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub(crate) output: Output,
    /// Read one case per line from a JSONL file (`-` for stdin):
    /// `{"expr": "...", "vars": {...}, "decls": {"x": "list(int)"}, "container": "..."}`.
    #[arg(long, value_name = "FILE.jsonl")]
    pub(crate) batch: Option<String>,
    /// Also print the evaluation's run-time cost (for failed evaluations too: the cost
    /// reached when it failed).
    #[arg(long)]
    pub(crate) cost: bool,
    /// Stop any evaluation whose cost exceeds this limit.
    #[arg(long, value_name = "N")]
    pub(crate) cost_limit: Option<u64>,
    /// How to run the expression: the interpreter, native code (compiled with Cranelift),
    /// or `auto` (interpret, compile programs evaluated often). All give the same results.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub(crate) backend: BackendArg,
    /// Print a stage of compilation to stdout before the result: the parsed tree, the
    /// checked tree, the IR or the Cranelift function (`ir` and `clif` compile natively).
    #[arg(long, value_enum, value_name = "STAGE")]
    pub(crate) dump: Vec<Dump>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum BackendArg {
    Interpreter,
    Jit,
    Auto,
}

impl BackendArg {
    pub(crate) fn backend(self) -> celerity::Backend {
        match self {
            BackendArg::Interpreter => celerity::Backend::Interpreter,
            BackendArg::Jit => celerity::Backend::Jit,
            BackendArg::Auto => celerity::Backend::Auto,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Dump {
    Ast,
    Checked,
    Ir,
    Clif,
}

/// How `evaluate` makes and runs programs.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunOptions {
    pub(crate) backend: Option<celerity::Backend>,
    pub(crate) dump: Vec<Dump>,
}

/// The type to report for a result: the checked type when it says something, else the
/// value's runtime type.
pub(crate) fn type_name(checked: Option<&Type>, v: &Value) -> String {
    match checked {
        Some(t) if *t != Type::Dyn => t.to_string(),
        _ => v.type_of().to_string(),
    }
}

/// Runs `cel eval`.
pub(crate) fn run(args: &EvalArgs) -> ExitCode {
    if let Some(name) = &args.place {
        return crate::places::run(args, name);
    }
    match (&args.batch, &args.expr) {
        (Some(_), Some(_)) => bad_input("give either an expression or --batch FILE, not both"),
        (Some(path), None) => crate::batch::run_eval_batch(path, args),
        (None, Some(expr)) => run_one(args, expr),
        (None, None) => bad_input("an expression (or --batch FILE) is required"),
    }
}

fn run_one(args: &EvalArgs, expr: &str) -> ExitCode {
    let decls = match parse_decls(&args.env.decls) {
        Ok(d) => d,
        Err(e) => {
            return bad_input(e);
        }
    };
    let pool = match args.env.descriptor_pool() {
        Ok(p) => p,
        Err(e) => {
            return bad_input(e);
        }
    };
    let mut act = MapActivation::new();
    let mut names = Vec::new();
    if let Some(path) = &args.vars_file {
        let text = match crate::input::read_text(path) {
            Ok(t) => t,
            Err(e) => {
                return bad_input(format!("reading {e}"));
            }
        };
        let json: serde_json::Value = match crate::input::parse_json(&text) {
            Ok(j) => j,
            Err(e) => {
                return bad_input(format!("{path}: {e}"));
            }
        };
        let serde_json::Value::Object(members) = &json else {
            return bad_input(format!("{path}: variables must be a JSON object"));
        };
        for (name, j) in members {
            match json_variable(name, j, &decls, pool.as_ref()) {
                Ok(v) => {
                    names.push(name.clone());
                    act.bind(name.as_str(), v);
                }
                Err(e) => {
                    return bad_input(format!("{path}: {e}"));
                }
            }
        }
    }
    for var in &args.vars {
        let Some((name, json)) = var.split_once('=') else {
            return bad_input(format!("--var '{var}': expected NAME=JSON"));
        };
        let json = match serde_json::from_str::<serde_json::Value>(json) {
            Ok(j) => j,
            Err(e) => {
                return bad_input(format!("--var '{name}': {e}"));
            }
        };
        match json_variable(name, &json, &decls, pool.as_ref()) {
            Ok(v) => {
                names.push(name.to_string());
                act.bind(name, v);
            }
            Err(e) => {
                return bad_input(e);
            }
        }
    }
    let mut profile = match Profile::parse(args.env.profile.as_deref(), args.env.stored) {
        Ok(p) => p,
        Err(e) => {
            return bad_input(e);
        }
    };
    if args.cost_limit.is_some() {
        profile.set_cost_limit(args.cost_limit);
    }
    let env = build_env(
        &decls,
        names,
        args.env.container.as_deref(),
        &profile,
        pool.as_ref(),
    );
    let mut defaults = MapActivation::new();
    profile.bind_defaults(&env, &mut defaults);
    for (name, v) in act.iter() {
        defaults.bind(name, v.clone());
    }
    let run = RunOptions {
        backend: Some(args.backend.backend()),
        dump: args.dump.clone(),
    };
    let outcome = evaluate(&env, expr, &defaults, &run);
    let mut out = Out::new();
    match args.output {
        Output::Json => out.line(outcome.to_json(args.cost)),
        Output::Text => {
            match &outcome {
                Outcome::Ok { value, ty, .. } => out.line(format!("{value} : {ty}")),
                Outcome::Err { error, .. } => eprintln!("{error}"),
            }
            if args.cost
                && let Some(c) = outcome.cost()
            {
                out.line(format!("cost: {c}"));
            }
        }
    }
    if matches!(outcome, Outcome::Ok { .. }) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

pub(crate) enum Outcome {
    Ok {
        value: String,
        ty: String,
        cost: u64,
    },
    Err {
        phase: &'static str,
        error: String,
        /// For evaluation errors, the cost reached when evaluation failed.
        cost: Option<u64>,
    },
}

impl Outcome {
    pub(crate) fn cost(&self) -> Option<u64> {
        match self {
            Outcome::Ok { cost, .. } => Some(*cost),
            Outcome::Err { cost, .. } => *cost,
        }
    }

    pub(crate) fn to_json(&self, with_cost: bool) -> serde_json::Value {
        let mut j = match self {
            Outcome::Ok { value, ty, .. } => {
                serde_json::json!({"ok": true, "type": ty, "value": value})
            }
            Outcome::Err { phase, error, .. } => {
                serde_json::json!({"ok": false, "phase": phase, "error": error})
            }
        };
        if with_cost && let (Some(c), Some(obj)) = (self.cost(), j.as_object_mut()) {
            obj.insert("cost".into(), serde_json::json!(c));
        }
        j
    }
}

pub(crate) fn evaluate(env: &Env, expr: &str, act: &MapActivation, run: &RunOptions) -> Outcome {
    let ast = match env.compile(expr) {
        Ok(a) => a,
        Err(issues) => {
            return Outcome::Err {
                phase: "compile",
                error: issues.to_string(),
                cost: None,
            };
        }
    };
    let wants = |d: Dump| run.dump.contains(&d);
    if wants(Dump::Ast) {
        crate::output::line(ast.syntax_text());
    }
    if wants(Dump::Checked) {
        crate::output::line(ast.checked_text().unwrap_or_default());
    }
    let mut options =
        ProgramOptions::default().keep_code_text(wants(Dump::Ir) || wants(Dump::Clif));
    options.backend = match run.backend {
        // The code can only be shown once it is compiled.
        _ if options.keep_code_text => celerity::Backend::Jit,
        Some(b) => b,
        None => env.options().backend,
    };
    let program = match env.program_with(&ast, options) {
        Ok(p) => p,
        Err(issues) => {
            return Outcome::Err {
                phase: "compile",
                error: issues.to_string(),
                cost: None,
            };
        }
    };
    if wants(Dump::Ir) {
        crate::output::line(program.ir_text().unwrap_or_default());
    }
    if wants(Dump::Clif) {
        crate::output::line(program.clif_text().unwrap_or_default());
    }
    let (result, details) = program.eval_details(act);
    match result {
        Ok(v) => Outcome::Ok {
            value: celerity::to_cel_literal(&v),
            ty: type_name(ast.result_type(), &v),
            cost: details.actual_cost,
        },
        Err(e) => Outcome::Err {
            phase: "eval",
            error: e.to_string(),
            cost: Some(details.actual_cost),
        },
    }
}
