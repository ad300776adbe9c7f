//! Regular expressions for `matches`, with Go's RE2 syntax and meaning on top of the `regex`
//! crate.
//!
//! A pattern is first read the way Go's `regexp/syntax` reads it and rewritten into the
//! `regex` crate's dialect, so the two engines agree where their syntax differs:
//!
//! * `\d`, `\s`, `\w`, `\b` are ASCII-only in Go (and Go's `\s` has no `\v`); the `regex`
//!   crate makes them Unicode-aware. They are rewritten to explicit ASCII classes.
//! * Inside brackets the `regex` crate gives meaning to `[` (nested classes), `&&`, `--` and
//!   `~~`; Go reads them literally. Class members are written as `\x{..}` escapes.
//! * A `{` that does not start a valid `{n}`, `{n,}` or `{n,m}` (with no leading zeros) is a
//!   literal in Go; counts above 1000 are errors ("invalid repeat count").
//! * `\Q…\E` quoting, octal escapes (`\0`, `\12`, `\123`), `\p{^Greek}` and any escaped
//!   ASCII punctuation are supported as in Go; `(?x)`, `\Z`, `\e` and other escapes Go
//!   rejects are rejected. Stacked repetition (`a**`) is an error, as in Go.
//!
//! Errors read like Go's: `error parsing regexp: missing closing ]: `[``. The common
//! mistakes (missing `]` or `)`, unexpected `)`, bad escapes, trailing backslash, repetition
//! without operand, nested repetition, bad repeat counts, bad ranges, bad flags and group
//! names) are detected here with Go's exact text; anything the `regex` crate rejects beyond
//! that is mapped to the closest Go message.
//!
//! Known remaining differences: Unicode property names the `regex` crate knows but Go does
//! not (scripts added in newer Unicode versions) are accepted; Go's limit on the total size of
//! nested repetitions (`(a{1000}){1000}`) is approximated by the compiled-size limit; and
//! the constant patterns of one program share one compiled-size allowance
//! ([`PatternBudget`]), which Go does not have.
//!
//! Compiled programs are bounded ([`SIZE_LIMIT`]) so that a hostile pattern cannot take
//! unbounded memory, and the constant patterns of one program share a bound
//! ([`PatternBudget`]) so that a program cannot take unbounded time compiling them.
//! [`compile_cached`] keeps a small shared cache for patterns that are not
//! constants (a program compiles its constant patterns once, shared by both backends); it
//! keeps only patterns that compile within [`CACHED_SIZE_LIMIT`], so that patterns from
//! hostile data cannot fill it with [`CACHE_CAPACITY`] times the largest program.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use crate::{Error, Result};

mod fold;

/// The most memory a compiled pattern may use (and, separately, its lazy DFA cache).
pub const SIZE_LIMIT: usize = 16 << 20;

/// How many patterns [`compile_cached`] keeps.
pub const CACHE_CAPACITY: usize = 256;

/// The largest compiled pattern [`compile_cached`] keeps (256 KiB; ordinary patterns take a
/// few KiB), and the lazy DFA cache such a pattern may grow: 256 kept patterns hold a few
/// hundred MiB at most rather than 256 × [`SIZE_LIMIT`].
pub const CACHED_SIZE_LIMIT: usize = 256 << 10;
const CACHED_DFA_SIZE_LIMIT: usize = 1 << 20;

/// The bounds [`compile_cached`] tries in turn: each four times the last, from 4 KiB (what
/// ordinary patterns need; an evaluation may compile 8,192 such patterns that are not cached)
/// to [`SIZE_LIMIT`].
const COMPILE_STEPS: &[usize] = &[
    4 << 10,
    16 << 10,
    64 << 10,
    CACHED_SIZE_LIMIT,
    1 << 20,
    4 << 20,
    SIZE_LIMIT,
];

/// A regular-expression syntax error in Go's words.
struct GoError {
    code: &'static str,
    expr: String,
}

impl GoError {
    fn new(code: &'static str, expr: &str) -> GoError {
        GoError {
            code,
            expr: expr.to_string(),
        }
    }

    fn into_error(self) -> Error {
        Error::new(format!(
            "error parsing regexp: {}: `{}`",
            self.code, self.expr
        ))
    }
}

const MISSING_BRACKET: &str = "missing closing ]";
const MISSING_PAREN: &str = "missing closing )";
const UNEXPECTED_PAREN: &str = "unexpected )";
const INVALID_ESCAPE: &str = "invalid escape sequence";
const TRAILING_BACKSLASH: &str = "trailing backslash at end of expression";
const MISSING_REPEAT_ARG: &str = "missing argument to repetition operator";
const INVALID_REPEAT_OP: &str = "invalid nested repetition operator";
const INVALID_REPEAT_SIZE: &str = "invalid repeat count";
const INVALID_CHAR_RANGE: &str = "invalid character class range";
const INVALID_PERL_OP: &str = "invalid or unsupported Perl syntax";
const INVALID_NAMED_CAPTURE: &str = "invalid named capture";
const EXPRESSION_TOO_LARGE: &str = "expression too large";
const NESTS_TOO_DEEPLY: &str = "expression nests too deeply";

/// Go's general categories, which `\p{..}` accepts besides script names and `Any`.
const CATEGORIES: &[&str] = &[
    "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N",
    "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So",
    "Z", "Zl", "Zp", "Zs",
];

/// Go's POSIX class names (inside `[[:name:]]`).
const POSIX: &[&str] = &[
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

/// One element of a character class after reading.
enum ClassItem {
    /// A range of code points (a single character is `lo == hi`).
    Range(char, char),
    /// Text to copy into the class as is (an ASCII or Unicode class).
    Raw(String),
}

struct Translator<'a> {
    src: &'a str,
    pos: usize,
    out: String,
    /// Byte offsets of open groups.
    groups: Vec<usize>,
    /// Whether the previous item can take a repetition operator.
    can_repeat: bool,
    /// Where the previous item's repetition operator started, if the previous item was one.
    last_repeat: Option<usize>,
}

fn push_char_escaped(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() {
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:X}}}", c as u32);
    }
}

/// The ASCII class text (without brackets) and whether it is negated, for `\d \s \w` and
/// their upper-case negations.
fn perl_class(c: char) -> Option<(&'static str, bool)> {
    Some(match c {
        'd' => ("0-9", false),
        'D' => ("0-9", true),
        's' => ("\\t\\n\\f\\r ", false),
        'S' => ("\\t\\n\\f\\r ", true),
        'w' => ("0-9A-Za-z_", false),
        'W' => ("0-9A-Za-z_", true),
        _ => return None,
    })
}

impl<'a> Translator<'a> {
    fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.rest().chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn slice(&self, from: usize, to: usize) -> &'a str {
        self.src.get(from..to).unwrap_or("")
    }

    fn run(mut self) -> std::result::Result<String, GoError> {
        while let Some(c) = self.peek() {
            match c {
                '(' => self.open_group()?,
                ')' => {
                    if self.groups.pop().is_none() {
                        return Err(GoError::new(UNEXPECTED_PAREN, self.src));
                    }
                    self.pos += 1;
                    self.out.push(')');
                    self.operand();
                }
                '|' => {
                    self.pos += 1;
                    self.out.push('|');
                    self.can_repeat = false;
                    self.last_repeat = None;
                }
                '*' | '+' | '?' => {
                    let start = self.pos;
                    self.pos += 1;
                    self.repetition(start)?;
                }
                '{' => {
                    let start = self.pos;
                    match self.counted_repetition() {
                        Some((min, max)) => {
                            if min > 1000 || max > 1000 || (max >= 0 && min > max) {
                                return Err(GoError::new(
                                    INVALID_REPEAT_SIZE,
                                    self.slice(start, self.pos),
                                ));
                            }
                            self.repetition(start)?;
                        }
                        None => {
                            self.pos = start + 1;
                            self.out.push_str("\\{");
                            self.operand();
                        }
                    }
                }
                '[' => self.class()?,
                '\\' => self.escape_outside()?,
                '}' | ']' => {
                    self.pos += 1;
                    push_char_escaped(&mut self.out, c);
                    self.operand();
                }
                _ => {
                    self.pos += c.len_utf8();
                    self.out.push(c);
                    self.operand();
                }
            }
        }
        if !self.groups.is_empty() {
            return Err(GoError::new(MISSING_PAREN, self.src));
        }
        Ok(self.out)
    }

    /// Notes that an operand (something repeatable) was just written.
    fn operand(&mut self) {
        self.can_repeat = true;
        self.last_repeat = None;
    }

    /// Handles a repetition operator whose text runs from `start` to the current position:
    /// takes a lazy `?`, checks for stacking and a missing operand, copies it.
    fn repetition(&mut self, start: usize) -> std::result::Result<(), GoError> {
        if self.peek() == Some('?') {
            self.pos += 1;
        }
        if let Some(prev) = self.last_repeat {
            return Err(GoError::new(INVALID_REPEAT_OP, self.slice(prev, self.pos)));
        }
        if !self.can_repeat {
            return Err(GoError::new(
                MISSING_REPEAT_ARG,
                self.slice(start, self.pos),
            ));
        }
        let text = self.slice(start, self.pos);
        self.out.push_str(text);
        self.last_repeat = Some(start);
        Ok(())
    }

    /// Reads `{n}`, `{n,}` or `{n,m}` at the current position (max −1 for none), leaving the
    /// position after `}`; `None` (position unspecified) when the text is not one, in which
    /// case Go reads `{` as a literal.
    fn counted_repetition(&mut self) -> Option<(i64, i64)> {
        self.pos += 1;
        let min = self.repeat_number()?;
        let max = match self.peek()? {
            ',' => {
                self.pos += 1;
                if self.peek()? == '}' {
                    -1
                } else {
                    self.repeat_number()?
                }
            }
            _ => min,
        };
        if self.peek()? != '}' {
            return None;
        }
        self.pos += 1;
        Some((min, max))
    }

    /// A decimal number without leading zeros; very long numbers count as too big.
    fn repeat_number(&mut self) -> Option<i64> {
        let start = self.pos;
        if !self.peek()?.is_ascii_digit() {
            return None;
        }
        if self.peek() == Some('0') && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
            return None;
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits = self.slice(start, self.pos);
        Some(if digits.len() > 8 {
            i64::MAX
        } else {
            digits.parse().unwrap_or(i64::MAX)
        })
    }

    fn open_group(&mut self) -> std::result::Result<(), GoError> {
        let start = self.pos;
        if self.peek_at(1) != Some('?') {
            self.pos += 1;
            self.groups.push(start);
            self.out.push('(');
            self.can_repeat = false;
            self.last_repeat = None;
            return Ok(());
        }
        let rest = self.rest();
        // Named groups: (?P<name>…) and (?<name>…).
        let name_at = if rest.starts_with("(?P<") {
            Some(4)
        } else if rest.starts_with("(?<") {
            Some(3)
        } else {
            None
        };
        if let Some(name_at) = name_at {
            let Some(end) = rest.find('>') else {
                return Err(GoError::new(INVALID_NAMED_CAPTURE, rest));
            };
            let name = rest.get(name_at..end).unwrap_or("");
            let capture = rest.get(..=end).unwrap_or(rest);
            if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_alphanumeric()) {
                return Err(GoError::new(INVALID_NAMED_CAPTURE, capture));
            }
            self.pos += end + 1;
            self.groups.push(start);
            let _ = write!(self.out, "(?P<{name}>");
            self.can_repeat = false;
            self.last_repeat = None;
            return Ok(());
        }
        // Flags: (?flags) or (?flags:…), flags among i m s U, with one optional '-'.
        self.pos += 2;
        let mut flags = String::new();
        let mut negated = false;
        let mut saw_flag = false;
        loop {
            let Some(c) = self.bump() else {
                return Err(GoError::new(INVALID_PERL_OP, self.slice(start, self.pos)));
            };
            match c {
                'i' | 'm' | 's' | 'U' => {
                    flags.push(c);
                    saw_flag = true;
                }
                '-' if !negated => {
                    negated = true;
                    saw_flag = false;
                    flags.push('-');
                }
                ':' | ')' if !negated || saw_flag => {
                    if c == ':' {
                        self.groups.push(start);
                        let _ = write!(self.out, "(?{flags}:");
                        self.can_repeat = false;
                        self.last_repeat = None;
                    } else {
                        if !flags.is_empty() {
                            let _ = write!(self.out, "(?{flags})");
                        }
                        // Go: any token, flag groups included, ends a run of repetitions.
                        self.last_repeat = None;
                    }
                    return Ok(());
                }
                _ => {
                    return Err(GoError::new(INVALID_PERL_OP, self.slice(start, self.pos)));
                }
            }
        }
    }

    /// Reads the escape at the current position (a backslash and what follows) as a single
    /// character, Go's `parseEscape`. `None` when it is not a character escape.
    fn escape_char(&mut self) -> std::result::Result<char, GoError> {
        let start = self.pos;
        self.pos += 1; // the backslash
        let Some(c) = self.bump() else {
            return Err(GoError::new(TRAILING_BACKSLASH, ""));
        };
        let invalid = |t: &Translator<'_>| GoError::new(INVALID_ESCAPE, t.slice(start, t.pos));
        match c {
            '1'..='7' if !self.peek().is_some_and(|d| ('0'..='7').contains(&d)) => {
                Err(invalid(self))
            }
            '0'..='7' => {
                let mut v = c as u32 - '0' as u32;
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ '0'..='7') => {
                            v = v * 8 + (d as u32 - '0' as u32);
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                char::from_u32(v).ok_or_else(|| invalid(self))
            }
            'x' => {
                let Some(first) = self.bump() else {
                    return Err(invalid(self));
                };
                if first == '{' {
                    let mut v: u32 = 0;
                    let mut n = 0;
                    loop {
                        let Some(d) = self.bump() else {
                            return Err(invalid(self));
                        };
                        if d == '}' {
                            break;
                        }
                        let Some(h) = d.to_digit(16) else {
                            return Err(invalid(self));
                        };
                        v = v * 16 + h;
                        if v > 0x10_FFFF {
                            return Err(invalid(self));
                        }
                        n += 1;
                    }
                    if n == 0 {
                        return Err(invalid(self));
                    }
                    return char::from_u32(v).ok_or_else(|| invalid(self));
                }
                let second = self.bump();
                match (first.to_digit(16), second.and_then(|s| s.to_digit(16))) {
                    (Some(x), Some(y)) => char::from_u32(x * 16 + y).ok_or_else(|| invalid(self)),
                    _ => Err(invalid(self)),
                }
            }
            'a' => Ok('\u{7}'),
            'f' => Ok('\u{c}'),
            'n' => Ok('\n'),
            'r' => Ok('\r'),
            't' => Ok('\t'),
            'v' => Ok('\u{b}'),
            c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok(c),
            _ => Err(invalid(self)),
        }
    }

    /// Reads `\p…` / `\P…` at the current position into class text for the `regex` crate
    /// (without brackets) and whether it is negated.
    fn unicode_class(&mut self) -> std::result::Result<(String, bool), GoError> {
        let start = self.pos;
        self.pos += 1;
        let mut negated = self.bump() == Some('P');
        let name = match self.bump() {
            Some('{') => {
                let rest = self.rest();
                let Some(end) = rest.find('}') else {
                    return Err(GoError::new(
                        INVALID_CHAR_RANGE,
                        self.slice(start, self.src.len()),
                    ));
                };
                self.pos += end + 1;
                rest.get(..end).unwrap_or("").to_string()
            }
            Some(c) => c.to_string(),
            None => return Err(GoError::new(INVALID_ESCAPE, self.slice(start, self.pos))),
        };
        let mut name = name.as_str();
        if let Some(n) = name.strip_prefix('^') {
            negated = !negated;
            name = n;
        }
        let text = if name == "Any" {
            "\\x{0}-\\x{10FFFF}".to_string()
        } else if CATEGORIES.contains(&name) {
            format!("\\p{{gc={name}}}")
        } else if name.starts_with(|c: char| c.is_ascii_uppercase())
            && name.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
        {
            format!("\\p{{sc={name}}}")
        } else {
            return Err(GoError::new(
                INVALID_CHAR_RANGE,
                self.slice(start, self.pos),
            ));
        };
        Ok((text, negated))
    }

    fn escape_outside(&mut self) -> std::result::Result<(), GoError> {
        let next = self.peek_at(1);
        match next {
            None => return Err(GoError::new(TRAILING_BACKSLASH, "")),
            Some('Q') => {
                self.pos += 2;
                let rest = self.rest();
                let (lit, skip) = match rest.find("\\E") {
                    Some(i) => (rest.get(..i).unwrap_or(""), i + 2),
                    None => (rest, rest.len()),
                };
                self.pos += skip;
                for c in lit.chars() {
                    push_char_escaped(&mut self.out, c);
                    self.operand();
                }
                return Ok(());
            }
            Some(c @ ('A' | 'z')) => {
                self.pos += 2;
                let _ = write!(self.out, "\\{c}");
                self.operand();
                return Ok(());
            }
            Some(c @ ('b' | 'B')) => {
                self.pos += 2;
                let _ = write!(self.out, "(?-u:\\{c})");
                self.operand();
                return Ok(());
            }
            Some('p' | 'P') => {
                let (text, negated) = self.unicode_class()?;
                let _ = write!(self.out, "[{}{text}]", if negated { "^" } else { "" });
                self.operand();
                return Ok(());
            }
            Some(c) => {
                if let Some((text, negated)) = perl_class(c) {
                    self.pos += 2;
                    let _ = write!(self.out, "[{}{text}]", if negated { "^" } else { "" });
                    self.operand();
                    return Ok(());
                }
            }
        }
        let c = self.escape_char()?;
        push_char_escaped(&mut self.out, c);
        self.operand();
        Ok(())
    }

    /// Reads one class member that may be a range endpoint.
    fn class_char(&mut self, class_start: usize) -> std::result::Result<char, GoError> {
        match self.peek() {
            None => Err(GoError::new(
                MISSING_BRACKET,
                self.slice(class_start, self.src.len()),
            )),
            Some('\\') => self.escape_char(),
            Some(c) => {
                self.pos += c.len_utf8();
                Ok(c)
            }
        }
    }

    fn class(&mut self) -> std::result::Result<(), GoError> {
        let class_start = self.pos;
        self.pos += 1;
        let negated = if self.peek() == Some('^') {
            self.pos += 1;
            true
        } else {
            false
        };
        let mut items: Vec<ClassItem> = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                return Err(GoError::new(
                    MISSING_BRACKET,
                    self.slice(class_start, self.src.len()),
                ));
            };
            if c == ']' && !first {
                self.pos += 1;
                break;
            }
            first = false;
            // POSIX class [:name:] or [:^name:].
            if c == '[' && self.peek_at(1) == Some(':') {
                let rest = self.rest();
                if let Some(end) = rest.get(2..).and_then(|r| r.find(":]")) {
                    let full = rest.get(..end + 4).unwrap_or("");
                    let inner = rest.get(2..end + 2).unwrap_or("");
                    let bare = inner.strip_prefix('^').unwrap_or(inner);
                    if !POSIX.contains(&bare) {
                        return Err(GoError::new(INVALID_CHAR_RANGE, full));
                    }
                    self.pos += full.len();
                    items.push(ClassItem::Raw(full.to_string()));
                    continue;
                }
            }
            if c == '\\' {
                match self.peek_at(1) {
                    Some('p' | 'P') => {
                        let (text, neg) = self.unicode_class()?;
                        items.push(ClassItem::Raw(if neg {
                            format!("[^{text}]")
                        } else {
                            text
                        }));
                        continue;
                    }
                    Some(p) => {
                        if let Some((text, neg)) = perl_class(p) {
                            self.pos += 2;
                            items.push(ClassItem::Raw(if neg {
                                format!("[^{text}]")
                            } else {
                                text.to_string()
                            }));
                            continue;
                        }
                    }
                    None => {}
                }
            }
            let range_start = self.pos;
            let lo = self.class_char(class_start)?;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|n| n != ']') {
                self.pos += 1;
                let hi = self.class_char(class_start)?;
                if hi < lo {
                    return Err(GoError::new(
                        INVALID_CHAR_RANGE,
                        self.slice(range_start, self.pos),
                    ));
                }
                items.push(ClassItem::Range(lo, hi));
            } else {
                items.push(ClassItem::Range(lo, lo));
            }
        }
        self.out.push('[');
        if negated {
            self.out.push('^');
        }
        for item in items {
            match item {
                ClassItem::Raw(text) => self.out.push_str(&text),
                ClassItem::Range(lo, hi) => {
                    let _ = write!(self.out, "\\x{{{:X}}}", lo as u32);
                    if hi != lo {
                        let _ = write!(self.out, "-\\x{{{:X}}}", hi as u32);
                    }
                }
            }
        }
        self.out.push(']');
        self.operand();
        Ok(())
    }
}

/// Rewrites a Go RE2 pattern into the `regex` crate's dialect, or reports Go's error.
fn translate(pattern: &str) -> std::result::Result<String, GoError> {
    let translated = Translator {
        src: pattern,
        pos: 0,
        out: String::with_capacity(pattern.len() + 8),
        groups: Vec::new(),
        can_repeat: false,
        last_repeat: None,
    }
    .run()?;
    // Classes under `(?i)` are folded here, in time proportional to the pattern (see `fold`).
    match fold::prefold(&translated) {
        fold::Prefold::Unchanged => Ok(translated),
        fold::Prefold::Rewritten(folded) => Ok(folded),
        fold::Prefold::TooLarge => Err(GoError::new(EXPRESSION_TOO_LARGE, pattern)),
    }
}

/// Maps an error of the `regex` crate to Go's wording.
fn map_regex_error(pattern: &str, e: &regex::Error) -> Error {
    map_build_error(
        pattern,
        matches!(e, regex::Error::CompiledTooBig(_)),
        &e.to_string(),
    )
}

/// Maps an error of the `regex` crate's engine (`too_big` when the compiled program exceeded
/// its size limit) to Go's message.
fn map_build_error(pattern: &str, too_big: bool, text: &str) -> Error {
    let code = if too_big || text.contains("size limit") {
        EXPRESSION_TOO_LARGE
    } else if text.contains("nest limit") {
        NESTS_TOO_DEEPLY
    } else if text.contains("Unicode property") || text.contains("class range") {
        INVALID_CHAR_RANGE
    } else if text.contains("capture group name") || text.contains("capture group") {
        INVALID_NAMED_CAPTURE
    } else if text.contains("repetition") {
        MISSING_REPEAT_ARG
    } else if text.contains("escape") {
        INVALID_ESCAPE
    } else {
        INVALID_PERL_OP
    };
    GoError::new(code, pattern).into_error()
}

/// Compiles a pattern with Go RE2 syntax and semantics (see the module docs). Errors read
/// ``error parsing regexp: <reason>: `<fragment>` ``.
pub fn compile(pattern: &str) -> Result<Arc<regex::Regex>> {
    compile_within(pattern, SIZE_LIMIT, SIZE_LIMIT)
}

/// [`compile`] with other bounds on the compiled program and its lazy DFA cache.
fn compile_within(pattern: &str, size_limit: usize, dfa_limit: usize) -> Result<Arc<regex::Regex>> {
    let translated = translate(pattern).map_err(GoError::into_error)?;
    build_translated(&translated, size_limit, dfa_limit).map_err(|e| map_regex_error(pattern, &e))
}

/// Builds an already translated pattern with the `regex` crate within the given bounds.
fn build_translated(
    translated: &str,
    size_limit: usize,
    dfa_limit: usize,
) -> std::result::Result<Arc<regex::Regex>, regex::Error> {
    regex::RegexBuilder::new(translated)
        .size_limit(size_limit)
        .dfa_size_limit(dfa_limit)
        .build()
        .map(Arc::new)
}

/// A pattern compiled for `matches` alone: no capture groups and no match positions, with a
/// known compiled size, so that a program can bound what its constant patterns take together
/// (see [`PatternBudget`]). It matches exactly as [`compile`]'s `Regex::is_match` does: same
/// translation, same engine, same configuration.
#[derive(Debug)]
pub struct Matcher {
    re: regex_automata::meta::Regex,
}

impl Matcher {
    /// Whether the pattern matches anywhere in `s` (unanchored).
    #[inline]
    pub fn is_match(&self, s: &str) -> bool {
        self.re.is_match(s)
    }

    /// The heap memory the compiled pattern holds (its automata and literal searchers).
    pub fn memory_usage(&self) -> usize {
        self.re.memory_usage()
    }
}

/// The most compiled memory the constant patterns of one program may hold together: twice
/// what one pattern at [`SIZE_LIMIT`] holds (its forward and reverse automata).
///
/// Compiling a pattern takes time in proportion to its compiled size (about 10 ms per MiB in
/// release builds), and a counted repetition makes a short pattern large: `(x|...){422}`
/// compiles to a few MiB from 30 characters. Without a bound shared by the whole program, an
/// expression repeating such `matches` calls would take seconds to compile per kilobyte.
pub const PROGRAM_SIZE_LIMIT: usize = 2 * SIZE_LIMIT;

/// The compiled-size allowance the constant patterns of one program share (see
/// [`PROGRAM_SIZE_LIMIT`]). Each pattern is compiled within what is left; one that does not
/// fit fails as a pattern too large for Go's engine does (`expression too large`). Go has
/// no such shared bound, so a program whose patterns are together larger than this (tens of
/// MiB compiled; patterns Kubernetes users write take a few KiB) errors where cel-go would
/// not: a documented difference.
#[derive(Debug)]
pub struct PatternBudget {
    remaining: usize,
}

impl Default for PatternBudget {
    fn default() -> Self {
        PatternBudget {
            remaining: PROGRAM_SIZE_LIMIT,
        }
    }
}

impl PatternBudget {
    /// Compiles a constant pattern for `matches` within what is left of the allowance, and
    /// charges its compiled size. A pattern that fails for its size is charged everything
    /// that was left, since compiling it took as long as compiling that much.
    pub fn compile(&mut self, pattern: &str) -> Result<Arc<Matcher>> {
        let translated = translate(pattern).map_err(GoError::into_error)?;
        if self.remaining == 0 {
            return Err(GoError::new(EXPRESSION_TOO_LARGE, pattern).into_error());
        }
        let limit = self.remaining.min(SIZE_LIMIT);
        let config = regex_automata::meta::Config::new()
            .match_kind(regex_automata::MatchKind::LeftmostFirst)
            .utf8_empty(true)
            .nfa_size_limit(Some(limit))
            .hybrid_cache_capacity(SIZE_LIMIT);
        let syntax = regex_automata::util::syntax::Config::new().utf8(true);
        match regex_automata::meta::Builder::new()
            .configure(config)
            .syntax(syntax)
            .build(&translated)
        {
            Ok(re) => {
                let matcher = Matcher { re };
                self.remaining = self.remaining.saturating_sub(matcher.memory_usage());
                Ok(Arc::new(matcher))
            }
            Err(e) => {
                let too_big = e.size_limit().is_some();
                if too_big {
                    self.remaining = 0;
                }
                let text = match e.syntax_error() {
                    Some(syntax) => syntax.to_string(),
                    None => e.to_string(),
                };
                Err(map_build_error(pattern, too_big, &text))
            }
        }
    }
}

struct Cache {
    map: HashMap<Arc<str>, Arc<regex::Regex>>,
    order: VecDeque<Arc<str>>,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: std::sync::OnceLock<Mutex<Cache>> = std::sync::OnceLock::new();
    CACHE.get_or_init(|| {
        Mutex::new(Cache {
            map: HashMap::new(),
            order: VecDeque::new(),
        })
    })
}

/// [`compile`] through a shared, thread-safe cache of the last [`CACHE_CAPACITY`] patterns
/// (oldest evicted first) that compile within [`CACHED_SIZE_LIMIT`]. Errors and larger
/// patterns are not cached.
///
/// A pattern not in the cache is compiled within growing bounds (from 4 KiB, four times the
/// last each time, up to [`SIZE_LIMIT`]), each charged to the running evaluation's allowance
/// before it is tried (`limits::check_pattern_compile`), since a failed try takes as long as
/// its bound: what an evaluation spends compiling is bounded by its allowance, and a small
/// pattern costs little.
pub fn compile_cached(pattern: &str) -> Result<Arc<regex::Regex>> {
    if let Ok(c) = cache().lock()
        && let Some(re) = c.map.get(pattern)
    {
        return Ok(re.clone());
    }
    let translated = translate(pattern).map_err(GoError::into_error)?;
    let mut compiled = None;
    for &limit in COMPILE_STEPS {
        crate::limits::check_pattern_compile(limit)?;
        let dfa_limit = limit.clamp(CACHED_DFA_SIZE_LIMIT, SIZE_LIMIT);
        match build_translated(&translated, limit, dfa_limit) {
            // Only a program over its bound is tried again, with the next bound.
            Err(regex::Error::CompiledTooBig(_)) if limit < SIZE_LIMIT => continue,
            result => {
                compiled = Some((result.map_err(|e| map_regex_error(pattern, &e))?, limit));
                break;
            }
        }
    }
    let Some((re, limit)) = compiled else {
        return Err(GoError::new(EXPRESSION_TOO_LARGE, pattern).into_error());
    };
    if limit <= CACHED_SIZE_LIMIT
        && let Ok(mut c) = cache().lock()
    {
        let key: Arc<str> = Arc::from(pattern);
        if c.map.insert(key.clone(), re.clone()).is_none() {
            c.order.push_back(key);
            while c.order.len() > CACHE_CAPACITY {
                if let Some(old) = c.order.pop_front() {
                    c.map.remove(&old);
                }
            }
        }
    }
    Ok(re)
}

/// `s.matches(pattern)` with a pattern compiled through [`compile_cached`].
pub fn matches(s: &str, pattern: &str) -> Result<bool> {
    Ok(compile_cached(pattern)?.is_match(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str, p: &str) -> bool {
        matches(s, p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    fn err(p: &str) -> String {
        compile(p).err().map(|e| e.message).unwrap_or_default()
    }

    fn is_cached(p: &str) -> bool {
        cache().lock().unwrap().map.contains_key(p)
    }

    #[test]
    fn only_small_patterns_are_cached() {
        // Ordinary patterns are kept; one that compiles to megabytes still works, and is
        // compiled again the next time rather than kept.
        let small = "^[a-z]+-only-small-[0-9]+$";
        assert!(compile_cached(small).unwrap().is_match("abc-only-small-12"));
        assert!(is_cached(small));
        let big = "\\pL{100}-only-small";
        assert!(compile(big).is_ok());
        assert!(compile_within(big, CACHED_SIZE_LIMIT, CACHED_SIZE_LIMIT).is_err());
        let re = compile_cached(big).unwrap();
        assert!(re.is_match(&format!("{}-only-small", "é".repeat(100))));
        assert!(!is_cached(big));
    }

    #[test]
    fn a_program_s_constant_patterns_share_one_bound() {
        // About 4 MiB compiled from 40 characters: the allowance holds a handful, then the
        // next fails as too large, and once one has failed every further one fails.
        let big = "((abcdefghijklmnopqrstuvwxyz|u){100}){30}";
        let mut budget = PatternBudget::default();
        let mut compiled = 0;
        let message = loop {
            match budget.compile(big) {
                Ok(m) => {
                    assert!(m.is_match(&"u".repeat(3000)));
                    assert!(!m.is_match(&"u".repeat(2999)));
                    compiled += 1;
                    assert!(compiled < 20, "the allowance never ran out");
                }
                Err(e) => break e.message,
            }
        };
        assert!((2..=9).contains(&compiled), "{compiled} large patterns fit");
        assert_eq!(
            message,
            format!("error parsing regexp: expression too large: `{big}`")
        );
        // Once a pattern failed for its size, nothing is left.
        let e = budget.compile("a").err().map(|e| e.message);
        assert_eq!(
            e.as_deref(),
            Some("error parsing regexp: expression too large: `a`")
        );
        // Syntax errors cost nothing and read as `compile`'s.
        let mut budget = PatternBudget::default();
        assert_eq!(
            budget.compile("a(").err().map(|e| e.message),
            Some(err("a("))
        );
        assert!(budget.compile("^a+$").unwrap().is_match("aaa"));
    }

    #[test]
    fn patterns_compiled_while_evaluating_draw_on_the_evaluations_allowance() {
        // A large pattern is not cached, so each call compiles it again: an evaluation
        // may do so a few times, then the calls fail. Outside an evaluation nothing is
        // counted, and a new evaluation starts afresh.
        // A few MiB compiled: charged eight times the six bounds tried (5,460 KiB), so six
        // fit in the 256 MiB allowance.
        let big = "(abcdefghijklmnopqrstuvwxyz|u){1000}";
        let _evaluation = crate::limits::BuildAllowance::enter();
        let mut compiled = 0;
        let message = loop {
            match compile_cached(big) {
                Ok(_) => compiled += 1,
                Err(e) => break e.message,
            }
            assert!(compiled < 100, "the allowance never ran out");
        };
        assert_eq!(compiled, 6);
        assert_eq!(
            message,
            "compiling a regular expression: evaluation exceeds its allowance for built \
             values (268435456 bytes)"
        );
        // A syntax error is not retried with larger bounds, whatever the pattern says: each
        // is charged the first bound only, so 5,000 fit (retried, 40 would).
        drop(_evaluation);
        let _evaluation = crate::limits::BuildAllowance::enter();
        for _ in 0..5_000 {
            let e = compile_cached("expression too large: (")
                .map(|_| ())
                .unwrap_err();
            assert!(e.message.contains("missing closing )"), "{}", e.message);
        }
        // Small patterns are charged little: many still fit in a fresh evaluation.
        drop(_evaluation);
        let _evaluation = crate::limits::BuildAllowance::enter();
        for i in 0..5000 {
            assert!(compile_cached(&format!("^x{i}-allowance$")).is_ok());
        }
    }

    #[test]
    fn matchers_match_as_compiled_regexes_do() {
        let mut budget = PatternBudget::default();
        for (p, s) in [
            (r"\d+", "٣"),
            (r"\w", "é"),
            ("(?i)straße", "STRASSE"),
            ("^$", ""),
            ("a|", "b"),
            (r"\bfoo\b", "a foo."),
            ("[[:alpha:]]", "é"),
            (r"\pL", "é"),
            ("(?s).", "\n"),
            (".", "\n"),
        ] {
            let m = budget.compile(p).unwrap();
            assert_eq!(
                m.is_match(s),
                compile(p).unwrap().is_match(s),
                "{p} on {s:?}"
            );
        }
    }

    #[test]
    fn unanchored_and_flags() {
        assert!(m("abc", "b"));
        assert!(m("ABC", "(?i)b"));
        assert!(!m("abc", "^b"));
        assert!(m("a\nb", "(?m)^b$"));
        assert!(m("a.b", r"a\.b"));
        assert!(m("TesT", "(?i:t)es(?-i)T"));
        assert!(!m("TEST", "(?i:t)es(?-i)T"));
    }

    #[test]
    fn ascii_perl_classes() {
        assert!(!m("١", r"\d"));
        assert!(m("5", r"\d"));
        assert!(!m("\u{b}", r"\s"));
        assert!(m("\u{b}", r"\S"));
        assert!(!m("é", r"\w"));
        assert!(m("é", r"[\W]"));
        assert!(m("a b", r"a\sb"));
        assert!(m("x", r"[\d\sx]"));
        assert!(!m("é", r"\bé\b"));
        assert!(m("ab", r"\bab\b"));
        assert!(m("é", r"\pL"));
        assert!(m("é", r"\p{Latin}"));
        assert!(!m("é", r"\p{^Latin}"));
        assert!(m("A", r"\p{Lu}"));
        assert!(m("Ω", r"[\p{Greek}]"));
    }

    #[test]
    fn literal_readings() {
        assert!(m("[", "[[]"));
        assert!(m("&", "[a&&b]"));
        assert!(!m("c", "[a&&b]"));
        assert!(m("-", "[a-b-c]"));
        assert!(m("]", "[]a]"));
        assert!(m("a{", "a{"));
        assert!(m("a{,5}", "a{,5}"));
        assert!(m("a{01}", "a{01}"));
        assert!(m("aa", "a{2}"));
        assert!(m("a.b*", r"\Qa.b*\E"));
        assert!(m("A", r"\101"));
        assert!(m("\0", r"\0"));
        assert!(m(" ", r"\ "));
        assert!(m("_", r"\_"));
        assert!(m("x", r"\x78"));
        assert!(m("é", r"\x{e9}"));
        assert!(m("a", "[[:alpha:]]"));
        assert!(!m("a", "[[:^alpha:]]"));
        assert!(m("ab", "a(?:)b"));
        assert!(m("ab", "(?P<x>a)(?<y>b)"));
        assert!(m("aaa", "a*?"));
    }

    #[test]
    fn go_error_texts() {
        assert_eq!(err("["), "error parsing regexp: missing closing ]: `[`");
        assert_eq!(err("a[b"), "error parsing regexp: missing closing ]: `[b`");
        assert_eq!(err("(a"), "error parsing regexp: missing closing ): `(a`");
        assert_eq!(err("a)"), "error parsing regexp: unexpected ): `a)`");
        assert_eq!(
            err(r"\q"),
            "error parsing regexp: invalid escape sequence: `\\q`"
        );
        assert_eq!(
            err(r"\Z"),
            "error parsing regexp: invalid escape sequence: `\\Z`"
        );
        assert_eq!(
            err(r"\1"),
            "error parsing regexp: invalid escape sequence: `\\1`"
        );
        assert_eq!(
            err("a\\"),
            "error parsing regexp: trailing backslash at end of expression: ``"
        );
        assert_eq!(
            err("*"),
            "error parsing regexp: missing argument to repetition operator: `*`"
        );
        assert_eq!(
            err("(+)"),
            "error parsing regexp: missing argument to repetition operator: `+`"
        );
        assert_eq!(
            err("a|?"),
            "error parsing regexp: missing argument to repetition operator: `?`"
        );
        assert_eq!(
            err("a**"),
            "error parsing regexp: invalid nested repetition operator: `**`"
        );
        assert_eq!(
            err("a+*?"),
            "error parsing regexp: invalid nested repetition operator: `+*?`"
        );
        assert_eq!(
            err("a{1001}"),
            "error parsing regexp: invalid repeat count: `{1001}`"
        );
        assert_eq!(
            err("a{2,1}"),
            "error parsing regexp: invalid repeat count: `{2,1}`"
        );
        assert_eq!(
            err("[z-a]"),
            "error parsing regexp: invalid character class range: `z-a`"
        );
        assert_eq!(
            err("[[:foo:]]"),
            "error parsing regexp: invalid character class range: `[:foo:]`"
        );
        assert_eq!(
            err(r"\p{Foo1}"),
            "error parsing regexp: invalid character class range: `\\p{Foo1}`"
        );
        assert_eq!(
            err("(?x)a"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?x`"
        );
        assert_eq!(
            err("(?=a)"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
        );
        assert_eq!(
            err("(?P<>a)"),
            "error parsing regexp: invalid named capture: `(?P<>`"
        );
        assert_eq!(
            err("(?i-)a"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?i-)`"
        );
        assert!(err(r"\p{NoSuchScript}").starts_with("error parsing regexp: "));
    }

    #[test]
    fn size_is_bounded() {
        let e = err(r"\pL{1000}\pL{1000}\pL{1000}\pL{1000}\pL{1000}");
        assert!(e.starts_with("error parsing regexp: "), "{e}");
    }

    #[test]
    fn cache_returns_same_program() {
        let a = compile_cached("ab+c");
        let b = compile_cached("ab+c");
        assert!(matches!((a, b), (Ok(a), Ok(b)) if Arc::ptr_eq(&a, &b)));
    }
}
