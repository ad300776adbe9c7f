//! Protobuf messages as CEL values, over `prost-reflect` descriptors.
//!
//! A message an environment knows by its descriptor is a [`Value::Message`], except the
//! well-known types CEL treats as plain values, which are converted whenever a message is
//! read or built ([`from_message`]): the wrappers (`google.protobuf.Int32Value` is an `int`,
//! or `null` where a field holding one is unset), `Timestamp`, `Duration`, `Struct` (a map),
//! `ListValue` (a list), `Value` (whichever it holds) and `Any` (its unpacked payload).
//!
//! * Reading a field ([`select`]) converts the protobuf value: 32- and 64-bit integers are
//!   `int` or `uint`, `float` is widened to `double`, enums are `int`, repeated fields lists
//!   and map fields maps. An unset field reads as its default (proto2 declared defaults
//!   included); an unset message field as the type's empty message.
//! * `has(m.f)` ([`has`]) follows protobuf presence: set for fields that track presence,
//!   not the default for proto3 scalars, non-empty for repeated and map fields.
//! * Building (`pkg.Msg{f: v}`, [`construct`]) converts each value to the field's type, with
//!   range checks for 32-bit fields; `null` leaves a message field unset.
//! * Equality ([`equals`]) is protobuf's: same type, same fields; NaN differs from itself.
//!
//! [`ProtoTypes`] gives the checker the same descriptors as a [`TypeProvider`].

use std::sync::Arc;

use cel_types::{FieldType, Type, TypeProvider};
use prost::Message as _;
use prost_reflect::{
    ExtensionDescriptor, FieldDescriptor, Kind, MapKey, ReflectMessage, Value as PValue,
};

use crate::{Duration, Error, Key, ListValue, MapValue, Result, Value};

/// The descriptor types hosts use to describe their messages (from `prost-reflect`).
pub use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};

/// A protobuf message value: the message and its descriptor.
#[derive(Clone, Debug)]
pub struct MessageValue {
    descriptor: MessageDescriptor,
    message: DynamicMessage,
}

impl MessageValue {
    /// Wraps a message.
    pub fn new(message: DynamicMessage) -> MessageValue {
        MessageValue {
            descriptor: message.descriptor(),
            message,
        }
    }

    /// The message's fully qualified type name.
    pub fn type_name(&self) -> &str {
        self.descriptor.full_name()
    }

    /// The message.
    pub fn message(&self) -> &DynamicMessage {
        &self.message
    }

    /// The message's descriptor.
    pub fn descriptor(&self) -> &MessageDescriptor {
        &self.descriptor
    }
}

/// The message and enum types of a descriptor pool, for the checker (as a [`TypeProvider`])
/// and for building messages.
#[derive(Clone, Debug)]
pub struct ProtoTypes {
    pool: DescriptorPool,
}

impl ProtoTypes {
    /// The types of `pool`.
    pub fn new(pool: DescriptorPool) -> ProtoTypes {
        ProtoTypes { pool }
    }

    /// The pool.
    pub fn pool(&self) -> &DescriptorPool {
        &self.pool
    }

    /// The descriptor of a message type, by fully qualified name.
    pub fn message(&self, name: &str) -> Option<MessageDescriptor> {
        self.pool
            .get_message_by_name(name.strip_prefix('.').unwrap_or(name))
    }
}

impl TypeProvider for ProtoTypes {
    fn find_type(&self, name: &str) -> Option<Type> {
        let d = self.message(name)?;
        Some(Type::well_known(d.full_name()).unwrap_or_else(|| Type::message(d.full_name())))
    }

    fn find_field(&self, message: &str, field: &str) -> Option<FieldType> {
        let d = self.message(message)?;
        if let Some(f) = d.get_field_by_name(field) {
            return Some(FieldType { ty: field_type(&f) });
        }
        let ext = extension_of(&d, field)?;
        let t = kind_type(&ext.kind());
        Some(FieldType {
            ty: if ext.is_list() { Type::list(t) } else { t },
        })
    }

    fn find_enum_value(&self, name: &str) -> Option<i64> {
        let name = name.strip_prefix('.').unwrap_or(name);
        let (enum_name, value) = name.rsplit_once('.')?;
        let e = self.pool.get_enum_by_name(enum_name)?;
        Some(i64::from(e.get_value_by_name(value)?.number()))
    }
}

/// The CEL type of a field.
pub fn field_type(f: &FieldDescriptor) -> Type {
    if f.is_map()
        && let Kind::Message(entry) = f.kind()
    {
        let key = entry.map_entry_key_field();
        let value = entry.map_entry_value_field();
        return Type::map(kind_type(&key.kind()), kind_type(&value.kind()));
    }
    let t = kind_type(&f.kind());
    if f.is_list() { Type::list(t) } else { t }
}

fn kind_type(kind: &Kind) -> Type {
    match kind {
        Kind::Double | Kind::Float => Type::Double,
        Kind::Int32
        | Kind::Int64
        | Kind::Sint32
        | Kind::Sint64
        | Kind::Sfixed32
        | Kind::Sfixed64 => Type::Int,
        Kind::Uint32 | Kind::Uint64 | Kind::Fixed32 | Kind::Fixed64 => Type::Uint,
        Kind::Bool => Type::Bool,
        Kind::String => Type::String,
        Kind::Bytes => Type::Bytes,
        Kind::Enum(_) => Type::Int,
        Kind::Message(m) => {
            Type::well_known(m.full_name()).unwrap_or_else(|| Type::message(m.full_name()))
        }
    }
}

/// The extension of message type `d` named `name` (its fully qualified name).
fn extension_of(d: &MessageDescriptor, name: &str) -> Option<ExtensionDescriptor> {
    d.parent_pool()
        .get_extension_by_name(name)
        .filter(|e| e.containing_message().full_name() == d.full_name())
}

fn no_such_field(name: &str) -> Error {
    Error::new(format!("no such field '{name}'"))
}

/// `m.f`: the field's value, its default when unset. `f` may also be the qualified name of
/// an extension of the message's type (``m.`pkg.ext` ``).
pub fn select(m: &MessageValue, name: &str) -> Result<Value> {
    let Some(f) = m.descriptor.get_field_by_name(name) else {
        let ext = extension_of(&m.descriptor, name).ok_or_else(|| no_such_field(name))?;
        if !ext.is_list()
            && !m.message.has_extension(&ext)
            && let Kind::Message(d) = ext.kind()
        {
            return unset_message(&d);
        }
        return from_field(&m.message.get_extension(&ext), &ext.kind());
    };
    if !f.is_list()
        && !f.is_map()
        && !m.message.has_field(&f)
        && let Kind::Message(d) = f.kind()
    {
        return unset_message(&d);
    }
    from_field(&m.message.get_field(&f), &f.kind())
}

/// `m.?f`: the field's value if present ([`has`]), else none.
pub fn opt_select(m: &MessageValue, name: &str) -> Result<Value> {
    if has(m, name)? {
        Ok(Value::optional_of(select(m, name)?))
    } else {
        Ok(Value::optional_none())
    }
}

/// `has(m.f)`, for a field or an extension.
pub fn has(m: &MessageValue, name: &str) -> Result<bool> {
    let Some(f) = m.descriptor.get_field_by_name(name) else {
        let ext = extension_of(&m.descriptor, name).ok_or_else(|| no_such_field(name))?;
        if !ext.is_list() {
            return Ok(m.message.has_extension(&ext));
        }
        return Ok(match &*m.message.get_extension(&ext) {
            PValue::List(l) => !l.is_empty(),
            _ => false,
        });
    };
    if !f.is_list() && !f.is_map() {
        return Ok(m.message.has_field(&f));
    }
    Ok(match &*m.message.get_field(&f) {
        PValue::List(l) => !l.is_empty(),
        PValue::Map(e) => !e.is_empty(),
        _ => false,
    })
}

/// The value of an unset singular message field: `null` for wrappers, `Any` and `Value`,
/// otherwise the type's empty message, converted.
fn unset_message(d: &MessageDescriptor) -> Result<Value> {
    match d.full_name() {
        "google.protobuf.Any" | "google.protobuf.Value" => Ok(Value::Null),
        name if is_wrapper(name) => Ok(Value::Null),
        _ => from_message(DynamicMessage::new(d.clone())),
    }
}

/// Whether a message type is one of the wrappers (`google.protobuf.Int64Value`, ...).
fn is_wrapper(name: &str) -> bool {
    matches!(
        name,
        "google.protobuf.BoolValue"
            | "google.protobuf.Int32Value"
            | "google.protobuf.Int64Value"
            | "google.protobuf.UInt32Value"
            | "google.protobuf.UInt64Value"
            | "google.protobuf.FloatValue"
            | "google.protobuf.DoubleValue"
            | "google.protobuf.StringValue"
            | "google.protobuf.BytesValue"
    )
}

/// A field's value (of a field of `kind`; a map field's kind is its entry type).
fn from_field(v: &PValue, kind: &Kind) -> Result<Value> {
    match v {
        PValue::List(items) => {
            let items = items
                .iter()
                .map(|x| from_single(x, kind))
                .collect::<Result<Vec<_>>>()?;
            Ok(Value::List(Arc::new(ListValue::new(items))))
        }
        PValue::Map(entries) => {
            let value_kind = match kind {
                Kind::Message(entry) => entry.map_entry_value_field().kind(),
                _ => return Err(Error::internal("a map field without an entry type")),
            };
            // Protobuf maps have no order; entries come in key order, so that iterating a
            // map field is deterministic.
            let mut sorted: Vec<_> = entries.iter().collect();
            sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut out = MapValue::new();
            for (k, v) in sorted {
                out.insert(from_key(k), from_single(v, &value_kind)?);
            }
            Ok(Value::Map(Arc::new(out)))
        }
        other => from_single(other, kind),
    }
}

fn from_key(k: &MapKey) -> Key {
    match k {
        MapKey::Bool(b) => Key::Bool(*b),
        MapKey::I32(i) => Key::Int(i64::from(*i)),
        MapKey::I64(i) => Key::Int(*i),
        MapKey::U32(u) => Key::Uint(u64::from(*u)),
        MapKey::U64(u) => Key::Uint(*u),
        MapKey::String(s) => Key::String(s.as_str().into()),
    }
}

fn from_single(v: &PValue, kind: &Kind) -> Result<Value> {
    Ok(match v {
        PValue::Bool(b) => Value::Bool(*b),
        PValue::I32(i) => Value::Int(i64::from(*i)),
        PValue::I64(i) => Value::Int(*i),
        PValue::U32(u) => Value::Uint(u64::from(*u)),
        PValue::U64(u) => Value::Uint(*u),
        PValue::F32(f) => Value::Double(f64::from(*f)),
        PValue::F64(f) => Value::Double(*f),
        PValue::String(s) => Value::String(s.as_str().into()),
        PValue::Bytes(b) => Value::Bytes(b.to_vec().into()),
        PValue::EnumNumber(_) if matches!(kind, Kind::Enum(e) if e.full_name() == "google.protobuf.NullValue") => {
            Value::Null
        }
        PValue::EnumNumber(n) => Value::Int(i64::from(*n)),
        PValue::Message(m) => from_message(m.clone())?,
        PValue::List(_) | PValue::Map(_) => {
            return Err(Error::internal(format!(
                "a nested repeated value in a field of kind {kind:?}"
            )));
        }
    })
}

fn int_field(m: &DynamicMessage, name: &str) -> i64 {
    match m.get_field_by_name(name).as_deref() {
        Some(PValue::I64(i)) => *i,
        Some(PValue::I32(i)) => i64::from(*i),
        _ => 0,
    }
}

/// A message as a CEL value: the well-known types converted (see the module docs), any
/// other message as a [`Value::Message`].
pub fn from_message(m: DynamicMessage) -> Result<Value> {
    let d = m.descriptor();
    let wrapped = || -> Result<Value> {
        match d.get_field_by_name("value") {
            Some(f) => from_field(&m.get_field(&f), &f.kind()),
            None => Err(Error::internal("a wrapper without a value field")),
        }
    };
    match d.full_name() {
        name if is_wrapper(name) => wrapped(),
        "google.protobuf.Timestamp" => {
            let nanos = u32::try_from(int_field(&m, "nanos")).unwrap_or(u32::MAX);
            crate::time::checked_timestamp(int_field(&m, "seconds"), nanos, 0).map(Value::Timestamp)
        }
        "google.protobuf.Duration" => int_field(&m, "seconds")
            .checked_mul(1_000_000_000)
            .and_then(|s| s.checked_add(int_field(&m, "nanos")))
            .map(|nanos| Value::Duration(Duration { nanos }))
            .ok_or_else(|| Error::new("duration out of range")),
        "google.protobuf.Struct" | "google.protobuf.ListValue" => {
            let name = if d.full_name() == "google.protobuf.Struct" {
                "fields"
            } else {
                "values"
            };
            match d.get_field_by_name(name) {
                Some(f) => from_field(&m.get_field(&f), &f.kind()),
                None => Err(Error::internal("a malformed google.protobuf.Struct")),
            }
        }
        "google.protobuf.Value" => {
            for f in d.fields() {
                if m.has_field(&f) {
                    return from_field(&m.get_field(&f), &f.kind());
                }
            }
            Ok(Value::Null)
        }
        "google.protobuf.NullValue" => Ok(Value::Null),
        "google.protobuf.Any" => unpack_any(&m),
        _ => Ok(Value::Message(Arc::new(MessageValue::new(m)))),
    }
}

/// How many `google.protobuf.Any` may wrap one another: each is decoded separately, so
/// protobuf's own nesting limit does not bound a chain of them.
const MAX_ANY_NESTING: usize = 100;

/// The payload of a `google.protobuf.Any`, decoded with the descriptors of the `Any`'s own
/// pool and converted; an `Any` inside is unpacked in turn.
fn unpack_any(any: &DynamicMessage) -> Result<Value> {
    let mut any = any.clone();
    for _ in 0..MAX_ANY_NESTING {
        let url = match any.get_field_by_name("type_url").as_deref() {
            Some(PValue::String(s)) => s.clone(),
            _ => String::new(),
        };
        let bytes = match any.get_field_by_name("value").as_deref() {
            Some(PValue::Bytes(b)) => b.clone(),
            _ => Default::default(),
        };
        // The type name is whatever follows the last '/' of the URL.
        let name = url.rsplit('/').next().unwrap_or("");
        let d = any
            .descriptor()
            .parent_pool()
            .get_message_by_name(name)
            .ok_or_else(|| Error::new(format!("unknown type in google.protobuf.Any: '{url}'")))?;
        let payload = DynamicMessage::decode(d, bytes).map_err(|e| {
            Error::new(format!("invalid google.protobuf.Any of type '{name}': {e}"))
        })?;
        if payload.descriptor().full_name() != "google.protobuf.Any" {
            return from_message(payload);
        }
        any = payload;
    }
    Err(Error::new(format!(
        "google.protobuf.Any nested more than {MAX_ANY_NESTING} deep"
    )))
}

/// `pkg.Msg{f: v, ...}`: a new message with the given fields, converted to a value (a
/// well-known type becomes the plain value it stands for).
pub fn construct(d: &MessageDescriptor, fields: Vec<(Arc<str>, Value)>) -> Result<Value> {
    let mut m = DynamicMessage::new(d.clone());
    for (name, v) in fields {
        let f = d
            .get_field_by_name(&name)
            .ok_or_else(|| no_such_field(&name))?;
        if let Some(pv) = to_field(&v, &f)? {
            m.try_set_field(&f, pv)
                .map_err(|e| Error::new(format!("field '{name}': {e}")))?;
        }
    }
    from_message(m)
}

/// A CEL value for a field; `None` leaves the field unset (`null` for a message field).
fn to_field(v: &Value, f: &FieldDescriptor) -> Result<Option<PValue>> {
    let kind = f.kind();
    if f.is_map() {
        let Kind::Message(entry) = &kind else {
            return Err(Error::internal("a map field without an entry type"));
        };
        let (kk, vk) = (
            entry.map_entry_key_field().kind(),
            entry.map_entry_value_field().kind(),
        );
        let Value::Map(m) = v else {
            return Err(Error::no_such_overload());
        };
        let mut out = std::collections::HashMap::with_capacity(m.len());
        for (k, x) in m.iter() {
            if !pruned(x, &vk) {
                out.insert(to_key(k, &kk)?, to_single(x, &vk)?);
            }
        }
        return Ok(Some(PValue::Map(out)));
    }
    if f.is_list() {
        let Value::List(l) = v else {
            return Err(Error::no_such_overload());
        };
        let items = l
            .iter()
            .filter(|x| !pruned(x, &kind))
            .map(|x| to_single(x, &kind))
            .collect::<Result<Vec<_>>>()?;
        return Ok(Some(PValue::List(items)));
    }
    if let (Value::Null, Kind::Message(d)) = (v, &kind) {
        match d.full_name() {
            "google.protobuf.Value" => {}
            "google.protobuf.Struct" | "google.protobuf.ListValue" => {
                return Err(Error::new("unsupported field type"));
            }
            _ => return Ok(None),
        }
    }
    to_single(v, &kind).map(Some)
}

/// Whether an element of a repeated or map field is dropped: `null` where the element is a
/// message other than `Value` and `Any` (which hold a null).
fn pruned(v: &Value, kind: &Kind) -> bool {
    matches!((v, kind), (Value::Null, Kind::Message(d))
        if !matches!(d.full_name(), "google.protobuf.Value" | "google.protobuf.Any"))
}

fn to_key(k: &Key, kind: &Kind) -> Result<MapKey> {
    let v = to_single(&k.to_value(), kind)?;
    Ok(match v {
        PValue::Bool(b) => MapKey::Bool(b),
        PValue::I32(i) => MapKey::I32(i),
        PValue::I64(i) => MapKey::I64(i),
        PValue::U32(u) => MapKey::U32(u),
        PValue::U64(u) => MapKey::U64(u),
        PValue::String(s) => MapKey::String(s),
        _ => return Err(Error::no_such_overload()),
    })
}

fn range_error() -> Error {
    Error::new("range error")
}

fn to_single(v: &Value, kind: &Kind) -> Result<PValue> {
    Ok(match (kind, v) {
        (Kind::Int32 | Kind::Sint32 | Kind::Sfixed32, Value::Int(i)) => {
            PValue::I32(i32::try_from(*i).map_err(|_| range_error())?)
        }
        (Kind::Int64 | Kind::Sint64 | Kind::Sfixed64, Value::Int(i)) => PValue::I64(*i),
        (Kind::Uint32 | Kind::Fixed32, Value::Uint(u)) => {
            PValue::U32(u32::try_from(*u).map_err(|_| range_error())?)
        }
        (Kind::Uint64 | Kind::Fixed64, Value::Uint(u)) => PValue::U64(*u),
        (Kind::Float, Value::Double(d)) => PValue::F32(*d as f32),
        (Kind::Double, Value::Double(d)) => PValue::F64(*d),
        (Kind::Bool, Value::Bool(b)) => PValue::Bool(*b),
        (Kind::String, Value::String(s)) => PValue::String(s.to_string()),
        (Kind::Bytes, Value::Bytes(b)) => PValue::Bytes(b.to_vec().into()),
        (Kind::Enum(_), Value::Int(i)) => {
            PValue::EnumNumber(i32::try_from(*i).map_err(|_| range_error())?)
        }
        (Kind::Message(d), v) => PValue::Message(to_message(v, d)?),
        _ => return Err(Error::no_such_overload()),
    })
}

/// A CEL value as a message of type `d`: a message of that type as it is, a plain value as
/// the well-known type `d` stands for.
pub fn to_message(v: &Value, d: &MessageDescriptor) -> Result<DynamicMessage> {
    if let Value::Message(m) = v {
        if m.descriptor.full_name() == d.full_name() {
            return Ok(m.message.clone());
        }
        if !matches!(
            d.full_name(),
            "google.protobuf.Any" | "google.protobuf.Value"
        ) {
            return Err(Error::no_such_overload());
        }
    }
    let mut out = DynamicMessage::new(d.clone());
    let mut set = |name: &str, pv: PValue| -> Result<()> {
        let f = d
            .get_field_by_name(name)
            .ok_or_else(|| Error::internal(format!("{} has no field {name}", d.full_name())))?;
        out.try_set_field(&f, pv)
            .map_err(|e| Error::internal(e.to_string()))
    };
    match (d.full_name(), v) {
        ("google.protobuf.BoolValue", Value::Bool(b)) => set("value", PValue::Bool(*b))?,
        ("google.protobuf.Int32Value", Value::Int(i)) => set(
            "value",
            PValue::I32(i32::try_from(*i).map_err(|_| range_error())?),
        )?,
        ("google.protobuf.Int64Value", Value::Int(i)) => set("value", PValue::I64(*i))?,
        ("google.protobuf.UInt32Value", Value::Uint(u)) => set(
            "value",
            PValue::U32(u32::try_from(*u).map_err(|_| range_error())?),
        )?,
        ("google.protobuf.UInt64Value", Value::Uint(u)) => set("value", PValue::U64(*u))?,
        ("google.protobuf.FloatValue", Value::Double(x)) => set("value", PValue::F32(*x as f32))?,
        ("google.protobuf.DoubleValue", Value::Double(x)) => set("value", PValue::F64(*x))?,
        ("google.protobuf.StringValue", Value::String(s)) => {
            set("value", PValue::String(s.to_string()))?
        }
        ("google.protobuf.BytesValue", Value::Bytes(b)) => {
            set("value", PValue::Bytes(b.to_vec().into()))?
        }
        ("google.protobuf.Timestamp", Value::Timestamp(t)) => {
            set("seconds", PValue::I64(t.seconds))?;
            set("nanos", PValue::I32(t.nanos as i32))?;
        }
        ("google.protobuf.Duration", Value::Duration(x)) => {
            set("seconds", PValue::I64(x.nanos / 1_000_000_000))?;
            set("nanos", PValue::I32((x.nanos % 1_000_000_000) as i32))?;
        }
        ("google.protobuf.Struct", Value::Map(_))
        | ("google.protobuf.ListValue", Value::List(_)) => {
            let name = if d.full_name() == "google.protobuf.Struct" {
                "fields"
            } else {
                "values"
            };
            let f = d
                .get_field_by_name(name)
                .ok_or_else(|| Error::internal("a malformed google.protobuf.Struct"))?;
            if let Some(pv) = to_field(v, &f)? {
                out.try_set_field(&f, pv)
                    .map_err(|e| Error::internal(e.to_string()))?;
            }
        }
        ("google.protobuf.Value", v) => json_value(v, d, &mut out)?,
        ("google.protobuf.Any", v) => pack_any(v, d, &mut out)?,
        _ => return Err(Error::no_such_overload()),
    }
    Ok(out)
}

/// Sets a `google.protobuf.Value` from a JSON-like CEL value.
fn json_value(v: &Value, d: &MessageDescriptor, out: &mut DynamicMessage) -> Result<()> {
    let field = |name: &str| {
        d.get_field_by_name(name)
            .ok_or_else(|| Error::internal("a malformed google.protobuf.Value"))
    };
    // Protobuf's JSON mapping: integers beyond 2^53 (which a double cannot hold exactly),
    // bytes, timestamps, durations and field masks are strings.
    const MAX_EXACT: u64 = (1 << 53) - 1;
    let text = |s: String| ("string_value", PValue::String(s));
    let (name, pv) = match v {
        Value::Null => ("null_value", PValue::EnumNumber(0)),
        Value::Bool(b) => ("bool_value", PValue::Bool(*b)),
        Value::Int(i) if i.unsigned_abs() <= MAX_EXACT => ("number_value", PValue::F64(*i as f64)),
        Value::Int(i) => text(i.to_string()),
        Value::Uint(u) if *u <= MAX_EXACT => ("number_value", PValue::F64(*u as f64)),
        Value::Uint(u) => text(u.to_string()),
        Value::Double(x) => ("number_value", PValue::F64(*x)),
        Value::String(s) => ("string_value", PValue::String(s.to_string())),
        Value::Bytes(b) => {
            use base64::Engine as _;
            text(base64::engine::general_purpose::STANDARD.encode(b))
        }
        Value::Timestamp(_) | Value::Duration(_) => match &crate::convert::to_string(v)? {
            Value::String(s) => text(s.to_string()),
            _ => return Err(Error::no_such_overload()),
        },
        Value::Message(m) if m.type_name() == "google.protobuf.FieldMask" => {
            let paths = match &select(m, "paths")? {
                Value::List(l) => l
                    .iter()
                    .map(|p| match p {
                        Value::String(s) => s.to_string(),
                        _ => String::new(),
                    })
                    .collect::<Vec<_>>()
                    .join(","),
                _ => String::new(),
            };
            text(paths)
        }
        Value::Message(m) => {
            // Any other message: an object of its set fields, by JSON name.
            let mut fields = MapValue::new();
            for (f, _) in m.message.fields() {
                fields.insert(Key::String(f.json_name().into()), select(m, f.name())?);
            }
            return json_value(&Value::Map(Arc::new(fields)), d, out);
        }
        Value::List(_) | Value::Map(_) => {
            let (name, wkt) = if matches!(v, Value::List(_)) {
                ("list_value", "google.protobuf.ListValue")
            } else {
                ("struct_value", "google.protobuf.Struct")
            };
            let inner = d
                .parent_pool()
                .get_message_by_name(wkt)
                .ok_or_else(|| Error::internal(format!("no descriptor for {wkt}")))?;
            (name, PValue::Message(to_message(v, &inner)?))
        }
        _ => return Err(Error::no_such_overload()),
    };
    out.try_set_field(&field(name)?, pv)
        .map_err(|e| Error::internal(e.to_string()))
}

/// Sets a `google.protobuf.Any` to hold a value: a message as it is, a plain value as the
/// well-known type standing for it.
fn pack_any(v: &Value, d: &MessageDescriptor, out: &mut DynamicMessage) -> Result<()> {
    let pool = d.parent_pool();
    let wkt = match v {
        Value::Message(m) => Some(m.descriptor.clone()),
        other => {
            let name = match other {
                Value::Null => "google.protobuf.Value",
                Value::Bool(_) => "google.protobuf.BoolValue",
                Value::Int(_) => "google.protobuf.Int64Value",
                Value::Uint(_) => "google.protobuf.UInt64Value",
                Value::Double(_) => "google.protobuf.DoubleValue",
                Value::String(_) => "google.protobuf.StringValue",
                Value::Bytes(_) => "google.protobuf.BytesValue",
                Value::Timestamp(_) => "google.protobuf.Timestamp",
                Value::Duration(_) => "google.protobuf.Duration",
                Value::List(_) => "google.protobuf.ListValue",
                Value::Map(_) => "google.protobuf.Struct",
                _ => return Err(Error::no_such_overload()),
            };
            pool.get_message_by_name(name)
        }
    };
    let wkt = wkt.ok_or_else(|| Error::internal("no descriptor for a well-known type"))?;
    let payload = to_message(v, &wkt)?;
    let url = format!("type.googleapis.com/{}", wkt.full_name());
    for (name, pv) in [
        ("type_url", PValue::String(url)),
        ("value", PValue::Bytes(payload.encode_to_vec().into())),
    ] {
        let f = d
            .get_field_by_name(name)
            .ok_or_else(|| Error::internal("a malformed google.protobuf.Any"))?;
        out.try_set_field(&f, pv)
            .map_err(|e| Error::internal(e.to_string()))?;
    }
    Ok(())
}

/// Protobuf equality of two messages: the same type and equal fields (NaN is not equal to
/// itself).
pub fn equals(a: &MessageValue, b: &MessageValue) -> bool {
    messages_equal(&a.message, &b.message)
}

/// Field by field: a field that tracks presence must be set in both or neither; one that
/// does not compares its value, so a proto3 scalar set to its default equals an unset one.
fn messages_equal(a: &DynamicMessage, b: &DynamicMessage) -> bool {
    let d = a.descriptor();
    if d.full_name() != b.descriptor().full_name() {
        return false;
    }
    d.fields().all(|f| {
        let (in_a, in_b) = (a.has_field(&f), b.has_field(&f));
        if f.supports_presence() && in_a != in_b {
            return false;
        }
        (!in_a && !in_b) || proto_values_equal(&a.get_field(&f), &b.get_field(&f))
    })
}

fn proto_values_equal(a: &PValue, b: &PValue) -> bool {
    match (a, b) {
        (PValue::Message(x), PValue::Message(y)) => messages_equal(x, y),
        (PValue::List(x), PValue::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| proto_values_equal(p, q))
        }
        (PValue::Map(x), PValue::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| proto_values_equal(p, q)))
        }
        // Floating-point fields compare as numbers: NaN differs from itself.
        (x, y) => x == y,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The well-known types, compiled by protox.
    fn well_known() -> DescriptorPool {
        let mut c = protox::Compiler::new(Vec::<std::path::PathBuf>::new()).unwrap();
        c.include_imports(true);
        c.open_files([
            "google/protobuf/any.proto",
            "google/protobuf/wrappers.proto",
        ])
        .unwrap();
        c.descriptor_pool()
    }

    fn any_of(pool: &DescriptorPool, inner: &DynamicMessage) -> DynamicMessage {
        let d = pool.get_message_by_name("google.protobuf.Any").unwrap();
        let mut out = DynamicMessage::new(d.clone());
        let url = format!("type.googleapis.com/{}", inner.descriptor().full_name());
        out.set_field_by_name("type_url", PValue::String(url));
        out.set_field_by_name("value", PValue::Bytes(inner.encode_to_vec().into()));
        out
    }

    #[test]
    fn nested_any_unpacks_to_a_bound() {
        let pool = well_known();
        let wrapper = pool
            .get_message_by_name("google.protobuf.Int64Value")
            .unwrap();
        let mut m = DynamicMessage::new(wrapper);
        m.set_field_by_name("value", PValue::I64(7));
        for _ in 0..MAX_ANY_NESTING {
            m = any_of(&pool, &m);
        }
        assert!(matches!(from_message(m.clone()), Ok(Value::Int(7))));
        let err = from_message(any_of(&pool, &m)).unwrap_err();
        assert!(err.message.contains("nested more than 100 deep"), "{err}");
    }

    #[test]
    fn plain_values_round_trip_through_any() {
        let pool = well_known();
        let any = pool.get_message_by_name("google.protobuf.Any").unwrap();
        for v in [
            Value::Int(-3),
            Value::Uint(4),
            Value::Double(0.5),
            Value::Bool(true),
            Value::from("text"),
            Value::bytes(vec![1u8, 2]),
        ] {
            let packed = to_message(&v, &any).unwrap();
            let back = from_message(packed).unwrap();
            assert!(back.identical(&v), "{v:?} came back as {back:?}");
        }
    }
}
