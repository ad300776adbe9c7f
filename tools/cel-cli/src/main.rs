//! `cel`: evaluate, check and inspect CEL expressions from the command line.
//!
//! ```text
//! cel eval 'x + 1' --var x=41            # 42 : int
//! cel eval 'self.a' --vars obj.json --decl 'self:map(string, int)'
//! cel check 'size([1, 2]) > 1'           # bool
//! cel eval --batch cases.jsonl           # one JSON result per input line
//! cel eval 'l.map(x, x * 2)' --var 'l=[1,2,3]' --cost --cost-limit 100
//! cel cost 'self.items.all(i, i.size() < 10)' --decl 'self:map(string, list(string))' --size self.items=20
//! cel eval --profile kubernetes "duration('1h') > duration('1m')"
//! cel eval --profile kubernetes=1.30 --stored "isSemver('1.0.0')"
//! cel functions --profile kubernetes=1.34 quantity
//! ```
//!
//! `--profile kubernetes[=VERSION]` compiles and evaluates in the environment of that
//! Kubernetes version (default: the newest supported), for new expressions, or with
//! `--stored` for expressions already stored; see `celerity::kubernetes`.
//!
//! Diagnostics are printed in cel-go's form and make the command exit with status 1.
//! This crate only talks to the `celerity` facade.

#![forbid(unsafe_code)]

use std::io::{BufRead, Write};
use std::process::ExitCode;

use celerity::kubernetes::{self, KubernetesEnv};
use celerity::{
    DescriptorPool, Env, EnvBuilder, EnvOptions, FunctionDecl, MapActivation, OverloadDecl,
    PathSizes, ProgramOptions, SizeRange, Type, Value,
};
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "cel",
    version,
    about = "Evaluate and check Common Expression Language expressions"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Evaluate an expression and print its value and type.
    Eval(EvalArgs),
    /// Type-check an expression and print its type.
    Check(CheckArgs),
    /// Print the static cost estimate of an expression: the cheapest and the most expensive
    /// run-time cost, in cel-go's units.
    Cost(CostArgs),
    /// List the functions an environment provides, with their overloads' signatures and ids
    /// (operators under their internal names, `_+_`; macros such as `all` or `has` are not
    /// functions and are not listed).
    Functions(FunctionsArgs),
}

#[derive(clap::Args, Debug, Clone)]
struct EnvArgs {
    /// Declare a variable: `name:type`, the type written as cel-go writes it (`list(int)`).
    #[arg(long = "decl", value_name = "NAME:TYPE")]
    decls: Vec<String>,
    /// The container names are resolved in.
    #[arg(long)]
    container: Option<String>,
    /// An environment profile: `default` (every cel-go extension library) or
    /// `kubernetes[=VERSION]`, the environment of a Kubernetes version (default: the newest
    /// supported) for new expressions: its libraries and their versions, its options
    /// (homogeneous literals, cross-type comparisons, literal validators, OptOptimize, free
    /// presence tests), Kubernetes' costs and the per-call cost limit of 1,000,000. The
    /// `authorizer` variable is declared (1.27 and later) and bound to an authorizer that
    /// allows everything.
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// With `--profile kubernetes`: the environment for stored expressions (everything not
    /// removed, at the newest library versions) instead of new ones.
    #[arg(long)]
    stored: bool,
    /// A `.proto` file whose messages and enums expressions may use (repeatable). A variable
    /// declared with a message type (`--decl item:shop.Item`) takes its value as that
    /// message's protobuf JSON.
    #[arg(long = "proto", value_name = "FILE.proto")]
    protos: Vec<String>,
    /// Where `--proto` files and their imports are found (repeatable; default: the current
    /// directory). The well-known types are built in.
    #[arg(long = "proto-path", value_name = "DIR")]
    proto_paths: Vec<String>,
}

impl EnvArgs {
    /// The descriptors of the `--proto` files, compiled; `None` without any.
    fn descriptor_pool(&self) -> Result<Option<DescriptorPool>, String> {
        if self.protos.is_empty() {
            return Ok(None);
        }
        let includes: Vec<&str> = if self.proto_paths.is_empty() {
            vec!["."]
        } else {
            self.proto_paths.iter().map(String::as_str).collect()
        };
        let mut compiler = protox::Compiler::new(includes).map_err(|e| e.to_string())?;
        compiler.include_imports(true);
        compiler
            .open_files(&self.protos)
            .map_err(|e| format!("--proto: {e}"))?;
        Ok(Some(compiler.descriptor_pool()))
    }
}

/// A variable's value from JSON: protobuf's JSON form of the message, for a variable declared
/// with a message type the descriptors know; CEL's JSON mapping otherwise.
fn json_variable(
    name: &str,
    json: &serde_json::Value,
    decls: &[(String, Type)],
    pool: Option<&DescriptorPool>,
) -> Result<Value, String> {
    let message = decls.iter().find_map(|(n, t)| match t {
        Type::Message(m) if n == name => pool.and_then(|p| p.get_message_by_name(m)),
        _ => None,
    });
    match message {
        Some(d) => {
            let m =
                prost_reflect::DynamicMessage::deserialize(d, json).map_err(|e| e.to_string())?;
            celerity::proto::from_message(m).map_err(|e| e.message)
        }
        None => celerity::value_from_json(json).map_err(|e| e.to_string()),
    }
}

#[derive(clap::Args, Debug)]
struct EvalArgs {
    /// The expression (omit with --batch).
    expr: Option<String>,
    /// Bind a variable to a JSON value: `name=JSON` (undeclared variables are `dyn`).
    #[arg(long = "var", value_name = "NAME=JSON")]
    vars: Vec<String>,
    /// Bind the members of a JSON object file as variables.
    #[arg(long = "vars", value_name = "FILE.json")]
    vars_file: Option<String>,
    #[command(flatten)]
    env: EnvArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
    /// Read one case per line from a JSONL file (`-` for stdin):
    /// `{"expr": "...", "vars": {...}, "decls": {"x": "list(int)"}, "container": "..."}`.
    #[arg(long, value_name = "FILE.jsonl")]
    batch: Option<String>,
    /// Also print the evaluation's run-time cost (for failed evaluations too: the cost
    /// reached when it failed).
    #[arg(long)]
    cost: bool,
    /// Stop any evaluation whose cost exceeds this limit.
    #[arg(long, value_name = "N")]
    cost_limit: Option<u64>,
    /// How to run the expression: the interpreter, native code (compiled with Cranelift),
    /// or `auto` (interpret, compile programs evaluated often). All give the same results.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Print a stage of compilation to stdout before the result: the parsed tree, the
    /// checked tree, the IR or the Cranelift function (`ir` and `clif` compile natively).
    #[arg(long, value_enum, value_name = "STAGE")]
    dump: Vec<Dump>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum BackendArg {
    Interpreter,
    Jit,
    Auto,
}

impl BackendArg {
    fn backend(self) -> celerity::Backend {
        match self {
            BackendArg::Interpreter => celerity::Backend::Interpreter,
            BackendArg::Jit => celerity::Backend::Jit,
            BackendArg::Auto => celerity::Backend::Auto,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Dump {
    Ast,
    Checked,
    Ir,
    Clif,
}

/// How `evaluate` makes and runs programs.
#[derive(Clone, Debug, Default)]
struct RunOptions {
    backend: Option<celerity::Backend>,
    dump: Vec<Dump>,
}

#[derive(clap::Args, Debug)]
struct CostArgs {
    /// The expression.
    expr: String,
    #[command(flatten)]
    env: EnvArgs,
    /// The size of a variable path: `path=N` (at most N) or `path=MIN..MAX`; elements are
    /// `@items`, map keys `@keys`, values `@values` (`self.items.@items=10`).
    #[arg(long = "size", value_name = "PATH=N")]
    sizes: Vec<String>,
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// The expression.
    expr: String,
    #[command(flatten)]
    env: EnvArgs,
}

#[derive(clap::Args, Debug)]
struct FunctionsArgs {
    /// List only functions whose name contains this text.
    filter: Option<String>,
    /// An environment profile (see `cel eval --help`).
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// With `--profile kubernetes`: the environment for stored expressions.
    #[arg(long)]
    stored: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Output {
    Text,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Eval(args) => match &args.batch {
            Some(path) => run_batch(path, &args),
            None => run_eval(&args),
        },
        Command::Check(args) => run_check(&args),
        Command::Cost(args) => run_cost(&args),
        Command::Functions(args) => run_functions(&args),
    }
}

/// An environment profile.
#[derive(Clone, Debug)]
enum Profile {
    /// cel-go's defaults with every extension library, with these options.
    Default(EnvOptions),
    /// A Kubernetes environment, with an optional cost limit replacing Kubernetes'.
    Kubernetes(KubernetesEnv, Option<Option<u64>>),
}

impl Profile {
    /// The profile a `--profile` value (`default`, `kubernetes`, `kubernetes=1.34`) and
    /// `--stored` name, or an error.
    fn parse(profile: Option<&str>, stored: bool) -> Result<Profile, String> {
        let p = match profile {
            None | Some("cel-go") | Some("default") => Profile::Default(EnvOptions::default()),
            Some("kubernetes") => Profile::Kubernetes(KubernetesEnv::newest(), None),
            Some(p) if p.starts_with("kubernetes=") => {
                let version = &p["kubernetes=".len()..];
                Profile::Kubernetes(KubernetesEnv::parse(version)?, None)
            }
            Some(other) => {
                return Err(format!(
                    "unknown profile '{other}' (known: default, kubernetes, kubernetes=VERSION)"
                ));
            }
        };
        match (p, stored) {
            (Profile::Kubernetes(k, l), true) => Ok(Profile::Kubernetes(k.stored(), l)),
            (Profile::Default(_), true) => {
                Err("--stored applies to --profile kubernetes only".to_string())
            }
            (p, false) => Ok(p),
        }
    }

    /// Replaces the profile's cost limit.
    fn set_cost_limit(&mut self, limit: Option<u64>) {
        match self {
            Profile::Default(o) => o.cost_limit = limit,
            Profile::Kubernetes(_, l) => *l = Some(limit),
        }
    }

    /// A builder holding the profile's environment.
    fn builder(&self) -> EnvBuilder {
        match self {
            Profile::Default(o) => Env::builder().options(o.clone()).all_extension_libraries(),
            Profile::Kubernetes(k, limit) => {
                let b = k.builder();
                match limit {
                    Some(l) => b.cost_limit(*l),
                    None => b,
                }
            }
        }
    }

    /// Variables the profile binds before the user's: Kubernetes' `authorizer`, allowing
    /// everything, where the environment declares it.
    fn bind_defaults(&self, env: &Env, act: &mut MapActivation) {
        if matches!(self, Profile::Kubernetes(..))
            && env
                .variables()
                .iter()
                .any(|v| v.name == kubernetes::AUTHORIZER_VARIABLE)
        {
            act.bind(
                kubernetes::AUTHORIZER_VARIABLE,
                kubernetes::allow_all_authorizer(),
            );
        }
    }
}

/// Builds an environment with the given declarations; variables bound without a
/// declaration are declared `dyn`.
fn build_env(
    decls: &[(String, Type)],
    undeclared: impl IntoIterator<Item = String>,
    container: Option<&str>,
    profile: &Profile,
    pool: Option<&DescriptorPool>,
) -> Env {
    let mut b = profile.builder();
    if let Some(pool) = pool {
        b = b.descriptor_pool(pool.clone());
    }
    for (name, ty) in decls {
        b = b.variable(name, ty.clone());
    }
    for name in undeclared {
        if !decls.iter().any(|(n, _)| *n == name) {
            b = b.variable(&name, Type::Dyn);
        }
    }
    if let Some(c) = container {
        b = b.container(c);
    }
    b.build()
}

/// The environment of `check` and `cost`: the declarations, the container, the profile and
/// the `--proto` files.
fn declared_env(
    args: &EnvArgs,
    decls: &[(String, Type)],
    profile: &Profile,
) -> Result<Env, String> {
    let pool = args.descriptor_pool()?;
    Ok(build_env(
        decls,
        Vec::new(),
        args.container.as_deref(),
        profile,
        pool.as_ref(),
    ))
}

fn parse_decls(decls: &[String]) -> Result<Vec<(String, Type)>, String> {
    decls
        .iter()
        .map(|d| {
            let (name, ty) = d
                .split_once(':')
                .ok_or_else(|| format!("--decl '{d}': expected NAME:TYPE"))?;
            let ty = Type::parse(ty.trim()).map_err(|e| format!("--decl '{d}': {e}"))?;
            Ok((name.trim().to_string(), ty))
        })
        .collect()
}

/// The type to report for a result: the checked type when it says something, else the
/// value's runtime type.
fn type_name(checked: Option<&Type>, v: &Value) -> String {
    match checked {
        Some(t) if *t != Type::Dyn => t.to_string(),
        _ => v.type_of().to_string(),
    }
}

fn run_eval(args: &EvalArgs) -> ExitCode {
    let Some(expr) = &args.expr else {
        eprintln!("error: an expression (or --batch FILE) is required");
        return ExitCode::from(2);
    };
    let decls = match parse_decls(&args.env.decls) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let pool = match args.env.descriptor_pool() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut act = MapActivation::new();
    let mut names = Vec::new();
    if let Some(path) = &args.vars_file {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: reading {path}: {e}");
                return ExitCode::from(2);
            }
        };
        let json: serde_json::Value = match serde_json::from_str(&text) {
            Ok(j) => j,
            Err(e) => {
                eprintln!("error: {path}: {e}");
                return ExitCode::from(2);
            }
        };
        let serde_json::Value::Object(members) = &json else {
            eprintln!("error: {path}: variables must be a JSON object");
            return ExitCode::from(2);
        };
        for (name, j) in members {
            match json_variable(name, j, &decls, pool.as_ref()) {
                Ok(v) => {
                    names.push(name.clone());
                    act.bind(name.as_str(), v);
                }
                Err(e) => {
                    eprintln!("error: {path}: '{name}': {e}");
                    return ExitCode::from(2);
                }
            }
        }
    }
    for var in &args.vars {
        let Some((name, json)) = var.split_once('=') else {
            eprintln!("error: --var '{var}': expected NAME=JSON");
            return ExitCode::from(2);
        };
        let value = serde_json::from_str::<serde_json::Value>(json)
            .map_err(|e| e.to_string())
            .and_then(|j| json_variable(name, &j, &decls, pool.as_ref()));
        match value {
            Ok(v) => {
                names.push(name.to_string());
                act.bind(name, v);
            }
            Err(e) => {
                eprintln!("error: --var '{name}': {e}");
                return ExitCode::from(2);
            }
        }
    }
    let mut profile = match Profile::parse(args.env.profile.as_deref(), args.env.stored) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
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
    match args.output {
        Output::Json => {
            println!("{}", outcome.to_json(args.cost));
        }
        Output::Text => {
            match &outcome {
                Outcome::Ok { value, ty, .. } => println!("{value} : {ty}"),
                Outcome::Err { error, .. } => eprintln!("{error}"),
            }
            if args.cost
                && let Some(c) = outcome.cost()
            {
                println!("cost: {c}");
            }
        }
    }
    if matches!(outcome, Outcome::Ok { .. }) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

enum Outcome {
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
    fn cost(&self) -> Option<u64> {
        match self {
            Outcome::Ok { cost, .. } => Some(*cost),
            Outcome::Err { cost, .. } => *cost,
        }
    }

    fn to_json(&self, with_cost: bool) -> serde_json::Value {
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

fn evaluate(env: &Env, expr: &str, act: &MapActivation, run: &RunOptions) -> Outcome {
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
        println!("{}", ast.syntax_text());
    }
    if wants(Dump::Checked) {
        println!("{}", ast.checked_text().unwrap_or_default());
    }
    let mut options = ProgramOptions {
        keep_code_text: wants(Dump::Ir) || wants(Dump::Clif),
        ..ProgramOptions::default()
    };
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
        println!("{}", program.ir_text().unwrap_or_default());
    }
    if wants(Dump::Clif) {
        println!("{}", program.clif_text().unwrap_or_default());
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

fn run_check(args: &CheckArgs) -> ExitCode {
    let decls = match parse_decls(&args.env.decls) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let profile = match Profile::parse(args.env.profile.as_deref(), args.env.stored) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let env = match declared_env(&args.env, &decls, &profile) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match env.compile(&args.expr) {
        Ok(ast) => {
            println!(
                "{}",
                ast.result_type().map(|t| t.to_string()).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Err(issues) => {
            eprintln!("{issues}");
            ExitCode::from(1)
        }
    }
}

/// One line of a batch file.
fn batch_line(
    line: &str,
    base: &EnvArgs,
    profile: &Profile,
    pool: Option<&DescriptorPool>,
    run: &RunOptions,
) -> Outcome {
    let case: serde_json::Value = match serde_json::from_str(line) {
        Ok(c) => c,
        Err(e) => {
            return Outcome::Err {
                phase: "input",
                error: format!("invalid JSON: {e}"),
                cost: None,
            };
        }
    };
    let Some(expr) = case.get("expr").and_then(|e| e.as_str()) else {
        return Outcome::Err {
            phase: "input",
            error: "missing \"expr\"".into(),
            cost: None,
        };
    };
    let mut decl_texts = base.decls.clone();
    if let Some(obj) = case.get("decls").and_then(|d| d.as_object()) {
        for (name, ty) in obj {
            match ty.as_str() {
                Some(t) => decl_texts.push(format!("{name}:{t}")),
                None => {
                    return Outcome::Err {
                        phase: "input",
                        error: format!("decls.{name}: expected a type string"),
                        cost: None,
                    };
                }
            }
        }
    }
    let decls = match parse_decls(&decl_texts) {
        Ok(d) => d,
        Err(e) => {
            return Outcome::Err {
                phase: "input",
                error: e,
                cost: None,
            };
        }
    };
    let mut user = MapActivation::new();
    match case.get("vars") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Object(members)) => {
            for (name, j) in members {
                match json_variable(name, j, &decls, pool) {
                    Ok(v) => {
                        user.bind(name.as_str(), v);
                    }
                    Err(e) => {
                        return Outcome::Err {
                            phase: "input",
                            error: format!("vars.{name}: {e}"),
                            cost: None,
                        };
                    }
                }
            }
        }
        Some(_) => {
            return Outcome::Err {
                phase: "input",
                error: "variables must be a JSON object".into(),
                cost: None,
            };
        }
    }
    let names: Vec<String> = user.iter().map(|(n, _)| n.to_string()).collect();
    let container = case
        .get("container")
        .and_then(|c| c.as_str())
        .or(base.container.as_deref());
    let env = build_env(&decls, names, container, profile, pool);
    let mut act = MapActivation::new();
    profile.bind_defaults(&env, &mut act);
    for (name, v) in user.iter() {
        act.bind(name, v.clone());
    }
    evaluate(&env, expr, &act, run)
}

fn run_batch(path: &str, args: &EvalArgs) -> ExitCode {
    let base = &args.env;
    let mut profile = match Profile::parse(base.profile.as_deref(), base.stored) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if args.cost_limit.is_some() {
        profile.set_cost_limit(args.cost_limit);
    }
    let pool = match base.descriptor_pool() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let reader: Box<dyn BufRead> = if path == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        match std::fs::File::open(path) {
            Ok(f) => Box::new(std::io::BufReader::new(f)),
            Err(e) => {
                eprintln!("error: reading {path}: {e}");
                return ExitCode::from(2);
            }
        }
    };
    // Dumps would interleave with the JSON lines: batches only choose the backend.
    let run = RunOptions {
        backend: Some(args.backend.backend()),
        dump: Vec::new(),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in reader.lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: reading {path}: {e}");
                return ExitCode::from(2);
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let outcome = batch_line(&line, base, &profile, pool.as_ref(), &run);
        if writeln!(out, "{}", outcome.to_json(args.cost)).is_err() {
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

fn parse_size(spec: &str) -> Result<(String, SizeRange), String> {
    let (path, range) = spec
        .split_once('=')
        .ok_or_else(|| format!("--size '{spec}': expected PATH=N or PATH=MIN..MAX"))?;
    let num = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map_err(|e| format!("--size '{spec}': {e}"))
    };
    let range = match range.split_once("..") {
        Some((lo, hi)) => SizeRange {
            min: num(lo)?,
            max: num(hi)?,
        },
        None => SizeRange {
            min: 0,
            max: num(range)?,
        },
    };
    Ok((path.trim().to_string(), range))
}

fn run_cost(args: &CostArgs) -> ExitCode {
    let decls = match parse_decls(&args.env.decls) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let profile = match Profile::parse(args.env.profile.as_deref(), args.env.stored) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut sizes = PathSizes::default();
    for s in &args.sizes {
        match parse_size(s) {
            Ok((path, range)) => {
                sizes.0.insert(path, range);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let env = match declared_env(&args.env, &decls, &profile) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match env.compile(&args.expr) {
        Ok(ast) => {
            let est = env.estimate_cost(&ast, &sizes).unwrap_or_default();
            println!("[{}, {}]", est.min, est.max);
            ExitCode::SUCCESS
        }
        Err(issues) => {
            eprintln!("{issues}");
            ExitCode::from(1)
        }
    }
}

/// An overload's signature as cel-go writes declarations: `string.lowerAscii() -> string`,
/// `quantity(string) -> kubernetes.Quantity`.
fn signature(name: &str, o: &OverloadDecl) -> String {
    let list = |ts: &[Type]| {
        ts.iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (o.is_member, o.params.split_first()) {
        (true, Some((receiver, rest))) => {
            format!("{receiver}.{name}({}) -> {}", list(rest), o.result)
        }
        _ => format!("{name}({}) -> {}", list(&o.params), o.result),
    }
}

fn run_functions(args: &FunctionsArgs) -> ExitCode {
    let profile = match Profile::parse(args.profile.as_deref(), args.stored) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let env = profile.builder().build();
    let functions: Vec<FunctionDecl> = env
        .functions()
        .into_iter()
        .filter(|f| {
            args.filter
                .as_ref()
                .is_none_or(|t| f.name.contains(t.as_str()))
        })
        .collect();
    let mut out = String::new();
    match args.output {
        Output::Text => {
            for f in &functions {
                out.push_str(&f.name);
                out.push('\n');
                for o in &f.overloads {
                    out.push_str(&format!("  {}  [{}]\n", signature(&f.name, o), o.id));
                }
            }
        }
        Output::Json => {
            let list: Vec<serde_json::Value> = functions
                .iter()
                .map(|f| {
                    let overloads: Vec<serde_json::Value> = f
                        .overloads
                        .iter()
                        .map(|o| {
                            serde_json::json!({
                                "id": o.id,
                                "signature": signature(&f.name, o),
                            })
                        })
                        .collect();
                    serde_json::json!({"name": f.name, "overloads": overloads})
                })
                .collect();
            out = serde_json::Value::Array(list).to_string();
            out.push('\n');
        }
    }
    // A closed pipe (`cel functions | head`) is not an error worth reporting.
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    ExitCode::SUCCESS
}
