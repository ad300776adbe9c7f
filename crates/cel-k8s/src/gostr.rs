//! Small pieces of Go's standard library whose exact output appears in error messages.

use std::fmt::Write as _;

/// Go's `strconv.Quote`: a double-quoted string with Go escapes for quotes, backslashes,
/// control characters and characters Go does not consider printable.
pub(crate) fn quote(s: &str) -> String {
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
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if !is_print(c) => {
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
/// practice: control characters, the C1 range, line/paragraph separators, format
/// characters and non-characters are not printable.
fn is_print(c: char) -> bool {
    let u = c as u32;
    !(c.is_control()
        || (0x2028..=0x2029).contains(&u)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(quote("\n\u{1}"), r#""\n\x01""#);
        assert_eq!(quote("日本"), "\"日本\"");
        assert_eq!(quote("\u{2028}"), r#""\u2028""#);
    }
}
