//! `cel check-policy`: the API server's type checking of ValidatingAdmissionPolicies against
//! the schemas of the kinds they match (built-in kinds' shipped schemas, CRDs given with
//! `--crd`), with its warnings as `status.typeChecking` holds them. Status: 0 when no policy
//! warns, 1 when one does, 2 on bad input.

use std::process::ExitCode;

use celerity::kubernetes::KubeVersion;
use celerity_kubernetes::admission::{
    ExpressionWarning, Policy, check_policy, read_policy, type_checking_json,
};
use celerity_kubernetes::builtin;
use celerity_kubernetes::crd::{CrdOptions, CrdSet};
use serde_json::{Value as Json, json};

use crate::input::read_documents;
use crate::output::Out;
use crate::validate::{load_crds, load_user_schemas, profile_version};
use crate::{BAD_INPUT, Output, bad_input};

#[derive(clap::Args, Debug)]
pub(crate) struct CheckPolicyArgs {
    /// Files or directories of ValidatingAdmissionPolicies (other documents are skipped), or
    /// `-` for standard input.
    policies: Vec<String>,
    /// CustomResourceDefinitions of the custom kinds the policies match or take as params
    /// (repeatable); built-in kinds need none.
    #[arg(long = "crd", value_name = "CRD.yaml")]
    crds: Vec<String>,
    /// OpenAPI v3 documents (files or directories, as `kubectl get --raw
    /// /openapi/v3/apis/<group>/<version>` prints them) whose kinds override the shipped
    /// built-in schemas (repeatable).
    #[arg(long = "schemas", value_name = "DIR")]
    schemas: Vec<String>,
    /// The Kubernetes release whose API server type-checks, `kubernetes=1.35` (1.30 to 1.37;
    /// default: the newest released version).
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// Output: text, or one JSON object per policy with its `status.typeChecking`.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
}

/// The schemas type checking reads: the CRDs of `paths` and the built-in kinds of the API
/// server of release `version`.
pub(crate) fn schemas(
    paths: &[String],
    user_schemas: &[String],
    version: KubeVersion,
) -> Result<(CrdSet, bool), String> {
    let mut bad = false;
    let options = CrdOptions::default().version(version);
    let mut set = load_crds(paths, &options, false, &mut bad)?;
    let server_minor = version.minor;
    if builtin::has_version(server_minor) {
        set = set.with_builtins(server_minor);
    }
    if let Some(user) = load_user_schemas(user_schemas)? {
        set = set.with_user_schemas(user);
    }
    Ok((set, bad))
}

/// The warnings as lines: `ValidatingAdmissionPolicy "NAME": FIELD:`, then the warning's
/// lines (one per kind and its caret lines) indented by four spaces.
pub(crate) fn warning_lines(name: &str, warnings: &[ExpressionWarning]) -> String {
    let mut out = String::new();
    for w in warnings {
        out.push_str(&format!(
            "ValidatingAdmissionPolicy {name:?}: {}:\n",
            w.field_ref
        ));
        for line in w.warning.lines().filter(|l| !l.trim().is_empty()) {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out
}

/// Runs `cel check-policy`.
pub(crate) fn run(args: &CheckPolicyArgs) -> ExitCode {
    if args.policies.is_empty() {
        return bad_input("no policies given (use - for standard input)");
    }
    let version = match profile_version(args.profile.as_deref()) {
        Ok(v) => v,
        Err(e) => return bad_input(e),
    };
    let (schemas, mut bad) = match schemas(&args.crds, &args.schemas, version) {
        Ok(s) => s,
        Err(e) => return bad_input(e),
    };
    let docs = match read_documents(&args.policies) {
        Ok(d) => d,
        Err(e) => return bad_input(e),
    };
    let mut out = Out::new();
    let (mut checked, mut warned) = (0usize, 0usize);
    for doc in docs {
        let json = match &doc.value {
            Ok(j) => j,
            Err(e) => {
                eprintln!("{}: {e}", doc.location());
                bad = true;
                continue;
            }
        };
        if json.get("kind").and_then(Json::as_str) != Some("ValidatingAdmissionPolicy") {
            continue;
        }
        let policy: Policy = match read_policy(json) {
            Ok(p) => p,
            Err(es) => {
                es.iter().for_each(|e| eprintln!("{}: {e}", doc.location()));
                bad = true;
                continue;
            }
        };
        checked += 1;
        let warnings = check_policy(&policy, version, &schemas);
        if !warnings.is_empty() {
            warned += 1;
        }
        match args.output {
            Output::Json => out.line(
                json!({
                    "file": &*doc.file,
                    "document": doc.index,
                    "name": policy.name,
                    "status": {"typeChecking": type_checking_json(&warnings)},
                })
                .to_string(),
            ),
            Output::Text if warnings.is_empty() => out.line(format!(
                "{}: ValidatingAdmissionPolicy {:?} type-checks cleanly",
                doc.location(),
                policy.name
            )),
            Output::Text => {
                for line in warning_lines(&policy.name, &warnings).lines() {
                    if line.starts_with(' ') {
                        out.line(line.to_string());
                    } else {
                        out.line(format!("{}: {line}", doc.location()));
                    }
                }
            }
        }
    }
    if args.output == Output::Text {
        out.line(format!(
            "{checked} polic{} checked: {warned} with warnings",
            if checked == 1 { "y" } else { "ies" }
        ));
    }
    if bad {
        ExitCode::from(BAD_INPUT)
    } else if warned > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
