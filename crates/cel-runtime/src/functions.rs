//! Function implementations keyed by overload id, and runtime overload matching.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use cel_types::{Primitive, Type};

use crate::{Result, Value};

/// A one-argument implementation.
pub type UnaryFn = fn(&Value) -> Result<Value>;
/// A two-argument implementation.
pub type BinaryFn = fn(&Value, &Value) -> Result<Value>;
/// An implementation taking any number of arguments.
pub type NaryFn = fn(&[Value]) -> Result<Value>;
/// A host-supplied implementation (a Rust closure).
pub type HostFn = Arc<dyn Fn(&[Value]) -> Result<Value> + Send + Sync>;

/// How an overload is implemented. For member overloads the receiver is the first argument.
#[derive(Clone)]
pub enum Implementation {
    /// A plain function of one argument.
    Unary(UnaryFn),
    /// A plain function of two arguments.
    Binary(BinaryFn),
    /// A plain function of any number of arguments.
    Nary(NaryFn),
    /// A closure whose answer depends only on its arguments (a library's function with
    /// its configuration).
    Host(HostFn),
    /// A closure that reaches outside the evaluation: the host's own function, or a
    /// library's call into the host (Kubernetes' authorizer). It may have effects and may
    /// answer differently each time, so it runs at most once per evaluation even when an
    /// evaluation is finished by another backend ([`crate::journal`]).
    External(HostFn),
}

impl fmt::Debug for Implementation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Implementation::Unary(_) => "Unary",
            Implementation::Binary(_) => "Binary",
            Implementation::Nary(_) => "Nary",
            Implementation::Host(_) => "Host",
            Implementation::External(_) => "External",
        })
    }
}

/// Which parameters of an overload are declared maps (bit `i` for parameter `i`, the
/// receiver first; the first eight), so that an opaque value standing for a map with fixed
/// entries ([`OpaqueMap::entries`](crate::OpaqueMap::entries)) reaches them as that map.
/// cel-go hands a `traits.Mapper` (the DRA library's map with a default value) to map
/// overloads (`in`, `size`, indexes) as any map; both evaluators call through
/// [`Implementation::call_taking`] and its kin, so implementations only ever see maps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MapParams(u8);

impl MapParams {
    /// The map parameters of an overload with these parameter types.
    pub fn of(params: &[Type]) -> MapParams {
        let bits = params
            .iter()
            .take(8)
            .enumerate()
            .filter(|(_, t)| matches!(t, Type::Map(_, _)))
            .fold(0u8, |bits, (i, _)| bits | 1 << i);
        MapParams(bits)
    }

    /// Argument `i` as its parameter takes it, when that is not the value itself: the map
    /// of an opaque map's entries for a parameter declared a map.
    #[inline]
    pub fn convert(self, i: usize, v: &Value) -> Option<Value> {
        if i >= 8 || self.0 & (1 << i) == 0 {
            return None;
        }
        opaque_map_entries(v).map(|m| Value::Map(m.clone()))
    }
}

/// The entries of an opaque value standing for a map with fixed entries.
fn opaque_map_entries(v: &Value) -> Option<&Arc<crate::MapValue>> {
    match v {
        Value::Opaque(o) => o.as_map()?.entries(),
        _ => None,
    }
}

impl Implementation {
    /// Calls the implementation with the arguments as parameters of the declared types take
    /// them ([`MapParams`]).
    pub fn call_taking(&self, maps: MapParams, args: &[Value]) -> Result<Value> {
        if maps == MapParams::default() {
            return self.call(args);
        }
        let converted: Vec<Option<Value>> = (args.iter().enumerate())
            .map(|(i, a)| maps.convert(i, a))
            .collect();
        if converted.iter().all(Option::is_none) {
            return self.call(args);
        }
        let args: Vec<Value> = (converted.into_iter().zip(args))
            .map(|(c, a)| c.unwrap_or_else(|| a.clone()))
            .collect();
        self.call(&args)
    }

    /// [`Implementation::call_taking`] with one argument by reference.
    #[inline]
    pub fn call1_taking(&self, maps: MapParams, a: &Value) -> Result<Value> {
        match maps.convert(0, a) {
            None => self.call1(a),
            Some(a) => self.call1(&a),
        }
    }

    /// [`Implementation::call_taking`] with two arguments by reference.
    #[inline]
    pub fn call2_taking(&self, maps: MapParams, a: &Value, b: &Value) -> Result<Value> {
        match (maps.convert(0, a), maps.convert(1, b)) {
            (None, None) => self.call2(a, b),
            (ca, cb) => self.call2(ca.as_ref().unwrap_or(a), cb.as_ref().unwrap_or(b)),
        }
    }

    /// Calls the implementation. Arity mismatches are "no such overload".
    pub fn call(&self, args: &[Value]) -> Result<Value> {
        match (self, args) {
            (Implementation::Unary(f), [a]) => f(a),
            (Implementation::Binary(f), [a, b]) => f(a, b),
            (Implementation::Nary(f), args) => f(args),
            (Implementation::Host(f), args) => f(args),
            (Implementation::External(f), args) => crate::journal::call(f, args),
            _ => Err(crate::Error::no_such_overload()),
        }
    }

    /// Whether calls reach outside the evaluation ([`Implementation::External`]).
    pub fn is_external(&self) -> bool {
        matches!(self, Implementation::External(_))
    }

    /// Calls with one argument by reference (cloned only for implementations that take a
    /// slice of values).
    pub fn call1(&self, a: &Value) -> Result<Value> {
        match self {
            Implementation::Unary(f) => f(a),
            other => other.call(std::slice::from_ref(a)),
        }
    }

    /// Calls with two arguments by reference (cloned only for implementations that take a
    /// slice of values).
    pub fn call2(&self, a: &Value, b: &Value) -> Result<Value> {
        match self {
            Implementation::Binary(f) => f(a, b),
            other => other.call(&[a.clone(), b.clone()]),
        }
    }
}

/// Implementations by overload id.
#[derive(Clone, Debug, Default)]
pub struct FunctionRegistry {
    by_id: HashMap<Arc<str>, Implementation>,
}

impl FunctionRegistry {
    /// An empty registry.
    pub fn new() -> FunctionRegistry {
        FunctionRegistry::default()
    }

    /// The standard library's implementations (see [`crate::stdlib`]).
    pub fn standard() -> FunctionRegistry {
        let mut r = FunctionRegistry::new();
        crate::stdlib::register(&mut r);
        r
    }

    /// The same registry with the standard implementations an older cel-go had in place of
    /// today's (see [`OlderCelGo`](cel_types::OlderCelGo)).
    pub fn with_older(mut self, older: cel_types::OlderCelGo) -> FunctionRegistry {
        crate::stdlib::register_older(&mut self, older);
        self
    }

    /// Registers (or replaces) the implementation of an overload.
    pub fn add(&mut self, overload_id: &str, implementation: Implementation) {
        self.by_id.insert(overload_id.into(), implementation);
    }

    /// The implementation of an overload.
    pub fn get(&self, overload_id: &str) -> Option<&Implementation> {
        self.by_id.get(overload_id)
    }

    /// Whether an overload has an implementation.
    pub fn contains(&self, overload_id: &str) -> bool {
        self.by_id.contains_key(overload_id)
    }

    /// The registered overload ids.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.by_id.keys().map(|k| &**k)
    }

    /// Adds every implementation of `other`, replacing same-id entries.
    pub fn extend(&mut self, other: &FunctionRegistry) {
        for (k, v) in &other.by_id {
            self.by_id.insert(k.clone(), v.clone());
        }
    }
}

/// Whether a runtime value may be passed where a parameter of type `t` is declared, for
/// dispatching calls the checker did not resolve. Type parameters, `dyn` and `any` accept
/// anything; aggregate parameters are not inspected element by element; map parameters
/// accept opaque maps with fixed entries ([`MapParams`]).
pub fn value_matches(v: &Value, t: &Type) -> bool {
    ParamKinds::of(t).accept(v, t)
}

/// [`value_matches`] for the types whose values' names decide ([`ParamKinds::Named`]).
fn matches_by_name(v: &Value, t: &Type) -> bool {
    match (t, v) {
        (Type::Message(name), _) => v.type_name() == &**name || matches!(v, Value::Object(_)),
        (Type::Opaque(name, _), Value::Optional(_)) => &**name == cel_types::OPTIONAL_TYPE_NAME,
        (Type::Opaque(name, _), Value::Opaque(o)) => o.type_name() == &**name,
        _ => false,
    }
}

/// What a parameter type accepts, worked out once per overload so that dispatching a call
/// tests a bit per argument: the variants of [`Value`] it accepts, when the variant alone
/// decides, or `Named` for messages and opaque types, whose values' type names decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKinds {
    /// One bit per variant, by tag ([`Value::kind_bit`]).
    Variants(u16),
    /// Decided by the value's type name (a message's or an opaque type's).
    Named,
}

impl ParamKinds {
    /// What a parameter of type `t` accepts.
    pub fn of(t: &Type) -> ParamKinds {
        let bit = |tag: u8| 1u16 << tag;
        let kinds = match t {
            Type::Dyn | Type::Any | Type::TypeParam(_) | Type::Error => u16::MAX,
            Type::Null => bit(Value::TAG_NULL),
            Type::Bool => bit(Value::TAG_BOOL),
            Type::Int => bit(Value::TAG_INT),
            Type::Uint => bit(Value::TAG_UINT),
            Type::Double => bit(Value::TAG_DOUBLE),
            Type::String => bit(Value::TAG_STRING),
            Type::Bytes => bit(Value::TAG_BYTES),
            Type::Timestamp => bit(Value::TAG_TIMESTAMP),
            Type::Duration => bit(Value::TAG_DURATION),
            Type::List(_) => bit(Value::TAG_LIST),
            // Schema-typed objects are maps at run time, as in Kubernetes.
            Type::Map(_, _) => bit(Value::TAG_MAP) | bit(Value::TAG_OBJECT),
            Type::Type(_) => bit(Value::TAG_TYPE),
            Type::Wrapper(p) => {
                let tag = match p {
                    Primitive::Bool => Value::TAG_BOOL,
                    Primitive::Int => Value::TAG_INT,
                    Primitive::Uint => Value::TAG_UINT,
                    Primitive::Double => Value::TAG_DOUBLE,
                    Primitive::String => Value::TAG_STRING,
                    Primitive::Bytes => Value::TAG_BYTES,
                };
                bit(Value::TAG_NULL) | bit(tag)
            }
            Type::Message(_) | Type::Opaque(_, _) => return ParamKinds::Named,
        };
        ParamKinds::Variants(kinds)
    }

    /// Whether `v` may be passed to a parameter of type `t`, of which these are the kinds:
    /// [`value_matches`], with the type's part worked out ahead.
    #[inline]
    pub fn accept(self, v: &Value, t: &Type) -> bool {
        match self {
            ParamKinds::Variants(kinds) => {
                kinds & v.kind_bit() != 0
                    || (kinds & (1 << Value::TAG_MAP) != 0 && opaque_map_entries(v).is_some())
            }
            ParamKinds::Named => matches_by_name(v, t),
        }
    }
}
