use super::*;

fn ip(s: &str) -> Ip {
    parse_ip(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn cidr(s: &str) -> Cidr {
    parse_cidr(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn addr_err(s: &str) -> String {
    parse_addr(s).unwrap_err().to_string()
}

#[test]
fn go_addr_syntax() {
    assert_eq!(ip("192.168.0.1").to_string(), "192.168.0.1");
    assert_eq!(ip("2001:db8::68").to_string(), "2001:db8::68");
    assert_eq!(ip("2001:DB8::1").to_string(), "2001:db8::1");
    assert_eq!(ip("2001:db8:0:0:0:0:0:1").to_string(), "2001:db8::1");
    assert_eq!(ip("::").to_string(), "::");
    assert_eq!(ip("::1").to_string(), "::1");
    assert_eq!(ip("1::").to_string(), "1::");
    assert_eq!(ip("1:0:0:2:0:0:0:3").to_string(), "1:0:0:2::3");
    assert_eq!(ip("1:0:0:2:0:0:3:4").to_string(), "1::2:0:0:3:4");
    assert_eq!(ip("1:2:3:4:5:6:7:0").to_string(), "1:2:3:4:5:6:7:0");
    assert_eq!(ip("::1.2.3.4").to_string(), "::102:304");
    assert_eq!(ip("0:0:0:0:0:0:1.2.3.4").to_string(), "::102:304");

    assert_eq!(
        addr_err("192.168.0.1.0"),
        "ParseAddr(\"192.168.0.1.0\"): IPv4 address too long"
    );
    assert_eq!(
        addr_err("1.2.3"),
        "ParseAddr(\"1.2.3\"): IPv4 address too short"
    );
    assert_eq!(
        addr_err("1.2.3.256"),
        "ParseAddr(\"1.2.3.256\"): IPv4 field has value >255"
    );
    assert_eq!(
        addr_err("01.2.3.4"),
        "ParseAddr(\"01.2.3.4\"): IPv4 field has octet with leading zero"
    );
    assert_eq!(
        addr_err("1..2.3"),
        "ParseAddr(\"1..2.3\"): IPv4 field must have at least one digit (at \".2.3\")"
    );
    assert_eq!(
        addr_err("1.2.3.4x"),
        "ParseAddr(\"1.2.3.4x\"): unexpected character (at \"x\")"
    );
    assert_eq!(addr_err(""), "ParseAddr(\"\"): unable to parse IP");
    assert_eq!(
        addr_err("%eth0"),
        "ParseAddr(\"%eth0\"): missing IPv6 address"
    );
    assert_eq!(
        addr_err("2001:db8:::68"),
        "ParseAddr(\"2001:db8:::68\"): each colon-separated field must have at least one digit (at \":68\")"
    );
    assert_eq!(
        addr_err("1::2::3"),
        "ParseAddr(\"1::2::3\"): multiple :: in address (at \":3\")"
    );
    assert_eq!(
        addr_err("12345::"),
        "ParseAddr(\"12345::\"): each colon-separated field must have at most 4 hex digits (at \"12345::\")"
    );
    assert_eq!(
        addr_err("1:2:3"),
        "ParseAddr(\"1:2:3\"): address string too short"
    );
    assert_eq!(
        addr_err("1:2:3:4:5:6:7:8:9"),
        "ParseAddr(\"1:2:3:4:5:6:7:8:9\"): trailing garbage after address (at \"9\")"
    );
    assert_eq!(
        addr_err("1:2:3:4:5:6:7:8::"),
        "ParseAddr(\"1:2:3:4:5:6:7:8::\"): the :: must expand to at least one field of zeros"
    );
    assert_eq!(
        addr_err("1:2:3:4::5:6:7:8"),
        "ParseAddr(\"1:2:3:4::5:6:7:8\"): the :: must expand to at least one field of zeros"
    );
    assert_eq!(
        addr_err("fe80::1%"),
        "ParseAddr(\"fe80::1%\"): zone must be a non-empty string"
    );
    assert_eq!(
        addr_err("1:2:1.2.3.4"),
        "ParseAddr(\"1:2:1.2.3.4\"): embedded IPv4 address must replace the final 2 fields of the address (at \"1.2.3.4\")"
    );
    assert_eq!(
        addr_err("1:"),
        "ParseAddr(\"1:\"): colon must be followed by more characters (at \":\")"
    );
    assert_eq!(
        addr_err("1x::"),
        "ParseAddr(\"1x::\"): unexpected character, want colon (at \"x::\")"
    );
    assert_eq!(
        parse_addr("fe80::1%en0").unwrap().zone.as_deref(),
        Some("en0")
    );
}

#[test]
fn cel_rules() {
    assert_eq!(
        parse_ip("192.168.0.1.0").unwrap_err().to_string(),
        "IP Address \"192.168.0.1.0\" parse error during conversion from string: ParseAddr(\"192.168.0.1.0\"): IPv4 address too long"
    );
    assert_eq!(
        parse_ip("fe80::1%en0").unwrap_err().to_string(),
        "IP address \"fe80::1%en0\" with zone value is not allowed"
    );
    assert_eq!(
        parse_ip("::ffff:192.168.0.1").unwrap_err().to_string(),
        "IPv4-mapped IPv6 address \"::ffff:192.168.0.1\" is not allowed"
    );
    assert!(parse_ip("::ffff:c0a8:1").is_err());
    assert!(parse_cidr("::ffff:192.168.0.1/24").is_err());
    assert_eq!(
        parse_cidr("192.168.0.0/").unwrap_err().to_string(),
        "CIDR \"192.168.0.0/\" parse error during conversion from string: netip.ParsePrefix(\"192.168.0.0/\"): bad bits after slash: \"\""
    );
    assert_eq!(
        parse_cidr("fe80::1%en0/24").unwrap_err().to_string(),
        "CIDR \"fe80::1%en0/24\" parse error during conversion from string: netip.ParsePrefix(\"fe80::1%en0/24\"): IPv6 zones cannot be present in a prefix"
    );
    for bad in [
        "1.2.3.0/+24",
        "1.2.3.0/024",
        "1.2.3.0/33",
        "::/129",
        "1.2.3.0",
        "1.2.3.0/99999999999999999999",
    ] {
        assert!(parse_cidr(bad).is_err(), "{bad}");
    }
    assert_eq!(cidr("1.2.3.0/0").prefix_length(), 0);
    assert!(is_canonical("127.0.0.1").unwrap());
    assert!(!is_canonical("2001:DB8::68").unwrap());
    assert!(!is_canonical("2001:db8:0:0:0:0:0:1").unwrap());
    assert!(is_canonical("127.0.0.1.0").is_err());
}

#[test]
fn predicates() {
    assert_eq!(ip("192.168.0.1").family(), 4);
    assert_eq!(ip("::1").family(), 6);
    assert!(ip("0.0.0.0").is_unspecified() && ip("::").is_unspecified());
    assert!(ip("127.0.0.1").is_loopback() && !ip("1.2.3.4").is_loopback());
    assert!(ip("::1").is_loopback());
    assert!(ip("192.168.0.1").is_global_unicast());
    assert!(!ip("255.255.255.255").is_global_unicast());
    assert!(ip("2001:db8::abcd").is_global_unicast());
    assert!(!ip("ff00::1").is_global_unicast());
    assert!(ip("224.0.0.1").is_link_local_multicast());
    assert!(!ip("224.0.1.1").is_link_local_multicast());
    assert!(ip("ff02::1").is_link_local_multicast());
    assert!(!ip("fd00::1").is_link_local_multicast());
    assert!(ip("169.254.169.254").is_link_local_unicast());
    assert!(ip("fe80::1").is_link_local_unicast());
    assert!(!ip("fd80::1").is_link_local_unicast());
    assert_eq!(ip("2001:db8::1"), ip("2001:DB8::1"));
    assert_ne!(ip("::"), ip("::ffff"));
}

#[test]
fn ranges() {
    let c = cidr("192.168.0.0/24");
    assert!(c.contains_ip(&ip("192.168.0.1")));
    assert!(!c.contains_ip(&ip("192.168.1.1")));
    assert!(!c.contains_ip(&ip("2001:db8::1")));
    assert!(c.contains_cidr(&cidr("192.168.0.0/25")));
    assert!(c.contains_cidr(&cidr("192.168.0.1/32")));
    assert!(!c.contains_cidr(&cidr("192.168.0.0/23")));
    assert!(cidr("10.0.0.0/8").contains_cidr(&cidr("10.0.0.0/8")));
    assert!(cidr("2001:db8::/32").contains_cidr(&cidr("2001:db8::/33")));
    assert!(!cidr("2001:db8::/32").contains_ip(&ip("192.168.1.1")));
    assert!(cidr("0.0.0.0/0").contains_ip(&ip("1.2.3.4")));
    assert!(!cidr("0.0.0.0/0").contains_ip(&ip("::1")));
    assert_eq!(cidr("192.168.0.1/24").masked(), cidr("192.168.0.0/24"));
    assert_ne!(cidr("192.168.0.1/24"), cidr("192.168.0.0/24"));
    assert_eq!(cidr("192.168.0.1/24").ip(), ip("192.168.0.1"));
    assert_eq!(cidr("2001:db8::/32").to_string(), "2001:db8::/32");
    assert_eq!(cidr("192.168.0.1/24").to_string(), "192.168.0.1/24");
    assert_eq!(cidr("::1/128").masked(), cidr("::1/128"));
    assert_eq!(cidr("ffff::1/0").masked().to_string(), "::/0");
}

#[test]
fn hostile_inputs_do_not_panic() {
    let inputs = [
        "",
        ":",
        "::",
        ":::",
        "%",
        "/",
        "//",
        "1.2.3.4/",
        "/24",
        "::/",
        "1.2.3.4%",
        "::%",
        "::1%%",
        "1.2.3.4%eth0",
        "::1.2.3.4.5",
        "::1.2.3",
        "::ffff:1.2.3.4%x",
        "é",
        "1.é.3.4",
        "::é",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "0000::",
        "00000::",
        "1:2:3:4:5:6:1.2.3.4",
        "1:2:3:4:5:6:7:1.2.3.4",
        "::1:2:3:4:5:6:7",
        "1.2.3.4/32/1",
        "::/-1",
        "1.2.3.4/3\u{663}",
    ];
    for s in inputs {
        let _ = parse_ip(s).map(|i| i.to_string());
        let _ = parse_cidr(s).map(|c| c.masked().to_string());
        let _ = is_canonical(s);
    }
    let long = "1:".repeat(100_000);
    assert!(parse_ip(&long).is_err());
    assert!(parse_cidr(&format!("{long}/1")).is_err());
}
