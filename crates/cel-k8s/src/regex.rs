//! Kubernetes' regex library (`kubernetes.regex`, `regex.go`), Kubernetes 1.23+.
//!
//! | function | signature | example |
//! | --- | --- | --- |
//! | `find` | `string.find(string) -> string` | `'abc 123'.find('[0-9]+') == '123'` |
//! | `findAll` | `string.findAll(string) -> list(string)` | `'123 abc 456'.findAll('[0-9]+') == ['123', '456']` |
//! | `findAll` | `string.findAll(string, int) -> list(string)` | `'123 abc 456'.findAll('[0-9]+', 1) == ['123']` |
//!
//! Patterns are RE2 (Go's `regexp`), matched leftmost-first and unanchored. `find` returns the
//! first match, or `''`. `findAll` returns the non-overlapping matches left to right with Go's
//! rule for empty matches (an empty match right after a previous match is skipped), at most
//! `limit` of them when the limit is not negative. An invalid pattern is the error
//! `Illegal regex: error parsing regexp: ...`; a constant pattern that does not compile
//! fails making the program, as Kubernetes' regex optimisations compile constant patterns
//! then (`error parsing regexp: ...`, which the API server reports as "program instantiation
//! failed").
//!
//! Cost: `ceil(0.1 × (size(string) + 1)) × ceil(0.25 × size(pattern))`, statically and at run
//! time; the result of `findAll` is estimated at up to `size(string)` elements.

use std::sync::Arc;

use cel_ext::{CheckedExpr, Library, LibraryContents, ValidationIssue};
use cel_runtime::{Error, Implementation, Result, Value};
use cel_syntax::{ExprKind, Literal};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::string_arg;

/// Kubernetes' regex library.
#[derive(Clone, Copy, Debug, Default)]
pub struct Regex;

impl Library for Regex {
    fn name(&self) -> &str {
        "kubernetes.regex"
    }

    fn contents(&self) -> LibraryContents {
        LibraryContents {
            functions: vec![
                FunctionDecl::new(
                    "find",
                    vec![OverloadDecl::member(
                        "string_find_string",
                        vec![Type::String, Type::String],
                        Type::String,
                    )],
                ),
                FunctionDecl::new(
                    "findAll",
                    vec![
                        OverloadDecl::member(
                            "string_find_all_string",
                            vec![Type::String, Type::String],
                            Type::list(Type::String),
                        ),
                        OverloadDecl::member(
                            "string_find_all_string_int",
                            vec![Type::String, Type::String, Type::Int],
                            Type::list(Type::String),
                        ),
                    ],
                ),
            ],
            implementations: vec![
                ("string_find_string".into(), Implementation::Binary(find)),
                (
                    "string_find_all_string".into(),
                    Implementation::Binary(|s, re| find_all(&[s.clone(), re.clone()])),
                ),
                (
                    "string_find_all_string_int".into(),
                    Implementation::Nary(find_all),
                ),
            ],
            program_checks: vec![Arc::new(constant_patterns_compile)],
            ..LibraryContents::default()
        }
    }
}

/// The patterns of `find` and `findAll` written as literals must compile (checked when the
/// program is made).
fn constant_patterns_compile(checked: &CheckedExpr<'_>) -> Vec<ValidationIssue> {
    let mut issues = Vec::new();
    // Compiled to check them, within one allowance for the expression (a counted repetition
    // makes a short pattern megabytes).
    let mut patterns = cel_runtime::regex::PatternBudget::default();
    checked.expr.walk(&mut |e| {
        let ExprKind::Call(call) = &e.kind else {
            return;
        };
        if call.target.is_none() || !matches!(call.function.as_str(), "find" | "findAll") {
            return;
        }
        let Some(pattern) = call.args.first() else {
            return;
        };
        if let ExprKind::Literal(Literal::String(p)) = &pattern.kind
            && let Err(e) = patterns.compile(p)
        {
            issues.push(ValidationIssue {
                expr_id: pattern.id,
                message: e.message,
            });
        }
    });
    issues
}

fn compile(pattern: &str) -> Result<Arc<regex::Regex>> {
    cel_runtime::regex::compile_cached(pattern)
        .map_err(|e| Error::new(format!("Illegal regex: {}", e.message)))
}

/// `s.find(re)`.
pub fn find(s: &Value, re: &Value) -> Result<Value> {
    let (Some(s), Some(pattern)) = (string_arg(s), string_arg(re)) else {
        return Err(Error::no_such_overload());
    };
    let re = compile(pattern)?;
    Ok(Value::string(re.find(s).map_or("", |m| m.as_str())))
}

/// `s.findAll(re)` and `s.findAll(re, limit)`.
pub fn find_all(args: &[Value]) -> Result<Value> {
    let (s, pattern, limit) = match args {
        [s, re] => (string_arg(s), string_arg(re), -1),
        [s, re, Value::Int(n)] => (string_arg(s), string_arg(re), *n),
        _ => return Err(Error::no_such_overload()),
    };
    let (Some(s), Some(pattern)) = (s, pattern) else {
        return Err(Error::no_such_overload());
    };
    let re = compile(pattern)?;
    Ok(Value::list(
        go_find_all(&re, s, limit)
            .into_iter()
            .map(Value::string)
            .collect(),
    ))
}

/// Go's `Regexp.FindAllString(s, n)`: successive leftmost-first matches; an empty match
/// that starts where the previous match ended is skipped; at most `n` matches when `n >= 0`.
pub fn go_find_all<'s>(re: &regex::Regex, s: &'s str, n: i64) -> Vec<&'s str> {
    let mut out = Vec::new();
    let end = s.len();
    let mut pos = 0usize;
    let mut prev_end: Option<usize> = None;
    while (n < 0 || (out.len() as u64) < n as u64) && pos <= end {
        let Some(m) = re.find_at(s, pos) else {
            break;
        };
        let mut accept = true;
        if m.end() == pos {
            if Some(m.start()) == prev_end {
                accept = false;
            }
            pos += s[pos..].chars().next().map_or(1, char::len_utf8);
        } else {
            pos = m.end();
        }
        prev_end = Some(m.end());
        if accept {
            out.push(m.as_str());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_matches_follow_go() {
        let re = regex::Regex::new("[0-9]*").unwrap();
        assert_eq!(
            go_find_all(&re, "123 abc 456", -1),
            vec!["123", "", "", "", "", "456"]
        );
        let re = regex::Regex::new("a*").unwrap();
        assert_eq!(go_find_all(&re, "baaab", -1), vec!["", "aaa", ""]);
        assert_eq!(go_find_all(&re, "", -1), vec![""]);
        assert_eq!(go_find_all(&re, "é", -1), vec!["", ""]);
        assert!(go_find_all(&re, "xyz", 0).is_empty());
    }
}
