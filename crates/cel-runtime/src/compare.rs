//! Equality, ordering and membership, as cel-go evaluates them at run time.
//!
//! * [`equals`] is CEL's heterogeneous equality: ints, uints and doubles compare as numbers
//!   (with cel-go's lossy conversion of the integer to a double when one side is a double, so
//!   `9007199254740993 == 9007199254740992.0`), NaN equals nothing, lists compare element by
//!   element, maps key by key (numeric keys match across types), type values by name,
//!   optionals by content, and values of different kinds are simply unequal. It never fails
//!   and never recurses: nested values are walked with an explicit work list.
//! * [`compare`] orders ints, uints and doubles across types, strings and bytes bytewise,
//!   bools, timestamps (by instant) and durations. Anything else is "no such overload"; a NaN
//!   operand is "NaN values cannot be ordered".
//! * [`in_list`] and [`in_map`] implement `@in`.

use std::cmp::Ordering;

use crate::object::{self, ListSemantics};
use crate::{Error, Key, KeyRef, ListValue, MapValue, Result, Value};

/// 2^63 as a double.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
/// 2^64 as a double.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// "NaN values cannot be ordered".
#[cold]
pub fn nan_error() -> Error {
    Error::new("NaN values cannot be ordered")
}

/// Orders an int and a uint exactly.
#[inline]
pub fn compare_int_uint(i: i64, u: u64) -> Ordering {
    if i < 0 || u > i64::MAX as u64 {
        Ordering::Less
    } else {
        (i as u64).cmp(&u)
    }
}

/// Orders a (non-NaN) double and an int as cel-go does: outside ±2^63 by range, otherwise by
/// converting the int to a double.
#[inline]
pub fn compare_double_int(d: f64, i: i64) -> Ordering {
    if d < -TWO_POW_63 {
        Ordering::Less
    } else if d > TWO_POW_63 {
        Ordering::Greater
    } else {
        d.partial_cmp(&(i as f64)).unwrap_or(Ordering::Equal)
    }
}

/// Orders a (non-NaN) double and a uint as cel-go does.
#[inline]
pub fn compare_double_uint(d: f64, u: u64) -> Ordering {
    if d < 0.0 {
        Ordering::Less
    } else if d > TWO_POW_64 {
        Ordering::Greater
    } else {
        d.partial_cmp(&(u as f64)).unwrap_or(Ordering::Equal)
    }
}

/// Orders two doubles; NaN is an error.
#[inline]
pub fn compare_doubles(a: f64, b: f64) -> Result<Ordering> {
    a.partial_cmp(&b).ok_or_else(nan_error)
}

/// CEL ordering of two values, following cel-go's `Compare` of the left operand: numbers
/// across int/uint/double, strings and bytes bytewise, bools, timestamps, durations, and
/// opaque values whose type defines an order.
pub fn compare(a: &Value, b: &Value) -> Result<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x.cmp(y)),
        (Value::Int(x), Value::Uint(y)) => Ok(compare_int_uint(*x, *y)),
        (Value::Int(x), Value::Double(y)) => {
            if y.is_nan() {
                Err(nan_error())
            } else {
                Ok(compare_double_int(*y, *x).reverse())
            }
        }
        (Value::Uint(x), Value::Uint(y)) => Ok(x.cmp(y)),
        (Value::Uint(x), Value::Int(y)) => Ok(compare_int_uint(*y, *x).reverse()),
        (Value::Uint(x), Value::Double(y)) => {
            if y.is_nan() {
                Err(nan_error())
            } else {
                Ok(compare_double_uint(*y, *x).reverse())
            }
        }
        // cel-go checks the left double for NaN before looking at the right operand's type.
        (Value::Double(x), _) if x.is_nan() => Err(nan_error()),
        (Value::Double(x), Value::Double(y)) => compare_doubles(*x, *y),
        (Value::Double(x), Value::Int(y)) => Ok(compare_double_int(*x, *y)),
        (Value::Double(x), Value::Uint(y)) => Ok(compare_double_uint(*x, *y)),
        (Value::String(x), Value::String(y)) => Ok(x.as_bytes().cmp(y.as_bytes())),
        (Value::Bytes(x), Value::Bytes(y)) => Ok(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(y)),
        (Value::Timestamp(x), Value::Timestamp(y)) => Ok(x.cmp(y)),
        (Value::Duration(x), Value::Duration(y)) => Ok(x.cmp(y)),
        (Value::Opaque(x), Value::Opaque(y)) => x.compare(&**y).ok_or_else(Error::no_such_overload),
        _ => Err(Error::no_such_overload()),
    }
}

/// Looks a key up in a map with CEL's numeric key normalisation (`1`, `1u` find each other).
pub fn lookup_key<'m>(map: &'m MapValue, key: &Key) -> Option<&'m Value> {
    match key {
        Key::Int(i) => map.get_exact(KeyRef::Int(*i)).or_else(|| {
            u64::try_from(*i)
                .ok()
                .and_then(|u| map.get_exact(KeyRef::Uint(u)))
        }),
        Key::Uint(u) => map.get_exact(KeyRef::Uint(*u)).or_else(|| {
            i64::try_from(*u)
                .ok()
                .and_then(|i| map.get_exact(KeyRef::Int(i)))
        }),
        other => map.get_exact(other.as_ref()),
    }
}

/// The result of comparing two values without looking inside aggregates: `Some(answer)`, or
/// `None` when both are lists, maps or present optionals whose contents decide.
#[inline]
fn shallow_equals(a: &Value, b: &Value) -> Option<bool> {
    Some(match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Uint(x), Value::Uint(y)) => x == y,
        (Value::Double(x), Value::Double(y)) => x == y,
        (Value::Int(i), Value::Uint(u)) | (Value::Uint(u), Value::Int(i)) => {
            compare_int_uint(*i, *u) == Ordering::Equal
        }
        // cel-go converts the integer to a double (after a range check that equality implies).
        (Value::Int(i), Value::Double(d)) | (Value::Double(d), Value::Int(i)) => *d == *i as f64,
        (Value::Uint(u), Value::Double(d)) | (Value::Double(d), Value::Uint(u)) => *d == *u as f64,
        (Value::String(x), Value::String(y)) => {
            crate::strings::bytes_equal(x.as_bytes(), y.as_bytes())
        }
        (Value::Bytes(x), Value::Bytes(y)) => crate::strings::bytes_equal(x, y),
        (Value::Timestamp(x), Value::Timestamp(y)) => x == y,
        (Value::Duration(x), Value::Duration(y)) => x == y,
        (Value::Type(x), Value::Type(y)) => x.runtime_name() == y.runtime_name(),
        (Value::Opaque(x), Value::Opaque(y)) => x.equals(&**y),
        (Value::Message(x), Value::Message(y)) => crate::proto::equals(x, y),
        (Value::Optional(None), Value::Optional(None)) => true,
        (Value::Optional(Some(_)), Value::Optional(Some(_))) => return None,
        (Value::Optional(_), Value::Optional(_)) => false,
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                false
            } else if x.is_empty() {
                true
            } else {
                return None;
            }
        }
        (Value::Map(x), Value::Map(y)) => {
            if x.len() != y.len() {
                false
            } else if x.is_empty() {
                true
            } else {
                return None;
            }
        }
        (Value::Object(_), Value::Object(_) | Value::Map(_))
        | (Value::Map(_), Value::Object(_)) => return None,
        _ => false,
    })
}

/// CEL equality (`==`) of two values of any types. Never fails and never recurses.
pub fn equals(a: &Value, b: &Value) -> bool {
    if let Some(answer) = shallow_equals(a, b) {
        return answer;
    }
    let mut work: Vec<(&Value, &Value)> = vec![(a, b)];
    while let Some((a, b)) = work.pop() {
        match shallow_equals(a, b) {
            Some(true) => {}
            Some(false) => return false,
            None => match (a, b) {
                (Value::List(x), Value::List(y)) => match x.semantics.as_deref() {
                    None => {
                        // Compare in order: push the pairs so the first is popped first.
                        work.extend(x.iter().zip(y.iter()).rev());
                    }
                    // A set or map list on the left ignores order. Kubernetes fails on sets
                    // of aggregates, which a structural schema cannot declare; such a set
                    // is simply unequal here.
                    Some(ListSemantics::Set) => {
                        if !matches!(object::set_equals(x, y), Ok(true)) {
                            return false;
                        }
                    }
                    Some(ListSemantics::Map { keys }) => match object::map_list_pairs(x, keys, y) {
                        Some(pairs) => work.extend(pairs.into_iter().rev()),
                        None => return false,
                    },
                },
                (Value::Object(x), Value::Object(y)) => {
                    if !object::object_equality_pairs(x, y, &mut work) {
                        return false;
                    }
                }
                (Value::Object(o), Value::Map(m)) | (Value::Map(m), Value::Object(o)) => {
                    if !object::object_map_equality_pairs(o, m, &mut work) {
                        return false;
                    }
                }
                (Value::Map(x), Value::Map(y)) => {
                    for (k, v) in x.iter() {
                        match lookup_key(y, k) {
                            Some(w) => work.push((v, w)),
                            None => return false,
                        }
                    }
                }
                (Value::Optional(Some(x)), Value::Optional(Some(y))) => work.push((x, y)),
                _ => return false,
            },
        }
    }
    true
}

/// `elem in list`: whether any element equals `elem` under [`equals`].
pub fn in_list(elem: &Value, list: &ListValue) -> bool {
    // (Elements are compared with `elem` on the right, so a set or map list element never
    // changes the meaning.)
    match elem {
        // A string equals only a string with the same contents: the common case (sets of
        // names) needs no general comparison.
        Value::String(x) => list
            .iter()
            .any(|e| matches!(e, Value::String(y) if crate::strings::bytes_equal(x.as_bytes(), y.as_bytes()))),
        _ => list.iter().any(|e| equals(elem, e)),
    }
}

/// `key in map`: whether the map has the key, with numeric normalisation (`1 in {1u: 'a'}`).
/// A value that cannot be a key is simply absent.
pub fn in_map(key: &Value, map: &MapValue) -> bool {
    matches!(map.get(key), Ok(Some(_)))
}

/// [`in_map`] for a string key whose hash was computed ahead ([`crate::MapHasher::hash_key`]),
/// looked for first where `cache` found it in the last map (see
/// [`object::SlotCache::get_in_map`]): `'app' in self.metadata.labels`.
#[inline]
pub fn in_map_str(key: &str, hash: u64, map: &MapValue, cache: &object::SlotCache) -> bool {
    cache.get_in_map(map, hash, key).is_some()
}

/// Adds an entry whose key must be new, as the two-variable comprehension transforms do:
/// "insert failed: key 1 already exists" when the map has the key (numerically equal keys
/// count as the same), "unsupported key type" for a value that cannot be a key.
pub fn map_insert_new(map: &mut MapValue, key: &Value, value: Value) -> Result<()> {
    let k = Key::from_value(key).ok_or_else(|| Error::new("unsupported key type"))?;
    if lookup_key(map, &k).is_some() {
        return Err(Error::new(format!("insert failed: key {k} already exists")));
    }
    map.insert(k, value);
    Ok(())
}

/// `@in` on any operands: "no such overload" when the right side is not a list or map.
pub fn in_value(elem: &Value, container: &Value) -> Result<Value> {
    match container {
        Value::List(l) => Ok(Value::Bool(in_list(elem, l))),
        Value::Map(m) => Ok(Value::Bool(in_map(elem, m))),
        Value::Object(o) => Ok(Value::Bool(
            matches!(elem, Value::String(k) if o.get(k).is_some()),
        )),
        _ => Err(Error::no_such_overload()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Key;

    fn map(entries: Vec<(Key, Value)>) -> Value {
        Value::map(entries)
    }

    #[test]
    fn numeric_equality_like_cel_go() {
        assert!(equals(&Value::Int(1), &Value::Double(1.0)));
        assert!(equals(&Value::Int(1), &Value::Uint(1)));
        assert!(equals(&Value::Uint(1), &Value::Int(1)));
        assert!(!equals(&Value::Int(-1), &Value::Uint(u64::MAX)));
        assert!(equals(
            &Value::Int(9_007_199_254_740_993),
            &Value::Double(9_007_199_254_740_992.0)
        ));
        assert!(equals(&Value::Int(i64::MAX), &Value::Double(TWO_POW_63)));
        assert!(equals(&Value::Uint(u64::MAX), &Value::Double(TWO_POW_64)));
        assert!(!equals(&Value::Double(f64::NAN), &Value::Double(f64::NAN)));
        assert!(!equals(
            &Value::list(vec![Value::Double(f64::NAN)]),
            &Value::list(vec![Value::Double(f64::NAN)])
        ));
        let l = Value::list(vec![Value::Double(f64::NAN)]);
        assert!(!equals(&l, &l.clone()));
    }

    #[test]
    fn different_kinds_are_unequal() {
        assert!(!equals(&Value::Int(1), &Value::from("a")));
        assert!(!equals(&Value::Bool(true), &Value::Int(1)));
        assert!(!equals(&Value::Null, &Value::Int(0)));
        assert!(equals(&Value::Null, &Value::Null));
    }

    #[test]
    fn aggregates() {
        assert!(equals(
            &Value::list(vec![Value::Int(1)]),
            &Value::list(vec![Value::Uint(1)])
        ));
        assert!(equals(
            &map(vec![(Key::String("a".into()), Value::Int(1))]),
            &map(vec![(Key::String("a".into()), Value::Double(1.0))])
        ));
        assert!(equals(
            &map(vec![(Key::Int(1), Value::from("a"))]),
            &map(vec![(Key::Uint(1), Value::from("a"))])
        ));
        assert!(!equals(
            &map(vec![(Key::Int(1), Value::from("a"))]),
            &map(vec![(Key::Int(2), Value::from("a"))])
        ));
        assert!(equals(&Value::optional_none(), &Value::optional_none()));
        assert!(equals(
            &Value::optional_of(Value::Int(1)),
            &Value::optional_of(Value::Int(1))
        ));
        assert!(!equals(
            &Value::optional_of(Value::Int(1)),
            &Value::optional_none()
        ));
        assert!(equals(
            &Value::type_value(cel_types::Type::list(cel_types::Type::Int)),
            &Value::type_value(cel_types::Type::list(cel_types::Type::Dyn))
        ));
        assert!(!equals(
            &Value::type_value(cel_types::Type::Int),
            &Value::type_value(cel_types::Type::Uint)
        ));
        let t1 = crate::time::parse_timestamp("2023-01-01T02:00:00+05:30");
        let t2 = crate::time::parse_timestamp("2022-12-31T20:30:00Z");
        assert!(
            matches!((t1, t2), (Some(a), Some(b)) if equals(&Value::Timestamp(a), &Value::Timestamp(b)))
        );
    }

    #[test]
    fn ordering() {
        let lt = |a: Value, b: Value| compare(&a, &b).map(|o| o == Ordering::Less);
        assert_eq!(lt(Value::Int(1), Value::Double(1.5)), Ok(true));
        assert_eq!(lt(Value::Uint(1), Value::Int(-1)), Ok(false));
        assert_eq!(lt(Value::Int(-1), Value::Uint(1)), Ok(true));
        assert_eq!(
            lt(Value::Int(i64::MAX), Value::Double(TWO_POW_63)),
            Ok(false)
        );
        assert_eq!(lt(Value::from("Z"), Value::from("a")), Ok(true));
        assert_eq!(lt(Value::from("é"), Value::from("z")), Ok(false));
        assert_eq!(lt(Value::from("ab"), Value::from("abc")), Ok(true));
        assert_eq!(lt(Value::Bool(false), Value::Bool(true)), Ok(true));
        assert_eq!(
            compare(&Value::Double(f64::NAN), &Value::Double(1.0)),
            Err(Error::new("NaN values cannot be ordered"))
        );
        assert_eq!(
            compare(&Value::Int(1), &Value::Double(f64::NAN)),
            Err(Error::new("NaN values cannot be ordered"))
        );
        assert_eq!(
            compare(&Value::Null, &Value::Int(1)),
            Err(Error::new("no such overload"))
        );
        assert_eq!(
            compare(&Value::Int(1), &Value::from("a")),
            Err(Error::new("no such overload"))
        );
        assert_eq!(
            compare(&Value::list(vec![]), &Value::list(vec![])),
            Err(Error::new("no such overload"))
        );
    }

    #[test]
    fn membership() {
        let l = vec![Value::Double(1.0)];
        assert!(in_list(&Value::Int(1), &ListValue::from(l)));
        let l2 = ListValue::from(vec![Value::Int(1), Value::Int(2)]);
        assert!(in_list(&Value::Double(2.0), &l2));
        assert!(!in_list(&Value::Double(1.5), &l2));
        let mixed = ListValue::from(vec![Value::Int(1), Value::from("ab"), Value::from("b")]);
        assert!(in_list(&Value::from("b"), &mixed));
        assert!(in_list(&Value::from("ab"), &mixed));
        assert!(!in_list(&Value::from("a"), &mixed));
        assert!(!in_list(&Value::from("1"), &mixed));
        let mut m = MapValue::new();
        m.insert(Key::Uint(1), Value::from("a"));
        assert!(in_map(&Value::Int(1), &m));
        assert!(!in_map(&Value::Null, &m));
        assert_eq!(
            in_value(&Value::Int(1), &Value::Int(1)).err(),
            Some(Error::no_such_overload())
        );
    }
}
