//! IP addresses and CIDR ranges: the network extension (cel-go's `ext.Network()`, library
//! `cel.lib.ext.network`), and the value types and parsers Kubernetes' `ip` and `cidr`
//! libraries share with it.
//!
//! # Values
//!
//! [`Ip`] (CEL type `net.IP`) and [`Cidr`] (`net.CIDR`) are opaque values
//! ([`cel_runtime::OpaqueValue`]): `type(ip('1.2.3.4'))` is `net.IP`. Two IPs are equal when
//! they are the same address of the same family; two CIDRs when their addresses (not
//! masked) and prefix lengths are equal.
//!
//! # Parsing
//!
//! [`parse_addr`] and [`parse_prefix`] accept exactly what Go's `netip.ParseAddr` and
//! `netip.ParsePrefix` accept, and fail with Go's messages
//! (`ParseAddr("1.2.3"): IPv4 address too short`): dotted-quad IPv4 without leading zeros,
//! IPv6 with at most one `::`, an optional embedded IPv4 tail, and (for addresses) a zone;
//! prefix lengths without sign or leading zeros. [`parse_ip`] and [`parse_cidr`] add cel-go's
//! (and Kubernetes') rules on top: no zones, and no IPv4-mapped IPv6 addresses
//! (`::ffff:1.2.3.4`, in any spelling), with cel-go's messages
//! (`IP Address "x" parse error during conversion from string: ...`).
//!
//! # The library
//!
//! | function | signature | example |
//! |---|---|---|
//! | `ip` | `ip(string) -> net.IP` | `ip('10.0.0.1')` |
//! | `isIP` | `isIP(string) -> bool` | `isIP('1.2.3.4')` → true |
//! | `ip.isCanonical` | `ip.isCanonical(string) -> bool` | `ip.isCanonical('2001:DB8::1')` → false |
//! | `string` | `string(net.IP) -> string`, `string(net.CIDR) -> string` | `string(ip('::1'))` → `'::1'` |
//! | `family` | `net.IP.family() -> int` | `ip('::1').family()` → 6 |
//! | `isUnspecified`, `isLoopback`, `isGlobalUnicast`, `isLinkLocalMulticast`, `isLinkLocalUnicast` | `net.IP.f() -> bool` | `ip('127.0.0.1').isLoopback()` → true |
//! | `cidr` | `cidr(string) -> net.CIDR` | `cidr('10.0.0.0/8')` |
//! | `isCIDR` | `isCIDR(string) -> bool` | `isCIDR('10.0.0.0/8')` → true |
//! | `containsIP` | `net.CIDR.containsIP(net.IP\|string) -> bool` | `cidr('10.0.0.0/8').containsIP('10.1.2.3')` → true |
//! | `containsCIDR` | `net.CIDR.containsCIDR(net.CIDR\|string) -> bool` | `cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')` → true |
//! | `ip` | `net.CIDR.ip() -> net.IP` | `cidr('10.1.2.3/8').ip()` → `ip('10.1.2.3')` |
//! | `masked` | `net.CIDR.masked() -> net.CIDR` | `cidr('10.1.2.3/8').masked()` → `cidr('10.0.0.0/8')` |
//! | `prefixLength` | `net.CIDR.prefixLength() -> int` | `cidr('10.0.0.0/8').prefixLength()` → 8 |
//!
//! All functions belong to the library's version 0 (cel-go's `isMask` and compile-time
//! validation of literal arguments came later and are not included). None has a cost hook:
//! each call costs 1.
//!
//! The library declares the types `net.IP` and `net.CIDR` ([`LibraryContents::types`]); an
//! environment that registers them lets expressions name them (`type(x) == net.IP`).

use std::any::Any;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use cel_runtime::{Error, Implementation, OpaqueValue, Result, Value};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::{Library, LibraryContents};

/// The CEL name of the IP address type.
pub const IP_TYPE_NAME: &str = "net.IP";
/// The CEL name of the CIDR type.
pub const CIDR_TYPE_NAME: &str = "net.CIDR";

/// The `net.IP` type.
pub fn ip_type() -> Type {
    Type::opaque(IP_TYPE_NAME)
}

/// The `net.CIDR` type.
pub fn cidr_type() -> Type {
    Type::opaque(CIDR_TYPE_NAME)
}

// ---------------------------------------------------------------------------------------
// Values.

/// An IP address (`net.IP`): IPv4 or IPv6, never with a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ip(pub IpAddr);

/// A CIDR range (`net.CIDR`): an address and a prefix length (at most 32 for IPv4, 128 for
/// IPv6). The address keeps the bits past the prefix (`cidr('10.1.2.3/8').ip()` is
/// `10.1.2.3`); [`Cidr::masked`] clears them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cidr {
    addr: IpAddr,
    bits: u8,
}

fn addr_bits(a: &IpAddr) -> (u128, u32) {
    match a {
        IpAddr::V4(v4) => (u128::from(u32::from(*v4)), 32),
        IpAddr::V6(v6) => (u128::from(*v6), 128),
    }
}

fn mask(value: u128, width: u32, bits: u32) -> u128 {
    if bits == 0 {
        0
    } else {
        let keep = width.min(bits);
        let low = width - keep;
        (value >> low) << low
    }
}

impl Ip {
    /// The address.
    pub fn addr(&self) -> IpAddr {
        self.0
    }

    /// 4 or 6.
    pub fn family(&self) -> i64 {
        if self.0.is_ipv4() { 4 } else { 6 }
    }

    /// `0.0.0.0` or `::`.
    pub fn is_unspecified(&self) -> bool {
        self.0.is_unspecified()
    }

    /// `127.0.0.0/8` or `::1`.
    pub fn is_loopback(&self) -> bool {
        match self.0 {
            IpAddr::V4(a) => a.octets()[0] == 127,
            IpAddr::V6(a) => a == Ipv6Addr::LOCALHOST,
        }
    }

    /// `224.0.0.0/4` or `ff00::/8`.
    pub fn is_multicast(&self) -> bool {
        match self.0 {
            IpAddr::V4(a) => a.octets()[0] & 0xf0 == 0xe0,
            IpAddr::V6(a) => a.octets()[0] == 0xff,
        }
    }

    /// `169.254.0.0/16` or `fe80::/10`.
    pub fn is_link_local_unicast(&self) -> bool {
        match self.0 {
            IpAddr::V4(a) => a.octets()[0] == 169 && a.octets()[1] == 254,
            IpAddr::V6(a) => a.segments()[0] & 0xffc0 == 0xfe80,
        }
    }

    /// `224.0.0.0/24` or `ff02::/16` (any `ffx2::`).
    pub fn is_link_local_multicast(&self) -> bool {
        match self.0 {
            IpAddr::V4(a) => {
                let o = a.octets();
                o[0] == 224 && o[1] == 0 && o[2] == 0
            }
            IpAddr::V6(a) => a.segments()[0] & 0xff0f == 0xff02,
        }
    }

    /// Go's `IsGlobalUnicast`: not unspecified, not the IPv4 broadcast address, not loopback,
    /// multicast or link-local unicast (private ranges count as global).
    pub fn is_global_unicast(&self) -> bool {
        if let IpAddr::V4(a) = self.0
            && (a == Ipv4Addr::UNSPECIFIED || a == Ipv4Addr::BROADCAST)
        {
            return false;
        }
        !self.is_unspecified()
            && !self.is_loopback()
            && !self.is_multicast()
            && !self.is_link_local_unicast()
    }

    /// The value.
    pub fn into_value(self) -> Value {
        Value::Opaque(Arc::new(self))
    }

    /// The IP inside a value, if it holds one.
    pub fn from_value(v: &Value) -> Option<&Ip> {
        match v {
            Value::Opaque(o) => o.as_any().downcast_ref::<Ip>(),
            _ => None,
        }
    }
}

impl fmt::Display for Ip {
    /// Go's `netip.Addr.String()`: dotted quad, or RFC 5952 IPv6 (lower case, the longest run
    /// of two or more zero groups, the first of equals, written `::`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(a) => {
                let o = a.octets();
                write!(f, "{}.{}.{}.{}", o[0], o[1], o[2], o[3])
            }
            IpAddr::V6(a) => {
                let g = a.segments();
                let (mut best_start, mut best_len) = (8usize, 0usize);
                let mut i = 0;
                while i < 8 {
                    if g[i] == 0 {
                        let start = i;
                        while i < 8 && g[i] == 0 {
                            i += 1;
                        }
                        let len = i - start;
                        if len >= 2 && len > best_len {
                            best_start = start;
                            best_len = len;
                        }
                    } else {
                        i += 1;
                    }
                }
                let mut i = 0;
                while i < 8 {
                    if i == best_start {
                        f.write_str("::")?;
                        i += best_len;
                        continue;
                    }
                    if i > 0 && i != best_start + best_len {
                        f.write_str(":")?;
                    }
                    write!(f, "{:x}", g[i])?;
                    i += 1;
                }
                Ok(())
            }
        }
    }
}

impl Cidr {
    /// A range, if the prefix length fits the address family.
    pub fn new(addr: IpAddr, bits: u8) -> Option<Cidr> {
        (u32::from(bits) <= addr_bits(&addr).1).then_some(Cidr { addr, bits })
    }

    /// The address as written (`cidr.ip()`).
    pub fn ip(&self) -> Ip {
        Ip(self.addr)
    }

    /// The prefix length.
    pub fn prefix_length(&self) -> i64 {
        i64::from(self.bits)
    }

    /// The range with the bits past the prefix cleared.
    pub fn masked(&self) -> Cidr {
        let (v, w) = addr_bits(&self.addr);
        let m = mask(v, w, u32::from(self.bits));
        let addr = match self.addr {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::from(m as u32)),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::from(m)),
        };
        Cidr {
            addr,
            bits: self.bits,
        }
    }

    /// Whether the address is in the range (same family, same leading bits).
    pub fn contains_ip(&self, ip: &Ip) -> bool {
        let (a, wa) = addr_bits(&self.addr);
        let (b, wb) = addr_bits(&ip.0);
        wa == wb && mask(a ^ b, wa, u32::from(self.bits)) == 0
    }

    /// Go's `Prefix.Overlaps`: whether the two ranges share an address.
    pub fn overlaps(&self, other: &Cidr) -> bool {
        if self == other {
            return true;
        }
        let (a, wa) = addr_bits(&self.addr);
        let (b, wb) = addr_bits(&other.addr);
        if wa != wb {
            return false;
        }
        let min = u32::from(self.bits.min(other.bits));
        min == 0 || mask(a ^ b, wa, min) == 0
    }

    /// Whether `other` lies within this range.
    pub fn contains_cidr(&self, other: &Cidr) -> bool {
        self.overlaps(other) && self.bits <= other.bits
    }

    /// `containsCIDR` before Kubernetes 1.33: this range's network address equals `other`'s
    /// address taken at this range's length (Go's `Prefix.Masked() == PrefixFrom(other.Addr(),
    /// bits)`, which does not mask `other`'s address), and `other` is no wider.
    pub fn contains_cidr_by_network_address(&self, other: &Cidr) -> bool {
        let same_length = Cidr {
            addr: other.addr,
            bits: self.bits,
        };
        let fits = addr_bits(&other.addr).1 >= u32::from(self.bits);
        fits && self.masked() == same_length && self.bits <= other.bits
    }

    /// The value.
    pub fn into_value(self) -> Value {
        Value::Opaque(Arc::new(self))
    }

    /// The CIDR inside a value, if it holds one.
    pub fn from_value(v: &Value) -> Option<&Cidr> {
        match v {
            Value::Opaque(o) => o.as_any().downcast_ref::<Cidr>(),
            _ => None,
        }
    }
}

impl fmt::Display for Cidr {
    /// `address/bits`, the address as written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", Ip(self.addr), self.bits)
    }
}

impl OpaqueValue for Ip {
    fn type_name(&self) -> &str {
        IP_TYPE_NAME
    }

    /// `ip("10.0.0.1")`, the address in its canonical text.
    fn write_cel(&self, out: &mut String) {
        out.push_str("ip(");
        cel_runtime::format::push_string_literal(out, &self.to_string());
        out.push(')');
    }

    /// The address's bytes: 4 or 16 (Kubernetes' IP reports it to cost formulas).
    fn size(&self) -> Option<u64> {
        Some(if self.family() == 4 { 4 } else { 16 })
    }

    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<Ip>() == Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl OpaqueValue for Cidr {
    fn type_name(&self) -> &str {
        CIDR_TYPE_NAME
    }

    /// `cidr("10.0.0.0/8")`, the address as written (host bits kept) and the prefix length.
    fn write_cel(&self, out: &mut String) {
        out.push_str("cidr(");
        cel_runtime::format::push_string_literal(out, &self.to_string());
        out.push(')');
    }

    /// The prefix's bytes, rounded up (Kubernetes' CIDR reports it to cost formulas).
    fn size(&self) -> Option<u64> {
        Some((self.prefix_length() as u64).div_ceil(8))
    }

    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<Cidr>() == Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------
// Go's netip parsing.

/// An error of Go's `netip.ParseAddr`, displayed as Go displays it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddrParseError {
    input: String,
    msg: &'static str,
    at: Option<String>,
}

impl fmt::Display for AddrParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ParseAddr({}): {}",
            cel_runtime::format::go_quote(&self.input),
            self.msg
        )?;
        if let Some(at) = &self.at {
            write!(f, " (at {})", cel_runtime::format::go_quote(at))?;
        }
        Ok(())
    }
}

impl std::error::Error for AddrParseError {}

/// An address as Go's `netip.ParseAddr` returns it: the address and its IPv6 zone, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedAddr {
    /// The address.
    pub addr: IpAddr,
    /// The zone (`eth0` in `fe80::1%eth0`).
    pub zone: Option<String>,
}

impl ParsedAddr {
    /// Whether the address is an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`).
    pub fn is_4in6(&self) -> bool {
        match self.addr {
            IpAddr::V6(a) => a.to_ipv4_mapped().is_some(),
            IpAddr::V4(_) => false,
        }
    }
}

fn addr_error(input: &str, msg: &'static str, at: Option<&str>) -> AddrParseError {
    AddrParseError {
        input: input.to_string(),
        msg,
        at: at.map(str::to_string),
    }
}

/// Parses an address as Go's `netip.ParseAddr`.
pub fn parse_addr(s: &str) -> std::result::Result<ParsedAddr, AddrParseError> {
    for b in s.bytes() {
        match b {
            b'.' => {
                let mut fields = [0u8; 4];
                parse_ipv4_fields(s, s, &mut fields)?;
                return Ok(ParsedAddr {
                    addr: IpAddr::V4(Ipv4Addr::from(fields)),
                    zone: None,
                });
            }
            b':' => return parse_ipv6(s),
            b'%' => return Err(addr_error(s, "missing IPv6 address", None)),
            _ => {}
        }
    }
    Err(addr_error(s, "unable to parse IP", None))
}

/// Go's `parseIPv4Fields` over `part` (a suffix of `input`, which errors name).
fn parse_ipv4_fields(
    input: &str,
    part: &str,
    fields: &mut [u8; 4],
) -> std::result::Result<(), AddrParseError> {
    let b = part.as_bytes();
    let (mut val, mut pos, mut digits) = (0u32, 0usize, 0usize);
    for i in 0..b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            if digits == 1 && val == 0 {
                return Err(addr_error(
                    input,
                    "IPv4 field has octet with leading zero",
                    None,
                ));
            }
            val = val * 10 + u32::from(c - b'0');
            digits += 1;
            if val > 255 {
                return Err(addr_error(input, "IPv4 field has value >255", None));
            }
        } else if c == b'.' {
            if i == 0 || i == b.len() - 1 || b[i - 1] == b'.' {
                return Err(addr_error(
                    input,
                    "IPv4 field must have at least one digit",
                    Some(&part[i..]),
                ));
            }
            if pos == 3 {
                return Err(addr_error(input, "IPv4 address too long", None));
            }
            fields[pos] = val as u8;
            pos += 1;
            val = 0;
            digits = 0;
        } else {
            return Err(addr_error(input, "unexpected character", part.get(i..)));
        }
    }
    if pos < 3 {
        return Err(addr_error(input, "IPv4 address too short", None));
    }
    fields[3] = val as u8;
    Ok(())
}

/// Go's `parseIPv6`.
fn parse_ipv6(input: &str) -> std::result::Result<ParsedAddr, AddrParseError> {
    let (mut s, zone) = match input.find('%') {
        Some(i) => {
            let zone = &input[i + 1..];
            if zone.is_empty() {
                return Err(addr_error(input, "zone must be a non-empty string", None));
            }
            (&input[..i], Some(zone.to_string()))
        }
        None => (input, None),
    };
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if s.starts_with("::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Ok(ParsedAddr {
                addr: IpAddr::V6(Ipv6Addr::UNSPECIFIED),
                zone,
            });
        }
    }
    let mut i = 0usize;
    while i < 16 {
        let b = s.as_bytes();
        let mut off = 0usize;
        let mut acc: u32 = 0;
        while off < b.len() {
            let Some(d) = char::from(b[off]).to_digit(16) else {
                break;
            };
            acc = (acc << 4) + d;
            if off > 3 {
                return Err(addr_error(
                    input,
                    "each colon-separated field must have at most 4 hex digits",
                    Some(s),
                ));
            }
            off += 1;
        }
        if off == 0 {
            return Err(addr_error(
                input,
                "each colon-separated field must have at least one digit",
                Some(s),
            ));
        }
        if off < b.len() && b[off] == b'.' {
            if ellipsis.is_none() && i != 12 {
                return Err(addr_error(
                    input,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    Some(s),
                ));
            }
            if i + 4 > 16 {
                return Err(addr_error(
                    input,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    Some(s),
                ));
            }
            let mut fields = [0u8; 4];
            parse_ipv4_fields(input, s, &mut fields)?;
            ip[i..i + 4].copy_from_slice(&fields);
            s = "";
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(addr_error(
                input,
                "unexpected character, want colon",
                Some(s),
            ));
        } else if s.len() == 1 {
            return Err(addr_error(
                input,
                "colon must be followed by more characters",
                Some(s),
            ));
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(addr_error(input, "multiple :: in address", Some(s)));
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(addr_error(input, "trailing garbage after address", Some(s)));
    }
    if i < 16 {
        let Some(e) = ellipsis else {
            return Err(addr_error(input, "address string too short", None));
        };
        let n = 16 - i;
        ip.copy_within(e..i, e + n);
        ip[e..e + n].fill(0);
    } else if ellipsis.is_some() {
        return Err(addr_error(
            input,
            "the :: must expand to at least one field of zeros",
            None,
        ));
    }
    Ok(ParsedAddr {
        addr: IpAddr::V6(Ipv6Addr::from(ip)),
        zone,
    })
}

/// An error of Go's `netip.ParsePrefix`, displayed as Go displays it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixParseError {
    input: String,
    msg: String,
}

impl fmt::Display for PrefixParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "netip.ParsePrefix({}): {}",
            cel_runtime::format::go_quote(&self.input),
            self.msg
        )
    }
}

impl std::error::Error for PrefixParseError {}

/// Parses a range as Go's `netip.ParsePrefix` (zones are rejected there).
pub fn parse_prefix(s: &str) -> std::result::Result<(ParsedAddr, u8), PrefixParseError> {
    let err = |msg: String| PrefixParseError {
        input: s.to_string(),
        msg,
    };
    let Some(slash) = s.rfind('/') else {
        return Err(err("no '/'".to_string()));
    };
    let addr = parse_addr(&s[..slash]).map_err(|e| err(e.to_string()))?;
    if addr.addr.is_ipv6() && addr.zone.is_some() {
        return Err(err("IPv6 zones cannot be present in a prefix".to_string()));
    }
    let bits_text = &s[slash + 1..];
    let bad_bits = || {
        err(format!(
            "bad bits after slash: {}",
            cel_runtime::format::go_quote(bits_text)
        ))
    };
    let first = bits_text.as_bytes().first().copied().unwrap_or(b'0');
    if bits_text.len() > 1 && !(b'1'..=b'9').contains(&first) {
        return Err(bad_bits());
    }
    if bits_text.is_empty() || !bits_text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad_bits());
    }
    let max = if addr.addr.is_ipv4() { 32 } else { 128 };
    let bits = match bits_text.parse::<u64>() {
        Ok(b) if b <= max => b as u8,
        Ok(_) => return Err(err("prefix length out of range".to_string())),
        // More digits than fit a machine int: Go's Atoi fails.
        Err(_) => return Err(bad_bits()),
    };
    Ok((addr, bits))
}

// ---------------------------------------------------------------------------------------
// cel-go's (and Kubernetes') rules.

/// Why a string is not an acceptable IP address or CIDR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetParseError {
    /// `ip(s)`: Go's parser rejected it.
    Ip(String, AddrParseError),
    /// `cidr(s)`: Go's parser rejected it.
    Cidr(String, PrefixParseError),
    /// `ip(s)`: the address has a zone.
    IpZone(String),
    /// `ip(s)` or `cidr(s)`: an IPv4-mapped IPv6 address.
    Mapped(String),
}

impl fmt::Display for NetParseError {
    /// cel-go's messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use cel_runtime::format::go_quote as q;
        match self {
            NetParseError::Ip(s, e) => write!(
                f,
                "IP Address {} parse error during conversion from string: {e}",
                q(s)
            ),
            NetParseError::Cidr(s, e) => write!(
                f,
                "CIDR {} parse error during conversion from string: {e}",
                q(s)
            ),
            NetParseError::IpZone(s) => {
                write!(f, "IP address {} with zone value is not allowed", q(s))
            }
            NetParseError::Mapped(s) => {
                write!(f, "IPv4-mapped IPv6 address {} is not allowed", q(s))
            }
        }
    }
}

impl std::error::Error for NetParseError {}

impl From<NetParseError> for Error {
    fn from(e: NetParseError) -> Error {
        Error::new(e.to_string())
    }
}

/// `ip(s)`: Go's syntax, no zone, no IPv4-mapped IPv6 address.
pub fn parse_ip(s: &str) -> std::result::Result<Ip, NetParseError> {
    let parsed = parse_addr(s).map_err(|e| NetParseError::Ip(s.to_string(), e))?;
    if parsed.zone.is_some() {
        return Err(NetParseError::IpZone(s.to_string()));
    }
    if parsed.is_4in6() {
        return Err(NetParseError::Mapped(s.to_string()));
    }
    Ok(Ip(parsed.addr))
}

/// `cidr(s)`: Go's syntax, no IPv4-mapped IPv6 address.
pub fn parse_cidr(s: &str) -> std::result::Result<Cidr, NetParseError> {
    let (parsed, bits) = parse_prefix(s).map_err(|e| NetParseError::Cidr(s.to_string(), e))?;
    if parsed.is_4in6() {
        return Err(NetParseError::Mapped(s.to_string()));
    }
    Ok(Cidr {
        addr: parsed.addr,
        bits,
    })
}

/// `ip.isCanonical(s)`: whether `s` is the canonical text of its address.
pub fn is_canonical(s: &str) -> std::result::Result<bool, NetParseError> {
    Ok(parse_ip(s)?.to_string() == s)
}

// ---------------------------------------------------------------------------------------
// The library.

/// The network extension library.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Network {
    /// `containsCIDR` as Kubernetes 1.30–1.32 had it (see
    /// [`Network::contains_cidr_by_network_address`]).
    network_address_containment: bool,
}

impl Network {
    /// The library as Kubernetes 1.30 to 1.32 have it: `containsCIDR` is true only when the
    /// other range's address is this range's network address, so a host inside the range
    /// (`cidr('192.168.0.0/24').containsCIDR('192.168.0.1/32')`) is not contained
    /// (k8s.io/apiserver `pkg/cel/library/cidr.go`, `cidrContainsCIDR`, before `64791740`,
    /// first in v0.33.0).
    pub fn contains_cidr_by_network_address() -> Network {
        Network {
            network_address_containment: true,
        }
    }
}

impl Library for Network {
    fn name(&self) -> &str {
        "cel.lib.ext.network"
    }

    fn contents(&self) -> LibraryContents {
        let s = || Type::String;
        let global = OverloadDecl::global;
        let member = OverloadDecl::member;
        let mut c = LibraryContents {
            types: vec![ip_type(), cidr_type()],
            ..LibraryContents::default()
        };
        c.functions = vec![
            FunctionDecl::new("isIP", vec![global("is_ip", vec![s()], Type::Bool)]),
            FunctionDecl::new("isCIDR", vec![global("is_cidr", vec![s()], Type::Bool)]),
            FunctionDecl::new(
                "ip",
                vec![
                    global("string_to_ip", vec![s()], ip_type()),
                    member("cidr_ip", vec![cidr_type()], ip_type()),
                ],
            ),
            FunctionDecl::new(
                "cidr",
                vec![global("string_to_cidr", vec![s()], cidr_type())],
            ),
            FunctionDecl::new(
                "string",
                vec![
                    global("ip_to_string", vec![ip_type()], s()),
                    global("cidr_to_string", vec![cidr_type()], s()),
                ],
            ),
            FunctionDecl::new(
                "family",
                vec![member("ip_family", vec![ip_type()], Type::Int)],
            ),
            FunctionDecl::new(
                "ip.isCanonical",
                vec![global("ip_is_canonical", vec![s()], Type::Bool)],
            ),
            FunctionDecl::new(
                "containsIP",
                vec![
                    member(
                        "cidr_contains_ip_ip",
                        vec![cidr_type(), ip_type()],
                        Type::Bool,
                    ),
                    member(
                        "cidr_contains_ip_string",
                        vec![cidr_type(), s()],
                        Type::Bool,
                    ),
                ],
            ),
            FunctionDecl::new(
                "containsCIDR",
                vec![
                    member(
                        "cidr_contains_cidr",
                        vec![cidr_type(), cidr_type()],
                        Type::Bool,
                    ),
                    member(
                        "cidr_contains_cidr_string",
                        vec![cidr_type(), s()],
                        Type::Bool,
                    ),
                ],
            ),
            FunctionDecl::new(
                "masked",
                vec![member("cidr_masked", vec![cidr_type()], cidr_type())],
            ),
            FunctionDecl::new(
                "prefixLength",
                vec![member("cidr_prefix_length", vec![cidr_type()], Type::Int)],
            ),
        ];
        let predicates: [(&str, &str, IpPredicate); 5] = [
            ("isLoopback", "ip_is_loopback", Ip::is_loopback),
            (
                "isGlobalUnicast",
                "ip_is_global_unicast",
                Ip::is_global_unicast,
            ),
            ("isUnspecified", "ip_is_unspecified", Ip::is_unspecified),
            (
                "isLinkLocalMulticast",
                "ip_is_link_local_multicast",
                Ip::is_link_local_multicast,
            ),
            (
                "isLinkLocalUnicast",
                "ip_is_link_local_unicast",
                Ip::is_link_local_unicast,
            ),
        ];
        for (name, id, f) in predicates {
            c.functions.push(FunctionDecl::new(
                name,
                vec![member(id, vec![ip_type()], Type::Bool)],
            ));
            c.implement(
                id,
                Implementation::Host(Arc::new(move |args: &[Value]| match args {
                    [v] => Ok(Value::Bool(f(ip_arg(v)?))),
                    _ => Err(Error::no_such_overload()),
                })),
            );
        }
        c.implement(
            "is_ip",
            Implementation::Unary(|v| Ok(Value::Bool(parse_ip(str_arg(v)?).is_ok()))),
        );
        c.implement(
            "is_cidr",
            Implementation::Unary(|v| Ok(Value::Bool(parse_cidr(str_arg(v)?).is_ok()))),
        );
        c.implement(
            "string_to_ip",
            Implementation::Unary(|v| Ok(parse_ip(str_arg(v)?)?.into_value())),
        );
        c.implement(
            "cidr_ip",
            Implementation::Unary(|v| Ok(cidr_arg(v)?.ip().into_value())),
        );
        c.implement(
            "string_to_cidr",
            Implementation::Unary(|v| Ok(parse_cidr(str_arg(v)?)?.into_value())),
        );
        c.implement(
            "ip_to_string",
            Implementation::Unary(|v| Ok(Value::from(ip_arg(v)?.to_string()))),
        );
        c.implement(
            "cidr_to_string",
            Implementation::Unary(|v| Ok(Value::from(cidr_arg(v)?.to_string()))),
        );
        c.implement(
            "ip_family",
            Implementation::Unary(|v| Ok(Value::Int(ip_arg(v)?.family()))),
        );
        c.implement(
            "ip_is_canonical",
            Implementation::Unary(|v| Ok(Value::Bool(is_canonical(str_arg(v)?)?))),
        );
        c.implement(
            "cidr_contains_ip_ip",
            Implementation::Binary(|c, i| Ok(Value::Bool(cidr_arg(c)?.contains_ip(ip_arg(i)?)))),
        );
        c.implement(
            "cidr_contains_ip_string",
            Implementation::Binary(|c, s| {
                let ip = parse_ip(str_arg(s)?)?;
                Ok(Value::Bool(cidr_arg(c)?.contains_ip(&ip)))
            }),
        );
        c.implement(
            "cidr_contains_cidr",
            if self.network_address_containment {
                Implementation::Binary(|a, b| {
                    let child = cidr_arg(b)?;
                    Ok(Value::Bool(
                        cidr_arg(a)?.contains_cidr_by_network_address(child),
                    ))
                })
            } else {
                Implementation::Binary(|a, b| {
                    Ok(Value::Bool(cidr_arg(a)?.contains_cidr(cidr_arg(b)?)))
                })
            },
        );
        c.implement(
            "cidr_contains_cidr_string",
            if self.network_address_containment {
                Implementation::Binary(|a, s| {
                    let child = parse_cidr(str_arg(s)?)?;
                    Ok(Value::Bool(
                        cidr_arg(a)?.contains_cidr_by_network_address(&child),
                    ))
                })
            } else {
                Implementation::Binary(|a, s| {
                    let child = parse_cidr(str_arg(s)?)?;
                    Ok(Value::Bool(cidr_arg(a)?.contains_cidr(&child)))
                })
            },
        );
        c.implement(
            "cidr_masked",
            Implementation::Unary(|v| Ok(cidr_arg(v)?.masked().into_value())),
        );
        c.implement(
            "cidr_prefix_length",
            Implementation::Unary(|v| Ok(Value::Int(cidr_arg(v)?.prefix_length()))),
        );
        c
    }
}

/// A property of an address.
type IpPredicate = fn(&Ip) -> bool;

fn str_arg(v: &Value) -> Result<&str> {
    match v {
        Value::String(s) => Ok(s),
        _ => Err(Error::no_such_overload()),
    }
}

fn ip_arg(v: &Value) -> Result<&Ip> {
    Ip::from_value(v).ok_or_else(Error::no_such_overload)
}

fn cidr_arg(v: &Value) -> Result<&Cidr> {
    Cidr::from_value(v).ok_or_else(Error::no_such_overload)
}

#[cfg(test)]
mod tests;
