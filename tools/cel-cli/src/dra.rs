//! `cel dra`: which devices of ResourceSlices the selectors of DeviceClasses and
//! ResourceClaims accept, as the scheduler's allocator evaluates them, with per-device
//! errors and the attribute names selectors read that no device has (see
//! `celerity_kubernetes::places::dra_allocation`).

use std::collections::HashSet;
use std::process::ExitCode;

use celerity_kubernetes::places::dra_allocation::{
    Claim, DeviceClass, DeviceSet, Matcher, RequestReport, Verdict, batch_line,
};
use clap::Args;
use serde_json::{Value as Json, json};

use crate::eval::BackendArg;
use crate::input::read_documents;
use crate::output::Out;
use crate::validate::{expand_lists, profile_version};
use crate::{BAD_INPUT, Output, bad_input};

/// `cel dra`.
#[derive(Args, Debug)]
#[command(after_help = "\
Status: 0 when every selector ran on every device and read only names some device has;
1 when a selector failed to compile or failed on a device, a request's class is not among
--class, or a selector reads an attribute or capacity no device has (the typo warning);
2 for input that cannot be used (unreadable files, wrong kinds or API versions, missing
fields, attribute values of the wrong type), reported with its file and path; the rest
still runs.

--batch FILE (- for standard input) takes one JSON object per line:
  {\"slices\": [ResourceSlice...], \"classes\": [DeviceClass...], \"claims\": [ResourceClaim...]}
(without \"classes\", classes' selectors are not applied) and prints one line per line:
  {\"ok\":true,\"requests\":[{\"claim\":\"NS/NAME\",\"kind\":...,\"request\":...,\"class\":...,
    \"devices\":[{\"driver\":...,\"pool\":...,\"device\":...,\"matched\":BOOL,
                 \"selector\":N,\"from\":\"class\"|\"request\",\"error\":...}],
    \"unknown_attributes\":[{\"selector\":PATH,\"attribute\"|\"capacity\":\"DOMAIN/ID\",\"suggestion\":...}],
    \"error\":...}]}
or {\"ok\":false,\"error\":...} for a line that cannot be used. \"selector\" (the index of
the first selector that is false or fails, in its class's or the request's list) and
\"error\" (the DRA library's words) appear only when the device is not matched;
\"class_applied\":false says the class's selectors were not applied (no classes given), and
a request-level \"error\" that its class does not exist (then no devices). The status
is 1 when a line is not ok. --output json prints the same object for the files.")]
pub(crate) struct DraArgs {
    /// ResourceClaims and ResourceClaimTemplates (files, directories or `-`).
    claims: Vec<String>,
    /// ResourceSlices (files or directories; repeatable): the devices.
    #[arg(long = "slices", value_name = "SLICES.yaml")]
    slices: Vec<String>,
    /// DeviceClasses (files or directories; repeatable). Without any, classes' selectors
    /// are not applied (and said so).
    #[arg(long = "class", value_name = "CLASSES.yaml")]
    classes: Vec<String>,
    /// The Kubernetes release whose scheduler allocates, `kubernetes=1.35` (1.31 to 1.37;
    /// default: the newest released version): its API versions and its CEL.
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// How selectors run (all give the same results).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// One JSON case per line of a file (`-` for stdin) instead (see below).
    #[arg(long, value_name = "FILE.jsonl")]
    batch: Option<String>,
    /// Text (default) or one JSON object (the batch line's form).
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
}

/// Runs `cel dra`.
pub(crate) fn run(args: &DraArgs) -> ExitCode {
    let version = match profile_version(args.profile.as_deref()) {
        Ok(v) => v,
        Err(e) => return bad_input(e),
    };
    let backend = args.backend.backend();
    if let Some(path) = &args.batch {
        if !args.claims.is_empty() || !args.slices.is_empty() || !args.classes.is_empty() {
            return bad_input("--batch lines carry their objects: no --slices, --class or claims");
        }
        return crate::batch::run_lines_as(
            path,
            |e| json!({"ok": false, "error": e}),
            |r| r.get("ok") == Some(&Json::Bool(true)),
            |case| batch_line(case, version, backend),
        );
    }
    if args.slices.is_empty() {
        return bad_input("--slices SLICES.yaml is required (or --batch)");
    }
    if args.claims.is_empty() {
        return bad_input("no claims given (use - for standard input)");
    }
    let mut matcher = match Matcher::new(version, backend) {
        Ok(m) => m,
        Err(e) => return bad_input(e),
    };
    let mut bad = false;
    let mut devices = DeviceSet::new();
    read(&args.slices, &mut bad, |j| {
        let errors = devices.add_slice(j, version);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    });
    let classes = if args.classes.is_empty() {
        None
    } else {
        let mut classes = Vec::new();
        read(&args.classes, &mut bad, |j| {
            classes.push(DeviceClass::read(j, version)?);
            Ok(())
        });
        Some(classes)
    };
    let mut claims = Vec::new();
    read(&args.claims, &mut bad, |j| {
        claims.push(Claim::read(j, version)?);
        Ok(())
    });
    let reports = matcher.run(&devices, classes.as_deref(), &claims);
    let failed = reports.iter().any(|r| r.failed());
    let warned = reports.iter().any(|r| !r.unknown.is_empty());
    let mut out = Out::new();
    match args.output {
        Output::Json => out.line(json!({
            "ok": true,
            "requests": reports.iter().map(|r| r.to_json(&devices)).collect::<Vec<_>>(),
        })),
        Output::Text => print_text(&mut out, &reports, &devices),
    }
    // The process's exit frees the devices: dropping 100,000 devices' maps one by one
    // took a third of such a run.
    std::mem::forget(devices);
    if bad {
        ExitCode::from(BAD_INPUT)
    } else if failed || warned {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Reads every object of the files (lists expanded) through `take`, reporting each error
/// with its file and document on standard error.
fn read(paths: &[String], bad: &mut bool, mut take: impl FnMut(&Json) -> Result<(), String>) {
    let docs = match read_documents(paths) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            *bad = true;
            return;
        }
    };
    for (doc, object) in expand_lists(docs) {
        match object.and_then(|o| take(&o)) {
            Ok(()) => {}
            Err(e) => {
                for line in e.lines() {
                    eprintln!("error: {}: {line}", doc.location());
                }
                *bad = true;
            }
        }
    }
}

/// The text report: per request, each device's verdict; then the warnings (each once) and
/// a summary.
fn print_text(out: &mut Out, reports: &[RequestReport], devices: &DeviceSet) {
    let mut unapplied = HashSet::new();
    for r in reports {
        let header = format!(
            "{} {}, request {} (class {})",
            r.kind, r.claim, r.request, r.class
        );
        if let Some(e) = &r.error {
            out.line(format!("{header}: error: {e}"));
            continue;
        }
        if !r.class_applied {
            unapplied.insert(r.class.clone());
        }
        out.line(format!(
            "{header}: {} of {} devices match",
            r.matched(),
            r.verdicts.len()
        ));
        for (v, d) in r.verdicts.iter().zip(devices.devices()) {
            let what = match v {
                Verdict::Matched => "matched".to_string(),
                Verdict::Rejected { source, index } => {
                    format!("not matched: {} is false", r.selector_path(*source, *index))
                }
                Verdict::Failed { .. } => {
                    format!("error: {}", r.allocator_error(v).unwrap_or_default())
                }
            };
            out.line(format!("  {}/{}/{}: {what}", d.driver, d.pool, d.name));
        }
    }
    let mut seen = HashSet::new();
    let mut warnings = 0;
    for u in reports.iter().flat_map(|r| &r.unknown) {
        if !seen.insert((u.selector.clone(), u.read.clone())) {
            continue;
        }
        warnings += 1;
        let what = if u.read.capacity {
            "capacity"
        } else {
            "attribute"
        };
        let hint = u
            .suggestion
            .as_ref()
            .map(|s| format!(" (did you mean {s:?}?)"))
            .unwrap_or_default();
        out.line(format!(
            "warning: {} reads {what} {:?}, which no device in the slices has{hint}",
            u.selector,
            u.read.qualified()
        ));
    }
    let mut classes: Vec<String> = unapplied.into_iter().collect();
    classes.sort();
    for c in classes {
        out.line(format!(
            "note: no --class given: the selectors of DeviceClass {c:?} are not applied"
        ));
    }
    let errors = reports.iter().filter(|r| r.failed()).count();
    out.line(format!(
        "{} request{}, {} device{}: {errors} with errors, {warnings} warning{}",
        reports.len(),
        if reports.len() == 1 { "" } else { "s" },
        devices.devices().len(),
        if devices.devices().len() == 1 {
            ""
        } else {
            "s"
        },
        if warnings == 1 { "" } else { "s" },
    ));
}
