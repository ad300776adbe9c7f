//! The run loop: a pipeline of [`Stage`]s applied to every [`Case`].
//!
//! This module owns the [`Stage`] trait, the per-case [`Outcome`] and [`Status`], the state
//! one case's stages share ([`CaseState`]), the backends (which pipeline a `--backend` name
//! runs), and the only stage written so far, [`ParseStage`].
//!
//! A case passes when every stage that applies to it passes. Stages run in order; the first
//! failure ends the case (and is reported), so does a skip, and so does a stage that produced
//! the error the case expects (there is nothing left for later stages to look at). A stage
//! that panics fails the case instead of ending the run.
//!
//! Adding a stage (checking, evaluating, comparing) means implementing [`Stage`], adding any
//! artefact later stages need to [`CaseState`], and listing the stage in [`pipeline`]. The
//! loader ([`crate::corpus`]) does not change.

use std::panic::{AssertUnwindSafe, catch_unwind};

use cel_syntax::macros::MacroTable;
use cel_syntax::{Ast, ParserOptions, Source, parse, render_diagnostics};

use crate::corpus::{Case, Corpus};
use crate::known_failures::Verdict;

/// What one stage concluded about one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The stage's checks held; the next stage runs.
    Pass,
    /// The stage produced the error the case expects (for example a parse error where the
    /// case expects an evaluation error). The case passes and later stages do not run; the
    /// text (the error produced) is kept for the report, so that such passes stay visible.
    ExpectedError(String),
    /// The case fails, for this reason.
    Fail(String),
    /// The case cannot be run (it needs something Celerity cannot represent yet), for this
    /// reason. Later stages do not run; the case counts as skipped.
    Skip(String),
}

/// Artefacts one case's stages hand to the stages after them. Each stage fills in what it
/// produced; a stage that needs something missing should fail the case, not panic.
#[derive(Debug, Default)]
pub struct CaseState {
    /// The parsed expression, set by [`ParseStage`] when parsing succeeded.
    pub parsed: Option<Ast>,
    /// The case's environment, set by the check stage.
    pub env: Option<celerity::Env>,
    /// The (checked, unless the case disables checking) expression, set by the check stage.
    pub ast: Option<celerity::Ast>,
}

/// One step of running a case.
pub trait Stage {
    /// A short name (`parse`, `check`, `eval`), shown with failures.
    fn name(&self) -> &str;

    /// Whether the stage has anything to do for this case (a check stage would not apply to
    /// a `disable_check` case). A stage that does not apply counts as passed.
    fn applies(&self, case: &Case) -> bool {
        let _ = case;
        true
    }

    /// Runs the stage on a case.
    fn run(&self, case: &Case, state: &mut CaseState) -> Outcome;
}

/// The result of running the whole pipeline on one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every stage that applied passed.
    Passed,
    /// A stage produced the error the case expects; the case passed there.
    ExpectedError {
        /// The stage that produced it.
        stage: String,
        /// The error it produced.
        detail: String,
    },
    /// A stage failed.
    Failed {
        /// The stage that failed.
        stage: String,
        /// Why.
        reason: String,
    },
    /// A stage skipped the case.
    Skipped {
        /// The stage that skipped it.
        stage: String,
        /// Why.
        reason: String,
    },
}

impl Status {
    /// Whether the case counts as passed.
    pub fn is_pass(&self) -> bool {
        matches!(self, Status::Passed | Status::ExpectedError { .. })
    }

    /// The status as the known-failures comparison sees it.
    pub fn verdict(&self) -> Verdict {
        match self {
            Status::Passed | Status::ExpectedError { .. } => Verdict::Pass,
            Status::Failed { .. } => Verdict::Fail,
            Status::Skipped { .. } => Verdict::Skip,
        }
    }
}

/// One case and how it went.
#[derive(Clone, Debug)]
pub struct CaseResult<'c> {
    /// The case.
    pub case: &'c Case,
    /// How it went.
    pub status: Status,
}

/// The backends `--backend` accepts; the first is the default. `jit` also runs every case
/// through the interpreter and fails it where the two disagree.
pub const BACKENDS: &[&str] = &["interpreter", "jit"];

/// The pipeline of stages a backend runs, or `None` for an unknown backend.
/// (`faulty-jit`, not listed, injects a fault into generated code for the test that proves
/// the differential comparison can fail.)
pub fn pipeline(backend: &str) -> Option<Vec<Box<dyn Stage>>> {
    use crate::stages::{EvalBackend, EvalStage};
    let eval = match backend {
        "interpreter" => EvalBackend::Interpreter,
        "jit" => EvalBackend::Jit,
        "faulty-jit" => EvalBackend::FaultyJit,
        _ => return None,
    };
    Some(vec![
        Box::new(ParseStage),
        Box::new(crate::stages::CheckStage),
        Box::new(EvalStage { backend: eval }),
    ])
}

/// Runs the pipeline on one case.
pub fn run_case(stages: &[Box<dyn Stage>], case: &Case) -> Status {
    let mut state = CaseState::default();
    for stage in stages {
        if !stage.applies(case) {
            continue;
        }
        // A panicking stage is a bug to report against this case, not a reason to lose the
        // rest of the run.
        let outcome = catch_unwind(AssertUnwindSafe(|| stage.run(case, &mut state)))
            .unwrap_or_else(|payload| {
                Outcome::Fail(format!("panicked: {}", panic_message(&*payload)))
            });
        let stage = stage.name().to_string();
        match outcome {
            Outcome::Pass => {}
            Outcome::ExpectedError(detail) => return Status::ExpectedError { stage, detail },
            Outcome::Fail(reason) => return Status::Failed { stage, reason },
            Outcome::Skip(reason) => return Status::Skipped { stage, reason },
        }
    }
    Status::Passed
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_string()
    }
}

/// Runs the pipeline on every case of the corpus, in order.
pub fn run_corpus<'c>(stages: &[Box<dyn Stage>], corpus: &'c Corpus) -> Vec<CaseResult<'c>> {
    corpus
        .cases()
        .map(|case| CaseResult {
            case,
            status: run_case(stages, case),
        })
        .collect()
}

/// The parser settings a case asks for.
pub fn parser_options(case: &Case) -> ParserOptions {
    let mut options = ParserOptions::default();
    if case.disable_macros {
        options.macros = no_macros();
    } else {
        // As in the environment the check stage builds (`stages::case_env`).
        options
            .macros
            .extend(cel_syntax::macros::block_test_macros());
    }
    options
}

/// An empty macro table: no call is expanded as a macro. (`ParserOptions::default()` uses
/// `MacroTable::standard()`; `MacroTable::default()` is the empty table.)
#[allow(
    clippy::default_constructed_unit_structs,
    reason = "MacroTable is a unit-struct placeholder until the macro table lands; \
              `default()` stays right when it gains fields"
)]
fn no_macros() -> MacroTable {
    MacroTable::default()
}

/// Parses the expression with [`cel_syntax::parse`].
///
/// Passes (and stores the AST) when parsing succeeds; otherwise the case fails with the
/// rendered diagnostics, whatever it expects. Unsupported expected values or bindings do not matter
/// here: parsing does not need them.
#[derive(Clone, Copy, Debug, Default)]
pub struct ParseStage;

impl Stage for ParseStage {
    fn name(&self) -> &str {
        "parse"
    }

    fn run(&self, case: &Case, state: &mut CaseState) -> Outcome {
        let source = Source::new(case.expr.as_str());
        let parsed = parse(&source, &parser_options(case));
        if parsed.diagnostics.is_empty() {
            state.parsed = Some(parsed.ast);
            return Outcome::Pass;
        }
        // Every conformance expression parses in cel-go; the suite's expected errors are
        // evaluation errors. So a parse error is a failure even where an error is expected.
        Outcome::Fail(render_diagnostics(&parsed.diagnostics, &source))
    }
}
