//! The known-failures list: which conformance tests are expected to fail, and why.
//!
//! This module owns the file format, its parser, the comparison of a run against the list
//! (which makes the run fail on a new failure *and* on a listed test that no longer fails, so
//! the list only shrinks), and regenerating the list from a run.
//!
//! Format, one test per line:
//!
//! ```text
//! # comment
//! file/section/name  reason
//! file/section/name#index  reason
//! ```
//!
//! The id is the case id ([`crate::corpus::Case::id`]): the file name without `.textproto`,
//! the section name and the test name, joined by `/`; `#index` (the test's position in its
//! section, from 0) is appended only when the name is not unique within its section. Test
//! names may contain single spaces and `/`, so the id is separated from the reason by two or
//! more spaces or a tab. The reason is free text and may be empty. Blank lines and lines
//! whose first non-blank character is `#` are ignored. Regeneration keeps the comment block
//! at the top of the file (the header) but not comments between entries.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

/// The header written at the top of a regenerated file when the old one had none.
pub const DEFAULT_HEADER: &str = "\
# Conformance tests expected to fail, one per line:
#
#   file/section/name  reason
#   file/section/name#index  reason
#
# The id is the .textproto file name without extension, the section name and the test name,
# joined by '/'. '#index' (the test's position in its section, from 0) is appended only when
# the name is not unique within its section. Names may contain single spaces and '/', so the
# id is separated from the reason by two or more spaces or a tab. Lines starting with '#' are
# comments.
#
# Celerity's own Kubernetes cases (spec-tests/cases/kubernetes/*.jsonl) are listed as
#   kubernetes/<file>/<case name>  reason
# with '#position' (the case's line among the file's cases, from 0) appended only when the
# name repeats in its file; a case fails on a wrong value, error, cost or estimate.
#
# The run fails on a failing test that is not listed and on a listed test that does not fail
# (it passes, is skipped, or no longer exists), so this list only shrinks. Regenerate it with
#   cargo run --release -p spec-tests -- --write-known-failures
# which keeps the reasons of lines that still match and uses the failure message otherwise.
";

/// The longest reason written when a reason is taken from a failure message.
pub const MAX_REASON_CHARS: usize = 200;

/// One listed test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The case id.
    pub id: String,
    /// Why it fails (may be empty).
    pub reason: String,
    /// The 1-based line it was read from (0 when not read from a file).
    pub line: usize,
}

impl Entry {
    /// The file the entry belongs to (see [`file_of`]).
    pub fn file(&self) -> &str {
        file_of(&self.id)
    }
}

/// The file part of a case id: the id up to its first `/`, or for Celerity's own
/// Kubernetes cases (`kubernetes/lists/name`) up to its second (`kubernetes/lists`).
pub fn file_of(id: &str) -> &str {
    let first = id.split_once('/').map_or(id.len(), |(f, _)| f.len());
    let prefix = &id[..first];
    if (prefix == crate::kubernetes::ID_PREFIX || prefix == crate::crd::ID_PREFIX)
        && first < id.len()
    {
        let rest = &id[first + 1..];
        let second = rest.find('/').map_or(rest.len(), |i| i);
        return &id[..first + 1 + second];
    }
    &id[..first]
}

/// A parsed known-failures file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KnownFailures {
    /// The comment lines at the top of the file, kept when the file is regenerated.
    pub header: Vec<String>,
    /// The entries, in file order.
    pub entries: Vec<Entry>,
}

impl KnownFailures {
    /// Parses the text of a known-failures file. Errors name their lines.
    pub fn parse(text: &str) -> Result<KnownFailures, Vec<String>> {
        let mut out = KnownFailures::default();
        let mut errors = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut in_header = true;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = raw.trim();
            if line.starts_with('#') {
                if in_header {
                    out.header.push(raw.trim_end().to_string());
                }
                continue;
            }
            if line.is_empty() {
                if in_header && !out.header.is_empty() {
                    out.header.push(String::new());
                }
                continue;
            }
            in_header = false;
            let (id, reason) = split_line(line);
            if id.split('/').count() < 3 {
                errors.push(format!(
                    "line {line_no}: `{id}` is not an id of the form file/section/name[#index]"
                ));
                continue;
            }
            if let Some(first) = seen.insert(id.to_string(), line_no) {
                errors.push(format!(
                    "line {line_no}: `{id}` is already listed on line {first}"
                ));
                continue;
            }
            out.entries.push(Entry {
                id: id.to_string(),
                reason: reason.to_string(),
                line: line_no,
            });
        }
        // Blank lines that ended the header are not part of it.
        while out.header.last().is_some_and(String::is_empty) {
            out.header.pop();
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }

    /// Reads and parses a file; `Ok(None)` when it does not exist.
    pub fn read(path: &Path) -> Result<Option<KnownFailures>, Vec<String>> {
        match std::fs::read_to_string(path) {
            Ok(text) => KnownFailures::parse(&text).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(vec![format!("cannot read {}: {e}", path.display())]),
        }
    }

    /// The reason listed for an id, if it is listed.
    pub fn reason(&self, id: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| e.id == id)
            .map(|e| e.reason.as_str())
    }

    /// Renders the list in the file format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if self.header.is_empty() {
            out.push_str(DEFAULT_HEADER);
        } else {
            for h in &self.header {
                out.push_str(h);
                out.push('\n');
            }
        }
        if !self.entries.is_empty() {
            out.push('\n');
        }
        for e in &self.entries {
            out.push_str(&e.id);
            if !e.reason.is_empty() {
                out.push_str("  ");
                out.push_str(&e.reason);
            }
            out.push('\n');
        }
        out
    }

    /// The list a run implies: its failures (`(id, failure reason)`, in run order), keeping
    /// the reasons of ids already listed, plus the old entries of files the run did not
    /// cover (`run_files`). Entries are grouped by file, in file-name order.
    pub fn regenerate(
        old: Option<&KnownFailures>,
        failures: &[(String, String)],
        run_files: &HashSet<String>,
    ) -> KnownFailures {
        let mut entries: Vec<Entry> = old
            .map(|o| {
                o.entries
                    .iter()
                    .filter(|e| !run_files.contains(e.file()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        for (id, reason) in failures {
            let reason = old
                .and_then(|o| o.reason(id))
                .map_or_else(|| one_line_reason(reason), str::to_string);
            entries.push(Entry {
                id: id.clone(),
                reason,
                line: 0,
            });
        }
        // A stable sort keeps each file's entries in their order.
        entries.sort_by(|a, b| a.file().cmp(b.file()));
        KnownFailures {
            header: old.map(|o| o.header.clone()).unwrap_or_default(),
            entries,
        }
    }
}

/// Splits a (trimmed) line into id and reason at the first tab or run of two spaces.
fn split_line(line: &str) -> (&str, &str) {
    let cut = match (line.find('\t'), line.find("  ")) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    match cut {
        Some(i) => (line[..i].trim_end(), line[i..].trim()),
        None => (line, ""),
    }
}

/// A failure message reduced to a reason: its first non-empty line, tabs and runs of spaces
/// collapsed (so it cannot be mistaken for a separator), at most [`MAX_REASON_CHARS`].
pub fn one_line_reason(reason: &str) -> String {
    let first = reason.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let collapsed = first.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate_chars(&collapsed, MAX_REASON_CHARS)
}

/// Cuts a string to at most `max` characters, marking the cut with `…`.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// How a case went, as far as the list is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It passed.
    Pass,
    /// It failed.
    Fail,
    /// It was skipped.
    Skip,
}

/// The differences between a run and the list. Any of them fails the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Failing cases that are not listed.
    pub unexpected_failures: Vec<String>,
    /// Listed cases that passed: remove them from the list.
    pub unexpected_passes: Vec<String>,
    /// Listed cases that were skipped: remove them (a skip is not a failure).
    pub listed_but_skipped: Vec<String>,
    /// Listed ids of files the run covered that name no case (renamed or removed tests).
    pub stale: Vec<String>,
    /// The number of failing cases that are listed.
    pub known_failures: usize,
}

impl Comparison {
    /// Whether the run agrees with the list.
    pub fn is_clean(&self) -> bool {
        self.unexpected_failures.is_empty()
            && self.unexpected_passes.is_empty()
            && self.listed_but_skipped.is_empty()
            && self.stale.is_empty()
    }
}

/// Compares a run (`(case id, verdict)` for every case run) against the list. Entries for
/// files outside `run_files` are ignored, so a `--file` run judges only its own files.
pub fn compare<'a>(
    known: &KnownFailures,
    results: impl IntoIterator<Item = (&'a str, Verdict)>,
    run_files: &HashSet<String>,
) -> Comparison {
    let listed: HashSet<&str> = known.entries.iter().map(|e| e.id.as_str()).collect();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut out = Comparison::default();
    for (id, verdict) in results {
        seen.insert(id);
        match (verdict, listed.contains(id)) {
            (Verdict::Fail, true) => out.known_failures += 1,
            (Verdict::Fail, false) => out.unexpected_failures.push(id.to_string()),
            (Verdict::Pass, true) => out.unexpected_passes.push(id.to_string()),
            (Verdict::Skip, true) => out.listed_but_skipped.push(id.to_string()),
            (_, false) => {}
        }
    }
    out.stale = known
        .entries
        .iter()
        .filter(|e| run_files.contains(e.file()) && !seen.contains(e.id.as_str()))
        .map(|e| e.id.clone())
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_at_two_spaces_or_tab() {
        assert_eq!(
            split_line("f/s/multiple substitutions  needs format"),
            ("f/s/multiple substitutions", "needs format")
        );
        assert_eq!(split_line("f/s/n\treason  here"), ("f/s/n", "reason  here"));
        assert_eq!(split_line("f/s/n"), ("f/s/n", ""));
    }

    #[test]
    fn files_of_ids() {
        assert_eq!(file_of("basic/self_eval/int"), "basic");
        assert_eq!(file_of("kubernetes/urls/isURL /a/b"), "kubernetes/urls");
        assert_eq!(file_of("kubernetes"), "kubernetes");
    }

    #[test]
    fn reasons_are_one_line() {
        assert_eq!(
            one_line_reason("\nERROR: <input>:1:1: bad\n | x\n | ^"),
            "ERROR: <input>:1:1: bad"
        );
        assert_eq!(one_line_reason("a\t b  c"), "a b c");
        assert_eq!(truncate_chars("abcdef", 4), "abc…");
    }
}
