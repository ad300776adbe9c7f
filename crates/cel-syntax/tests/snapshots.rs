//! Snapshot tests: the AST (kinds, ids, anchors, spans, macro calls) of expressions covering
//! every grammar rule and literal form, and the rendered diagnostics of malformed ones. Review
//! changes to the `.snap` files by reading them.

mod common;

use cel_syntax::{ParserOptions, macros};
use common::*;

fn group(inputs: &[&str], options: &ParserOptions) -> String {
    inputs.iter().map(|i| dump(i, options)).collect()
}

#[test]
fn literals() {
    insta::assert_snapshot!(group(LITERALS, &ParserOptions::default()));
}

#[test]
fn operators() {
    insta::assert_snapshot!(group(OPERATORS, &ParserOptions::default()));
}

#[test]
fn members() {
    insta::assert_snapshot!(group(MEMBERS, &ParserOptions::default()));
}

#[test]
fn aggregates() {
    insta::assert_snapshot!(group(AGGREGATES, &ParserOptions::default()));
}

#[test]
fn macros() {
    insta::assert_snapshot!(group(MACROS, &ParserOptions::default()));
}

#[test]
fn optional_macros() {
    let mut options = ParserOptions::default();
    options.macros.extend(macros::optional_macros());
    let inputs = [
        "a.optMap(v, v + 1)",
        "a.optFlatMap(v, optional.of(v))",
        "a.b.optMap(v, v.map(w, w)).orValue([])",
        "a.optMap(1, 2)",
        "a.optFlatMap(v.w, 2)",
    ];
    insta::assert_snapshot!(group(&inputs, &options));
}

#[test]
fn block_test_macros() {
    let mut options = ParserOptions::default();
    options.macros.extend(macros::block_test_macros());
    let inputs = [
        "cel.block([1, cel.index(0) + 1], cel.index(1))",
        "cel.block([], 1)",
        "cel.block([[1].exists(cel.iterVar(0, 0), cel.iterVar(0, 0) > 0)], cel.index(0) || cel.accuVar(1, 2))",
        // Only on the namespace `cel`, and only at their arities: otherwise ordinary calls.
        "x.block([1], 2) + x.index(0) + cel.index(1, 2) + cel.block([1])",
        // Malformed uses: errors at the offending argument.
        "cel.block(1, 2)",
        "cel.block(cel.index(0), 2)",
        "cel.index(-1)",
        "cel.index('a')",
        "cel.index(1u)",
        "cel.index(x)",
        "cel.iterVar(0, x)",
        "cel.accuVar(-1, 0)",
    ];
    insta::assert_snapshot!(group(&inputs, &options));
}

#[test]
fn errors() {
    insta::assert_snapshot!(dump_diagnostics(ERRORS, &ParserOptions::default()));
}

#[test]
fn errors_with_features_disabled() {
    let options = ParserOptions {
        enable_optional_syntax: false,
        enable_identifier_escapes: false,
        ..ParserOptions::default()
    };
    let inputs = [
        "a.?b && a[?b]",
        "[?a, ?b]",
        "Msg{?field: value} && {?'key': value}",
        "x{?.",
        "a.`b-c`",
        "Message{`in`: true}",
    ];
    insta::assert_snapshot!(dump_diagnostics(&inputs, &options));
}
