//! The standard string functions and `size`: `size` counts code points of strings, bytes of
//! bytes and entries of lists and maps; `contains`, `startsWith` and `endsWith` compare
//! bytes (which, for UTF-8, is comparing code points). None of them allocates.

use crate::{Error, Result, Value};

/// `size(string)`: the number of Unicode code points (`size('héllo')` is 5).
#[inline]
pub fn size_string(s: &str) -> i64 {
    if s.is_ascii() {
        s.len() as i64
    } else {
        s.chars().count() as i64
    }
}

/// `size(bytes)`: the number of bytes.
#[inline]
pub fn size_bytes(b: &[u8]) -> i64 {
    b.len() as i64
}

/// `size(v)` for any value: strings, bytes, lists and maps; "no such overload" otherwise.
pub fn size(v: &Value) -> Result<Value> {
    Ok(Value::Int(match v {
        Value::String(s) => size_string(s),
        Value::Bytes(b) => size_bytes(b),
        Value::List(l) => l.len() as i64,
        Value::Map(m) => m.len() as i64,
        _ => return Err(Error::no_such_overload()),
    }))
}

/// `s.contains(sub)`.
#[inline]
pub fn contains(s: &str, sub: &str) -> bool {
    s.contains(sub)
}

/// `s.startsWith(prefix)`.
#[inline]
pub fn starts_with(s: &str, prefix: &str) -> bool {
    s.as_bytes().starts_with(prefix.as_bytes())
}

/// `s.endsWith(suffix)`.
#[inline]
pub fn ends_with(s: &str, suffix: &str) -> bool {
    s.as_bytes().ends_with(suffix.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(size_string("héllo"), 5);
        assert_eq!(size_bytes("héllo".as_bytes()), 6);
        assert_eq!(size_string(""), 0);
        assert!(matches!(
            size(&Value::list(vec![Value::Null])),
            Ok(Value::Int(1))
        ));
        assert!(matches!(size(&Value::map([])), Ok(Value::Int(0))));
        assert_eq!(size(&Value::Int(1)).err(), Some(Error::no_such_overload()));
    }

    #[test]
    fn substrings() {
        assert!(contains("abc", ""));
        assert!(starts_with("abc", ""));
        assert!(ends_with("abc", ""));
        assert!(contains("héllo", "él"));
        assert!(starts_with("héllo", "hé"));
        assert!(ends_with("héllo", "llo"));
        assert!(!starts_with("ab", "abc"));
    }
}
