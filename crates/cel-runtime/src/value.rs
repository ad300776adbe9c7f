//! The one value type, [`Value`], and its parts.
//!
//! Aggregates (strings, bytes, lists, maps) are shared behind [`Arc`], so cloning a value is
//! at most a reference-count increment. Lists and maps drop their contents iteratively, so a
//! deeply nested value cannot overflow the stack when it is freed.

use std::any::Any;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, OnceLock};

use cel_types::Type;
use indexmap::{Equivalent, IndexMap};

/// A CEL value.
///
/// The layout is fixed (`repr(u8)`: a one-byte tag, then the variant's fields laid out as a
/// C struct) so that generated code can test a value's kind and read the scalar payloads
/// (`Bool` at offset 1, `Int`, `Uint` and `Double` at offset 8) without calling back into
/// Rust. The tags are the [`Value::TAG_*`](Value::TAG_INT) constants.
#[derive(Clone)]
#[repr(u8)]
pub enum Value {
    /// `null`.
    Null = 0,
    /// `bool`.
    Bool(bool) = 1,
    /// `int`: a signed 64-bit integer.
    Int(i64) = 2,
    /// `uint`: an unsigned 64-bit integer.
    Uint(u64) = 3,
    /// `double`.
    Double(f64) = 4,
    /// `string`: valid UTF-8.
    String(Arc<str>) = 5,
    /// `bytes`.
    Bytes(Arc<[u8]>) = 6,
    /// `list`.
    List(Arc<ListValue>) = 7,
    /// `map`.
    Map(Arc<MapValue>) = 8,
    /// `google.protobuf.Timestamp`.
    Timestamp(Timestamp) = 9,
    /// `google.protobuf.Duration`.
    Duration(Duration) = 10,
    /// A type value: `int`, `list`, `google.protobuf.Timestamp`, a message type name.
    Type(Arc<Type>) = 11,
    /// `optional_type`: `Some` holds the present value.
    Optional(Option<Arc<Value>>) = 12,
    /// A value of an opaque library type (`net.IP`, `kubernetes.Quantity`, ...).
    Opaque(Arc<dyn OpaqueValue>) = 13,
    /// A protobuf message other than the well-known types CEL treats as plain values (see
    /// [`crate::proto`]).
    Message(Arc<crate::proto::MessageValue>) = 14,
    /// An object of a schema-declared type (a Kubernetes custom resource's object node; see
    /// [`crate::object`]). At run time its type is `map`, as in Kubernetes.
    Object(Arc<crate::object::ObjectValue>) = 15,
}

/// The derived format (`Int(1)`, `List(ListValue { items: [...], .. })`), written by hand so
/// that printing a deep value recurses under the stack guard.
impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        cel_types::stack::guarded(|| match self {
            Value::Null => f.write_str("Null"),
            Value::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
            Value::Int(i) => f.debug_tuple("Int").field(i).finish(),
            Value::Uint(u) => f.debug_tuple("Uint").field(u).finish(),
            Value::Double(d) => f.debug_tuple("Double").field(d).finish(),
            Value::String(s) => f.debug_tuple("String").field(s).finish(),
            Value::Bytes(b) => f.debug_tuple("Bytes").field(b).finish(),
            Value::List(l) => f.debug_tuple("List").field(l).finish(),
            Value::Map(m) => f.debug_tuple("Map").field(m).finish(),
            Value::Timestamp(t) => f.debug_tuple("Timestamp").field(t).finish(),
            Value::Duration(d) => f.debug_tuple("Duration").field(d).finish(),
            Value::Type(t) => f.debug_tuple("Type").field(t).finish(),
            Value::Optional(o) => f.debug_tuple("Optional").field(o).finish(),
            Value::Opaque(o) => f.debug_tuple("Opaque").field(o).finish(),
            Value::Message(m) => f.debug_tuple("Message").field(m).finish(),
            Value::Object(o) => f.debug_tuple("Object").field(o).finish(),
        })
    }
}

impl Drop for Value {
    /// Lists, maps and objects free their contents iteratively (see [`ListValue`]'s drop);
    /// what is left is a chain of optionals (`optional.of(optional.of(...))`), which is
    /// unlinked here one level at a time. Any other value, and an optional whose value is not
    /// itself a uniquely owned optional, returns at once (a tag test, inlined: every value
    /// dropped pays it).
    #[inline]
    fn drop(&mut self) {
        if let Value::Optional(Some(_)) = self {
            self.unlink_optional_chain();
        }
    }
}

impl Value {
    /// The entries of a map, or of an opaque value standing for a map with fixed entries
    /// ([`OpaqueMap::entries`]): what a comprehension ranges over, in both evaluators.
    pub fn map_entries(&self) -> Option<&MapValue> {
        match self {
            Value::Map(m) => Some(m),
            Value::Opaque(o) => o.as_map()?.entries().map(|m| &**m),
            _ => None,
        }
    }

    /// The rest of [`Value`]'s drop, out of line.
    #[cold]
    #[inline(never)]
    fn unlink_optional_chain(&mut self) {
        let Value::Optional(Some(inner)) = self else {
            return;
        };
        if !matches!(Arc::get_mut(inner), Some(Value::Optional(Some(_)))) {
            return;
        }
        let Value::Optional(slot) = self else {
            return;
        };
        let mut next = slot.take();
        while let Some(arc) = next {
            match Arc::try_unwrap(arc) {
                Ok(Value::Optional(ref mut o)) => next = o.take(),
                // The rest is shared, or not an optional: its own drop takes care of it.
                _ => break,
            }
        }
    }
}

impl Value {
    /// The tag of [`Value::Null`].
    pub const TAG_NULL: u8 = 0;
    /// The tag of [`Value::Bool`]; the `bool` is at offset [`Value::BOOL_OFFSET`].
    pub const TAG_BOOL: u8 = 1;
    /// The tag of [`Value::Int`]; the `i64` is at offset [`Value::SCALAR_OFFSET`].
    pub const TAG_INT: u8 = 2;
    /// The tag of [`Value::Uint`]; the `u64` is at offset [`Value::SCALAR_OFFSET`].
    pub const TAG_UINT: u8 = 3;
    /// The tag of [`Value::Double`]; the `f64` is at offset [`Value::SCALAR_OFFSET`].
    pub const TAG_DOUBLE: u8 = 4;
    /// The tag of [`Value::String`].
    pub const TAG_STRING: u8 = 5;
    /// The tag of [`Value::Bytes`].
    pub const TAG_BYTES: u8 = 6;
    /// The tag of [`Value::List`].
    pub const TAG_LIST: u8 = 7;
    /// The tag of [`Value::Map`].
    pub const TAG_MAP: u8 = 8;
    /// The tag of [`Value::Timestamp`].
    pub const TAG_TIMESTAMP: u8 = 9;
    /// The tag of [`Value::Duration`].
    pub const TAG_DURATION: u8 = 10;
    /// The tag of [`Value::Type`].
    pub const TAG_TYPE: u8 = 11;
    /// The tag of [`Value::Optional`].
    pub const TAG_OPTIONAL: u8 = 12;
    /// The tag of [`Value::Opaque`].
    pub const TAG_OPAQUE: u8 = 13;
    /// The tag of [`Value::Message`].
    pub const TAG_MESSAGE: u8 = 14;
    /// The tag of [`Value::Object`]; its `Arc` is at offset [`Value::SCALAR_OFFSET`].
    pub const TAG_OBJECT: u8 = 15;
    /// Where a `Bool`'s payload is (the tag is one byte, a `bool` is aligned to 1).
    pub const BOOL_OFFSET: usize = 1;
    /// Where an `Int`'s, `Uint`'s or `Double`'s payload is (aligned to 8 after the tag).
    pub const SCALAR_OFFSET: usize = 8;
}

impl Value {
    /// The variant's tag (its discriminant).
    #[inline]
    pub fn tag(&self) -> u8 {
        match self {
            Value::Null => Value::TAG_NULL,
            Value::Bool(_) => Value::TAG_BOOL,
            Value::Int(_) => Value::TAG_INT,
            Value::Uint(_) => Value::TAG_UINT,
            Value::Double(_) => Value::TAG_DOUBLE,
            Value::String(_) => Value::TAG_STRING,
            Value::Bytes(_) => Value::TAG_BYTES,
            Value::List(_) => Value::TAG_LIST,
            Value::Map(_) => Value::TAG_MAP,
            Value::Timestamp(_) => Value::TAG_TIMESTAMP,
            Value::Duration(_) => Value::TAG_DURATION,
            Value::Type(_) => Value::TAG_TYPE,
            Value::Optional(_) => Value::TAG_OPTIONAL,
            Value::Opaque(_) => Value::TAG_OPAQUE,
            Value::Message(_) => Value::TAG_MESSAGE,
            Value::Object(_) => Value::TAG_OBJECT,
        }
    }

    /// The variant as one bit of a set of variants (`1 << tag`).
    #[inline]
    pub fn kind_bit(&self) -> u16 {
        1 << self.tag()
    }
}

impl Value {
    /// The size cel-go's `traits.Sizer` reports, for the values that have one: code points of
    /// a string, bytes of bytes, entries of a list or map, a library type's own size. Cost
    /// formulas count every other value as 1.
    pub fn sizer_size(&self) -> Option<u64> {
        match self {
            Value::String(s) => Some(s.chars().count() as u64),
            Value::Bytes(b) => Some(b.len() as u64),
            Value::List(l) => Some(l.len() as u64),
            Value::Map(m) => Some(m.len() as u64),
            Value::Object(o) => Some(o.len() as u64),
            Value::Opaque(o) => o.size(),
            _ => None,
        }
    }
}

/// A value of a type defined outside the core language, by a library or the host.
pub trait OpaqueValue: fmt::Debug + Send + Sync + Any {
    /// The type's name, as `type(x)` reports it (`net.IP`).
    fn type_name(&self) -> &str;

    /// CEL equality with another opaque value (of any type).
    fn equals(&self, other: &dyn OpaqueValue) -> bool;

    /// Ordering with another value of the same type, if the type is ordered.
    fn compare(&self, _other: &dyn OpaqueValue) -> Option<Ordering> {
        None
    }

    /// The value's size as cost formulas see it, for types that have one (cel-go's
    /// `traits.Sizer`: an IP address's bytes, say); `None` counts as 1.
    fn size(&self) -> Option<u64> {
        None
    }

    /// Writes the value as a CEL expression that rebuilds it in its library's environment,
    /// which is how every printed form of a value shows it (`Display` of errors, the `cel`
    /// command's text and JSON, [`crate::format::to_cel_literal`]): `ip("10.0.0.1")`,
    /// `quantity("70k")`. The default, for a type without such a form, writes the type name
    /// and the value's debug text.
    fn write_cel(&self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = write!(out, "{}({:?})", self.type_name(), self);
    }

    /// The name cel-go's error texts give the Go type of such a value (`%T`, as in "got
    /// 'cel.Semver', expected iterable type"); the CEL type name unless a library says.
    fn go_type_name(&self) -> &str {
        self.type_name()
    }

    /// The entries of a type whose values are read as a map's are (cel-go's
    /// `traits.Mapper` on a custom type, as Kubernetes' lazily computed `variables`), if it
    /// is one: field selections, presence tests and indexes by string then ask
    /// [`OpaqueMap::find`]. Other types are not maps (the default).
    fn as_map(&self) -> Option<&dyn OpaqueMap> {
        None
    }

    /// Access to the concrete type, for the library's own functions.
    fn as_any(&self) -> &dyn Any;
}

/// A map an opaque value stands for, whose entries may be computed when first read (see
/// [`OpaqueValue::as_map`]).
///
/// `find` may run an evaluation of its own (Kubernetes' variables are expressions), so an
/// implementation must not hold a lock while it computes an entry, and must answer an entry
/// that is read again while it is being computed with an error rather than wait for it.
pub trait OpaqueMap {
    /// The entry of `key`: `None` when the map has no such key, `Some(Err(_))` when the
    /// entry exists and computing it failed (the read then fails with that error).
    fn find(&self, key: &str) -> Option<crate::Result<Value>>;

    /// All its entries, when they are fixed rather than computed on first read (cel-go's
    /// `traits.Mapper` over a map, as the DRA library's map with a default value): then
    /// comprehensions range over them, as over a map's, and parameters declared maps
    /// receive them as a map ([`crate::MapParams`]). `None` (the default) for maps that
    /// cannot be listed.
    fn entries(&self) -> Option<&Arc<MapValue>> {
        None
    }
}

/// A point in time: seconds and nanoseconds since the Unix epoch, plus the UTC offset it was
/// written with. cel-go keeps that offset for `string(ts)`; equality and ordering use the
/// instant only.
#[derive(Clone, Copy, Debug)]
pub struct Timestamp {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    pub seconds: i64,
    /// Nanoseconds within the second, `0..1_000_000_000`.
    pub nanos: u32,
    /// The UTC offset, in seconds east, the timestamp was parsed with (0 for `Z`).
    pub offset_seconds: i32,
}

impl Timestamp {
    /// A timestamp in UTC.
    pub fn utc(seconds: i64, nanos: u32) -> Timestamp {
        Timestamp {
            seconds,
            nanos,
            offset_seconds: 0,
        }
    }
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Timestamp) -> bool {
        (self.seconds, self.nanos) == (other.seconds, other.nanos)
    }
}

impl Eq for Timestamp {}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Timestamp) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Timestamp) -> Ordering {
        (self.seconds, self.nanos).cmp(&(other.seconds, other.nanos))
    }
}

/// A signed span of time in nanoseconds, like Go's `time.Duration` (about ±292 years).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration {
    /// The length in nanoseconds.
    pub nanos: i64,
}

/// The elements of a list value.
#[derive(Clone, Debug, Default)]
pub struct ListValue {
    /// The elements in order.
    pub items: Vec<Value>,
    /// How `==` and `+` treat the list when it is the left operand: `None` for an ordinary
    /// list; a set or map list for schema-typed data (see [`crate::object::ListSemantics`]).
    pub semantics: Option<Arc<crate::object::ListSemantics>>,
}

impl ListValue {
    /// An ordinary list.
    pub fn new(items: Vec<Value>) -> ListValue {
        ListValue {
            items,
            semantics: None,
        }
    }
}

impl std::ops::Deref for ListValue {
    type Target = Vec<Value>;
    fn deref(&self) -> &Vec<Value> {
        &self.items
    }
}

impl std::ops::DerefMut for ListValue {
    fn deref_mut(&mut self) -> &mut Vec<Value> {
        &mut self.items
    }
}

impl From<Vec<Value>> for ListValue {
    fn from(items: Vec<Value>) -> ListValue {
        ListValue::new(items)
    }
}

/// A map key: CEL allows `int`, `uint`, `bool` and `string` keys.
///
/// `Int(1)` and `Uint(1)` are different keys (a map may hold both), but lookups treat
/// numbers as equal across types: see [`MapValue::get`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// A `bool` key.
    Bool(bool),
    /// An `int` key.
    Int(i64),
    /// A `uint` key.
    Uint(u64),
    /// A `string` key.
    String(Arc<str>),
}

/// A borrowed map key, for lookups that must not allocate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyRef<'a> {
    /// A `bool` key.
    Bool(bool),
    /// An `int` key.
    Int(i64),
    /// A `uint` key.
    Uint(u64),
    /// A `string` key.
    String(&'a str),
}

impl Key {
    /// The borrowed form.
    pub fn as_ref(&self) -> KeyRef<'_> {
        match self {
            Key::Bool(b) => KeyRef::Bool(*b),
            Key::Int(i) => KeyRef::Int(*i),
            Key::Uint(u) => KeyRef::Uint(*u),
            Key::String(s) => KeyRef::String(s),
        }
    }

    /// The key as a value.
    pub fn to_value(&self) -> Value {
        match self {
            Key::Bool(b) => Value::Bool(*b),
            Key::Int(i) => Value::Int(*i),
            Key::Uint(u) => Value::Uint(*u),
            Key::String(s) => Value::String(s.clone()),
        }
    }

    /// The key for a value, if the value's type may be a map key.
    pub fn from_value(v: &Value) -> Option<Key> {
        Some(match v {
            Value::Bool(b) => Key::Bool(*b),
            Value::Int(i) => Key::Int(*i),
            Value::Uint(u) => Key::Uint(*u),
            Value::String(s) => Key::String(s.clone()),
            _ => return None,
        })
    }
}

impl Hash for KeyRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            KeyRef::Bool(b) => {
                state.write_u8(0);
                state.write_u8(*b as u8);
            }
            KeyRef::Int(i) => {
                state.write_u8(1);
                state.write_i64(*i);
            }
            KeyRef::Uint(u) => {
                state.write_u8(2);
                state.write_u64(*u);
            }
            KeyRef::String(s) => {
                state.write_u8(3);
                state.write(s.as_bytes());
                state.write_u8(0xff);
            }
        }
    }
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_ref().hash(state)
    }
}

impl Equivalent<Key> for KeyRef<'_> {
    fn equivalent(&self, key: &Key) -> bool {
        *self == key.as_ref()
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Bool(b) => write!(f, "{b}"),
            Key::Int(i) => write!(f, "{i}"),
            Key::Uint(u) => write!(f, "{u}"),
            Key::String(s) => f.write_str(s),
        }
    }
}

/// The hasher of map keys: fast, with a seed chosen once per process, so hashes of constant
/// keys can be computed ahead of evaluation and stay valid for every map in the process.
#[derive(Clone, Copy, Debug, Default)]
pub struct MapHasher;

fn process_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        // RandomState is seeded from the OS; one draw per process is enough.
        std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64)
    })
}

impl BuildHasher for MapHasher {
    type Hasher = foldhash::fast::FoldHasher<'static>;
    fn build_hasher(&self) -> Self::Hasher {
        foldhash::fast::FixedState::with_seed(process_seed()).build_hasher()
    }
}

impl MapHasher {
    /// The hash a map uses for a key.
    pub fn hash_key(key: KeyRef<'_>) -> u64 {
        MapHasher.hash_one(key)
    }
}

/// The entries of a map value, in insertion order.
#[derive(Clone, Debug, Default)]
pub struct MapValue {
    entries: IndexMap<Key, Value, MapHasher>,
}

impl MapValue {
    /// An empty map.
    pub fn new() -> MapValue {
        MapValue::default()
    }

    /// An empty map with room for `n` entries.
    pub fn with_capacity(n: usize) -> MapValue {
        MapValue {
            entries: IndexMap::with_capacity_and_hasher(n, MapHasher),
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Inserts an entry, returning the previous value of the key.
    pub fn insert(&mut self, key: Key, value: Value) -> Option<Value> {
        self.entries.insert(key, value)
    }

    /// The entries in insertion order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&Key, &Value)> {
        self.entries.iter()
    }

    /// The keys in insertion order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &Key> {
        self.entries.keys()
    }

    /// The entry at a position in insertion order.
    pub fn get_index(&self, i: usize) -> Option<(&Key, &Value)> {
        self.entries.get_index(i)
    }

    /// Exact lookup, no numeric conversion.
    pub fn get_exact(&self, key: KeyRef<'_>) -> Option<&Value> {
        self.entries.get(&key)
    }

    /// Exact lookup with a hash computed ahead of time by [`MapHasher::hash_key`].
    pub fn get_prehashed(&self, hash: u64, key: KeyRef<'_>) -> Option<&Value> {
        use indexmap::map::RawEntryApiV1;
        self.entries
            .raw_entry_v1()
            .from_hash(hash, |k| match (key, k.as_ref()) {
                // Field names are short: compared without a call to `memcmp`.
                (KeyRef::String(a), KeyRef::String(b)) => {
                    crate::strings::bytes_equal(a.as_bytes(), b.as_bytes())
                }
                (a, b) => a == b,
            })
            .map(|(_, v)| v)
    }

    /// [`MapValue::get_prehashed`] for a string key that looks first at entry `hint` (where
    /// the key was in the last map a read met: maps decoded from one kind of document keep
    /// their keys in one order), and returns where the key was.
    #[inline]
    pub fn get_str_hinted(&self, hash: u64, key: &str, hint: usize) -> Option<(usize, &Value)> {
        if let Some((Key::String(k), v)) = self.entries.get_index(hint)
            && crate::strings::bytes_equal(k.as_bytes(), key.as_bytes())
        {
            return Some((hint, v));
        }
        use indexmap::map::RawEntryApiV1;
        let i = self.entries.raw_entry_v1().index_from_hash(hash, |k| {
            matches!(k, Key::String(k) if crate::strings::bytes_equal(k.as_bytes(), key.as_bytes()))
        })?;
        self.entries.get_index(i).map(|(_, v)| (i, v))
    }

    /// A string-keyed lookup (field selection).
    pub fn get_str(&self, key: &str) -> Option<&Value> {
        self.entries.get(&KeyRef::String(key))
    }

    /// CEL map lookup: a numeric key finds an entry whose key is numerically equal, whatever
    /// its numeric type (`{1: 'a'}[1u]`, `{1u: 'a'}[1.0]`). `None` for a missing key; `Err`
    /// for a value that cannot be a key at all.
    #[allow(
        clippy::result_unit_err,
        reason = "the only failure is \"not a key type\"; callers choose the message"
    )]
    pub fn get(&self, key: &Value) -> Result<Option<&Value>, ()> {
        /// 2^63 and 2^64 as doubles.
        const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
        const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
        Ok(match key {
            Value::String(s) => self.get_exact(KeyRef::String(s)),
            Value::Bool(b) => self.get_exact(KeyRef::Bool(*b)),
            Value::Int(i) => self.get_exact(KeyRef::Int(*i)).or_else(|| {
                u64::try_from(*i)
                    .ok()
                    .and_then(|u| self.get_exact(KeyRef::Uint(u)))
            }),
            Value::Uint(u) => self.get_exact(KeyRef::Uint(*u)).or_else(|| {
                i64::try_from(*u)
                    .ok()
                    .and_then(|i| self.get_exact(KeyRef::Int(i)))
            }),
            Value::Double(d) => {
                let d = *d;
                if d.fract() != 0.0 || !d.is_finite() {
                    None
                } else {
                    let as_int = (-TWO_POW_63..TWO_POW_63)
                        .contains(&d)
                        .then_some(d as i64)
                        .and_then(|i| self.get_exact(KeyRef::Int(i)));
                    as_int.or_else(|| {
                        (0.0..TWO_POW_64)
                            .contains(&d)
                            .then_some(d as u64)
                            .and_then(|u| self.get_exact(KeyRef::Uint(u)))
                    })
                }
            }
            _ => return Err(()),
        })
    }
}

impl Drop for ListValue {
    fn drop(&mut self) {
        drop_iteratively(std::mem::take(&mut self.items));
    }
}

impl Drop for MapValue {
    fn drop(&mut self) {
        let values: Vec<Value> = std::mem::take(&mut self.entries)
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        drop_iteratively(values);
    }
}

/// Frees nested lists, maps, objects and optionals with an explicit work list instead of
/// recursion. Parts shared with other values are only released.
fn drop_iteratively(items: Vec<Value>) {
    let mut work = items;
    while let Some(mut v) = work.pop() {
        match &mut v {
            Value::List(l) => {
                if let Some(inner) = Arc::get_mut(l) {
                    work.append(&mut inner.items);
                }
            }
            Value::Map(m) => {
                if let Some(inner) = Arc::get_mut(m) {
                    let entries = std::mem::take(&mut inner.entries);
                    work.extend(entries.into_iter().map(|(_, v)| v));
                }
            }
            Value::Optional(Some(o)) => {
                if let Some(inner) = Arc::get_mut(o) {
                    work.push(std::mem::replace(inner, Value::Null));
                }
            }
            Value::Object(o) => {
                if let Some(inner) = Arc::get_mut(o) {
                    inner.take_values(&mut work);
                }
            }
            _ => {}
        }
        // `v` has no contents left that it owns alone: dropping it does not recurse.
    }
}

impl Value {
    /// A string value.
    pub fn string(s: impl Into<Arc<str>>) -> Value {
        Value::String(s.into())
    }

    /// A bytes value.
    pub fn bytes(b: impl Into<Arc<[u8]>>) -> Value {
        Value::Bytes(b.into())
    }

    /// A list value.
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(ListValue::new(items)))
    }

    /// A map value.
    pub fn map(entries: impl IntoIterator<Item = (Key, Value)>) -> Value {
        let mut m = MapValue::new();
        for (k, v) in entries {
            m.insert(k, v);
        }
        Value::Map(Arc::new(m))
    }

    /// A type value.
    pub fn type_value(t: Type) -> Value {
        Value::Type(Arc::new(t))
    }

    /// `optional.of(v)`.
    pub fn optional_of(v: Value) -> Value {
        Value::Optional(Some(Arc::new(v)))
    }

    /// `optional.none()`.
    pub fn optional_none() -> Value {
        Value::Optional(None)
    }

    /// The runtime type of the value, as `type(v)` returns it (parameters are `dyn`).
    pub fn type_of(&self) -> Type {
        match self {
            Value::Null => Type::Null,
            Value::Bool(_) => Type::Bool,
            Value::Int(_) => Type::Int,
            Value::Uint(_) => Type::Uint,
            Value::Double(_) => Type::Double,
            Value::String(_) => Type::String,
            Value::Bytes(_) => Type::Bytes,
            Value::List(_) => Type::list(Type::Dyn),
            Value::Map(_) => Type::map(Type::Dyn, Type::Dyn),
            Value::Timestamp(_) => Type::Timestamp,
            Value::Duration(_) => Type::Duration,
            Value::Type(_) => Type::Type(None),
            Value::Optional(_) => Type::optional(Type::Dyn),
            Value::Opaque(o) => Type::opaque(o.type_name()),
            Value::Message(m) => Type::message(m.type_name()),
            Value::Object(_) => Type::map(Type::Dyn, Type::Dyn),
        }
    }

    /// The name of the value's type (`int`, `list`, `google.protobuf.Timestamp`, `net.IP`).
    pub fn type_name(&self) -> &str {
        match self {
            Value::Null => "null_type",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint",
            Value::Double(_) => "double",
            Value::String(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::Timestamp(_) => "google.protobuf.Timestamp",
            Value::Duration(_) => "google.protobuf.Duration",
            Value::Type(_) => "type",
            Value::Optional(_) => "optional_type",
            Value::Opaque(o) => o.type_name(),
            Value::Message(m) => m.type_name(),
            Value::Object(_) => "map",
        }
    }
}

impl Value {
    /// The Go type of cel-go's value for this one, as its error texts print it (`%T`).
    pub fn go_type_name(&self) -> &str {
        match self {
            Value::Null => "types.Null",
            Value::Bool(_) => "types.Bool",
            Value::Int(_) => "types.Int",
            Value::Uint(_) => "types.Uint",
            Value::Double(_) => "types.Double",
            Value::String(_) => "types.String",
            Value::Bytes(_) => "types.Bytes",
            Value::List(_) => "*types.baseList",
            Value::Map(_) | Value::Object(_) => "*types.baseMap",
            Value::Timestamp(_) => "types.Timestamp",
            Value::Duration(_) => "types.Duration",
            Value::Type(_) => "*types.Type",
            Value::Optional(_) => "*types.Optional",
            Value::Opaque(o) => o.go_type_name(),
            Value::Message(_) => "*types.protoObj",
        }
    }
}

/// CEL equality (`==`): numbers compare across `int`, `uint` and `double`, lists element by
/// element, maps key by key; NaN is not equal to itself. For type-tagged identity (`1` is not
/// `1u`), use [`Value::identical`].
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        crate::compare::equals(self, other)
    }
}

impl Value {
    /// Type-tagged identity: same kind and same contents (`1`, `1u` and `1.0` all differ);
    /// maps regardless of entry order; NaN is identical to NaN. Iterative, so deep values
    /// cannot overflow the stack.
    pub fn identical(&self, other: &Value) -> bool {
        let mut work: Vec<(&Value, &Value)> = vec![(self, other)];
        while let Some((a, b)) = work.pop() {
            let same = match (a, b) {
                (Value::Null, Value::Null) => true,
                (Value::Bool(x), Value::Bool(y)) => x == y,
                (Value::Int(x), Value::Int(y)) => x == y,
                (Value::Uint(x), Value::Uint(y)) => x == y,
                (Value::Double(x), Value::Double(y)) => {
                    x.to_bits() == y.to_bits() || x == y || (x.is_nan() && y.is_nan())
                }
                (Value::String(x), Value::String(y)) => x == y,
                (Value::Bytes(x), Value::Bytes(y)) => x == y,
                (Value::Timestamp(x), Value::Timestamp(y)) => x == y,
                (Value::Duration(x), Value::Duration(y)) => x == y,
                (Value::Type(x), Value::Type(y)) => x.runtime_name() == y.runtime_name(),
                (Value::Optional(None), Value::Optional(None)) => true,
                (Value::Optional(Some(x)), Value::Optional(Some(y))) => {
                    work.push((x, y));
                    true
                }
                (Value::List(x), Value::List(y)) => {
                    x.len() == y.len() && {
                        work.extend(x.iter().zip(y.iter()));
                        true
                    }
                }
                (Value::Map(x), Value::Map(y)) => {
                    x.len() == y.len()
                        && x.iter().all(|(k, v)| match y.get_exact(k.as_ref()) {
                            Some(w) => {
                                work.push((v, w));
                                true
                            }
                            None => false,
                        })
                }
                (Value::Opaque(x), Value::Opaque(y)) => x.equals(&**y),
                (Value::Message(x), Value::Message(y)) => crate::proto::equals(x, y),
                (Value::Object(x), Value::Object(y)) => {
                    x.len() == y.len()
                        && x.data_entries().count() == y.data_entries().count()
                        && x.data_entries()
                            .zip(y.data_entries())
                            .all(|((k, v), (l, w))| {
                                work.push((v, w));
                                k == l
                            })
                }
                _ => false,
            };
            if !same {
                return false;
            }
        }
        true
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}
impl From<u64> for Value {
    fn from(u: u64) -> Value {
        Value::Uint(u)
    }
}
impl From<f64> for Value {
    fn from(d: f64) -> Value {
        Value::Double(d)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.into())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s.into())
    }
}
impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Value {
        Value::list(items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_small() {
        assert!(std::mem::size_of::<Value>() <= 24);
        assert_eq!(std::mem::align_of::<Value>(), 8);
    }

    #[test]
    fn numeric_key_lookup_crosses_types() {
        let m = MapValue::new();
        let mut m = m;
        m.insert(Key::Int(1), Value::from("a"));
        m.insert(Key::Uint(2), Value::from("b"));
        assert!(m.get(&Value::Uint(1)).unwrap().is_some());
        assert!(m.get(&Value::Double(1.0)).unwrap().is_some());
        assert!(m.get(&Value::Int(2)).unwrap().is_some());
        assert!(m.get(&Value::Double(1.5)).unwrap().is_none());
        assert!(m.get(&Value::Null).is_err());
    }

    #[test]
    fn prehashed_lookup_agrees() {
        let mut m = MapValue::new();
        m.insert(Key::String("name".into()), Value::Int(7));
        let h = MapHasher::hash_key(KeyRef::String("name"));
        assert!(m.get_prehashed(h, KeyRef::String("name")).is_some());
    }

    #[test]
    fn deep_list_drops_without_overflow() {
        let mut v = Value::list(vec![]);
        for _ in 0..200_000 {
            v = Value::list(vec![v]);
        }
        drop(v);
    }
}
