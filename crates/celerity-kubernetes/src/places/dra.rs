//! Device selectors (`k8s.io/dynamic-resource-allocation/cel`, `compile.go`): DeviceClass
//! and ResourceClaim `selectors[].cel.expression` over `device`, a `kubernetes.DRADevice`
//! with `driver` (a string), `attributes` (by domain, then by identifier: `bool`, `int`,
//! `string` or a semantic version) and `capacity` (by domain, then identifier: quantities).
//! Introduced at 1.31 with `cel.bind` (cel-go's bindings extension) and the semver library,
//! compiled as stored expressions, evaluated with their own cost limit
//! (`CELSelectorExpressionMaxCost`, 1,000,000). A selector must be a `bool` or `dyn`
//! ("must evaluate to bool or the unknown type, not T"), and a `dyn` selector that gives
//! something else is an error when it runs.
//!
//! Attribute and capacity names without a domain take the driver's name as theirs
//! (`parseQualifiedName`). Looking up a domain the device does not have gives an empty map
//! rather than an error, as the library's defaulting map does, so
//! `device.attributes["other.example.com"].x` fails with `no such key: x`.
//!
//! Later releases add to `device` ([`Features`]): `allowMultipleAllocations` (1.34), list
//! attributes (`ints`, `bools`, `strings`, `versions`) and the `includes` function (1.36).
//! From 1.33 the library's estimator knows the sizes of what `device` holds ([`DraSizes`]).

use std::sync::Arc;

use cel_k8s::KubeVersion;
use cel_k8s::quantity::quantity_type;
use cel_k8s_schema::decl::{DeclField, DeclKind, DeclType, SchemaTypes};
use cel_runtime::{Implementation, Key, ListValue, MapValue, OpaqueMap, OpaqueValue};
use celerity::kubernetes::KubernetesEnv;
use celerity::{
    CallEstimate, CostKey, CostRange, Env, EstimateNode, FunctionDecl, OverloadDecl, SizeEstimator,
    SizeRange, Type, Value,
};
use indexmap::IndexMap;
use serde_json::Value as Json;

use super::{expect_object, json_kind};

/// The runtime cost limit of one selector (`resourceapi.CELSelectorExpressionMaxCost`).
pub const SELECTOR_MAX_COST: u64 = 1_000_000;
/// The variable selectors read.
pub const DEVICE_VARIABLE: &str = "device";
/// The type name of `device`.
pub const DEVICE_TYPE: &str = "kubernetes.DRADevice";
/// The most attributes and capacities a device has (`ResourceSliceMaxAttributesAndCapacitiesPerDevice`).
const MAX_ATTRIBUTES: i64 = 32;
/// The longest string or version attribute (`DeviceAttributeMaxValueLength`).
const MAX_VALUE_LENGTH: u64 = 64;
/// The most values of a list attribute (`ResourceSliceMaxAttributeValuesPerDevice`).
pub const MAX_LIST_VALUES: usize = 48;
/// The longest domain (`DeviceMaxDomainLength`) and identifier (`DeviceMaxIDLength`) of a
/// qualified name, and the longest driver name (`DriverNameMaxLength`).
const MAX_DOMAIN: u64 = 63;
const MAX_ID: u64 = 32;
const MAX_DRIVER: u64 = 63;
/// The overload id of `includes` (`compile.go`).
const INCLUDES_OVERLOAD: &str = "dra_includes_dyn_dyn";
/// The release whose base environment has the list library's `includes` (version 1).
const LISTS_INCLUDES_SINCE: KubeVersion = KubeVersion::new(1, 37);

/// What a release's DRA library offers beyond 1.31's: each arrives with the release whose
/// `compile.go` introduces it (`k8s.io/dynamic-resource-allocation` v0.33.0, v0.34.0,
/// v0.36.0). Selectors are stored expressions, which the library compiles with every
/// option of the release whatever its feature gates say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    /// The estimator knows the sizes of `device`'s strings and maps (1.33).
    pub sized_estimates: bool,
    /// `device.allowMultipleAllocations` (1.34, `DRAConsumableCapacity`), `false` when
    /// the device does not say.
    pub allow_multiple_allocations: bool,
    /// List attributes and `includes` (1.36, `DRAListTypeAttributes`).
    pub list_attributes: bool,
}

impl Features {
    /// The features of Kubernetes `version`.
    pub fn of(version: KubeVersion) -> Features {
        Features {
            sized_estimates: version >= KubeVersion::new(1, 33),
            allow_multiple_allocations: version >= KubeVersion::new(1, 34),
            list_attributes: version >= KubeVersion::new(1, 36),
        }
    }
}

fn decl(kind: DeclKind, max_elements: i64) -> DeclType {
    DeclType {
        kind,
        max_elements,
        min_serialized_size: 0,
    }
}

/// `device`'s declared type (sizes are [`DraSizes`]'), with `allowMultipleAllocations`
/// where the release has it.
pub fn device_type(features: Features) -> DeclType {
    let nested = |leaf: DeclType| {
        let inner = decl(DeclKind::Map(Box::new(leaf)), MAX_ATTRIBUTES);
        decl(DeclKind::Map(Box::new(inner)), MAX_ATTRIBUTES)
    };
    let field = |ty: DeclType| DeclField { ty, required: true };
    let mut fields = IndexMap::new();
    if features.allow_multiple_allocations {
        fields.insert(
            "allowMultipleAllocations".to_string(),
            field(decl(DeclKind::Scalar(Type::Bool), 1)),
        );
    }
    fields.insert(
        "driver".to_string(),
        field(decl(DeclKind::Scalar(Type::String), 63)),
    );
    fields.insert(
        "attributes".to_string(),
        field(nested(decl(DeclKind::Scalar(Type::Dyn), 64))),
    );
    fields.insert(
        "capacity".to_string(),
        field(nested(decl(DeclKind::Scalar(quantity_type()), 0))),
    );
    decl(
        DeclKind::Object {
            name: DEVICE_TYPE.to_string(),
            fields,
        },
        0,
    )
}

/// The environment of device selectors.
pub fn env(version: KubeVersion) -> Env {
    let features = Features::of(version);
    let device = device_type(features);
    let mut builder = KubernetesEnv::new(version)
        .stored()
        .with_authorizer_variable(false)
        .with_bindings(Some(0))
        .builder()
        .type_provider(Arc::new(SchemaTypes::new(&device)))
        .cost_limit(Some(SELECTOR_MAX_COST))
        .variable(DEVICE_VARIABLE, device.cel_type());
    if features.list_attributes {
        // From 1.37 the base environment's list library declares `includes(dyn, dyn)`
        // itself; cel-go takes no second overload of that signature, and the DRA library's
        // tests at Kubernetes master expect its own limit and estimate, so there its
        // implementation and estimate answer for the one overload.
        let overload = if version >= LISTS_INCLUDES_SINCE {
            cel_k8s::lists::INCLUDES_OVERLOAD
        } else {
            builder = builder.declare_function(FunctionDecl::new(
                "includes",
                vec![OverloadDecl::member(
                    INCLUDES_OVERLOAD,
                    vec![Type::Dyn, Type::Dyn],
                    Type::Bool,
                )],
            ));
            INCLUDES_OVERLOAD
        };
        builder = builder
            .implementation(overload, Implementation::Binary(includes))
            // `draCostEstimator`: linear in the longest list attribute, whatever the target.
            .estimated_cost(
                CostKey::Overload(overload.to_string()),
                Arc::new(|_| {
                    Some(CallEstimate {
                        cost: CostRange {
                            min: 0,
                            max: MAX_LIST_VALUES as u64,
                        },
                        result_size: None,
                    })
                }),
            );
    }
    builder.build()
}

/// `target.includes(arg)` (`compile.go`'s `includesFunc`): whether a list attribute has the
/// value, or a scalar one is it; lists longer than a device may have are an error rather
/// than a long walk.
fn includes(target: &Value, arg: &Value) -> cel_runtime::Result<Value> {
    let Value::List(list) = target else {
        return Ok(Value::Bool(target == arg));
    };
    for (i, item) in list.iter().enumerate() {
        if i >= MAX_LIST_VALUES {
            return Err(cel_runtime::Error::new(format!(
                "'includes' function cannot be applied to lists longer than {MAX_LIST_VALUES} values"
            )));
        }
        if item == arg {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

/// The DRA library's size estimator (`compile.go`'s `sizeEstimator`, from 1.33): the size
/// of what a path from `device` reaches, by the bounds of the API's validation. Any
/// identifier of an attribute domain (`device.attributes["d"].name`) reaches an attribute.
#[derive(Clone, Copy, Debug)]
pub struct DraSizes {
    features: Features,
}

/// A node of `device`'s type, for [`DraSizes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Device,
    /// A string or bool of at most this size (the driver, `allowMultipleAllocations`, keys).
    Leaf(u64),
    /// `attributes` (true) or `capacity` (false), by domain.
    Domains(bool),
    /// One domain's attributes (true) or capacities (false), by identifier.
    Identifiers(bool),
    /// An attribute value.
    Attribute,
    /// A capacity (a quantity, whose size the library does not bound).
    Capacity,
}

impl Node {
    fn step(self, name: &str, features: Features) -> Option<Node> {
        Some(match (self, name) {
            (Node::Device, "driver") => Node::Leaf(MAX_DRIVER),
            (Node::Device, "allowMultipleAllocations") if features.allow_multiple_allocations => {
                Node::Leaf(1)
            }
            (Node::Device, "attributes") => Node::Domains(true),
            (Node::Device, "capacity") => Node::Domains(false),
            (Node::Domains(a), "@items" | "@values") => Node::Identifiers(a),
            (Node::Domains(_), "@keys") => Node::Leaf(MAX_DOMAIN),
            (Node::Identifiers(_), "@keys") => Node::Leaf(MAX_ID),
            (Node::Identifiers(true), _) => Node::Attribute,
            (Node::Identifiers(false), "@items" | "@values") => Node::Capacity,
            _ => return None,
        })
    }

    fn max(self) -> u64 {
        match self {
            Node::Device | Node::Capacity => 0,
            Node::Leaf(n) => n,
            Node::Domains(_) | Node::Identifiers(_) => MAX_ATTRIBUTES as u64,
            // A scalar's length or, from 1.36, a list's values: the larger bound.
            Node::Attribute => MAX_VALUE_LENGTH.max(MAX_LIST_VALUES as u64),
        }
    }
}

impl DraSizes {
    /// The estimator of Kubernetes `version` (it knows nothing before 1.33).
    pub fn new(version: KubeVersion) -> DraSizes {
        DraSizes {
            features: Features::of(version),
        }
    }
}

impl SizeEstimator for DraSizes {
    fn estimate_size(&self, node: &EstimateNode<'_>) -> Option<SizeRange> {
        if !self.features.sized_estimates {
            return None;
        }
        let (root, steps) = node.path?.split_first()?;
        if root != DEVICE_VARIABLE {
            return None;
        }
        let mut at = Node::Device;
        for step in steps {
            at = at.step(step, self.features)?;
        }
        Some(SizeRange {
            min: 0,
            max: at.max(),
        })
    }
}

/// The error of a selector whose value is not a bool (`DeviceMatches`): the value's CEL type
/// name, then what cel-go's `ConvertToNative` says of converting it to a Go `bool`, in the
/// words of each type's implementation (`common/types/*.go`).
pub fn not_bool(v: &Value) -> String {
    let t = v.type_name();
    let why = match v {
        Value::Int(_) => "unsupported type conversion from 'int' to bool".to_string(),
        Value::Uint(_) => "unsupported type conversion from 'uint' to bool".to_string(),
        Value::Double(_) => "type conversion error from Double to 'bool'".to_string(),
        Value::String(_) => "unsupported native conversion from string to 'bool'".to_string(),
        Value::Bytes(_) => "type conversion error from Bytes to 'bool'".to_string(),
        Value::List(_) => "type conversion error from list to 'bool'".to_string(),
        Value::Map(_) | Value::Object(_) => "type conversion error from map to 'bool'".to_string(),
        Value::Timestamp(_) => "type conversion error from 'Timestamp' to 'bool'".to_string(),
        Value::Duration(_) => "type conversion error from 'Duration' to 'bool'".to_string(),
        Value::Null => "type conversion error from 'null_type' to 'bool'".to_string(),
        _ => format!("type conversion error from '{t}' to 'bool'"),
    };
    format!("CEL result of type {t} could not be converted to bool: {why}")
}

/// Splits a qualified name into domain and identifier, the driver's name being the domain
/// of names without one.
pub(crate) fn qualified<'a>(name: &'a str, driver: &'a str) -> (&'a str, &'a str) {
    match name.split_once('/') {
        Some((domain, id)) => (domain, id),
        None => (driver, name),
    }
}

/// `device` from a ResourceSlice device's JSON (`resource.k8s.io/v1`: `attributes` and
/// `capacity` on the device; `v1beta1`: under `basic`) with the slice's `driver` beside
/// its fields.
pub fn device_value(json: &Json, features: Features) -> Result<Value, String> {
    let dev = expect_object(json, "device")?;
    let driver = match dev.get("driver") {
        None | Some(Json::Null) => "",
        Some(Json::String(s)) => s.as_str(),
        Some(v) => {
            return Err(format!(
                "device.driver: expected a string, got {}",
                json_kind(v)
            ));
        }
    };
    slice_device_value(json, driver, "device", features)
}

/// `device` from one device of a ResourceSlice (`spec.devices[i]` at `path`, the slice's
/// `spec.driver` given apart), as the library's `DeviceMatches` builds it: attributes and
/// capacities by domain, the driver's name the domain of names without one. A capacity is
/// `{value: Q}` (`v1beta1` on) or the quantity itself (`v1alpha3`). Errors carry `path`.
pub fn slice_device_value(
    json: &Json,
    driver: &str,
    path: &str,
    features: Features,
) -> Result<Value, String> {
    let dev = expect_object(json, path)?;
    let basic_path = format!("{path}.basic");
    let (parts, base) = match dev.get("basic") {
        Some(b) if !b.is_null() => (expect_object(b, &basic_path)?, basic_path.as_str()),
        _ => (dev, path),
    };
    let mut attributes: IndexMap<String, MapValue> = IndexMap::new();
    if let Some(a) = parts.get("attributes").filter(|a| !a.is_null()) {
        for (name, attr) in expect_object(a, &format!("{base}.attributes"))? {
            let value = attribute(attr, features)
                .map_err(|e| format!("{base}.attributes[{name:?}]: attribute {name}: {e}"))?;
            let (domain, id) = qualified(name, driver);
            attributes
                .entry(domain.to_string())
                .or_default()
                .insert(Key::String(id.into()), value);
        }
    }
    let mut capacity: IndexMap<String, MapValue> = IndexMap::new();
    if let Some(c) = parts.get("capacity").filter(|c| !c.is_null()) {
        for (name, cap) in expect_object(c, &format!("{base}.capacity"))? {
            let path = format!("{base}.capacity[{name:?}]");
            let (quantity, path) = match cap {
                Json::String(_) | Json::Number(_) => (Some(cap), path),
                _ => (
                    expect_object(cap, &path)?.get("value"),
                    format!("{path}.value"),
                ),
            };
            let value = match quantity {
                Some(Json::String(q)) => cel_k8s::quantity::to_quantity(&Value::string(q.as_str()))
                    .map_err(|e| format!("{path}: {e}"))?,
                Some(Json::Number(n)) => {
                    cel_k8s::quantity::to_quantity(&Value::string(n.to_string()))
                        .map_err(|e| format!("{path}: {e}"))?
                }
                other => {
                    return Err(format!(
                        "{path}: expected a quantity, got {}",
                        other.map_or("nothing", json_kind)
                    ));
                }
            };
            let (domain, id) = qualified(name, driver);
            capacity
                .entry(domain.to_string())
                .or_default()
                .insert(Key::String(id.into()), value);
        }
    }
    let mut device = MapValue::with_capacity(4);
    device.insert(Key::String("driver".into()), Value::string(driver));
    if features.allow_multiple_allocations {
        let multiple = match parts.get("allowMultipleAllocations") {
            None | Some(Json::Null) => false,
            Some(Json::Bool(b)) => *b,
            Some(v) => {
                return Err(format!(
                    "{base}.allowMultipleAllocations: expected a boolean, got {}",
                    json_kind(v)
                ));
            }
        };
        device.insert(
            Key::String("allowMultipleAllocations".into()),
            Value::Bool(multiple),
        );
    }
    device.insert(Key::String("attributes".into()), by_domain(attributes));
    device.insert(Key::String("capacity".into()), by_domain(capacity));
    Ok(Value::Map(Arc::new(device)))
}

/// One attribute's value: exactly one of `int`, `bool`, `string`, `version` or, from 1.36,
/// `ints`, `bools`, `strings`, `versions` (a list; before 1.36 such an attribute is an
/// "unsupported attribute value", as the library says of a field it does not read).
fn attribute(attr: &Json, features: Features) -> Result<Value, String> {
    let attr = attr
        .as_object()
        .ok_or_else(|| format!("expected an object, got {}", json_kind(attr)))?;
    let set: Vec<(&String, &Json)> = attr.iter().filter(|(_, v)| !v.is_null()).collect();
    match set.as_slice() {
        [(k, v)] => match (k.as_str(), v) {
            (k @ ("int" | "bool" | "string" | "version"), v) => scalar_attribute(k, v),
            (k @ ("ints" | "bools" | "strings" | "versions"), Json::Array(items))
                if features.list_attributes =>
            {
                let scalar = &k[..k.len() - 1];
                let values = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| scalar_attribute(scalar, v).map_err(|e| format!("{k}[{i}]: {e}")))
                    .collect::<Result<Vec<Value>, String>>()?;
                Ok(Value::List(Arc::new(ListValue::from(values))))
            }
            (k @ ("ints" | "bools" | "strings" | "versions"), v) if features.list_attributes => {
                Err(format!("{k}: wrong type, got {}", json_kind(v)))
            }
            _ => Err("unsupported attribute value".to_string()),
        },
        [] => Err("unsupported attribute value".to_string()),
        _ => Err("more than one value is set".to_string()),
    }
}

/// One scalar value of an attribute, `kind` its field's name.
fn scalar_attribute(kind: &str, v: &Json) -> Result<Value, String> {
    match (kind, v) {
        ("int", Json::Number(n)) => n
            .as_i64()
            .map(Value::Int)
            .ok_or_else(|| format!("int: {n} is not a 64-bit integer")),
        ("bool", Json::Bool(b)) => Ok(Value::Bool(*b)),
        ("string", Json::String(s)) => Ok(Value::string(s.as_str())),
        ("version", Json::String(s)) => cel_k8s::semver::parse(s)
            .map(|_| ())
            .map_err(|e| format!("parse semantic version: {e}"))
            .and_then(|()| {
                cel_k8s::semver::to_semver(&Value::string(s.as_str()))
                    .map_err(|e| format!("parse semantic version: {e}"))
            }),
        (k, v) => Err(format!("{k}: wrong type, got {}", json_kind(v))),
    }
}

/// The outer map (by domain) with the library's default: an empty map for a domain the
/// device does not have.
fn by_domain(entries: IndexMap<String, MapValue>) -> Value {
    let mut m = MapValue::with_capacity(entries.len());
    for (domain, inner) in entries {
        m.insert(Key::String(domain.into()), Value::Map(Arc::new(inner)));
    }
    Value::Opaque(Arc::new(DefaultingMap(Arc::new(m))))
}

/// A map whose missing keys read as an empty map (the DRA library's
/// `newStringInterfaceMapWithDefault`). Only reads (`find`) default: `in`, `size` and
/// comprehensions see its entries, as cel-go's `Contains` and iterators do.
#[derive(Debug)]
struct DefaultingMap(Arc<MapValue>);

impl OpaqueValue for DefaultingMap {
    fn type_name(&self) -> &str {
        "map"
    }

    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        std::ptr::eq(
            self as *const DefaultingMap as *const u8,
            other as *const dyn OpaqueValue as *const u8,
        )
    }

    fn size(&self) -> Option<u64> {
        Some(self.0.len() as u64)
    }

    fn as_map(&self) -> Option<&dyn OpaqueMap> {
        Some(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl OpaqueMap for DefaultingMap {
    fn find(&self, key: &str) -> Option<cel_runtime::Result<Value>> {
        let v = self
            .0
            .get_exact(cel_runtime::KeyRef::String(key))
            .cloned()
            .unwrap_or_else(|| Value::Map(Arc::new(MapValue::new())));
        Some(Ok(v))
    }

    fn entries(&self) -> Option<&Arc<MapValue>> {
        Some(&self.0)
    }
}
