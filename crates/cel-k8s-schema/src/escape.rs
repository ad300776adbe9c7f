//! Property names as CEL identifiers, as Kubernetes escapes them.
//!
//! A property whose name is a CEL reserved word is selected as `__word__` (`self.__if__`);
//! `__`, `.`, `-` and `/` inside a name become `__underscores__`, `__dot__`, `__dash__` and
//! `__slash__` (`self.foo__dash__bar` reads `foo-bar`). A name that is empty, starts with a
//! digit or holds any other character cannot be escaped: the property is not a field of the
//! CEL type, though it still counts in equality and as a list-map key. Map keys are never
//! escaped.

use std::sync::OnceLock;

use regex::Regex;

/// CEL's reserved words, which Kubernetes escapes as `__word__`.
pub const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// Whether a name is a CEL reserved word.
pub fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name)
}

/// The identifier a property is selected by, or `None` if the name cannot be escaped.
pub fn escape(name: &str) -> Option<String> {
    let first = name.bytes().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if is_reserved(name) {
        return Some(format!("__{name}__"));
    }
    let plain = name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    if plain && !name.contains("__") {
        return Some(name.to_string());
    }
    let mut out = String::with_capacity(name.len() + 16);
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        let (piece, len) = match c {
            '_' if rest.starts_with("__") => ("__underscores__", 2),
            '.' => ("__dot__", 1),
            '-' => ("__dash__", 1),
            '/' => ("__slash__", 1),
            c if c.is_ascii_alphanumeric() || c == '_' => {
                out.push(c);
                rest = &rest[1..];
                continue;
            }
            _ => return None,
        };
        out.push_str(piece);
        rest = &rest[len..];
    }
    Some(out)
}

/// The property name an identifier selects, or `None` if it holds an escape sequence that
/// is not one (`__int__x`, `__illegal__`).
pub fn unescape(escaped: &str) -> Option<String> {
    static SEQUENCE: OnceLock<Regex> = OnceLock::new();
    if !escaped.contains("__") {
        return Some(escaped.to_string());
    }
    let re = SEQUENCE.get_or_init(|| Regex::new(r"__[^_]+__").expect("a valid pattern"));
    let mut out = String::with_capacity(escaped.len());
    let mut last = 0;
    for m in re.find_iter(escaped) {
        out.push_str(&escaped[last..m.start()]);
        let contents = &escaped[m.start() + 2..m.end() - 2];
        match contents {
            "underscores" => out.push_str("__"),
            "dot" => out.push('.'),
            "dash" => out.push('-'),
            "slash" => out.push('/'),
            // A reserved word is only an escape when it is the whole identifier.
            word if is_reserved(word) && m.len() == escaped.len() => out.push_str(word),
            _ => return None,
        }
        last = m.end();
    }
    out.push_str(&escaped[last..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_kubernetes_does() {
        let cases = [
            ("self", Some("self")),
            ("int", Some("int")),
            ("namespace", Some("__namespace__")),
            ("if", Some("__if__")),
            ("foo-bar", Some("foo__dash__bar")),
            ("a.b/c", Some("a__dot__b__slash__c")),
            ("a___a", Some("a__underscores___a")),
            ("a____a", Some("a__underscores____underscores__a")),
            ("a__dot__a", Some("a__underscores__dot__underscores__a")),
            ("_a_b_", Some("_a_b_")),
            ("1up", None),
            ("", None),
            ("k!", None),
            ("@", None),
            ("👑", None),
            ("a-b@", None),
        ];
        for (name, want) in cases {
            assert_eq!(escape(name).as_deref(), want, "{name}");
        }
    }

    #[test]
    fn unescapes_as_kubernetes_does() {
        let cases = [
            ("foo__dash__bar", Some("foo-bar")),
            ("__namespace__", Some("namespace")),
            ("a__underscores___a", Some("a___a")),
            ("a__underscores____underscores__a", Some("a____a")),
            ("__int__extra", None),
            ("x__if__", None),
            ("__illegal__", None),
            ("plain", Some("plain")),
        ];
        for (name, want) in cases {
            assert_eq!(unescape(name).as_deref(), want, "{name}");
        }
        for name in ["foo-bar", "a___a", "a.b/c", "namespace", "a__dot__a"] {
            assert_eq!(
                unescape(&escape(name).unwrap()).as_deref(),
                Some(name),
                "{name}"
            );
        }
    }
}
