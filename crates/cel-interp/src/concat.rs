//! Chains of string concatenations, `'hello ' + name + '!'`, with the results, errors and
//! costs the `+` calls give one after the other, but without their intermediate strings:
//! each `+` is checked against the limits on built strings and charged from the sizes of
//! its operands, and then
//! - a chain compared with a value (`… == x`, [`ConcatCompare`]) is compared piece by piece,
//!   building nothing;
//! - any other chain ([`ConcatBuild`]) is built once, in one allocation, where the calls
//!   build a string per `+`.
//!
//! Only a cost hook that must see the values (a host's) makes the intermediate strings be
//! built.
//!
//! Generated code calls these for chains of two or more pieces (the interpreter evaluates
//! the calls themselves; the two are compared by the backend tests).

use std::sync::Arc;

use cel_runtime::{Error, Value, compare, limits};

use crate::plan::CallCost;

/// An operand: its value, or `None` when it failed (its error passes on; a failed operand
/// counts as null, of size 1, in costs), and its size when it is known ahead (a constant's).
#[derive(Clone, Copy, Debug, Default)]
pub struct Operand<'v> {
    pub value: Option<&'v Value>,
    pub size: Option<u64>,
}

impl<'v> Operand<'v> {
    /// cel-go's size of the operand: its code points for a string, 1 for a failure.
    fn size(&self) -> u64 {
        match (self.value, self.size) {
            (None, _) => 1,
            (Some(_), Some(known)) => known,
            (Some(v), None) => crate::ops::actual_size(v),
        }
    }
}

/// Why a chain, or its comparison, failed.
#[derive(Debug)]
pub enum Failure {
    /// The error of an operand: a piece by its index, or the compared value (index: the
    /// number of pieces).
    Operand(usize),
    /// The error of `+` number `k` (from the innermost, 0): its result was too large.
    Step(usize, Error),
}

/// How a comparison ended: its value or its failure.
pub type Compared = Result<bool, Failure>;

/// How a chain's building ended: the string or its failure.
pub type Built = Result<Arc<str>, Failure>;

/// `p₀ + p₁ + … + pₙ == other` (or `!=`), left-associated, every `+` resolved to string
/// concatenation by the checker.
#[derive(Clone)]
pub struct ConcatCompare {
    /// The cost rule of each `+`, from the innermost.
    pub steps: Vec<CallCost>,
    /// The cost rule of the comparison.
    pub compare: CallCost,
    /// `!=` rather than `==`.
    pub negate: bool,
}

/// The chain as far as it got: the failure that ended it, or its size (and, when a cost hook
/// must see it or the chain is built, its text).
enum Chain {
    Failed(Failure),
    Text {
        bytes: usize,
        code_points: u64,
        text: Option<String>,
    },
}

impl Chain {
    /// cel-go's size of the chain's value: code points, or 1 for a failure (null).
    fn size(&self) -> u64 {
        match self {
            Chain::Failed(_) => 1,
            Chain::Text { code_points, .. } => *code_points,
        }
    }

    /// The value a cost hook sees (null for a failure).
    fn value(&self) -> Value {
        match self {
            Chain::Text {
                text: Some(text), ..
            } => Value::String(Arc::from(text.as_str())),
            _ => Value::Null,
        }
    }

    /// The result a cost hook sees.
    fn result(&self, error_of: &dyn Fn(usize) -> Error) -> Result<Value, Error> {
        match self {
            Chain::Failed(Failure::Operand(i)) => Err(error_of(*i)),
            Chain::Failed(Failure::Step(_, e)) => Err(e.clone()),
            text => Ok(text.value()),
        }
    }
}

/// A piece's text and code points, `Ok(None)` for a failed piece, `Err(())` for a value that
/// is not a string.
fn text_of<'v>(piece: Operand<'v>) -> Result<Option<(&'v str, u64)>, ()> {
    match piece.value {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some((s, piece.size()))),
        Some(_) => Err(()),
    }
}

/// The `+` calls of a chain, one after the other: how far the chain got and what the steps
/// cost, or `None` when a piece that did not fail is not a string (then the calls' own
/// dispatch decides, and the caller must make them). `keep_text` keeps the chain's text
/// (which a hook sees in any case).
fn walk(
    steps: &[CallCost],
    pieces: &[Operand<'_>],
    keep_text: bool,
    error_of: &dyn Fn(usize) -> Error,
) -> Option<(Chain, u64)> {
    let (first, rest) = pieces.split_first()?;
    if rest.len() != steps.len() {
        return None;
    }
    let with_values = steps.iter().any(CallCost::has_hooks);
    let mut chain = match text_of(*first).ok()? {
        None => Chain::Failed(Failure::Operand(0)),
        Some((s, code_points)) => Chain::Text {
            bytes: s.len(),
            code_points,
            text: (keep_text || with_values).then(|| s.to_string()),
        },
    };
    let mut cost: u64 = 0;
    for (k, (piece, rule)) in rest.iter().zip(steps).enumerate() {
        let text = text_of(*piece).ok()?;
        let before = (chain.size(), with_values.then(|| chain.value()));
        chain = concatenate(chain, text, k);
        cost = cost.saturating_add(match before.1 {
            None => rule
                .compute_from_sizes(&|i| if i == 0 { before.0 } else { piece.size() })
                .unwrap_or(0),
            Some(value) => {
                let args = [value, piece.value.cloned().unwrap_or(Value::Null)];
                rule.compute(&args, &chain.result(error_of))
            }
        });
    }
    Some((chain, cost))
}

/// What an all-string chain without hooks makes, measured in one pass over its pieces (each
/// measured once, the cost formulas applied to plain numbers): its bytes, code points and
/// the steps' cost. The bytes the `+` calls would build, each and together, are taken from
/// the evaluation's allowance only once every step is known to fit, so that a caller
/// handing a `None` (a hook, a failed or non-string piece, a step over the limits) to the
/// general routine never takes a step's bytes twice. The pieces come as an iterator,
/// walked twice by the comparison, so that a caller holding them in another form need not
/// gather them first.
#[inline]
fn measure_strings<'v>(
    steps: &[CallCost],
    pieces: impl Iterator<Item = Operand<'v>>,
) -> Option<(usize, u64, u64)> {
    if steps.iter().any(CallCost::has_hooks) {
        return None;
    }
    let mut steps = steps.iter();
    let mut bytes = 0usize;
    let mut code_points = 0u64;
    let mut cost = 0u64;
    let (mut largest, mut built) = (0u128, 0u128);
    for (k, piece) in pieces.enumerate() {
        let Some(Value::String(s)) = piece.value else {
            return None;
        };
        let size = piece
            .size
            .unwrap_or_else(|| cel_runtime::strings::size_string(s) as u64);
        if k > 0 {
            if bytes != 0 && !s.is_empty() {
                let step = bytes as u128 + s.len() as u128;
                largest = largest.max(step);
                built += step;
            }
            let charge = steps
                .next()?
                .formula
                .eval(|i| if i == 0 { code_points } else { size });
            cost = cost.saturating_add(charge);
        }
        bytes += s.len();
        code_points += size;
    }
    if steps.next().is_some() || !limits::try_spend_bytes(largest, built) {
        return None;
    }
    Some((bytes, code_points, cost))
}

impl ConcatCompare {
    /// The comparison and its cost (the steps' and the comparison's), or `None` when a piece
    /// that did not fail is not a string: then the calls' own dispatch decides, and the
    /// caller must make them. `error_of(i)` is operand `i`'s error, for cost hooks that see
    /// results.
    pub fn eval(
        &self,
        pieces: &[Operand<'_>],
        other: Operand<'_>,
        error_of: &dyn Fn(usize) -> Error,
    ) -> Option<(Compared, u64)> {
        let with_values = self.compare.has_hooks() || self.steps.iter().any(CallCost::has_hooks);
        if !with_values && let Some(done) = self.eval_strings(pieces.iter().copied(), other) {
            return Some(done);
        }
        let (chain, cost) = walk(&self.steps, pieces, with_values, error_of)?;
        let outcome = match (&chain, other.value) {
            (Chain::Failed(f), _) => Err(match f {
                Failure::Operand(i) => Failure::Operand(*i),
                Failure::Step(k, e) => Failure::Step(*k, e.clone()),
            }),
            (_, None) => Err(Failure::Operand(pieces.len())),
            (Chain::Text { .. }, Some(other)) => Ok(self.negate != equal_to(pieces, &chain, other)),
        };
        let result = match &outcome {
            Ok(b) => Ok(Value::Bool(*b)),
            Err(Failure::Operand(i)) => Err(error_of(*i)),
            Err(Failure::Step(_, e)) => Err(e.clone()),
        };
        let compared = if with_values {
            let args = [chain.value(), other.value.cloned().unwrap_or(Value::Null)];
            self.compare.compute(&args, &result)
        } else {
            self.compare
                .compute_from_sizes(&|i| if i == 0 { chain.size() } else { other.size() })
                .unwrap_or(0)
        };
        Some((outcome, cost.saturating_add(compared)))
    }
}

impl ConcatCompare {
    /// [`ConcatCompare::eval`] when every operand is a string and no hook applies, the case
    /// of nearly every evaluation: one pass over the pieces that measures each once, with
    /// the cost formulas applied to plain numbers, the steps' bytes taken from the
    /// evaluation's allowance only once all of them fit. `None` sends anything else (a hook,
    /// a failed or non-string operand, a step over the limits) to [`ConcatCompare::eval`],
    /// which gives its error and cost.
    #[inline]
    pub fn eval_strings<'v>(
        &self,
        pieces: impl Iterator<Item = Operand<'v>> + Clone,
        other: Operand<'v>,
    ) -> Option<(Compared, u64)> {
        let Some(Value::String(other_text)) = other.value else {
            return None;
        };
        if self.compare.has_hooks() {
            return None;
        }
        let (bytes, code_points, cost) = measure_strings(&self.steps, pieces.clone())?;
        let equal = other_text.len() == bytes && pieces_equal(pieces, other_text.as_bytes());
        let compared = self
            .compare
            .formula
            .eval(|i| if i == 0 { code_points } else { other.size() });
        Some((Ok(self.negate != equal), cost.saturating_add(compared)))
    }
}

/// `p₀ + p₁ + … + pₙ`, left-associated, every `+` resolved to string concatenation by the
/// checker, where its value is used as a string (not compared: [`ConcatCompare`]).
#[derive(Clone)]
pub struct ConcatBuild {
    /// The cost rule of each `+`, from the innermost.
    pub steps: Vec<CallCost>,
}

impl ConcatBuild {
    /// The chain's string and the steps' cost, or `None` when a piece that did not fail is
    /// not a string: then the calls' own dispatch decides, and the caller must make them.
    /// `error_of(i)` is piece `i`'s error, for cost hooks that see results.
    pub fn eval(
        &self,
        pieces: &[Operand<'_>],
        error_of: &dyn Fn(usize) -> Error,
    ) -> Option<(Built, u64)> {
        if let Some(done) = self.eval_strings(pieces.iter().copied()) {
            return Some(done);
        }
        let (chain, cost) = walk(&self.steps, pieces, true, error_of)?;
        let built = match chain {
            Chain::Failed(f) => Err(f),
            Chain::Text { text, .. } => Ok(Arc::from(text.unwrap_or_default())),
        };
        Some((built, cost))
    }

    /// [`ConcatBuild::eval`] when every piece is a string and no hook applies, the case of
    /// nearly every evaluation, measured as [`ConcatCompare::eval_strings`] measures it: the
    /// string is joined once, in one allocation (`cel_runtime::arith::joined_str`).
    #[inline]
    pub fn eval_strings<'v>(
        &self,
        pieces: impl Iterator<Item = Operand<'v>> + Clone,
    ) -> Option<(Built, u64)> {
        let (bytes, _, cost) = measure_strings(&self.steps, pieces.clone())?;
        let texts = pieces.filter_map(|p| match p.value {
            Some(Value::String(s)) => Some(&**s),
            _ => None,
        });
        Some((Ok(cel_runtime::arith::joined_str(texts, bytes)), cost))
    }
}

/// Whether the string pieces, one after the other, are `whole` (which has their length).
fn pieces_equal<'v>(pieces: impl Iterator<Item = Operand<'v>>, whole: &[u8]) -> bool {
    let mut rest = whole;
    for piece in pieces {
        let Some(Value::String(s)) = piece.value else {
            return false;
        };
        let Some((head, tail)) = rest.split_at_checked(s.len()) else {
            return false;
        };
        if !cel_runtime::strings::bytes_equal(head, s.as_bytes()) {
            return false;
        }
        rest = tail;
    }
    true
}

/// `chain + piece`, as `_+_` on strings does it: an empty side adds nothing and builds
/// nothing; otherwise the result must fit the limits on built strings.
fn concatenate(chain: Chain, piece: Option<(&str, u64)>, step: usize) -> Chain {
    match (chain, piece) {
        (Chain::Failed(f), _) => Chain::Failed(f),
        (_, None) => Chain::Failed(Failure::Operand(step + 1)),
        (
            Chain::Text {
                bytes,
                code_points,
                mut text,
            },
            Some((s, piece_code_points)),
        ) => {
            if bytes != 0 && !s.is_empty() {
                let total = bytes as u128 + s.len() as u128;
                if let Err(e) = limits::check_bytes("_+_", total) {
                    return Chain::Failed(Failure::Step(step, e));
                }
            }
            if let Some(t) = &mut text {
                t.push_str(s);
            }
            Chain::Text {
                bytes: bytes + s.len(),
                code_points: code_points + piece_code_points,
                text,
            }
        }
    }
}

/// Whether the chain's value equals `other`: piece by piece against a string, as CEL's
/// equality for anything else.
fn equal_to(pieces: &[Operand<'_>], chain: &Chain, other: &Value) -> bool {
    let Chain::Text { bytes, .. } = chain else {
        return false;
    };
    let Value::String(other) = other else {
        let whole: String = pieces
            .iter()
            .filter_map(|p| match p.value {
                Some(Value::String(s)) => Some(&**s),
                _ => None,
            })
            .collect();
        return compare::equals(&Value::String(Arc::from(whole)), other);
    };
    other.len() == *bytes && pieces_equal(pieces.iter().copied(), other.as_bytes())
}
