//! Expressions shared by the snapshot tests and the round-trip tests, grouped by grammar area,
//! and helpers to dump a parse.

#![allow(
    dead_code,
    reason = "each test crate uses a different part of this module"
)]

use cel_syntax::{Parsed, ParserOptions, Source, debug_string, parse, render_diagnostics};

/// Literal forms: every number form, every string quoting and prefix, every escape.
pub const LITERALS: &[&str] = &[
    "0",
    "42",
    "0x1F",
    "0xdeadBEEF",
    "9223372036854775807",
    "-9223372036854775808",
    "-0x8000000000000000",
    "1u",
    "42U",
    "0x1Fu",
    "0xFFU",
    "18446744073709551615u",
    "1.5",
    "0.0",
    "1e3",
    "1E-3",
    "1.5e+10",
    ".5",
    ".5e2",
    "-1.5",
    "-.5",
    "-0.0",
    "1e-400",
    "\"double\"",
    "'single'",
    "\"\"\"triple \"double\" quotes\"\"\"",
    "'''triple 'single' quotes'''",
    "'''two\nlines'''",
    "\"\"\"crlf\r\nand cr\rnormalised\"\"\"",
    "r'raw \\n \\d'",
    "R\"raw \\\\\"",
    "r'''raw\\x'''",
    "b'bytes'",
    "B\"BYTES\"",
    "b'''multi\nline'''",
    "br'\\x00'",
    "Rb\"raw bytes\"",
    "rB'\\377'",
    "'\\a\\b\\f\\n\\r\\t\\v\\\\\\?\\\"\\'\\`'",
    "'\\x41\\X42\\xff'",
    "'\\101\\000\\377'",
    "'\\u00e9\\u263A\\U0001F600'",
    "b'\\xff\\377\\000\\x41'",
    "'é literal ünïcödé 😀'",
    "b'é'",
    "\"'\\\"\"",
    "''",
    "\"\"",
    "r''",
    "b''",
    "true",
    "false",
    "null",
];

/// Operators, precedence and associativity.
pub const OPERATORS: &[&str] = &[
    "a + b * c",
    "(a + b) * c",
    "a - b - c",
    "a - (b - c)",
    "a / b % c",
    "a * (b / c)",
    "a < b == c",
    "a == (b < c)",
    "a != b",
    "a <= b",
    "a >= b",
    "a > b",
    "a in b",
    "x in [1, 2] && y in {'a': 1}",
    "!a",
    "!!a",
    "!!!a",
    "!(!a)",
    "-a",
    "--a",
    "---a",
    "-(-a)",
    "- -1",
    "--1",
    "-(1)",
    "4--4",
    "1 - -1",
    "a + -b",
    "!a.b",
    "-x.y[0]",
    "!-1",
    "-1.abs()",
    "!-.2.V",
    "a || b && c",
    "(a || b) && c",
    "a && b && c && d",
    "a || b || c || d || e || f",
    "a && b && c && d || e && f && g && h",
    "((a || b) || c) || d",
    "a || (b || (c || d))",
    "a ? b : c",
    "a ? b : c ? d : e",
    "(a ? b : c) ? d : e",
    "a ? (b ? c : d) : e",
    "a || b ? c && d : e + f",
    "1 + 2 * 3 - 1 / 2 == 6 % 1",
    "a < b < c",
    "a + b + c + d",
];

/// Identifiers, selections, calls and indexes.
pub const MEMBERS: &[&str] = &[
    "a",
    "_x1",
    ".x",
    "a.b.c",
    ".a.b",
    "a.b()",
    "a.b(c, d)",
    "f()",
    "f(x)",
    "f(x, y, z)",
    ".f(x)",
    "a.b.c(d).e",
    "a[0]",
    "a[0][1]",
    "a['k'].b",
    "a[b[c]]",
    "size(x) == x.size()",
    "x.as",
    "x.while()",
    "a.package() || true",
    "a.`b-c`",
    "a.`b c`.d",
    "a.`in`",
    "a.`b.c/d`",
    "[1, 2][0]",
    "{'a': 1}.a",
    "(a).b",
    "(a + b).c()",
    "a.?b",
    "a[?0]",
    "a.?b.c",
    "a.?`b-c`",
    "a.?b[?0] && a[?c]",
    "'s'.size()",
    "1.e5",
    "true.x",
    "x.y.z.exists",
    "a // comment\n + b",
    "[\t.\tcel.\texpr\t.conformance.\tproto3.\tTestAllTypes\t{\tsingle_int64\t:\tint\t(\t17\t)\t}\t.\tsingle_int64\t]\t[\t0\t]",
    "[\r.\rx\r]\r[\r0\r]",
    "a\x0c+\x0cb",
];

/// List, map and message literals.
pub const AGGREGATES: &[&str] = &[
    "[]",
    "[1]",
    "[1, 2, 3,]",
    "[,]",
    "[[1], [2, [3]]]",
    "[?a, b, ?c]",
    "[?a[?b]]",
    "{}",
    "{,}",
    "{'a': 1}",
    "{'a': 1,}",
    "{1: 'a', 2u: 'b', true: 3, 1.5: null}",
    "{?k: v, 'x': y}",
    "{a: {b: {c: d}}}",
    "Msg{}",
    "Msg{,}",
    "Msg{f: 1}",
    "Msg{f: 1, g: 2,}",
    "pkg.Msg{f: 1}",
    ".pkg.Msg{}",
    "Msg{?f: v}",
    "Msg{`f-g`: 1, `in`: 2}",
    "Msg{as: 1, while: 2}",
    "as.Msg{}",
    "google.protobuf.Int64Value{value: 1}",
    "a.b.c{d: [e], f: {g: h}}.d",
    "Msg{f: Msg{f: 1}}",
];

/// Macros and their nesting.
pub const MACROS: &[&str] = &[
    "has(a.b)",
    "has(a.b.c)",
    "has({'a': 1}.a)",
    "x.all(y, y > 0)",
    "x.exists(y, y)",
    "x.exists_one(y, y)",
    "x.map(y, y * 2)",
    "x.map(y, y > 0, y * 2)",
    "x.filter(y, y > 0)",
    "x.filter(y, y.filter(z, z > 0))",
    "[1, 2].map(x, x).all(y, y > 0)",
    "has(a.b) && x.all(y, has(y.z))",
    "x.all(y, x.exists(z, y == z))",
    "has(a.b).filter(c, c)",
    "[has(a.b), has(c.d)].exists(e, e)",
    "x.filter(y, y.exists(z, has(z.a)) && y.exists(z, has(z.b)))",
    "{'a': x.map(y, y)}",
    "Msg{f: x.all(y, y)}.f",
    "x.all(y, y).exists(z, z)",
    "-x.map(y, y)[0]",
    "x.all(y, {'k': y.map(z, z)}.k == [])",
    "x.exists(y, Msg{f: y.filter(z, has(z.a))}.f)",
    ".has(a.b)",
    "has(a.b, c)",
    "x.all(y)",
    "all(x, y, z)",
    "x.existsOne(y, y)",
];

/// Malformed expressions; their rendered diagnostics are snapshotted.
pub const ERRORS: &[&str] = &[
    "",
    "   ",
    "1 +",
    "1 + +",
    "(",
    ")",
    "a)",
    "(a",
    "(a b)",
    "[1, 2",
    "[1 2]",
    "[1,,2]",
    "{",
    "{a}",
    "{:a}",
    "{a 1}",
    "{1: 2 3: 4}",
    "Msg{",
    "Msg{a}",
    "Msg{:a}",
    "Msg{a: 1 b: 2}",
    "func{{a}}",
    "ind[a{b}]",
    "a.",
    "a.true",
    ".true",
    "a..b",
    "a.(b)",
    "{'a': 1}.'a'",
    "a ? b",
    "a ? b :",
    "a ? b ? c : d : e",
    "?",
    "--",
    "!",
    "a b",
    "1 + 2\n3 +",
    "a | b",
    "a & b",
    "a = b",
    "*@a | b",
    "#",
    "1 + $",
    "'unterminated",
    "\"\\s\"",
    "'\\q'",
    "\"\\xFh\"",
    "'''no end",
    "b'\\u00ff'",
    "'\\ud800'",
    "'\\U00110000'",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616u",
    "0xFFFFFFFFFFFFFFFFF",
    "1e400",
    "1.99e90000009",
    "as",
    "as(1)",
    "var.x",
    "x + while",
    "in",
    "f(,)",
    "f(a,)",
    "f(a b c)",
    "f(a, [1, 2)",
    "a.`$b`",
    "`a`",
    "`a`()",
    "a.`b.c`()",
    "a.`unterminated",
    "has(a)",
    "has(a[0])",
    "x.all(y.z, true)",
    "x.map(1, 2)",
    "x.filter(y.z, true)",
    "x.all(__result__, true)",
    "[1, 2, 3].map(var, var * var)",
    "0x",
    "1.",
    "TestAllTypes(){}",
    "TestAllTypes{}()",
    "      '😁' in ['😁', '😑', '😦']\n\t\t\t&& in.😁",
    "a.b(",
    "[1, 2, 3].exists(x, x > 0",
    "f(a, b))",
    "a ? b ((?))",
];

/// Dumps one parse: the tree, then the rendered diagnostics if any.
pub fn dump(input: &str, options: &ParserOptions) -> String {
    let source = Source::new(input);
    let parsed: Parsed = parse(&source, options);
    let header = if input.contains(['\n', '\r', '\t', '\x0c']) {
        format!("{input:?}")
    } else {
        input.to_string()
    };
    let mut out = format!("=== {header}\n");
    out.push_str(&debug_string(&parsed.ast));
    if !parsed.diagnostics.is_empty() {
        out.push_str("--- diagnostics:\n");
        out.push_str(&render_diagnostics(&parsed.diagnostics, &source));
        out.push('\n');
    }
    out
}

/// Dumps only the rendered diagnostics of each input.
pub fn dump_diagnostics(inputs: &[&str], options: &ParserOptions) -> String {
    let mut out = String::new();
    for input in inputs {
        let source = Source::new(*input);
        let parsed = parse(&source, options);
        let header = if input.contains(['\n', '\r', '\t']) {
            format!("{input:?}")
        } else {
            input.to_string()
        };
        out.push_str(&format!("=== {header}\n"));
        if parsed.diagnostics.is_empty() {
            out.push_str("(no diagnostics)\n");
        } else {
            out.push_str(&render_diagnostics(&parsed.diagnostics, &source));
            out.push('\n');
        }
    }
    out
}

/// All the inputs that are expected to parse cleanly with the default options.
pub fn valid_inputs() -> impl Iterator<Item = &'static str> {
    [LITERALS, OPERATORS, MEMBERS, AGGREGATES, MACROS]
        .into_iter()
        .flatten()
        .copied()
}
