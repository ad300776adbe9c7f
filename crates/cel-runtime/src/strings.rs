//! The standard string functions and `size`: `size` counts code points of strings, bytes of
//! bytes and entries of lists and maps; `contains`, `startsWith` and `endsWith` compare
//! bytes (which, for UTF-8, is comparing code points). None of them allocates.

use crate::{Error, Result, Value};

/// Whether two byte strings are equal, the short ones (below 17 bytes: variable names, the
/// constant pieces of most expressions) with two overlapping loads each instead of a call to
/// `memcmp`, which costs more than the comparison.
#[inline]
pub fn bytes_equal(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        // Positions 0, n/2 and n-1 cover every byte of 1 to 3.
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => ends_equal::<4>(a, b),
        8..=16 => ends_equal::<8>(a, b),
        _ => a == b,
    }
}

/// Whether the first and the last `N` bytes of `a` and `b` (of one length, at least `N` and
/// at most `2N`, so that the two cover every byte) are equal: one load and compare each.
#[inline(always)]
fn ends_equal<const N: usize>(a: &[u8], b: &[u8]) -> bool {
    a.first_chunk::<N>() == b.first_chunk::<N>() && a.last_chunk::<N>() == b.last_chunk::<N>()
}

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
    s.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| bytes_equal(head, prefix.as_bytes()))
}

/// `s.endsWith(suffix)`.
#[inline]
pub fn ends_with(s: &str, suffix: &str) -> bool {
    s.len()
        .checked_sub(suffix.len())
        .is_some_and(|at| bytes_equal(&s.as_bytes()[at..], suffix.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_suffixes() {
        for (s, t) in [
            ("", ""),
            ("abc", ""),
            ("", "a"),
            ("héllo", "hé"),
            ("ab", "abc"),
        ] {
            assert_eq!(starts_with(s, t), s.starts_with(t), "{s:?} {t:?}");
            assert_eq!(ends_with(s, t), s.ends_with(t), "{s:?} {t:?}");
        }
        let long = "x".repeat(40) + "yz";
        assert!(starts_with(&long, &"x".repeat(20)) && !starts_with(&long, "xy"));
        assert!(ends_with(&long, "xxyz") && !ends_with(&long, "xz"));
    }

    #[test]
    fn bytes_equal_sees_every_byte_at_every_length() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(bytes_equal(&a, &a.clone()), "length {n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!bytes_equal(&a, &b), "length {n}, byte {at}");
            }
            let longer: Vec<u8> = a.iter().copied().chain([b'a']).collect();
            assert!(!bytes_equal(&a, &longer), "length {n} against {}", n + 1);
        }
    }

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
