use std::sync::Arc;

use cel_cost::SizeRange;
use cel_runtime::{Duration, Key, ListValue, Timestamp, Value};

use super::format::{DEFAULT_MAX_PRECISION, SAFETY_MAX_PRECISION, format};
use super::*;

fn err<T: std::fmt::Debug>(r: Result<T>) -> String {
    r.unwrap_err().message
}

#[test]
fn char_at_counts_code_points() {
    assert_eq!(char_at("tacocat", 3).unwrap(), "o");
    assert_eq!(char_at("tacocat", 7).unwrap(), "");
    assert_eq!(char_at("©αT", 1).unwrap(), "α");
    assert_eq!(char_at("©αT", 3).unwrap(), "");
    assert_eq!(err(char_at("tacocat", 30)), "index out of range: 30");
    assert_eq!(err(char_at("tacocat", -1)), "index out of range: -1");
    assert_eq!(
        err(char_at("", i64::MIN)),
        format!("index out of range: {}", i64::MIN)
    );
}

#[test]
fn index_of_cases() {
    assert_eq!(index_of("tacocat", "", 0).unwrap(), 0);
    assert_eq!(index_of("tacocat", "ac", 0).unwrap(), 1);
    assert_eq!(index_of("tacocat", "none", 0).unwrap(), -1);
    assert_eq!(index_of("tacocat", "", 3).unwrap(), 3);
    assert_eq!(index_of("tacocat", "a", 3).unwrap(), 5);
    assert_eq!(index_of("ta©o©αT", "©", 3).unwrap(), 4);
    assert_eq!(index_of("ta©o©αT", "©αT", 3).unwrap(), 4);
    assert_eq!(index_of("ta©o©αT", "©α", 5).unwrap(), -1);
    assert_eq!(index_of("hello wello", "ello", 6).unwrap(), 7);
    assert_eq!(index_of("hello", "", 5).unwrap(), 5);
    assert_eq!(index_of("hello", "", 7).unwrap(), 5);
    assert_eq!(index_of("tacocat", "a", 30).unwrap(), -1);
    assert_eq!(err(index_of("tacocat", "a", -1)), "index out of range: -1");
}

#[test]
fn last_index_of_cases() {
    assert_eq!(last_index_of("", "@@").unwrap(), -1);
    assert_eq!(last_index_of("tacocat", "").unwrap(), 7);
    assert_eq!(last_index_of("tacocat", "at").unwrap(), 5);
    assert_eq!(last_index_of_offset("tacocat", "", 3).unwrap(), 3);
    assert_eq!(last_index_of_offset("tacocat", "a", 3).unwrap(), 1);
    assert_eq!(last_index_of("ta©o©αT", "©").unwrap(), 4);
    assert_eq!(last_index_of_offset("ta©o©αT", "©", 3).unwrap(), 2);
    assert_eq!(last_index_of_offset("ta©o©αT", "©α", 4).unwrap(), 4);
    assert_eq!(last_index_of_offset("hello wello", "ello", 6).unwrap(), 1);
    assert_eq!(last_index_of("hello wello", "hello wello").unwrap(), 0);
    assert_eq!(last_index_of_offset("bananananana", "nana", 7).unwrap(), 6);
    assert_eq!(last_index_of_offset("hello", "l", 2).unwrap(), 2);
    assert_eq!(last_index_of_offset("hello", "l", 1).unwrap(), -1);
    assert_eq!(last_index_of_offset("tacocat", "a", 30).unwrap(), -1);
    assert_eq!(
        err(last_index_of_offset("tacocat", "a", -1)),
        "index out of range: -1"
    );
    // The end of the search window falls inside a multi-byte code point.
    assert_eq!(last_index_of_offset("a©©", "a©", 0).unwrap(), 0);
    assert_eq!(last_index_of_offset("©a©", "a", 0).unwrap(), -1);
}

#[test]
fn casing_is_ascii_only() {
    let v = |s: &str| Value::from(s);
    let s = |r: Result<Value>| match &r.unwrap() {
        Value::String(s) => s.to_string(),
        _ => String::new(),
    };
    assert_eq!(s(lower_ascii_value(&v("TacoCÆt Xii"))), "tacocÆt xii");
    assert_eq!(s(upper_ascii_value(&v("tacoCαt"))), "TACOCαT");
    assert_eq!(s(upper_ascii_value(&v("Straße"))), "STRAßE");
    assert_eq!(s(lower_ascii_value(&v("ÀB"))), "Àb");
}

#[test]
fn replace_cases() {
    let r = |s: &str, old: &str, new: &str, n: i64| {
        replace(&Arc::from(s), old, new, n).unwrap().to_string()
    };
    assert_eq!(r("hello hello", "he", "we", -1), "wello wello");
    assert_eq!(r("hello hello", "he", "we", 1), "wello hello");
    assert_eq!(r("hello hello", "he", "we", 0), "hello hello");
    assert_eq!(r("aaa", "", "-", -1), "-a-a-a-");
    assert_eq!(r("aaa", "", "-", 2), "-a-aa");
    assert_eq!(r("1 ©αT taco", "αT", "o©α", -1), "1 ©o©α taco");
    assert_eq!(r("{0} days {0} hours", "{0}", "2", 1), "2 days {0} hours");
    // A result larger than the limit is an error, not an allocation.
    let big: Arc<str> = Arc::from("a".repeat(1 << 16));
    let new = "b".repeat(1 << 15);
    assert!(err(replace(&big, "", &new, -1)).contains("exceeds maximum allowed"));
}

#[test]
fn result_sizes_are_the_results_sizes() {
    let size = |s: &str| cel_runtime::strings::size_string(s) as u64;
    let texts = ["", "a", "aaa", "héllo wörld", "ab🎉ab🎉", "a,b,,c"];
    let patterns = ["", "a", "b🎉", "ö", ",", "zz"];
    let replacements = ["", "x", "ÿÿ", "🎉🎉🎉"];
    for s in texts {
        for old in patterns {
            for new in replacements {
                for n in [-1, 0, 1, 2, 100] {
                    let arc: Arc<str> = Arc::from(s);
                    let built = replace(&arc, old, new, n).unwrap();
                    assert_eq!(
                        replace_result_size(s, old, new, n),
                        Some(size(&built)),
                        "{s:?}.replace({old:?}, {new:?}, {n})"
                    );
                    assert!(replace_size_at_most(s, old, new, n) >= size(&built));
                }
            }
        }
    }
    for sep in ["", ", ", "ü"] {
        let items: Vec<Value> = texts.iter().map(|t| Value::from(*t)).collect();
        for k in 0..=items.len() {
            let built = join(&items[..k], sep).unwrap();
            assert_eq!(join_result_size(&items[..k], sep), Some(size(&built)));
            assert!(join_size_at_most(&items[..k], sep) >= size(&built));
        }
    }
    // Calls that fail have no size.
    assert_eq!(join_result_size(&[Value::Int(1)], ""), None);
    let big = "a".repeat(1 << 16);
    assert_eq!(
        replace_result_size(&big, "", &"b".repeat(1 << 15), -1),
        None
    );
}

#[test]
fn split_cases() {
    let parts = |s: &str, sep: &str, n: i64| -> Vec<String> {
        split(s, sep, n)
            .unwrap()
            .into_iter()
            .map(|v| match &v {
                Value::String(s) => s.to_string(),
                _ => String::new(),
            })
            .collect()
    };
    assert_eq!(parts("hello world", " ", -1), ["hello", "world"]);
    assert!(parts("hello world events!", " ", 0).is_empty());
    assert_eq!(
        parts("hello world events!", " ", 1),
        ["hello world events!"]
    );
    assert_eq!(
        parts("hello world events!", " ", 2),
        ["hello", "world events!"]
    );
    assert_eq!(parts("o©o©o©o", "©", -1), ["o", "o", "o", "o"]);
    assert_eq!(parts("abc", "", -1), ["a", "b", "c"]);
    assert_eq!(parts("a©c", "", 2), ["a", "©c"]);
    assert_eq!(parts("", ",", -1), [""]);
    assert!(parts("", "", -1).is_empty());
    assert_eq!(parts("a,b,,c", ",", -1), ["a", "b", "", "c"]);
}

#[test]
fn substring_cases() {
    assert_eq!(substring("tacocat", 4).unwrap(), "cat");
    assert_eq!(substring("tacocat", 7).unwrap(), "");
    assert_eq!(substring_range("tacocat", 0, 4).unwrap(), "taco");
    assert_eq!(substring_range("ta©o©αT", 2, 6).unwrap(), "©o©α");
    assert_eq!(substring_range("ta©o©αT", 7, 7).unwrap(), "");
    assert_eq!(err(substring("tacocat", 40)), "index out of range: 40");
    assert_eq!(err(substring("tacocat", -1)), "index out of range: -1");
    assert_eq!(
        err(substring_range("tacocat", 1, 50)),
        "index out of range: 50"
    );
    assert_eq!(
        err(substring_range("tacocat", 49, 50)),
        "index out of range: 49"
    );
    assert_eq!(
        err(substring_range("tacocat", 4, 3)),
        "invalid substring range. start: 4, end: 3"
    );
    assert_eq!(
        err(substring_range("x", i64::MIN, i64::MAX)),
        format!("index out of range: {}", i64::MIN)
    );
}

#[test]
fn trim_join_quote_reverse() {
    let t = |s: &str| match &trim_value(&Value::from(s)).unwrap() {
        Value::String(s) => s.to_string(),
        _ => String::new(),
    };
    assert_eq!(t(" \u{c}\n\r\t\u{b}text  "), "text");
    assert_eq!(t("\u{85}\u{a0}\u{1680}text"), "text");
    assert_eq!(
        t("\u{200a}text\u{2028}\u{2029}\u{202F}\u{205F}\u{3000}"),
        "text"
    );
    let zero_width = "\u{180e}text\u{200b}\u{200c}\u{200d}\u{2060}\u{feff}";
    assert_eq!(t(zero_width), zero_width);

    let l = |v: &[&str]| v.iter().map(|s| Value::from(*s)).collect::<Vec<_>>();
    assert_eq!(join(&l(&["x", "y"]), "").unwrap(), "xy");
    assert_eq!(join(&l(&["x", "y"]), "-").unwrap(), "x-y");
    assert_eq!(join(&[], "-").unwrap(), "");
    assert_eq!(
        err(join(&[Value::from("a"), Value::Int(1)], "")),
        "join: invalid input: 1"
    );

    assert_eq!(quote("first\nsecond"), "\"first\\nsecond\"");
    assert_eq!(quote("bell\u{7}"), "\"bell\\a\"");
    assert_eq!(quote("\u{1}"), "\"\u{1}\"");
    assert_eq!(quote("\u{1}").chars().count(), 3);
    assert_eq!(quote("\t").chars().count(), 4);
    assert_eq!(quote("ends with \\"), "\"ends with \\\\\"");
    assert_eq!(quote(""), "\"\"");
    assert_eq!(quote("завтра"), "\"завтра\"");

    assert_eq!(reverse("Ta©oCαt"), "tαCo©aT");
    assert_eq!(reverse(""), "");
}

fn list(items: Vec<Value>) -> ListValue {
    ListValue::from(items)
}

fn fmt(f: &str, args: Vec<Value>) -> String {
    format(f, &list(args), DEFAULT_MAX_PRECISION).unwrap_or_else(|e| format!("ERROR: {e}"))
}

#[test]
fn format_clauses() {
    assert_eq!(fmt("no substitution", vec![]), "no substitution");
    assert_eq!(fmt("%% and also %%", vec![]), "% and also %");
    assert_eq!(fmt("%%%s%%", vec![Value::from("text")]), "%text%");
    assert_eq!(fmt("%.3f", vec![Value::Double(1.2345)]), "1.234");
    assert_eq!(fmt("%b", vec![Value::Int(5)]), "101");
    assert_eq!(fmt("%b", vec![Value::Uint(64)]), "1000000");
    assert_eq!(fmt("%b", vec![Value::Bool(true)]), "1");
    assert_eq!(fmt("%b", vec![Value::Int(-5)]), "-101");
    assert_eq!(fmt("%o", vec![Value::Int(11)]), "13");
    assert_eq!(fmt("%o", vec![Value::Uint(65535)]), "177777");
    assert_eq!(fmt("%x", vec![Value::Int(30)]), "1e");
    assert_eq!(fmt("%X", vec![Value::Int(30)]), "1E");
    assert_eq!(fmt("%x", vec![Value::Int(-255)]), "-ff");
    assert_eq!(fmt("%x", vec![Value::Int(i64::MIN)]), "-8000000000000000");
    assert_eq!(fmt("%X", vec![Value::Uint(6000)]), "1770");
    assert_eq!(
        fmt("%x", vec![Value::from("Hello world!")]),
        "48656c6c6f20776f726c6421"
    );
    assert_eq!(
        fmt("%X", vec![Value::bytes(b"byte string".to_vec())]),
        "6279746520737472696E67"
    );
    assert_eq!(
        fmt("%.6e", vec![Value::Double(1052.032911275)]),
        "1.052033e+03"
    );
    assert_eq!(fmt("%f", vec![Value::Double(2.71829)]), "2.718290");
    assert_eq!(fmt("%f", vec![Value::Int(2)]), "2.000000");
    assert_eq!(fmt("%f", vec![Value::Uint(3)]), "3.000000");
    assert_eq!(fmt("%e", vec![Value::Double(2.71829)]), "2.718290e+00");
    assert_eq!(fmt("%e", vec![Value::Int(2)]), "2.000000e+00");
    assert_eq!(fmt("%.1e", vec![Value::Double(-3.04)]), "-3.0e+00");
    assert_eq!(fmt("%e", vec![Value::Double(1e-300)]), "1.000000e-300");
    assert_eq!(fmt("%e", vec![Value::Double(0.0)]), "0.000000e+00");
    assert_eq!(fmt("%e", vec![Value::Double(-0.0)]), "-0.000000e+00");
    assert_eq!(fmt("%e", vec![Value::Double(f64::NAN)]), "NaN");
    assert_eq!(fmt("%e", vec![Value::Double(f64::INFINITY)]), "Infinity");
    assert_eq!(
        fmt("%f", vec![Value::Double(f64::NEG_INFINITY)]),
        "-Infinity"
    );
    assert_eq!(fmt("%d", vec![Value::Double(f64::NAN)]), "NaN");
    assert_eq!(fmt("%d", vec![Value::Double(3.25)]), "3.25");
    assert_eq!(fmt("%d", vec![Value::Uint(64)]), "64");
    assert_eq!(fmt("%.0f", vec![Value::Double(2.5)]), "2");
    assert_eq!(fmt("%.0f", vec![Value::Double(3.5)]), "4");
    assert_eq!(fmt("%.0f", vec![Value::Double(1.5)]), "2");
    assert_eq!(fmt("%.0f", vec![Value::Double(3.4999)]), "3");
    assert_eq!(fmt("%.3f", vec![Value::Double(123.4999)]), "123.500");
    assert_eq!(fmt("%.3f", vec![Value::Double(-123.4994)]), "-123.499");
    assert_eq!(fmt("%.2f", vec![Value::Double(0.125)]), "0.12");
    assert_eq!(fmt("%.2f", vec![Value::Double(-0.0)]), "-0.00");
    assert_eq!(fmt("%.5f", vec![Value::Double(-1.2)]), "-1.20000");
    assert_eq!(fmt("%.3s", vec![Value::from("abcdef")]), "abcdef");
}

#[test]
fn format_string_clause() {
    assert_eq!(fmt("%s", vec![Value::Null]), "null");
    assert_eq!(fmt("%s", vec![Value::Int(999999999999)]), "999999999999");
    assert_eq!(fmt("%s", vec![Value::bytes(b"xyz".to_vec())]), "xyz");
    assert_eq!(
        fmt("%s", vec![Value::bytes(vec![b'a', 0xff, 0xfe, b'b'])]),
        "a\u{FFFD}b"
    );
    assert_eq!(
        fmt("%s", vec![Value::type_value(cel_types::Type::String)]),
        "string"
    );
    assert_eq!(
        fmt("%s", vec![Value::Double(1e20)]),
        "100000000000000000000"
    );
    assert_eq!(fmt("%s", vec![Value::Double(-0.0)]), "-0");
    let ts = Timestamp {
        seconds: 1675467080,
        nanos: 0,
        offset_seconds: 3600,
    };
    assert_eq!(
        fmt("%s", vec![Value::Timestamp(ts)]),
        "2023-02-03T23:31:20Z"
    );
    let ts = Timestamp::utc(1675467080, 120_000_000);
    assert_eq!(
        fmt("%s", vec![Value::Timestamp(ts)]),
        "2023-02-03T23:31:20.12Z"
    );
    assert_eq!(
        fmt(
            "%s",
            vec![Value::Duration(Duration {
                nanos: 6_347_000_000_000
            })]
        ),
        "6347s"
    );
    assert_eq!(
        fmt("%s", vec![Value::Duration(Duration { nanos: 1_500_000 })]),
        "0.0015s"
    );
    let l = Value::list(vec![
        Value::from("abc"),
        Value::Double(3.5),
        Value::Null,
        Value::list(vec![Value::Int(9), Value::Int(8)]),
        Value::Double(f64::NEG_INFINITY),
    ]);
    assert_eq!(fmt("%s", vec![l]), "[abc, 3.5, null, [9, 8], -Infinity]");
    let m = Value::map([
        (Key::String("strKey".into()), Value::from("x")),
        (
            Key::Int(6),
            Value::Duration(Duration {
                nanos: 422_000_000_000,
            }),
        ),
        (Key::Bool(true), Value::Int(42)),
    ]);
    assert_eq!(fmt("%s", vec![m]), "{6: 422s, strKey: x, true: 42}");
    let m = Value::map([
        (Key::Int(1), Value::from("value1")),
        (Key::Uint(2), Value::from("value2")),
        (Key::Bool(true), Value::Double(f64::NAN)),
    ]);
    assert_eq!(fmt("%s", vec![m]), "{1: value1, 2: value2, true: NaN}");
    let nested = Value::map([(
        Key::String("a".into()),
        Value::list(vec![Value::map([(Key::Int(2), Value::list(vec![]))])]),
    )]);
    assert_eq!(fmt("%s", vec![nested]), "{a: [{2: []}]}");
    assert_eq!(
        fmt("%s, %s", vec![Value::Bool(true), Value::Bool(false)]),
        "true, false"
    );
}

#[test]
fn format_errors() {
    assert_eq!(
        fmt("%a", vec![Value::Int(1)]),
        "ERROR: could not parse formatting clause: unrecognized formatting clause \"a\""
    );
    assert_eq!(
        fmt("%d %d %d", vec![Value::Int(0), Value::Int(1)]),
        "ERROR: index 2 out of range"
    );
    assert_eq!(fmt("%", vec![]), "ERROR: index 0 out of range");
    assert_eq!(
        fmt("%", vec![Value::Int(1)]),
        "ERROR: unexpected end of string"
    );
    assert_eq!(
        fmt("%b", vec![Value::from("abc")]),
        "ERROR: error during formatting: only ints, uints, and bools can be formatted as binary, was given string"
    );
    assert_eq!(
        fmt("%d", vec![Value::Duration(Duration { nanos: 1 })]),
        "ERROR: error during formatting: decimal clause can only be used on ints, uints, and doubles, was given google.protobuf.Duration"
    );
    assert_eq!(
        fmt("%x", vec![Value::Double(0.5)]),
        "ERROR: error during formatting: only ints, uints, bytes, and strings can be formatted as hex, was given double"
    );
    assert_eq!(
        fmt("%E", vec![Value::Double(0.5)]),
        "ERROR: could not parse formatting clause: unrecognized formatting clause \"E\""
    );
    assert_eq!(
        fmt("%e", vec![Value::Null]),
        "ERROR: error during formatting: scientific clause can only be used on ints, uints, and doubles, was given null_type"
    );
    assert_eq!(
        fmt("%o", vec![Value::Null]),
        "ERROR: error during formatting: octal clause can only be used on ints and uints, was given null_type"
    );
    assert_eq!(
        fmt(
            "%s",
            vec![Value::list(vec![Value::Int(1), Value::optional_none()])]
        ),
        "ERROR: error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type"
    );
    assert_eq!(
        fmt("%.3", vec![Value::Int(1)]),
        "ERROR: could not parse formatting clause: error while parsing precision: could not find end of precision specifier"
    );
    assert_eq!(
        fmt("%.f", vec![Value::Int(1)]),
        "ERROR: could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"\": invalid syntax"
    );
    assert_eq!(
        fmt("%.101f", vec![Value::Int(1)]),
        "ERROR: could not parse formatting clause: error while parsing precision: precision 101 exceeds maximum allowed precision 100"
    );
    assert!(fmt("%.99999999999999999999f", vec![Value::Int(1)]).contains("value out of range"));
    // A byte of a multi-byte code point is read as a Latin-1 character.
    assert_eq!(
        fmt("%é", vec![Value::Int(1)]),
        "ERROR: could not parse formatting clause: unrecognized formatting clause \"Ã\""
    );
}

#[test]
fn format_precision_is_bounded() {
    let f = format(
        "%.1100f",
        &list(vec![Value::Double(0.1)]),
        SAFETY_MAX_PRECISION,
    )
    .unwrap();
    assert_eq!(f.len(), 1102);
    assert!(format("%.1101f", &list(vec![Value::Int(1)]), SAFETY_MAX_PRECISION).is_err());
    assert_eq!(
        Strings::version(4).effective_max_precision(),
        SAFETY_MAX_PRECISION
    );
    assert_eq!(
        Strings::version(5).effective_max_precision(),
        DEFAULT_MAX_PRECISION
    );
    assert_eq!(
        Strings::version(5)
            .max_precision(10)
            .effective_max_precision(),
        10
    );
}

#[test]
fn format_deep_values_do_not_recurse() {
    let mut v = Value::Int(1);
    for _ in 0..100_000 {
        v = Value::list(vec![v]);
    }
    let out = fmt("%s", vec![v]);
    assert_eq!(out.len(), 200_001);
    let mut m = Value::Int(1);
    for _ in 0..20_000 {
        m = Value::map([(Key::Int(1), m)]);
    }
    assert!(fmt("%s", vec![m]).starts_with("{1: {1: "));
}

/// cost-model.md §5.3 (strings version 5; receivers are literals, costing 0).
#[test]
fn costs_match_cel_go() {
    // "hello world".indexOf("world")
    assert_eq!(search_cost(11, 5), 7);
    assert_eq!(
        search_estimate(SizeRange::exact(11), SizeRange::exact(5))
            .cost
            .max,
        7
    );
    // "HELLO".lowerAscii()
    assert_eq!(transform_cost(5, 5), 7);
    assert_eq!(fixed_transform_estimate(SizeRange::exact(5)).cost.max, 7);
    // "hello world".replace("world", "CEL"): [11, 55] → 16
    assert_eq!(replace_cost(11, 5, 9), 16);
    let e = replace_estimate(
        SizeRange::exact(11),
        SizeRange::exact(5),
        SizeRange::exact(3),
    );
    assert_eq!((e.cost.min, e.cost.max), (11, 55));
    // "A".replace("", "AAAAAAAAAA").replace("", "AAAAAAAAAA"): [6, 281] → 268
    let first = replace_estimate(
        SizeRange::exact(1),
        SizeRange::exact(0),
        SizeRange::exact(10),
    );
    let second = replace_estimate(
        first.result_size.unwrap_or(SizeRange::unknown()),
        SizeRange::exact(0),
        SizeRange::exact(10),
    );
    assert_eq!(
        (
            first.cost.min + second.cost.min,
            first.cost.max + second.cost.max
        ),
        (6, 281)
    );
    assert_eq!(replace_cost(1, 0, 21) + replace_cost(21, 0, 241), 268);
    // "a,b,c,d,e".split(","): [12, 21] → 17
    assert_eq!(split_cost(9, 5), 17);
    let e = split_estimate(SizeRange::exact(9));
    assert_eq!((e.cost.min, e.cost.max), (12, 21));
    // ["a", "b", "c", "d", "e"].join("-"): the list 10, then [2, 13] → 11.
    assert_eq!(10 + join_cost(5, 9), 21);
    let e = join_estimate(SizeRange::exact(5), SizeRange::exact(1));
    assert_eq!((10 + e.cost.min, 10 + e.cost.max), (12, 23));
    // "  hello  ".trim(): [2, 11] → 7
    assert_eq!(transform_cost(9, 5), 7);
    let e = variable_transform_estimate(SizeRange::exact(9));
    assert_eq!((e.cost.min, e.cost.max), (2, 11));
    // "hello world".substring(0, 5)
    assert_eq!(transform_cost(11, 5), 8);
    assert_eq!(
        substring_estimate(SizeRange::exact(11), Some(0), Some(5))
            .cost
            .max,
        8
    );
    // 'hello world'.charAt(3)
    assert_eq!(char_at_cost(11), 4);
    assert_eq!(char_at_estimate(SizeRange::exact(11)).cost.max, 4);
    // s.lowerAscii() with 52 characters (the variable costs 1): [2, 60] → 60
    assert_eq!(1 + transform_cost(52, 52), 60);
    let e = fixed_transform_estimate(SizeRange { min: 0, max: 52 });
    assert_eq!((e.cost.min + 1, e.cost.max + 1), (2, 60));
}

#[test]
fn versions_gate_functions() {
    let names = |v: u32| -> Vec<String> {
        Strings::version(v)
            .contents()
            .functions
            .iter()
            .map(|f| f.name.clone())
            .collect()
    };
    assert!(!names(0).contains(&"format".to_string()));
    assert!(names(1).contains(&"strings.quote".to_string()));
    // cel-go declares join at every version (ext/strings.go: an older implementation below
    // version 2).
    assert!(names(0).contains(&"join".to_string()));
    assert!(names(2).contains(&"join".to_string()));
    assert!(!names(2).contains(&"reverse".to_string()));
    assert!(names(3).contains(&"reverse".to_string()));
    assert!(Strings::version(4).contents().actual_costs.is_empty());
    assert!(!Strings::version(5).contents().actual_costs.is_empty());
    assert_eq!(Strings::default().get_version(), 5);
}
