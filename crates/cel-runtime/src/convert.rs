//! Type conversions: `int`, `uint`, `double`, `string`, `bytes`, `bool`, `timestamp`,
//! `duration`, `type` and `dyn`, with cel-go's range rules and error texts.
//!
//! * Narrowing numeric conversions fail with "integer overflow" / "unsigned integer
//!   overflow" (`int(1e19)`, `uint(-1)`, `int(NaN)`); both bounds of `int(double)` are
//!   exclusive, as in cel-go.
//! * Text conversions follow Go's `strconv`: `int(string)` is base 10 with an optional sign,
//!   `uint(string)` takes no sign, `double(string)` is `ParseFloat` (`nan`, `inf`,
//!   `Infinity`, `1_000`, hex floats), `bool(string)` is `ParseBool`. Failures are
//!   "type conversion error from 'string' to 'int'" (and so on).
//! * `string(double)` is Go's `%g` ([`crate::format::format_double`]); `string(bytes)` needs
//!   valid UTF-8 ("invalid UTF-8 in bytes, cannot convert to string").
//! * `int(timestamp)` is epoch seconds, `int(duration)` nanoseconds; `timestamp(int)` reads
//!   epoch seconds. `duration(int)` is declared by cel-go, but its runtime conversion has no
//!   int → duration case, so it fails with "type conversion error from 'int' to
//!   'google.protobuf.Duration'", as in cel-go.

use std::sync::{Arc, OnceLock};

use cel_types::Type;

use crate::arith::{int_overflow, uint_overflow};
use crate::time;
use crate::{Duration, Error, Result, Timestamp, Value};

/// 2^63 as a double.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
/// 2^64 as a double.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// The name cel-go prints for a conversion target or source type.
const TIMESTAMP: &str = "google.protobuf.Timestamp";
const DURATION: &str = "google.protobuf.Duration";

/// "type conversion error from 'string' to 'int'".
#[cold]
pub fn conversion_error(from: &str, to: &str) -> Error {
    Error::new(format!("type conversion error from '{from}' to '{to}'"))
}

/// `int(double)`: truncates toward zero; NaN, ±Inf, ≤ −2^63 and ≥ 2^63 are "integer overflow".
#[inline]
pub fn int_from_double(d: f64) -> Result<i64> {
    if d.is_nan() || d <= -TWO_POW_63 || d >= TWO_POW_63 {
        Err(int_overflow())
    } else {
        Ok(d as i64)
    }
}

/// `int(uint)`: "integer overflow" above 2^63 − 1.
#[inline]
pub fn int_from_uint(u: u64) -> Result<i64> {
    i64::try_from(u).map_err(|_| int_overflow())
}

/// `int(string)`: base 10, optional `+` or `-`, nothing else.
pub fn int_from_string(s: &str) -> Result<i64> {
    s.parse::<i64>()
        .map_err(|_| conversion_error("string", "int"))
}

/// `int(timestamp)`: seconds since the Unix epoch.
#[inline]
pub fn int_from_timestamp(ts: Timestamp) -> i64 {
    ts.seconds
}

/// `int(duration)`: nanoseconds (a cel-go extension).
#[inline]
pub fn int_from_duration(d: Duration) -> i64 {
    d.nanos
}

/// `uint(int)`: "unsigned integer overflow" for negative values.
#[inline]
pub fn uint_from_int(i: i64) -> Result<u64> {
    u64::try_from(i).map_err(|_| uint_overflow())
}

/// `uint(double)`: truncates; NaN, ±Inf, negative values (even `-0.5`) and ≥ 2^64 are
/// "unsigned integer overflow".
#[inline]
pub fn uint_from_double(d: f64) -> Result<u64> {
    if d.is_nan() || !(0.0..TWO_POW_64).contains(&d) {
        Err(uint_overflow())
    } else {
        Ok(d as u64)
    }
}

/// `uint(string)`: base 10 digits only (no sign at all).
pub fn uint_from_string(s: &str) -> Result<u64> {
    if s.starts_with('+') {
        return Err(conversion_error("string", "uint"));
    }
    s.parse::<u64>()
        .map_err(|_| conversion_error("string", "uint"))
}

/// `double(string)`: Go's `strconv.ParseFloat(s, 64)`.
pub fn double_from_string(s: &str) -> Result<f64> {
    go_parse_float(s).ok_or_else(|| conversion_error("string", "double"))
}

/// `bool(string)`: Go's `strconv.ParseBool`.
pub fn bool_from_string(s: &str) -> Result<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(conversion_error("string", "bool")),
    }
}

/// `string(bytes)`: the bytes must be valid UTF-8.
pub fn string_from_bytes(b: &[u8]) -> Result<Arc<str>> {
    std::str::from_utf8(b)
        .map(Arc::from)
        .map_err(|_| Error::new("invalid UTF-8 in bytes, cannot convert to string"))
}

/// `timestamp(int)`: epoch seconds, range-checked ("timestamp overflow").
pub fn timestamp_from_int(i: i64) -> Result<Timestamp> {
    time::checked_timestamp(i, 0, 0)
}

/// `timestamp(string)`: RFC 3339 as Go's `time.Parse` reads it; out of range →
/// "timestamp overflow", unparsable → a conversion error.
pub fn timestamp_from_string(s: &str) -> Result<Timestamp> {
    let ts = time::parse_timestamp(s).ok_or_else(|| conversion_error("string", TIMESTAMP))?;
    if time::seconds_in_range(ts.seconds) {
        Ok(ts)
    } else {
        Err(time::timestamp_overflow())
    }
}

/// `duration(string)`: Go's `time.ParseDuration`.
pub fn duration_from_string(s: &str) -> Result<Duration> {
    time::parse_duration(s).map_err(|_| conversion_error("string", DURATION))
}

fn static_type(slot: &'static OnceLock<Value>, t: fn() -> Type) -> Value {
    slot.get_or_init(|| Value::type_value(t())).clone()
}

/// `type(v)`: the runtime type of a value as a type value. Common types are shared, so this
/// does not allocate for them.
pub fn type_of(v: &Value) -> Value {
    static NULL: OnceLock<Value> = OnceLock::new();
    static BOOL: OnceLock<Value> = OnceLock::new();
    static INT: OnceLock<Value> = OnceLock::new();
    static UINT: OnceLock<Value> = OnceLock::new();
    static DOUBLE: OnceLock<Value> = OnceLock::new();
    static STRING: OnceLock<Value> = OnceLock::new();
    static BYTES: OnceLock<Value> = OnceLock::new();
    static LIST: OnceLock<Value> = OnceLock::new();
    static MAP: OnceLock<Value> = OnceLock::new();
    static TS: OnceLock<Value> = OnceLock::new();
    static DUR: OnceLock<Value> = OnceLock::new();
    static TYPE: OnceLock<Value> = OnceLock::new();
    static OPT: OnceLock<Value> = OnceLock::new();
    match v {
        Value::Null => static_type(&NULL, || Type::Null),
        Value::Bool(_) => static_type(&BOOL, || Type::Bool),
        Value::Int(_) => static_type(&INT, || Type::Int),
        Value::Uint(_) => static_type(&UINT, || Type::Uint),
        Value::Double(_) => static_type(&DOUBLE, || Type::Double),
        Value::String(_) => static_type(&STRING, || Type::String),
        Value::Bytes(_) => static_type(&BYTES, || Type::Bytes),
        Value::List(_) => static_type(&LIST, || Type::list(Type::Dyn)),
        Value::Map(_) | Value::Object(_) => static_type(&MAP, || Type::map(Type::Dyn, Type::Dyn)),
        Value::Timestamp(_) => static_type(&TS, || Type::Timestamp),
        Value::Duration(_) => static_type(&DUR, || Type::Duration),
        Value::Type(_) => static_type(&TYPE, || Type::Type(None)),
        Value::Optional(_) => static_type(&OPT, || Type::optional(Type::Dyn)),
        Value::Opaque(o) => Value::type_value(Type::opaque(o.type_name())),
        Value::Message(m) => Value::type_value(Type::message(m.type_name())),
    }
}

/// `int(v)` for any value.
pub fn to_int(v: &Value) -> Result<Value> {
    Ok(Value::Int(match v {
        Value::Int(i) => *i,
        Value::Uint(u) => int_from_uint(*u)?,
        Value::Double(d) => int_from_double(*d)?,
        Value::String(s) => int_from_string(s)?,
        Value::Timestamp(t) => int_from_timestamp(*t),
        Value::Duration(d) => int_from_duration(*d),
        _ => return Err(Error::no_such_overload()),
    }))
}

/// `uint(v)` for any value.
pub fn to_uint(v: &Value) -> Result<Value> {
    Ok(Value::Uint(match v {
        Value::Uint(u) => *u,
        Value::Int(i) => uint_from_int(*i)?,
        Value::Double(d) => uint_from_double(*d)?,
        Value::String(s) => uint_from_string(s)?,
        _ => return Err(Error::no_such_overload()),
    }))
}

/// `double(v)` for any value.
pub fn to_double(v: &Value) -> Result<Value> {
    Ok(Value::Double(match v {
        Value::Double(d) => *d,
        Value::Int(i) => *i as f64,
        Value::Uint(u) => *u as f64,
        Value::String(s) => double_from_string(s)?,
        _ => return Err(Error::no_such_overload()),
    }))
}

/// `string(v)` for any value.
pub fn to_string(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::String(_) => v.clone(),
        Value::Bool(b) => Value::from(if *b { "true" } else { "false" }),
        Value::Int(i) => Value::from(i.to_string()),
        Value::Uint(u) => Value::from(u.to_string()),
        Value::Double(d) => Value::from(crate::format::format_double(*d)),
        Value::Bytes(b) => Value::String(string_from_bytes(b)?),
        Value::Timestamp(t) => Value::from(time::format_timestamp(*t)),
        Value::Duration(d) => Value::from(time::format_duration(*d)),
        _ => return Err(Error::no_such_overload()),
    })
}

/// `bytes(v)` for any value.
pub fn to_bytes(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Bytes(_) => v.clone(),
        Value::String(s) => Value::Bytes(Arc::from(s.as_bytes())),
        _ => return Err(Error::no_such_overload()),
    })
}

/// `bool(v)` for any value.
pub fn to_bool(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Bool(_) => v.clone(),
        Value::String(s) => Value::Bool(bool_from_string(s)?),
        _ => return Err(Error::no_such_overload()),
    })
}

/// `timestamp(v)` for any value.
pub fn to_timestamp(v: &Value) -> Result<Value> {
    Ok(Value::Timestamp(match v {
        Value::Timestamp(t) => *t,
        Value::Int(i) => timestamp_from_int(*i)?,
        Value::String(s) => timestamp_from_string(s)?,
        _ => return Err(Error::no_such_overload()),
    }))
}

/// `duration(v)` for any value.
pub fn to_duration(v: &Value) -> Result<Value> {
    Ok(Value::Duration(match v {
        Value::Duration(d) => *d,
        Value::String(s) => duration_from_string(s)?,
        Value::Int(_) => return Err(conversion_error("int", DURATION)),
        _ => return Err(Error::no_such_overload()),
    }))
}

/// `type(v)` for any value.
pub fn to_type(v: &Value) -> Result<Value> {
    Ok(type_of(v))
}

/// `dyn(v)`: the value unchanged.
pub fn to_dyn(v: &Value) -> Result<Value> {
    Ok(v.clone())
}

// ---------------------------------------------------------------------------------------
// Go's strconv.ParseFloat.

/// `inf`, `infinity` (any case, optional sign) and `nan` (any case, no sign), as the whole text.
fn special_float(s: &str) -> Option<f64> {
    let (sign, body) = match s.as_bytes().first() {
        Some(b'+') => (1.0, &s[1..]),
        Some(b'-') => (-1.0, &s[1..]),
        _ => (1.0, s),
    };
    if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        return Some(sign * f64::INFINITY);
    }
    if body.len() == s.len() && body.eq_ignore_ascii_case("nan") {
        return Some(f64::NAN);
    }
    None
}

/// Go's rule for `_` in numbers: only between digits, or between a base prefix and a digit.
fn underscores_ok(s: &[u8]) -> bool {
    let mut s = s;
    if let Some((b'+' | b'-', rest)) = s.split_first() {
        s = rest;
    }
    // 0 = start, 1 = digit or prefix, 2 = underscore, 3 = other.
    let mut saw = 0u8;
    let mut hex = false;
    let mut i = 0;
    if s.len() >= 2 && s[0] == b'0' && matches!(s[1] | 0x20, b'b' | b'o' | b'x') {
        i = 2;
        saw = 1;
        hex = s[1] | 0x20 == b'x';
    }
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_digit() || hex && c.is_ascii_hexdigit() {
            saw = 1;
        } else if c == b'_' {
            if saw != 1 {
                return false;
            }
            saw = 2;
        } else {
            if saw == 2 {
                return false;
            }
            saw = 3;
        }
        i += 1;
    }
    saw != 2
}

/// Builds the double nearest to `(m + sticky) × 2^e` (round half to even), or `None` when it
/// overflows.
fn binary_to_f64(m: u64, sticky: bool, e: i64, neg: bool) -> Option<f64> {
    let signed = |x: f64| if neg { -x } else { x };
    if m == 0 {
        return Some(signed(0.0));
    }
    let nbits = i64::from(64 - m.leading_zeros());
    let top = e.saturating_add(nbits - 1);
    if top > 1024 {
        return None;
    }
    let mut q_exp = (top - 52).max(-1074);
    let drop = q_exp.saturating_sub(e);
    let mut q: u128 = if drop <= 0 {
        u128::from(m) << (-drop).min(100)
    } else if drop >= 128 {
        0
    } else {
        let wide = u128::from(m);
        let q = wide >> drop;
        let rem = wide & ((1u128 << drop) - 1);
        let half = 1u128 << (drop - 1);
        let up = rem > half || (rem == half && (sticky || q & 1 == 1));
        q + u128::from(up)
    };
    if q == 1u128 << 53 {
        q >>= 1;
        q_exp += 1;
    }
    let q = u64::try_from(q).ok()?;
    let bits = if q < 1 << 52 {
        q
    } else {
        let biased = q_exp + 52 + 1023;
        if biased >= 2047 {
            return None;
        }
        ((biased as u64) << 52) | (q - (1 << 52))
    };
    Some(signed(f64::from_bits(bits)))
}

/// Go's `strconv.ParseFloat(s, 64)`: decimal and hexadecimal (`0x1.8p1`) forms, `_` between
/// digits, `inf`/`infinity`/`nan`. `None` for bad syntax and for values out of range.
pub fn go_parse_float(s: &str) -> Option<f64> {
    if let Some(v) = special_float(s) {
        return Some(v);
    }
    let b = s.as_bytes();
    let mut i = 0;
    let mut neg = false;
    if let Some(&c) = b.first()
        && (c == b'+' || c == b'-')
    {
        neg = c == b'-';
        i = 1;
    }
    let hex = i + 2 < b.len() && b[i] == b'0' && b[i + 1] | 0x20 == b'x';
    if hex {
        i += 2;
    }
    let mut underscores = false;
    let mut saw_dot = false;
    let mut saw_digits = false;
    // Hex: mantissa bits, digits counted (nd), digits kept (nd_mant), point position (dp).
    let mut mantissa: u64 = 0;
    let mut nd: i64 = 0;
    let mut nd_mant: i64 = 0;
    let mut dp: i64 = 0;
    let mut trunc = false;
    while i < b.len() {
        let c = b[i];
        if c == b'_' {
            underscores = true;
        } else if c == b'.' {
            if saw_dot {
                break;
            }
            saw_dot = true;
            dp = nd;
        } else if c.is_ascii_digit() || hex && c.is_ascii_hexdigit() {
            saw_digits = true;
            if hex {
                if c == b'0' && nd == 0 {
                    dp -= 1;
                } else {
                    nd += 1;
                    let v = u64::from(if c.is_ascii_digit() {
                        c - b'0'
                    } else {
                        (c | 0x20) - b'a' + 10
                    });
                    if nd_mant < 16 {
                        mantissa = mantissa * 16 + v;
                        nd_mant += 1;
                    } else if v != 0 {
                        trunc = true;
                    }
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    if !saw_digits {
        return None;
    }
    if !saw_dot {
        dp = nd;
    }
    let mut exp10: i64 = 0;
    let exp_char = if hex { b'p' } else { b'e' };
    if i < b.len() && b[i] | 0x20 == exp_char {
        i += 1;
        let mut esign = 1;
        match b.get(i) {
            Some(b'+') => i += 1,
            Some(b'-') => {
                i += 1;
                esign = -1;
            }
            _ => {}
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        let mut e: i64 = 0;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            if b[i] == b'_' {
                underscores = true;
            } else if e < 10_000 {
                e = e * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        exp10 = e * esign;
    } else if hex {
        return None;
    }
    if i != b.len() {
        return None;
    }
    if underscores && !underscores_ok(b) {
        return None;
    }
    if hex {
        let exp2 = (dp * 4 + exp10) - nd_mant * 4;
        return binary_to_f64(mantissa, trunc, exp2, neg);
    }
    let cleaned: String = s.chars().filter(|&c| c != '_').collect();
    let v: f64 = cleaned.parse().ok()?;
    if v.is_infinite() { None } else { Some(v) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err<T: std::fmt::Debug>(r: Result<T>) -> String {
        r.err().map(|e| e.message).unwrap_or_default()
    }

    #[test]
    fn double_to_int_bounds() {
        assert_eq!(int_from_double(-TWO_POW_63), Err(int_overflow()));
        assert_eq!(
            int_from_double(9.223372036854775e18),
            Ok(9_223_372_036_854_774_784)
        );
        assert_eq!(int_from_double(1.9), Ok(1));
        assert_eq!(int_from_double(-1.9), Ok(-1));
        assert_eq!(err(int_from_double(1e19)), "integer overflow");
        assert_eq!(err(int_from_double(f64::NAN)), "integer overflow");
        assert_eq!(err(int_from_double(f64::INFINITY)), "integer overflow");
        assert_eq!(uint_from_double(1.5), Ok(1));
        assert_eq!(err(uint_from_double(-0.5)), "unsigned integer overflow");
        assert_eq!(
            err(uint_from_double(TWO_POW_64)),
            "unsigned integer overflow"
        );
        assert_eq!(err(uint_from_double(f64::NAN)), "unsigned integer overflow");
        assert_eq!(err(int_from_uint(1 << 63)), "integer overflow");
        assert_eq!(err(uint_from_int(-1)), "unsigned integer overflow");
    }

    #[test]
    fn strings_to_numbers() {
        let conv = "type conversion error from 'string' to 'int'";
        for bad in [
            "0x10",
            " 1",
            "1e3",
            "١٢",
            "",
            "+",
            "9223372036854775808",
            "1_0",
        ] {
            assert_eq!(err(int_from_string(bad)), conv, "{bad}");
        }
        assert_eq!(int_from_string("+1"), Ok(1));
        assert_eq!(int_from_string("-0"), Ok(0));
        assert_eq!(int_from_string("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(
            err(uint_from_string("+5")),
            "type conversion error from 'string' to 'uint'"
        );
        assert!(uint_from_string("-0").is_err());
        assert_eq!(uint_from_string("18446744073709551615"), Ok(u64::MAX));
    }

    #[test]
    fn parse_float_like_go() {
        let ok = |s: &str| go_parse_float(s);
        assert!(ok("nan").is_some_and(f64::is_nan));
        assert!(ok("NaN").is_some_and(f64::is_nan));
        assert_eq!(ok("inf"), Some(f64::INFINITY));
        assert_eq!(ok("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(ok("+INF"), Some(f64::INFINITY));
        assert_eq!(ok("+nan"), None);
        assert_eq!(ok("1_000"), Some(1000.0));
        assert_eq!(ok("1__000"), None);
        assert_eq!(ok("_1"), None);
        assert_eq!(ok("1_"), None);
        assert_eq!(ok("1_.5"), None);
        assert_eq!(ok("0x1p-2"), Some(0.25));
        assert_eq!(ok("0x1.8p1"), Some(3.0));
        assert_eq!(ok("0X_1p0"), Some(1.0));
        assert_eq!(ok("0x1"), None);
        assert_eq!(ok("0x"), None);
        assert_eq!(ok("0x1p-1074"), Some(5e-324));
        assert_eq!(ok("0x1p1024"), None);
        assert_eq!(ok("0x1.fffffffffffff8p1023"), None);
        assert_eq!(ok("0x1.fffffffffffffp1023"), Some(f64::MAX));
        assert_eq!(ok("1e400"), None);
        assert_eq!(ok("1e-400"), Some(0.0));
        assert_eq!(ok(" 1"), None);
        assert_eq!(ok("1 "), None);
        assert_eq!(ok("5."), Some(5.0));
        assert_eq!(ok(".5"), Some(0.5));
        assert_eq!(ok("."), None);
        assert_eq!(ok("1e"), None);
        assert_eq!(ok("1e+5"), Some(1e5));
        assert_eq!(ok("-0"), Some(-0.0));
        assert_eq!(ok("1.7976931348623157e308"), Some(f64::MAX));
        assert_eq!(
            err(double_from_string("abc")),
            "type conversion error from 'string' to 'double'"
        );
    }

    #[test]
    fn bools_and_bytes() {
        for t in ["1", "t", "T", "TRUE", "true", "True"] {
            assert_eq!(bool_from_string(t), Ok(true));
        }
        for f in ["0", "f", "F", "FALSE", "false", "False"] {
            assert_eq!(bool_from_string(f), Ok(false));
        }
        assert_eq!(
            err(bool_from_string("tRuE")),
            "type conversion error from 'string' to 'bool'"
        );
        assert_eq!(
            err(string_from_bytes(&[0xff])),
            "invalid UTF-8 in bytes, cannot convert to string"
        );
    }

    #[test]
    fn to_string_forms() {
        let s = |v: Value| match &to_string(&v) {
            Ok(Value::String(s)) => s.to_string(),
            other => format!("{other:?}"),
        };
        assert_eq!(s(Value::Uint(1)), "1");
        assert_eq!(s(Value::Bool(true)), "true");
        assert_eq!(s(Value::Double(1e20)), "1e+20");
        assert_eq!(s(Value::Duration(Duration { nanos: 1 })), "0.000000001s");
        let ts = time::parse_timestamp("2023-01-01T02:00:00+05:30");
        assert!(ts.is_some_and(|t| s(Value::Timestamp(t)) == "2023-01-01T02:00:00+05:30"));
    }

    #[test]
    fn timestamps_and_durations() {
        assert_eq!(
            err(timestamp_from_int(253_402_300_800)),
            "timestamp overflow"
        );
        assert_eq!(
            err(timestamp_from_int(-62_135_596_801)),
            "timestamp overflow"
        );
        assert_eq!(
            err(timestamp_from_string("0000-01-01T00:00:00Z")),
            "timestamp overflow"
        );
        assert_eq!(
            err(timestamp_from_string("10000-01-01T00:00:00Z")),
            "type conversion error from 'string' to 'google.protobuf.Timestamp'"
        );
        assert_eq!(
            err(duration_from_string("1d")),
            "type conversion error from 'string' to 'google.protobuf.Duration'"
        );
        assert_eq!(
            err(to_duration(&Value::Int(1))),
            "type conversion error from 'int' to 'google.protobuf.Duration'"
        );
        assert!(matches!(
            to_int(&Value::Duration(Duration {
                nanos: 1_000_000_000
            })),
            Ok(Value::Int(1_000_000_000))
        ));
    }

    #[test]
    fn type_values() {
        assert!(matches!(&type_of(&Value::Int(1)), Value::Type(t) if **t == Type::Int));
        assert!(
            matches!(&type_of(&Value::list(vec![])), Value::Type(t) if t.runtime_name() == "list")
        );
        assert!(
            matches!(&type_of(&Value::optional_none()), Value::Type(t) if t.runtime_name() == "optional_type")
        );
        assert!(
            matches!(&type_of(&type_of(&Value::Null)), Value::Type(t) if t.runtime_name() == "type")
        );
    }
}
