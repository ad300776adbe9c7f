//! `cel functions`: what an environment declares.

use std::process::ExitCode;

use celerity::{FunctionDecl, OverloadDecl, Type};

use crate::env::Profile;
use crate::{Output, bad_input};

#[derive(clap::Args, Debug)]
pub(crate) struct FunctionsArgs {
    /// List only functions whose name contains this text.
    filter: Option<String>,
    /// An environment profile (see `cel eval --help`).
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// With `--profile kubernetes`: the environment for stored expressions.
    #[arg(long)]
    stored: bool,
    /// List what a place's environment declares (see `cel eval --help`): its variables,
    /// then its functions.
    #[arg(long = "env", value_name = "NAME")]
    place: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
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

/// Runs `cel functions`.
pub(crate) fn run(args: &FunctionsArgs) -> ExitCode {
    let (env, variables) = match &args.place {
        Some(name) => match crate::places::place_env(name, args.profile.as_deref()) {
            Ok(p) => {
                // Type names (`bool`, `int`, ...) are declared as identifiers too: not variables.
                let vars = p.env().variables();
                let vars = vars
                    .into_iter()
                    .filter(|v| !matches!(v.ty, Type::Type(_)))
                    .collect();
                (p.env().clone(), vars)
            }
            Err(e) => return bad_input(e),
        },
        None => match Profile::parse(args.profile.as_deref(), args.stored) {
            Ok(p) => (p.builder().build(), Vec::new()),
            Err(e) => return bad_input(e),
        },
    };
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
            for v in &variables {
                out.push_str(&format!("variable {}: {}\n", v.name, v.ty));
            }
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
            out = if args.place.is_some() {
                let vars: Vec<serde_json::Value> = variables
                    .iter()
                    .map(|v| serde_json::json!({"name": v.name, "type": v.ty.to_string()}))
                    .collect();
                serde_json::json!({"variables": vars, "functions": list}).to_string()
            } else {
                serde_json::Value::Array(list).to_string()
            };
            out.push('\n');
        }
    }
    crate::output::Out::new().text(&out);
    ExitCode::SUCCESS
}
