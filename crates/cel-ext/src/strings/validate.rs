//! cel-go's check of literal `format` calls (its `string_format` AST validator, for both
//! formatters): a call `'...'.format([...])` whose format string and argument list are
//! literals is checked once the expression is type-checked, so that a bad clause, a missing or
//! extra argument, or an argument of a type its clause does not take is a compile error
//! rather than an evaluation error. Arguments typed `dyn` pass; lists and maps given to `%s`
//! are checked element by element when they are literals.

use std::sync::Arc;

use cel_syntax::{Expr, ExprId, ExprKind, Literal};
use cel_types::{Primitive, Type};

use super::format::{Clause, parse_clause};
use super::legacy;
use crate::{CheckedExpr, ValidationIssue, Validator};

/// The validator of `format` calls, for the legacy formatter (versions 1 to 3) or the
/// `strings.md` one.
pub fn format_validator(legacy: bool, max_precision: usize) -> Validator {
    Arc::new(move |c: &CheckedExpr<'_>| {
        let mut out = Vec::new();
        c.expr.walk(&mut |e| {
            if let Some(issue) = check_call(e, c, legacy, max_precision) {
                out.push(issue);
            }
        });
        out
    })
}

/// The kinds cel-go compares argument types by.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Uint,
    Double,
    Bool,
    String,
    Bytes,
    Null,
    Timestamp,
    Duration,
    List,
    Map,
    Type,
    Other,
}

fn kind(t: &Type) -> Kind {
    match t {
        Type::Int | Type::Wrapper(Primitive::Int) => Kind::Int,
        Type::Uint | Type::Wrapper(Primitive::Uint) => Kind::Uint,
        Type::Double | Type::Wrapper(Primitive::Double) => Kind::Double,
        Type::Bool | Type::Wrapper(Primitive::Bool) => Kind::Bool,
        Type::String | Type::Wrapper(Primitive::String) => Kind::String,
        Type::Bytes | Type::Wrapper(Primitive::Bytes) => Kind::Bytes,
        Type::Null => Kind::Null,
        Type::Timestamp => Kind::Timestamp,
        Type::Duration => Kind::Duration,
        Type::List(_) => Kind::List,
        Type::Map(_, _) => Kind::Map,
        Type::Type(_) => Kind::Type,
        _ => Kind::Other,
    }
}

/// cel-go's `TypeName()` of a checked type: wrappers by their primitive's name.
fn type_name(t: &Type) -> &str {
    match t {
        Type::Wrapper(Primitive::Int) => "int",
        Type::Wrapper(Primitive::Uint) => "uint",
        Type::Wrapper(Primitive::Double) => "double",
        Type::Wrapper(Primitive::Bool) => "bool",
        Type::Wrapper(Primitive::String) => "string",
        Type::Wrapper(Primitive::Bytes) => "bytes",
        other => other.runtime_name(),
    }
}

/// The kinds `%s` takes.
const STRING_KINDS: &[Kind] = &[
    Kind::List,
    Kind::Map,
    Kind::Int,
    Kind::Uint,
    Kind::Double,
    Kind::Bool,
    Kind::String,
    Kind::Timestamp,
    Kind::Bytes,
    Kind::Duration,
    Kind::Type,
    Kind::Null,
];

struct Checker<'c, 'a> {
    c: &'c CheckedExpr<'a>,
    legacy: bool,
}

impl Checker<'_, '_> {
    fn type_of(&self, id: ExprId) -> Type {
        (self.c.type_of)(id)
    }

    /// `verifyTypeOneOf`: `dyn` passes, otherwise the kind must be one of `kinds`.
    fn one_of(&self, id: ExprId, kinds: &[Kind]) -> bool {
        let t = self.type_of(id);
        t == Type::Dyn || kinds.contains(&kind(&t))
    }

    /// `verifyString`: the argument, and the elements, keys and values of list and map
    /// literals, must be of kinds `%s` takes; the first one that is not is reported.
    fn verify_string(&self, e: &Expr) -> Result<(), ExprId> {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            if !self.one_of(e.id, STRING_KINDS) {
                return Err(e.id);
            }
            match &e.kind {
                ExprKind::List(l) => stack.extend(l.elements.iter().rev()),
                ExprKind::Map(m) => {
                    for entry in m.entries.iter().rev() {
                        stack.push(&entry.value);
                        stack.push(&entry.key);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Checks one clause against its argument: the id and message of a mismatch.
    fn clause(&self, clause: Clause, arg: &Expr) -> Result<(), (ExprId, String)> {
        let fail = |id: ExprId, what: &str| {
            let t = self.type_of(id);
            Err((id, format!("{what}, was given {}", type_name(&t))))
        };
        let (kinds, what): (&[Kind], &str) = match (clause, self.legacy) {
            (Clause::String, legacy) => {
                return match self.verify_string(arg) {
                    Ok(()) => Ok(()),
                    Err(id) => fail(
                        id,
                        if legacy {
                            legacy::STRING_CLAUSE
                        } else {
                            super::format::STRING_CLAUSE
                        },
                    ),
                };
            }
            (Clause::Decimal, true) => (&[Kind::Int, Kind::Uint], legacy::DECIMAL_CLAUSE),
            (Clause::Fixed(_), true) => (&[Kind::Double, Kind::String], legacy::FIXED_CLAUSE),
            (Clause::Scientific(_), true) => {
                (&[Kind::Double, Kind::String], legacy::SCIENTIFIC_CLAUSE)
            }
            (Clause::Binary, true) => (&[Kind::Int, Kind::Uint, Kind::Bool], legacy::BINARY_CLAUSE),
            (Clause::Hex { .. }, true) => (
                &[Kind::Int, Kind::Uint, Kind::String, Kind::Bytes],
                legacy::HEX_CLAUSE,
            ),
            (Clause::Octal, true) => (&[Kind::Int, Kind::Uint], legacy::OCTAL_CLAUSE),
            (Clause::Decimal, false) => (
                &[Kind::Int, Kind::Uint, Kind::Double],
                "decimal clause can only be used on ints, uints, and doubles",
            ),
            (Clause::Fixed(_), false) => (
                &[Kind::Int, Kind::Uint, Kind::Double],
                "fixed-point clause can only be used on ints, uints, and doubles",
            ),
            (Clause::Scientific(_), false) => (
                &[Kind::Int, Kind::Uint, Kind::Double],
                "scientific clause can only be used on ints, uints, and doubles",
            ),
            (Clause::Binary, false) => (
                &[Kind::Bool, Kind::Int, Kind::Uint],
                "only ints, uints, and bools can be formatted as binary",
            ),
            (Clause::Hex { .. }, false) => (
                &[Kind::Int, Kind::Uint, Kind::String, Kind::Bytes],
                "only ints, uints, bytes, and strings can be formatted as hex",
            ),
            (Clause::Octal, false) => (
                &[Kind::Int, Kind::Uint],
                "octal clause can only be used on ints and uints",
            ),
        };
        if self.one_of(arg.id, kinds) {
            Ok(())
        } else {
            fail(arg.id, what)
        }
    }
}

/// Checks `e` if it is a literal `format` call: the first problem, as cel-go reports it.
fn check_call(
    e: &Expr,
    c: &CheckedExpr<'_>,
    legacy: bool,
    max_precision: usize,
) -> Option<ValidationIssue> {
    let ExprKind::Call(call) = &e.kind else {
        return None;
    };
    let target = call.target.as_deref()?;
    if call.function != "format" {
        return None;
    }
    let overloads = (c.overloads_of)(e.id);
    if !overloads.is_empty() && !overloads.iter().any(|o| o == "string_format") {
        return None;
    }
    let ExprKind::Literal(Literal::String(format)) = &target.kind else {
        return None;
    };
    let [list] = call.args.as_slice() else {
        return None;
    };
    let ExprKind::List(list) = &list.kind else {
        return None;
    };
    let args = &list.elements;
    let checker = Checker { c, legacy };
    let issue = |expr_id: ExprId, message: String| Some(ValidationIssue { expr_id, message });
    let bytes = format.as_bytes();
    let (mut i, mut arg_index, mut requested) = (0usize, 0usize, 0usize);
    while i < bytes.len() {
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        requested += 1;
        if i + 1 >= bytes.len() {
            return issue(e.id, "unexpected end of string".to_string());
        }
        let Some(arg) = args.get(arg_index) else {
            return issue(e.id, format!("index {arg_index} out of range"));
        };
        let (read, clause) = match parse_clause(&bytes[i + 1..], max_precision) {
            Ok(r) => r,
            Err(m) => return issue(e.id, format!("could not parse formatting clause: {m}")),
        };
        if let Err((id, m)) = checker.clause(clause, arg) {
            return issue(id, format!("error during formatting: {m}"));
        }
        i += 1 + read;
        arg_index += 1;
    }
    if args.len() > requested {
        return issue(
            e.id,
            format!(
                "too many arguments supplied to string.format (expected {requested}, got {})",
                args.len()
            ),
        );
    }
    None
}
