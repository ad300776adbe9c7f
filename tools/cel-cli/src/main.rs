//! `cel`: evaluate, check and inspect CEL expressions, and validate Kubernetes custom
//! resources, from the command line.
//!
//! ```text
//! cel eval 'x + 1' --var x=41            # 42 : int
//! cel eval 'self.a' --vars obj.json --decl 'self:map(string, int)'
//! cel check 'size([1, 2]) > 1'           # bool
//! cel eval --batch cases.jsonl           # one JSON result per input line
//! cel eval 'l.map(x, x * 2)' --var 'l=[1,2,3]' --cost --cost-limit 100
//! cel cost 'self.items.all(i, i.size() < 10)' --decl 'self:map(string, list(string))' --size self.items=20
//! cel eval --profile kubernetes "duration('1h') > duration('1m')"
//! cel eval --profile kubernetes=1.33 --stored "isSemver('1.0.0')"
//! cel functions --profile kubernetes=1.34 quantity
//! cel validate --crd examples/crd/widgets.yaml examples/crd/manifests/
//! cel admit --policy examples/admission/policies.yaml examples/admission/manifests/
//! cel dra --slices examples/dra/slices.yaml --class examples/dra/classes.yaml examples/dra/claims.yaml
//! cel playground                         # the playground, on 127.0.0.1
//! ```
//!
//! `--profile kubernetes[=VERSION]` compiles and evaluates as the API server of that
//! Kubernetes release does (1.30 to 1.37; default: the newest released version): with the
//! cel-go it pins, for new expressions (the previous minor's libraries, as the API server's
//! compatibility version), or with `--stored` for expressions already stored (everything the
//! release has); `validate` and `admit` take the same `--profile`. See
//! `celerity::kubernetes`.
//!
//! Diagnostics are printed in cel-go's form and make the command exit with status 1; bad
//! input (unreadable files, malformed arguments) exits with status 2, and work that never
//! finishes (a bug: see `watchdog`) with status 3. Every `--batch` mode
//! prints exactly one JSON line per input line, in order, and exits with status 1 when any
//! line is not `"ok": true`.
//! This crate only talks to the `celerity` facade and its Kubernetes jobs (`celerity-kubernetes`).

#![forbid(unsafe_code)]

mod admit;
mod authn;
mod batch;
mod check;
mod check_config;
mod check_policy;
mod dra;
mod env;
mod eval;
mod functions;
mod input;
mod output;
mod places;
mod playground;
mod validate;
mod watchdog;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "cel",
    version,
    about = "Evaluate and check Common Expression Language expressions, validate Kubernetes custom resources and apply admission policies"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Evaluate an expression and print its value and type.
    Eval(eval::EvalArgs),
    /// Type-check an expression and print its type.
    Check(check::CheckArgs),
    /// Print the static cost estimate of an expression: the cheapest and the most expensive
    /// run-time cost, in cel-go's units.
    Cost(check::CostArgs),
    /// List the functions an environment provides, with their overloads' signatures and ids
    /// (operators under their internal names, `_+_`; macros such as `all` or `has` are not
    /// functions and are not listed).
    Functions(functions::FunctionsArgs),
    /// Validate Kubernetes custom resources against their CustomResourceDefinitions, as the
    /// API server does: defaults, pruning, OpenAPI schema validation, then the
    /// `x-kubernetes-validations` rules.
    Validate(validate::ValidateArgs),
    /// Apply admission policies (ValidatingAdmissionPolicy, MutatingAdmissionPolicy) and
    /// their bindings to manifests, as the API server's admission plugins do: verdicts,
    /// messages, warnings, audit annotations and mutated objects.
    Admit(admit::AdmitArgs),
    /// Type-check ValidatingAdmissionPolicies against the schemas of the kinds they match,
    /// as the API server does for `status.typeChecking`; exit 1 on warnings.
    CheckPolicy(check_policy::CheckPolicyArgs),
    /// Check AuthenticationConfiguration, AuthorizationConfiguration and
    /// Validating/MutatingWebhookConfiguration files as the API server does when it loads
    /// or creates them, every CEL expression compiled: its field errors, exit 1 on any.
    CheckConfig(check_config::CheckConfigArgs),
    /// The user the API server's JWT authenticator (AuthenticationConfiguration `jwt[]`)
    /// gives a token with these claims, or its error. Signatures are not checked: it
    /// answers from the decoded claims.
    Authn(authn::AuthnArgs),
    /// Which devices of ResourceSlices the selectors of DeviceClasses and ResourceClaims
    /// accept, as the scheduler's allocator evaluates them, with per-device errors and the
    /// attribute names selectors read that no device has.
    Dra(dra::DraArgs),
    /// Serve the playground (expression, CRD, admission, device and authentication modes,
    /// evaluated in the browser by Celerity compiled to WebAssembly) on 127.0.0.1.
    Playground(playground::PlaygroundArgs),
}

/// How results are printed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Output {
    Text,
    Json,
}

/// The status of bad input: unreadable files, malformed arguments.
pub(crate) const BAD_INPUT: u8 = 2;

/// Reports bad input and gives its status.
pub(crate) fn bad_input(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(BAD_INPUT)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Eval(args) => eval::run(&args),
        Command::Check(args) => check::run_check(&args),
        Command::Cost(args) => check::run_cost(&args),
        Command::Functions(args) => functions::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Admit(args) => admit::run(&args),
        Command::CheckPolicy(args) => check_policy::run(&args),
        Command::CheckConfig(args) => check_config::run(&args),
        Command::Authn(args) => authn::run(&args),
        Command::Dra(args) => dra::run(&args),
        Command::Playground(args) => playground::run(&args),
    }
}
