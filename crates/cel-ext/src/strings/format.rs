//! `string.format(list)`: the formatter of cel-spec's `strings.md` (cel-go's strings version
//! 4 and later; versions 1 to 3 use [`super::legacy`]).
//!
//! Clauses are `%[.precision]conversion` with conversions `s d f e x X o b` and `%%` for a
//! percent sign; the default precision is 6; width and flags are not supported.
//!
//! * `%s`: strings as is; bytes as text (each run of invalid UTF-8 becomes one U+FFFD); ints
//!   and uints in base 10; doubles in their shortest form (`1`, `1.5`, `-0`, never with an
//!   exponent), `NaN`, `Infinity`, `-Infinity`; bools; `null`; durations as seconds (`90s`);
//!   timestamps in UTC RFC 3339; types by name; lists as `[a, b]`; maps as `{k: v}` sorted by
//!   the formatted key. Anything else is an error.
//! * `%d`: ints, uints, and doubles (as `%s` prints them).
//! * `%f`, `%e`: ints, uints and doubles, rounded half to even; `%e` writes at least two
//!   exponent digits (`1.052033e+03`).
//! * `%x`, `%X`: ints and uints in base 16 (`-ff` for negatives), strings and bytes as the hex
//!   of their bytes.
//! * `%o`: ints and uints in base 8. `%b`: ints, uints and bools in base 2.
//!
//! Errors read as cel-go's: `index 2 out of range`, `unexpected end of string`,
//! `could not parse formatting clause: unrecognized formatting clause "a"`,
//! `error during formatting: decimal clause can only be used on ints, uints, and doubles, was
//! given google.protobuf.Duration`, ...
//!
//! Nested lists and maps are formatted without recursion, so any depth is safe.

use std::fmt::Write as _;

use cel_runtime::{Error, Key, ListValue, Result, Value};

use super::aggregate::{AggregateStyle, write_aggregate};

/// The default `format` precision cap of strings version 5 and later (cel-go's).
pub const DEFAULT_MAX_PRECISION: usize = 100;

/// The precision cap below version 5, where cel-go has none: precisions above it are errors
/// here (with cel-go's version-5 message), so that a clause such as `%.999999999f` cannot
/// demand gigabytes. A double has at most 1,074 significant fractional digits, so no
/// precision above this cap can show anything but zeros.
pub const SAFETY_MAX_PRECISION: usize = 1_100;

/// `format_string.format(args)` with precisions up to `max_precision`.
pub fn format(format_string: &str, args: &ListValue, max_precision: usize) -> Result<String> {
    let bytes = format_string.as_bytes();
    let mut out = String::with_capacity(format_string.len());
    let mut i = 0;
    let mut arg_index = 0usize;
    let mut literal_start = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        out.push_str(&format_string[literal_start..i]);
        if bytes.get(i + 1) == Some(&b'%') {
            out.push('%');
            i += 2;
            literal_start = i;
            continue;
        }
        let Some(arg) = args.get(arg_index) else {
            return Err(Error::new(format!("index {arg_index} out of range")));
        };
        if i + 1 >= bytes.len() {
            return Err(Error::new("unexpected end of string"));
        }
        let (read, clause) = parse_clause(&bytes[i + 1..], max_precision)
            .map_err(|e| Error::new(format!("could not parse formatting clause: {e}")))?;
        apply(clause, arg, &mut out)
            .map_err(|e| Error::new(format!("error during formatting: {e}")))?;
        i += 1 + read;
        literal_start = i;
        arg_index += 1;
    }
    out.push_str(&format_string[literal_start..]);
    Ok(out)
}

/// One formatting clause, with its precision (6 when not given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Clause {
    String,
    Decimal,
    Fixed(usize),
    Scientific(usize),
    Binary,
    Hex { upper: bool },
    Octal,
}

/// Parses `[.precision]conversion` at the start of `s` (just after the `%`); returns the
/// number of bytes read.
pub(crate) fn parse_clause(
    s: &[u8],
    max_precision: usize,
) -> std::result::Result<(usize, Clause), String> {
    let mut i = 0;
    let mut precision = 6usize;
    if s.first() == Some(&b'.') {
        i = 1;
        let digits_start = i;
        loop {
            match s.get(i) {
                None => {
                    return Err(
                        "error while parsing precision: could not find end of precision specifier"
                            .to_string(),
                    );
                }
                Some(b) if b.is_ascii_digit() => i += 1,
                Some(_) => break,
            }
        }
        let digits = &s[digits_start..i];
        // Digits are ASCII, so this is valid UTF-8.
        let text = std::str::from_utf8(digits).unwrap_or_default();
        precision =
            parse_precision(text).map_err(|e| format!("error while parsing precision: {e}"))?;
        if precision > max_precision {
            return Err(format!(
                "error while parsing precision: precision {precision} exceeds maximum allowed precision {max_precision}"
            ));
        }
    }
    let Some(&c) = s.get(i) else {
        return Err("unexpected end of string".to_string());
    };
    let clause = match c {
        b's' => Clause::String,
        b'd' => Clause::Decimal,
        b'f' => Clause::Fixed(precision),
        b'e' => Clause::Scientific(precision),
        b'b' => Clause::Binary,
        b'x' => Clause::Hex { upper: false },
        b'X' => Clause::Hex { upper: true },
        b'o' => Clause::Octal,
        // cel-go reads the byte as a code point (Latin-1).
        other => {
            return Err(format!(
                "unrecognized formatting clause \"{}\"",
                char::from(other)
            ));
        }
    };
    Ok((i + 1, clause))
}

/// Go's `strconv.Atoi` on a string of ASCII digits, with its error texts.
fn parse_precision(text: &str) -> std::result::Result<usize, String> {
    if text.is_empty() {
        return Err(
            "error while converting precision to integer: strconv.Atoi: parsing \"\": invalid syntax"
                .to_string(),
        );
    }
    text.parse::<i64>()
        .ok()
        .and_then(|p| usize::try_from(p).ok())
        .ok_or_else(|| {
            format!(
                "error while converting precision to integer: strconv.Atoi: parsing \"{text}\": value out of range"
            )
        })
}

fn type_error(what: &str, v: &Value) -> String {
    format!("{what}, was given {}", v.type_name())
}

/// The `%s` clause's message.
pub(crate) const STRING_CLAUSE: &str = "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps";

fn apply(clause: Clause, arg: &Value, out: &mut String) -> std::result::Result<(), String> {
    match clause {
        Clause::String => format_string_clause(arg, out),
        Clause::Decimal => match arg {
            Value::Int(i) => {
                let _ = write!(out, "{i}");
                Ok(())
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u}");
                Ok(())
            }
            Value::Double(d) => {
                push_shortest(out, *d);
                Ok(())
            }
            _ => Err(type_error(
                "decimal clause can only be used on ints, uints, and doubles",
                arg,
            )),
        },
        Clause::Fixed(p) => match number(arg) {
            Some(d) => {
                push_fixed(out, d, p);
                Ok(())
            }
            None => Err(type_error(
                "fixed-point clause can only be used on ints, uints, and doubles",
                arg,
            )),
        },
        Clause::Scientific(p) => match number(arg) {
            Some(d) => {
                push_scientific(out, d, p);
                Ok(())
            }
            None => Err(type_error(
                "scientific clause can only be used on ints, uints, and doubles",
                arg,
            )),
        },
        Clause::Binary => match arg {
            Value::Bool(b) => {
                out.push(if *b { '1' } else { '0' });
                Ok(())
            }
            Value::Int(_) | Value::Uint(_) => {
                push_integer(out, arg, |out, u| {
                    let _ = write!(out, "{u:b}");
                });
                Ok(())
            }
            _ => Err(type_error(
                "only ints, uints, and bools can be formatted as binary",
                arg,
            )),
        },
        Clause::Hex { upper } => match arg {
            Value::Int(_) | Value::Uint(_) => {
                push_integer(out, arg, |out, u| push_hex_u64(out, u, upper));
                Ok(())
            }
            Value::String(s) => {
                push_hex_bytes(out, s.as_bytes(), upper);
                Ok(())
            }
            Value::Bytes(b) => {
                push_hex_bytes(out, b, upper);
                Ok(())
            }
            _ => Err(type_error(
                "only ints, uints, bytes, and strings can be formatted as hex",
                arg,
            )),
        },
        Clause::Octal => match arg {
            Value::Int(_) | Value::Uint(_) => {
                push_integer(out, arg, |out, u| {
                    let _ = write!(out, "{u:o}");
                });
                Ok(())
            }
            _ => Err(type_error(
                "octal clause can only be used on ints and uints",
                arg,
            )),
        },
    }
}

/// Writes an `int` or `uint` in some base: a `-` for a negative int, then `digits` of the
/// magnitude. Writes nothing for any other value.
fn push_integer(out: &mut String, arg: &Value, digits: impl Fn(&mut String, u64)) {
    match arg {
        Value::Int(i) => {
            if *i < 0 {
                out.push('-');
            }
            digits(out, i.unsigned_abs());
        }
        Value::Uint(u) => digits(out, *u),
        _ => {}
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Uint(u) => Some(*u as f64),
        Value::Double(d) => Some(*d),
        _ => None,
    }
}

fn push_hex_u64(out: &mut String, u: u64, upper: bool) {
    if upper {
        let _ = write!(out, "{u:X}");
    } else {
        let _ = write!(out, "{u:x}");
    }
}

fn push_hex_bytes(out: &mut String, b: &[u8], upper: bool) {
    out.reserve(b.len() * 2);
    for byte in b {
        if upper {
            let _ = write!(out, "{byte:02X}");
        } else {
            let _ = write!(out, "{byte:02x}");
        }
    }
}

/// `NaN`, `Infinity` or `-Infinity` for a non-finite double.
fn non_finite(d: f64) -> Option<&'static str> {
    if d.is_nan() {
        Some("NaN")
    } else if d.is_infinite() {
        Some(if d > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        None
    }
}

/// A double in its shortest positional form (Go's `FormatFloat(d, 'f', -1, 64)`).
fn push_shortest(out: &mut String, d: f64) {
    match non_finite(d) {
        Some(t) => out.push_str(t),
        None => out.push_str(&cel_runtime::format::format_double_fixed(d)),
    }
}

/// Go's `%.<p>f`: exactly `p` fractional digits, correctly rounded (ties to even).
fn push_fixed(out: &mut String, d: f64, p: usize) {
    match non_finite(d) {
        Some(t) => out.push_str(t),
        None => {
            let _ = write!(out, "{d:.p$}");
        }
    }
}

/// Go's `%1.<p>e`: `d.ddde±XX` with at least two exponent digits.
fn push_scientific(out: &mut String, d: f64, p: usize) {
    if let Some(t) = non_finite(d) {
        out.push_str(t);
        return;
    }
    let text = format!("{d:.p$e}");
    let (mantissa, exp) = text.split_once('e').unwrap_or((text.as_str(), "0"));
    out.push_str(mantissa);
    out.push('e');
    let (sign, digits) = match exp.strip_prefix('-') {
        Some(rest) => ('-', rest),
        None => ('+', exp),
    };
    out.push(sign);
    if digits.len() < 2 {
        out.push('0');
    }
    out.push_str(digits);
}

/// Appends bytes as text, each maximal run of invalid UTF-8 replaced by one U+FFFD.
fn push_bytes_as_text(out: &mut String, mut b: &[u8]) {
    loop {
        match std::str::from_utf8(b) {
            Ok(s) => {
                out.push_str(s);
                return;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                // The prefix is valid UTF-8 by construction.
                out.push_str(std::str::from_utf8(&b[..valid]).unwrap_or_default());
                out.push('\u{FFFD}');
                let mut rest = &b[valid..];
                // Skip this and any directly following invalid sequences.
                loop {
                    let skip = match std::str::from_utf8(rest) {
                        Ok(_) => 0,
                        Err(e) if e.valid_up_to() == 0 => e.error_len().unwrap_or(rest.len()),
                        Err(_) => 0,
                    };
                    if skip == 0 {
                        break;
                    }
                    rest = &rest[skip..];
                }
                b = rest;
            }
        }
    }
}

/// A scalar as `%s` prints it, or `None` for lists and maps.
fn push_scalar(v: &Value, out: &mut String) -> Option<std::result::Result<(), String>> {
    let r = match v {
        Value::Bool(b) => {
            out.push_str(if *b { "true" } else { "false" });
            Ok(())
        }
        Value::Int(i) => {
            let _ = write!(out, "{i}");
            Ok(())
        }
        Value::Uint(u) => {
            let _ = write!(out, "{u}");
            Ok(())
        }
        Value::Double(d) => {
            push_shortest(out, *d);
            Ok(())
        }
        Value::String(s) => {
            out.push_str(s);
            Ok(())
        }
        Value::Bytes(b) => {
            push_bytes_as_text(out, b);
            Ok(())
        }
        Value::Duration(d) => {
            out.push_str(&cel_runtime::time::format_duration(*d));
            Ok(())
        }
        Value::Timestamp(ts) => {
            let utc = cel_runtime::Timestamp::utc(ts.seconds, ts.nanos);
            out.push_str(&cel_runtime::time::format_timestamp(utc));
            Ok(())
        }
        Value::Null => {
            out.push_str("null");
            Ok(())
        }
        Value::Type(t) => {
            out.push_str(t.runtime_name());
            Ok(())
        }
        Value::List(_) | Value::Map(_) => return None,
        other => Err(type_error(STRING_CLAUSE, other)),
    };
    Some(r)
}

/// A map key as `%s` writes it.
fn key_text(k: &Key) -> String {
    match k {
        Key::Bool(b) => b.to_string(),
        Key::Int(i) => i.to_string(),
        Key::Uint(u) => u.to_string(),
        Key::String(s) => s.to_string(),
    }
}

/// An element of a list or map as `%s` writes it (lists and maps are the walker's).
fn element_text(v: &Value, out: &mut String) -> std::result::Result<(), String> {
    push_scalar(v, out).unwrap_or(Ok(()))
}

/// How `%s` writes lists and maps: elements as themselves, `key: value`.
const STYLE: AggregateStyle = AggregateStyle {
    element: element_text,
    key: key_text,
    key_separator: ": ",
};

/// `%s` of any value, lists and maps at any depth without recursion.
fn format_string_clause(v: &Value, out: &mut String) -> std::result::Result<(), String> {
    write_aggregate(v, out, &STYLE)
}
