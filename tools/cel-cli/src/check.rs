//! `cel check` (the type of an expression) and `cel cost` (its static cost estimate),
//! each also with `--batch`.

use std::process::ExitCode;

use celerity::{PathSizes, SizeRange};

use crate::bad_input;
use crate::batch::Mode;
use crate::env::{EnvArgs, Profile, declared_env, parse_decls};
use crate::output::Out;

#[derive(clap::Args, Debug)]
pub(crate) struct CostArgs {
    /// The expression (omit with --batch).
    expr: Option<String>,
    #[command(flatten)]
    env: EnvArgs,
    /// The size of a variable path: `path=N` (at most N) or `path=MIN..MAX`; elements are
    /// `@items`, map keys `@keys`, values `@values` (`self.items.@items=10`).
    #[arg(long = "size", value_name = "PATH=N")]
    sizes: Vec<String>,
    /// Estimate one case per line of a JSONL file (`-` for stdin), as `cel eval --batch`
    /// reads them (and `"sizes": {"self.items": 10}`); print `{"ok":true,"min":N,"max":N}`
    /// per line (with a `schema`, the estimate the API server makes for that schema node).
    #[arg(long, value_name = "FILE.jsonl")]
    batch: Option<String>,
}

#[derive(clap::Args, Debug)]
pub(crate) struct CheckArgs {
    /// The expression (omit with --batch).
    expr: Option<String>,
    #[command(flatten)]
    env: EnvArgs,
    /// Check one case per line of a JSONL file (`-` for stdin), as `cel eval --batch` reads
    /// them; print `{"ok":true,"type":"bool"}` or `{"ok":false,...}` per line.
    #[arg(long, value_name = "FILE.jsonl")]
    batch: Option<String>,
}

/// The expression, or the batch to run instead.
fn expr_or_batch<'a>(
    expr: &'a Option<String>,
    batch: &Option<String>,
    env: &EnvArgs,
    mode: Mode,
) -> Result<&'a str, ExitCode> {
    match (expr, batch) {
        (Some(_), Some(_)) => Err(bad_input(
            "give either an expression or --batch FILE, not both",
        )),
        (None, Some(path)) => Err(crate::batch::run_static_batch(path, env, mode)),
        (Some(e), None) => Ok(e),
        (None, None) => Err(bad_input("an expression (or --batch FILE) is required")),
    }
}

/// Runs `cel check`.
pub(crate) fn run_check(args: &CheckArgs) -> ExitCode {
    let expr = match expr_or_batch(&args.expr, &args.batch, &args.env, Mode::Check) {
        Ok(e) => e,
        Err(status) => return status,
    };
    let decls = match parse_decls(&args.env.decls) {
        Ok(d) => d,
        Err(e) => {
            return bad_input(e);
        }
    };
    let profile = match Profile::parse(args.env.profile.as_deref(), args.env.stored) {
        Ok(p) => p,
        Err(e) => {
            return bad_input(e);
        }
    };
    let env = match declared_env(&args.env, &decls, &profile) {
        Ok(e) => e,
        Err(e) => {
            return bad_input(e);
        }
    };
    match env.compile(expr) {
        Ok(ast) => {
            Out::new().line(ast.result_type().map(|t| t.to_string()).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(issues) => {
            eprintln!("{issues}");
            ExitCode::from(1)
        }
    }
}

/// A `--size` argument: `path=N` or `path=MIN..MAX`.
pub(crate) fn parse_size(spec: &str) -> Result<(String, SizeRange), String> {
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

/// Runs `cel cost`.
pub(crate) fn run_cost(args: &CostArgs) -> ExitCode {
    let expr = match expr_or_batch(&args.expr, &args.batch, &args.env, Mode::Cost) {
        Ok(e) => e,
        Err(status) => return status,
    };
    let decls = match parse_decls(&args.env.decls) {
        Ok(d) => d,
        Err(e) => {
            return bad_input(e);
        }
    };
    let profile = match Profile::parse(args.env.profile.as_deref(), args.env.stored) {
        Ok(p) => p,
        Err(e) => {
            return bad_input(e);
        }
    };
    let mut sizes = PathSizes::default();
    for s in &args.sizes {
        match parse_size(s) {
            Ok((path, range)) => {
                sizes.0.insert(path, range);
            }
            Err(e) => {
                return bad_input(e);
            }
        }
    }
    let env = match declared_env(&args.env, &decls, &profile) {
        Ok(e) => e,
        Err(e) => {
            return bad_input(e);
        }
    };
    match env.compile(expr) {
        Ok(ast) => {
            let est = env.estimate_cost(&ast, &sizes).unwrap_or_default();
            Out::new().line(format!("[{}, {}]", est.min, est.max));
            ExitCode::SUCCESS
        }
        Err(issues) => {
            eprintln!("{issues}");
            ExitCode::from(1)
        }
    }
}
