//! No input may make the parser panic, hang or overflow the stack, and whatever parses without
//! diagnostics must survive the unparse round trip. A seeded generator produces random bytes,
//! random token soups and mutations of the corpus; pathological nestings and megabyte inputs
//! are tried separately. Everything runs on spawned threads with the default 2 MiB stack, where
//! an overflow would abort the test.

mod common;

use std::collections::HashSet;
use std::thread;

use cel_syntax::*;

/// A tiny xorshift generator: deterministic, no dependencies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const TOKENS: &[&str] = &[
    "a",
    "b",
    "x",
    "_y",
    ".",
    ".?",
    "?",
    ":",
    ",",
    "(",
    ")",
    "[",
    "]",
    "[?",
    "{",
    "}",
    "+",
    "-",
    "*",
    "/",
    "%",
    "!",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "in",
    "true",
    "false",
    "null",
    "1",
    "0x1F",
    "2u",
    "1.5",
    "1e3",
    ".5",
    "-1",
    "'s'",
    "\"d\"",
    "'''t'''",
    "r'\\d'",
    "b'\\xff'",
    "`b-c`",
    "has",
    "all",
    "exists",
    "exists_one",
    "map",
    "filter",
    "optMap",
    "as",
    "while",
    "Msg",
    "pkg.Msg",
    "{f: 1}",
    "(x, y)",
    " ",
    "\n",
    "// c\n",
    "@",
    "#",
    "$",
    "=",
    "&",
    "|",
    "\\",
    "'",
    "\"",
    "é",
    "😀",
    "\u{0}",
    "\r",
];

fn mutate(rng: &mut Rng, base: &str, other: &str) -> String {
    let mut s: Vec<u8> = base.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        let len = s.len();
        match rng.below(6) {
            0 if len > 0 => {
                let at = rng.below(len);
                let n = 1 + rng.below(4.min(len - at));
                s.drain(at..at + n);
            }
            1 if len > 0 => {
                let at = rng.below(len);
                let n = 1 + rng.below(8.min(len - at));
                let piece: Vec<u8> = s[at..at + n].to_vec();
                let to = rng.below(len + 1);
                s.splice(to..to, piece);
            }
            2 => {
                let o = other.as_bytes();
                if !o.is_empty() {
                    let from = rng.below(o.len());
                    let n = 1 + rng.below(o.len() - from);
                    let to = rng.below(len + 1);
                    s.splice(to..to, o[from..from + n].iter().copied());
                }
            }
            3 => {
                let t = rng.pick(TOKENS).as_bytes();
                let to = rng.below(len + 1);
                s.splice(to..to, t.iter().copied());
            }
            4 if len > 0 => {
                let at = rng.below(len);
                s[at] = rng.next() as u8;
            }
            _ if len > 1 => {
                let a = rng.below(len);
                let b = rng.below(len);
                s.swap(a, b);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&s).into_owned()
}

/// An input as shown in a failure message: long ones are cut.
fn short(input: &str) -> String {
    if input.len() <= 200 {
        return format!("{input:?}");
    }
    let mut end = 200;
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}... ({} bytes)", &input[..end], input.len())
}

/// Checks everything that must hold for any input.
fn check(input: &str) {
    let options = ParserOptions::default();
    let source = Source::new(input);
    let parsed = parse(&source, &options);
    let ast = &parsed.ast;
    let bound = options.max_recursion_depth + AST_DEPTH_ALLOWANCE;
    assert!(ast.expr.depth() <= bound, "too deep for {}", short(input));
    let _ = render_diagnostics(&parsed.diagnostics, &source);
    let _ = debug_string(ast);
    let mut ids = HashSet::new();
    ast.expr.walk(&mut |e| {
        assert!(
            ids.insert(e.id),
            "duplicate id {} in {}",
            e.id,
            short(input)
        )
    });
    if !parsed.diagnostics.is_empty() {
        return;
    }
    ast.expr
        .walk(&mut |e| assert!(!matches!(e.kind, ExprKind::Error), "{}", short(input)));
    let text = match unparse(ast) {
        Ok(text) => text,
        Err(e) => panic!("unparse of {} failed: {e}", short(input)),
    };
    // The canonical text can be longer than the input (spaces around operators), so the size
    // limit is lifted for the second parse; the property is about structure.
    let relaxed = ParserOptions {
        expression_size_limit: usize::MAX,
        ..ParserOptions::default()
    };
    let again = parse(&Source::new(text.as_str()), &relaxed);
    assert!(
        again.diagnostics.is_empty(),
        "{} unparsed to {}, which does not parse: {:?}",
        short(input),
        short(&text),
        again.diagnostics
    );
    if !ast.expr.structurally_eq(&again.ast.expr) {
        let (a, b) = (debug_string(ast), debug_string(&again.ast));
        panic!(
            "{} unparsed to {}, which parses differently:\n{}\n{}",
            short(input),
            short(&text),
            short(&a),
            short(&b)
        );
    }
}

fn on_thread(name: &str, f: impl FnOnce() + Send + 'static) {
    thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .expect("spawn")
        .join()
        .unwrap_or_else(|_| panic!("{name} panicked"));
}

#[test]
fn random_and_mutated_inputs() {
    let corpus: Vec<&'static str> = common::valid_inputs()
        .chain(common::ERRORS.iter().copied())
        .collect();
    // CEL_FUZZ_ROUNDS and CEL_FUZZ_SEED allow longer campaigns by hand.
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let rounds = env("CEL_FUZZ_ROUNDS").unwrap_or(12_000);
    let seed = env("CEL_FUZZ_SEED").unwrap_or(0x9E37_79B9_7F4A_7C15) | 1;
    on_thread("fuzz", move || {
        let mut rng = Rng(seed);
        let mut clean = 0;
        for round in 0..rounds {
            let input = match round % 4 {
                0 => {
                    let bytes: Vec<u8> = (0..rng.below(40)).map(|_| rng.next() as u8).collect();
                    String::from_utf8_lossy(&bytes).into_owned()
                }
                1 => (0..rng.below(20))
                    .map(|_| *rng.pick(TOKENS))
                    .collect::<Vec<_>>()
                    .join(""),
                _ => {
                    let base = *rng.pick(&corpus);
                    let other = *rng.pick(&corpus);
                    mutate(&mut rng, base, other)
                }
            };
            check(&input);
            if parse(&Source::new(input.as_str()), &ParserOptions::default()).is_ok() {
                clean += 1;
            }
        }
        // The mutations must exercise the round trip, not only the error paths.
        assert!(clean > rounds / 12, "only {clean} inputs parsed cleanly");
    });
}

#[test]
fn corpus_invariants() {
    on_thread("corpus", || {
        for input in common::valid_inputs().chain(common::ERRORS.iter().copied()) {
            check(input);
        }
    });
}

#[test]
fn pathological_nesting() {
    let cases: Vec<(&str, String)> = vec![
        (
            "parens",
            format!("{}x{}", "(".repeat(100_000), ")".repeat(100_000)),
        ),
        ("open parens", "(".repeat(100_000)),
        ("brackets", "[".repeat(100_000)),
        ("braces", "{".repeat(100_000)),
        ("message", "a{f:".repeat(20_000)),
        ("bangs", format!("{}x", "!".repeat(100_000))),
        ("minuses", format!("{}1", "-".repeat(100_000))),
        ("minus x", format!("{}x", "-".repeat(99_999))),
        ("selects", format!("a{}", ".b".repeat(49_999))),
        ("calls", format!("a{}", ".b()".repeat(24_999))),
        ("indexes", format!("a{}", "[0]".repeat(33_333))),
        ("sums", format!("a{}", " + a".repeat(24_999))),
        ("conditionals", "a ? b : ".repeat(12_500) + "c"),
        ("ors", vec!["a"; 30_000].join("||")),
        ("macros", "x.all(y, ".repeat(10_000)),
        (
            "nested macros",
            format!("{}y{}", "x.map(y, ".repeat(200), ")".repeat(200)),
        ),
        (
            "has",
            format!("{}a.b{}", "has(".repeat(10_000), ").c)".repeat(10_000)),
        ),
        (
            "unary list",
            format!("{}x{}", "[!".repeat(240), "]".repeat(240)),
        ),
    ];
    for (name, input) in cases {
        on_thread(name, move || {
            check(&input);
            let parsed = parse(&Source::new(input.as_str()), &ParserOptions::default());
            assert!(
                parsed.ast.expr.depth() <= 250 + AST_DEPTH_ALLOWANCE,
                "{name}: depth {}",
                parsed.ast.expr.depth()
            );
        });
    }
}

#[test]
fn megabyte_inputs() {
    on_thread("megabyte", || {
        let big = "a + ".repeat(250_000) + "a";
        let parsed = parse(&Source::new(big.as_str()), &ParserOptions::default());
        assert!(
            parsed.diagnostics[0]
                .message
                .contains("code point size exceeds limit")
        );

        let unlimited = ParserOptions {
            expression_size_limit: usize::MAX,
            ..ParserOptions::default()
        };
        let list = format!("[{}1]", "1, ".repeat(330_000));
        let parsed = parse(&Source::new(list.as_str()), &unlimited);
        assert!(parsed.is_ok());
        let ExprKind::List(l) = &parsed.ast.expr.kind else {
            panic!()
        };
        assert_eq!(l.elements.len(), 330_001);

        let ors = vec!["a.b"; 250_000].join(" || ");
        let parsed = parse(&Source::new(ors.as_str()), &unlimited);
        assert!(parsed.is_ok());
        assert!(parsed.ast.expr.depth() < 30);

        let parsed = parse(&Source::new(big.as_str()), &unlimited);
        assert_eq!(parsed.diagnostics.len(), 1);
        assert!(parsed.ast.expr.depth() <= 250 + AST_DEPTH_ALLOWANCE);

        let garbage = "#@$".repeat(350_000);
        let parsed = parse(&Source::new(garbage.as_str()), &unlimited);
        assert_eq!(parsed.diagnostics.len(), 101);
    });
}

/// Macros that copy their target (`optMap`, `optFlatMap`, as cel-go expands them) double it
/// at each link of a chain: the parse stops at its node budget with a diagnostic instead of
/// building millions of nodes (twenty links once took 107 s and 11 GB). A short chain's
/// budget is 16,384 nodes: twelve links (40,000 nodes) took 0.2 s to check.
#[test]
fn copying_macro_chains_stop_at_the_node_budget() {
    on_thread("macro chains", || {
        let mut macros = cel_syntax::macros::MacroTable::new();
        macros.extend(cel_syntax::macros::standard_macros());
        macros.extend(cel_syntax::macros::optional_macros_at(2));
        let options = ParserOptions {
            macros,
            enable_optional_syntax: true,
            ..ParserOptions::default()
        };
        let chain = |n: usize| format!("optional.of(1){}.hasValue()", ".optMap(x, x)".repeat(n));
        let short = parse(&Source::new(chain(10).as_str()), &options);
        assert!(short.is_ok(), "{:?}", short.diagnostics);
        for n in [12, 14, 20, 40, 5_000] {
            let parsed = parse(&Source::new(chain(n).as_str()), &options);
            assert!(
                parsed.diagnostics.iter().any(|d| d
                    .message
                    .starts_with("expression too large after macro expansion")),
                "{n}: {:?}",
                parsed.diagnostics.first()
            );
        }
    });
}

/// The deepest nestings the default limit lets through must fit in half the default thread
/// stack: parsing uses stack in proportion to the nesting, and frames growing unnoticed would
/// eat the margin.
#[test]
fn nesting_limit_fits_in_one_mebibyte_of_stack() {
    let cases = [
        format!("{}x{}", "(".repeat(249), ")".repeat(249)),
        format!("{}x{}", "f(a + ".repeat(249), ")".repeat(249)),
        format!("{}x{}", "{1: [-".repeat(124), "]}".repeat(124)),
        format!("{}x", "a ? b : ".repeat(249)),
        format!("{}x{}", "y.map(v, a[".repeat(124), "])".repeat(124)),
    ];
    for input in cases {
        thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                let parsed = parse(&Source::new(input.as_str()), &ParserOptions::default());
                // (Some of these trees are deeper than the AST bound and are cut, which is
                // fine here: the parser itself had to go all the way down.)
                assert!(
                    parsed
                        .diagnostics
                        .iter()
                        .all(|d| !d.message.contains("expression recursion limit")),
                    "{}: {:?}",
                    short(&input),
                    parsed.diagnostics
                );
                let _ = unparse(&parsed.ast);
            })
            .expect("spawn")
            .join()
            .expect("parse within 1 MiB of stack");
    }
}

/// A tree of every kind of node with children, `depth` levels deep.
fn deep_tree(depth: i64) -> cel_syntax::Expr {
    use cel_syntax::{Call, Comprehension, Expr, ExprKind, ListExpr, Select};
    let leaf = |name: &str| Expr::new(0, ExprKind::Ident(name.into()));
    let mut e = leaf("x");
    for i in 0..depth {
        let kind = match i % 4 {
            0 => ExprKind::List(ListExpr {
                elements: vec![e],
                optional_indices: vec![],
            }),
            1 => ExprKind::Select(Select {
                operand: Box::new(e),
                field: "f".into(),
                test_only: false,
            }),
            2 => ExprKind::Call(Call {
                target: Some(Box::new(e)),
                function: "g".into(),
                args: vec![leaf("y")],
            }),
            _ => ExprKind::Comprehension(Box::new(Comprehension {
                iter_range: e,
                iter_var: "i".into(),
                iter_var2: None,
                accu_var: "a".into(),
                accu_init: leaf("a"),
                loop_condition: leaf("a"),
                loop_step: leaf("a"),
                result: leaf("a"),
            })),
        };
        e = Expr::new(i + 1, kind);
    }
    e
}

fn on_128k_stack(f: impl FnOnce() + Send + 'static) {
    let handle = std::thread::Builder::new()
        .stack_size(128 * 1024)
        .spawn(f)
        .expect("spawn");
    if let Err(p) = handle.join() {
        std::panic::resume_unwind(p);
    }
}

/// A hand-built tree a million levels deep is dropped on a 128 KiB stack (iteratively).
#[test]
fn million_level_tree_drops() {
    on_128k_stack(|| drop(deep_tree(1_000_000)));
}

/// A tree 100,000 levels deep is cloned, compared and printed with `Debug` on a 128 KiB
/// stack (recursively, on stack segments allocated as needed).
#[test]
fn deep_trees_clone_compare_and_print() {
    on_128k_stack(|| {
        let e = deep_tree(100_000);
        let copy = e.clone();
        assert!(copy == e);
        assert_eq!(copy.depth(), 100_001);
        let printed = format!("{e:?}");
        assert!(printed.len() > 100_000);
    });
}
