//! Celerity's conformance runner for cel-spec's test corpus and its own Kubernetes corpus.
//!
//! The library holds everything the `spec-tests` binary does, so that it can be tested:
//!
//! - [`corpus`] loads cel-spec's `tests/simple/testdata/*.textproto` (read at run time from
//!   `$CEL_SPEC_DIR`, never copied here) into [`Corpus`], [`TestFile`], [`Section`] and
//!   [`Case`] values;
//! - [`convert`] turns cel-spec's `Value`, `Type` and `Decl` protos into Celerity's values,
//!   types and declarations, or into an [`Unsupported`] reason;
//! - [`runner`] runs a pipeline of [`Stage`]s over the cases;
//! - [`known_failures`] reads, compares and regenerates the known-failures list;
//! - [`report`] formats the table, the failures and the JSON summary;
//! - [`kubernetes`] loads and runs Celerity's own Kubernetes corpus
//!   (`spec-tests/cases/kubernetes/*.jsonl`), costs included;
//! - [`admission`] loads and runs Kubernetes' admission-policy tests as data
//!   (`spec-tests/cases/admission/*.jsonl`).

#![forbid(unsafe_code)]

pub mod admission;
pub mod convert;
pub mod corpus;
pub mod crd;
pub mod generate;
pub mod known_failures;
pub mod kubernetes;
pub mod report;
pub mod runner;
pub mod stages;

pub use convert::{Converted, Decl, Unsupported};
pub use corpus::{
    Binding, BrokenFile, Case, Corpus, Expectation, ExpectedType, ExpectedValue, LoadError,
    Section, TestFile,
};
pub use known_failures::{Comparison, KnownFailures, Verdict};
pub use runner::{CaseResult, CaseState, Outcome, ParseStage, Stage, Status};
