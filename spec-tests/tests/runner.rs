//! The run loop and the report, on hand-made cases: stage ordering, skips, panics, the parse
//! stage's handling of expected errors, the table and the JSON summary. Also the binary end
//! to end against the real data (skipped with a note when it is missing).

mod common;

use std::process::Command;

use cel_runtime::Value;
use spec_tests::corpus::{Corpus, Section, TestFile};
use spec_tests::report;
use spec_tests::runner::{self, CaseResult, CaseState, Outcome, ParseStage, Stage, Status};
use spec_tests::{Case, Expectation, Unsupported};

fn case(file: &str, name: &str, expr: &str, expected: Expectation) -> Case {
    Case {
        file: file.into(),
        section: "s".into(),
        name: name.into(),
        index: 0,
        id: format!("{file}/s/{name}"),
        description: String::new(),
        expr: expr.into(),
        disable_macros: false,
        disable_check: false,
        check_only: false,
        container: String::new(),
        locale: String::new(),
        type_env: Vec::new(),
        bindings: Vec::new(),
        expected,
        pool: prost_reflect::DescriptorPool::new(),
    }
}

fn value_case(name: &str, expr: &str) -> Case {
    case("f", name, expr, Expectation::Value(Ok(Value::Bool(true))))
}

/// A stage that answers from the case's name, and records that it ran in the state.
struct Scripted(&'static str);

impl Stage for Scripted {
    fn name(&self) -> &str {
        self.0
    }
    fn applies(&self, case: &Case) -> bool {
        !case.name.contains("not_applicable")
    }
    fn run(&self, case: &Case, _state: &mut CaseState) -> Outcome {
        match case.name.as_str() {
            n if n.starts_with("fail") => Outcome::Fail(format!("{} failed", self.0)),
            n if n.starts_with("skip") => Outcome::Skip("needs messages".into()),
            n if n.starts_with("error") => Outcome::ExpectedError("boom".into()),
            n if n.starts_with("panic") => panic!("stage bug"),
            _ => Outcome::Pass,
        }
    }
}

/// A stage that fails if it runs at all.
struct MustNotRun;

impl Stage for MustNotRun {
    fn name(&self) -> &str {
        "must_not_run"
    }
    fn run(&self, case: &Case, _state: &mut CaseState) -> Outcome {
        match case.name.as_str() {
            "pass" | "not_applicable" => Outcome::Pass,
            other => Outcome::Fail(format!("ran after `{other}` ended the case")),
        }
    }
}

#[test]
fn pipeline_stops_at_the_first_decision() {
    let stages: Vec<Box<dyn Stage>> = vec![Box::new(Scripted("first")), Box::new(MustNotRun)];
    let status = |name: &str| runner::run_case(&stages, &value_case(name, "x"));
    assert_eq!(status("pass"), Status::Passed);
    assert_eq!(status("not_applicable"), Status::Passed);
    assert_eq!(
        status("fail"),
        Status::Failed {
            stage: "first".into(),
            reason: "first failed".into()
        }
    );
    assert_eq!(
        status("skip"),
        Status::Skipped {
            stage: "first".into(),
            reason: "needs messages".into()
        }
    );
    assert_eq!(
        status("error"),
        Status::ExpectedError {
            stage: "first".into(),
            detail: "boom".into()
        }
    );
    assert!(status("error").is_pass());
}

#[test]
fn a_panicking_stage_fails_its_case() {
    let stages: Vec<Box<dyn Stage>> = vec![Box::new(Scripted("first"))];
    let Status::Failed { stage, reason } = runner::run_case(&stages, &value_case("panic", "x"))
    else {
        panic!()
    };
    assert_eq!(stage, "first");
    assert!(reason.contains("stage bug"), "{reason}");
}

#[test]
fn parse_stage_fails_on_parse_errors_even_where_errors_are_expected() {
    let stages: Vec<Box<dyn Stage>> = vec![Box::new(ParseStage)];
    // Unreadable by any CEL parser.
    let bad = ")(";
    // The suite's expected errors are evaluation errors; cel-go parses every case.
    let err_case = case("f", "e", bad, Expectation::EvalError(vec!["x".into()]));
    assert!(matches!(
        runner::run_case(&stages, &err_case),
        Status::Failed { stage, reason } if stage == "parse" && reason.starts_with("ERROR: <input>:1:")
    ));
    let any_err = case("f", "e", bad, Expectation::AnyEvalErrors(vec![]));
    assert!(!runner::run_case(&stages, &any_err).is_pass());
    let Status::Failed { stage, reason } = runner::run_case(&stages, &value_case("v", bad)) else {
        panic!()
    };
    assert_eq!(stage, "parse");
    assert!(reason.starts_with("ERROR: <input>:1:"), "{reason}");
    // Unsupported expectations do not stop the parse stage: parsing does not need them.
    let unsupported = case(
        "f",
        "u",
        bad,
        Expectation::Value(Err(Unsupported::new("proto messages"))),
    );
    assert!(matches!(
        runner::run_case(&stages, &unsupported),
        Status::Failed { .. }
    ));
}

#[test]
fn interpreter_backend_exists() {
    let stages = runner::pipeline("interpreter").expect("the default backend");
    assert_eq!(stages[0].name(), "parse");
    assert!(runner::pipeline("no-such-backend").is_none());
    assert_eq!(runner::BACKENDS[0], "interpreter");
}

fn corpus_of(cases: Vec<Case>) -> Corpus {
    let mut files: Vec<TestFile> = Vec::new();
    for c in cases {
        if files.last().is_none_or(|f| f.name != c.file) {
            files.push(TestFile {
                name: c.file.clone(),
                declared_name: c.file.clone(),
                description: String::new(),
                path: Default::default(),
                sections: vec![Section {
                    name: "s".into(),
                    description: String::new(),
                    cases: Vec::new(),
                }],
            });
        }
        files.last_mut().unwrap().sections[0].cases.push(c);
    }
    Corpus {
        dir: Default::default(),
        files,
        broken: Vec::new(),
    }
}

#[test]
fn report_counts_table_and_summary() {
    let corpus = corpus_of(vec![
        case(
            "alpha",
            "pass",
            "x",
            Expectation::Value(Ok(Value::Bool(true))),
        ),
        case(
            "alpha",
            "fail",
            "x",
            Expectation::Value(Ok(Value::Bool(true))),
        ),
        case(
            "alpha",
            "skip",
            "x",
            Expectation::Value(Ok(Value::Bool(true))),
        ),
        case("beta", "error", "x", Expectation::EvalError(vec![])),
    ]);
    let stages: Vec<Box<dyn Stage>> = vec![Box::new(Scripted("eval"))];
    let results: Vec<CaseResult<'_>> = runner::run_corpus(&stages, &corpus);

    let summary = report::summary_json("interpreter", &corpus, &results);
    assert_eq!(
        summary,
        serde_json::json!({
            "backend": "interpreter",
            "files": {
                "alpha": {"passed": 1, "failed": 1, "skipped": 1},
                "beta": {"passed": 1, "failed": 0, "skipped": 0},
            },
            "totals": {"passed": 2, "failed": 1, "skipped": 1},
        })
    );

    let table = report::table(&corpus, &results);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| !l.starts_with('-'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["file", "passed", "failed", "skipped", "total"]);
    assert_eq!(rows[1], ["alpha", "1", "1", "1", "3"]);
    assert_eq!(rows[3], ["TOTAL", "2", "1", "1", "4"]);

    let failures = report::failures(&results, None);
    assert!(failures.contains("alpha/s/fail [eval]"), "{failures}");
    assert!(failures.contains("1  [eval] eval failed"), "{failures}");
    let skips = report::skips(&results);
    assert!(skips.contains("1  [eval] needs messages"), "{skips}");
    let early = report::expected_errors(&results);
    assert!(
        early.contains("expected errors produced at eval time: 1"),
        "{early}"
    );
    assert!(early.contains("beta/s/error"), "{early}");
}

/// The binary against real data: an empty list fails the run, `--write-known-failures`
/// records the failures, and then the same run agrees with the list.
#[test]
fn binary_round_trip_with_known_failures() {
    if common::spec_dir_or_skip("binary_round_trip_with_known_failures").is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("spec-tests-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let list = dir.join("known.txt");
    let summary = dir.join("summary.json");
    std::fs::write(&list, "# empty\n").unwrap();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_spec-tests"))
            .args(["--file", "basic", "--file", "plumbing", "--known-failures"])
            .arg(&list)
            .arg("--summary")
            .arg(&summary)
            .args(extra)
            .output()
            .unwrap()
    };

    let first = run(&[]);
    let stdout = String::from_utf8_lossy(&first.stdout);
    let failed: u64 = {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
        assert_eq!(json["backend"], "interpreter");
        assert_eq!(json["files"].as_object().unwrap().len(), 2);
        json["totals"]["failed"].as_u64().unwrap()
    };
    if failed > 0 {
        assert_eq!(first.status.code(), Some(1), "{stdout}");
        assert!(stdout.contains("UNEXPECTED FAILURES"), "{stdout}");
    }
    assert!(stdout.contains("TOTAL"), "{stdout}");

    let write = run(&["--write-known-failures"]);
    assert_eq!(
        write.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&write.stdout)
    );
    let written = std::fs::read_to_string(&list).unwrap();
    assert!(written.starts_with("# empty\n"), "{written}");
    let entries = written
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .count();
    assert_eq!(entries as u64, failed);

    let again = run(&[]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );

    // A listed test that does not fail makes the run fail.
    std::fs::write(
        &list,
        format!("{written}basic/no_such_section/no_such_test  r\n"),
    )
    .unwrap();
    let stale = run(&[]);
    assert_eq!(stale.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&stale.stdout).contains("LISTED BUT NOT FOUND"));

    std::fs::remove_dir_all(&dir).unwrap();
}
