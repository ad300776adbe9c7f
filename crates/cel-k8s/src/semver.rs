//! Kubernetes' semantic-version library (`kubernetes.Semver`, `semverlib.go`).
//!
//! | function | signature | example | since |
//! | --- | --- | --- | --- |
//! | `semver` | `semver(string) -> kubernetes.Semver` | `semver('1.2.3')` | 1.31 |
//! | `semver` (version 1) | `semver(string, bool normalize) -> kubernetes.Semver` | `semver('v1.0', true) == semver('1.0.0')` | 1.33 |
//! | `isSemver` | `isSemver(string) -> bool` | `isSemver('1.0.0')` | 1.31 |
//! | `isSemver` (version 1) | `isSemver(string, bool) -> bool` | `isSemver('v01.01', true)` | 1.33 |
//! | `major`, `minor`, `patch` | `kubernetes.Semver.major() -> int` | `semver('1.2.3').minor() == 2` | 1.31 |
//! | `compareTo` | `kubernetes.Semver.compareTo(kubernetes.Semver) -> int` | `semver('1.2.3').compareTo(semver('2.0.0')) == -1` | 1.31 |
//! | `isLessThan`, `isGreaterThan` | `kubernetes.Semver.isLessThan(kubernetes.Semver) -> bool` | `semver('1.0.0').isLessThan(semver('1.1.0'))` | 1.31 |
//!
//! Parsing is blang/semver's strict `Parse`: exactly `MAJOR.MINOR.PATCH`, optional
//! `-prerelease` and `+build`, no leading zeros, no `v`, no whitespace; errors carry blang's
//! messages (`No Major.Minor.Patch elements found`, ...). With `normalize` (Kubernetes'
//! own tolerant form): one leading `v` is dropped, leading zeros are removed, missing minor
//! and patch are filled with `0` (a short version with `-` or `+` is the error
//! `short version cannot contain PreRelease/Build meta data`). Ordering is semver precedence;
//! build metadata is ignored, also by `==`.
//!
//! Costs: `semver`/`isSemver` `ceil(0.1 × size(string))`; the accessors and comparisons 1.

use std::any::Any;
use std::cmp::Ordering;
use std::sync::Arc;

use cel_ext::{Library, LibraryContents};
use cel_runtime::{Error, Implementation, OpaqueValue, Result, Value};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::{opaque, string_arg};

/// The CEL type name of semantic versions.
pub const SEMVER_TYPE: &str = "kubernetes.Semver";

/// The `kubernetes.Semver` type.
pub fn semver_type() -> Type {
    Type::opaque(SEMVER_TYPE)
}

/// A prerelease identifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreRelease {
    /// A numeric identifier.
    Num(u64),
    /// An alphanumeric identifier.
    Str(String),
}

/// A parsed semantic version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Semver {
    /// Major version.
    pub major: u64,
    /// Minor version.
    pub minor: u64,
    /// Patch version.
    pub patch: u64,
    /// Prerelease identifiers.
    pub pre: Vec<PreRelease>,
    /// Build metadata identifiers (ignored in comparisons).
    pub build: Vec<String>,
}

impl Semver {
    /// Semver precedence.
    pub fn precedence(&self, o: &Semver) -> Ordering {
        let c = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if c != Ordering::Equal {
            return c;
        }
        match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            _ => {}
        }
        for (a, b) in self.pre.iter().zip(&o.pre) {
            let c = match (a, b) {
                (PreRelease::Num(x), PreRelease::Num(y)) => x.cmp(y),
                (PreRelease::Num(_), PreRelease::Str(_)) => Ordering::Less,
                (PreRelease::Str(_), PreRelease::Num(_)) => Ordering::Greater,
                (PreRelease::Str(x), PreRelease::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
            };
            if c != Ordering::Equal {
                return c;
            }
        }
        self.pre.len().cmp(&o.pre.len())
    }
}

impl std::fmt::Display for Semver {
    /// blang/semver's `Version.String()`: `major.minor.patch`, then `-` and the prerelease
    /// identifiers, then `+` and the build metadata, each joined by dots.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for (i, p) in self.pre.iter().enumerate() {
            f.write_str(if i == 0 { "-" } else { "." })?;
            match p {
                PreRelease::Num(n) => write!(f, "{n}")?,
                PreRelease::Str(s) => f.write_str(s)?,
            }
        }
        for (i, b) in self.build.iter().enumerate() {
            f.write_str(if i == 0 { "+" } else { "." })?;
            f.write_str(b)?;
        }
        Ok(())
    }
}

impl OpaqueValue for Semver {
    /// `k8s.io/apiserver/pkg/cel`'s type.
    fn go_type_name(&self) -> &str {
        "cel.Semver"
    }
    fn type_name(&self) -> &str {
        SEMVER_TYPE
    }
    /// `semver("1.2.3-rc.1+build")`, which parses back to the same version.
    fn write_cel(&self, out: &mut String) {
        out.push_str("semver(");
        cel_runtime::format::push_string_literal(out, &self.to_string());
        out.push(')');
    }
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other
            .as_any()
            .downcast_ref::<Semver>()
            .is_some_and(|o| self.precedence(o) == Ordering::Equal)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn only(s: &str, extra_alpha: bool) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (extra_alpha && (b.is_ascii_alphabetic() || b == b'-')))
}

fn leading_zero(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

/// Go's `strconv.ParseUint(s, 10, 64)` for a string of ASCII digits (possibly empty).
fn parse_uint(s: &str) -> std::result::Result<u64, String> {
    if s.is_empty() {
        return Err(format!(
            "strconv.ParseUint: parsing {}: invalid syntax",
            cel_runtime::format::go_quote(s)
        ));
    }
    s.parse::<u64>().map_err(|_| {
        format!(
            "strconv.ParseUint: parsing {}: value out of range",
            cel_runtime::format::go_quote(s)
        )
    })
}

/// blang/semver's strict `Parse`, with its error messages.
pub fn parse(s: &str) -> std::result::Result<Semver, String> {
    if s.is_empty() {
        return Err("Version string empty".into());
    }
    let mut parts = s.splitn(3, '.');
    let (Some(major), Some(minor), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("No Major.Minor.Patch elements found".into());
    };
    let q = cel_runtime::format::go_quote;
    if !only(major, false) {
        return Err(format!(
            "Invalid character(s) found in major number {}",
            q(major)
        ));
    }
    if leading_zero(major) {
        return Err(format!(
            "Major number must not contain leading zeroes {}",
            q(major)
        ));
    }
    let major = parse_uint(major)?;
    if !only(minor, false) {
        return Err(format!(
            "Invalid character(s) found in minor number {}",
            q(minor)
        ));
    }
    if leading_zero(minor) {
        return Err(format!(
            "Minor number must not contain leading zeroes {}",
            q(minor)
        ));
    }
    let minor = parse_uint(minor)?;
    let mut patch_str = rest;
    let mut build: Vec<&str> = Vec::new();
    if let Some(i) = patch_str.find('+') {
        build = patch_str[i + 1..].split('.').collect();
        patch_str = &patch_str[..i];
    }
    let mut pre: Vec<&str> = Vec::new();
    if let Some(i) = patch_str.find('-') {
        pre = patch_str[i + 1..].split('.').collect();
        patch_str = &patch_str[..i];
    }
    if !only(patch_str, false) {
        return Err(format!(
            "Invalid character(s) found in patch number {}",
            q(patch_str)
        ));
    }
    if leading_zero(patch_str) {
        return Err(format!(
            "Patch number must not contain leading zeroes {}",
            q(patch_str)
        ));
    }
    let patch = parse_uint(patch_str)?;
    let mut v = Semver {
        major,
        minor,
        patch,
        pre: Vec::with_capacity(pre.len()),
        build: Vec::with_capacity(build.len()),
    };
    for p in pre {
        if p.is_empty() {
            return Err("Prerelease is empty".into());
        }
        if only(p, false) {
            if leading_zero(p) {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {}",
                    q(p)
                ));
            }
            v.pre.push(PreRelease::Num(parse_uint(p)?));
        } else if only(p, true) {
            v.pre.push(PreRelease::Str(p.to_string()));
        } else {
            return Err(format!("Invalid character(s) found in prerelease {}", q(p)));
        }
    }
    for b in build {
        if b.is_empty() {
            return Err("Buildversion is empty".into());
        }
        if !only(b, true) {
            return Err(format!(
                "Invalid character(s) found in build meta data {}",
                q(b)
            ));
        }
        v.build.push(b.to_string());
    }
    Ok(v)
}

/// Kubernetes' tolerant parse (the `normalize` overloads).
pub fn normalize_and_parse(s: &str) -> std::result::Result<Semver, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s
        .splitn(3, '.')
        .map(|p| {
            if p.len() > 1 {
                let t = p.trim_start_matches('0');
                if t.is_empty() || !t.as_bytes()[0].is_ascii_digit() {
                    format!("0{t}")
                } else {
                    t.to_string()
                }
            } else {
                p.to_string()
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        while parts.len() < 3 {
            parts.push("0".into());
        }
    }
    parse(&parts.join("."))
}

/// Kubernetes' semver library, at a version (0: Kubernetes 1.31–1.32; 1: 1.33+, adds the
/// `normalize` overloads).
#[derive(Clone, Copy, Debug)]
pub struct SemverLib {
    version: u32,
}

impl Default for SemverLib {
    /// The newest version.
    fn default() -> Self {
        SemverLib { version: 1 }
    }
}

impl SemverLib {
    /// The library at a version.
    pub fn version(version: u32) -> SemverLib {
        SemverLib { version }
    }

    /// The version.
    pub fn get_version(&self) -> u32 {
        self.version
    }
}

impl Library for SemverLib {
    fn name(&self) -> &str {
        "kubernetes.Semver"
    }

    fn contents(&self) -> LibraryContents {
        let sv = semver_type;
        let mut semver = vec![OverloadDecl::global(
            "string_to_semver",
            vec![Type::String],
            sv(),
        )];
        let mut is_semver = vec![OverloadDecl::global(
            "is_semver_string",
            vec![Type::String],
            Type::Bool,
        )];
        let mut implementations: Vec<(String, Implementation)> = vec![
            ("string_to_semver".into(), Implementation::Unary(to_semver)),
            (
                "is_semver_string".into(),
                Implementation::Unary(self::is_semver),
            ),
            (
                "semver_is_greater_than".into(),
                Implementation::Binary(|a, b| cmp_with(a, b, |o| o == Ordering::Greater)),
            ),
            (
                "semver_is_less_than".into(),
                Implementation::Binary(|a, b| cmp_with(a, b, |o| o == Ordering::Less)),
            ),
            (
                "semver_compare_to".into(),
                Implementation::Binary(compare_to),
            ),
            (
                "semver_major".into(),
                Implementation::Unary(|v| part(v, |s| s.major)),
            ),
            (
                "semver_minor".into(),
                Implementation::Unary(|v| part(v, |s| s.minor)),
            ),
            (
                "semver_patch".into(),
                Implementation::Unary(|v| part(v, |s| s.patch)),
            ),
        ];
        if self.version >= 1 {
            semver.push(OverloadDecl::global(
                "string_bool_to_semver",
                vec![Type::String, Type::Bool],
                sv(),
            ));
            is_semver.push(OverloadDecl::global(
                "is_semver_string_bool",
                vec![Type::String, Type::Bool],
                Type::Bool,
            ));
            implementations.push((
                "string_bool_to_semver".into(),
                Implementation::Binary(to_semver_normalize),
            ));
            implementations.push((
                "is_semver_string_bool".into(),
                Implementation::Binary(is_semver_normalize),
            ));
        }
        let member = |name: &str, id: &str, params: Vec<Type>, result: Type| {
            FunctionDecl::new(name, vec![OverloadDecl::member(id, params, result)])
        };
        LibraryContents {
            functions: vec![
                FunctionDecl::new("semver", semver),
                FunctionDecl::new("isSemver", is_semver),
                member(
                    "isGreaterThan",
                    "semver_is_greater_than",
                    vec![sv(), sv()],
                    Type::Bool,
                ),
                member(
                    "isLessThan",
                    "semver_is_less_than",
                    vec![sv(), sv()],
                    Type::Bool,
                ),
                member(
                    "compareTo",
                    "semver_compare_to",
                    vec![sv(), sv()],
                    Type::Int,
                ),
                member("major", "semver_major", vec![sv()], Type::Int),
                member("minor", "semver_minor", vec![sv()], Type::Int),
                member("patch", "semver_patch", vec![sv()], Type::Int),
            ],
            implementations,
            types: vec![semver_type()],
            ..LibraryContents::default()
        }
    }
}

fn parse_with(s: &Value, normalize: &Value) -> Result<std::result::Result<Semver, String>> {
    match (string_arg(s), normalize) {
        (Some(s), Value::Bool(n)) => Ok(if *n { normalize_and_parse(s) } else { parse(s) }),
        _ => Err(Error::no_such_overload()),
    }
}

/// `semver(s)`.
pub fn to_semver(s: &Value) -> Result<Value> {
    to_semver_normalize(s, &Value::Bool(false))
}

/// `semver(s, normalize)`.
pub fn to_semver_normalize(s: &Value, normalize: &Value) -> Result<Value> {
    match parse_with(s, normalize)? {
        Ok(v) => Ok(Value::Opaque(Arc::new(v))),
        Err(e) => Err(Error::new(e)),
    }
}

/// `isSemver(s)`.
pub fn is_semver(s: &Value) -> Result<Value> {
    is_semver_normalize(s, &Value::Bool(false))
}

/// `isSemver(s, normalize)`.
pub fn is_semver_normalize(s: &Value, normalize: &Value) -> Result<Value> {
    Ok(Value::Bool(parse_with(s, normalize)?.is_ok()))
}

fn pair<'a>(a: &'a Value, b: &'a Value) -> Result<(&'a Semver, &'a Semver)> {
    match (opaque::<Semver>(a), opaque::<Semver>(b)) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err(Error::no_such_overload()),
    }
}

fn cmp_with(a: &Value, b: &Value, f: fn(Ordering) -> bool) -> Result<Value> {
    let (x, y) = pair(a, b)?;
    Ok(Value::Bool(f(x.precedence(y))))
}

/// `a.compareTo(b)`.
pub fn compare_to(a: &Value, b: &Value) -> Result<Value> {
    let (x, y) = pair(a, b)?;
    Ok(Value::Int(x.precedence(y) as i64))
}

fn part(v: &Value, f: fn(&Semver) -> u64) -> Result<Value> {
    let s = opaque::<Semver>(v).ok_or_else(Error::no_such_overload)?;
    // Go converts the uint64 to int64 by reinterpretation.
    Ok(Value::Int(f(s) as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_and_normalized() {
        assert!(parse("1.2.3-alpha.1+build.5").is_ok());
        assert_eq!(
            parse("1.0").unwrap_err(),
            "No Major.Minor.Patch elements found"
        );
        assert_eq!(
            parse("01.0.0").unwrap_err(),
            "Major number must not contain leading zeroes \"01\""
        );
        assert_eq!(parse("1.0.0-").unwrap_err(), "Prerelease is empty");
        assert_eq!(
            parse("1..0").unwrap_err(),
            "strconv.ParseUint: parsing \"\": invalid syntax"
        );
        let a = normalize_and_parse("v01.01").unwrap();
        assert_eq!(a, parse("1.1.0").unwrap());
        assert_eq!(
            normalize_and_parse("1.0-rc").unwrap_err(),
            "short version cannot contain PreRelease/Build meta data"
        );
        assert!(normalize_and_parse("1.2.03").is_ok());
        assert!(normalize_and_parse("00-rc.1.1").is_err());
    }

    #[test]
    fn precedence() {
        let p = |s| parse(s).unwrap();
        assert_eq!(p("1.0.0-alpha").precedence(&p("1.0.0")), Ordering::Less);
        assert_eq!(p("1.0.0-2").precedence(&p("1.0.0-alpha")), Ordering::Less);
        assert_eq!(
            p("1.0.0-alpha").precedence(&p("1.0.0-alpha.1")),
            Ordering::Less
        );
        assert_eq!(p("1.0.0+a").precedence(&p("1.0.0+b")), Ordering::Equal);
    }
}
