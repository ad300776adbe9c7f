//! CEL types as the checker sees them.

use std::fmt;
use std::sync::Arc;

/// The primitive types a protobuf wrapper type (`google.protobuf.Int64Value`, ...) can wrap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Primitive {
    /// `bool`, wrapped by `google.protobuf.BoolValue`.
    Bool,
    /// `int`, wrapped by `google.protobuf.Int64Value` and `Int32Value`.
    Int,
    /// `uint`, wrapped by `google.protobuf.UInt64Value` and `UInt32Value`.
    Uint,
    /// `double`, wrapped by `google.protobuf.DoubleValue` and `FloatValue`.
    Double,
    /// `string`, wrapped by `google.protobuf.StringValue`.
    String,
    /// `bytes`, wrapped by `google.protobuf.BytesValue`.
    Bytes,
}

impl Primitive {
    /// The primitive a type is (`int` is [`Primitive::Int`]); `None` for other types.
    pub fn of(t: &Type) -> Option<Primitive> {
        Some(match t {
            Type::Bool => Primitive::Bool,
            Type::Int => Primitive::Int,
            Type::Uint => Primitive::Uint,
            Type::Double => Primitive::Double,
            Type::String => Primitive::String,
            Type::Bytes => Primitive::Bytes,
            _ => return None,
        })
    }

    /// The unwrapped type.
    pub fn as_type(self) -> Type {
        match self {
            Primitive::Bool => Type::Bool,
            Primitive::Int => Type::Int,
            Primitive::Uint => Type::Uint,
            Primitive::Double => Type::Double,
            Primitive::String => Type::String,
            Primitive::Bytes => Type::Bytes,
        }
    }

    /// The name of the type, as CEL writes it.
    pub fn name(self) -> &'static str {
        match self {
            Primitive::Bool => "bool",
            Primitive::Int => "int",
            Primitive::Uint => "uint",
            Primitive::Double => "double",
            Primitive::String => "string",
            Primitive::Bytes => "bytes",
        }
    }
}

/// A CEL type.
///
/// Cheap to clone: parameters are shared behind [`Arc`].
///
/// Comparing, hashing and printing a type cannot overflow the stack, however deep
/// the type (`list(list(...))` of a deeply nested literal): they recurse under
/// [`crate::stack::guarded`].
#[derive(Clone)]
pub enum Type {
    /// `dyn`: any value; switches off static type agreement.
    Dyn,
    /// `google.protobuf.Any`.
    Any,
    /// `null_type`.
    Null,
    /// `bool`.
    Bool,
    /// `int` (64-bit signed).
    Int,
    /// `uint` (64-bit unsigned).
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// `google.protobuf.Duration`.
    Duration,
    /// The type of an expression that failed to check.
    Error,
    /// `list(T)`.
    List(Arc<Type>),
    /// `map(K, V)`.
    Map(Arc<Type>, Arc<Type>),
    /// `type(T)`: the type of a type value. `Type(None)` is the bare `type`.
    Type(Option<Arc<Type>>),
    /// A protobuf wrapper type: the primitive or `null`.
    Wrapper(Primitive),
    /// A protobuf message (or other struct) type, by its fully qualified name.
    Message(Arc<str>),
    /// An opaque type provided by a library (`optional_type(T)`, `net.IP`, `kubernetes.Quantity`).
    Opaque(Arc<str>, Arc<[Type]>),
    /// A type parameter of an overload (`A` in `list(A)`).
    TypeParam(Arc<str>),
}

/// The name of the optional type.
pub const OPTIONAL_TYPE_NAME: &str = "optional_type";

impl Type {
    /// `list(elem)`.
    pub fn list(elem: Type) -> Type {
        Type::List(Arc::new(elem))
    }

    /// `map(key, value)`.
    pub fn map(key: Type, value: Type) -> Type {
        Type::Map(Arc::new(key), Arc::new(value))
    }

    /// `type(t)`.
    pub fn type_of(t: Type) -> Type {
        Type::Type(Some(Arc::new(t)))
    }

    /// `optional_type(t)`.
    pub fn optional(t: Type) -> Type {
        Type::Opaque(OPTIONAL_TYPE_NAME.into(), Arc::from(vec![t]))
    }

    /// An opaque type without parameters (`net.IP`).
    pub fn opaque(name: &str) -> Type {
        Type::Opaque(name.into(), Arc::from(Vec::new()))
    }

    /// A type parameter.
    pub fn param(name: &str) -> Type {
        Type::TypeParam(name.into())
    }

    /// A message type.
    pub fn message(name: &str) -> Type {
        Type::Message(name.into())
    }

    /// The element type of `optional_type(T)`.
    pub fn optional_elem(&self) -> Option<&Type> {
        match self {
            Type::Opaque(name, params) if &**name == OPTIONAL_TYPE_NAME && params.len() == 1 => {
                Some(&params[0])
            }
            _ => None,
        }
    }

    /// Whether this is `dyn`, `any` (`google.protobuf.Any`, which cel-go treats as `dyn`) or
    /// `error`: the types that agree with everything.
    pub fn is_dyn_or_error(&self) -> bool {
        matches!(self, Type::Dyn | Type::Any | Type::Error)
    }

    /// Whether anything in the type is left to run time (`dyn`, `any`, `error` or a type
    /// parameter, anywhere in it): calls with arguments of such types dispatch on the values,
    /// in the interpreter and in native code alike.
    pub fn is_dynamic(&self) -> bool {
        crate::stack::guarded(|| match self {
            Type::Dyn | Type::Error | Type::Any | Type::TypeParam(_) => true,
            other => other.params().into_iter().any(Type::is_dynamic),
        })
    }

    /// Whether the type contains a type parameter anywhere.
    pub fn has_type_params(&self) -> bool {
        crate::stack::guarded(|| match self {
            Type::TypeParam(_) => true,
            Type::List(e) => e.has_type_params(),
            Type::Map(k, v) => k.has_type_params() || v.has_type_params(),
            Type::Type(Some(t)) => t.has_type_params(),
            Type::Opaque(_, ps) => ps.iter().any(Type::has_type_params),
            _ => false,
        })
    }

    /// The parameters of a parameterised type, in order.
    pub fn params(&self) -> Vec<&Type> {
        match self {
            Type::List(e) => vec![e],
            Type::Map(k, v) => vec![k, v],
            Type::Type(Some(t)) => vec![t],
            Type::Opaque(_, ps) => ps.iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The name a type value of this type has at run time: `int`, `list`, `map`, `type`,
    /// `google.protobuf.Timestamp`, the message name, the opaque name. Parameters are dropped,
    /// as cel-go drops them (`type([1]) == list`).
    pub fn runtime_name(&self) -> &str {
        match self {
            Type::Dyn => "dyn",
            Type::Any => "google.protobuf.Any",
            Type::Null => "null_type",
            Type::Bool => "bool",
            Type::Int => "int",
            Type::Uint => "uint",
            Type::Double => "double",
            Type::String => "string",
            Type::Bytes => "bytes",
            Type::Timestamp => "google.protobuf.Timestamp",
            Type::Duration => "google.protobuf.Duration",
            Type::Error => "*error*",
            Type::List(_) => "list",
            Type::Map(_, _) => "map",
            Type::Type(_) => "type",
            Type::Wrapper(p) => match p {
                Primitive::Bool => "google.protobuf.BoolValue",
                Primitive::Int => "google.protobuf.Int64Value",
                Primitive::Uint => "google.protobuf.UInt64Value",
                Primitive::Double => "google.protobuf.DoubleValue",
                Primitive::String => "google.protobuf.StringValue",
                Primitive::Bytes => "google.protobuf.BytesValue",
            },
            Type::Message(name) => name,
            Type::Opaque(name, _) => name,
            Type::TypeParam(name) => name,
        }
    }

    /// Replaces type parameters by `f(name)` where it returns a type.
    pub fn substitute(&self, f: &dyn Fn(&str) -> Option<Type>) -> Type {
        if !self.has_type_params() {
            return self.clone();
        }
        crate::stack::guarded(|| self.substitute_params(f))
    }

    fn substitute_params(&self, f: &dyn Fn(&str) -> Option<Type>) -> Type {
        match self {
            Type::TypeParam(name) => f(name).unwrap_or_else(|| self.clone()),
            Type::List(e) => Type::list(e.substitute(f)),
            Type::Map(k, v) => Type::map(k.substitute(f), v.substitute(f)),
            Type::Type(Some(t)) => Type::type_of(t.substitute(f)),
            Type::Opaque(name, ps) => Type::Opaque(
                name.clone(),
                ps.iter()
                    .map(|p| p.substitute(f))
                    .collect::<Vec<_>>()
                    .into(),
            ),
            other => other.clone(),
        }
    }

    /// The well-known protobuf type a fully qualified name denotes, if any: wrappers,
    /// `Timestamp`, `Duration`, `Any`, and the JSON types (`Value` is `dyn`, `ListValue` is
    /// `list(dyn)`, `Struct` is `map(string, dyn)`, `NullValue` is `null_type`).
    pub fn well_known(name: &str) -> Option<Type> {
        let name = name.strip_prefix('.').unwrap_or(name);
        Some(match name {
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
            "google.protobuf.Timestamp" => Type::Timestamp,
            "google.protobuf.Duration" => Type::Duration,
            "google.protobuf.Any" => Type::Any,
            "google.protobuf.Value" => Type::Dyn,
            "google.protobuf.ListValue" => Type::list(Type::Dyn),
            "google.protobuf.Struct" => Type::map(Type::String, Type::Dyn),
            "google.protobuf.NullValue" => Type::Null,
            _ => return None,
        })
    }
}

impl fmt::Display for Type {
    /// Formats the type as cel-go's checker prints it in diagnostics: `list(int)`,
    /// `map(string, dyn)`, `type(int)`, `wrapper(int)`, `optional_type(string)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::stack::guarded(|| self.write(f))
    }
}

impl Type {
    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::List(e) => write!(f, "list({e})"),
            Type::Map(k, v) => write!(f, "map({k}, {v})"),
            Type::Type(Some(t)) => write!(f, "type({t})"),
            Type::Type(None) => f.write_str("type"),
            Type::Wrapper(p) => write!(f, "wrapper({})", p.name()),
            Type::Any => f.write_str("any"),
            // cel-go's `FormatCELType` names these three differently from their runtime names.
            Type::Null => f.write_str("null"),
            Type::Timestamp => f.write_str("timestamp"),
            Type::Duration => f.write_str("duration"),
            Type::Error => f.write_str("!error!"),
            Type::Opaque(name, ps) if !ps.is_empty() => {
                write!(f, "{name}(")?;
                for (i, p) in ps.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{p}")?;
                }
                f.write_str(")")
            }
            other => f.write_str(other.runtime_name()),
        }
    }
}

impl PartialEq for Type {
    fn eq(&self, other: &Type) -> bool {
        crate::stack::guarded(|| match (self, other) {
            (Type::List(a), Type::List(b)) => a == b,
            (Type::Map(k1, v1), Type::Map(k2, v2)) => k1 == k2 && v1 == v2,
            (Type::Type(a), Type::Type(b)) => a == b,
            (Type::Wrapper(a), Type::Wrapper(b)) => a == b,
            (Type::Message(a), Type::Message(b)) => a == b,
            (Type::Opaque(n1, p1), Type::Opaque(n2, p2)) => n1 == n2 && p1 == p2,
            (Type::TypeParam(a), Type::TypeParam(b)) => a == b,
            // Every variant with data is matched above: same variant, same type.
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        })
    }
}

impl Eq for Type {}

impl Type {
    /// Drops the type without recursion: the parts that this type alone owns are taken apart
    /// one node at a time through a work list, so that a type nested hundreds of thousands of
    /// levels deep (the type of a deeply nested literal) is freed in constant stack. Parts
    /// shared with other types are only released. (`Type` cannot implement `Drop` itself
    /// without losing constant promotion of `&Type::Dyn` and the like.) Shallow types are
    /// dropped without allocating.
    pub fn drop_iteratively(mut self) {
        let mut work = Vec::new();
        self.take_deep_parts(&mut work);
        while let Some(mut t) = work.pop() {
            t.take_deep_parts(&mut work);
        }
    }

    /// Whether the type has parameters (parts that are types).
    fn has_parts(&self) -> bool {
        match self {
            Type::List(_) | Type::Map(..) | Type::Type(Some(_)) => true,
            Type::Opaque(_, ps) => !ps.is_empty(),
            _ => false,
        }
    }

    /// Moves into `out` each part owned by this type alone that has parts of its own, leaving
    /// `dyn` in its place.
    fn take_deep_parts(&mut self, out: &mut Vec<Type>) {
        let mut take = |t: &mut Type| {
            if t.has_parts() {
                out.push(std::mem::replace(t, Type::Dyn));
            }
        };
        match self {
            Type::List(e) | Type::Type(Some(e)) => {
                if let Some(e) = Arc::get_mut(e) {
                    take(e);
                }
            }
            Type::Map(k, v) => {
                if let Some(k) = Arc::get_mut(k) {
                    take(k);
                }
                if let Some(v) = Arc::get_mut(v) {
                    take(v);
                }
            }
            Type::Opaque(_, ps) => {
                if let Some(ps) = Arc::get_mut(ps) {
                    ps.iter_mut().for_each(take);
                }
            }
            _ => {}
        }
    }
}

impl std::hash::Hash for Type {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        crate::stack::guarded(|| {
            std::mem::discriminant(self).hash(state);
            match self {
                Type::List(e) => e.hash(state),
                Type::Map(k, v) => {
                    k.hash(state);
                    v.hash(state);
                }
                Type::Type(t) => t.hash(state),
                Type::Wrapper(p) => p.hash(state),
                Type::Message(n) | Type::TypeParam(n) => n.hash(state),
                Type::Opaque(n, ps) => {
                    n.hash(state);
                    ps.hash(state);
                }
                _ => {}
            }
        })
    }
}

/// The derived format (`List(Int)`, `Opaque("optional_type", [Int])`), written by hand so that
/// it recurses under the stack guard.
impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::stack::guarded(|| match self {
            Type::Dyn => f.write_str("Dyn"),
            Type::Any => f.write_str("Any"),
            Type::Null => f.write_str("Null"),
            Type::Bool => f.write_str("Bool"),
            Type::Int => f.write_str("Int"),
            Type::Uint => f.write_str("Uint"),
            Type::Double => f.write_str("Double"),
            Type::String => f.write_str("String"),
            Type::Bytes => f.write_str("Bytes"),
            Type::Timestamp => f.write_str("Timestamp"),
            Type::Duration => f.write_str("Duration"),
            Type::Error => f.write_str("Error"),
            Type::List(e) => f.debug_tuple("List").field(e).finish(),
            Type::Map(k, v) => f.debug_tuple("Map").field(k).field(v).finish(),
            Type::Type(t) => f.debug_tuple("Type").field(t).finish(),
            Type::Wrapper(p) => f.debug_tuple("Wrapper").field(p).finish(),
            Type::Message(n) => f.debug_tuple("Message").field(n).finish(),
            Type::Opaque(n, ps) => f.debug_tuple("Opaque").field(n).field(ps).finish(),
            Type::TypeParam(n) => f.debug_tuple("TypeParam").field(n).finish(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_matches_cel_go() {
        assert_eq!(
            Type::map(Type::String, Type::Dyn).to_string(),
            "map(string, dyn)"
        );
        assert_eq!(
            Type::type_of(Type::list(Type::Int)).to_string(),
            "type(list(int))"
        );
        assert_eq!(Type::optional(Type::Int).to_string(), "optional_type(int)");
        assert_eq!(Type::Wrapper(Primitive::Int).to_string(), "wrapper(int)");
        // As cel-go's `FormatCELType` prints them in diagnostics.
        assert_eq!(Type::Timestamp.to_string(), "timestamp");
        assert_eq!(Type::Duration.to_string(), "duration");
        assert_eq!(Type::Null.to_string(), "null");
    }

    #[test]
    fn substitution_replaces_params() {
        let t = Type::map(Type::param("K"), Type::list(Type::param("V")));
        let s = t.substitute(&|n| (n == "V").then_some(Type::Int));
        assert_eq!(s, Type::map(Type::param("K"), Type::list(Type::Int)));
    }
}
