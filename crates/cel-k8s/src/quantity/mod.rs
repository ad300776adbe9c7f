//! Kubernetes' quantity library (`kubernetes.quantity`, `quantity.go`), Kubernetes 1.28+.
//!
//! | function | signature | example |
//! | --- | --- | --- |
//! | `quantity` | `quantity(string) -> kubernetes.Quantity` | `quantity('1.5G')` |
//! | `isQuantity` | `isQuantity(string) -> bool` | `isQuantity('200K') == false` |
//! | `sign` | `sign(kubernetes.Quantity) -> int` (a global function) | `sign(quantity('-1')) == -1` |
//! | `isGreaterThan`, `isLessThan` | `kubernetes.Quantity.isLessThan(kubernetes.Quantity) -> bool` | `quantity('50M').isLessThan(quantity('50Mi'))` |
//! | `compareTo` | `kubernetes.Quantity.compareTo(kubernetes.Quantity) -> int` | `quantity('200M').compareTo(quantity('0.2G')) == 0` |
//! | `asApproximateFloat` | `kubernetes.Quantity.asApproximateFloat() -> double` | `quantity('50.703k').asApproximateFloat() == 50703.0` |
//! | `asInteger` | `kubernetes.Quantity.asInteger() -> int` | `quantity('50k').asInteger() == 50000` |
//! | `isInteger` | `kubernetes.Quantity.isInteger() -> bool` | `quantity('50k').isInteger()` |
//! | `add`, `sub` | `kubernetes.Quantity.add(kubernetes.Quantity) -> kubernetes.Quantity`, `.add(int)` | `quantity('50k').add(20) == quantity('50020')` |
//!
//! Parsing follows apimachinery's `ParseQuantity`: an optional sign, digits with an optional
//! fraction, then a binary suffix (`Ki Mi Gi Ti Pi Ei`), a decimal suffix (`n u m k M G T P
//! E` or none) or an exponent (`e3`, `E-3`). Errors are Kubernetes' texts: `quantities must
//! match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`, `unable to
//! parse quantity's suffix`, `unable to parse numeric part of quantity`. Values are exact;
//! anything finer than 10^-9 is rounded away from zero to the next nano; binary-suffixed
//! values are capped at 2^63-1.
//!
//! Kubernetes keeps a quantity either as a 64-bit integer times a power of ten or as an
//! arbitrary decimal, and `isInteger`/`asInteger` only succeed on the first form with a
//! non-negative power (so `quantity('1000m').isInteger()` is false and
//! `quantity('1.5Gi').isInteger()` is false). This module keeps the same two forms and makes
//! the same transitions, including the one Go makes as a side effect: comparing a quantity
//! (`compareTo`, `isLessThan`, `isGreaterThan`) with one in decimal form turns the receiver
//! into decimal form. Arithmetic never changes its operands.
//!
//! Go would compute results of any size (and take as long as that needs); here an exact
//! result of more than [`MAX_DIGITS`] digits (such as `quantity('1e999999999').add(quantity('1.5Gi'))`)
//! is the error `quantity too large to represent exactly`.
//!
//! Costs: `quantity`/`isQuantity` `ceil(0.1 × size(string))`, statically and at run time;
//! every other function 1; `==` 1.

mod bignum;

use std::any::Any;
use std::cmp::Ordering;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use cel_ext::{Library, LibraryContents};
use cel_runtime::{Error, Implementation, OpaqueValue, Result, Value};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::{opaque, string_arg};
use bignum::Mag;

/// The CEL type name of quantities.
pub const QUANTITY_TYPE: &str = "kubernetes.Quantity";

/// The most decimal digits an exact quantity may have.
pub const MAX_DIGITS: u64 = 4_000_000;

/// `ErrFormatWrong`.
pub const ERR_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `ErrNumeric`.
pub const ERR_NUMERIC: &str = "unable to parse numeric part of quantity";
/// `ErrSuffix`.
pub const ERR_SUFFIX: &str = "unable to parse quantity's suffix";
/// The error for results too large to represent here.
pub const ERR_TOO_LARGE: &str = "quantity too large to represent exactly";

/// The `kubernetes.Quantity` type.
pub fn quantity_type() -> Type {
    Type::opaque(QUANTITY_TYPE)
}

/// An arbitrary decimal: `(-1)^neg × mag × 10^-scale` (inf.Dec's convention).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Dec {
    neg: bool,
    mag: Mag,
    scale: i32,
}

/// Kubernetes' two representations of an amount.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Amount {
    /// `value × 10^scale` (`int64Amount`).
    Int { value: i64, scale: i32 },
    /// `inf.Dec`.
    Dec(Dec),
}

impl Amount {
    fn to_dec(&self) -> Dec {
        match self {
            Amount::Int { value, scale } => Dec {
                neg: *value < 0,
                mag: Mag::from_u64(value.unsigned_abs()),
                scale: scale.wrapping_neg(),
            },
            Amount::Dec(d) => d.clone(),
        }
    }

    fn sign(&self) -> i64 {
        match self {
            Amount::Int { value, .. } => value.signum(),
            Amount::Dec(d) if d.mag.is_zero() => 0,
            Amount::Dec(d) => {
                if d.neg {
                    -1
                } else {
                    1
                }
            }
        }
    }
}

impl Dec {
    fn is_zero(&self) -> bool {
        self.mag.is_zero()
    }

    /// Exact comparison, without expanding either value beyond the other's digit count.
    fn cmp_exact(&self, o: &Dec) -> Ordering {
        let (za, zb) = (self.is_zero(), o.is_zero());
        let sa = if za {
            0
        } else if self.neg {
            -1
        } else {
            1
        };
        let sb = if zb {
            0
        } else if o.neg {
            -1
        } else {
            1
        };
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        let mag = cmp_magnitudes(
            &self.mag,
            -i64::from(self.scale),
            &o.mag,
            -i64::from(o.scale),
        );
        if sa < 0 { mag.reverse() } else { mag }
    }

    /// `self × 10^(new_scale - scale)` for `new_scale >= scale`.
    fn rescaled(&self, new_scale: i32) -> Option<Mag> {
        let k = (i64::from(new_scale) - i64::from(self.scale)) as u64;
        self.mag.mul_pow10(k, MAX_DIGITS)
    }

    /// inf.Dec `Add`: the result has the larger of the two scales.
    fn add(&self, o: &Dec) -> Option<Dec> {
        let scale = self.scale.max(o.scale);
        let a = self.rescaled(scale)?;
        let b = o.rescaled(scale)?;
        Some(if self.neg == o.neg {
            Dec {
                neg: self.neg,
                mag: a.add(&b),
                scale,
            }
        } else {
            match a.cmp_mag(&b) {
                Ordering::Less => Dec {
                    neg: o.neg,
                    mag: b.sub(&a),
                    scale,
                },
                _ => Dec {
                    neg: self.neg,
                    mag: a.sub(&b),
                    scale,
                },
            }
        })
    }

    fn neg(&self) -> Dec {
        Dec {
            neg: !self.neg,
            ..self.clone()
        }
    }
}

/// Compares `a × 10^ea` with `b × 10^eb` (both non-zero magnitudes).
fn cmp_magnitudes(a: &Mag, ea: i64, b: &Mag, eb: i64) -> Ordering {
    let oa = a.digits() as i64 + ea;
    let ob = b.digits() as i64 + eb;
    if oa != ob {
        return oa.cmp(&ob);
    }
    // Same order of magnitude: the exponent difference is at most the digit counts.
    match ea.cmp(&eb) {
        Ordering::Equal => a.cmp_mag(b),
        Ordering::Greater => a
            .mul_pow10((ea - eb) as u64, u64::MAX)
            .map_or(Ordering::Greater, |x| x.cmp_mag(b)),
        Ordering::Less => b
            .mul_pow10((eb - ea) as u64, u64::MAX)
            .map_or(Ordering::Less, |y| a.cmp_mag(&y)),
    }
}

/// A `kubernetes.Quantity`.
#[derive(Debug)]
pub struct Quantity {
    amount: Amount,
    /// Set when Go would have turned the value into decimal form in place (a comparison
    /// with a decimal-form quantity).
    promoted: AtomicBool,
    /// The text a parsed quantity was written as (printed back as `quantity("...")`, which
    /// rebuilds the same value in the same form).
    text: Option<Arc<str>>,
}

impl Clone for Quantity {
    fn clone(&self) -> Self {
        Quantity {
            amount: self.effective(),
            promoted: AtomicBool::new(false),
            // A promoted value is no longer what its text parses to.
            text: if self.promoted.load(AtomicOrdering::Relaxed) {
                None
            } else {
                self.text.clone()
            },
        }
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Quantity) -> bool {
        self.cmp_exact(other) == Ordering::Equal
    }
}

impl Quantity {
    fn new(amount: Amount) -> Quantity {
        Quantity {
            amount,
            promoted: AtomicBool::new(false),
            text: None,
        }
    }

    /// Text that `quantity(...)` parses back to this value: the text it was parsed from, or
    /// for a computed quantity its amount with an SI suffix when the power of ten has one
    /// (`70k`, `5m`), in positional notation for other fractions (`1.25`), and with an
    /// exponent otherwise (`15e1`).
    pub fn to_text(&self) -> String {
        let promoted = self.promoted.load(AtomicOrdering::Relaxed);
        if let Some(t) = &self.text
            && !promoted
        {
            return t.to_string();
        }
        let (neg, digits, exp) = match self.effective() {
            Amount::Int { value, scale } => (
                value < 0,
                value.unsigned_abs().to_string(),
                i64::from(scale),
            ),
            Amount::Dec(d) => (d.neg, d.mag.to_decimal(), -i64::from(d.scale)),
        };
        if digits == "0" {
            return "0".to_string();
        }
        let sign = if neg { "-" } else { "" };
        let suffix = match exp {
            -9 => Some("n"),
            -6 => Some("u"),
            -3 => Some("m"),
            0 => Some(""),
            3 => Some("k"),
            6 => Some("M"),
            9 => Some("G"),
            12 => Some("T"),
            15 => Some("P"),
            18 => Some("E"),
            _ => None,
        };
        if let Some(suffix) = suffix {
            return format!("{sign}{digits}{suffix}");
        }
        if exp < 0 {
            // Positional: digits with a decimal point, zero-padded on the left.
            let frac = usize::try_from(-exp).unwrap_or(usize::MAX);
            let padded = if digits.len() <= frac {
                format!("{}{digits}", "0".repeat(frac + 1 - digits.len()))
            } else {
                digits
            };
            let (int, fraction) = padded.split_at(padded.len() - frac);
            return format!("{sign}{int}.{fraction}");
        }
        format!("{sign}{digits}e{exp}")
    }

    /// The representation Go would see now.
    fn effective(&self) -> Amount {
        if self.promoted.load(AtomicOrdering::Relaxed) {
            Amount::Dec(self.amount.to_dec())
        } else {
            self.amount.clone()
        }
    }

    /// Parses a quantity with Kubernetes' rules.
    pub fn parse(s: &str) -> std::result::Result<Quantity, &'static str> {
        parse_quantity(s).map(|a| Quantity {
            text: Some(s.into()),
            ..Quantity::new(a)
        })
    }

    /// An integer quantity (`resource.NewQuantity(n, DecimalExponent)`).
    pub fn from_i64(n: i64) -> Quantity {
        Quantity::new(Amount::Int { value: n, scale: 0 })
    }

    /// `-1`, `0` or `1`.
    pub fn sign(&self) -> i64 {
        self.amount.sign()
    }

    /// Exact numeric comparison (no side effect).
    pub fn cmp_exact(&self, o: &Quantity) -> Ordering {
        let (a, b) = (self.effective(), o.effective());
        match (&a, &b) {
            (
                Amount::Int {
                    value: x,
                    scale: sx,
                },
                Amount::Int {
                    value: y,
                    scale: sy,
                },
            ) if sx == sy => x.cmp(y),
            _ => a.to_dec().cmp_exact(&b.to_dec()),
        }
    }

    /// Go's `Quantity.Cmp` on the receiver: the exact comparison, and, when either side is
    /// in decimal form, the receiver turns into decimal form.
    pub fn cmp_go(&self, o: &Quantity) -> Ordering {
        let (a, b) = (self.effective(), o.effective());
        if matches!(a, Amount::Dec(_)) || matches!(b, Amount::Dec(_)) {
            self.promoted.store(true, AtomicOrdering::Relaxed);
        }
        self.cmp_exact(o)
    }

    /// `AsInt64`: the value when it is held as an integer with a non-negative power of ten
    /// that fits 64 bits.
    pub fn as_i64(&self) -> Option<i64> {
        match self.effective() {
            Amount::Dec(_) => None,
            Amount::Int { value, scale } => {
                if scale == 0 {
                    Some(value)
                } else if scale < 0 {
                    None
                } else if value == 0 {
                    Some(0)
                } else {
                    let mut v = value;
                    for _ in 0..scale {
                        v = v.checked_mul(10)?;
                    }
                    Some(v)
                }
            }
        }
    }

    /// `AsApproximateFloat64`.
    pub fn as_approximate_f64(&self) -> f64 {
        let (base, exponent) = match self.effective() {
            Amount::Dec(d) => {
                let b: f64 = d.mag.to_decimal().parse().unwrap_or(f64::INFINITY);
                (if d.neg { -b } else { b }, -i64::from(d.scale))
            }
            Amount::Int { value, scale } => (value as f64, i64::from(scale)),
        };
        if exponent == 0 {
            return base;
        }
        base * go_pow10(exponent)
    }

    /// `Quantity.Add` on a copy.
    pub fn add(&self, y: &Quantity) -> std::result::Result<Quantity, &'static str> {
        let (a, b) = (self.effective(), y.effective());
        if let (
            Amount::Int {
                value: av,
                scale: asc,
            },
            Amount::Int {
                value: bv,
                scale: bsc,
            },
        ) = (&a, &b)
            && let Some(r) = int_add(*av, *asc, *bv, *bsc)
        {
            return Ok(Quantity::new(r));
        }
        a.to_dec()
            .add(&b.to_dec())
            .map(|d| Quantity::new(Amount::Dec(d)))
            .ok_or(ERR_TOO_LARGE)
    }

    /// `Quantity.Sub` on a copy.
    pub fn sub(&self, y: &Quantity) -> std::result::Result<Quantity, &'static str> {
        let (a, b) = (self.effective(), y.effective());
        if let (
            Amount::Int {
                value: av,
                scale: asc,
            },
            Amount::Int {
                value: bv,
                scale: bsc,
            },
        ) = (&a, &b)
        {
            if *av == 0 && *bv == i64::MIN {
                // 0 - y is -y; negating the most negative int64 moves to decimal form
                // (unless the scale cannot be negated).
                if *bsc == i32::MIN {
                    return Ok(Quantity::new(Amount::Int {
                        value: i64::MIN,
                        scale: *bsc,
                    }));
                }
                return Ok(Quantity::new(Amount::Dec(b.to_dec().neg())));
            }
            // Go negates with wrapping arithmetic.
            if let Some(r) = int_add(*av, *asc, bv.wrapping_neg(), *bsc) {
                return Ok(Quantity::new(r));
            }
        }
        a.to_dec()
            .add(&b.to_dec().neg())
            .map(|d| Quantity::new(Amount::Dec(d)))
            .ok_or(ERR_TOO_LARGE)
    }
}

/// `int64Amount.Add`: `None` when Go falls back to decimals.
fn int_add(av: i64, asc: i32, bv: i64, bsc: i32) -> Option<Amount> {
    if bv == 0 {
        return Some(Amount::Int {
            value: av,
            scale: asc,
        });
    }
    if av == 0 {
        return Some(Amount::Int {
            value: bv,
            scale: bsc,
        });
    }
    if asc == bsc {
        return av
            .checked_add(bv)
            .map(|value| Amount::Int { value, scale: asc });
    }
    if asc > bsc {
        let c = positive_scale(av, asc.wrapping_sub(bsc))?;
        let value = c.checked_add(bv)?;
        Some(Amount::Int { value, scale: bsc })
    } else {
        let c = positive_scale(bv, bsc.wrapping_sub(asc))?;
        let value = av.checked_add(c)?;
        Some(Amount::Int { value, scale: asc })
    }
}

/// `positiveScaleInt64`: `base × 10^scale`, `None` on overflow (a negative scale, which
/// only arises from Go's wrapping subtraction, multiplies by nothing).
fn positive_scale(base: i64, scale: i32) -> Option<i64> {
    if base == 0 || scale <= 0 {
        return Some(base);
    }
    let mut v = base;
    for _ in 0..scale {
        v = v.checked_mul(10)?;
    }
    Some(v)
}

/// Go's `math.Pow10`, computed the same way (two table entries multiplied or divided).
pub fn go_pow10(n: i64) -> f64 {
    const TAB: [f64; 32] = [
        1e00, 1e01, 1e02, 1e03, 1e04, 1e05, 1e06, 1e07, 1e08, 1e09, 1e10, 1e11, 1e12, 1e13, 1e14,
        1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29,
        1e30, 1e31,
    ];
    const POS32: [f64; 10] = [
        1e00, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288,
    ];
    const NEG32: [f64; 11] = [
        1e-00, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320,
    ];
    if (0..=308).contains(&n) {
        return POS32[(n / 32) as usize] * TAB[(n % 32) as usize];
    }
    if (-323..=0).contains(&n) {
        let m = -n;
        return NEG32[(m / 32) as usize] / TAB[(m % 32) as usize];
    }
    if n > 0 { f64::INFINITY } else { 0.0 }
}

struct Scanned<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// apimachinery's `parseQuantityString`.
fn scan(s: &str) -> std::result::Result<Scanned<'_>, &'static str> {
    let b = s.as_bytes();
    let end = b.len();
    let mut out = Scanned {
        positive: true,
        value: "",
        num: "",
        denom: "",
        suffix: "",
    };
    let mut pos = 0;
    if pos < end {
        match b[0] {
            b'-' => {
                out.positive = false;
                pos += 1;
            }
            b'+' => pos += 1,
            _ => {}
        }
    }
    let digit = |c: u8| c.is_ascii_digit();
    // Leading zeros.
    pos = run_end(b, pos, |c| c == b'0');
    if pos >= end {
        out.num = "0";
        out.value = "0";
        return Ok(out);
    }
    // Numerator.
    let i = run_end(b, pos, digit);
    out.num = &s[pos..i];
    if i >= end {
        out.value = s;
        return Ok(out);
    }
    pos = i;
    if out.num.is_empty() {
        out.num = "0";
    }
    // Denominator.
    if b[pos] == b'.' {
        pos += 1;
        let i = run_end(b, pos, digit);
        out.denom = &s[pos..i];
        if i >= end {
            out.value = s;
            return Ok(out);
        }
        pos = i;
    }
    out.value = &s[..pos];
    // Suffix: letters, then an optional sign and digits (for exponents).
    let suffix_start = pos;
    pos = run_end(b, pos, |c| b"eEinumkKMGTP".contains(&c));
    if pos < end {
        if matches!(b[pos], b'-' | b'+') {
            pos += 1;
        }
        if run_end(b, pos, digit) < end {
            return Err(ERR_FORMAT);
        }
    }
    out.suffix = &s[suffix_start..end];
    Ok(out)
}

/// Where the run of bytes from `from` that satisfy `class` ends (`b.len()` if it reaches the
/// end).
fn run_end(b: &[u8], from: usize, class: impl Fn(u8) -> bool) -> usize {
    b[from..]
        .iter()
        .position(|&c| !class(c))
        .map_or(b.len(), |n| from + n)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalExponent,
    DecimalSI,
    BinarySI,
}

/// The suffix's base, exponent and format.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let dec = |e| Some((10, e, Format::DecimalSI));
    let bin = |e| Some((2, e, Format::BinarySI));
    match suffix {
        "" => dec(0),
        "n" => dec(-9),
        "u" => dec(-6),
        "m" => dec(-3),
        "k" => dec(3),
        "M" => dec(6),
        "G" => dec(9),
        "T" => dec(12),
        "P" => dec(15),
        "E" => dec(18),
        "Ki" => bin(10),
        "Mi" => bin(20),
        "Gi" => bin(30),
        "Ti" => bin(40),
        "Pi" => bin(50),
        "Ei" => bin(60),
        _ => {
            let rest = suffix.strip_prefix(['e', 'E']).filter(|r| !r.is_empty())?;
            // strconv.ParseInt(rest, 10, 64), then truncated to int32 as Go does.
            let digits = rest.strip_prefix(['+', '-']).unwrap_or(rest);
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let parsed: i64 = rest.parse().ok()?;
            Some((10, parsed as i32, Format::DecimalExponent))
        }
    }
}

/// apimachinery's `ParseQuantity`.
fn parse_quantity(s: &str) -> std::result::Result<Amount, &'static str> {
    if s.is_empty() {
        return Err(ERR_FORMAT);
    }
    if s == "0" {
        return Ok(Amount::Int { value: 0, scale: 0 });
    }
    let sc = scan(s)?;
    let (base, exponent, format) = interpret(sc.suffix).ok_or(ERR_SUFFIX)?;
    let digits = (sc.num.len() + sc.denom.len()) as i64;
    let mut scale: i32 = 0;
    let mut mantissa: i64 = 1;
    let precision: i64 = match format {
        Format::DecimalExponent | Format::DecimalSI => {
            scale = exponent;
            18 - digits
        }
        Format::BinarySI => {
            if exponent >= 0 && sc.denom.is_empty() {
                mantissa = 1i64 << exponent;
                15 - sc.num.len() as i64 - i64::from(exponent) * 3 / 10 - 1
            } else {
                -1
            }
        }
    };
    if precision >= 0 {
        scale = scale.wrapping_sub(sc.denom.len() as i32);
        if scale >= -9 {
            let mut value: i64 = 0;
            for c in sc.num.bytes().chain(sc.denom.bytes()) {
                value = value * 10 + i64::from(c - b'0');
            }
            if let Some(mut result) = value.checked_mul(mantissa) {
                if !sc.positive {
                    result = -result;
                }
                return Ok(Amount::Int {
                    value: result,
                    scale,
                });
            }
        }
    }

    // inf.Dec's SetString on the numeric part: the sign and the digits, the scale being the
    // number of digits after the point.
    let v = sc.value;
    let (neg, body) = match v.as_bytes().first() {
        Some(b'-') => (true, &v[1..]),
        Some(b'+') => (false, &v[1..]),
        _ => (false, v),
    };
    let (int_part, frac_part) = match body.split_once('.') {
        Some((i, f)) => (i, f),
        None => (body, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(ERR_NUMERIC);
    }
    if (int_part.len() + frac_part.len()) as u64 > MAX_DIGITS {
        return Err(ERR_TOO_LARGE);
    }
    let mut all = Vec::with_capacity(int_part.len() + frac_part.len());
    all.extend_from_slice(int_part.as_bytes());
    all.extend_from_slice(frac_part.as_bytes());
    let mut d = Dec {
        neg,
        mag: Mag::from_digits(&all),
        scale: frac_part.len() as i32,
    };
    if base == 10 {
        d.scale = d.scale.wrapping_add(exponent.wrapping_neg());
    } else {
        d.mag.mul_pow2(exponent as u32);
    }
    let negative = d.neg && !d.mag.is_zero();
    d.neg = false;
    if !d.mag.is_zero() {
        // Round to nano, away from zero; the result always has scale 9.
        if d.scale > 9 {
            d.mag = d.mag.div_pow10_ceil((i64::from(d.scale) - 9) as u64);
        } else if d.scale < 9 {
            d.mag = d
                .mag
                .mul_pow10((9 - i64::from(d.scale)) as u64, MAX_DIGITS)
                .ok_or(ERR_TOO_LARGE)?;
        }
        d.scale = 9;
    }
    if format == Format::BinarySI {
        let max = Dec {
            neg: false,
            mag: Mag::from_u64(i64::MAX as u64),
            scale: 0,
        };
        if d.cmp_exact(&max) == Ordering::Greater {
            d = max;
        }
    }
    d.neg = negative;
    Ok(Amount::Dec(d))
}

impl OpaqueValue for Quantity {
    /// `k8s.io/apiserver/pkg/cel`'s type.
    fn go_type_name(&self) -> &str {
        "cel.Quantity"
    }
    fn type_name(&self) -> &str {
        QUANTITY_TYPE
    }
    /// `quantity("70k")` (see [`Quantity::to_text`]).
    fn write_cel(&self, out: &mut String) {
        out.push_str("quantity(");
        cel_runtime::format::push_string_literal(out, &self.to_text());
        out.push(')');
    }
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other
            .as_any()
            .downcast_ref::<Quantity>()
            .is_some_and(|o| self.cmp_exact(o) == Ordering::Equal)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Kubernetes' quantity library.
#[derive(Clone, Copy, Debug, Default)]
pub struct QuantityLib;

impl Library for QuantityLib {
    fn name(&self) -> &str {
        "kubernetes.quantity"
    }

    fn contents(&self) -> LibraryContents {
        let q = quantity_type;
        let member =
            |id: &str, params: Vec<Type>, result: Type| OverloadDecl::member(id, params, result);
        LibraryContents {
            functions: vec![
                FunctionDecl::new(
                    "quantity",
                    vec![OverloadDecl::global(
                        "string_to_quantity",
                        vec![Type::String],
                        q(),
                    )],
                ),
                FunctionDecl::new(
                    "isQuantity",
                    vec![OverloadDecl::global(
                        "is_quantity_string",
                        vec![Type::String],
                        Type::Bool,
                    )],
                ),
                FunctionDecl::new(
                    "sign",
                    vec![OverloadDecl::global("quantity_sign", vec![q()], Type::Int)],
                ),
                FunctionDecl::new(
                    "isGreaterThan",
                    vec![member(
                        "quantity_is_greater_than",
                        vec![q(), q()],
                        Type::Bool,
                    )],
                ),
                FunctionDecl::new(
                    "isLessThan",
                    vec![member("quantity_is_less_than", vec![q(), q()], Type::Bool)],
                ),
                FunctionDecl::new(
                    "compareTo",
                    vec![member("quantity_compare_to", vec![q(), q()], Type::Int)],
                ),
                FunctionDecl::new(
                    "asApproximateFloat",
                    vec![member("quantity_get_float", vec![q()], Type::Double)],
                ),
                FunctionDecl::new(
                    "asInteger",
                    vec![member("quantity_get_int", vec![q()], Type::Int)],
                ),
                FunctionDecl::new(
                    "isInteger",
                    vec![member("quantity_is_integer", vec![q()], Type::Bool)],
                ),
                FunctionDecl::new(
                    "add",
                    vec![
                        member("quantity_add", vec![q(), q()], q()),
                        member("quantity_add_int", vec![q(), Type::Int], q()),
                    ],
                ),
                FunctionDecl::new(
                    "sub",
                    vec![
                        member("quantity_sub", vec![q(), q()], q()),
                        member("quantity_sub_int", vec![q(), Type::Int], q()),
                    ],
                ),
            ],
            implementations: vec![
                (
                    "string_to_quantity".into(),
                    Implementation::Unary(to_quantity),
                ),
                (
                    "is_quantity_string".into(),
                    Implementation::Unary(is_quantity),
                ),
                (
                    "quantity_sign".into(),
                    Implementation::Unary(|v| Ok(Value::Int(one(v)?.sign()))),
                ),
                (
                    "quantity_is_greater_than".into(),
                    Implementation::Binary(|a, b| {
                        let (x, y) = two(a, b)?;
                        Ok(Value::Bool(x.cmp_go(y) == Ordering::Greater))
                    }),
                ),
                (
                    "quantity_is_less_than".into(),
                    Implementation::Binary(|a, b| {
                        let (x, y) = two(a, b)?;
                        Ok(Value::Bool(x.cmp_go(y) == Ordering::Less))
                    }),
                ),
                (
                    "quantity_compare_to".into(),
                    Implementation::Binary(|a, b| {
                        let (x, y) = two(a, b)?;
                        Ok(Value::Int(x.cmp_go(y) as i64))
                    }),
                ),
                (
                    "quantity_get_float".into(),
                    Implementation::Unary(|v| Ok(Value::Double(one(v)?.as_approximate_f64()))),
                ),
                (
                    "quantity_get_int".into(),
                    Implementation::Unary(|v| {
                        one(v)?
                            .as_i64()
                            .map(Value::Int)
                            .ok_or_else(|| Error::new("cannot convert value to integer"))
                    }),
                ),
                (
                    "quantity_is_integer".into(),
                    Implementation::Unary(|v| Ok(Value::Bool(one(v)?.as_i64().is_some()))),
                ),
                (
                    "quantity_add".into(),
                    Implementation::Binary(|a, b| {
                        let (x, y) = two(a, b)?;
                        wrap(x.add(y))
                    }),
                ),
                (
                    "quantity_add_int".into(),
                    Implementation::Binary(|a, b| match b {
                        Value::Int(n) => wrap(one(a)?.add(&Quantity::from_i64(*n))),
                        _ => Err(Error::no_such_overload()),
                    }),
                ),
                (
                    "quantity_sub".into(),
                    Implementation::Binary(|a, b| {
                        let (x, y) = two(a, b)?;
                        wrap(x.sub(y))
                    }),
                ),
                (
                    "quantity_sub_int".into(),
                    Implementation::Binary(|a, b| match b {
                        Value::Int(n) => wrap(one(a)?.sub(&Quantity::from_i64(*n))),
                        _ => Err(Error::no_such_overload()),
                    }),
                ),
            ],
            types: vec![quantity_type()],
            ..LibraryContents::default()
        }
    }
}

fn one(v: &Value) -> Result<&Quantity> {
    opaque::<Quantity>(v).ok_or_else(Error::no_such_overload)
}

fn two<'a>(a: &'a Value, b: &'a Value) -> Result<(&'a Quantity, &'a Quantity)> {
    Ok((one(a)?, one(b)?))
}

fn wrap(r: std::result::Result<Quantity, &'static str>) -> Result<Value> {
    r.map(|q| Value::Opaque(Arc::new(q))).map_err(Error::new)
}

/// `quantity(s)`.
pub fn to_quantity(s: &Value) -> Result<Value> {
    let s = string_arg(s).ok_or_else(Error::no_such_overload)?;
    wrap(Quantity::parse(s))
}

/// `isQuantity(s)`.
pub fn is_quantity(s: &Value) -> Result<Value> {
    let s = string_arg(s).ok_or_else(Error::no_such_overload)?;
    Ok(Value::Bool(Quantity::parse(s).is_ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn forms_and_integers() {
        assert_eq!(q("50k").as_i64(), Some(50000));
        assert_eq!(q("50.703k").as_i64(), Some(50703));
        assert_eq!(q("1000m").as_i64(), None);
        assert_eq!(q("1.5Gi").as_i64(), None);
        assert_eq!(q("9999999999999999999999999999999999999G").as_i64(), None);
        assert_eq!(q("50000000G").as_i64(), Some(50_000_000_000_000_000));
        assert_eq!(q("1Ki").as_i64(), Some(1024));
        assert_eq!(q("0.0").as_i64(), None);
        assert_eq!(q("1e999999999").as_i64(), None);
        assert_eq!(q("0e999999999").as_i64(), Some(0));
    }

    #[test]
    fn errors() {
        assert_eq!(Quantity::parse("").unwrap_err(), ERR_FORMAT);
        assert_eq!(Quantity::parse("10Mo").unwrap_err(), ERR_FORMAT);
        assert_eq!(Quantity::parse("10Mm").unwrap_err(), ERR_SUFFIX);
        assert_eq!(Quantity::parse("200K").unwrap_err(), ERR_SUFFIX);
        // Go accepts a bare suffix as zero (the library doc says otherwise; the code decides).
        assert!(Quantity::parse("Mi").is_ok());
        assert_eq!(Quantity::parse(".e-20").unwrap_err(), ERR_NUMERIC);
        assert!(Quantity::parse(".").is_ok());
        assert!(Quantity::parse("1e99999999999999999999").is_err());
    }

    #[test]
    fn comparisons_and_arithmetic() {
        assert_eq!(q("200M").cmp_exact(&q("0.2G")), Ordering::Equal);
        assert_eq!(q("50M").cmp_exact(&q("50Mi")), Ordering::Less);
        assert_eq!(q("1e999999999").cmp_exact(&q("1.5Gi")), Ordering::Greater);
        assert_eq!(q("-1e999999999").cmp_exact(&q("1n")), Ordering::Less);
        assert_eq!(
            q("8Ei").cmp_exact(&q("9223372036854775807")),
            Ordering::Equal
        );
        let r = q("50k").add(&Quantity::from_i64(20)).unwrap();
        assert_eq!(r.cmp_exact(&q("50020")), Ordering::Equal);
        assert_eq!(r.as_i64(), Some(50020));
        let r = q("50k").sub(&Quantity::from_i64(20000)).unwrap();
        assert_eq!(r.as_approximate_f64(), 30000.0);
        assert_eq!(q("50.703k").as_approximate_f64(), 50703.0);
        assert!(q("1e999999999").add(&q("1.5Gi")).is_err());
        let x = q("1");
        assert_eq!(x.as_i64(), Some(1));
        x.cmp_go(&q("1.5Gi"));
        assert_eq!(x.as_i64(), None);
        assert_eq!(q("0.9n").cmp_exact(&q("1n")), Ordering::Equal);
        assert_eq!(q("-0.9n").cmp_exact(&q("-1n")), Ordering::Equal);
    }
}
