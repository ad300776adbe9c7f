//! Celerity's Kubernetes jobs: what the API server does around CEL, offline, with its
//! verdicts, texts and costs.
//!
//! * [`crd`]: custom resources: a CustomResourceDefinition compiled once, then objects
//!   validated as the API server validates them on create and update (schema, defaults,
//!   pruning, `x-kubernetes-validations` with their budgets).
//! * [`admission`]: ValidatingAdmissionPolicy and MutatingAdmissionPolicy with their bindings,
//!   params and namespaces, compiled once, then requests admitted as the API server's
//!   admission plugins admit them.
//! * [`builtin`]: built-in kinds' schemas by Kubernetes version, shipped with the program,
//!   validated through [`crd`] as kubectl-validate validates them.
//! * [`places`]: the other places the API server and the scheduler evaluate CEL (structured
//!   authentication and authorization, admission webhooks' match conditions, device
//!   selectors), each a named environment by version.
//! * [`yaml`]: manifests' YAML read as `kubectl` reads it (YAML 1.1 values, keys, merges).
//!
//! **What this crate owns, and why it is not the facade.** `celerity` is the embedding API of
//! the language and of Kubernetes' CEL environments by version (`celerity::kubernetes`):
//! what a host needs to compile and run expressions. The jobs here are applications of it,
//! each with its own Kubernetes rules (orders of checks, error texts, Status layouts), and
//! they grow with every place the API server evaluates CEL. Keeping them above the facade
//! keeps the facade small and stable, and makes the jobs use only what any host can use.
//!
//! **Must not depend on:** the evaluators and the compiler (`cel-interp`, `cel-ir`,
//! `cel-jit`, Cranelift) or the checker directly: everything runs through the facade. Nothing
//! under `crates/` depends on this crate; the `cel` command, the conformance runner and the
//! benchmarks do. Checked by `spec-tests/tests/tidy.rs`.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod admission;
pub mod builtin;
pub mod crd;
pub mod places;
pub mod yaml;

use serde_json::Value as Json;

/// An object's `apiVersion` and `kind`, each empty when missing or not a string: how every
/// job finds the kind a manifest is of.
pub fn type_meta(object: &Json) -> (&str, &str) {
    let text = |k: &str| object.get(k).and_then(Json::as_str).unwrap_or("");
    (text("apiVersion"), text("kind"))
}
