//! What a run prints and writes: the per-file table, the failures, the skip reasons, the
//! errors produced before evaluation, the known-failures verdict, and the JSON summary.
//!
//! Everything here is a pure function of the results, so the formats can be tested without
//! running anything.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use crate::corpus::{BrokenFile, Corpus};
use crate::known_failures::{Comparison, KnownFailures, truncate_chars};
use crate::runner::{CaseResult, Status};

/// How many failures are printed in full; the rest are counted (and grouped by reason).
pub const MAX_LISTED_FAILURES: usize = 50;
/// How many lines of one failure reason are printed.
pub const MAX_REASON_LINES: usize = 4;
/// How many characters of one reason line are printed.
pub const MAX_LINE_CHARS: usize = 160;
/// How many cases passed by an expected early error are named.
pub const MAX_LISTED_EARLY_ERRORS: usize = 20;
/// How many ids each section of the known-failures verdict names.
pub const MAX_LISTED_IDS: usize = 20;
/// How many groups of failure reasons are printed.
pub const MAX_REASON_GROUPS: usize = 20;

/// Passed, failed and skipped counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases that were skipped.
    pub skipped: usize,
}

impl Counts {
    /// All cases.
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.skipped
    }

    /// Counts one more case.
    pub fn add(&mut self, status: &Status) {
        match status {
            Status::Passed | Status::ExpectedError { .. } => self.passed += 1,
            Status::Failed { .. } => self.failed += 1,
            Status::Skipped { .. } => self.skipped += 1,
        }
    }

    fn to_json(self) -> Json {
        json!({ "passed": self.passed, "failed": self.failed, "skipped": self.skipped })
    }
}

/// Counts per file, in corpus order, and the totals. Files with no cases are included.
pub fn counts(corpus: &Corpus, results: &[CaseResult<'_>]) -> (Vec<(String, Counts)>, Counts) {
    let mut per_file: Vec<(String, Counts)> = corpus
        .files
        .iter()
        .map(|f| (f.name.clone(), Counts::default()))
        .collect();
    let mut totals = Counts::default();
    for r in results {
        if let Some((_, c)) = per_file.iter_mut().find(|(n, _)| *n == r.case.file) {
            c.add(&r.status);
        }
        totals.add(&r.status);
    }
    (per_file, totals)
}

/// The JSON summary:
/// `{"backend": "...", "files": {"basic": {"passed": 40, "failed": 1, "skipped": 2}, ...},
/// "totals": {...}}`. A file that could not be loaded appears with zero counts and an
/// `"error"`.
pub fn summary_json(backend: &str, corpus: &Corpus, results: &[CaseResult<'_>]) -> Json {
    let (per_file, totals) = counts(corpus, results);
    let mut files = serde_json::Map::new();
    for (name, c) in per_file {
        files.insert(name, c.to_json());
    }
    for b in &corpus.broken {
        let mut entry = Counts::default().to_json();
        entry["error"] = Json::String(b.error.clone());
        files.insert(b.name.clone(), entry);
    }
    json!({ "backend": backend, "files": files, "totals": totals.to_json() })
}

/// The per-file table with totals.
pub fn table(corpus: &Corpus, results: &[CaseResult<'_>]) -> String {
    table_with(corpus, results, &[])
}

/// The per-file table with more rows after the conformance files (Celerity's own corpora,
/// `k8s:lists`, ...). With extra rows, subtotals for cel-spec and for the extra rows precede
/// the grand total.
pub fn table_with(
    corpus: &Corpus,
    results: &[CaseResult<'_>],
    extra: &[(String, Counts)],
) -> String {
    let (per_file, spec_totals) = counts(corpus, results);
    let mut totals = spec_totals;
    let mut extra_totals = Counts::default();
    for (_, c) in extra {
        for t in [&mut totals, &mut extra_totals] {
            t.passed += c.passed;
            t.failed += c.failed;
            t.skipped += c.skipped;
        }
    }
    let width = per_file
        .iter()
        .map(|(n, _)| n.len())
        .chain(extra.iter().map(|(n, _)| n.len()))
        .chain(corpus.broken.iter().map(|b| b.name.len()))
        .chain(["file".len(), "TOTAL".len(), "own cases".len()])
        .max()
        .unwrap_or(5);
    let mut out = String::new();
    let row = |out: &mut String, name: &str, c: Counts| {
        let _ = writeln!(
            out,
            "{name:<width$}  {:>6}  {:>6}  {:>7}  {:>5}",
            c.passed,
            c.failed,
            c.skipped,
            c.total()
        );
    };
    let _ = writeln!(
        out,
        "{:<width$}  {:>6}  {:>6}  {:>7}  {:>5}",
        "file", "passed", "failed", "skipped", "total"
    );
    let rule = "-".repeat(width + 2 + 6 + 2 + 6 + 2 + 7 + 2 + 5);
    let _ = writeln!(out, "{rule}");
    for (name, c) in &per_file {
        row(&mut out, name, *c);
    }
    for b in &corpus.broken {
        let _ = writeln!(out, "{:<width$}  (not loaded: see below)", b.name);
    }
    for (name, c) in extra {
        row(&mut out, name, *c);
    }
    let _ = writeln!(out, "{rule}");
    if !extra.is_empty() {
        row(&mut out, "cel-spec", spec_totals);
        row(&mut out, "own cases", extra_totals);
    }
    row(&mut out, "TOTAL", totals);
    out
}

/// The first line of a reason with cel-go's `ERROR: <input>:L:C: ` location removed, so
/// that failures with the same message at different positions group together.
pub fn headline(reason: &str) -> String {
    let first = reason.lines().next().unwrap_or("");
    let stripped = first
        .strip_prefix("ERROR: <input>:")
        .and_then(|rest| {
            // Skip "LINE:COL: ".
            let mut parts = rest.splitn(3, ':');
            let (line, col, msg) = (parts.next()?, parts.next()?, parts.next()?);
            (line.chars().all(|c| c.is_ascii_digit()) && col.chars().all(|c| c.is_ascii_digit()))
                .then(|| format!("ERROR: {}", msg.trim_start()))
        })
        .unwrap_or_else(|| first.to_string());
    truncate_chars(&stripped, MAX_LINE_CHARS)
}

/// Counts of equal strings, most frequent first (ties in name order).
fn grouped(items: impl IntoIterator<Item = String>) -> Vec<(String, usize)> {
    let mut map: BTreeMap<String, usize> = BTreeMap::new();
    for i in items {
        *map.entry(i).or_default() += 1;
    }
    let mut v: Vec<(String, usize)> = map.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// The failures, unexpected ones first: up to [`MAX_LISTED_FAILURES`] in full (each reason
/// cut to [`MAX_REASON_LINES`] lines of [`MAX_LINE_CHARS`]), then the failures grouped by
/// stage and [`headline`].
pub fn failures(results: &[CaseResult<'_>], known: Option<&KnownFailures>) -> String {
    let items: Vec<(&str, &Status)> = results
        .iter()
        .map(|r| (r.case.id.as_str(), &r.status))
        .collect();
    failures_of(&items, known)
}

/// [`failures`] over `(case id, status)` pairs, from any corpus.
pub fn failures_of(results: &[(&str, &Status)], known: Option<&KnownFailures>) -> String {
    let mut failed: Vec<(&str, &str, &str, bool)> = results
        .iter()
        .filter_map(|(id, status)| match status {
            Status::Failed { stage, reason } => {
                let is_known = known.is_some_and(|k| k.reason(id).is_some());
                Some((*id, stage.as_str(), reason.as_str(), is_known))
            }
            _ => None,
        })
        .collect();
    let mut out = String::new();
    if failed.is_empty() {
        out.push_str("failures: none\n");
        return out;
    }
    // Unexpected failures matter most; keep corpus order otherwise.
    failed.sort_by_key(|(_, _, _, is_known)| *is_known);
    let unexpected = failed.iter().filter(|f| !f.3).count();
    let _ = writeln!(
        out,
        "failures: {} ({} not in the known-failures list)",
        failed.len(),
        unexpected
    );
    for (id, stage, reason, is_known) in failed.iter().take(MAX_LISTED_FAILURES) {
        let mark = if *is_known { " (known)" } else { "" };
        let _ = writeln!(out, "  {id} [{stage}]{mark}");
        let lines: Vec<&str> = reason.lines().collect();
        for l in lines.iter().take(MAX_REASON_LINES) {
            let _ = writeln!(out, "      {}", truncate_chars(l, MAX_LINE_CHARS));
        }
        if lines.len() > MAX_REASON_LINES {
            let _ = writeln!(
                out,
                "      … ({} more lines)",
                lines.len() - MAX_REASON_LINES
            );
        }
    }
    if failed.len() > MAX_LISTED_FAILURES {
        let _ = writeln!(
            out,
            "  … and {} more failures not shown",
            failed.len() - MAX_LISTED_FAILURES
        );
    }
    let groups = grouped(
        failed
            .iter()
            .map(|(_, stage, reason, _)| format!("[{stage}] {}", headline(reason))),
    );
    let _ = writeln!(out, "failure reasons:");
    for (reason, n) in groups.iter().take(MAX_REASON_GROUPS) {
        let _ = writeln!(out, "  {n:>5}  {reason}");
    }
    if groups.len() > MAX_REASON_GROUPS {
        let _ = writeln!(
            out,
            "  … and {} more reasons",
            groups.len() - MAX_REASON_GROUPS
        );
    }
    out
}

/// Skip reasons with their counts.
pub fn skips(results: &[CaseResult<'_>]) -> String {
    let groups = grouped(results.iter().filter_map(|r| match &r.status {
        Status::Skipped { stage, reason } => Some(format!("[{stage}] {}", headline(reason))),
        _ => None,
    }));
    let mut out = String::new();
    if groups.is_empty() {
        out.push_str("skips: none\n");
        return out;
    }
    let total: usize = groups.iter().map(|(_, n)| n).sum();
    let _ = writeln!(out, "skips: {total}");
    for (reason, n) in &groups {
        let _ = writeln!(out, "  {n:>5}  {reason}");
    }
    out
}

/// Cases that passed because a stage produced the error they expect, per stage: they are
/// passes, but ones that did not reach evaluation, so they are named.
pub fn expected_errors(results: &[CaseResult<'_>]) -> String {
    let mut by_stage: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for r in results {
        if let Status::ExpectedError { stage, detail } = &r.status {
            by_stage
                .entry(stage.as_str())
                .or_default()
                .push((r.case.id.as_str(), detail.as_str()));
        }
    }
    let mut out = String::new();
    for (stage, cases) in by_stage {
        let _ = writeln!(
            out,
            "expected errors produced at {stage} time: {}",
            cases.len()
        );
        for (id, detail) in cases.iter().take(MAX_LISTED_EARLY_ERRORS) {
            let _ = writeln!(out, "  {id}: {}", headline(detail));
        }
        if cases.len() > MAX_LISTED_EARLY_ERRORS {
            let _ = writeln!(
                out,
                "  … and {} more",
                cases.len() - MAX_LISTED_EARLY_ERRORS
            );
        }
    }
    out
}

/// Files that could not be loaded.
pub fn broken_files(broken: &[BrokenFile]) -> String {
    let mut out = String::new();
    for b in broken {
        let _ = writeln!(
            out,
            "FILE NOT LOADED: {} ({}): {}",
            b.name,
            b.path.display(),
            b.error
        );
    }
    out
}

/// The verdict against the known-failures list: what to fix or remove.
pub fn comparison(c: &Comparison, list_path: &str) -> String {
    let mut out = String::new();
    let section = |out: &mut String, title: &str, ids: &[String]| {
        if ids.is_empty() {
            return;
        }
        let _ = writeln!(out, "{title} ({}):", ids.len());
        for id in ids.iter().take(MAX_LISTED_IDS) {
            let _ = writeln!(out, "  {id}");
        }
        if ids.len() > MAX_LISTED_IDS {
            let _ = writeln!(out, "  … and {} more", ids.len() - MAX_LISTED_IDS);
        }
    };
    section(
        &mut out,
        "UNEXPECTED FAILURES (fix them, or list them in the known-failures file)",
        &c.unexpected_failures,
    );
    section(
        &mut out,
        "UNEXPECTED PASSES (remove them from the known-failures file)",
        &c.unexpected_passes,
    );
    section(
        &mut out,
        "LISTED BUT SKIPPED (remove them from the known-failures file)",
        &c.listed_but_skipped,
    );
    section(
        &mut out,
        "LISTED BUT NOT FOUND (renamed or removed tests; remove them)",
        &c.stale,
    );
    if c.is_clean() {
        let _ = writeln!(
            out,
            "known failures: {} failing as listed in {list_path}; no unexpected results",
            c.known_failures
        );
    } else {
        let _ = writeln!(
            out,
            "known failures: {} failing as listed in {list_path}; the run disagrees with the list \
             (update it with --write-known-failures after checking the changes)",
            c.known_failures
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_drops_location() {
        assert_eq!(
            headline("ERROR: <input>:1:5: Syntax error: x\n | 1 +\n | ....^"),
            "ERROR: Syntax error: x"
        );
        assert_eq!(headline("no such overload"), "no such overload");
    }
}
