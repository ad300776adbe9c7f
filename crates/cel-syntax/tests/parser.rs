//! Behaviour tests: literal values, positions, precedence, reserved words, limits, macro
//! expansion and the macro API, options, and the unparse round trip over the whole corpus.

mod common;

use cel_syntax::macros::{self, Macro, MacroArity, MacroError, MacroStyle, MacroTable};
use cel_syntax::*;

fn parse_ok(text: &str) -> Ast {
    parse_with(text, &ParserOptions::default())
}

fn parse_with(text: &str, options: &ParserOptions) -> Ast {
    let source = Source::new(text);
    let parsed = parse(&source, options);
    assert!(
        parsed.diagnostics.is_empty(),
        "{text:?} should parse:\n{}",
        render_diagnostics(&parsed.diagnostics, &source)
    );
    parsed.ast
}

fn errors(text: &str) -> String {
    errors_with(text, &ParserOptions::default())
}

fn errors_with(text: &str, options: &ParserOptions) -> String {
    let source = Source::new(text);
    let parsed = parse(&source, options);
    render_diagnostics(&parsed.diagnostics, &source)
}

fn literal(text: &str) -> Literal {
    match parse_ok(text).expr.into_kind() {
        ExprKind::Literal(l) => l,
        other => panic!("{text:?} is not a literal: {other:?}"),
    }
}

/// The unparsed form of a parse.
fn roundtrip(text: &str) -> String {
    unparse(&parse_ok(text)).unwrap_or_else(|e| panic!("unparse {text:?}: {e}"))
}

// ---- literals ----

#[test]
fn int_literals() {
    assert_eq!(literal("0"), Literal::Int(0));
    assert_eq!(literal("0x1F"), Literal::Int(31));
    assert_eq!(literal("-0x1F"), Literal::Int(-31));
    assert_eq!(literal("-9223372036854775808"), Literal::Int(i64::MIN));
    assert_eq!(literal("9223372036854775807"), Literal::Int(i64::MAX));
    assert_eq!(literal("- 1"), Literal::Int(-1));
    assert!(errors("9223372036854775808").contains("invalid int literal"));
    assert!(errors("--9223372036854775808").contains("invalid int literal"));
}

#[test]
fn uint_and_double_literals() {
    assert_eq!(literal("1u"), Literal::Uint(1));
    assert_eq!(literal("0xFFu"), Literal::Uint(255));
    assert_eq!(literal("18446744073709551615U"), Literal::Uint(u64::MAX));
    assert!(errors("18446744073709551616u").contains("invalid uint literal"));
    assert_eq!(literal("1e3"), Literal::Double(1000.0));
    assert_eq!(literal(".5"), Literal::Double(0.5));
    assert_eq!(literal("-2.5e-1"), Literal::Double(-0.25));
    assert!(errors("1e309").contains("invalid double literal"));
    // A negative uint is the negation of a uint, not a literal.
    assert!(matches!(&parse_ok("-1u").expr.kind, ExprKind::Call(c) if c.function == "-_"));
}

#[test]
fn string_and_bytes_escapes() {
    let s = |t: &str| match literal(t) {
        Literal::String(s) => s,
        other => panic!("{other:?}"),
    };
    let b = |t: &str| match literal(t) {
        Literal::Bytes(b) => b,
        other => panic!("{other:?}"),
    };
    assert_eq!(s(r"'\a\b\f\n\r\t\v'"), "\x07\x08\x0c\n\r\t\x0b");
    assert_eq!(s(r#"'\\\?\"\'\`'"#), "\\?\"'`");
    assert_eq!(s(r"'\xff\XFF\377'"), "\u{ff}\u{ff}\u{ff}");
    assert_eq!(b(r"b'\xff\XFF\377'"), vec![0xff, 0xff, 0xff]);
    assert_eq!(s(r"'\u00e9\U0001F600'"), "é😀");
    assert_eq!(b("b'é'"), "é".as_bytes());
    assert_eq!(s(r"r'\n'"), "\\n");
    assert_eq!(b(r"br'\n'"), b"\\n");
    assert_eq!(b(r"rb'\n'"), b"\\n");
    assert_eq!(s("'''a\nb'''"), "a\nb");
    assert_eq!(s("\"\"\"a\r\nb\"\"\""), "a\nb");
    assert_eq!(s("'''it's'''"), "it's");
    assert!(errors(r"'\s'").contains("token recognition error"));
    assert!(errors(r"'\ud83d\ude03'").contains("invalid unicode code point"));
    assert!(errors(r"b'\u0041'").contains("unable to unescape string"));
    assert!(errors(r"b'\U00000041'").contains("unable to unescape string"));
    assert!(errors(r"'\400'").contains("token recognition error"));
}

// ---- structure and precedence ----

#[test]
fn precedence_and_associativity() {
    let cases = [
        ("a || b && c", "a || b && c"),
        ("a && b || c", "a && b || c"),
        ("(a || b) && c", "(a || b) && c"),
        ("a + b * c", "a + b * c"),
        ("(a + b) * c", "(a + b) * c"),
        ("a - (b - c)", "a - (b - c)"),
        ("(a - b) - c", "a - b - c"),
        ("a < b == c", "a < b == c"),
        ("a == (b < c)", "a == (b < c)"),
        ("a in b == c", "a in b == c"),
        ("-a * b", "-a * b"),
        ("-(a * b)", "-(a * b)"),
        ("!a.b()", "!a.b()"),
        ("(!a).b()", "(!a).b()"),
        ("a ? b : c ? d : e", "a ? b : c ? d : e"),
        ("(a ? b : c) ? d : e", "(a ? b : c) ? d : e"),
        ("a ? (b ? c : d) : e", "a ? (b ? c : d) : e"),
        ("a || b ? c : d", "a || b ? c : d"),
        ("!!a", "a"),
        ("!(!a)", "!(!a)"),
        ("-(-1)", "-(-1)"),
        ("-(1)", "-(1)"),
        ("-(1.5).x", "-(1.5.x)"),
        ("(-1).x", "(-1).x"),
        ("-1.x", "(-1).x"),
        ("1 - -1", "1 - -1"),
        ("((a || b) || c) || d", "(a || b || c) || d"),
        ("a || (b || c)", "a || (b || c)"),
        ("(a || b) || (c || d)", "a || b || c || d"),
        ("a || b || c || d", "a || b || c || d"),
        ("x.map(y, y).filter(z, z)", "x.map(y, y).filter(z, z)"),
        ("has(a.b)", "has(a.b)"),
        ("{'a': 1, ?b: c}", "{\"a\": 1, ?b: c}"),
        ("[?a, 1]", "[?a, 1]"),
        ("Msg{?f: 1, `g-h`: 2}", "Msg{?f: 1, `g-h`: 2}"),
        ("a.`in`", "a.`in`"),
        ("a.?b", "a.?b"),
        ("a[?b]", "a[?b]"),
        ("b'\\xff'", "b\"\\xff\""),
        ("1e100", "1e100"),
        ("0.1", "0.1"),
        ("-0.0", "-0.0"),
        ("2.0", "2.0"),
    ];
    for (input, expected) in cases {
        assert_eq!(roundtrip(input), expected, "unparse of {input:?}");
    }
}

#[test]
fn balanced_logic_trees_match_cel_go() {
    // `a && b && c && d && e && f && g`: cel-go's ids and shape.
    let ast = parse_ok("a && b && c && d && e && f && g");
    let ExprKind::Call(root) = &ast.expr.kind else {
        panic!()
    };
    assert_eq!(ast.expr.id, 9);
    assert_eq!(root.args[0].id, 5);
    assert_eq!(root.args[1].id, 13);
    // 1,000 terms stay shallow.
    let long = vec!["a"; 1000].join(" || ");
    assert!(parse_ok(&long).expr.depth() <= 11);
}

#[test]
fn positions_are_cel_go_anchors() {
    let ast = parse_ok("a.b(c)[d] + !e ? f : {g: h}");
    let info = &ast.source_info;
    let anchor_of = |pred: &dyn Fn(&Expr) -> bool| {
        let mut found = None;
        ast.expr.walk(&mut |e| {
            if found.is_none() && pred(e) {
                found = info.anchor(e.id);
            }
        });
        found.expect("node present")
    };
    let call = |name: &'static str| move |e: &Expr| matches!(&e.kind, ExprKind::Call(c) if c.function == name);
    assert_eq!(anchor_of(&call("b")), 3);
    assert_eq!(anchor_of(&call("_[_]")), 6);
    assert_eq!(anchor_of(&call("_+_")), 10);
    assert_eq!(anchor_of(&call("!_")), 12);
    assert_eq!(anchor_of(&call("_?_:_")), 15);
    assert_eq!(anchor_of(&|e| matches!(&e.kind, ExprKind::Map(_))), 21);
    // Every node of the tree has a position, and spans contain their anchors.
    ast.expr.walk(&mut |e| {
        let p = info.positions.get(&e.id).expect("position");
        assert!(p.span.start <= p.anchor && p.anchor <= p.span.end, "{e:?}");
    });
    let ExprKind::Call(cond) = &ast.expr.kind else {
        panic!()
    };
    let ExprKind::Map(m) = &cond.args[2].kind else {
        panic!()
    };
    assert_eq!(info.anchor(m.entries[0].id), Some(23));
    assert_eq!(info.span(ast.expr.id), Some(Span::new(0, 27)));
}

#[test]
fn ids_are_unique_and_start_at_one() {
    for input in common::valid_inputs() {
        let ast = parse_ok(input);
        let mut seen = std::collections::HashSet::new();
        let mut check = |id: ExprId| assert!(id >= 1 && seen.insert(id), "{input}: id {id}");
        ast.expr.walk(&mut |e| {
            check(e.id);
            match &e.kind {
                ExprKind::Map(m) => m.entries.iter().for_each(|en| check(en.id)),
                ExprKind::Struct(s) => s.fields.iter().for_each(|f| check(f.id)),
                _ => {}
            }
        });
        assert!(seen.contains(&1) || ast.expr.id != 1, "{input}");
        ast.expr.walk(&mut |e| {
            assert!(
                ast.source_info.positions.contains_key(&e.id),
                "{input}: no position for {}",
                e.id
            );
        });
    }
}

// ---- reserved words ----

#[test]
fn reserved_words() {
    for word in [
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ] {
        assert_eq!(
            errors(word),
            format!("ERROR: <input>:1:1: reserved identifier: {word}\n | {word}\n | ^"),
        );
        assert!(errors(&format!("{word}(1)")).contains("reserved identifier"));
        // Allowed as field names, member function names and message field names.
        parse_ok(&format!("{{'{word}': 1}}.{word}"));
        parse_ok(&format!("a.{word}() || true"));
        parse_ok(&format!("Msg{{{word}: 1}}"));
    }
    for keyword in ["true", "false", "null"] {
        assert!(errors(&format!("a.{keyword}")).contains("expecting IDENTIFIER"));
    }
    assert!(errors("a.in").contains("no viable alternative"));
    assert!(errors("in").contains("mismatched input 'in'"));
}

// ---- limits ----

fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{}{}", open.repeat(n), inner, close.repeat(n))
}

#[test]
fn nesting_limit() {
    parse_ok(&nested("(", "x", ")", 200));
    parse_ok(&nested("(", "x", ")", 249));
    assert_eq!(
        errors(&nested("(", "x", ")", 250)),
        "ERROR: <input>:-1:0: expression recursion limit exceeded: 250"
    );
    assert_eq!(
        errors(&nested("[", "x", "]", 260)),
        "ERROR: <input>:-1:0: expression recursion limit exceeded: 250"
    );
    parse_ok(&nested("[", "'fine'", "]", 60));
    let options = ParserOptions {
        max_recursion_depth: 32,
        ..ParserOptions::default()
    };
    assert_eq!(
        errors_with(&nested("[", "'not fine'", "]", 32), &options),
        "ERROR: <input>:-1:0: expression recursion limit exceeded: 32"
    );
    parse_with(&nested("[", "'fine'", "]", 31), &options);
    let chain = (1..=34)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(" + ");
    assert_eq!(
        errors_with(&chain, &options),
        "ERROR: <input>:-1:0: max recursion depth exceeded"
    );
    let selects = format!("a{}", ".b".repeat(33));
    assert!(errors_with(&selects, &options).contains("max recursion depth exceeded"));
    parse_with(&format!("a{}", ".b".repeat(32)), &options);
}

#[test]
fn chains_longer_than_the_limit_are_rejected() {
    let chain = vec!["a"; 300].join(" + ");
    assert_eq!(
        errors(&chain),
        "ERROR: <input>:-1:0: max recursion depth exceeded"
    );
    parse_ok(&vec!["a"; 251].join(" + "));
    let parsed = parse(&Source::new(chain.as_str()), &ParserOptions::default());
    assert!(parsed.ast.expr.depth() <= 251 + AST_DEPTH_ALLOWANCE);
}

#[test]
fn size_limit() {
    let text = "a".repeat(100_003);
    assert_eq!(
        errors(&text),
        "ERROR: <input>:-1:0: expression code point size exceeds limit: size: 100003, limit 100000"
    );
    // Counted in code points, not bytes.
    let wide = format!("'{}'", "é".repeat(99_990));
    parse_ok(&wide);
}

#[test]
fn error_limits() {
    let options = ParserOptions {
        error_report_limit: 2,
        ..ParserOptions::default()
    };
    let text = "'3# < 10\" '& tru ^^";
    assert_eq!(
        errors_with(text, &options),
        "ERROR: <input>:1:12: Syntax error: token recognition error at: '& '\n | '3# < 10\" '& tru ^^\n | ...........^\nERROR: <input>:1:18: Syntax error: token recognition error at: '^'\n | '3# < 10\" '& tru ^^\n | .................^\nERROR: <input>:1:19: Syntax error: More than 2 syntax errors\n | '3# < 10\" '& tru ^^\n | ..................^"
    );
    let garbage = "#".repeat(500);
    let parsed = parse(&Source::new(garbage.as_str()), &ParserOptions::default());
    assert_eq!(parsed.diagnostics.len(), 101);
    assert!(
        parsed.diagnostics[100]
            .message
            .contains("More than 100 syntax errors")
    );
    let options = ParserOptions {
        error_recovery_limit: 4,
        ..ParserOptions::default()
    };
    let many = "f(,,,,,,,,,,,,,,,,,)";
    assert!(errors_with(many, &options).contains("error recovery attempt limit exceeded: 4"));
}

// ---- macros ----

#[test]
fn standard_macro_table() {
    let table = MacroTable::standard();
    assert_eq!(table.len(), 7);
    assert!(table.find("has", false, 1).is_some());
    assert!(table.find("has", true, 1).is_none());
    assert!(table.find("map", true, 2).is_some());
    assert!(table.find("map", true, 3).is_some());
    assert!(table.find("map", true, 4).is_none());
    assert!(MacroTable::new().is_empty());
    assert_eq!(
        format!("{table:?}"),
        "[\"has:1:false\", \"all:2:true\", \"exists:2:true\", \"exists_one:2:true\", \"map:2:true\", \"map:3:true\", \"filter:2:true\"]"
    );
}

#[test]
fn macro_expansion_shapes() {
    let ast = parse_ok("x.all(y, y > 0)");
    let ExprKind::Comprehension(c) = &ast.expr.kind else {
        panic!()
    };
    assert_eq!(c.iter_var, "y");
    assert_eq!(c.accu_var, "@result");
    assert_eq!(c.accu_init.kind, ExprKind::Literal(Literal::Bool(true)));
    assert!(
        matches!(&c.loop_condition.kind, ExprKind::Call(k) if k.function == "@not_strictly_false")
    );
    assert!(matches!(&c.loop_step.kind, ExprKind::Call(k) if k.function == "_&&_"));
    assert_eq!(ast.source_info.macro_calls.len(), 1);
    let call = &ast.source_info.macro_calls[&ast.expr.id];
    assert!(matches!(&call.kind, ExprKind::Call(k) if k.function == "all" && k.target.is_some()));

    let ast = parse_ok("has(a.b)");
    assert!(matches!(&ast.expr.kind, ExprKind::Select(s) if s.test_only && s.field == "b"));

    let ast = parse_ok("x.exists_one(y, y)");
    let ExprKind::Comprehension(c) = &ast.expr.kind else {
        panic!()
    };
    assert!(matches!(&c.result.kind, ExprKind::Call(k) if k.function == "_==_"));
}

#[test]
fn custom_macros() {
    let mut options = ParserOptions::default();
    // A var-arg global macro that sums its arguments, declining when there are none.
    options
        .macros
        .add(Macro::global_vararg("sum", |f, _, args| {
            let mut args = args.into_iter();
            let Some(first) = args.next() else {
                return Ok(None);
            };
            Ok(Some(
                args.fold(first, |acc, a| f.global_call("_+_", vec![acc, a])),
            ))
        }));
    // A receiver macro that duplicates its target with a fresh copy.
    options
        .macros
        .add(Macro::receiver("twice", 0, |f, target, _| {
            let target = target.expect("receiver");
            let copy = f.copy(&target);
            Ok(Some(f.list(vec![target, copy])))
        }));
    // A macro that always fails at its argument.
    options.macros.add(Macro::global("bad", 1, |f, _, args| {
        Err(f.error(args[0].id, "bad argument"))
    }));
    options.macros.add(Macro::global("bad_call", 0, |f, _, _| {
        Err(f.error(0, "bad call"))
    }));
    assert_eq!(
        options.macros.find("sum", false, 5).map(|m| m.arity),
        Some(MacroArity::VarArg)
    );
    assert_eq!(
        options.macros.find("twice", true, 0).map(|m| m.style),
        Some(MacroStyle::Receiver)
    );

    let ast = parse_with("sum(1, 2, 3)", &options);
    assert_eq!(unparse(&ast).unwrap(), "sum(1, 2, 3)");
    assert!(matches!(&ast.expr.kind, ExprKind::Call(c) if c.function == "_+_"));
    let ast = parse_with("sum()", &options);
    assert!(matches!(&ast.expr.kind, ExprKind::Call(c) if c.function == "sum"));
    assert!(ast.source_info.macro_calls.is_empty());

    let ast = parse_with("a.b.twice()", &options);
    let ExprKind::List(l) = &ast.expr.kind else {
        panic!()
    };
    assert!(l.elements[0].structurally_eq(&l.elements[1]));
    assert_ne!(l.elements[0].id, l.elements[1].id);
    assert_eq!(unparse(&ast).unwrap(), "a.b.twice()");

    assert_eq!(
        errors_with("1 + bad(x)", &options),
        "ERROR: <input>:1:9: bad argument\n | 1 + bad(x)\n | ........^"
    );
    assert_eq!(
        errors_with("1 + bad_call()", &options),
        "ERROR: <input>:1:13: bad call\n | 1 + bad_call()\n | ............^"
    );

    // Replacing a macro with the same key.
    options.macros.add(Macro::global("bad", 1, |_, _, args| {
        Ok(args.into_iter().next())
    }));
    let ast = parse_with("bad(x)", &options);
    assert_eq!(ast.expr.kind, ExprKind::Ident("x".into()));
    let e = MacroError::new(3, "m");
    assert_eq!(e.to_string(), "m");
}

#[test]
fn optional_macros_expand_like_cel_go() {
    let mut options = ParserOptions::default();
    options.macros.extend(macros::optional_macros());
    let ast = parse_with("a.optMap(v, v + 1)", &options);
    let ExprKind::Call(cond) = &ast.expr.kind else {
        panic!()
    };
    assert_eq!(cond.function, "_?_:_");
    assert!(matches!(&cond.args[0].kind, ExprKind::Call(c) if c.function == "hasValue"));
    let ExprKind::Call(of) = &cond.args[1].kind else {
        panic!()
    };
    assert_eq!(of.function, "optional.of");
    let ExprKind::Comprehension(c) = &of.args[0].kind else {
        panic!()
    };
    assert_eq!((c.iter_var.as_str(), c.accu_var.as_str()), ("#unused", "v"));
    assert!(matches!(&c.accu_init.kind, ExprKind::Call(k) if k.function == "value"));
    assert_eq!(
        c.loop_condition.kind,
        ExprKind::Literal(Literal::Bool(false))
    );
    assert_eq!(c.loop_step.kind, ExprKind::Ident("v".into()));
    assert!(matches!(&cond.args[2].kind, ExprKind::Call(k) if k.function == "optional.none"));
    assert_eq!(unparse(&ast).unwrap(), "a.optMap(v, v + 1)");
    assert!(
        errors_with("a.optMap(v.w, 1)", &options)
            .contains("optMap() variable name must be a simple identifier")
    );
    parse_with("a.optFlatMap(v, optional.of(v))", &options);
    assert_eq!(macros::exists_one_camel_case_macro().name, "existsOne");
}

#[test]
fn macro_calls_can_be_turned_off() {
    let options = ParserOptions {
        populate_macro_calls: false,
        ..ParserOptions::default()
    };
    let ast = parse_with("x.all(y, y)", &options);
    assert!(ast.source_info.macro_calls.is_empty());
    assert!(unparse(&ast).is_err());
    let ast = parse_with("has(a.b)", &options);
    assert_eq!(unparse(&ast).unwrap(), "has(a.b)");
    let no_macros = ParserOptions {
        macros: MacroTable::new(),
        ..ParserOptions::default()
    };
    let ast = parse_with("x.all(y, y)", &no_macros);
    assert!(matches!(&ast.expr.kind, ExprKind::Call(c) if c.function == "all"));
}

// ---- the unparse round trip ----

fn assert_roundtrip(input: &str, options: &ParserOptions) {
    let first = parse_with(input, options);
    let text = unparse(&first).unwrap_or_else(|e| panic!("unparse {input:?}: {e}"));
    let second = parse_with(&text, options);
    assert!(
        first.expr.structurally_eq(&second.expr),
        "round trip of {input:?} through {text:?} changed the tree:\n{}\n{}",
        debug_string(&first),
        debug_string(&second)
    );
    // And the text is a fixed point.
    assert_eq!(unparse(&second).unwrap(), text, "{input:?}");
}

#[test]
fn unparse_round_trips_the_whole_corpus() {
    let options = ParserOptions::default();
    for input in common::valid_inputs() {
        assert_roundtrip(input, &options);
    }
    let mut optional = ParserOptions::default();
    optional.macros.extend(macros::optional_macros());
    assert_roundtrip("a.optMap(v, v.map(w, w)).optFlatMap(x, x)", &optional);
}

#[test]
fn unparse_refuses_what_cannot_be_written() {
    let ast = |expr: Expr| Ast {
        expr,
        source_info: SourceInfo::default(),
    };
    let ident = |name: &str| Expr::new(1, ExprKind::Ident(name.into()));
    assert!(unparse(&ast(Expr::new(1, ExprKind::Error))).is_err());
    assert!(unparse(&ast(ident("@result"))).is_err());
    assert!(unparse(&ast(ident("in"))).is_err());
    assert!(unparse(&ast(ident("as"))).is_err());
    assert_eq!(unparse(&ast(ident(".x"))).unwrap(), ".x");
    let select = |field: &str| {
        Expr::new(
            2,
            ExprKind::Select(Select {
                operand: Box::new(ident("a")),
                field: field.into(),
                test_only: false,
            }),
        )
    };
    assert_eq!(unparse(&ast(select("b c"))).unwrap(), "a.`b c`");
    assert!(unparse(&ast(select("b$c"))).is_err());
    assert!(unparse(&ast(select(""))).is_err());
    // A NaN has no literal; it is written as a conversion.
    let nan = Expr::new(1, ExprKind::Literal(Literal::Double(f64::NAN)));
    assert_eq!(unparse(&ast(nan)).unwrap(), "double(\"NaN\")");
}

#[test]
fn structural_equality_ignores_ids_only() {
    let a = parse_ok("x.all(y, {1: [2.0, b'3']}[1] == z)").expr;
    let b = parse_ok("x.all(y,{1:[2.0,b'3']}[1]==z)").expr;
    assert!(a.structurally_eq(&b));
    let c = parse_ok("x.all(y, {1: [2.0, b'4']}[1] == z)").expr;
    assert!(!a.structurally_eq(&c));
    assert!(!parse_ok("0.0").expr.structurally_eq(&parse_ok("-0.0").expr));
}

#[test]
fn debug_string_shows_ids_anchors_and_spans() {
    assert_eq!(
        debug_string(&parse_ok("a + 1")),
        "Call _+_ #2 @2 [0,5)\n  Ident a #1 @0 [0,1)\n  Int 1 #3 @4 [4,5)\n"
    );
}
