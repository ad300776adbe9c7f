//! JSON data as Kubernetes' Go code sees it: numbers typed as Go's JSON decoding types them
//! (`int64` for integers, `float64` otherwise), and values serialized as Go's
//! `encoding/json.Marshal` writes them (object keys sorted, `<`, `>`, `&` escaped, floats in
//! Go's shortest form). Error messages that show a value and the duplicate checks of
//! `x-kubernetes-list-type: set` depend on both.

use serde_json::{Number, Value};

/// A JSON number as Go decodes it: an `int64` when the text is an integer that fits, a
/// `float64` otherwise (Kubernetes' JSON decoding; integers beyond `int64` become floats).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GoNumber {
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
}

impl GoNumber {
    /// The Go type of a serde number.
    pub fn of(n: &Number) -> GoNumber {
        match n.as_i64() {
            Some(i) => GoNumber::Int(i),
            None => GoNumber::Float(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    /// The value as a float (Go's `float64(x)`).
    pub fn as_f64(self) -> f64 {
        match self {
            GoNumber::Int(i) => i as f64,
            GoNumber::Float(f) => f,
        }
    }
}

/// Go's `int64(f)` on amd64: values out of range (and NaN) become `math.MinInt64`, where a Rust
/// `as` cast would saturate.
pub fn f64_to_i64(f: f64) -> i64 {
    // 2^63, the first float beyond int64.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-LIMIT..LIMIT).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// `json.Marshal(v)` as Go writes it.
pub fn marshal(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, true);
    out
}

/// Go's `%#v` of `v` decoded into an `interface{}` (objects as `map[string]interface{}` with
/// sorted keys, lists as `[]interface{}`, integers as `int64`, other numbers as `float64`).
pub fn go_syntax(v: &Value) -> String {
    let mut out = String::new();
    write_go_syntax(&mut out, v, false);
    out
}

/// `in_interface`: whether the value sits in an `interface{}` slot of a map or a slice, where
/// Go writes nil as `interface {}(nil)` (a top-level nil is printed by the caller).
fn write_go_syntax(out: &mut String, v: &Value, in_interface: bool) {
    match v {
        Value::Null if in_interface => out.push_str("interface {}(nil)"),
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match GoNumber::of(n) {
            GoNumber::Int(i) => out.push_str(&i.to_string()),
            GoNumber::Float(f) => out.push_str(&cel_runtime::format::format_double(f)),
        },
        Value::String(s) => out.push_str(&cel_runtime::format::go_quote(s)),
        Value::Array(items) => {
            out.push_str("[]interface {}{");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_go_syntax(out, item, true);
            }
            out.push('}');
        }
        Value::Object(map) => {
            // fmt prints a map's keys sorted.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push_str("map[string]interface {}{");
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&cel_runtime::format::go_quote(k));
                out.push(':');
                write_go_syntax(out, item, true);
            }
            out.push('}');
        }
    }
}

/// As [`marshal`], but objects keep their keys' order: how Go marshals a struct (fields in
/// declaration order), for values built to stand for Go structs.
pub fn marshal_struct(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, false);
    out
}

fn write_value(out: &mut String, v: &Value, sort_keys: bool) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, GoNumber::of(n)),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item, sort_keys);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // Go marshals a map[string]interface{} with its keys sorted by bytes.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            if sort_keys {
                entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            }
            out.push('{');
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, item, sort_keys);
            }
            out.push('}');
        }
    }
}

/// A number as `encoding/json` writes it: integers in decimal; floats in positional notation,
/// or exponent notation below 1e-6 and from 1e21 on, with the exponent's leading zero dropped.
pub fn write_number(out: &mut String, n: GoNumber) {
    match n {
        GoNumber::Int(i) => out.push_str(&i.to_string()),
        GoNumber::Float(f) => {
            let abs = f.abs();
            if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
                let s = cel_runtime::format::format_double(f);
                // `1e-07` becomes `1e-7`, as Go's encoder cleans it up.
                match s.find("e-0") {
                    Some(at) if at + 4 == s.len() => {
                        out.push_str(&s[..at + 2]);
                        out.push_str(&s[at + 3..]);
                    }
                    _ => out.push_str(&s),
                }
            } else {
                out.push_str(&cel_runtime::format::format_double_fixed(f));
            }
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            // Go escapes HTML-significant characters and the JavaScript line separators.
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's `reflect.DeepEqual` on decoded JSON: like `==`, except that an integer and a float are
/// never equal (they are different Go types).
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => GoNumber::of(x) == GoNumber::of(y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| deep_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The Go type name `%T` gives a decoded JSON value (`map[string]interface {}`).
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) => match GoNumber::of(n) {
            GoNumber::Int(_) => "int64",
            GoNumber::Float(_) => "float64",
        },
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn marshals_like_go() {
        assert_eq!(
            marshal(&json!({"b": 1, "a": [1.0, 1.5, "<&>"], "c": null})),
            r#"{"a":[1,1.5,"\u003c\u0026\u003e"],"b":1,"c":null}"#
        );
        assert_eq!(marshal(&json!(1e21)), "1e+21");
        assert_eq!(marshal(&json!(1e-7)), "1e-7");
        assert_eq!(marshal(&json!(0.000001)), "0.000001");
        assert_eq!(marshal(&json!(123456789.0)), "123456789");
        assert_eq!(marshal(&json!("a\u{1}\u{8}")), r#""a\u0001\b""#);
    }

    #[test]
    fn go_types() {
        assert!(!deep_equal(&json!(1), &json!(1.0)));
        assert!(deep_equal(&json!({"a": [1]}), &json!({"a": [1]})));
        assert_eq!(f64_to_i64(1e19), i64::MIN);
        assert_eq!(f64_to_i64(-2.5), -2);
        assert_eq!(
            GoNumber::of(&serde_json::from_str::<Number>("18446744073709551615").unwrap()),
            GoNumber::Float(18446744073709551615.0)
        );
    }
}
