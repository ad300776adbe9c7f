//! The operations the interpreter performs on values, public so that generated code calls
//! the very same functions: field selection, presence tests, indexing, optional access,
//! list and map construction, in-place accumulator updates, call dispatch and call costs.

use cel_types::overloads as ov;
use std::sync::Arc;

use cel_runtime::object::check_data;
use cel_runtime::{Error, FunctionRegistry, MapValue, Result, Value};

use crate::plan::{CallCost, map_key};

fn std_registry() -> &'static FunctionRegistry {
    static REG: std::sync::OnceLock<FunctionRegistry> = std::sync::OnceLock::new();
    REG.get_or_init(FunctionRegistry::standard)
}

fn std_call(id: &str, args: &[Value]) -> Result<Value> {
    match std_registry().get(id) {
        Some(imp) => imp.call(args),
        None => Err(Error::internal(format!("missing built-in {id}"))),
    }
}

fn no_such_overload(id: i64) -> Error {
    Error::no_such_overload().at(id)
}

/// Appends a list literal's element; an optional element (`?e`) is added only when present,
/// and must be an optional.
pub fn list_element(items: &mut Vec<Value>, v: Value, optional: bool, id: i64) -> Result<()> {
    if !optional {
        items.push(v);
        return Ok(());
    }
    match &v {
        Value::Optional(Some(inner)) => items.push((**inner).clone()),
        Value::Optional(None) => {}
        other => {
            return Err(Error::new(format!(
                "cannot initialize optional list element from non-optional value {}",
                cel_runtime::format::to_cel_literal(other)
            ))
            .at(id));
        }
    }
    Ok(())
}

/// Adds a map literal's entry; an optional entry (`?k: v`) is added only when present.
/// cel-go keeps the last of repeated keys rather than failing (see ARCHITECTURE.md, "Where we
/// follow cel-go rather than the spec").
pub fn map_entry(m: &mut MapValue, k: &Value, v: Value, optional: bool, id: i64) -> Result<()> {
    let key = map_key(k).map_err(|e| e.at(id))?;
    let v = if optional {
        match &v {
            Value::Optional(Some(inner)) => (**inner).clone(),
            Value::Optional(None) => return Ok(()),
            other => {
                return Err(Error::new(format!(
                    "cannot initialize optional entry '{}' from non-optional value {}",
                    key,
                    cel_runtime::format::to_cel_literal(other)
                ))
                .at(id));
            }
        }
    } else {
        v
    };
    m.insert(key, v);
    Ok(())
}

/// `cel.@mapInsert` applied in place to a uniquely owned accumulator.
pub fn map_insert(
    id: i64,
    acc: Result<Value>,
    key: Option<Value>,
    value: Result<Value>,
) -> Result<Value> {
    let mut acc = acc?;
    let Value::Map(map) = &mut acc else {
        return Err(no_such_overload(id));
    };
    let value = value?;
    let m = Arc::make_mut(map);
    match key {
        Some(k) => cel_runtime::compare::map_insert_new(m, &k, value).map_err(|e| e.at(id))?,
        None => match &value {
            Value::Map(update) => {
                for (k, v) in update.iter() {
                    cel_runtime::compare::map_insert_new(m, &k.to_value(), v.clone())
                        .map_err(|e| e.at(id))?;
                }
            }
            _ => return Err(no_such_overload(id)),
        },
    }
    Ok(acc)
}

/// cel-go's `actualSize`: the size of values with one ([`Value::sizer_size`]: code points,
/// bytes, entries, a library type's size), a present optional's value's size, 1 for anything
/// else.
pub fn actual_size(v: &Value) -> u64 {
    match v {
        Value::Optional(Some(v)) => actual_size(v),
        other => other.sizer_size().unwrap_or(1),
    }
}

/// A stand-in for a result not built yet, whose size is all a cost hook may look at: what
/// [`crate::CallCost::precharge`] gives the hooks in place of the result.
#[derive(Debug)]
struct PredictedResult(std::sync::atomic::AtomicU64);

/// A [`PredictedResult`] of `size`. Each thread reuses one, so predicting allocates nothing.
pub(crate) fn predicted_result(size: u64) -> Value {
    std::thread_local! {
        static PREDICTED: Arc<PredictedResult> =
            Arc::new(PredictedResult(std::sync::atomic::AtomicU64::new(0)));
    }
    PREDICTED.with(|p| {
        p.0.store(size, std::sync::atomic::Ordering::Relaxed);
        Value::Opaque(p.clone())
    })
}

impl cel_runtime::OpaqueValue for PredictedResult {
    fn type_name(&self) -> &str {
        "celerity.PredictedResult"
    }

    fn equals(&self, _other: &dyn cel_runtime::OpaqueValue) -> bool {
        false
    }

    fn size(&self) -> Option<u64> {
        Some(self.0.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Whether [`actual_size`] is 0, without counting code points.
pub fn actual_size_is_zero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::Optional(Some(v)) => actual_size_is_zero(v),
        Value::Opaque(o) => o.size() == Some(0),
        _ => false,
    }
}

/// The cost of a call whose arguments and result are known: a hook's answer, or the
/// built-in table's.
#[inline]
pub fn call_cost(cost: &CallCost, args: &[Value], result: &Result<Value>) -> u64 {
    if cost.hooks.is_empty()
        && let Some(fixed) = cost.fixed
    {
        return fixed;
    }
    call_cost_slow(cost, args, result)
}

pub(crate) fn call_cost_slow(cost: &CallCost, args: &[Value], result: &Result<Value>) -> u64 {
    // Hooks scoped to opaque values are skipped for anything else (they would decline).
    let opaque_first = matches!(args.first(), Some(Value::Opaque(_)));
    let mut hooks = cost
        .hooks
        .iter()
        .filter(|(_, opaque_only)| opaque_first || !opaque_only)
        .peekable();
    if hooks.peek().is_some() {
        let res = match result {
            Ok(v) => v.clone(),
            Err(_) => Value::Null,
        };
        for (h, _) in hooks {
            if let Some(c) = h(args, &res) {
                return c;
            }
        }
    }
    cost.formula
        .eval(|i| args.get(i).map(actual_size).unwrap_or(1))
}

/// Adds a field initialiser of a message literal: `f: v`, or `?f: o`, which sets `f` from a
/// present optional and leaves it out for `none`.
pub fn struct_field(
    fields: &mut Vec<(Arc<str>, Value)>,
    name: &Arc<str>,
    optional: bool,
    v: Value,
) -> Result<()> {
    if !optional {
        fields.push((name.clone(), v));
        return Ok(());
    }
    match &v {
        Value::Optional(Some(inner)) => fields.push((name.clone(), (**inner).clone())),
        Value::Optional(None) => {}
        _ => return Err(Error::no_such_overload()),
    }
    Ok(())
}

/// `T{...}` from its fields ([`struct_field`]). `message` is the type's descriptor for
/// messages other than the well-known types built as plain values.
pub fn make_struct(
    type_name: &str,
    message: Option<&cel_runtime::proto::MessageDescriptor>,
    builds_map: bool,
    fields: Vec<(Arc<str>, Value)>,
) -> Result<Value> {
    match message {
        Some(d) => cel_runtime::proto::construct(d, fields),
        None if builds_map => {
            let mut m = cel_runtime::MapValue::with_capacity(fields.len());
            for (name, v) in fields {
                m.insert(cel_runtime::Key::String(name), v);
            }
            Ok(Value::Map(Arc::new(m)))
        }
        None => crate::wellknown::construct(type_name, fields),
    }
}

/// A value read out of schema-typed data, which may mark data that contradicts its schema
/// ([`cel_runtime::object::invalid_data`]): reading such a value is its error.
#[inline]
fn read(v: &Value) -> Result<Value> {
    check_data(v)?;
    Ok(v.clone())
}

/// `v.field`.
pub fn select(v: &Value, field: &str) -> Result<Value> {
    match v {
        Value::Map(m) => match m.get_str(field) {
            Some(x) => read(x),
            None => Err(Error::no_such_key(field)),
        },
        Value::Object(o) => match o.get(field) {
            Some(x) => read(x),
            None => Err(Error::no_such_key(field)),
        },
        Value::Message(m) => cel_runtime::proto::select(m, field),
        Value::Opaque(o) if let Some(m) = o.as_map() => match m.find(field) {
            Some(entry) => entry,
            None => Err(Error::no_such_key(field)),
        },
        Value::Optional(None) => Ok(Value::Optional(None)),
        // Inside an optional chain a missing entry is `none`, but a value that has no
        // fields at all is an error.
        Value::Optional(Some(inner)) => match &**inner {
            Value::Map(_) | Value::Object(_) | Value::Optional(_) | Value::Message(_) => {
                opt_select(inner, field)
            }
            Value::Opaque(o) if o.as_map().is_some() => opt_select(inner, field),
            _ => Err(Error::no_such_key(field)),
        },
        other => Err(Error::new(format!(
            "type '{}' does not support field selection",
            other.type_name()
        ))),
    }
}

/// `v.field` where [`select`] would return a clone of a map entry: the entry itself, so that
/// generated code can read it in place, found with the field's hash computed ahead of time
/// ([`cel_runtime::MapHasher::hash_key`]). `None` means "call [`select`]".
#[inline]
pub fn select_ref<'v>(v: &'v Value, field: &str, hash: u64) -> Option<&'v Value> {
    let found = match v {
        Value::Map(m) => m.get_prehashed(hash, cel_runtime::KeyRef::String(field)),
        Value::Object(o) => o.get_prehashed(hash, field),
        _ => None,
    }?;
    // Invalid data is an error: leave it to `select`.
    (!matches!(found, Value::Opaque(_))).then_some(found)
}

/// [`select_ref`] remembering, in `slots`, where the field is in the objects and maps this
/// read meets (native code keeps one per field read).
#[inline]
pub fn select_ref_cached<'v>(
    v: &'v Value,
    field: &str,
    hash: u64,
    slots: &cel_runtime::object::SlotCache,
) -> Option<&'v Value> {
    let found = match v {
        Value::Object(o) => slots.get(o, hash, field)?,
        Value::Map(m) => slots.get_in_map(m, hash, field)?,
        _ => return select_ref(v, field, hash),
    };
    (!matches!(found, Value::Opaque(_))).then_some(found)
}

/// `has(v.field)`.
pub fn has_field(v: &Value, field: &str) -> Result<Value> {
    match v {
        Value::Map(m) => match m.get_str(field) {
            Some(x) => check_data(x).map(|()| Value::Bool(true)),
            None => Ok(Value::Bool(false)),
        },
        Value::Object(o) => match o.get(field) {
            Some(x) => check_data(x).map(|()| Value::Bool(true)),
            None => Ok(Value::Bool(false)),
        },
        Value::Message(m) => cel_runtime::proto::has(m, field).map(Value::Bool),
        // Testing an entry computes it, and a failure to compute it is the test's error
        // (cel-go's `Find` on a `traits.Mapper`).
        Value::Opaque(o) if let Some(m) = o.as_map() => match m.find(field) {
            Some(entry) => entry.map(|_| Value::Bool(true)),
            None => Ok(Value::Bool(false)),
        },
        Value::Optional(None) => Ok(Value::Bool(false)),
        Value::Optional(Some(inner)) => has_field(inner, field),
        // cel-go answers false rather than failing for values without fields.
        _ => Ok(Value::Bool(false)),
    }
}

/// Whether a field or index step charges its qualifier (1), once its operand resolved to
/// `operand` and the step gave `result` (`None` when the step failed).
///
/// cel-go applies the qualifiers of an attribute one after the other; once one of them is
/// optional (`.?f`, `[?k]`), or when the attribute's root value is itself an optional, every
/// later qualifier is applied "if present", and cel-go's cost observer sees such a
/// qualification only when it found something (`evalWatch*Qual.QualifyIfPresent`,
/// `applyQualifiers` in `interpreter/attributes.go`). So in that mode a step is charged only
/// when its result is a present optional: `{'a': 1}.?b` costs the map and the attribute, not
/// the absent field, and neither does anything after it in the chain. Every other step is
/// charged, successful or not. Here a step is in that mode when it is optional itself or its
/// operand is an optional value (what the earlier optional steps of the chain, or an optional
/// root, produce).
#[inline]
pub fn qualifier_charged(optional_step: bool, operand: &Value, result: Option<&Value>) -> bool {
    if optional_step || matches!(operand, Value::Optional(_)) {
        matches!(result, Some(Value::Optional(Some(_))))
    } else {
        true
    }
}

/// `v.?field`.
pub fn opt_select(v: &Value, field: &str) -> Result<Value> {
    match v {
        Value::Map(m) => Ok(match m.get_str(field) {
            Some(x) => Value::optional_of(read(x)?),
            None => Value::Optional(None),
        }),
        Value::Object(o) => Ok(match o.get(field) {
            Some(x) => Value::optional_of(read(x)?),
            None => Value::Optional(None),
        }),
        Value::Message(m) => cel_runtime::proto::opt_select(m, field),
        Value::Opaque(o) if let Some(m) = o.as_map() => match m.find(field) {
            Some(entry) => entry.map(Value::optional_of),
            None => Ok(Value::Optional(None)),
        },
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => opt_select(inner, field),
        _ => Ok(Value::Optional(None)),
    }
}

/// `v[i]`.
pub fn index_value(v: &Value, i: &Value) -> Result<Value> {
    match v {
        Value::List(_) => std_call(ov::INDEX_LIST, &[v.clone(), i.clone()]),
        Value::Map(_) => std_call(ov::INDEX_MAP, &[v.clone(), i.clone()]),
        Value::Object(_) => std_call(ov::INDEX_MAP, &[v.clone(), i.clone()]),
        Value::Opaque(o) if let Some(m) = o.as_map() => match i {
            Value::String(key) => match m.find(key) {
                Some(entry) => entry,
                None => Err(Error::no_such_key(key)),
            },
            _ => Err(Error::no_such_overload()),
        },
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => opt_index(inner, i),
        _ => Err(Error::no_such_overload()),
    }
}

/// `v[?i]`: the element or entry if present, else `optional.none()`.
pub fn opt_index(v: &Value, i: &Value) -> Result<Value> {
    match v {
        Value::List(items) => {
            let idx = match i {
                Value::Int(n) => Some(*n),
                Value::Uint(u) => i64::try_from(*u).ok(),
                Value::Double(d) if d.fract() == 0.0 && d.is_finite() => Some(*d as i64),
                _ => return Err(Error::no_such_overload()),
            };
            match idx
                .and_then(|n| usize::try_from(n).ok())
                .and_then(|n| items.get(n))
            {
                Some(x) => Ok(Value::optional_of(read(x)?)),
                None => Ok(Value::Optional(None)),
            }
        }
        Value::Map(m) => match m.get(i) {
            Ok(Some(x)) => Ok(Value::optional_of(read(x)?)),
            Ok(None) => Ok(Value::Optional(None)),
            Err(()) => Err(Error::new("unsupported key type")),
        },
        Value::Object(o) => match i {
            Value::String(k) => Ok(match o.get(k) {
                Some(x) => Value::optional_of(read(x)?),
                None => Value::Optional(None),
            }),
            _ => Err(Error::new("unsupported key type")),
        },
        Value::Opaque(o) if o.as_map().is_some() => match i {
            Value::String(key) => opt_select(v, key),
            _ => Err(Error::no_such_overload()),
        },
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => opt_index(inner, i),
        _ => Err(Error::no_such_overload()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualifiers_in_optional_chains_are_charged_when_found() {
        let found = Value::optional_of(Value::Int(1));
        let none = Value::optional_none();
        let map = Value::Map(Arc::new(MapValue::new()));
        // Plain steps on plain operands: always, even when they fail.
        assert!(qualifier_charged(false, &map, None));
        assert!(qualifier_charged(false, &map, Some(&Value::Int(1))));
        // Optional steps: only when something was found.
        assert!(qualifier_charged(true, &map, Some(&found)));
        assert!(!qualifier_charged(true, &map, Some(&none)));
        assert!(!qualifier_charged(true, &map, None));
        // Plain steps after an optional one (the operand is an optional).
        assert!(qualifier_charged(false, &found, Some(&found)));
        assert!(!qualifier_charged(false, &none, Some(&none)));
        assert!(!qualifier_charged(false, &found, None));
    }

    /// A map whose entry `ok` is 1 and whose entry `bad` fails to compute.
    #[derive(Debug)]
    struct Computed;

    impl cel_runtime::OpaqueValue for Computed {
        fn type_name(&self) -> &str {
            "test.computed"
        }
        fn equals(&self, _other: &dyn cel_runtime::OpaqueValue) -> bool {
            false
        }
        fn as_map(&self) -> Option<&dyn cel_runtime::OpaqueMap> {
            Some(self)
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    impl cel_runtime::OpaqueMap for Computed {
        fn find(&self, key: &str) -> Option<Result<Value>> {
            match key {
                "ok" => Some(Ok(Value::Int(1))),
                "bad" => Some(Err(Error::new("cannot compute bad"))),
                _ => None,
            }
        }
    }

    #[test]
    fn opaque_maps_answer_reads_tests_and_indexes() {
        let m = Value::Opaque(Arc::new(Computed));
        let text = |r: Result<Value>| match r {
            Ok(v) => format!("{v:?}"),
            Err(e) => e.message,
        };
        let key = |k: &str| Value::string(k);
        assert_eq!(text(select(&m, "ok")), "Int(1)");
        assert_eq!(text(select(&m, "bad")), "cannot compute bad");
        assert_eq!(text(select(&m, "nope")), "no such key: nope");
        assert_eq!(text(has_field(&m, "ok")), "Bool(true)");
        assert_eq!(text(has_field(&m, "bad")), "cannot compute bad");
        assert_eq!(text(has_field(&m, "nope")), "Bool(false)");
        assert_eq!(text(opt_select(&m, "ok")), "Optional(Some(Int(1)))");
        assert_eq!(text(opt_select(&m, "bad")), "cannot compute bad");
        assert_eq!(text(opt_select(&m, "nope")), "Optional(None)");
        assert_eq!(text(index_value(&m, &key("ok"))), "Int(1)");
        assert_eq!(text(index_value(&m, &key("nope"))), "no such key: nope");
        assert_eq!(text(index_value(&m, &Value::Int(1))), "no such overload");
        assert_eq!(text(opt_index(&m, &key("ok"))), "Optional(Some(Int(1)))");
        assert_eq!(text(opt_index(&m, &key("nope"))), "Optional(None)");
        // Inside an optional chain.
        let some = Value::optional_of(m);
        assert_eq!(text(select(&some, "ok")), "Optional(Some(Int(1)))");
        assert_eq!(text(select(&some, "nope")), "Optional(None)");
    }

    #[test]
    fn size_is_zero_agrees_with_size() {
        let values = [
            Value::string(""),
            Value::string("é"),
            Value::bytes(&[][..]),
            Value::bytes(&[0u8][..]),
            Value::list(vec![]),
            Value::list(vec![Value::Null]),
            Value::Map(Arc::new(MapValue::new())),
            Value::Optional(None),
            Value::optional_of(Value::string("")),
            Value::optional_of(Value::Int(0)),
            Value::Int(0),
            Value::Null,
        ];
        for v in &values {
            assert_eq!(actual_size_is_zero(v), actual_size(v) == 0, "{v:?}");
        }
    }
}
