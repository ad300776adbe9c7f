//! `string.format(list)` as cel-go's strings library versions 1 to 3 have it (cel-go's
//! `ext/formatting.go`, which Kubernetes runs with strings version 2): the formatter from
//! before the cel-spec `strings.md` one, with numbers written by Go's `golang.org/x/text`
//! message printer for the `en_US` locale.
//!
//! It differs from the version-4 formatter ([`super::format`]) in these ways:
//!
//! * `%s` of a double is its `string()` text (`2.71`, `2e-09`, `+Inf`); of a timestamp its
//!   `string()` text with the offset it was written with; of bytes their text, an error for
//!   invalid UTF-8.
//! * Inside lists and maps (`%s`), values are written as CEL literals: strings and bytes
//!   quoted as Go's `%q` does (`"a"`, `b"xyz"`), doubles with six decimals (`2.710000`, or
//!   `"+Inf"`, `"NaN"` quoted), timestamps and durations as `timestamp("...")` and
//!   `duration("...")`, types by name; map entries are `key:value` without a space, sorted by
//!   the written key. Values of other types are the error `no formatting function for T`.
//! * `%d`, `%o`: ints and uints only; `%b`: ints, uints and bools; `%x`, `%X`: ints, uints,
//!   strings and bytes; `%f` and `%e`: doubles, or the strings `NaN`, `Infinity` and
//!   `-Infinity`. The errors say "integers" and "doubles" (`decimal clause can only be used
//!   on integers, was given double`).
//! * `%f` groups the integer digits (`1,234.500000`) and writes infinities as `∞` and `-∞`.
//! * `%e` writes `3.140000 × 10⁰⁰` (narrow no-break spaces around `×`, a superscript exponent
//!   of at least two digits). cel-go hands the clause's precision to the printer as a *width*
//!   (`%.3e` becomes Go's `%3e`), so the precision is always 6 and a larger number pads the
//!   result on the left with spaces to that many characters (`NaN` included).
//!
//! Lists and maps nested to any depth are written without recursion.

use std::fmt::Write as _;

use cel_runtime::format::go_quote;
use cel_runtime::{Key, ListValue, Value};

use super::aggregate::{AggregateStyle, write_aggregate};
use super::format::{Clause, parse_clause};

/// How `%e` writes the `×` before the exponent. It comes from the CLDR data of the
/// `golang.org/x/text` a program is built with: up to v0.22.0 (which cel-go v0.29.2's own
/// tests use, and Kubernetes up to 1.32), narrow no-break spaces around it
/// (`3.140000 × 10⁰⁰`); from v0.23.0 (Kubernetes 1.33 on), none (`3.140000×10⁰⁰`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExponentStyle {
    /// `3.140000\u{202f}×\u{202f}10⁰⁰`.
    #[default]
    Spaced,
    /// `3.140000×10⁰⁰`.
    Tight,
}

/// `format_string.format(args)` with cel-go's legacy formatter, precisions up to
/// `max_precision`, exponents written in `style`.
pub fn format(
    format_string: &str,
    args: &ListValue,
    max_precision: usize,
    style: ExponentStyle,
) -> Result<String, String> {
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
            return Err(format!("index {arg_index} out of range"));
        };
        if i + 1 >= bytes.len() {
            return Err("unexpected end of string".to_string());
        }
        let (read, clause) = parse_clause(&bytes[i + 1..], max_precision)
            .map_err(|e| format!("could not parse formatting clause: {e}"))?;
        apply(clause, arg, style, &mut out).map_err(|e| format!("error during formatting: {e}"))?;
        i += 1 + read;
        literal_start = i;
        arg_index += 1;
    }
    out.push_str(&format_string[literal_start..]);
    Ok(out)
}

fn type_error(what: &str, v: &Value) -> String {
    format!("{what}, was given {}", v.type_name())
}

/// The message of the `%s` clause for a value it cannot write.
pub const STRING_CLAUSE: &str = "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps";
/// The `%d` clause's message.
pub const DECIMAL_CLAUSE: &str = "decimal clause can only be used on integers";
/// The `%f` clause's message.
pub const FIXED_CLAUSE: &str = "fixed-point clause can only be used on doubles";
/// The `%e` clause's message.
pub const SCIENTIFIC_CLAUSE: &str = "scientific clause can only be used on doubles";
/// The `%b` clause's message.
pub const BINARY_CLAUSE: &str = "only integers and bools can be formatted as binary";
/// The `%x` and `%X` clauses' message.
pub const HEX_CLAUSE: &str = "only integers, byte buffers, and strings can be formatted as hex";
/// The `%o` clause's message.
pub const OCTAL_CLAUSE: &str = "octal clause can only be used on integers";

fn apply(
    clause: Clause,
    arg: &Value,
    style: ExponentStyle,
    out: &mut String,
) -> Result<(), String> {
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
            _ => Err(type_error(DECIMAL_CLAUSE, arg)),
        },
        Clause::Fixed(p) => {
            let d = float_arg(arg).ok_or_else(|| type_error(FIXED_CLAUSE, arg))?;
            out.push_str(&en_fixed(d, p));
            Ok(())
        }
        Clause::Scientific(width) => {
            let d = float_arg(arg).ok_or_else(|| type_error(SCIENTIFIC_CLAUSE, arg))?;
            out.push_str(&en_scientific(d, width, style));
            Ok(())
        }
        Clause::Binary => match arg {
            Value::Int(i) => {
                if *i < 0 {
                    out.push('-');
                }
                let _ = write!(out, "{:b}", i.unsigned_abs());
                Ok(())
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u:b}");
                Ok(())
            }
            Value::Bool(b) => {
                out.push(if *b { '1' } else { '0' });
                Ok(())
            }
            _ => Err(type_error(BINARY_CLAUSE, arg)),
        },
        Clause::Hex { upper } => {
            let hex_bytes = |out: &mut String, b: &[u8]| {
                for byte in b {
                    let _ = if upper {
                        write!(out, "{byte:02X}")
                    } else {
                        write!(out, "{byte:02x}")
                    };
                }
            };
            match arg {
                Value::String(s) => hex_bytes(out, s.as_bytes()),
                Value::Bytes(b) => hex_bytes(out, b),
                Value::Int(i) => {
                    if *i < 0 {
                        out.push('-');
                    }
                    let m = i.unsigned_abs();
                    let _ = if upper {
                        write!(out, "{m:X}")
                    } else {
                        write!(out, "{m:x}")
                    };
                }
                Value::Uint(u) => {
                    let _ = if upper {
                        write!(out, "{u:X}")
                    } else {
                        write!(out, "{u:x}")
                    };
                }
                _ => return Err(type_error(HEX_CLAUSE, arg)),
            }
            Ok(())
        }
        Clause::Octal => match arg {
            Value::Int(i) => {
                if *i < 0 {
                    out.push('-');
                }
                let _ = write!(out, "{:o}", i.unsigned_abs());
                Ok(())
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u:o}");
                Ok(())
            }
            _ => Err(type_error(OCTAL_CLAUSE, arg)),
        },
    }
}

/// The double a `%f` or `%e` clause formats: a double, or one of the strings `NaN`,
/// `Infinity` and `-Infinity`.
fn float_arg(v: &Value) -> Option<f64> {
    match v {
        Value::Double(d) => Some(*d),
        Value::String(s) => match &**s {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// Go's `message.NewPrinter(en_US).Sprintf("%.<p>f", x)`: correctly rounded to `p`
/// decimals (ties to even), the integer digits grouped by threes with `,`, `∞` for
/// infinities and `NaN`.
pub fn en_fixed(x: f64, p: usize) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    // x/text takes the sign from `x < 0`, so -0.0 is written without one.
    let neg = x < 0.0;
    let sign = if neg { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}∞");
    }
    let text = format!("{:.p$}", x.abs());
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (text.as_str(), None),
    };
    let mut out = String::with_capacity(text.len() + text.len() / 3 + 1);
    out.push_str(sign);
    push_grouped(&mut out, int);
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// Writes ASCII digits with a `,` before every group of three from the right.
fn push_grouped(out: &mut String, digits: &str) {
    let n = digits.len();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (n - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
}

/// The superscript digits x/text writes exponents with.
const SUPERSCRIPT: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];

/// Go's `message.NewPrinter(en_US).Sprintf("%<width>e", x)`: seven significant digits
/// (`d.dddddd`), then ` × 10` (narrow no-break spaces) and the exponent in superscript with
/// at least two digits (`⁻` for negative), padded on the left with spaces to `width`
/// characters; `NaN`, `∞` and `-∞` are padded too.
pub fn en_scientific(x: f64, width: usize, style: ExponentStyle) -> String {
    let body = if x.is_nan() {
        "NaN".to_string()
    } else if x.is_infinite() {
        if x < 0.0 { "-∞" } else { "∞" }.to_string()
    } else {
        let sign = if x < 0.0 { "-" } else { "" };
        let text = format!("{:.6e}", x.abs());
        let (mantissa, exp) = text.split_once('e').unwrap_or((text.as_str(), "0"));
        let exp: i64 = exp.parse().unwrap_or(0);
        let mut out = String::with_capacity(32);
        out.push_str(sign);
        out.push_str(mantissa);
        out.push_str(match style {
            ExponentStyle::Spaced => "\u{202f}×\u{202f}10",
            ExponentStyle::Tight => "×10",
        });
        if exp < 0 {
            out.push('⁻');
        }
        let digits = exp.unsigned_abs().to_string();
        if digits.len() < 2 {
            out.push(SUPERSCRIPT[0]);
        }
        for c in digits.bytes() {
            out.push(SUPERSCRIPT[usize::from(c - b'0')]);
        }
        out
    };
    let count = body.chars().count();
    if count < width {
        let mut padded = " ".repeat(width - count);
        padded.push_str(&body);
        padded
    } else {
        body
    }
}

/// `%s` of a value: scalars as their `string()` text, lists and maps as literals.
fn format_string_clause(v: &Value, out: &mut String) -> Result<(), String> {
    match v {
        Value::List(_) | Value::Map(_) => write_aggregate(v, out, &STYLE),
        _ => string_text(v, out),
    }
}

/// A scalar's `string()` text, as `%s` writes it at the top level.
fn string_text(v: &Value, out: &mut String) -> Result<(), String> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Type(t) => out.push_str(t.runtime_name()),
        Value::Int(_)
        | Value::Uint(_)
        | Value::Double(_)
        | Value::Bool(_)
        | Value::String(_)
        | Value::Timestamp(_)
        | Value::Bytes(_)
        | Value::Duration(_) => match &cel_runtime::convert::to_string(v) {
            Ok(Value::String(s)) => out.push_str(s),
            Ok(_) => {}
            Err(e) => {
                return Err(format!(
                    "could not convert argument {} to string",
                    go_quote(&e.message)
                ));
            }
        },
        other => return Err(type_error(STRING_CLAUSE, other)),
    }
    Ok(())
}

/// A value as an element of a list or map: its literal form (cel-go's `clauseForType`, then
/// `quoteForCEL`).
fn element_text(v: &Value, out: &mut String) -> Result<(), String> {
    match v {
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Uint(u) => {
            let _ = write!(out, "{u}");
        }
        Value::String(s) => out.push_str(&go_quote(s)),
        Value::Bytes(_) => {
            let mut text = String::new();
            string_text(v, &mut text)?;
            out.push('b');
            out.push_str(&go_quote(&text));
        }
        Value::Bool(_) | Value::Null | Value::Type(_) => string_text(v, out)?,
        Value::Timestamp(_) | Value::Duration(_) => {
            let mut text = String::new();
            string_text(v, &mut text)?;
            out.push_str(if matches!(v, Value::Timestamp(_)) {
                "timestamp("
            } else {
                "duration("
            });
            out.push_str(&go_quote(&text));
            out.push(')');
        }
        Value::Double(d) => {
            if d.is_finite() {
                let _ = write!(out, "{d:.6}");
            } else {
                // Go's `%.6f` of a non-finite double, quoted.
                let t = if d.is_nan() {
                    "NaN"
                } else if *d > 0.0 {
                    "+Inf"
                } else {
                    "-Inf"
                };
                out.push_str(&go_quote(t));
            }
        }
        other => return Err(format!("no formatting function for {}", other.type_name())),
    }
    Ok(())
}

/// A map key as cel-go writes it: strings quoted, bools and numbers as they are.
fn key_text(k: &Key) -> String {
    match k {
        Key::String(s) => go_quote(s),
        Key::Bool(b) => b.to_string(),
        Key::Int(i) => i.to_string(),
        Key::Uint(u) => u.to_string(),
    }
}

/// How the legacy `%s` writes lists and maps: elements as literals, `key:value`.
const STYLE: AggregateStyle = AggregateStyle {
    element: element_text,
    key: key_text,
    key_separator: ":",
};

#[cfg(test)]
#[allow(
    clippy::approx_constant,
    reason = "the values of cel-go's tests, which are not meant as e or pi"
)]
mod tests {
    use super::*;

    fn list(items: Vec<Value>) -> ListValue {
        ListValue::from(items)
    }

    fn fmt(f: &str, items: Vec<Value>) -> Result<String, String> {
        format(f, &list(items), 1_100, ExponentStyle::Spaced)
    }

    #[test]
    fn numbers_as_x_text_writes_them_for_en_us() {
        // cel-go v0.29.2 ext/formatting_test.go TestStringFormat (strings version 3).
        assert_eq!(en_fixed(1.2345, 3), "1.234");
        assert_eq!(en_fixed(2.71828, 6), "2.718280");
        assert_eq!(en_fixed(f64::INFINITY, 6), "∞");
        assert_eq!(en_fixed(f64::NEG_INFINITY, 6), "-∞");
        assert_eq!(en_fixed(f64::NAN, 6), "NaN");
        assert_eq!(en_fixed(1234567.891, 2), "1,234,567.89");
        assert_eq!(en_fixed(-1234.5, 1), "-1,234.5");
        assert_eq!(en_fixed(-0.0, 2), "0.00");
        assert_eq!(en_fixed(999.9999, 2), "1,000.00");
        assert_eq!(
            en_scientific(1052.032911275, 6, ExponentStyle::Spaced),
            "1.052033\u{202f}\u{d7}\u{202f}10\u{2070}\u{b3}"
        );
        assert_eq!(
            en_scientific(2.71828, 6, ExponentStyle::Spaced),
            "2.718280\u{202f}\u{d7}\u{202f}10\u{2070}\u{2070}"
        );
        assert_eq!(
            en_scientific(0.00123, 6, ExponentStyle::Spaced),
            "1.230000\u{202f}×\u{202f}10⁻⁰³"
        );
        // Kubernetes 1.33 on (golang.org/x/text v0.23.0 and later).
        assert_eq!(
            en_scientific(3.14, 6, ExponentStyle::Tight),
            "3.140000×10⁰⁰"
        );
        assert_eq!(
            en_scientific(1e300, 6, ExponentStyle::Spaced),
            "1.000000\u{202f}×\u{202f}10³⁰⁰"
        );
        assert_eq!(en_scientific(f64::NAN, 6, ExponentStyle::Spaced), "   NaN");
        assert_eq!(
            en_scientific(3.14, 20, ExponentStyle::Spaced),
            "     3.140000\u{202f}×\u{202f}10⁰⁰"
        );
    }

    #[test]
    fn strings_lists_and_maps() {
        assert_eq!(
            fmt("%s", vec![Value::list(vec![Value::Double(2.71)])]).unwrap(),
            "[2.710000]"
        );
        assert_eq!(fmt("%s", vec![Value::Double(2e-9)]).unwrap(), "2e-09");
        assert_eq!(
            fmt("%s", vec![Value::Double(f64::INFINITY)]).unwrap(),
            "+Inf"
        );
        assert_eq!(
            fmt(
                "%s",
                vec![Value::list(vec![
                    Value::Double(f64::NAN),
                    Value::Double(f64::NEG_INFINITY)
                ])]
            )
            .unwrap(),
            r#"["NaN", "-Inf"]"#
        );
        let m = Value::map([
            (Key::String("b".into()), Value::Int(2)),
            (Key::String("a".into()), Value::from("x")),
        ]);
        assert_eq!(fmt("%s", vec![m]).unwrap(), r#"{"a":"x", "b":2}"#);
        assert_eq!(
            fmt("%d", vec![Value::Double(1.5)]).unwrap_err(),
            "error during formatting: decimal clause can only be used on integers, was given double"
        );
        assert_eq!(
            fmt("%s", vec![Value::list(vec![Value::optional_none()])]).unwrap_err(),
            "error during formatting: no formatting function for optional_type"
        );
        assert_eq!(fmt("%x", vec![Value::Int(-30)]).unwrap(), "-1e");
        assert_eq!(fmt("%b", vec![Value::Bool(true)]).unwrap(), "1");
        assert_eq!(fmt("%f", vec![Value::from("Infinity")]).unwrap(), "∞");
    }
}
