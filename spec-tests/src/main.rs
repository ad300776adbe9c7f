//! The `spec-tests` binary: runs cel-spec's conformance corpus against a Celerity backend,
//! and Celerity's own Kubernetes corpus (`spec-tests/cases/kubernetes`, costs included)
//! through the facade.
//!
//! ```text
//! cargo run --release -p spec-tests -- [--backend NAME] [--file NAME]... [--summary PATH]
//!     [--known-failures PATH] [--write-known-failures]
//! ```
//!
//! This file owns the command line, the exit status and the order of the output; the work is
//! in the library. Exit status: 0 when the run agrees with the known-failures list, 1 when a
//! test fails that is not listed, a listed test does not fail, or a file does not load, 2 for
//! usage and setup errors. Missing conformance data skips cel-spec's corpus with a note (so a
//! checkout without the data still builds and tests; the Kubernetes corpus still runs),
//! except under `CI=true`, where it exits 1.

#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use spec_tests::corpus::{self, Corpus, LoadError};
use spec_tests::known_failures::{self, KnownFailures};
use spec_tests::report;
use spec_tests::runner::{self, BACKENDS, Status};
use spec_tests::{crd, kubernetes};

const USAGE: &str = "\
usage: spec-tests [--backend NAME] [--file NAME]... [--summary PATH]
                  [--known-failures PATH] [--write-known-failures]

  --backend NAME          the backend to run (default: interpreter; known: BACKENDS)
  --file NAME             run only this file (basic, lists, ...; k8s:lists, k8s:quantity, ...
                          for the Kubernetes corpus; repeatable)
  --summary PATH          write a JSON summary of the counts to PATH
  --known-failures PATH   the known-failures list (default: spec-tests/known-failures.txt)
  --write-known-failures  rewrite the known-failures list from this run's failures

Reads cel-spec from $CEL_SPEC_DIR (default: ../shared/cel-spec next to the workspace) and
the Kubernetes corpus from spec-tests/cases/kubernetes.";

/// The parsed command line.
#[derive(Debug)]
struct Args {
    backend: String,
    files: Vec<String>,
    summary: Option<PathBuf>,
    known_failures: PathBuf,
    write_known_failures: bool,
}

fn default_known_failures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("known-failures.txt")
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut out = Args {
        backend: BACKENDS[0].to_string(),
        files: Vec::new(),
        summary: None,
        known_failures: default_known_failures(),
        write_known_failures: false,
    };
    while let Some(arg) = args.next() {
        // Accept both `--flag value` and `--flag=value`.
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--backend" => out.backend = value("--backend")?,
            "--file" => {
                let f = value("--file")?;
                out.files
                    .push(f.strip_suffix(".textproto").unwrap_or(&f).to_string());
            }
            "--summary" => out.summary = Some(PathBuf::from(value("--summary")?)),
            "--known-failures" => out.known_failures = PathBuf::from(value("--known-failures")?),
            "--write-known-failures" if inline.is_none() => out.write_known_failures = true,
            _ => return Err(format!("unknown argument `{arg}`")),
        }
    }
    Ok(Some(out))
}

fn usage() -> String {
    USAGE.replace("BACKENDS", &BACKENDS.join(", "))
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("spec-tests: {e}\n\n{}", usage());
            return ExitCode::from(2);
        }
    };
    let mut out = String::new();
    let code = run(&args, &mut out);
    emit(&out);
    code
}

/// Writes the report to stdout. Errors (a closed pipe, say) are ignored: the exit status
/// still tells the outcome, and a reader that stopped reading wants no more output.
fn emit(text: &str) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

fn run(args: &Args, out: &mut String) -> ExitCode {
    let Some(stages) = runner::pipeline(&args.backend) else {
        eprintln!(
            "spec-tests: unknown backend `{}`; known backends: {}",
            args.backend,
            BACKENDS.join(", ")
        );
        return ExitCode::from(2);
    };

    // `--file k8s:NAME` selects Kubernetes corpus files; other names cel-spec's files. With
    // no `--file`, both corpora run in full; otherwise only what was named.
    let (crd_files, other_files): (Vec<String>, Vec<String>) = args
        .files
        .iter()
        .cloned()
        .partition(|f| f.starts_with(crd::TABLE_PREFIX));
    let crd_files: Vec<String> = crd_files
        .iter()
        .map(|f| f[crd::TABLE_PREFIX.len()..].to_string())
        .collect();
    let (k8s_files, spec_files): (Vec<String>, Vec<String>) = other_files
        .into_iter()
        .partition(|f| f.starts_with(kubernetes::TABLE_PREFIX));
    let k8s_files: Vec<String> = k8s_files
        .iter()
        .map(|f| f[kubernetes::TABLE_PREFIX.len()..].to_string())
        .collect();
    let run_spec = args.files.is_empty() || !spec_files.is_empty();
    let run_k8s = args.files.is_empty() || !k8s_files.is_empty();
    let run_crd = args.files.is_empty() || !crd_files.is_empty();

    let dir = corpus::spec_dir();
    let mut corpus = Corpus {
        dir: dir.clone(),
        files: Vec::new(),
        broken: Vec::new(),
    };
    let mut spec_loaded = false;
    if run_spec {
        match Corpus::load_selected(&dir, &spec_files) {
            Ok(c) => {
                corpus = c;
                spec_loaded = true;
            }
            Err(e @ LoadError::DataNotFound { .. }) => {
                let _ = writeln!(out, "{e}");
                if std::env::var("CI").is_ok_and(|v| v == "true") {
                    eprintln!("spec-tests: CI=true, so missing conformance data is an error");
                    return ExitCode::from(1);
                }
                if !run_k8s && !run_crd {
                    return ExitCode::SUCCESS;
                }
                let _ = writeln!(out, "running the Kubernetes corpus only\n");
            }
            Err(e) => {
                eprintln!("spec-tests: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let k8s_dir = kubernetes::cases_dir();
    let k8s_corpus = if run_k8s {
        match kubernetes::Corpus::load(&k8s_dir, &k8s_files) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("spec-tests: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        kubernetes::Corpus::default()
    };

    let crd_cases = if run_crd {
        match crd::load(&crd::cases_dir(), &crd_files) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("spec-tests: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        Vec::new()
    };

    let known = match KnownFailures::read(&args.known_failures) {
        Ok(k) => k,
        Err(errors) => {
            eprintln!(
                "spec-tests: malformed known-failures file {}:",
                args.known_failures.display()
            );
            for e in errors {
                eprintln!("  {e}");
            }
            return ExitCode::from(2);
        }
    };
    if known.is_none() && !args.write_known_failures {
        let _ = writeln!(
            out,
            "note: no known-failures file at {}; every failure is unexpected",
            args.known_failures.display()
        );
    }

    let results = runner::run_corpus(&stages, &corpus);
    let k8s_results = kubernetes::run_corpus(&k8s_corpus);
    // The CRD corpus runs on the backend asked for (native code for `jit`).
    let crd_backend = if args.backend == "interpreter" {
        celerity::Backend::Interpreter
    } else {
        celerity::Backend::Jit
    };
    let crd_results = crd::run_corpus(&crd_cases, crd_backend);

    let stage_names: Vec<&str> = stages.iter().map(|s| s.name()).collect();
    let _ = writeln!(
        out,
        "backend: {} (stages: {})",
        args.backend,
        stage_names.join(", ")
    );
    if spec_loaded {
        let _ = writeln!(
            out,
            "conformance data: {} ({} files, {} sections, {} tests)",
            corpus.dir.display(),
            corpus.files.len() + corpus.broken.len(),
            corpus.section_count(),
            results.len()
        );
    }
    if run_k8s {
        let _ = writeln!(
            out,
            "kubernetes corpus: {} ({} files, {} cases; through the facade)",
            k8s_dir.display(),
            k8s_corpus.files.len(),
            k8s_results.len()
        );
    }
    if run_crd {
        let _ = writeln!(
            out,
            "CRD corpus: {} ({} cases; Kubernetes' own CRD validation tests, through celerity_kubernetes::crd on the {crd_backend:?} backend)",
            crd::cases_dir().display(),
            crd_cases.len()
        );
    }
    out.push('\n');
    let mut k8s_rows = kubernetes::counts(&k8s_corpus, &k8s_results);
    k8s_rows.extend(crd::counts(&crd_results));
    out.push_str(&report::table_with(&corpus, &results, &k8s_rows));
    if run_k8s {
        out.push_str(&kubernetes::cost_line(&kubernetes::cost_counts(
            &k8s_results,
        )));
    }
    out.push('\n');
    let broken = report::broken_files(&corpus.broken);
    if !broken.is_empty() {
        let _ = writeln!(out, "{broken}");
    }
    let all_statuses: Vec<(&str, &Status)> = results
        .iter()
        .map(|r| (r.case.id.as_str(), &r.status))
        .chain(k8s_results.iter().map(|r| (r.case.id.as_str(), &r.status)))
        .chain(crd_results.iter().map(|r| (r.id.as_str(), &r.status)))
        .collect();
    out.push_str(&report::failures_of(&all_statuses, known.as_ref()));
    out.push('\n');
    out.push_str(&report::skips(&results));
    let early = report::expected_errors(&results);
    if !early.is_empty() {
        out.push('\n');
        out.push_str(&early);
    }
    out.push('\n');

    if let Some(path) = &args.summary {
        let mut summary = report::summary_json(&args.backend, &corpus, &results);
        if run_k8s {
            summary["kubernetes"] = kubernetes::summary_json(&k8s_corpus, &k8s_results);
        }
        if run_crd {
            summary["crd"] = crd::summary_json(&crd_results);
        }
        let text = match serde_json::to_string_pretty(&summary) {
            Ok(t) => t + "\n",
            Err(e) => {
                eprintln!("spec-tests: cannot serialise the summary: {e}");
                return ExitCode::from(2);
            }
        };
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("spec-tests: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
        let _ = writeln!(out, "summary written to {}", path.display());
    }

    let run_files: HashSet<String> = corpus
        .files
        .iter()
        .map(|f| f.name.clone())
        .chain(corpus.broken.iter().map(|b| b.name.clone()))
        .chain(
            k8s_corpus
                .files
                .iter()
                .map(|f| format!("{}/{}", kubernetes::ID_PREFIX, f.name)),
        )
        .chain(
            crd_cases
                .iter()
                .map(|c| format!("{}/{}", crd::ID_PREFIX, c.file)),
        )
        .collect();
    let list_path = args.known_failures.display().to_string();

    if args.write_known_failures {
        let failures: Vec<(String, String)> = all_statuses
            .iter()
            .filter_map(|(id, status)| match status {
                Status::Failed { reason, .. } => Some((id.to_string(), reason.clone())),
                _ => None,
            })
            .collect();
        let list = KnownFailures::regenerate(known.as_ref(), &failures, &run_files);
        if let Err(e) = std::fs::write(&args.known_failures, list.render()) {
            eprintln!("spec-tests: cannot write {list_path}: {e}");
            return ExitCode::from(2);
        }
        let _ = writeln!(
            out,
            "wrote {} known failures to {list_path}",
            list.entries.len()
        );
        return if corpus.broken.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
    }

    let verdicts = all_statuses
        .iter()
        .map(|(id, status)| (*id, status.verdict()));
    let comparison = known_failures::compare(&known.unwrap_or_default(), verdicts, &run_files);
    out.push_str(&report::comparison(&comparison, &list_path));

    if comparison.is_clean() && corpus.broken.is_empty() {
        ExitCode::SUCCESS
    } else {
        if !corpus.broken.is_empty() {
            let _ = writeln!(out, "{} file(s) could not be loaded", corpus.broken.len());
        }
        ExitCode::from(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Option<Args>, String> {
        parse_args(list.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_the_interface() {
        let a = args(&[
            "--backend",
            "interpreter",
            "--file",
            "basic",
            "--file=lists.textproto",
            "--summary",
            "s.json",
            "--known-failures",
            "k.txt",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(a.backend, "interpreter");
        assert_eq!(a.files, vec!["basic", "lists"]);
        assert_eq!(a.summary, Some(PathBuf::from("s.json")));
        assert_eq!(a.known_failures, PathBuf::from("k.txt"));
        assert!(!a.write_known_failures);
    }

    #[test]
    fn defaults_and_errors() {
        let a = args(&[]).unwrap().unwrap();
        assert_eq!(a.backend, "interpreter");
        assert!(a.known_failures.ends_with("spec-tests/known-failures.txt"));
        assert!(args(&["--file"]).is_err());
        assert!(args(&["--bogus"]).is_err());
        assert!(args(&["--help"]).unwrap().is_none());
    }
}
