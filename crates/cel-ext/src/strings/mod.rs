//! The strings extension (cel-go's `ext.Strings()`, library `cel.lib.ext.strings`).
//!
//! All indices count Unicode code points. [`Strings::version`] chooses the version; the
//! default is the newest, 5. Kubernetes uses version 2.
//!
//! | function | signature | example | since |
//! |---|---|---|---|
//! | `charAt` | `string.charAt(int) -> string` | `'hello'.charAt(4)` → `'o'`; `charAt(5)` → `''` | 0 |
//! | `indexOf` | `string.indexOf(string[, int]) -> int` | `'hello mellow'.indexOf('ello', 2)` → 7 | 0 |
//! | `lastIndexOf` | `string.lastIndexOf(string[, int]) -> int` | `'hello mellow'.lastIndexOf('ello', 6)` → 1 | 0 |
//! | `lowerAscii` | `string.lowerAscii() -> string` | `'TacoCÆt'.lowerAscii()` → `'tacocÆt'` | 0 |
//! | `upperAscii` | `string.upperAscii() -> string` | `'tacoCαt'.upperAscii()` → `'TACOCαT'` | 0 |
//! | `replace` | `string.replace(string, string[, int]) -> string` | `'hello hello'.replace('he', 'we', 1)` → `'wello hello'` | 0 |
//! | `split` | `string.split(string[, int]) -> list(string)` | `'a b c'.split(' ', 2)` → `['a', 'b c']` | 0 |
//! | `substring` | `string.substring(int[, int]) -> string` | `'tacocat'.substring(0, 4)` → `'taco'` | 0 |
//! | `trim` | `string.trim() -> string` | `' \ttrim\n'.trim()` → `'trim'` | 0 |
//! | `format` | `string.format(list) -> string` | `'%d %s'.format([1, 'a'])` → `'1 a'` | 1 |
//! | `strings.quote` | `strings.quote(string) -> string` | `strings.quote('a\n')` → `'"a\\n"'` | 1 |
//! | `join` | `list(string).join([string]) -> string` | `['a', 'b'].join('-')` → `'a-b'` | 0 (2) |
//! | `reverse` | `string.reverse() -> string` | `'abc'.reverse()` → `'cba'` | 3 |
//!
//! Versions 1 to 3 have cel-go's legacy `format` ([`legacy`], what Kubernetes runs with
//! version 2); version 4 made `format` follow the cel-spec `strings.md` formatter
//! ([`mod@format`]). Version 5 adds cost hooks and caps the `format` precision at 100. Literal
//! `format` calls are checked when the expression is (see [`format_validator`]).
//!
//! `join` exists at every version: below version 2 it is cel-go's older implementation, which
//! converts the list to Go strings and so fails on other elements with Go's conversion
//! errors (`unsupported type conversion from 'int' to string`).
//!
//! Errors, in cel-go's words: `index out of range: 6` (`charAt`, negative offsets of
//! `indexOf`/`lastIndexOf`, `substring`), `invalid substring range. start: 3, end: 1`,
//! `join: invalid input: 1`.
//!
//! Offsets beyond the end of the string make `indexOf` and `lastIndexOf` return -1 (or the
//! string's length for an empty search string), as cel-go v0.29.2 does.
//!
//! # Costs
//!
//! Up to version 4 every function costs 1, except `format` and `strings.quote`, which the core
//! charges `ceil(0.1·size)` of their first argument. From version 5 (cel-go's trackers and
//! estimators; s = receiver size, r = result size):
//!
//! | function | run time | estimate |
//! |---|---|---|
//! | `charAt` | `1 + ceil(0.1·s) + 1` | same over the size range; result size `[0, 1]` |
//! | `indexOf`, `lastIndexOf` | `ceil(0.1·s·sub) + 1` | same |
//! | `lowerAscii`, `upperAscii`, `reverse` | `1 + ceil(0.1·s) + r` | `ceil(0.1·s) + 1 + s`, result `s` |
//! | `trim` | `1 + ceil(0.1·s) + r` | `ceil(0.1·s) + 1 + [0, s.max]` |
//! | `substring` | `1 + ceil(0.1·s) + r` | `ceil(0.1·s) + 1 + (end − start)` |
//! | `replace` | `1 + ceil(0.1·max(s,1)·max(old,1)) + r` | see [`replace_estimate`] |
//! | `split` | `1 + ceil(0.1·(s+1)) + r + 10` | `ceil(0.1·(s+1)) + [0, s.max] + 10 + 1` |
//! | `join` | `1 + ceil(0.1·(n+1)) + r` | `ceil(0.1·(n+1)) + [0, n·(1+sep)+sep] + 1` |

mod aggregate;
pub mod format;
pub mod legacy;
mod validate;

pub use validate::format_validator;

use std::sync::Arc;

use cel_cost::{
    CallEstimate, CostRange, EstimateArg, LIST_CREATE_BASE_COST, SizeRange, ceil_factor,
};
use cel_runtime::{Error, Implementation, Result, Value};
use cel_types::{FunctionDecl, OlderCelGo, OverloadDecl, Type};

use crate::costs::{
    STRING_FACTOR, actual_size, arg_size, at_least_one, call_estimate, estimate, nth_size, sum,
};
use crate::{Library, LibraryContents, MAX_RESULT_BYTES};

/// The newest version of the strings library.
pub const LATEST_VERSION: u32 = 5;

/// The strings extension library at a version (0 to 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strings {
    version: u32,
    max_precision: Option<usize>,
    exponent: legacy::ExponentStyle,
    older: OlderCelGo,
}

impl Default for Strings {
    fn default() -> Self {
        Strings::version(LATEST_VERSION)
    }
}

impl Strings {
    /// The library at a version; versions above the newest behave as the newest.
    pub fn version(version: u32) -> Strings {
        Strings {
            version,
            max_precision: None,
            exponent: legacy::ExponentStyle::default(),
            older: OlderCelGo::NONE,
        }
    }

    /// How the legacy `format` (versions 1 to 3) writes `%e`'s exponent: it depends on the
    /// `golang.org/x/text` the program is built with (see [`legacy::ExponentStyle`]).
    pub fn legacy_exponent(mut self, style: legacy::ExponentStyle) -> Strings {
        self.exponent = style;
        self
    }

    /// The library as an older cel-go implemented it: `indexOf` and `lastIndexOf` at the
    /// edges (see [`OlderCelGo`]).
    pub fn older(mut self, older: OlderCelGo) -> Strings {
        self.older = older;
        self
    }

    /// Sets the largest precision `format` accepts (cel-go's `StringsMaxPrecision`).
    pub fn max_precision(mut self, limit: usize) -> Strings {
        self.max_precision = Some(limit);
        self
    }

    /// The library's version.
    pub fn get_version(&self) -> u32 {
        self.version
    }

    /// The precision cap of `format`: the configured one, else cel-go's 100 from version 5,
    /// else this crate's safety cap [`format::SAFETY_MAX_PRECISION`].
    pub fn effective_max_precision(&self) -> usize {
        match self.max_precision {
            Some(p) => p.min(format::SAFETY_MAX_PRECISION),
            None if self.version >= 5 => format::DEFAULT_MAX_PRECISION,
            None => format::SAFETY_MAX_PRECISION,
        }
    }
}

fn s() -> Type {
    Type::String
}

impl Library for Strings {
    fn name(&self) -> &str {
        "cel.lib.ext.strings"
    }

    fn contents(&self) -> LibraryContents {
        let v = self.version;
        let mut c = LibraryContents::default();
        let member = OverloadDecl::member;
        c.functions = vec![
            FunctionDecl::new(
                "charAt",
                vec![member("string_char_at_int", vec![s(), Type::Int], s())],
            ),
            FunctionDecl::new(
                "indexOf",
                vec![
                    member("string_index_of_string", vec![s(), s()], Type::Int),
                    member(
                        "string_index_of_string_int",
                        vec![s(), s(), Type::Int],
                        Type::Int,
                    ),
                ],
            ),
            FunctionDecl::new(
                "lastIndexOf",
                vec![
                    member("string_last_index_of_string", vec![s(), s()], Type::Int),
                    member(
                        "string_last_index_of_string_int",
                        vec![s(), s(), Type::Int],
                        Type::Int,
                    ),
                ],
            ),
            FunctionDecl::new(
                "lowerAscii",
                vec![member("string_lower_ascii", vec![s()], s())],
            ),
            FunctionDecl::new(
                "replace",
                vec![
                    member("string_replace_string_string", vec![s(), s(), s()], s()),
                    member(
                        "string_replace_string_string_int",
                        vec![s(), s(), s(), Type::Int],
                        s(),
                    ),
                ],
            ),
            FunctionDecl::new(
                "split",
                vec![
                    member("string_split_string", vec![s(), s()], Type::list(s())),
                    member(
                        "string_split_string_int",
                        vec![s(), s(), Type::Int],
                        Type::list(s()),
                    ),
                ],
            ),
            FunctionDecl::new(
                "substring",
                vec![
                    member("string_substring_int", vec![s(), Type::Int], s()),
                    member(
                        "string_substring_int_int",
                        vec![s(), Type::Int, Type::Int],
                        s(),
                    ),
                ],
            ),
            FunctionDecl::new("trim", vec![member("string_trim", vec![s()], s())]),
            FunctionDecl::new(
                "upperAscii",
                vec![member("string_upper_ascii", vec![s()], s())],
            ),
        ];
        c.implement("string_char_at_int", Implementation::Binary(char_at_value));
        c.implement(
            "string_index_of_string",
            Implementation::Binary(index_of_value),
        );
        c.implement(
            "string_index_of_string_int",
            Implementation::Nary(index_of_offset_value),
        );
        c.implement(
            "string_last_index_of_string",
            Implementation::Binary(last_index_of_value),
        );
        c.implement(
            "string_last_index_of_string_int",
            Implementation::Nary(last_index_of_offset_value),
        );
        if older_index_of(self.older) {
            implement_older_index_of(&mut c, self.older);
        }
        c.implement(
            "string_lower_ascii",
            Implementation::Unary(lower_ascii_value),
        );
        c.implement(
            "string_upper_ascii",
            Implementation::Unary(upper_ascii_value),
        );
        c.implement(
            "string_replace_string_string",
            Implementation::Nary(replace_value),
        );
        c.implement(
            "string_replace_string_string_int",
            Implementation::Nary(replace_value),
        );
        for id in [
            "string_replace_string_string",
            "string_replace_string_string_int",
        ] {
            let at_most = |a: &[Value]| match a {
                [
                    Value::String(s),
                    Value::String(old),
                    Value::String(new),
                    rest @ ..,
                ] => {
                    let n = match rest {
                        [Value::Int(n)] => *n,
                        _ => -1,
                    };
                    Some(replace_size_at_most(s, old, new, n))
                }
                _ => None,
            };
            c.result_size(id, Some(at_most), |a| match a {
                [Value::String(s), Value::String(old), Value::String(new)] => {
                    replace_result_size(s, old, new, -1)
                }
                [
                    Value::String(s),
                    Value::String(old),
                    Value::String(new),
                    Value::Int(n),
                ] => replace_result_size(s, old, new, *n),
                _ => None,
            });
        }
        c.implement("string_split_string", Implementation::Binary(split_value));
        c.implement(
            "string_split_string_int",
            Implementation::Nary(split_n_value),
        );
        c.implement(
            "string_substring_int",
            Implementation::Binary(substring_value),
        );
        c.implement(
            "string_substring_int_int",
            Implementation::Nary(substring_range_value),
        );
        c.implement("string_trim", Implementation::Unary(trim_value));

        if v >= 1 {
            let max_precision = self.effective_max_precision();
            c.functions.push(FunctionDecl::new(
                "format",
                vec![member(
                    "string_format",
                    vec![s(), Type::list(Type::Dyn)],
                    s(),
                )],
            ));
            let legacy = v < 4;
            let exponent = self.exponent;
            c.implement(
                "string_format",
                Implementation::Host(Arc::new(move |args: &[Value]| match args {
                    [Value::String(f), Value::List(l)] if legacy => {
                        legacy::format(f, l, max_precision, exponent)
                            .map(Value::from)
                            .map_err(Error::new)
                    }
                    [Value::String(f), Value::List(l)] => {
                        format::format(f, l, max_precision).map(Value::from)
                    }
                    _ => Err(Error::no_such_overload()),
                })),
            );
            c.validators.push(format_validator(legacy, max_precision));
            c.functions.push(FunctionDecl::new(
                "strings.quote",
                vec![OverloadDecl::global("strings_quote", vec![s()], s())],
            ));
            c.implement("strings_quote", Implementation::Unary(quote_value));
        }
        c.functions.push(FunctionDecl::new(
            "join",
            vec![
                member("list_join", vec![Type::list(s())], s()),
                member("list_join_string", vec![Type::list(s()), s()], s()),
            ],
        ));
        if v < 2 {
            c.implement("list_join", Implementation::Unary(legacy_join_value));
            c.implement(
                "list_join_string",
                Implementation::Binary(legacy_join_sep_value),
            );
        } else {
            c.implement("list_join", Implementation::Unary(join_value));
            c.implement("list_join_string", Implementation::Binary(join_sep_value));
        }
        {
            c.result_size(
                "list_join",
                Some(|a: &[Value]| match a {
                    [Value::List(l)] => Some(join_size_at_most(l, "")),
                    _ => None,
                }),
                |a| match a {
                    [Value::List(l)] => join_result_size(l, ""),
                    _ => None,
                },
            );
            c.result_size(
                "list_join_string",
                Some(|a: &[Value]| match a {
                    [Value::List(l), Value::String(sep)] => Some(join_size_at_most(l, sep)),
                    _ => None,
                }),
                |a| match a {
                    [Value::List(l), Value::String(sep)] => join_result_size(l, sep),
                    _ => None,
                },
            );
        }
        if v >= 3 {
            c.functions.push(FunctionDecl::new(
                "reverse",
                vec![member("string_reverse", vec![s()], s())],
            ));
            c.implement("string_reverse", Implementation::Unary(reverse_value));
        }
        if v >= 5 {
            add_costs(&mut c);
        }
        c
    }
}

fn add_costs(c: &mut LibraryContents) {
    c.track("string_char_at_int", |a, _| Some(char_at_cost(size(a, 0))));
    for id in [
        "string_index_of_string",
        "string_index_of_string_int",
        "string_last_index_of_string",
        "string_last_index_of_string_int",
    ] {
        c.track(id, |a, _| Some(search_cost(size(a, 0), size(a, 1))));
        c.estimate(id, |a| {
            Some(search_estimate(nth_size(a, 0), nth_size(a, 1)))
        });
    }
    for id in [
        "string_lower_ascii",
        "string_upper_ascii",
        "string_substring_int",
        "string_substring_int_int",
        "string_trim",
        "string_reverse",
    ] {
        c.track(id, |a, r| Some(transform_cost(size(a, 0), actual_size(r))));
    }
    for id in [
        "string_replace_string_string",
        "string_replace_string_string_int",
    ] {
        c.track(id, |a, r| {
            Some(replace_cost(size(a, 0), size(a, 1), actual_size(r)))
        });
        c.estimate(id, |a| {
            (a.len() >= 3).then(|| replace_estimate(nth_size(a, 0), nth_size(a, 1), nth_size(a, 2)))
        });
    }
    for id in ["string_split_string", "string_split_string_int"] {
        c.track(id, |a, r| Some(split_cost(size(a, 0), actual_size(r))));
        c.estimate(id, |a| {
            (a.len() >= 2).then(|| split_estimate(nth_size(a, 0)))
        });
    }
    for id in ["list_join", "list_join_string"] {
        c.track(id, |a, r| Some(join_cost(size(a, 0), actual_size(r))));
        c.estimate(id, |a| {
            let sep = a.get(1).map(arg_size).unwrap_or(SizeRange::exact(0));
            (!a.is_empty()).then(|| join_estimate(nth_size(a, 0), sep))
        });
    }
    c.estimate("string_char_at_int", |a| {
        (a.len() == 2).then(|| char_at_estimate(nth_size(a, 0)))
    });
    for id in ["string_lower_ascii", "string_upper_ascii", "string_reverse"] {
        c.estimate(id, |a| {
            (!a.is_empty()).then(|| fixed_transform_estimate(nth_size(a, 0)))
        });
    }
    c.estimate("string_trim", |a| {
        (!a.is_empty()).then(|| variable_transform_estimate(nth_size(a, 0)))
    });
    // The start and end of `substring` are known to cel-go's estimator when they are int
    // literals; otherwise the start is 0 and the end the receiver's maximum size.
    for id in ["string_substring_int", "string_substring_int_int"] {
        c.estimate(id, |a| {
            (a.len() == 2 || a.len() == 3).then(|| {
                let start = a[1].uint_literal();
                let end = a.get(2).and_then(EstimateArg::uint_literal);
                substring_estimate(nth_size(a, 0), start, end)
            })
        });
    }
}

fn size(args: &[Value], i: usize) -> u64 {
    args.get(i).map(actual_size).unwrap_or(1)
}

// ---------------------------------------------------------------------------------------
// Cost formulas (version 5).

/// `charAt` at run time: `1 + ceil(0.1·s) + 1`.
pub fn char_at_cost(s: u64) -> u64 {
    sum(&[1, ceil_factor(s, STRING_FACTOR), 1])
}

/// `charAt` estimate: the traversal plus 2, the result 0 or 1 code points.
pub fn char_at_estimate(s: SizeRange) -> CallEstimate {
    let cost = s
        .multiply_by_factor(STRING_FACTOR)
        .add(call_estimate())
        .add(call_estimate());
    estimate(cost, Some(SizeRange { min: 0, max: 1 }))
}

/// `indexOf` / `lastIndexOf` at run time: `ceil(0.1·s·sub) + 1`.
pub fn search_cost(s: u64, sub: u64) -> u64 {
    sum(&[ceil_factor(s.saturating_mul(sub), STRING_FACTOR), 1])
}

/// `indexOf` / `lastIndexOf` estimate.
pub fn search_estimate(s: SizeRange, sub: SizeRange) -> CallEstimate {
    let cost = s
        .multiply(sub)
        .multiply_by_factor(STRING_FACTOR)
        .add(call_estimate());
    estimate(cost, None)
}

/// `lowerAscii`, `upperAscii`, `reverse`, `trim`, `substring` at run time:
/// `1 + ceil(0.1·s) + r`.
pub fn transform_cost(s: u64, result: u64) -> u64 {
    sum(&[1, ceil_factor(s, STRING_FACTOR), result])
}

/// `lowerAscii`, `upperAscii`, `reverse` estimate: the result has the receiver's size.
pub fn fixed_transform_estimate(s: SizeRange) -> CallEstimate {
    let cost = s
        .multiply_by_factor(STRING_FACTOR)
        .add(call_estimate())
        .add(s.as_cost());
    estimate(cost, Some(s))
}

/// `trim` estimate: the result is anything up to the receiver's size.
pub fn variable_transform_estimate(s: SizeRange) -> CallEstimate {
    let result = SizeRange { min: 0, max: s.max };
    let cost = s
        .multiply_by_factor(STRING_FACTOR)
        .add(call_estimate())
        .add(result.as_cost());
    estimate(cost, Some(result))
}

/// `substring` estimate, given the literal start and end when known (cel-go reads literal
/// ints; a missing start is 0 and a missing end is the receiver's maximum size).
pub fn substring_estimate(s: SizeRange, start: Option<u64>, end: Option<u64>) -> CallEstimate {
    let start = start.unwrap_or(0);
    let end = end.unwrap_or(s.max);
    // Go's unsigned subtraction wraps; so does this (an estimate, never an allocation).
    let result = SizeRange::exact(end.wrapping_sub(start));
    let cost = s
        .multiply_by_factor(STRING_FACTOR)
        .add(call_estimate())
        .add(result.as_cost());
    estimate(cost, Some(result))
}

/// `replace` at run time: `1 + ceil(0.1·max(s,1)·max(old,1)) + r`.
pub fn replace_cost(s: u64, old: u64, result: u64) -> u64 {
    let search = ceil_factor(s.max(1).saturating_mul(old.max(1)), STRING_FACTOR);
    sum(&[1, search, result])
}

/// `replace` estimate: the search `ceil(0.1·max(s,1)·max(old,1))`, plus a result of
/// between `min(s.min, new.min + 1)` and `(s.max + 1)·(new.max + 1)` code points, plus 1.
pub fn replace_estimate(s: SizeRange, old: SizeRange, new: SizeRange) -> CallEstimate {
    let search = at_least_one(s)
        .multiply(at_least_one(old))
        .multiply_by_factor(STRING_FACTOR);
    let replacement = new.add(SizeRange::exact(1));
    let all_replaced = s.max.saturating_add(1).saturating_mul(replacement.max);
    let min = s.min.min(replacement.min);
    let result = SizeRange {
        min,
        max: all_replaced,
    };
    estimate(
        search.add(result.as_cost()).add(call_estimate()),
        Some(result),
    )
}

/// `split` at run time: `1 + ceil(0.1·(s+1)) + r + 10`.
pub fn split_cost(s: u64, result: u64) -> u64 {
    sum(&[
        1,
        ceil_factor(s.saturating_add(1), STRING_FACTOR),
        result,
        LIST_CREATE_BASE_COST,
    ])
}

/// `split` estimate.
pub fn split_estimate(s: SizeRange) -> CallEstimate {
    let traversal = s.add(SizeRange::exact(1)).multiply_by_factor(STRING_FACTOR);
    let result = SizeRange { min: 0, max: s.max };
    let allocation = result
        .multiply_by_factor(1.0)
        .add(CostRange::exact(LIST_CREATE_BASE_COST));
    estimate(traversal.add(allocation).add(call_estimate()), Some(result))
}

/// `join` at run time: `1 + ceil(0.1·(n+1)) + r`.
pub fn join_cost(n: u64, result: u64) -> u64 {
    sum(&[1, ceil_factor(n.saturating_add(1), STRING_FACTOR), result])
}

/// `join` estimate (n = list size, sep = separator size, 0 without one).
pub fn join_estimate(n: SizeRange, sep: SizeRange) -> CallEstimate {
    let traversal = n.add(SizeRange::exact(1)).multiply_by_factor(STRING_FACTOR);
    let max = n
        .max
        .saturating_mul(sep.max.saturating_add(1))
        .saturating_add(sep.max);
    let result = SizeRange { min: 0, max };
    let cost = traversal
        .add(result.multiply_by_factor(1.0))
        .add(call_estimate());
    estimate(cost, Some(result))
}

// ---------------------------------------------------------------------------------------
// The functions.

fn index_error(i: i64) -> Error {
    Error::new(format!("index out of range: {i}"))
}

/// The byte offset of the `n`th code point of `s`, or `None` when `s` has fewer than `n`
/// code points (`n` equal to the length gives `s.len()`).
fn byte_offset(s: &str, n: usize) -> Option<usize> {
    if s.is_ascii() {
        return (n <= s.len()).then_some(n);
    }
    if n == 0 {
        return Some(0);
    }
    match s.char_indices().nth(n) {
        Some((i, _)) => Some(i),
        None => (cel_runtime::strings::size_string(s) as usize == n).then_some(s.len()),
    }
}

/// The number of code points in `s[..byte]`.
fn char_count(s: &str, byte: usize) -> i64 {
    let head = &s.as_bytes()[..byte];
    if head.is_ascii() {
        byte as i64
    } else {
        head.iter().filter(|&&b| (b as i8) >= -0x40).count() as i64
    }
}

/// `s.charAt(i)`: the code point at `i`; `''` at the end; "index out of range: i" outside.
pub fn char_at(s: &str, i: i64) -> Result<&str> {
    let n = usize::try_from(i).map_err(|_| index_error(i))?;
    let start = byte_offset(s, n).ok_or_else(|| index_error(i))?;
    let len = s[start..].chars().next().map_or(0, char::len_utf8);
    Ok(&s[start..start + len])
}

/// `s.indexOf(sub, offset)`: the first code-point index at or after `offset` where `sub`
/// starts, or -1. A negative offset is an error; an empty `sub` matches at the offset
/// (clamped to the length); an offset at or past the end finds nothing.
pub fn index_of(s: &str, sub: &str, offset: i64) -> Result<i64> {
    if offset < 0 {
        return Err(index_error(offset));
    }
    let len = cel_runtime::strings::size_string(s);
    if sub.is_empty() {
        return Ok(offset.min(len));
    }
    if offset >= len {
        return Ok(-1);
    }
    let Some(start) = byte_offset(s, offset as usize) else {
        return Ok(-1);
    };
    Ok(match s[start..].find(sub) {
        Some(p) => char_count(s, start + p),
        None => -1,
    })
}

/// `s.lastIndexOf(sub)`: the last code-point index where `sub` starts, or -1; the length for
/// an empty `sub`.
pub fn last_index_of(s: &str, sub: &str) -> Result<i64> {
    let len = cel_runtime::strings::size_string(s);
    if sub.is_empty() {
        return Ok(len);
    }
    if s.len() < sub.len() {
        return Ok(-1);
    }
    last_index_of_offset(s, sub, len - 1)
}

/// `s.lastIndexOf(sub, offset)`: the last code-point index at or before `offset` where `sub`
/// starts, or -1. A negative offset is an error; an empty `sub` matches at the offset
/// (clamped to the length); an offset at or past the end finds nothing.
pub fn last_index_of_offset(s: &str, sub: &str, offset: i64) -> Result<i64> {
    if offset < 0 {
        return Err(index_error(offset));
    }
    let len = cel_runtime::strings::size_string(s);
    if sub.is_empty() {
        return Ok(offset.min(len));
    }
    if offset >= len {
        return Ok(-1);
    }
    let Some(start) = byte_offset(s, offset as usize) else {
        return Ok(-1);
    };
    // A match starting at or before `start` ends at or before `start + sub.len()`.
    let mut end = start.saturating_add(sub.len()).min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Ok(match s[..end].rfind(sub) {
        Some(p) => char_count(s, p),
        None => -1,
    })
}

/// `s.substring(start)`.
pub fn substring(s: &str, start: i64) -> Result<&str> {
    let b = usize::try_from(start)
        .ok()
        .and_then(|n| byte_offset(s, n))
        .ok_or_else(|| index_error(start))?;
    Ok(&s[b..])
}

/// `s.substring(start, end)`: "invalid substring range. start: 3, end: 1" when end < start,
/// "index out of range: n" when either is outside `0..=len`.
pub fn substring_range(s: &str, start: i64, end: i64) -> Result<&str> {
    if start > end {
        return Err(Error::new(format!(
            "invalid substring range. start: {start}, end: {end}"
        )));
    }
    let b0 = usize::try_from(start)
        .ok()
        .and_then(|n| byte_offset(s, n))
        .ok_or_else(|| index_error(start))?;
    let b1 = usize::try_from(end)
        .ok()
        .and_then(|n| byte_offset(s, n))
        .ok_or_else(|| index_error(end))?;
    Ok(&s[b0..b1])
}

/// The number of replacements `replace` makes: every non-overlapping match (an empty `old`
/// matches before each code point and at the end), at most `n` when `n` is not negative.
fn replacement_count(s: &str, old: &str, n: i64) -> usize {
    let all = if old.is_empty() {
        cel_runtime::strings::size_string(s) as usize + 1
    } else {
        s.matches(old).count()
    };
    match usize::try_from(n) {
        Ok(limit) => all.min(limit),
        Err(_) => all,
    }
}

fn result_too_large(what: &str) -> Error {
    Error::new(format!(
        "{what}: result size exceeds maximum allowed ({MAX_RESULT_BYTES} bytes)"
    ))
}

/// `s.replace(old, new, n)`: replaces the first `n` matches (all when `n` < 0, none when
/// `n` = 0), as Go's `strings.Replace`. Fails rather than build a result larger than
/// [`MAX_RESULT_BYTES`].
pub fn replace(s: &Arc<str>, old: &str, new: &str, n: i64) -> Result<Arc<str>> {
    if n == 0 || (old == new) {
        return Ok(s.clone());
    }
    let count = replacement_count(s, old, n);
    if count == 0 {
        return Ok(s.clone());
    }
    let size = (new.len() as u128 * count as u128 + s.len() as u128)
        .saturating_sub(old.len() as u128 * count as u128);
    if size > MAX_RESULT_BYTES as u128 {
        return Err(result_too_large("replace"));
    }
    Ok(s.replacen(old, new, count).into())
}

/// The size in code points of `s.replace(old, new, n)`, computed without building it; `None`
/// when the call fails instead (a result over [`MAX_RESULT_BYTES`]). Lets a cost limit stop
/// the call before it allocates.
pub fn replace_result_size(s: &str, old: &str, new: &str, n: i64) -> Option<u64> {
    let size = cel_runtime::strings::size_string;
    if n == 0 || old == new {
        return u64::try_from(size(s)).ok();
    }
    let count = replacement_count(s, old, n) as u128;
    let bytes =
        (new.len() as u128 * count + s.len() as u128).saturating_sub(old.len() as u128 * count);
    if bytes > MAX_RESULT_BYTES as u128 {
        return None;
    }
    let points =
        (size(new) as u128 * count + size(s) as u128).saturating_sub(size(old) as u128 * count);
    u64::try_from(points).ok()
}

/// An upper bound on the size of `s.replace(old, new, n)`, from byte lengths alone (a code
/// point takes at least a byte; an empty `old` matches at most `|s| + 1` times).
pub fn replace_size_at_most(s: &str, old: &str, new: &str, n: i64) -> u64 {
    let mut matches = if old.is_empty() {
        s.len() as u64 + 1
    } else {
        (s.len() / old.len()) as u64
    };
    if let Ok(n) = u64::try_from(n) {
        matches = matches.min(n);
    }
    (s.len() as u64).saturating_add(matches.saturating_mul(new.len() as u64))
}

/// An upper bound on the size of `list.join(sep)`: its length in bytes.
pub fn join_size_at_most(list: &[Value], sep: &str) -> u64 {
    let separators = list.len().saturating_sub(1) as u64;
    list.iter()
        .map(|e| match e {
            Value::String(s) => s.len() as u64,
            _ => 0,
        })
        .fold(
            (sep.len() as u64).saturating_mul(separators),
            u64::saturating_add,
        )
}

/// The size in code points of `list.join(sep)`, computed without building it; `None` when
/// the call fails instead (an element that is not a string, a result over
/// [`MAX_RESULT_BYTES`]).
pub fn join_result_size(list: &[Value], sep: &str) -> Option<u64> {
    let size = cel_runtime::strings::size_string;
    let separators = list.len().saturating_sub(1) as u128;
    let mut bytes = sep.len() as u128 * separators;
    let mut points = size(sep) as u128 * separators;
    for e in list {
        let Value::String(s) = e else {
            return None;
        };
        bytes += s.len() as u128;
        points += size(s) as u128;
    }
    if bytes > MAX_RESULT_BYTES as u128 {
        return None;
    }
    u64::try_from(points).ok()
}

/// `s.split(sep, n)` as Go's `strings.SplitN`: `n` = 0 gives `[]`, `n` < 0 splits at every
/// separator, otherwise at most `n` parts, the last holding the rest. An empty separator
/// splits into code points (`''.split('')` is `[]`). Fails rather than build a list of more
/// than [`MAX_LIST_ELEMENTS`](crate::MAX_LIST_ELEMENTS) parts.
pub fn split(s: &str, sep: &str, n: i64) -> Result<Vec<Value>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    let parts = if sep.is_empty() {
        cel_runtime::strings::size_string(s) as usize
    } else {
        s.matches(sep).count().saturating_add(1)
    };
    cel_runtime::limits::check_elements("split", parts.min(limit) as u128)?;
    if sep.is_empty() {
        let mut out = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            if out.len() + 1 == limit {
                out.push(Value::from(rest));
                break;
            }
            let c = rest.chars().next().map_or(1, char::len_utf8);
            out.push(Value::from(&rest[..c]));
            rest = &rest[c..];
        }
        return Ok(out);
    }
    Ok(if n < 0 {
        s.split(sep).map(Value::from).collect()
    } else {
        s.splitn(limit, sep).map(Value::from).collect()
    })
}

/// `list.join(sep)`: "join: invalid input: x" for an element that is not a string. Fails
/// rather than build a result larger than [`MAX_RESULT_BYTES`].
pub fn join(list: &[Value], sep: &str) -> Result<String> {
    let mut total: u128 = 0;
    for (i, e) in list.iter().enumerate() {
        match e {
            Value::String(s) => {
                total += s.len() as u128 + if i > 0 { sep.len() as u128 } else { 0 };
            }
            other => {
                return Err(Error::new(format!(
                    "join: invalid input: {}",
                    cel_runtime::format::error_text(other)
                )));
            }
        }
    }
    if total > MAX_RESULT_BYTES as u128 {
        return Err(result_too_large("join"));
    }
    let mut out = String::with_capacity(total as usize);
    for (i, e) in list.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        if let Value::String(s) = e {
            out.push_str(s);
        }
    }
    Ok(out)
}

/// `strings.quote(s)`: `s` in double quotes with `\a \b \f \n \r \t \v \\ \"` escaped and
/// everything else copied as is.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `s.reverse()`: the code points in reverse order.
pub fn reverse(s: &str) -> String {
    s.chars().rev().collect()
}

// ---------------------------------------------------------------------------------------
// Value adapters.

fn string_arc(v: &Value) -> Result<&Arc<str>> {
    match v {
        Value::String(s) => Ok(s),
        _ => Err(Error::no_such_overload()),
    }
}

fn int(v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        _ => Err(Error::no_such_overload()),
    }
}

/// Whether an older cel-go's `indexOf` and `lastIndexOf` differ from today's.
fn older_index_of(o: OlderCelGo) -> bool {
    o.index_of_offset_past_end_errors
        || o.last_index_of_short_receiver_errors
        || o.index_of_empty_returns_offset
}

/// `indexOf` and `lastIndexOf` as an older cel-go wrote them (A5, A13, A21 of
/// `docs/cel-go-versions.md`; cel-go `ext/strings.go` at v0.17.8, v0.22.0 and v0.26.0).
fn implement_older_index_of(c: &mut LibraryContents, o: OlderCelGo) {
    let ints = |r: Result<i64>| r.map(Value::Int);
    c.implement(
        "string_index_of_string",
        Implementation::Host(Arc::new(move |args: &[Value]| match args {
            [s, sub] => ints(older_index_of_offset(
                string_arc(s)?,
                string_arc(sub)?,
                0,
                o,
            )),
            _ => Err(Error::no_such_overload()),
        })),
    );
    c.implement(
        "string_index_of_string_int",
        Implementation::Host(Arc::new(move |args: &[Value]| match args {
            [s, sub, off] => ints(older_index_of_offset(
                string_arc(s)?,
                string_arc(sub)?,
                int(off)?,
                o,
            )),
            _ => Err(Error::no_such_overload()),
        })),
    );
    c.implement(
        "string_last_index_of_string",
        Implementation::Host(Arc::new(move |args: &[Value]| match args {
            [s, sub] => ints(older_last_index_of(string_arc(s)?, string_arc(sub)?, o)),
            _ => Err(Error::no_such_overload()),
        })),
    );
    c.implement(
        "string_last_index_of_string_int",
        Implementation::Host(Arc::new(move |args: &[Value]| match args {
            [s, sub, off] => ints(older_last_index_of_offset(
                string_arc(s)?,
                string_arc(sub)?,
                int(off)?,
                o,
            )),
            _ => Err(Error::no_such_overload()),
        })),
    );
}

/// The checks an older `indexOfOffset` or `lastIndexOfOffset` made before searching; `Some`
/// when they decide the result.
fn older_offset_checks(s: &str, sub: &str, offset: i64, o: OlderCelGo) -> Option<Result<i64>> {
    if sub.is_empty() && o.index_of_empty_returns_offset {
        return Some(Ok(offset));
    }
    let len = cel_runtime::strings::size_string(s);
    if o.index_of_offset_past_end_errors && (offset < 0 || offset >= len) {
        return Some(Err(index_error(offset)));
    }
    None
}

fn older_index_of_offset(s: &str, sub: &str, offset: i64, o: OlderCelGo) -> Result<i64> {
    older_offset_checks(s, sub, offset, o).unwrap_or_else(|| index_of(s, sub, offset))
}

fn older_last_index_of_offset(s: &str, sub: &str, offset: i64, o: OlderCelGo) -> Result<i64> {
    older_offset_checks(s, sub, offset, o).unwrap_or_else(|| last_index_of_offset(s, sub, offset))
}

fn older_last_index_of(s: &str, sub: &str, o: OlderCelGo) -> Result<i64> {
    let len = cel_runtime::strings::size_string(s);
    if sub.is_empty() {
        return Ok(len);
    }
    // From v0.25.1, a receiver with fewer bytes than the search string finds nothing.
    if !o.last_index_of_short_receiver_errors && s.len() < sub.len() {
        return Ok(-1);
    }
    older_last_index_of_offset(s, sub, len - 1, o)
}

fn char_at_value(s: &Value, i: &Value) -> Result<Value> {
    Ok(Value::from(char_at(string_arc(s)?, int(i)?)?))
}

fn index_of_value(s: &Value, sub: &Value) -> Result<Value> {
    index_of(string_arc(s)?, string_arc(sub)?, 0).map(Value::Int)
}

fn index_of_offset_value(args: &[Value]) -> Result<Value> {
    match args {
        [s, sub, off] => index_of(string_arc(s)?, string_arc(sub)?, int(off)?).map(Value::Int),
        _ => Err(Error::no_such_overload()),
    }
}

fn last_index_of_value(s: &Value, sub: &Value) -> Result<Value> {
    last_index_of(string_arc(s)?, string_arc(sub)?).map(Value::Int)
}

fn last_index_of_offset_value(args: &[Value]) -> Result<Value> {
    match args {
        [s, sub, off] => {
            last_index_of_offset(string_arc(s)?, string_arc(sub)?, int(off)?).map(Value::Int)
        }
        _ => Err(Error::no_such_overload()),
    }
}

fn lower_ascii_value(s: &Value) -> Result<Value> {
    let s = string_arc(s)?;
    if !s.bytes().any(|b| b.is_ascii_uppercase()) {
        return Ok(Value::String(s.clone()));
    }
    Ok(Value::from(s.to_ascii_lowercase()))
}

fn upper_ascii_value(s: &Value) -> Result<Value> {
    let s = string_arc(s)?;
    if !s.bytes().any(|b| b.is_ascii_lowercase()) {
        return Ok(Value::String(s.clone()));
    }
    Ok(Value::from(s.to_ascii_uppercase()))
}

fn replace_value(args: &[Value]) -> Result<Value> {
    let (s, old, new, n) = match args {
        [s, old, new] => (s, old, new, -1),
        [s, old, new, n] => (s, old, new, int(n)?),
        _ => return Err(Error::no_such_overload()),
    };
    replace(string_arc(s)?, string_arc(old)?, string_arc(new)?, n).map(Value::String)
}

fn split_value(s: &Value, sep: &Value) -> Result<Value> {
    Ok(Value::list(split(string_arc(s)?, string_arc(sep)?, -1)?))
}

fn split_n_value(args: &[Value]) -> Result<Value> {
    match args {
        [s, sep, n] => Ok(Value::list(split(
            string_arc(s)?,
            string_arc(sep)?,
            int(n)?,
        )?)),
        _ => Err(Error::no_such_overload()),
    }
}

fn substring_value(s: &Value, start: &Value) -> Result<Value> {
    let arc = string_arc(s)?;
    let sub = substring(arc, int(start)?)?;
    if sub.len() == arc.len() {
        return Ok(Value::String(arc.clone()));
    }
    Ok(Value::from(sub))
}

fn substring_range_value(args: &[Value]) -> Result<Value> {
    match args {
        [s, start, end] => Ok(Value::from(substring_range(
            string_arc(s)?,
            int(start)?,
            int(end)?,
        )?)),
        _ => Err(Error::no_such_overload()),
    }
}

fn trim_value(s: &Value) -> Result<Value> {
    let arc = string_arc(s)?;
    let t = arc.trim();
    if t.len() == arc.len() {
        return Ok(Value::String(arc.clone()));
    }
    Ok(Value::from(t))
}

fn quote_value(s: &Value) -> Result<Value> {
    Ok(Value::from(quote(string_arc(s)?)))
}

fn reverse_value(s: &Value) -> Result<Value> {
    Ok(Value::from(reverse(string_arc(s)?)))
}

fn join_value(list: &Value) -> Result<Value> {
    match list {
        Value::List(l) => join(l, "").map(Value::from),
        _ => Err(Error::no_such_overload()),
    }
}

fn join_sep_value(list: &Value, sep: &Value) -> Result<Value> {
    match list {
        Value::List(l) => join(l, string_arc(sep)?).map(Value::from),
        _ => Err(Error::no_such_overload()),
    }
}

/// `join` below version 2: cel-go converts the list to a Go `[]string` first, so an element
/// that is not a string fails with that type's Go conversion error.
fn legacy_join_value(list: &Value) -> Result<Value> {
    legacy_join(list, "")
}

fn legacy_join_sep_value(list: &Value, sep: &Value) -> Result<Value> {
    legacy_join(list, string_arc(sep)?)
}

fn legacy_join(list: &Value, sep: &str) -> Result<Value> {
    let Value::List(l) = list else {
        return Err(Error::no_such_overload());
    };
    for e in l.iter() {
        let from = match e {
            Value::String(_) => continue,
            Value::Int(_) => {
                return Err(Error::new(
                    "unsupported type conversion from 'int' to string",
                ));
            }
            Value::Uint(_) => {
                return Err(Error::new(
                    "unsupported type conversion from 'uint' to string",
                ));
            }
            Value::Bool(_) => "bool",
            Value::Double(_) => "Double",
            Value::Bytes(_) => "Bytes",
            Value::Null => "'null_type'",
            Value::Timestamp(_) => "'Timestamp'",
            Value::Duration(_) => "'Duration'",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            other => other.type_name(),
        };
        return Err(Error::new(format!(
            "type conversion error from {from} to 'string'"
        )));
    }
    join(l, sep).map(Value::from)
}

#[cfg(test)]
mod tests;
