//! `cel check-config`: the API server's checks of AuthenticationConfiguration,
//! AuthorizationConfiguration and Validating/MutatingWebhookConfiguration files, every CEL
//! expression compiled, with the API server's field paths and messages (see
//! `celerity_kubernetes::places::config_check`). Status: 0 when every document is valid, 1
//! when one has errors, 2 on unusable input (unreadable files, unknown kinds, unserved API
//! versions, fields of the wrong type), as `cel check-policy` does.

use std::process::ExitCode;

use celerity::kubernetes::KubeVersion;
use celerity_kubernetes::crd::schema::FieldError;
use celerity_kubernetes::places::config_check::{ConfigOptions, ConfigReport, check_config};
use serde_json::{Map, Value as Json, json};

use crate::input::read_documents;
use crate::output::Out;
use crate::{BAD_INPUT, Output, bad_input};

#[derive(clap::Args, Debug)]
pub(crate) struct CheckConfigArgs {
    /// Configuration files (YAML or JSON, several documents each), or `-` for standard
    /// input: AuthenticationConfiguration, AuthorizationConfiguration,
    /// ValidatingWebhookConfiguration, MutatingWebhookConfiguration.
    files: Vec<String>,
    /// The Kubernetes release whose API server loads the files, `kubernetes=1.35` (1.30 to
    /// 1.37; default: the newest released version).
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// Output: text (the API server's error lines), or one JSON object per document.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
    /// An issuer URL of the API server's service accounts (`--service-account-issuer`,
    /// repeatable), which no `jwt[]` authenticator may have.
    #[arg(long = "service-account-issuer", value_name = "URL")]
    service_account_issuers: Vec<String>,
    /// One configuration per line of a file (`-` for stdin) instead: `{"config": {...}}`,
    /// printing `{"ok":true,"errors":[{"field":...,"type":...,"detail":...,"message":...}]}`
    /// (`errors` empty when the configuration is valid) or `{"ok":false,"error":...}` for
    /// unusable input; the status is 1 when a line has errors or is not ok.
    #[arg(long, value_name = "FILE.jsonl")]
    batch: Option<String>,
}

/// The errors as the batch line gives them: `field`, `type` (`FieldValueInvalid`),
/// `detail`, and the `message` line the API server prints, in that order.
fn errors_json(report: &ConfigReport) -> Json {
    let error = |e: &FieldError| {
        json!({
            "field": e.field,
            "type": e.error_type.as_str(),
            "detail": e.detail,
            "message": e.to_string(),
        })
    };
    Json::Array(report.errors.iter().map(error).collect())
}

/// Runs `cel check-config`.
pub(crate) fn run(args: &CheckConfigArgs) -> ExitCode {
    let version = match crate::places::version_of(args.profile.as_deref()) {
        Ok(v) => v,
        Err(e) => return bad_input(e),
    };
    let options = ConfigOptions {
        disallowed_issuers: args.service_account_issuers.clone(),
    };
    if let Some(path) = &args.batch {
        if !args.files.is_empty() {
            return bad_input("--batch lines carry their configurations: no files");
        }
        return crate::batch::run_lines_as(
            path,
            |e| json!({"ok": false, "error": e}),
            |r| {
                r.get("ok") == Some(&Json::Bool(true))
                    && r.get("errors")
                        .and_then(Json::as_array)
                        .is_some_and(Vec::is_empty)
            },
            |case| line(case, version, &options),
        );
    }
    if args.files.is_empty() {
        return bad_input("no configuration files given (use - for standard input)");
    }
    let docs = match read_documents(&args.files) {
        Ok(d) => d,
        Err(e) => return bad_input(e),
    };
    let mut out = Out::new();
    let (mut bad, mut invalid, mut checked) = (false, 0usize, 0usize);
    for doc in &docs {
        let report = doc
            .value
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|json| check_config(json, version, &options));
        let report = match report {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{} (document {}): {e}", doc.location(), doc.index);
                if args.output == Output::Json {
                    out.line(
                        json!({"file": &*doc.file, "document": doc.index, "ok": false, "error": e})
                            .to_string(),
                    );
                }
                bad = true;
                continue;
            }
        };
        checked += 1;
        if !report.errors.is_empty() {
            invalid += 1;
        }
        let what = match &report.name {
            Some(name) => format!("{} {name:?}", report.kind.name()),
            None => report.kind.name().to_string(),
        };
        match args.output {
            Output::Json => out.line(
                json!({
                    "file": &*doc.file,
                    "document": doc.index,
                    "kind": report.kind.name(),
                    "name": report.name,
                    "ok": true,
                    "errors": errors_json(&report),
                })
                .to_string(),
            ),
            Output::Text if report.errors.is_empty() => {
                out.line(format!("{}: {what} is valid", doc.location()))
            }
            Output::Text => {
                out.line(format!("{}: {what} is invalid:", doc.location()));
                for e in &report.errors {
                    out.line(format!("* {e}"));
                }
            }
        }
    }
    if args.output == Output::Text {
        out.line(format!(
            "{checked} configuration{} checked: {invalid} invalid",
            if checked == 1 { "" } else { "s" }
        ));
    }
    status(bad, invalid)
}

fn status(bad: bool, invalid: usize) -> ExitCode {
    if bad {
        ExitCode::from(BAD_INPUT)
    } else if invalid > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// One batch line: `{"config": {...}}`.
fn line(case: &Map<String, Json>, version: KubeVersion, options: &ConfigOptions) -> Json {
    let error = |e: String| json!({"ok": false, "error": e});
    if let Some(k) = case.keys().find(|k| k.as_str() != "config") {
        return error(format!("unknown field \"{k}\" (known: config)"));
    }
    let Some(config) = case.get("config") else {
        return error("a line needs \"config\"".into());
    };
    match check_config(config, version, options) {
        Ok(report) => json!({"ok": true, "errors": errors_json(&report)}),
        Err(e) => error(e),
    }
}
