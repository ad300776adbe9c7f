//! Values typed by a schema rather than by protobuf: objects with a fixed set of declared
//! fields, lists with set or map semantics, and data that does not match its schema.
//!
//! Kubernetes types custom resources from their OpenAPI schemas. An object node becomes an
//! [`ObjectValue`]: its declared properties sit in slots in the order of an
//! [`ObjectLayout`] shared by every object of that schema node, so a field read is a slot
//! lookup; properties the schema does not declare (kept by
//! `x-kubernetes-preserve-unknown-fields`) are invisible to selection but still take part in
//! equality and size. At run time such an object behaves as Kubernetes' unstructured map
//! does: `type(x)` is `map`, selection by a missing field is "no such key", a property whose
//! value is `null` reads as absent.
//!
//! Lists declared `x-kubernetes-list-type: set` or `map` carry [`ListSemantics`]: their `==`
//! ignores order (sets compare their scalar elements, map lists match elements by their key
//! fields) and their `+` is a union or a merge. As in cel-go, the left operand decides.
//!
//! Data that contradicts its schema (a string where an object is declared) is kept as an
//! [`invalid_data`] marker in its place, and reading it (selection, indexing, presence test)
//! is the error Kubernetes gives when such a value is touched.
//!
//! This module knows nothing of OpenAPI: the schema crate builds layouts and values; the
//! meaning of reads, equality and `+` is written here, once, for both backends.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;

use crate::{Error, Key, KeyRef, ListValue, MapHasher, MapValue, OpaqueValue, Result, Value};

/// The slot of one field name in the first object layout a read site meets: every object of
/// one schema node shares its layout, so later reads of such objects skip the name lookup
/// (a pointer comparison instead of hashing and comparing the name). Objects of any other
/// layout are looked up by name. Shareable between threads; it keeps the layout alive.
///
/// For maps (untyped objects), it remembers where the field was in the last map: maps decoded
/// from one kind of document (the items of one list) keep their keys in one order, so the
/// next map usually has it at the same position, found with one comparison instead of a hash
/// probe.
#[derive(Debug, Default)]
pub struct SlotCache {
    seen: std::sync::OnceLock<(Arc<ObjectLayout>, Option<usize>)>,
    map_position: std::sync::atomic::AtomicU32,
}

impl SlotCache {
    /// The field `name` (whose hash is `hash`, [`MapHasher::hash_key`]) of `o`, as
    /// [`ObjectValue::get_prehashed`] reads it.
    #[inline]
    pub fn get<'o>(&self, o: &'o ObjectValue, hash: u64, name: &str) -> Option<&'o Value> {
        match self.seen.get() {
            Some((layout, slot)) if Arc::ptr_eq(layout, &o.layout) => slot.and_then(|i| o.slot(i)),
            Some(_) => o.get_prehashed(hash, name),
            None => {
                let slot = o.layout.slot_prehashed(hash, name);
                let _ = self.seen.set((o.layout.clone(), slot));
                slot.and_then(|i| o.slot(i))
            }
        }
    }

    /// The entry `name` (whose hash is `hash`) of a map, as [`MapValue::get_prehashed`] finds
    /// it, looked for first where this read found it last.
    #[inline]
    pub fn get_in_map<'m>(&self, m: &'m MapValue, hash: u64, name: &str) -> Option<&'m Value> {
        use std::sync::atomic::Ordering::Relaxed;
        let hint = self.map_position.load(Relaxed) as usize;
        let (at, v) = m.get_str_hinted(hash, name, hint)?;
        if at != hint {
            // Positions past 2^32 are simply not remembered.
            self.map_position
                .store(u32::try_from(at).unwrap_or(0), Relaxed);
        }
        Some(v)
    }

    /// The layout this cache met first and the field's slot in it (`None` when the layout
    /// has no such field), once a read has met one.
    pub fn learned(&self) -> Option<(&Arc<ObjectLayout>, Option<usize>)> {
        self.seen.get().map(|(layout, slot)| (layout, *slot))
    }
}

/// One declared field of an object type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectField {
    /// The name expressions select it by (Kubernetes escapes property names that are not
    /// CEL identifiers: `foo-bar` is `foo__dash__bar`). For a property that cannot be
    /// escaped, its data name.
    pub name: Arc<str>,
    /// The property's name in the data.
    pub data_name: Arc<str>,
}

/// The shape shared by every object of one schema node: its type's name and its declared
/// fields in slot order.
#[derive(Debug)]
pub struct ObjectLayout {
    type_name: Arc<str>,
    fields: Box<[ObjectField]>,
    /// Every name a read may use, to its slot: data names, then selection names (which win
    /// where the two collide, as Kubernetes unescapes a selected name before looking it up).
    lookup: IndexMap<Key, usize, MapHasher>,
    /// Data names to slots, for building values.
    by_data_name: HashMap<Arc<str>, usize, MapHasher>,
}

impl ObjectLayout {
    /// A layout with the given type name and fields (in slot order).
    pub fn new(type_name: impl Into<Arc<str>>, fields: Vec<ObjectField>) -> Arc<ObjectLayout> {
        let mut lookup = IndexMap::with_capacity_and_hasher(fields.len() * 2, MapHasher);
        let mut by_data_name = HashMap::with_capacity_and_hasher(fields.len(), MapHasher);
        for (slot, f) in fields.iter().enumerate() {
            lookup.insert(Key::String(f.data_name.clone()), slot);
            by_data_name.insert(f.data_name.clone(), slot);
        }
        for (slot, f) in fields.iter().enumerate() {
            lookup.insert(Key::String(f.name.clone()), slot);
        }
        Arc::new(ObjectLayout {
            type_name: type_name.into(),
            fields: fields.into_boxed_slice(),
            lookup,
            by_data_name,
        })
    }

    /// The name of the object type (`selfType3.spec`), as the checker knows it.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// The declared fields, in slot order.
    pub fn fields(&self) -> &[ObjectField] {
        &self.fields
    }

    /// The slot a read by `name` finds: the field selected as `name`, or else the field whose
    /// data name is `name`.
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.lookup.get(&KeyRef::String(name)).copied()
    }

    /// [`ObjectLayout::slot`] with the name's hash computed ahead of time by
    /// [`MapHasher::hash_key`].
    pub fn slot_prehashed(&self, hash: u64, name: &str) -> Option<usize> {
        use indexmap::map::RawEntryApiV1;
        self.lookup
            .raw_entry_v1()
            .from_hash(hash, |k| KeyRef::String(name) == k.as_ref())
            .map(|(_, slot)| *slot)
    }

    /// The slot of the property with this data name.
    pub fn slot_of_data_name(&self, data_name: &str) -> Option<usize> {
        self.by_data_name.get(data_name).copied()
    }
}

/// An object of a schema-declared type.
#[derive(Clone, Debug)]
pub struct ObjectValue {
    layout: Arc<ObjectLayout>,
    /// One per declared field: `None` when the property is absent, `Some(Value::Null)` when
    /// the data holds `null` (which reads as absent but counts in the size).
    slots: Box<[Option<Value>]>,
    /// Properties the layout does not declare, in data order: invisible to reads, part of
    /// equality and size.
    undeclared: Vec<(Arc<str>, Value)>,
    /// How many properties the data has, `null` ones included: the object's size.
    data_len: usize,
}

impl ObjectValue {
    /// An object from its slots (one per field of `layout`: `None` for an absent property,
    /// `Some(Value::Null)` for a `null` one, which reads as absent but counts in the size) and
    /// its undeclared properties.
    ///
    /// # Panics
    ///
    /// If `slots` does not have one entry per field of the layout (a bug in the caller).
    pub fn new(
        layout: Arc<ObjectLayout>,
        slots: Vec<Option<Value>>,
        undeclared: Vec<(Arc<str>, Value)>,
    ) -> ObjectValue {
        assert_eq!(
            slots.len(),
            layout.fields.len(),
            "one slot per declared field"
        );
        let present = slots.iter().filter(|s| s.is_some()).count();
        ObjectValue {
            layout,
            slots: slots.into_boxed_slice(),
            data_len: present + undeclared.len(),
            undeclared,
        }
    }

    /// The layout.
    pub fn layout(&self) -> &Arc<ObjectLayout> {
        &self.layout
    }

    /// Where [`ObjectValue::layout`]'s `Arc` is in the object, for code that compares
    /// layouts by address (generated code, which reads this word to tell objects of a known
    /// layout).
    pub const LAYOUT_OFFSET: usize = std::mem::offset_of!(ObjectValue, layout);

    /// Where the slots' boxed slice is in the object (its data pointer is one of the slice's
    /// two words: see [`ObjectValue::slots_ptr`]).
    pub const SLOTS_OFFSET: usize = std::mem::offset_of!(ObjectValue, slots);

    /// The address of the first slot: slot `i` is `i` `Option<Value>`s further. A `None`
    /// slot is an absent property, `Some(Value::Null)` a `null` one (both read as absent).
    pub fn slots_ptr(&self) -> *const Option<Value> {
        self.slots.as_ptr()
    }

    /// The value read as `object.name`, if present (it may be an [`invalid_data`] marker;
    /// see [`check_data`]).
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.layout.slot(name).and_then(|i| self.slot(i))
    }

    /// [`ObjectValue::get`] with the name's hash computed ahead of time.
    pub fn get_prehashed(&self, hash: u64, name: &str) -> Option<&Value> {
        self.layout
            .slot_prehashed(hash, name)
            .and_then(|i| self.slot(i))
    }

    /// The value in a slot, if present and not `null`.
    #[inline]
    pub fn slot(&self, i: usize) -> Option<&Value> {
        match self.slots.get(i) {
            Some(Some(Value::Null)) | Some(None) | None => None,
            Some(Some(v)) => Some(v),
        }
    }

    /// The number of properties in the data (declared or not, `null` ones included), which
    /// is what `size()` and equality count.
    pub fn len(&self) -> usize {
        self.data_len
    }

    /// Whether the data has no properties.
    pub fn is_empty(&self) -> bool {
        self.data_len == 0
    }

    /// The declared fields that are present and not `null`, with their values, in slot
    /// order.
    pub fn present(&self) -> impl Iterator<Item = (&ObjectField, &Value)> {
        self.layout
            .fields
            .iter()
            .zip(self.slots.iter())
            .filter_map(|(f, v)| match v {
                Some(Value::Null) | None => None,
                Some(v) => Some((f, v)),
            })
    }

    /// The properties the layout does not declare, in data order.
    pub fn undeclared(&self) -> &[(Arc<str>, Value)] {
        &self.undeclared
    }

    /// The entries of the data, by data name: declared fields (`null` ones included), then
    /// undeclared properties.
    pub fn data_entries(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.layout
            .fields
            .iter()
            .zip(self.slots.iter())
            .filter_map(|(f, v)| v.as_ref().map(|v| (&*f.data_name, v)))
            .chain(self.undeclared.iter().map(|(k, v)| (&**k, v)))
    }

    pub(crate) fn take_values(&mut self, out: &mut Vec<Value>) {
        out.extend(self.slots.iter_mut().filter_map(Option::take));
        out.extend(self.undeclared.drain(..).map(|(_, v)| v));
    }

    /// A present, non-`null` entry by data name: a declared field or an undeclared property.
    fn data_entry(&self, data_name: &str) -> Option<&Value> {
        match self.layout.slot_of_data_name(data_name) {
            Some(i) => self.slot(i),
            None => self
                .undeclared
                .iter()
                .find(|(k, _)| &**k == data_name)
                .map(|(_, v)| v),
        }
    }
}

/// Pairs of values whose equality decides the equality of two objects, or the answer when
/// the objects alone decide it. Undeclared properties are compared only when both objects
/// have them (as Kubernetes' unstructured equality does); declared fields must be present in
/// both or in neither.
pub(crate) fn object_equality_pairs<'a>(
    a: &'a ObjectValue,
    b: &'a ObjectValue,
    out: &mut Vec<(&'a Value, &'a Value)>,
) -> bool {
    if a.data_len != b.data_len {
        return false;
    }
    if Arc::ptr_eq(&a.layout, &b.layout) {
        for i in 0..a.slots.len() {
            match (a.slot(i), b.slot(i)) {
                (None, None) => {}
                (Some(x), Some(y)) => out.push((x, y)),
                _ => return false,
            }
        }
    } else {
        // Kubernetes walks the left object's data: each declared property must read the same
        // on both sides (a `null` one reads as absent).
        for (f, slot) in a.layout.fields.iter().zip(a.slots.iter()) {
            let Some(x) = slot else { continue };
            match (x, b.data_entry(&f.data_name)) {
                (Value::Null, None) => {}
                (Value::Null, Some(_)) | (_, None) => return false,
                (x, Some(y)) => out.push((x, y)),
            }
        }
    }
    for (k, x) in &a.undeclared {
        if let Some(y) = b.undeclared.iter().find(|(l, _)| l == k).map(|(_, y)| y) {
            out.push((x, y));
        }
    }
    true
}

/// Pairs deciding the equality of an object and a map (either order): the same number of
/// entries, and every present field found in the map under its data name.
pub(crate) fn object_map_equality_pairs<'a>(
    a: &'a ObjectValue,
    m: &'a MapValue,
    out: &mut Vec<(&'a Value, &'a Value)>,
) -> bool {
    if a.data_len != m.len() {
        return false;
    }
    for (f, x) in a.present() {
        match m.get_str(&f.data_name) {
            Some(y) => out.push((x, y)),
            None => return false,
        }
    }
    for (k, x) in &a.undeclared {
        if let Some(y) = m.get_str(k) {
            out.push((x, y));
        }
    }
    true
}

/// How a list built from schema-typed data treats `==` and `+`
/// (`x-kubernetes-list-type`). Lists without it are atomic: ordered equality, concatenation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListSemantics {
    /// `set`: `==` ignores order and compares scalar elements by type and value (`1` and
    /// `1.0` are different members); `+` appends the right elements not already present.
    Set,
    /// `map`: elements are objects identified by the values of their key fields (selection
    /// names); `==` matches elements by key, ignoring order, and compares matched elements;
    /// `+` replaces left elements by right elements with the same key and appends the others.
    Map {
        /// The key fields, by the names they are selected with.
        keys: Box<[Arc<str>]>,
    },
}

/// An element's identity in a set or among a map list's keys: its type and value, as Go
/// compares the raw values Kubernetes keeps.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Identity {
    Absent,
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    /// A double's bits, with `-0.0` as `0.0`.
    Double(u64),
    /// NaN is never equal to anything, so each gets a key of its own.
    Nan(usize),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    Timestamp(i64, u32),
    Duration(i64),
    /// Other values (opaque library values), by their literal text.
    Text(String),
}

/// "listSet operations are only supported on lists of scalar values".
fn set_of_non_scalars() -> Error {
    Error::new("listSet operations are only supported on lists of scalar values")
}

/// The identity of a value; `Err` for aggregates, which sets cannot hold.
fn identity(v: &Value, nan_counter: &mut usize) -> Result<Identity> {
    Ok(match v {
        Value::Null => Identity::Null,
        Value::Bool(b) => Identity::Bool(*b),
        Value::Int(i) => Identity::Int(*i),
        Value::Uint(u) => Identity::Uint(*u),
        Value::Double(d) if d.is_nan() => {
            *nan_counter += 1;
            Identity::Nan(*nan_counter)
        }
        Value::Double(d) => Identity::Double(if *d == 0.0 { 0 } else { d.to_bits() }),
        Value::String(s) => Identity::String(s.clone()),
        Value::Bytes(b) => Identity::Bytes(b.clone()),
        Value::Timestamp(t) => Identity::Timestamp(t.seconds, t.nanos),
        Value::Duration(d) => Identity::Duration(d.nanos),
        Value::List(_) | Value::Map(_) | Value::Object(_) | Value::Message(_) => {
            return Err(set_of_non_scalars());
        }
        other => Identity::Text(crate::format::to_cel_literal(other)),
    })
}

/// The key of a map list's element: the identities of its key fields (absent ones too).
fn element_key(v: &Value, keys: &[Arc<str>], nan_counter: &mut usize) -> Vec<Identity> {
    keys.iter()
        .map(|k| {
            let field = match v {
                Value::Object(o) => o.get(k),
                Value::Map(m) => m.get_str(k),
                _ => None,
            };
            match field {
                None | Some(Value::Null) => Identity::Absent,
                Some(f) => identity(f, nan_counter)
                    .unwrap_or_else(|_| Identity::Text(crate::format::to_cel_literal(f))),
            }
        })
        .collect()
}

/// `set == other` for a set list on the left: `Ok(answer)`, or the error for elements that
/// are not scalars.
pub fn set_equals(set: &ListValue, other: &ListValue) -> Result<bool> {
    if set.len() != other.len() {
        return Ok(false);
    }
    let mut nans = 0;
    let mut members = hashbrown::HashSet::with_capacity(set.len());
    for e in set.iter() {
        members.insert(identity(e, &mut nans)?);
    }
    let mut seen = hashbrown::HashSet::with_capacity(members.len());
    for e in other.iter() {
        let k = identity(e, &mut nans)?;
        if !members.contains(&k) {
            return Ok(false);
        }
        seen.insert(k);
    }
    Ok(seen.len() == members.len())
}

/// The element pairs that decide `list == other` for a map list on the left (matched by
/// key), or `None` when the keys alone show the lists differ.
pub(crate) fn map_list_pairs<'a>(
    list: &'a ListValue,
    keys: &[Arc<str>],
    other: &'a ListValue,
) -> Option<Vec<(&'a Value, &'a Value)>> {
    if list.len() != other.len() {
        return None;
    }
    let mut nans = 0;
    let by_key: hashbrown::HashMap<Vec<Identity>, &Value> = list
        .iter()
        .map(|e| (element_key(e, keys, &mut nans), e))
        .collect();
    let mut seen = hashbrown::HashSet::with_capacity(by_key.len());
    let mut pairs = Vec::with_capacity(other.len());
    for e in other.iter() {
        let k = element_key(e, keys, &mut nans);
        let mine = by_key.get(&k)?;
        pairs.push((*mine, e));
        seen.insert(k);
    }
    (seen.len() == by_key.len()).then_some(pairs)
}

/// `set + other` for a set list on the left: the left elements in order, then the right
/// elements not yet present. The result is a set.
pub fn set_union(set: &ListValue, other: &ListValue) -> Result<ListValue> {
    let mut nans = 0;
    let mut members = hashbrown::HashSet::with_capacity(set.len() + other.len());
    for e in set.iter() {
        members.insert(identity(e, &mut nans)?);
    }
    let mut items = set.items.clone();
    for e in other.iter() {
        if members.insert(identity(e, &mut nans)?) {
            items.push(e.clone());
        }
    }
    crate::limits::check_elements("_+_", items.len() as u128)?;
    Ok(ListValue {
        items,
        semantics: set.semantics.clone(),
    })
}

/// `list + other` for a map list on the left: left elements keep their positions but are
/// replaced by right elements with the same key; right elements with new keys are appended
/// in order. The result is a map list.
pub fn map_list_merge(list: &ListValue, keys: &[Arc<str>], other: &ListValue) -> Result<ListValue> {
    let mut nans = 0;
    let mut items = list.items.clone();
    let position: hashbrown::HashMap<Vec<Identity>, usize> = items
        .iter()
        .enumerate()
        .map(|(i, e)| (element_key(e, keys, &mut nans), i))
        .collect();
    for e in other.iter() {
        match position.get(&element_key(e, keys, &mut nans)) {
            Some(&i) => items[i] = e.clone(),
            None => items.push(e.clone()),
        }
    }
    crate::limits::check_elements("_+_", items.len() as u128)?;
    Ok(ListValue {
        items,
        semantics: list.semantics.clone(),
    })
}

/// Data that does not match its schema, kept where the value would be. Reading it is an
/// error with Kubernetes' message ("invalid data, expected a map for the provided schema
/// with type=object").
#[derive(Debug)]
pub struct InvalidData {
    message: Arc<str>,
}

impl InvalidData {
    /// The error reading the value gives.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl OpaqueValue for InvalidData {
    fn type_name(&self) -> &str {
        "invalid data"
    }
    fn equals(&self, _other: &dyn OpaqueValue) -> bool {
        false
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl fmt::Display for InvalidData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A marker for data that does not match its schema; reading it fails with `message`.
pub fn invalid_data(message: impl Into<Arc<str>>) -> Value {
    Value::Opaque(Arc::new(InvalidData {
        message: message.into(),
    }))
}

/// The error of reading `v` if it marks invalid data ([`invalid_data`]).
#[inline]
pub fn check_data(v: &Value) -> Result<()> {
    match v {
        Value::Opaque(o) => match o.as_any().downcast_ref::<InvalidData>() {
            Some(bad) => Err(Error::new(bad.message.to_string())),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_finds_map_entries_wherever_they_are() {
        let map = |entries: &[(Key, i64)]| {
            let mut m = MapValue::new();
            for (k, v) in entries {
                m.insert(k.clone(), Value::Int(*v));
            }
            m
        };
        let s = |k: &str| Key::String(k.into());
        let maps = [
            map(&[(s("a"), 1), (s("b"), 2), (s("c"), 3)]),
            map(&[(s("a"), 4), (s("b"), 5), (s("c"), 6)]),
            map(&[(s("c"), 7), (s("b"), 8), (s("a"), 9)]),
            map(&[(Key::Int(0), 10), (s("b"), 11)]),
            map(&[(s("bb"), 12), (s("b"), 13)]),
            map(&[(s("x"), 14)]),
            map(&[]),
            map(&[(s("a"), 15), (s("b"), 16), (s("c"), 17)]),
        ];
        for name in ["a", "b", "c", "x", "y"] {
            let cache = SlotCache::default();
            let hash = MapHasher::hash_key(KeyRef::String(name));
            // Each map twice, so that some reads follow a read of the same order and some a
            // read of another (or a miss).
            for m in maps.iter().flat_map(|m| [m, m]) {
                assert_eq!(
                    cache.get_in_map(m, hash, name),
                    m.get_prehashed(hash, KeyRef::String(name)),
                    "{name} in {m:?}"
                );
            }
        }
    }

    fn layout() -> Arc<ObjectLayout> {
        ObjectLayout::new(
            "T",
            vec![
                ObjectField {
                    name: "a".into(),
                    data_name: "a".into(),
                },
                ObjectField {
                    name: "b__dash__c".into(),
                    data_name: "b-c".into(),
                },
            ],
        )
    }

    fn obj(a: Option<i64>, bc: Option<i64>) -> Value {
        Value::Object(Arc::new(ObjectValue::new(
            layout(),
            vec![a.map(Value::Int), bc.map(Value::Int)],
            vec![],
        )))
    }

    #[test]
    fn a_slot_cache_reads_what_a_lookup_reads_for_any_layout() {
        let field = |n: &str| ObjectField {
            name: n.into(),
            data_name: n.into(),
        };
        // Two layouts with `x` in different slots, each with its own objects.
        let first = ObjectLayout::new("A", vec![field("x"), field("y")]);
        let second = ObjectLayout::new("B", vec![field("y"), field("x")]);
        let a = ObjectValue::new(first.clone(), vec![Some(Value::Int(1)), None], vec![]);
        let a2 = ObjectValue::new(first, vec![None, Some(Value::Int(5))], vec![]);
        let b = ObjectValue::new(
            second,
            vec![Some(Value::Int(2)), Some(Value::Int(3))],
            vec![],
        );
        let hash = MapHasher::hash_key(KeyRef::String("x"));
        let cache = SlotCache::default();
        // The first layout met is remembered; the others are looked up by name.
        for (o, want) in [
            (&a, Some(1)),
            (&b, Some(3)),
            (&a2, None),
            (&b, Some(3)),
            (&a, Some(1)),
        ] {
            let got = cache.get(o, hash, "x").cloned();
            assert_eq!(got, want.map(Value::Int));
            assert_eq!(got.as_ref(), o.get("x"));
        }
        // A name no layout declares.
        let missing = SlotCache::default();
        assert!(
            missing
                .get(&a, MapHasher::hash_key(KeyRef::String("z")), "z")
                .is_none()
        );
        assert!(
            missing
                .get(&a2, MapHasher::hash_key(KeyRef::String("z")), "z")
                .is_none()
        );
    }

    #[test]
    fn reads_by_selection_name_and_data_name() {
        let Value::Object(o) = &obj(Some(1), Some(2)) else {
            unreachable!()
        };
        assert_eq!(o.get("a"), Some(&Value::Int(1)));
        assert_eq!(o.get("b__dash__c"), Some(&Value::Int(2)));
        assert_eq!(o.get("b-c"), Some(&Value::Int(2)));
        assert_eq!(o.get("c"), None);
        let h = MapHasher::hash_key(KeyRef::String("b__dash__c"));
        assert_eq!(o.get_prehashed(h, "b__dash__c"), Some(&Value::Int(2)));
        assert_eq!(o.len(), 2);
    }

    #[test]
    fn equality_counts_nulls_and_undeclared_properties() {
        let l = layout();
        let same_layout =
            |a, b, extra| Value::Object(Arc::new(ObjectValue::new(l.clone(), vec![a, b], extra)));
        let one = || Some(Value::Int(1));
        let x = same_layout(one(), None, vec![("u".into(), Value::Int(5))]);
        let y = same_layout(one(), None, vec![("u".into(), Value::Int(6))]);
        let z = same_layout(one(), None, vec![("u".into(), Value::Int(5))]);
        assert_ne!(x, y);
        assert_eq!(x, z);
        // A null property reads as absent but counts in the size.
        let with_null = same_layout(one(), Some(Value::Null), vec![]);
        let without = same_layout(one(), None, vec![]);
        assert_ne!(with_null, without);
        let Value::Object(o) = &with_null else {
            unreachable!()
        };
        assert_eq!(o.get("b__dash__c"), None);
        // Undeclared properties present on one side only are not compared, as in Kubernetes.
        let p = same_layout(None, None, vec![("u".into(), Value::Int(1))]);
        let q = same_layout(None, None, vec![("v".into(), Value::Int(1))]);
        assert_eq!(p, q);
    }

    fn list(items: Vec<Value>, semantics: Option<ListSemantics>) -> ListValue {
        ListValue {
            items,
            semantics: semantics.map(Arc::new),
        }
    }

    #[test]
    fn sets_ignore_order_and_keep_types_apart() {
        let s = list(
            vec![Value::from("a"), Value::from("b")],
            Some(ListSemantics::Set),
        );
        let o = list(vec![Value::from("b"), Value::from("a")], None);
        assert!(set_equals(&s, &o).unwrap());
        let ints = list(vec![Value::Int(1)], Some(ListSemantics::Set));
        assert!(!set_equals(&ints, &list(vec![Value::Double(1.0)], None)).unwrap());
        let nested = list(vec![Value::list(vec![])], Some(ListSemantics::Set));
        assert!(set_equals(&nested, &nested.clone()).is_err());
        let u = set_union(&s, &list(vec![Value::from("c"), Value::from("a")], None)).unwrap();
        assert_eq!(
            u.items,
            vec![Value::from("a"), Value::from("b"), Value::from("c")]
        );
        assert_eq!(u.semantics.as_deref(), Some(&ListSemantics::Set));
    }

    #[test]
    fn map_lists_merge_by_key() {
        let e = |k: &str, v: i64| {
            Value::map([
                (Key::String("k".into()), Value::from(k)),
                (Key::String("v".into()), Value::Int(v)),
            ])
        };
        let keys: Box<[Arc<str>]> = vec![Arc::from("k")].into_boxed_slice();
        let sem = ListSemantics::Map { keys: keys.clone() };
        let l = list(vec![e("a", 1), e("b", 2)], Some(sem));
        let r = list(vec![e("c", 3), e("a", 9)], None);
        let m = map_list_merge(&l, &keys, &r).unwrap();
        assert_eq!(m.items, vec![e("a", 9), e("b", 2), e("c", 3)]);
        let swapped = list(vec![e("b", 2), e("a", 1)], None);
        let pairs = map_list_pairs(&l, &keys, &swapped).unwrap();
        assert_eq!(pairs.len(), 2);
        assert!(map_list_pairs(&l, &keys, &list(vec![e("a", 1), e("a", 1)], None)).is_none());
    }

    #[test]
    fn invalid_data_fails_when_read() {
        let bad = invalid_data("invalid data, expected int, got string");
        assert_eq!(
            check_data(&bad).unwrap_err().message,
            "invalid data, expected int, got string"
        );
        assert!(check_data(&Value::Int(1)).is_ok());
    }
}
