//! Parses arbitrary bytes (as lossy UTF-8). The parser must not panic, the tree must stay
//! within the depth bound, and an expression that parses without diagnostics must unparse to
//! text that parses back to the same tree (ids aside).

#![no_main]

use cel_syntax::{AST_DEPTH_ALLOWANCE, ParserOptions, Source, parse, unparse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let options = ParserOptions::default();
    let parsed = parse(&Source::new(text.as_ref()), &options);
    assert!(parsed.ast.expr.depth() <= options.max_recursion_depth + AST_DEPTH_ALLOWANCE);
    if !parsed.diagnostics.is_empty() {
        return;
    }
    let unparsed = unparse(&parsed.ast).expect("a clean parse must unparse");
    // The canonical text may be longer than the input, so only the size limit is lifted.
    let relaxed = ParserOptions {
        expression_size_limit: usize::MAX,
        ..ParserOptions::default()
    };
    let again = parse(&Source::new(unparsed.as_str()), &relaxed);
    assert!(
        again.diagnostics.is_empty(),
        "{text:?} unparsed to {unparsed:?}, which does not parse: {:?}",
        again.diagnostics
    );
    assert!(
        parsed.ast.expr.structurally_eq(&again.ast.expr),
        "{text:?} unparsed to {unparsed:?}, which parses differently"
    );
});
