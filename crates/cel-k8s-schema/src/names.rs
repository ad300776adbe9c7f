//! Kubernetes' syntax checks of names, label keys and values (apimachinery's
//! `util/validation` and `api/validate/content`), each returning the messages the API server
//! gives, empty when the value is valid.
//!
//! Two flavours of the DNS checks exist upstream and differ only in the length message:
//! object names and namespaces say `must be no more than 253 characters`, label keys say
//! `bytes`; both are kept.

use std::sync::LazyLock;

use regex::Regex;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT: &str =
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

fn anchored(fmt: &str) -> Regex {
    Regex::new(&format!("^(?:{fmt})$")).expect("built-in name pattern")
}

static DNS1123_LABEL: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1123_LABEL_FMT));
static DNS1123_SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1123_SUBDOMAIN_FMT));
static DNS1035_LABEL: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1035_LABEL_FMT));
static LABEL_KEY: LazyLock<Regex> = LazyLock::new(|| anchored(LABEL_KEY_FMT));
static LABEL_VALUE: LazyLock<Regex> = LazyLock::new(|| anchored(LABEL_VALUE_FMT));

/// How a length limit is worded.
#[derive(Clone, Copy)]
enum Unit {
    Characters,
    Bytes,
}

fn max_len(n: usize, unit: Unit) -> String {
    match unit {
        Unit::Characters => format!("must be no more than {n} characters"),
        Unit::Bytes => format!("must be no more than {n} bytes"),
    }
}

/// apimachinery's `RegexError`: the explanation, examples and the pattern.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{fmt}')"));
    s
}

fn dns1123_label(value: &str, unit: Unit) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63, unit));
    }
    if !DNS1123_LABEL.is_match(value) {
        if DNS1123_SUBDOMAIN.is_match(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

fn dns1123_subdomain(value: &str, unit: Unit) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len(253, unit));
    }
    if !DNS1123_SUBDOMAIN.is_match(value) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsDNS1123Label` (namespaces).
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    dns1123_label(value, Unit::Characters)
}

/// `IsDNS1123Subdomain` (object names of most kinds, custom resources included).
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    dns1123_subdomain(value, Unit::Characters)
}

/// `IsDNS1035Label` (an embedded resource's lower-cased kind).
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63, Unit::Characters));
    }
    if !DNS1035_LABEL.is_match(value) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsQualifiedName` (label keys, annotation keys lower-cased, finalizers): an optional
/// DNS subdomain prefix and `/`, then a name of at most 63 characters.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    const KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
    const EXAMPLES: [&str; 3] = ["MyName", "my.name", "123-abc"];
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                for m in dns1123_subdomain(prefix, Unit::Bytes) {
                    errs.push(format!("prefix part {m}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(KEY_MSG, LABEL_KEY_FMT, &EXAMPLES)
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len(63, Unit::Bytes)));
    }
    if !LABEL_KEY.is_match(name) {
        errs.push(format!(
            "name part {}",
            regex_error(KEY_MSG, LABEL_KEY_FMT, &EXAMPLES)
        ));
    }
    errs
}

/// `IsValidLabelValue`: empty, or a name of at most 63 characters.
pub fn is_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63, Unit::Bytes));
    }
    if !LABEL_VALUE.is_match(value) {
        errs.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `IsPathSegmentName`: not `.` or `..`, no `/` or `%`.
pub fn is_path_segment_name(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    is_path_segment_prefix(name)
}

/// `IsPathSegmentPrefix`: no `/` or `%`.
pub fn is_path_segment_prefix(name: &str) -> Vec<String> {
    ["/", "%"]
        .iter()
        .filter(|bad| name.contains(*bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// A name function of apimachinery's `ValidateNameFunc` kind: the name, and whether it is a
/// `generateName` prefix.
pub type NameCheck = fn(&str, bool) -> Vec<String>;

/// `NameIsDNSSubdomain`: a prefix is checked with its trailing dash masked.
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return is_dns1123_subdomain(&mask_trailing_dash(name));
    }
    is_dns1123_subdomain(name)
}

/// `NameIsDNSLabel` (namespace names).
pub fn name_is_dns_label(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return is_dns1123_label(&mask_trailing_dash(name));
    }
    is_dns1123_label(name)
}

/// `NameIsDNS1035Label` (Service names).
pub fn name_is_dns1035_label(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return is_dns1035_label(&mask_trailing_dash(name));
    }
    is_dns1035_label(name)
}

/// `ValidatePathSegmentName`.
pub fn name_is_path_segment(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        is_path_segment_prefix(name)
    } else {
        is_path_segment_name(name)
    }
}

/// apimachinery's `maskTrailingDash`: a prefix ending in `-` has its last two characters
/// replaced by `a` (upstream drops one character more than it masks; kept for fidelity).
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let cut = name.len() - 2;
        if name.is_char_boundary(cut) {
            return format!("{}a", &name[..cut]);
        }
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        assert!(is_dns1123_subdomain("a.b-c").is_empty());
        assert_eq!(
            is_dns1123_subdomain("A"),
            [
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );
        assert_eq!(is_dns1123_label("a.b"), ["must not contain dots"]);
        assert_eq!(
            is_dns1123_label("$$$"),
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(
            is_label_value(&"a".repeat(64))[0],
            "must be no more than 63 bytes"
        );
        assert_eq!(is_qualified_name("/a"), ["prefix part must be non-empty"]);
        assert_eq!(is_qualified_name("a/b/c").len(), 1);
        assert!(is_qualified_name("example.com/My_Name").is_empty());
        assert_eq!(is_path_segment_name(".."), ["may not be '..'"]);
        assert_eq!(
            is_path_segment_name("a/%"),
            ["may not contain '/'", "may not contain '%'"]
        );
        assert!(name_is_dns_subdomain("abc-", true).is_empty());
        assert!(!name_is_dns_subdomain("abc-", false).is_empty());
    }
}
