//! Rust values in and out, through serde: any `Serialize` value becomes a CEL [`Value`]
//! ([`to_value`]) and a CEL value deserializes into any `Deserialize` type ([`from_value`]),
//! without a detour through JSON, so `u64`s stay `uint`s and bytes stay `bytes`.
//!
//! | Rust (serde's data model) | CEL |
//! | --- | --- |
//! | `bool` | `bool` |
//! | `i8`..`i64` | `int` |
//! | `u8`..`u64` | `uint` |
//! | `f32`, `f64` | `double` |
//! | `char`, `&str`, `String` | `string` |
//! | bytes (`serialize_bytes`, as `serde_bytes` does) | `bytes` |
//! | `()`, `None`, a unit struct | `null` |
//! | `Some(x)`, a newtype struct | `x` |
//! | sequences, tuples | `list` |
//! | maps (keys `bool`, integers or strings), structs | `map` |
//! | a unit variant | its name, a `string` |
//! | other variants | `{name: content}`, a one-entry `map` (as serde_json writes them) |
//!
//! Deserializing reads the same forms back, and also: `null` or an empty optional as `None`;
//! a present optional as its value; a schema-typed object as a map of its properties;
//! timestamps and durations as their CEL strings; a protobuf message as the map of its set
//! fields. `i128`/`u128` values that do not fit 64 bits, map keys of other kinds and nesting
//! deeper than [`MAX_JSON_DEPTH`] are errors.

use std::fmt;

use cel_runtime::{Key, MapValue, Value};
use serde::de::{self, IntoDeserializer};
use serde::ser::{self, Serialize};

use crate::json::MAX_JSON_DEPTH;

/// Why a Rust value could not become a CEL value, or the reverse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SerdeError(String);

impl fmt::Display for SerdeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SerdeError {}

impl ser::Error for SerdeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerdeError(msg.to_string())
    }
}

impl de::Error for SerdeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerdeError(msg.to_string())
    }
}

/// Converts any `Serialize` value into a CEL value (see the module's table).
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, SerdeError> {
    value.serialize(ValueSerializer { depth: 0 })
}

/// Deserializes a CEL value into any `Deserialize` type (see the module's table); strings
/// and bytes may be borrowed from `value`.
pub fn from_value<'de, T: de::Deserialize<'de>>(value: &'de Value) -> Result<T, SerdeError> {
    T::deserialize(ValueDeserializer { value, depth: 0 })
}

fn too_deep() -> SerdeError {
    SerdeError(format!("value nested deeper than {MAX_JSON_DEPTH} levels"))
}

/// Serializes one level of a value; nested values get `depth + 1`.
#[derive(Clone, Copy)]
struct ValueSerializer {
    depth: usize,
}

impl ValueSerializer {
    /// The serializer of a nested value, or an error past the depth limit.
    fn nested(self) -> Result<ValueSerializer, SerdeError> {
        if self.depth >= MAX_JSON_DEPTH {
            return Err(too_deep());
        }
        Ok(ValueSerializer {
            depth: self.depth + 1,
        })
    }

    /// Serializes `value` one level down, growing the stack if it runs low (a `Serialize`
    /// implementation recurses with the data).
    fn child<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, SerdeError> {
        let inner = self.nested()?;
        cel_syntax::stack::guarded(|| value.serialize(inner))
    }
}

/// One-entry map `{name: content}`, serde_json's form of a variant with content.
fn variant(name: &str, content: Value) -> Value {
    Value::map([(Key::String(name.into()), content)])
}

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = SerdeError;
    type SerializeSeq = SeqBuilder;
    type SerializeTuple = SeqBuilder;
    type SerializeTupleStruct = SeqBuilder;
    type SerializeTupleVariant = SeqBuilder;
    type SerializeMap = MapBuilder;
    type SerializeStruct = MapBuilder;
    type SerializeStructVariant = MapBuilder;

    fn serialize_bool(self, v: bool) -> Result<Value, SerdeError> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, SerdeError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, SerdeError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, SerdeError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, SerdeError> {
        Ok(Value::Int(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, SerdeError> {
        i64::try_from(v)
            .map(Value::Int)
            .map_err(|_| SerdeError(format!("{v} does not fit an int")))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, SerdeError> {
        Ok(Value::Uint(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, SerdeError> {
        Ok(Value::Uint(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, SerdeError> {
        Ok(Value::Uint(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, SerdeError> {
        Ok(Value::Uint(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, SerdeError> {
        u64::try_from(v)
            .map(Value::Uint)
            .map_err(|_| SerdeError(format!("{v} does not fit a uint")))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, SerdeError> {
        Ok(Value::Double(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, SerdeError> {
        Ok(Value::Double(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, SerdeError> {
        Ok(Value::from(v.to_string().as_str()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, SerdeError> {
        Ok(Value::from(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, SerdeError> {
        Ok(Value::Bytes(v.into()))
    }
    fn serialize_none(self) -> Result<Value, SerdeError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, SerdeError> {
        cel_syntax::stack::guarded(|| value.serialize(self))
    }
    fn serialize_unit(self) -> Result<Value, SerdeError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, SerdeError> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, SerdeError> {
        Ok(Value::from(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, SerdeError> {
        cel_syntax::stack::guarded(|| value.serialize(self))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        value: &T,
    ) -> Result<Value, SerdeError> {
        Ok(variant(name, self.child(value)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder, SerdeError> {
        Ok(SeqBuilder::new(self, None, len))
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder, SerdeError> {
        Ok(SeqBuilder::new(self, None, Some(len)))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SeqBuilder, SerdeError> {
        Ok(SeqBuilder::new(self, None, Some(len)))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        len: usize,
    ) -> Result<SeqBuilder, SerdeError> {
        Ok(SeqBuilder::new(self, Some(name), Some(len)))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapBuilder, SerdeError> {
        Ok(MapBuilder::new(self, None))
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<MapBuilder, SerdeError> {
        Ok(MapBuilder::new(self, None))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        _len: usize,
    ) -> Result<MapBuilder, SerdeError> {
        Ok(MapBuilder::new(self, Some(name)))
    }
}

/// Builds a list: a sequence, a tuple, or a tuple variant's content (`variant` is its name).
struct SeqBuilder {
    at: ValueSerializer,
    variant: Option<&'static str>,
    items: Vec<Value>,
}

impl SeqBuilder {
    fn new(at: ValueSerializer, variant: Option<&'static str>, len: Option<usize>) -> SeqBuilder {
        // The length is the caller's claim: reserve only a little ahead of the data.
        let items = Vec::with_capacity(len.unwrap_or(0).min(1024));
        SeqBuilder { at, variant, items }
    }

    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        self.items.push(self.at.child(value)?);
        Ok(())
    }

    fn finish(self) -> Result<Value, SerdeError> {
        let list = Value::list(self.items);
        Ok(match self.variant {
            Some(name) => variant(name, list),
            None => list,
        })
    }
}

/// The four ways serde hands over a list's elements, all to [`SeqBuilder::push`].
macro_rules! seq_builder {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for SeqBuilder {
            type Ok = Value;
            type Error = SerdeError;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
                self.push(value)
            }
            fn end(self) -> Result<Value, SerdeError> {
                self.finish()
            }
        }
    )*};
}

seq_builder!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// Builds a map: a map, a struct, or a struct variant's content (`variant` is its name).
struct MapBuilder {
    at: ValueSerializer,
    variant: Option<&'static str>,
    map: MapValue,
    key: Option<Key>,
}

impl MapBuilder {
    fn new(at: ValueSerializer, variant: Option<&'static str>) -> MapBuilder {
        MapBuilder {
            at,
            variant,
            map: MapValue::new(),
            key: None,
        }
    }

    fn entry<T: Serialize + ?Sized>(&mut self, key: Key, value: &T) -> Result<(), SerdeError> {
        let value = self.at.child(value)?;
        self.map.insert(key, value);
        Ok(())
    }

    fn finish(self) -> Result<Value, SerdeError> {
        let map = Value::Map(self.map.into());
        Ok(match self.variant {
            Some(name) => variant(name, map),
            None => map,
        })
    }
}

impl ser::SerializeMap for MapBuilder {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerdeError> {
        self.key = Some(map_key(&key.serialize(self.at.nested()?)?)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerdeError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| SerdeError("a map value without its key".into()))?;
        self.entry(key, value)
    }
    fn end(self) -> Result<Value, SerdeError> {
        self.finish()
    }
}

/// A struct's fields and a struct variant's, both to [`MapBuilder::entry`].
macro_rules! struct_builder {
    ($($trait:ident),*) => {$(
        impl ser::$trait for MapBuilder {
            type Ok = Value;
            type Error = SerdeError;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                name: &'static str,
                value: &T,
            ) -> Result<(), SerdeError> {
                self.entry(Key::String(name.into()), value)
            }
            fn end(self) -> Result<Value, SerdeError> {
                self.finish()
            }
        }
    )*};
}

struct_builder!(SerializeStruct, SerializeStructVariant);

/// A serialized map key as a CEL map key: `bool`, `int`, `uint` or `string`.
fn map_key(v: &Value) -> Result<Key, SerdeError> {
    Ok(match v {
        Value::Bool(b) => Key::Bool(*b),
        Value::Int(i) => Key::Int(*i),
        Value::Uint(u) => Key::Uint(*u),
        Value::String(s) => Key::String(s.clone()),
        other => {
            return Err(SerdeError(format!(
                "map keys must be bool, int, uint or string, not {}",
                other.type_name()
            )));
        }
    })
}

/// Deserializes one value; nested values get `depth + 1`.
#[derive(Clone, Copy)]
struct ValueDeserializer<'de> {
    value: &'de Value,
    depth: usize,
}

impl<'de> ValueDeserializer<'de> {
    /// The deserializer of a value nested in this one.
    fn child(&self, value: &'de Value) -> Result<ValueDeserializer<'de>, SerdeError> {
        if self.depth >= MAX_JSON_DEPTH {
            return Err(too_deep());
        }
        Ok(ValueDeserializer {
            value,
            depth: self.depth + 1,
        })
    }

    /// What a value without a serde form of its own reads as: its CEL text, or its JSON
    /// (a message: the fields that are set).
    fn visit_converted<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self.value {
            Value::Message(_) => {
                let json = crate::json::value_to_json(self.value).map_err(|e| SerdeError(e.0))?;
                de::Deserializer::deserialize_any(json, visitor)
                    .map_err(|e| SerdeError(e.to_string()))
            }
            Value::Type(t) => visitor.visit_string(t.runtime_name().to_string()),
            Value::Opaque(_) => {
                visitor.visit_string(cel_runtime::format::to_cel_literal(self.value))
            }
            // Timestamps and durations: their CEL strings (`2024-01-02T03:04:05Z`, `1.5s`).
            other => match cel_runtime::convert::to_string(other) {
                Ok(Value::String(ref s)) => visitor.visit_string(s.to_string()),
                _ => Err(SerdeError(format!(
                    "a {} cannot be deserialized",
                    other.type_name()
                ))),
            },
        }
    }
}

impl<'de> de::Deserializer<'de> for ValueDeserializer<'de> {
    type Error = SerdeError;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self.value {
            Value::Null | Value::Optional(None) => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Int(i) => visitor.visit_i64(*i),
            Value::Uint(u) => visitor.visit_u64(*u),
            Value::Double(d) => visitor.visit_f64(*d),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Bytes(b) => visitor.visit_borrowed_bytes(b),
            Value::Optional(Some(inner)) => self.child(inner)?.deserialize_any(visitor),
            Value::List(items) => visitor.visit_seq(SeqReader {
                at: self,
                items: items.iter(),
            }),
            Value::Map(m) => visitor.visit_map(MapReader {
                at: self,
                entries: Box::new(m.iter().map(|(k, v)| (KeyRead::Key(k), v))),
                value: None,
            }),
            Value::Object(o) => visitor.visit_map(MapReader {
                at: self,
                entries: Box::new(o.data_entries().map(|(k, v)| (KeyRead::Str(k), v))),
                value: None,
            }),
            _ => self.visit_converted(visitor),
        }
    }

    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, SerdeError> {
        match self.value {
            Value::Null | Value::Optional(None) => visitor.visit_none(),
            Value::Optional(Some(inner)) => visitor.visit_some(self.child(inner)?),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        match self.value {
            Value::String(s) => {
                visitor.visit_enum(IntoDeserializer::<SerdeError>::into_deserializer(&**s))
            }
            Value::Map(m) if m.len() == 1 => {
                let Some((Key::String(name), content)) = m.iter().next() else {
                    return Err(SerdeError("a variant's name must be a string".into()));
                };
                visitor.visit_enum(VariantReader {
                    name,
                    content: self.child(content)?,
                })
            }
            other => Err(SerdeError(format!(
                "an enum is a string or a one-entry map, not {}",
                other.type_name()
            ))),
        }
    }

    fn is_human_readable(&self) -> bool {
        true
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// A list's elements.
struct SeqReader<'de> {
    at: ValueDeserializer<'de>,
    items: std::slice::Iter<'de, Value>,
}

impl<'de> de::SeqAccess<'de> for SeqReader<'de> {
    type Error = SerdeError;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, SerdeError> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let item = self.at.child(item)?;
        cel_syntax::stack::guarded(|| seed.deserialize(item)).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// A map key as read: a CEL key, or an object's property name.
enum KeyRead<'de> {
    Key(&'de Key),
    Str(&'de str),
}

/// A map's (or an object's) entries.
struct MapReader<'de> {
    at: ValueDeserializer<'de>,
    entries: Box<dyn Iterator<Item = (KeyRead<'de>, &'de Value)> + 'de>,
    value: Option<&'de Value>,
}

impl<'de> de::MapAccess<'de> for MapReader<'de> {
    type Error = SerdeError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, SerdeError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        match key {
            KeyRead::Str(s) => seed.deserialize(s.into_deserializer()).map(Some),
            KeyRead::Key(Key::String(s)) => seed.deserialize((&**s).into_deserializer()).map(Some),
            KeyRead::Key(Key::Bool(b)) => seed.deserialize((*b).into_deserializer()).map(Some),
            KeyRead::Key(Key::Int(i)) => seed.deserialize((*i).into_deserializer()).map(Some),
            KeyRead::Key(Key::Uint(u)) => seed.deserialize((*u).into_deserializer()).map(Some),
        }
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, SerdeError> {
        let value = self
            .value
            .take()
            .ok_or_else(|| SerdeError("a map value read before its key".into()))?;
        let value = self.at.child(value)?;
        cel_syntax::stack::guarded(|| seed.deserialize(value))
    }
}

/// A variant with content: `{name: content}`.
struct VariantReader<'de> {
    name: &'de str,
    content: ValueDeserializer<'de>,
}

impl<'de> de::EnumAccess<'de> for VariantReader<'de> {
    type Error = SerdeError;
    type Variant = ValueDeserializer<'de>;

    fn variant_seed<V: de::DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, ValueDeserializer<'de>), SerdeError> {
        let name = seed.deserialize(self.name.into_deserializer())?;
        Ok((name, self.content))
    }
}

impl<'de> de::VariantAccess<'de> for ValueDeserializer<'de> {
    type Error = SerdeError;

    fn unit_variant(self) -> Result<(), SerdeError> {
        de::Deserialize::deserialize(self)
    }

    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, SerdeError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: de::Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: de::Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, SerdeError> {
        de::Deserializer::deserialize_map(self, visitor)
    }
}
