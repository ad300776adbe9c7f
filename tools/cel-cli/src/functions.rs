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
    let profile = match Profile::parse(args.profile.as_deref(), args.stored) {
        Ok(p) => p,
        Err(e) => {
            return bad_input(e);
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
    crate::output::Out::new().text(&out);
    ExitCode::SUCCESS
}
