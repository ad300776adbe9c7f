//! `pattern` regular expressions in Go's RE2 dialect, run with the `regex` crate.
//!
//! The two dialects agree on most syntax. Where they differ, the Go pattern is rewritten
//! before compiling so that it matches what Go's `regexp` matches:
//!
//! * `\d`, `\s`, `\w` (and their negations) are ASCII-only in Go, Unicode in `regex`: they
//!   become explicit ASCII classes; `\b`, `\B` become ASCII word boundaries.
//! * `\Q...\E` quotes a literal in Go; `regex` has no such syntax.
//! * Octal escapes (`\0`, `\12`, `\177`) are Go escapes; `regex` needs `\x{..}`.
//! * A `{` that does not start a valid repetition (`a{`, `{x}`, `a{,3}`) is a literal in Go.
//! * `[` inside a class is a literal in Go and a nested class in `regex`; `&&`, `--`, `~~`
//!   are literals in Go and set operations in `regex`.
//! * Go caps repetition counts at 1000.
//!
//! Error texts follow Go's (`error parsing regexp: missing argument to repetition operator:
//! `+``) for the common mistakes found while rewriting; any other error the `regex` crate
//! reports is given with Go's prefix and the crate's own words (a known difference).

use regex::Regex;

/// Compiles a Go (RE2) pattern; the error is Go's `regexp.Compile` error text.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    let translated = translate(pattern)?;
    Regex::new(&translated).map_err(|e| {
        let text = e.to_string();
        let summary = text
            .lines()
            .rev()
            .find(|l| l.starts_with("error: "))
            .map(|l| l.trim_start_matches("error: ").to_string())
            .unwrap_or(text);
        format!("error parsing regexp: {summary}: `{pattern}`")
    })
}

fn go_error(code: &str, fragment: &str) -> String {
    format!("error parsing regexp: {code}: `{fragment}`")
}

const ASCII_DIGIT: &str = "0-9";
const ASCII_SPACE: &str = r"\t\n\x0C\r ";
const ASCII_WORD: &str = "0-9A-Za-z_";

/// Rewrites a Go pattern into the `regex` crate's syntax (see the module docs).
fn translate(p: &str) -> Result<String, String> {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 8);
    let mut i = 0;
    // Whether a repetition operator here would have something to repeat.
    let mut can_repeat = false;
    let mut open_groups: Vec<usize> = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                i = translate_escape(&chars, i, &mut out, false)?;
                can_repeat = true;
                continue;
            }
            '[' => {
                i = translate_class(&chars, i, &mut out)?;
                can_repeat = true;
                continue;
            }
            '(' => {
                open_groups.push(i);
                out.push('(');
                can_repeat = false;
                // Group flags and names pass through (`(?i)`, `(?P<n>`, `(?:`).
                if chars.get(i + 1) == Some(&'?') {
                    let end = chars[i..]
                        .iter()
                        .position(|&ch| ch == ')' || ch == ':' || ch == '>')
                        .map_or(chars.len(), |n| i + n);
                    for &ch in &chars[i + 1..end.min(chars.len())] {
                        out.push(ch);
                    }
                    i = end;
                    if chars.get(i) == Some(&')') {
                        open_groups.pop();
                        out.push(')');
                    } else if let Some(&ch) = chars.get(i) {
                        out.push(ch);
                    }
                    i += 1;
                    continue;
                }
            }
            ')' => {
                if open_groups.pop().is_none() {
                    return Err(go_error("unexpected )", p));
                }
                out.push(')');
                can_repeat = true;
            }
            '|' => {
                out.push('|');
                can_repeat = false;
            }
            '*' | '+' | '?' => {
                if !can_repeat {
                    return Err(go_error(
                        "missing argument to repetition operator",
                        &c.to_string(),
                    ));
                }
                out.push(c);
                // A lazy marker may follow; a second operator is Go's nested-repetition error,
                // which `regex` reports too.
                if chars.get(i + 1) == Some(&'?') {
                    out.push('?');
                    i += 1;
                }
            }
            '{' => match repeat_at(&chars, i) {
                Some((end, min, max)) => {
                    let text: String = chars[i..end].iter().collect();
                    if min > 1000 || max.is_some_and(|m| m > 1000 || m < min) {
                        return Err(go_error("invalid repeat count", &text));
                    }
                    if !can_repeat {
                        return Err(go_error("missing argument to repetition operator", &text));
                    }
                    out.push_str(&text);
                    i = end;
                    if chars.get(i) == Some(&'?') {
                        out.push('?');
                        i += 1;
                    }
                    continue;
                }
                None => {
                    out.push_str("\\{");
                    can_repeat = true;
                }
            },
            '}' => {
                out.push_str("\\}");
                can_repeat = true;
            }
            '^' | '$' => {
                out.push(c);
                can_repeat = true;
            }
            _ => {
                out.push(c);
                can_repeat = true;
            }
        }
        i += 1;
    }
    if !open_groups.is_empty() {
        return Err(go_error("missing closing )", p));
    }
    Ok(out)
}

/// A Go repetition `{n}`, `{n,}` or `{n,m}` starting at `i`: its end and bounds.
fn repeat_at(chars: &[char], i: usize) -> Option<(usize, u32, Option<u32>)> {
    let mut j = i + 1;
    let digits = |j: &mut usize| -> Option<u32> {
        let start = *j;
        while chars.get(*j).is_some_and(char::is_ascii_digit) {
            *j += 1;
        }
        if *j == start {
            return None;
        }
        let text: String = chars[start..*j].iter().collect();
        Some(text.parse().unwrap_or(u32::MAX))
    };
    let min = digits(&mut j)?;
    let max = match chars.get(j) {
        Some('}') => Some(min),
        Some(',') => {
            j += 1;
            if chars.get(j) == Some(&'}') {
                None
            } else {
                Some(digits(&mut j)?)
            }
        }
        _ => return None,
    };
    (chars.get(j) == Some(&'}')).then_some((j + 1, min, max))
}

/// Translates the escape at `i` (a backslash); returns the index after it.
fn translate_escape(
    chars: &[char],
    i: usize,
    out: &mut String,
    in_class: bool,
) -> Result<usize, String> {
    let Some(&e) = chars.get(i + 1) else {
        return Err(go_error("trailing backslash at end of expression", ""));
    };
    let class = |out: &mut String, set: &str, negated: bool| {
        if in_class && !negated {
            out.push_str(set);
        } else {
            out.push('[');
            if negated {
                out.push('^');
            }
            out.push_str(set);
            out.push(']');
        }
    };
    match e {
        'd' => class(out, ASCII_DIGIT, false),
        'D' => class(out, ASCII_DIGIT, true),
        's' => class(out, ASCII_SPACE, false),
        'S' => class(out, ASCII_SPACE, true),
        'w' => class(out, ASCII_WORD, false),
        'W' => class(out, ASCII_WORD, true),
        'b' | 'B' if !in_class => {
            out.push_str("(?-u:\\");
            out.push(e);
            out.push(')');
        }
        'Q' if !in_class => {
            let mut j = i + 2;
            while j < chars.len() && !(chars[j] == '\\' && chars.get(j + 1) == Some(&'E')) {
                push_literal(out, chars[j]);
                j += 1;
            }
            return Ok(if j < chars.len() { j + 2 } else { j });
        }
        '0'..='7' => {
            // Go: `\0` and a two- or three-digit `\[1-7]..` are octal; a lone `\1` is an error.
            let mut j = i + 1;
            let max_len = 3;
            while j < chars.len() && j < i + 1 + max_len && ('0'..='7').contains(&chars[j]) {
                j += 1;
            }
            if e != '0' && j == i + 2 {
                let text: String = chars[i..j].iter().collect();
                return Err(go_error("invalid escape sequence", &text));
            }
            let digits: String = chars[i + 1..j].iter().collect();
            let code = u32::from_str_radix(&digits, 8).unwrap_or(0);
            out.push_str(&format!("\\x{{{code:X}}}"));
            return Ok(j);
        }
        'p' | 'P' | 'x' if chars.get(i + 2) == Some(&'{') => {
            // `\p{Greek}`, `\x{263a}`: the braces belong to the escape.
            let Some(close) = chars[i + 2..].iter().position(|&c| c == '}') else {
                let text: String = chars[i..].iter().collect();
                return Err(go_error("invalid escape sequence", &text));
            };
            out.extend(&chars[i..i + 3 + close]);
            return Ok(i + 3 + close);
        }
        _ => {
            out.push('\\');
            out.push(e);
        }
    }
    Ok(i + 2)
}

fn push_literal(out: &mut String, c: char) {
    if regex_syntax_meta(c) {
        out.push('\\');
    }
    out.push(c);
}

fn regex_syntax_meta(c: char) -> bool {
    matches!(
        c,
        '\\' | '.'
            | '+'
            | '*'
            | '?'
            | '('
            | ')'
            | '|'
            | '['
            | ']'
            | '{'
            | '}'
            | '^'
            | '$'
            | '#'
            | '&'
            | '-'
            | '~'
    )
}

/// Translates the class starting at `i` (a `[`); returns the index after its `]`.
fn translate_class(chars: &[char], i: usize, out: &mut String) -> Result<usize, String> {
    let start = i;
    let mut j = i + 1;
    out.push('[');
    if chars.get(j) == Some(&'^') {
        out.push('^');
        j += 1;
    }
    // A `]` right after `[` or `[^` is a literal in Go.
    if chars.get(j) == Some(&']') {
        out.push_str("\\]");
        j += 1;
    }
    while j < chars.len() {
        let c = chars[j];
        match c {
            ']' => {
                out.push(']');
                return Ok(j + 1);
            }
            '\\' => {
                j = translate_escape(chars, j, out, true)?;
                continue;
            }
            '[' if chars.get(j + 1) == Some(&':') => {
                // `[:alpha:]` passes through.
                let rest: String = chars[j..].iter().collect();
                match rest.find(":]") {
                    Some(end) => {
                        out.push_str(&rest[..end + 2]);
                        j += rest[..end + 2].chars().count();
                        continue;
                    }
                    None => out.push_str("\\["),
                }
            }
            '[' | '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '-' if chars.get(j + 1) == Some(&'-') => {
                // `--` is a set difference in `regex`; in Go the first `-` is a range end or
                // a literal.
                out.push_str("\\-");
            }
            _ => out.push(c),
        }
        j += 1;
    }
    let fragment: String = chars[start..].iter().collect();
    Err(go_error("missing closing ]", &fragment))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_match(p: &str, s: &str) -> bool {
        compile(p).unwrap().is_match(s)
    }

    #[test]
    fn perl_classes_are_ascii() {
        assert!(is_match(r"^\d+$", "123"));
        assert!(!is_match(r"^\d+$", "١٢٣"));
        assert!(!is_match(r"^\w+$", "é"));
        assert!(is_match(r"^[\w.-]+$", "a_b.c-d"));
        assert!(is_match(r"^[\D]$", "x"));
        assert!(!is_match(r"^\s$", "\u{a0}"));
        assert!(is_match(r"\bfoo\b", "a foo b"));
    }

    #[test]
    fn go_literals() {
        assert!(is_match(r"^\Q.*\E$", ".*"));
        assert!(!is_match(r"^\Q.*\E$", "ab"));
        assert!(is_match(r"^a{$", "a{"));
        assert!(is_match(r"^a{,3}$", "a{,3}"));
        assert!(is_match(r"^[a[]+$", "a[a"));
        assert!(is_match(r"^[a&&b]+$", "&a"));
        assert!(is_match(r"^\101$", "A"));
        assert!(is_match(r"^a{2,3}$", "aaa"));
        assert!(is_match(r"^[[:alpha:]]+$", "abc"));
        assert!(is_match(r"^(?i)abc$", "ABC"));
        assert!(is_match(r"^(?P<x>a)b$", "ab"));
        assert!(is_match(r"^\p{Greek}+\x{41}$", "αβA"));
        assert!(is_match(r"^[\p{Lu}]\pL$", "Ab"));
        assert!(is_match(r"^(?:a|b)+$", "abba"));
    }

    #[test]
    fn go_errors() {
        assert_eq!(
            compile("+").unwrap_err(),
            "error parsing regexp: missing argument to repetition operator: `+`"
        );
        assert_eq!(
            compile("a)").unwrap_err(),
            "error parsing regexp: unexpected ): `a)`"
        );
        assert_eq!(
            compile("(a").unwrap_err(),
            "error parsing regexp: missing closing ): `(a`"
        );
        assert_eq!(
            compile("x[a-").unwrap_err(),
            "error parsing regexp: missing closing ]: `[a-`"
        );
        assert_eq!(
            compile("a{1001}").unwrap_err(),
            "error parsing regexp: invalid repeat count: `{1001}`"
        );
        assert_eq!(
            compile("a\\").unwrap_err(),
            "error parsing regexp: trailing backslash at end of expression: ``"
        );
        assert!(compile(r"\1").is_err());
    }
}
