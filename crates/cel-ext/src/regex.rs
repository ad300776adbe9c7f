//! The regex extension (cel-go's `ext.Regex()`, library `cel.lib.ext.regex`), version 0. It
//! returns optionals, so the environment needs the optional-types library (on by default).
//!
//! | function | signature | example | since |
//! |---|---|---|---|
//! | `regex.replace` | `regex.replace(string, string, string[, int]) -> string` | `regex.replace('banana', 'a', 'x', 2)` → `'bxnxna'` | 0 |
//! | `regex.extract` | `regex.extract(string, string) -> optional(string)` | `regex.extract('item-A', 'item-(\\w+)')` → `optional.of('A')` | 0 |
//! | `regex.extractAll` | `regex.extractAll(string, string) -> list(string)` | `regex.extractAll('id:1, id:2', 'id:\\d+')` → `['id:1', 'id:2']` | 0 |
//!
//! Patterns have RE2 syntax and meaning (compiled by `cel_runtime::regex`, with Go's error
//! texts such as ``error parsing regexp: missing closing ): `(` ``). Matches are found as
//! Go's `FindAll` finds them: non-overlapping, left to right, and an empty match right after
//! a previous match is skipped.
//!
//! * `regex.replace`: a count of 0 returns the target unchanged, a negative count replaces
//!   every match. In the replacement, `\1`…`\9` insert a group (nothing if it did not take
//!   part) and `\\` a backslash; any other use of `\` is an error (`invalid replacement string:
//!   'x\' \ not allowed at end`, `... \ must be followed by a digit or \`, `replacement string
//!   references group 2 but regex has only 1 group(s)`), reported only when a match needs the
//!   replacement.
//! * `regex.extract`: the first match, or its only group; `optional.none()` when nothing
//!   matches or the group is empty.
//! * `regex.extractAll`: every match, or every non-empty value of the only group.
//! * More than one capturing group is an error for both: `regular expression has more than
//!   one capturing group: "(a)(b)"`.
//!
//! The result of `regex.replace` is bounded by [`MAX_RESULT_BYTES`].
//!
//! # Costs
//!
//! With P = (0.1·(|target|+1))·(0.25·(|pattern|+1)) as a real number, at run time:
//! `extract` = ceil(1 + P + 1) (an optional counts 1), `extractAll` = ceil(1 + P + |result| +
//! 10), `replace` = trunc(1 + P + |result|). Estimates multiply the rounded-up factors and add
//! the result size (`[0, |target|]`, or for `replace` between |target| and
//! |target|·|replacement|), plus 10 for `extractAll`'s list.

use cel_cost::{CallEstimate, CostRange, LIST_CREATE_BASE_COST, SizeRange};
use cel_runtime::{Error, Implementation, Result, Value};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::costs::{
    REGEX_FACTOR, STRING_FACTOR, actual_size, ceil_cost, estimate, nth_size, trunc_cost,
};
use crate::{Library, LibraryContents, MAX_RESULT_BYTES};

/// The regex extension library.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Regex;

impl Library for Regex {
    fn name(&self) -> &str {
        "cel.lib.ext.regex"
    }

    fn contents(&self) -> LibraryContents {
        let s = || Type::String;
        let mut c = LibraryContents {
            functions: vec![
                FunctionDecl::new(
                    "regex.extract",
                    vec![OverloadDecl::global(
                        "regex_extract_string_string",
                        vec![s(), s()],
                        Type::optional(s()),
                    )],
                ),
                FunctionDecl::new(
                    "regex.extractAll",
                    vec![OverloadDecl::global(
                        "regex_extractAll_string_string",
                        vec![s(), s()],
                        Type::list(s()),
                    )],
                ),
                FunctionDecl::new(
                    "regex.replace",
                    vec![
                        OverloadDecl::global(
                            "regex_replace_string_string_string",
                            vec![s(), s(), s()],
                            s(),
                        ),
                        OverloadDecl::global(
                            "regex_replace_string_string_string_int",
                            vec![s(), s(), s(), Type::Int],
                            s(),
                        ),
                    ],
                ),
            ],
            ..LibraryContents::default()
        };
        c.implement(
            "regex_extract_string_string",
            Implementation::Binary(extract_value),
        );
        c.implement(
            "regex_extractAll_string_string",
            Implementation::Binary(extract_all_value),
        );
        c.implement(
            "regex_replace_string_string_string",
            Implementation::Nary(replace_value),
        );
        c.implement(
            "regex_replace_string_string_string_int",
            Implementation::Nary(replace_value),
        );
        for id in [
            "regex_replace_string_string_string",
            "regex_replace_string_string_string_int",
        ] {
            let at_most = |a: &[Value]| match a {
                [Value::String(t), _, Value::String(r), rest @ ..] => {
                    let n = match rest {
                        [Value::Int(n)] => *n,
                        _ => -1,
                    };
                    Some(replace_size_at_most(t, r, n))
                }
                _ => None,
            };
            c.result_size(id, Some(at_most), |a| match a {
                [Value::String(t), Value::String(p), Value::String(r)] => {
                    replace_result_size(t, p, r, -1)
                }
                [
                    Value::String(t),
                    Value::String(p),
                    Value::String(r),
                    Value::Int(n),
                ] => replace_result_size(t, p, r, *n),
                _ => None,
            });
        }

        let sizes = |a: &[Value]| {
            (
                a.first().map(actual_size).unwrap_or(1),
                a.get(1).map(actual_size).unwrap_or(1),
            )
        };
        c.track("regex_extract_string_string", move |a, r| {
            let (t, p) = sizes(a);
            Some(extract_cost(t, p, actual_size(r)))
        });
        c.track("regex_extractAll_string_string", move |a, r| {
            let (t, p) = sizes(a);
            Some(extract_all_cost(t, p, actual_size(r)))
        });
        for id in [
            "regex_replace_string_string_string",
            "regex_replace_string_string_string_int",
        ] {
            c.track(id, move |a, r| {
                let (t, p) = sizes(a);
                Some(replace_cost(t, p, actual_size(r)))
            });
            c.estimate(id, |a| {
                (a.len() == 3 || a.len() == 4)
                    .then(|| replace_estimate(nth_size(a, 0), nth_size(a, 1), nth_size(a, 2)))
            });
        }
        c.estimate("regex_extract_string_string", |a| {
            (a.len() == 2).then(|| extract_estimate(nth_size(a, 0), nth_size(a, 1), false))
        });
        c.estimate("regex_extractAll_string_string", |a| {
            (a.len() == 2).then(|| extract_estimate(nth_size(a, 0), nth_size(a, 1), true))
        });
        c
    }
}

// ---------------------------------------------------------------------------------------
// Costs.

/// P = (0.1·(t+1))·(0.25·(p+1)), unrounded.
fn search_cost(target: u64, pattern: u64) -> f64 {
    (target.saturating_add(1) as f64 * STRING_FACTOR)
        * (pattern.saturating_add(1) as f64 * REGEX_FACTOR)
}

/// `regex.extract` at run time: `ceil(1 + P + r)` (r is 1 for the optional result).
pub fn extract_cost(target: u64, pattern: u64, result: u64) -> u64 {
    ceil_cost(1.0 + search_cost(target, pattern) + result as f64)
}

/// `regex.extractAll` at run time: `ceil(1 + P + r + 10)`.
pub fn extract_all_cost(target: u64, pattern: u64, result: u64) -> u64 {
    ceil_cost(1.0 + search_cost(target, pattern) + result as f64 + LIST_CREATE_BASE_COST as f64)
}

/// `regex.replace` at run time: `trunc(1 + P + r)`.
pub fn replace_cost(target: u64, pattern: u64, result: u64) -> u64 {
    trunc_cost(1.0 + search_cost(target, pattern) + result as f64)
}

fn search_estimate(target: SizeRange, pattern: SizeRange) -> CostRange {
    let t = target
        .add(SizeRange::exact(1))
        .multiply_by_factor(STRING_FACTOR);
    let p = pattern
        .add(SizeRange::exact(1))
        .multiply_by_factor(REGEX_FACTOR);
    t.multiply(p)
}

/// `regex.extract` (or, with `all`, `regex.extractAll`) estimate.
pub fn extract_estimate(target: SizeRange, pattern: SizeRange, all: bool) -> CallEstimate {
    let result = SizeRange {
        min: 0,
        max: target.max,
    };
    let mut cost = search_estimate(target, pattern).add(result.as_cost());
    if all {
        cost = cost.add(CostRange::exact(LIST_CREATE_BASE_COST));
    }
    estimate(cost, Some(result))
}

/// `regex.replace` estimate.
pub fn replace_estimate(
    target: SizeRange,
    pattern: SizeRange,
    replacement: SizeRange,
) -> CallEstimate {
    let all = target.max.saturating_mul(replacement.max);
    let none = target.max;
    let result = if replacement.max == 0 {
        SizeRange {
            min: all,
            max: none,
        }
    } else {
        SizeRange {
            min: none,
            max: all,
        }
    };
    estimate(
        search_estimate(target, pattern).add(result.as_cost()),
        Some(result),
    )
}

// ---------------------------------------------------------------------------------------
// Functions.

/// The spans of the matches Go's `FindAll*` reports: non-overlapping, and no empty match
/// right where the previous match ended.
fn go_matches<'t>(
    re: &::regex::Regex,
    target: &'t str,
) -> impl Iterator<Item = ::regex::Captures<'t>> {
    let mut prev_end: Option<usize> = None;
    re.captures_iter(target).filter(move |caps| {
        let Some(m) = caps.get(0) else {
            return false;
        };
        let skip = m.start() == m.end() && prev_end == Some(m.start());
        prev_end = Some(m.end());
        !skip
    })
}

fn group_count(re: &::regex::Regex) -> usize {
    re.captures_len().saturating_sub(1)
}

fn too_many_groups(pattern: &str) -> Error {
    Error::new(format!(
        "regular expression has more than one capturing group: {}",
        cel_runtime::format::go_quote(pattern)
    ))
}

/// `regex.extract(target, pattern)`.
pub fn extract(target: &str, pattern: &str) -> Result<Option<String>> {
    let re = cel_runtime::regex::compile_cached(pattern)?;
    let groups = group_count(&re);
    if groups > 1 {
        return Err(too_many_groups(pattern));
    }
    let Some(caps) = re.captures(target) else {
        return Ok(None);
    };
    if groups == 1 {
        let text = caps.get(1).map_or("", |m| m.as_str());
        return Ok((!text.is_empty()).then(|| text.to_string()));
    }
    Ok(caps.get(0).map(|m| m.as_str().to_string()))
}

/// `regex.extractAll(target, pattern)`.
pub fn extract_all(target: &str, pattern: &str) -> Result<Vec<Value>> {
    let re = cel_runtime::regex::compile_cached(pattern)?;
    let groups = group_count(&re);
    if groups > 1 {
        return Err(too_many_groups(pattern));
    }
    let mut out = Vec::new();
    for caps in go_matches(&re, target) {
        let text = if groups == 1 {
            match caps.get(1).map(|m| m.as_str()) {
                Some(t) if !t.is_empty() => t,
                _ => continue,
            }
        } else {
            caps.get(0).map_or("", |m| m.as_str())
        };
        out.push(Value::from(text));
    }
    Ok(out)
}

/// Where `regex.replace` writes its result: the text, or only its size (to charge the call
/// before building it).
trait ReplaceSink {
    fn push_char(&mut self, c: char);
    fn push_str(&mut self, s: &str);
    /// The bytes written so far.
    fn bytes(&self) -> usize;
}

impl ReplaceSink for String {
    fn push_char(&mut self, c: char) {
        self.push(c);
    }

    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }

    fn bytes(&self) -> usize {
        self.len()
    }
}

/// The size of a result, in bytes and code points.
#[derive(Default)]
struct ResultSize {
    bytes: usize,
    points: u64,
}

impl ReplaceSink for ResultSize {
    fn push_char(&mut self, c: char) {
        self.bytes += c.len_utf8();
        self.points += 1;
    }

    fn push_str(&mut self, s: &str) {
        self.bytes += s.len();
        self.points += cel_runtime::strings::size_string(s) as u64;
    }

    fn bytes(&self) -> usize {
        self.bytes
    }
}

/// Expands a replacement for one match, validating it as cel-go does.
fn expand_replacement(
    caps: &::regex::Captures<'_>,
    replacement: &str,
    groups: usize,
    out: &mut impl ReplaceSink,
) -> Result<()> {
    let mut chars = replacement.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push_char(c);
            continue;
        }
        let Some(next) = chars.next() else {
            return Err(Error::new(format!(
                "invalid replacement string: '{replacement}' \\ not allowed at end"
            )));
        };
        if next == '\\' {
            out.push_char('\\');
            continue;
        }
        let Some(group) = next.to_digit(10).filter(|_| next.is_ascii_digit()) else {
            return Err(Error::new(format!(
                "invalid replacement string: '{replacement}' \\ must be followed by a digit or \\"
            )));
        };
        let group = group as usize;
        if group > groups {
            return Err(Error::new(format!(
                "replacement string references group {group} but regex has only {groups} group(s)"
            )));
        }
        if let Some(m) = caps.get(group) {
            out.push_str(m.as_str());
        }
    }
    Ok(())
}

/// `regex.replace(target, pattern, replacement, count)`.
pub fn replace(target: &str, pattern: &str, replacement: &str, count: i64) -> Result<String> {
    if count == 0 {
        return Ok(target.to_string());
    }
    let mut out = String::with_capacity(target.len());
    replace_into(target, pattern, replacement, count, &mut out)?;
    Ok(out)
}

/// An upper bound on the size of `regex.replace(target, _, replacement, count)`, from byte
/// lengths alone: at most `|target| + 1` matches, each replaced by the replacement with every
/// group reference (two bytes of it, at least) standing for at most the whole target.
pub fn replace_size_at_most(target: &str, replacement: &str, count: i64) -> u64 {
    let (t, r) = (target.len() as u64, replacement.len() as u64);
    let mut matches = t + 1;
    if let Ok(n) = u64::try_from(count) {
        matches = matches.min(n);
    }
    let expansion = r.saturating_add((r / 2).saturating_mul(t));
    t.saturating_add(matches.saturating_mul(expansion))
}

/// The size in code points of `regex.replace(target, pattern, replacement, count)`, found by
/// matching without building the result; `None` when the call fails instead. Lets a cost
/// limit stop the call before it allocates.
pub fn replace_result_size(
    target: &str,
    pattern: &str,
    replacement: &str,
    count: i64,
) -> Option<u64> {
    if count == 0 {
        return u64::try_from(cel_runtime::strings::size_string(target)).ok();
    }
    let mut size = ResultSize::default();
    replace_into(target, pattern, replacement, count, &mut size).ok()?;
    Some(size.points)
}

/// The replacement loop shared by [`replace`] and [`replace_result_size`]; fails rather than
/// write more than [`MAX_RESULT_BYTES`].
fn replace_into(
    target: &str,
    pattern: &str,
    replacement: &str,
    count: i64,
    out: &mut impl ReplaceSink,
) -> Result<()> {
    let re = cel_runtime::regex::compile_cached(pattern)?;
    let groups = group_count(&re);
    let limit = usize::try_from(count).unwrap_or(usize::MAX);
    let mut last = 0;
    for caps in go_matches(&re, target).take(limit) {
        let Some(m) = caps.get(0) else {
            continue;
        };
        out.push_str(&target[last..m.start()]);
        expand_replacement(&caps, replacement, groups, out)?;
        last = m.end();
        if out.bytes() > MAX_RESULT_BYTES {
            return Err(Error::new(format!(
                "regex.replace: result size exceeds maximum allowed ({MAX_RESULT_BYTES} bytes)"
            )));
        }
    }
    out.push_str(&target[last..]);
    if out.bytes() > MAX_RESULT_BYTES {
        return Err(Error::new(format!(
            "regex.replace: result size exceeds maximum allowed ({MAX_RESULT_BYTES} bytes)"
        )));
    }
    Ok(())
}

fn str_arg(v: &Value) -> Result<&str> {
    match v {
        Value::String(s) => Ok(s),
        _ => Err(Error::no_such_overload()),
    }
}

fn extract_value(t: &Value, p: &Value) -> Result<Value> {
    Ok(match extract(str_arg(t)?, str_arg(p)?)? {
        Some(s) => Value::optional_of(Value::from(s)),
        None => Value::optional_none(),
    })
}

fn extract_all_value(t: &Value, p: &Value) -> Result<Value> {
    Ok(Value::list(extract_all(str_arg(t)?, str_arg(p)?)?))
}

fn replace_value(args: &[Value]) -> Result<Value> {
    let (t, p, r, n) = match args {
        [t, p, r] => (t, p, r, -1),
        [t, p, r, Value::Int(n)] => (t, p, r, *n),
        _ => return Err(Error::no_such_overload()),
    };
    replace(str_arg(t)?, str_arg(p)?, str_arg(r)?, n).map(Value::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_sizes_are_the_results_sizes() {
        let size = |s: &str| cel_runtime::strings::size_string(s) as u64;
        let cases = [
            ("hello world hello", "hello", "hi"),
            ("héllo wörld", "", "🎉"),
            ("aaaa", "a*", "<\\0>"),
            ("key=value; k2=v2", "(\\w+)=(\\w+)", "\\2=\\1"),
            ("ünïcödé", "[ïö]", "\\\\"),
            ("", "x", "y"),
        ];
        for (t, p, r) in cases {
            for n in [-1, 0, 1, 2] {
                let built = replace(t, p, r, n).unwrap();
                assert_eq!(
                    replace_result_size(t, p, r, n),
                    Some(size(&built)),
                    "regex.replace({t:?}, {p:?}, {r:?}, {n})"
                );
                assert!(replace_size_at_most(t, r, n) >= size(&built));
            }
        }
        // Calls that fail have no size.
        assert_eq!(replace_result_size("a", "(", "b", -1), None);
        assert_eq!(replace_result_size("a", "a", "\\2", -1), None);
    }

    #[test]
    fn replace_cases() {
        assert_eq!(
            replace("hello world hello", "hello", "hi", -1).unwrap(),
            "hi world hi"
        );
        assert_eq!(replace("banana", "a", "x", 0).unwrap(), "banana");
        assert_eq!(replace("banana", "a", "x", 1).unwrap(), "bxnana");
        assert_eq!(replace("banana", "a", "x", 2).unwrap(), "bxnxna");
        assert_eq!(replace("banana", "a", "x", -12).unwrap(), "bxnxnx");
        assert_eq!(
            replace("foo bar", "(fo)o (ba)r", r"\2 \1", -1).unwrap(),
            "ba fo"
        );
        assert_eq!(replace("baaab", "a*", "-", -1).unwrap(), "-b-b-");
        assert_eq!(replace("abc", "", "-", -1).unwrap(), "-a-b-c-");
        assert_eq!(
            replace("test", "(.)", r"\2", -1).unwrap_err().message,
            "replacement string references group 2 but regex has only 1 group(s)"
        );
        assert_eq!(
            replace("test", "t", r"x\", -1).unwrap_err().message,
            r"invalid replacement string: 'x\' \ not allowed at end"
        );
        assert_eq!(
            replace("id=123", r"id=(?P<value>\d+)", r"value: \values", -1)
                .unwrap_err()
                .message,
            r"invalid replacement string: 'value: \values' \ must be followed by a digit or \"
        );
        assert!(
            replace("foo bar", "(", "$2 $1", -1)
                .unwrap_err()
                .message
                .starts_with("error parsing regexp: missing closing ):")
        );
        assert_eq!(replace("none", "x", r"\9", -1).unwrap(), "none");
    }

    #[test]
    fn extract_cases() {
        assert_eq!(
            extract("hello world", "hello(.*)").unwrap().as_deref(),
            Some(" world")
        );
        assert_eq!(
            extract("item-A, item-B", r"item-(\w+)").unwrap().as_deref(),
            Some("A")
        );
        assert_eq!(extract("HELLO", "hello").unwrap(), None);
        assert_eq!(extract("abc", "x?").unwrap().as_deref(), Some(""));
        assert_eq!(extract("abc", "(x)?").unwrap(), None);
        assert_eq!(
            extract("testuser@testdomain", "(.*)@([^.]*)")
                .unwrap_err()
                .message,
            "regular expression has more than one capturing group: \"(.*)@([^.]*)\""
        );
        let all = extract_all("id:123, id:456", r"id:\d+").unwrap();
        assert_eq!(all.len(), 2);
        assert!(extract_all("id:123, id:456", "assa").unwrap().is_empty());
        assert_eq!(extract_all("a1b2", r"(\d)?").unwrap().len(), 2);
    }

    /// cost-model.md §5.3.
    #[test]
    fn costs_match_cel_go() {
        // regex.extract('hello world', 'hello (.*)') == optional.of('world'): 6 + 1 + 1.
        assert_eq!(extract_cost(11, 10, 1), 6);
        // regex.replace('aaaaaa', 'a', '-what-') == '-what-' x 6: 37 + 4.
        assert_eq!(replace_cost(6, 1, 36) + 4, 41);
        let e = replace_estimate(
            SizeRange::exact(6),
            SizeRange::exact(1),
            SizeRange::exact(6),
        );
        assert_eq!((e.cost.min + 1, e.cost.max + 4), (8, 41));
        assert_eq!(extract_all_cost(0, 0, 0), 12);
    }
}
