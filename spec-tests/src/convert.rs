//! Conversion of cel-spec's protobuf messages into Celerity's own types.
//!
//! This module owns the mapping from `cel.expr.Value` to [`cel_runtime::Value`], from
//! `cel.expr.Type` to [`cel_types::Type`] and from `cel.expr.Decl` to our declarations, all
//! read from [`DynamicMessage`]s by field name (no generated code). It also unpacks the
//! well-known types found in `google.protobuf.Any` the way cel-go does.
//!
//! Nothing here panics on malformed or unexpected data: whatever cannot be represented comes
//! back as an [`Unsupported`] reason, which the loader attaches to the one case concerned.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use cel_runtime::{Key, Value};
use cel_types::{FunctionDecl, OverloadDecl, Primitive, Type, VariableDecl};
use prost_reflect::{DynamicMessage, FieldDescriptor, ReflectMessage, Value as PValue};

/// Why a piece of test data could not be converted into Celerity's types.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unsupported(pub String);

impl Unsupported {
    /// An unsupported conversion with a reason.
    pub fn new(reason: impl Into<String>) -> Unsupported {
        Unsupported(reason.into())
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The result of converting one piece of test data.
pub type Converted<T> = Result<T, Unsupported>;

/// A declaration from a test's `type_env`.
#[derive(Clone, Debug, PartialEq)]
pub enum Decl {
    /// An identifier declaration (`cel.expr.Decl.IdentDecl`).
    Variable(VariableDecl),
    /// A function declaration with its overloads (`cel.expr.Decl.FunctionDecl`).
    Function(FunctionDecl),
    /// A declaration that could not be converted; the case cannot be checked faithfully.
    Unsupported {
        /// The declared name.
        name: String,
        /// Why it could not be converted.
        reason: Unsupported,
    },
}

impl Decl {
    /// The declared name.
    pub fn name(&self) -> &str {
        match self {
            Decl::Variable(v) => &v.name,
            Decl::Function(f) => &f.name,
            Decl::Unsupported { name, .. } => name,
        }
    }
}

// Nesting bound for values and types. Protobuf itself limits messages to 100 levels; the
// bound keeps a hostile `Any` chain from recursing without end.
const MAX_DEPTH: usize = 100;

// ---------------------------------------------------------------------------------------
// Field access helpers: every mismatch becomes an `Unsupported`, never a panic.

fn mismatch(msg: &DynamicMessage, field: &str, expected: &str, got: &PValue) -> Unsupported {
    Unsupported(format!(
        "{}.{field}: expected {expected}, found {got:?}",
        msg.descriptor().full_name()
    ))
}

/// The value of a field by name (its default when unset).
pub(crate) fn get<'a>(msg: &'a DynamicMessage, field: &str) -> Converted<Cow<'a, PValue>> {
    msg.get_field_by_name(field).ok_or_else(|| {
        Unsupported(format!(
            "{} has no field `{field}`",
            msg.descriptor().full_name()
        ))
    })
}

/// Whether a field is present (set, for fields with presence).
pub(crate) fn has(msg: &DynamicMessage, field: &str) -> bool {
    msg.has_field_by_name(field)
}

/// A string field; missing or mistyped fields read as empty, for the loader's plain metadata.
pub(crate) fn string_or_empty(msg: &DynamicMessage, field: &str) -> String {
    match msg.get_field_by_name(field).as_deref() {
        Some(PValue::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// A bool field; missing or mistyped fields read as false.
pub(crate) fn bool_or_false(msg: &DynamicMessage, field: &str) -> bool {
    matches!(
        msg.get_field_by_name(field).as_deref(),
        Some(PValue::Bool(true))
    )
}

/// A repeated message field's elements.
pub(crate) fn messages<'a>(
    msg: &'a DynamicMessage,
    field: &str,
) -> Converted<Vec<Cow<'a, DynamicMessage>>> {
    match get(msg, field)? {
        Cow::Borrowed(PValue::List(items)) => items
            .iter()
            .map(|v| match v {
                PValue::Message(m) => Ok(Cow::Borrowed(m)),
                other => Err(mismatch(msg, field, "a message", other)),
            })
            .collect(),
        Cow::Owned(PValue::List(items)) => items
            .into_iter()
            .map(|v| match v {
                PValue::Message(m) => Ok(Cow::Owned(m)),
                other => Err(mismatch(msg, field, "a message", &other)),
            })
            .collect(),
        other => Err(mismatch(msg, field, "a repeated field", &other)),
    }
}

/// A singular message field (its default instance when unset).
pub(crate) fn message<'a>(
    msg: &'a DynamicMessage,
    field: &str,
) -> Converted<Cow<'a, DynamicMessage>> {
    match get(msg, field)? {
        Cow::Borrowed(PValue::Message(m)) => Ok(Cow::Borrowed(m)),
        Cow::Owned(PValue::Message(m)) => Ok(Cow::Owned(m)),
        other => Err(mismatch(msg, field, "a message", &other)),
    }
}

/// The member of a oneof that is set, if any, with its value.
pub(crate) fn oneof<'a>(
    msg: &'a DynamicMessage,
    oneof: &str,
) -> Option<(FieldDescriptor, Cow<'a, PValue>)> {
    let desc = msg.descriptor();
    let group = desc.oneofs().find(|o| o.name() == oneof)?;
    let field = group.fields().find(|f| msg.has_field(f))?;
    let value = msg.get_field(&field);
    Some((field, value))
}

fn string_field(msg: &DynamicMessage, field: &str) -> Converted<String> {
    match get(msg, field)?.as_ref() {
        PValue::String(s) => Ok(s.clone()),
        other => Err(mismatch(msg, field, "a string", other)),
    }
}

// ---------------------------------------------------------------------------------------
// Values.

/// Converts a `cel.expr.Value` into a runtime value.
///
/// Enum values become `int`s (what cel-go does for legacy enums; the enum's type name is
/// dropped). `object_value` holds a `google.protobuf.Any`, whose well-known payloads are
/// unpacked (see [`value_from_message`]); other message payloads are message values.
pub fn value_from_proto(msg: &DynamicMessage) -> Converted<Value> {
    value_at(msg, 0)
}

fn value_at(msg: &DynamicMessage, depth: usize) -> Converted<Value> {
    if depth > MAX_DEPTH {
        return Err(Unsupported::new("value nested too deeply"));
    }
    let Some((field, v)) = oneof(msg, "kind") else {
        return Err(Unsupported::new("cel.expr.Value with no kind set"));
    };
    let name = field.name();
    match (name, v.as_ref()) {
        // The field is the enum google.protobuf.NullValue, which has a single member.
        ("null_value", _) => Ok(Value::Null),
        ("bool_value", PValue::Bool(b)) => Ok(Value::Bool(*b)),
        ("int64_value", PValue::I64(i)) => Ok(Value::Int(*i)),
        ("uint64_value", PValue::U64(u)) => Ok(Value::Uint(*u)),
        ("double_value", PValue::F64(d)) => Ok(Value::Double(*d)),
        ("string_value", PValue::String(s)) => Ok(Value::string(s.as_str())),
        ("bytes_value", PValue::Bytes(b)) => Ok(Value::bytes(b.to_vec())),
        ("enum_value", PValue::Message(e)) => match get(e, "value")?.as_ref() {
            PValue::I32(n) => Ok(Value::Int(i64::from(*n))),
            other => Err(mismatch(e, "value", "an int32", other)),
        },
        ("object_value", PValue::Message(any)) => unpack_any(any, depth + 1),
        ("map_value", PValue::Message(m)) => {
            let mut entries = Vec::new();
            for entry in messages(m, "entries")? {
                let key = value_at(&*message(&entry, "key")?, depth + 1)?;
                let key = Key::from_value(&key)
                    .ok_or_else(|| Unsupported(format!("map key of type {}", key.type_name())))?;
                let value = value_at(&*message(&entry, "value")?, depth + 1)?;
                entries.push((key, value));
            }
            Ok(Value::map(entries))
        }
        ("list_value", PValue::Message(l)) => {
            let items = messages(l, "values")?
                .iter()
                .map(|item| value_at(item, depth + 1))
                .collect::<Converted<Vec<_>>>()?;
            Ok(Value::list(items))
        }
        ("type_value", PValue::String(t)) => Ok(Value::Type(Arc::new(type_from_name(t)))),
        (_, other) => Err(Unsupported(format!(
            "cel.expr.Value.{name} with unexpected content {other:?}"
        ))),
    }
}

/// The type a type value's name denotes, as `type(x)` would produce it at run time.
///
/// `list` and `map` carry `dyn` parameters, as [`Value::type_of`] builds them; the bare
/// `type` is `Type::Type(None)`. Names that are not CEL's own (message and enum names,
/// `google.protobuf.Any`, ...) become [`Type::Message`].
pub fn type_from_name(name: &str) -> Type {
    match name {
        "dyn" => Type::Dyn,
        "null_type" => Type::Null,
        "bool" => Type::Bool,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "type" => Type::Type(None),
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "optional_type" => Type::optional(Type::Dyn),
        "google.protobuf.Timestamp" => Type::Timestamp,
        "google.protobuf.Duration" => Type::Duration,
        "google.protobuf.BoolValue" => Type::Wrapper(Primitive::Bool),
        "google.protobuf.Int64Value" | "google.protobuf.Int32Value" => {
            Type::Wrapper(Primitive::Int)
        }
        "google.protobuf.UInt64Value" | "google.protobuf.UInt32Value" => {
            Type::Wrapper(Primitive::Uint)
        }
        "google.protobuf.DoubleValue" | "google.protobuf.FloatValue" => {
            Type::Wrapper(Primitive::Double)
        }
        "google.protobuf.StringValue" => Type::Wrapper(Primitive::String),
        "google.protobuf.BytesValue" => Type::Wrapper(Primitive::Bytes),
        other => Type::message(other),
    }
}

/// Unpacks a `google.protobuf.Any` with the runtime's own conversion
/// ([`cel_runtime::proto::from_message`]), which decodes the payload with the descriptor pool
/// the `Any` came from.
pub fn unpack_any(any: &DynamicMessage, depth: usize) -> Converted<Value> {
    if depth > MAX_DEPTH {
        return Err(Unsupported::new("value nested too deeply"));
    }
    value_from_message(any)
}

/// Converts a protobuf message into a CEL value as the runtime does
/// ([`cel_runtime::proto::from_message`]): the well-known types to the plain values CEL makes
/// of them, any other message (`google.protobuf.Empty` included) to a message value.
pub fn value_from_message(msg: &DynamicMessage) -> Converted<Value> {
    cel_runtime::proto::from_message(msg.clone()).map_err(|e| Unsupported(e.message))
}

// ---------------------------------------------------------------------------------------
// Types.

/// Converts a `cel.expr.Type` into a checker type.
///
/// Function types are unsupported (Celerity has no function-typed values). A `type` whose
/// inner type has no kind set is the bare `type`. An abstract type named `optional_type`
/// with one parameter is [`Type::optional`]; other abstract types are [`Type::Opaque`].
pub fn type_from_proto(msg: &DynamicMessage) -> Converted<Type> {
    type_at(msg, 0)
}

fn type_at(msg: &DynamicMessage, depth: usize) -> Converted<Type> {
    if depth > MAX_DEPTH {
        return Err(Unsupported::new("type nested too deeply"));
    }
    let Some((field, v)) = oneof(msg, "type_kind") else {
        return Err(Unsupported::new("cel.expr.Type with no kind set"));
    };
    let name = field.name();
    match (name, v.as_ref()) {
        ("dyn", _) => Ok(Type::Dyn),
        ("null", _) => Ok(Type::Null),
        ("error", _) => Ok(Type::Error),
        ("primitive", PValue::EnumNumber(n)) => Ok(primitive(*n)?.as_type()),
        ("wrapper", PValue::EnumNumber(n)) => Ok(Type::Wrapper(primitive(*n)?)),
        ("well_known", PValue::EnumNumber(n)) => match n {
            1 => Ok(Type::Any),
            2 => Ok(Type::Timestamp),
            3 => Ok(Type::Duration),
            other => Err(Unsupported(format!("well-known type number {other}"))),
        },
        ("list_type", PValue::Message(l)) => {
            if !has(l, "elem_type") {
                return Err(Unsupported::new("list type without an element type"));
            }
            Ok(Type::list(type_at(&*message(l, "elem_type")?, depth + 1)?))
        }
        ("map_type", PValue::Message(m)) => {
            if !has(m, "key_type") || !has(m, "value_type") {
                return Err(Unsupported::new("map type without key or value type"));
            }
            let k = type_at(&*message(m, "key_type")?, depth + 1)?;
            let v = type_at(&*message(m, "value_type")?, depth + 1)?;
            Ok(Type::map(k, v))
        }
        ("function", _) => Err(Unsupported::new("function types")),
        ("message_type", PValue::String(n)) => {
            Ok(Type::well_known(n).unwrap_or_else(|| Type::message(n)))
        }
        ("type_param", PValue::String(n)) => Ok(Type::param(n)),
        ("type", PValue::Message(inner)) => {
            if oneof(inner, "type_kind").is_none() {
                Ok(Type::Type(None))
            } else {
                Ok(Type::type_of(type_at(inner, depth + 1)?))
            }
        }
        ("abstract_type", PValue::Message(a)) => {
            let name = string_field(a, "name")?;
            let mut params = messages(a, "parameter_types")?
                .iter()
                .map(|p| type_at(p, depth + 1))
                .collect::<Converted<Vec<_>>>()?;
            if name == cel_types::OPTIONAL_TYPE_NAME
                && params.len() == 1
                && let Some(param) = params.pop()
            {
                Ok(Type::optional(param))
            } else {
                Ok(Type::Opaque(name.into(), params.into()))
            }
        }
        (_, other) => Err(Unsupported(format!(
            "cel.expr.Type.{name} with unexpected content {other:?}"
        ))),
    }
}

fn primitive(n: i32) -> Converted<Primitive> {
    // Numbers from cel.expr.Type.PrimitiveType.
    Ok(match n {
        1 => Primitive::Bool,
        2 => Primitive::Int,
        3 => Primitive::Uint,
        4 => Primitive::Double,
        5 => Primitive::String,
        6 => Primitive::Bytes,
        other => return Err(Unsupported(format!("primitive type number {other}"))),
    })
}

// ---------------------------------------------------------------------------------------
// Declarations.

/// Converts a `cel.expr.Decl` into a declaration; failures become [`Decl::Unsupported`].
///
/// An identifier's constant `value` is ignored (no conformance test uses it). An overload's
/// declared `type_params` are not kept: [`OverloadDecl`] derives them from the signature.
pub fn decl_from_proto(msg: &DynamicMessage) -> Decl {
    let name = string_or_empty(msg, "name");
    match convert_decl(msg, &name) {
        Ok(decl) => decl,
        Err(reason) => Decl::Unsupported { name, reason },
    }
}

fn convert_decl(msg: &DynamicMessage, name: &str) -> Converted<Decl> {
    let Some((field, v)) = oneof(msg, "decl_kind") else {
        return Err(Unsupported::new("declaration with no kind set"));
    };
    let PValue::Message(body) = v.as_ref() else {
        return Err(mismatch(msg, field.name(), "a message", v.as_ref()));
    };
    match field.name() {
        "ident" => {
            if !has(body, "type") {
                return Err(Unsupported::new("identifier declaration without a type"));
            }
            let ty = type_from_proto(&*message(body, "type")?)?;
            Ok(Decl::Variable(VariableDecl::new(name, ty)))
        }
        "function" => {
            let mut overloads = Vec::new();
            for o in messages(body, "overloads")? {
                let params = messages(&o, "params")?
                    .iter()
                    .map(|p| type_from_proto(p))
                    .collect::<Converted<Vec<_>>>()?;
                if !has(&o, "result_type") {
                    return Err(Unsupported::new("overload without a result type"));
                }
                let result = type_from_proto(&*message(&o, "result_type")?)?;
                let id = string_or_empty(&o, "overload_id");
                overloads.push(if bool_or_false(&o, "is_instance_function") {
                    OverloadDecl::member(&id, params, result)
                } else {
                    OverloadDecl::global(&id, params, result)
                });
            }
            Ok(Decl::Function(FunctionDecl::new(name, overloads)))
        }
        other => Err(Unsupported(format!("declaration kind {other}"))),
    }
}
