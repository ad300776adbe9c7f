//! The internal names of CEL's operators, as cel-go and cel-spec spell them, with their
//! surface text and precedence.

/// `c ? t : f`.
pub const CONDITIONAL: &str = "_?_:_";
/// `a && b`.
pub const LOGICAL_AND: &str = "_&&_";
/// `a || b`.
pub const LOGICAL_OR: &str = "_||_";
/// `!a`.
pub const LOGICAL_NOT: &str = "!_";
/// `a == b`.
pub const EQUALS: &str = "_==_";
/// `a != b`.
pub const NOT_EQUALS: &str = "_!=_";
/// `a < b`.
pub const LESS: &str = "_<_";
/// `a <= b`.
pub const LESS_EQUALS: &str = "_<=_";
/// `a > b`.
pub const GREATER: &str = "_>_";
/// `a >= b`.
pub const GREATER_EQUALS: &str = "_>=_";
/// `a + b`.
pub const ADD: &str = "_+_";
/// `a - b`.
pub const SUBTRACT: &str = "_-_";
/// `a * b`.
pub const MULTIPLY: &str = "_*_";
/// `a / b`.
pub const DIVIDE: &str = "_/_";
/// `a % b`.
pub const MODULO: &str = "_%_";
/// `-a`.
pub const NEGATE: &str = "-_";
/// `a[b]`.
pub const INDEX: &str = "_[_]";
/// `a[?b]`.
pub const OPT_INDEX: &str = "_[?_]";
/// `a.?b` (the field name is the second argument, a string literal).
pub const OPT_SELECT: &str = "_?._";
/// `a in b`.
pub const IN: &str = "@in";
/// The pre-2019 name of `in`, still accepted at run time.
pub const OLD_IN: &str = "_in_";
/// The loop condition of `all` and `exists`: true unless its argument is `false`.
pub const NOT_STRICTLY_FALSE: &str = "@not_strictly_false";
/// The old name of [`NOT_STRICTLY_FALSE`].
pub const OLD_NOT_STRICTLY_FALSE: &str = "__not_strictly_false__";

/// The `has` macro.
pub const HAS: &str = "has";
/// The `all` macro.
pub const ALL: &str = "all";
/// The `exists` macro.
pub const EXISTS: &str = "exists";
/// The `exists_one` macro.
pub const EXISTS_ONE: &str = "exists_one";
/// The `map` macro.
pub const MAP: &str = "map";
/// The `filter` macro.
pub const FILTER: &str = "filter";

/// The accumulator name the standard macros use.
pub const ACCUMULATOR_NAME: &str = "@result";

/// Binary and unary operators: (internal name, surface text, precedence). Lower precedence
/// binds more loosely: `||` is 1, `&&` 2, relations 3, `+ -` 4, `* / %` 5, unary 6, member 7.
const OPERATORS: &[(&str, &str, u8)] = &[
    (CONDITIONAL, "", 8),
    (LOGICAL_OR, "||", 7),
    (LOGICAL_AND, "&&", 6),
    (EQUALS, "==", 5),
    (NOT_EQUALS, "!=", 5),
    (LESS, "<", 5),
    (LESS_EQUALS, "<=", 5),
    (GREATER, ">", 5),
    (GREATER_EQUALS, ">=", 5),
    (IN, "in", 5),
    (ADD, "+", 4),
    (SUBTRACT, "-", 4),
    (MULTIPLY, "*", 3),
    (DIVIDE, "/", 3),
    (MODULO, "%", 3),
    (LOGICAL_NOT, "!", 2),
    (NEGATE, "-", 2),
    (INDEX, "", 1),
    (OPT_INDEX, "", 1),
    (OPT_SELECT, "", 1),
];

/// The surface text of an operator's internal name (`_+_` → `+`), if it is a binary or unary
/// operator.
pub fn display(name: &str) -> Option<&'static str> {
    OPERATORS
        .iter()
        .find(|(n, text, _)| *n == name && !text.is_empty())
        .map(|(_, text, _)| *text)
}

/// The binding strength of an operator, in cel-go's unparser convention: 1 binds tightest
/// (member, index), 8 loosest (the conditional). `None` for anything that is not an operator.
pub fn precedence(name: &str) -> Option<u8> {
    OPERATORS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, p)| *p)
}

/// The internal name of a binary operator's surface text (`+` → `_+_`).
pub fn binary_from_text(text: &str) -> Option<&'static str> {
    OPERATORS
        .iter()
        .find(|(n, t, _)| *t == text && (n.starts_with('_') || *n == IN))
        .map(|(n, _, _)| *n)
}
