//! Turning values into text: Go's `%g` for doubles (what `string(double)` returns), the
//! `%v`-style text cel-go puts into error messages, Go's `strconv.Quote` ([`go_quote`]) for the
//! inputs those messages quote, and [`to_cel_literal`], which writes any value as CEL source
//! that evaluates back to the same value.
//!
//! Timestamp and duration text lives in [`crate::time`]; this module only calls it.
//!
//! Every printer here walks nested lists and maps with an explicit work list, so a value nested
//! ten thousand levels deep prints without growing the call stack.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};

use crate::{Key, Value};

/// The shortest decimal digits that round-trip `x` (positive, finite, non-zero), and the
/// position of the decimal point: `x = 0.d1d2d3… × 10^dp`.
fn shortest_digits(x: f64, digits: &mut String) -> i32 {
    // `{:e}` prints the shortest round-trip digits, like Go's shortest mode.
    let s = format!("{x:e}");
    let (mant, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    digits.clear();
    digits.extend(mant.chars().filter(char::is_ascii_digit));
    let exp: i32 = exp.parse().unwrap_or(0);
    exp + 1
}

/// Appends digits in Go's `%e` layout: `d.ddde±XX` (at least two exponent digits).
fn push_exponent_form(out: &mut String, digits: &str, dp: i32) {
    let mut chars = digits.chars();
    if let Some(first) = chars.next() {
        out.push(first);
    }
    let rest = chars.as_str();
    if !rest.is_empty() {
        out.push('.');
        out.push_str(rest);
    }
    let exp = dp - 1;
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let abs = exp.unsigned_abs();
    if abs < 10 {
        out.push('0');
    }
    let _ = write!(out, "{abs}");
}

/// Appends digits in plain positional form (Go's `%f` with the shortest precision).
fn push_fixed_form(out: &mut String, digits: &str, dp: i32) {
    let nd = digits.len() as i32;
    if dp <= 0 {
        out.push_str("0.");
        for _ in 0..(-dp) {
            out.push('0');
        }
        out.push_str(digits);
    } else if dp >= nd {
        out.push_str(digits);
        for _ in 0..(dp - nd) {
            out.push('0');
        }
    } else {
        let (int, frac) = digits.split_at(dp as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    }
}

/// Go's `strconv.Quote`, for error messages that quote their input as cel-go's do: a
/// double-quoted string with Go's escapes for quotes, backslashes, control characters and
/// characters Go does not consider printable ([`go_is_print`]).
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if !go_is_print(c) => {
                if (c as u32) < 0x10000 {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                } else {
                    let _ = write!(out, "\\U{:08x}", c as u32);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `strconv.IsPrint` good for the characters that occur in
/// practice: control characters, spaces other than the ASCII space, the C1 range,
/// line/paragraph separators, format characters, private use and non-characters are not
/// printable.
pub fn go_is_print(c: char) -> bool {
    let u = c as u32;
    !(c.is_control()
        || (c.is_whitespace() && c != ' ')
        || (0x200b..=0x200f).contains(&u)
        || (0x202a..=0x202e).contains(&u)
        || (0x2060..=0x206f).contains(&u)
        || u == 0xfeff
        || u == 0xad
        || (0xfff9..=0xfffb).contains(&u)
        || (u & 0xfffe) == 0xfffe
        || (0xe000..=0xf8ff).contains(&u)
        || u >= 0xf0000)
}

/// Formats a double as Go's `fmt.Sprintf("%g", x)`: the shortest digits that round-trip,
/// exponent form when the decimal exponent is < −4 or ≥ 6, `+Inf`, `-Inf`, `NaN`, `-0`.
///
/// This is `string(double)` and the text cel-go shows for doubles in error messages.
pub fn format_double(x: f64) -> String {
    let mut out = String::new();
    push_double(&mut out, x);
    out
}

/// Appends [`format_double`]'s text.
pub fn push_double(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "+Inf" } else { "-Inf" });
        return;
    }
    if x.is_sign_negative() {
        out.push('-');
    }
    if x == 0.0 {
        out.push('0');
        return;
    }
    let mut digits = String::with_capacity(17);
    let dp = shortest_digits(x.abs(), &mut digits);
    let exp = dp - 1;
    if !(-4..6).contains(&exp) {
        push_exponent_form(out, &digits, dp);
    } else {
        push_fixed_form(out, &digits, dp);
    }
}

/// Formats a finite double in positional notation with the shortest digits that round-trip,
/// as Go's `strconv.FormatFloat(x, 'f', -1, 64)`.
pub fn format_double_fixed(x: f64) -> String {
    let mut out = String::new();
    if !x.is_finite() {
        push_double(&mut out, x);
        return out;
    }
    if x.is_sign_negative() && x != 0.0 {
        out.push('-');
    }
    if x == 0.0 {
        if x.is_sign_negative() {
            out.push('-');
        }
        out.push('0');
        return out;
    }
    let mut digits = String::with_capacity(17);
    let dp = shortest_digits(x.abs(), &mut digits);
    push_fixed_form(&mut out, &digits, dp);
    out
}

/// Writes a double as a CEL double literal that parses back to the same value: always with
/// a decimal point or an exponent (`2.0`, `1e+20`, `-0.0`), and `double("NaN")`,
/// `double("Infinity")`, `double("-Infinity")` for the non-finite values.
pub fn double_literal(x: f64) -> String {
    let mut out = String::new();
    push_double_literal(&mut out, x);
    out
}

fn push_double_literal(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("double(\"NaN\")");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 {
            "double(\"Infinity\")"
        } else {
            "double(\"-Infinity\")"
        });
        return;
    }
    let start = out.len();
    push_double(out, x);
    if !out[start..].contains(['.', 'e']) {
        out.push_str(".0");
    }
}

/// Appends a string as a double-quoted CEL string literal.
pub fn push_string_literal(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends bytes as a CEL bytes literal: printable ASCII as is, everything else `\xHH`.
pub fn push_bytes_literal(out: &mut String, b: &[u8]) {
    out.push_str("b\"");
    for &byte in b {
        match byte {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(byte as char),
            _ => {
                let _ = write!(out, "\\x{byte:02x}");
            }
        }
    }
    out.push('"');
}

/// The total order used to sort map keys when printing: bools, then numbers (ints and uints
/// on one number line, an int before an equal uint), then strings.
pub fn key_order(a: &Key, b: &Key) -> Ordering {
    fn rank(k: &Key) -> u8 {
        match k {
            Key::Bool(_) => 0,
            Key::Int(_) | Key::Uint(_) => 1,
            Key::String(_) => 2,
        }
    }
    match (a, b) {
        (Key::Bool(x), Key::Bool(y)) => x.cmp(y),
        (Key::Int(x), Key::Int(y)) => x.cmp(y),
        (Key::Uint(x), Key::Uint(y)) => x.cmp(y),
        (Key::Int(x), Key::Uint(y)) => i128::from(*x).cmp(&i128::from(*y)).then(Ordering::Less),
        (Key::Uint(x), Key::Int(y)) => i128::from(*x).cmp(&i128::from(*y)).then(Ordering::Greater),
        (Key::String(x), Key::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// How [`write_value`] renders values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    /// CEL source that evaluates to the value.
    Literal,
    /// Human-readable: like the literal, but opaque values show their type and debug text.
    Display,
}

enum Task<'a> {
    Value(&'a Value),
    Key(&'a Key),
    Name(&'a str),
    Text(&'static str),
}

fn write_value(v: &Value, style: Style) -> String {
    let mut out = String::new();
    let mut work = vec![Task::Value(v)];
    while let Some(task) = work.pop() {
        let v = match task {
            Task::Text(t) => {
                out.push_str(t);
                continue;
            }
            Task::Key(k) => {
                push_key_literal(&mut out, k);
                continue;
            }
            Task::Name(k) => {
                push_string_literal(&mut out, k);
                continue;
            }
            Task::Value(v) => v,
        };
        match v {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u}u");
            }
            Value::Double(d) => push_double_literal(&mut out, *d),
            Value::String(s) => push_string_literal(&mut out, s),
            Value::Bytes(b) => push_bytes_literal(&mut out, b),
            Value::Timestamp(ts) => {
                out.push_str("timestamp(\"");
                out.push_str(&crate::time::format_timestamp(*ts));
                out.push_str("\")");
            }
            Value::Duration(d) => {
                out.push_str("duration(\"");
                out.push_str(&crate::time::format_duration_exact(*d));
                out.push_str("\")");
            }
            Value::Type(t) => out.push_str(t.runtime_name()),
            Value::Optional(None) => out.push_str("optional.none()"),
            Value::Optional(Some(inner)) => {
                out.push_str("optional.of(");
                work.push(Task::Text(")"));
                work.push(Task::Value(inner));
            }
            Value::Opaque(o) => {
                // Library values write the expression that rebuilds them, in both styles.
                let _ = style;
                o.write_cel(&mut out);
            }
            Value::Message(m) => {
                let _ = write!(out, "{}{{{}}}", m.type_name(), m.message().to_text_format());
            }
            Value::List(l) => {
                out.push('[');
                work.push(Task::Text("]"));
                for (i, item) in l.iter().enumerate().rev() {
                    work.push(Task::Value(item));
                    if i > 0 {
                        work.push(Task::Text(", "));
                    }
                }
            }
            Value::Object(o) => {
                // Written as the map of its data (property names as in the data, sorted),
                // which is what it is at run time.
                out.push('{');
                work.push(Task::Text("}"));
                let mut entries: Vec<(&str, &Value)> = o.data_entries().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                for (i, (k, v)) in entries.into_iter().enumerate().rev() {
                    work.push(Task::Value(v));
                    work.push(Task::Text(": "));
                    work.push(Task::Name(k));
                    if i > 0 {
                        work.push(Task::Text(", "));
                    }
                }
            }
            Value::Map(m) => {
                out.push('{');
                work.push(Task::Text("}"));
                let mut entries: Vec<(&Key, &Value)> = m.iter().collect();
                entries.sort_by(|a, b| key_order(a.0, b.0));
                for (i, (k, v)) in entries.into_iter().enumerate().rev() {
                    work.push(Task::Value(v));
                    work.push(Task::Text(": "));
                    work.push(Task::Key(k));
                    if i > 0 {
                        work.push(Task::Text(", "));
                    }
                }
            }
        }
    }
    out
}

fn push_key_literal(out: &mut String, k: &Key) {
    match k {
        Key::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Key::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Key::Uint(u) => {
            let _ = write!(out, "{u}u");
        }
        Key::String(s) => push_string_literal(out, s),
    }
}

/// Writes the value as CEL source that evaluates back to the same value: `5`, `5u`, `2.0`,
/// `"s"`, `b"\x00"`, `[1, 2]`, `{"a": 1}` (keys sorted by [`key_order`]), `null`,
/// `timestamp("2023-01-01T00:00:00Z")`, `duration("3s")`, `optional.of(1)`,
/// `optional.none()`, type values by name (`int`, `list`), and library values as the
/// expression that rebuilds them ([`crate::OpaqueValue::write_cel`]: `ip("10.0.0.1")`,
/// `quantity("70k")`).
///
/// Works on arbitrarily deep values (no recursion).
pub fn to_cel_literal(v: &Value) -> String {
    write_value(v, Style::Literal)
}

/// Human-readable text for a value; currently the same as [`to_cel_literal`].
pub fn display(v: &Value) -> String {
    write_value(v, Style::Display)
}

/// A value as [`display`] writes it: CEL source that rebuilds it (`[1, 2]`, `"s"`,
/// `quantity("70k")`).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&display(self))
    }
}

/// The text cel-go's `%v` gives a value inside error messages (`no such key: b`,
/// `index out of bounds: 2`): strings without quotes, numbers without suffix, doubles as
/// [`format_double`]. Aggregates fall back to [`display`].
pub fn error_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Double(d) => format_double(*d),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_string(),
        other => display(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("\n\u{1}\u{7f}"), r#""\n\x01\x7f""#);
        assert_eq!(go_quote("日本é"), "\"日本é\"");
        // Spaces other than ' ', separators and format characters are escaped.
        assert_eq!(go_quote("a b\u{a0}"), r#""a b\u00a0""#);
        assert_eq!(go_quote("\u{2028}\u{200b}"), r#""\u2028\u200b""#);
        assert_eq!(go_quote("\u{f0000}"), r#""\U000f0000""#);
    }

    #[test]
    fn go_percent_g() {
        let cases: &[(f64, &str)] = &[
            (1.0, "1"),
            (1.5, "1.5"),
            (100.0, "100"),
            (999999.0, "999999"),
            (1000000.0, "1e+06"),
            (123456.7, "123456.7"),
            (123456789.0, "1.23456789e+08"),
            (1e20, "1e+20"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e-7, "1e-07"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-0.0, "-0"),
            (0.0, "0"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::NAN, "NaN"),
            (9007199254740993_i64 as f64, "9.007199254740992e+15"),
            (-2.5, "-2.5"),
            (1e100, "1e+100"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
        ];
        for (x, want) in cases {
            assert_eq!(format_double(*x), *want, "{x:?}");
        }
    }

    #[test]
    fn fixed_shortest() {
        assert_eq!(format_double_fixed(1.5), "1.5");
        assert_eq!(format_double_fixed(3600.0), "3600");
        assert_eq!(format_double_fixed(1e-9), "0.000000001");
        assert_eq!(format_double_fixed(-90.0), "-90");
        assert_eq!(format_double_fixed(0.0), "0");
        assert_eq!(format_double_fixed(1e21), "1000000000000000000000");
    }

    #[test]
    fn literals() {
        assert_eq!(to_cel_literal(&Value::Int(5)), "5");
        assert_eq!(
            to_cel_literal(&Value::Int(i64::MIN)),
            "-9223372036854775808"
        );
        assert_eq!(to_cel_literal(&Value::Uint(5)), "5u");
        assert_eq!(to_cel_literal(&Value::Double(2.0)), "2.0");
        assert_eq!(to_cel_literal(&Value::Double(-0.0)), "-0.0");
        assert_eq!(to_cel_literal(&Value::Double(1e20)), "1e+20");
        assert_eq!(to_cel_literal(&Value::Double(0.5)), "0.5");
        assert_eq!(to_cel_literal(&Value::Double(f64::NAN)), "double(\"NaN\")");
        assert_eq!(
            to_cel_literal(&Value::Double(f64::NEG_INFINITY)),
            "double(\"-Infinity\")"
        );
        assert_eq!(
            to_cel_literal(&Value::from("a\"b\\\n\u{1}é")),
            "\"a\\\"b\\\\\\n\\u0001é\""
        );
        assert_eq!(
            to_cel_literal(&Value::bytes(vec![0u8, b'a', 0xff])),
            "b\"\\x00a\\xff\""
        );
        assert_eq!(to_cel_literal(&Value::Null), "null");
        assert_eq!(to_cel_literal(&Value::Bool(true)), "true");
        assert_eq!(
            to_cel_literal(&Value::list(vec![Value::Int(1), Value::Int(2)])),
            "[1, 2]"
        );
        let m = Value::map([
            (Key::String("b".into()), Value::Int(2)),
            (Key::Uint(1), Value::Null),
            (Key::String("a".into()), Value::Int(1)),
            (Key::Int(1), Value::Null),
            (Key::Bool(true), Value::Null),
            (Key::Int(-3), Value::list(vec![])),
        ]);
        assert_eq!(
            to_cel_literal(&m),
            "{true: null, -3: [], 1: null, 1u: null, \"a\": 1, \"b\": 2}"
        );
        assert_eq!(
            to_cel_literal(&Value::Timestamp(crate::Timestamp::utc(1672531200, 0))),
            "timestamp(\"2023-01-01T00:00:00Z\")"
        );
        assert_eq!(
            to_cel_literal(&Value::Duration(crate::Duration {
                nanos: 3_000_000_000
            })),
            "duration(\"3s\")"
        );
        assert_eq!(
            to_cel_literal(&Value::optional_of(Value::Int(1))),
            "optional.of(1)"
        );
        assert_eq!(to_cel_literal(&Value::optional_none()), "optional.none()");
        assert_eq!(
            to_cel_literal(&Value::type_value(cel_types::Type::Int)),
            "int"
        );
        assert_eq!(
            to_cel_literal(&Value::type_value(cel_types::Type::list(
                cel_types::Type::Int
            ))),
            "list"
        );
        assert_eq!(
            to_cel_literal(&Value::type_value(cel_types::Type::Timestamp)),
            "google.protobuf.Timestamp"
        );
    }

    #[test]
    fn error_texts() {
        assert_eq!(error_text(&Value::from("b")), "b");
        assert_eq!(error_text(&Value::Double(1.5)), "1.5");
        assert_eq!(error_text(&Value::Double(2.0)), "2");
        assert_eq!(error_text(&Value::Uint(5)), "5");
    }
}
