//! YAML as Kubernetes' tools read it: one document of a manifest to JSON, with the values
//! `kubectl` gives it (sigs.k8s.io/yaml over go-yaml v2, YAML 1.1 resolution), parsed from
//! events (granit-parser) straight into [`serde_json::Value`], with no tree in between.
//!
//! What that means for a plain (unquoted) scalar, as go-yaml v2's `resolve` does it
//! (go.yaml.in/yaml/v2 `resolve.go`):
//!
//! * `y`, `yes`, `on`, `true` (and their capitalised forms) are `true`; `n`, `no`, `off`,
//!   `false` are `false`; `~`, `null` and the empty scalar are `null`;
//! * numbers lose their underscores, then read as Go's `strconv.ParseInt(s, 0, 64)` reads
//!   them: `0x1F`, `0o17`, `0b101`, and a leading zero is octal (`0755` is 493); past
//!   `int64` as `uint64`; then as a float when they look like one (`1e3`, `.5`), written
//!   the way Go's JSON encoder writes floats (a whole one as an integer);
//! * `.inf` and `.nan` are floats that JSON cannot hold: the document fails, as kubectl's
//!   conversion does;
//! * timestamps stay strings, as written; quoted and block scalars are strings.
//!
//! Map keys become strings the way sigs.k8s.io/yaml makes them (`on: x` has the key
//! `"true"`, `1: x` the key `"1"`); a key that is null, a list, a map or past `int64` is an
//! error. `<<` merges mappings. A key repeated in one mapping keeps its last value, as
//! kubectl's conversion does, and is reported ([`Converted::duplicates`]) for strict decoding
//! to refuse. Anchors and aliases are expanded within a budget, so a YAML bomb is an error,
//! not an exhausted memory; nesting is bounded too.
//!
//! Only the first document of the text is read (go-yaml v2's `Unmarshal`): what follows a
//! `...` end marker is ignored. Splitting a stream into documents is the caller's (kubectl
//! splits at lines starting with `---`, before YAML sees them).

use std::borrow::Cow;

use granit_parser::{Event, Parser, ScalarStyle, Span};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value as Json};

/// Bounds on one document.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The deepest nesting of collections.
    pub max_depth: usize,
    /// The most values aliases may copy in all (each alias copies its anchor's whole value).
    pub max_alias_values: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: 200,
            max_alias_values: 1_000_000,
        }
    }
}

/// A document converted to JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Converted {
    /// The value (`null` for an empty document or one of comments only).
    pub value: Json,
    /// The paths of keys repeated within a mapping (`spec.size`, `items[1].name`), in the
    /// order found; the value kept is the last one.
    pub duplicates: Vec<String>,
}

/// Converts the first YAML document of `text` to JSON. The error says where (`yaml: line
/// 3: ...`), in the words of kubectl's conversion error where there is one (which kubectl
/// prefixes with `error converting YAML to JSON: `).
pub fn to_json(text: &str, limits: &Limits) -> Result<Converted, String> {
    let options = granit_parser::options!(emit_comments: false);
    let mut builder = Builder::new(limits);
    for next in Parser::new_from_str_with_options(text, options) {
        let (event, span) =
            next.map_err(|e| format!("yaml: line {}: {}", e.marker().line(), e.info()))?;
        let done = builder.event(event, &span)?;
        if done {
            break;
        }
    }
    Ok(Converted {
        value: builder.result.unwrap_or(Json::Null),
        duplicates: builder.duplicates,
    })
}

/// A collection being built.
enum Frame {
    List {
        items: Vec<Json>,
        anchor: usize,
    },
    Map {
        entries: Map<String, Json>,
        anchor: usize,
        /// The key whose value comes next (`None`: a key comes next).
        key: Option<Key>,
    },
}

/// A mapping's key, once read.
enum Key {
    Name(String),
    /// `<<`: the value is merged into the mapping.
    Merge,
}

struct Builder<'l> {
    limits: &'l Limits,
    stack: Vec<Frame>,
    anchors: Vec<(usize, Json)>,
    alias_budget: usize,
    result: Option<Json>,
    duplicates: Vec<String>,
    /// Whether a document has started (events before it are the stream's).
    in_document: bool,
}

impl<'l> Builder<'l> {
    fn new(limits: &'l Limits) -> Builder<'l> {
        Builder {
            limits,
            stack: Vec::new(),
            anchors: Vec::new(),
            alias_budget: limits.max_alias_values,
            result: None,
            duplicates: Vec::new(),
            in_document: false,
        }
    }

    /// Takes one event; `true` once the first document is complete.
    fn event(&mut self, event: Event<'_>, span: &Span) -> Result<bool, String> {
        let line = span.start.line();
        match event {
            Event::DocumentStart(..) => self.in_document = true,
            Event::DocumentEnd => return Ok(self.in_document),
            Event::StreamEnd => return Ok(true),
            Event::SequenceStart(_, anchor, _) => self.open(Frame::List {
                items: Vec::new(),
                anchor,
            })?,
            Event::MappingStart(_, anchor, _) => self.open(Frame::Map {
                entries: Map::new(),
                anchor,
                key: None,
            })?,
            Event::SequenceEnd | Event::MappingEnd => {
                let (value, anchor) = match self.stack.pop() {
                    Some(Frame::List { items, anchor }) => (Json::Array(items), anchor),
                    Some(Frame::Map {
                        entries, anchor, ..
                    }) => (Json::Object(entries), anchor),
                    None => return Err(format!("yaml: line {line}: unbalanced collection")),
                };
                self.remember(anchor, &value);
                self.node(value, None, line)?;
            }
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag
                    .as_ref()
                    .and_then(|t| t.core_suffix().map(str::to_string));
                let is_merge = style == ScalarStyle::Plain && tag.is_none() && text == "<<";
                let value = scalar(&text, style, tag.as_deref(), line)?;
                self.remember(anchor, &value);
                self.node(value, Some(is_merge), line)?;
            }
            Event::Alias(id) => {
                let value = self
                    .anchors
                    .iter()
                    .rev()
                    .find(|(a, _)| *a == id)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| format!("yaml: line {line}: unknown anchor referenced"))?;
                let cost = count_values(&value, self.alias_budget);
                if cost >= self.alias_budget {
                    return Err(format!(
                        "yaml: line {line}: document contains excessive aliasing (more than {} values copied)",
                        self.limits.max_alias_values
                    ));
                }
                self.alias_budget -= cost;
                self.node(value, None, line)?;
            }
            _ => {}
        }
        Ok(false)
    }

    fn open(&mut self, frame: Frame) -> Result<(), String> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(format!(
                "nested deeper than {} levels",
                self.limits.max_depth
            ));
        }
        if let Some(Frame::Map { key: None, .. }) = self.stack.last() {
            return Err("yaml: a list or a map is not supported as a map key".into());
        }
        self.stack.push(frame);
        Ok(())
    }

    fn remember(&mut self, anchor: usize, value: &Json) {
        if anchor != 0 {
            self.anchors.push((anchor, value.clone()));
        }
    }

    /// Places a complete value: a list's item, a mapping's key or value, or the document.
    /// `merge_key` says whether a scalar is the plain `<<`.
    fn node(&mut self, value: Json, merge_key: Option<bool>, line: usize) -> Result<(), String> {
        let mut repeated = None;
        match self.stack.last_mut() {
            None => self.result = Some(value),
            Some(Frame::List { items, .. }) => items.push(value),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => {
                    *key = Some(if merge_key == Some(true) {
                        Key::Merge
                    } else {
                        Key::Name(key_string(value, line)?)
                    });
                }
                Some(Key::Merge) => merge(entries, value, line)?,
                Some(Key::Name(k)) => match entries.entry(k) {
                    Entry::Vacant(place) => {
                        place.insert(value);
                    }
                    Entry::Occupied(mut place) => {
                        place.insert(value);
                        repeated = Some(place.key().clone());
                    }
                },
            },
        }
        // The top collection's own key is taken, so the path is that of the collection.
        if let Some(k) = repeated {
            let at = join(&self.path(), &k);
            self.duplicates.push(at);
        }
        Ok(())
    }

    /// The path of the collection on top of the stack (`spec.items[2]`), for reports.
    fn path(&self) -> String {
        let mut out = String::new();
        // Each collection but the top one says where the next one down sits in it.
        for parent in self.stack.iter().take(self.stack.len().saturating_sub(1)) {
            match parent {
                Frame::List { items, .. } => out.push_str(&format!("[{}]", items.len())),
                Frame::Map {
                    key: Some(Key::Name(k)),
                    ..
                } => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Frame::Map { .. } => {}
            }
        }
        out
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// How many values `v` holds (itself included), counting no further than `cap`.
fn count_values(v: &Json, cap: usize) -> usize {
    let mut n = 0;
    let mut work = vec![v];
    while let Some(v) = work.pop() {
        n += 1;
        if n >= cap {
            return cap;
        }
        match v {
            Json::Array(items) => work.extend(items),
            Json::Object(m) => work.extend(m.values()),
            _ => {}
        }
    }
    n
}

/// `<<: value`: the mapping (or each mapping of a list) merged in, entry by entry.
fn merge(entries: &mut Map<String, Json>, value: Json, line: usize) -> Result<(), String> {
    match value {
        Json::Object(m) => {
            entries.extend(m);
            Ok(())
        }
        Json::Array(maps) => {
            for m in maps {
                match m {
                    Json::Object(m) => entries.extend(m),
                    _ => {
                        return Err(format!(
                            "yaml: line {line}: map merge requires map or sequence of maps as the value"
                        ));
                    }
                }
            }
            Ok(())
        }
        _ => Err(format!(
            "yaml: line {line}: map merge requires map or sequence of maps as the value"
        )),
    }
}

/// A key as sigs.k8s.io/yaml writes it: strings as they are, integers in decimal, floats
/// as Go's `FormatFloat(f, 'g', -1, 32)`, booleans as `true`/`false`; anything else is
/// refused.
fn key_string(key: Json, line: usize) -> Result<String, String> {
    match key {
        Json::String(s) => Ok(s),
        Json::Bool(b) => Ok(b.to_string()),
        Json::Number(n) if n.is_i64() => Ok(n.to_string()),
        Json::Number(n) if n.is_f64() => Ok(go_float32_g(n.as_f64().unwrap_or(0.0))),
        other => Err(format!("yaml: line {line}: unsupported map key: {other}")),
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`: the shortest digits of the float32, in
/// exponent form (`1e+06`) when the exponent is below -4 or at least 6.
fn go_float32_g(f: f64) -> String {
    let f = f as f32;
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// A scalar's value: plain scalars resolved as go-yaml v2 resolves them, others strings,
/// explicit core tags honoured.
fn scalar(text: &str, style: ScalarStyle, tag: Option<&str>, line: usize) -> Result<Json, String> {
    match tag {
        Some("str") => return Ok(Json::String(text.to_string())),
        Some("null") => return Ok(Json::Null),
        _ => {}
    }
    if style != ScalarStyle::Plain && tag.is_none() {
        return Ok(Json::String(text.to_string()));
    }
    resolve_plain(text).map_err(|e| format!("yaml: line {line}: {e}"))
}

/// A plain scalar as go-yaml v2 resolves it, then as Go's JSON encoder writes the result.
pub fn resolve_plain(text: &str) -> Result<Json, String> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Json::Null),
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Ok(Json::Bool(true));
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Ok(Json::Bool(false));
        }
        ".nan" | ".NaN" | ".NAN" => return Err("json: unsupported value: NaN".into()),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Err("json: unsupported value: +Inf".into());
        }
        "-.inf" | "-.Inf" | "-.INF" => return Err("json: unsupported value: -Inf".into()),
        _ => {}
    }
    let first = text.as_bytes()[0];
    match first {
        b'.' => Ok(match text.parse::<f64>() {
            Ok(f) if yaml_style_float(text) && f.is_finite() => float_json(f),
            _ => Json::String(text.to_string()),
        }),
        b'+' | b'-' | b'0'..=b'9' => Ok(number(text)),
        _ => Ok(Json::String(text.to_string())),
    }
}

/// A scalar starting with a digit or a sign, as go-yaml v2's `resolve` reads it.
fn number(text: &str) -> Json {
    let plain: Cow<'_, str> = if text.contains('_') {
        Cow::Owned(text.replace('_', ""))
    } else {
        Cow::Borrowed(text)
    };
    if let Some(i) = go_parse_int(&plain) {
        return Json::from(i);
    }
    if let Some(u) = go_parse_uint(&plain) {
        return Json::from(u);
    }
    if yaml_style_float(&plain)
        && let Ok(f) = plain.parse::<f64>()
        && f.is_finite()
    {
        return float_json(f);
    }
    if let Some(bits) = plain.strip_prefix("0b") {
        if let Ok(i) = i64::from_str_radix(bits, 2) {
            return Json::from(i);
        }
        if let Ok(u) = u64::from_str_radix(bits, 2) {
            return Json::from(u);
        }
    } else if let Some(bits) = plain.strip_prefix("-0b")
        && let Ok(i) = i64::from_str_radix(&format!("-{bits}"), 2)
    {
        return Json::from(i);
    }
    Json::String(text.to_string())
}

/// Go's `strconv.ParseInt(s, 0, 64)`: an optional sign, then `0x`/`0o`/`0b` or a leading
/// `0` (octal) or decimal digits.
fn go_parse_int(s: &str) -> Option<i64> {
    let (negative, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = go_parse_uint(body)?;
    if negative {
        if magnitude <= i64::MAX as u64 + 1 {
            Some((magnitude as i128).wrapping_neg() as i64)
        } else {
            None
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's `strconv.ParseUint(s, 0, 64)`.
fn go_parse_uint(s: &str) -> Option<u64> {
    let (radix, digits) = if let Some(d) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (16, d)
    } else if let Some(d) = s.strip_prefix("0o").or_else(|| s.strip_prefix("0O")) {
        (8, d)
    } else if let Some(d) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        (2, d)
    } else if s.len() > 1 && s.starts_with('0') {
        (8, &s[1..])
    } else {
        (10, s)
    };
    if digits.is_empty() || !digits.bytes().all(|b| (b as char).is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// go-yaml v2's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'-' | b'+')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// A float as Go's JSON encoder writes it and the API server reads it back: a whole value
/// within `int64` is written without a fraction, so it arrives as an integer.
fn float_json(f: f64) -> Json {
    if f.fract() == 0.0 && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        return Json::from(f as i64);
    }
    Number::from_f64(f).map_or(Json::Null, Json::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn convert(text: &str) -> Json {
        to_json(text, &Limits::default()).unwrap().value
    }

    #[test]
    fn plain_scalars_resolve_as_go_yaml_v2_does() {
        let cases: &[(&str, Json)] = &[
            ("yes", json!(true)),
            ("On", json!(true)),
            ("y", json!(true)),
            ("NO", json!(false)),
            ("off", json!(false)),
            ("~", json!(null)),
            ("0755", json!(493)),
            ("0o17", json!(15)),
            ("0x1F", json!(31)),
            ("0b101", json!(5)),
            ("+12", json!(12)),
            ("1_000", json!(1000)),
            ("-0", json!(0)),
            ("08", json!(8)),
            ("3.0", json!(3)),
            ("1e3", json!(1000)),
            ("1.5", json!(1.5)),
            (".5", json!(0.5)),
            ("9223372036854775808", json!(9223372036854775808u64)),
            ("1:30", json!("1:30")),
            ("2024-01-01", json!("2024-01-01")),
            ("0x", json!("0x")),
            ("1.2.3", json!("1.2.3")),
            ("-", json!("-")),
            (".foo", json!(".foo")),
        ];
        for (text, want) in cases {
            assert_eq!(resolve_plain(text).unwrap(), *want, "{text}");
        }
        assert!(resolve_plain(".inf").is_err());
        assert!(resolve_plain(".nan").is_err());
    }

    #[test]
    fn quoted_and_block_scalars_and_tags_are_strings() {
        assert_eq!(
            convert("a: 'yes'\nb: \"0755\"\nc: |\n  0755\nd: !!str 12\ne: !!null x\n"),
            json!({"a": "yes", "b": "0755", "c": "0755\n", "d": "12", "e": null})
        );
    }

    #[test]
    fn keys_are_written_as_sigs_yaml_writes_them() {
        assert_eq!(
            convert("on: a\n1: b\n1.5: c\n1000000: d\n0.000001: e\nname: f\n"),
            json!({"true": "a", "1": "b", "1.5": "c", "1000000": "d", "1e-06": "e", "name": "f"})
        );
        assert!(to_json("~: a\n", &Limits::default()).is_err());
        assert!(to_json("? [a]\n: b\n", &Limits::default()).is_err());
    }

    #[test]
    fn repeated_keys_keep_the_last_value_and_are_reported() {
        let c = to_json(
            "spec:\n  size: 1\n  size: 2\n  items:\n  - {a: 1, a: 2}\n",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(c.value, json!({"spec": {"size": 2, "items": [{"a": 2}]}}));
        assert_eq!(c.duplicates, ["spec.size", "spec.items[0].a"]);
    }

    #[test]
    fn merges_aliases_and_only_the_first_document() {
        assert_eq!(
            convert("base: &b {x: 1, z: 2}\nd:\n  <<: *b\n  z: 3\nl: [*b]\n...\nignored: [\n"),
            json!({"base": {"x": 1, "z": 2}, "d": {"x": 1, "z": 3}, "l": [{"x": 1, "z": 2}]})
        );
        assert_eq!(convert("# only a comment\n"), Json::Null);
        assert_eq!(convert(""), Json::Null);
    }

    #[test]
    fn bombs_and_deep_nesting_are_refused() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..8 {
            let (prev, name) = ((b'a' + i - 1) as char, (b'a' + i) as char);
            bomb.push_str(&format!(
                "{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
        }
        let e = to_json(&bomb, &Limits::default()).unwrap_err();
        assert!(e.contains("excessive aliasing"), "{e}");
        // The parser's own bound (255 nested flow collections) or ours (200).
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        assert!(to_json(&deep, &Limits::default()).is_err());
        let deep = format!("{}1{}", "[".repeat(201), "]".repeat(201));
        let e = to_json(&deep, &Limits::default()).unwrap_err();
        assert!(e.contains("nested deeper"), "{e}");
        // `y` is a boolean to go-yaml v2, even as a key.
        assert_eq!(convert("y: 1\n"), json!({"true": 1}));
    }

    #[test]
    fn syntax_errors_say_where() {
        let e = to_json("a: 1\nb: [\n", &Limits::default()).unwrap_err();
        assert!(e.starts_with("yaml: line "), "{e}");
    }
}
