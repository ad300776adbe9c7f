//! Literal values: turning the text of a number, string or bytes token into a [`Literal`].
//!
//! The lexer has already checked that escapes are well formed; this module decides what they
//! mean, following cel-go's `unescape.go`: in a string `\xff` and `\377` are the code point
//! U+00FF, in bytes they are the byte 0xFF; `\u` and `\U` are code points and only allowed in
//! strings; surrogates are rejected; newlines inside triple-quoted literals are normalised to
//! `\n`. Error messages are cel-go's.

use crate::ast::Literal;

/// cel-go's message for a string or bytes literal it cannot decode.
pub(crate) const UNESCAPE_ERROR: &str = "unable to unescape string";
/// cel-go's message for an escape naming a surrogate or a value past U+10FFFF.
pub(crate) const CODE_POINT_ERROR: &str = "invalid unicode code point";

/// The value of an int literal (`text` without sign), negated when `negative`.
pub(crate) fn parse_int(text: &str, negative: bool) -> Option<i64> {
    let (digits, radix) = match text.strip_prefix("0x") {
        Some(hex) => (hex, 16),
        None => (text, 10),
    };
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        if magnitude <= 1u64 << 63 {
            // 2^63 wraps to i64::MIN, which is exactly -2^63.
            Some((magnitude as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// The value of a uint literal, suffix included in `text`.
pub(crate) fn parse_uint(text: &str) -> Option<u64> {
    let text = &text[..text.len() - 1];
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// The value of a double literal, or `None` when it is out of range (cel-go rejects literals
/// that overflow to infinity; underflow to zero is accepted, as in Go's `ParseFloat`).
pub(crate) fn parse_double(text: &str, negative: bool) -> Option<f64> {
    let value: f64 = text.parse().ok()?;
    if !value.is_finite() {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// Decodes a string or bytes token (prefix and quotes included) into its value.
pub(crate) fn decode_quoted(token: &str) -> Result<Literal, &'static str> {
    let mut raw = false;
    let mut bytes = false;
    let mut rest = token;
    while let Some(c) = rest.chars().next() {
        match c {
            'r' | 'R' => raw = true,
            'b' | 'B' => bytes = true,
            _ => break,
        }
        rest = &rest[1..];
    }
    let quote = rest.chars().next().ok_or(UNESCAPE_ERROR)?;
    let body = if rest.len() >= 6 && rest.starts_with(&format!("{quote}{quote}{quote}")) {
        rest.get(3..rest.len() - 3)
    } else {
        rest.get(1..rest.len().saturating_sub(1))
    }
    .ok_or(UNESCAPE_ERROR)?;
    let value = unescape(body, raw, bytes)?;
    if bytes {
        Ok(Literal::Bytes(value))
    } else {
        String::from_utf8(value)
            .map(Literal::String)
            .map_err(|_| UNESCAPE_ERROR)
    }
}

fn hex_value(digits: &[u8]) -> Result<u32, &'static str> {
    let mut v: u32 = 0;
    for &d in digits {
        let x = (d as char).to_digit(16).ok_or(UNESCAPE_ERROR)?;
        v = v.checked_mul(16).ok_or(UNESCAPE_ERROR)? | x;
    }
    Ok(v)
}

fn push_char(out: &mut Vec<u8>, v: u32) -> Result<(), &'static str> {
    let c = char::from_u32(v).ok_or(CODE_POINT_ERROR)?;
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    Ok(())
}

/// Decodes the body of a literal (between the quotes). Strings come back as UTF-8 bytes.
fn unescape(body: &str, raw: bool, bytes: bool) -> Result<Vec<u8>, &'static str> {
    let src = body.as_bytes();
    if raw || !src.contains(&b'\\') {
        if !src.contains(&b'\r') {
            return Ok(src.to_vec());
        }
        return Ok(normalize_newlines(src));
    }
    let src = if src.contains(&b'\r') {
        normalize_newlines(src)
    } else {
        src.to_vec()
    };
    let mut out = Vec::with_capacity(src.len());
    let mut i = 0;
    while i < src.len() {
        let c = src[i];
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let esc = *src.get(i + 1).ok_or(UNESCAPE_ERROR)?;
        i += 2;
        let simple = match esc {
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            b'\\' | b'\'' | b'"' | b'`' | b'?' => Some(esc),
            _ => None,
        };
        if let Some(v) = simple {
            out.push(v);
            continue;
        }
        match esc {
            b'x' | b'X' => {
                let v = hex_value(src.get(i..i + 2).ok_or(UNESCAPE_ERROR)?)?;
                i += 2;
                if bytes {
                    out.push(v as u8);
                } else {
                    push_char(&mut out, v)?;
                }
            }
            b'u' | b'U' => {
                if bytes {
                    return Err(UNESCAPE_ERROR);
                }
                let n = if esc == b'u' { 4 } else { 8 };
                let v = hex_value(src.get(i..i + n).ok_or(UNESCAPE_ERROR)?)?;
                i += n;
                push_char(&mut out, v)?;
            }
            b'0'..=b'3' => {
                let digits = src.get(i..i + 2).ok_or(UNESCAPE_ERROR)?;
                let mut v = u32::from(esc - b'0');
                for &d in digits {
                    if !(b'0'..=b'7').contains(&d) {
                        return Err(UNESCAPE_ERROR);
                    }
                    v = v * 8 + u32::from(d - b'0');
                }
                i += 2;
                if bytes {
                    out.push(v as u8);
                } else {
                    push_char(&mut out, v)?;
                }
            }
            _ => return Err(UNESCAPE_ERROR),
        }
    }
    Ok(out)
}

/// Replaces `\r\n` and lone `\r` by `\n`, as cel-go does for every string literal.
fn normalize_newlines(src: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len());
    let mut i = 0;
    while i < src.len() {
        if src[i] == b'\r' {
            out.push(b'\n');
            i += if src.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
        } else {
            out.push(src[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(token: &str) -> Result<Literal, &'static str> {
        decode_quoted(token)
    }

    #[test]
    fn ints() {
        assert_eq!(parse_int("9223372036854775808", true), Some(i64::MIN));
        assert_eq!(parse_int("9223372036854775808", false), None);
        assert_eq!(parse_int("9223372036854775807", false), Some(i64::MAX));
        assert_eq!(parse_int("0x1F", false), Some(31));
        assert_eq!(parse_int("0x8000000000000000", true), Some(i64::MIN));
        assert_eq!(parse_uint("18446744073709551615u"), Some(u64::MAX));
        assert_eq!(parse_uint("18446744073709551616u"), None);
        assert_eq!(parse_uint("0xFFU"), Some(255));
    }

    #[test]
    fn doubles() {
        assert_eq!(parse_double("1e3", false), Some(1000.0));
        assert_eq!(parse_double(".5", true), Some(-0.5));
        assert_eq!(parse_double("1.99e90000009", false), None);
        assert_eq!(parse_double("1e-400", false), Some(0.0));
    }

    #[test]
    fn strings() {
        assert_eq!(s(r#""\xFF""#), Ok(Literal::String("\u{ff}".into())));
        assert_eq!(s(r#""\377""#), Ok(Literal::String("\u{ff}".into())));
        assert_eq!(s(r#"b"\377\xff""#), Ok(Literal::Bytes(vec![0xff, 0xff])));
        assert_eq!(s(r#"b"ÿ""#), Ok(Literal::Bytes(vec![0xc3, 0xbf])));
        assert_eq!(
            s(r#""\u263A\U0001F600""#),
            Ok(Literal::String("☺😀".into()))
        );
        assert_eq!(s(r#""\udead""#), Err(CODE_POINT_ERROR));
        assert_eq!(s(r#""\U00110000""#), Err(CODE_POINT_ERROR));
        assert_eq!(s(r#"b"\u00ff""#), Err(UNESCAPE_ERROR));
        assert_eq!(s(r#"r"\n""#), Ok(Literal::String("\\n".into())));
        assert_eq!(s("'''a\r\nb\rc'''"), Ok(Literal::String("a\nb\nc".into())));
        assert_eq!(
            s(r#""\a\b\f\n\r\t\v\\\?\"\'\`""#),
            Ok(Literal::String("\x07\x08\x0c\n\r\t\x0b\\?\"'`".into()))
        );
        assert_eq!(s("''"), Ok(Literal::String(String::new())));
        assert_eq!(s("\"\"\"\"\"\""), Ok(Literal::String(String::new())));
        assert_eq!(s("rb'\\x'"), Ok(Literal::Bytes(b"\\x".to_vec())));
    }
}
