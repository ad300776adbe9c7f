//! Kubernetes' URL library (`k8s.urls`, `urls.go`), Kubernetes 1.23+.
//!
//! | function | signature | example |
//! | --- | --- | --- |
//! | `url` | `url(string) -> kubernetes.URL` | `url('https://example.com:80/')` |
//! | `isURL` | `isURL(string) -> bool` | `isURL('/absolute-path')` |
//! | `getScheme` | `kubernetes.URL.getScheme() -> string` | `url('https://example.com/').getScheme() == 'https'` |
//! | `getHost` | `kubernetes.URL.getHost() -> string` | `url('https://[::1]:80/').getHost() == '[::1]:80'` |
//! | `getHostname` | `kubernetes.URL.getHostname() -> string` | `url('https://[::1]:80/').getHostname() == '::1'` |
//! | `getPort` | `kubernetes.URL.getPort() -> string` | `url('https://example.com:80/').getPort() == '80'` |
//! | `getEscapedPath` | `kubernetes.URL.getEscapedPath() -> string` | `url('https://example.com/with space/').getEscapedPath() == '/with%20space/'` |
//! | `getQuery` | `kubernetes.URL.getQuery() -> map(string, list(string))` | `url('https://example.com/?k=a&k=b').getQuery() == {'k': ['a', 'b']}` |
//!
//! A string is a URL when Go's `url.ParseRequestURI` accepts it: an absolute URL with a
//! scheme (a scheme followed by anything that does not start with `/` is an opaque URL and is
//! accepted), or an absolute path; `#` is not special there. `url()` then parses the string
//! again the way Go's `url.Parse` does (splitting off the fragment) to build the value. Errors
//! read `URL parse error during conversion from string: parse "<input>": <reason>` with Go's
//! reasons (`invalid URI for request`, `missing protocol scheme`, `invalid port ":x" after
//! host`, `invalid URL escape "%zz"`, ...). URL equality compares Go's re-serialisation.
//!
//! Costs: `url` `ceil(0.1 × size(string))`; `isURL` 1 (not overridden by Kubernetes); the
//! accessors 1; `==` 1 at run time and `ceil(0.1 × (1..size(right operand)))` statically.
//!
//! Strings are CEL strings (UTF-8): where Go would return bytes that are not UTF-8 (a host or
//! query value with `%ff`), the invalid bytes are replaced by U+FFFD.

use std::any::Any;
use std::sync::Arc;

use cel_ext::{Library, LibraryContents};
use cel_runtime::{Error, Implementation, Key, MapValue, OpaqueValue, Result, Value};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::{opaque, string_arg};
use cel_runtime::format::go_quote as quote;

/// The CEL type name of URLs.
pub const URL_TYPE: &str = "kubernetes.URL";

/// The `kubernetes.URL` type.
pub fn url_type() -> Type {
    Type::opaque(URL_TYPE)
}

/// A parsed URL, as Go's `url.URL` holds it (decoded parts as bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Url {
    /// Lower-cased scheme.
    pub scheme: String,
    /// The opaque part of a URL like `mailto:x`.
    pub opaque: String,
    /// User name and optional password, decoded.
    pub user: Option<(Vec<u8>, Option<Vec<u8>>)>,
    /// `host` or `host:port`, decoded.
    pub host: Vec<u8>,
    /// The decoded path.
    pub path: Vec<u8>,
    /// The path as written, when it differs from the default encoding of `path`.
    pub raw_path: String,
    /// Whether the host was empty but the authority marker was absent (`scheme:/path`).
    pub omit_host: bool,
    /// Whether a lone trailing `?` was present.
    pub force_query: bool,
    /// The query, still encoded.
    pub raw_query: String,
    /// The decoded fragment.
    pub fragment: Vec<u8>,
    /// The fragment as written, when it differs from the default encoding.
    pub raw_fragment: String,
}

impl OpaqueValue for Url {
    /// `k8s.io/apiserver/pkg/cel`'s type.
    fn go_type_name(&self) -> &str {
        "cel.URL"
    }
    fn type_name(&self) -> &str {
        URL_TYPE
    }
    /// `url("https://example.com/a")`, the URL as Go's `URL.String()` writes it (what
    /// equality compares).
    fn write_cel(&self, out: &mut String) {
        out.push_str("url(");
        cel_runtime::format::push_string_literal(out, &self.to_go_string());
        out.push(')');
    }
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other
            .as_any()
            .downcast_ref::<Url>()
            .is_some_and(|o| o.to_go_string() == self.to_go_string())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone)
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => return c == b'?',
            Mode::UserPassword => return matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => return true,
            Mode::Fragment => return false,
            Mode::Host | Mode::Zone => {}
        },
        _ => {}
    }
    if mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*') {
        return false;
    }
    true
}

fn unhex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

fn escape_error(s: &[u8]) -> String {
    format!("invalid URL escape {}", quote(&String::from_utf8_lossy(s)))
}

/// Go's `unescape`.
fn unescape(s: &[u8], mode: Mode) -> std::result::Result<Vec<u8>, String> {
    let mut i = 0;
    let mut n = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                n += 1;
                if i + 2 >= s.len()
                    || !s[i + 1].is_ascii_hexdigit()
                    || !s[i + 2].is_ascii_hexdigit()
                {
                    let rest = &s[i..];
                    return Err(escape_error(&rest[..rest.len().min(3)]));
                }
                if mode == Mode::Host && unhex(s[i + 1]) < 8 && &s[i..i + 3] != b"%25" {
                    return Err(escape_error(&s[i..i + 3]));
                }
                if mode == Mode::Zone {
                    let v = (unhex(s[i + 1]) << 4) | unhex(s[i + 2]);
                    if &s[i..i + 3] != b"%25" && v != b' ' && should_escape(v, Mode::Host) {
                        return Err(escape_error(&s[i..i + 3]));
                    }
                }
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        quote(&(c as char).to_string())
                    ));
                }
                i += 1;
            }
        }
    }
    let plus = mode == Mode::QueryComponent;
    if n == 0 && !(plus && s.contains(&b'+')) {
        return Ok(s.to_vec());
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                out.push((unhex(s[i + 1]) << 4) | unhex(s[i + 2]));
                i += 3;
            }
            b'+' if plus => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// Go's `escape`.
fn escape(s: &[u8], mode: Mode) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for &c in s {
        if should_escape(c, mode) {
            if c == b' ' && mode == Mode::QueryComponent {
                out.push('+');
            } else {
                out.push('%');
                out.push(HEX[(c >> 4) as usize] as char);
                out.push(HEX[(c & 15) as usize] as char);
            }
        } else {
            out.push(c as char);
        }
    }
    out
}

fn valid_encoded(s: &str, mode: Mode) -> bool {
    s.bytes().all(|c| {
        matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(c, mode)
    })
}

fn valid_optional_port(port: &[u8]) -> bool {
    match port.split_first() {
        None => true,
        Some((b':', digits)) => digits.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

fn valid_userinfo(s: &str) -> bool {
    s.chars().all(|r| {
        r.is_ascii_alphanumeric()
            || matches!(
                r,
                '-' | '.'
                    | '_'
                    | ':'
                    | '~'
                    | '!'
                    | '$'
                    | '&'
                    | '\''
                    | '('
                    | ')'
                    | '*'
                    | '+'
                    | ','
                    | ';'
                    | '='
                    | '%'
                    | '@'
            )
    })
}

/// Go's `getScheme`.
fn get_scheme(raw: &str) -> std::result::Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' => {
                if i == 0 {
                    return Ok(("", raw));
                }
            }
            b':' => {
                if i == 0 {
                    return Err("missing protocol scheme".into());
                }
                return Ok((&raw[..i], &raw[i + 1..]));
            }
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseHost` (Go 1.26: a colon before the port of an unbracketed host is rejected).
fn parse_host(host: &str) -> std::result::Result<Vec<u8>, String> {
    let b = host.as_bytes();
    if host.starts_with('[') {
        let Some(i) = host.rfind(']') else {
            return Err("missing ']' in host".into());
        };
        let colon_port = &host[i + 1..];
        if !valid_optional_port(colon_port.as_bytes()) {
            return Err(format!("invalid port {} after host", quote(colon_port)));
        }
        if let Some(zone) = host[..i].find("%25") {
            let mut out = unescape(&b[..zone], Mode::Host)?;
            out.extend(unescape(&b[zone..i], Mode::Zone)?);
            out.extend(unescape(&b[i..], Mode::Host)?);
            return Ok(out);
        }
    } else if let Some(i) = host.find(':') {
        let colon_port = &host[i..];
        if !valid_optional_port(colon_port.as_bytes()) {
            return Err(format!("invalid port {} after host", quote(colon_port)));
        }
    }
    unescape(b, Mode::Host)
}

type UserInfo = (Vec<u8>, Option<Vec<u8>>);

fn parse_authority(authority: &str) -> std::result::Result<(Option<UserInfo>, Vec<u8>), String> {
    let at = authority.rfind('@');
    let host = parse_host(match at {
        Some(i) => &authority[i + 1..],
        None => authority,
    })?;
    let Some(i) = at else {
        return Ok((None, host));
    };
    let userinfo = &authority[..i];
    if !valid_userinfo(userinfo) {
        return Err("net/url: invalid userinfo".into());
    }
    let user = match userinfo.split_once(':') {
        None => (unescape(userinfo.as_bytes(), Mode::UserPassword)?, None),
        Some((u, p)) => (
            unescape(u.as_bytes(), Mode::UserPassword)?,
            Some(unescape(p.as_bytes(), Mode::UserPassword)?),
        ),
    };
    Ok((Some(user), host))
}

/// Go's internal `parse(rawURL, viaRequest)`; the error is the bare reason.
fn parse(raw: &str, via_request: bool) -> std::result::Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = b"*".to_vec();
        return Ok(url);
    }
    let (scheme, mut rest) = get_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((r, q)) = rest.split_once('?') {
        rest = r;
        url.raw_query = q.to_string();
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_string();
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".into());
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && rest.starts_with("//")
    {
        let authority_and_rest = &rest[2..];
        let (authority, tail) = match authority_and_rest.find('/') {
            Some(i) => (&authority_and_rest[..i], &authority_and_rest[i..]),
            None => (authority_and_rest, ""),
        };
        let (user, host) = parse_authority(authority)?;
        url.user = user;
        url.host = host;
        rest = tail;
    } else if !url.scheme.is_empty() && rest.starts_with('/') {
        url.omit_host = true;
    }
    let path = unescape(rest.as_bytes(), Mode::Path)?;
    if escape(&path, Mode::Path) != rest {
        url.raw_path = rest.to_string();
    }
    url.path = path;
    Ok(url)
}

fn wrap(raw: &str, reason: String) -> String {
    format!("parse {}: {reason}", quote(raw))
}

/// Go's `url.ParseRequestURI`; the error reads as Go's `*url.Error` does.
pub fn parse_request_uri(raw: &str) -> std::result::Result<Url, String> {
    parse(raw, true).map_err(|e| wrap(raw, e))
}

/// Go's `url.Parse` (splits off the fragment).
pub fn parse_url(raw: &str) -> std::result::Result<Url, String> {
    let (u, frag) = match raw.split_once('#') {
        Some((u, f)) => (u, Some(f)),
        None => (raw, None),
    };
    let mut url = parse(u, false).map_err(|e| wrap(u, e))?;
    if let Some(f) = frag.filter(|f| !f.is_empty()) {
        let decoded = unescape(f.as_bytes(), Mode::Fragment).map_err(|e| wrap(raw, e))?;
        if escape(&decoded, Mode::Fragment) != f {
            url.raw_fragment = f.to_string();
        }
        url.fragment = decoded;
    }
    Ok(url)
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Go's `splitHostPort` on `URL.Host`.
fn split_host_port(host: &[u8]) -> (&[u8], &[u8]) {
    let mut h = host;
    let mut port: &[u8] = b"";
    if let Some(colon) = host.iter().rposition(|&c| c == b':')
        && valid_optional_port(&host[colon..])
    {
        h = &host[..colon];
        port = &host[colon + 1..];
    }
    if h.len() >= 2 && h.starts_with(b"[") && h.ends_with(b"]") {
        h = &h[1..h.len() - 1];
    }
    (h, port)
}

impl Url {
    /// Go's `URL.EscapedPath`.
    pub fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded(&self.raw_path, Mode::Path)
            && unescape(self.raw_path.as_bytes(), Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        if self.path == b"*" {
            return "*".into();
        }
        escape(&self.path, Mode::Path)
    }

    fn escaped_fragment(&self) -> String {
        if !self.raw_fragment.is_empty()
            && valid_encoded(&self.raw_fragment, Mode::Fragment)
            && unescape(self.raw_fragment.as_bytes(), Mode::Fragment)
                .is_ok_and(|f| f == self.fragment)
        {
            return self.raw_fragment.clone();
        }
        escape(&self.fragment, Mode::Fragment)
    }

    /// `URL.Hostname()`.
    pub fn hostname(&self) -> String {
        lossy(split_host_port(&self.host).0)
    }

    /// `URL.Port()`.
    pub fn port(&self) -> String {
        lossy(split_host_port(&self.host).1)
    }

    /// Go's `URL.String()`.
    pub fn to_go_string(&self) -> String {
        let mut buf = String::new();
        if !self.scheme.is_empty() {
            buf.push_str(&self.scheme);
            buf.push(':');
        }
        if !self.opaque.is_empty() {
            buf.push_str(&self.opaque);
        } else {
            let has_authority =
                !self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some();
            let omit = self.omit_host && self.host.is_empty() && self.user.is_none();
            if has_authority && !omit {
                {
                    if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                        buf.push_str("//");
                    }
                    if let Some((u, p)) = &self.user {
                        buf.push_str(&escape(u, Mode::UserPassword));
                        if let Some(p) = p {
                            buf.push(':');
                            buf.push_str(&escape(p, Mode::UserPassword));
                        }
                        buf.push('@');
                    }
                    if !self.host.is_empty() {
                        buf.push_str(&escape(&self.host, Mode::Host));
                    }
                }
            }
            let path = self.escaped_path();
            if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                buf.push('/');
            }
            if buf.is_empty() && path.split('/').next().is_some_and(|s| s.contains(':')) {
                buf.push_str("./");
            }
            buf.push_str(&path);
        }
        if self.force_query || !self.raw_query.is_empty() {
            buf.push('?');
            buf.push_str(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            buf.push('#');
            buf.push_str(&self.escaped_fragment());
        }
        buf
    }

    /// Go's `URL.Query()` (`ParseQuery`, errors ignored): pairs in order, keys repeated.
    pub fn query(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for pair in self.raw_query.split('&') {
            if pair.contains(';') || pair.is_empty() {
                continue;
            }
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let (Ok(k), Ok(v)) = (
                unescape(k.as_bytes(), Mode::QueryComponent),
                unescape(v.as_bytes(), Mode::QueryComponent),
            ) else {
                continue;
            };
            let (k, v) = (lossy(&k), lossy(&v));
            match out.iter_mut().find(|(key, _)| *key == k) {
                Some((_, vs)) => vs.push(v),
                None => out.push((k, vec![v])),
            }
        }
        out
    }
}

/// Kubernetes' URL library.
#[derive(Clone, Copy, Debug, Default)]
pub struct Urls;

impl Library for Urls {
    fn name(&self) -> &str {
        "k8s.urls"
    }

    fn contents(&self) -> LibraryContents {
        let accessor = |name: &str, id: &str, result: Type| {
            FunctionDecl::new(
                name,
                vec![OverloadDecl::member(id, vec![url_type()], result)],
            )
        };
        LibraryContents {
            functions: vec![
                FunctionDecl::new(
                    "url",
                    vec![OverloadDecl::global(
                        "string_to_url",
                        vec![Type::String],
                        url_type(),
                    )],
                ),
                FunctionDecl::new(
                    "isURL",
                    vec![OverloadDecl::global(
                        "is_url_string",
                        vec![Type::String],
                        Type::Bool,
                    )],
                ),
                accessor("getScheme", "url_get_scheme", Type::String),
                accessor("getHost", "url_get_host", Type::String),
                accessor("getHostname", "url_get_hostname", Type::String),
                accessor("getPort", "url_get_port", Type::String),
                accessor("getEscapedPath", "url_get_escaped_path", Type::String),
                accessor(
                    "getQuery",
                    "url_get_query",
                    Type::map(Type::String, Type::list(Type::String)),
                ),
            ],
            implementations: vec![
                ("string_to_url".into(), Implementation::Unary(to_url)),
                ("is_url_string".into(), Implementation::Unary(is_url)),
                (
                    "url_get_scheme".into(),
                    Implementation::Unary(|v| with_url(v, |u| Value::from(u.scheme.as_str()))),
                ),
                (
                    "url_get_host".into(),
                    Implementation::Unary(|v| with_url(v, |u| Value::from(lossy(&u.host)))),
                ),
                (
                    "url_get_hostname".into(),
                    Implementation::Unary(|v| with_url(v, |u| Value::from(u.hostname()))),
                ),
                (
                    "url_get_port".into(),
                    Implementation::Unary(|v| with_url(v, |u| Value::from(u.port()))),
                ),
                (
                    "url_get_escaped_path".into(),
                    Implementation::Unary(|v| with_url(v, |u| Value::from(u.escaped_path()))),
                ),
                ("url_get_query".into(), Implementation::Unary(get_query)),
            ],
            types: vec![url_type()],
            ..LibraryContents::default()
        }
    }
}

fn with_url(v: &Value, f: impl FnOnce(&Url) -> Value) -> Result<Value> {
    opaque::<Url>(v).map(f).ok_or_else(Error::no_such_overload)
}

/// `url(s)`.
pub fn to_url(s: &Value) -> Result<Value> {
    let s = string_arg(s).ok_or_else(Error::no_such_overload)?;
    let conv = |e: String| {
        Error::new(format!(
            "URL parse error during conversion from string: {e}"
        ))
    };
    parse_request_uri(s).map_err(conv)?;
    let u = parse_url(s).map_err(conv)?;
    Ok(Value::Opaque(Arc::new(u)))
}

/// `isURL(s)`.
pub fn is_url(s: &Value) -> Result<Value> {
    let s = string_arg(s).ok_or_else(Error::no_such_overload)?;
    Ok(Value::Bool(parse_request_uri(s).is_ok()))
}

/// `u.getQuery()`.
pub fn get_query(v: &Value) -> Result<Value> {
    let u = opaque::<Url>(v).ok_or_else(Error::no_such_overload)?;
    let q = u.query();
    let mut m = MapValue::with_capacity(q.len());
    for (k, vs) in q {
        m.insert(
            Key::String(k.into()),
            Value::list(vs.into_iter().map(Value::from).collect()),
        );
    }
    Ok(Value::Map(Arc::new(m)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_uri_rules() {
        assert!(parse_request_uri("https://kubernetes.io/").is_ok());
        assert!(parse_request_uri("https:://kubernetes.io/").is_ok());
        assert!(parse_request_uri("/absolute-path").is_ok());
        assert!(parse_request_uri("mailto:x").is_ok());
        assert_eq!(
            parse_request_uri("../relative-path").unwrap_err(),
            "parse \"../relative-path\": invalid URI for request"
        );
        assert_eq!(
            parse_request_uri(":foo").unwrap_err(),
            "parse \":foo\": missing protocol scheme"
        );
        assert_eq!(
            parse_request_uri("https://a:b/").unwrap_err(),
            "parse \"https://a:b/\": invalid port \":b\" after host"
        );
        assert_eq!(
            parse_request_uri("http://a/%zz").unwrap_err(),
            "parse \"http://a/%zz\": invalid URL escape \"%zz\""
        );
        assert_eq!(parse_request_uri("").unwrap_err(), "parse \"\": empty url");
    }

    #[test]
    fn accessors() {
        let u = parse_url("https://user:pw@[::1]:80/a%20b/c?k=a&k=b#frag").unwrap();
        assert_eq!(u.hostname(), "::1");
        assert_eq!(u.port(), "80");
        assert_eq!(u.escaped_path(), "/a%20b/c");
        assert_eq!(u.query(), vec![("k".into(), vec!["a".into(), "b".into()])]);
        assert_eq!(
            u.to_go_string(),
            "https://user:pw@[::1]:80/a%20b/c?k=a&k=b#frag"
        );
        let u = parse_url("https://example.com/with space/").unwrap();
        assert_eq!(u.escaped_path(), "/with%20space/");
    }
}
