//! Kubernetes' named-format library (`format`, `format.go`), Kubernetes 1.31+.
//!
//! | function | signature | example |
//! | --- | --- | --- |
//! | `format.named` | `format.named(string) -> optional(kubernetes.NamedFormat)` | `format.named('uuid').hasValue()` |
//! | `format.<name>` | `format.dns1123Label() -> kubernetes.NamedFormat` (one per name) | `format.dns1123Label()` |
//! | `validate` | `kubernetes.NamedFormat.validate(string) -> optional(list(string))` | `format.dns1123Label().validate('my-name') == optional.none()` |
//!
//! Names: `dns1123Label`, `dns1123Subdomain`, `dns1035Label`, `qualifiedName`,
//! `dns1123LabelPrefix`, `dns1123SubdomainPrefix`, `dns1035LabelPrefix`, `labelValue`,
//! `uri`, `uuid`, `byte`, `date`, `datetime` (case-sensitive; unknown names give
//! `optional.none()`). `validate` returns `optional.none()` for a valid string and otherwise
//! the list of Kubernetes' validation messages. The `*Prefix` forms first replace the last
//! two characters of a string longer than one character that ends in `-` by `a`, as
//! Kubernetes' name-prefix validation does.
//!
//! The messages are apimachinery's, as each Kubernetes release vendors it ([`Messages`]): from
//! 1.35 (apimachinery v0.35) `qualifiedName` and `labelValue` use the `validate/content`
//! package, whose length errors say "bytes" (`must be no more than 63 bytes`) and whose
//! qualified-name error speaks of "a valid label key"; the DNS formats keep
//! `util/validation`'s "characters".
//!
//! Costs: `format.named` 1; `validate` at run time
//! `ceil(0.1 × (size(string) + 1)) × ceil(0.25 × maxRegexSize(format))`, statically
//! `ceil(0.1 × size(string)) × 32`; `==` on formats 1 at run time, `1..7` statically.

use std::any::Any;
use std::sync::Arc;

use cel_ext::{Library, LibraryContents};
use cel_runtime::{Error, Implementation, OpaqueValue, Result, Value};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::{opaque, string_arg};

/// The CEL type name of named formats.
pub const FORMAT_TYPE: &str = "kubernetes.NamedFormat";

/// The largest regex size of any format, used by the static cost (`cel.MaxNameFormatRegexSize`).
pub const MAX_NAME_FORMAT_REGEX_SIZE: u64 = 128;

/// The largest size of a format value, used by the static cost of `==` (`cel.MaxFormatSize`).
pub const MAX_FORMAT_SIZE: u64 = 64;

/// The `kubernetes.NamedFormat` type.
pub fn format_type() -> Type {
    Type::opaque(FORMAT_TYPE)
}

/// A named format.
#[derive(Clone, Copy, Debug)]
pub struct NamedFormat {
    /// The name CEL knows it by (`dns1123Label`).
    pub key: &'static str,
    /// Kubernetes' internal name (`DNS1123Label`), which equality compares.
    pub name: &'static str,
    /// The size of the regular expression Kubernetes charges for (`MaxRegexSize`).
    pub max_regex_size: u64,
    validate: fn(&str, Messages) -> Vec<String>,
}

impl NamedFormat {
    /// The validation messages for a string (empty when valid), in the newest Kubernetes'
    /// words.
    pub fn validate(&self, s: &str) -> Vec<String> {
        (self.validate)(s, Messages::NEWEST)
    }

    /// The validation messages for a string, in the words of a version of apimachinery.
    pub fn validate_with(&self, s: &str, messages: Messages) -> Vec<String> {
        (self.validate)(s, messages)
    }
}

/// Which apimachinery wrote the validation messages (Kubernetes vendors a new one with each
/// release; the messages changed once for the formats here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Messages {
    /// apimachinery v0.31 to v0.34 (Kubernetes 1.31 to 1.34): `pkg/util/validation` for
    /// everything, lengths in "characters", "a qualified name ...".
    V0_31,
    /// apimachinery v0.35 and later (Kubernetes 1.35 on, including the development branch):
    /// `qualifiedName` and `labelValue` come from `pkg/api/validate/content` (`IsLabelKey`,
    /// `IsLabelValue`), lengths in "bytes", "a valid label key ...".
    V0_35,
}

impl Messages {
    /// The newest.
    pub const NEWEST: Messages = Messages::V0_35;

    /// The messages of a Kubernetes release.
    pub fn for_kubernetes(version: crate::KubeVersion) -> Messages {
        if version < crate::KubeVersion::new(1, 35) {
            Messages::V0_31
        } else {
            Messages::V0_35
        }
    }

    /// The unit of `MaxLenError` in the `content` package's messages (used by
    /// `qualifiedName` and `labelValue`).
    fn content_unit(self) -> &'static str {
        match self {
            Messages::V0_31 => "characters",
            Messages::V0_35 => "bytes",
        }
    }
}

impl OpaqueValue for NamedFormat {
    fn type_name(&self) -> &str {
        FORMAT_TYPE
    }
    /// `format.dns1123Label()`.
    fn write_cel(&self, out: &mut String) {
        out.push_str("format.");
        out.push_str(self.key);
        out.push_str("()");
    }
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other
            .as_any()
            .downcast_ref::<NamedFormat>()
            .is_some_and(|o| o.name == self.name)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Every named format, in Kubernetes' order.
pub const FORMATS: [NamedFormat; 13] = [
    NamedFormat {
        key: "dns1123Label",
        name: "DNS1123Label",
        max_regex_size: 30,
        validate: |s, _| dns1123_label(s),
    },
    NamedFormat {
        key: "dns1123Subdomain",
        name: "DNS1123Subdomain",
        max_regex_size: 60,
        validate: |s, _| dns1123_subdomain(s),
    },
    NamedFormat {
        key: "dns1035Label",
        name: "DNS1035Label",
        max_regex_size: 30,
        validate: |s, _| dns1035_label(s),
    },
    NamedFormat {
        key: "qualifiedName",
        name: "QualifiedName",
        max_regex_size: 60,
        validate: qualified_name,
    },
    NamedFormat {
        key: "dns1123LabelPrefix",
        name: "DNS1123LabelPrefix",
        max_regex_size: 30,
        validate: |s, _| dns1123_label(&mask_trailing_dash(s)),
    },
    NamedFormat {
        key: "dns1123SubdomainPrefix",
        name: "DNS1123SubdomainPrefix",
        max_regex_size: 60,
        validate: |s, _| dns1123_subdomain(&mask_trailing_dash(s)),
    },
    NamedFormat {
        key: "dns1035LabelPrefix",
        name: "DNS1035LabelPrefix",
        max_regex_size: 30,
        validate: |s, _| dns1035_label(&mask_trailing_dash(s)),
    },
    NamedFormat {
        key: "labelValue",
        name: "LabelValue",
        max_regex_size: 40,
        validate: label_value,
    },
    NamedFormat {
        key: "uri",
        name: "URI",
        max_regex_size: 1103,
        validate: |s, _| match crate::urls::parse_request_uri(s) {
            Ok(_) => Vec::new(),
            Err(e) => vec![e],
        },
    },
    NamedFormat {
        key: "uuid",
        name: "uuid",
        max_regex_size: 70,
        validate: |s, _| fail_unless(is_uuid(s), "does not match the UUID format"),
    },
    NamedFormat {
        key: "byte",
        name: "byte",
        max_regex_size: 84,
        validate: |s, _| fail_unless(is_base64(s), "invalid base64"),
    },
    NamedFormat {
        key: "date",
        name: "date",
        max_regex_size: 71,
        validate: |s, _| fail_unless(is_date(s), "invalid date"),
    },
    NamedFormat {
        key: "datetime",
        name: "datetime",
        max_regex_size: 71,
        validate: |s, _| fail_unless(is_datetime(s), "invalid datetime"),
    },
];

/// The format with a CEL name.
pub fn lookup(key: &str) -> Option<&'static NamedFormat> {
    FORMATS.iter().find(|f| f.key == key)
}

fn fail_unless(ok: bool, msg: &str) -> Vec<String> {
    if ok {
        Vec::new()
    } else {
        vec![msg.to_string()]
    }
}

/// Kubernetes' `maskTrailingDash`: a name longer than one character that ends in `-` has its
/// last two characters replaced by `a`.
fn mask_trailing_dash(s: &str) -> String {
    if s.len() > 1 && s.ends_with('-') {
        // Both removed bytes are ASCII or the string is cut inside a character; Go cuts
        // bytes, so mirror that on the byte level and repair nothing.
        let cut = &s.as_bytes()[..s.len() - 2];
        let mut out = String::from_utf8_lossy(cut).into_owned();
        out.push('a');
        out
    } else {
        s.to_string()
    }
}

fn max_len_error(n: usize) -> String {
    max_len_error_in(n, "characters")
}

/// `MaxLenError`: "characters" in `util/validation`, "bytes" in `validate/content` (v0.35+).
fn max_len_error_in(n: usize, unit: &str) -> String {
    format!("must be no more than {n} {unit}")
}

/// Kubernetes' `RegexError`: the message, the examples and the regular expression.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = String::from(msg);
    if examples.is_empty() {
        out.push_str(" (regex used for validation is '");
    } else {
        out.push_str(" (e.g. ");
        for (i, e) in examples.iter().enumerate() {
            if i > 0 {
                out.push_str(" or ");
            }
            out.push('\'');
            out.push_str(e);
            out.push_str("', ");
        }
        out.push_str("regex used for validation is '");
    }
    out.push_str(fmt);
    out.push_str("')");
    out
}

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

fn lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, whole string.
fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => {
            lower_alnum(f) && lower_alnum(l) && b.iter().all(|&c| lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

fn is_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(is_dns1123_label)
}

fn is_dns1035_label(s: &str) -> bool {
    is_dns1123_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, whole string.
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter()
                    .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Kubernetes' `IsDNS1123Label`.
pub fn dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !is_dns1123_label(s) {
        if is_dns1123_subdomain(s) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// Kubernetes' `IsDNS1123Subdomain` (`util/validation`).
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    dns1123_subdomain_in(s, "characters")
}

/// `IsDNS1123Subdomain` with the length error's unit ("bytes" in `validate/content`).
fn dns1123_subdomain_in(s: &str, unit: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(max_len_error_in(253, unit));
    }
    if !is_dns1123_subdomain(s) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// Kubernetes' `IsDNS1035Label`.
pub fn dns1035_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !is_dns1035_label(s) {
        errs.push(regex_error(
            DNS1035_LABEL_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// Kubernetes' `IsQualifiedName` (from apimachinery v0.35, `content.IsLabelKey`).
pub fn qualified_name(s: &str, messages: Messages) -> Vec<String> {
    let unit = messages.content_unit();
    let mut errs = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain_in(prefix, unit)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            let what = match messages {
                Messages::V0_31 => "a qualified name",
                Messages::V0_35 => "a valid label key",
            };
            errs.push(format!(
                "{what} {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error_in(63, unit)));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// Kubernetes' `IsValidLabelValue` (from apimachinery v0.35, `content.IsLabelValue`).
pub fn label_value(s: &str, messages: Messages) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error_in(63, messages.content_unit()));
    }
    if !(s.is_empty() || is_qualified_name_part(s)) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// strfmt's UUID pattern, `(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`.
pub fn is_uuid(s: &str) -> bool {
    let mut b = s.as_bytes();
    for (i, n) in [8usize, 4, 4, 4, 12].into_iter().enumerate() {
        if i > 0 && b.first() == Some(&b'-') {
            b = &b[1..];
        }
        if b.len() < n || !b[..n].iter().all(u8::is_ascii_hexdigit) {
            return false;
        }
        b = &b[n..];
    }
    b.is_empty()
}

/// The padded standard base64 pattern
/// `^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$`.
pub fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !b.len().is_multiple_of(4) {
        return false;
    }
    let ok = |c: &u8| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/';
    let (body, last) = b.split_at(b.len() - 4);
    body.iter().all(ok)
        && match last {
            [x, y, b'=', b'='] => ok(x) && ok(y),
            [x, y, z, b'='] => ok(x) && ok(y) && ok(z),
            l => l.iter().all(ok),
        }
}

fn leap(y: u32) -> bool {
    y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400))
}

/// Go's `time.Parse("2006-01-02", s) == nil`.
pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |acc, c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap(y) => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// strfmt's `IsDateTime`: lower-cased and split at `t`, a valid date then a time matching
/// `^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$` with the hour,
/// minute and second compared as strings to 23, 59 and 59.
pub fn is_datetime(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let t = time.as_bytes();
    let two = |i: usize| t.len() >= i + 2 && t[i].is_ascii_digit() && t[i + 1].is_ascii_digit();
    if !(two(0) && t.get(2) == Some(&b':') && two(3) && t.get(5) == Some(&b':') && two(6)) {
        return false;
    }
    let mut rest = &time[8..];
    // `(.[0-9]+)?`: any one character, then digits (backtracking: the character may itself
    // be a digit, so try the fraction and fall back to none).
    let zone_ok = |z: &str| {
        let z = z.as_bytes();
        z == b"z"
            || (z.len() == 6
                && matches!(z[0], b'+' | b'-')
                && z[1].is_ascii_digit()
                && z[2].is_ascii_digit()
                && z[3] == b':'
                && z[4].is_ascii_digit()
                && z[5].is_ascii_digit())
    };
    let mut matched = zone_ok(rest);
    if !matched && let Some(c) = rest.chars().next() {
        let after = &rest[c.len_utf8()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        // Try every split of the digit run (the zone never starts with a digit, so only the
        // whole run can be followed by a zone).
        if digits > 0 && zone_ok(&after[digits..]) {
            matched = true;
            rest = &after[digits..];
        }
    }
    let _ = rest;
    matched && &time[0..2] <= "23" && &time[3..5] <= "59" && &time[6..8] <= "59"
}

/// Kubernetes' format library, with the validation messages of one apimachinery.
#[derive(Clone, Copy, Debug)]
pub struct Format {
    messages: Messages,
}

impl Default for Format {
    fn default() -> Self {
        Format {
            messages: Messages::NEWEST,
        }
    }
}

impl Format {
    /// The library as Kubernetes `version` has it (its apimachinery's messages).
    pub fn for_kubernetes(version: crate::KubeVersion) -> Format {
        Format {
            messages: Messages::for_kubernetes(version),
        }
    }

    /// The messages `validate` reports in.
    pub fn messages(&self) -> Messages {
        self.messages
    }
}

impl Library for Format {
    fn name(&self) -> &str {
        "format"
    }

    fn contents(&self) -> LibraryContents {
        let mut functions = vec![
            FunctionDecl::new(
                "validate",
                vec![OverloadDecl::member(
                    "format-validate",
                    vec![format_type(), Type::String],
                    Type::optional(Type::list(Type::String)),
                )],
            ),
            FunctionDecl::new(
                "format.named",
                vec![OverloadDecl::global(
                    "format-named",
                    vec![Type::String],
                    Type::optional(format_type()),
                )],
            ),
        ];
        let mut implementations: Vec<(String, Implementation)> = vec![
            ("format-validate".into(), {
                let messages = self.messages;
                Implementation::Host(Arc::new(move |args: &[Value]| match args {
                    [f, s] => validate_with(f, s, messages),
                    _ => Err(Error::no_such_overload()),
                }))
            }),
            ("format-named".into(), Implementation::Unary(named)),
        ];
        for f in &FORMATS {
            let name = format!("format.{}", f.key);
            functions.push(FunctionDecl::new(
                &name,
                vec![OverloadDecl::global(&name, vec![], format_type())],
            ));
            let value = Value::Opaque(Arc::new(*f));
            implementations.push((
                name,
                Implementation::Host(Arc::new(move |args: &[Value]| {
                    if args.is_empty() {
                        Ok(value.clone())
                    } else {
                        Err(Error::no_such_overload())
                    }
                })),
            ));
        }
        LibraryContents {
            functions,
            implementations,
            types: vec![format_type()],
            ..LibraryContents::default()
        }
    }
}

/// `format.named(name)`.
pub fn named(name: &Value) -> Result<Value> {
    let name = string_arg(name).ok_or_else(Error::no_such_overload)?;
    Ok(match lookup(name) {
        Some(f) => Value::optional_of(Value::Opaque(Arc::new(*f))),
        None => Value::optional_none(),
    })
}

/// `f.validate(s)`, in the newest Kubernetes' words.
pub fn validate(f: &Value, s: &Value) -> Result<Value> {
    validate_with(f, s, Messages::NEWEST)
}

/// `f.validate(s)`, in the words of an apimachinery version.
pub fn validate_with(f: &Value, s: &Value, messages: Messages) -> Result<Value> {
    let (Some(f), Some(s)) = (opaque::<NamedFormat>(f), string_arg(s)) else {
        return Err(Error::no_such_overload());
    };
    let errs = f.validate_with(s, messages);
    Ok(if errs.is_empty() {
        Value::optional_none()
    } else {
        Value::optional_of(Value::list(errs.into_iter().map(Value::from).collect()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_prefixes() {
        assert!(dns1123_label("my-name").is_empty());
        assert_eq!(dns1123_label("a.b"), vec!["must not contain dots"]);
        assert_eq!(
            dns1123_label("-"),
            vec![
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert!(
            lookup("dns1123LabelPrefix")
                .unwrap()
                .validate("my-label-prefix-")
                .is_empty()
        );
        let long = "a".repeat(64);
        assert_eq!(
            label_value(&long, Messages::V0_31),
            vec!["must be no more than 63 characters"]
        );
        assert_eq!(
            label_value(&long, Messages::V0_35),
            vec!["must be no more than 63 bytes"]
        );
        assert!(qualified_name("a/b/c", Messages::V0_35)[0].starts_with("a valid label key "));
        assert!(qualified_name("a/b/c", Messages::V0_31)[0].starts_with("a qualified name "));
        assert!(lookup("portName").is_none());
        assert!(is_uuid("123e4567-e89b-12d3-a456-426614174000"));
        assert!(is_uuid("123E4567E89B12D3A456426614174000"));
        assert!(!is_uuid("123e4567-e89b-12d3-a456-42661417400"));
        assert!(is_base64("aGVsbG8="));
        assert!(!is_base64("aGVsbG8"));
        assert!(!is_base64(""));
        assert!(is_date("2020-02-29"));
        assert!(!is_date("2021-02-29"));
        assert!(is_datetime("2021-01-01T00:00:00Z"));
        assert!(is_datetime("2021-01-01T23:59:59.123+01:00"));
        assert!(!is_datetime("2021-01-01T24:00:00Z"));
        assert!(is_datetime("2021-01-01t00:00:00x1z"));
        assert!(!is_datetime("2021-01-01t00:00:00xz"));
    }
}
