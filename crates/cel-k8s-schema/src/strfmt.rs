//! The string formats the API server checks in custom resources (kube-openapi's `strfmt`
//! registry, limited to the formats apiextensions supports for CRDs at a compatibility
//! version), and which `format` values survive in a schema node at all.
//!
//! Checks follow the Go functions the registry uses (`net.ParseIP`, `url.ParseRequestURI`,
//! `time.Parse`, govalidator's patterns, ...). Known differences: `email` accepts the common
//! RFC 5322 forms (`a@b.c`, `Name <a@b.c>`, quoted local parts, domain literals) rather than
//! every form `net/mail` parses (comments, obsolete syntax, encoded words).

use std::sync::LazyLock;

use regex::Regex;

/// A string format Kubernetes validates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `bsonobjectid`: 24 hex digits.
    BsonObjectId,
    /// `uri`: Go's `url.ParseRequestURI`.
    Uri,
    /// `email`: an address `net/mail` parses.
    Email,
    /// `hostname`: RFC 1034 host names (with Unicode letters and symbols, as kube-openapi's
    /// pattern allows).
    Hostname,
    /// `ipv4`: an IP with a dot (`::ffff:1.2.3.4` too), leading zeros allowed.
    Ipv4,
    /// `ipv6`: an IP with a colon.
    Ipv6,
    /// `cidr`: an IP prefix, leading zeros allowed.
    Cidr,
    /// `mac`: Go's `net.ParseMAC`.
    Mac,
    /// `uuid`.
    Uuid,
    /// `uuid3`.
    Uuid3,
    /// `uuid4`.
    Uuid4,
    /// `uuid5`.
    Uuid5,
    /// `isbn`: ISBN-10 or ISBN-13.
    Isbn,
    /// `isbn10`.
    Isbn10,
    /// `isbn13`.
    Isbn13,
    /// `creditcard`: a card number pattern and the Luhn checksum.
    CreditCard,
    /// `ssn`: a U.S. social security number.
    Ssn,
    /// `hexcolor`.
    HexColor,
    /// `rgbcolor`.
    RgbColor,
    /// `byte`: standard base64 (padded).
    Byte,
    /// `password`: anything.
    Password,
    /// `date`: `2006-01-02`.
    Date,
    /// `duration`: Go's `time.ParseDuration`, or number-unit pairs (`3 days`).
    Duration,
    /// `date-time` (`datetime`): RFC 3339.
    DateTime,
    /// `k8s-short-name` (from Kubernetes 1.34): a DNS label.
    K8sShortName,
    /// `k8s-long-name` (from Kubernetes 1.34): a DNS subdomain.
    K8sLongName,
}

impl Format {
    /// The format a schema's `format` names, looked up as the registry does (dashes
    /// ignored: `date-time` is `datetime`), if Kubernetes `minor` (1.minor) supports it.
    pub fn lookup(name: &str, minor: u32) -> Option<Format> {
        let normalized: String = name.chars().filter(|&c| c != '-').collect();
        let f = match normalized.as_str() {
            "bsonobjectid" => Format::BsonObjectId,
            "uri" => Format::Uri,
            "email" => Format::Email,
            "hostname" => Format::Hostname,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "cidr" => Format::Cidr,
            "mac" => Format::Mac,
            "uuid" => Format::Uuid,
            "uuid3" => Format::Uuid3,
            "uuid4" => Format::Uuid4,
            "uuid5" => Format::Uuid5,
            "isbn" => Format::Isbn,
            "isbn10" => Format::Isbn10,
            "isbn13" => Format::Isbn13,
            "creditcard" => Format::CreditCard,
            "ssn" => Format::Ssn,
            "hexcolor" => Format::HexColor,
            "rgbcolor" => Format::RgbColor,
            "byte" => Format::Byte,
            "password" => Format::Password,
            "date" => Format::Date,
            "duration" => Format::Duration,
            "datetime" => Format::DateTime,
            "k8sshortname" if minor >= 34 => Format::K8sShortName,
            "k8slongname" if minor >= 34 => Format::K8sLongName,
            _ => return None,
        };
        Some(f)
    }

    /// Whether `s` is valid in this format.
    pub fn validates(self, s: &str) -> bool {
        match self {
            Format::BsonObjectId => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
            Format::Uri => is_request_uri(s),
            Format::Email => is_email(s),
            Format::Hostname => is_hostname(s),
            Format::Ipv4 => parse_ip(s, true).is_some() && s.contains('.'),
            Format::Ipv6 => parse_ip(s, false).is_some() && s.contains(':'),
            Format::Cidr => is_cidr(s),
            Format::Mac => is_mac(s),
            Format::Uuid => UUID.is_match(s),
            Format::Uuid3 => UUID3.is_match(s),
            Format::Uuid4 => UUID4.is_match(s),
            Format::Uuid5 => UUID5.is_match(s),
            Format::Isbn => is_isbn10(s) || is_isbn13(s),
            Format::Isbn10 => is_isbn10(s),
            Format::Isbn13 => is_isbn13(s),
            Format::CreditCard => is_credit_card(s),
            Format::Ssn => s.len() == 11 && SSN.is_match(s),
            Format::HexColor => HEX_COLOR.is_match(s),
            Format::RgbColor => RGB_COLOR.is_match(s),
            Format::Byte => BASE64.is_match(s),
            Format::Password => true,
            Format::Date => is_date(s),
            Format::Duration => is_duration(s),
            Format::DateTime => is_date_time(s),
            Format::K8sShortName => s.len() <= 63 && DNS_LABEL.is_match(s),
            Format::K8sLongName => s.len() <= 253 && DNS_SUBDOMAIN.is_match(s),
        }
    }
}

fn re(p: &str) -> Regex {
    Regex::new(p).expect("built-in format pattern")
}

static UUID: LazyLock<Regex> =
    LazyLock::new(|| re("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static UUID3: LazyLock<Regex> =
    LazyLock::new(|| re("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static UUID4: LazyLock<Regex> = LazyLock::new(|| {
    re("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: LazyLock<Regex> = LazyLock::new(|| {
    re("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static SSN: LazyLock<Regex> = LazyLock::new(|| re(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$"));
static HEX_COLOR: LazyLock<Regex> = LazyLock::new(|| re("^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGB_COLOR: LazyLock<Regex> = LazyLock::new(|| {
    let n = "(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
    let sp = r"[\t\n\x0C\r ]*";
    re(&format!(r"^rgb\({sp}{n}{sp},{sp}{n}{sp},{sp}{n}{sp}\)$"))
});
static BASE64: LazyLock<Regex> = LazyLock::new(|| {
    re("^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
});
static CREDIT_CARD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        "^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$",
    )
});
static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
});
static DNS_LABEL: LazyLock<Regex> = LazyLock::new(|| re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"));
static DNS_SUBDOMAIN: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"));
static DATE_TIME_CLOCK: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
});
static DURATION_PAIR: LazyLock<Regex> =
    LazyLock::new(|| re(r"(([0-9]+)[\t\n\x0B\x0C\r ]*([A-Za-zµ]+))"));

fn is_hostname(s: &str) -> bool {
    HOSTNAME.is_match(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

fn is_credit_card(s: &str) -> bool {
    let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_digit).collect();
    let Ok(text) = std::str::from_utf8(&digits) else {
        return false;
    };
    if !CREDIT_CARD.is_match(text) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            let d = u32::from(d - b'0');
            if i % 2 == 1 {
                let twice = d * 2;
                if twice >= 10 { twice % 10 + 1 } else { twice }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// An ISBN with ASCII spaces and dashes removed.
fn isbn_digits(s: &str) -> Vec<u8> {
    s.bytes()
        .filter(|b| !matches!(b, b'-' | b' ' | b'\t' | b'\n' | b'\x0B' | b'\x0C' | b'\r'))
        .collect()
}

fn is_isbn10(s: &str) -> bool {
    let d = isbn_digits(s);
    let shape_ok = d.len() == 10
        && d[..9].iter().all(u8::is_ascii_digit)
        && (d[9].is_ascii_digit() || d[9] == b'X');
    if !shape_ok {
        return false;
    }
    let mut sum: u32 = (0..9)
        .map(|i| (i as u32 + 1) * u32::from(d[i] - b'0'))
        .sum();
    sum += 10
        * if d[9] == b'X' {
            10
        } else {
            u32::from(d[9] - b'0')
        };
    sum.is_multiple_of(11)
}

fn is_isbn13(s: &str) -> bool {
    let d = isbn_digits(s);
    if d.len() != 13 || !d.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = (0..12)
        .map(|i| if i % 2 == 0 { 1 } else { 3 } * u32::from(d[i] - b'0'))
        .sum();
    u32::from(d[12] - b'0') == (10 - sum % 10) % 10
}

/// `time.Parse("2006-01-02", s)`: four-digit year, two-digit month and day, a real date.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    let shape_ok = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && [0, 1, 2, 3, 5, 6, 8, 9]
            .iter()
            .all(|&i| b[i].is_ascii_digit());
    if !shape_ok {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<i16>().unwrap_or(-1);
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    let (Ok(month), Ok(day)) = (i8::try_from(month), i8::try_from(day)) else {
        return false;
    };
    jiff::civil::Date::new(year, month, day).is_ok()
}

/// strfmt's `IsDateTime`: a date, a `t` (case-insensitive), then a clock time with an
/// optional fraction and a zone; only the first two `t`-separated parts are looked at.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(clock)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let Some(m) = DATE_TIME_CLOCK.captures(clock) else {
        return false;
    };
    &m[1] <= "23" && &m[2] <= "59" && &m[3] <= "59"
}

/// strfmt's `IsDuration`: Go's `time.ParseDuration`, or else any `<digits> <unit>` pair with
/// a unit it knows (`3 days`, `1 hour`).
fn is_duration(s: &str) -> bool {
    go_parse_duration(s) || duration_pairs(s)
}

fn duration_pairs(s: &str) -> bool {
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let mut ok = false;
    for m in DURATION_PAIR.captures_iter(s) {
        // Go's strconv.Atoi fails on a count beyond int64 and the whole check fails.
        if m[2].parse::<i64>().is_err() {
            return false;
        }
        let unit = m[3].to_lowercase();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || unit == *v {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// Whether Go's `time.ParseDuration` accepts `s` (`1h30m`, `-1.5s`, `0`), overflow included.
fn go_parse_duration(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let mut rest = s;
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(a) => {
                let n = a.bytes().take_while(u8::is_ascii_digit).count();
                a.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return false;
        }
        let unit_len = after
            .char_indices()
            .find(|&(_, c)| c == '.' || c.is_ascii_digit())
            .map_or(after.len(), |(i, _)| i);
        let (unit, tail) = after.split_at(unit_len);
        let nanos: u128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return false,
        };
        let Ok(whole) = int_part
            .parse::<u128>()
            .or_else(|e| if int_part.is_empty() { Ok(0) } else { Err(e) })
        else {
            return false;
        };
        if whole > 1 << 63 {
            return false;
        }
        total += whole * nanos;
        if !frac_part.is_empty() {
            let frac: f64 = format!("0.{frac_part}").parse().unwrap_or(0.0);
            total += (frac * nanos as f64) as u128;
        }
        if total > 1 << 63 {
            return false;
        }
        rest = tail;
    }
    true
}

/// Parses an IP as Go's `net.ParseIP` (`sloppy`: as k8s.io/utils' `ParseIPSloppy`, which
/// also accepts IPv4 parts with leading zeros and long hex groups).
fn parse_ip(s: &str, sloppy: bool) -> Option<()> {
    if s.contains('.') && !s.contains(':') {
        return parse_ipv4(s, sloppy);
    }
    parse_ipv6(s, sloppy)
}

fn parse_ipv4(s: &str, sloppy: bool) -> Option<()> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    for p in parts {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if !sloppy && (p.len() > 3 || (p.len() > 1 && p.starts_with('0'))) {
            return None;
        }
        // Go's dtoi gives up at 2^24; anything above 255 is invalid either way.
        let v: u32 = p.parse().unwrap_or(u32::MAX);
        if v > 255 {
            return None;
        }
    }
    Some(())
}

fn parse_ipv6(s: &str, sloppy: bool) -> Option<()> {
    let (head, tail, compressed) = match s.find("::") {
        Some(at) => (&s[..at], &s[at + 2..], true),
        None => (s, "", false),
    };
    if compressed && tail.contains("::") {
        return None;
    }
    let mut groups = 0;
    for (side, text) in [(0, head), (1, tail)] {
        if text.is_empty() {
            if !compressed && side == 0 {
                return None;
            }
            continue;
        }
        let fields: Vec<&str> = text.split(':').collect();
        for (i, f) in fields.iter().enumerate() {
            let last_of_all = i == fields.len() - 1 && (side == 1 || !compressed);
            if last_of_all && f.contains('.') {
                parse_ipv4(f, sloppy)?;
                groups += 2;
                continue;
            }
            let hex_ok = !f.is_empty()
                && f.bytes().all(|b| b.is_ascii_hexdigit())
                && (sloppy || f.len() <= 4);
            if !hex_ok || u32::from_str_radix(f, 16).map_or(true, |v| v > 0xFFFF) {
                return None;
            }
            groups += 1;
        }
    }
    let fits = if compressed { groups < 8 } else { groups == 8 };
    fits.then_some(())
}

/// k8s.io/utils' `ParseCIDRSloppy`.
fn is_cidr(s: &str) -> bool {
    let Some((addr, mask)) = s.split_once('/') else {
        return false;
    };
    let bits = if parse_ipv4(addr, true).is_some() {
        32
    } else if !addr.contains('.') || addr.contains(':') {
        if parse_ipv6(addr, true).is_none() {
            return false;
        }
        128
    } else {
        return false;
    };
    !mask.is_empty()
        && mask.bytes().all(|b| b.is_ascii_digit())
        && mask.parse::<u32>().is_ok_and(|n| n <= bits)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx..`, `xx-xx..` or `xxxx.xxxx..`.
fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let octets_ok = |n: usize| matches!(n, 6 | 8 | 20);
    if b[2] == b':' || b[2] == b'-' {
        if !(b.len() + 1).is_multiple_of(3) || !octets_ok((b.len() + 1) / 3) {
            return false;
        }
        b.chunks(3).all(|c| {
            c[0].is_ascii_hexdigit() && c[1].is_ascii_hexdigit() && (c.len() == 2 || c[2] == b[2])
        })
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) || !octets_ok(2 * (b.len() + 1) / 5) {
            return false;
        }
        b.chunks(5)
            .all(|c| c[..4].iter().all(u8::is_ascii_hexdigit) && (c.len() == 4 || c[4] == b'.'))
    } else {
        false
    }
}

/// Go's `url.ParseRequestURI`: an absolute URI (`scheme:...`) or an absolute path.
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if s == "*" {
        return true;
    }
    let (scheme, rest) = match split_scheme(s) {
        Ok(parts) => parts,
        Err(()) => return false,
    };
    let rest = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        &rest[..rest.len() - 1]
    } else {
        rest.split_once('?').map_or(rest, |(before, _)| before)
    };
    if !rest.starts_with('/') {
        // `mailto:x` is an opaque URI; a relative path is no request URI.
        return !scheme.is_empty();
    }
    let mut path = rest;
    if !scheme.is_empty() && rest.starts_with("//") {
        let after = &rest[2..];
        let (authority, p) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        if !valid_authority(authority) {
            return false;
        }
        path = p;
    }
    valid_escapes(path)
}

fn split_scheme(s: &str) -> Result<(&str, &str), ()> {
    for (i, c) in s.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return Err(()),
            ':' => return Ok((&s[..i], &s[i + 1..])),
            _ => return Ok(("", s)),
        }
    }
    Ok(("", s))
}

fn valid_escapes(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if i + 2 >= b.len() {
                return false;
            }
            if !(b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit()) {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

fn valid_authority(authority: &str) -> bool {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    if let Some(u) = userinfo {
        let chars_ok = u
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c));
        if !chars_ok || !valid_escapes(u) {
            return false;
        }
    }
    valid_host(host)
}

fn valid_host(host: &str) -> bool {
    let (name, port) = if host.starts_with('[') {
        let Some(end) = host.rfind(']') else {
            return false;
        };
        (&host[1..end], &host[end + 1..])
    } else {
        match host.rfind(':') {
            Some(i) => (&host[..i], &host[i..]),
            None => (host, ""),
        }
    };
    let port_ok =
        port.is_empty() || (port.starts_with(':') && port[1..].bytes().all(|b| b.is_ascii_digit()));
    if !port_ok || !valid_escapes(name) {
        return false;
    }
    // Host characters Go does not require to be escaped (besides %-escapes and non-ASCII).
    name.chars().all(|c| {
        !c.is_ascii() || c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:[]<>\"%".contains(c)
    })
}

/// RFC 5322 `atext` besides letters and digits (Go also allows any non-ASCII character).
const EMAIL_ATOM_SYMBOLS: &str = "!#$%&'*+/=?^_`{|}~-";

fn is_atom(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| !c.is_ascii() || c.is_ascii_alphanumeric() || EMAIL_ATOM_SYMBOLS.contains(c))
}

fn is_dot_atom(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(is_atom)
}

fn is_quoted_string(s: &str) -> bool {
    let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return false;
    };
    let mut escaped = false;
    for c in inner.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '"' || (c.is_ascii_control() && c != '\t') {
            return false;
        }
    }
    !escaped
}

fn is_addr_spec(s: &str) -> bool {
    let Some(at) = s.rfind('@') else {
        return false;
    };
    let (local, domain) = (&s[..at], &s[at + 1..]);
    let local_ok = is_dot_atom(local) || is_quoted_string(local);
    let domain_ok = is_dot_atom(domain)
        || (domain.starts_with('[')
            && domain.ends_with(']')
            && domain.len() >= 2
            && !domain[1..domain.len() - 1].contains(['[', ']', '\\']));
    local_ok && domain_ok
}

/// `net/mail.ParseAddress` for the usual forms: `addr@host` or `Display Name <addr@host>`.
fn is_email(s: &str) -> bool {
    let s = s.trim_matches([' ', '\t']);
    if let Some(open) = s.rfind('<') {
        let Some(inner) = s[open + 1..].strip_suffix('>') else {
            return false;
        };
        let name = s[..open].trim_matches([' ', '\t']);
        let name_ok = name.is_empty()
            || is_quoted_string(name)
            || name
                .split([' ', '\t'])
                .filter(|w| !w.is_empty())
                .all(|w| is_atom(w) || w.split('.').all(|p| p.is_empty() || is_atom(p)));
        return name_ok && is_addr_spec(inner);
    }
    is_addr_spec(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(f: Format, s: &str) -> bool {
        f.validates(s)
    }

    #[test]
    fn lookup_normalizes_and_is_versioned() {
        assert_eq!(Format::lookup("date-time", 30), Some(Format::DateTime));
        assert_eq!(Format::lookup("k8s-short-name", 33), None);
        assert_eq!(
            Format::lookup("k8s-short-name", 34),
            Some(Format::K8sShortName)
        );
        assert_eq!(Format::lookup("int32", 34), None);
    }

    #[test]
    fn network_formats() {
        assert!(ok(Format::Ipv4, "1.2.3.4"));
        assert!(ok(Format::Ipv4, "001.2.3.4"));
        assert!(ok(Format::Ipv4, "::ffff:1.2.3.4"));
        assert!(!ok(Format::Ipv4, "1.2.3.256"));
        assert!(!ok(Format::Ipv4, "::1"));
        assert!(ok(Format::Ipv6, "::1"));
        assert!(ok(Format::Ipv6, "2001:db8::8a2e:370:7334"));
        assert!(ok(Format::Ipv6, "1:2:3:4:5:6:7:8"));
        assert!(!ok(Format::Ipv6, "1:2:3:4:5:6:7:8:9"));
        assert!(!ok(Format::Ipv6, "1.2.3.4"));
        assert!(!ok(Format::Ipv6, "::ffff:01.2.3.4"));
        assert!(ok(Format::Cidr, "10.0.0.0/8"));
        assert!(ok(Format::Cidr, "fd00::/64"));
        assert!(!ok(Format::Cidr, "10.0.0.0/33"));
        assert!(!ok(Format::Cidr, "10.0.0.0"));
        assert!(ok(Format::Mac, "01:23:45:67:89:ab"));
        assert!(ok(Format::Mac, "0123.4567.89ab"));
        assert!(!ok(Format::Mac, "01:23:45:67:89"));
        assert!(ok(Format::Hostname, "example.com"));
        assert!(!ok(Format::Hostname, "-example.com"));
        assert!(ok(Format::Uri, "http://example.com/a?b"));
        assert!(ok(Format::Uri, "/a/b"));
        assert!(ok(Format::Uri, "mailto:a@b"));
        assert!(!ok(Format::Uri, "a/b"));
        assert!(!ok(Format::Uri, "http://x/%zz"));
        assert!(!ok(Format::Uri, ":x"));
        assert!(ok(Format::Email, "a@b.c"));
        assert!(ok(Format::Email, "Jane Doe <jane@example.com>"));
        assert!(!ok(Format::Email, "jane"));
    }

    #[test]
    fn other_formats() {
        assert!(ok(Format::Date, "2024-02-29"));
        assert!(!ok(Format::Date, "2023-02-29"));
        assert!(!ok(Format::Date, "2023-2-01"));
        assert!(ok(Format::DateTime, "2014-12-15T19:30:20.000Z"));
        assert!(ok(Format::DateTime, "2014-12-15t19:30:20+01:00"));
        assert!(!ok(Format::DateTime, "2014-12-15T24:30:20Z"));
        assert!(!ok(Format::DateTime, "2014-12-15"));
        assert!(ok(Format::Duration, "1h30m"));
        assert!(ok(Format::Duration, "0"));
        assert!(ok(Format::Duration, "3 days"));
        assert!(ok(Format::Duration, "1μs"));
        assert!(!ok(Format::Duration, "abc"));
        assert!(!ok(Format::Duration, "1x"));
        assert!(ok(Format::Byte, "aGVsbG8="));
        assert!(!ok(Format::Byte, "aGVsbG8"));
        assert!(ok(Format::Isbn10, "0321751043"));
        assert!(ok(Format::Isbn13, "978-0321751041"));
        assert!(!ok(Format::Isbn13, "978-0321751042"));
        assert!(ok(Format::CreditCard, "4111 1111 1111 1111"));
        assert!(!ok(Format::CreditCard, "4111 1111 1111 1112"));
        assert!(ok(Format::Ssn, "123-45-6789"));
        assert!(ok(Format::HexColor, "#fff"));
        assert!(ok(Format::RgbColor, "rgb(255, 0, 10)"));
        assert!(!ok(Format::RgbColor, "rgb(256,0,0)"));
        assert!(ok(Format::Uuid4, "f81d4fae-7dec-41d0-a765-00a0c91e6bf6"));
        assert!(ok(Format::BsonObjectId, "507f1f77bcf86cd799439011"));
        assert!(ok(Format::K8sShortName, "a-b"));
        assert!(!ok(Format::K8sShortName, "a-"));
        assert!(!ok(Format::K8sLongName, "a.-"));
    }
}
