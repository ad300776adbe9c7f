//! The math extension (cel-go's `ext.Math()`, library `cel.lib.ext.math`).
//!
//! [`Math::version`] chooses the version; the default is the newest, 2.
//!
//! | function | signature | example | since |
//! |---|---|---|---|
//! | `math.greatest` | macro: `math.greatest(num, ...)`, `math.greatest(list)` | `math.greatest(1, 2.5, 3u)` → `3u` | 0 |
//! | `math.least` | macro: `math.least(num, ...)`, `math.least(list)` | `math.least([-42.0, -21.5])` → `-42.0` | 0 |
//! | `math.ceil`, `math.floor`, `math.trunc` | `(double) -> double` | `math.floor(-1.2)` → `-2.0` | 1 |
//! | `math.round` | `(double) -> double`, ties away from zero | `math.round(-2.5)` → `-3.0` | 1 |
//! | `math.abs` | `(int\|uint\|double) -> same` | `math.abs(-1)` → 1 | 1 |
//! | `math.sign` | `(int\|uint\|double) -> same` | `math.sign(-42)` → -1 | 1 |
//! | `math.isInf`, `math.isNaN`, `math.isFinite` | `(double) -> bool` | `math.isNaN(0.0/0.0)` → true | 1 |
//! | `math.bitAnd`, `bitOr`, `bitXor` | `(int, int) -> int`, `(uint, uint) -> uint` | `math.bitAnd(3, 5)` → 1 | 1 |
//! | `math.bitNot` | `(int) -> int`, `(uint) -> uint` | `math.bitNot(0u)` → `18446744073709551615u` | 1 |
//! | `math.bitShiftLeft`, `bitShiftRight` | `(int\|uint, int) -> same` | `math.bitShiftRight(-1, 1)` → `9223372036854775807` | 1 |
//! | `math.sqrt` | `(int\|uint\|double) -> double` | `math.sqrt(4)` → 2.0 | 2 |
//!
//! `math.greatest` and `math.least` are macros over the receiver `math`: they expand to
//! `math.@max` / `math.@min` of the argument (one argument), of the two arguments, or of a
//! list of the arguments. The result keeps the winning value's own type. Literal arguments
//! that are not numbers are parse errors (`math.greatest() requires at least one argument`,
//! `math.greatest() invalid single argument value`, `math.least() simple literal arguments
//! must be numeric`); an empty list is a run-time error (`math.@max(list) argument must not
//! be empty`).
//!
//! Shifts are logical (zeros come in from the left), a shift by 64 or more gives 0, and a
//! negative shift is an error (`math.bitShiftLeft() negative offset: -1`).
//! `math.abs(-9223372036854775808)` is an error (`integer overflow`).
//!
//! # Costs
//!
//! None of these functions has a cost hook: each call costs 1, and `math.greatest(a, b, c)`
//! costs its list (10) plus 1.

use cel_runtime::{BinaryFn, Error, Implementation, Result, UnaryFn, Value};
use cel_syntax::macros::{ExprFactory, Macro, MacroError};
use cel_syntax::{Expr, ExprKind, Literal};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::{Library, LibraryContents};

/// The newest version of the math library.
pub const LATEST_VERSION: u32 = 2;

/// The math extension library at a version (0 to 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Math {
    version: u32,
}

impl Default for Math {
    fn default() -> Self {
        Math::version(LATEST_VERSION)
    }
}

impl Math {
    /// The library at a version; versions above the newest behave as the newest.
    pub fn version(version: u32) -> Math {
        Math { version }
    }
}

const MIN_FUNC: &str = "math.@min";
const MAX_FUNC: &str = "math.@max";

impl Library for Math {
    fn name(&self) -> &str {
        "cel.lib.ext.math"
    }

    fn contents(&self) -> LibraryContents {
        let mut c = LibraryContents {
            macros: vec![
                Macro::receiver_vararg("least", |f, t, a| expand(Extreme::Least, f, t, a)),
                Macro::receiver_vararg("greatest", |f, t, a| expand(Extreme::Greatest, f, t, a)),
            ],
            ..LibraryContents::default()
        };
        for (func, prefix) in [(MIN_FUNC, "math_@min"), (MAX_FUNC, "math_@max")] {
            let is_max = func == MAX_FUNC;
            let mut overloads = Vec::new();
            let nums = [
                ("double", Type::Double),
                ("int", Type::Int),
                ("uint", Type::Uint),
            ];
            for (n, t) in &nums {
                let id = format!("{prefix}_{n}");
                overloads.push(OverloadDecl::global(&id, vec![t.clone()], t.clone()));
                c.implement(&id, Implementation::Unary(identity));
            }
            let pairs = [
                ("double_double", Type::Double, Type::Double, Type::Double),
                ("int_int", Type::Int, Type::Int, Type::Int),
                ("uint_uint", Type::Uint, Type::Uint, Type::Uint),
                ("int_uint", Type::Int, Type::Uint, Type::Dyn),
                ("int_double", Type::Int, Type::Double, Type::Dyn),
                ("double_int", Type::Double, Type::Int, Type::Dyn),
                ("double_uint", Type::Double, Type::Uint, Type::Dyn),
                ("uint_int", Type::Uint, Type::Int, Type::Dyn),
                ("uint_double", Type::Uint, Type::Double, Type::Dyn),
            ];
            for (n, a, b, r) in pairs {
                let id = format!("{prefix}_{n}");
                overloads.push(OverloadDecl::global(&id, vec![a, b], r));
                c.implement(
                    &id,
                    Implementation::Binary(if is_max { max_pair } else { min_pair }),
                );
            }
            for (n, t) in nums {
                let id = format!("{prefix}_list_{n}");
                overloads.push(OverloadDecl::global(&id, vec![Type::list(t.clone())], t));
                c.implement(
                    &id,
                    Implementation::Unary(if is_max { max_list } else { min_list }),
                );
            }
            c.functions.push(FunctionDecl::new(func, overloads));
        }
        if self.version >= 1 {
            let d = || Type::Double;
            let unary_double: [(&str, &str, Type, UnaryFn); 7] = [
                ("math.ceil", "math_ceil_double", d(), ceil),
                ("math.floor", "math_floor_double", d(), floor),
                ("math.round", "math_round_double", d(), round),
                ("math.trunc", "math_trunc_double", d(), trunc),
                ("math.isInf", "math_isInf_double", Type::Bool, is_inf),
                ("math.isNaN", "math_isNaN_double", Type::Bool, is_nan),
                (
                    "math.isFinite",
                    "math_isFinite_double",
                    Type::Bool,
                    is_finite,
                ),
            ];
            for (name, id, result, f) in unary_double {
                c.functions.push(FunctionDecl::new(
                    name,
                    vec![OverloadDecl::global(id, vec![d()], result)],
                ));
                c.implement(id, Implementation::Unary(f));
            }
            for (name, stem, f) in [
                ("math.abs", "math_abs", abs as fn(&Value) -> Result<Value>),
                ("math.sign", "math_sign", sign),
            ] {
                let mut overloads = Vec::new();
                for (n, t) in [
                    ("double", Type::Double),
                    ("int", Type::Int),
                    ("uint", Type::Uint),
                ] {
                    let id = format!("{stem}_{n}");
                    overloads.push(OverloadDecl::global(&id, vec![t.clone()], t));
                    c.implement(&id, Implementation::Unary(f));
                }
                c.functions.push(FunctionDecl::new(name, overloads));
            }
            let bitwise: [(&str, &str, BinaryFn); 3] = [
                ("math.bitAnd", "math_bitAnd", bit_and),
                ("math.bitOr", "math_bitOr", bit_or),
                ("math.bitXor", "math_bitXor", bit_xor),
            ];
            for (name, stem, f) in bitwise {
                let int_id = format!("{stem}_int_int");
                let uint_id = format!("{stem}_uint_uint");
                c.functions.push(FunctionDecl::new(
                    name,
                    vec![
                        OverloadDecl::global(&int_id, vec![Type::Int, Type::Int], Type::Int),
                        OverloadDecl::global(&uint_id, vec![Type::Uint, Type::Uint], Type::Uint),
                    ],
                ));
                c.implement(&int_id, Implementation::Binary(f));
                c.implement(&uint_id, Implementation::Binary(f));
            }
            c.functions.push(FunctionDecl::new(
                "math.bitNot",
                vec![
                    OverloadDecl::global("math_bitNot_int_int", vec![Type::Int], Type::Int),
                    OverloadDecl::global("math_bitNot_uint_uint", vec![Type::Uint], Type::Uint),
                ],
            ));
            c.implement("math_bitNot_int_int", Implementation::Unary(bit_not));
            c.implement("math_bitNot_uint_uint", Implementation::Unary(bit_not));
            let shifts: [(&str, &str, BinaryFn); 2] = [
                ("math.bitShiftLeft", "math_bitShiftLeft", shift_left),
                ("math.bitShiftRight", "math_bitShiftRight", shift_right),
            ];
            for (name, stem, f) in shifts {
                let int_id = format!("{stem}_int_int");
                let uint_id = format!("{stem}_uint_int");
                c.functions.push(FunctionDecl::new(
                    name,
                    vec![
                        OverloadDecl::global(&int_id, vec![Type::Int, Type::Int], Type::Int),
                        OverloadDecl::global(&uint_id, vec![Type::Uint, Type::Int], Type::Uint),
                    ],
                ));
                c.implement(&int_id, Implementation::Binary(f));
                c.implement(&uint_id, Implementation::Binary(f));
            }
        }
        if self.version >= 2 {
            let mut overloads = Vec::new();
            for (n, t) in [
                ("double", Type::Double),
                ("int", Type::Int),
                ("uint", Type::Uint),
            ] {
                let id = format!("math_sqrt_{n}");
                overloads.push(OverloadDecl::global(&id, vec![t], Type::Double));
                c.implement(&id, Implementation::Unary(sqrt));
            }
            c.functions.push(FunctionDecl::new("math.sqrt", overloads));
        }
        c
    }
}

// ---------------------------------------------------------------------------------------
// Macros.

#[derive(Clone, Copy, PartialEq, Eq)]
enum Extreme {
    Least,
    Greatest,
}

impl Extreme {
    fn label(self) -> &'static str {
        match self {
            Extreme::Least => "math.least()",
            Extreme::Greatest => "math.greatest()",
        }
    }

    fn function(self) -> &'static str {
        match self {
            Extreme::Least => MIN_FUNC,
            Extreme::Greatest => MAX_FUNC,
        }
    }
}

/// Whether an argument may be a number: a numeric literal or any expression that is not a
/// literal of another kind or an aggregate literal.
fn may_be_numeric(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Literal(l) => {
            matches!(l, Literal::Int(_) | Literal::Uint(_) | Literal::Double(_))
        }
        ExprKind::List(_) | ExprKind::Map(_) | ExprKind::Struct(_) => false,
        _ => true,
    }
}

/// A non-empty list literal whose elements may all be numbers.
fn is_numeric_list_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::List(l) => !l.elements.is_empty() && l.elements.iter().all(may_be_numeric),
        _ => false,
    }
}

fn expand(
    which: Extreme,
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
) -> std::result::Result<Option<Expr>, MacroError> {
    let Some(target) = target else {
        return Ok(None);
    };
    if !matches!(&target.kind, ExprKind::Ident(n) if n == "math") {
        return Ok(None);
    }
    match args.len() {
        0 => Err(f.error(
            target.id,
            format!("{} requires at least one argument", which.label()),
        )),
        1 => {
            let arg = &args[0];
            if is_numeric_list_literal(arg) || may_be_numeric(arg) {
                Ok(Some(f.global_call(which.function(), args)))
            } else {
                Err(f.error(
                    arg.id,
                    format!("{} invalid single argument value", which.label()),
                ))
            }
        }
        n => {
            if let Some(bad) = args.iter().find(|a| !may_be_numeric(a)) {
                return Err(f.error(
                    bad.id,
                    format!("{} simple literal arguments must be numeric", which.label()),
                ));
            }
            if n == 2 {
                Ok(Some(f.global_call(which.function(), args)))
            } else {
                let list = f.list(args);
                Ok(Some(f.global_call(which.function(), vec![list])))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Functions.

fn identity(v: &Value) -> Result<Value> {
    match v {
        Value::Int(_) | Value::Uint(_) | Value::Double(_) => Ok(v.clone()),
        _ => Err(Error::no_such_overload()),
    }
}

/// Appends `: suffix` to an error message that does not mention it yet.
fn suffixed(e: Error, suffix: &str) -> Error {
    if e.message.contains(suffix) {
        e
    } else {
        Error {
            message: format!("{}: {suffix}", e.message),
            ..e
        }
    }
}

fn is_number(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Uint(_) | Value::Double(_))
}

/// The smaller of two values under CEL ordering (the first on a tie).
pub fn min_pair(a: &Value, b: &Value) -> Result<Value> {
    match cel_runtime::compare::compare(a, b) {
        Ok(std::cmp::Ordering::Greater) => Ok(b.clone()),
        Ok(_) => Ok(a.clone()),
        Err(e) => Err(suffixed(e, MIN_FUNC)),
    }
}

/// The larger of two values under CEL ordering (the first on a tie).
pub fn max_pair(a: &Value, b: &Value) -> Result<Value> {
    match cel_runtime::compare::compare(a, b) {
        Ok(std::cmp::Ordering::Less) => Ok(b.clone()),
        Ok(_) => Ok(a.clone()),
        Err(e) => Err(suffixed(e, MAX_FUNC)),
    }
}

fn extreme_of_list(v: &Value, is_max: bool) -> Result<Value> {
    let (func, pair): (&str, BinaryFn) = if is_max {
        (MAX_FUNC, max_pair)
    } else {
        (MIN_FUNC, min_pair)
    };
    let Value::List(l) = v else {
        return Err(Error::no_such_overload());
    };
    let Some(first) = l.first() else {
        return Err(Error::new(format!(
            "{func}(list) argument must not be empty"
        )));
    };
    let mut best = first.clone();
    for item in &l[1..] {
        best = pair(&best, item)?;
    }
    if is_number(&best) {
        Ok(best)
    } else {
        Err(Error::new(format!("no such overload: {func}")))
    }
}

/// `math.@min(list)`.
pub fn min_list(v: &Value) -> Result<Value> {
    extreme_of_list(v, false)
}

/// `math.@max(list)`.
pub fn max_list(v: &Value) -> Result<Value> {
    extreme_of_list(v, true)
}

fn double(v: &Value) -> Result<f64> {
    match v {
        Value::Double(d) => Ok(*d),
        _ => Err(Error::no_such_overload()),
    }
}

fn ceil(v: &Value) -> Result<Value> {
    Ok(Value::Double(double(v)?.ceil()))
}

fn floor(v: &Value) -> Result<Value> {
    Ok(Value::Double(double(v)?.floor()))
}

/// Rounds half away from zero (Go's `math.Round`).
fn round(v: &Value) -> Result<Value> {
    Ok(Value::Double(double(v)?.round()))
}

fn trunc(v: &Value) -> Result<Value> {
    Ok(Value::Double(double(v)?.trunc()))
}

fn is_inf(v: &Value) -> Result<Value> {
    Ok(Value::Bool(double(v)?.is_infinite()))
}

fn is_nan(v: &Value) -> Result<Value> {
    Ok(Value::Bool(double(v)?.is_nan()))
}

fn is_finite(v: &Value) -> Result<Value> {
    Ok(Value::Bool(double(v)?.is_finite()))
}

fn abs(v: &Value) -> Result<Value> {
    match v {
        Value::Int(i) => i
            .checked_abs()
            .map(Value::Int)
            .ok_or_else(|| Error::new("integer overflow")),
        Value::Uint(_) => Ok(v.clone()),
        Value::Double(d) => Ok(Value::Double(d.abs())),
        _ => Err(Error::no_such_overload()),
    }
}

fn sign(v: &Value) -> Result<Value> {
    match v {
        Value::Int(i) => Ok(Value::Int(i.signum())),
        Value::Uint(u) => Ok(Value::Uint(u64::from(*u != 0))),
        Value::Double(d) => Ok(Value::Double(if d.is_nan() {
            *d
        } else if *d > 0.0 {
            1.0
        } else if *d < 0.0 {
            -1.0
        } else {
            0.0
        })),
        _ => Err(Error::no_such_overload()),
    }
}

fn sqrt(v: &Value) -> Result<Value> {
    match v {
        Value::Int(i) => Ok(Value::Double((*i as f64).sqrt())),
        Value::Uint(u) => Ok(Value::Double((*u as f64).sqrt())),
        Value::Double(d) => Ok(Value::Double(d.sqrt())),
        _ => Err(Error::no_such_overload()),
    }
}

fn bit_and(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(Value::Int(x & y)),
        (Value::Uint(x), Value::Uint(y)) => Ok(Value::Uint(x & y)),
        _ => Err(Error::no_such_overload()),
    }
}

fn bit_or(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(Value::Int(x | y)),
        (Value::Uint(x), Value::Uint(y)) => Ok(Value::Uint(x | y)),
        _ => Err(Error::no_such_overload()),
    }
}

fn bit_xor(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(Value::Int(x ^ y)),
        (Value::Uint(x), Value::Uint(y)) => Ok(Value::Uint(x ^ y)),
        _ => Err(Error::no_such_overload()),
    }
}

fn bit_not(a: &Value) -> Result<Value> {
    match a {
        Value::Int(x) => Ok(Value::Int(!x)),
        Value::Uint(x) => Ok(Value::Uint(!x)),
        _ => Err(Error::no_such_overload()),
    }
}

fn shift_amount(bits: &Value, func: &str) -> Result<Option<u32>> {
    match bits {
        Value::Int(n) if *n < 0 => Err(Error::new(format!("math.{func}() negative offset: {n}"))),
        Value::Int(n) => Ok(u32::try_from(*n).ok().filter(|&n| n < 64)),
        _ => Err(Error::no_such_overload()),
    }
}

fn shift_left(v: &Value, bits: &Value) -> Result<Value> {
    if !matches!(v, Value::Int(_) | Value::Uint(_)) {
        return Err(Error::no_such_overload());
    }
    let n = shift_amount(bits, "bitShiftLeft")?;
    Ok(match (v, n) {
        (Value::Int(x), Some(n)) => Value::Int(x << n),
        (Value::Int(_), None) => Value::Int(0),
        (Value::Uint(x), Some(n)) => Value::Uint(x << n),
        _ => Value::Uint(0),
    })
}

/// A logical right shift: zeros come in from the left, also for negative ints.
fn shift_right(v: &Value, bits: &Value) -> Result<Value> {
    if !matches!(v, Value::Int(_) | Value::Uint(_)) {
        return Err(Error::no_such_overload());
    }
    let n = shift_amount(bits, "bitShiftRight")?;
    Ok(match (v, n) {
        (Value::Int(x), Some(n)) => Value::Int(((*x as u64) >> n) as i64),
        (Value::Int(_), None) => Value::Int(0),
        (Value::Uint(x), Some(n)) => Value::Uint(x >> n),
        _ => Value::Uint(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extremes_keep_the_winning_type() {
        let l = Value::list(vec![Value::Double(5.4), Value::Int(10), Value::Uint(3)]);
        assert!(max_list(&l).unwrap().identical(&Value::Int(10)));
        assert!(min_list(&l).unwrap().identical(&Value::Uint(3)));
        assert!(
            max_pair(&Value::Int(1), &Value::Double(1.0))
                .unwrap()
                .identical(&Value::Int(1))
        );
        assert_eq!(
            max_list(&Value::list(vec![])).unwrap_err().message,
            "math.@max(list) argument must not be empty"
        );
        assert_eq!(
            min_list(&Value::list(vec![Value::from("a"), Value::Int(1)]))
                .unwrap_err()
                .message,
            "no such overload: math.@min"
        );
        assert_eq!(
            max_list(&Value::list(vec![Value::from("a")]))
                .unwrap_err()
                .message,
            "no such overload: math.@max"
        );
        assert_eq!(
            max_pair(&Value::Double(f64::NAN), &Value::Int(1))
                .unwrap_err()
                .message,
            "NaN values cannot be ordered: math.@max"
        );
    }

    #[test]
    fn rounding_and_signs() {
        let r = |x: f64| match round(&Value::Double(x)).unwrap() {
            Value::Double(d) => d,
            _ => f64::NAN,
        };
        assert_eq!(r(2.5), 3.0);
        assert_eq!(r(-2.5), -3.0);
        assert!(r(-0.4).is_sign_negative());
        assert!(sign(&Value::Int(-42)).unwrap().identical(&Value::Int(-1)));
        assert!(sign(&Value::Uint(7)).unwrap().identical(&Value::Uint(1)));
        assert!(
            sign(&Value::Double(-0.0))
                .unwrap()
                .identical(&Value::Double(0.0))
        );
        assert_eq!(
            abs(&Value::Int(i64::MIN)).unwrap_err().message,
            "integer overflow"
        );
        assert!(
            sqrt(&Value::Int(-1))
                .unwrap()
                .identical(&Value::Double(f64::NAN))
        );
    }

    #[test]
    fn shifts() {
        let sr = |x: i64, n: i64| shift_right(&Value::Int(x), &Value::Int(n)).unwrap();
        assert!(sr(-1, 1).identical(&Value::Int(i64::MAX)));
        assert!(sr(-1024, 3).identical(&Value::Int(2305843009213693824)));
        assert!(sr(1024, 64).identical(&Value::Int(0)));
        assert!(
            shift_left(&Value::Int(-1), &Value::Int(200))
                .unwrap()
                .identical(&Value::Int(0))
        );
        assert!(
            shift_left(&Value::Uint(1), &Value::Int(2))
                .unwrap()
                .identical(&Value::Uint(4))
        );
        assert_eq!(
            shift_left(&Value::Uint(1), &Value::Int(-1))
                .unwrap_err()
                .message,
            "math.bitShiftLeft() negative offset: -1"
        );
        assert_eq!(
            shift_left(&Value::Double(4.3), &Value::Int(1)).unwrap_err(),
            Error::no_such_overload()
        );
        assert!(
            bit_not(&Value::Uint(0))
                .unwrap()
                .identical(&Value::Uint(u64::MAX))
        );
    }
}
